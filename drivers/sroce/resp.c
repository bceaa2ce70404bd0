// SPDX-License-Identifier: GPL-2.0 OR Linux-OpenIB
/*
 * DOC: Responder
 *
 * The receive engine of a QP executes the requests it receives, in PSN
 * order (IBA 9.7.5.1):
 *
 * - PSN check (RC, IBA 9.7.5.1.1): the expected PSN is executed; a later
 *   one is a sequence error, answered by one NAK until the expected packet
 *   comes; an earlier one is a duplicate (9.7.5.1.3): SEND and WRITE are
 *   acknowledged again, a READ is answered again from its responder
 *   resource (reads may be re-executed), an atomic is answered again with
 *   the value saved when it executed (atomics are never re-executed).
 *   UC only resynchronises on the first packet of a message; UD has no
 *   PSN check. ATOMIC_WRITE and FLUSH are, like atomics, executed once
 *   and only their response repeated.
 * - Opcode sequence, QP access rights (9.7.5.1.2) and execution: exec.c.
 * - Acknowledgment: a packet with AckReq is acknowledged; the ACKs of one
 *   engine run are coalesced into the last one (9.7.5.1.5), sent before
 *   any later response, in PSN order. An engine run inline by the receive
 *   path, one packet at a time, leaves its ACK to the tasklet, which runs
 *   after the softirq's whole batch of packets: one ACK a batch. READ and
 *   atomic responses acknowledge by themselves. An ACK carries the MSN
 *   of when it became due. An ACK held is sent (or, if no buffer can be
 *   had, counted as dropped) when the QP ends: the error state, a reset
 *   or a destroy sends it first; a reset, once the QP's state already
 *   says RESET, with the path it had. The requests it acknowledges have
 *   completed here, and the user who saw their completions may end the
 *   QP at once (perftest and rdma-core's pingpong do); a requester
 *   denied the ACK retries into a QP that is gone and fails with a retry
 *   error (IBA 9.7.6.1.3). A request whose completion overflowed the
 *   receive CQ is not acknowledged: the QP failed with it.
 *
 * Errors follow the responder error classes of IBA 9.9.3, in
 * resp_error(): on RC an invalid request or an access error is answered
 * with the NAK of IBA table 47 and moves the QP to the error state; a
 * receive WQE being filled then completes with the error. On UC and UD
 * such packets are dropped (counted) and the QP's own receive WQE kept.
 * Documentation/responder-errors.md has the table.
 */
#include <linux/log2.h>
#include <rdma/ib_mad.h>

#include "cq.h"
#include "device.h"
#include "exec.h"
#include "fault.h"
#include "params.h"
#include "pkt.h"
#include "qp.h"
#include "qp_core.h"
#include "reply.h"
#include "resp.h"
#include "srq.h"
#include "trace.h"

#define SROCE_RESP_BUDGET	64	/* packets per engine run */

static struct sroce_dev *qp_dev(struct sroce_qp *qp)
{
	return to_sdev(qp->ibqp.device);
}

/* After a SEND or WRITE packet executed: sequence state and the ACK. */
static void advance(struct sroce_qp *qp, const struct sroce_pkt *pkt)
{
	struct sroce_resp *resp = &qp->resp;

	resp->epsn = sroce_psn_add(pkt->psn, 1);
	resp->done_psn = pkt->psn;
	if (pkt->flags & SROCE_OP_LAST) {
		resp->in_msg = 0;
		resp->msn = sroce_psn_add(resp->msn, 1);
	} else {
		resp->in_msg = pkt->flags & (SROCE_OP_SEND | SROCE_OP_WRITE);
	}
	/* UC acknowledges nothing, whatever a peer's AckReq says (IBA 9.8). */
	if (pkt->ackreq && sroce_qp_is_reliable(qp)) {
		resp->ack_pending = true;
		resp->ack_psn = pkt->psn;
		resp->ack_msn = resp->msn;
	}
}

/**
 * struct resp_error - what an error means (IBA 9.9.3, responder errors)
 * @nak: RC and XRC: the NAK code sent (IBA table 47)
 * @event: the affiliated asynchronous error raised as the QP enters the
 *	   error state (IBA 11.6.3.1), 0 for none: for a peer's error on RC
 *	   and XRC only, for the QP's own (@local) on every transport
 * @status: the completion status of the receive WQE held, if any
 * @local: the QP's own fault (a malformed receive WQE or ring): the QP
 *	   enters the error state whatever its transport
 * @drop: UC and UD: the counter of the request dropped
 */
