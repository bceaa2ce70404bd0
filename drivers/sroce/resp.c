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
 * - Opcode sequence and QP access rights (9.7.5.1.2).
 * - Execution: SEND scatters into a receive WQE taken from the RQ or SRQ,
 *   and a missing one earns an RNR NAK (9.7.5.2.8); WRITE, READ and
 *   atomics check the rkey, the PD, the rights and the range through
 *   mem.c, so they never touch memory outside the MR. ATOMIC_WRITE and
 *   FLUSH (IBA 1.5) are answered by an RDMA READ RESPONSE ONLY without
 *   payload.
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
#include "fault.h"
#include "mem.h"
#include "mr.h"
#include "net.h"
#include "params.h"
#include "pkt.h"
#include "qp.h"
#include "resp.h"
#include "srq.h"

#define SROCE_RESP_BUDGET	64	/* packets per engine run */

/*
 * What the execution of one request packet came to. What follows an error
 * depends on it and on the transport: see resp_error() and the table in
 * Documentation/responder-errors.md.
 */
enum resp_result {
	RESP_OK,
	RESP_RNR,	/* no receive WQE */
	RESP_INV_REQ,	/* invalid request: opcode, sequence, size, rights */
	RESP_LENGTH,	/* a message longer than its receive WQE's buffers */
	RESP_ACCESS,	/* R_Key violation (IBA 9.4.1.1, 10.6.3) */
	RESP_WQE_PROT,	/* the receive WQE names memory the QP may not write */
	RESP_WQE_BAD,	/* the receive WQE is malformed */
	RESP_RING_BAD,	/* the receive ring's indices are corrupt */
	RESP_CQ_FULL,	/* executed, but its completion overflowed the CQ */
};

static struct sroce_dev *qp_dev(struct sroce_qp *qp)
{
	return to_sdev(qp->ibqp.device);
}

/* A response packet: ACK, atomic ACK or READ response. */
static struct sk_buff *resp_alloc(struct sroce_qp *qp, u8 opcode, u32 psn,
				  u32 paylen)
{
	const struct sroce_opcode_info *op;
	u32 pad = -paylen & 3;
	struct sk_buff *skb;

	/* An XRC target answers with the XRC opcodes (IBA annex A14). */
	if (qp->ibqp.qp_type == IB_QPT_XRC_TGT)
		opcode = SROCE_OPCODE_XRC | (opcode & SROCE_OPCODE_OP_MASK);
	op = &sroce_opcodes[opcode];

	skb = sroce_net_alloc_skb(qp_dev(qp), &qp->attr.av, op->hdr_len +
				  paylen + pad + SROCE_ICRC_SIZE);
	if (!skb)
		return NULL;
	sroce_bth_init((void *)skb->data, opcode, false, pad,
		       IB_DEFAULT_PKEY_FULL, qp->attr.dest_qpn, false, psn);
	memset(skb->data + op->hdr_len + paylen, 0, pad);
	if (op->flags & SROCE_OP_AETH)
		sroce_aeth_set((void *)skb->data + op->aeth,
			       SROCE_AETH_ACK | SROCE_AETH_CREDIT_INVALID,
			       qp->resp.msn);
	return skb;
}

static void resp_xmit(struct sroce_qp *qp, struct sk_buff *skb)
{
	sroce_net_xmit(qp_dev(qp), &qp->dst_cache, &qp->attr.av,
		       qp->src_port, skb);
}

/*
 * An acknowledgment that could not be had: not sent again (the
 * requester's timer or a later ACK recovers, IBA 9.7.6.1.3), so counted
 * as dropped, as the IP stack would count a packet it could not send.
 */
static void resp_drop(struct sroce_qp *qp)
{
	sroce_stats_add(&qp_dev(qp)->stats, SROCE_STAT_TX_DROPPED, 1);
}

static void send_aeth(struct sroce_qp *qp, u8 syndrome, u32 psn, u32 msn)
{
	struct sk_buff *skb;

	skb = resp_alloc(qp, IB_OPCODE_RC_ACKNOWLEDGE, psn, 0);
	if (!skb) {
		resp_drop(qp);
		return;
	}
	sroce_aeth_set((void *)skb->data + sizeof(struct sroce_bth), syndrome,
		       msn);
	resp_xmit(qp, skb);
}

static void send_ack(struct sroce_qp *qp, u8 syndrome, u32 psn)
{
	send_aeth(qp, syndrome, psn, qp->resp.msn);
}

