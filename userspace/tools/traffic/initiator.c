// SPDX-License-Identifier: GPL-2.0 OR Linux-OpenIB
/*
 * The initiator: posting my stream on each QP as credit allows, and
 * checking every completion and what READs and atomics brought back.
 */
#include "traffic.h"

/* Initiator: posting my stream, checking its completions */

/* Choices that are mine alone: signaling, inline, where results land. */
static void gen_local(struct tqp *t, struct op *op)
{
	bool last = op->idx + 1 == t->tx.nops;

	op->signaled = last || !tool_rng_below(&t->lrng, 3) || t->since_sig + 1 >= c.p.sq_depth / 2;
	t->since_sig = op->signaled ? 0 : t->since_sig + 1;
	op->inl = (op->kind <= K_WRITE_IMM) && op->len <= c.max_inline && tool_rng_below(&t->lrng, 2);
	if (op->kind == K_READ) {
		op->nlseg = layout_scatter(&t->lrng, op->len, op->lseg);
	} else if (kind_is_atomic(op->kind)) {
		op->nlseg = 1;
		op->lseg[0].mr = tool_rng_below(&t->lrng, NUM_SMR);
		op->lseg[0].off = GUARD + 8 * tool_rng_below(&t->lrng, 8);
		op->lseg[0].len = 8;
	}
}

static void post_op(struct tqp *t, const struct op *op)
{
	struct ibv_sge sge[MAX_SGE];
	struct ibv_send_wr wr = { .sg_list = sge }, *bad;
	uint32_t slot = op->idx % c.p.sq_depth;
	int err;

	wr.wr_id = (uint64_t)t->idx << 32 | op->idx;
	wr.opcode = wr_opcodes[op->kind];
	wr.send_flags = (op->signaled ? IBV_SEND_SIGNALED : 0) | (op->inl ? IBV_SEND_INLINE : 0);
	if (kind_has_imm(op->kind))
		wr.imm_data = htobe32(op->imm);
	if (op->kind == K_READ || kind_is_atomic(op->kind))
		wr.num_sge = sges_scatter(t, slot, op->lseg, op->nlseg, sge);
	else
		wr.num_sge = sges_gather(op, sge);
	if (kind_is_write(op->kind)) {
		wr.wr.rdma.remote_addr = c.peer.win_addr + t->idx * c.win_stride + GUARD + op->roff;
		wr.wr.rdma.rkey = c.peer.win_rkey;
	} else if (op->kind == K_READ) {
		wr.wr.rdma.remote_addr = c.peer.pool_addr[op->pool] + op->roff;
		wr.wr.rdma.rkey = c.peer.pool_rkey[op->pool];
	} else if (kind_is_atomic(op->kind)) {
		wr.wr.atomic.remote_addr = c.peer.atom_addr + t->idx * ATOM_STRIDE;
		wr.wr.atomic.rkey = c.peer.atom_rkey;
		wr.wr.atomic.compare_add = op->kind == K_CAS ? op->cmp : op->arg;
		wr.wr.atomic.swap = op->arg;
	} else if (ud()) {
		wr.wr.ud.ah = t->ah;
		wr.wr.ud.remote_qpn = t->peer_qpn;
		wr.wr.ud.remote_qkey = UD_QKEY;
	}
	err = ibv_post_send(t->qp, &wr, &bad);
	if (err)
		fatal("qp %u op %u %s len %u: ibv_post_send: %s", t->idx, op->idx,
		      kind_verbs[op->kind], op->len, strerror(err));
}

/* Post what the send queue and the peer's credit allow. */
int post_sends(struct tqp *t)
{
	struct op *op;
	int n = 0;

	while (t->posted < t->tx.nops && t->posted - t->done < c.p.sq_depth) {
		op = &t->ring[t->posted % c.p.sq_depth];
		if (!t->have_next) {
			gen_op(&t->tx, op);
			gen_local(t, op);
			t->have_next = true;
		}
		if (op->rseq >= 0 && (uint32_t)op->rseq >= t->rlimit)
			break;
		if (opt.inject == INJ_HANG && op->idx + 1 == t->tx.nops && t->idx == 0) {
			inject(INJ_HANG);	/* never post the last op */
			break;
		}
		post_op(t, op);
		t->posted++;
		t->have_next = false;
		n++;
	}
	return n;
}

