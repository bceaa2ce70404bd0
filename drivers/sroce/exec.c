// SPDX-License-Identifier: GPL-2.0 OR Linux-OpenIB
/*
 * DOC: Execution
 *
 * What a responder does with a request at the expected PSN (IBA 9.7.5.1.2
 * and on), once resp.c has checked its sequence:
 *
 * - SEND scatters into a receive WQE taken from the RQ or SRQ, copied and
 *   checked first (struct sroce_rwqe); none earns an RNR NAK (9.7.5.2.8).
 * - WRITE, READ and atomics check the rkey, the PD, the rights and the
 *   range through mem.c, so they never touch memory outside the MR; a
 *   multi-packet WRITE must land in the registration its first packet was
 *   checked against (IBA 10.6.7.2.5).
 * - READ and atomic requests leave a responder resource, so that their
 *   duplicates are answered (resp.c) without executing an atomic again;
 *   the READ response is sent from the engine (sroce_exec_read_resp()).
 * - ATOMIC_WRITE and FLUSH (IBA 1.5) are answered by an RDMA READ RESPONSE
 *   ONLY without payload.
 *
 * Each returns what it came to (enum sroce_resp_result); resp.c turns an error
 * into what IBA 9.9.3 asks.
 */
#include <rdma/ib_user_verbs.h>

#include "cq.h"
#include "device.h"
#include "exec.h"
#include "mem.h"
#include "mr.h"
#include "odp.h"
#include "params.h"
#include "pkt.h"
#include "qp.h"
#include "qp_core.h"
#include "reply.h"
#include "srq.h"

static struct sroce_dev *qp_dev(struct sroce_qp *qp)
{
	return to_sdev(qp->ibqp.device);
}

/**
 * sroce_exec_complete_rwqe() - complete the receive WQE held, and let it go
 * @qp: the QP; called by its receive engine
 * @wc: the completion, its status, opcode, length and flags set
 * @se: the solicited event bit of the message
 *
 * An XRC target's goes to the CQ of the XRC SRQ the WQE came from, if that
 * SRQ still exists (IBA annex A14).
 *
 * Return: false when the CQ overflowed (the QP failed).
 */
bool sroce_exec_complete_rwqe(struct sroce_qp *qp, struct ib_wc *wc, bool se)
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

/**
 * sroce_exec_fail_rwqe() - complete the receive WQE held, if any, in error
 * @qp: the QP; called by its receive engine
 * @status: the completion status
 */
void sroce_exec_fail_rwqe(struct sroce_qp *qp, enum ib_wc_status status)
{
	struct ib_wc wc = { .status = status, .opcode = IB_WC_RECV };

	if (qp->resp.have_rwqe)
		sroce_exec_complete_rwqe(qp, &wc, true);
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
	sroce_sgl_init(&resp->sgl, resp->rwqe.sge, resp->rwqe.num_sge,
		       &resp->fault);
	resp->recv_len = 0;
	return ret;
}

/**
 * sroce_exec_need_rwqe() - hold a receive WQE, for a packet that needs one
 * @qp: the QP; called by its receive engine
 *
 * Return: SROCE_RESP_OK, or why there is none to hold.
 */
enum sroce_resp_result sroce_exec_need_rwqe(struct sroce_qp *qp)
{
	int ret;

	if (qp->resp.have_rwqe)
		return SROCE_RESP_OK;
	ret = take_rwqe(qp);
	if (ret > 0)
		return SROCE_RESP_OK;
	if (ret == -EOVERFLOW)
		return SROCE_RESP_RING_BAD;
	return ret ? SROCE_RESP_WQE_BAD : SROCE_RESP_RNR;
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

/**
 * sroce_exec_sgl_result() - what an error placing into a receive WQE means
 * @err: the error of sroce_sgl_copy_in() or sroce_sgl_copy_in_buf()
 *
 * Return: SROCE_RESP_LENGTH for a list too short, SROCE_RESP_FAULT for
 * on-demand paged memory being faulted in, else SROCE_RESP_WQE_PROT.
 */
enum sroce_resp_result sroce_exec_sgl_result(int err)
{
	if (err == -ENOSPC)
		return SROCE_RESP_LENGTH;
	return err == -EFAULT ? SROCE_RESP_FAULT : SROCE_RESP_WQE_PROT;
}

/*
 * A remote access to @mr (referenced) found a page of its on-demand paged
 * memory not mapped at @iova, @len bytes on: queue the responder's fault.
 * The access fails instead if the last fault of that range failed.
 */
static enum sroce_resp_result resp_fault(struct sroce_qp *qp,
					 struct sroce_mr *mr, u64 iova,
					 u64 len, bool write)
{
	return sroce_odp_fault_queue(&qp->resp.fault, mr, iova, len, write) ?
	       SROCE_RESP_ACCESS : SROCE_RESP_FAULT;
}

static enum sroce_resp_result do_send(struct sroce_qp *qp, struct sk_buff *skb)
{
	const struct sroce_opcode_info *op = sroce_pkt_op(skb);
	struct sroce_pkt *pkt = sroce_pkt(skb);
	struct sroce_resp *resp = &qp->resp;
	struct ib_wc wc = { .opcode = IB_WC_RECV };
	enum sroce_resp_result res;
	struct sroce_sgl sgl;
	int err;