/*
 * The ACK held for the end of the engine run goes out now, before a
 * response of a later PSN: responses leave in PSN order. A requester
 * that meets an older ACK in the middle of a READ response may take it
 * for the response's end (rdma_rxe's completer does).
 */
static void flush_ack(struct sroce_qp *qp)
{
	if (!qp->resp.ack_pending)
		return;
	qp->resp.ack_pending = false;
	send_aeth(qp, SROCE_AETH_ACK | SROCE_AETH_CREDIT_INVALID,
		  qp->resp.ack_psn, qp->resp.ack_msn);
}

/* A NAK or RNR NAK (IBA 9.7.5.2.3, 9.7.5.2.8), after any ACK held. */
static void send_nak(struct sroce_qp *qp, u8 syndrome, u32 psn)
{
	flush_ack(qp);
	send_ack(qp, syndrome, psn);
}

static void send_atomic_ack(struct sroce_qp *qp, u32 psn, u64 orig)
{
	const struct sroce_opcode_info *op =
		&sroce_opcodes[IB_OPCODE_RC_ATOMIC_ACKNOWLEDGE];
	struct sroce_atmack *ack;
	struct sk_buff *skb;

	flush_ack(qp);
	skb = resp_alloc(qp, IB_OPCODE_RC_ATOMIC_ACKNOWLEDGE, psn, 0);
	if (!skb) {
		resp_drop(qp);	/* a duplicate ATOMIC gets it again */
		return;
	}
	ack = (void *)skb->data + op->atmack;
	ack->orig = cpu_to_be64(orig);
	resp_xmit(qp, skb);
}

/* IBA 1.5: ATOMIC_WRITE and FLUSH are answered by an empty READ response. */
static void send_empty_read_resp(struct sroce_qp *qp, u32 psn)
{
	struct sk_buff *skb;

	flush_ack(qp);
	skb = resp_alloc(qp, IB_OPCODE_RC_RDMA_READ_RESPONSE_ONLY, psn, 0);
	if (!skb) {
		resp_drop(qp);
		return;
	}
	resp_xmit(qp, skb);
}

/*
 * Post a receive completion for the WQE held, and let it go. An XRC
 * target's goes to the CQ of the XRC SRQ the WQE came from, if that SRQ
 * still exists (IBA annex A14).
 */
static bool complete_rwqe(struct sroce_qp *qp, struct ib_wc *wc, bool se)
{
	struct sroce_resp *resp = &qp->resp;
	struct sroce_srq *xsrq = NULL;
	struct sroce_cq *cq = qp->rcq;
	bool posted = true;

	wc->wr_id = resp->rwqe.wr_id;
	wc->qp = &qp->ibqp;
	wc->port_num = 1;
	resp->have_rwqe = false;
	if (qp->ibqp.qp_type == IB_QPT_XRC_TGT) {
		xsrq = sroce_srq_get_xrc(qp_dev(qp), resp->xsrqn, qp->xrcd);
		if (!xsrq)
			return true;
		cq = to_scq(xsrq->ibsrq.ext.cq);
	}
	if (sroce_cq_post(cq, wc, se)) {
		sroce_qp_fail(qp, IB_WC_GENERAL_ERR);
		posted = false;
	}
	if (xsrq)
		sroce_srq_put(xsrq);
	return posted;
}

static void fail_rwqe(struct sroce_qp *qp, enum ib_wc_status status)
{
	struct ib_wc wc = { .status = status, .opcode = IB_WC_RECV };

	if (qp->resp.have_rwqe)
		complete_rwqe(qp, &wc, true);
}

/*
 * Take the next receive WQE into resp->rwqe. Returns 1, 0 when there is
 * none, -EINVAL for a malformed WQE, taken (and held) to complete in
 * error, or -EOVERFLOW when the ring's indices are corrupt.
 */
static int take_rwqe(struct sroce_qp *qp)
{
	struct sroce_resp *resp = &qp->resp;
	const struct sroce_recv_wqe *w;
	int ret = 1;
	u32 num;

	if (qp->srq || resp->xsrq) {
		ret = sroce_srq_take(qp->srq ?: resp->xsrq, &resp->rwqe);
		if (ret == 0 || ret == -EOVERFLOW)
			return ret;
	} else {
		w = sroce_queue_head(&qp->rq);
		if (!w)
			return 0;
		if (IS_ERR(w))
			return -EOVERFLOW;
		resp->rwqe.wr_id = READ_ONCE(w->wr_id);
		num = READ_ONCE(w->num_sge);
		if (num > qp->cap.max_recv_sge) {
			num = 0;
			ret = -EINVAL;
		}
		memcpy(resp->rwqe.sge, w->sge, num * sizeof(w->sge[0]));
		resp->rwqe.num_sge = num;
		sroce_queue_pop(&qp->rq);
	}
	resp->have_rwqe = true;
	sroce_sgl_init(&resp->sgl, resp->rwqe.sge, resp->rwqe.num_sge);
	resp->recv_len = 0;
	return ret;
}

