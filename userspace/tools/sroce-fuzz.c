// SPDX-License-Identifier: GPL-2.0 OR Linux-OpenIB
/*
 * sroce-fuzz: a structure-aware RoCEv2 packet fuzzer.
 *
 *   sroce-fuzz -i IFACE -M DST_MAC -t TARGETS [-s SEED] [-n PACKETS]
 *              [--from I] [--count N] [-f 4|6|46] [--rate PPS]
 *              [--src4 IP] [--dst4 IP] [--src6 IP] [--dst6 IP]
 *              [--port-mtu BYTES] [--batch N] [--dump] [--hex] [--dry-run]
 *   sroce-fuzz -i IFACE -M DST_MAC -t TARGETS --probe QPN:PSN:COUNT[:KIND]
 *              --probe-src IP
 *
 * It writes whole Ethernet frames (AF_PACKET on IFACE, so it controls
 * every byte of the IP, UDP and InfiniBand transport headers) addressed
 * to DST_MAC and to the RoCEv2 port (4791) of --dst4 / --dst6, and
 * attacks the QPs that TARGETS lists. Defaults match tests/lib.sh: from
 * netns b (veth_b, 192.0.2.2, 2001:db8::2) to sroce_a (192.0.2.1,
 * 2001:db8::1).
 *
 * TARGETS, one object a line ('#' starts a comment; numbers in C syntax;
 * '-' where a value is unknown or does not apply):
 *
 *   qp QPN TYPE STATE EPSN NPSN UPSN FAMILY QKEY MTU ACCESS ROLE
 *   key RKEY VA LEN RIGHTS QPN
 *   xsrq SRQN
 *
 * TYPE is RC, UC, UD, GSI, XRC_TGT or XRC_INI (anything else counts as
 * UD, as the driver treats it); STATE one of RESET INIT RTR RTS SQD SQE
 * ERR. EPSN, NPSN and UPSN are the responder's expected PSN, the
 * requester's next and oldest unacknowledged PSN (`rdma -dd resource
 * show qp`: expected_psn, next_psn, unacked_psn). FAMILY (4 or 6) is the
 * address family of a connected QP's path. QKEY is a UD QP's Q_Key, MTU
 * its path MTU. ACCESS holds r, w and a for the remote rights the QP
 * grants. ROLE is "probe" for a QP kept for --probe (never aimed at
 * otherwise), "orphan" for an RC requester (sroce-fuzz-target) that
 * keeps one-packet requests outstanding towards a QP that never
 * answers, the kind of each a function of its PSN: (PSN - UPSN) mod 5
 * is SEND, WRITE, READ (of 24 bytes), CMP_SWAP, FETCH_ADD; the fuzzer
 * answers them in its place. A key is an MR or memory window that
 * remote requests may name: its rkey, the address a requester names its
 * first byte by (0 for a zero-based one), its length, its rights (r, w,
 * a; x if it belongs to another PD than the QPs, so that every access
 * is refused) and, for a type 2 window, the QP it is bound through
 * (requests through any other QP are refused). An xsrq is an XRC SRQ
 * that XRC requests may name. sroce-fuzz-target writes all but the PSNs
 * and the live states; tests/60-fuzz-packets.sh adds those, and QP 1,
 * from `rdma -j -dd resource show qp`.
 *
 * WHAT IT SENDS. Packet I of a run is a function of the seed, I, the
 * families allowed and TARGETS only; each is one of these classes:
 *
 *   valid     a well-formed request at a connected QP that takes
 *             requests (RC, UC, XRC target in RTR, RTS or SQD): SEND,
 *             SEND with immediate or invalidate, RDMA WRITE (with
 *             immediate), READ, CMP_SWAP, FETCH_ADD, FLUSH, ATOMIC_WRITE;
 *             multi-packet messages as FIRST, MIDDLE..., LAST at the
 *             QP's path MTU; at the PSN the responder expects; RETH,
 *             AtomicETH, FETH, XRCETH, IETH in range of a live key with
 *             the rights it needs.
 *   mutated   a valid request with one to three mutations: PSN (a
 *             duplicate, a little or far ahead, across the 2^23 window),
 *             opcode (of any transport, or invalid), payload length
 *             (0, off by a few, the MTU, beyond it), pad count, RETH
 *             (length 0 with a payload, huge lengths, addresses just
 *             outside a key, rkeys next to live ones), AtomicETH
 *             (unaligned or outside addresses, rkeys next to live ones),
 *             XRCETH, IETH and FETH values, destination QP, P_Key (the
 *             limited-member key 0x7fff is valid), TVer, a flipped
 *             header byte, truncation, trailing bytes, and harmless
 *             changes (SE, AckReq, MigReq, reserved bits, immediate
 *             data, FECN/BECN and the masked IP fields).
 *   response  ACKs, NAKs of every code, RNR NAKs, READ responses (FIRST,
 *             MIDDLE, LAST, ONLY) and atomic ACKs at RC and XRC
 *             initiator QPs; at an orphan, mostly the right response at
 *             the PSN it waits for, so they reach its completer.
 *   ud        UD SEND (with immediate) at the UD QPs in any state: the
 *             right Q_Key or a wrong one, sizes from 0 to the MTU,
 *             beyond the receive buffers and beyond the MTU.
 *   gsi       UD datagrams at QP 1: 256-byte MADs with plausible
 *             headers (CM, SA, performance classes...), oversize ones
 *             (257 bytes to the MTU, bigger than the GSI's receive
 *             buffers), bigger than the MTU, short ones, wrong Q_Keys.
 *   any-state any opcode at any listed QP, whatever its type and state.
 *   invalid   opcodes no table defines (RD, CNP, reserved), TVer, P_Key,
 *             truncated headers, payloads on opcodes that have none.
 *   bad-icrc  a plausible packet with a wrong ICRC.
 *   bad-udp   a plausible packet with a wrong UDP checksum (the UDP
 *             layer drops it: InCsumErrors).
 *   no-qp     QPs that do not exist, and the multicast QPN 0xFFFFFF.
 *
 * About one packet in ten comes from a spoofed source (another address
 * of the /24 or /64), the rest from --src4/--src6; a few go to a QP
 * connected over the other family. The IP TOS or traffic class, flow
 * label, TTL or hop limit, the IP ID and the BTH's FECN/BECN byte vary:
 * the ICRC masks them. The ICRC (IBA Annex A17.3.3) is computed over the
 * masked headers, and the UDP checksum is right (or 0 over IPv4) unless
 * the class says otherwise.
 *
 * To reach the engines, the generator keeps an open-loop model of each
 * QP: the PSN its responder expects, the message under way, the PSN an
 * orphan's completer waits for. It never reads the device's answers, so
 * a run replays exactly. A packet that should kill an RC QP resets the
 * model to the QP's first PSN, which is where sroce-fuzz-target puts a
 * QP back when it finds it in the error state. A packet that the
 * classification below says does not reach the QP's engines leaves the
 * model as it was.
 *
 * KEPT ALIVE. Every other QP that takes requests (orphans aside) is kept
 * alive, so that its responder stays in step with the model and long
 * runs of requests execute: it gets valid requests only (and now and
 * then a duplicate), from its peer over its family (if -f allows it),
 * nothing it lacks the rights or a key for, no FLUSH (no MR grants it),
 * no SEND with invalidate, no key of another PD. The others get the
 * mutations and the any-state garbage.
 *
 * WHAT IT EXPECTS. Each packet is classified as sroce's receive dispatch
 * (drivers/sroce/recv.c) will treat it, from its bytes and the target
 * states: dropped by UDP (udp_csum), by the header checks (header), the
 * ICRC check (icrc), for want of a QP (no_qp), by the QP's type or state
 * (qp_state), or handed on: to a UD QP with a wrong Q_Key (ud_qkey), one
 * longer than its MTU (ud_long), one that may be received (ud), to a
 * connected QP from another address than its peer's or to our address of
 * the other family, which it must drop (addr), or to an RC, UC or XRC
 * engine (deep). The last line printed is
 *
 *   expect sent=N udp_csum=N header=N icrc=N no_qp=N qp_state=N
 *          ud_qkey=N ud_long=N ud=N addr=N deep=N v4=N v6=N spoofed=N
 *
 * (one line), for the packets actually sent; tests/60-fuzz-packets.sh
 * holds sroce's drop counters against it. Before it: the seed, then a
 * summary of the packets sent by class, by opcode and by verdict.
 *
 * REPRODUCING. Packets 0 to PACKETS-1 (-n) are generated in order;
 * packet I depends on the seed, I, -f and TARGETS only, not on -n.
 * --from I --count C sends only packets I to I+C-1 (the others are
 * generated all the same, so the model is where it was). So a failure
 * seen after a run can be bisected by sending ranges of it to targets
 * set up the same way. --dump prints one line per packet sent (index,
 * seconds since the start, class, family, source, opcode, QPN, PSN,
 * length, verdict); --hex adds the frame's bytes. --dry-run generates
 * and classifies without sending (no IFACE needed).
 *
 * SPEED. Frames go out in sendmmsg() batches of --batch (64). --rate
 * caps packets per second (0: as fast as the kernel takes them).
 *
 * PROBING. With --probe QPN:PSN:COUNT --probe-src IP it sends only COUNT
 * requests at QPN (of its transport in TARGETS, else RC), at PSN, PSN + 1
 * and on, from IP (to --dst4 or --dst6 by IP's family): valid SEND ONLY
 * requests of 8 bytes, or with QPN:PSN:COUNT:write0 RDMA WRITE FIRST
 * packets whose RETH says 0 bytes while they carry a path MTU of payload
 * (the first key of TARGETS in the RETH). A connected QP must drop what
 * does not come from its peer (the address checks of IBA 9.6.1, as
 * rdma_rxe makes them in check_addr()): its expected PSN must not move.
 * A WRITE FIRST of length 0 with a payload is an invalid request: NAK
 * (naks_sent) and the QP in error.
 *
 * Exit status: 0 when every packet was sent, 2 on a usage or setup
 * error, 1 when sending failed.
 */