	if (pkt->flags & SROCE_OP_FIRST) {
		res = sroce_exec_need_rwqe(qp);
		if (res != SROCE_RESP_OK)
			return res;
	}
	if (!send_size_ok(qp, pkt))
		return SROCE_RESP_INV_REQ;
	sgl = resp->sgl;
	err = sroce_sgl_copy_in(qp_dev(qp), resp_pd(qp), &resp->sgl, skb,
				op->hdr_len, pkt->paylen);
	if (err == -EFAULT)
		resp->sgl = sgl;	/* the packet comes again */
	if (err)
		return sroce_exec_sgl_result(err);
	resp->recv_len += pkt->paylen;
	if (!(pkt->flags & SROCE_OP_LAST))
		return SROCE_RESP_OK;

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
			return SROCE_RESP_INV_REQ;
		wc.wc_flags |= IB_WC_WITH_INVALIDATE;
	}
	wc.byte_len = resp->recv_len;
	wc.src_qp = qp->attr.dest_qpn;
	return sroce_exec_complete_rwqe(qp, &wc, pkt->se) ? SROCE_RESP_OK : SROCE_RESP_CQ_FULL;
}

static enum sroce_resp_result do_write(struct sroce_qp *qp, struct sk_buff *skb)
{
	const struct sroce_opcode_info *op = sroce_pkt_op(skb);
	struct sroce_pkt *pkt = sroce_pkt(skb);
	struct sroce_resp *resp = &qp->resp;
	struct sroce_reth *reth;
	struct sroce_mr *mr;
	struct ib_wc wc;
	enum sroce_resp_result res;
	u64 iova;
	u32 gen;
	int err;

	if ((pkt->flags & SROCE_OP_LAST) && (pkt->flags & SROCE_OP_IMMDT)) {
		res = sroce_exec_need_rwqe(qp);
		if (res != SROCE_RESP_OK)
			return res;
	}
	if (pkt->flags & SROCE_OP_FIRST) {
		reth = sroce_pkt_hdr(skb, op->reth);
		resp->va = be64_to_cpu(reth->va);
		resp->rkey = be32_to_cpu(reth->rkey);
		resp->resid = be32_to_cpu(reth->len);
		resp->write_len = resp->resid;
		if (resp->resid > SROCE_MAX_MSG_SIZE)
			return SROCE_RESP_INV_REQ;
		/* A zero-length WRITE checks no key (IBA C9-88). */
		if (resp->resid) {
			mr = remote_mr(qp, resp->rkey, resp->va, resp->resid,
				       IB_ACCESS_REMOTE_WRITE, &iova, &gen);
			if (!mr)
				return SROCE_RESP_ACCESS;
			sroce_mr_put(mr);
			resp->write_gen = gen;
		}
	}
	if (!write_size_ok(qp, pkt, resp->resid))
		return SROCE_RESP_INV_REQ;
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
			return SROCE_RESP_ACCESS;
		err = gen != resp->write_gen ? -EACCES :
		      sroce_mem_copy_in(mr, gen, iova, skb, op->hdr_len,
					pkt->paylen);
		/* Fault in the rest of the message, not a packet at a time. */
		res = err == -EFAULT ? resp_fault(qp, mr, iova, resp->resid,
						  true) :
		      err ? SROCE_RESP_ACCESS : SROCE_RESP_OK;
		sroce_mr_put(mr);
		if (res != SROCE_RESP_OK)
			return res;
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
		if (!sroce_exec_complete_rwqe(qp, &wc, pkt->se))
			return SROCE_RESP_CQ_FULL;
	}
	return SROCE_RESP_OK;
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

