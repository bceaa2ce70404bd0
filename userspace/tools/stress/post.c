// SPDX-License-Identifier: GPL-2.0 OR Linux-OpenIB
/*
 * Posting: what each operation carries, picking an operation and a size,
 * and keeping the requester's and the responder's operations in flight.
 */
#include "stress.h"

/* ------------------------------------------------------------------ */
/* Posting */

/* The bytes an operation carries: its id first, then its pattern. */
static void fill(uint64_t id, uint8_t *p, uint32_t len)
{
	pattern(id, p, len);
	memcpy(p, &id, len < 8 ? len : 8);
}

/* Where @p differs from what fill() wrote for @id, or -1. */
long diff(uint64_t id, const uint8_t *p, uint32_t len)
{
	uint8_t want[SLOT];
	uint32_t i;

	fill(id, want, len);
	for (i = 0; i < len; i++)
		if (p[i] != want[i])
			return i;
	return -1;
}

static uint32_t mtu_bytes(enum ibv_mtu m)
{
	return 128U << m;
}

/* A size: 0, small, around a multiple of the MTU, or anything. */
static uint32_t pick_len(struct pair *p, uint32_t min)
{
	uint32_t mtu = mtu_bytes(dev_a.mtu < dev_b.mtu ? dev_a.mtu : dev_b.mtu);
	uint32_t max = p->type == IBV_QPT_UD ? mtu : SLOT, len;

	switch (rnd(4)) {
	case 0:
		len = rnd(16);
		break;
	case 1:
		len = mtu * (1 + rnd(max / mtu)) - 1 + rnd(3);
		break;
	default:
		len = rnd(max + 1);
		break;
	}
	if (len > max)
		len = max;
	return len < min ? min : len;
}

static bool needs_recv(enum op_kind k)
{
	return k == OP_SEND || k == OP_SEND_IMM || k == OP_WRITE_IMM;
}

static enum op_kind pick_op(struct pair *p)
{
	switch (p->type) {
	case IBV_QPT_UD:
		return rnd(2) ? OP_SEND : OP_SEND_IMM;
	case IBV_QPT_UC:
		return (enum op_kind)rnd(4);
	default:
		for (;;) {
			unsigned int k = rnd(OP_NR + 1);

			if (k == OP_NR) {	/* FLUSH: not in libibverbs 44.0 */
				st.skipped_flush++;
				continue;
			}
			if (k == OP_AWRITE && !p->aqpx)
				continue;
			return k;
		}
	}
}

static uint64_t b_addr(struct pair *p, uint32_t off)
{
	return (uintptr_t)p->btbuf + off;
}

