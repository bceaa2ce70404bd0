// SPDX-License-Identifier: GPL-2.0 OR Linux-OpenIB
/*
 * libsroce: the extended send API, struct ibv_qp_ex and ibv_wr_*().
 *
 * A batch is built in the SQ's free slots under the SQ's lock, from
 * wr_start() to wr_complete(), and published by wr_complete() as post_send
 * publishes a list. A builder (wr_send(), wr_rdma_write(), ...) begins an
 * entry: it writes the whole header, zeroing what it does not set, and
 * takes wr_id and wr_flags from the ibv_qp_ex; the setters that follow
 * (wr_set_sge*(), wr_set_inline_data*(), wr_set_ud_addr(),
 * wr_set_xrc_srqn()) fill in the entry the last builder began. The checks
 * are post_send's; their errors are latched, the rest of the batch is
 * ignored, and wr_complete() returns the first one and posts nothing.
 * wr_abort() discards the batch too.
 *
 * libibverbs 44.0 and 45 and later lay struct ibv_qp_ex out differently;
 * sroce_qp_ex_probe() finds out which one is running
 * (Documentation/provider.md, "Two layouts of struct ibv_qp_ex").
 */
#include <config.h>

#include <errno.h>
#include <stdbool.h>
#include <string.h>

#include <ccan/array_size.h>

#include "sroce.h"
#include "ring.h"
#include "post.h"
#include "wr.h"

/* What a begun entry must still be given before it can be posted. */
enum {
	WR_NEED_UD_ADDR = 1 << 0,	/* wr_set_ud_addr(): a send on UD */
	WR_NEED_XRC_SRQN = 1 << 1,	/* wr_set_xrc_srqn(): on an XRC QP */
	WR_NEED_ATOMIC_SGE = 1 << 2,	/* an atomic's 8-byte local buffer */
};

/* The send operations of create_qp_ex's send_ops_flags, by opcode. */
static const struct {
	uint64_t flag;
	enum ibv_wr_opcode opcode;
} qp_ex_ops[] = {
	{ IBV_QP_EX_WITH_RDMA_WRITE, IBV_WR_RDMA_WRITE },
	{ IBV_QP_EX_WITH_RDMA_WRITE_WITH_IMM, IBV_WR_RDMA_WRITE_WITH_IMM },
	{ IBV_QP_EX_WITH_SEND, IBV_WR_SEND },
	{ IBV_QP_EX_WITH_SEND_WITH_IMM, IBV_WR_SEND_WITH_IMM },
	{ IBV_QP_EX_WITH_RDMA_READ, IBV_WR_RDMA_READ },
	{ IBV_QP_EX_WITH_ATOMIC_CMP_AND_SWP, IBV_WR_ATOMIC_CMP_AND_SWP },
	{ IBV_QP_EX_WITH_ATOMIC_FETCH_AND_ADD, IBV_WR_ATOMIC_FETCH_AND_ADD },
	{ IBV_QP_EX_WITH_LOCAL_INV, IBV_WR_LOCAL_INV },
	{ IBV_QP_EX_WITH_BIND_MW, IBV_WR_BIND_MW },
	{ IBV_QP_EX_WITH_SEND_WITH_INV, IBV_WR_SEND_WITH_INV },
	{ IBV_QP_EX_WITH_FLUSH, IBV_WR_FLUSH },
	{ IBV_QP_EX_WITH_ATOMIC_WRITE, IBV_WR_ATOMIC_WRITE },
};

/*
 * The layout facts that the two places of VERBS_QP_EX rest on: struct
 * ibv_qp_ex ends with wr_atomic_write (present in 44.0 too) and wr_flush
 * (added in 45), and verbs_qp.comp_mask follows it.
 */
static_assert(offsetof(struct ibv_qp_ex, wr_flush) ==
	      offsetof(struct ibv_qp_ex, wr_atomic_write) + sizeof(void *),
	      "wr_flush follows wr_atomic_write");
static_assert(sizeof(struct ibv_qp_ex) ==
	      offsetof(struct ibv_qp_ex, wr_flush) + sizeof(void *),
	      "wr_flush ends struct ibv_qp_ex");
