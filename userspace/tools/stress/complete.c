// SPDX-License-Identifier: GPL-2.0 OR Linux-OpenIB
/*
 * Completions: every successful operation checked byte for byte, every
 * receive matched with the message it must hold, errors judged.
 */
#include "stress.h"

/* ------------------------------------------------------------------ */
/* Completions */

/* An operation failed: expected on a pair an event touched. */
static void op_error(struct pair *p, const char *who, const char *what,
		     enum ibv_wc_status status)
{
	st.errors++;
	if (!p->disturbed && !p->dead && !p->sqd_pending &&
	    tool_now_ms() > p->grace_until && !removal_explains())
		fail("pair %u (%s): %s %s: %s, and no event touched the pair "
		     "(but %u SQD dances since it was built, the last to IPv%d)",
		     p->n, kind_names[p->kind], who, what,
		     ibv_wc_status_str(status), p->dances, p->v6[0] ? 6 : 4);
	if (p->sqd_pending && p->sqd_strict && !p->dead && !removal_explains())
		fail("pair %u (%s): after RTS -> SQD (both SQs drained) -> SQD "
		     "(a new path, IPv%d) -> RTS, %s %s: %s: the traffic did not "
		     "resume", p->n, kind_names[p->kind], p->v6[0] ? 6 : 4, who,
		     what, ibv_wc_status_str(status));
	if (p->sqd_pending) {
		st.sqd_failed++;
		note("pair %u: the traffic failed after SQD: %s %s: %s", p->n,
		     who, what, ibv_wc_status_str(status));
		p->sqd_pending = 0;
		p->disturbed = true;
		p->disturbed_at = tool_now_ms();
	}
	p->dead = true;
}

static void mismatch(struct pair *p, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));
static void mismatch(struct pair *p, const char *fmt, ...)
{
	va_list ap;

	mismatches++;
	failures++;
	printf("FAIL: pair %u (%s): ", p->n, kind_names[p->kind]);
	va_start(ap, fmt);
	vprintf(fmt, ap);
	va_end(ap);
	putchar('\n');
}

void verified(struct pair *p, uint32_t bytes, int side)
{
	st.verified++;
	st.bytes += bytes;
	p->ok_since_build = true;
	if (p->sqd_pending & side) {
		p->sqd_pending &= ~side;
		if (!p->sqd_pending) {
			st.sqd_resumed++;
			note("pair %u: the traffic resumed after SQD", p->n);
		}
	}
}

/* A requester operation completed successfully: check what it did. */
static void check_a(struct pair *p, unsigned int i, const struct op *o)
{
	const uint8_t *t;
	uint64_t v, res;
	long d;

	switch (o->kind) {
	case OP_WRITE:
	case OP_WRITE_IMM:
		if (p->type != IBV_QPT_RC) {
			st.unverified++;	/* UC: done when sent */
			return;
		}
		t = p->btbuf + B_WDST + i * SLOT;
		d = diff(o->id, t, o->len);
		if (d >= 0)
			mismatch(p, "WRITE %" PRIu64 " of %u bytes%s: byte %ld is "
				 "wrong at the responder", o->id, o->len,
				 o->mw ? " through the window" : "", d);
		break;
	case OP_READ:
		t = p->abuf + A_RDST + i * SLOT;
		if (memcmp(t, p->btbuf + B_RSRC + i * SLOT, o->len))
			mismatch(p, "READ %" PRIu64 " of %u bytes%s: the bytes "
				 "differ from the responder's", o->id, o->len,
				 o->mw ? " through the window" : "");
		break;
	case OP_CAS:
	case OP_FADD:
	case OP_AWRITE:
		memcpy(&v, p->btbuf + B_ATGT + i * 8, 8);
		memcpy(&res, p->abuf + A_ARES + i * 8, 8);
		if (o->kind != OP_AWRITE && res != o->old)
			mismatch(p, "%s %" PRIu64 " returned %#" PRIx64 ", the "
				 "target held %#" PRIx64, op_names[o->kind],
				 o->id, res, o->old);
		if (v != (o->kind == OP_CAS ? (o->hit ? o->arg : o->old) :
			  o->kind == OP_FADD ? o->old + o->arg : o->arg))
			mismatch(p, "%s %" PRIu64 " left %#" PRIx64 " in the target",
				 op_names[o->kind], o->id, v);
		break;
	default:
		break;		/* SENDs: checked where they are received */
	}
	verified(p, o->len, 1);
}

