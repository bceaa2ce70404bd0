// SPDX-License-Identifier: GPL-2.0 OR Linux-OpenIB
/*
 * The streams: operations, sizes, gather lists and pool contents, all a
 * function of the seed; scatter lists, where the bytes land, and their
 * checks (content, guards, refill).
 */
#include "traffic.h"

/* Random numbers: splitmix64, one state per stream (lib/rng.c). */

uint64_t seed_of(uint32_t salt, uint32_t a, uint32_t b)
{
	uint64_t s = c.p.seed ^ ((uint64_t)salt << 56 | (uint64_t)a << 40 | b);

	tool_rng_next(&s);
	return tool_rng_next(&s);
}

uint32_t min32(uint32_t a, uint32_t b)
{
	return a < b ? a : b;
}

uint32_t max32(uint32_t a, uint32_t b)
{
	return a > b ? a : b;
}

bool kind_consumes_recv(unsigned int k)
{
	return k == K_SEND || k == K_SEND_IMM || k == K_WRITE_IMM;
}

bool kind_has_imm(unsigned int k)
{
	return k == K_SEND_IMM || k == K_WRITE_IMM;
}

bool kind_is_write(unsigned int k)
{
	return k == K_WRITE || k == K_WRITE_IMM;
}

bool kind_is_atomic(unsigned int k)
{
	return k == K_CAS || k == K_FADD;
}

bool ud(void)
{
	return c.p.transport == IBV_QPT_UD;
}

/* Stream generation: what both sides derive from the seed */

void pool_fill(uint8_t *buf, uint32_t len, unsigned int i)
{
	uint64_t s = seed_of(SALT_POOL, i, 0), v;
	uint32_t off;

	for (off = 0; off < len; off += 8) {
		v = tool_rng_next(&s);
		memcpy(buf + off, &v, min32(8, len - off));
	}
}

void stream_init(struct stream *s, int side, uint32_t q)
{
	memset(s, 0, sizeof(*s));
	s->rng = seed_of(SALT_STREAM, side, q);
	s->atom = seed_of(SALT_ATOM, side, q);
	s->nops = c.p.ops[side];
}

/* Sizes: 0 and 1, small ones, around MTU multiples, anything up to the max. */
static uint32_t gen_len(uint64_t *s)
{
	uint32_t max = c.p.max_msg, mtu = tool_mtu_bytes(c.p.mtu), len;

	switch (tool_rng_below(s, 8)) {
	case 0:
		return 0;
	case 1:
		return min32(1, max);
	case 2:
	case 3:
		return tool_rng_below(s, min32(max, 64) + 1);
	case 4:
		len = mtu * (1 + tool_rng_below(s, 4)) + tool_rng_below(s, 3);
		return min32(max, len ? len - 1 : 0);
	default:
		return tool_rng_below(s, max + 1);
	}
}

/* A part of @left bytes still to split into @parts non-empty parts. */
static uint32_t split_part(uint64_t *s, uint32_t left, uint32_t parts)
{
	uint32_t most, avg;

	if (parts == 1)
		return left;
	most = left - (parts - 1);
	avg = left / parts;
	return 1 + tool_rng_below(s, min32(most, 2 * avg));
}

/* Split @len into 1..max_sge entries (none for 0) of random pools. */
static uint8_t gen_gather(uint64_t *s, uint32_t len, struct seg *sg)
{
	uint32_t n, i, part;

	if (!len)
		return 0;
	n = 1 + tool_rng_below(s, min32(c.p.max_sge, len));
	for (i = 0; i < n; i++) {
		part = split_part(s, len, n - i);
		sg[i].mr = tool_rng_below(s, NUM_POOL);
		sg[i].off = tool_rng_below(s, c.p.pool_size - part + 1);
		sg[i].len = part;
		len -= part;
	}
	return n;
}

static unsigned int pick_kind(uint64_t *s, uint32_t mix)
{
	unsigned int k, n = __builtin_popcount(mix), pick = tool_rng_below(s, n);

	for (k = 0; k < K_NR; k++)
		if (mix & (1u << k) && !pick--)
			return k;
	return K_SEND;
}

static void gen_atomic(struct stream *s, struct op *op)
{
	op->len = 8;
	op->orig = s->atom;
	if (op->kind == K_CAS) {
		op->cmp = tool_rng_below(&s->rng, 2) ? s->atom : tool_rng_next(&s->rng);
		op->arg = tool_rng_next(&s->rng);
		if (s->atom == op->cmp)
			s->atom = op->arg;
	} else {
		/* Small addends too, so carries stay in the low bytes. */
		op->arg = tool_rng_below(&s->rng, 2) ? tool_rng_next(&s->rng) : tool_rng_below(&s->rng, 1000);
		s->atom += op->arg;
	}
}