static_assert(offsetof(struct verbs_qp, comp_mask) == sizeof(struct ibv_qp_ex),
	      "comp_mask follows struct ibv_qp_ex");

/*
 * Ask the running libibverbs where it looks for VERBS_QP_EX: hand its
 * ibv_qp_to_qp_ex() a zeroed verbs_qp (with room to spare) with the flag
 * at one place, then at the other.
 */
enum sroce_qp_ex_abi sroce_qp_ex_probe(void)
{
	static const size_t where[] = {
		[SROCE_QP_EX_FULL] = offsetof(struct verbs_qp, comp_mask),
		[SROCE_QP_EX_NO_FLUSH] = offsetof(struct ibv_qp_ex, wr_flush),
	};
	union {
		struct verbs_qp vqp;
		uint8_t bytes[2 * sizeof(struct verbs_qp)];
	} probe;
	uint32_t mask = VERBS_QP_EX;
	unsigned int abi;

	for (abi = SROCE_QP_EX_FULL; abi < ARRAY_SIZE(where); abi++) {
		memset(&probe, 0, sizeof(probe));
		memcpy(probe.bytes + where[abi], &mask, sizeof(mask));
		if (ibv_qp_to_qp_ex(&probe.vqp.qp) == &probe.vqp.qp_ex)
			return abi;
	}
	return SROCE_QP_EX_NONE;
}

/*
 * create_qp_ex's send_ops_flags: each operation must be one this QP type
 * carries. IBV_QP_EX_WITH_FLUSH needs the wr_flush member, which a
 * libibverbs older than the headers keeps its comp_mask in.
 */
int sroce_qp_ex_check_ops(struct ibv_context *ibctx,
			  const struct ibv_qp_init_attr_ex *attr)
{
	enum sroce_qp_ex_abi abi = to_sctx(ibctx)->qp_ex_abi;
	uint64_t ops = attr->send_ops_flags;
	unsigned int i;

	if (abi == SROCE_QP_EX_NONE || !sroce_qpt_bit(attr->qp_type))
		return EOPNOTSUPP;
	if (abi != SROCE_QP_EX_FULL && (ops & IBV_QP_EX_WITH_FLUSH))
		return EOPNOTSUPP;
	for (i = 0; i < ARRAY_SIZE(qp_ex_ops); i++) {
		if (!(ops & qp_ex_ops[i].flag))
			continue;
		if (!sroce_send_opcode(attr->qp_type, qp_ex_ops[i].opcode))
			return EOPNOTSUPP;
		ops &= ~qp_ex_ops[i].flag;
	}
	return ops ? EOPNOTSUPP : 0;	/* TSO, or unknown */
}

static void *wr_fail(struct sroce_wr_batch *b, int err)
{
	if (!b->err)
		b->err = err;
	b->wqe = NULL;
	return NULL;
}

/* The entry the last builder began is complete: does it lack anything? */
static void wr_end_entry(struct sroce_wr_batch *b)
{
	if (b->wqe && b->missing)
		wr_fail(b, EINVAL);
	b->wqe = NULL;
}

/*
 * Begin an entry for @opcode in the next free slot, or latch why not.
 * Return: the entry, with its header written, or NULL.
 */
static struct sroce_send_wqe *wr_begin(struct ibv_qp_ex *ibqp,
				       enum ibv_wr_opcode opcode)
{
	struct sroce_qp *qp = ex_to_sqp(ibqp);
	struct sroce_wr_batch *b = &qp->batch;
	enum ibv_qp_type type = ibqp->qp_base.qp_type;
	struct sroce_send_wqe *wqe;

	wr_end_entry(b);
	if (b->err)
		return NULL;
	b->op = sroce_send_opcode(type, opcode);
	if (!b->op || (ibqp->wr_flags & ~SROCE_SEND_FLAGS))
		return wr_fail(b, EINVAL);
	wqe = sroce_wq_next_slot(&qp->sq);
	if (!wqe)
		return wr_fail(b, ENOMEM);
	wq_advance(&qp->sq);

