// SPDX-License-Identifier: GPL-2.0 OR Linux-OpenIB
/*
 * libsroce: posting work requests. post_send, post_recv and
 * post_srq_recv write the entries into the mapped rings, publish the
 * producer index once per list, and ring the doorbell only when the
 * kernel asks for it (Documentation/provider.md, "Posting"). The table of
 * send opcodes here also serves the extended send API (wr.c).
 */
#include <config.h>

#include <errno.h>
#include <stdbool.h>
#include <string.h>

#include <ccan/array_size.h>

#include "sroce.h"
#include "ring.h"
#include "post.h"

/*
 * Scatter/gather lists go into the rings as they are: struct ibv_sge and
 * struct sroce_sge have the same layout. Opcodes and send flags are stored
 * with their libibverbs values, which are the kernel's uverbs values.
 */
static_assert(sizeof(struct ibv_sge) == sizeof(struct sroce_sge), "sge");
static_assert(offsetof(struct ibv_sge, addr) ==
	      offsetof(struct sroce_sge, addr), "sge addr");
static_assert(offsetof(struct ibv_sge, length) ==
	      offsetof(struct sroce_sge, length), "sge length");
static_assert(offsetof(struct ibv_sge, lkey) ==
	      offsetof(struct sroce_sge, lkey), "sge lkey");
