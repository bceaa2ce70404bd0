// SPDX-License-Identifier: GPL-2.0 OR Linux-OpenIB
/*
 * Randomness (one splitmix64 stream a run), CRC-32 and the Internet
 * checksum, big-endian fields, and the opcode table of IBA vol. 1
 * table 38 with the headers each opcode carries.
 */
#include "fuzz.h"

/* ---------------------------------------------------------------------- */
/* Randomness: splitmix64 (lib/rng.c), one stream a run. */

uint64_t rnd(void)
{
	return tool_rng_next(&rng_state);
}

/* A number in [0, n), n > 0. */
uint32_t below(uint32_t n)
{
	return tool_rng_below(&rng_state, n);
}

/* A number in [lo, hi]. */
uint32_t between(uint32_t lo, uint32_t hi)
{
	return lo + below(hi - lo + 1);
}

/* True with a probability of @permille / 1000. */
bool chance(unsigned int permille)
{
	return below(1000) < permille;
}

/* Index of a weighted choice among @n weights. */
int pick(const unsigned int *w, int n)
{
	unsigned int total = 0, r;
	int i;

	for (i = 0; i < n; i++)
		total += w[i];
	r = below(total);
	for (i = 0; i < n - 1; i++) {
		if (r < w[i])
			return i;
		r -= w[i];
	}
	return n - 1;
}

/* ---------------------------------------------------------------------- */
/* CRC-32 (the Ethernet polynomial, reflected) and the Internet checksum. */

static uint32_t crc_table[256];

void crc_init(void)
{
	uint32_t c, i, k;

	for (i = 0; i < 256; i++) {
		c = i;
		for (k = 0; k < 8; k++)
			c = c & 1 ? 0xedb88320U ^ (c >> 1) : c >> 1;
		crc_table[i] = c;
	}
}

/* No pre- or post-inversion: the kernel's crc32_le(). */
uint32_t crc_update(uint32_t crc, const uint8_t *p, size_t n)
{
	while (n--)
		crc = crc_table[(crc ^ *p++) & 0xff] ^ (crc >> 8);
	return crc;
}

uint32_t csum_add(uint32_t sum, const uint8_t *p, size_t n)
{
	size_t i;

	for (i = 0; i + 1 < n; i += 2)
		sum += (uint32_t)p[i] << 8 | p[i + 1];
	if (n & 1)
		sum += (uint32_t)p[n - 1] << 8;
	return sum;
}

uint16_t csum_fold(uint32_t sum)
{
	while (sum >> 16)
		sum = (sum & 0xffff) + (sum >> 16);
	return (uint16_t)~sum;
}

void put16(uint8_t *p, uint32_t v)
{
	p[0] = v >> 8;
	p[1] = v;
}

void put24(uint8_t *p, uint32_t v)
{
	p[0] = v >> 16;
	p[1] = v >> 8;
	p[2] = v;
}

void put32(uint8_t *p, uint32_t v)
{
	put16(p, v >> 16);
	put16(p + 2, v);
}

void put64(uint8_t *p, uint64_t v)
{
	put32(p, v >> 32);
	put32(p + 4, v);
}

uint32_t get16(const uint8_t *p)
{
	return (uint32_t)p[0] << 8 | p[1];
}

uint32_t get32(const uint8_t *p)
{
	return get16(p) << 16 | get16(p + 2);
}