	memset(wqe, 0, sizeof(*wqe));
	wqe->wr_id = ibqp->wr_id;
	wqe->opcode = opcode;
	/* Inline data is what wr_set_inline_data*() give, not a flag. */
	wqe->send_flags = (ibqp->wr_flags & ~IBV_SEND_INLINE) | qp->sq_signal;
	b->missing = 0;
	if (type == IBV_QPT_UD)
		b->missing |= WR_NEED_UD_ADDR;
	if (type == IBV_QPT_XRC_SEND)
		b->missing |= WR_NEED_XRC_SRQN;
	if (b->op->kind == SEND_KIND_ATOMIC)
		b->missing |= WR_NEED_ATOMIC_SGE;
	b->wqe = wqe;
	return wqe;
}

/*
 * As wr_begin(), for a builder whose arguments the builder checks itself
 * first: if they are not @valid, latch EINVAL and begin nothing.
 */
static struct sroce_send_wqe *wr_begin_valid(struct ibv_qp_ex *ibqp,
					     enum ibv_wr_opcode opcode,
					     bool valid)
{
	if (!valid)
		return wr_fail(&ex_to_sqp(ibqp)->batch, EINVAL);
	return wr_begin(ibqp, opcode);
}

/* Begin an entry whose @ex is @ex: immediate data or an rkey. */
static void wr_begin_ex(struct ibv_qp_ex *ibqp, enum ibv_wr_opcode opcode,
			uint32_t ex)
{
	struct sroce_send_wqe *wqe = wr_begin(ibqp, opcode);

	if (wqe)
		wqe->ex = ex;
}

static void wr_send(struct ibv_qp_ex *ibqp)
{
	wr_begin(ibqp, IBV_WR_SEND);
}

static void wr_send_imm(struct ibv_qp_ex *ibqp, __be32 imm_data)
{
	/* Immediate data stays in network order. */
	wr_begin_ex(ibqp, IBV_WR_SEND_WITH_IMM, (uint32_t)imm_data);
}

static void wr_send_inv(struct ibv_qp_ex *ibqp, uint32_t invalidate_rkey)
{
	wr_begin_ex(ibqp, IBV_WR_SEND_WITH_INV, invalidate_rkey);
}

static struct sroce_send_wqe *wr_rdma(struct ibv_qp_ex *ibqp,
				      enum ibv_wr_opcode opcode, uint32_t rkey,
				      uint64_t remote_addr)
{
	struct sroce_send_wqe *wqe = wr_begin(ibqp, opcode);

	if (wqe)
		wqe_set_rdma(wqe, remote_addr, rkey);
	return wqe;
}

static void wr_rdma_write(struct ibv_qp_ex *ibqp, uint32_t rkey,
			  uint64_t remote_addr)
{
	wr_rdma(ibqp, IBV_WR_RDMA_WRITE, rkey, remote_addr);
}

static void wr_rdma_write_imm(struct ibv_qp_ex *ibqp, uint32_t rkey,
			      uint64_t remote_addr, __be32 imm_data)
{
	struct sroce_send_wqe *wqe;

	wqe = wr_rdma(ibqp, IBV_WR_RDMA_WRITE_WITH_IMM, rkey, remote_addr);
	if (wqe)
		wqe->ex = (uint32_t)imm_data;
}

static void wr_rdma_read(struct ibv_qp_ex *ibqp, uint32_t rkey,
			 uint64_t remote_addr)
{
	wr_rdma(ibqp, IBV_WR_RDMA_READ, rkey, remote_addr);
}

static void wr_atomic(struct ibv_qp_ex *ibqp, enum ibv_wr_opcode opcode,
		      uint32_t rkey, uint64_t remote_addr, uint64_t compare_add,
		      uint64_t swap)
{
	struct sroce_send_wqe *wqe;

	/* The remote address of an atomic is 8-byte aligned. */
	wqe = wr_begin_valid(ibqp, opcode, !(remote_addr & 7));
	if (wqe)
		wqe_set_atomic(wqe, remote_addr, compare_add, swap, rkey);
}