/* Post one requester operation into slot @i; false if it was not. */
static bool post_a_one(struct pair *p, unsigned int i)
{
	struct op *o = &p->aop[i];
	struct ibv_sge sge = { .lkey = p->alkey };
	struct ibv_send_wr wr = { .sg_list = &sge, .num_sge = 1,
				  .send_flags = IBV_SEND_SIGNALED }, *bad;
	uint8_t *src = p->abuf + A_SRC + i * SLOT;
	uint32_t rkey = p->btrkey;
	uint64_t *tgt;
	int err;

	memset(o, 0, sizeof(*o));
	o->kind = pick_op(p);
	if (needs_recv(o->kind) && p->to_b.tail - p->to_b.head >= RQ_DEPTH - 1) {
		if (p->type == IBV_QPT_UD)
			return false;
		o->kind = OP_WRITE;
	}
	o->id = next_id++;
	o->len = pick_len(p, p->type == IBV_QPT_RC ? 0 : 8);
	wr.wr_id = W_AOP | o->id << 8 | i;
	sge.addr = (uintptr_t)src;
	sge.length = o->len;
	if (p->mw_rkey && !rnd(3) &&
	    (o->kind == OP_WRITE || o->kind == OP_WRITE_IMM || o->kind == OP_READ)) {
		o->mw = true;
		rkey = p->mw_rkey;
	}
	switch (o->kind) {
	case OP_SEND:
	case OP_SEND_IMM:
		fill(o->id, src, o->len);
		wr.opcode = o->kind == OP_SEND ? IBV_WR_SEND : IBV_WR_SEND_WITH_IMM;
		wr.imm_data = htonl((uint32_t)o->id);
		break;
	case OP_WRITE:
	case OP_WRITE_IMM:
		fill(o->id, src, o->len);
		wr.opcode = o->kind == OP_WRITE ? IBV_WR_RDMA_WRITE :
			    IBV_WR_RDMA_WRITE_WITH_IMM;
		wr.imm_data = htonl((uint32_t)o->id);
		wr.wr.rdma.remote_addr = b_addr(p, B_WDST + i * SLOT);
		wr.wr.rdma.rkey = rkey;
		break;
	case OP_READ:
		sge.addr = (uintptr_t)p->abuf + A_RDST + i * SLOT;
		memset(p->abuf + A_RDST + i * SLOT, 0xee, o->len);
		wr.opcode = IBV_WR_RDMA_READ;
		wr.wr.rdma.remote_addr = b_addr(p, B_RSRC + i * SLOT);
		wr.wr.rdma.rkey = rkey;
		break;
	default:
		/* Atomics: this slot's 8 bytes, with a value we know. */
		tgt = (uint64_t *)(p->btbuf + B_ATGT + i * 8);
		o->old = tool_rng_next(&rng);
		o->arg = tool_rng_next(&rng);
		*tgt = o->old;
		o->len = 8;
		sge.addr = (uintptr_t)p->abuf + A_ARES + i * 8;
		sge.length = 8;
		memset(p->abuf + A_ARES + i * 8, 0xee, 8);
		wr.wr.atomic.remote_addr = b_addr(p, B_ATGT + i * 8);
		wr.wr.atomic.rkey = rkey;
		if (o->kind == OP_CAS) {
			o->hit = rnd(4) != 0;
			wr.opcode = IBV_WR_ATOMIC_CMP_AND_SWP;
			wr.wr.atomic.compare_add = o->hit ? o->old : ~o->old;
			wr.wr.atomic.swap = o->arg;
		} else {
			wr.opcode = IBV_WR_ATOMIC_FETCH_AND_ADD;
			wr.wr.atomic.compare_add = o->arg;
		}
		break;
	}
	if (p->type == IBV_QPT_UD) {
		wr.wr.ud.ah = p->aah;
		wr.wr.ud.remote_qpn = p->bqp ? p->bqp->qp_num : 1;
		wr.wr.ud.remote_qkey = QKEY;
	}
	if (o->kind == OP_AWRITE) {
		ibv_wr_start(p->aqpx);
		p->aqpx->wr_id = wr.wr_id;
		p->aqpx->wr_flags = IBV_SEND_SIGNALED;
		ibv_wr_atomic_write(p->aqpx, rkey, wr.wr.atomic.remote_addr,
				    &o->arg);
		err = ibv_wr_complete(p->aqpx);
	} else {
		err = ibv_post_send(p->aqp, &wr, &bad);
	}
	if (err) {
		o->id = 0;
		if (err != ENOMEM && !removal_explains()) {
			fail("pair %u (%s): posting %s: %s", p->n,
			     kind_names[p->kind], op_names[o->kind], strerror(err));
			p->dead = true;
		}
		return false;
	}
	if (needs_recv(o->kind))
		fifo_push(&p->to_b, o->id, o->len, o->kind);
	st.ops++;
	st.by_op[o->kind]++;
	return true;
}

static bool post_b_one(struct pair *p, unsigned int i)
{
	struct op *o = &p->bop[i];
	uint8_t *src = p->brbuf + B_BSRC + i * SLOT;
	struct ibv_sge sge = { .addr = (uintptr_t)src, .lkey = p->brlkey };
	struct ibv_send_wr wr = { .sg_list = &sge, .num_sge = 1,
				  .send_flags = IBV_SEND_SIGNALED }, *bad;
	int err;

	if (p->to_a.tail - p->to_a.head >= RQ_DEPTH - 1)
		return false;
	memset(o, 0, sizeof(*o));
	o->kind = rnd(2) ? OP_SEND : OP_SEND_IMM;
	o->id = next_id++;
	o->len = pick_len(p, p->type == IBV_QPT_RC ? 0 : 8);
	fill(o->id, src, o->len);
	sge.length = o->len;
	wr.wr_id = W_BOP | o->id << 8 | i;
	wr.opcode = o->kind == OP_SEND ? IBV_WR_SEND : IBV_WR_SEND_WITH_IMM;
	wr.imm_data = htonl((uint32_t)o->id);
	if (p->type == IBV_QPT_UD) {
		wr.wr.ud.ah = p->bah;
		wr.wr.ud.remote_qpn = p->aqp ? p->aqp->qp_num : 1;
		wr.wr.ud.remote_qkey = QKEY;
	}
	err = ibv_post_send(p->bqp, &wr, &bad);
	if (err) {
		o->id = 0;
		if (err != ENOMEM && !removal_explains()) {
			fail("pair %u (%s): the responder's SEND: %s", p->n,
			     kind_names[p->kind], strerror(err));
			p->dead = true;
		}
		return false;
	}
	fifo_push(&p->to_a, o->id, o->len, o->kind);
	st.ops++;
	st.by_op[o->kind]++;
	return true;
}

void post_all(struct pair *p)
{
	unsigned int i;

	if (!p->alive || p->dead)
		return;
	for (i = 0; p->aqp && i < DEPTH; i++)
		if (!p->aop[i].id && !post_a_one(p, i))
			break;
	for (i = 0; p->bqp && i < BDEPTH; i++)
		if (!p->bop[i].id && !post_b_one(p, i))
			break;
}
