// SPDX-License-Identifier: GPL-2.0 OR Linux-OpenIB
/*
 * DOC: Requester
 *
 * The send engine of a QP runs the requester (this file) and the completer
 * (comp.c) of IBA 9.7.4 one after the other, so they share their state
 * without locks. The requester takes WQEs from the SQ ring in order,
 * copies each into a private slot and checks it there (build.c), assigns
 * its PSNs and sends its packets while its QP's congestion window
 * (cwnd.c) and its device's flight bound (flight.c) allow. A READ or
 * atomic starts only while fewer than max_rd_atomic are outstanding (and,
 * when fenced, none, IBA 10.8.3.3). Loss recovery and the timers are
 * retry.c's; on UC and UD a WQE is finished when its last packet is sent.
 */
#include <rdma/ib_user_verbs.h>

#include "build.h"
#include "comp.h"
#include "compat.h"
#include "device.h"
#include "fault.h"
#include "flight.h"
#include "mem.h"
#include "mr.h"
#include "mw.h"
#include "params.h"
#include "pkt.h"
#include "qp.h"
#include "qp_core.h"
#include "req.h"

/* Kernel and user WQEs share the send flags' values. */
static_assert(SROCE_SEND_FENCE == IB_SEND_FENCE);
static_assert(SROCE_SEND_SIGNALED == IB_SEND_SIGNALED);
static_assert(SROCE_SEND_SOLICITED == IB_SEND_SOLICITED);
static_assert(SROCE_SEND_INLINE == IB_SEND_INLINE);

#define SROCE_REQ_BUDGET	64	/* packets per engine run */

/* Work requests done inside this host, without packets (IBA 10.8.3.?). */
static bool is_local(u32 opcode)
{
	return opcode == IB_UVERBS_WR_BIND_MW ||
	       opcode == IB_UVERBS_WR_LOCAL_INV || opcode == IB_WR_REG_MR;
}

/* Bind a window, invalidate a key, or register a fast-registration MR. */
static enum ib_wc_status local_op(struct sroce_qp *qp, struct sroce_swqe *s)
{
	struct sroce_dev *sdev = to_sdev(qp->ibqp.device);

	switch (s->opcode) {
	case IB_UVERBS_WR_BIND_MW:
		return sroce_mw_bind(qp, s);
	case IB_UVERBS_WR_LOCAL_INV:
		return sroce_mem_invalidate(sdev, qp->ibqp.pd, qp->ibqp.qp_num,
					    s->ex) ? IB_WC_LOC_PROT_ERR :
						     IB_WC_SUCCESS;
	default:
		return sroce_mr_fast_reg(qp, s->rkey, s->ex, s->bind_access);
	}
}

/*
 * WQEs posted and not yet taken by the requester. The producer index is
 * the process's to write: one that went back past WQEs already taken (or
 * that claims more WQEs than slots) means a corrupt ring. Returns false
 * then.
 */
static bool sq_untaken(struct sroce_qp *qp, u32 *count)
{
	u32 taken = qp->req.next - qp->sq.cons;

	if (sroce_queue_count(&qp->sq, count) || *count < taken)
		return false;
	*count -= taken;
	return true;
}

/**
 * sroce_req_ring_corrupt() - the process broke its SQ ring's indices
 * @qp: the QP; called by its send engine
 *
 * A local work queue catastrophic error (IBA 11.6.3.1): the QP enters the
 * error state, which flushes the WQEs taken so far, and the consumer gets
 * IB_EVENT_QP_FATAL. Nothing else is read from the ring until a reset.
 */
void sroce_req_ring_corrupt(struct sroce_qp *qp)
{
	ibdev_warn_ratelimited(qp->ibqp.device,
			       "QP %u: send queue indices corrupt, QP to error\n",
			       qp->ibqp.qp_num);
	if (sroce_qp_fail(qp, IB_WC_LOC_QP_OP_ERR))
		sroce_qp_event(qp, IB_EVENT_QP_FATAL);
}

/*
 * May the WQE copied into @s start now? (IBA 10.8.3.3: fences,
 * rd_atomic) Asked of the private copy, never of the ring, which the
 * process may rewrite between the question and the copy.
 */