static void wr_atomic_cmp_swp(struct ibv_qp_ex *ibqp, uint32_t rkey,
			      uint64_t remote_addr, uint64_t compare,
			      uint64_t swap)
{
	wr_atomic(ibqp, IBV_WR_ATOMIC_CMP_AND_SWP, rkey, remote_addr, compare,
		  swap);
}

static void wr_atomic_fetch_add(struct ibv_qp_ex *ibqp, uint32_t rkey,
				uint64_t remote_addr, uint64_t add)
{
	wr_atomic(ibqp, IBV_WR_ATOMIC_FETCH_AND_ADD, rkey, remote_addr, add, 0);
}

/* The 8 bytes are copied as they are to appear in the remote memory. */
static void wr_atomic_write(struct ibv_qp_ex *ibqp, uint32_t rkey,
			    uint64_t remote_addr, const void *atomic_wr)
{
	struct sroce_send_wqe *wqe;

	wqe = wr_begin_valid(ibqp, IBV_WR_ATOMIC_WRITE, !(remote_addr & 7));
	if (wqe) {
		wqe->wr.atomic_write.remote_addr = remote_addr;
		wqe->wr.atomic_write.rkey = rkey;
		memcpy(wqe->wr.atomic_write.data, atomic_wr,
		       sizeof(wqe->wr.atomic_write.data));
	}
}

/* A placement type and a selectivity level that IBA 1.5 defines. */
static bool flush_valid(uint8_t type, uint8_t level)
{
	return type && !(type & ~(IBV_FLUSH_GLOBAL | IBV_FLUSH_PERSISTENT)) &&
	       (level == IBV_FLUSH_RANGE || level == IBV_FLUSH_MR);
}

static void wr_flush(struct ibv_qp_ex *ibqp, uint32_t rkey,
		     uint64_t remote_addr, size_t len, uint8_t type,
		     uint8_t level)
{
	struct sroce_send_wqe *wqe;

	wqe = wr_begin_valid(ibqp, IBV_WR_FLUSH, flush_valid(type, level));
	if (wqe) {
		wqe->wr.flush.remote_addr = remote_addr;
		wqe->wr.flush.length = len;
		wqe->wr.flush.rkey = rkey;
		wqe->wr.flush.type = type;
		wqe->wr.flush.level = level;
	}
}

/* A type 2 window, bound by a work request as post_send binds it. */
static void wr_bind_mw(struct ibv_qp_ex *ibqp, struct ibv_mw *mw,
		       uint32_t rkey, const struct ibv_mw_bind_info *info)
{
	struct sroce_send_wqe *wqe;

	wqe = wr_begin_valid(ibqp, IBV_WR_BIND_MW,
			     mw && mw->type == IBV_MW_TYPE_2 && info);
	if (wqe) {
		wqe->ex = rkey;
		wqe_set_bind_mw(wqe, mw, info);
	}
}

static void wr_local_inv(struct ibv_qp_ex *ibqp, uint32_t invalidate_rkey)
{
	wr_begin_ex(ibqp, IBV_WR_LOCAL_INV, invalidate_rkey);
}

/*
 * The entry a setter fills in, or NULL (with EINVAL latched when there is
 * none to fill in without an earlier error).
 */
static struct sroce_send_wqe *wr_current(struct ibv_qp_ex *ibqp)
{
	struct sroce_wr_batch *b = &ex_to_sqp(ibqp)->batch;

	return b->wqe ? b->wqe : wr_fail(b, EINVAL);
}

/* The entry whose data a setter gives, if its opcode carries data. */
static struct sroce_send_wqe *wr_data_entry(struct ibv_qp_ex *ibqp)
{
	struct sroce_wr_batch *b = &ex_to_sqp(ibqp)->batch;
	struct sroce_send_wqe *wqe = wr_current(ibqp);

	if (wqe && b->op->kind != SEND_KIND_SEND &&
	    b->op->kind != SEND_KIND_RDMA && b->op->kind != SEND_KIND_ATOMIC)
		return wr_fail(b, EINVAL);
	return wqe;
}