#define _GNU_SOURCE
#include <arpa/inet.h>
#include <errno.h>
#include <getopt.h>
#include <inttypes.h>
#include <limits.h>
#include <linux/if_packet.h>
#include <net/ethernet.h>
#include <net/if.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#include "tool.h"

#define ROCE_PORT	4791
#define GSI_QKEY	0x80010000U
#define MCAST_QPN	0xffffffU
#define PSN_MASK	0xffffffU
#define MAX_FRAME	9216
#define MAX_TARGETS	1024
#define MAX_KEYS	256
#define MAX_XSRQ	16
#define MAX_BATCH	256
#define POOL_SIZE	65536
#define ORPHAN_READ_LEN	24
#define ORPHAN_KINDS	5

/* ---------------------------------------------------------------------- */
/* Randomness: splitmix64, one stream a run. */

static uint64_t rng_state;

static uint64_t rnd(void)
{
	uint64_t z = (rng_state += 0x9e3779b97f4a7c15ULL);

	z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
	z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
	return z ^ (z >> 31);
}

/* A number in [0, n), n > 0. */
static uint32_t below(uint32_t n)
{
	return (uint32_t)(((rnd() >> 32) * n) >> 32);
}

/* A number in [lo, hi]. */
static uint32_t between(uint32_t lo, uint32_t hi)
{
	return lo + below(hi - lo + 1);
}

/* True with a probability of @permille / 1000. */
static bool chance(unsigned int permille)
{
	return below(1000) < permille;
}

/* Index of a weighted choice among @n weights. */
static int pick(const unsigned int *w, int n)
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

static void crc_init(void)
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
static uint32_t crc_update(uint32_t crc, const uint8_t *p, size_t n)
{
	while (n--)
		crc = crc_table[(crc ^ *p++) & 0xff] ^ (crc >> 8);
	return crc;
}

static uint32_t csum_add(uint32_t sum, const uint8_t *p, size_t n)
{
	size_t i;

	for (i = 0; i + 1 < n; i += 2)
		sum += (uint32_t)p[i] << 8 | p[i + 1];
	if (n & 1)
		sum += (uint32_t)p[n - 1] << 8;
	return sum;
}

static uint16_t csum_fold(uint32_t sum)
{
	while (sum >> 16)
		sum = (sum & 0xffff) + (sum >> 16);
	return (uint16_t)~sum;
}

static void put16(uint8_t *p, uint32_t v)
{
	p[0] = v >> 8;
	p[1] = v;
}

static void put24(uint8_t *p, uint32_t v)
{
	p[0] = v >> 16;
	p[1] = v >> 8;
	p[2] = v;
}

static void put32(uint8_t *p, uint32_t v)
{
	put16(p, v >> 16);
	put16(p + 2, v);
}

static void put64(uint8_t *p, uint64_t v)
{
	put32(p, v >> 32);
	put32(p + 4, v);
}

static uint32_t get16(const uint8_t *p)
{
	return (uint32_t)p[0] << 8 | p[1];
}

static uint32_t get32(const uint8_t *p)
{
	return get16(p) << 16 | get16(p + 2);
}

/* ---------------------------------------------------------------------- */
/*
 * The opcodes of IBA vol. 1 table 38 (and IBA 1.5's FLUSH and
 * ATOMIC_WRITE, annex A14's XRC), with the extended headers each
 * carries: the same facts as drivers/sroce/opcode.c, written down again
 * here so that a difference shows as a miscount.
 */
enum {
	F_VALID = 1 << 0,
	F_REQ = 1 << 1,
	F_RESP = 1 << 2,
	F_FIRST = 1 << 3,
	F_MIDDLE = 1 << 4,
	F_LAST = 1 << 5,
	F_PAYLOAD = 1 << 6,
	F_SEND = 1 << 7,
	F_WRITE = 1 << 8,
	F_READ = 1 << 9,
	F_ATOMIC = 1 << 10,
	F_RRESP = 1 << 11,
	F_ACK = 1 << 12,
	F_ATMACK_OP = 1 << 13,
	F_RC = 1 << 14,
	F_UC = 1 << 15,
	F_UD = 1 << 16,
	F_XRC = 1 << 17,
	F_DETH = 1 << 18,
	F_RETH = 1 << 19,
	F_ATMETH = 1 << 20,
	F_AETH = 1 << 21,
	F_ATMACK = 1 << 22,
	F_IMM = 1 << 23,
	F_IETH = 1 << 24,
	F_FETH = 1 << 25,
	F_XRCETH = 1 << 26,
	F_FLUSH = 1 << 27,
	F_AWRITE = 1 << 28,
};

#define F_ONLY		(F_FIRST | F_LAST)
#define SEND		(F_VALID | F_REQ | F_SEND | F_PAYLOAD)
#define WR		(F_VALID | F_REQ | F_WRITE | F_PAYLOAD)
#define RRESP		(F_VALID | F_RESP | F_RRESP | F_PAYLOAD)
#define ATOMIC		(F_VALID | F_REQ | F_ATOMIC | F_ONLY | F_ATMETH)

