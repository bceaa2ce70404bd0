// SPDX-License-Identifier: GPL-2.0 OR Linux-OpenIB
/*
 * Generation: valid requests that follow each QP's model, and mutated
 * ones.
 */
#include "fuzz.h"

/* @q's model may change: keep it as it was, to undo what does not happen. */
void touch(struct gen *g, struct tqp *q)
{
	g->q = q;
	g->saved = q->m;
}

uint32_t psn_add(uint32_t psn, uint32_t n)
{
	return (psn + n) & PSN_MASK;
}

static uint32_t max_paylen(const struct gen *g)
{
	uint32_t room = net.max_roce[g->fam_idx], hdr = ops[g->f.layout].hdr_len;

	return room > hdr + 3 + 4 ? room - hdr - 3 - 4 : 0;
}

void set_paylen(struct gen *g, uint32_t n)
{
	uint32_t max = max_paylen(g);

	g->f.paylen = n < max ? n : max;
	g->f.pad = -g->f.paylen & 3;
}

void fields_init(struct gen *g, uint8_t opcode, uint32_t qpn,
		 uint32_t psn)
{
	struct fields *f = &g->f;

	memset(f, 0, sizeof(*f));
	f->opcode = f->layout = opcode;
	f->pkey = 0xffff;
	f->qpn = qpn;
	f->psn = psn & PSN_MASK;
	f->ackreq = chance(300);
	f->se = chance(150);
	f->imm = rnd();
	f->msn = below(1 << 24);
	f->syndrome = 0x1f;	/* ACK, no end-to-end credits */
	/* Masked by the ICRC, ignored by the receiver: vary them. */
	if (chance(100))
		f->resv8a = rnd();
	if (chance(50))
		f->resv7 = rnd() & 0x7f;
	if (chance(50))
		f->mig = true;
}

/* A message length: empty, small, about the MTU, a few MTUs. */
uint32_t pick_len(uint32_t mtu, uint32_t max)
{
	static const unsigned int w[] = { 8, 32, 30, 22, 8 };
	uint32_t n;

	switch (pick(w, ARRAY_SIZE(w))) {
	case 0:
		n = 0;
		break;
	case 1:
		n = between(1, 64);
		break;
	case 2:
		n = between(65, mtu);
		break;
	case 3:
		n = between(mtu + 1, 4 * mtu);
		break;
	default:
		n = between(1, 4) * mtu;
		break;
	}
	return n < max ? n : max;
}

/*
 * May requests through @q use key @k for @right? A key of another PD
 * only seems to allow it: a QP kept alive is not given one.
 */
static bool key_fits(const struct tqp *q, int k, unsigned int right)
{
	return (keys[k].rights & right) && !keys[k].dead &&
	       (!keys[k].bound || keys[k].qpn == q->qpn) &&
	       !(q->clean && (keys[k].rights & FOREIGN));
}

/* A live key with @right that requests through @q may use, or -1. */
static int pick_key(const struct tqp *q, unsigned int right)
{
	int cand[MAX_KEYS], n = 0, i;

	for (i = 0; i < num_keys; i++)
		if (key_fits(q, i, right))
			cand[n++] = i;
	return n ? cand[below(n)] : -1;
}

/*
 * Aim a remote access of @len bytes (aligned to @align) at key @k: set
 * va, rkey and, for a RETH, the length. Without a key, at nothing.
 */
static void aim(struct fields *f, int k, uint32_t *len, uint32_t align)
{
	uint64_t room, skip;

	if (k < 0) {
		f->rkey = rnd();
		f->va = rnd() & ~(uint64_t)(align - 1);
		f->dmalen = *len;
		return;
	}
	/* The first address aligned in absolute terms, as atomics need. */
	skip = -keys[k].va & (align - 1);
	f->rkey = keys[k].rkey;
	f->va = keys[k].va + skip;
	f->dmalen = *len;
	if (keys[k].len < skip + *len) {
		*len = f->dmalen = keys[k].len > skip ? keys[k].len - skip : 0;
		return;
	}
	room = (keys[k].len - skip - *len) / align;
	f->va += (room ? rnd() % (room + 1) : 0) * align;
}

uint8_t transport_of(const struct tqp *q)
{
	switch (q->type) {
	case QT_UC:
		return TR_UC;
	case QT_XRC_TGT:
	case QT_XRC_INI:
		return TR_XRC;
	case QT_RC:
		return TR_RC;
	default:
		return TR_UD;
	}
}

