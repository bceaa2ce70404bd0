// SPDX-License-Identifier: GPL-2.0 OR Linux-OpenIB
/*
 * DOC: Completer
 *
 * The second half of the send engine (see req.c). It matches responses to
 * outstanding WQEs (IBA 9.7.5.2), finishes WQEs and writes their
 * completions in SQ order (IBA 10.8.3), and finds losses, which it
 * reports to loss recovery (retry.c) and the congestion window (cwnd.c)
 * rather than acting on them itself:
 *
 * - An ACK acknowledges every packet up to its PSN: SEND and WRITE WQEs it
 *   covers are done. One that also covers a READ, atomic, ATOMIC_WRITE or
 *   FLUSH whose response has not arrived means that response was lost (an
 *   implied NAK): the requester asks again.
 * - ATOMIC_WRITE and FLUSH are answered by an RDMA READ RESPONSE ONLY
 *   without payload (IBA 1.5).
 * - A READ response must carry the next PSN the WQE waits for; a later one
 *   means responses were lost, and the requester asks again for the rest.
 *   Responses are accepted whether a resumed READ starts again with FIRST
 *   or goes on with MIDDLE (rdma_rxe does the latter).
 * - A PSN sequence error NAK acknowledges the packets before its PSN and
 *   is a loss from there (sroce_retry_loss()); so is the transport timer's
 *   expiry, which the engine finds as an event (sroce_retry_timed_out()).
 * - An RNR NAK makes the requester wait and resend (sroce_retry_rnr()).
 * - Packets acknowledged open the window (sroce_cwnd_acked()) and are
 *   progress for loss recovery (sroce_retry_acked()).
 * - Other NAKs end the WQE with the matching remote error (IBA table 47).
 *
 * A WQE that ends in error always makes a completion, signaled or not,
 * and takes the QP to the error state (IBA 10.3.1), which flushes every
 * later WQE with IB_WC_WR_FLUSH_ERR.
 */
#include <rdma/ib_user_verbs.h>

#include "build.h"
#include "comp.h"
#include "cq.h"
#include "device.h"
#include "pkt.h"
#include "qp.h"
#include "qp_core.h"
#include "req.h"
#include "trace.h"

/* The completion opcode of a send work request (IBA 11.4.2.1). */
static enum ib_wc_opcode send_wc_opcode(u32 wr_opcode)
{
	switch (wr_opcode) {
	case IB_UVERBS_WR_RDMA_WRITE:
	case IB_UVERBS_WR_RDMA_WRITE_WITH_IMM:
		return IB_WC_RDMA_WRITE;
	case IB_UVERBS_WR_RDMA_READ:
		return IB_WC_RDMA_READ;
	case IB_UVERBS_WR_ATOMIC_CMP_AND_SWP:
		return IB_WC_COMP_SWAP;
	case IB_UVERBS_WR_ATOMIC_FETCH_AND_ADD:
		return IB_WC_FETCH_ADD;
	case IB_UVERBS_WR_LOCAL_INV:
		return IB_WC_LOCAL_INV;
	case IB_UVERBS_WR_BIND_MW:
		return IB_WC_BIND_MW;
	case IB_WR_REG_MR:
		return IB_WC_REG_MR;
	case SROCE_WR_ATOMIC_WRITE:
		return IB_WC_ATOMIC_WRITE;
	case SROCE_WR_FLUSH:
		return IB_WC_FLUSH;
	default:
		return IB_WC_SEND;
	}
}

static int post_send_cqe(struct sroce_qp *qp, u64 wr_id, u32 opcode,
			 enum ib_wc_status status, u32 byte_len)
{
	struct ib_wc wc = {
		.wr_id = wr_id,
		.status = status,
		.opcode = send_wc_opcode(opcode),
		.byte_len = byte_len,
		.qp = &qp->ibqp,
		.port_num = 1,
	};

	return sroce_cq_post(qp->scq, &wc, false);
}

/**
 * sroce_comp_wqe_done() - a WQE has finished
 * @qp: the QP; called by its send engine
 * @s: the WQE
 * @status: IB_WC_SUCCESS or why it failed
 *
 * Its completion is written in SQ order by sroce_comp_complete(), once no
 * packet holds its pages any more (zcopy.c). A failed WQE moves the QP to
 * the error state.
 */