#define SAME_OPCODE(op) \
	static_assert((int)IBV_WR_##op == (int)IB_UVERBS_WR_##op, #op)
SAME_OPCODE(RDMA_WRITE);
SAME_OPCODE(RDMA_WRITE_WITH_IMM);
SAME_OPCODE(SEND);
SAME_OPCODE(SEND_WITH_IMM);
SAME_OPCODE(RDMA_READ);
SAME_OPCODE(ATOMIC_CMP_AND_SWP);
SAME_OPCODE(ATOMIC_FETCH_AND_ADD);
SAME_OPCODE(SEND_WITH_INV);
static_assert(IBV_WR_ATOMIC_WRITE == SROCE_WR_ATOMIC_WRITE, "ATOMIC_WRITE");
static_assert(IBV_WR_FLUSH == SROCE_WR_FLUSH, "FLUSH");

enum {
	QPT_RC = 1 << 0,
	QPT_UC = 1 << 1,
	QPT_UD = 1 << 2,
	QPT_XRC = 1 << 3,	/* an XRC send QP: what RC has */
};

#define QPT_RCX (QPT_RC | QPT_XRC)

static const struct send_opcode send_opcodes[] = {
	[IBV_WR_RDMA_WRITE] = { SEND_KIND_RDMA, QPT_RCX | QPT_UC,
				SEND_EX_NONE, true },
	[IBV_WR_RDMA_WRITE_WITH_IMM] = { SEND_KIND_RDMA, QPT_RCX | QPT_UC,
					 SEND_EX_IMM, true },
	[IBV_WR_SEND] = { SEND_KIND_SEND, QPT_RCX | QPT_UC | QPT_UD,
			  SEND_EX_NONE, true },
	[IBV_WR_SEND_WITH_IMM] = { SEND_KIND_SEND, QPT_RCX | QPT_UC | QPT_UD,
				   SEND_EX_IMM, true },
	[IBV_WR_SEND_WITH_INV] = { SEND_KIND_SEND, QPT_RCX, SEND_EX_INV, true },
	[IBV_WR_RDMA_READ] = { SEND_KIND_RDMA, QPT_RCX },
	[IBV_WR_ATOMIC_CMP_AND_SWP] = { SEND_KIND_ATOMIC, QPT_RCX },
	[IBV_WR_ATOMIC_FETCH_AND_ADD] = { SEND_KIND_ATOMIC, QPT_RCX },
	[IBV_WR_LOCAL_INV] = { SEND_KIND_LOCAL, QPT_RCX | QPT_UC, SEND_EX_INV },
	[IBV_WR_BIND_MW] = { SEND_KIND_BIND, QPT_RCX | QPT_UC, SEND_EX_BIND },
	[IBV_WR_FLUSH] = { SEND_KIND_WR_ONLY, QPT_RCX },
	[IBV_WR_ATOMIC_WRITE] = { SEND_KIND_WR_ONLY, QPT_RCX },
};

unsigned int sroce_qpt_bit(enum ibv_qp_type type)
{
	switch (type) {
	case IBV_QPT_RC:
		return QPT_RC;
	case IBV_QPT_UC:
		return QPT_UC;
	case IBV_QPT_UD:
		return QPT_UD;
	case IBV_QPT_XRC_SEND:
		return QPT_XRC;
	default:
		return 0;
	}
}

/* The opcode's entry, or NULL if it cannot be posted to this QP type. */
const struct send_opcode *sroce_send_opcode(enum ibv_qp_type type,
					    enum ibv_wr_opcode opcode)
{
	const struct send_opcode *op;

	if ((unsigned int)opcode >= ARRAY_SIZE(send_opcodes))
		return NULL;
	op = &send_opcodes[opcode];
	if (op->kind == SEND_KIND_NONE ||
	    !(op->qp_types & sroce_qpt_bit(type)))
		return NULL;
	return op;
}

/* Bytes the scatter list of @wr describes, the inline payload. */
static uint64_t sge_total(const struct ibv_send_wr *wr)
{
	uint64_t len = 0;
	int i;

	for (i = 0; i < wr->num_sge; i++)
		len += wr->sg_list[i].length;
	return len;
}

/*
 * Check one send work request against the QP, as a hardware provider
 * would before building its descriptor.
 */
static int send_wr_check(const struct sroce_qp *qp,
			 const struct ibv_send_wr *wr,
			 const struct send_opcode *op,
			 enum ibv_mw_type bind_type)
{
	const struct sroce_wq *sq = &qp->sq;

	if (!op)
		return EINVAL;
	if (op->kind == SEND_KIND_WR_ONLY)
		return EOPNOTSUPP;
	if (wr->num_sge < 0 || (uint32_t)wr->num_sge > sq->max_sge ||
	    (wr->send_flags & ~SROCE_SEND_FLAGS))
		return EINVAL;
	if ((wr->send_flags & IBV_SEND_INLINE) &&
	    (!op->inline_ok || sge_total(wr) > sq->max_inline))
		return EINVAL;
	if (op->kind == SEND_KIND_ATOMIC &&
	    ((wr->wr.atomic.remote_addr & 7) || sge_total(wr) < 8))
		return EINVAL;
	if (qp->vqp.qp.qp_type == IBV_QPT_UD && !wr->wr.ud.ah)
		return EINVAL;
	/*
	 * A work request binds only type 2 windows; type 1 windows are bound
	 * by ibv_bind_mw() (IBA 10.6.7.2.1), which posts with @bind_type 1.
	 */
	if (op->kind == SEND_KIND_BIND &&
	    (!wr->bind_mw.mw || wr->bind_mw.mw->type != bind_type))
		return EINVAL;
	return 0;
}

/* The opcode-specific part of an entry; @hdr was zeroed. */
static void send_wqe_fill_wr(const struct sroce_qp *qp,
			     const struct ibv_send_wr *wr,
			     const struct send_opcode *op,
			     struct sroce_send_wqe *hdr)
{
	switch (op->kind) {
	case SEND_KIND_SEND:
		if (qp->vqp.qp.qp_type == IBV_QPT_UD)
			wqe_set_ud(hdr, wr->wr.ud.ah, wr->wr.ud.remote_qpn,
				   wr->wr.ud.remote_qkey);
		break;
	case SEND_KIND_RDMA:
		wqe_set_rdma(hdr, wr->wr.rdma.remote_addr, wr->wr.rdma.rkey);
		break;
	case SEND_KIND_ATOMIC:
		wqe_set_atomic(hdr, wr->wr.atomic.remote_addr,
			       wr->wr.atomic.compare_add, wr->wr.atomic.swap,
			       wr->wr.atomic.rkey);
		break;
	case SEND_KIND_BIND:
		wqe_set_bind_mw(hdr, wr->bind_mw.mw, &wr->bind_mw.bind_info);
		break;
	}
}

/* Gather the inline payload into the entry, in place of its scatter list. */
static uint32_t send_wqe_copy_inline(struct sroce_send_wqe *wqe,
				     const struct ibv_send_wr *wr)
{
	uint8_t *dst = (uint8_t *)wqe->sge;
	int i;

	for (i = 0; i < wr->num_sge; i++) {
		memcpy(dst, (void *)(uintptr_t)wr->sg_list[i].addr,
		       wr->sg_list[i].length);
		dst += wr->sg_list[i].length;
	}
	return dst - (uint8_t *)wqe->sge;
}

/*
 * Write one checked work request into @wqe, a free slot. Every header
 * field is written, unused ones as zero, so nothing of an earlier entry in
 * this slot survives in the header. Past the header only the num_sge
 * scatter entries or inline_len bytes that the header announces are
 * written; the kernel reads no more than that.
 */
static void send_wqe_write(const struct sroce_qp *qp,
			   const struct ibv_send_wr *wr,
			   const struct send_opcode *op,
			   struct sroce_send_wqe *wqe)
{
	struct sroce_send_wqe hdr = {
		.wr_id = wr->wr_id,
		.opcode = wr->opcode,
		.send_flags = wr->send_flags | qp->sq_signal,
	};

	if (qp->vqp.qp.qp_type == IBV_QPT_XRC_SEND)
		hdr.xrc_remote_srqn = wr->qp_type.xrc.remote_srqn;

	if (op->ex == SEND_EX_IMM)
		hdr.ex = (uint32_t)wr->imm_data;	/* network order */
	else if (op->ex == SEND_EX_INV)
		hdr.ex = wr->invalidate_rkey;
	else if (op->ex == SEND_EX_BIND)
		hdr.ex = wr->bind_mw.rkey;
	send_wqe_fill_wr(qp, wr, op, &hdr);

	if (wr->send_flags & IBV_SEND_INLINE) {
		hdr.inline_len = send_wqe_copy_inline(wqe, wr);
	} else {
		hdr.num_sge = wr->num_sge;
		memcpy(wqe->sge, wr->sg_list,
		       wr->num_sge * sizeof(struct sroce_sge));
	}
	memcpy(wqe, &hdr, sizeof(hdr));
}

/* Check and write one send work request. Called with sq->lock held. */
static int sq_post_one(struct sroce_qp *qp, const struct ibv_send_wr *wr,
		       enum ibv_mw_type bind_type)
{
	const struct send_opcode *op = sroce_send_opcode(qp->vqp.qp.qp_type,
							 wr->opcode);
	void *slot;
	int ret;

	ret = send_wr_check(qp, wr, op, bind_type);
	if (ret)
		return ret;
	slot = sroce_wq_next_slot(&qp->sq);
	if (!slot)
		return ENOMEM;
	send_wqe_write(qp, wr, op, slot);
	wq_advance(&qp->sq);
	return 0;
}

/*
 * Publish what was written to the SQ with one producer update, drop the
 * SQ's lock, and ring the doorbell outside it if the kernel asks for it.
 * Return: the doorbell's error, or 0.
 */
int sroce_sq_publish_unlock(struct sroce_qp *qp, bool posted)
{
	if (posted)
		wq_publish(&qp->sq);
	pthread_spin_unlock(&qp->sq.lock);
	if (!posted || !wq_needs_doorbell(&qp->sq))
		return 0;
	return sroce_doorbell(qp->vqp.qp.context, SROCE_DOORBELL_SQ,
			      qp->vqp.qp.handle);
}

/*
 * Post the list up to the first request that fails (*bad_wr) and publish
 * the requests written before it. If only the doorbell fails, every
 * request is in the ring but the kernel may not look at it before the next
 * post; that error is returned with *bad_wr NULL.
 */
static int post_send(struct ibv_qp *ibqp, struct ibv_send_wr *wr,
		     struct ibv_send_wr **bad_wr, enum ibv_mw_type bind_type)
{
	struct sroce_qp *qp = to_sqp(ibqp);
	unsigned int posted = 0;
	int ret = 0, err;

	if (!qp_can_send(ibqp)) {
		*bad_wr = wr;
		return EINVAL;
	}

	pthread_spin_lock(&qp->sq.lock);
	for (; wr; wr = wr->next, posted++) {
		ret = sq_post_one(qp, wr, bind_type);
		if (ret) {
			*bad_wr = wr;
			break;
		}
	}
	err = sroce_sq_publish_unlock(qp, posted);
	if (err && !ret) {
		*bad_wr = NULL;
		ret = err;
	}
	return ret;
}

int sroce_post_send(struct ibv_qp *ibqp, struct ibv_send_wr *wr,
		    struct ibv_send_wr **bad_wr)
{
	return post_send(ibqp, wr, bad_wr, IBV_MW_TYPE_2);
}

/* Check and write one receive work request. Called with rq->lock held. */
static int rq_post_one(struct sroce_wq *rq, const struct ibv_recv_wr *wr)
{
	struct sroce_recv_wqe *wqe;

	if (wr->num_sge < 0 || (uint32_t)wr->num_sge > rq->max_sge)
		return EINVAL;
	wqe = sroce_wq_next_slot(rq);
	if (!wqe)
		return ENOMEM;
	wqe->wr_id = wr->wr_id;
	wqe->num_sge = wr->num_sge;
	wqe->reserved = 0;
	memcpy(wqe->sge, wr->sg_list, wr->num_sge * sizeof(struct sroce_sge));
	wq_advance(rq);
	return 0;
}

/*
 * Post a receive list to a QP's RQ or an SRQ as sroce_post_send() does,
 * except that the flags are read before the lock is dropped: a resize may
 * unmap an SRQ's ring as soon as it is. An SRQ whose new ring could not be
 * mapped takes nothing (EIO).
 * Return: whether to ring the doorbell; *ret is the error, if any.
 */
static bool rq_post_list(struct sroce_wq *rq, struct ibv_recv_wr *wr,
			 struct ibv_recv_wr **bad_wr, int *ret)
{
	unsigned int posted = 0;
	bool ring = false;

	*ret = 0;
	pthread_spin_lock(&rq->lock);
	if (!rq->ring.hdr) {
		*ret = EIO;
		*bad_wr = wr;
		goto out;
	}
	for (; wr; wr = wr->next, posted++) {
		*ret = rq_post_one(rq, wr);
		if (*ret) {
			*bad_wr = wr;
			break;
		}
	}
	if (posted) {
		wq_publish(rq);
		ring = wq_needs_doorbell(rq);
	}
out:
	pthread_spin_unlock(&rq->lock);
	return ring;
}

/*
 * Post a receive list, then ring the doorbell of @queue (@handle on
 * @ibctx) if the kernel asked for it. A failing doorbell is returned as
 * post_send() returns it.
 */
static int rq_post(struct sroce_wq *rq, struct ibv_recv_wr *wr,
		   struct ibv_recv_wr **bad_wr, struct ibv_context *ibctx,
		   enum sroce_doorbell queue, uint32_t handle)
{
	int ret, err;

	if (!rq_post_list(rq, wr, bad_wr, &ret))
		return ret;
	err = sroce_doorbell(ibctx, queue, handle);
	if (err && !ret) {
		*bad_wr = NULL;
		ret = err;
	}
	return ret;
}

/* A QP on an SRQ has no RQ of its own to post to. */
int sroce_post_recv(struct ibv_qp *ibqp, struct ibv_recv_wr *wr,
		    struct ibv_recv_wr **bad_wr)
{
	struct sroce_qp *qp = to_sqp(ibqp);

	if (!qp->rq.ring.hdr || ibqp->state == IBV_QPS_RESET) {
		*bad_wr = wr;
		return EINVAL;
	}
	return rq_post(&qp->rq, wr, bad_wr, ibqp->context, SROCE_DOORBELL_RQ,
		       ibqp->handle);
}

int sroce_post_srq_recv(struct ibv_srq *ibsrq, struct ibv_recv_wr *wr,
			struct ibv_recv_wr **bad_wr)
{
	return rq_post(&to_ssrq(ibsrq)->rq, wr, bad_wr, ibsrq->context,
		       SROCE_DOORBELL_SRQ, ibsrq->handle);
}

/*
 * ibv_bind_mw(): bind a type 1 window. It is a BIND_MW work request like a
 * type 2 bind, with the window's next key; the kernel checks it in WQE
 * order and completes it on the send CQ.
 */
int sroce_bind_mw(struct ibv_qp *ibqp, struct ibv_mw *mw,
		  struct ibv_mw_bind *bind)
{
	struct ibv_send_wr wr = {
		.wr_id = bind->wr_id,
		.opcode = IBV_WR_BIND_MW,
		.send_flags = bind->send_flags,
		.bind_mw = {
			.mw = mw,
			.rkey = ibv_inc_rkey(mw->rkey),
			.bind_info = bind->bind_info,
		},
	};
	struct ibv_send_wr *bad;
	int ret;

	if (mw->type != IBV_MW_TYPE_1 || mw->pd != ibqp->pd)
		return EINVAL;
	ret = post_send(ibqp, &wr, &bad, IBV_MW_TYPE_1);
	if (!ret)
		mw->rkey = wr.bind_mw.rkey;
	return ret;
}