/* The next packet of the message under way at @q. */
static void continue_msg(struct gen *g, struct tqp *q)
{
	struct model *m = &q->m;
	uint8_t tr = transport_of(q);
	uint32_t n;

	if (m->left > q->mtu) {
		fields_init(g, tr | (m->msg == F_SEND ? OP_SEND_MIDDLE :
				     OP_WRITE_MIDDLE), q->qpn, m->epsn);
		n = q->mtu;
	} else {
		fields_init(g, tr | m->last_op, q->qpn, m->epsn);
		g->f.ackreq = chance(500);
		n = m->left;
	}
	g->f.imm = m->imm;
	g->f.srqn = m->srqn;
	set_paylen(g, n);
	m->left -= n;
	if (!m->left)
		m->msg = 0;
	m->epsn = psn_add(m->epsn, 1);
}

/* Start a SEND or WRITE message: ONLY, or FIRST with the rest to come. */
static void start_msg(struct gen *g, struct tqp *q, uint32_t kind,
		      uint32_t len)
{
	struct model *m = &q->m;
	uint8_t tr = transport_of(q), op;
	bool imm = chance(250), inv = tr != TR_UC && kind == F_SEND &&
					  chance(40) && !q->clean;
	int k;

	fields_init(g, tr | OP_SEND_ONLY, q->qpn, m->epsn);
	g->f.srqn = m->srqn = num_xsrq ? xsrq[below(num_xsrq)] : 0;
	if (inv) {
		/* Only a type 2 window bound through this QP invalidates. */
		k = num_keys ? (int)below(num_keys) : -1;
		g->f.imm = k < 0 ? (uint32_t)rnd() : keys[k].rkey;
		if (k < 0 || !keys[k].bound || keys[k].qpn != q->qpn)
			g->fatal = true;
		else
			keys[k].dead = true;
	}
	if (kind == F_WRITE) {
		/* The key may cut the length: the opcode follows. */
		k = pick_key(q, RIGHT_W);
		aim(&g->f, k, &len, 1);
		g->fatal |= k < 0 || !(q->access & RIGHT_W);
	}
	if (kind == F_SEND) {
		op = len <= q->mtu ? (inv ? OP_SEND_ONLY_INV : imm ?
				      OP_SEND_ONLY_IMM : OP_SEND_ONLY) :
				     OP_SEND_FIRST;
		m->last_op = inv ? OP_SEND_LAST_INV : imm ? OP_SEND_LAST_IMM :
			     OP_SEND_LAST;
	} else {
		op = len <= q->mtu ? (imm ? OP_WRITE_ONLY_IMM : OP_WRITE_ONLY) :
				     OP_WRITE_FIRST;
		m->last_op = imm ? OP_WRITE_LAST_IMM : OP_WRITE_LAST;
	}
	g->f.opcode = g->f.layout = tr | op;
	m->imm = g->f.imm;
	set_paylen(g, len < q->mtu ? len : q->mtu);
	m->msg = len > q->mtu ? kind : 0;
	m->left = len - g->f.paylen;
	g->f.ackreq = m->msg ? chance(100) : chance(500);
	m->epsn = psn_add(m->epsn, 1);
}

/* READ, the atomics, FLUSH, ATOMIC_WRITE: single-packet requests. */
static void start_rdma(struct gen *g, struct tqp *q, enum req_kind kind)
{
	static const uint8_t opc[RK_NR] = {
		[RK_READ] = OP_READ, [RK_CAS] = OP_CMP_SWAP,
		[RK_FADD] = OP_FETCH_ADD, [RK_FLUSH] = OP_FLUSH,
		[RK_AWRITE] = OP_ATOMIC_WRITE,
	};
	struct model *m = &q->m;
	uint32_t len = 8, right = RIGHT_W, npkts = 1;
	int k;

	fields_init(g, transport_of(q) | opc[kind], q->qpn, m->epsn);
	g->f.srqn = num_xsrq ? xsrq[below(num_xsrq)] : 0;
	switch (kind) {
	case RK_READ:
		right = RIGHT_R;
		len = pick_len(q->mtu, 8 * q->mtu);
		break;
	case RK_CAS:
	case RK_FADD:
		right = RIGHT_A;
		g->f.swap = rnd();
		g->f.cmp = chance(500) ? 0 : rnd();
		break;
	case RK_FLUSH:
		/* Placement type global; a range or the whole MR. */
		g->f.feth = 1 | (chance(500) ? 1 << 4 : 0);
		len = pick_len(q->mtu, 4096);
		g->fatal = true;	/* no MR grants FLUSH rights */
		break;
	default:
		set_paylen(g, 8);
		break;
	}
	k = pick_key(q, right);
	aim(&g->f, k, &len, kind == RK_READ || kind == RK_FLUSH ? 1 : 8);
	g->fatal |= k < 0 || !(q->access & right);
	if (kind == RK_READ)
		npkts = len > q->mtu ? (len + q->mtu - 1) / q->mtu : 1;
	m->epsn = psn_add(m->epsn, npkts);
}