void sroce_comp_wqe_done(struct sroce_qp *qp, struct sroce_swqe *s,
			 enum ib_wc_status status)
{
	s->state = SROCE_SWQE_DONE;
	s->status = status;
	sroce_zcopy_release(&s->zcopy);
	if (status != IB_WC_SUCCESS)
		sroce_qp_fail(qp, status);
}

/**
 * sroce_comp_complete() - write the completions of finished WQEs, in order
 * @qp: the QP; called by its send engine
 *
 * Return: true when the engine must run again (a READ or atomic finished,
 * so a WQE that waited for it may start now).
 */
bool sroce_comp_complete(struct sroce_qp *qp)
{
	struct sroce_req *req = &qp->req;
	bool freed = false;
	struct sroce_swqe *s;

	WRITE_ONCE(req->zcopy_waiting, false);
	while (qp->sq.cons != req->next) {
		s = sroce_req_swqe(&qp->req, qp->sq.cons);
		/* A packet still carrying its pages runs us when it goes. */
		if (s->state != SROCE_SWQE_DONE ||
		    sroce_zcopy_wait(qp, &s->zcopy))
			break;
		if (sroce_wr_is_rd_atomic(s->opcode)) {
			req->rd_atomic--;
			freed = true;
		}
		if (req->cur == qp->sq.cons)
			sroce_build_seek(qp, req->cur + 1, 0);
		/*
		 * Free the slot before the completion is seen: a consumer that
		 * polls it may post again at once. The private copy remains.
		 */
		sroce_queue_pop(&qp->sq);
		if ((s->signaled || s->status != IB_WC_SUCCESS) &&
		    post_send_cqe(qp, s->wr_id, s->opcode, s->status,
				  s->length)) {
			sroce_qp_fail(qp, IB_WC_GENERAL_ERR);
			return false;
		}
	}
	if (READ_ONCE(qp->state) == IB_QPS_SQD)
		sroce_qp_sq_drained(qp);
	return freed;
}

/**
 * sroce_comp_flush() - complete every WQE in error (QP in ERR or SQE)
 * @qp: the QP; called by its send engine
 *
 * WQEs that already failed keep their status; the others are flushed.
 * First the WQEs the requester took, from their private copies; then the
 * ones still in the ring, as many as there are when we look, so that a
 * process that keeps posting cannot keep the engine here (the doorbell
 * brings it back), and one that broke the ring's indices gets no more
 * than the WQEs it really posted.
 *
 * Return: false when a completion did not fit in the CQ (the WQE it was
 * for is gone, as on overflow): the engine must not run again for the
 * rest until something (the doorbell) asks, or a process that keeps its
 * CQ looking full would keep a CPU here, one WQE a run. False too while a
 * packet still carries a WQE's pages: its release runs the engine.
 */
bool sroce_comp_flush(struct sroce_qp *qp)
{
	struct sroce_req *req = &qp->req;
	const struct sroce_send_wqe *w;
	enum ib_wc_status status;
	struct sroce_swqe *s;
	u32 count, opcode;
	u64 wr_id;

	sroce_retry_cancel(qp);
	/* WQEs that finished before the error complete as they finished. */
	sroce_comp_complete(qp);
	while (qp->sq.cons != req->next) {
		s = sroce_req_swqe(&qp->req, qp->sq.cons);
		/* Not before its last packet has gone (zcopy.c), which runs us. */
		sroce_zcopy_release(&s->zcopy);
		if (sroce_zcopy_wait(qp, &s->zcopy))
			return false;
		status = s->state == SROCE_SWQE_DONE &&
			 s->status != IB_WC_SUCCESS ? s->status :
						      IB_WC_WR_FLUSH_ERR;
		sroce_queue_pop(&qp->sq);	/* before the completion, as above */
		if (post_send_cqe(qp, s->wr_id, s->opcode, status, 0))
			return false;
	}
	req->cur = req->next;
	req->rd_atomic = 0;
	if (sroce_queue_count(&qp->sq, &count))
		return true;
	while (count--) {
		w = sroce_queue_slot(&qp->sq, qp->sq.cons);
		wr_id = READ_ONCE(w->wr_id);
		opcode = READ_ONCE(w->opcode);
		req->next++;
		req->cur = req->next;
		sroce_queue_pop(&qp->sq);
		if (post_send_cqe(qp, wr_id, opcode, IB_WC_WR_FLUSH_ERR, 0))
			return false;
	}
	return true;
}

