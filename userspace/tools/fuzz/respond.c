// SPDX-License-Identifier: GPL-2.0 OR Linux-OpenIB
/*
 * Generation of the other classes: responses (an orphan's answers),
 * UD and GSI datagrams, any-state, invalid and no-QP packets; addresses,
 * and committing a packet to the model.
 */
#include "fuzz.h"

/* ---------------------------------------------------------------------- */
/* Responses, datagrams, the rest. */

/* The right answer to an orphan's request at @psn (see the header). */
static void orphan_answer(struct gen *g, struct tqp *q, uint32_t psn)
{
	uint32_t kind = ((psn - q->upsn) & PSN_MASK) % ORPHAN_KINDS;
	uint8_t tr = transport_of(q);

	switch (kind) {
	case 0:
	case 1:
		fields_init(g, tr | OP_ACK, q->qpn, psn);
		break;
	case 2:
		fields_init(g, tr | OP_RRESP_ONLY, q->qpn, psn);
		set_paylen(g, ORPHAN_READ_LEN);
		break;
	default:
		fields_init(g, tr | OP_ATOMIC_ACK, q->qpn, psn);
		g->f.orig = rnd();
		break;
	}
	q->m.msn = psn_add(q->m.msn, 1);
	g->f.msn = q->m.msn;
}

/* An AETH syndrome: ACK, RNR NAK or NAK of any code, reserved ones. */
static uint8_t pick_syndrome(bool *fatal)
{
	switch (below(6)) {
	case 0:
		return below(32);			/* ACK, credits */
	case 1:
		return 0x20 | below(32);		/* RNR NAK, timer */
	case 2:
		return 0x60;				/* PSN sequence error */
	case 3:
		*fatal = true;
		return 0x60 | between(1, 4);		/* the fatal NAKs */
	case 4:
		return 0x40 | below(32);		/* reserved */
	default:
		*fatal = true;
		return 0x60 | between(5, 31);		/* reserved codes */
	}
}

static void gen_response(struct gen *g)
{
	static const uint8_t resp_ops[] = {
		OP_ACK, OP_ATOMIC_ACK, OP_RRESP_FIRST, OP_RRESP_MIDDLE,
		OP_RRESP_LAST, OP_RRESP_ONLY,
	};
	struct tqp *q = chance(700) ? pick_from(g_orphan, g->fam_idx, W_ANY) :
				      NULL;
	uint32_t psn;

	if (!q)
		q = pick_from(g_resp, g->fam_idx, W_ANY);
	if (!q)
		q = pick_from(g_orphan, g->fam_idx, W_ANY);
	if (!q)
		return gen_gsi(g);
	/*
	 * Only an orphan has requests outstanding: a response can kill it
	 * (then it is put back whole), and moves its model. Any other QP's
	 * completer ignores responses to nothing.
	 */
	if (q->orphan)
		touch(g, q);
	psn = q->m.upsn;
	if (q->orphan && chance(750)) {
		orphan_answer(g, q, psn);
		q->m.upsn = psn_add(psn, 1);
		return;
	}
	/* Anything a responder may send, near where the requester stands. */
	psn = psn_add(q->orphan ? psn : q->npsn, between(0, 8) - 4);
	fields_init(g, transport_of(q) | resp_ops[below(ARRAY_SIZE(resp_ops))],
		    q->qpn, psn);
	g->f.syndrome = chance(500) ? 0x1f : pick_syndrome(&g->fatal);
	g->f.orig = rnd();
	if (ops[g->f.opcode].flags & F_PAYLOAD)
		set_paylen(g, chance(300) ? q->mtu : pick_len(q->mtu, q->mtu + 64));
	g->fatal = q->orphan;
	if (chance(100))
		mutate_fields(g);
}

/* A UD datagram at @q: its Q_Key mostly, sizes around its MTU. */
static void gen_datagram(struct gen *g, struct tqp *q, uint32_t len)
{
	uint8_t op = chance(250) ? TR_UD | OP_SEND_ONLY_IMM : TR_UD | OP_SEND_ONLY;

	fields_init(g, op, q->qpn, below(1 << 24));
	g->f.qkey = chance(880) ? q->qkey : chance(500) ? rnd() :
		    q->qkey ^ 0x80000000;
	g->f.sqp = chance(700) ? between(1, 0xfff) : below(1 << 24);
	set_paylen(g, len);
}

static void gen_ud(struct gen *g)
{
	static const unsigned int w[] = { 55, 15, 15, 15 };
	struct tqp *q;
	uint32_t len, mtu;

	if (!g_ud.n)
		return gen_gsi(g);
	q = &tq[g_ud.idx[below(g_ud.n)]];
	mtu = q->mtu;
	switch (pick(w, ARRAY_SIZE(w))) {
	case 0:
		len = between(0, 512);
		break;
	case 1:
		len = between(mtu - 4, mtu + 4);
		break;
	case 2:
		len = between(513, mtu);
		break;
	default:
		len = between(mtu + 1, 2 * mtu);
		break;
	}
	gen_datagram(g, q, len);
}