struct resp_error {
	u8 nak;
	enum ib_event_type event;
	enum ib_wc_status status;
	bool local;
	enum sroce_stat drop;
};

static const struct resp_error resp_errors[] = {
	[SROCE_RESP_RNR] = {
		.drop = SROCE_STAT_RX_DROP_NO_RWQE,
	},
	[SROCE_RESP_FAULT] = {
		.drop = SROCE_STAT_RX_DROP_ODP,
	},
	[SROCE_RESP_INV_REQ] = {
		.nak = SROCE_NAK_INVALID_REQ,
		.event = IB_EVENT_QP_REQ_ERR,
		.status = IB_WC_REM_INV_REQ_ERR,
		.drop = SROCE_STAT_RX_DROP_INVALID,
	},
	[SROCE_RESP_LENGTH] = {
		.nak = SROCE_NAK_INVALID_REQ,
		.event = IB_EVENT_QP_REQ_ERR,
		.status = IB_WC_LOC_LEN_ERR,
		.drop = SROCE_STAT_RX_DROP_LENGTH,
	},
	[SROCE_RESP_ACCESS] = {
		.nak = SROCE_NAK_REM_ACCESS_ERR,
		.event = IB_EVENT_QP_ACCESS_ERR,
		.status = IB_WC_REM_ACCESS_ERR,
		.drop = SROCE_STAT_RX_DROP_INVALID,
	},
	[SROCE_RESP_WQE_PROT] = {
		.nak = SROCE_NAK_REM_OP_ERR,
		.status = IB_WC_LOC_PROT_ERR,
		.local = true,
	},
	[SROCE_RESP_WQE_BAD] = {
		.nak = SROCE_NAK_REM_OP_ERR,
		.status = IB_WC_LOC_QP_OP_ERR,
		.local = true,
	},
	/*
	 * A local work queue catastrophic error (IBA 11.6.3.1): no receive
	 * WQE can be trusted, so none completes; the event says it.
	 */
	[SROCE_RESP_RING_BAD] = {
		.nak = SROCE_NAK_REM_OP_ERR,
		.event = IB_EVENT_QP_FATAL,
		.status = IB_WC_LOC_QP_OP_ERR,
		.local = true,
	},
};

/* Keep the receive WQE held, if any, for the next message: from its start. */
static void rewind_rwqe(struct sroce_qp *qp)
{
	struct sroce_resp *resp = &qp->resp;

	if (resp->have_rwqe) {
		sroce_sgl_init(&resp->sgl, resp->rwqe.sge, resp->rwqe.num_sge,
			       &resp->fault);
		resp->recv_len = 0;
	}
}

/* UC: drop the message in progress, up to the next FIRST or ONLY. */
static void drop_msg(struct sroce_qp *qp)
{
	qp->resp.drop_msg = true;
	qp->resp.in_msg = 0;
	rewind_rwqe(qp);
}

/*
 * A request failed (IBA 9.9.3; Documentation/responder-errors.md has the
 * whole table). RC and XRC (class B, C): an RNR NAK and nothing else, or
 * the NAK of IBA table 47, the receive WQE held completed in error, the QP
 * to the error state and, for an invalid request or an access error, the
 * affiliated asynchronous error of IBA 11.6.3.1. UC and UD, which cannot
 * tell the requester: the message is dropped and counted (class D); a
 * receive WQE held stays for the next message, unless it came from an SRQ,
 * which cannot take it back: it completes in error, the QP going on
 * (class E). A malformed
 * receive WQE or ring is the QP's own fault on every transport (class A);
 * a corrupt ring also raises IB_EVENT_QP_FATAL, as the SQ's does.
 */
