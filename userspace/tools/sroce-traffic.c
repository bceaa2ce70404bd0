// SPDX-License-Identifier: GPL-2.0 OR Linux-OpenIB
/*
 * sroce-traffic: a byte-verifying RDMA traffic generator.
 *
 *   sroce-traffic --server [options]
 *   sroce-traffic --client HOST [options]
 *
 * Two processes connect over TCP, exchange what they need (QPNs, PSNs,
 * GIDs, MR addresses and rkeys, the seed and the negotiated parameters),
 * then both initiate random streams of operations on every QP at once and
 * check everything that comes back. See --help and
 * Documentation/testing.md.
 *
 * Theory of operation. Every QP pair carries two streams of operations,
 * one initiated by each side. A stream is a pure function of (seed, side,
 * QP): the initiator generates it to post it, the target generates the
 * same stream again ("replay") to know what must arrive, so no payload
 * travels twice. Payloads are slices of three source pools whose content
 * is a function of the seed only: both sides hold identical pools, the
 * target rebuilds any payload from the op's gather list, and RDMA READs
 * read the peer's pools. Writes land in a per-QP window of the target,
 * which the target replays into a model and compares at the end (so
 * overlapping writes and untouched guard bytes are checked). Atomics hit
 * one 8-byte word per QP and stream, so their sequence of original values
 * is predictable. The last op of every stream is a SEND with immediate:
 * once it arrived, so did everything before it (RC and UC keep order).
 *
 * Receives are posted with credits over the TCP connection, so an
 * unreliable transport never finds an empty receive queue. The target
 * knows the size of every message, so each receive buffer is sized for
 * its message (plus random slack) and scattered over both scatter MRs.
 */
#define _GNU_SOURCE
#include <arpa/inet.h>
#include <endian.h>
#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <netdb.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <poll.h>
#include <signal.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#include "tool.h"

#define MAX_SGE		16	/* per work request, if the device allows */
#define MAX_QPS		256
#define NUM_POOL	3	/* source pools, one MR each */
#define NUM_SMR		2	/* scatter MRs per QP */
#define GUARD		64	/* guard bytes around every target range */
#define GRH_LEN		40
#define FILL		0xa5	/* what every unwritten target byte holds */
#define ATOM_STRIDE	16	/* an 8-byte atomic word, then a guard word */
#define LOOKBEHIND	64	/* --allow-loss: how late a message may be */
#define EXTRA_EXP	128	/* expected messages beyond the receive queue */
#define MAX_REPORTS	30
#define UD_QKEY		0x11111111
#define MSG_WORDS	(16 + MAX_QPS * 8)
#define PROTO_MAGIC	0x73726f6365747266ULL	/* "srocetrf" */
#define PROTO_VERSION	2
#define IDLE_SECS	2.0	/* --allow-loss: when the last message is late */

enum kind { K_SEND, K_SEND_IMM, K_WRITE, K_WRITE_IMM, K_READ, K_CAS, K_FADD, K_NR };

static const char *const kind_names[K_NR] = {
	"send", "send_imm", "write", "write_imm", "read", "cas", "fadd",
};

static const char *const kind_verbs[K_NR] = {
	"SEND", "SEND_WITH_IMM", "RDMA_WRITE", "RDMA_WRITE_WITH_IMM",
	"RDMA_READ", "ATOMIC_CMP_AND_SWP", "ATOMIC_FETCH_AND_ADD",
};

static const enum ibv_wr_opcode wr_opcodes[K_NR] = {
	IBV_WR_SEND, IBV_WR_SEND_WITH_IMM, IBV_WR_RDMA_WRITE,
	IBV_WR_RDMA_WRITE_WITH_IMM, IBV_WR_RDMA_READ,
	IBV_WR_ATOMIC_CMP_AND_SWP, IBV_WR_ATOMIC_FETCH_AND_ADD,
};

static const enum ibv_wc_opcode wc_opcodes[K_NR] = {
	IBV_WC_SEND, IBV_WC_SEND, IBV_WC_RDMA_WRITE, IBV_WC_RDMA_WRITE,
	IBV_WC_RDMA_READ, IBV_WC_COMP_SWAP, IBV_WC_FETCH_ADD,
};

#define MIX_UD	(1u << K_SEND | 1u << K_SEND_IMM)
#define MIX_UC	(MIX_UD | 1u << K_WRITE | 1u << K_WRITE_IMM)
#define MIX_RC	((1u << K_NR) - 1)
#define MIX_ATOMIC (1u << K_CAS | 1u << K_FADD)

enum inject {
	INJ_NONE, INJ_DATA, INJ_IMM, INJ_READ, INJ_GUARD, INJ_ATOMIC,
	INJ_WINDOW, INJ_TALLY, INJ_HANG, INJ_NR
};

static const char *const inject_names[INJ_NR] = {
	"none", "data", "imm", "read", "guard", "atomic", "window", "tally", "hang",
};

/* Salts of the random streams derived from the seed. */
enum { SALT_STREAM = 1, SALT_LOCAL, SALT_RECV, SALT_POOL, SALT_ATOM, SALT_PSN };

/* One entry of a gather list (mr: pool) or a scatter list (mr: 0 or 1). */
struct seg {
	uint32_t off;
	uint32_t len;
	uint8_t mr;
};

/*
 * One operation. The fields up to lseg are the stream's (both sides
 * derive them); signaled, inl and lseg are the initiator's own choice.
 */
struct op {
	uint32_t idx;		/* in its stream */
	uint32_t len;		/* payload bytes (8 for atomics) */
	uint32_t imm;		/* host order */
	int32_t rseq;		/* which receive it consumes, or -1 */
	uint64_t roff;		/* write: window offset; read: pool offset */
	uint64_t cmp, arg, orig; /* atomics: compare, swap or add, result */
	uint8_t kind, pool, nseg, nlseg;
	bool signaled, inl;
	struct seg seg[MAX_SGE];	/* gather list: send, write */
	struct seg lseg[MAX_SGE];	/* scatter list: read, atomic result */
};

/* A generator of one stream (side, QP). */
struct stream {
	uint64_t rng;
	uint64_t atom;		/* the simulated atomic word */
	uint32_t next, nops;
	uint32_t nrecv;		/* receive-consuming ops generated */
	uint32_t count[K_NR];
	uint64_t bytes[K_NR];
};

/* A posted receive. */
struct rwqe {
	uint32_t cap;
	uint8_t nseg;
	struct seg seg[MAX_SGE];
};

/* Parameters both sides agree on (the client's options, both devices' limits). */
struct params {
	uint64_t seed;
	uint32_t qps, ops[2], max_size, mix, transport, sq_depth, rq_depth;
	uint32_t max_sge, mtu, max_msg, max_rd_atomic, pool_size, win_size;
	uint8_t ack_timeout;
	bool allow_loss;
};

struct tqp {
	uint32_t idx;
	struct ibv_qp *qp;
	struct ibv_ah *ah;
	uint32_t psn, peer_qpn, peer_psn;
	uint8_t *sbuf[NUM_SMR];
	struct ibv_mr *smr[NUM_SMR];

	/* Initiator: my stream on this QP. */
	struct stream tx;
	uint64_t lrng;
	struct op *ring;	/* sq_depth ops, by op index */
	uint32_t posted, done, since_sig;
	bool have_next;
	uint32_t rlimit;	/* the peer's credit: rseq < rlimit may go */
	uint32_t tx_count[K_NR];

	/* Target: the peer's stream on this QP. */
	struct stream rx;
	uint64_t rrng;
	uint8_t *model, *touched;	/* of my window */
	struct op *exp;		/* expected messages, by rseq */
	uint8_t *got;
	uint32_t exp_lo, exp_hi;
	struct rwqe *wqe;	/* rq_depth receives, by index */
	uint32_t wposted, wdone;
	uint32_t accounted, distinct, dups, sent_limit;
	uint32_t rx_count[K_NR];
	double last_rx;
	double credit_at;	/* --allow-loss: when credit was last forced */
};

static struct options {
	const char *dev, *host, *port;
	bool server, one_way, allow_loss, verbose, mix_set, lax_grh, any_sl;
	int gid_index;
	uint32_t qps, ops, max_size, mix, sq_depth, rq_depth, timeout;
	uint32_t ack_timeout;
	uint64_t seed;
	enum ibv_qp_type transport;
	enum inject inject;
} opt = {
	.port = "18515", .gid_index = -1, .qps = 4, .ops = 1000,
	.max_size = 32768, .sq_depth = 32, .rq_depth = 32, .timeout = 300,
	.ack_timeout = 14, .transport = IBV_QPT_RC,
};

static struct {
	const char *role;
	int side;		/* 0: client, 1: server; my stream's index */
	struct params p;
	int sock;
	struct ibv_context *dev;
	struct ibv_pd *pd;
	struct ibv_comp_channel *chan;
	struct ibv_cq *scq, *rcq;
	union ibv_gid gid, peer_gid;
	uint8_t gid_index;
	bool ipv4;
	uint8_t *pool[NUM_POOL];
	struct ibv_mr *pool_mr[NUM_POOL];
	uint8_t *win, *atom;
	struct ibv_mr *win_mr, *atom_mr;
	size_t win_stride;
	struct {
		uint64_t pool_addr[NUM_POOL], win_addr, atom_addr;
		uint32_t pool_rkey[NUM_POOL], win_rkey, atom_rkey;
	} peer;
	struct tqp *qp;
	uint32_t slot_size, max_inline, exp_size;
	uint8_t *tmp_got, *tmp_exp;
	bool tx_done_sent, verdict_sent, peer_tx_done, peer_verdict;
	double peer_tx_done_at, start, deadline;
	uint32_t peer_count[MAX_QPS][K_NR];
	uint64_t peer_bytes[K_NR], tx_bytes[K_NR];
	uint64_t mismatches, peer_mismatches;
	bool injected;
	char flushed[160];	/* the first flushed completion, if any */
} c;

/* Output and failures */

static double now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec + ts.tv_nsec / 1e9;
}

static void vsay(const char *what, const char *fmt, va_list ap)
{
	printf("sroce-traffic: %s: %s", c.role, what);
	vprintf(fmt, ap);
	putchar('\n');
	fflush(stdout);
}

