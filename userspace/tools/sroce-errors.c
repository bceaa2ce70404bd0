// SPDX-License-Identifier: GPL-2.0 OR Linux-OpenIB
/*
 * sroce-errors: RC error completions, on both ends of a connection.
 *
 * One process opens two devices (sroce_a and sroce_b of tests/lib.sh, or
 * any two RoCE devices that can reach each other), and for each case
 * connects a fresh RC QP pair: the requester on the first device, the
 * responder on the second. It provokes one error and checks what each
 * side sees: the completion statuses (IBA 10.8.3 and table 47), the QP
 * states afterwards, that every later work request is flushed, and, for
 * the RNR cases, the devices' rnr_naks_sent/rnr_naks_rcvd counters. One
 * line per check; exit status 0 only if all held, 1 if one did not, 2 on
 * a usage or setup error.
 *
 * The cases (-c CASE, repeatable; default: all but peer-gone):
 *
 *   ok              WRITE, READ and SEND succeed and move the right bytes
 *                   (the pair works, so the errors below are the cases')
 *   bad-rkey        WRITE with an rkey the responder never issued
 *   read-bounds     READ that runs 32 bytes past the end of the MR
 *   no-remote-write WRITE to an MR registered without REMOTE_WRITE
 *   send-too-long   SEND of 256 bytes into a 64-byte receive
 *   rnr-late        SEND before any receive is posted; the receive comes
 *                   --late ms later; rnr_retry 7 (no limit): it succeeds
 *   rnr-exhausted   the same with rnr_retry 0: IBV_WC_RNR_RETRY_EXC_ERR
 *   rnr-refill      rnr_retry 1 and the longest RNR timer: four SENDs in
 *                   a row each meet one RNR NAK and then their receive,
 *                   and succeed (progress refills the budget); a SEND
 *                   that never finds one ends in RNR_RETRY_EXC_ERR; the
 *                   QPs reset and reconnected start with a full budget
 *   peer-gone       a stream of WRITEs; once it runs the tool prints
 *                   "transferring", and someone deletes the responder's
 *                   device: the requester must end with
 *                   IBV_WC_RETRY_EXC_ERR, then flushes, in bounded time
 *   destroy-race    --iterations times: a WRITE with a bad rkey, and the
 *                   responder's QP destroyed 0 to --race-ms ms later,
 *                   while its receive engine may be in its error path
 *                   (which wakes the send engine). Run it with
 *                   /sys/kernel/debug/sroce/engines_inline N and
 *                   error_delay_us set (drivers/sroce/fault.c) to widen
 *                   the window. Every destroy must succeed; the kernel
 *                   judges the rest (a use after free, a crash)
 *
 * Asynchronous events are printed ("info:" lines), not judged.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <inttypes.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "tool.h"

#define BUF_SIZE	65536
#define SQ_DEPTH	16
#define RQ_DEPTH	16
#define CQ_DEPTH	64
#define PEER_GONE_DEPTH	8
#define PEER_GONE_SIZE	16384

/* The two ends: 'a' requests, 'b' responds. */
struct dev {
	const char *name;
	struct ibv_context *ctx;
	struct ibv_pd *pd;
	int gid_index;
	union ibv_gid gid;
	enum ibv_mtu mtu;
	bool gone;			/* deleted under us (peer-gone) */
};

struct end {
	struct dev *dev;
	struct ibv_cq *cq;
	struct ibv_qp *qp;
	struct ibv_mr *mr;
	char *buf;
};

/* QP attributes a case may change. */
struct qp_params {
	uint8_t timeout;
	uint8_t retry_cnt;
	uint8_t rnr_retry;
	uint8_t min_rnr_timer;
	int access;			/* the responder MR's access flags */
};

static struct dev dev_a, dev_b;
static unsigned int checks, failures;
static const char *cur_case;
static unsigned int late_ms = 200;
static unsigned int deadline_s = 60;
static unsigned int race_iterations = 50;
static unsigned int race_ms = 10;

static double now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec + ts.tv_nsec / 1e9;
}

static void msleep(unsigned int ms)
{
	struct timespec ts = { ms / 1000, (ms % 1000) * 1000000L };

	nanosleep(&ts, NULL);
}

/* Record one check: @what, @want and @got as text. */
static bool check(const char *what, const char *want, const char *got)
{
	bool ok = !strcmp(want, got);

	checks++;
	if (!ok)
		failures++;
	printf("%-16s %-44s expected %-26s got %-26s %s\n", cur_case, what,
	       want, got, ok ? "ok" : "FAIL");
	fflush(stdout);
	return ok;
}

static bool check_true(const char *what, bool cond, const char *detail)
{
	return check(what, "yes", cond ? "yes" : detail);
}