static void resp_error(struct sroce_qp *qp, enum sroce_resp_result res, u32 psn)
{
	struct sroce_dev *sdev = qp_dev(qp);
	const struct resp_error *e;

	/*
	 * The receive CQ overflowed: the QP has failed already (IBA
	 * 11.6.3.1, sroce_exec_complete_rwqe()). Nothing is acknowledged:
	 * the requester's retries end in a retry error, as with rdma_rxe.
	 */
	if (res == SROCE_RESP_CQ_FULL)
		return;
	trace_sroce_resp_error(qp, psn, res, 0);
	e = &resp_errors[res];
	sroce_fault_error_delay();
	/*
	 * A page fault of on-demand paged memory is answered as a missing
	 * receive WQE is: the requester waits and sends again, as hardware
	 * has it (Documentation/datapath.md, "On-demand paging").
	 */
	if (sroce_qp_is_reliable(qp) &&
	    (res == SROCE_RESP_RNR || res == SROCE_RESP_FAULT)) {
		sroce_stats_add(&sdev->stats, SROCE_STAT_RNR_NAKS_SENT, 1);
		sroce_reply_nak(qp, SROCE_AETH_RNR_NAK | qp->attr.min_rnr_timer, psn);
		return;
	}
	if (sroce_qp_is_reliable(qp) || e->local) {
		if (sroce_qp_is_reliable(qp)) {
			sroce_stats_add(&sdev->stats, SROCE_STAT_NAKS_SENT, 1);
			sroce_reply_nak(qp, SROCE_AETH_NAK | e->nak, psn);
		}
		sroce_exec_fail_rwqe(qp, e->status);
		if (sroce_qp_fail(qp, e->status) && e->event)
			sroce_qp_event(qp, e->event);
		return;
	}
	sroce_stats_drop(&sdev->stats, e->drop);
	if (qp->srq && res != SROCE_RESP_RNR && res != SROCE_RESP_FAULT)
		sroce_exec_fail_rwqe(qp, e->status);
	if (qp->ibqp.qp_type == IB_QPT_UC)
		drop_msg(qp);
	else
		rewind_rwqe(qp);
}

static struct sroce_rd_res *find_res(struct sroce_qp *qp, u32 psn)
{
	struct sroce_resp *resp = &qp->resp;
	struct sroce_rd_res *res;
	u32 i;

	for (i = 0; i < resp->res_num; i++) {
		res = &resp->res[(resp->res_head - 1 - i) & (resp->res_num - 1)];
		if (res->valid && sroce_psn_diff(psn, res->first_psn) >= 0 &&
		    sroce_psn_diff(psn, res->last_psn) <= 0)
			return res;
	}
	return NULL;
}

/* A duplicate request (IBA 9.7.5.1.3). */
static void duplicate(struct sroce_qp *qp, struct sk_buff *skb)
{
	struct sroce_pkt *pkt = sroce_pkt(skb);
	struct sroce_resp *resp = &qp->resp;
	struct sroce_rd_res *res;
	struct sroce_reth *reth;
	u64 va, end, res_end;
	u32 len;

	sroce_stats_add(&qp_dev(qp)->stats, SROCE_STAT_DUP_REQUESTS, 1);
	/*
	 * Acknowledge again what was last executed (IBA 9.7.5.1.3), not the
	 * PSN before the expected one: that may be a READ response's, which
	 * would tell the requester its READ response was lost.
	 */
	if (pkt->flags & (SROCE_OP_SEND | SROCE_OP_WRITE)) {
		resp->ack_pending = true;
		resp->ack_psn = resp->done_psn;
		resp->ack_msn = resp->msn;
		return;
	}
	res = find_res(qp, pkt->psn);
	if (!res)
		return;
	if (pkt->flags & SROCE_OP_ATOMIC) {
		if (res->atomic && res->first_psn == pkt->psn)
			sroce_reply_atomic_ack(qp, pkt->psn, res->orig);
		return;
	}
	/* Executed once; only the response is repeated. */
	if (pkt->flags & (SROCE_OP_ATOMIC_WRITE | SROCE_OP_FLUSH)) {
		if (res->empty && res->first_psn == pkt->psn)
			sroce_reply_empty_read(qp, pkt->psn);
		return;
	}
	if (res->atomic || res->empty)
		return;
	reth = sroce_pkt_hdr(skb, sroce_pkt_op(skb)->reth);
	va = be64_to_cpu(reth->va);
	len = be32_to_cpu(reth->len);
	if (be32_to_cpu(reth->rkey) != res->rkey || va < res->va ||
	    check_add_overflow(va, (u64)len, &end) ||
	    check_add_overflow(res->va, (u64)res->length, &res_end) ||
	    end > res_end)
		return;
	/* Resumed mid-way, the response goes on with MIDDLE/LAST, as rxe's. */
	resp->read = (struct sroce_read) {
		.active = true,
		.first = pkt->psn == res->first_psn,
		.psn = pkt->psn,
		.va = va,
		.rkey = res->rkey,
		.left = len,
		.srqn = res->srqn,
		.gen = res->gen,
	};
}