static void __attribute__((format(printf, 1, 2))) say(const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vsay("", fmt, ap);
	va_end(ap);
}

static void __attribute__((format(printf, 1, 2))) mismatch(const char *fmt, ...)
{
	va_list ap;

	if (++c.mismatches > MAX_REPORTS) {
		if (c.mismatches == MAX_REPORTS + 1)
			say("MISMATCH: further mismatches are counted, not shown");
		return;
	}
	va_start(ap, fmt);
	vsay("MISMATCH ", fmt, ap);
	va_end(ap);
}

/* Should the self-test corruption @what happen now? Once per run. */
static bool inject(enum inject what)
{
	if (opt.inject != what || c.injected)
		return false;
	c.injected = true;
	say("injecting corruption '%s' (self-test)", inject_names[what]);
	return true;
}

static void dump_outstanding(void);

static void __attribute__((format(printf, 1, 2), noreturn)) fatal(const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vsay("FAIL: ", fmt, ap);
	va_end(ap);
	dump_outstanding();
	say("FAIL qps=%u mismatches=%llu", c.p.qps,
	    (unsigned long long)c.mismatches + 1);
	exit(1);
}

static void on_alarm(int sig)
{
	static const char msg[] = "sroce-traffic: FAIL: hung past --timeout (alarm)\n";

	(void)sig;
	if (write(STDOUT_FILENO, msg, sizeof(msg) - 1) < 0)
		_exit(1);
	_exit(1);
}

/* Random numbers: splitmix64, one state per stream. */

static uint64_t rnd64(uint64_t *s)
{
	uint64_t z = (*s += 0x9e3779b97f4a7c15ULL);

	z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
	z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
	return z ^ (z >> 31);
}

/* Uniform in [0, n); 0 if n is 0. */
static uint32_t rnd(uint64_t *s, uint32_t n)
{
	return (uint32_t)(((rnd64(s) >> 32) * n) >> 32);
}

static uint64_t seed_of(uint32_t salt, uint32_t a, uint32_t b)
{
	uint64_t s = c.p.seed ^ ((uint64_t)salt << 56 | (uint64_t)a << 40 | b);

	rnd64(&s);
	return rnd64(&s);
}

static uint32_t min32(uint32_t a, uint32_t b)
{
	return a < b ? a : b;
}

static uint32_t max32(uint32_t a, uint32_t b)
{
	return a > b ? a : b;
}

static uint32_t mtu_bytes(uint32_t mtu)
{
	return 128u << mtu;	/* IBV_MTU_256 is 1 */
}

static bool kind_consumes_recv(unsigned int k)
{
	return k == K_SEND || k == K_SEND_IMM || k == K_WRITE_IMM;
}

static bool kind_has_imm(unsigned int k)
{
	return k == K_SEND_IMM || k == K_WRITE_IMM;
}

static bool kind_is_write(unsigned int k)
{
	return k == K_WRITE || k == K_WRITE_IMM;
}

static bool kind_is_atomic(unsigned int k)
{
	return k == K_CAS || k == K_FADD;
}

static bool ud(void)
{
	return c.p.transport == IBV_QPT_UD;
}

/* Stream generation: what both sides derive from the seed */

static void pool_fill(uint8_t *buf, uint32_t len, unsigned int i)
{
	uint64_t s = seed_of(SALT_POOL, i, 0), v;
	uint32_t off;

	for (off = 0; off < len; off += 8) {
		v = rnd64(&s);
		memcpy(buf + off, &v, min32(8, len - off));
	}
}

static void stream_init(struct stream *s, int side, uint32_t q)
{
	memset(s, 0, sizeof(*s));
	s->rng = seed_of(SALT_STREAM, side, q);
	s->atom = seed_of(SALT_ATOM, side, q);
	s->nops = c.p.ops[side];
}

/* Sizes: 0 and 1, small ones, around MTU multiples, anything up to the max. */
static uint32_t gen_len(uint64_t *s)
{
	uint32_t max = c.p.max_msg, mtu = mtu_bytes(c.p.mtu), len;

	switch (rnd(s, 8)) {
	case 0:
		return 0;
	case 1:
		return min32(1, max);
	case 2:
	case 3:
		return rnd(s, min32(max, 64) + 1);
	case 4:
		len = mtu * (1 + rnd(s, 4)) + rnd(s, 3);
		return min32(max, len ? len - 1 : 0);
	default:
		return rnd(s, max + 1);
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
	return 1 + rnd(s, min32(most, 2 * avg));
}

/* Split @len into 1..max_sge entries (none for 0) of random pools. */
static uint8_t gen_gather(uint64_t *s, uint32_t len, struct seg *sg)
{
	uint32_t n, i, part;

	if (!len)
		return 0;
	n = 1 + rnd(s, min32(c.p.max_sge, len));
	for (i = 0; i < n; i++) {
		part = split_part(s, len, n - i);
		sg[i].mr = rnd(s, NUM_POOL);
		sg[i].off = rnd(s, c.p.pool_size - part + 1);
		sg[i].len = part;
		len -= part;
	}
	return n;
}

static unsigned int pick_kind(uint64_t *s, uint32_t mix)
{
	unsigned int k, n = __builtin_popcount(mix), pick = rnd(s, n);

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
		op->cmp = rnd(&s->rng, 2) ? s->atom : rnd64(&s->rng);
		op->arg = rnd64(&s->rng);
		if (s->atom == op->cmp)
			s->atom = op->arg;
	} else {
		/* Small addends too, so carries stay in the low bytes. */
		op->arg = rnd(&s->rng, 2) ? rnd64(&s->rng) : rnd(&s->rng, 1000);
		s->atom += op->arg;
	}
}

/* The next op of stream @s (the last one is always a SEND with immediate). */
static void gen_op(struct stream *s, struct op *op)
{
	memset(op, 0, offsetof(struct op, seg));
	op->idx = s->next++;
	op->rseq = -1;
	op->kind = op->idx + 1 == s->nops ? K_SEND_IMM : pick_kind(&s->rng, c.p.mix);
	switch (op->kind) {
	case K_READ:
		op->len = gen_len(&s->rng);
		op->pool = rnd(&s->rng, NUM_POOL);
		op->roff = rnd(&s->rng, c.p.pool_size - op->len + 1);
		break;
	case K_CAS:
	case K_FADD:
		gen_atomic(s, op);
		break;
	default:
		op->len = gen_len(&s->rng);
		op->nseg = gen_gather(&s->rng, op->len, op->seg);
		if (kind_is_write(op->kind))
			op->roff = rnd(&s->rng, c.p.win_size - op->len + 1);
		if (kind_has_imm(op->kind))
			op->imm = (uint32_t)rnd64(&s->rng);
		break;
	}
	if (kind_consumes_recv(op->kind))
		op->rseq = s->nrecv++;
	s->count[op->kind]++;
	s->bytes[op->kind] += op->len;
}

/* The payload of @op, as the target must see it, into @buf. */
static void build_payload(const struct op *op, uint8_t *buf)
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
static uint8_t layout_scatter(uint64_t *s, uint32_t cap, struct seg *sg)
{
	uint32_t cursor[NUM_SMR] = { GUARD, GUARD }, n, i, part;
	uint8_t m;

	if (!cap)
		return 0;
	n = 1 + rnd(s, min32(c.p.max_sge, cap));
	for (i = 0; i < n; i++) {
		part = split_part(s, cap, n - i);
		m = rnd(s, NUM_SMR);
		sg[i].mr = m;
		sg[i].off = cursor[m] + rnd(s, 32);
		sg[i].len = part;
		cursor[m] = sg[i].off + part;
		cap -= part;
	}
	return n;
}

static uint8_t *slot_addr(const struct tqp *t, uint8_t mr, uint32_t slot)
{
	return t->sbuf[mr] + (size_t)slot * c.slot_size;
}