/* Find the message a receive holds: in order on RC, by id on UC/UD. */
static bool fifo_find(struct pair *p, struct fifo *f, uint64_t id, bool by_imm,
		      struct expect *out)
{
	unsigned int k;

	if (p->type == IBV_QPT_RC) {
		if (f->head == f->tail)
			return false;
		*out = f->e[f->head++ % FIFO_LEN];
		return true;
	}
	for (k = f->head; k != f->tail; k++) {
		struct expect *e = &f->e[k % FIFO_LEN];

		if (by_imm ? (uint32_t)e->id == (uint32_t)id : e->id == id) {
			f->got[f->ngot++ % FIFO_LEN] = e->id;
			st.lost += k - f->head;
			for (; f->head != k; f->head++)
				f->skipped[f->nskipped++ % FIFO_LEN] =
					f->e[f->head % FIFO_LEN];
			*out = *e;
			f->head = k + 1;
			return true;
		}
	}
	/* Not lost after all: overtaken. */
	for (k = 0; k < FIFO_LEN && k < f->nskipped; k++) {
		struct expect *e = &f->skipped[k];

		if (e->id && (by_imm ? (uint32_t)e->id == (uint32_t)id :
			      e->id == id)) {
			st.lost--;
			st.reordered++;
			*out = *e;
			f->got[f->ngot++ % FIFO_LEN] = e->id;
			e->id = 0;
			return true;
		}
	}
	return false;
}

static unsigned int inject_seen;

/* A receive completed successfully: the message, exactly. */
static void check_recv(struct pair *p, struct fifo *f, const struct ibv_wc *wc,
		       const uint8_t *buf, const char *who, int side)
{
	uint32_t off = p->type == IBV_QPT_UD ? GRH_SIZE : 0;
	bool imm = wc->wc_flags & IBV_WC_WITH_IMM;
	uint64_t id = 0;
	struct expect e;
	long d;

	if (wc->opcode == IBV_WC_RECV_RDMA_WITH_IMM)
		id = ntohl(wc->imm_data);
	else if (wc->byte_len >= off + 8)
		memcpy(&id, buf + off, 8);
	if (!fifo_find(p, f, id, wc->opcode == IBV_WC_RECV_RDMA_WITH_IMM, &e)) {
		unsigned int k;

		for (k = 0; k < FIFO_LEN && k < f->ngot; k++)
			if (f->got[k] == id ||
			    (wc->opcode == IBV_WC_RECV_RDMA_WITH_IMM &&
			     (uint32_t)f->got[k] == (uint32_t)id))
				break;
		mismatch(p, "%s received %s (id %" PRIu64 ", %u bytes, opcode "
			 "%d)", who, k < FIFO_LEN && k < f->ngot ?
			 "a message a second time" : "a message no one sent",
			 id, wc->byte_len, wc->opcode);
		return;
	}
	if (e.kind == OP_WRITE_IMM) {
		if (wc->opcode != IBV_WC_RECV_RDMA_WITH_IMM || !imm ||
		    ntohl(wc->imm_data) != (uint32_t)e.id)
			mismatch(p, "%s: WRITE_WITH_IMM %" PRIu64 " completed as "
				 "opcode %d, imm %s %#x", who, e.id, wc->opcode,
				 imm ? "yes" : "no", ntohl(wc->imm_data));
		else
			verified(p, 0, side);
		return;
	}
	if (wc->opcode != IBV_WC_RECV || imm != (e.kind == OP_SEND_IMM) ||
	    (imm && ntohl(wc->imm_data) != (uint32_t)e.id)) {
		mismatch(p, "%s: %s %" PRIu64 " completed as opcode %d, imm %s",
			 who, op_names[e.kind], e.id, wc->opcode,
			 imm ? "yes" : "no");
		return;
	}
	if (wc->byte_len != off + e.len) {
		mismatch(p, "%s: %s %" PRIu64 ": %u bytes received, %u sent", who,
			 op_names[e.kind], e.id, wc->byte_len - off, e.len);
		return;
	}
	/* --inject data: one byte of the 100th long message goes bad. */
	if (inject_data && e.len > 100 && ++inject_seen == 100)
		((uint8_t *)buf)[off + e.len - 1] ^= 0x20;
	d = diff(e.id, buf + off, e.len);
	if (d >= 0) {
		mismatch(p, "%s: %s %" PRIu64 " of %u bytes: byte %ld is wrong",
			 who, op_names[e.kind], e.id, e.len, d);
		return;
	}
	verified(p, e.len, side);
}

