// SPDX-License-Identifier: GPL-2.0 OR Linux-OpenIB
/*
 * Ring operations: WQEs built, mutated and injected past libsroce,
 * producer and consumer indices moved, the kernel's indices scribbled on,
 * doorbells at random.
 */
#include "ringfuzz.h"

/* Ring operations */

/* Every opcode, valid or not, that WQEs are written with. */
const uint32_t wqe_opcodes[NUM_WQE_OPCODES] = {
	IBV_WR_RDMA_WRITE, IBV_WR_RDMA_WRITE_WITH_IMM, IBV_WR_SEND,
	IBV_WR_SEND_WITH_IMM, IBV_WR_RDMA_READ,
	IBV_WR_ATOMIC_CMP_AND_SWP, IBV_WR_ATOMIC_FETCH_AND_ADD,
	IBV_WR_LOCAL_INV, IBV_WR_BIND_MW, IBV_WR_SEND_WITH_INV,
	IBV_WR_TSO, IBV_WR_DRIVER1, 12, 13, SROCE_WR_FLUSH,
	SROCE_WR_ATOMIC_WRITE, 16, 17, 0x20 /* kernel REG_MR */, 255,
	0xffffffff,
};

static uint32_t pick_opcode(void)
{
	if (chance(4))
		return tool_rng_next(&R);
	return wqe_opcodes[rnd(NUM_WQE_OPCODES)];
}

/* Every combination of the four flags, now and then any bits at all. */
static uint32_t pick_flags(void)
{
	return chance(10) ? (uint32_t)tool_rng_next(&R) : rnd(16);
}

/* A local key: F's MR, a control MR of another PD, nonsense. */
static uint32_t pick_lkey(void)
{
	switch (rnd(8)) {
	case 0:
		return ctl.mr_a->lkey;
	case 1:
		return tool_rng_next(&R);
	case 2:
		return w.mr_f->lkey ^ (1 + rnd(255));
	default:
		return w.mr_f->lkey;
	}
}

/* A remote key: P's MR, a control MR of another PD, windows, nonsense. */
static uint32_t pick_rkey(void)
{
	switch (rnd(8)) {
	case 0:
		return ctl.mr_b->rkey;
	case 1:
		return tool_rng_next(&R);
	case 2:
		return w.mw1->rkey;
	case 3:
		return w.mw2->rkey;
	default:
		return w.mr_p->rkey;
	}
}

static uint64_t pick_laddr(uint32_t len)
{
	switch (rnd(10)) {
	case 0:
		return tool_rng_next(&R);
	case 1:
		return (uintptr_t)w.buf_f + F_BUF_SIZE - rnd(64);
	case 2:
		return (uintptr_t)ctl.buf_a + rnd(C_BUF_SIZE);
	default:
		return (uintptr_t)w.buf_f + rnd(F_BUF_SIZE - (len < 4096 ? len : 4096));
	}
}

static uint64_t pick_raddr(uint32_t len, bool aligned)
{
	uint64_t a;

	switch (rnd(10)) {
	case 0:
		return tool_rng_next(&R);
	case 1:
		return p_tgt(P_TGT_SIZE - rnd(64));
	case 2:
		return (uintptr_t)ctl.buf_b + rnd(C_BUF_SIZE);
	default:
		a = p_tgt(rnd(P_TGT_SIZE - (len < 4096 ? len : 4096)));
		return aligned ? a & ~7ULL : a;
	}
}

static size_t sge_room(const struct ring *r, size_t hdr)
{
	return (r->es - hdr) / sizeof(struct sroce_sge);
}