static bool may_start(struct sroce_qp *qp, const struct sroce_swqe *s)
{
	u32 max = max_t(u32, qp->attr.max_rd_atomic, 1);

	if ((s->send_flags & IB_SEND_FENCE) && qp->req.rd_atomic)
		return false;
	return !sroce_wr_is_rd_atomic(s->opcode) || qp->req.rd_atomic < max;
}

/*
 * Do @s's PSNs fit beside those outstanding? All of them together stay
 * within SROCE_PSN_MAX_OUTSTANDING (IBA 9.7.1), or an acknowledgment could
 * not be placed: a READ of 2 GiB at a 256-byte MTU takes 2^23 PSNs. One
 * that could never fit starts anyway, alone, to fail (start_next()).
 */
static bool psn_room(struct sroce_qp *qp, const struct sroce_swqe *s)
{
	const struct sroce_req *req = &qp->req;
	s32 used = sroce_psn_diff(req->next_psn, req->unacked_psn);

	/* Only a reliable QP's PSNs wait for acknowledgments. */
	if (!sroce_qp_is_reliable(qp) || used <= 0)
		return true;
	return (u64)used + sroce_build_npkts(qp, s) <= SROCE_PSN_MAX_OUTSTANDING;
}

/*
 * Take the next WQE off the ring, if the state and the limits allow.
 * Returns false when there is none to start.
 */
static bool start_next(struct sroce_qp *qp)
{
	struct sroce_req *req = &qp->req;
	enum ib_wc_status status;
	struct sroce_swqe *s;
	u32 count;

	if (READ_ONCE(qp->state) != IB_QPS_RTS)
		return false;	/* SQD: no new WQE starts (IBA 10.3.1) */
	if (!sq_untaken(qp, &count)) {
		sroce_req_ring_corrupt(qp);
		return false;
	}
	if (!count)
		return false;

	s = sroce_req_swqe(&qp->req, req->next);
	status = sroce_build_fetch(qp, req->next, s);
	/* Not yet: the slot is copied again when it may start. */
	if (!may_start(qp, s) || !psn_room(qp, s))
		return false;
	/* A reliable message longer than the PSN window cannot be sent. */
	if (sroce_qp_is_reliable(qp) && status == IB_WC_SUCCESS &&
	    sroce_build_npkts(qp, s) > SROCE_PSN_MAX_OUTSTANDING)
		status = IB_WC_LOC_LEN_ERR;
	s->first_psn = req->next_psn;
	s->last_psn = sroce_psn_add(s->first_psn, sroce_build_npkts(qp, s) - 1);
	req->next_psn = sroce_psn_add(s->last_psn, 1);
	sroce_build_seek(qp, req->next, 0);
	req->next++;
	if (sroce_wr_is_rd_atomic(s->opcode))
		req->rd_atomic++;
	if (status == IB_WC_SUCCESS && is_local(s->opcode)) {
		/* Done here, in WQE order; no PSN is used. */
		s->last_psn = sroce_psn_add(s->first_psn, SROCE_PSN_MASK);
		req->next_psn = s->first_psn;
		status = local_op(qp, s);
		sroce_comp_wqe_done(qp, s, status);
		return status == IB_WC_SUCCESS;
	}
	if (status != IB_WC_SUCCESS) {
		sroce_comp_wqe_done(qp, s, status);
		return false;
	}
	return true;
}

static bool window_open(struct sroce_qp *qp)
{
	struct sroce_req *req = &qp->req;

	if (!sroce_qp_is_reliable(qp))
		return true;
	return !req->retry.rnr_wait &&
	       sroce_psn_diff(req->psn, req->unacked_psn) < req->win.cwnd;
}

/*
 * Send up to @budget packets. Every step counts against the budget, a
 * packet or not (a local operation, a WQE skipped on a resend), so that a
 * ring full of local work requests cannot hold the CPU either. Returns
 * true when work remains that the window or the budget held back.
 */