/* May requests through @q use a key with @right? */
static bool may(const struct tqp *q, unsigned int right)
{
	int i;

	if (!(q->access & right))
		return false;
	for (i = 0; i < num_keys; i++)
		if (key_fits(q, i, right))
			return true;
	return false;
}

/*
 * What a QP kept alive must not be sent: FLUSH (no MR grants it), and
 * what it has no rights or key for. It gets a SEND instead.
 */
static enum req_kind harmless_kind(const struct tqp *q, enum req_kind kind)
{
	static const unsigned int needs[RK_NR] = {
		[RK_WRITE] = RIGHT_W, [RK_READ] = RIGHT_R, [RK_CAS] = RIGHT_A,
		[RK_FADD] = RIGHT_A, [RK_AWRITE] = RIGHT_W,
	};

	if (!q->clean || kind == RK_SEND)
		return kind;
	if (kind == RK_FLUSH || !may(q, needs[kind]))
		return RK_SEND;
	return kind;
}

/* A well-formed request at @q, at the PSN its responder expects. */
static void gen_request(struct gen *g, struct tqp *q)
{
	static const unsigned int w_rc[RK_NR] = {
		[RK_SEND] = 30, [RK_WRITE] = 25, [RK_READ] = 15, [RK_CAS] = 8,
		[RK_FADD] = 8, [RK_FLUSH] = 3, [RK_AWRITE] = 8,
	};
	enum req_kind kind;

	touch(g, q);
	if (q->m.msg) {
		continue_msg(g, q);
		return;
	}
	kind = q->type == QT_UC ? (chance(550) ? RK_SEND : RK_WRITE) :
	       (enum req_kind)pick(w_rc, RK_NR);
	kind = harmless_kind(q, kind);
	if (kind == RK_SEND)
		start_msg(g, q, F_SEND, pick_len(q->mtu, 4 * q->mtu));
	else if (kind == RK_WRITE)
		start_msg(g, q, F_WRITE, pick_len(q->mtu, 8 * q->mtu));
	else
		start_rdma(g, q, kind);
}

/* A member of @gr that is @want, or if none is, any member. */
static struct tqp *pick_in(const struct group *gr, enum want want)
{
	int cand[MAX_TARGETS], n = 0, i;

	for (i = 0; i < gr->n; i++)
		if (want == W_ANY || tq[gr->idx[i]].clean == (want == W_CLEAN))
			cand[n++] = gr->idx[i];
	if (!n)
		return gr->n ? &tq[gr->idx[below(gr->n)]] : NULL;
	return &tq[cand[below(n)]];
}

/* A target of group @grp of the packet's family, now and then of the other. */
struct tqp *pick_from(struct group *grp, int fam_idx, enum want want)
{
	struct group *gr = &grp[fam_idx];

	if (!gr->n || chance(50))
		gr = &grp[!fam_idx];
	return pick_in(gr, want);
}

/* Any target but those kept alive. */
struct tqp *pick_any(void)
{
	return pick_in(&g_all, W_DIRTY);
}

/* Fallback when a class has no target: a datagram at QP 1. */

void gen_valid(struct gen *g, enum want want)
{
	struct tqp *q = pick_from(g_req, g->fam_idx, want);

	if (!q)
		return gen_gsi(g);
	gen_request(g, q);
	/* Now and then a duplicate: answered again, never executed again. */
	if (q->clean && chance(50)) {
		g->f.psn = psn_add(g->saved.epsn, -(uint32_t)between(1, 16));
		g->psn_off = true;
	}
}