static void recv_rc(struct sroce_qp *qp, struct sk_buff *skb)
{
	struct sroce_pkt *pkt = sroce_pkt(skb);
	struct sroce_resp *resp = &qp->resp;
	s32 d = sroce_psn_diff(pkt->psn, resp->epsn);
	enum sroce_resp_result res;

	if (d > 0) {
		sroce_stats_add(&qp_dev(qp)->stats, SROCE_STAT_SEQ_ERRORS, 1);
		if (!resp->nak_sent) {
			resp->nak_sent = true;
			sroce_reply_nak(qp, SROCE_AETH_NAK | SROCE_NAK_PSN_SEQ_ERR,
					resp->epsn);
		}
		return;
	}
	if (d < 0) {
		duplicate(qp, skb);
		return;
	}
	resp->nak_sent = false;

	res = sroce_exec_request(qp, skb);
	if (res != SROCE_RESP_OK)
		resp_error(qp, res, pkt->psn);
	else if (pkt->flags & (SROCE_OP_SEND | SROCE_OP_WRITE))
		advance(qp, pkt);
}

/*
 * XRC target (IBA annex A14): each request names in its XRCETH an XRC SRQ
 * of the QP's XRC domain. Its receive WQE comes from that SRQ, its memory
 * accesses are checked against that SRQ's PD, and its completion goes to
 * that SRQ's CQ. A message names one SRQ throughout; naming none of ours
 * is an invalid request. Otherwise this is RC's responder.
 */
static void recv_xrc(struct sroce_qp *qp, struct sk_buff *skb)
{
	const struct sroce_opcode_info *op = sroce_pkt_op(skb);
	u32 srqn = sroce_xrceth_srqn(sroce_pkt_hdr(skb, op->xrceth));
	struct sroce_pkt *pkt = sroce_pkt(skb);
	struct sroce_resp *resp = &qp->resp;
	bool first = pkt->flags & SROCE_OP_FIRST;

	resp->xsrq = sroce_srq_get_xrc(qp_dev(qp), srqn, qp->xrcd);
	if (pkt->psn == resp->epsn &&
	    (!resp->xsrq || (!first && srqn != resp->xsrqn))) {
		resp_error(qp, SROCE_RESP_INV_REQ, pkt->psn);
	} else {
		/* A FIRST inside a message is refused by recv_rc(). */
		if (pkt->psn == resp->epsn && first && !resp->in_msg)
			resp->xsrqn = srqn;
		recv_rc(qp, skb);
	}
	if (resp->xsrq) {
		sroce_srq_put(resp->xsrq);
		resp->xsrq = NULL;
	}
}

/*
 * UC (IBA 9.7.5.1.1 does not apply): a PSN other than the expected one
 * means packets were lost, and the message they belonged to is dropped; a
 * FIRST or ONLY packet starts the next one, at whatever PSN it has.
 */
static void recv_uc(struct sroce_qp *qp, struct sk_buff *skb)
{
	struct sroce_pkt *pkt = sroce_pkt(skb);
	struct sroce_resp *resp = &qp->resp;
	enum sroce_resp_result res;

	if (pkt->psn != resp->epsn && !resp->drop_msg) {
		sroce_stats_add(&qp_dev(qp)->stats, SROCE_STAT_SEQ_ERRORS, 1);
		drop_msg(qp);
	}
	if (resp->drop_msg) {
		if (!(pkt->flags & SROCE_OP_FIRST))
			return;
		resp->drop_msg = false;
		resp->in_msg = 0;
	}
	res = sroce_exec_request(qp, skb);
	if (res == SROCE_RESP_OK)
		advance(qp, pkt);
	else
		resp_error(qp, res, pkt->psn);
}

/* The 40-byte GRH area of a UD receive buffer (IBA 11.4.1.2, A17.4.5.2). */
static void fill_grh(struct sk_buff *skb, union rdma_network_hdr *grh)
{
	memset(grh, 0, sizeof(*grh));
	if (skb->protocol == htons(ETH_P_IP))
		memcpy(&grh->roce4grh, skb_network_header(skb),
		       sizeof(grh->roce4grh));
	else
		memcpy(&grh->ibgrh, skb_network_header(skb),
		       sizeof(grh->ibgrh));
}