static void info(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
static void info(const char *fmt, ...)
{
	va_list ap;

	printf("%-16s info: ", cur_case);
	va_start(ap, fmt);
	vprintf(fmt, ap);
	va_end(ap);
	putchar('\n');
	fflush(stdout);
}

static const char *state_name(enum ibv_qp_state s)
{
	static const char *const names[] = {
		[IBV_QPS_RESET] = "RESET", [IBV_QPS_INIT] = "INIT",
		[IBV_QPS_RTR] = "RTR", [IBV_QPS_RTS] = "RTS",
		[IBV_QPS_SQD] = "SQD", [IBV_QPS_SQE] = "SQE",
		[IBV_QPS_ERR] = "ERR",
	};

	if ((unsigned int)s < ARRAY_SIZE(names) && names[s])
		return names[s];
	return "UNKNOWN";
}

/* Setup */

static void dev_open(struct dev *d)
{
	struct ibv_port_attr port;
	int flags;

	d->ctx = tool_open_device(d->name);
	d->pd = ibv_alloc_pd(d->ctx);
	if (!d->pd)
		tool_die("%s: ibv_alloc_pd: %s", d->name, strerror(errno));
	if (ibv_query_port(d->ctx, 1, &port))
		tool_die("%s: ibv_query_port failed", d->name);
	d->mtu = port.active_mtu;
	if (ibv_query_gid(d->ctx, 1, d->gid_index, &d->gid))
		tool_die("%s: ibv_query_gid %d failed", d->name, d->gid_index);
	flags = fcntl(d->ctx->async_fd, F_GETFL);
	if (fcntl(d->ctx->async_fd, F_SETFL, flags | O_NONBLOCK))
		tool_die("%s: fcntl: %s", d->name, strerror(errno));
}

/* Print (not judge) the asynchronous events @d has for us. */
static void dev_events(struct dev *d)
{
	struct ibv_async_event ev;

	while (!ibv_get_async_event(d->ctx, &ev)) {
		info("%s: async event %s", d->name,
		     tool_event_name(ev.event_type));
		ibv_ack_async_event(&ev);
	}
}

/*
 * The affiliated asynchronous error @type must come for @e's QP within
 * @ms (IBA 11.6.3.1); other events are printed on the way.
 */
static void expect_event(struct end *e, const char *what,
			 enum ibv_event_type type, unsigned int ms)
{
	double end = now() + ms / 1000.0;
	struct ibv_async_event ev;
	bool seen = false;

	while (!seen && now() < end) {
		if (ibv_get_async_event(e->dev->ctx, &ev)) {
			msleep(10);
			continue;
		}
		if (ev.event_type == type && ev.element.qp == e->qp)
			seen = true;
		else
			info("%s: async event %s", e->dev->name,
			     tool_event_name(ev.event_type));
		ibv_ack_async_event(&ev);
	}
	check(what, tool_event_name(type), seen ? tool_event_name(type) : "none");
}

static unsigned long counter(const struct dev *d, const char *name)
{
	char path[256];
	unsigned long v = 0;
	FILE *f;

	snprintf(path, sizeof(path),
		 "/sys/class/infiniband/%s/ports/1/hw_counters/%s", d->name, name);
	f = fopen(path, "r");
	if (!f)
		tool_die("%s: %s", path, strerror(errno));
	if (fscanf(f, "%lu", &v) != 1)
		tool_die("%s: not a number", path);
	fclose(f);
	return v;
}

static void end_create(struct end *e, struct dev *d, int access)
{
	struct ibv_qp_init_attr init = {
		.qp_type = IBV_QPT_RC,
		.sq_sig_all = 0,
		.cap = {
			.max_send_wr = SQ_DEPTH,
			.max_recv_wr = RQ_DEPTH,
			.max_send_sge = 1,
			.max_recv_sge = 1,
		},
	};

	memset(e, 0, sizeof(*e));
	e->dev = d;
	e->buf = aligned_alloc(4096, BUF_SIZE);
	if (!e->buf)
		tool_die("out of memory");
	memset(e->buf, 0, BUF_SIZE);
	e->mr = ibv_reg_mr(d->pd, e->buf, BUF_SIZE, access);
	if (!e->mr)
		tool_die("%s: ibv_reg_mr: %s", d->name, strerror(errno));
	e->cq = ibv_create_cq(d->ctx, CQ_DEPTH, NULL, NULL, 0);
	if (!e->cq)
		tool_die("%s: ibv_create_cq: %s", d->name, strerror(errno));
	init.send_cq = e->cq;
	init.recv_cq = e->cq;
	e->qp = ibv_create_qp(d->pd, &init);
	if (!e->qp)
		tool_die("%s: ibv_create_qp: %s", d->name, strerror(errno));
}

/* Best effort: after peer-gone, the responder's calls fail with EIO. */
static void end_destroy(struct end *e)
{
	if (e->qp)
		ibv_destroy_qp(e->qp);
	if (e->cq)
		ibv_destroy_cq(e->cq);
	if (e->mr)
		ibv_dereg_mr(e->mr);
	free(e->buf);
	memset(e, 0, sizeof(*e));
}

static void modify(struct end *e, struct ibv_qp_attr *a, int mask, const char *to)
{
	int err = ibv_modify_qp(e->qp, a, mask);

	if (err)
		tool_die("%s: modify QP to %s: %s", e->dev->name, to, strerror(err));
}

/* RESET to RTS, facing @peer; PSNs are the QP numbers, for a change. */
static void end_connect(struct end *e, struct end *peer, const struct qp_params *p)
{
	struct ibv_qp_attr a = {
		.qp_state = IBV_QPS_INIT,
		.port_num = 1,
		.qp_access_flags = IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_REMOTE_WRITE |
				   IBV_ACCESS_REMOTE_READ | IBV_ACCESS_REMOTE_ATOMIC,
	};

	modify(e, &a, IBV_QP_STATE | IBV_QP_PKEY_INDEX | IBV_QP_PORT |
		      IBV_QP_ACCESS_FLAGS, "INIT");
	memset(&a, 0, sizeof(a));
	a.qp_state = IBV_QPS_RTR;
	a.path_mtu = e->dev->mtu < peer->dev->mtu ? e->dev->mtu : peer->dev->mtu;
	a.dest_qp_num = peer->qp->qp_num;
	a.rq_psn = peer->qp->qp_num;
	a.max_dest_rd_atomic = 1;
	a.min_rnr_timer = p->min_rnr_timer;
	a.ah_attr.is_global = 1;
	a.ah_attr.grh.dgid = peer->dev->gid;
	a.ah_attr.grh.sgid_index = e->dev->gid_index;
	a.ah_attr.grh.hop_limit = 64;
	a.ah_attr.port_num = 1;
	modify(e, &a, IBV_QP_STATE | IBV_QP_AV | IBV_QP_PATH_MTU |
		      IBV_QP_DEST_QPN | IBV_QP_RQ_PSN |
		      IBV_QP_MAX_DEST_RD_ATOMIC | IBV_QP_MIN_RNR_TIMER, "RTR");
	memset(&a, 0, sizeof(a));
	a.qp_state = IBV_QPS_RTS;
	a.sq_psn = e->qp->qp_num;
	a.timeout = p->timeout;
	a.retry_cnt = p->retry_cnt;
	a.rnr_retry = p->rnr_retry;
	a.max_rd_atomic = 1;
	modify(e, &a, IBV_QP_STATE | IBV_QP_SQ_PSN | IBV_QP_TIMEOUT |
		      IBV_QP_RETRY_CNT | IBV_QP_RNR_RETRY |
		      IBV_QP_MAX_QP_RD_ATOMIC, "RTS");
}

static void pair_up(struct end *a, struct end *b, const struct qp_params *p)
{
	end_create(a, &dev_a, IBV_ACCESS_LOCAL_WRITE);
	end_create(b, &dev_b, p->access);
	end_connect(a, b, p);
	end_connect(b, a, p);
}

static void pair_down(struct end *a, struct end *b)
{
	end_destroy(a);
	end_destroy(b);
	dev_events(&dev_a);
	dev_events(&dev_b);
}

/* Posting */

static void post_send(struct end *e, uint64_t id, enum ibv_wr_opcode op,
		      uint32_t off, uint32_t len, uint64_t raddr, uint32_t rkey)
{
	struct ibv_sge sge = {
		.addr = (uintptr_t)e->buf + off,
		.length = len,
		.lkey = e->mr->lkey,
	};
	struct ibv_send_wr wr = {
		.wr_id = id,
		.sg_list = &sge,
		.num_sge = 1,
		.opcode = op,
		.send_flags = IBV_SEND_SIGNALED,
	}, *bad;
	int err;

	wr.wr.rdma.remote_addr = raddr;
	wr.wr.rdma.rkey = rkey;
	err = ibv_post_send(e->qp, &wr, &bad);
	if (err)
		tool_die("%s: ibv_post_send: %s", e->dev->name, strerror(err));
}

static void post_recv(struct end *e, uint64_t id, uint32_t off, uint32_t len)
{
	struct ibv_sge sge = {
		.addr = (uintptr_t)e->buf + off,
		.length = len,
		.lkey = e->mr->lkey,
	};
	struct ibv_recv_wr wr = { .wr_id = id, .sg_list = &sge, .num_sge = 1 }, *bad;
	int err;

	err = ibv_post_recv(e->qp, &wr, &bad);
	if (err)
		tool_die("%s: ibv_post_recv: %s", e->dev->name, strerror(err));
}

/* Completions and states */

/* Wait up to @ms for one completion of @e; false if none came. */
static bool poll_one(struct end *e, struct ibv_wc *wc, unsigned int ms)
{
	double end = now() + ms / 1000.0;
	int n;

	for (;;) {
		n = ibv_poll_cq(e->cq, 1, wc);
		if (n < 0)
			tool_die("%s: ibv_poll_cq failed", e->dev->name);
		if (n)
			return true;
		if (now() > end)
			return false;
		usleep(200);
	}
}

/* The next completion of @e is work request @id with @status. */
static void expect_wc(struct end *e, const char *what, uint64_t id,
		      enum ibv_wc_status status, unsigned int ms)
{
	char want[64], got[64];
	struct ibv_wc wc;

	snprintf(want, sizeof(want), "wr %" PRIu64 " %s", id,
		 ibv_wc_status_str(status));
	if (!poll_one(e, &wc, ms))
		snprintf(got, sizeof(got), "nothing in %u ms", ms);
	else
		snprintf(got, sizeof(got), "wr %" PRIu64 " %s", wc.wr_id,
			 ibv_wc_status_str(wc.status));
	check(what, want, got);
}

static void expect_no_wc(struct end *e, const char *what, unsigned int ms)
{
	struct ibv_wc wc;
	char got[64];

	if (poll_one(e, &wc, ms))
		snprintf(got, sizeof(got), "wr %" PRIu64 " %s", wc.wr_id,
			 ibv_wc_status_str(wc.status));
	else
		snprintf(got, sizeof(got), "none");
	check(what, "none", got);
}

static enum ibv_qp_state qp_state(struct end *e)
{
	struct ibv_qp_init_attr init;
	struct ibv_qp_attr a;
	int err;

	err = ibv_query_qp(e->qp, &a, IBV_QP_STATE, &init);
	if (err)
		tool_die("%s: ibv_query_qp: %s", e->dev->name, strerror(err));
	return a.qp_state;
}

/* @e's QP reaches @state within @ms (the engines move it on their own). */
static void expect_state(struct end *e, const char *what, enum ibv_qp_state state,
			 unsigned int ms)
{
	double end = now() + ms / 1000.0;
	enum ibv_qp_state s;

	while ((s = qp_state(e)) != state && now() < end)
		msleep(10);
	check(what, state_name(state), state_name(s));
}

static void fill(char *p, size_t len, unsigned int seed)
{
	size_t i;

	for (i = 0; i < len; i++)
		p[i] = (char)(seed + i * 7 + (i >> 8));
}

/* The cases */

static const struct qp_params default_params = {
	.timeout = 14,
	.retry_cnt = 7,
	.rnr_retry = 7,
	.min_rnr_timer = 14,		/* 1.28 ms */
	.access = IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_REMOTE_WRITE |
		  IBV_ACCESS_REMOTE_READ | IBV_ACCESS_REMOTE_ATOMIC,
};

static void case_ok(void)
{
	struct qp_params p = default_params;
	struct end a, b;

	pair_up(&a, &b, &p);
	fill(a.buf, 4096, 1);
	post_recv(&b, 10, 8192, 1024);
	post_send(&a, 1, IBV_WR_RDMA_WRITE, 0, 4096, (uintptr_t)b.buf, b.mr->rkey);
	expect_wc(&a, "requester: WRITE", 1, IBV_WC_SUCCESS, 5000);
	check_true("responder: written bytes", !memcmp(a.buf, b.buf, 4096),
		   "differ");
	fill(b.buf + 16384, 3000, 2);
	post_send(&a, 2, IBV_WR_RDMA_READ, 4096, 3000,
		  (uintptr_t)b.buf + 16384, b.mr->rkey);
	expect_wc(&a, "requester: READ", 2, IBV_WC_SUCCESS, 5000);
	check_true("requester: read bytes",
		   !memcmp(a.buf + 4096, b.buf + 16384, 3000), "differ");
	fill(a.buf + 8192, 1000, 3);
	post_send(&a, 3, IBV_WR_SEND, 8192, 1000, 0, 0);
	expect_wc(&a, "requester: SEND", 3, IBV_WC_SUCCESS, 5000);
	expect_wc(&b, "responder: receive", 10, IBV_WC_SUCCESS, 5000);
	check_true("responder: received bytes",
		   !memcmp(a.buf + 8192, b.buf + 8192, 1000), "differ");
	expect_state(&a, "requester: QP state", IBV_QPS_RTS, 0);
	expect_state(&b, "responder: QP state", IBV_QPS_RTS, 0);
	pair_down(&a, &b);
}

/* A WR posted once the QP is in ERR is flushed (IBA 10.3.1). */
static void expect_send_flushed_in_err(struct end *a)
{
	post_send(a, 3, IBV_WR_SEND, 0, 64, 0, 0);
	expect_wc(a, "requester: WR posted in ERR", 3, IBV_WC_WR_FLUSH_ERR, 2000);
}

static void expect_recv_flushed_in_err(struct end *b)
{
	post_recv(b, 12, 0, 64);
	expect_wc(b, "responder: receive posted in ERR", 12, IBV_WC_WR_FLUSH_ERR,
		  2000);
}

/*
 * An access error at the responder (IBA 9.7.5.1, table 47): the
 * requester completes the WR with IBV_WC_REM_ACCESS_ERR, both QPs go to
 * ERR, and every other posted WR, on both sides, is flushed. The SEND
 * posted after the bad request must not be received.
 */
static void access_error(struct end *a, struct end *b, enum ibv_wr_opcode op,
			 uint32_t len, uint64_t raddr, uint32_t rkey)
{
	post_recv(b, 10, 0, 1024);
	post_recv(b, 11, 1024, 1024);
	post_send(a, 1, op, 0, len, raddr, rkey);
	post_send(a, 2, IBV_WR_SEND, 0, 64, 0, 0);
	expect_wc(a, "requester: bad request", 1, IBV_WC_REM_ACCESS_ERR, 5000);
	expect_wc(a, "requester: next WR", 2, IBV_WC_WR_FLUSH_ERR, 2000);
	expect_no_wc(a, "requester: further completions", 50);
	expect_state(a, "requester: QP state", IBV_QPS_ERR, 2000);
	expect_state(b, "responder: QP state", IBV_QPS_ERR, 2000);
	expect_event(b, "responder: async error", IBV_EVENT_QP_ACCESS_ERR, 2000);
	expect_wc(b, "responder: 1st receive", 10, IBV_WC_WR_FLUSH_ERR, 2000);
	expect_wc(b, "responder: 2nd receive", 11, IBV_WC_WR_FLUSH_ERR, 2000);
	expect_no_wc(b, "responder: further completions", 50);
	expect_send_flushed_in_err(a);
	expect_recv_flushed_in_err(b);
}

static void case_bad_rkey(void)
{
	struct qp_params p = default_params;
	struct end a, b;

	pair_up(&a, &b, &p);
	/* Another key index and key: no MR of the device has it. */
	access_error(&a, &b, IBV_WR_RDMA_WRITE, 512, (uintptr_t)b.buf,
		     b.mr->rkey ^ 0x00ffff5a);
	check_true("responder: target untouched", !b.buf[0] && !b.buf[511],
		   "written");
	pair_down(&a, &b);
}

static void case_read_bounds(void)
{
	struct qp_params p = default_params;
	struct end a, b;

	pair_up(&a, &b, &p);
	access_error(&a, &b, IBV_WR_RDMA_READ, 64,
		     (uintptr_t)b.buf + BUF_SIZE - 32, b.mr->rkey);
	pair_down(&a, &b);
}

static void case_no_remote_write(void)
{
	struct qp_params p = default_params;
	struct end a, b;

	p.access = IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_REMOTE_READ;
	pair_up(&a, &b, &p);
	fill(a.buf, 512, 4);
	/* The receives are in this MR too: LOCAL_WRITE is all they need. */
	access_error(&a, &b, IBV_WR_RDMA_WRITE, 512, (uintptr_t)b.buf + 4096,
		     b.mr->rkey);
	check_true("responder: target untouched",
		   !b.buf[4096] && !b.buf[4096 + 511], "written");
	pair_down(&a, &b);
}

/*
 * IBA 9.7.5.1, table 47: a SEND longer than the receive buffer is an
 * invalid request: NAK, the responder's receive completes with a local
 * length error, both QPs go to ERR.
 */
static void case_send_too_long(void)
{
	struct qp_params p = default_params;
	struct end a, b;

	pair_up(&a, &b, &p);
	post_recv(&b, 10, 0, 64);
	post_recv(&b, 11, 1024, 1024);
	post_send(&a, 1, IBV_WR_SEND, 0, 256, 0, 0);
	post_send(&a, 2, IBV_WR_SEND, 0, 64, 0, 0);
	expect_wc(&a, "requester: long SEND", 1, IBV_WC_REM_INV_REQ_ERR, 5000);
	expect_wc(&a, "requester: next WR", 2, IBV_WC_WR_FLUSH_ERR, 2000);
	expect_no_wc(&a, "requester: further completions", 50);
	expect_wc(&b, "responder: short receive", 10, IBV_WC_LOC_LEN_ERR, 5000);
	expect_wc(&b, "responder: 2nd receive", 11, IBV_WC_WR_FLUSH_ERR, 2000);
	expect_no_wc(&b, "responder: further completions", 50);
	expect_state(&a, "requester: QP state", IBV_QPS_ERR, 2000);
	expect_state(&b, "responder: QP state", IBV_QPS_ERR, 2000);
	expect_event(&b, "responder: async error", IBV_EVENT_QP_REQ_ERR, 2000);
	expect_send_flushed_in_err(&a);
	expect_recv_flushed_in_err(&b);
	pair_down(&a, &b);
}

/* A SEND finds no receive: the responder answers RNR NAKs. */
static void case_rnr_late(void)
{
	struct qp_params p = default_params;
	unsigned long sent0, rcvd0, sent, rcvd;
	struct end a, b;
	char got[64];

	pair_up(&a, &b, &p);
	sent0 = counter(&dev_b, "rnr_naks_sent");
	rcvd0 = counter(&dev_a, "rnr_naks_rcvd");
	fill(a.buf, 2000, 5);
	post_send(&a, 1, IBV_WR_SEND, 0, 2000, 0, 0);
	expect_no_wc(&a, "requester: SEND waits for a receive", late_ms);
	post_recv(&b, 10, 4096, 4096);
	expect_wc(&a, "requester: SEND", 1, IBV_WC_SUCCESS, 5000);
	expect_wc(&b, "responder: late receive", 10, IBV_WC_SUCCESS, 5000);
	check_true("responder: received bytes",
		   !memcmp(a.buf, b.buf + 4096, 2000), "differ");
	expect_state(&a, "requester: QP state", IBV_QPS_RTS, 0);
	expect_state(&b, "responder: QP state", IBV_QPS_RTS, 0);
	msleep(50);		/* past the counters' lifespan */
	sent = counter(&dev_b, "rnr_naks_sent") - sent0;
	rcvd = counter(&dev_a, "rnr_naks_rcvd") - rcvd0;
	snprintf(got, sizeof(got), "%lu", sent);
	check_true("responder: rnr_naks_sent rose", sent > 0, got);
	snprintf(got, sizeof(got), "%lu", rcvd);
	check_true("requester: rnr_naks_rcvd rose", rcvd > 0, got);
	info("rnr_naks_sent +%lu, rnr_naks_rcvd +%lu in %u ms", sent, rcvd,
	     late_ms);
	pair_down(&a, &b);
}

/* Back to RESET, then RTS again facing the same peer. */
static void end_reconnect(struct end *e, struct end *peer,
			  const struct qp_params *p)
{
	struct ibv_qp_attr a = { .qp_state = IBV_QPS_RESET };

	modify(e, &a, IBV_QP_STATE, "RESET");
	end_connect(e, peer, p);
}

/* One SEND that meets an RNR NAK before its receive is posted. */
static void rnr_round(struct end *a, struct end *b, unsigned int round)
{
	char what[64];

	post_send(a, round, IBV_WR_SEND, 0, 100, 0, 0);
	msleep(100);
	post_recv(b, 100 + round, 0, 1024);
	snprintf(what, sizeof(what), "requester: SEND %u", round);
	expect_wc(a, what, round, IBV_WC_SUCCESS, 5000);
	snprintf(what, sizeof(what), "responder: receive %u", round);
	expect_wc(b, what, 100 + round, IBV_WC_SUCCESS, 5000);
}

/*
 * The RNR retry count is a budget per stall (IBA 9.7.5.2.8): progress
 * restores it, and so does a new connection. Each round's SEND meets one
 * RNR NAK and waits the longest RNR timer (code 31, 491.52 ms), by which
 * time its receive is there. A budget that never came back would end the
 * second round in RNR_RETRY_EXC_ERR.
 */
static void case_rnr_refill(void)
{
	struct qp_params p = default_params;
	struct end a, b;
	unsigned int i;

	p.rnr_retry = 1;
	p.min_rnr_timer = 31;
	pair_up(&a, &b, &p);
	for (i = 0; i < 4; i++)
		rnr_round(&a, &b, i);
	post_send(&a, 9, IBV_WR_SEND, 0, 100, 0, 0);
	expect_wc(&a, "requester: SEND that finds no receive", 9,
		  IBV_WC_RNR_RETRY_EXC_ERR, 5000);
	expect_state(&a, "requester: QP state", IBV_QPS_ERR, 2000);
	end_reconnect(&a, &b, &p);
	end_reconnect(&b, &a, &p);
	for (i = 10; i < 12; i++)
		rnr_round(&a, &b, i);
	pair_down(&a, &b);
}

static void case_rnr_exhausted(void)
{
	struct qp_params p = default_params;
	unsigned long sent0, rcvd0, sent, rcvd;
	struct end a, b;
	char got[64];

	p.rnr_retry = 0;
	pair_up(&a, &b, &p);
	sent0 = counter(&dev_b, "rnr_naks_sent");
	rcvd0 = counter(&dev_a, "rnr_naks_rcvd");
	post_send(&a, 1, IBV_WR_SEND, 0, 100, 0, 0);
	post_send(&a, 2, IBV_WR_SEND, 0, 100, 0, 0);
	expect_wc(&a, "requester: SEND", 1, IBV_WC_RNR_RETRY_EXC_ERR, 5000);
	expect_wc(&a, "requester: next WR", 2, IBV_WC_WR_FLUSH_ERR, 2000);
	expect_state(&a, "requester: QP state", IBV_QPS_ERR, 2000);
	expect_send_flushed_in_err(&a);
	/* An RNR NAK is no error of the responder's. */
	expect_state(&b, "responder: QP state", IBV_QPS_RTS, 0);
	post_recv(&b, 10, 0, 1024);
	expect_no_wc(&b, "responder: receive stays posted", 100);
	msleep(50);
	sent = counter(&dev_b, "rnr_naks_sent") - sent0;
	rcvd = counter(&dev_a, "rnr_naks_rcvd") - rcvd0;
	snprintf(got, sizeof(got), "%lu", sent);
	check_true("responder: rnr_naks_sent rose", sent > 0, got);
	snprintf(got, sizeof(got), "%lu", rcvd);
	check_true("requester: rnr_naks_rcvd rose", rcvd > 0, got);
	pair_down(&a, &b);
}

/*
 * The responder's device goes away mid-stream: nothing answers any more,
 * the transport timer fires retry_cnt + 1 times (with back-off), and the
 * requester completes the oldest WR with IBV_WC_RETRY_EXC_ERR and flushes
 * the others. The responder side no longer exists; its calls fail.
 */
static void case_peer_gone(void)
{
	struct qp_params p = default_params;
	unsigned int outstanding = 0, done = 0, flushed = 0, other = 0;
	double start, last_ok, err_at = 0;
	enum ibv_wc_status first = IBV_WC_SUCCESS;
	uint64_t next = 0;
	struct ibv_wc wc;
	struct end a, b;
	char got[64];

	pair_up(&a, &b, &p);
	start = now();
	last_ok = start;
	while (first == IBV_WC_SUCCESS || outstanding) {
		if (first == IBV_WC_SUCCESS && outstanding < PEER_GONE_DEPTH) {
			post_send(&a, next, IBV_WR_RDMA_WRITE,
				  (next % 4) * PEER_GONE_SIZE, PEER_GONE_SIZE,
				  (uintptr_t)b.buf + (next % 4) * PEER_GONE_SIZE,
				  b.mr->rkey);
			next++;
			outstanding++;
			continue;
		}
		if (!poll_one(&a, &wc, 100)) {
			if (now() - start > deadline_s)
				break;
			continue;
		}
		outstanding--;
		if (wc.status == IBV_WC_SUCCESS) {
			last_ok = now();
			if (++done == 16) {
				printf("transferring\n");
				fflush(stdout);
			}
		} else if (first == IBV_WC_SUCCESS) {
			first = wc.status;
			err_at = now();
		} else if (wc.status == IBV_WC_WR_FLUSH_ERR) {
			flushed++;
		} else {
			other++;
		}
	}
	dev_b.gone = true;
	snprintf(got, sizeof(got), "%u WRs after %.0f s", outstanding,
		 now() - start);
	check("requester: every WR completed", "0 WRs", outstanding ? got : "0 WRs");
	check("requester: first error", ibv_wc_status_str(IBV_WC_RETRY_EXC_ERR),
	      first == IBV_WC_SUCCESS ? "none" : ibv_wc_status_str(first));
	snprintf(got, sizeof(got), "%u", other);
	check("requester: the rest flushed, nothing else", "0", got);
	check_true("requester: WRs completed before the error", done >= 16,
		   "fewer than 16");
	expect_state(&a, "requester: QP state", IBV_QPS_ERR, 1000);
	if (err_at)
		info("%u WRITEs done, error %.1f s after the last success, "
		     "%u flushed", done, err_at - last_ok, flushed);
	dev_events(&dev_a);
	end_destroy(&a);
	end_destroy(&b);
}

static void case_destroy_race(void)
{
	struct qp_params p = default_params;
	unsigned int i, failed = 0;
	struct end a, b;
	char got[16];

	for (i = 0; i < race_iterations; i++) {
		pair_up(&a, &b, &p);
		post_send(&a, 1, IBV_WR_RDMA_WRITE, 0, 64, (uintptr_t)b.buf,
			  b.mr->rkey ^ 0x00ffff5a);
		msleep(i % (race_ms + 1));
		if (ibv_destroy_qp(b.qp))
			failed++;
		b.qp = NULL;
		pair_down(&a, &b);
	}
	snprintf(got, sizeof(got), "%u", failed);
	check("responder: destroys that failed", "0", got);
	info("%u QPs destroyed while their error path ran", race_iterations);
}

static const struct {
	const char *name;
	void (*run)(void);
	bool by_default;
} cases[] = {
	{ "ok", case_ok, true },
	{ "bad-rkey", case_bad_rkey, true },
	{ "read-bounds", case_read_bounds, true },
	{ "no-remote-write", case_no_remote_write, true },
	{ "send-too-long", case_send_too_long, true },
	{ "rnr-late", case_rnr_late, true },
	{ "rnr-exhausted", case_rnr_exhausted, true },
	{ "rnr-refill", case_rnr_refill, true },
	{ "peer-gone", case_peer_gone, false },
	{ "destroy-race", case_destroy_race, false },
};

static void usage(int status)
{
	unsigned int i;

	fprintf(status ? stderr : stdout,
		"usage: sroce-errors -d DEV -g GID_INDEX -D PEER_DEV -G PEER_GID_INDEX\n"
		"                    [-c CASE]... [--late MS] [--deadline S]\n"
		"                    [--iterations N] [--race-ms MS]\n"
		"\n"
		"Provokes RC errors between a requester on DEV and a responder on\n"
		"PEER_DEV and checks both sides' completions and QP states.\n"
		"  -c, --case CASE   run CASE (repeatable; default all but peer-gone)\n"
		"      --late MS     rnr-late: post the receive after MS ms (200)\n"
		"      --deadline S  peer-gone: give up after S s (60)\n"
		"      --iterations N  destroy-race: rounds (50)\n"
		"      --race-ms MS  destroy-race: longest wait before destroy (10)\n"
		"Cases:");
	for (i = 0; i < ARRAY_SIZE(cases); i++)
		fprintf(status ? stderr : stdout, " %s", cases[i].name);
	fprintf(status ? stderr : stdout, "\n");
	exit(status);
}

int main(int argc, char **argv)
{
	static const struct option opts[] = {
		{ "dev", required_argument, NULL, 'd' },
		{ "gid-index", required_argument, NULL, 'g' },
		{ "peer-dev", required_argument, NULL, 'D' },
		{ "peer-gid-index", required_argument, NULL, 'G' },
		{ "case", required_argument, NULL, 'c' },
		{ "late", required_argument, NULL, 'L' },
		{ "deadline", required_argument, NULL, 'T' },
		{ "iterations", required_argument, NULL, 'I' },
		{ "race-ms", required_argument, NULL, 'R' },
		{ "help", no_argument, NULL, 'h' },
		{}
	};
	bool chosen[ARRAY_SIZE(cases)] = {}, any = false;
	unsigned int i;
	int c;

	dev_a.gid_index = dev_b.gid_index = -1;
	while ((c = getopt_long(argc, argv, "d:g:D:G:c:h", opts, NULL)) != -1) {
		switch (c) {
		case 'd': dev_a.name = optarg; break;
		case 'g': dev_a.gid_index = tool_number(optarg, 1023); break;
		case 'D': dev_b.name = optarg; break;
		case 'G': dev_b.gid_index = tool_number(optarg, 1023); break;
		case 'L': late_ms = tool_number(optarg, 60000); break;
		case 'T': deadline_s = tool_number(optarg, 3600); break;
		case 'I': race_iterations = tool_number(optarg, 100000); break;
		case 'R': race_ms = tool_number(optarg, 1000); break;
		case 'c':
			for (i = 0; i < ARRAY_SIZE(cases); i++)
				if (!strcmp(optarg, cases[i].name))
					break;
			if (i == ARRAY_SIZE(cases))
				tool_die("no case %s", optarg);
			chosen[i] = any = true;
			break;
		case 'h': usage(0); break;
		default: usage(2);
		}
	}
	if (optind != argc || !dev_a.name || !dev_b.name ||
	    dev_a.gid_index < 0 || dev_b.gid_index < 0)
		usage(2);
	setvbuf(stdout, NULL, _IOLBF, 0);
	dev_open(&dev_a);
	dev_open(&dev_b);
	for (i = 0; i < ARRAY_SIZE(cases); i++) {
		if (any ? !chosen[i] : !cases[i].by_default)
			continue;
		cur_case = cases[i].name;
		cases[i].run();
	}
	printf("sroce-errors: %u checks, %u failures\n", checks, failures);
	return failures ? 1 : 0;
}
