// SPDX-License-Identifier: GPL-2.0 OR Linux-OpenIB
/*
 * DOC: Work queue entries
 *
 * Kernel consumers post struct ib_*_wr lists; they are stored in the same
 * ring entries (include/uapi/rdma/sroce-abi.h) that a process writes, so
 * one data path serves both.
 */
#include <rdma/sroce-abi.h>

#include "queue.h"
#include "wqe.h"

/**
 * sroce_wqe_post_recv() - store one receive work request
 * @q: a receive ring; the caller holds its producer-side lock
 * @wr: the work request (wr->next is ignored)
 * @max_sge: scatter entries the ring's entries hold
 *
 * Return: 0, -EINVAL for too many SGEs, -ENOMEM when the ring is full.
 */
int sroce_wqe_post_recv(struct sroce_queue *q, const struct ib_recv_wr *wr,
			u32 max_sge)
{
	struct sroce_recv_wqe *wqe;
	int i;

	if (wr->num_sge < 0 || wr->num_sge > max_sge)
		return -EINVAL;
	wqe = sroce_queue_tail(q);
	if (IS_ERR_OR_NULL(wqe))
		return -ENOMEM;
	wqe->wr_id = wr->wr_id;
	wqe->num_sge = wr->num_sge;
	wqe->reserved = 0;
	for (i = 0; i < wr->num_sge; i++) {
		wqe->sge[i].addr = wr->sg_list[i].addr;
		wqe->sge[i].length = wr->sg_list[i].length;
		wqe->sge[i].lkey = wr->sg_list[i].lkey;
	}
	sroce_queue_push(q);
	return 0;
}