/* Where a READ or atomic goes on from: the first response not received. */
static u32 resume_psn(struct sroce_qp *qp, const struct sroce_swqe *s)
{
	if (s->opcode != IB_UVERBS_WR_RDMA_READ)
		return s->first_psn;
	return sroce_psn_add(s->first_psn, s->read_off / qp->mtu);
}

/*
 * Every packet before @psn arrived: SEND and WRITE WQEs wholly before it
 * are done. A READ or atomic is done only by its response, so the first
 * one still waiting caps what counts as acknowledged: the transport timer
 * keeps running for it, and the retry budget is only restored by real
 * progress (IBA 9.7.6.1.3).
 */
static void ack_upto(struct sroce_qp *qp, u32 psn)
{
	struct sroce_req *req = &qp->req;
	struct sroce_swqe *s;
	u32 i;

	for (i = qp->sq.cons; i != req->next; i++) {
		s = sroce_req_swqe(&qp->req, i);
		if (s->state == SROCE_SWQE_DONE)
			continue;
		if (sroce_wr_is_rd_atomic(s->opcode)) {
			if (sroce_psn_diff(psn, resume_psn(qp, s)) > 0)
				psn = resume_psn(qp, s);
			break;
		}
		/* Covered, so sent, even if a resend was about to repeat it. */
		if (sroce_psn_diff(psn, s->last_psn) <= 0)
			break;
		sroce_comp_wqe_done(qp, s, IB_WC_SUCCESS);
	}
	if (sroce_psn_diff(psn, req->unacked_psn) <= 0)
		return;
	sroce_cwnd_acked(&req->win, sroce_psn_diff(psn, req->unacked_psn));
	req->unacked_psn = psn;
	sroce_retry_acked(qp, psn);
}

/* The oldest outstanding WQE, if any. */
static struct sroce_swqe *oldest(struct sroce_qp *qp, u32 *index)
{
	struct sroce_req *req = &qp->req;
	struct sroce_swqe *s;
	u32 i;

	for (i = qp->sq.cons; i != req->next; i++) {
		s = sroce_req_swqe(&qp->req, i);
		if (s->state != SROCE_SWQE_DONE) {
			*index = i;
			return s;
		}
	}
	return NULL;
}

/*
 * A loss at @psn (IBA 9.7.6.1.3): loss recovery resends, or gives up on
 * the oldest WQE still waiting for its answer (not one that is done and
 * only waits for its pages to be let go, zcopy.c: that one succeeded).
 */
static void retry(struct sroce_qp *qp, u32 psn, bool timeout)
{
	struct sroce_swqe *s;
	u32 i;

	s = oldest(qp, &i);
	if (s && !sroce_retry_loss(qp, psn, timeout))
		sroce_comp_wqe_done(qp, s, IB_WC_RETRY_EXC_ERR);
}

static void rnr_nak(struct sroce_qp *qp, u32 psn, u8 timer)
{
	struct sroce_swqe *s;
	u32 i;

	s = oldest(qp, &i);
	if (!s)
		return;
	sroce_stats_add(&to_sdev(qp->ibqp.device)->stats,
			SROCE_STAT_RNR_NAKS_RCVD, 1);
	if (!sroce_retry_rnr(qp, psn, timer))
		sroce_comp_wqe_done(qp, s, IB_WC_RNR_RETRY_EXC_ERR);
}

static enum ib_wc_status nak_status(u8 code)
{
	switch (code) {
	case SROCE_NAK_INVALID_REQ:
		return IB_WC_REM_INV_REQ_ERR;
	case SROCE_NAK_REM_ACCESS_ERR:
		return IB_WC_REM_ACCESS_ERR;
	case SROCE_NAK_INVALID_RD_REQ:
		return IB_WC_REM_INV_RD_REQ_ERR;
	default:
		return IB_WC_REM_OP_ERR;
	}
}