static bool send_packets(struct sroce_qp *qp, int budget)
{
	struct sroce_req *req = &qp->req;
	struct sroce_build_sent out;
	enum ib_wc_status status;
	struct sroce_swqe *s;

	while (budget > 0 && window_open(qp)) {
		budget--;
		if (req->cur == req->next && !start_next(qp))
			break;
		s = sroce_req_swqe(&qp->req, req->cur);
		if (s->state != SROCE_SWQE_SENDING) {
			sroce_build_seek(qp, req->cur + 1, 0);
			continue;
		}
		if (sroce_flight_hold(qp))
			break;
		status = sroce_build_send(qp, s, &out);
		if (status != IB_WC_SUCCESS) {
			sroce_comp_wqe_done(qp, s, status);
			break;
		}
		if (!out.sent) {
			/* A fault's end runs us; no memory: a tick later. */
			if (!out.fault)
				sroce_task_kick(&qp->req.task);
			break;
		}
		sroce_retry_sent(qp, &out);
		if (req->offset < s->length)
			continue;
		s->state = sroce_qp_is_reliable(qp) ? SROCE_SWQE_SENT :
						      SROCE_SWQE_DONE;
		sroce_build_seek(qp, req->cur + 1, 0);
	}
	sroce_retry_wait(qp);
	return budget <= 0;
}

/*
 * Tell the process whether to ring the doorbell for new WQEs (see the ABI
 * header): not while responses outstanding will run us anyway. In ERR or
 * SQE nothing will arrive and every new WQE is to be flushed, so the
 * process must always ring. Setting the flag is followed by a last look
 * at the ring, which the process's barrier pairs with.
 */
static bool update_wakeup(struct sroce_qp *qp)
{
	enum ib_qp_state state = READ_ONCE(qp->state);
	bool error = state == IB_QPS_ERR || state == IB_QPS_SQE;
	struct sroce_req *req = &qp->req;
	u32 count;

	if (qp->sq.side != SROCE_QUEUE_USER_PRODUCER)
		return false;
	/* Only RC waits for acknowledgments; UC and UD are done when sent. */
	if (!error && (req->cur != req->next ||
		       (sroce_qp_is_reliable(qp) &&
			req->next_psn != req->unacked_psn))) {
		WRITE_ONCE(qp->sq.hdr->flags, 0);
		return false;
	}
	WRITE_ONCE(qp->sq.hdr->flags, SROCE_QUEUE_NEED_WAKEUP);
	smp_mb();	/* flag before producer; pairs with the provider */
	return sq_untaken(qp, &count) && count &&
	       (state == IB_QPS_RTS || error);
}

static bool req_engine(struct sroce_task *task)
{
	struct sroce_qp *qp = container_of(task, struct sroce_qp, req.task);
	/* Pairs with change_state(). */
	enum ib_qp_state state = smp_load_acquire(&qp->state);
	bool more;

	if (state < IB_QPS_RTS) {
		skb_queue_purge(&qp->req.resp_pkts);
		sroce_flight_clear(qp);
		return false;
	}
	if (state == IB_QPS_ERR || state == IB_QPS_SQE) {
		skb_queue_purge(&qp->req.resp_pkts);
		sroce_flight_clear(qp);
		more = sroce_comp_flush(qp);
		/* The CQ full: the flag says "ring" all the same, no rerun. */
		return update_wakeup(qp) && more;
	}
	if (sroce_fault_req_held(to_sdev(qp->ibqp.device)))
		return false;
	more = sroce_comp_run(qp, SROCE_REQ_BUDGET);
	if (READ_ONCE(qp->state) != IB_QPS_ERR &&
	    READ_ONCE(qp->state) != IB_QPS_SQE)
		more |= send_packets(qp, SROCE_REQ_BUDGET);
	more |= sroce_comp_complete(qp);
	sroce_flight_update(qp);
	return update_wakeup(qp) || more;
}

/**
 * sroce_req_rcv() - queue a response for the completer and run it
 * @qp: the QP, referenced by the caller
 * @skb: the response; consumed
 *
 * Context: bottom halves disabled.
 */
void sroce_req_rcv(struct sroce_qp *qp, struct sk_buff *skb)
{
	struct sroce_dev *sdev = to_sdev(qp->ibqp.device);

	/* A bound, not exact: racing receivers may pass it by a few. */
	if (skb_queue_len_lockless(&qp->req.resp_pkts) >=
	    READ_ONCE(sroce_qp_backlog)) {
		sroce_stats_drop(&sdev->stats, SROCE_STAT_RX_DROP_BACKLOG);
		kfree_skb(skb);
	} else {
		skb_queue_tail(&qp->req.resp_pkts, skb);
	}
	sroce_task_run(&qp->req.task);
}

