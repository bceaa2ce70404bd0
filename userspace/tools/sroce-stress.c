// SPDX-License-Identifier: GPL-2.0 OR Linux-OpenIB
/*
 * sroce-stress: verified traffic of every opcode while objects are torn
 * down under it.
 *
 *   sroce-stress -d DEV -g GID -6 GID6 -D PEER_DEV -G PEER_GID -7 PEER_GID6
 *                [--events N | --forever] [--pairs N] [--only EVENT,...]
 *                [--seed S] [--gap-ms MS] [--min-ms MS] [--verbose]
 *                [--inject data]
 *
 * One process opens two devices (sroce_a and sroce_b of tests/lib.sh; GID
 * and GID6 are the indices of each device's IPv4 and IPv6 RoCE v2 GIDs)
 * and connects --pairs QP pairs (default 5), the kinds in turn: RC, RC
 * whose responder takes its receives from an SRQ, UC, UD, and RC again.
 * On every pair the requester on DEV keeps up to 8 operations in flight
 * towards the responder on PEER_DEV, and the responder keeps up to 4
 * SENDs in flight back:
 *
 *   RC  SEND, SEND_WITH_IMM, RDMA WRITE, WRITE_WITH_IMM, RDMA READ,
 *       CMP_AND_SWP, FETCH_AND_ADD, ATOMIC_WRITE (ibv_wr_atomic_write());
 *       WRITE and READ go through a type 2 memory window that the
 *       responder bound with a BIND_MW work request, one time in three
 *   UC  SEND, SEND_WITH_IMM, RDMA WRITE, WRITE_WITH_IMM
 *   UD  SEND, SEND_WITH_IMM
 *
 * FLUSH is not offered by the libibverbs the tools link (rdma-core 44.0
 * has no ibv_wr_flush()): it is counted as skipped. Sizes go from 0 to
 * 4096 bytes (at least 8 on UC and UD, whose payload starts with the
 * operation's id; at most the path MTU on UD).
 *
 * Every byte is checked: each operation's data is a pseudo-random pattern
 * of its id. A SEND's receive (in order on RC; by id on UC and UD, where
 * a datagram may be lost) must hold exactly it, with the immediate data
 * and length it was sent with; a successful RC WRITE must have placed it;
 * a successful READ must have fetched the responder's bytes; an atomic
 * must have returned the old value and left the new one. A successful
 * completion with wrong bytes is a mismatch: the run fails.
 *
 * Events, one every --gap-ms (default 150) ms of traffic, on a random
 * pair, --events times (0: none), or until killed with --forever:
 *
 *   qp-responder  destroy the responder's QP while requests arrive
 *   qp-requester  destroy the requester's QP while the responder sends
 *                 to it and its own requests are in flight
 *   mr            deregister the responder's target MR, or the
 *                 requester's source MR, under the traffic (EBUSY while a
 *                 window is bound to it: the window is deallocated first)
 *   mw            the responder invalidates (LOCAL_INV) or deallocates its
 *                 window while the requester reads and writes through it
 *   cq            destroy the requester's CQ: EBUSY while its QP lives
 *                 (checked), then the QP and the CQ
 *   sqd           (RC) RTS -> SQD on both QPs, at once or after
 *                 IBV_EVENT_SQ_DRAINED, then SQD -> SQD with a new address
 *                 vector (their IPv4 GIDs for IPv6 ones or back: both
 *                 move, since a connected QP takes packets only from its
 *                 path's address) and new timeout, retry_cnt, rnr_retry,
 *                 max_rd_atomic and max_dest_rd_atomic, then SQD -> RTS,
 *                 in a random order, with traffic in between. Each
 *                 modify must work (or find the QP in ERR). The traffic
 *                 must resume (a later operation of each side succeeds,
 *                 byte for byte) or, unless SQD waited for both SQs to
 *                 drain (IBA's way to change a path: then it must
 *                 resume), end in error completions; by the time its
 *                 timer and retries allow (plus 10 s): a pair that does
 *                 neither fails the run ("stalled")
 *   reset         both QPs to ERR, drained, RESET, and connected again
 *                 with new PSNs, under the peer's traffic
 *
 * A pair whose operation failed (an error completion, expected after
 * these events) stops, is destroyed and built anew: QPs, CQs, SRQ, MRs,
 * window. Every destroy must return 0 (but the CQ's EBUSY above). An
 * error completion on a pair no event touched fails the run.
 *
 * A device that goes away (rdma link del, the netdev deleted, rmmod)
 * raises IBV_EVENT_DEVICE_FATAL: the tool then stops, destroys all it has
 * (errors are expected and ignored), closes both devices, prints its
 * summary and exits 3.
 *
 * --gap-ms MS sets the time between events; --min-ms MS (default 1000)
 * the least time the traffic runs after "ready" when it stops on its own;
 * --removal-ms MS (default 3000) how long an error may wait for the
 * removal event that explains it (longer on a slow kernel);
 * --verbose prints each event, what became of each SQD dance and, once a
 * second, the operations in flight; --inject data flips one byte of the
 * 100th received message longer than 100 bytes before it is checked, to
 * show that the check fails.
 *
 * Output: "ready" once every pair has completed an operation; with
 * --verbose a line per event; at the end
 *
 *   sroce-stress: events=N qp=.. mr=.. mw=.. cq=.. sqd=.. reset=..
 *   ops=N verified=N bytes=N errors=N lost=N reordered=N unverified=N
 *   rebuilt=N
 *   sqd_resumed=N sqd_failed=N sqd_stalled=N skipped_flush=N
 *   [atomic_write=unsupported:WHY] mismatches=N failures=N
 *   device_removed=0|1 time=T
 *
 * ("verified": completions whose bytes were checked; "unverified": UC
 * WRITEs, whose arrival nothing reports; "lost": UC/UD messages that
 * never arrived, while later ones did; "reordered": UC/UD messages that
 * came after later ones (a veth may deliver what two CPUs sent out of
 * order), checked as any other; "errors": error completions, all after
 * events). Exit status: 0 if nothing failed, 1 if something did, 2
 * for a usage or setup error, 3 if a device went away (after a clean
 * stop). --only EVENT,... restricts the events.
 */
#define _GNU_SOURCE
#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <inttypes.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "tool.h"

#define MAX_PAIRS	16
#define DEPTH		8		/* requester operations in flight */
#define BDEPTH		4		/* responder SENDs in flight */
#define RQ_DEPTH	16		/* receives posted on each side */
#define SLOT		4096
#define GRH_SIZE	40
#define RSLOT		(SLOT + GRH_SIZE)
#define QKEY		0x11111111
#define WAIT_MS		10000

/* Requester buffer: SRC, RDST (slots of SLOT), ARES (8 each), RECV. */
#define A_SRC		0
#define A_RDST		(DEPTH * SLOT)
#define A_ARES		(2 * DEPTH * SLOT)
#define A_RECV		(2 * DEPTH * SLOT + 4096)
#define A_SIZE		(A_RECV + RQ_DEPTH * RSLOT)
/* Responder target MR: WDST, RSRC, ATGT; its other MR: RECV, BSRC. */
#define B_WDST		0
#define B_RSRC		(DEPTH * SLOT)
#define B_ATGT		(2 * DEPTH * SLOT)
#define B_TSIZE		(2 * DEPTH * SLOT + 4096)
#define B_RECV		0
#define B_BSRC		(RQ_DEPTH * RSLOT)
#define B_RSIZE		(B_BSRC + BDEPTH * SLOT)

enum kind { K_RC, K_RC_SRQ, K_UC, K_UD };
static const char *const kind_names[] = { "RC", "RC+SRQ", "UC", "UD" };

enum op_kind {
	OP_SEND, OP_SEND_IMM, OP_WRITE, OP_WRITE_IMM, OP_READ, OP_CAS,
	OP_FADD, OP_AWRITE, OP_NR
};
static const char *const op_names[] = {
	"SEND", "SEND_IMM", "WRITE", "WRITE_IMM", "READ", "CAS", "FADD",
	"ATOMIC_WRITE",
};