/*
 * UD (IBA 9.6.1.2, 10.2.5): no PSN check; a wrong Q_Key, a datagram longer
 * than the path MTU or than the receive WQE's buffers (GRH area included),
 * and a datagram with no receive WQE are dropped, counted, and use up no
 * receive WQE of the QP's own (Documentation/responder-errors.md). The
 * kernel's MAD layer relies on it: it takes an error completion on QP 1
 * for a flush and never posts that buffer again.
 */
static void recv_ud(struct sroce_qp *qp, struct sk_buff *skb)
{
	const struct sroce_opcode_info *op = sroce_pkt_op(skb);
	struct sroce_deth *deth = sroce_pkt_hdr(skb, op->deth);
	struct sroce_pkt *pkt = sroce_pkt(skb);
	struct sroce_resp *resp = &qp->resp;
	struct sroce_dev *sdev = qp_dev(qp);
	u32 qkey = qp->ibqp.qp_type == IB_QPT_GSI ? IB_QP1_QKEY : qp->attr.qkey;
	struct ib_wc wc = { .opcode = IB_WC_RECV };
	union rdma_network_hdr grh;
	enum sroce_resp_result res;
	int err;

	if (be32_to_cpu(deth->qkey) != qkey)
		return sroce_stats_drop(&sdev->stats, SROCE_STAT_RX_DROP_QKEY);
	if (pkt->paylen > qp->mtu)
		return sroce_stats_drop(&sdev->stats, SROCE_STAT_RX_DROP_LENGTH);
	res = sroce_exec_need_rwqe(qp);
	if (res == SROCE_RESP_OK &&
	    sroce_sgl_length(resp->rwqe.sge, resp->rwqe.num_sge) <
	    sizeof(grh) + pkt->paylen)
		res = SROCE_RESP_LENGTH;
	if (res == SROCE_RESP_OK) {
		fill_grh(skb, &grh);
		err = sroce_sgl_copy_in_buf(sdev, qp->ibqp.pd, &resp->sgl, &grh,
					    sizeof(grh)) ?:
		      sroce_sgl_copy_in(sdev, qp->ibqp.pd, &resp->sgl, skb,
					op->hdr_len, pkt->paylen);
		if (err)
			res = sroce_exec_sgl_result(err);
	}
	if (res != SROCE_RESP_OK)
		return resp_error(qp, res, pkt->psn);

	wc.byte_len = sizeof(grh) + pkt->paylen;
	wc.src_qp = sroce_deth_sqp(deth);
	wc.wc_flags = IB_WC_GRH | IB_WC_WITH_NETWORK_HDR_TYPE;
	wc.network_hdr_type = skb->protocol == htons(ETH_P_IP) ?
			      RDMA_NETWORK_IPV4 : RDMA_NETWORK_IPV6;
	if (pkt->flags & SROCE_OP_IMMDT) {
		wc.wc_flags |= IB_WC_WITH_IMM;
		wc.ex.imm_data = ((struct sroce_immdt *)
				  sroce_pkt_hdr(skb, op->immdt))->imm;
	}
	sroce_exec_complete_rwqe(qp, &wc, pkt->se);
}

static void handle_request(struct sroce_qp *qp, struct sk_buff *skb)
{
	switch (qp->ibqp.qp_type) {
	case IB_QPT_RC:
		recv_rc(qp, skb);
		break;
	case IB_QPT_UC:
		recv_uc(qp, skb);
		break;
	case IB_QPT_XRC_TGT:
		recv_xrc(qp, skb);
		break;
	default:
		recv_ud(qp, skb);
		break;
	}
}

/*
 * Flush the receive side (QP in ERR): the WQE held, then every WQE on
 * the RQ, bounded by what is there when we start. Then tell the process
 * to ring the doorbell after posting, so that later WQEs are flushed too.
 */