static void wr_set_sge_list(struct ibv_qp_ex *ibqp, size_t num_sge,
			    const struct ibv_sge *sg_list)
{
	struct sroce_qp *qp = ex_to_sqp(ibqp);
	struct sroce_wr_batch *b = &qp->batch;
	struct sroce_send_wqe *wqe = wr_data_entry(ibqp);
	uint64_t len = 0;
	size_t i;

	if (!wqe)
		return;
	if (num_sge > qp->sq.max_sge) {
		wr_fail(b, EINVAL);
		return;
	}
	for (i = 0; i < num_sge; i++)
		len += sg_list[i].length;
	if (b->op->kind == SEND_KIND_ATOMIC) {
		/* As post_send: the result needs 8 bytes. */
		if (len < 8) {
			wr_fail(b, EINVAL);
			return;
		}
		b->missing &= ~WR_NEED_ATOMIC_SGE;
	}
	wqe->send_flags &= ~SROCE_SEND_INLINE;
	wqe->inline_len = 0;
	wqe->num_sge = num_sge;
	memcpy(wqe->sge, sg_list, num_sge * sizeof(struct sroce_sge));
}

static void wr_set_sge(struct ibv_qp_ex *ibqp, uint32_t lkey, uint64_t addr,
		       uint32_t length)
{
	struct ibv_sge sge = { .addr = addr, .length = length, .lkey = lkey };

	wr_set_sge_list(ibqp, 1, &sge);
}

/* Inline data is the source of the message: not for READ or atomics. */
static void wr_set_inline_data_list(struct ibv_qp_ex *ibqp, size_t num_buf,
				    const struct ibv_data_buf *buf_list)
{
	struct sroce_qp *qp = ex_to_sqp(ibqp);
	struct sroce_wr_batch *b = &qp->batch;
	struct sroce_send_wqe *wqe = wr_data_entry(ibqp);
	uint8_t *dst;
	size_t len = 0, i;

	if (!wqe)
		return;
	for (i = 0; i < num_buf; i++) {
		len += buf_list[i].length;
		if (len > qp->sq.max_inline)
			break;
	}
	if (!b->op->inline_ok || len > qp->sq.max_inline) {
		wr_fail(b, EINVAL);
		return;
	}
	dst = (uint8_t *)wqe->sge;
	for (i = 0; i < num_buf; i++) {
		memcpy(dst, buf_list[i].addr, buf_list[i].length);
		dst += buf_list[i].length;
	}
	wqe->send_flags |= SROCE_SEND_INLINE;
	wqe->num_sge = 0;
	wqe->inline_len = len;
}

static void wr_set_inline_data(struct ibv_qp_ex *ibqp, void *addr,
			       size_t length)
{
	struct ibv_data_buf buf = { .addr = addr, .length = length };

	wr_set_inline_data_list(ibqp, 1, &buf);
}

/*
 * The entry an addressing setter fills in: only on a QP of @type, and
 * only with what it needs (@valid); else NULL, with EINVAL latched. Once
 * filled in, the entry no longer lacks @need.
 */
static struct sroce_send_wqe *wr_addr_entry(struct ibv_qp_ex *ibqp,
					    enum ibv_qp_type type, bool valid,
					    uint32_t need)
{
	struct sroce_wr_batch *b = &ex_to_sqp(ibqp)->batch;
	struct sroce_send_wqe *wqe = wr_current(ibqp);

	if (!wqe)
		return NULL;
	if (ibqp->qp_base.qp_type != type || !valid)
		return wr_fail(b, EINVAL);
	b->missing &= ~need;
	return wqe;
}

static void wr_set_ud_addr(struct ibv_qp_ex *ibqp, struct ibv_ah *ah,
			   uint32_t remote_qpn, uint32_t remote_qkey)
{
	struct sroce_send_wqe *wqe;

	wqe = wr_addr_entry(ibqp, IBV_QPT_UD, ah, WR_NEED_UD_ADDR);
	if (wqe)
		wqe_set_ud(wqe, ah, remote_qpn, remote_qkey);
}

static void wr_set_xrc_srqn(struct ibv_qp_ex *ibqp, uint32_t remote_srqn)
{
	struct sroce_send_wqe *wqe;

	wqe = wr_addr_entry(ibqp, IBV_QPT_XRC_SEND, true, WR_NEED_XRC_SRQN);
	if (wqe)
		wqe->xrc_remote_srqn = remote_srqn;
}

