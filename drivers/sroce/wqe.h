/* SPDX-License-Identifier: GPL-2.0 OR Linux-OpenIB */
#ifndef SROCE_WQE_H
#define SROCE_WQE_H

#include <rdma/ib_verbs.h>

struct sroce_queue;

int sroce_wqe_post_recv(struct sroce_queue *q, const struct ib_recv_wr *wr,
			u32 max_sge);

#endif /* SROCE_WQE_H */