/* Make sure a receive WQE is held, for a packet that consumes one. */
static enum resp_result need_rwqe(struct sroce_qp *qp)
{
	int ret;

	if (qp->resp.have_rwqe)
		return RESP_OK;
	ret = take_rwqe(qp);
	if (ret > 0)
		return RESP_OK;
	if (ret == -EOVERFLOW)
		return RESP_RING_BAD;
	return ret ? RESP_WQE_BAD : RESP_RNR;
}

/*
 * IBA 9.7.5.1.2, C9-92 to C9-94: packet sizes within a SEND, whose length
 * only its last packet tells. Every packet but the last carries one MTU;
 * only a single-packet message may be empty.
 */
static bool send_size_ok(struct sroce_qp *qp, const struct sroce_pkt *pkt)
{
	if (pkt->flags & SROCE_OP_LAST)
		return pkt->paylen <= qp->mtu &&
		       (pkt->paylen || (pkt->flags & SROCE_OP_FIRST));
	return pkt->paylen == qp->mtu;
}

/*
 * The same for a WRITE, whose RETH gave the length: @resid bytes remain,
 * this packet included. A packet that is not the last carries one MTU and
 * leaves more than nothing; the last carries what remains.
 */
static bool write_size_ok(struct sroce_qp *qp, const struct sroce_pkt *pkt,
			  u32 resid)
{
	if (pkt->flags & SROCE_OP_LAST)
		return pkt->paylen == resid && resid <= qp->mtu;
	return pkt->paylen == qp->mtu && resid > qp->mtu;
}

/*
 * The PD that the request's memory accesses are checked against: an XRC
 * target QP has none, and uses its XRC SRQ's (IBA annex A14).
 */
static struct ib_pd *resp_pd(struct sroce_qp *qp)
{
	return qp->resp.xsrq ? qp->resp.xsrq->ibsrq.pd : qp->ibqp.pd;
}

/*
 * Check a remote access: the MR, referenced, the address in it and the
 * registration checked (for the copy).
 */
static struct sroce_mr *remote_mr(struct sroce_qp *qp, u32 rkey, u64 va,
				  u32 len, int access, u64 *iova, u32 *gen)
{
	return sroce_mem_get_remote(qp_dev(qp), resp_pd(qp), qp->ibqp.qp_num,
				    rkey, va, len, access, iova, gen);
}

static enum resp_result do_send(struct sroce_qp *qp, struct sk_buff *skb)
{
	const struct sroce_opcode_info *op = sroce_pkt_op(skb);
	struct sroce_pkt *pkt = sroce_pkt(skb);
	struct sroce_resp *resp = &qp->resp;
	struct ib_wc wc = { .opcode = IB_WC_RECV };
	enum resp_result res;
	int err;

	if (pkt->flags & SROCE_OP_FIRST) {
		res = need_rwqe(qp);
		if (res != RESP_OK)
			return res;
	}
	if (!send_size_ok(qp, pkt))
		return RESP_INV_REQ;
	err = sroce_sgl_copy_in(qp_dev(qp), resp_pd(qp), &resp->sgl, skb,
				op->hdr_len, pkt->paylen);
	if (err)
		return err == -ENOSPC ? RESP_LENGTH : RESP_WQE_PROT;
	resp->recv_len += pkt->paylen;
	if (!(pkt->flags & SROCE_OP_LAST))
		return RESP_OK;

	if (pkt->flags & SROCE_OP_IMMDT) {
		wc.wc_flags |= IB_WC_WITH_IMM;
		wc.ex.imm_data = ((struct sroce_immdt *)
				  sroce_pkt_hdr(skb, op->immdt))->imm;
	} else if (pkt->flags & SROCE_OP_IETH) {
		wc.ex.invalidate_rkey = be32_to_cpu(((struct sroce_ieth *)
				sroce_pkt_hdr(skb, op->immdt))->rkey);
		/* A key that cannot be invalidated: IBA 10.6.7.2.5. */
		if (sroce_mem_invalidate(qp_dev(qp), resp_pd(qp),
					 qp->ibqp.qp_num,
					 wc.ex.invalidate_rkey))
			return RESP_INV_REQ;
		wc.wc_flags |= IB_WC_WITH_INVALIDATE;
	}
	wc.byte_len = resp->recv_len;
	wc.src_qp = qp->attr.dest_qpn;
	return complete_rwqe(qp, &wc, pkt->se) ? RESP_OK : RESP_CQ_FULL;
}

