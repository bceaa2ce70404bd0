/* SPDX-License-Identifier: GPL-2.0 OR Linux-OpenIB */
#ifndef SROCE_QP_H
#define SROCE_QP_H

#include <linux/mutex.h>
#include <rdma/ib_verbs.h>

#include "ah.h"
#include "queue.h"

struct sroce_cq;
struct sroce_srq;

/**
 * struct sroce_qp_attr - the modifiable attributes of IBA 11.2.4.2
 * @av: primary path (RC, UC), valid when @av_valid
 * @av_valid: an address vector has been set
 * @path_mtu: path MTU
 * @qkey: Q_Key (UD, GSI)
 * @dest_qpn: destination QP (RC, UC)
 * @sq_psn: next send PSN, 24 bits
 * @rq_psn: expected receive PSN, 24 bits
 * @access_flags: remote access enabled on the QP (IB_ACCESS_REMOTE_*)
 * @pkey_index: P_Key index
 * @timeout: local ACK timeout, 4.096 us * 2^timeout (0: infinite)
 * @retry_cnt: transport retries, 0 to 7
 * @rnr_retry: RNR retries, 0 to 7 (7: infinite)
 * @min_rnr_timer: RNR NAK timer code, 0 to 31
 * @max_rd_atomic: outstanding RDMA READ and atomics as requester
 * @max_dest_rd_atomic: outstanding RDMA READ and atomics as responder
 * @en_sqd_async_notify: raise IB_EVENT_SQ_DRAINED on reaching SQD
 */
struct sroce_qp_attr {
	struct sroce_av av;
	bool av_valid;
	enum ib_mtu path_mtu;
	u32 qkey;
	u32 dest_qpn;
	u32 sq_psn;
	u32 rq_psn;
	int access_flags;
	u16 pkey_index;
	u8 timeout;
	u8 retry_cnt;
	u8 rnr_retry;
	u8 min_rnr_timer;
	u8 max_rd_atomic;
	u8 max_dest_rd_atomic;
	u8 en_sqd_async_notify;
};

/**
 * struct sroce_qp - a queue pair
 * @ibqp: the RDMA core's QP
 * @mutex: serialises modify and query; protects @attr
 * @sq_lock: the kernel's side of @sq; nests outside the CQ locks
 * @rq_lock: the kernel's side of @rq; nests outside the CQ locks
 * @state: QP state; written with @mutex, @sq_lock and @rq_lock all held,
 *         so holding any of them gives a stable value
 * @sq: send queue ring
 * @rq: receive queue ring; unused when @srq is set
 * @scq: send CQ
 * @rcq: receive CQ
 * @srq: shared receive queue, or NULL
 * @cap: the sizes reported to the consumer
 * @sq_sig_all: every send WR is signaled
 * @user: the rings are shared with a process
 * @attr: modifiable attributes
 */
struct sroce_qp {
	struct ib_qp ibqp;
	struct mutex mutex;		/* see above */
	spinlock_t sq_lock;		/* see above */
	spinlock_t rq_lock;		/* see above */
	enum ib_qp_state state;
	struct sroce_queue sq;
	struct sroce_queue rq;
	struct sroce_cq *scq;
	struct sroce_cq *rcq;
	struct sroce_srq *srq;
	struct ib_qp_cap cap;
	bool sq_sig_all;
	bool user;
	struct sroce_qp_attr attr;
};

static inline struct sroce_qp *to_sqp(struct ib_qp *ibqp)
{
	return container_of(ibqp, struct sroce_qp, ibqp);
}

int sroce_qp_create(struct ib_qp *ibqp, struct ib_qp_init_attr *init,
		    struct ib_udata *udata);
int sroce_qp_destroy(struct ib_qp *ibqp, struct ib_udata *udata);
int sroce_qp_query(struct ib_qp *ibqp, struct ib_qp_attr *attr, int mask,
		   struct ib_qp_init_attr *init);
int sroce_qp_post_send(struct ib_qp *ibqp, const struct ib_send_wr *wr,
		       const struct ib_send_wr **bad_wr);
int sroce_qp_post_recv(struct ib_qp *ibqp, const struct ib_recv_wr *wr,
		       const struct ib_recv_wr **bad_wr);
void sroce_qp_flush(struct sroce_qp *qp);
void sroce_qp_event(struct sroce_qp *qp, enum ib_event_type type);

#endif /* SROCE_QP_H */