/* The next op of stream @s (the last one is always a SEND with immediate). */
void gen_op(struct stream *s, struct op *op)
{
	memset(op, 0, offsetof(struct op, seg));
	op->idx = s->next++;
	op->rseq = -1;
	op->kind = op->idx + 1 == s->nops ? K_SEND_IMM : pick_kind(&s->rng, c.p.mix);
	switch (op->kind) {
	case K_READ:
		op->len = gen_len(&s->rng);
		op->pool = tool_rng_below(&s->rng, NUM_POOL);
		op->roff = tool_rng_below(&s->rng, c.p.pool_size - op->len + 1);
		break;
	case K_CAS:
	case K_FADD:
		gen_atomic(s, op);
		break;
	default:
		op->len = gen_len(&s->rng);
		op->nseg = gen_gather(&s->rng, op->len, op->seg);
		if (kind_is_write(op->kind))
			op->roff = tool_rng_below(&s->rng, c.p.win_size - op->len + 1);
		if (kind_has_imm(op->kind))
			op->imm = (uint32_t)tool_rng_next(&s->rng);
		break;
	}
	if (kind_consumes_recv(op->kind))
		op->rseq = s->nrecv++;
	s->count[op->kind]++;
	s->bytes[op->kind] += op->len;
}

/* The payload of @op, as the target must see it, into @buf. */
void build_payload(const struct op *op, uint8_t *buf)
{
	uint32_t i, pos = 0;

	if (op->kind == K_READ) {
		memcpy(buf, c.pool[op->pool] + op->roff, op->len);
		return;
	}
	if (kind_is_atomic(op->kind)) {
		memcpy(buf, &op->orig, 8);
		return;
	}
	for (i = 0; i < op->nseg; i++) {
		memcpy(buf + pos, c.pool[op->seg[i].mr] + op->seg[i].off, op->seg[i].len);
		pos += op->seg[i].len;
	}
}

/* Scatter lists: where local target bytes go */

/*
 * Lay @cap bytes out as 1..max_sge entries (none for 0) in a slot of the
 * scatter MRs: random MRs, random gaps, odd lengths. Entries in one MR
 * come in ascending order, with at least GUARD bytes of slot around them.
 */
uint8_t layout_scatter(uint64_t *s, uint32_t cap, struct seg *sg)
{
	uint32_t cursor[NUM_SMR] = { GUARD, GUARD }, n, i, part;
	uint8_t m;

	if (!cap)
		return 0;
	n = 1 + tool_rng_below(s, min32(c.p.max_sge, cap));
	for (i = 0; i < n; i++) {
		part = split_part(s, cap, n - i);
		m = tool_rng_below(s, NUM_SMR);
		sg[i].mr = m;
		sg[i].off = cursor[m] + tool_rng_below(s, 32);
		sg[i].len = part;
		cursor[m] = sg[i].off + part;
		cap -= part;
	}
	return n;
}

uint8_t *slot_addr(const struct tqp *t, uint8_t mr, uint32_t slot)
{
	return t->sbuf[mr] + (size_t)slot * c.slot_size;
}

int sges_scatter(const struct tqp *t, uint32_t slot, const struct seg *sg,
		 unsigned int n, struct ibv_sge *out)
{
	unsigned int i;

	for (i = 0; i < n; i++) {
		out[i].addr = (uintptr_t)(slot_addr(t, sg[i].mr, slot) + sg[i].off);
		out[i].length = sg[i].len;
		out[i].lkey = t->smr[sg[i].mr]->lkey;
	}
	return n;
}

int sges_gather(const struct op *op, struct ibv_sge *out)
{
	unsigned int i;

	for (i = 0; i < op->nseg; i++) {
		out[i].addr = (uintptr_t)(c.pool[op->seg[i].mr] + op->seg[i].off);
		out[i].length = op->seg[i].len;
		out[i].lkey = c.pool_mr[op->seg[i].mr]->lkey;
	}
	return op->nseg;
}

/* Copy what a scatter list holds into @out. */
void scatter_read(const struct tqp *t, uint32_t slot, const struct seg *sg,
		  unsigned int n, uint8_t *out)
{
	unsigned int i;

	for (i = 0; i < n; i++) {
		memcpy(out, slot_addr(t, sg[i].mr, slot) + sg[i].off, sg[i].len);
		out += sg[i].len;
	}
}