static enum resp_result do_write(struct sroce_qp *qp, struct sk_buff *skb)
{
	const struct sroce_opcode_info *op = sroce_pkt_op(skb);
	struct sroce_pkt *pkt = sroce_pkt(skb);
	struct sroce_resp *resp = &qp->resp;
	struct sroce_reth *reth;
	struct sroce_mr *mr;
	struct ib_wc wc;
	enum resp_result res;
	bool placed;
	u64 iova;
	u32 gen;

	if ((pkt->flags & SROCE_OP_LAST) && (pkt->flags & SROCE_OP_IMMDT)) {
		res = need_rwqe(qp);
		if (res != RESP_OK)
			return res;
	}
	if (pkt->flags & SROCE_OP_FIRST) {
		reth = sroce_pkt_hdr(skb, op->reth);
		resp->va = be64_to_cpu(reth->va);
		resp->rkey = be32_to_cpu(reth->rkey);
		resp->resid = be32_to_cpu(reth->len);
		resp->write_len = resp->resid;
		if (resp->resid > SROCE_MAX_MSG_SIZE)
			return RESP_INV_REQ;
		/* A zero-length WRITE checks no key (IBA C9-88). */
		if (resp->resid) {
			mr = remote_mr(qp, resp->rkey, resp->va, resp->resid,
				       IB_ACCESS_REMOTE_WRITE, &iova, &gen);
			if (!mr)
				return RESP_ACCESS;
			sroce_mr_put(mr);
			resp->write_gen = gen;
		}
	}
	if (!write_size_ok(qp, pkt, resp->resid))
		return RESP_INV_REQ;
	if (pkt->paylen) {
		/*
		 * The key may have been invalidated and the MR registered
		 * anew since the first packet, or since this check: nothing
		 * of the message lands in the new registration (IBA
		 * 10.6.7.2.5), and the WRITE fails.
		 */
		mr = remote_mr(qp, resp->rkey, resp->va, pkt->paylen,
			       IB_ACCESS_REMOTE_WRITE, &iova, &gen);
		if (!mr)
			return RESP_ACCESS;
		placed = gen == resp->write_gen &&
			 sroce_mem_copy_in(mr, gen, iova, skb, op->hdr_len,
					   pkt->paylen);
		sroce_mr_put(mr);
		if (!placed)
			return RESP_ACCESS;
	}
	resp->va += pkt->paylen;
	resp->resid -= pkt->paylen;

	if ((pkt->flags & SROCE_OP_LAST) && (pkt->flags & SROCE_OP_IMMDT)) {
		memset(&wc, 0, sizeof(wc));
		wc.opcode = IB_WC_RECV_RDMA_WITH_IMM;
		wc.wc_flags = IB_WC_WITH_IMM;
		wc.ex.imm_data = ((struct sroce_immdt *)
				  sroce_pkt_hdr(skb, op->immdt))->imm;
		wc.byte_len = resp->write_len;
		wc.src_qp = qp->attr.dest_qpn;
		if (!complete_rwqe(qp, &wc, pkt->se))
			return RESP_CQ_FULL;
	}
	return RESP_OK;
}

static struct sroce_rd_res *new_res(struct sroce_qp *qp)
{
	struct sroce_resp *resp = &qp->resp;
	struct sroce_rd_res *res;

	/* The oldest resource makes room (IBA 9.7.5.1.3: it is then gone). */
	res = &resp->res[resp->res_head++ & (resp->res_num - 1)];
	memset(res, 0, sizeof(*res));
	res->valid = true;
	return res;
}

static enum resp_result do_read(struct sroce_qp *qp, struct sk_buff *skb)
{
	struct sroce_reth *reth = sroce_pkt_hdr(skb, sroce_pkt_op(skb)->reth);
	struct sroce_pkt *pkt = sroce_pkt(skb);
	struct sroce_resp *resp = &qp->resp;
	u32 len = be32_to_cpu(reth->len);
	struct sroce_rd_res *res;
	struct sroce_mr *mr;
	u32 npkts, gen;
	u64 iova;