/* Operation codes (the low five bits). */
enum {
	OP_SEND_FIRST = 0x00,
	OP_SEND_MIDDLE = 0x01,
	OP_SEND_LAST = 0x02,
	OP_SEND_LAST_IMM = 0x03,
	OP_SEND_ONLY = 0x04,
	OP_SEND_ONLY_IMM = 0x05,
	OP_WRITE_FIRST = 0x06,
	OP_WRITE_MIDDLE = 0x07,
	OP_WRITE_LAST = 0x08,
	OP_WRITE_LAST_IMM = 0x09,
	OP_WRITE_ONLY = 0x0a,
	OP_WRITE_ONLY_IMM = 0x0b,
	OP_READ = 0x0c,
	OP_RRESP_FIRST = 0x0d,
	OP_RRESP_MIDDLE = 0x0e,
	OP_RRESP_LAST = 0x0f,
	OP_RRESP_ONLY = 0x10,
	OP_ACK = 0x11,
	OP_ATOMIC_ACK = 0x12,
	OP_CMP_SWAP = 0x13,
	OP_FETCH_ADD = 0x14,
	OP_SEND_LAST_INV = 0x16,
	OP_SEND_ONLY_INV = 0x17,
	OP_FLUSH = 0x1c,
	OP_ATOMIC_WRITE = 0x1d,
};

/* Transport codes (the top three bits). */
#define TR_RC	0x00
#define TR_UC	0x20
#define TR_RD	0x40
#define TR_UD	0x60
#define TR_CNP	0x80
#define TR_XRC	0xa0

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

struct opinfo {
	char name[32];
	uint32_t flags;
	uint8_t hdr_len;
	uint8_t xrceth, deth, feth, reth, aeth, atmack, immdt;
};

static struct opinfo ops[256];
/* Every valid opcode, and every other one, for random choices. */
static uint8_t valid_ops[256], invalid_ops[256];
static int num_valid_ops, num_invalid_ops;

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

static void ops_init(void)
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

/* ---------------------------------------------------------------------- */
/* Targets. */

enum qtype { QT_RC, QT_UC, QT_UD, QT_GSI, QT_XRC_TGT, QT_XRC_INI, QT_OTHER };
enum qstate { QS_RESET, QS_INIT, QS_RTR, QS_RTS, QS_SQD, QS_SQE, QS_ERR };

static const char *const qtype_names[] = {
	"RC", "UC", "UD", "GSI", "XRC_TGT", "XRC_INI", "OTHER",
};
static const char *const qstate_names[] = {
	"RESET", "INIT", "RTR", "RTS", "SQD", "SQE", "ERR",
};

#define RIGHT_R	1
#define RIGHT_W	2
#define RIGHT_A	4
#define FOREIGN	8	/* a key of another PD: looks fine, is refused */

/*
 * What the generator believes about a QP (open loop: it never hears
 * back). All PSNs are 24-bit.
 */
struct model {
	uint32_t epsn;		/* the PSN the responder expects */
	uint32_t upsn;		/* the oldest PSN an orphan waits an answer for */
	uint32_t msn;		/* the MSN to put in AETHs */
	uint32_t msg;		/* F_SEND or F_WRITE: a message under way */
	uint32_t left;		/* its bytes still to come */
	uint8_t last_op;	/* its LAST opcode (with IMM or IETH) */
	uint32_t imm;		/* its immediate data or rkey to invalidate */
	uint32_t srqn;		/* XRC: the SRQ it names */
};

struct tqp {
	uint32_t qpn;
	enum qtype type;
	enum qstate state;
	bool psn_known;
	uint32_t epsn, npsn, upsn;	/* at the snapshot */
	int fam;			/* 4, 6, or 0: any */
	uint32_t qkey;
	uint32_t mtu;
	unsigned int access;
	bool orphan;
	bool probe;		/* for --probe only: left alone otherwise */
	bool clean;		/* only requests that should execute */
	struct model m;
};

struct tkey {
	uint32_t rkey;
	uint64_t va, len;
	unsigned int rights;
	bool bound;		/* a type 2 window: only through @qpn */
	uint32_t qpn;
	bool dead;		/* we invalidated it */
};

static struct tqp tq[MAX_TARGETS];
static int num_tq;
static struct tkey keys[MAX_KEYS];
static int num_keys;
static uint32_t xsrq[MAX_XSRQ];
static int num_xsrq;
static uint32_t port_mtu = 1024;

/* Groups of targets by what the generator does with them. */
struct group {
	int idx[MAX_TARGETS];
	int n;
};

static struct group g_req[2];	/* take requests now; [0] IPv4, [1] IPv6 */
static struct group g_resp[2];	/* take responses now */
static struct group g_orphan[2];
static struct group g_ud;	/* UD QPs, any state */
static struct group g_all;

static bool takes_requests(const struct tqp *q)
{
	return q->state >= QS_RTR && q->state <= QS_SQE;
}

static bool takes_responses(const struct tqp *q)
{
	return q->state >= QS_RTS && q->state <= QS_SQE;
}

static void group_add(struct group *g, int i)
{
	g->idx[g->n++] = i;
}

static bool parse_num(const char *s, uint64_t max, uint64_t *v)
{
	char *end;

	if (!strcmp(s, "-"))
		return false;
	errno = 0;
	*v = strtoull(s, &end, 0);
	if (errno || *end || end == s || *v > max)
		tool_die("targets: bad number '%s'", s);
	return true;
}

static int name_index(const char *const *names, int n, const char *s,
		      int other)
{
	int i;

	for (i = 0; i < n; i++)
		if (!strcmp(names[i], s))
			return i;
	return other;
}

static unsigned int parse_rights(const char *s)
{
	unsigned int r = 0;

	r |= strchr(s, 'r') ? RIGHT_R : 0;
	r |= strchr(s, 'w') ? RIGHT_W : 0;
	r |= strchr(s, 'a') ? RIGHT_A : 0;
	r |= strchr(s, 'x') ? FOREIGN : 0;
	return r;
}

static void parse_qp(char **w, int n)
{
	struct tqp *q = &tq[num_tq];
	uint64_t v[3], x;
	bool known = true;
	int i;

	if (n != 12)
		tool_die("targets: a qp line has 12 fields, not %d", n);
	if (num_tq == MAX_TARGETS)
		tool_die("targets: more than %d QPs", MAX_TARGETS);
	memset(q, 0, sizeof(*q));
	parse_num(w[1], 0xffffff, &x);
	q->qpn = x;
	q->type = name_index(qtype_names, QT_OTHER, w[2], QT_OTHER);
	q->state = name_index(qstate_names, QS_ERR + 1, w[3], -1);
	if ((int)q->state < 0)
		tool_die("targets: unknown QP state '%s'", w[3]);
	for (i = 0; i < 3; i++)
		known &= parse_num(w[4 + i], PSN_MASK, &v[i]);
	q->psn_known = known;
	q->epsn = known ? v[0] : 0;
	q->npsn = known ? v[1] : 0;
	q->upsn = known ? v[2] : 0;
	q->fam = parse_num(w[7], 6, &x) ? (int)x : 0;
	q->qkey = parse_num(w[8], 0xffffffff, &x) ? x :
		  q->type == QT_GSI ? GSI_QKEY : 0;
	q->mtu = parse_num(w[9], 4096, &x) ? x : port_mtu;
	if (q->mtu < 256)
		q->mtu = 256;
	q->access = parse_rights(w[10]);
	q->orphan = !strcmp(w[11], "orphan");
	q->probe = !strcmp(w[11], "probe");
	q->m.epsn = q->epsn;
	q->m.upsn = q->upsn;
	num_tq++;
}

static void parse_key(char **w, int n)
{
	struct tkey *k = &keys[num_keys];
	uint64_t x;

	if (n != 6)
		tool_die("targets: a key line has 6 fields, not %d", n);
	if (num_keys == MAX_KEYS)
		tool_die("targets: more than %d keys", MAX_KEYS);
	memset(k, 0, sizeof(*k));
	parse_num(w[1], 0xffffffff, &x);
	k->rkey = x;
	parse_num(w[2], UINT64_MAX, &k->va);
	parse_num(w[3], UINT64_MAX, &k->len);
	k->rights = parse_rights(w[4]);
	k->bound = parse_num(w[5], 0xffffff, &x);
	k->qpn = x;
	num_keys++;
}