static bool flush_rq(struct sroce_qp *qp)
{
	struct ib_wc wc = { .status = IB_WC_WR_FLUSH_ERR, .opcode = IB_WC_RECV };
	const struct sroce_recv_wqe *w;
	u32 count;

	sroce_exec_fail_rwqe(qp, IB_WC_WR_FLUSH_ERR);
	/* IBA 11.6.3.1: no WQE of the SRQ will be taken any more. */
	if (qp->srq && !qp->resp.last_wqe) {
		qp->resp.last_wqe = true;
		sroce_qp_event(qp, IB_EVENT_QP_LAST_WQE_REACHED);
	}
	if (!sroce_qp_has_rq(qp))
		return false;
	if (sroce_queue_count(&qp->rq, &count))
		return false;
	while (count--) {
		w = sroce_queue_slot(&qp->rq, qp->rq.cons);
		wc.wr_id = READ_ONCE(w->wr_id);
		wc.qp = &qp->ibqp;
		if (sroce_cq_post(qp->rcq, &wc, true))
			return false;
		sroce_queue_pop(&qp->rq);
	}
	if (qp->rq.side != SROCE_QUEUE_USER_PRODUCER)
		return false;
	WRITE_ONCE(qp->rq.hdr->flags, SROCE_QUEUE_NEED_WAKEUP);
	smp_mb();	/* flag before producer; pairs with the provider */
	return !sroce_queue_count(&qp->rq, &count) && count;
}

static bool resp_engine(struct sroce_task *task)
{
	struct sroce_qp *qp = container_of(task, struct sroce_qp, resp.task);
	/* Pairs with change_state(). */
	enum ib_qp_state state = smp_load_acquire(&qp->state);
	struct sroce_resp *resp = &qp->resp;
	int budget = SROCE_RESP_BUDGET;
	bool kicked = false;
	struct sk_buff *skb;
	bool more;
	int sent;

	if (state < IB_QPS_RTR) {
		skb_queue_purge(&resp->req_pkts);
		return false;
	}
	if (state == IB_QPS_ERR) {
		skb_queue_purge(&resp->req_pkts);
		sroce_reply_flush_ack(qp);
		return flush_rq(qp);
	}
	if (sroce_fault_resp_held(qp_dev(qp)))
		return false;
	while (budget > 0) {
		if (resp->read.active) {
			sent = sroce_exec_read_resp(qp, budget);
			if (sent == -EACCES) {
				resp_error(qp, SROCE_RESP_ACCESS, resp->read.psn);
				sent = 0;
			}
			/* -EAGAIN: a fault's end runs us again. */
			kicked = sent < 0;
			if (kicked || resp->read.active)
				break;
			budget -= sent;
			/* Failed part-way: nothing after it (IBA 9.9.3). */
			if (READ_ONCE(qp->state) == IB_QPS_ERR)
				return true;
			continue;
		}
		skb = skb_dequeue(&resp->req_pkts);
		if (!skb)
			break;
		if (sroce_qp_is_connected(qp) &&
		    !sroce_av_is_peer(&qp->attr.av, skb))
			sroce_stats_drop(&qp_dev(qp)->stats,
					 SROCE_STAT_RX_DROP_ADDR);
		else
			handle_request(qp, skb);
		consume_skb(skb);
		budget--;
		if (READ_ONCE(qp->state) == IB_QPS_ERR)
			return true;
	}
	/*
	 * Run inline by the receive path, the engine sees one packet at a
	 * time: the ACK waits for the tasklet, which runs when the softirq
	 * has handed over its whole batch (NET_RX before TASKLET; in
	 * loopback, when the sender's run ends), so that a batch earns one
	 * ACK (9.7.5.1.5). A response of a later PSN in between sends it
	 * first (sroce_reply_flush_ack()). The ack_hold knob (fault.c) keeps it at the
	 * end of a tasklet's run too, for tests.
	 */
	more = !kicked &&
	       (resp->read.active || !skb_queue_empty(&resp->req_pkts));
	if (resp->ack_pending && !kicked) {
		if (task->inline_run)
			return true;
		if (sroce_fault_ack_held(qp_dev(qp)))
			return more;
	}
	sroce_reply_flush_ack(qp);
	return more;
}

/**
 * sroce_resp_rcv() - queue a request for the responder and run it
 * @qp: the QP, referenced by the caller
 * @skb: the request; consumed
 *
 * Context: bottom halves disabled.
 */
void sroce_resp_rcv(struct sroce_qp *qp, struct sk_buff *skb)
{
	/* A bound, not exact: racing receivers may pass it by a few. */
	if (skb_queue_len_lockless(&qp->resp.req_pkts) >=
	    READ_ONCE(sroce_qp_backlog)) {
		sroce_stats_drop(&qp_dev(qp)->stats, SROCE_STAT_RX_DROP_BACKLOG);
		kfree_skb(skb);
	} else {
		skb_queue_tail(&qp->resp.req_pkts, skb);
	}
	sroce_task_run(&qp->resp.task);
}