	if (len > SROCE_MAX_MSG_SIZE || !qp->attr.max_dest_rd_atomic)
		return RESP_INV_REQ;
	gen = 0;
	if (len) {
		mr = remote_mr(qp, be32_to_cpu(reth->rkey),
			       be64_to_cpu(reth->va), len,
			       IB_ACCESS_REMOTE_READ, &iova, &gen);
		if (!mr)
			return RESP_ACCESS;
		sroce_mr_put(mr);
	}
	npkts = max(DIV_ROUND_UP(len, qp->mtu), 1U);
	res = new_res(qp);
	res->first_psn = pkt->psn;
	res->last_psn = sroce_psn_add(pkt->psn, npkts - 1);
	res->va = be64_to_cpu(reth->va);
	res->rkey = be32_to_cpu(reth->rkey);
	res->length = len;
	res->srqn = resp->xsrqn;
	res->gen = gen;

	resp->read = (struct sroce_read) {
		.active = true,
		.first = true,
		.psn = pkt->psn,
		.va = res->va,
		.rkey = res->rkey,
		.left = len,
		.srqn = res->srqn,
		.gen = res->gen,
	};
	resp->msn = sroce_psn_add(resp->msn, 1);
	resp->epsn = sroce_psn_add(res->last_psn, 1);
	return RESP_OK;
}

static enum resp_result do_atomic(struct sroce_qp *qp, struct sk_buff *skb)
{
	struct sroce_atmeth *atm = sroce_pkt_hdr(skb, sroce_pkt_op(skb)->reth);
	struct sroce_pkt *pkt = sroce_pkt(skb);
	struct sroce_resp *resp = &qp->resp;
	u64 va = be64_to_cpu(atm->va);
	struct sroce_rd_res *res;
	struct sroce_mr *mr;
	u64 orig, iova;
	int err;
	u32 gen;

	if (!qp->attr.max_dest_rd_atomic || !IS_ALIGNED(va, sizeof(u64)))
		return RESP_INV_REQ;
	mr = remote_mr(qp, be32_to_cpu(atm->rkey), va, sizeof(u64),
		       IB_ACCESS_REMOTE_ATOMIC, &iova, &gen);
	if (!mr)
		return RESP_ACCESS;
	/*
	 * IBA 9.4.5: atomics are 8-byte aligned; others are invalid
	 * requests (NAK codes: IBA table 47). A window or the MR's offset
	 * into its first page may misalign an address the packet had
	 * aligned; mem.c checks the memory itself.
	 */
	err = IS_ALIGNED(iova, sizeof(u64)) ?
	      sroce_mem_atomic(mr, gen, iova,
			       (pkt->opcode & SROCE_OPCODE_OP_MASK) ==
			       IB_OPCODE_COMPARE_SWAP,
			       be64_to_cpu(atm->compare),
			       be64_to_cpu(atm->swap_add), &orig) : -EINVAL;
	sroce_mr_put(mr);
	if (err)
		return err == -EACCES ? RESP_ACCESS : RESP_INV_REQ;

	res = new_res(qp);
	res->atomic = true;
	res->first_psn = pkt->psn;
	res->last_psn = pkt->psn;
	res->orig = orig;
	resp->msn = sroce_psn_add(resp->msn, 1);
	resp->epsn = sroce_psn_add(pkt->psn, 1);
	resp->done_psn = pkt->psn;
	send_atomic_ack(qp, pkt->psn, orig);
	return RESP_OK;
}

/*
 * An ATOMIC WRITE or FLUSH executed: keep a resource to answer its
 * duplicates, account it, and answer with an empty READ response.
 */
static void executed_empty(struct sroce_qp *qp, u32 psn)
{
	struct sroce_resp *resp = &qp->resp;
	struct sroce_rd_res *res = new_res(qp);

	res->empty = true;
	res->first_psn = psn;
	res->last_psn = psn;
	resp->msn = sroce_psn_add(resp->msn, 1);
	resp->epsn = sroce_psn_add(psn, 1);
	resp->done_psn = psn;
	send_empty_read_resp(qp, psn);
}

/* ATOMIC WRITE (IBA 1.5, 9.4.7): an 8-byte store, single-copy atomic. */
static enum resp_result do_atomic_write(struct sroce_qp *qp,
					struct sk_buff *skb)
{
	const struct sroce_opcode_info *op = sroce_pkt_op(skb);
	struct sroce_reth *reth = sroce_pkt_hdr(skb, op->reth);
	struct sroce_pkt *pkt = sroce_pkt(skb);
	u64 va = be64_to_cpu(reth->va), iova, val;
	struct sroce_mr *mr;
	int err;
	u32 gen;

