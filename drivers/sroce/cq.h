/* SPDX-License-Identifier: GPL-2.0 OR Linux-OpenIB */
#ifndef SROCE_CQ_H
#define SROCE_CQ_H

#include <rdma/ib_verbs.h>

#include "compat.h"
#include "queue.h"

/**
 * struct sroce_cq - a completion queue
 * @ibcq: the RDMA core's CQ
 * @lock: protects @queue (both sides for a kernel CQ, the producer side
 *        for a user CQ), @notify and @overflowed
 * @queue: the ring: struct sroce_cqe for a user CQ, struct ib_wc for a
 *         kernel CQ
 * @notify: armed event: 0, IB_CQ_SOLICITED or IB_CQ_NEXT_COMP
 * @user: the ring is shared with a process
 * @overflowed: the last completion found the ring full (IB_EVENT_CQ_ERR
 *		raised once, until a completion fits again)
 */
struct sroce_cq {
	struct ib_cq ibcq;
	spinlock_t lock;		/* see above */
	struct sroce_queue queue;
	u8 notify;
	bool user;
	bool overflowed;
};

static inline struct sroce_cq *to_scq(struct ib_cq *ibcq)
{
	return container_of(ibcq, struct sroce_cq, ibcq);
}

int sroce_cq_create(struct ib_cq *ibcq, const struct ib_cq_init_attr *attr,
		    SROCE_CREATE_CQ_LAST_ARG);
int sroce_cq_destroy(struct ib_cq *ibcq, struct ib_udata *udata);
int sroce_cq_resize(struct ib_cq *ibcq, SROCE_RESIZE_CQ_SIZE cqe,
		    struct ib_udata *udata);
int sroce_cq_poll(struct ib_cq *ibcq, int num_entries, struct ib_wc *wc);
int sroce_cq_req_notify(struct ib_cq *ibcq, enum ib_cq_notify_flags flags);
int sroce_cq_post(struct sroce_cq *cq, const struct ib_wc *wc, bool solicited);

#endif /* SROCE_CQ_H */