/**
 * sroce_req_init() - set up the send engine of a new QP
 * @qp: the QP, with its SQ allocated
 *
 * Return: 0 or -ENOMEM.
 */
int sroce_req_init(struct sroce_qp *qp)
{
	struct sroce_req *req = &qp->req;

	req->swqe_mask = qp->sq.num_entries - 1;
	req->swqe_size = ALIGN(sizeof(struct sroce_swqe) + qp->sq.entry_size -
			       sizeof(struct sroce_send_wqe), 64);
	req->swqe = kvcalloc(qp->sq.num_entries, req->swqe_size,
			     SROCE_GFP_USER_OBJ);
	if (!req->swqe)
		return -ENOMEM;
	skb_queue_head_init(&req->resp_pkts);
	atomic_set(&req->zcopy_live, 0);
	sroce_retry_init(qp);
	sroce_task_init(&req->task, req_engine, qp->engine_bh);
	sroce_odp_fault_init(&req->fault, to_sdev(qp->ibqp.device), &req->task);
	return 0;
}

/**
 * sroce_req_stop() - stop the send engine and its timers
 * @qp: the QP
 *
 * Only a run of the engine arms the timers, and none runs once the engine
 * is stopped, so the timers stay stopped too; one firing meanwhile
 * schedules nothing (task.c). sroce_task_start() lets the engine run
 * again.
 *
 * Context: process.
 */
void sroce_req_stop(struct sroce_qp *qp)
{
	sroce_task_stop(&qp->req.task);
	sroce_retry_stop(qp);
	skb_queue_purge(&qp->req.resp_pkts);
	sroce_odp_fault_cancel(&qp->req.fault);
	qp->req.fault_resend = false;
}

/**
 * sroce_req_cleanup() - free the send engine's memory, and take the QP's
 * packets out of its device's flight
 * @qp: the QP, its engine stopped
 */
void sroce_req_cleanup(struct sroce_qp *qp)
{
	sroce_flight_clear(qp);
	kvfree(qp->req.swqe);
}

/**
 * sroce_req_reset() - forget everything (the QP entered RESET)
 * @qp: the QP, its engine stopped
 */
void sroce_req_reset(struct sroce_qp *qp)
{
	struct sroce_req *req = &qp->req;

	req->next = qp->sq.cons;
	req->cur = qp->sq.cons;
	req->psn = 0;
	req->next_psn = 0;
	req->offset = 0;
	req->unacked_psn = 0;
	req->rd_atomic = 0;
	req->tx_high = 0;
	sroce_retry_reset(qp);
	sroce_cwnd_reset(&req->win);
	sroce_flight_clear(qp);
	req->ackreq_last = false;
	req->ack_now = false;
	WRITE_ONCE(req->zcopy_copied, false);
}

/**
 * sroce_req_start() - take the attributes the QP has on entering RTS
 * @qp: the QP; its modify mutex is held
 */
void sroce_req_start(struct sroce_qp *qp)
{
	struct sroce_req *req = &qp->req;

	lockdep_assert_held(&qp->mutex);
	req->psn = qp->attr.sq_psn;
	req->next_psn = req->psn;
	req->unacked_psn = req->psn;
	req->tx_high = req->psn;
	sroce_retry_start(qp);
	sroce_cwnd_reset(&req->win);
	/* A path to try attaching on again (zcopy.c). */
	WRITE_ONCE(req->zcopy_copied, false);
}

/**
 * sroce_req_update() - take loss-recovery attributes changed after RTS
 * @qp: the QP; its modify mutex is held and its send engine stopped
 * @mask: the attributes that changed (enum ib_qp_attr_mask)
 *
 * A QP in SQD may be given a new local ACK timeout and retry counts (IBA
 * 11.2.4.2, table 91): they apply from now on, with full retry budgets,
 * as on entering RTS.
 */
void sroce_req_update(struct sroce_qp *qp, int mask)
{
	struct sroce_req *req = &qp->req;

	lockdep_assert_held(&qp->mutex);
	sroce_retry_update(qp, mask);
	/* A new path to try attaching on again (zcopy.c). */
	if (mask & IB_QP_AV)
		WRITE_ONCE(req->zcopy_copied, false);
}