	if (!qp->attr.max_dest_rd_atomic || !IS_ALIGNED(va, sizeof(u64)) ||
	    be32_to_cpu(reth->len) != sizeof(u64) || pkt->paylen != sizeof(u64))
		return RESP_INV_REQ;
	mr = remote_mr(qp, be32_to_cpu(reth->rkey), va, sizeof(u64),
		       IB_ACCESS_REMOTE_WRITE, &iova, &gen);
	if (!mr)
		return RESP_ACCESS;
	/* The bytes land as they came, in one store; aligned as atomics. */
	skb_copy_bits(skb, op->hdr_len, &val, sizeof(val));
	err = IS_ALIGNED(iova, sizeof(u64)) ?
	      sroce_mem_atomic_write(mr, gen, iova, val) : -EINVAL;
	sroce_mr_put(mr);
	if (err)
		return err == -EACCES ? RESP_ACCESS : RESP_INV_REQ;

	executed_empty(qp, pkt->psn);
	return RESP_OK;
}

/* The access right a FLUSH's placement type needs, 0 if none may. */
static int flush_access(u8 plt)
{
	switch (plt) {
	case SROCE_FLUSH_GLOBAL:
		return IB_ACCESS_FLUSH_GLOBAL;
	case SROCE_FLUSH_PERSISTENT:
		return IB_ACCESS_FLUSH_PERSISTENT;
	case SROCE_FLUSH_GLOBAL | SROCE_FLUSH_PERSISTENT:
		return IB_ACCESS_FLUSH_GLOBAL ? IB_ACCESS_FLUSH_GLOBAL |
						IB_ACCESS_FLUSH_PERSISTENT : 0;
	default:
		return 0;
	}
}

/*
 * FLUSH (IBA 1.5, 9.4.6): make what earlier requests placed in the range
 * (or in the whole MR) globally visible. sroce places data with CPU
 * stores, so a write barrier does it. Persistence is not offered: no MR
 * can grant IB_ACCESS_FLUSH_PERSISTENT (see mr.c).
 */
static enum resp_result do_flush(struct sroce_qp *qp, struct sk_buff *skb)
{
	const struct sroce_opcode_info *op = sroce_pkt_op(skb);
	struct sroce_feth *feth = sroce_pkt_hdr(skb, op->feth);
	struct sroce_reth *reth = sroce_pkt_hdr(skb, op->reth);
	struct sroce_pkt *pkt = sroce_pkt(skb);
	int access = flush_access(sroce_feth_plt(feth));
	u8 sel = sroce_feth_sel(feth);
	struct sroce_mr *mr;
	u64 iova, len;
	u32 gen;

	if (!qp->attr.max_dest_rd_atomic || !access ||
	    (qp->attr.access_flags & access) != access ||
	    (sel != SROCE_FLUSH_RANGE && sel != SROCE_FLUSH_MR))
		return RESP_INV_REQ;
	/* An MR-wide flush checks only the key; a range flush its range. */
	len = sel == SROCE_FLUSH_MR ? 0 : be32_to_cpu(reth->len);
	if (sel == SROCE_FLUSH_MR || len) {
		mr = remote_mr(qp, be32_to_cpu(reth->rkey),
			       be64_to_cpu(reth->va), len, access, &iova,
			       &gen);
		if (!mr)
			return RESP_ACCESS;
		sroce_mr_put(mr);
	}
	wmb();	/* every store executed before this request is visible */

	executed_empty(qp, pkt->psn);
	return RESP_OK;
}

/* Opcode sequence and QP access rights; then execute. */
static enum resp_result execute(struct sroce_qp *qp, struct sk_buff *skb)
{
	struct sroce_pkt *pkt = sroce_pkt(skb);
	struct sroce_resp *resp = &qp->resp;
	int access = qp->attr.access_flags;
	u32 f = pkt->flags;

	if (resp->in_msg ? !(f & resp->in_msg) || (f & SROCE_OP_FIRST) :
	    !(f & SROCE_OP_FIRST))
		return RESP_INV_REQ;
	if (((f & (SROCE_OP_WRITE | SROCE_OP_ATOMIC_WRITE)) &&
	     !(access & IB_ACCESS_REMOTE_WRITE)) ||
	    ((f & SROCE_OP_READ) && !(access & IB_ACCESS_REMOTE_READ)) ||
	    ((f & SROCE_OP_ATOMIC) && !(access & IB_ACCESS_REMOTE_ATOMIC)))
		return RESP_INV_REQ;