static void group_targets(void)
{
	bool clean[2] = { true, true };
	struct tqp *q;
	int i, f;

	for (i = 0; i < num_tq; i++) {
		q = &tq[i];
		if (q->probe)
			continue;
		group_add(&g_all, i);
		for (f = 0; f < 2; f++) {
			if (q->fam && q->fam != (f ? 6 : 4))
				continue;
			if ((q->type == QT_RC || q->type == QT_UC ||
			     q->type == QT_XRC_TGT) && takes_requests(q) &&
			    q->psn_known) {
				group_add(&g_req[f], i);
				/*
				 * Every other one is kept alive; not an
				 * orphan, whose completer gets garbage.
				 */
				if (!q->orphan) {
					q->clean = clean[f];
					clean[f] = !clean[f];
				}
			}
			if ((q->type == QT_RC || q->type == QT_XRC_INI) &&
			    takes_responses(q) && q->psn_known)
				group_add(q->orphan ? &g_orphan[f] : &g_resp[f], i);
		}
		if (q->type == QT_UD)
			group_add(&g_ud, i);
	}
}

static void load_targets(const char *path)
{
	char line[1024], *w[16], *save, *tok;
	FILE *f = fopen(path, "r");
	int n;

	if (!f)
		tool_die("%s: %s", path, strerror(errno));
	while (fgets(line, sizeof(line), f)) {
		n = 0;
		for (tok = strtok_r(line, " \t\n", &save); tok && n < 16;
		     tok = strtok_r(NULL, " \t\n", &save))
			w[n++] = tok;
		if (!n || w[0][0] == '#')
			continue;
		if (!strcmp(w[0], "qp"))
			parse_qp(w, n);
		else if (!strcmp(w[0], "key"))
			parse_key(w, n);
		else if (!strcmp(w[0], "xsrq") && n == 2 && num_xsrq < MAX_XSRQ)
			xsrq[num_xsrq++] = tool_number(w[1], 0xffffff);
		else
			tool_die("targets: cannot read '%s'", w[0]);
	}
	fclose(f);
	group_targets();
}

static struct tqp *find_qp(uint32_t qpn)
{
	int i;

	for (i = 0; i < num_tq; i++)
		if (tq[i].qpn == qpn)
			return &tq[i];
	return NULL;
}

/* ---------------------------------------------------------------------- */
/* Packets: the header fields, then the bytes. */

struct fields {
	uint8_t opcode;
	uint8_t layout;		/* whose headers to lay out: usually opcode */
	bool se, mig, ackreq;
	uint8_t pad, tver;
	uint16_t pkey;
	uint8_t resv8a;		/* FECN, BECN, reserved: masked by the ICRC */
	uint8_t resv7;		/* reserved bits of the PSN word */
	uint32_t qpn, psn;
	uint32_t srqn;		/* XRCETH */
	uint32_t qkey, sqp;	/* DETH */
	uint32_t feth;
	uint64_t va;		/* RETH or AtomicETH */
	uint32_t rkey, dmalen;
	uint64_t swap, cmp;
	uint8_t syndrome;	/* AETH */
	uint32_t msn;
	uint64_t orig;		/* AtomicAckETH */
	uint32_t imm;		/* ImmDt or IETH */
	uint32_t paylen;
	bool mad;		/* the payload starts with a MAD header */
	bool pad_garbage;	/* pad bytes not zero */
};

enum icrc_mode { ICRC_GOOD, ICRC_BAD, ICRC_NONE };
enum csum_mode { CSUM_GOOD, CSUM_ZERO, CSUM_BAD };

struct pkt {
	int fam;		/* 4 or 6 */
	uint8_t src[16], dst[16];
	bool spoofed;
	uint16_t sport;
	uint8_t tclass, ttl;
	uint32_t flow;
	uint16_t ipid;
	enum icrc_mode icrc;
	enum csum_mode csum;
	uint32_t body;		/* bytes of roce[] before the ICRC */
	uint8_t roce[MAX_FRAME];
};

/* Where frames go, and what they may weigh. */
static struct {
	uint8_t smac[6], dmac[6];
	uint8_t src4[4], dst4[4], src6[16], dst6[16];
	uint32_t max_roce[2];	/* bytes after the UDP header, per family */
} net;

static uint8_t pool[POOL_SIZE];

/* Build the transport headers, payload and pad of @f; return their length. */
static uint32_t build_body(const struct fields *f, uint8_t *b)
{
	const struct opinfo *op = &ops[f->layout];
	uint32_t off = op->hdr_len;

	memset(b, 0, op->hdr_len);
	b[0] = f->opcode;
	b[1] = (f->se ? 0x80 : 0) | (f->mig ? 0x40 : 0) |
	       (f->pad & 3) << 4 | (f->tver & 0xf);
	put16(b + 2, f->pkey);
	b[4] = f->resv8a;
	put24(b + 5, f->qpn);
	b[8] = (f->ackreq ? 0x80 : 0) | (f->resv7 & 0x7f);
	put24(b + 9, f->psn);
	if (op->flags & F_XRCETH)
		put24(b + op->xrceth + 1, f->srqn);
	if (op->flags & F_DETH) {
		put32(b + op->deth, f->qkey);
		put24(b + op->deth + 5, f->sqp);
	}
	if (op->flags & F_FETH)
		put32(b + op->feth, f->feth);
	if (op->flags & (F_RETH | F_ATMETH)) {
		put64(b + op->reth, f->va);
		put32(b + op->reth + 8, f->rkey);
	}
	if (op->flags & F_RETH)
		put32(b + op->reth + 12, f->dmalen);
	if (op->flags & F_ATMETH) {
		put64(b + op->reth + 12, f->swap);
		put64(b + op->reth + 20, f->cmp);
	}
	if (op->flags & F_AETH) {
		b[op->aeth] = f->syndrome;
		put24(b + op->aeth + 1, f->msn);
	}
	if (op->flags & F_ATMACK)
		put64(b + op->atmack, f->orig);
	if (op->flags & (F_IMM | F_IETH))
		put32(b + op->immdt, f->imm);
	memcpy(b + off, pool + below(POOL_SIZE - f->paylen), f->paylen);
	if (f->mad && f->paylen >= 24) {
		/* base version 1; class, version, method set by the caller */
		b[off] = 1;
		b[off + 1] = f->imm >> 24;
		b[off + 2] = f->imm >> 16;
		b[off + 3] = f->imm >> 8;
		memset(b + off + 4, 0, 4);
		put16(b + off + 16, f->swap);	/* attribute ID */
		memset(b + off + 18, 0, 2);
	}
	off += f->paylen;
	if (f->pad_garbage)
		memcpy(b + off, pool + below(POOL_SIZE - 4), f->pad & 3);
	else
		memset(b + off, 0, f->pad & 3);
	return off + (f->pad & 3);
}