/*
 * A NAK or RNR NAK at @psn: does it ask for nothing? Only one older than
 * unacked_psn may. A responder NAKs the PSN it expects or the request it refused,
 * never one before what it acknowledged already, so such a NAK is a
 * duplicate or a late one (IBA 9.7.5.2.2); acting on it would resend what
 * arrived, wait for nothing, or fail a later WQE with its status. But
 * unacked_psn stops inside a READ whose first responses came, and a
 * responder that fails the READ part-way (rdma_rxe: the MR gone, no
 * memory for a response) NAKs the READ request's own PSN: that one
 * counts.
 */
static bool stale_nak(struct sroce_qp *qp, u32 psn)
{
	struct sroce_swqe *s;
	u32 i;

	if (sroce_psn_diff(psn, qp->req.unacked_psn) >= 0)
		return false;
	s = oldest(qp, &i);
	return !s || s->opcode != IB_UVERBS_WR_RDMA_READ ||
	       sroce_psn_diff(psn, s->first_psn) < 0;
}

/* An ACKNOWLEDGE packet: ACK, RNR NAK or NAK (IBA 9.7.5.2.3 to .8). */
static void handle_ack(struct sroce_qp *qp, struct sk_buff *skb)
{
	const struct sroce_opcode_info *op = sroce_pkt_op(skb);
	u8 syn = sroce_aeth_syndrome(sroce_pkt_hdr(skb, op->aeth));
	u32 psn = sroce_pkt(skb)->psn, i;
	struct sroce_swqe *s;

	if ((syn & SROCE_AETH_TYPE_MASK) != SROCE_AETH_ACK) {
		if (stale_nak(qp, psn))
			return;
		trace_sroce_nak_rcvd(qp, psn, syn, 0);
	}

	switch (syn & SROCE_AETH_TYPE_MASK) {
	case SROCE_AETH_ACK:
		ack_upto(qp, sroce_psn_add(psn, 1));
		s = oldest(qp, &i);
		/* An ACK past a READ or atomic still waiting: implied NAK. */
		if (s && sroce_wr_is_rd_atomic(s->opcode) &&
		    sroce_psn_diff(psn, resume_psn(qp, s)) >= 0)
			retry(qp, resume_psn(qp, s), false);
		return;
	case SROCE_AETH_RNR_NAK:
		ack_upto(qp, psn);
		rnr_nak(qp, psn, syn & SROCE_AETH_VALUE_MASK);
		return;
	case SROCE_AETH_NAK:
		ack_upto(qp, psn);
		if ((syn & SROCE_AETH_VALUE_MASK) == SROCE_NAK_PSN_SEQ_ERR) {
			sroce_stats_add(&to_sdev(qp->ibqp.device)->stats,
					SROCE_STAT_SEQ_NAKS_RCVD, 1);
			retry(qp, psn, false);
			return;
		}
		s = oldest(qp, &i);
		if (s)
			sroce_comp_wqe_done(qp, s,
					    nak_status(syn & SROCE_AETH_VALUE_MASK));
		return;
	default:
		return;
	}
}

/*
 * The outstanding WQE whose PSNs hold @psn, once every packet before it is
 * known to have arrived: a READ response or an atomic ACK acknowledges
 * all earlier requests (IBA 9.7.5.2.1). If an earlier READ or atomic still
 * waits for its response, that response was lost (an implied NAK): it is
 * asked for again and NULL returned.
 */
static struct sroce_swqe *responded_wqe(struct sroce_qp *qp, u32 psn)
{
	struct sroce_req *req = &qp->req;
	struct sroce_swqe *s = NULL, *first;
	u32 i;

	for (i = qp->sq.cons; i != req->next; i++) {
		s = sroce_req_swqe(&qp->req, i);
		if (s->state != SROCE_SWQE_DONE &&
		    sroce_psn_diff(psn, s->first_psn) >= 0 &&
		    sroce_psn_diff(psn, s->last_psn) <= 0)
			break;
	}
	if (i == req->next || s->state == SROCE_SWQE_SENDING)
		return NULL;
	ack_upto(qp, s->first_psn);
	first = oldest(qp, &i);
	if (first != s) {
		if (first)
			retry(qp, resume_psn(qp, first), false);
		return NULL;
	}
	return s;
}