/* MAD management classes and, for the CM, its attributes. */
static const uint8_t mad_classes[] = { 0x07, 0x07, 0x07, 0x03, 0x04, 0x06,
				       0x09, 0x0a, 0x10, 0x81, 0x01, 0x30 };
static const uint8_t mad_methods[] = { 0x01, 0x02, 0x03, 0x05, 0x06, 0x07,
				       0x12, 0x13, 0x14, 0x15, 0x81, 0x86 };

void gen_gsi(struct gen *g)
{
	static const unsigned int w[] = { 50, 40, 5, 5 };
	struct tqp *q = find_qp(1), gsi = {
		.qpn = 1, .type = QT_GSI, .state = QS_RTS, .qkey = GSI_QKEY,
		.mtu = port_mtu,
	};
	uint32_t len, mclass;

	if (!q)
		q = &gsi;
	g->q = NULL;
	switch (pick(w, ARRAY_SIZE(w))) {
	case 0:	/* a MAD */
		len = 256;
		break;
	case 1:	/* bigger than the GSI's receive buffers, within the MTU */
		len = between(257, q->mtu);
		break;
	case 2:	/* bigger than the MTU */
		len = between(q->mtu + 1, q->mtu + 512);
		break;
	default:
		len = below(256);
		break;
	}
	gen_datagram(g, q, len);
	if (chance(900))
		g->f.sqp = 1;
	mclass = mad_classes[below(ARRAY_SIZE(mad_classes))];
	g->f.mad = true;
	g->f.imm = mclass << 24 | (mclass == 0x07 ? 2 : between(1, 2)) << 16 |
		   mad_methods[below(ARRAY_SIZE(mad_methods))] << 8;
	g->f.swap = mclass == 0x07 ? between(0x10, 0x1a) : below(0x100);
	if (g->f.opcode != (TR_UD | OP_SEND_ONLY) || chance(50))
		g->f.mad = chance(500);
}

/* Any opcode at any QP, whatever its type and state. */
static void gen_any_state(struct gen *g)
{
	struct tqp *q = pick_any();
	uint8_t op = valid_ops[below(num_valid_ops)];
	int k;

	if (!q)
		return gen_gsi(g);
	/* Random fields: if it reaches the engines, it may well kill. */
	touch(g, q);
	g->fatal = true;
	if (chance(500))
		op = transport_of(q) | (op & 0x1f);
	if (!(ops[op].flags & F_VALID))
		op = valid_ops[below(num_valid_ops)];
	fields_init(g, op, q->qpn,
		    psn_add(chance(500) ? q->epsn : q->npsn, between(0, 4)));
	g->f.qkey = chance(500) ? q->qkey : rnd();
	g->f.sqp = below(1 << 24);
	g->f.srqn = num_xsrq && chance(800) ? xsrq[below(num_xsrq)] : rnd();
	k = num_keys ? (int)below(num_keys) : -1;
	g->f.rkey = k < 0 ? rnd() : keys[k].rkey;
	g->f.va = k < 0 ? rnd() : keys[k].va + (keys[k].len ? rnd() % keys[k].len : 0);
	g->f.dmalen = pick_len(q->mtu, 4 * q->mtu);
	g->f.feth = 1;
	if (ops[op].flags & F_PAYLOAD)
		set_paylen(g, pick_len(q->mtu, q->mtu));
}

static void gen_invalid(struct gen *g)
{
	struct fields *f = &g->f;

	/*
	 * A plausible packet first, then the one thing wrong with it. Its
	 * target's model is undone when the packet is found not to reach it.
	 */
	if (chance(600))
		gen_valid(g, W_ANY);
	else
		gen_any_state(g);
	switch (below(6)) {
	case 0:
		f->opcode = invalid_ops[below(num_invalid_ops)];
		break;
	case 1:
		f->tver = between(1, 15);
		break;
	case 2:
		f->pkey = (uint16_t)rnd() & ~0x7fff;
		f->pkey |= (uint16_t)below(0x7fff);
		break;
	case 3:	/* a payload where the opcode has none */
		f->opcode = valid_ops[below(num_valid_ops)];
		f->layout = f->opcode;
		if (ops[f->opcode].flags & F_PAYLOAD)
			f->opcode = f->layout = TR_RC | OP_READ;
		f->paylen = between(1, 64);
		f->pad = -f->paylen & 3;
		break;
	default:
		g->damage = D_TRUNCATE;
		break;
	}
}

static void gen_no_qp(struct gen *g)
{
	uint32_t qpn;

	if (chance(300)) {
		gen_datagram(g, &(struct tqp){ .qpn = MCAST_QPN, .qkey = rnd(),
					      .mtu = port_mtu },
			     between(0, port_mtu));
		if (chance(200))
			g->f.opcode = g->f.layout = TR_RC | OP_SEND_ONLY;
		return;
	}
	do {
		switch (below(3)) {
		case 0:
			qpn = below(16);
			break;
		case 1:
			qpn = 0xfffffe - below(4);
			break;
		default:
			qpn = below(1 << 24);
			break;
		}
	} while (find_qp(qpn) || qpn == MCAST_QPN);
	fields_init(g, valid_ops[below(num_valid_ops)], qpn, below(1 << 24));
	if (ops[g->f.opcode].flags & F_PAYLOAD)
		set_paylen(g, pick_len(port_mtu, port_mtu));
	g->f.qkey = rnd();
}