static int sges_scatter(const struct tqp *t, uint32_t slot, const struct seg *sg,
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

static int sges_gather(const struct op *op, struct ibv_sge *out)
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
static void scatter_read(const struct tqp *t, uint32_t slot, const struct seg *sg,
			 unsigned int n, uint8_t *out)
{
	unsigned int i;

	for (i = 0; i < n; i++) {
		memcpy(out, slot_addr(t, sg[i].mr, slot) + sg[i].off, sg[i].len);
		out += sg[i].len;
	}
}

/* Flip the byte at stream position @pos of a scatter list (self-tests). */
static void scatter_flip(const struct tqp *t, uint32_t slot, const struct seg *sg,
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

static bool is_fill(const uint8_t *p, size_t n)
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
static bool check_content(const struct tqp *t, uint32_t slot, const struct seg *sg,
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
static bool check_guards(const struct tqp *t, uint32_t slot, const struct seg *sg,
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
static void refill(const struct tqp *t, uint32_t slot, const struct seg *sg, unsigned int n)
{
	unsigned int i;
	uint32_t from, to;

	for (i = 0; i < n; i++) {
		from = sg[i].off - GUARD;
		to = min32(sg[i].off + sg[i].len + GUARD, c.slot_size);
		memset(slot_addr(t, sg[i].mr, slot) + from, FILL, to - from);
	}
}

/* TCP: setup exchange, credits, tallies */

enum msg_type { M_HELLO = 1, M_INFO, M_CREDIT, M_READY, M_TXDONE, M_VERDICT };

static void write_all(const void *buf, size_t len)
{
	ssize_t r;

	while (len) {
		r = write(c.sock, buf, len);
		if (r < 0 && errno == EINTR)
			continue;
		if (r <= 0)
			fatal("TCP write to the peer: %s", strerror(errno));
		buf = (const char *)buf + r;
		len -= r;
	}
}

static void read_all(void *buf, size_t len)
{
	struct pollfd pfd = { .fd = c.sock, .events = POLLIN };
	ssize_t r;
	int ms;

	while (len) {
		ms = (int)((c.deadline - now()) * 1000);
		if (ms <= 0 || !poll(&pfd, 1, ms))
			fatal("timed out after %us waiting for the peer", opt.timeout);
		r = read(c.sock, buf, len);
		if (r < 0 && (errno == EINTR || errno == EAGAIN))
			continue;
		if (r < 0)
			fatal("TCP read from the peer: %s", strerror(errno));
		if (!r)
			fatal("the peer closed the connection");
		buf = (char *)buf + r;
		len -= r;
	}
}

static void send_msg(uint64_t type, const uint64_t *w, uint32_t n)
{
	uint64_t buf[2 + MSG_WORDS];
	uint32_t i;

	buf[0] = htobe64(type);
	buf[1] = htobe64(n);
	for (i = 0; i < n; i++)
		buf[2 + i] = htobe64(w[i]);
	write_all(buf, (2 + n) * sizeof(uint64_t));
}

/* Read one message into @w; return its type. */
static uint64_t recv_msg(uint64_t *w, uint32_t *n)
{
	uint64_t hdr[2];
	uint32_t i;

	read_all(hdr, sizeof(hdr));
	*n = be64toh(hdr[1]);
	if (*n > MSG_WORDS)
		fatal("protocol: a message of %u words", *n);
	read_all(w, *n * sizeof(uint64_t));
	for (i = 0; i < *n; i++)
		w[i] = be64toh(w[i]);
	return be64toh(hdr[0]);
}

static void expect_msg(uint64_t type, uint64_t *w, uint32_t n)
{
	uint32_t got_n;
	uint64_t got = recv_msg(w, &got_n);

	if (got != type || got_n < n)
		fatal("protocol: got message %llu (%u words), expected %llu (%u)",
		      (unsigned long long)got, got_n, (unsigned long long)type, n);
}

static void handle_msg(uint64_t type, const uint64_t *w, uint32_t n)
{
	uint32_t q, k;

	switch (type) {
	case M_CREDIT:
		if (n < 2 || w[0] >= c.p.qps)
			fatal("protocol: bad credit message");
		c.qp[w[0]].rlimit = max32(c.qp[w[0]].rlimit, w[1]);
		break;
	case M_TXDONE:
		if (n < c.p.qps * K_NR + K_NR)
			fatal("protocol: short tally message");
		for (q = 0; q < c.p.qps; q++)
			for (k = 0; k < K_NR; k++)
				c.peer_count[q][k] = w[q * K_NR + k];
		for (k = 0; k < K_NR; k++)
			c.peer_bytes[k] = w[c.p.qps * K_NR + k];
		c.peer_tx_done = true;
		c.peer_tx_done_at = now();
		break;
	case M_VERDICT:
		c.peer_mismatches = n ? w[0] : 1;
		c.peer_verdict = true;
		break;
	default:
		fatal("protocol: unexpected message %llu", (unsigned long long)type);
	}
}

/* Handle whatever the peer sent, without blocking for a new message. */
static int service_tcp(void)
{
	struct pollfd pfd = { .fd = c.sock, .events = POLLIN };
	uint64_t w[MSG_WORDS];
	uint32_t n;
	uint64_t type;
	int handled = 0;

	/* After its verdict the peer sends nothing more, and may be gone. */
	while (!c.peer_verdict && poll(&pfd, 1, 0) > 0) {
		type = recv_msg(w, &n);
		handle_msg(type, w, n);
		handled++;
	}
	return handled;
}

static int tcp_connect(void)
{
	struct addrinfo hints = { .ai_socktype = SOCK_STREAM }, *res, *ai;
	int fd, err;

	err = getaddrinfo(opt.host, opt.port, &hints, &res);
	if (err)
		tool_die("%s: %s", opt.host, gai_strerror(err));
	for (;;) {
		for (ai = res; ai; ai = ai->ai_next) {
			fd = socket(ai->ai_family, ai->ai_socktype, ai->ai_protocol);
			if (fd < 0)
				continue;
			if (!connect(fd, ai->ai_addr, ai->ai_addrlen)) {
				freeaddrinfo(res);
				return fd;
			}
			close(fd);
		}
		/* The server may not listen yet: retry until the timeout. */
		if (now() > c.deadline)
			fatal("cannot connect to %s port %s: %s", opt.host, opt.port,
			      strerror(errno));
		usleep(100000);
	}
}

static int tcp_accept(void)
{
	struct sockaddr_in6 sa = { .sin6_family = AF_INET6, .sin6_addr = IN6ADDR_ANY_INIT };
	struct pollfd pfd = { .events = POLLIN };
	int fd, one = 1, zero = 0, ms;

	sa.sin6_port = htons(tool_number(opt.port, 65535));
	fd = socket(AF_INET6, SOCK_STREAM, 0);
	if (fd < 0)
		tool_die("socket: %s", strerror(errno));
	setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one));
	setsockopt(fd, IPPROTO_IPV6, IPV6_V6ONLY, &zero, sizeof(zero));
	if (bind(fd, (struct sockaddr *)&sa, sizeof(sa)) || listen(fd, 1))
		tool_die("listen on port %s: %s", opt.port, strerror(errno));
	say("listening on port %s", opt.port);
	pfd.fd = fd;
	ms = (int)((c.deadline - now()) * 1000);
	if (ms <= 0 || poll(&pfd, 1, ms) <= 0)
		fatal("no client within %us", opt.timeout);
	c.sock = accept(fd, NULL, NULL);
	if (c.sock < 0)
		tool_die("accept: %s", strerror(errno));
	close(fd);
	return c.sock;
}

/* Device and parameters */

struct caps {
	uint32_t max_sge, mtu, rd_atom, dest_rd_atom, atomic, max_wr;
};

static void pick_gid(void)
{
	struct ibv_port_attr pa;
	struct ibv_gid_entry e;
	int i, v2 = -1;

	if (opt.gid_index >= 0) {
		c.gid_index = opt.gid_index;
		return;
	}
	if (ibv_query_port(c.dev, 1, &pa))
		tool_die("ibv_query_port: %s", strerror(errno));
	for (i = 0; i < pa.gid_tbl_len; i++) {
		if (ibv_query_gid_ex(c.dev, 1, i, &e, 0) ||
		    e.gid_type != IBV_GID_TYPE_ROCE_V2)
			continue;
		if (v2 < 0)
			v2 = i;
		if (e.gid.raw[10] == 0xff && e.gid.raw[11] == 0xff) {
			v2 = i;	/* prefer IPv4 */
			break;
		}
	}
	if (v2 < 0)
		tool_die("%s has no RoCE v2 GID: use -g", ibv_get_device_name(c.dev->device));
	c.gid_index = v2;
}

static void open_device(struct caps *caps)
{
	struct ibv_device_attr da;
	struct ibv_port_attr pa;
	struct ibv_device **list;

	if (opt.dev) {
		c.dev = tool_open_device(opt.dev);
	} else {
		list = ibv_get_device_list(NULL);
		if (!list || !list[0])
			tool_die("no RDMA device");
		c.dev = ibv_open_device(list[0]);
		if (!c.dev)
			tool_die("ibv_open_device: %s", strerror(errno));
		ibv_free_device_list(list);
	}
	if (ibv_query_device(c.dev, &da) || ibv_query_port(c.dev, 1, &pa))
		tool_die("cannot query the device: %s", strerror(errno));
	pick_gid();
	if (ibv_query_gid(c.dev, 1, c.gid_index, &c.gid))
		tool_die("no GID %u", c.gid_index);
	caps->max_sge = min32(da.max_sge, MAX_SGE);
	caps->mtu = pa.active_mtu;
	caps->rd_atom = da.max_qp_init_rd_atom;
	caps->dest_rd_atom = da.max_qp_rd_atom;
	caps->atomic = da.atomic_cap;
	caps->max_wr = min32(da.max_qp_wr, da.max_cqe / MAX_QPS);
}

/* HELLO: the client's options, then the sender's device limits. */
static uint32_t hello_words(const struct caps *caps, uint64_t *w)
{
	uint64_t v[] = {
		PROTO_MAGIC, PROTO_VERSION, opt.seed, opt.qps, opt.ops, opt.max_size,
		opt.mix, opt.transport, opt.sq_depth, opt.rq_depth,
		opt.one_way | opt.allow_loss << 1 | opt.mix_set << 2 |
			(uint64_t)opt.ack_timeout << 8,
		caps->max_sge, caps->mtu, caps->rd_atom, caps->dest_rd_atom,
		caps->atomic, caps->max_wr,
	};

	memcpy(w, v, sizeof(v));
	return sizeof(v) / sizeof(v[0]);
}

static void negotiate(const uint64_t *cl, const uint64_t *sv)
{
	struct params *p = &c.p;
	bool one_way = cl[10] & 1;

	if (cl[0] != PROTO_MAGIC || sv[0] != PROTO_MAGIC || cl[1] != sv[1])
		fatal("protocol: the peer is not sroce-traffic version %u", PROTO_VERSION);
	p->seed = cl[2];
	p->qps = cl[3];
	p->ops[0] = one_way ? cl[4] : (cl[4] + 1) / 2;
	p->ops[1] = one_way ? 0 : cl[4] / 2;
	p->max_size = cl[5];
	p->mix = cl[6];
	p->transport = cl[7];
	p->allow_loss = cl[10] & 2;
	p->ack_timeout = (cl[10] >> 8) & 31;
	p->sq_depth = min32(cl[8], min32(cl[16], sv[16]));
	p->rq_depth = min32(cl[9], min32(cl[16], sv[16]));
	p->max_sge = min32(cl[11], sv[11]);
	p->mtu = min32(cl[12], sv[12]);
	p->max_rd_atomic = max32(1, min32(16, min32(min32(cl[13], sv[14]), min32(sv[13], cl[14]))));
	if ((p->mix & MIX_ATOMIC) && (cl[15] == IBV_ATOMIC_NONE || sv[15] == IBV_ATOMIC_NONE)) {
		if (cl[10] & 4)
			fatal("--mix asks for atomics, but a device has none");
		p->mix &= ~MIX_ATOMIC;
		say("a device has no atomics: leaving cas and fadd out");
	}
	p->max_msg = ud() ? min32(p->max_size, mtu_bytes(p->mtu)) : p->max_size;
	p->pool_size = (p->max_size + 4096 + 7) & ~7u;
	p->win_size = max32(2 * p->max_msg, 8192);
}

/* Resources */

static void *zalloc(size_t len)
{
	void *p;

	if (posix_memalign(&p, 4096, len ? len : 1))
		tool_die("out of memory (%zu bytes)", len);
	memset(p, 0, len);
	return p;
}

static struct ibv_mr *reg(void *buf, size_t len, int access)
{
	struct ibv_mr *mr = ibv_reg_mr(c.pd, buf, len, access);

	if (!mr)
		tool_die("ibv_reg_mr (%zu bytes): %s", len, strerror(errno));
	return mr;
}

static void alloc_memory(void)
{
	const int remote = IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_REMOTE_WRITE;
	uint32_t max_cap, i;

	for (i = 0; i < NUM_POOL; i++) {
		c.pool[i] = zalloc(c.p.pool_size);
		pool_fill(c.pool[i], c.p.pool_size, i);
		c.pool_mr[i] = reg(c.pool[i], c.p.pool_size, IBV_ACCESS_REMOTE_READ);
	}
	c.win_stride = c.p.win_size + 2 * GUARD;
	c.win = zalloc(c.win_stride * c.p.qps);
	memset(c.win, FILL, c.win_stride * c.p.qps);
	c.win_mr = reg(c.win, c.win_stride * c.p.qps, remote);
	c.atom = zalloc(ATOM_STRIDE * c.p.qps);
	memset(c.atom, FILL, ATOM_STRIDE * c.p.qps);
	c.atom_mr = reg(c.atom, ATOM_STRIDE * c.p.qps, remote | IBV_ACCESS_REMOTE_ATOMIC);
	/* A slot holds the largest scatter list: capacity, gaps, guards. */
	max_cap = max32(c.p.max_size, GRH_LEN + c.p.max_msg) + 64;
	c.slot_size = (2 * GUARD + max_cap + MAX_SGE * 32 + 64 + 63) & ~63u;
	c.exp_size = c.p.rq_depth + EXTRA_EXP + LOOKBEHIND;
	c.tmp_got = zalloc(max32(c.slot_size, c.win_stride));
	c.tmp_exp = zalloc(max32(max32(c.slot_size, c.p.pool_size), c.win_stride));
}

static void alloc_qp_memory(struct tqp *t)
{
	size_t len = (size_t)(c.p.sq_depth + c.p.rq_depth) * c.slot_size;
	unsigned int m;

	for (m = 0; m < NUM_SMR; m++) {
		t->sbuf[m] = zalloc(len);
		memset(t->sbuf[m], FILL, len);
		t->smr[m] = reg(t->sbuf[m], len, IBV_ACCESS_LOCAL_WRITE);
	}
	t->ring = zalloc(sizeof(*t->ring) * c.p.sq_depth);
	t->exp = zalloc(sizeof(*t->exp) * c.exp_size);
	t->got = zalloc(c.exp_size);
	t->wqe = zalloc(sizeof(*t->wqe) * c.p.rq_depth);
	t->model = zalloc(c.win_stride);
	memset(t->model, FILL, c.win_stride);
	t->touched = zalloc(c.win_stride);
}

static struct ibv_qp *create_qp(uint32_t inline_want)
{
	struct ibv_qp_init_attr ia = {
		.send_cq = c.scq, .recv_cq = c.rcq, .qp_type = c.p.transport,
		.cap = {
			.max_send_wr = c.p.sq_depth, .max_recv_wr = c.p.rq_depth,
			.max_send_sge = c.p.max_sge, .max_recv_sge = c.p.max_sge,
			.max_inline_data = inline_want,
		},
	};
	struct ibv_qp *qp = ibv_create_qp(c.pd, &ia);

	if (qp)
		c.max_inline = ia.cap.max_inline_data;
	return qp;
}

static void create_qps(void)
{
	uint32_t q, n = c.p.qps;
	uint64_t s;

	c.pd = ibv_alloc_pd(c.dev);
	c.chan = ibv_create_comp_channel(c.dev);
	if (!c.pd || !c.chan)
		tool_die("ibv_alloc_pd/ibv_create_comp_channel: %s", strerror(errno));
	c.scq = ibv_create_cq(c.dev, n * c.p.sq_depth + 1, NULL, c.chan, 0);
	c.rcq = ibv_create_cq(c.dev, n * c.p.rq_depth + 1, NULL, c.chan, 0);
	if (!c.scq || !c.rcq)
		tool_die("ibv_create_cq: %s", strerror(errno));
	fcntl(c.chan->fd, F_SETFL, fcntl(c.chan->fd, F_GETFL) | O_NONBLOCK);
	fcntl(c.dev->async_fd, F_SETFL, fcntl(c.dev->async_fd, F_GETFL) | O_NONBLOCK);
	alloc_memory();
	c.qp = zalloc(sizeof(*c.qp) * n);
	for (q = 0; q < n; q++) {
		struct tqp *t = &c.qp[q];

		t->idx = q;
		t->qp = create_qp(64);
		if (!t->qp)
			t->qp = create_qp(0);
		if (!t->qp)
			tool_die("ibv_create_qp: %s", strerror(errno));
		/* Odd QPs start just below the PSN wrap. */
		s = seed_of(SALT_PSN, c.side, q);
		t->psn = q & 1 ? 0xffffff - rnd(&s, 64) : rnd(&s, 1 << 24);
		t->lrng = seed_of(SALT_LOCAL, c.side, q);
		t->rrng = seed_of(SALT_RECV, c.side, q);
		stream_init(&t->tx, c.side, q);
		stream_init(&t->rx, !c.side, q);
		alloc_qp_memory(t);
		/* The peer's atomic word for this QP starts where its stream expects. */
		memcpy(c.atom + q * ATOM_STRIDE, &t->rx.atom, 8);
	}
}

/* INFO: my GID, MRs and QPs. */
static void exchange_info(void)
{
	uint64_t w[MSG_WORDS], *p = w;
	uint32_t q, i;

	memcpy(p, c.gid.raw, 16);
	p += 2;
	for (i = 0; i < NUM_POOL; i++) {
		*p++ = (uintptr_t)c.pool[i];
		*p++ = c.pool_mr[i]->rkey;
	}
	*p++ = (uintptr_t)c.win;
	*p++ = c.win_mr->rkey;
	*p++ = (uintptr_t)c.atom;
	*p++ = c.atom_mr->rkey;
	for (q = 0; q < c.p.qps; q++) {
		*p++ = c.qp[q].qp->qp_num;
		*p++ = c.qp[q].psn;
	}
	/* The GID's bytes travel as they are: undo send_msg's swap. */
	w[0] = be64toh(w[0]);
	w[1] = be64toh(w[1]);
	send_msg(M_INFO, w, p - w);
	expect_msg(M_INFO, w, 12 + 2 * c.p.qps);
	w[0] = htobe64(w[0]);
	w[1] = htobe64(w[1]);
	memcpy(c.peer_gid.raw, w, 16);
	for (i = 0; i < NUM_POOL; i++) {
		c.peer.pool_addr[i] = w[2 + 2 * i];
		c.peer.pool_rkey[i] = w[3 + 2 * i];
	}
	c.peer.win_addr = w[8];
	c.peer.win_rkey = w[9];
	c.peer.atom_addr = w[10];
	c.peer.atom_rkey = w[11];
	for (q = 0; q < c.p.qps; q++) {
		c.qp[q].peer_qpn = w[12 + 2 * q];
		c.qp[q].peer_psn = w[13 + 2 * q];
	}
}

static void set_av(struct ibv_ah_attr *ah)
{
	ah->is_global = 1;
	ah->grh.dgid = c.peer_gid;
	ah->grh.sgid_index = c.gid_index;
	ah->grh.hop_limit = 64;
	ah->port_num = 1;
}

static void modify(struct tqp *t, struct ibv_qp_attr *a, int mask, const char *state)
{
	int err = ibv_modify_qp(t->qp, a, mask);

	if (err)
		fatal("qp %u: modify QP to %s: %s", t->idx, state, strerror(err));
}

static void connect_qp(struct tqp *t)
{
	struct ibv_qp_attr a = { .qp_state = IBV_QPS_INIT, .port_num = 1 };
	int mask = IBV_QP_STATE | IBV_QP_PKEY_INDEX | IBV_QP_PORT;
	bool rc = c.p.transport == IBV_QPT_RC;

	if (ud()) {
		a.qkey = UD_QKEY;
		modify(t, &a, mask | IBV_QP_QKEY, "INIT");
		a.qp_state = IBV_QPS_RTR;
		modify(t, &a, IBV_QP_STATE, "RTR");
		set_av(&a.ah_attr);
		t->ah = ibv_create_ah(c.pd, &a.ah_attr);
		if (!t->ah)
			fatal("qp %u: ibv_create_ah: %s", t->idx, strerror(errno));
	} else {
		a.qp_access_flags = IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_REMOTE_WRITE |
				    (rc ? IBV_ACCESS_REMOTE_READ | IBV_ACCESS_REMOTE_ATOMIC : 0);
		modify(t, &a, mask | IBV_QP_ACCESS_FLAGS, "INIT");
		memset(&a, 0, sizeof(a));
		a.qp_state = IBV_QPS_RTR;
		a.path_mtu = c.p.mtu;
		a.dest_qp_num = t->peer_qpn;
		a.rq_psn = t->peer_psn;
		set_av(&a.ah_attr);
		mask = IBV_QP_STATE | IBV_QP_AV | IBV_QP_PATH_MTU | IBV_QP_DEST_QPN | IBV_QP_RQ_PSN;
		if (rc) {
			a.max_dest_rd_atomic = c.p.max_rd_atomic;
			a.min_rnr_timer = 1;
			mask |= IBV_QP_MAX_DEST_RD_ATOMIC | IBV_QP_MIN_RNR_TIMER;
		}
		modify(t, &a, mask, "RTR");
	}
	memset(&a, 0, sizeof(a));
	a.qp_state = IBV_QPS_RTS;
	a.sq_psn = t->psn;
	mask = IBV_QP_STATE | IBV_QP_SQ_PSN;
	if (rc) {
		a.timeout = c.p.ack_timeout;
		a.retry_cnt = 7;
		a.rnr_retry = 7;
		a.max_rd_atomic = c.p.max_rd_atomic;
		mask |= IBV_QP_TIMEOUT | IBV_QP_RETRY_CNT | IBV_QP_RNR_RETRY |
			IBV_QP_MAX_QP_RD_ATOMIC;
	}
	modify(t, &a, mask, "RTS");
}

/* Initiator: posting my stream, checking its completions */

/* Choices that are mine alone: signaling, inline, where results land. */
static void gen_local(struct tqp *t, struct op *op)
{
	bool last = op->idx + 1 == t->tx.nops;

	op->signaled = last || !rnd(&t->lrng, 3) || t->since_sig + 1 >= c.p.sq_depth / 2;
	t->since_sig = op->signaled ? 0 : t->since_sig + 1;
	op->inl = (op->kind <= K_WRITE_IMM) && op->len <= c.max_inline && rnd(&t->lrng, 2);
	if (op->kind == K_READ) {
		op->nlseg = layout_scatter(&t->lrng, op->len, op->lseg);
	} else if (kind_is_atomic(op->kind)) {
		op->nlseg = 1;
		op->lseg[0].mr = rnd(&t->lrng, NUM_SMR);
		op->lseg[0].off = GUARD + 8 * rnd(&t->lrng, 8);
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
static int post_sends(struct tqp *t)
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

static void on_send_wc(const struct ibv_wc *wc)
{
	uint32_t q = wc->wr_id >> 32, k = (uint32_t)wc->wr_id, first;
	const struct op *op;
	struct tqp *t;

	if (q >= c.p.qps)
		fatal("send completion with a wr_id I never posted: 0x%llx",
		      (unsigned long long)wc->wr_id);
	t = &c.qp[q];
	op = &t->ring[k % c.p.sq_depth];
	if (wc->status == IBV_WC_WR_FLUSH_ERR && !c.flushed[0])
		snprintf(c.flushed, sizeof(c.flushed), "qp %u my op %u: completion status %s",
			 q, k, ibv_wc_status_str(wc->status));
	if (wc->status == IBV_WC_WR_FLUSH_ERR)
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

/* Target: the peer's stream, receives and my memory */

/* Replay the peer's next op: apply its writes to the model of my window. */
static void replay_next(struct tqp *t, struct op *op)
{
	uint8_t *dst;

	gen_op(&t->rx, op);
	if (!kind_is_write(op->kind))
		return;
	dst = t->model + GUARD + op->roff;
	build_payload(op, dst);
	memset(t->touched + GUARD + op->roff, 1, op->len);
}

/* Generate expected messages as far as the ring allows. */
static void replay_more(struct tqp *t)
{
	struct op op;

	if (c.p.allow_loss)
		while (t->exp_lo + LOOKBEHIND < t->accounted)
			t->exp_lo++;
	while (t->rx.next < t->rx.nops && t->exp_hi - t->exp_lo < c.exp_size) {
		replay_next(t, &op);
		if (op.rseq < 0)
			continue;
		t->exp[op.rseq % c.exp_size] = op;
		t->got[op.rseq % c.exp_size] = 0;
		t->exp_hi++;
	}
}

static void post_recvs(struct tqp *t)
{
	struct ibv_sge sge[MAX_SGE];
	struct ibv_recv_wr wr = { .sg_list = sge }, *bad;
	uint32_t cap, k, grh = ud() ? GRH_LEN : 0;
	const struct op *op;
	struct rwqe *w;
	int err;

	while (t->wposted - t->wdone < c.p.rq_depth) {
		k = t->wposted;
		if (c.p.allow_loss) {
			cap = grh + c.p.max_msg + rnd(&t->rrng, 64);
		} else {
			replay_more(t);
			if (k >= t->exp_hi)
				break;
			op = &t->exp[k % c.exp_size];
			cap = grh + (op->kind == K_WRITE_IMM ? 0 : op->len) +
			      (rnd(&t->rrng, 2) ? 0 : rnd(&t->rrng, 64));
		}
		w = &t->wqe[k % c.p.rq_depth];
		w->cap = cap;
		w->nseg = layout_scatter(&t->rrng, cap, w->seg);
		wr.wr_id = (uint64_t)t->idx << 32 | k;
		wr.num_sge = sges_scatter(t, c.p.sq_depth + k % c.p.rq_depth, w->seg, w->nseg, sge);
		err = ibv_post_recv(t->qp, &wr, &bad);
		if (err)
			fatal("qp %u: ibv_post_recv: %s", t->idx, strerror(err));
		t->wposted++;
	}
}

/* Tell the peer how far it may go, before it has to wait. */
static void send_credit(struct tqp *t, bool force)
{
	uint32_t limit;
	uint64_t w[2];

	/*
	 * --allow-loss: credit follows the messages that arrive, so a burst
	 * that loses all the peer could send (a full queue somewhere on a
	 * loaded host) would leave it waiting for credit for ever. After a
	 * quiet while, what it may have sent is taken for lost. Not
	 * last_rx: that is when a message last came (rx_done_qp()).
	 */
	if (c.p.allow_loss && !c.peer_tx_done && t->sent_limit > t->accounted &&
	    now() > (t->last_rx > t->credit_at ? t->last_rx : t->credit_at) + IDLE_SECS) {
		t->accounted = t->sent_limit;
		t->credit_at = now();
		force = true;
	}
	limit = c.p.allow_loss ? t->accounted + (t->wposted - t->wdone) : t->wposted;
	w[0] = t->idx;
	w[1] = limit;

	if (limit <= t->sent_limit && !force)
		return;
	if (!force && limit - t->sent_limit < max32(1, c.p.rq_depth / 4) &&
	    t->sent_limit - t->accounted > c.p.rq_depth / 2)
		return;
	send_msg(M_CREDIT, w, 2);
	t->sent_limit = limit;
}

static int header_problems(const struct tqp *t, const struct op *op, const struct ibv_wc *wc,
			   const char *what)
{
	enum ibv_wc_opcode opcode = op->kind == K_WRITE_IMM ? IBV_WC_RECV_RDMA_WITH_IMM : IBV_WC_RECV;
	/* RoCEv2 with an IPv4 (0xa) or IPv6 (0x9) header, as mlx5 reports it. */
	uint8_t sl = c.ipv4 ? 0xa : 0x9;
	uint32_t len = (ud() ? GRH_LEN : 0) + op->len, imm = op->imm;
	bool with_imm = wc->wc_flags & IBV_WC_WITH_IMM;
	int bad = 0;

	if (what && kind_has_imm(op->kind) && inject(INJ_IMM))
		imm ^= 1;
	if (wc->opcode != opcode && ++bad && what)
		mismatch("%s: receive opcode %d, expected %d", what, wc->opcode, opcode);
	if (with_imm != kind_has_imm(op->kind) && ++bad && what)
		mismatch("%s: wc_flags 0x%x, IBV_WC_WITH_IMM expected %s", what,
			 wc->wc_flags, kind_has_imm(op->kind) ? "set" : "clear");
	if (with_imm && kind_has_imm(op->kind) && wc->imm_data != htobe32(imm) && ++bad && what)
		mismatch("%s: imm_data 0x%08x, expected 0x%08x (network order)", what,
			 be32toh(wc->imm_data), imm);
	if (wc->byte_len != len && ++bad && what)
		mismatch("%s: byte_len %u, expected %u", what, wc->byte_len, len);
	if (ud() && !(wc->wc_flags & IBV_WC_GRH) && ++bad && what)
		mismatch("%s: wc_flags 0x%x without IBV_WC_GRH", what, wc->wc_flags);
	if (ud() && wc->src_qp != t->peer_qpn && ++bad && what)
		mismatch("%s: src_qp 0x%x, expected 0x%x", what, wc->src_qp, t->peer_qpn);
	if (ud() && !opt.any_sl && wc->sl != sl && ++bad && what)
		mismatch("%s: wc.sl 0x%x, expected 0x%x: the RoCE packet type of an %s receive "
			 "(--any-sl accepts any)", what, wc->sl, sl, c.ipv4 ? "IPv4" : "IPv6");
	return bad;
}

static uint16_t ip_checksum(const uint8_t *h)
{
	uint32_t sum = 0;
	int i;

	for (i = 0; i < 20; i += 2)
		sum += h[i] << 8 | h[i + 1];
	while (sum >> 16)
		sum = (sum & 0xffff) + (sum >> 16);
	return (uint16_t)sum;
}

/*
 * The GRH area of a UD receive holds the sender's IP header: IPv6 in all
 * 40 bytes, IPv4 in the last 20 and zeros before (the receive buffer was
 * filled with FILL). UCX finds its own address at the end of the area,
 * the last 16 bytes (IPv6) or 4 (IPv4), telling the two apart by wc.sl
 * (before 1.18) or by the first byte's version nibble (1.18 on).
 */
static void check_grh(const uint8_t *g, const struct op *op, const char *what)
{
	/* UDP + BTH + DETH [+ ImmDt] + payload + pad + ICRC */
	uint32_t udp = 8 + 12 + 8 + (kind_has_imm(op->kind) ? 4 : 0) +
		       ((op->len + 3) & ~3u) + 4;
	const uint8_t *ip = g + 20;

	if (c.ipv4) {
		static const uint8_t zero[20];

		if (memcmp(g, zero, sizeof(zero)))
			mismatch("%s: GRH area bytes 0..19 of an IPv4 receive are not zero: "
				 "%02x %02x %02x %02x ..", what, g[0], g[1], g[2], g[3]);
		if (ip[0] != 0x45 || ip[9] != IPPROTO_UDP || (uint32_t)(ip[2] << 8 | ip[3]) != 20 + udp ||
		    memcmp(ip + 12, c.peer_gid.raw + 12, 4) || memcmp(ip + 16, c.gid.raw + 12, 4))
			mismatch("%s: GRH area bytes 20..39 are not the IPv4 header from %u.%u.%u.%u "
				 "of %u bytes: %02x %02x %02x%02x .. proto %u src %u.%u.%u.%u dst %u.%u.%u.%u",
				 what, c.peer_gid.raw[12], c.peer_gid.raw[13], c.peer_gid.raw[14],
				 c.peer_gid.raw[15], 20 + udp, ip[0], ip[1], ip[2], ip[3], ip[9],
				 ip[12], ip[13], ip[14], ip[15], ip[16], ip[17], ip[18], ip[19]);
		else if (ip_checksum(ip) != 0xffff && !(opt.lax_grh && !ip[10] && !ip[11]))
			mismatch("%s: the IPv4 header in the GRH area has a bad checksum 0x%02x%02x "
				 "(--lax-grh-checksum accepts that)", what, ip[10], ip[11]);
		return;
	}
	if (g[0] >> 4 != 6 || g[6] != IPPROTO_UDP || (uint32_t)(g[4] << 8 | g[5]) != udp ||
	    memcmp(g + 8, c.peer_gid.raw, 16) || memcmp(g + 24, c.gid.raw, 16))
		mismatch("%s: GRH area is not the IPv6 header of the sender: version %u "
			 "next header %u payload length %u (expected %u)",
			 what, g[0] >> 4, g[6], g[4] << 8 | g[5], udp);
}

/* The content of a receive for @op: payload, capacity, guards, GRH. */
static bool recv_content(struct tqp *t, uint32_t slot, const struct rwqe *w,
			 const struct op *op, const char *what)
{
	uint32_t skip = ud() ? GRH_LEN : 0, len = op->kind == K_WRITE_IMM ? 0 : op->len;

	build_payload(op, c.tmp_exp);
	/* With --allow-loss a UC receive may hold the rest of an aborted message. */
	return check_content(t, slot, w->seg, w->nseg, w->cap, skip, c.tmp_exp, len,
			     !c.p.allow_loss, what);
}

/* Find the message that arrived; return its rseq or -1. */
static int32_t match_tolerant(struct tqp *t, const struct ibv_wc *wc, uint32_t slot,
			      const struct rwqe *w)
{
	uint32_t j;

	replay_more(t);
	for (j = t->exp_lo; j < t->exp_hi; j++) {
		const struct op *op = &t->exp[j % c.exp_size];

		if (!header_problems(t, op, wc, NULL) && recv_content(t, slot, w, op, NULL))
			return j;
	}
	return -1;
}

static void rx_accept(struct tqp *t, const struct op *op, uint32_t slot, const struct rwqe *w,
		      const char *what)
{
	uint8_t *got = &t->got[op->rseq % c.exp_size];

	if (ud()) {
		scatter_read(t, slot, w->seg, w->nseg, c.tmp_got);
		check_grh(c.tmp_got, op, what);
	}
	if (*got) {
		t->dups++;
		return;
	}
	*got = 1;
	t->distinct++;
	t->rx_count[op->kind]++;
	t->accounted = max32(t->accounted, op->rseq + 1);
}

static void on_recv_wc(const struct ibv_wc *wc)
{
	uint32_t q = wc->wr_id >> 32, k = (uint32_t)wc->wr_id, slot;
	const struct rwqe *w;
	const struct op *op;
	struct tqp *t;
	char what[96];
	int32_t j;

	if (q >= c.p.qps)
		fatal("receive completion with a wr_id I never posted: 0x%llx",
		      (unsigned long long)wc->wr_id);
	t = &c.qp[q];
	if (wc->status == IBV_WC_WR_FLUSH_ERR && !c.flushed[0])
		snprintf(c.flushed, sizeof(c.flushed), "qp %u receive %u: completion status %s",
			 q, k, ibv_wc_status_str(wc->status));
	if (wc->status == IBV_WC_WR_FLUSH_ERR)
		return;
	if (wc->status != IBV_WC_SUCCESS)
		fatal("qp %u receive %u: completion status %s (%d), vendor_err 0x%x",
		      q, k, ibv_wc_status_str(wc->status), wc->status, wc->vendor_err);
	if (wc->qp_num != t->qp->qp_num)
		mismatch("qp %u receive %u: completion has qp_num 0x%x, expected 0x%x",
			 q, k, wc->qp_num, t->qp->qp_num);
	if (k != t->wdone)
		fatal("qp %u: completion of receive %u, expected receive %u first", q, k, t->wdone);
	w = &t->wqe[k % c.p.rq_depth];
	slot = c.p.sq_depth + k % c.p.rq_depth;
	snprintf(what, sizeof(what), "qp %u receive %u", q, k);
	if (c.p.allow_loss) {
		j = match_tolerant(t, wc, slot, w);
		if (j < 0)
			mismatch("qp %u receive %u: opcode %d byte_len %u imm 0x%08x matches none of "
				 "the peer's messages %u..%u", q, k, wc->opcode, wc->byte_len,
				 be32toh(wc->imm_data), t->exp_lo, t->exp_hi - 1);
		else
			op = &t->exp[j % c.exp_size];
	} else {
		op = &t->exp[k % c.exp_size];
		j = k;
		snprintf(what, sizeof(what), "qp %u peer's op %u %s len %u (receive %u)",
			 q, op->idx, kind_verbs[op->kind], op->len, k);
		if (op->len && op->kind != K_WRITE_IMM && inject(INJ_DATA))
			scatter_flip(t, slot, w->seg, w->nseg, (ud() ? GRH_LEN : 0) + op->len / 2);
		header_problems(t, op, wc, what);
		recv_content(t, slot, w, op, what);
		t->exp_lo++;
	}
	if (j >= 0) {
		snprintf(what, sizeof(what), "qp %u peer's op %u %s len %u (receive %u)",
			 q, op->idx, kind_verbs[op->kind], op->len, k);
		rx_accept(t, op, slot, w, what);
	}
	check_guards(t, slot, w->seg, w->nseg, what);
	refill(t, slot, w->seg, w->nseg);
	t->wdone++;
	t->last_rx = now();
}

/* The end: tallies, memory checks, verdicts */

static bool tx_done(void)
{
	uint32_t q;

	for (q = 0; q < c.p.qps; q++)
		if (c.qp[q].done < c.qp[q].tx.nops)
			return false;
	return true;
}

static bool rx_done_qp(struct tqp *t)
{
	if (!c.p.allow_loss)
		return t->rx.next == t->rx.nops && t->wdone == t->rx.nrecv;
	if (!c.peer_tx_done)
		return false;
	replay_more(t);
	if (t->rx.next == t->rx.nops && t->distinct == t->rx.nrecv)
		return true;
	/* Whatever is still missing after a quiet while was lost. */
	return now() > (t->last_rx > c.peer_tx_done_at ? t->last_rx : c.peer_tx_done_at) +
		       IDLE_SECS;
}

static bool rx_done(void)
{
	uint32_t q;

	for (q = 0; q < c.p.qps; q++)
		if (!rx_done_qp(&c.qp[q]))
			return false;
	return true;
}

static void send_txdone(void)
{
	uint64_t w[MSG_WORDS];
	uint32_t q, k;

	for (q = 0; q < c.p.qps; q++)
		for (k = 0; k < K_NR; k++)
			w[q * K_NR + k] = c.qp[q].tx_count[k];
	for (k = 0; k < K_NR; k++)
		w[c.p.qps * K_NR + k] = c.tx_bytes[k];
	if (inject(INJ_TALLY))
		w[K_SEND_IMM]++;
	send_msg(M_TXDONE, w, c.p.qps * K_NR + K_NR);
	c.tx_done_sent = true;
}

/* Who wrote byte @off of my window last: replay the peer's stream @q. */
static void find_writer(uint32_t q, uint32_t off, char *buf, size_t len)
{
	struct stream s;
	struct op op;
	bool found = false;
	uint32_t idx = 0, olen = 0, kind = 0;
	uint64_t roff = 0;

	stream_init(&s, !c.side, q);
	while (s.next < s.nops) {
		gen_op(&s, &op);
		if (kind_is_write(op.kind) && off >= op.roff && off < op.roff + op.len) {
			found = true;
			idx = op.idx;
			kind = op.kind;
			olen = op.len;
			roff = op.roff;
		}
	}
	if (!found)
		snprintf(buf, len, "never written by the peer");
	else
		snprintf(buf, len, "last written by the peer's op %u %s len %u at offset %llu, its byte %llu",
			 idx, kind_verbs[kind], olen, (unsigned long long)roff,
			 (unsigned long long)(off - roff));
}

static void check_window(struct tqp *t)
{
	uint8_t *win = c.win + t->idx * c.win_stride;
	size_t i, bad = 0, first = 0, unverified = 0;
	char desc[160];

	if (t->idx == 0 && inject(INJ_WINDOW))
		win[GUARD + c.p.win_size / 2] ^= 0x10;
	if (!memcmp(win, t->model, c.win_stride))
		return;
	for (i = 0; i < c.win_stride; i++) {
		if (win[i] == t->model[i])
			continue;
		if (c.p.allow_loss && t->touched[i]) {
			unverified++;	/* a UC write may be lost or cut short */
			continue;
		}
		if (!bad++)
			first = i;
	}
	if (unverified && opt.verbose)
		say("qp %u: %zu window bytes differ where lost writes may explain it", t->idx,
		    unverified);
	if (!bad)
		return;
	if (first < GUARD || first >= GUARD + c.p.win_size)
		snprintf(desc, sizeof(desc), "a guard byte around the window");
	else
		find_writer(t->idx, first - GUARD, desc, sizeof(desc));
	mismatch("qp %u window (target of the peer's writes): byte %ld expected 0x%02x got 0x%02x (%s), %zu bytes differ",
		 t->idx, (long)first - GUARD, t->model[first], win[first], desc, bad);
}

static void check_atomic(const struct tqp *t)
{
	const uint8_t *a = c.atom + t->idx * ATOM_STRIDE;
	uint64_t got;

	memcpy(&got, a, 8);
	if (got != t->rx.atom)
		mismatch("qp %u atomic word (target of the peer's %u cas, %u fadd): 0x%016llx, expected 0x%016llx",
			 t->idx, t->rx.count[K_CAS], t->rx.count[K_FADD],
			 (unsigned long long)got, (unsigned long long)t->rx.atom);
	if (!is_fill(a + 8, 8))
		mismatch("qp %u: the guard bytes after the atomic word changed", t->idx);
}

static void check_tallies(const struct tqp *t)
{
	unsigned int k;

	for (k = 0; k < K_NR; k++) {
		if (c.peer_count[t->idx][k] != t->rx.count[k])
			mismatch("qp %u tally: the peer says it completed %u %s, its stream has %u",
				 t->idx, c.peer_count[t->idx][k], kind_verbs[k], t->rx.count[k]);
		if (!c.p.allow_loss && kind_consumes_recv(k) && t->rx_count[k] != t->rx.count[k])
			mismatch("qp %u tally: received %u %s, the peer's stream has %u",
				 t->idx, t->rx_count[k], kind_verbs[k], t->rx.count[k]);
	}
}

/* Nothing may have written to my pools, nor outside a check to a slot. */
static void check_untouched(void)
{
	uint32_t i, q, m;
	size_t len, off;

	for (i = 0; i < NUM_POOL; i++) {
		pool_fill(c.tmp_exp, c.p.pool_size, i);
		for (off = 0; off < c.p.pool_size && c.pool[i][off] == c.tmp_exp[off]; off++)
			;
		if (off < c.p.pool_size)
			mismatch("source pool %u (read by the peer) changed at byte %zu", i, off);
	}
	/* With --allow-loss, a late duplicate may still land in a receive. */
	for (q = 0; q < c.p.qps; q++) {
		len = (size_t)(c.p.sq_depth + (c.p.allow_loss ? 0 : c.p.rq_depth)) * c.slot_size;
		for (m = 0; m < NUM_SMR; m++) {
			if (is_fill(c.qp[q].sbuf[m], len))
				continue;
			for (off = 0; c.qp[q].sbuf[m][off] == FILL; off++)
				;
			mismatch("qp %u scatter mr %u: byte %zu (slot %zu offset %zu) changed unseen: 0x%02x",
				 q, m, off, off / c.slot_size, off % c.slot_size, c.qp[q].sbuf[m][off]);
		}
	}
}

static void final_checks(void)
{
	struct op op;
	uint32_t q;

	for (q = 0; q < c.p.qps; q++) {
		struct tqp *t = &c.qp[q];

		while (t->rx.next < t->rx.nops)
			replay_next(t, &op);
		check_window(t);
		check_atomic(t);
		check_tallies(t);
	}
	check_untouched();
}

static int advance(void)
{
	uint64_t w[1];

	if (!c.tx_done_sent && tx_done()) {
		send_txdone();
		return 1;
	}
	if (c.tx_done_sent && c.peer_tx_done && !c.verdict_sent && rx_done()) {
		final_checks();
		w[0] = c.mismatches;
		send_msg(M_VERDICT, w, 1);
		c.verdict_sent = true;
		return 1;
	}
	return 0;
}

/* The event loop */

static int poll_cq(struct ibv_cq *cq, void (*fn)(const struct ibv_wc *))
{
	struct ibv_wc wc[32];
	int n = ibv_poll_cq(cq, 32, wc), i;

	if (n < 0)
		fatal("ibv_poll_cq: %d", n);
	for (i = 0; i < n; i++)
		fn(&wc[i]);
	return n;
}

static void handle_async(void);

/*
 * A flushed completion is the consequence of an error: drain both CQs
 * first, so the error that caused it is the one reported.
 */
static int poll_cqs(void)
{
	int n = poll_cq(c.scq, on_send_wc) + poll_cq(c.rcq, on_recv_wc);

	if (c.flushed[0]) {
		while (poll_cq(c.scq, on_send_wc) + poll_cq(c.rcq, on_recv_wc))
			;
		handle_async();
		fatal("%s (a QP is in the error state, no completion said why)", c.flushed);
	}
	return n;
}

static void handle_async(void)
{
	struct ibv_async_event ev;
	enum ibv_event_type type;
	uint32_t qpn;

	while (!ibv_get_async_event(c.dev, &ev)) {
		type = ev.event_type;
		qpn = (type >= IBV_EVENT_QP_FATAL && type <= IBV_EVENT_PATH_MIG_ERR) ||
		      type == IBV_EVENT_QP_LAST_WQE_REACHED ? ev.element.qp->qp_num : 0;
		ibv_ack_async_event(&ev);
		switch (type) {
		case IBV_EVENT_QP_FATAL:
		case IBV_EVENT_QP_REQ_ERR:
		case IBV_EVENT_QP_ACCESS_ERR:
		case IBV_EVENT_PATH_MIG_ERR:
			fatal("asynchronous event %s on QP 0x%x", tool_event_name(type), qpn);
		case IBV_EVENT_CQ_ERR:
		case IBV_EVENT_DEVICE_FATAL:
		case IBV_EVENT_PORT_ERR:
			fatal("asynchronous event %s", tool_event_name(type));
		default:
			if (opt.verbose)
				say("asynchronous event %s", tool_event_name(type));
		}
	}
}

/* Sleep until a completion, a message or an event, 200 ms at most. */
static void wait_events(void)
{
	struct pollfd pfd[3] = {
		{ .fd = c.chan->fd, .events = POLLIN },
		{ .fd = c.sock, .events = POLLIN },
		{ .fd = c.dev->async_fd, .events = POLLIN },
	};
	struct ibv_cq *cq;
	void *cq_ctx;
	double left;

	if (ibv_req_notify_cq(c.scq, 0) || ibv_req_notify_cq(c.rcq, 0))
		fatal("ibv_req_notify_cq failed");
	/* What completed before the CQs were armed raised no event. */
	if (poll_cqs())
		return;
	left = c.deadline - now();
	if (poll(pfd, 3, left < 0.2 ? (left > 0 ? (int)(left * 1000) : 0) : 200) < 0 &&
	    errno != EINTR)
		fatal("poll: %s", strerror(errno));
	if (pfd[0].revents)
		while (!ibv_get_cq_event(c.chan, &cq, &cq_ctx))
			ibv_ack_cq_events(cq, 1);
	if (pfd[2].revents)
		handle_async();
}

static void run(void)
{
	uint32_t q;
	int progress;

	while (!c.verdict_sent || !c.peer_verdict) {
		progress = 0;
		for (q = 0; q < c.p.qps; q++)
			progress += post_sends(&c.qp[q]);
		progress += poll_cqs();
		for (q = 0; q < c.p.qps; q++) {
			post_recvs(&c.qp[q]);
			send_credit(&c.qp[q], false);
		}
		progress += service_tcp();
		progress += advance();
		if (now() > c.deadline)
			fatal("timed out after %us", opt.timeout);
		if (!progress)
			wait_events();
	}
}

static void dump_qp(const struct tqp *t)
{
	const struct op *op;

	say("qp %u: my ops: %u of %u completed, %u posted", t->idx, t->done, t->tx.nops,
	    t->posted);
	if (t->done < t->posted) {
		op = &t->ring[t->done % c.p.sq_depth];
		say("qp %u: oldest outstanding: my op %u %s len %u (%s)", t->idx, op->idx,
		    kind_verbs[op->kind], op->len, op->signaled ? "signaled" : "unsignaled");
	}
	op = &t->ring[t->posted % c.p.sq_depth];
	if (t->have_next && op->rseq >= 0 && (uint32_t)op->rseq >= t->rlimit)
		say("qp %u: my op %u %s waits for a credit: it needs receive %d, the peer allows < %u",
		    t->idx, op->idx, kind_verbs[op->kind], op->rseq, t->rlimit);
	say("qp %u: the peer's messages: %u of %u received, %u receives posted", t->idx,
	    t->distinct, t->rx.nrecv, t->wposted);
	if (!c.p.allow_loss && t->wdone < t->exp_hi) {
		op = &t->exp[t->wdone % c.exp_size];
		say("qp %u: waiting for the peer's op %u %s len %u (receive %u)", t->idx,
		    op->idx, kind_verbs[op->kind], op->len, t->wdone);
	}
}

static void dump_outstanding(void)
{
	uint32_t q;

	if (!c.qp)
		return;
	for (q = 0; q < c.p.qps; q++)
		dump_qp(&c.qp[q]);
	say("peer: %s; %s", c.peer_tx_done ? "its ops all completed" : "its ops not all completed",
	    c.peer_verdict ? "it sent its verdict" : "no verdict from it");
}

/* Setup and main */

static void handshake(void)
{
	uint64_t mine[MSG_WORDS], theirs[MSG_WORDS];
	struct caps caps;
	uint32_t n, one = 1;

	open_device(&caps);
	n = hello_words(&caps, mine);
	if (opt.server) {
		tcp_accept();
		expect_msg(M_HELLO, theirs, n);
		send_msg(M_HELLO, mine, n);
		negotiate(theirs, mine);
	} else {
		c.sock = tcp_connect();
		send_msg(M_HELLO, mine, n);
		expect_msg(M_HELLO, theirs, n);
		negotiate(mine, theirs);
	}
	setsockopt(c.sock, IPPROTO_TCP, TCP_NODELAY, &one, sizeof(one));
	c.ipv4 = c.gid.raw[10] == 0xff && c.gid.raw[11] == 0xff &&
		 !memcmp(c.gid.raw, "\0\0\0\0\0\0\0\0\0", 10);
}

static void bring_up(void)
{
	uint64_t w[MSG_WORDS];
	uint32_t q, n;
	uint64_t type;

	create_qps();
	exchange_info();
	for (q = 0; q < c.p.qps; q++) {
		connect_qp(&c.qp[q]);
		post_recvs(&c.qp[q]);
		c.qp[q].last_rx = now();
		send_credit(&c.qp[q], true);
	}
	send_msg(M_READY, NULL, 0);
	while ((type = recv_msg(w, &n)) != M_READY)
		handle_msg(type, w, n);
}

static void summary(void)
{
	unsigned long long ops = 0, bytes = 0, lost = 0, dups = 0, mine[K_NR] = { 0 }, peer[K_NR] = { 0 };
	uint32_t q, k;
	bool ok = !c.mismatches && !c.peer_mismatches;

	for (q = 0; q < c.p.qps; q++) {
		for (k = 0; k < K_NR; k++) {
			mine[k] += c.qp[q].tx_count[k];
			peer[k] += c.peer_count[q][k];
		}
		lost += c.qp[q].rx.nrecv - c.qp[q].distinct;
		dups += c.qp[q].dups;
	}
	for (k = 0; k < K_NR; k++) {
		ops += mine[k] + peer[k];
		bytes += c.tx_bytes[k] + c.peer_bytes[k];
	}
	say("initiated (mine/peer's): send %llu/%llu send_imm %llu/%llu write %llu/%llu "
	    "write_imm %llu/%llu read %llu/%llu cas %llu/%llu fadd %llu/%llu",
	    mine[0], peer[0], mine[1], peer[1], mine[2], peer[2], mine[3], peer[3],
	    mine[4], peer[4], mine[5], peer[5], mine[6], peer[6]);
	if (c.p.allow_loss)
		say("lost %llu and duplicated %llu of the peer's messages (--allow-loss)",
		    lost, dups);
	say("%s qps=%u ops=%llu bytes=%llu mismatches=%llu peer_mismatches=%llu time=%.1fs",
	    ok ? "OK" : "FAIL", c.p.qps, ops, bytes, (unsigned long long)c.mismatches,
	    (unsigned long long)c.peer_mismatches, now() - c.start);
}

static const char usage_text[] =
"usage: sroce-traffic --server [options]\n"
"       sroce-traffic --client HOST [options]\n"
"\n"
"A byte-verifying RDMA traffic generator. Both sides initiate random\n"
"operations on every QP and check every byte, completion and tally.\n"
"Exit status 0: no mismatch on either side; 1: a mismatch, a failed\n"
"completion or a timeout (details on standard output); 2: a usage or setup error.\n"
"\n"
"  -S, --server            wait for one client on --port\n"
"  -C, --client HOST       connect to the server at HOST (retried until --timeout)\n"
"  -p, --port PORT         TCP port of the setup connection (18515)\n"
"  -d, --dev DEV           RDMA device (the first one)\n"
"  -g, --gid-index N       GID index on port 1 (the first RoCE v2 GID, IPv4 first)\n"
"The client's values of the following options are the ones used:\n"
"  -q, --qps N             QP pairs, all busy at once (4)\n"
"  -n, --ops N             operations per QP pair, half initiated by each side (1000)\n"
"  -s, --seed S            seed of everything random (default: from the clock;\n"
"                          printed, so a run can be repeated)\n"
"  -m, --max-size BYTES    largest message (32768); UD: at most the path MTU\n"
"  -x, --mix LIST          operations to draw from, comma-separated, of send,\n"
"                          send_imm, write, write_imm, read, cas, fadd (all that\n"
"                          the transport has); the last op of each stream is\n"
"                          always a send_imm, which marks the end\n"
"  -t, --transport T       rc, uc or ud (rc)\n"
"      --sq-depth N        send queue depth (32)\n"
"      --rq-depth N        receive queue depth (32)\n"
"      --one-way           only the client initiates\n"
"      --ack-timeout N     rc: the QPs' local ACK timeout, 4.096 us * 2^N\n"
"                          (14: 67 ms; 0: infinite)\n"
"      --allow-loss        uc/ud: lost, duplicated and reordered messages are\n"
"                          counted, not mismatches (for netem); uc write targets\n"
"                          are then only checked where no write went\n"
"The following are each side's own:\n"
"  -T, --timeout SEC       fail if the run is not over after SEC seconds (300)\n"
"      --lax-grh-checksum  ud: accept a zero IPv4 header checksum in the GRH\n"
"                          area (rdma_rxe's loopback never computes it)\n"
"      --any-sl            ud: accept any wc.sl (rdma_rxe reports 0, not the\n"
"                          RoCE packet type 0xa or 0x9)\n"
"  -v, --verbose           more detail\n"
"      --inject-corruption KIND\n"
"                          self-test: corrupt one thing on this side and expect\n"
"                          the run to fail: data (a received byte), imm (a\n"
"                          predicted immediate), read (a byte READ), guard (a\n"
"                          byte next to a READ's target), atomic (a predicted\n"
"                          original value), window (a byte of the write target),\n"
"                          tally (the count sent to the peer), hang (QP 0's\n"
"                          last op is never posted: the timeout must fire)\n"
"  -h, --help              this text\n";

static void __attribute__((noreturn)) usage(int status)
{
	fputs(usage_text, status ? stderr : stdout);
	exit(status);
}

static uint32_t parse_mix(const char *s)
{
	char *copy = strdup(s), *tok, *save = NULL;
	uint32_t mix = 0;
	unsigned int k;

	for (tok = strtok_r(copy, ",", &save); tok; tok = strtok_r(NULL, ",", &save)) {
		for (k = 0; k < K_NR && strcmp(tok, kind_names[k]); k++)
			;
		if (k == K_NR)
			tool_die("--mix: unknown operation '%s'", tok);
		mix |= 1u << k;
	}
	free(copy);
	if (!mix)
		tool_die("--mix: nothing to do");
	return mix;
}

static void parse_transport(const char *s)
{
	if (!strcmp(s, "rc"))
		opt.transport = IBV_QPT_RC;
	else if (!strcmp(s, "uc"))
		opt.transport = IBV_QPT_UC;
	else if (!strcmp(s, "ud"))
		opt.transport = IBV_QPT_UD;
	else
		tool_die("--transport: rc, uc or ud, not '%s'", s);
}

static void parse_inject(const char *s)
{
	int i;

	for (i = 1; i < INJ_NR; i++)
		if (!strcmp(s, inject_names[i]))
			break;
	if (i == INJ_NR)
		tool_die("--inject-corruption: unknown kind '%s'", s);
	opt.inject = i;
}

enum { O_SQ = 256, O_RQ, O_ONE_WAY, O_ALLOW_LOSS, O_INJECT, O_LAX_GRH, O_ANY_SL,
       O_ACK_TIMEOUT };

static const struct option long_opts[] = {
	{ "server", no_argument, NULL, 'S' },
	{ "client", required_argument, NULL, 'C' },
	{ "port", required_argument, NULL, 'p' },
	{ "dev", required_argument, NULL, 'd' },
	{ "gid-index", required_argument, NULL, 'g' },
	{ "qps", required_argument, NULL, 'q' },
	{ "ops", required_argument, NULL, 'n' },
	{ "seed", required_argument, NULL, 's' },
	{ "max-size", required_argument, NULL, 'm' },
	{ "mix", required_argument, NULL, 'x' },
	{ "transport", required_argument, NULL, 't' },
	{ "sq-depth", required_argument, NULL, O_SQ },
	{ "rq-depth", required_argument, NULL, O_RQ },
	{ "timeout", required_argument, NULL, 'T' },
	{ "one-way", no_argument, NULL, O_ONE_WAY },
	{ "allow-loss", no_argument, NULL, O_ALLOW_LOSS },
	{ "inject-corruption", required_argument, NULL, O_INJECT },
	{ "lax-grh-checksum", no_argument, NULL, O_LAX_GRH },
	{ "any-sl", no_argument, NULL, O_ANY_SL },
	{ "ack-timeout", required_argument, NULL, O_ACK_TIMEOUT },
	{ "verbose", no_argument, NULL, 'v' },
	{ "help", no_argument, NULL, 'h' },
	{ NULL, 0, NULL, 0 },
};

static void parse_option(int o, const char *arg)
{
	switch (o) {
	case 'S': opt.server = true; break;
	case 'C': opt.host = arg; break;
	case 'p': opt.port = arg; break;
	case 'd': opt.dev = arg; break;
	case 'g': opt.gid_index = tool_number(arg, 65535); break;
	case 'q': opt.qps = tool_number(arg, MAX_QPS); break;
	case 'n': opt.ops = tool_number(arg, 1u << 30); break;
	case 's': opt.seed = tool_number(arg, UINT64_MAX); break;
	case 'm': opt.max_size = tool_number(arg, 1u << 26); break;
	case 'x': opt.mix = parse_mix(arg); opt.mix_set = true; break;
	case 't': parse_transport(arg); break;
	case O_SQ: opt.sq_depth = tool_number(arg, 1u << 16); break;
	case O_RQ: opt.rq_depth = tool_number(arg, 1u << 16); break;
	case 'T': opt.timeout = tool_number(arg, 86400); break;
	case O_ONE_WAY: opt.one_way = true; break;
	case O_ALLOW_LOSS: opt.allow_loss = true; break;
	case O_INJECT: parse_inject(arg); break;
	case O_LAX_GRH: opt.lax_grh = true; break;
	case O_ANY_SL: opt.any_sl = true; break;
	case O_ACK_TIMEOUT: opt.ack_timeout = tool_number(arg, 31); break;
	case 'v': opt.verbose = true; break;
	case 'h': usage(0);
	default: usage(2);
	}
}

static void parse_args(int argc, char **argv)
{
	uint32_t allowed;
	int o;

	while ((o = getopt_long(argc, argv, "SC:p:d:g:q:n:s:m:x:t:T:vh", long_opts, NULL)) != -1)
		parse_option(o, optarg);
	if (optind != argc || opt.server == !!opt.host)
		usage(2);
	allowed = opt.transport == IBV_QPT_RC ? MIX_RC :
		  opt.transport == IBV_QPT_UC ? MIX_UC : MIX_UD;
	if (!opt.mix_set)
		opt.mix = allowed;
	if (opt.mix & ~allowed)
		tool_die("--mix: this transport has only send, send_imm%s",
			 opt.transport == IBV_QPT_UC ? ", write, write_imm" : "");
	if (opt.allow_loss && opt.transport == IBV_QPT_RC)
		tool_die("--allow-loss is for uc and ud: RC loses nothing");
	if (!opt.qps || !opt.sq_depth || !opt.rq_depth || !opt.timeout)
		tool_die("--qps, --sq-depth, --rq-depth and --timeout must not be 0");
	if (!opt.seed) {
		opt.seed = (uint64_t)time(NULL) << 20 ^ getpid();
		opt.seed &= 0xffffffffffffULL;
	}
}

int main(int argc, char **argv)
{
	c.role = "?";
	parse_args(argc, argv);
	c.role = opt.server ? "server" : "client";
	c.side = opt.server;
	c.sock = -1;
	signal(SIGPIPE, SIG_IGN);
	signal(SIGALRM, on_alarm);
	alarm(opt.timeout + 30);
	c.deadline = now() + opt.timeout;
	handshake();
	say("seed=%llu transport=%s qps=%u ops=%u+%u max_size=%u mtu=%u max_sge=%u sq=%u rq=%u%s",
	    (unsigned long long)c.p.seed,
	    c.p.transport == IBV_QPT_RC ? "rc" : c.p.transport == IBV_QPT_UC ? "uc" : "ud",
	    c.p.qps, c.p.ops[0], c.p.ops[1], c.p.max_size, mtu_bytes(c.p.mtu), c.p.max_sge,
	    c.p.sq_depth, c.p.rq_depth, c.p.allow_loss ? " allow-loss" : "");
	bring_up();
	c.start = now();
	run();
	summary();
	return c.mismatches || c.peer_mismatches ? 1 : 0;
}