/* A receive of the requester (@a) or of the responder completed. */
static void recv_done(struct pair *p, const struct ibv_wc *wc,
		      unsigned int slot, bool a)
{
	const char *who = a ? "the requester" : "the responder";

	if (wc->status != IBV_WC_SUCCESS) {
		op_error(p, who, "receive", wc->status);
		return;
	}
	if (a)
		check_recv(p, &p->to_a, wc, p->abuf + A_RECV + slot * RSLOT,
			   who, 2);
	else
		check_recv(p, &p->to_b, wc, p->brbuf + B_RECV + slot * RSLOT,
			   who, 1);
	if (!p->dead)
		(a ? post_recv_a : post_recv_b)(p, slot);
}

/*
 * The operation in flight (of @ops, @depth slots, wr_id type @type) that
 * @wc completes; NULL, reported, if it is none.
 */
static struct op *op_of(struct pair *p, const struct ibv_wc *wc,
			struct op *ops, unsigned int depth, uint64_t type,
			const char *whose)
{
	struct op *o = &ops[(wc->wr_id & 0xff) % depth];

	if ((wc->wr_id & W_TYPE) != type || o->id != (wc->wr_id & ~W_TYPE) >> 8) {
		mismatch(p, "%s CQ gave wr_id %#" PRIx64 " (%s), which is not "
			 "in flight", whose, wc->wr_id,
			 ibv_wc_status_str(wc->status));
		return NULL;
	}
	return o;
}

/* The completions of the requester (@a) or of the responder. */
static void poll_side(struct pair *p, bool a)
{
	struct ibv_cq *cq = a ? p->acq : p->bcq;
	const char *who = a ? "the requester" : "the responder";
	struct ibv_wc wc[16];
	int i, n;

	if (!cq)
		return;
	n = ibv_poll_cq(cq, 16, wc);
	for (i = 0; i < n; i++) {
		uint64_t t = wc[i].wr_id & W_TYPE;
		unsigned int slot = wc[i].wr_id & 0xff;
		struct op *o;

		if (!a && (t == W_BIND || t == W_INV))
			continue;	/* the window's: events look at them */
		if (t == (a ? W_ARECV : W_BRECV)) {
			recv_done(p, &wc[i], slot, a);
			continue;
		}
		o = a ? op_of(p, &wc[i], p->aop, DEPTH, W_AOP, "the requester's") :
			op_of(p, &wc[i], p->bop, BDEPTH, W_BOP, "the responder's");
		if (!o)
			continue;
		if (wc[i].status != IBV_WC_SUCCESS)
			op_error(p, who, op_names[o->kind], wc[i].status);
		else if (a)
			check_a(p, slot, o);
		else
			verified(p, 0, 2);
		o->id = 0;
	}
}

void poll_a(struct pair *p)
{
	poll_side(p, true);
}

void poll_b(struct pair *p)
{
	poll_side(p, false);
}

/* The operations of @p still in flight. */
unsigned int in_flight(const struct pair *p)
{
	unsigned int k, n = 0;

	for (k = 0; k < DEPTH; k++)
		n += !!p->aop[k].id;
	for (k = 0; k < BDEPTH; k++)
		n += !!p->bop[k].id;
	return n;
}

/* Both sides' completions; the operations still in flight. */
unsigned int poll_pair(struct pair *p)
{
	poll_a(p);
	poll_b(p);
	return in_flight(p);
}