/* A send WQE of @op, mostly plausible, in @e (one slot, zeroed here). */
static void build_send(struct fpair *fp, uint8_t *e, uint32_t op)
{
	struct sroce_send_wqe *q = (void *)e;
	uint32_t len = chance(15) ? 0 : rnd(2049), nsge = 1, i;

	memset(e, 0, fp->sq.es);
	if (op > SROCE_WR_ATOMIC_WRITE) {
		tool_rng_fill(&R, e, fp->sq.es);
		q->opcode = op;
		q->wr_id = TAG_RAW | ++fp->wr_seq;
		return;
	}
	q->wr_id = TAG_RAW | ++fp->wr_seq;
	q->opcode = op;
	q->send_flags = (chance(70) ? SROCE_SEND_SIGNALED : 0) |
			(chance(10) ? SROCE_SEND_FENCE : 0) |
			(chance(10) ? SROCE_SEND_SOLICITED : 0);
	q->ex = tool_rng_next(&R);
	if (fp->type == IBV_QPT_UD) {
		if (len > 1024)
			len = rnd(1025);
		q->wr.ud.ah_num = chance(90) ? fp->ah_num : tool_rng_next(&R);
		q->wr.ud.remote_qpn = chance(90) ? fp->pqp->qp_num : rnd(1 << 24);
		q->wr.ud.remote_qkey = chance(90) ? QKEY : tool_rng_next(&R);
	}
	switch (op) {
	case IBV_WR_RDMA_WRITE:
	case IBV_WR_RDMA_WRITE_WITH_IMM:
	case IBV_WR_RDMA_READ:
		q->wr.rdma.remote_addr = pick_raddr(len, false);
		q->wr.rdma.rkey = pick_rkey();
		break;
	case IBV_WR_ATOMIC_CMP_AND_SWP:
	case IBV_WR_ATOMIC_FETCH_AND_ADD:
		len = chance(90) ? 8 : rnd(16);
		q->wr.atomic.remote_addr = pick_raddr(8, chance(90));
		q->wr.atomic.rkey = pick_rkey();
		q->wr.atomic.compare_add = tool_rng_next(&R);
		q->wr.atomic.swap = tool_rng_next(&R);
		break;
	case IBV_WR_LOCAL_INV:
	case IBV_WR_SEND_WITH_INV:
		q->ex = pick_rkey();
		break;
	case IBV_WR_BIND_MW:
		q->wr.bind_mw.mw_rkey = chance(50) ? w.mw1->rkey : w.mw2->rkey;
		q->ex = chance(50) ? q->wr.bind_mw.mw_rkey :
			ibv_inc_rkey(q->wr.bind_mw.mw_rkey);
		q->wr.bind_mw.addr = pick_laddr(0);
		q->wr.bind_mw.length = chance(30) ? 0 : chance(80) ? rnd(8192) :
				       tool_rng_next(&R);
		q->wr.bind_mw.mr_lkey = pick_lkey();
		q->wr.bind_mw.access = chance(80) ? rnd(16) : tool_rng_next(&R);
		return;
	case SROCE_WR_FLUSH:
		q->wr.flush.remote_addr = pick_raddr(len, false);
		q->wr.flush.length = chance(90) ? len : tool_rng_next(&R);
		q->wr.flush.rkey = pick_rkey();
		q->wr.flush.type = chance(80) ? 1 + rnd(2) : rnd(256);
		q->wr.flush.level = chance(80) ? rnd(2) : rnd(256);
		return;
	case SROCE_WR_ATOMIC_WRITE:
		q->wr.atomic_write.remote_addr = pick_raddr(8, chance(90));
		q->wr.atomic_write.rkey = pick_rkey();
		tool_rng_fill(&R, q->wr.atomic_write.data, 8);
		return;
	default:
		break;
	}
	if (op != IBV_WR_LOCAL_INV && chance(20) && len <= F_INLINE &&
	    op != IBV_WR_RDMA_READ && op != IBV_WR_ATOMIC_CMP_AND_SWP &&
	    op != IBV_WR_ATOMIC_FETCH_AND_ADD) {
		q->send_flags |= SROCE_SEND_INLINE;
		q->inline_len = len;
		tool_rng_fill(&R, q->sge, len);
		return;
	}
	if (op == IBV_WR_LOCAL_INV)
		return;
	if (chance(15))
		nsge = 2 + rnd(sge_room(&fp->sq, sizeof(*q)) - 1);
	q->num_sge = nsge;
	for (i = 0; i < nsge; i++) {
		uint32_t l = i ? rnd(512) : len;

		q->sge[i].addr = pick_laddr(l);
		q->sge[i].length = l;
		q->sge[i].lkey = pick_lkey();
		if (op == IBV_WR_ATOMIC_CMP_AND_SWP ||
		    op == IBV_WR_ATOMIC_FETCH_AND_ADD)
			q->sge[i].addr &= ~7ULL;
	}
}