	if (f & SROCE_OP_SEND)
		return do_send(qp, skb);
	if (f & SROCE_OP_WRITE)
		return do_write(qp, skb);
	if (f & SROCE_OP_READ)
		return do_read(qp, skb);
	if (f & SROCE_OP_ATOMIC_WRITE)
		return do_atomic_write(qp, skb);
	if (f & SROCE_OP_FLUSH)
		return do_flush(qp, skb);
	return do_atomic(qp, skb);
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
	[RESP_RNR] = {
		.drop = SROCE_STAT_RX_DROP_NO_RWQE,
	},
	[RESP_INV_REQ] = {
		.nak = SROCE_NAK_INVALID_REQ,
		.event = IB_EVENT_QP_REQ_ERR,
		.status = IB_WC_REM_INV_REQ_ERR,
		.drop = SROCE_STAT_RX_DROP_INVALID,
	},
	[RESP_LENGTH] = {
		.nak = SROCE_NAK_INVALID_REQ,
		.event = IB_EVENT_QP_REQ_ERR,
		.status = IB_WC_LOC_LEN_ERR,
		.drop = SROCE_STAT_RX_DROP_LENGTH,
	},
	[RESP_ACCESS] = {
		.nak = SROCE_NAK_REM_ACCESS_ERR,
		.event = IB_EVENT_QP_ACCESS_ERR,
		.status = IB_WC_REM_ACCESS_ERR,
		.drop = SROCE_STAT_RX_DROP_INVALID,
	},
	[RESP_WQE_PROT] = {
		.nak = SROCE_NAK_REM_OP_ERR,
		.status = IB_WC_LOC_PROT_ERR,
		.local = true,
	},
	[RESP_WQE_BAD] = {
		.nak = SROCE_NAK_REM_OP_ERR,
		.status = IB_WC_LOC_QP_OP_ERR,
		.local = true,
	},
	/*
	 * A local work queue catastrophic error (IBA 11.6.3.1): no receive
	 * WQE can be trusted, so none completes; the event says it.
	 */
	[RESP_RING_BAD] = {
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
		sroce_sgl_init(&resp->sgl, resp->rwqe.sge, resp->rwqe.num_sge);
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
static void resp_error(struct sroce_qp *qp, enum resp_result res, u32 psn)
{
	struct sroce_dev *sdev = qp_dev(qp);
	const struct resp_error *e;

	/*
	 * The receive CQ overflowed: the QP has failed already (IBA 11.6.3.1,
	 * complete_rwqe()). Nothing is acknowledged: the requester's retries
	 * end in a retry error, as with rdma_rxe.
	 */
	if (res == RESP_CQ_FULL)
		return;
	e = &resp_errors[res];
	sroce_fault_error_delay();
	if (sroce_qp_is_reliable(qp) && res == RESP_RNR) {
		sroce_stats_add(&sdev->stats, SROCE_STAT_RNR_NAKS_SENT, 1);
		send_nak(qp, SROCE_AETH_RNR_NAK | qp->attr.min_rnr_timer, psn);
		return;
	}
	if (sroce_qp_is_reliable(qp) || e->local) {
		if (sroce_qp_is_reliable(qp)) {
			sroce_stats_add(&sdev->stats, SROCE_STAT_NAKS_SENT, 1);
			send_nak(qp, SROCE_AETH_NAK | e->nak, psn);
		}
		fail_rwqe(qp, e->status);
		if (sroce_qp_fail(qp, e->status) && e->event)
			sroce_qp_event(qp, e->event);
		return;
	}
	sroce_stats_drop(&sdev->stats, e->drop);
	if (qp->srq && res != RESP_RNR)
		fail_rwqe(qp, e->status);
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
			send_atomic_ack(qp, pkt->psn, res->orig);
		return;
	}
	/* Executed once; only the response is repeated. */
	if (pkt->flags & (SROCE_OP_ATOMIC_WRITE | SROCE_OP_FLUSH)) {
		if (res->empty && res->first_psn == pkt->psn)
			send_empty_read_resp(qp, pkt->psn);
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
	enum resp_result res;

	if (d > 0) {
		sroce_stats_add(&qp_dev(qp)->stats, SROCE_STAT_SEQ_ERRORS, 1);
		if (!resp->nak_sent) {
			resp->nak_sent = true;
			send_nak(qp, SROCE_AETH_NAK | SROCE_NAK_PSN_SEQ_ERR,
				 resp->epsn);
		}
		return;
	}
	if (d < 0) {
		duplicate(qp, skb);
		return;
	}
	resp->nak_sent = false;

	res = execute(qp, skb);
	if (res != RESP_OK)
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
		resp_error(qp, RESP_INV_REQ, pkt->psn);
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
	enum resp_result res;

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
	res = execute(qp, skb);
	if (res == RESP_OK)
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
	enum resp_result res;
	int err;

	if (be32_to_cpu(deth->qkey) != qkey)
		return sroce_stats_drop(&sdev->stats, SROCE_STAT_RX_DROP_QKEY);
	if (pkt->paylen > qp->mtu)
		return sroce_stats_drop(&sdev->stats, SROCE_STAT_RX_DROP_LENGTH);
	res = need_rwqe(qp);
	if (res == RESP_OK &&
	    sroce_sgl_length(resp->rwqe.sge, resp->rwqe.num_sge) <
	    sizeof(grh) + pkt->paylen)
		res = RESP_LENGTH;
	if (res == RESP_OK) {
		fill_grh(skb, &grh);
		err = sroce_sgl_copy_in_buf(sdev, qp->ibqp.pd, &resp->sgl, &grh,
					    sizeof(grh)) ?:
		      sroce_sgl_copy_in(sdev, qp->ibqp.pd, &resp->sgl, skb,
					op->hdr_len, pkt->paylen);
		if (err)
			res = err == -ENOSPC ? RESP_LENGTH : RESP_WQE_PROT;
	}
	if (res != RESP_OK)
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
	complete_rwqe(qp, &wc, pkt->se);
}

/*
 * Send up to @budget packets of the READ response under way. Returns how
 * many, or -ENOMEM when a packet buffer could not be had: the engine was
 * kicked, to go on a tick later.
 */
static int send_read_resp(struct sroce_qp *qp, int budget)
{
	struct sroce_read *rd = &qp->resp.read;
	const struct sroce_opcode_info *op;
	struct sroce_mr *mr;
	struct sk_buff *skb;
	u32 paylen, gen;
	bool last, ok;
	u64 iova;
	u8 opcode;
	int sent = 0;
	int err = 0;

	flush_ack(qp);
	/* An XRC target reads with the PD of the SRQ the READ named. */
	if (qp->ibqp.qp_type == IB_QPT_XRC_TGT && rd->active)
		qp->resp.xsrq = sroce_srq_get_xrc(qp_dev(qp), rd->srqn,
						  qp->xrcd);
	while (rd->active && sent < budget) {
		paylen = min(rd->left, qp->mtu);
		last = rd->left == paylen;
		if (rd->first)
			opcode = last ? IB_OPCODE_RC_RDMA_READ_RESPONSE_ONLY :
					IB_OPCODE_RC_RDMA_READ_RESPONSE_FIRST;
		else
			opcode = last ? IB_OPCODE_RC_RDMA_READ_RESPONSE_LAST :
					IB_OPCODE_RC_RDMA_READ_RESPONSE_MIDDLE;
		op = &sroce_opcodes[opcode];
		skb = resp_alloc(qp, opcode, rd->psn, paylen);
		if (!skb) {
			sroce_task_kick(&qp->resp.task);
			err = -ENOMEM;
			break;
		}
		if (paylen) {
			mr = remote_mr(qp, rd->rkey, rd->va, paylen,
				       IB_ACCESS_REMOTE_READ, &iova, &gen);
			ok = mr && gen == rd->gen &&
			     sroce_mem_copy_out(mr, gen, iova,
						skb->data + op->hdr_len, paylen);
			if (mr)
				sroce_mr_put(mr);
			if (!ok) {
				/*
				 * Deregistered, invalidated or registered
				 * anew under us: no byte of another
				 * registration is sent.
				 */
				kfree_skb(skb);
				resp_error(qp, RESP_ACCESS, rd->psn);
				rd->active = false;
				break;
			}
		}
		resp_xmit(qp, skb);
		rd->psn = sroce_psn_add(rd->psn, 1);
		rd->va += paylen;
		rd->left -= paylen;
		rd->first = false;
		rd->active = !last;
		sent++;
	}
	if (qp->resp.xsrq) {
		sroce_srq_put(qp->resp.xsrq);
		qp->resp.xsrq = NULL;
	}
	return err ?: sent;
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

	fail_rwqe(qp, IB_WC_WR_FLUSH_ERR);
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
		flush_ack(qp);
		return flush_rq(qp);
	}
	if (sroce_fault_resp_held(qp_dev(qp)))
		return false;
	while (budget > 0) {
		if (resp->read.active) {
			sent = send_read_resp(qp, budget);
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
	 * first (flush_ack()). The ack_hold knob (fault.c) keeps it at the
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
	flush_ack(qp);
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
	/* The engine is stopped: nothing else reads or sets ack_pending. */
	local_bh_disable();
	flush_ack(qp);
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