static enum sroce_resp_result do_read(struct sroce_qp *qp, struct sk_buff *skb)
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
		return SROCE_RESP_INV_REQ;
	gen = 0;
	if (len) {
		mr = remote_mr(qp, be32_to_cpu(reth->rkey),
			       be64_to_cpu(reth->va), len,
			       IB_ACCESS_REMOTE_READ, &iova, &gen);
		if (!mr)
			return SROCE_RESP_ACCESS;
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
	return SROCE_RESP_OK;
}

static enum sroce_resp_result do_atomic(struct sroce_qp *qp, struct sk_buff *skb)
{
	struct sroce_atmeth *atm = sroce_pkt_hdr(skb, sroce_pkt_op(skb)->reth);
	struct sroce_pkt *pkt = sroce_pkt(skb);
	struct sroce_resp *resp = &qp->resp;
	u64 va = be64_to_cpu(atm->va);
	enum sroce_resp_result res;
	struct sroce_rd_res *rd;
	struct sroce_mr *mr;
	u64 orig, iova;
	int err;
	u32 gen;

	if (!qp->attr.max_dest_rd_atomic || !IS_ALIGNED(va, sizeof(u64)))
		return SROCE_RESP_INV_REQ;
	mr = remote_mr(qp, be32_to_cpu(atm->rkey), va, sizeof(u64),
		       IB_ACCESS_REMOTE_ATOMIC, &iova, &gen);
	if (!mr)
		return SROCE_RESP_ACCESS;
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
	if (err == -EFAULT) {
		res = resp_fault(qp, mr, iova, sizeof(u64), true);
		sroce_mr_put(mr);
		return res;
	}
	sroce_mr_put(mr);
	if (err)
		return err == -EACCES ? SROCE_RESP_ACCESS : SROCE_RESP_INV_REQ;

	rd = new_res(qp);
	rd->atomic = true;
	rd->first_psn = pkt->psn;
	rd->last_psn = pkt->psn;
	rd->orig = orig;
	resp->msn = sroce_psn_add(resp->msn, 1);
	resp->epsn = sroce_psn_add(pkt->psn, 1);
	resp->done_psn = pkt->psn;
	sroce_reply_atomic_ack(qp, pkt->psn, orig);
	return SROCE_RESP_OK;
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
	sroce_reply_empty_read(qp, psn);
}

/* ATOMIC WRITE (IBA 1.5, 9.4.7): an 8-byte store, single-copy atomic. */
static enum sroce_resp_result do_atomic_write(struct sroce_qp *qp,
					      struct sk_buff *skb)
{
	const struct sroce_opcode_info *op = sroce_pkt_op(skb);
	struct sroce_reth *reth = sroce_pkt_hdr(skb, op->reth);
	struct sroce_pkt *pkt = sroce_pkt(skb);
	u64 va = be64_to_cpu(reth->va), iova, val;
	enum sroce_resp_result res;
	struct sroce_mr *mr;
	int err;
	u32 gen;

	if (!qp->attr.max_dest_rd_atomic || !IS_ALIGNED(va, sizeof(u64)) ||
	    be32_to_cpu(reth->len) != sizeof(u64) || pkt->paylen != sizeof(u64))
		return SROCE_RESP_INV_REQ;
	mr = remote_mr(qp, be32_to_cpu(reth->rkey), va, sizeof(u64),
		       IB_ACCESS_REMOTE_WRITE, &iova, &gen);
	if (!mr)
		return SROCE_RESP_ACCESS;
	/* The bytes land as they came, in one store; aligned as atomics. */
	skb_copy_bits(skb, op->hdr_len, &val, sizeof(val));
	err = IS_ALIGNED(iova, sizeof(u64)) ?
	      sroce_mem_atomic_write(mr, gen, iova, val) : -EINVAL;
	if (err == -EFAULT) {
		res = resp_fault(qp, mr, iova, sizeof(u64), true);
		sroce_mr_put(mr);
		return res;
	}
	sroce_mr_put(mr);
	if (err)
		return err == -EACCES ? SROCE_RESP_ACCESS : SROCE_RESP_INV_REQ;