/* Change one field of the send WQE in @e, in place, in the ring. */
static void mutate_send(struct fpair *fp, uint8_t *e)
{
	size_t nsge = sge_room(&fp->sq, sizeof(struct sroce_send_wqe));
	size_t sge = sizeof(struct sroce_send_wqe) +
		     rnd(nsge) * sizeof(struct sroce_sge);
	size_t wr = offsetof(struct sroce_send_wqe, wr);
	uint64_t v64;
	uint32_t v;

	switch (rnd(13)) {
	case 0:
		v = pick_opcode();
		memcpy(e + offsetof(struct sroce_send_wqe, opcode), &v, 4);
		break;
	case 1:
		v = pick_flags();
		memcpy(e + offsetof(struct sroce_send_wqe, send_flags), &v, 4);
		break;
	case 2:
		v = chance(70) ? rnd(nsge + 3) : tool_rng_next(&R);
		memcpy(e + offsetof(struct sroce_send_wqe, num_sge), &v, 4);
		break;
	case 3:
		v = chance(70) ? rnd(2 * F_INLINE + 16) : tool_rng_next(&R);
		memcpy(e + offsetof(struct sroce_send_wqe, inline_len), &v, 4);
		break;
	case 4:
		v64 = pick_laddr(rnd(4096));
		memcpy(e + sge + offsetof(struct sroce_sge, addr), &v64, 8);
		break;
	case 5:
		v = chance(60) ? rnd(8192) : chance(50) ? 0xffffffff : tool_rng_next(&R);
		memcpy(e + sge + offsetof(struct sroce_sge, length), &v, 4);
		break;
	case 6:
		v = pick_lkey();
		memcpy(e + sge + offsetof(struct sroce_sge, lkey), &v, 4);
		break;
	case 7:
		v = chance(50) ? fp->ah_num + rnd(3) - 1 : tool_rng_next(&R);
		memcpy(e + offsetof(struct sroce_send_wqe, wr.ud.ah_num), &v, 4);
		break;
	case 8:
		v = tool_rng_next(&R);
		memcpy(e + wr + 4 * rnd(8), &v, 4);
		break;
	case 9:
		v = pick_rkey();
		memcpy(e + offsetof(struct sroce_send_wqe, wr.rdma.rkey), &v, 4);
		break;
	case 10:
		v = chance(50) ? pick_rkey() : tool_rng_next(&R);
		memcpy(e + offsetof(struct sroce_send_wqe, ex), &v, 4);
		break;
	case 11:
		v = tool_rng_next(&R);
		memcpy(e + offsetof(struct sroce_send_wqe, xrc_remote_srqn), &v, 4);
		break;
	default:
		v64 = tool_rng_next(&R);
		memcpy(e, &v64, 8);
		break;
	}
}

static void mutate_recv(struct fpair *fp, uint8_t *e)
{
	size_t nsge = sge_room(&fp->rq, sizeof(struct sroce_recv_wqe));
	size_t sge = sizeof(struct sroce_recv_wqe) +
		     rnd(nsge) * sizeof(struct sroce_sge);
	uint64_t v64;
	uint32_t v;

	switch (rnd(5)) {
	case 0:
		v = chance(40) ? rnd(nsge + 3) : chance(50) ? 1000 : tool_rng_next(&R);
		memcpy(e + offsetof(struct sroce_recv_wqe, num_sge), &v, 4);
		break;
	case 1:
		v64 = pick_laddr(rnd(4096));
		memcpy(e + sge + offsetof(struct sroce_sge, addr), &v64, 8);
		break;
	case 2:
		v = chance(60) ? rnd(8192) : tool_rng_next(&R);
		memcpy(e + sge + offsetof(struct sroce_sge, length), &v, 4);
		break;
	case 3:
		v = pick_lkey();
		memcpy(e + sge + offsetof(struct sroce_sge, lkey), &v, 4);
		break;
	default:
		v = tool_rng_next(&R);
		memcpy(e + offsetof(struct sroce_recv_wqe, reserved), &v, 4);
		break;
	}
}

