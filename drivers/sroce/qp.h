/* SPDX-License-Identifier: GPL-2.0 OR Linux-OpenIB */
#ifndef SROCE_QP_H
#define SROCE_QP_H

#include <linux/completion.h>
#include <linux/mutex.h>
#include <linux/refcount.h>
#include <net/dst_cache.h>
#include <rdma/ib_verbs.h>

#include "ah.h"
#include "queue.h"
#include "req.h"
#include "resp.h"

struct sroce_cq;
struct sroce_dev;
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

/* Bits of sroce_qp.events: timer expiries for the send engine. */
#define SROCE_QP_EV_TIMEOUT	0
#define SROCE_QP_EV_RNR		1

/**
 * struct sroce_qp - a queue pair
 * @ibqp: the RDMA core's QP
 * @mutex: serialises modify and query; protects @attr
 * @sq_lock: the producer side of a kernel QP's @sq
 * @rq_lock: the producer side of a kernel QP's @rq
 * @state_lock: protects @state
 * @state: QP state; engines read it without the lock (READ_ONCE) and
 *         re-check it at each run
 * @sq: send queue ring; its consumer is the send engine (@req)
 * @rq: receive queue ring, unused unless sroce_qp_has_rq(); its consumer
 *      is the receive engine (@resp)
 * @scq: send CQ (NULL for an XRC target QP)
 * @rcq: receive CQ (NULL for XRC QPs)
 * @srq: shared receive queue, or NULL
 * @xrcd: an XRC target QP's XRC domain, whose SRQs its requests name
 * @cap: the sizes reported to the consumer
 * @sq_sig_all: every send WR is signaled
 * @user: the rings are shared with a process
 * @engine_bh: both engines run from BH work items (module parameter
 *	       engine, read once at create)
 * @drained: in SQD, IB_EVENT_SQ_DRAINED was raised
 * @attr: modifiable attributes
 * @mtu: path MTU in bytes, set on entering RTR
 * @src_port: UDP source port (RC, UC), set on entering RTR
 * @dst_cache: route to the peer (RC, UC)
 * @events: SROCE_QP_EV_* bits
 * @ref: one reference while the QP is in the device's table, one per
 *       receive path lookup in progress
 * @released: completed when @ref drops to zero
 * @req: the send engine
 * @resp: the receive engine
 */
struct sroce_qp {
	struct ib_qp ibqp;
	struct mutex mutex;		/* see above */
	spinlock_t sq_lock;		/* see above */
	spinlock_t rq_lock;		/* see above */
	spinlock_t state_lock;		/* see above */
	enum ib_qp_state state;
	struct sroce_queue sq;
	struct sroce_queue rq;
	struct sroce_cq *scq;
	struct sroce_cq *rcq;
	struct sroce_srq *srq;
	struct ib_xrcd *xrcd;
	struct ib_qp_cap cap;
	bool sq_sig_all;
	bool user;
	bool engine_bh;
	bool drained;
	struct sroce_qp_attr attr;
	u32 mtu;
	u16 src_port;
	struct dst_cache dst_cache;
	unsigned long events;
	refcount_t ref;
	struct completion released;
	struct sroce_req req;
	struct sroce_resp resp;
};

static inline struct sroce_qp *to_sqp(struct ib_qp *ibqp)
{
	return container_of(ibqp, struct sroce_qp, ibqp);
}

/*
 * Reliable connected QPs: RC and both ends of XRC (IBA annex A14), which
 * acknowledge, retransmit and keep responder resources as RC does.
 */
static inline bool sroce_qp_is_reliable(const struct sroce_qp *qp)
{
	return qp->ibqp.qp_type == IB_QPT_RC ||
	       qp->ibqp.qp_type == IB_QPT_XRC_INI ||
	       qp->ibqp.qp_type == IB_QPT_XRC_TGT;
}

/* Connected QPs, which take packets from their path's peer only. */
static inline bool sroce_qp_is_connected(const struct sroce_qp *qp)
{
	return sroce_qp_is_reliable(qp) || qp->ibqp.qp_type == IB_QPT_UC;
}

/* A receive queue of its own: not on an SRQ, and not an XRC QP. */
static inline bool sroce_qp_has_rq(const struct sroce_qp *qp)
{
	return !qp->srq && qp->ibqp.qp_type != IB_QPT_XRC_INI &&
	       qp->ibqp.qp_type != IB_QPT_XRC_TGT;
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

#endif /* SROCE_QP_H */