/* The frame's IP and UDP headers; return the offset of the BTH. */
static uint32_t build_ip_udp(const struct pkt *p, uint8_t *fr, uint32_t len)
{
	uint8_t *ip = fr + 14, *udp;
	uint32_t iplen = p->fam == 4 ? 20 : 40;

	memcpy(fr, net.dmac, 6);
	memcpy(fr + 6, net.smac, 6);
	put16(fr + 12, p->fam == 4 ? ETHERTYPE_IP : ETHERTYPE_IPV6);
	if (p->fam == 4) {
		ip[0] = 0x45;
		ip[1] = p->tclass;
		put16(ip + 2, 20 + 8 + len);
		put16(ip + 4, p->ipid);
		put16(ip + 6, p->ipid & 1 ? 0x4000 : 0);	/* DF */
		ip[8] = p->ttl;
		ip[9] = IPPROTO_UDP;
		put16(ip + 10, 0);
		memcpy(ip + 12, p->src, 4);
		memcpy(ip + 16, p->dst, 4);
		put16(ip + 10, csum_fold(csum_add(0, ip, 20)));
	} else {
		put32(ip, 6U << 28 | (uint32_t)p->tclass << 20 |
			  (p->flow & 0xfffff));
		put16(ip + 4, 8 + len);
		ip[6] = IPPROTO_UDP;
		ip[7] = p->ttl;
		memcpy(ip + 8, p->src, 16);
		memcpy(ip + 24, p->dst, 16);
	}
	udp = ip + iplen;
	put16(udp, p->sport);
	put16(udp + 2, ROCE_PORT);
	put16(udp + 4, 8 + len);
	put16(udp + 6, 0);
	return 14 + iplen + 8;
}

/*
 * The ICRC of a frame whose headers and body are in place (IBA Annex
 * A17.3.3, drivers/sroce/icrc.c): CRC-32 over eight bytes of ones (the
 * masked LRH), the IP header with TOS/traffic class, flow label, TTL/hop
 * limit and checksum masked to ones, the UDP header with its checksum
 * masked, the BTH with its FECN/BECN/reserved byte masked, and the rest
 * up to the ICRC; inverted, sent least significant byte first.
 */
static uint32_t icrc_of(const uint8_t *fr, int fam, uint32_t covered)
{
	static const uint8_t ones[8] = {
		0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff
	};
	uint32_t iplen = fam == 4 ? 20 : 40, crc;
	uint8_t h[40 + 8 + 12];

	memcpy(h, fr + 14, iplen + 8 + 12);
	if (fam == 4) {
		h[1] = 0xff;
		h[8] = 0xff;
		h[10] = h[11] = 0xff;
	} else {
		h[0] |= 0x0f;
		h[1] = h[2] = h[3] = 0xff;
		h[7] = 0xff;
	}
	h[iplen + 6] = h[iplen + 7] = 0xff;
	h[iplen + 8 + 4] = 0xff;
	crc = crc_update(0xffffffff, ones, sizeof(ones));
	crc = crc_update(crc, h, iplen + 8 + 12);
	crc = crc_update(crc, fr + 14 + iplen + 8 + 12, covered - 12);
	return ~crc;
}

static uint16_t udp_csum(const uint8_t *fr, int fam, uint32_t udplen)
{
	const uint8_t *ip = fr + 14;
	uint32_t sum;
	uint8_t ph[8];

	if (fam == 4) {
		sum = csum_add(0, ip + 12, 8);
		put16(ph, IPPROTO_UDP);
		put16(ph + 2, udplen);
		sum = csum_add(sum, ph, 4);
		sum = csum_add(sum, ip + 20, udplen);
	} else {
		sum = csum_add(0, ip + 8, 32);
		put32(ph, udplen);
		put32(ph + 4, IPPROTO_UDP);
		sum = csum_add(sum, ph, 8);
		sum = csum_add(sum, ip + 40, udplen);
	}
	return csum_fold(sum) ?: 0xffff;
}

/* Assemble the whole frame of @p into @fr; return its length. */
static uint32_t assemble(const struct pkt *p, uint8_t *fr)
{
	uint32_t len = p->body + (p->icrc == ICRC_NONE ? 0 : 4), off, icrc;
	uint16_t c, bad;
	uint8_t *udp;

	off = build_ip_udp(p, fr, len);
	memcpy(fr + off, p->roce, p->body);
	if (p->icrc != ICRC_NONE) {
		icrc = p->body >= 12 ? icrc_of(fr, p->fam, p->body) : 0;
		if (p->icrc == ICRC_BAD)
			icrc ^= 1U << below(32);
		fr[off + p->body] = icrc;
		fr[off + p->body + 1] = icrc >> 8;
		fr[off + p->body + 2] = icrc >> 16;
		fr[off + p->body + 3] = icrc >> 24;
	}
	udp = fr + off - 8;
	if (p->csum == CSUM_ZERO && p->fam == 4)
		return off + len;
	c = udp_csum(fr, p->fam, 8 + len);
	if (p->csum == CSUM_BAD) {
		bad = c ^ 0x0101;
		if (bad == 0 || bad == 0xffff)
			bad = c ^ 0x0202;
		c = bad;
	}
	put16(udp + 6, c);
	return off + len;
}

/* ---------------------------------------------------------------------- */
/*
 * The verdict on a frame, as drivers/sroce/recv.c will reach it: the
 * UDP layer, then the header checks of IBA 9.6.1, the ICRC, the QP, the
 * QP's type and state (IBA 10.3.1), then a UD QP's Q_Key and length.
 */
enum verdict {
	V_UDP_CSUM, V_HEADER, V_ICRC, V_NO_QP, V_QP_STATE,
	V_UD_QKEY, V_UD_LONG, V_UD, V_ADDR, V_DEEP, V_NR
};

static const char *const verdict_names[V_NR] = {
	"udp_csum", "header", "icrc", "no_qp", "qp_state",
	"ud_qkey", "ud_long", "ud", "addr", "deep",
};

static bool qp_takes(const struct tqp *q, uint32_t flags)
{
	uint32_t tr;

	switch (q->type) {
	case QT_RC:
		tr = F_RC;
		break;
	case QT_UC:
		tr = F_UC;
		break;
	case QT_XRC_INI:
		tr = F_XRC | F_RESP;
		break;
	case QT_XRC_TGT:
		tr = F_XRC | F_REQ;
		break;
	default:
		tr = F_UD;
		break;
	}
	if ((flags & tr) != tr)
		return false;
	return flags & F_REQ ? takes_requests(q) : takes_responses(q);
}

static enum verdict classify(const struct pkt *p, const uint8_t *fr)
{
	uint32_t off = 14 + (p->fam == 4 ? 20 : 40) + 8, len, tail, paylen;
	const uint8_t *b = fr + off;
	const struct opinfo *op;
	const struct tqp *q;
	uint32_t icrc, qpn;

	if (p->csum == CSUM_BAD)
		return V_UDP_CSUM;
	len = p->body + (p->icrc == ICRC_NONE ? 0 : 4);
	if (len < 12)
		return V_HEADER;
	op = &ops[b[0]];
	if (!(op->flags & F_VALID) || (b[1] & 0xf) || len < op->hdr_len ||
	    (get16(b + 2) & 0x7fff) != 0x7fff)
		return V_HEADER;
	tail = (b[1] >> 4 & 3) + 4;
	if (len < op->hdr_len + tail)
		return V_HEADER;
	paylen = len - op->hdr_len - tail;
	if (paylen && !(op->flags & F_PAYLOAD))
		return V_HEADER;
	icrc = b[len - 4] | b[len - 3] << 8 | b[len - 2] << 16 |
	       (uint32_t)b[len - 1] << 24;
	if (icrc != icrc_of(fr, p->fam, len - 4))
		return V_ICRC;
	qpn = get32(b + 4) & 0xffffff;
	if (qpn == MCAST_QPN)
		return op->flags & F_UD ? V_NO_QP : V_HEADER;
	q = find_qp(qpn);
	if (!q)
		return V_NO_QP;
	if (!qp_takes(q, op->flags))
		return V_QP_STATE;
	/* A connected QP takes packets from its peer, to its own address. */
	if (!(op->flags & F_UD))
		return q->fam && (p->spoofed || p->fam != q->fam) ? V_ADDR :
		       V_DEEP;
	if (get32(b + op->deth) != q->qkey)
		return V_UD_QKEY;
	return paylen > q->mtu ? V_UD_LONG : V_UD;
}