static void build_recv(struct fpair *fp, uint8_t *e)
{
	struct sroce_recv_wqe *q = (void *)e;

	memset(e, 0, fp->rq.es);
	q->wr_id = TAG_RAW | ++fp->wr_seq;
	if (chance(10)) {
		tool_rng_fill(&R, e + 8, fp->rq.es - 8);
		return;
	}
	q->num_sge = 1;
	q->sge[0].addr = chance(85) ? (uintptr_t)w.buf_f + F_RECV_OFF +
				      (fp->f_slot++ % 16) * F_RECV_SLOT :
				      pick_laddr(F_RECV_SLOT);
	q->sge[0].length = F_RECV_SLOT;
	q->sge[0].lkey = chance(85) ? w.mr_f->lkey : pick_lkey();
}

/* A new value for a producer index (or the CQ's consumer index). */
static uint32_t pick_index(struct ring *r, uint32_t other)
{
	switch (rnd(8)) {
	case 0:
		return r->shadow + 1 + rnd(3);		/* forwards */
	case 1:
		return r->shadow - 1 - rnd(3);		/* backwards */
	case 2:
		return other + r->num + 1 + rnd(4);	/* past the ring */
	case 3:
		return other - 1 - rnd(3);		/* behind the other */
	case 4:
		return tool_rng_next(&R);
	case 5:
		return r->shadow + r->num;		/* a lap ahead */
	case 6:
		return other + r->num;			/* exactly full */
	default:
		return r->shadow;			/* put back */
	}
}

static void op_note(struct fpair *fp, const char *what, struct ring *r)
{
	fp->ring_ops++;
	beat("%s: %s on %s of QP %u (producer %u consumer %u, libsroce's %u)",
	     rep.cur, what, r->name, fp->qp->qp_num, load_idx(&r->hdr->producer),
	     load_idx(&r->hdr->consumer), r->shadow);
}

/*
 * Move the producer index of @r, F's SQ or its RQ (or SRQ), and now and
 * then (@percent) ring its doorbell @ring.
 */
static void wq_move(struct fpair *fp, struct ring *r, unsigned int percent,
		    void (*ring)(struct fpair *))
{
	uint32_t v = pick_index(r, load_idx(&r->hdr->consumer));

	op_note(fp, "producer move", r);
	if (verbose)
		printf("  to %u\n", v);
	store_idx(&r->hdr->producer, v);
	r->moved |= v != r->shadow;
	if (chance(percent))
		ring(fp);
}

void sq_move(struct fpair *fp)
{
	wq_move(fp, &fp->sq, 60, ring_sq);
}

/* An index near the live part of a work queue: consumer - 1 to producer + 1. */
static uint32_t pick_live(struct ring *r)
{
	uint32_t cons = load_idx(&r->hdr->consumer), d = r->shadow - cons;

	if (d > r->num)
		d = r->num;
	return cons - 1 + rnd(d + 3);
}

void sq_rewrite(struct fpair *fp)
{
	uint8_t *e = slot(&fp->sq, pick_live(&fp->sq));
	unsigned int i, n = 1 + rnd(3);

	op_note(fp, "WQE rewrite", &fp->sq);
	for (i = 0; i < n; i++)
		mutate_send(fp, e);
	if (chance(50))
		ring_sq(fp);
}

/*
 * A slot the kernel must not read: past the producer, within a ring's
 * length of the consumer. libsroce writes its next entries there.
 */
static bool pick_free(struct ring *r, uint32_t *i)
{
	uint32_t cons = load_idx(&r->hdr->consumer), used = r->shadow - cons;

	if (used >= r->num)
		return false;
	*i = r->shadow + rnd(r->num - used);
	return true;
}

/* Garbage in a free slot of @r; now and then (@percent) its doorbell. */
static void wq_rewrite_free(struct fpair *fp, struct ring *r,
			    unsigned int percent, void (*ring)(struct fpair *))
{
	uint32_t i;

	if (!pick_free(r, &i))
		return;
	op_note(fp, "free slot scribble", r);
	tool_rng_fill(&R, slot(r, i), r->es);
	if (chance(percent))
		ring(fp);
}

void sq_rewrite_free(struct fpair *fp)
{
	wq_rewrite_free(fp, &fp->sq, 50, ring_sq);
}