/* ---------------------------------------------------------------------- */

static void pick_addresses(struct gen *g, unsigned int fams)
{
	struct pkt *p = g->p;
	bool six = fams == 6 || (fams == 46 && chance(500));

	p->fam = six ? 6 : 4;
	g->fam_idx = six;
	p->spoofed = chance(100);
	if (six) {
		memcpy(p->src, net.src6, 16);
		memcpy(p->dst, net.dst6, 16);
		if (p->spoofed) {
			/* another address of the /64, not the target's */
			do
				put16(p->src + 14, between(3, 0xfffe));
			while (!memcmp(p->src, net.dst6, 16) ||
			       !memcmp(p->src, net.src6, 16));
		}
	} else {
		memcpy(p->src, net.src4, 4);
		memcpy(p->dst, net.dst4, 4);
		if (p->spoofed) {
			/* another address of the /24, not the target's */
			do
				p->src[3] = between(2, 254);
			while (!memcmp(p->src, net.dst4, 4) ||
			       !memcmp(p->src, net.src4, 4));
		}
	}
	p->sport = chance(900) ? between(0xc000, 0xffff) : between(1, 0xffff);
	p->tclass = chance(700) ? 0 : rnd();
	p->flow = chance(700) ? 0 : rnd();
	p->ttl = chance(700) ? 64 : between(1, 255);
	p->ipid = rnd();
	p->csum = p->fam == 4 && chance(500) ? CSUM_ZERO : CSUM_GOOD;
	p->icrc = ICRC_GOOD;
}

/*
 * Let @g's target's model follow what the device is expected to do with
 * the packet: nothing, if it never reaches the QP's engines or carries a
 * PSN they will not execute; a reset to the QP's first PSNs, where
 * sroce-fuzz-target puts a QP back, if it should kill an RC or XRC QP;
 * the message dropped, on UC; otherwise what the generator advanced.
 */
static void commit(struct gen *g, enum verdict v)
{
	struct tqp *q = g->q;

	if (!q)
		return;
	if (v != V_DEEP || g->f.qpn != q->qpn || g->psn_off) {
		q->m = g->saved;
		return;
	}
	if (!g->fatal)
		return;
	if (q->type == QT_UC) {
		q->m = g->saved;
		q->m.msg = 0;
		return;
	}
	q->m.epsn = q->epsn;
	q->m.upsn = q->upsn;
	q->m.msg = 0;
}

/*
 * A QP kept alive gets its packets from its peer, over its family: a
 * fixed device drops the others (and a broken one takes them), either
 * way the model would be lost.
 */
static void keep_clean(struct gen *g, unsigned int fams)
{
	struct pkt *p = g->p;
	int six;

	if (!g->q || !g->q->clean || !g->q->fam)
		return;
	if (fams != 46 && (unsigned int)g->q->fam != fams)
		return;		/* then it is dropped (addr), and undone */
	six = g->q->fam == 6;
	p->spoofed = false;
	if (p->fam != g->q->fam && p->csum == CSUM_ZERO)
		p->csum = CSUM_GOOD;
	p->fam = g->q->fam;
	g->fam_idx = six;
	memcpy(p->src, six ? net.src6 : net.src4, six ? 16 : 4);
	memcpy(p->dst, six ? net.dst6 : net.dst4, six ? 16 : 4);
}

/* One packet: generate, mutate, assemble into @fr, classify, commit. */
uint32_t gen_one(struct pkt *p, uint8_t *fr, unsigned int fams,
		 struct gen *g, enum verdict *v)
{
	uint32_t len;

	memset(g, 0, sizeof(*g));
	g->p = p;
	pick_addresses(g, fams);
	g->cls = pick(cls_weight, C_NR);
	switch (g->cls) {
	case C_VALID:
	case C_BAD_ICRC:
	case C_BAD_UDP:
		gen_valid(g, W_ANY);
		break;
	case C_MUTATED:
		gen_mutated(g);
		break;
	case C_RESPONSE:
		gen_response(g);
		break;
	case C_UD:
		gen_ud(g);
		break;
	case C_GSI:
		gen_gsi(g);
		break;
	case C_ANY_STATE:
		gen_any_state(g);
		break;
	case C_INVALID:
		gen_invalid(g);
		break;
	default:
		gen_no_qp(g);
		break;
	}
	keep_clean(g, fams);
	p->body = build_body(&g->f, p->roce);
	if (g->damage != D_NONE)
		damage_bytes(g);
	/* A mutation may have lengthened the headers: what the link takes. */
	if (p->body > net.max_roce[g->fam_idx] - 4)
		p->body = net.max_roce[g->fam_idx] - 4;
	if (g->cls == C_BAD_ICRC)
		p->icrc = ICRC_BAD;
	if (g->cls == C_BAD_UDP)
		p->csum = CSUM_BAD;
	len = assemble(p, fr);
	*v = classify(p, fr);
	commit(g, *v);
	return len;
}