enum event {
	EV_QP_RESPONDER, EV_QP_REQUESTER, EV_MR, EV_MW, EV_CQ, EV_SQD,
	EV_RESET, EV_NR
};
static const char *const ev_names[] = {
	"qp-responder", "qp-requester", "mr", "mw", "cq", "sqd", "reset",
};

/* ------------------------------------------------------------------ */

static unsigned int failures, mismatches;
static bool verbose, inject_data;

static uint64_t now_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec * 1000ULL + ts.tv_nsec / 1000000;
}

static void sleep_us(unsigned int us)
{
	struct timespec ts = { us / 1000000, (us % 1000000) * 1000L };

	nanosleep(&ts, NULL);
}

static uint64_t mix(uint64_t *s)
{
	uint64_t z = (*s += 0x9e3779b97f4a7c15ULL);

	z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
	z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
	return z ^ (z >> 31);
}

static uint64_t rng;

static uint32_t rnd(uint32_t n)
{
	return n ? mix(&rng) % n : 0;
}

/* The bytes of operation @id: a pattern only the id determines. */
static void pattern(uint64_t id, uint8_t *p, uint32_t len)
{
	uint64_t s = id * 0x2545f4914f6cdd1dULL, v = 0;
	uint32_t i;

	for (i = 0; i < len; i++) {
		if (!(i % 8))
			v = mix(&s);
		p[i] = v >> (8 * (i % 8));
	}
}