/* Flip the byte at stream position @pos of a scatter list (self-tests). */
void scatter_flip(const struct tqp *t, uint32_t slot, const struct seg *sg,
		  unsigned int n, uint32_t pos)
{
	unsigned int i;

	for (i = 0; i < n; i++) {
		if (pos < sg[i].len) {
			slot_addr(t, sg[i].mr, slot)[sg[i].off + pos] ^= 0x40;
			return;
		}
		pos -= sg[i].len;
	}
}

bool is_fill(const uint8_t *p, size_t n)
{
	return !n || (p[0] == FILL && !memcmp(p, p + 1, n - 1));
}

/* Which entry holds stream position @pos: "sge 2 +17". */
static const char *where(const struct seg *sg, unsigned int n, uint32_t pos)
{
	static char buf[64];
	unsigned int i;

	for (i = 0; i < n; i++) {
		if (pos < sg[i].len)
			break;
		pos -= sg[i].len;
	}
	snprintf(buf, sizeof(buf), "sge %u of %u, mr %u, +%u", i, n,
		 i < n ? sg[i].mr : 0, pos);
	return buf;
}

/*
 * Compare a scatter list's content with @exp (@len bytes) after @skip
 * bytes (the GRH, checked elsewhere); the rest of its capacity must hold
 * FILL unless @rest is false. @what names the op in reports; with @what
 * NULL, say nothing. Return whether it all matched.
 */
bool check_content(const struct tqp *t, uint32_t slot, const struct seg *sg,
		   unsigned int n, uint32_t cap, uint32_t skip,
		   const uint8_t *exp, uint32_t len, bool rest, const char *what)
{
	uint8_t *got = c.tmp_got, e;
	uint32_t i, bad = 0, first = 0, end = rest ? cap : skip + len;

	scatter_read(t, slot, sg, n, got);
	if (!memcmp(got + skip, exp, len) && is_fill(got + skip + len, end - skip - len))
		return true;
	if (!what)
		return false;
	for (i = skip; i < end; i++) {
		e = i < skip + len ? exp[i - skip] : FILL;
		if (got[i] != e && !bad++)
			first = i;
	}
	e = first < skip + len ? exp[first - skip] : FILL;
	mismatch("%s: byte %u of %u%s (%s) expected 0x%02x got 0x%02x, %u bytes differ",
		 what, first - skip, len, first >= skip + len ? " (past the payload)" : "",
		 where(sg, n, first), e, got[first], bad);
	return false;
}

static bool check_fill(const struct tqp *t, uint8_t m, uint32_t slot, uint32_t from,
		       uint32_t to, const char *what)
{
	const uint8_t *base = slot_addr(t, m, slot);
	uint32_t i;

	to = min32(to, c.slot_size);
	if (from >= to || is_fill(base + from, to - from))
		return true;
	for (i = from; base[i] == FILL; i++)
		;
	if (what)
		mismatch("%s: guard byte at mr %u slot offset %u changed: expected 0x%02x got 0x%02x",
			 what, m, i, FILL, base[i]);
	return false;
}

/* The GUARD bytes around and between the entries of a scatter list. */
bool check_guards(const struct tqp *t, uint32_t slot, const struct seg *sg,
		  unsigned int n, const char *what)
{
	uint32_t prev;
	unsigned int i;
	bool ok = true, any;
	uint8_t m;

	for (m = 0; m < NUM_SMR; m++) {
		any = false;
		prev = 0;
		for (i = 0; i < n; i++) {
			if (sg[i].mr != m)
				continue;
			if (!any)
				prev = sg[i].off - GUARD;
			any = true;
			ok &= check_fill(t, m, slot, prev, sg[i].off, what);
			prev = sg[i].off + sg[i].len;
		}
		if (any)
			ok &= check_fill(t, m, slot, prev, prev + GUARD, what);
	}
	return ok;
}

/* Put FILL back over a scatter list and its guards. */
void refill(const struct tqp *t, uint32_t slot, const struct seg *sg, unsigned int n)
{
	unsigned int i;
	uint32_t from, to;

	for (i = 0; i < n; i++) {
		from = sg[i].off - GUARD;
		to = min32(sg[i].off + sg[i].len + GUARD, c.slot_size);
		memset(slot_addr(t, sg[i].mr, slot) + from, FILL, to - from);
	}
}
