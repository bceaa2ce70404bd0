// SPDX-License-Identifier: GPL-2.0 OR Linux-OpenIB
/*
 * The cases ok, bad-rkey, read-bounds, no-remote-write, send-too-long
 * and the RNR ones (rnr-late, rnr-refill, rnr-exhausted).
 */
#include "errors.h"

/* The cases */

const struct qp_params default_params = {
	.timeout = 14,
	.retry_cnt = 7,
	.rnr_retry = 7,
	.min_rnr_timer = 14,		/* 1.28 ms */
	.access = IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_REMOTE_WRITE |
		  IBV_ACCESS_REMOTE_READ | IBV_ACCESS_REMOTE_ATOMIC,
};

void case_ok(void)
{
	struct qp_params p = default_params;
	struct end a, b;

	pair_up(&a, &b, &p);
	fill(a.buf, 4096, 1);
	post_recv(&b, 10, 8192, 1024);
	post_send(&a, 1, IBV_WR_RDMA_WRITE, 0, 4096, (uintptr_t)b.buf, b.mr->rkey);
	expect_wc(&a, "requester: WRITE", 1, IBV_WC_SUCCESS, 5000);
	tool_check_true(&rep, "responder: written bytes", !memcmp(a.buf, b.buf, 4096),
		   "differ");
	fill(b.buf + 16384, 3000, 2);
	post_send(&a, 2, IBV_WR_RDMA_READ, 4096, 3000,
		  (uintptr_t)b.buf + 16384, b.mr->rkey);
	expect_wc(&a, "requester: READ", 2, IBV_WC_SUCCESS, 5000);
	tool_check_true(&rep, "requester: read bytes",
		   !memcmp(a.buf + 4096, b.buf + 16384, 3000), "differ");
	fill(a.buf + 8192, 1000, 3);
	post_send(&a, 3, IBV_WR_SEND, 8192, 1000, 0, 0);
	expect_wc(&a, "requester: SEND", 3, IBV_WC_SUCCESS, 5000);
	expect_wc(&b, "responder: receive", 10, IBV_WC_SUCCESS, 5000);
	tool_check_true(&rep, "responder: received bytes",
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

void case_bad_rkey(void)
{
	struct qp_params p = default_params;
	struct end a, b;

	pair_up(&a, &b, &p);
	/* Another key index and key: no MR of the device has it. */
	access_error(&a, &b, IBV_WR_RDMA_WRITE, 512, (uintptr_t)b.buf,
		     b.mr->rkey ^ 0x00ffff5a);
	tool_check_true(&rep, "responder: target untouched", !b.buf[0] && !b.buf[511],
		   "written");
	pair_down(&a, &b);
}

void case_read_bounds(void)
{
	struct qp_params p = default_params;
	struct end a, b;

	pair_up(&a, &b, &p);
	access_error(&a, &b, IBV_WR_RDMA_READ, 64,
		     (uintptr_t)b.buf + BUF_SIZE - 32, b.mr->rkey);
	pair_down(&a, &b);
}

void case_no_remote_write(void)
{
	struct qp_params p = default_params;
	struct end a, b;

	p.access = IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_REMOTE_READ;
	pair_up(&a, &b, &p);
	fill(a.buf, 512, 4);
	/* The receives are in this MR too: LOCAL_WRITE is all they need. */
	access_error(&a, &b, IBV_WR_RDMA_WRITE, 512, (uintptr_t)b.buf + 4096,
		     b.mr->rkey);
	tool_check_true(&rep, "responder: target untouched",
		   !b.buf[4096] && !b.buf[4096 + 511], "written");
	pair_down(&a, &b);
}

/*
 * IBA 9.7.5.1, table 47: a SEND longer than the receive buffer is an
 * invalid request: NAK, the responder's receive completes with a local
 * length error, both QPs go to ERR.
 */
void case_send_too_long(void)
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

/* rnr_naks_sent of the responder's device, rnr_naks_rcvd of the requester's. */
struct rnr_counts {
	unsigned long sent, rcvd;
};

static struct rnr_counts rnr_counters(void)
{
	struct rnr_counts c;

	c.sent = counter(&dev_b, "rnr_naks_sent");
	c.rcvd = counter(&dev_a, "rnr_naks_rcvd");
	return c;
}

/* Both counters rose since @before; returns by how much. */
static struct rnr_counts check_rnr_rose(struct rnr_counts before)
{
	struct rnr_counts d;
	char got[64];

	tool_sleep_ms(50);		/* past the counters' lifespan */
	d = rnr_counters();
	d.sent -= before.sent;
	d.rcvd -= before.rcvd;
	snprintf(got, sizeof(got), "%lu", d.sent);
	tool_check_true(&rep, "responder: rnr_naks_sent rose", d.sent > 0, got);
	snprintf(got, sizeof(got), "%lu", d.rcvd);
	tool_check_true(&rep, "requester: rnr_naks_rcvd rose", d.rcvd > 0, got);
	return d;
}

/* A SEND finds no receive: the responder answers RNR NAKs. */
void case_rnr_late(void)
{
	struct qp_params p = default_params;
	struct rnr_counts before, rose;
	struct end a, b;

	pair_up(&a, &b, &p);
	before = rnr_counters();
	fill(a.buf, 2000, 5);
	post_send(&a, 1, IBV_WR_SEND, 0, 2000, 0, 0);
	expect_no_wc(&a, "requester: SEND waits for a receive", late_ms);
	post_recv(&b, 10, 4096, 4096);
	expect_wc(&a, "requester: SEND", 1, IBV_WC_SUCCESS, 5000);
	expect_wc(&b, "responder: late receive", 10, IBV_WC_SUCCESS, 5000);
	tool_check_true(&rep, "responder: received bytes",
		   !memcmp(a.buf, b.buf + 4096, 2000), "differ");
	expect_state(&a, "requester: QP state", IBV_QPS_RTS, 0);
	expect_state(&b, "responder: QP state", IBV_QPS_RTS, 0);
	rose = check_rnr_rose(before);
	info("rnr_naks_sent +%lu, rnr_naks_rcvd +%lu in %u ms", rose.sent,
	     rose.rcvd, late_ms);
	pair_down(&a, &b);
}

/* Back to RESET, then RTS again facing the same peer. */
static void end_reconnect(struct end *e, struct end *peer,
			  const struct qp_params *p)
{
	struct ibv_qp_attr a = { .qp_state = IBV_QPS_RESET };

	modify(e->qp, &a, IBV_QP_STATE, e);
	end_connect(e, peer, p);
}

/* One SEND that meets an RNR NAK before its receive is posted. */
static void rnr_round(struct end *a, struct end *b, unsigned int round)
{
	char what[64];

	post_send(a, round, IBV_WR_SEND, 0, 100, 0, 0);
	tool_sleep_ms(100);
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
void case_rnr_refill(void)
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

void case_rnr_exhausted(void)
{
	struct qp_params p = default_params;
	struct rnr_counts before;
	struct end a, b;

	p.rnr_retry = 0;
	pair_up(&a, &b, &p);
	before = rnr_counters();
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
	check_rnr_rose(before);
	pair_down(&a, &b);
}