static void describe(char *buf, size_t len, const struct tqp *t, const struct op *op,
		     const char *whose)
{
	snprintf(buf, len, "qp %u %s op %u %s len %u", t->idx, whose, op->idx,
		 kind_verbs[op->kind], op->len);
}

/* A READ or atomic completed: check what landed, and the guards. */
static void check_landing(struct tqp *t, const struct op *op)
{
	uint32_t slot = op->idx % c.p.sq_depth;
	const struct seg *sg = op->lseg;
	uint64_t got, exp = op->orig;
	char what[96];

	describe(what, sizeof(what), t, op, "my");
	if (op->kind == K_READ && op->len && inject(INJ_READ))
		scatter_flip(t, slot, sg, op->nlseg, op->len / 2);
	if (op->nlseg && inject(INJ_GUARD))
		slot_addr(t, sg[op->nlseg - 1].mr, slot)[sg[op->nlseg - 1].off + sg[op->nlseg - 1].len] ^= 1;
	if (kind_is_atomic(op->kind)) {
		if (inject(INJ_ATOMIC))
			exp ^= 1;
		memcpy(&got, slot_addr(t, sg[0].mr, slot) + sg[0].off, 8);
		if (got != exp)
			mismatch("%s: returned original value 0x%016llx, expected 0x%016llx",
				 what, (unsigned long long)got, (unsigned long long)exp);
	} else {
		build_payload(op, c.tmp_exp);
		check_content(t, slot, sg, op->nlseg, op->len, 0, c.tmp_exp, op->len,
			      true, what);
	}
	check_guards(t, slot, sg, op->nlseg, what);
	refill(t, slot, sg, op->nlseg);
}

/* Ops up to @upto completed (the unsignaled ones implicitly). */
static void tx_complete(struct tqp *t, uint32_t upto)
{
	const struct op *op;

	for (; t->done <= upto; t->done++) {
		op = &t->ring[t->done % c.p.sq_depth];
		if (op->kind == K_READ || kind_is_atomic(op->kind))
			check_landing(t, op);
		t->tx_count[op->kind]++;
		c.tx_bytes[op->kind] += op->len;
	}
}

static uint32_t next_signaled(const struct tqp *t)
{
	uint32_t k;

	for (k = t->done; k < t->posted; k++)
		if (t->ring[k % c.p.sq_depth].signaled)
			return k;
	return k;
}

void on_send_wc(const struct ibv_wc *wc)
{
	uint32_t q = wc->wr_id >> 32, k = (uint32_t)wc->wr_id, first;
	const struct op *op;
	struct tqp *t;

	if (q >= c.p.qps)
		fatal("send completion with a wr_id I never posted: 0x%llx",
		      (unsigned long long)wc->wr_id);
	t = &c.qp[q];
	op = &t->ring[k % c.p.sq_depth];
	if (wc_flushed(wc, "qp %u my op %u", q, k))
		return;
	if (wc->status != IBV_WC_SUCCESS)
		fatal("qp %u my op %u %s len %u: completion status %s (%d), vendor_err 0x%x",
		      q, k, k >= t->done && k < t->posted ? kind_verbs[op->kind] : "?",
		      op->len, ibv_wc_status_str(wc->status), wc->status, wc->vendor_err);
	if (wc->qp_num != t->qp->qp_num)
		mismatch("qp %u my op %u: completion has qp_num 0x%x, expected 0x%x",
			 q, k, wc->qp_num, t->qp->qp_num);
	if (k < t->done || k >= t->posted)
		fatal("qp %u: completion for my op %u, but ops %u..%u are outstanding",
		      q, k, t->done, t->posted);
	first = next_signaled(t);
	if (k != first)
		mismatch("qp %u: completion of my op %u came before that of op %u (out of order)",
			 q, k, first);
	if (wc->opcode != wc_opcodes[op->kind])
		mismatch("qp %u my op %u %s: completion opcode %d, expected %d",
			 q, k, kind_verbs[op->kind], wc->opcode, wc_opcodes[op->kind]);
	if ((op->kind == K_READ || kind_is_atomic(op->kind)) && wc->byte_len != op->len)
		mismatch("qp %u my op %u %s: completion byte_len %u, expected %u",
			 q, k, kind_verbs[op->kind], wc->byte_len, op->len);
	tx_complete(t, k);
}