/*
 * The response to an ATOMIC_WRITE or a FLUSH: an RDMA READ RESPONSE ONLY
 * without payload (IBA 1.5, 9.7.5.2.5).
 */
static void handle_empty_read_resp(struct sroce_qp *qp, struct sroce_swqe *s,
				   const struct sroce_pkt *pkt)
{
	if ((pkt->flags & SROCE_OP_ONLY) != SROCE_OP_ONLY || pkt->paylen) {
		sroce_comp_wqe_done(qp, s, IB_WC_BAD_RESP_ERR);
		return;
	}
	sroce_comp_wqe_done(qp, s, IB_WC_SUCCESS);
	ack_upto(qp, sroce_psn_add(pkt->psn, 1));
}

/*
 * A READ response or atomic ACK at @psn found the local memory it lands in
 * (on-demand paged) not mapped: the response is dropped, and the request
 * is sent again from @psn when the completer's fault ends (the responder
 * answers a duplicate atomic from its saved result, IBA 9.4.5). Until then
 * later responses are dropped as lost without spending a retry.
 */
static void fault_wait(struct sroce_qp *qp, u32 psn)
{
	qp->req.fault_resend = true;
	qp->req.fault_psn = psn;
	sroce_retry_hold(qp, psn);
}

/*
 * A response at @psn was placed: if it is the one fault_wait() dropped
 * (another resend, the timer's, brought it), no resend is due any more.
 */
static void fault_placed(struct sroce_qp *qp, u32 psn)
{
	if (qp->req.fault_resend &&
	    sroce_psn_diff(psn, qp->req.fault_psn) >= 0)
		qp->req.fault_resend = false;
}

/* An RDMA READ response (IBA 9.7.5.2.5). */
static void handle_read_resp(struct sroce_qp *qp, struct sk_buff *skb)
{
	struct sroce_pkt *pkt = sroce_pkt(skb);
	struct sroce_swqe *s;
	struct sroce_sgl sgl;
	u32 expect, left;
	int err;

	s = responded_wqe(qp, pkt->psn);
	if (s && (s->opcode == SROCE_WR_ATOMIC_WRITE ||
		  s->opcode == SROCE_WR_FLUSH)) {
		handle_empty_read_resp(qp, s, pkt);
		return;
	}
	if (!s || s->opcode != IB_UVERBS_WR_RDMA_READ)
		return;
	expect = resume_psn(qp, s);
	if (sroce_psn_diff(pkt->psn, expect) < 0)
		return;	/* duplicate */
	if (pkt->psn != expect) {
		retry(qp, expect, false);	/* responses were lost */
		return;
	}

	left = s->length - s->read_off;
	if ((pkt->flags & SROCE_OP_LAST) ? pkt->paylen != left :
	    pkt->paylen != qp->mtu || left <= qp->mtu) {
		sroce_comp_wqe_done(qp, s, IB_WC_BAD_RESP_ERR);
		return;
	}
	sroce_sgl_init(&sgl, s->sge, s->num_sge, &qp->req.fault);
	err = sroce_sgl_skip(&sgl, s->read_off) ?:
	      sroce_sgl_copy_in(to_sdev(qp->ibqp.device), qp->ibqp.pd, &sgl,
				skb, sroce_pkt_op(skb)->hdr_len, pkt->paylen);
	if (err == -EFAULT) {
		fault_wait(qp, expect);
		return;
	}
	if (err) {
		sroce_comp_wqe_done(qp, s, err == -ENOSPC ? IB_WC_LOC_LEN_ERR :
					   IB_WC_LOC_PROT_ERR);
		return;
	}
	s->read_off += pkt->paylen;
	fault_placed(qp, pkt->psn);
	/* Done before acknowledged: a READ still waiting caps ack_upto(). */
	if (pkt->flags & SROCE_OP_LAST)
		sroce_comp_wqe_done(qp, s, IB_WC_SUCCESS);
	ack_upto(qp, sroce_psn_add(pkt->psn, 1));
}