	executed_empty(qp, pkt->psn);
	return SROCE_RESP_OK;
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
static enum sroce_resp_result do_flush(struct sroce_qp *qp, struct sk_buff *skb)
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
		return SROCE_RESP_INV_REQ;
	/* An MR-wide flush checks only the key; a range flush its range. */
	len = sel == SROCE_FLUSH_MR ? 0 : be32_to_cpu(reth->len);
	if (sel == SROCE_FLUSH_MR || len) {
		mr = remote_mr(qp, be32_to_cpu(reth->rkey),
			       be64_to_cpu(reth->va), len, access, &iova,
			       &gen);
		if (!mr)
			return SROCE_RESP_ACCESS;
		sroce_mr_put(mr);
	}
	wmb();	/* every store executed before this request is visible */

	executed_empty(qp, pkt->psn);
	return SROCE_RESP_OK;
}

/**
 * sroce_exec_request() - execute a request packet at the expected PSN
 * @qp: the QP; called by its receive engine
 * @skb: the packet
 *
 * Checks the opcode sequence and the QP's access rights (IBA 9.7.5.1.2),
 * then executes it.
 *
 * Return: SROCE_RESP_OK, or the error the responder answers (resp.c).
 */
enum sroce_resp_result sroce_exec_request(struct sroce_qp *qp, struct sk_buff *skb)
{
	struct sroce_pkt *pkt = sroce_pkt(skb);
	struct sroce_resp *resp = &qp->resp;
	int access = qp->attr.access_flags;
	u32 f = pkt->flags;

	if (resp->in_msg ? !(f & resp->in_msg) || (f & SROCE_OP_FIRST) :
	    !(f & SROCE_OP_FIRST))
		return SROCE_RESP_INV_REQ;
	if (((f & (SROCE_OP_WRITE | SROCE_OP_ATOMIC_WRITE)) &&
	     !(access & IB_ACCESS_REMOTE_WRITE)) ||
	    ((f & SROCE_OP_READ) && !(access & IB_ACCESS_REMOTE_READ)) ||
	    ((f & SROCE_OP_ATOMIC) && !(access & IB_ACCESS_REMOTE_ATOMIC)))
		return SROCE_RESP_INV_REQ;

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

/**
 * sroce_exec_read_resp() - send packets of the READ response under way
 * @qp: the QP; called by its receive engine
 * @budget: packets at most
 *
 * Return: the packets sent; -ENOMEM when a packet buffer could not be
 * had (the engine was kicked, to go on a tick later); -EAGAIN when a page
 * of on-demand paged memory is not mapped: the responder's fault was
 * queued, its end runs the engine, and the response goes on from the
 * packet that found it; or -EACCES when the MR was deregistered,
 * invalidated or registered anew under us (or the fault failed): no byte
 * of another registration is sent, the response ends, and read.psn is the
 * PSN that failed (the caller answers it as an access error).
 */
int sroce_exec_read_resp(struct sroce_qp *qp, int budget)
{
	struct sroce_read *rd = &qp->resp.read;
	const struct sroce_opcode_info *op;
	struct sroce_mr *mr;
	struct sk_buff *skb;
	u32 paylen, gen;
	bool last;
	u64 iova;
	u8 opcode;
	int sent = 0;
	int err = 0;

	sroce_reply_flush_ack(qp);
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
		skb = sroce_reply_alloc(qp, opcode, rd->psn, paylen);
		if (!skb) {
			sroce_task_kick(&qp->resp.task);
			err = -ENOMEM;
			break;
		}
		if (paylen) {
			mr = remote_mr(qp, rd->rkey, rd->va, paylen,
				       IB_ACCESS_REMOTE_READ, &iova, &gen);
			err = !mr || gen != rd->gen ? -EACCES :
			      sroce_mem_copy_out(mr, gen, iova,
						 skb->data + op->hdr_len, paylen);
			if (err == -EFAULT &&
			    resp_fault(qp, mr, iova, rd->left, false) ==
			    SROCE_RESP_FAULT)
				err = -EAGAIN;
			else if (err)
				err = -EACCES;
			if (mr)
				sroce_mr_put(mr);
			if (err) {
				kfree_skb(skb);
				rd->active = err == -EAGAIN;
				break;
			}
		}
		sroce_reply_xmit(qp, skb);
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