/**
 * sroce_resp_init() - set up the receive engine of a new QP
 * @qp: the QP
 */
void sroce_resp_init(struct sroce_qp *qp)
{
	skb_queue_head_init(&qp->resp.req_pkts);
	sroce_task_init(&qp->resp.task, resp_engine, qp->engine_bh);
	sroce_odp_fault_init(&qp->resp.fault, qp_dev(qp), &qp->resp.task);
}

/**
 * sroce_resp_stop() - stop the receive engine
 * @qp: the QP
 *
 * sroce_task_start() lets it run again. An ACK the engine held goes out
 * now (see the DOC above): the QP is being reset or destroyed.
 *
 * Context: process.
 */
void sroce_resp_stop(struct sroce_qp *qp)
{
	sroce_task_stop(&qp->resp.task);
	skb_queue_purge(&qp->resp.req_pkts);
	sroce_odp_fault_cancel(&qp->resp.fault);
	/* The engine is stopped: nothing else reads or sets ack_pending. */
	local_bh_disable();
	sroce_reply_flush_ack(qp);
	local_bh_enable();
}

/**
 * sroce_resp_cleanup() - free the receive engine's memory
 * @qp: the QP, its engine stopped
 */
void sroce_resp_cleanup(struct sroce_qp *qp)
{
	kfree(qp->resp.res);
	qp->resp.res = NULL;
}

/**
 * sroce_resp_reset() - forget everything (the QP entered RESET)
 * @qp: the QP, its engine stopped
 */
void sroce_resp_reset(struct sroce_qp *qp)
{
	struct sroce_resp *resp = &qp->resp;

	resp->nak_sent = false;
	resp->drop_msg = false;
	resp->in_msg = 0;
	resp->have_rwqe = false;
	resp->last_wqe = false;
	resp->ack_pending = false;
	resp->read.active = false;
	resp->res_head = 0;
	if (resp->res)
		memset(resp->res, 0, resp->res_num * sizeof(*resp->res));
}

/**
 * sroce_resp_start() - take the attributes the QP has on entering RTR
 * @qp: the QP; its modify mutex is held
 *
 * Return: 0 or -ENOMEM.
 */
int sroce_resp_start(struct sroce_qp *qp)
{
	struct sroce_resp *resp = &qp->resp;
	u32 num = roundup_pow_of_two(max_t(u32, qp->attr.max_dest_rd_atomic,
					   1));

	lockdep_assert_held(&qp->mutex);
	if (num != resp->res_num) {
		kfree(resp->res);
		resp->res = kcalloc(num, sizeof(*resp->res), SROCE_GFP_USER_OBJ);
		if (!resp->res) {
			resp->res_num = 0;
			return -ENOMEM;
		}
		resp->res_num = num;
	}
	sroce_resp_reset(qp);
	resp->epsn = qp->attr.rq_psn;
	resp->done_psn = sroce_psn_add(resp->epsn, SROCE_PSN_MASK);
	resp->msn = 0;
	return 0;
}

/**
 * sroce_resp_resize() - size the responder resources for a new
 *			 max_dest_rd_atomic (SQD to SQD, IBA 11.2.4.2)
 * @qp: the QP; its modify mutex is held and its receive engine stopped
 *
 * The newest resources move over, as many as fit, so that duplicates of
 * the READs and atomics executed last are still answered.
 *
 * Return: 0 or -ENOMEM (nothing changed then).
 */
int sroce_resp_resize(struct sroce_qp *qp)
{
	struct sroce_resp *resp = &qp->resp;
	u32 num = roundup_pow_of_two(max_t(u32, qp->attr.max_dest_rd_atomic,
					   1));
	struct sroce_rd_res *res;
	u32 i, keep;

	lockdep_assert_held(&qp->mutex);
	if (num == resp->res_num)
		return 0;
	res = kcalloc(num, sizeof(*res), SROCE_GFP_USER_OBJ);
	if (!res)
		return -ENOMEM;
	keep = min(num, resp->res_num);
	/* Oldest kept first, so that res_head = keep is the next to use. */
	for (i = 0; i < keep; i++)
		res[i] = resp->res[(resp->res_head - keep + i) &
				   (resp->res_num - 1)];
	kfree(resp->res);
	resp->res = res;
	resp->res_num = num;
	resp->res_head = keep;
	return 0;
}