static const struct {
	uint8_t op;
	const char *name;
	uint32_t flags;
} rc_ops[] = {
	{ OP_SEND_FIRST, "SEND_FIRST", SEND | F_FIRST },
	{ OP_SEND_MIDDLE, "SEND_MIDDLE", SEND | F_MIDDLE },
	{ OP_SEND_LAST, "SEND_LAST", SEND | F_LAST },
	{ OP_SEND_LAST_IMM, "SEND_LAST_IMM", SEND | F_LAST | F_IMM },
	{ OP_SEND_ONLY, "SEND_ONLY", SEND | F_ONLY },
	{ OP_SEND_ONLY_IMM, "SEND_ONLY_IMM", SEND | F_ONLY | F_IMM },
	{ OP_WRITE_FIRST, "WRITE_FIRST", WR | F_FIRST | F_RETH },
	{ OP_WRITE_MIDDLE, "WRITE_MIDDLE", WR | F_MIDDLE },
	{ OP_WRITE_LAST, "WRITE_LAST", WR | F_LAST },
	{ OP_WRITE_LAST_IMM, "WRITE_LAST_IMM", WR | F_LAST | F_IMM },
	{ OP_WRITE_ONLY, "WRITE_ONLY", WR | F_ONLY | F_RETH },
	{ OP_WRITE_ONLY_IMM, "WRITE_ONLY_IMM", WR | F_ONLY | F_RETH | F_IMM },
	{ OP_READ, "READ_REQUEST",
	  F_VALID | F_REQ | F_READ | F_ONLY | F_RETH },
	{ OP_RRESP_FIRST, "READ_RESPONSE_FIRST", RRESP | F_FIRST | F_AETH },
	{ OP_RRESP_MIDDLE, "READ_RESPONSE_MIDDLE", RRESP | F_MIDDLE },
	{ OP_RRESP_LAST, "READ_RESPONSE_LAST", RRESP | F_LAST | F_AETH },
	{ OP_RRESP_ONLY, "READ_RESPONSE_ONLY", RRESP | F_ONLY | F_AETH },
	{ OP_ACK, "ACKNOWLEDGE", F_VALID | F_RESP | F_ACK | F_ONLY | F_AETH },
	{ OP_ATOMIC_ACK, "ATOMIC_ACKNOWLEDGE",
	  F_VALID | F_RESP | F_ATMACK_OP | F_ONLY | F_AETH | F_ATMACK },
	{ OP_CMP_SWAP, "COMPARE_SWAP", ATOMIC },
	{ OP_FETCH_ADD, "FETCH_ADD", ATOMIC },
	{ OP_SEND_LAST_INV, "SEND_LAST_INV", SEND | F_LAST | F_IETH },
	{ OP_SEND_ONLY_INV, "SEND_ONLY_INV", SEND | F_ONLY | F_IETH },
	{ OP_FLUSH, "FLUSH",
	  F_VALID | F_REQ | F_FLUSH | F_ONLY | F_FETH | F_RETH },
	{ OP_ATOMIC_WRITE, "ATOMIC_WRITE",
	  F_VALID | F_REQ | F_AWRITE | F_PAYLOAD | F_ONLY | F_RETH },
};

/* Lay out one opcode's headers in the order of IBA 9.2. */
static void op_layout(struct opinfo *op)
{
	uint8_t off = 12;

	op->xrceth = off;
	off += op->flags & F_XRCETH ? 4 : 0;
	op->deth = off;
	off += op->flags & F_DETH ? 8 : 0;
	op->feth = off;
	off += op->flags & F_FETH ? 4 : 0;
	op->reth = off;
	off += op->flags & F_RETH ? 16 : op->flags & F_ATMETH ? 28 : 0;
	op->aeth = off;
	off += op->flags & F_AETH ? 4 : 0;
	op->atmack = off;
	off += op->flags & F_ATMACK ? 8 : 0;
	op->immdt = off;
	off += op->flags & (F_IMM | F_IETH) ? 4 : 0;
	op->hdr_len = off;
}

static void op_set(uint8_t code, const char *tr, const char *name,
		   uint32_t flags)
{
	snprintf(ops[code].name, sizeof(ops[code].name), "%s_%s", tr, name);
	ops[code].flags = flags;
}

void ops_init(void)
{
	unsigned int i;
	uint32_t f;

	for (i = 0; i < 256; i++)
		snprintf(ops[i].name, sizeof(ops[i].name), "INVALID_0x%02x", i);
	for (i = 0; i < ARRAY_SIZE(rc_ops); i++) {
		f = rc_ops[i].flags;
		op_set(TR_RC | rc_ops[i].op, "RC", rc_ops[i].name, f | F_RC);
		op_set(TR_XRC | rc_ops[i].op, "XRC", rc_ops[i].name,
		       f | F_XRC | (f & F_REQ ? F_XRCETH : 0));
		if (rc_ops[i].op <= OP_WRITE_ONLY_IMM)
			op_set(TR_UC | rc_ops[i].op, "UC", rc_ops[i].name,
			       f | F_UC);
	}
	op_set(TR_UD | OP_SEND_ONLY, "UD", "SEND_ONLY",
	       SEND | F_ONLY | F_UD | F_DETH);
	op_set(TR_UD | OP_SEND_ONLY_IMM, "UD", "SEND_ONLY_IMM",
	       SEND | F_ONLY | F_UD | F_DETH | F_IMM);
	snprintf(ops[TR_CNP].name, sizeof(ops[TR_CNP].name), "CNP");
	for (i = 0; i < 256; i++) {
		op_layout(&ops[i]);
		if (ops[i].flags & F_VALID)
			valid_ops[num_valid_ops++] = i;
		else
			invalid_ops[num_invalid_ops++] = i;
	}
}