/* An atomic acknowledge (IBA 9.7.5.2.6). */
static void handle_atomic_ack(struct sroce_qp *qp, struct sk_buff *skb)
{
	const struct sroce_opcode_info *op = sroce_pkt_op(skb);
	struct sroce_atmack *ack = sroce_pkt_hdr(skb, op->atmack);
	u32 psn = sroce_pkt(skb)->psn;
	struct sroce_swqe *s;
	struct sroce_sgl sgl;
	u64 orig;
	int err;

	s = responded_wqe(qp, psn);
	if (!s || (s->opcode != IB_UVERBS_WR_ATOMIC_CMP_AND_SWP &&
		   s->opcode != IB_UVERBS_WR_ATOMIC_FETCH_AND_ADD))
		return;
	/* The original value lands in host byte order (IBA 9.4.5). */
	orig = be64_to_cpu(ack->orig);
	sroce_sgl_init(&sgl, s->sge, s->num_sge, &qp->req.fault);
	err = sroce_sgl_copy_in_buf(to_sdev(qp->ibqp.device), qp->ibqp.pd,
				    &sgl, &orig, sizeof(orig));
	if (err == -EFAULT) {
		fault_wait(qp, psn);
		return;
	}
	if (err) {
		sroce_comp_wqe_done(qp, s, IB_WC_LOC_PROT_ERR);
		return;
	}
	fault_placed(qp, psn);
	sroce_comp_wqe_done(qp, s, IB_WC_SUCCESS);
	ack_upto(qp, sroce_psn_add(psn, 1));
}

/*
 * A response for a PSN never sent is a ghost (IBA 9.7.5.2.2), to drop.
 * Compare with one past the highest PSN sent: not with the send position,
 * which goes back on a resend while earlier packets are still being
 * answered, nor with the PSNs assigned to the WQEs taken, whose last
 * packets may not have been built yet (a peer that acknowledged those
 * would complete a message never sent).
 */
static bool is_ghost(const struct sroce_qp *qp, struct sk_buff *skb)
{
	return sroce_psn_diff(sroce_pkt(skb)->psn, qp->req.tx_high) >= 0;
}

/**
 * sroce_comp_run() - process timer events and queued responses
 * @qp: the QP; called by its send engine
 * @budget: responses to process at most
 *
 * Return: true when responses remain queued.
 */
bool sroce_comp_run(struct sroce_qp *qp, int budget)
{
	struct sroce_req *req = &qp->req;
	struct sk_buff *skb;
	u32 flags;

	if (test_and_clear_bit(SROCE_QP_EV_RNR, &qp->events))
		sroce_retry_rnr_over(qp);
	if (req->fault_resend && !sroce_odp_fault_busy(&req->fault)) {
		req->fault_resend = false;
		sroce_retry_fault(qp, req->fault_psn);
	}
	while (budget-- > 0 && (skb = skb_dequeue(&req->resp_pkts))) {
		flags = sroce_pkt(skb)->flags;
		if (!sroce_av_is_peer(&qp->attr.av, skb))
			sroce_stats_drop(&to_sdev(qp->ibqp.device)->stats,
					 SROCE_STAT_RX_DROP_ADDR);
		else if (is_ghost(qp, skb))
			sroce_stats_drop(&to_sdev(qp->ibqp.device)->stats,
					 SROCE_STAT_RX_DROP_GHOST);
		else if (flags & SROCE_OP_ACK)
			handle_ack(qp, skb);
		else if (flags & SROCE_OP_READ_RESP)
			handle_read_resp(qp, skb);
		else if (flags & SROCE_OP_ATOMIC_ACK)
			handle_atomic_ack(qp, skb);
		consume_skb(skb);
		if (READ_ONCE(qp->state) == IB_QPS_ERR)
			return !skb_queue_empty(&req->resp_pkts);
	}
	/*
	 * The timer's expiry after the responses that came before it ran us:
	 * one of them may be the progress the timer waited for (it re-armed
	 * the timer then), and a resend first would go back over what they
	 * bring and throw it away.
	 */
	if (test_and_clear_bit(SROCE_QP_EV_TIMEOUT, &qp->events) &&
	    sroce_retry_timed_out(qp))
		retry(qp, req->unacked_psn, true);
	return !skb_queue_empty(&req->resp_pkts);
}