/* ---------------------------------------------------------------------- */
/* Generation. */

enum cls {
	C_VALID, C_MUTATED, C_RESPONSE, C_UD, C_GSI, C_ANY_STATE, C_INVALID,
	C_BAD_ICRC, C_BAD_UDP, C_NO_QP, C_NR
};

static const char *const cls_names[C_NR] = {
	"valid", "mutated", "response", "ud", "gsi", "any-state", "invalid",
	"bad-icrc", "bad-udp", "no-qp",
};

/* Per mille. */
static const unsigned int cls_weight[C_NR] = {
	[C_VALID] = 380, [C_MUTATED] = 220, [C_RESPONSE] = 90, [C_UD] = 60,
	[C_GSI] = 80, [C_ANY_STATE] = 60, [C_INVALID] = 60, [C_BAD_ICRC] = 25,
	[C_BAD_UDP] = 5, [C_NO_QP] = 20,
};

/* Damage done to the bytes once they are built. */
enum damage { D_NONE, D_BYTES, D_TRUNCATE };

/* What one generator call made, for the model and the summary. */
struct gen {
	struct fields f;
	struct pkt *p;
	int cls;
	struct tqp *q;		/* the target whose model it may change */
	struct model saved;	/* @q's model before */
	bool fatal;		/* should it kill @q (RC, XRC)? */
	bool psn_off;		/* its PSN is deliberately not the expected one */
	enum damage damage;
	int fam_idx;		/* 0: IPv4, 1: IPv6 */
};

/* @q's model may change: keep it as it was, to undo what does not happen. */
static void touch(struct gen *g, struct tqp *q)
{
	g->q = q;
	g->saved = q->m;
}

static uint32_t psn_add(uint32_t psn, uint32_t n)
{
	return (psn + n) & PSN_MASK;
}

static uint32_t max_paylen(const struct gen *g)
{
	uint32_t room = net.max_roce[g->fam_idx], hdr = ops[g->f.layout].hdr_len;

	return room > hdr + 3 + 4 ? room - hdr - 3 - 4 : 0;
}

static void set_paylen(struct gen *g, uint32_t n)
{
	uint32_t max = max_paylen(g);

	g->f.paylen = n < max ? n : max;
	g->f.pad = -g->f.paylen & 3;
}