void rq_rewrite_free(struct fpair *fp)
{
	wq_rewrite_free(fp, &fp->rq, 30, ring_rq);
}

static void build_any_send(struct fpair *fp, uint8_t *e)
{
	build_send(fp, e, pick_opcode());
}

/*
 * Write 1 to 3 WQEs made by @build into @r past libsroce, and publish
 * them; now and then (@percent) ring its doorbell.
 */
static void wq_inject(struct fpair *fp, struct ring *r,
		      void (*build)(struct fpair *, uint8_t *),
		      unsigned int percent, void (*ring)(struct fpair *))
{
	uint32_t p = chance(70) ? r->shadow : load_idx(&r->hdr->producer);
	unsigned int i, n = 1 + rnd(3);
	uint8_t e[4096];

	op_note(fp, "WQE injection", r);
	for (i = 0; i < n; i++) {
		build(fp, e);
		memcpy(slot(r, p + i), e, r->es);
	}
	store_idx(&r->hdr->producer, p + n);
	r->moved = true;
	if (chance(percent))
		ring(fp);
}

void sq_inject(struct fpair *fp)
{
	wq_inject(fp, &fp->sq, build_any_send, 80, ring_sq);
}

void rq_move(struct fpair *fp)
{
	wq_move(fp, &fp->rq, 40, ring_rq);
}

void rq_rewrite(struct fpair *fp)
{
	uint8_t *e = slot(&fp->rq, pick_live(&fp->rq));

	op_note(fp, "WQE rewrite", &fp->rq);
	mutate_recv(fp, e);
	if (chance(30))
		ring_rq(fp);
}

void rq_inject(struct fpair *fp)
{
	wq_inject(fp, &fp->rq, build_recv, 30, ring_rq);
}

void cq_move(struct fpair *fp)
{
	uint32_t v = pick_index(&fp->cqr, load_idx(&fp->cqr.hdr->producer));

	op_note(fp, "consumer move", &fp->cqr);
	if (verbose)
		printf("  to %u\n", v);
	store_idx(&fp->cqr.hdr->consumer, v);
	fp->cqr.moved |= v != fp->cqr.shadow;
	/* Something to complete into it. */
	if (chance(50))
		p_post_send(fp);
	else if (chance(50))
		f_post_send(fp);
}

/* The CQ's consumer a little behind where libsroce has it. */
void cq_nudge(struct fpair *fp)
{
	op_note(fp, "consumer nudge", &fp->cqr);
	store_idx(&fp->cqr.hdr->consumer, fp->cqr.shadow - 1 - rnd(3));
	fp->cqr.moved = true;
}

/*
 * Scribble on an index the kernel owns (or a ring's flags), ring a
 * doorbell, and put the old value back unless the kernel wrote a new one.
 */
void kernel_scribble(struct fpair *fp)
{
	struct ring *rings[] = { &fp->sq, &fp->rq, &fp->cqr };
	unsigned int k = rnd(3);
	struct ring *r = rings[k];
	uint32_t *p = chance(25) ? &r->hdr->flags : kernel_idx(r, k == 2);
	uint32_t old = load_idx(p), v = chance(50) ? old + rnd(2 * r->num) -
					     r->num : (uint32_t)tool_rng_next(&R);

	op_note(fp, p == &r->hdr->flags ? "flags scribble" :
		"kernel index scribble", r);
	store_idx(p, v);
	if (k == 1)
		ring_rq(fp);
	else
		ring_sq(fp);
	__atomic_compare_exchange_n(p, &v, old, false, __ATOMIC_ACQ_REL,
				    __ATOMIC_ACQUIRE);
}

void doorbell_any(struct fpair *fp)
{
	int err;

	switch (rnd(5)) {
	case 0:
		ring_rq(fp);
		break;
	case 1:
		/* A work request in the doorbell: sroce must refuse it. */
		beat("%s: POST_SEND with a work request on QP %u", rep.cur,
		     fp->qp->qp_num);
		err = db_send(fp->qp, true);
		fp->doorbells++;
		if (err != EINVAL)
			fail("POST_SEND of a WR on user QP %u: %s, expected EINVAL",
			     fp->qp->qp_num, tool_errname(err));
		break;
	default:
		ring_sq(fp);
		break;
	}
}