static void fail(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
static void fail(const char *fmt, ...)
{
	va_list ap;

	failures++;
	printf("FAIL: ");
	va_start(ap, fmt);
	vprintf(fmt, ap);
	va_end(ap);
	putchar('\n');
}

static void note(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
static void note(const char *fmt, ...)
{
	va_list ap;

	if (!verbose)
		return;
	va_start(ap, fmt);
	vprintf(fmt, ap);
	va_end(ap);
	putchar('\n');
}

/* ------------------------------------------------------------------ */
/* Devices */

struct dev {
	const char *name;
	int gid_index[2];		/* IPv4, IPv6 */
	union ibv_gid gid[2];
	struct ibv_context *ctx;
	struct ibv_pd *pd;
	enum ibv_mtu mtu;
	bool gone;
};

static struct dev dev_a, dev_b;
static bool removed;

static void dev_open(struct dev *d)
{
	struct ibv_port_attr port;
	int flags, i;

	d->ctx = tool_open_device(d->name);
	if (ibv_query_port(d->ctx, 1, &port))
		tool_die("%s: ibv_query_port failed", d->name);
	d->mtu = port.active_mtu;
	for (i = 0; i < 2; i++)
		if (ibv_query_gid(d->ctx, 1, d->gid_index[i], &d->gid[i]))
			tool_die("%s: ibv_query_gid %d failed", d->name,
				 d->gid_index[i]);
	d->pd = ibv_alloc_pd(d->ctx);
	if (!d->pd)
		tool_die("%s: ibv_alloc_pd: %s", d->name, strerror(errno));
	flags = fcntl(d->ctx->async_fd, F_GETFL);
	if (fcntl(d->ctx->async_fd, F_SETFL, flags | O_NONBLOCK))
		tool_die("fcntl: %s", strerror(errno));
}

static void set_av(struct ibv_ah_attr *ah, const struct dev *from,
		   const struct dev *to, int v6)
{
	memset(ah, 0, sizeof(*ah));
	ah->is_global = 1;
	ah->port_num = 1;
	ah->grh.dgid = to->gid[v6];
	ah->grh.sgid_index = from->gid_index[v6];
	ah->grh.hop_limit = 64;
}

/* ------------------------------------------------------------------ */
/* Pairs */

/* One operation in flight; id 0 is a free slot. */
struct op {
	uint64_t id;
	enum op_kind kind;
	uint32_t len;
	uint64_t old;			/* atomics: the target's value before */
	uint64_t arg;			/* CAS swap, FADD add, ATOMIC_WRITE data */
	bool hit;			/* CAS: compare equals old */
	bool mw;			/* through the window */
};

/* A message that takes a receive, as its receiver expects it. */
struct expect {
	uint64_t id;
	uint32_t len;
	enum op_kind kind;
};

#define FIFO_LEN 64

/*
 * Messages a receiver is to get, oldest first; and (UC, UD) the last ones
 * it skipped as lost, in case they come late: a veth hands packets that
 * two CPUs sent to two backlogs, so datagrams can overtake each other.
 */
struct fifo {
	struct expect e[FIFO_LEN];
	unsigned int head, tail;
	struct expect skipped[FIFO_LEN];
	unsigned int nskipped;
	uint64_t got[FIFO_LEN];		/* the last ones received */
	unsigned int ngot;
};

/**
 * struct pair - a requester QP on DEV and a responder QP on PEER_DEV
 * @a*: the requester's CQ, QP (and its ibv_qp_ex), MR, buffer, AH (UD)
 * @b*: the responder's CQ, QP, SRQ, target MR (WRITE, READ, atomics),
 *	receive MR, buffers, AH
 * @mw, @mw_rkey, @mw_bound: the responder's type 2 window over its
 *	targets (RC)
 * @aop, @bop: operations in flight from each side
 * @to_b, @to_a: messages each side is to receive, oldest first
 * @dead: an operation failed: the pair stops and is built anew
 * @disturbed: an event touched it (since @disturbed_at): errors are
 *	expected
 * @v6: each side's address vector uses IPv6 GIDs
 * @rd_atomic: the requester's max_rd_atomic, the responder's
 *	max_dest_rd_atomic
 * @sqd_pending: after an SQD dance, bit 0 (the requester) and bit 1 (the
 *	responder) until an operation of that side succeeds
 * @sqd_strict: the dance waited for both SQs to drain: the traffic must
 *	resume, an error fails the run
 * @drained: bit 0, bit 1: IBV_EVENT_SQ_DRAINED of that side's QP
 * @ok_since_build: an operation succeeded since the pair was built
 */
struct pair {
	unsigned int n;
	enum kind kind;
	enum ibv_qp_type type;
	struct ibv_cq *acq;
	struct ibv_qp *aqp;
	struct ibv_qp_ex *aqpx;
	struct ibv_mr *amr;
	uint8_t *abuf;
	struct ibv_ah *aah;
	struct ibv_cq *bcq;
	struct ibv_qp *bqp;
	struct ibv_srq *bsrq;
	struct ibv_mr *btmr, *brmr;
	uint8_t *btbuf, *brbuf;
	struct ibv_ah *bah;
	struct ibv_mw *mw;
	uint32_t mw_rkey;
	bool mw_bound;
	struct op aop[DEPTH];
	struct op bop[BDEPTH];
	struct fifo to_b, to_a;
	bool alive, dead, disturbed;
	uint64_t disturbed_at;
	int v6[2];
	uint8_t rd_atomic[2];
	int sqd_pending;
	bool sqd_strict;
	int drained;
	unsigned int dances;		/* SQD dances since it was built */
	bool ok_since_build;
	uint64_t grace_until;
	uint64_t sqd_deadline;
	uint32_t alkey, btrkey, brlkey;
};

static struct pair pairs[MAX_PAIRS];
static unsigned int npairs = 5;
static bool awrite_ok = true;		/* ATOMIC_WRITE can be posted */
static const char *awrite_why;
static uint64_t next_id = 1;
static struct ibv_device_attr attr_a, attr_b;

static struct {
	unsigned long ops, verified, bytes, errors, lost, reordered, unverified;
	unsigned long rebuilt;
	unsigned long sqd_resumed, sqd_failed, sqd_stalled, skipped_flush;
	unsigned long by_event[EV_NR], events;
	unsigned long by_op[OP_NR];
} st;

/* wr_id: what, which slot, which id */
#define W_AOP		(1ULL << 60)
#define W_BOP		(2ULL << 60)
#define W_ARECV		(3ULL << 60)
#define W_BRECV		(4ULL << 60)
#define W_BIND		(5ULL << 60)
#define W_INV		(6ULL << 60)
#define W_TYPE		(15ULL << 60)

static void fifo_push(struct fifo *f, uint64_t id, uint32_t len,
		      enum op_kind kind)
{
	if (f->tail - f->head == FIFO_LEN)
		tool_die("receive FIFO full");
	f->e[f->tail++ % FIFO_LEN] = (struct expect){ id, len, kind };
}

static bool removed_now(void);
static bool removal_explains(void);
static unsigned long removal_ms = 3000;

/*
 * A modify with an address vector makes the RDMA core resolve the peer's
 * MAC address; on a veth just created, or a busy VM, that can time out
 * (ETIMEDOUT). Try again, as applications do.
 */
static int modify_av(struct ibv_qp *qp, struct ibv_qp_attr *a, int mask)
{
	int err, tries = 0;

	while ((err = ibv_modify_qp(qp, a, mask)) == ETIMEDOUT &&
	       (mask & IBV_QP_AV) && ++tries < 10)
		sleep_us(200000);
	return err;
}

/* An AH resolves the peer's MAC too: the same. */
static struct ibv_ah *create_ah(struct ibv_pd *pd, struct ibv_ah_attr *a)
{
	struct ibv_ah *ah;
	int tries = 0;

	while (!(ah = ibv_create_ah(pd, a)) && errno == ETIMEDOUT && ++tries < 10)
		sleep_us(200000);
	return ah;
}

static void modify(struct ibv_qp *qp, struct ibv_qp_attr *a, int mask,
		   const char *to)
{
	int err = modify_av(qp, a, mask);

	if (err && !removal_explains())
		tool_die("QP %u to %s: %s", qp->qp_num, to, strerror(err));
}

/* RESET to RTS, facing @peer on @to, with address family @v6. */
static void connect_qp(struct ibv_qp *qp, const struct dev *from,
		       const struct dev *to, uint32_t peer, int v6,
		       uint32_t sq_psn, uint32_t rq_psn, uint8_t rd_atomic)
{
	enum ibv_qp_type t = qp->qp_type;
	struct ibv_qp_attr a = {
		.qp_state = IBV_QPS_INIT,
		.port_num = 1,
		.qkey = QKEY,
		.qp_access_flags = IBV_ACCESS_LOCAL_WRITE |
				   IBV_ACCESS_REMOTE_WRITE |
				   (t == IBV_QPT_RC ? IBV_ACCESS_REMOTE_READ |
				    IBV_ACCESS_REMOTE_ATOMIC : 0),
	};

	modify(qp, &a, IBV_QP_STATE | IBV_QP_PKEY_INDEX | IBV_QP_PORT |
	       (t == IBV_QPT_UD ? IBV_QP_QKEY : IBV_QP_ACCESS_FLAGS), "INIT");
	memset(&a, 0, sizeof(a));
	a.qp_state = IBV_QPS_RTR;
	if (t != IBV_QPT_UD) {
		set_av(&a.ah_attr, from, to, v6);
		a.path_mtu = from->mtu < to->mtu ? from->mtu : to->mtu;
		a.dest_qp_num = peer;
		a.rq_psn = rq_psn;
		a.max_dest_rd_atomic = rd_atomic;
		a.min_rnr_timer = 1;
	}
	modify(qp, &a, IBV_QP_STATE | (t == IBV_QPT_UD ? 0 : IBV_QP_AV |
	       IBV_QP_PATH_MTU | IBV_QP_DEST_QPN | IBV_QP_RQ_PSN) |
	       (t == IBV_QPT_RC ? IBV_QP_MAX_DEST_RD_ATOMIC |
		IBV_QP_MIN_RNR_TIMER : 0), "RTR");
	memset(&a, 0, sizeof(a));
	a.qp_state = IBV_QPS_RTS;
	a.sq_psn = sq_psn;
	a.timeout = 14;
	a.retry_cnt = 6;
	a.rnr_retry = 6;
	a.max_rd_atomic = rd_atomic;
	modify(qp, &a, IBV_QP_STATE | IBV_QP_SQ_PSN |
	       (t == IBV_QPT_RC ? IBV_QP_TIMEOUT | IBV_QP_RETRY_CNT |
		IBV_QP_RNR_RETRY | IBV_QP_MAX_QP_RD_ATOMIC : 0), "RTS");
}

static void post_recv_a(struct pair *p, unsigned int slot)
{
	struct ibv_sge sge = {
		.addr = (uintptr_t)p->abuf + A_RECV + slot * RSLOT,
		.length = RSLOT, .lkey = p->alkey,
	};
	struct ibv_recv_wr wr = { .wr_id = W_ARECV | slot, .sg_list = &sge,
				  .num_sge = 1 }, *bad;
	int err;

	if (!p->aqp)
		return;		/* destroyed by an event */
	err = ibv_post_recv(p->aqp, &wr, &bad);
	if (err && !removal_explains()) {
		note("pair %u: posting a receive on A: %s", p->n, strerror(err));
		p->dead = true;
	}
}

static void post_recv_b(struct pair *p, unsigned int slot)
{
	struct ibv_sge sge = {
		.addr = (uintptr_t)p->brbuf + B_RECV + slot * RSLOT,
		.length = RSLOT, .lkey = p->brlkey,
	};
	struct ibv_recv_wr wr = { .wr_id = W_BRECV | slot, .sg_list = &sge,
				  .num_sge = 1 }, *bad;
	int err;

	if (p->bsrq)
		err = ibv_post_srq_recv(p->bsrq, &wr, &bad);
	else if (!p->bqp)
		return;		/* destroyed by an event */
	else
		err = ibv_post_recv(p->bqp, &wr, &bad);
	if (err && !removal_explains()) {
		note("pair %u: posting a receive on B: %s", p->n, strerror(err));
		p->dead = true;
	}
}

/* Wait for the completion of @wr_id on @cq; its status, or -1. */
static int wait_one(struct ibv_cq *cq, uint64_t wr_id)
{
	uint64_t t0 = now_ms();
	struct ibv_wc wc;

	while (now_ms() - t0 < WAIT_MS) {
		int n = ibv_poll_cq(cq, 1, &wc);

		if (n < 0)
			return -1;
		if (n && wc.wr_id == wr_id)
			return wc.status;
		if (!n)
			sleep_us(200);
	}
	return -1;
}

/* The responder binds its window over its WRITE and READ targets. */
static bool bind_window(struct pair *p)
{
	struct ibv_send_wr wr = {
		.wr_id = W_BIND, .opcode = IBV_WR_BIND_MW,
		.send_flags = IBV_SEND_SIGNALED,
	}, *bad;
	int st;

	wr.bind_mw.mw = p->mw;
	wr.bind_mw.rkey = ibv_inc_rkey(p->mw->rkey);
	wr.bind_mw.bind_info.mr = p->btmr;
	wr.bind_mw.bind_info.addr = (uintptr_t)p->btbuf;
	wr.bind_mw.bind_info.length = B_ATGT;
	wr.bind_mw.bind_info.mw_access_flags = IBV_ACCESS_REMOTE_WRITE |
					       IBV_ACCESS_REMOTE_READ;
	if (ibv_post_send(p->bqp, &wr, &bad))
		return false;
	st = wait_one(p->bcq, W_BIND);
	if (st != IBV_WC_SUCCESS) {
		if (!removal_explains())
			fail("pair %u: binding the window: %s", p->n,
			     st < 0 ? "no completion" : ibv_wc_status_str(st));
		return false;
	}
	p->mw->rkey = wr.bind_mw.rkey;
	p->mw_rkey = wr.bind_mw.rkey;
	p->mw_bound = true;
	return true;
}

static struct ibv_qp *create_requester(struct pair *p)
{
	struct ibv_qp_init_attr_ex init = {
		.qp_type = p->type,
		.send_cq = p->acq, .recv_cq = p->acq,
		.cap = { .max_send_wr = DEPTH * 2, .max_recv_wr = RQ_DEPTH,
			 .max_send_sge = 1, .max_recv_sge = 1,
			 .max_inline_data = 64 },
		.comp_mask = IBV_QP_INIT_ATTR_PD,
		.pd = dev_a.pd,
	};
	struct ibv_qp *qp;

	if (p->type == IBV_QPT_RC && awrite_ok) {
		init.comp_mask |= IBV_QP_INIT_ATTR_SEND_OPS_FLAGS;
		init.send_ops_flags = IBV_QP_EX_WITH_SEND |
			IBV_QP_EX_WITH_SEND_WITH_IMM | IBV_QP_EX_WITH_RDMA_WRITE |
			IBV_QP_EX_WITH_RDMA_WRITE_WITH_IMM |
			IBV_QP_EX_WITH_RDMA_READ |
			IBV_QP_EX_WITH_ATOMIC_CMP_AND_SWP |
			IBV_QP_EX_WITH_ATOMIC_FETCH_AND_ADD |
			IBV_QP_EX_WITH_ATOMIC_WRITE;
		qp = ibv_create_qp_ex(dev_a.ctx, &init);
		if (qp) {
			p->aqpx = ibv_qp_to_qp_ex(qp);
			return qp;
		}
		if (removal_explains())
			return NULL;
		awrite_ok = false;
		awrite_why = errno == EOPNOTSUPP ? "EOPNOTSUPP" : "create failed";
		init.comp_mask &= ~IBV_QP_INIT_ATTR_SEND_OPS_FLAGS;
	}
	p->aqpx = NULL;
	return ibv_create_qp_ex(dev_a.ctx, &init);
}

/* Build pair @p anew; false if a device went away meanwhile. */
static bool pair_build(struct pair *p)
{
	struct ibv_qp_init_attr init = {
		.qp_type = p->type,
		.cap = { .max_send_wr = BDEPTH * 2 + 4,
			 .max_recv_wr = RQ_DEPTH, .max_send_sge = 1,
			 .max_recv_sge = 1 },
	};
	struct ibv_srq_init_attr sa = {
		.attr = { .max_wr = RQ_DEPTH, .max_sge = 1 },
	};
	struct ibv_ah_attr ah;
	int tacc = IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_REMOTE_WRITE |
		   IBV_ACCESS_REMOTE_READ | IBV_ACCESS_REMOTE_ATOMIC |
		   IBV_ACCESS_MW_BIND;
	const char *step = "CQs";
	unsigned int i;

	memset(p->aop, 0, sizeof(p->aop));
	memset(p->bop, 0, sizeof(p->bop));
	memset(&p->to_a, 0, sizeof(p->to_a));
	memset(&p->to_b, 0, sizeof(p->to_b));
	p->dead = p->disturbed = p->mw_bound = p->ok_since_build = false;
	p->sqd_pending = p->drained = 0;
	p->dances = 0;
	p->mw_rkey = 0;
	p->grace_until = 0;
	/* One family for both: a connected QP takes only its path's packets. */
	p->v6[0] = p->v6[1] = rnd(2);
	p->rd_atomic[0] = p->rd_atomic[1] = 4;

	p->acq = ibv_create_cq(dev_a.ctx, 2 * (DEPTH * 2 + RQ_DEPTH), NULL,
			       NULL, 0);
	p->bcq = ibv_create_cq(dev_b.ctx, 2 * (BDEPTH * 2 + RQ_DEPTH + 8),
			       NULL, NULL, 0);
	if (!p->acq || !p->bcq)
		goto failed;
	step = "MRs";
	p->amr = ibv_reg_mr(dev_a.pd, p->abuf, A_SIZE, IBV_ACCESS_LOCAL_WRITE);
	p->btmr = ibv_reg_mr(dev_b.pd, p->btbuf, B_TSIZE, tacc);
	p->brmr = ibv_reg_mr(dev_b.pd, p->brbuf, B_RSIZE, IBV_ACCESS_LOCAL_WRITE);
	if (!p->amr || !p->btmr || !p->brmr)
		goto failed;
	p->alkey = p->amr->lkey;
	p->btrkey = p->btmr->rkey;
	p->brlkey = p->brmr->lkey;
	step = "the SRQ";
	if (p->kind == K_RC_SRQ) {
		p->bsrq = ibv_create_srq(dev_b.pd, &sa);
		if (!p->bsrq)
			goto failed;
		init.srq = p->bsrq;
	}
	step = "QPs";
	p->aqp = create_requester(p);
	init.send_cq = init.recv_cq = p->bcq;
	p->bqp = ibv_create_qp(dev_b.pd, &init);
	if (!p->aqp || !p->bqp)
		goto failed;
	connect_qp(p->aqp, &dev_a, &dev_b, p->bqp->qp_num, p->v6[0],
		   0x100 * p->n, 0x100 * p->n + 7, 4);
	connect_qp(p->bqp, &dev_b, &dev_a, p->aqp->qp_num, p->v6[1],
		   0x100 * p->n + 7, 0x100 * p->n, 4);
	step = "AHs";
	if (p->type == IBV_QPT_UD) {
		set_av(&ah, &dev_a, &dev_b, p->v6[0]);
		p->aah = create_ah(dev_a.pd, &ah);
		set_av(&ah, &dev_b, &dev_a, p->v6[1]);
		p->bah = create_ah(dev_b.pd, &ah);
		if (!p->aah || !p->bah)
			goto failed;
	}
	step = "receives";
	for (i = 0; i < RQ_DEPTH; i++) {
		post_recv_a(p, i);
		post_recv_b(p, i);
	}
	/* READ sources: fixed bytes of this pair. */
	for (i = 0; i < DEPTH; i++)
		pattern(~(uint64_t)(p->n * DEPTH + i), p->btbuf + B_RSRC +
			i * SLOT, SLOT);
	step = "the window";
	if (p->type == IBV_QPT_RC) {
		p->mw = ibv_alloc_mw(dev_b.pd, IBV_MW_TYPE_2);
		if (!p->mw || !bind_window(p))
			goto failed;
	}
	if (p->dead)
		goto failed;
	p->alive = true;
	return true;

failed:
	if (removal_explains())
		return false;
	tool_die("pair %u (%s): building it failed at %s: %s", p->n,
		 kind_names[p->kind], step,
		 p->dead ? "an error made it unusable (above)" : strerror(errno));
}

/* Destroy what @p has; with @check, each destroy must work. */
static void pair_destroy(struct pair *p, bool check)
{
#define DESTROY(obj, fn, what)						\
	do {								\
		if (obj) {						\
			int e_ = fn(obj);				\
			if (e_ && check)				\
				fail("pair %u (%s): %s: %s", p->n,	\
				     kind_names[p->kind], what,		\
				     strerror(e_));			\
			obj = NULL;					\
		}							\
	} while (0)

	DESTROY(p->aqp, ibv_destroy_qp, "destroy the requester's QP");
	DESTROY(p->bqp, ibv_destroy_qp, "destroy the responder's QP");
	DESTROY(p->aah, ibv_destroy_ah, "destroy the requester's AH");
	DESTROY(p->bah, ibv_destroy_ah, "destroy the responder's AH");
	DESTROY(p->mw, ibv_dealloc_mw, "deallocate the window");
	DESTROY(p->bsrq, ibv_destroy_srq, "destroy the SRQ");
	DESTROY(p->acq, ibv_destroy_cq, "destroy the requester's CQ");
	DESTROY(p->bcq, ibv_destroy_cq, "destroy the responder's CQ");
	DESTROY(p->amr, ibv_dereg_mr, "deregister the requester's MR");
	DESTROY(p->btmr, ibv_dereg_mr, "deregister the target MR");
	DESTROY(p->brmr, ibv_dereg_mr, "deregister the receive MR");
#undef DESTROY
	p->aqpx = NULL;
	p->alive = false;
}

/* ------------------------------------------------------------------ */
/* Asynchronous events */

static void drain_events(void)
{
	struct dev *devs[] = { &dev_a, &dev_b };
	struct ibv_async_event ev;
	unsigned int i, k;

	for (i = 0; i < ARRAY_SIZE(devs); i++) {
		if (devs[i]->gone)
			continue;
		while (!ibv_get_async_event(devs[i]->ctx, &ev)) {
			switch (ev.event_type) {
			case IBV_EVENT_DEVICE_FATAL:
				devs[i]->gone = true;
				removed = true;
				note("event: %s: DEVICE_FATAL", devs[i]->name);
				break;
			case IBV_EVENT_SQ_DRAINED:
				for (k = 0; k < npairs; k++) {
					if (ev.element.qp == pairs[k].aqp)
						pairs[k].drained |= 1;
					if (ev.element.qp == pairs[k].bqp)
						pairs[k].drained |= 2;
				}
				break;
			case IBV_EVENT_CQ_ERR:
				fail("%s: a CQ overflowed", devs[i]->name);
				break;
			default:
				note("event: %s: %s", devs[i]->name,
				     tool_event_name(ev.event_type));
				break;
			}
			ibv_ack_async_event(&ev);
			if (devs[i]->gone)
				break;
		}
	}
}

static bool removed_now(void)
{
	drain_events();
	return removed;
}

/*
 * Is a device going away the reason of an unexpected error? Calls fail
 * with EIO as soon as the RDMA core disassociates the context, which may
 * be a moment before IBV_EVENT_DEVICE_FATAL is queued: wait up to 3 s for
 * it before blaming the error on anything else.
 */
static bool removal_explains(void)
{
	uint64_t t0 = now_ms();

	while (!removed_now() && now_ms() - t0 < removal_ms)
		sleep_us(10000);
	return removed;
}

/* ------------------------------------------------------------------ */
/* Posting */

/* The bytes an operation carries: its id first, then its pattern. */
static void fill(uint64_t id, uint8_t *p, uint32_t len)
{
	pattern(id, p, len);
	memcpy(p, &id, len < 8 ? len : 8);
}

/* Where @p differs from what fill() wrote for @id, or -1. */
static long diff(uint64_t id, const uint8_t *p, uint32_t len)
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
		o->old = mix(&rng);
		o->arg = mix(&rng);
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

static void post_all(struct pair *p)
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

/* ------------------------------------------------------------------ */
/* Completions */

/* An operation failed: expected on a pair an event touched. */
static void op_error(struct pair *p, const char *who, const char *what,
		     enum ibv_wc_status status)
{
	st.errors++;
	if (!p->disturbed && !p->dead && !p->sqd_pending &&
	    now_ms() > p->grace_until && !removal_explains())
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
		p->disturbed_at = now_ms();
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

static void verified(struct pair *p, uint32_t bytes, int side)
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

static void poll_a(struct pair *p)
{
	struct ibv_wc wc[16];
	int i, n;

	if (!p->acq)
		return;
	n = ibv_poll_cq(p->acq, 16, wc);
	for (i = 0; i < n; i++) {
		uint64_t t = wc[i].wr_id & W_TYPE, slot = wc[i].wr_id & 0xff;
		struct op *o;

		if (t == W_ARECV) {
			if (wc[i].status != IBV_WC_SUCCESS) {
				op_error(p, "the requester", "receive",
					 wc[i].status);
				continue;
			}
			check_recv(p, &p->to_a, &wc[i], p->abuf + A_RECV +
				   slot * RSLOT, "the requester", 2);
			if (!p->dead)
				post_recv_a(p, slot);
			continue;
		}
		o = &p->aop[slot % DEPTH];
		if (t != W_AOP || o->id != (wc[i].wr_id & ~W_TYPE) >> 8) {
			mismatch(p, "the requester's CQ gave wr_id %#" PRIx64
				 " (%s), which is not in flight", wc[i].wr_id,
				 ibv_wc_status_str(wc[i].status));
			continue;
		}
		if (wc[i].status == IBV_WC_SUCCESS)
			check_a(p, slot, o);
		else
			op_error(p, "the requester", op_names[o->kind],
				 wc[i].status);
		o->id = 0;
	}
}

static void poll_b(struct pair *p)
{
	struct ibv_wc wc[16];
	int i, n;

	if (!p->bcq)
		return;
	n = ibv_poll_cq(p->bcq, 16, wc);
	for (i = 0; i < n; i++) {
		uint64_t t = wc[i].wr_id & W_TYPE, slot = wc[i].wr_id & 0xff;
		struct op *o;

		if (t == W_BIND || t == W_INV)
			continue;	/* the window's: events look at them */
		if (t == W_BRECV) {
			if (wc[i].status != IBV_WC_SUCCESS) {
				op_error(p, "the responder", "receive",
					 wc[i].status);
				continue;
			}
			check_recv(p, &p->to_b, &wc[i], p->brbuf + B_RECV +
				   slot * RSLOT, "the responder", 1);
			if (!p->dead)
				post_recv_b(p, slot);
			continue;
		}
		o = &p->bop[slot % BDEPTH];
		if (t != W_BOP || o->id != (wc[i].wr_id & ~W_TYPE) >> 8) {
			mismatch(p, "the responder's CQ gave wr_id %#" PRIx64
				 " (%s), which is not in flight", wc[i].wr_id,
				 ibv_wc_status_str(wc[i].status));
			continue;
		}
		if (wc[i].status == IBV_WC_SUCCESS) {
			verified(p, 0, 2);
		} else {
			op_error(p, "the responder", op_names[o->kind],
				 wc[i].status);
		}
		o->id = 0;
	}
}

/* ------------------------------------------------------------------ */
/* Events */

static unsigned int event_mask = (1U << EV_NR) - 1;
static unsigned int gap_ms = 150;

/* With --verbose, once a second: what is in flight on each pair. */
static void progress(void)
{
	static uint64_t last;
	unsigned int i, k, na, nb;

	if (!verbose || now_ms() - last < 1000)
		return;
	last = now_ms();
	printf("progress: ops=%lu verified=%lu errors=%lu:", st.ops, st.verified,
	       st.errors);
	for (i = 0; i < npairs; i++) {
		for (k = na = 0; k < DEPTH; k++)
			na += !!pairs[i].aop[k].id;
		for (k = nb = 0; k < BDEPTH; k++)
			nb += !!pairs[i].bop[k].id;
		printf(" %u:%s%s%s a%u b%u rb%u ra%u", i,
		       pairs[i].alive ? "" : "-", pairs[i].dead ? "D" : "",
		       pairs[i].disturbed ? "d" : "", na, nb,
		       pairs[i].to_b.tail - pairs[i].to_b.head,
		       pairs[i].to_a.tail - pairs[i].to_a.head);
	}
	putchar('\n');
}

static void traffic_step(void)
{
	unsigned int i;

	progress();
	for (i = 0; i < npairs; i++) {
		struct pair *p = &pairs[i];

		if (!p->alive)
			continue;
		post_all(p);
		poll_a(p);
		poll_b(p);
	}
	drain_events();
}

static void disturb(struct pair *p)
{
	p->disturbed = true;
	p->disturbed_at = now_ms();
}

static void ev_qp_responder(struct pair *p)
{
	int err = ibv_destroy_qp(p->bqp);

	if (err)
		fail("pair %u (%s): destroying the responder's QP under "
		     "traffic: %s", p->n, kind_names[p->kind], strerror(err));
	p->bqp = NULL;
	disturb(p);
}

static void ev_qp_requester(struct pair *p)
{
	int err = ibv_destroy_qp(p->aqp);

	if (err)
		fail("pair %u (%s): destroying the requester's QP under "
		     "traffic: %s", p->n, kind_names[p->kind], strerror(err));
	p->aqp = NULL;
	p->aqpx = NULL;
	disturb(p);
}

static void ev_mr(struct pair *p)
{
	int err;

	disturb(p);
	if (rnd(2) || !p->amr) {
		err = ibv_dereg_mr(p->btmr);
		if (err == EBUSY && p->mw_bound) {
			err = ibv_dealloc_mw(p->mw);
			if (err)
				fail("pair %u: deallocating a bound window: %s",
				     p->n, strerror(err));
			p->mw = NULL;
			p->mw_bound = false;
			err = ibv_dereg_mr(p->btmr);
		}
		if (err)
			fail("pair %u (%s): deregistering the target MR under "
			     "traffic: %s", p->n, kind_names[p->kind],
			     strerror(err));
		p->btmr = NULL;
		return;
	}
	err = ibv_dereg_mr(p->amr);
	if (err)
		fail("pair %u (%s): deregistering the requester's MR under "
		     "traffic: %s", p->n, kind_names[p->kind], strerror(err));
	p->amr = NULL;
}

static void ev_mw(struct pair *p)
{
	struct ibv_send_wr wr = {
		.wr_id = W_INV, .opcode = IBV_WR_LOCAL_INV,
		.send_flags = IBV_SEND_SIGNALED,
		.invalidate_rkey = p->mw_rkey,
	}, *bad;
	int err;

	disturb(p);
	p->mw_bound = false;
	if (rnd(2)) {
		err = ibv_post_send(p->bqp, &wr, &bad);
		/* EIO once the device is going away (link-del cycles). */
		if (err && !removal_explains())
			fail("pair %u: posting LOCAL_INV of the window: %s", p->n,
			     strerror(err));
		return;
	}
	err = ibv_dealloc_mw(p->mw);
	if (err && !removal_explains())
		fail("pair %u: deallocating the window under traffic: %s", p->n,
		     strerror(err));
	p->mw = NULL;
}

static void ev_cq(struct pair *p)
{
	int err = ibv_destroy_cq(p->acq);

	disturb(p);
	/*
	 * Once the device is gone (rmmod, link deletion), libibverbs takes
	 * the kernel's EIO for "destroyed" and returns 0: the CQ is gone
	 * with its device, not destroyed under its QP.
	 */
	if (err != EBUSY) {
		if (err || !removal_explains())
			fail("pair %u (%s): destroying a CQ its QP uses: %s, expected "
			     "EBUSY", p->n, kind_names[p->kind], tool_errname(err));
		if (!err) {
			p->acq = NULL;
			return;
		}
	}
	err = ibv_destroy_qp(p->aqp);
	if (err)
		fail("pair %u: destroying the requester's QP: %s", p->n,
		     strerror(err));
	p->aqp = NULL;
	p->aqpx = NULL;
	err = ibv_destroy_cq(p->acq);
	if (err)
		fail("pair %u: destroying its CQ then: %s", p->n, strerror(err));
	p->acq = NULL;
}

static int qp_state(struct ibv_qp *qp)
{
	struct ibv_qp_init_attr init;
	struct ibv_qp_attr a;

	if (ibv_query_qp(qp, &a, IBV_QP_STATE, &init))
		return -1;
	return a.qp_state;
}

/* A modify of the SQD dance: it works, or the QP failed meanwhile. */
static bool sqd_modify(struct pair *p, struct ibv_qp *qp, struct ibv_qp_attr *a,
		       int mask, const char *what)
{
	int err = modify_av(qp, a, mask);

	if (!err)
		return true;
	if (qp_state(qp) == IBV_QPS_ERR || removal_explains()) {
		st.sqd_failed++;
		p->sqd_pending = 0;
		disturb(p);
		note("pair %u: %s: %s, the QP is in ERR", p->n, what,
		     strerror(err));
		return false;
	}
	fail("pair %u (%s): %s: %s", p->n, kind_names[p->kind], what,
	     strerror(err));
	disturb(p);
	return false;
}

static uint8_t limit(uint8_t v, uint8_t max)
{
	return v > max ? max : v ? v : 1;
}

/*
 * RTS -> SQD -> SQD -> RTS on both QPs of an RC pair, under traffic. The
 * SQD -> SQD modify gives each a new address vector, its GIDs of the
 * other address family (a connected QP takes packets only from its
 * path's address, so both must move), and new timeout, retry_cnt,
 * rnr_retry, max_rd_atomic and max_dest_rd_atomic (the requester's
 * max_rd_atomic no larger than the responder's max_dest_rd_atomic). The
 * two QPs go through each step in a random order, with traffic in
 * between, and half the time SQD waits for IBV_EVENT_SQ_DRAINED. (UC
 * cannot: uverbs adds IB_QP_PORT to a modify with IB_QP_AV, which IBA
 * allows in SQD -> SQD for RC only.)
 */
static void ev_sqd(struct pair *p)
{
	struct ibv_qp *qp[2] = { p->aqp, p->bqp };
	const struct dev *devs[2] = { &dev_a, &dev_b };
	uint8_t init_max = limit(attr_a.max_qp_init_rd_atom < attr_b.max_qp_init_rd_atom ?
				 attr_a.max_qp_init_rd_atom :
				 attr_b.max_qp_init_rd_atom, 16);
	uint8_t dest_max = limit(attr_a.max_qp_rd_atom < attr_b.max_qp_rd_atom ?
				 attr_a.max_qp_rd_atom : attr_b.max_qp_rd_atom, 16);
	struct ibv_qp_attr a[2];
	uint8_t req, dest;
	int first = rnd(2), k, s, mask, v6 = !p->v6[0];
	uint64_t t0;

	/* Errors from here on are the dance's. */
	p->sqd_pending = 3;
	p->sqd_strict = false;
	p->drained = 0;
	for (k = 0; k < 2; k++) {
		struct ibv_qp_attr sqd = { .qp_state = IBV_QPS_SQD,
					   .en_sqd_async_notify = 1 };

		s = k ^ first;
		if (!sqd_modify(p, qp[s], &sqd, IBV_QP_STATE |
				IBV_QP_EN_SQD_ASYNC_NOTIFY, "RTS to SQD"))
			return;
		traffic_step();
	}
	if (rnd(2)) {
		t0 = now_ms();
		while (p->drained != 3 && now_ms() - t0 < WAIT_MS && !p->dead &&
		       !removed)
			traffic_step();
		if (p->drained != 3 && !p->dead && !removed)
			fail("pair %u (%s): no IBV_EVENT_SQ_DRAINED for %s %u ms "
			     "after SQD", p->n, kind_names[p->kind],
			     p->drained & 1 ? "the responder" : "the requester",
			     WAIT_MS);
		p->sqd_strict = p->drained == 3;
	}
	req = 1 + rnd(init_max);
	dest = req + rnd(dest_max - req + 1);
	for (s = 0; s < 2; s++) {
		memset(&a[s], 0, sizeof(a[s]));
		a[s].qp_state = IBV_QPS_SQD;
		set_av(&a[s].ah_attr, devs[s], devs[!s], v6);
		a[s].timeout = 12 + rnd(3);
		a[s].retry_cnt = 4 + rnd(4);
		a[s].rnr_retry = 4 + rnd(3);
		a[s].max_rd_atomic = s ? 1 + rnd(init_max) : req;
		a[s].max_dest_rd_atomic = s ? dest : 1 + rnd(dest_max);
	}
	mask = IBV_QP_STATE | IBV_QP_AV | IBV_QP_TIMEOUT | IBV_QP_RETRY_CNT |
	       IBV_QP_RNR_RETRY | IBV_QP_MAX_QP_RD_ATOMIC |
	       IBV_QP_MAX_DEST_RD_ATOMIC;
	for (k = 0; k < 2; k++) {
		s = k ^ first;
		if (!sqd_modify(p, qp[s], &a[s], mask, "SQD to SQD with a new path"))
			return;
		p->v6[s] = v6;
		traffic_step();
	}
	p->rd_atomic[0] = req;
	p->rd_atomic[1] = dest;
	p->dances++;
	note("pair %u (%s): both sides to IPv%d, max_rd_atomic %u, "
	     "max_dest_rd_atomic %u", p->n, kind_names[p->kind], v6 ? 6 : 4,
	     req, dest);
	for (k = 0; k < 2; k++) {
		struct ibv_qp_attr rts = { .qp_state = IBV_QPS_RTS };

		s = k ^ first;
		if (!sqd_modify(p, qp[s], &rts, IBV_QP_STATE, "SQD to RTS"))
			return;
		traffic_step();
	}
	p->disturbed_at = now_ms();	/* for the message: when it began */
	/*
	 * Resumed, or failed cleanly, by when: the transport timer's
	 * doublings through every retry (4.096 us << timeout each, at
	 * least 1 ms), and 10 s to spare.
	 */
	p->sqd_deadline = now_ms() + 10000;
	for (s = 0; s < 2; s++) {
		uint64_t ms = ((4096ULL << a[s].timeout) / 1000000 + 1) *
			      ((2ULL << a[s].retry_cnt) - 1);

		if (p->sqd_deadline < now_ms() + 10000 + ms)
			p->sqd_deadline = now_ms() + 10000 + ms;
	}
}

/* Both QPs to ERR, every work request flushed, RESET, connected again. */
static void ev_reset(struct pair *p)
{
	struct ibv_qp_attr a = { .qp_state = IBV_QPS_ERR };
	uint32_t psn_ab = rnd(1 << 24), psn_ba = rnd(1 << 24);
	unsigned int i, left;
	uint64_t t0;

	p->grace_until = ~0ULL;
	if (ibv_modify_qp(p->aqp, &a, IBV_QP_STATE) ||
	    ibv_modify_qp(p->bqp, &a, IBV_QP_STATE)) {
		if (!removal_explains())
			fail("pair %u: modify to ERR failed", p->n);
		disturb(p);
		return;
	}
	t0 = now_ms();
	do {
		poll_a(p);
		poll_b(p);
		for (i = left = 0; i < DEPTH; i++)
			left += !!p->aop[i].id;
		for (i = 0; i < BDEPTH; i++)
			left += !!p->bop[i].id;
	} while (left && now_ms() - t0 < WAIT_MS && !removed_now());
	if (left) {
		if (!removed)
			fail("pair %u (%s): %u work requests not flushed %u ms "
			     "after ERR", p->n, kind_names[p->kind], left, WAIT_MS);
		disturb(p);
		return;
	}
	/* Late completions of the flushed receives are in the CQs or not. */
	poll_a(p);
	poll_b(p);
	a.qp_state = IBV_QPS_RESET;
	if (ibv_modify_qp(p->aqp, &a, IBV_QP_STATE) ||
	    ibv_modify_qp(p->bqp, &a, IBV_QP_STATE)) {
		if (!removal_explains())
			fail("pair %u: modify to RESET failed", p->n);
		disturb(p);
		return;
	}
	connect_qp(p->aqp, &dev_a, &dev_b, p->bqp->qp_num, p->v6[0], psn_ab,
		   psn_ba, p->rd_atomic[0]);
	connect_qp(p->bqp, &dev_b, &dev_a, p->aqp->qp_num, p->v6[1], psn_ba,
		   psn_ab, p->rd_atomic[1]);
	memset(&p->to_a, 0, sizeof(p->to_a));
	memset(&p->to_b, 0, sizeof(p->to_b));
	p->dead = false;
	for (i = 0; i < RQ_DEPTH; i++) {
		post_recv_a(p, i);
		if (!p->bsrq)
			post_recv_b(p, i);
	}
	p->grace_until = now_ms() + 500;
}

static bool event_fits(struct pair *p, enum event e)
{
	/* Not while a pair is to show that its traffic resumes after SQD. */
	if (!p->alive || p->dead || p->disturbed || !p->aqp || !p->bqp ||
	    p->sqd_pending)
		return false;
	switch (e) {
	case EV_MW:
		return p->mw_bound;
	case EV_SQD:
		return p->type == IBV_QPT_RC;
	case EV_RESET:
		/* An SRQ's receives are not flushed by its QP's reset. */
		return !p->bsrq;
	default:
		return true;
	}
}

static void do_event(void)
{
	static void (*const fn[])(struct pair *) = {
		ev_qp_responder, ev_qp_requester, ev_mr, ev_mw, ev_cq, ev_sqd,
		ev_reset,
	};
	unsigned int tries;

	for (tries = 0; tries < 64; tries++) {
		enum event e = rnd(EV_NR);
		struct pair *p = &pairs[rnd(npairs)];

		if (!(event_mask & (1U << e)) || !event_fits(p, e))
			continue;
		note("event %lu: %s on pair %u (%s)", st.events + 1, ev_names[e],
		     p->n, kind_names[p->kind]);
		fn[e](p);
		st.events++;
		st.by_event[e]++;
		return;
	}
}

/* ------------------------------------------------------------------ */

static unsigned long events = 0, min_ms = 1000;
static bool forever;

static bool all_recovered(void)
{
	unsigned int i;

	for (i = 0; i < npairs; i++)
		if (!pairs[i].alive || !pairs[i].ok_since_build ||
		    pairs[i].disturbed || pairs[i].dead ||
		    pairs[i].sqd_pending)
			return false;
	return true;
}

/* Let the operations in flight complete (or not), for a clean end. */
static void quiesce(void)
{
	uint64_t t0 = now_ms();
	unsigned int i, k, left;

	do {
		left = 0;
		for (i = 0; i < npairs; i++) {
			struct pair *p = &pairs[i];

			if (!p->alive)
				continue;
			poll_a(p);
			poll_b(p);
			for (k = 0; k < DEPTH; k++)
				left += !!p->aop[k].id;
			for (k = 0; k < BDEPTH; k++)
				left += !!p->bop[k].id;
		}
		drain_events();
	} while (left && !removed && now_ms() - t0 < 2 * WAIT_MS);
	/* After a failure, this may be its consequence: say it once. */
	if (left && !removed && !failures)
		fail("%u operations still in flight %u ms after the traffic "
		     "stopped", left, 2 * WAIT_MS);
}

static void summary(uint64_t t0)
{
	printf("sroce-stress: events=%lu qp=%lu mr=%lu mw=%lu cq=%lu sqd=%lu "
	       "reset=%lu ops=%lu verified=%lu bytes=%lu errors=%lu lost=%lu "
	       "reordered=%lu unverified=%lu rebuilt=%lu sqd_resumed=%lu sqd_failed=%lu "
	       "sqd_stalled=%lu "
	       "skipped_flush=%lu%s%s mismatches=%u failures=%u "
	       "device_removed=%d time=%.1fs\n", st.events,
	       st.by_event[EV_QP_RESPONDER] + st.by_event[EV_QP_REQUESTER],
	       st.by_event[EV_MR], st.by_event[EV_MW], st.by_event[EV_CQ],
	       st.by_event[EV_SQD], st.by_event[EV_RESET], st.ops, st.verified,
	       st.bytes, st.errors, st.lost, st.reordered, st.unverified,
	       st.rebuilt,
	       st.sqd_resumed, st.sqd_failed, st.sqd_stalled, st.skipped_flush,
	       awrite_ok ? "" : " atomic_write=unsupported:",
	       awrite_ok ? "" : awrite_why, mismatches, failures, removed,
	       (now_ms() - t0) / 1000.0);
}

static int run(void)
{
	uint64_t t0 = now_ms(), next_event = 0, last_event = now_ms(), t_ready = 0;
	bool ready = false, built = false;
	unsigned int i;

	for (;;) {
		for (i = 0; i < npairs && !removed; i++) {
			struct pair *p = &pairs[i];

			if (p->alive && p->sqd_pending &&
			    now_ms() > p->sqd_deadline) {
				fail("pair %u (%s): after RTS -> SQD -> SQD (IPv%d) "
				     "-> RTS, nothing the %s posted completed in %"
				     PRIu64 " ms, successfully or not: the traffic "
				     "stalled", p->n, kind_names[p->kind],
				     p->v6[0] ? 6 : 4, p->sqd_pending & 1 ?
				     "requester" : "responder",
				     p->sqd_deadline - p->disturbed_at);
				st.sqd_stalled++;
				p->sqd_pending = 0;
				disturb(p);
			}
			if (p->alive && (p->dead || (p->disturbed &&
			    now_ms() - p->disturbed_at > 2000)))
				pair_destroy(p, true);
			if (!p->alive) {
				st.rebuilt += built;
				pair_build(p);
			}
		}
		built = true;
		if (removed_now())
			break;
		traffic_step();
		if (!ready && all_recovered()) {
			printf("ready\n");
			ready = true;
			t_ready = now_ms();
			next_event = now_ms() + gap_ms;
		}
		if (ready && (forever || st.events < events) &&
		    now_ms() >= next_event) {
			do_event();
			next_event = now_ms() + gap_ms;
			last_event = now_ms();
		}
		if (forever)
			continue;
		if (ready && st.events >= events && all_recovered() &&
		    now_ms() - last_event > 500 && now_ms() - t_ready > min_ms)
			break;
		if (now_ms() - last_event > 30000) {
			for (i = 0; i < npairs; i++)
				if (!pairs[i].ok_since_build)
					fail("pair %u (%s): no operation succeeded "
					     "in 30 s since it was built", i,
					     kind_names[pairs[i].kind]);
			if (!failures)
				fail("the pairs did not settle in 30 s");
			break;
		}
	}
	if (!removed)
		quiesce();
	for (i = 0; i < npairs; i++)
		pair_destroy(&pairs[i], !removed);
	if (!removed) {
		if (ibv_dealloc_pd(dev_a.pd) || ibv_dealloc_pd(dev_b.pd))
			fail("deallocating the PDs failed");
	} else {
		ibv_dealloc_pd(dev_a.pd);
		ibv_dealloc_pd(dev_b.pd);
	}
	ibv_close_device(dev_a.ctx);
	ibv_close_device(dev_b.ctx);
	summary(t0);
	if (removed)
		return 3;
	return failures ? 1 : 0;
}

static void usage(int status)
{
	fprintf(status ? stderr : stdout,
		"usage: sroce-stress -d DEV -g GID -6 GID6 -D PEER_DEV -G PEER_GID -7 PEER_GID6\n"
		"                    [--events N | --forever] [--pairs N] [--only EVENT,...]\n"
		"                    [--seed S] [--gap-ms MS] [--min-ms MS] [--verbose]\n"
		"                    [--removal-ms MS] [--inject data]\n"
		"Events: qp-responder qp-requester mr mw cq sqd reset\n"
		"See the comment at the top of sroce-stress.c.\n");
	exit(status);
}

static void parse_only(char *list)
{
	char *tok, *save = NULL;
	unsigned int e;

	event_mask = 0;
	for (tok = strtok_r(list, ",", &save); tok;
	     tok = strtok_r(NULL, ",", &save)) {
		for (e = 0; e < EV_NR; e++)
			if (!strcmp(tok, ev_names[e]))
				break;
		if (e == EV_NR)
			tool_die("no event %s", tok);
		event_mask |= 1U << e;
	}
}

int main(int argc, char **argv)
{
	static const struct option opts[] = {
		{ "dev", required_argument, NULL, 'd' },
		{ "gid", required_argument, NULL, 'g' },
		{ "gid6", required_argument, NULL, '6' },
		{ "peer-dev", required_argument, NULL, 'D' },
		{ "peer-gid", required_argument, NULL, 'G' },
		{ "peer-gid6", required_argument, NULL, '7' },
		{ "events", required_argument, NULL, 'e' },
		{ "forever", no_argument, NULL, 'F' },
		{ "pairs", required_argument, NULL, 'p' },
		{ "only", required_argument, NULL, 'o' },
		{ "seed", required_argument, NULL, 's' },
		{ "gap-ms", required_argument, NULL, 'm' },
		{ "min-ms", required_argument, NULL, 'M' },
		{ "removal-ms", required_argument, NULL, 'R' },
		{ "verbose", no_argument, NULL, 'v' },
		{ "inject", required_argument, NULL, 'I' },
		{ "help", no_argument, NULL, 'h' },
		{}
	};
	static const enum kind kinds[] = { K_RC, K_RC_SRQ, K_UC, K_UD };
	uint64_t seed = now_ms() ^ ((uint64_t)getpid() << 32);
	unsigned int i;
	int c;

	dev_a.gid_index[0] = dev_a.gid_index[1] = -1;
	dev_b.gid_index[0] = dev_b.gid_index[1] = -1;
	while ((c = getopt_long(argc, argv, "d:g:6:D:G:7:vh", opts, NULL)) != -1) {
		switch (c) {
		case 'd': dev_a.name = optarg; break;
		case 'g': dev_a.gid_index[0] = tool_number(optarg, 1023); break;
		case '6': dev_a.gid_index[1] = tool_number(optarg, 1023); break;
		case 'D': dev_b.name = optarg; break;
		case 'G': dev_b.gid_index[0] = tool_number(optarg, 1023); break;
		case '7': dev_b.gid_index[1] = tool_number(optarg, 1023); break;
		case 'e': events = tool_number(optarg, 100000000); break;
		case 'F': forever = true; break;
		case 'p': npairs = tool_number(optarg, MAX_PAIRS); break;
		case 'o': parse_only(optarg); break;
		case 's': seed = strtoull(optarg, NULL, 0); break;
		case 'm': gap_ms = tool_number(optarg, 600000); break;
		case 'M': min_ms = tool_number(optarg, 86400000); break;
		case 'R': removal_ms = tool_number(optarg, 600000); break;
		case 'v': verbose = true; break;
		case 'I':
			if (strcmp(optarg, "data"))
				tool_die("no fault %s", optarg);
			inject_data = true;
			break;
		case 'h': usage(0); break;
		default: usage(2);
		}
	}
	if (optind != argc || !dev_a.name || !dev_b.name || !npairs ||
	    dev_a.gid_index[0] < 0 || dev_a.gid_index[1] < 0 ||
	    dev_b.gid_index[0] < 0 || dev_b.gid_index[1] < 0)
		usage(2);
	setvbuf(stdout, NULL, _IOLBF, 0);
	rng = seed;
	printf("sroce-stress: seed=%" PRIu64 " pairs=%u events=%s%lu\n", seed,
	       npairs, forever ? "forever, gap " : "", forever ? gap_ms : events);
	dev_open(&dev_a);
	dev_open(&dev_b);
	if (ibv_query_device(dev_a.ctx, &attr_a) ||
	    ibv_query_device(dev_b.ctx, &attr_b))
		tool_die("ibv_query_device failed");
	for (i = 0; i < npairs; i++) {
		struct pair *p = &pairs[i];

		p->n = i;
		p->kind = kinds[i % ARRAY_SIZE(kinds)];
		p->type = p->kind == K_UC ? IBV_QPT_UC :
			  p->kind == K_UD ? IBV_QPT_UD : IBV_QPT_RC;
		p->abuf = aligned_alloc(4096, (A_SIZE + 4095) / 4096 * 4096);
		p->btbuf = aligned_alloc(4096, (B_TSIZE + 4095) / 4096 * 4096);
		p->brbuf = aligned_alloc(4096, (B_RSIZE + 4095) / 4096 * 4096);
		if (!p->abuf || !p->btbuf || !p->brbuf)
			tool_die("out of memory");
	}
	return run();
}
