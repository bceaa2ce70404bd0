/* SPDX-License-Identifier: GPL-2.0 OR Linux-OpenIB */
#ifndef SROCE_SRQ_H
#define SROCE_SRQ_H

#include <linux/completion.h>
#include <linux/refcount.h>
#include <rdma/ib_verbs.h>

#include "queue.h"

struct sroce_dev;
struct sroce_rwqe;

/**
 * struct sroce_srq - a shared receive queue
 * @ibsrq: the RDMA core's SRQ
 * @lock: the kernel's side of @rq, @limit and @broken
 * @rq: the receive ring
 * @srq_num: number in the device's SRQ table
 * @max_wr: capacity reported to the consumer
 * @max_sge: scatter entries per WR reported to the consumer
 * @limit: armed limit (IBA 10.2.9.4), 0 when not armed
 * @user: the ring is shared with a process
 * @broken: the process broke the ring's indices; IB_EVENT_SRQ_ERR raised
 * @ref: one reference while the SRQ is in the device's table, one per
 *       lookup by an XRC target QP in progress
 * @released: completed when @ref drops to zero
 */
struct sroce_srq {
	struct ib_srq ibsrq;
	spinlock_t lock;		/* see above */
	struct sroce_queue rq;
	u32 srq_num;
	u32 max_wr;
	u32 max_sge;
	u32 limit;
	bool user;
	bool broken;
	refcount_t ref;
	struct completion released;
};

static inline struct sroce_srq *to_ssrq(struct ib_srq *ibsrq)
{
	return container_of(ibsrq, struct sroce_srq, ibsrq);
}

int sroce_srq_create(struct ib_srq *ibsrq, struct ib_srq_init_attr *init,
		     struct ib_udata *udata);
int sroce_srq_modify(struct ib_srq *ibsrq, struct ib_srq_attr *attr,
		     enum ib_srq_attr_mask mask, struct ib_udata *udata);
int sroce_srq_query(struct ib_srq *ibsrq, struct ib_srq_attr *attr);
int sroce_srq_destroy(struct ib_srq *ibsrq, struct ib_udata *udata);
struct sroce_srq *sroce_srq_get_xrc(struct sroce_dev *sdev, u32 srq_num,
				    struct ib_xrcd *xrcd);
void sroce_srq_put(struct sroce_srq *srq);
int sroce_srq_take(struct sroce_srq *srq, struct sroce_rwqe *rwqe);
int sroce_srq_post_recv(struct ib_srq *ibsrq, const struct ib_recv_wr *wr,
			const struct ib_recv_wr **bad_wr);

#endif /* SROCE_SRQ_H */