/* A QP that cannot send yet fails the whole batch (as post_send would). */
static void wr_start(struct ibv_qp_ex *ibqp)
{
	struct sroce_qp *qp = ex_to_sqp(ibqp);

	pthread_spin_lock(&qp->sq.lock);
	qp->batch = (struct sroce_wr_batch){
		.start = qp->sq.ring.index,
		.room = qp->sq.room,
		.err = qp_can_send(&ibqp->qp_base) ? 0 : EINVAL,
	};
}

/* Forget the batch's entries: their slots are free again. */
static void wr_rewind_unlock(struct sroce_qp *qp)
{
	qp->sq.ring.index = qp->batch.start;
	qp->sq.room = qp->batch.room;
	qp->batch.wqe = NULL;
	pthread_spin_unlock(&qp->sq.lock);
}

/*
 * Post the batch, or nothing if any of it failed. As with post_send, an
 * error of the doorbell alone is returned with the entries in the ring.
 */
static int wr_complete(struct ibv_qp_ex *ibqp)
{
	struct sroce_qp *qp = ex_to_sqp(ibqp);
	struct sroce_wr_batch *b = &qp->batch;
	int err;

	wr_end_entry(b);
	if (b->err) {
		err = b->err;
		wr_rewind_unlock(qp);
		return err;
	}
	return sroce_sq_publish_unlock(qp, qp->sq.ring.index != b->start);
}

static void wr_abort(struct ibv_qp_ex *ibqp)
{
	wr_rewind_unlock(ex_to_sqp(ibqp));
}

/*
 * Offer struct ibv_qp_ex: set its operations, then VERBS_QP_EX where the
 * running libibverbs looks (sroce_qp_ex_probe()). With SROCE_QP_EX_NO_FLUSH
 * that is the first four bytes of wr_flush, which is therefore left alone;
 * sroce_qp_ex_check_ops() refused IBV_QP_EX_WITH_FLUSH. Every member before
 * wr_flush is where 44.0 has it, and all of it is inside this QP's own
 * allocation, whatever the library's idea of its size.
 */
void sroce_qp_ex_init(struct sroce_qp *qp, enum sroce_qp_ex_abi abi)
{
	struct ibv_qp_ex *qpx = &qp->vqp.qp_ex;
	uint8_t *lib_mask = (uint8_t *)qpx +
			    offsetof(struct ibv_qp_ex, wr_flush);
	uint32_t mask;

	qpx->wr_start = wr_start;
	qpx->wr_complete = wr_complete;
	qpx->wr_abort = wr_abort;
	qpx->wr_send = wr_send;
	qpx->wr_send_imm = wr_send_imm;
	qpx->wr_send_inv = wr_send_inv;
	qpx->wr_rdma_write = wr_rdma_write;
	qpx->wr_rdma_write_imm = wr_rdma_write_imm;
	qpx->wr_rdma_read = wr_rdma_read;
	qpx->wr_atomic_cmp_swp = wr_atomic_cmp_swp;
	qpx->wr_atomic_fetch_add = wr_atomic_fetch_add;
	qpx->wr_atomic_write = wr_atomic_write;
	qpx->wr_bind_mw = wr_bind_mw;
	qpx->wr_local_inv = wr_local_inv;
	qpx->wr_set_sge = wr_set_sge;
	qpx->wr_set_sge_list = wr_set_sge_list;
	qpx->wr_set_inline_data = wr_set_inline_data;
	qpx->wr_set_inline_data_list = wr_set_inline_data_list;
	qpx->wr_set_ud_addr = wr_set_ud_addr;
	qpx->wr_set_xrc_srqn = wr_set_xrc_srqn;

	if (abi == SROCE_QP_EX_FULL) {
		qpx->wr_flush = wr_flush;
		qp->vqp.comp_mask |= VERBS_QP_EX;
	} else {
		memcpy(&mask, lib_mask, sizeof(mask));
		mask |= VERBS_QP_EX;
		memcpy(lib_mask, &mask, sizeof(mask));
	}
}