static void fields_init(struct gen *g, uint8_t opcode, uint32_t qpn,
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
static uint32_t pick_len(uint32_t mtu, uint32_t max)
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

static uint8_t transport_of(const struct tqp *q)
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

enum req_kind { RK_SEND, RK_WRITE, RK_READ, RK_CAS, RK_FADD, RK_FLUSH,
		RK_AWRITE, RK_NR };

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

enum want { W_ANY, W_CLEAN, W_DIRTY };

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
static struct tqp *pick_from(struct group *grp, int fam_idx, enum want want)
{
	struct group *gr = &grp[fam_idx];

	if (!gr->n || chance(50))
		gr = &grp[!fam_idx];
	return pick_in(gr, want);
}

/* Any target but those kept alive. */
static struct tqp *pick_any(void)
{
	return pick_in(&g_all, W_DIRTY);
}

/* Fallback when a class has no target: a datagram at QP 1. */
static void gen_gsi(struct gen *g);

static void gen_valid(struct gen *g, enum want want)
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
static bool mutate_fields(struct gen *g)
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
static void damage_bytes(struct gen *g)
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

static void gen_mutated(struct gen *g)
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

static void gen_gsi(struct gen *g)
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

struct verdicts {
	uint64_t v[V_NR];
	uint64_t cls[C_NR];
	uint64_t op[256];
	uint64_t fam[2];
	uint64_t spoofed;
	uint64_t sent, bytes;
};

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
static uint32_t gen_one(struct pkt *p, uint8_t *fr, unsigned int fams,
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

/* ---------------------------------------------------------------------- */
/* Sending, in sendmmsg() batches. */

static struct {
	int fd;
	int ifindex;
	bool dry, dump, hex;
	unsigned int batch;
	uint64_t rate;
	struct sockaddr_ll sll[2];	/* IPv4, IPv6 */
	struct mmsghdr msg[MAX_BATCH];
	struct iovec iov[MAX_BATCH];
	uint8_t frame[MAX_BATCH][MAX_FRAME];
	enum verdict v[MAX_BATCH];
	int cls[MAX_BATCH], fam[MAX_BATCH];
	bool spoofed[MAX_BATCH];
	uint8_t opcode[MAX_BATCH];
	uint32_t roce_len[MAX_BATCH];
	unsigned int n;
	struct verdicts st;
	struct timespec start;
} tx;

static double elapsed(void)
{
	struct timespec now;

	clock_gettime(CLOCK_MONOTONIC, &now);
	return now.tv_sec - tx.start.tv_sec +
	       (now.tv_nsec - tx.start.tv_nsec) / 1e9;
}

static void open_socket(const char *ifname)
{
	struct sockaddr_ll sll = { .sll_family = AF_PACKET };
	struct ifreq ifr = { 0 };
	int one = 1 << 22, i;

	tx.fd = socket(AF_PACKET, SOCK_RAW, 0);
	if (tx.fd < 0)
		tool_die("socket(AF_PACKET): %s", strerror(errno));
	tx.ifindex = if_nametoindex(ifname);
	if (!tx.ifindex)
		tool_die("no interface %s", ifname);
	sll.sll_ifindex = tx.ifindex;
	if (bind(tx.fd, (struct sockaddr *)&sll, sizeof(sll)))
		tool_die("bind %s: %s", ifname, strerror(errno));
	setsockopt(tx.fd, SOL_SOCKET, SO_SNDBUF, &one, sizeof(one));
	snprintf(ifr.ifr_name, sizeof(ifr.ifr_name), "%s", ifname);
	if (ioctl(tx.fd, SIOCGIFHWADDR, &ifr))
		tool_die("SIOCGIFHWADDR %s: %s", ifname, strerror(errno));
	memcpy(net.smac, ifr.ifr_hwaddr.sa_data, 6);
	if (ioctl(tx.fd, SIOCGIFMTU, &ifr))
		tool_die("SIOCGIFMTU %s: %s", ifname, strerror(errno));
	net.max_roce[0] = ifr.ifr_mtu - 20 - 8;
	net.max_roce[1] = ifr.ifr_mtu - 40 - 8;
	for (i = 0; i < 2; i++) {
		tx.sll[i] = sll;
		tx.sll[i].sll_protocol = htons(i ? ETHERTYPE_IPV6 : ETHERTYPE_IP);
		tx.sll[i].sll_halen = 6;
		memcpy(tx.sll[i].sll_addr, net.dmac, 6);
	}
}

static void account(unsigned int i)
{
	struct verdicts *st = &tx.st;

	st->v[tx.v[i]]++;
	st->cls[tx.cls[i]]++;
	st->op[tx.opcode[i]]++;
	st->fam[tx.fam[i] == 6]++;
	st->spoofed += tx.spoofed[i];
	st->sent++;
	st->bytes += tx.roce_len[i];
}

/* Send the batch; every frame, or die. */
static void flush(void)
{
	unsigned int done = 0, i, stalls = 0;
	double due;
	int r;

	while (!tx.dry && done < tx.n) {
		r = sendmmsg(tx.fd, tx.msg + done, tx.n - done, 0);
		if (r > 0) {
			done += r;
			stalls = 0;
			continue;
		}
		if (r < 0 && errno != ENOBUFS && errno != EAGAIN &&
		    errno != EINTR) {
			fprintf(stderr, "sroce-fuzz: sendmmsg: %s\n",
				strerror(errno));
			exit(1);
		}
		if (++stalls > 10000) {
			fprintf(stderr, "sroce-fuzz: sendmmsg stalled: %s\n",
				strerror(errno));
			exit(1);
		}
		usleep(1000);
	}
	for (i = 0; i < tx.n; i++)
		account(i);
	tx.n = 0;
	if (!tx.rate)
		return;
	due = (double)tx.st.sent / tx.rate - elapsed();
	if (due > 0)
		usleep(due * 1e6);
}

static void print_addr(const struct pkt *p, char *buf, size_t len)
{
	inet_ntop(p->fam == 4 ? AF_INET : AF_INET6, p->src, buf, len);
}

static void dump(uint64_t index, const struct gen *g, enum verdict v,
		 const uint8_t *fr, uint32_t len)
{
	const struct pkt *p = g->p;
	char src[INET6_ADDRSTRLEN];
	uint32_t i;

	print_addr(p, src, sizeof(src));
	printf("pkt %" PRIu64 " t=%.3f %s ipv%d src=%s%s op=%s qpn=0x%06x"
	       " psn=0x%06x len=%u verdict=%s\n", index, elapsed(),
	       cls_names[g->cls], p->fam, src,
	       p->spoofed ? "(spoofed)" : "",
	       p->body ? ops[p->roce[0]].name : "-", g->f.qpn, g->f.psn,
	       p->body + (p->icrc == ICRC_NONE ? 0 : 4), verdict_names[v]);
	if (!tx.hex)
		return;
	for (i = 0; i < len; i++)
		printf("%02x%s", fr[i], i + 1 == len || i % 32 == 31 ? "\n" : "");
}

/* Queue the frame just generated into slot tx.n. */
static void enqueue(uint64_t index, const struct gen *g, enum verdict v,
		    uint32_t len)
{
	unsigned int i = tx.n;
	const struct pkt *p = g->p;

	if (len > 14 + net.max_roce[p->fam == 6] + (p->fam == 6 ? 48 : 28))
		tool_die("packet %" PRIu64 ": a frame of %u bytes (a bug here)",
			 index, len);
	if (tx.dump)
		dump(index, g, v, tx.frame[i], len);
	tx.iov[i].iov_base = tx.frame[i];
	tx.iov[i].iov_len = len;
	tx.msg[i].msg_hdr = (struct msghdr){
		.msg_name = &tx.sll[p->fam == 6],
		.msg_namelen = sizeof(tx.sll[0]),
		.msg_iov = &tx.iov[i],
		.msg_iovlen = 1,
	};
	tx.v[i] = v;
	tx.cls[i] = g->cls;
	tx.fam[i] = p->fam;
	tx.spoofed[i] = p->spoofed;
	tx.opcode[i] = p->body ? p->roce[0] : g->f.opcode;
	tx.roce_len[i] = p->body + (p->icrc == ICRC_NONE ? 0 : 4);
	if (++tx.n == tx.batch)
		flush();
}

static void parse_ip(const char *s, int fam, uint8_t *out);

/*
 * --probe QPN:PSN:COUNT[:KIND] --probe-src IP: COUNT requests at QPN, at
 * PSN, PSN + 1..., from IP (its family chooses the destination address):
 * valid SEND ONLY requests of 8 bytes (KIND send, the default), or RDMA
 * WRITE FIRST with a DMA length of 0 and a path MTU of payload (write0).
 * See the header.
 */
static void probe(const char *spec, const char *src)
{
	static struct pkt p;
	unsigned int qpn, psn, count, i;
	char kind[16] = "send";
	struct tqp *q;
	struct gen g;
	bool write0;

	if (sscanf(spec, "%i:%i:%u:%15s", &qpn, &psn, &count, kind) < 3 ||
	    (strcmp(kind, "send") && strcmp(kind, "write0")))
		tool_die("--probe takes QPN:PSN:COUNT[:send|write0]");
	write0 = !strcmp(kind, "write0");
	q = find_qp(qpn);
	memset(&p, 0, sizeof(p));
	p.fam = strchr(src, ':') ? 6 : 4;
	parse_ip(src, p.fam, p.src);
	memcpy(p.dst, p.fam == 4 ? net.dst4 : net.dst6, p.fam == 4 ? 4 : 16);
	p.spoofed = memcmp(p.src, p.fam == 4 ? net.src4 : net.src6,
			   p.fam == 4 ? 4 : 16);
	p.ttl = 64;
	p.sport = 0xc000;
	for (i = 0; i < count; i++) {
		memset(&g, 0, sizeof(g));
		g.p = &p;
		g.fam_idx = p.fam == 6;
		fields_init(&g, (q ? transport_of(q) : TR_RC) |
			    (write0 ? OP_WRITE_FIRST : OP_SEND_ONLY), qpn,
			    psn + i);
		g.f.ackreq = true;
		if (write0 && num_keys) {
			g.f.rkey = keys[0].rkey;
			g.f.va = keys[0].va;
		}
		set_paylen(&g, write0 ? (q ? q->mtu : port_mtu) : 8);
		p.body = build_body(&g.f, p.roce);
		p.icrc = ICRC_GOOD;
		p.csum = CSUM_GOOD;
		enqueue(i, &g, V_DEEP, assemble(&p, tx.frame[tx.n]));
	}
	flush();
	printf("sroce-fuzz: probe: %u %s at QP 0x%x from %s, PSN 0x%06x on\n",
	       count, write0 ? "WRITE FIRST, DMA length 0," : "SEND ONLY",
	       qpn, src, psn & PSN_MASK);
}

/* ---------------------------------------------------------------------- */

static void summary(void)
{
	const struct verdicts *st = &tx.st;
	double t = elapsed();
	int i;

	printf("sroce-fuzz: sent %" PRIu64 " packets (%" PRIu64
	       " bytes) in %.1f s: %.0f packets/s\n", st->sent, st->bytes, t,
	       t > 0 ? st->sent / t : 0);
	for (i = 0; i < C_NR; i++)
		printf("class %s %" PRIu64 "\n", cls_names[i], st->cls[i]);
	for (i = 0; i < 256; i++)
		if (st->op[i])
			printf("opcode 0x%02x %s %" PRIu64 "\n", i, ops[i].name,
			       st->op[i]);
	printf("expect sent=%" PRIu64, st->sent);
	for (i = 0; i < V_NR; i++)
		printf(" %s=%" PRIu64, verdict_names[i], st->v[i]);
	printf(" v4=%" PRIu64 " v6=%" PRIu64 " spoofed=%" PRIu64 "\n",
	       st->fam[0], st->fam[1], st->spoofed);
}

static void print_targets(void)
{
	int counts[QT_OTHER + 1] = { 0 }, i;

	for (i = 0; i < num_tq; i++)
		counts[tq[i].type]++;
	printf("sroce-fuzz: targets: %d QPs (", num_tq);
	for (i = 0; i <= QT_OTHER; i++)
		printf("%s%s %d", i ? ", " : "", qtype_names[i], counts[i]);
	printf("), %d keys, %d XRC SRQs; requests to %d+%d, responses to"
	       " %d+%d and %d+%d orphans (IPv4+IPv6), %d UD\n", num_keys,
	       num_xsrq, g_req[0].n, g_req[1].n, g_resp[0].n, g_resp[1].n,
	       g_orphan[0].n, g_orphan[1].n, g_ud.n);
}

static void parse_ip(const char *s, int fam, uint8_t *out)
{
	if (inet_pton(fam == 4 ? AF_INET : AF_INET6, s, out) != 1)
		tool_die("not an IPv%d address: %s", fam, s);
}

static void parse_mac(const char *s, uint8_t *mac)
{
	if (sscanf(s, "%hhx:%hhx:%hhx:%hhx:%hhx:%hhx", &mac[0], &mac[1],
		   &mac[2], &mac[3], &mac[4], &mac[5]) != 6)
		tool_die("not a MAC address: %s", s);
}

static uint64_t random_seed(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_REALTIME, &ts);
	return (uint64_t)ts.tv_nsec * 1000003 ^ ts.tv_sec ^ getpid();
}

static const char usage[] =
	"usage: sroce-fuzz -i IFACE -M DST_MAC -t TARGETS [-s SEED] [-n PACKETS]\n"
	"         [--from I] [--count N] [-f 4|6|46] [--rate PPS] [--batch N]\n"
	"         [--src4 IP] [--dst4 IP] [--src6 IP] [--dst6 IP]\n"
	"         [--port-mtu BYTES] [--dump] [--hex] [--dry-run]\n"
	"       sroce-fuzz -i IFACE -M DST_MAC -t TARGETS --probe QPN:PSN:COUNT[:KIND]\n"
	"         --probe-src IP\n"
	"See the comment at the top of userspace/tools/sroce-fuzz.c.";

enum { O_FROM = 256, O_COUNT, O_RATE, O_BATCH, O_SRC4, O_DST4, O_SRC6,
       O_DST6, O_PORT_MTU, O_DUMP, O_HEX, O_DRY, O_PROBE, O_PROBE_SRC };

static const struct option longopts[] = {
	{ "iface", required_argument, NULL, 'i' },
	{ "mac", required_argument, NULL, 'M' },
	{ "targets", required_argument, NULL, 't' },
	{ "seed", required_argument, NULL, 's' },
	{ "packets", required_argument, NULL, 'n' },
	{ "family", required_argument, NULL, 'f' },
	{ "from", required_argument, NULL, O_FROM },
	{ "count", required_argument, NULL, O_COUNT },
	{ "rate", required_argument, NULL, O_RATE },
	{ "batch", required_argument, NULL, O_BATCH },
	{ "src4", required_argument, NULL, O_SRC4 },
	{ "dst4", required_argument, NULL, O_DST4 },
	{ "src6", required_argument, NULL, O_SRC6 },
	{ "dst6", required_argument, NULL, O_DST6 },
	{ "port-mtu", required_argument, NULL, O_PORT_MTU },
	{ "dump", no_argument, NULL, O_DUMP },
	{ "hex", no_argument, NULL, O_HEX },
	{ "dry-run", no_argument, NULL, O_DRY },
	{ "probe", required_argument, NULL, O_PROBE },
	{ "probe-src", required_argument, NULL, O_PROBE_SRC },
	{ "help", no_argument, NULL, 'h' },
	{ NULL, 0, NULL, 0 },
};

struct run {
	const char *ifname, *targets, *probe, *probe_src;
	bool have_mac, have_seed;
	uint64_t seed, packets, from, count;
	unsigned int fams;
	double last_report;
};

static void parse_args(int argc, char **argv, struct run *r)
{
	int opt;

	while ((opt = getopt_long(argc, argv, "i:M:t:s:n:f:h", longopts,
				  NULL)) != -1) {
		switch (opt) {
		case 'i':
			r->ifname = optarg;
			break;
		case 'M':
			parse_mac(optarg, net.dmac);
			r->have_mac = true;
			break;
		case 't':
			r->targets = optarg;
			break;
		case 's':
			r->seed = tool_number(optarg, ULONG_MAX);
			r->have_seed = true;
			break;
		case 'n':
			r->packets = tool_number(optarg, ULONG_MAX);
			break;
		case 'f':
			r->fams = tool_number(optarg, 46);
			if (r->fams != 4 && r->fams != 6 && r->fams != 46)
				tool_die("-f takes 4, 6 or 46");
			break;
		case O_FROM:
			r->from = tool_number(optarg, ULONG_MAX);
			break;
		case O_COUNT:
			r->count = tool_number(optarg, ULONG_MAX);
			break;
		case O_RATE:
			tx.rate = tool_number(optarg, 100000000);
			break;
		case O_BATCH:
			tx.batch = tool_number(optarg, MAX_BATCH);
			break;
		case O_SRC4:
			parse_ip(optarg, 4, net.src4);
			break;
		case O_DST4:
			parse_ip(optarg, 4, net.dst4);
			break;
		case O_SRC6:
			parse_ip(optarg, 6, net.src6);
			break;
		case O_DST6:
			parse_ip(optarg, 6, net.dst6);
			break;
		case O_PORT_MTU:
			port_mtu = tool_number(optarg, 4096);
			break;
		case O_DUMP:
			tx.dump = true;
			break;
		case O_HEX:
			tx.dump = tx.hex = true;
			break;
		case O_DRY:
			tx.dry = true;
			break;
		case O_PROBE:
			r->probe = optarg;
			break;
		case O_PROBE_SRC:
			r->probe_src = optarg;
			break;
		default:
			tool_die("%s", usage);
		}
	}
	if (optind != argc || !r->targets || !tx.batch ||
	    (!tx.dry && (!r->ifname || !r->have_mac)) ||
	    !r->probe != !r->probe_src)
		tool_die("%s", usage);
}

static void progress(const struct run *r, uint64_t i)
{
	double t = elapsed();

	if (t - r->last_report < 10)
		return;
	((struct run *)r)->last_report = t;
	fprintf(stderr, "sroce-fuzz: %" PRIu64 "/%" PRIu64 " generated, %"
		PRIu64 " sent, %.0f packets/s\n", i, r->packets, tx.st.sent,
		tx.st.sent / t);
}

int main(int argc, char **argv)
{
	static struct pkt p;
	struct run r = { .packets = 10000, .count = UINT64_MAX, .fams = 46 };
	enum verdict v;
	struct gen g;
	uint64_t i;
	uint32_t len;

	crc_init();
	ops_init();
	if (crc_update(~0U, (const uint8_t *)"\xff\xff\xff\xff\xff\xff\xff\xff",
		       8) != 0xdebb20e3)
		tool_die("CRC-32 self-test failed");
	tx.batch = 64;
	parse_ip("192.0.2.2", 4, net.src4);
	parse_ip("192.0.2.1", 4, net.dst4);
	parse_ip("2001:db8::2", 6, net.src6);
	parse_ip("2001:db8::1", 6, net.dst6);
	net.max_roce[0] = 1500 - 28;
	net.max_roce[1] = 1500 - 48;
	parse_args(argc, argv, &r);
	if (!r.have_seed)
		r.seed = random_seed();
	load_targets(r.targets);
	if (!tx.dry)
		open_socket(r.ifname);
	if (r.probe) {
		clock_gettime(CLOCK_MONOTONIC, &tx.start);
		probe(r.probe, r.probe_src);
		return 0;
	}

	printf("sroce-fuzz: seed=%" PRIu64 " packets=%" PRIu64 " from=%"
	       PRIu64 " count=%" PRIu64 " family=%u\n", r.seed, r.packets,
	       r.from, r.count == UINT64_MAX ? r.packets : r.count, r.fams);
	print_targets();
	fflush(stdout);
	rng_state = r.seed;
	for (i = 0; i < POOL_SIZE; i += 8) {
		uint64_t x = rnd();

		memcpy(pool + i, &x, 8);
	}
	clock_gettime(CLOCK_MONOTONIC, &tx.start);
	for (i = 0; i < r.packets; i++) {
		len = gen_one(&p, tx.frame[tx.n], r.fams, &g, &v);
		if (i >= r.from && i - r.from < r.count)
			enqueue(i, &g, v, len);
		if (!(i & 1023))
			progress(&r, i);
	}
	flush();
	summary();
	return 0;
}