/* One mutation of a request; return true if it moves only the PSN. */
bool mutate_fields(struct gen *g)
{
	struct fields *f = &g->f;
	uint32_t mtu = g->q ? g->q->mtu : port_mtu;
	const struct tqp *q;
	int k;

	switch (below(14)) {
	case 0:	/* PSN: duplicate, ahead, far, across the window */
		switch (below(4)) {
		case 0:
			f->psn = psn_add(f->psn, -(uint32_t)between(1, 8));
			break;
		case 1:
			f->psn = psn_add(f->psn, between(1, 8));
			break;
		case 2:
			f->psn = below(1 << 24);
			break;
		default:
			f->psn = psn_add(f->psn, (1 << 23) + between(0, 2) - 1);
			break;
		}
		return true;
	case 1:	/* opcode: same transport, any valid one, or none */
		f->opcode = chance(500) ? (f->opcode & 0xe0) | below(32) :
			    chance(700) ? valid_ops[below(num_valid_ops)] :
					  invalid_ops[below(num_invalid_ops)];
		if (chance(500) && (ops[f->opcode].flags & F_VALID))
			f->layout = f->opcode;
		if (!(ops[f->layout].flags & F_PAYLOAD) && chance(700))
			set_paylen(g, 0);
		break;
	case 2:	/* payload length */
		switch (below(5)) {
		case 0:
			set_paylen(g, 0);
			break;
		case 1:
			set_paylen(g, f->paylen + between(1, 4));
			break;
		case 2:
			set_paylen(g, f->paylen > 4 ? f->paylen - between(1, 4) : 1);
			break;
		case 3:
			set_paylen(g, mtu);
			break;
		default:
			set_paylen(g, between(mtu + 1, max_paylen(g)));
			break;
		}
		break;
	case 3:	/* pad count, and what the pad holds */
		f->pad = below(4);
		f->pad_garbage = chance(500);
		break;
	case 4:	/* RETH length: 0 with a payload, huge, one too many */
		f->dmalen = chance(300) ? 0 : chance(500) ?
			    (uint32_t[]){ 0xffffffff, 0x80000000, 0x80000001,
					  0x7fffffff }[below(4)] :
			    f->dmalen + between(1, 4096);
		break;
	case 5:	/* RETH or AtomicETH address: unaligned, just outside */
		k = num_keys ? (int)below(num_keys) : -1;
		f->va = chance(400) ? f->va + between(1, 7) :
			k < 0 ? rnd() : chance(500) ? keys[k].va - between(1, 8) :
			keys[k].va + keys[k].len - between(0, 7);
		break;
	case 6:	/* rkey next to a live one */
		k = num_keys ? (int)below(num_keys) : -1;
		f->rkey = (k < 0 ? f->rkey : keys[k].rkey) +
			  (uint32_t[]){ 1, -1U, 0x100, -0x100U, 0x80 }[below(5)];
		if (chance(100))
			f->rkey = 0;
		break;
	case 7:	/* XRCETH, IETH, FETH, DETH */
		f->srqn = chance(500) ? f->srqn + between(1, 3) : below(1 << 24);
		f->imm = chance(500) ? f->imm ^ (1U << below(32)) : rnd();
		f->feth = rnd() & (chance(500) ? 0x3f : ~0U);
		f->qkey = rnd();
		break;
	case 8:	/* another destination QP */
		q = pick_any();
		f->qpn = q ? q->qpn : below(64);
		break;
	case 9:	/* P_Key: limited member (valid), or another partition */
		f->pkey = chance(300) ? 0x7fff : (uint16_t)rnd();
		break;
	case 10:	/* transport version */
		f->tver = between(1, 15);
		break;
	case 11:	/* harmless: flags, immediate data, masked fields */
		f->se = !f->se;
		f->ackreq = !f->ackreq;
		f->resv8a = rnd();
		f->resv7 = rnd() & 0x7f;
		if (!(ops[f->layout].flags & F_IETH))
			f->imm = rnd();
		return true;
	default:	/* the atomic operands, the FLUSH selectivity */
		f->swap = rnd();
		f->cmp = rnd();
		f->feth ^= 1U << below(6);
		break;
	}
	return false;
}

/* Byte-level damage after the build: flip, cut, extend. */
void damage_bytes(struct gen *g)
{
	struct pkt *p = g->p;
	uint32_t hdr = ops[g->f.layout].hdr_len, max;

	switch (g->damage == D_TRUNCATE ? 1 : below(3)) {
	case 0:	/* one header byte */
		p->roce[below(hdr)] ^= 1 << below(8);
		break;
	case 1:	/* cut inside the headers, with or without an ICRC */
		p->body = below(hdr);
		p->icrc = chance(500) ? ICRC_NONE : ICRC_GOOD;
		break;
	default:	/* trailing bytes */
		max = net.max_roce[g->fam_idx] - 4;
		p->body += between(1, 16);
		if (p->body > max)
			p->body = max;
		break;
	}
}

void gen_mutated(struct gen *g)
{
	int n = between(1, 3), harmful = 0, psn = 0;

	gen_valid(g, W_DIRTY);
	if (!g->q)
		return;
	while (n--) {
		if (chance(150)) {
			g->damage = D_BYTES;
			harmful++;
		} else if (mutate_fields(g)) {
			psn++;
		} else {
			harmful++;
		}
	}
	g->psn_off = psn && g->f.psn != g->saved.epsn;
	g->fatal |= harmful > 0;
}
