// SPDX-License-Identifier: GPL-2.0 OR Linux-OpenIB
/*
 * The event loop: posting, polling, serving the peer and sleeping on the
 * completion channel, the socket and the async fd; and what is left
 * outstanding when it fails.
 */
#include "traffic.h"

/*
 * A flushed completion (of what @fmt names): the first is kept to be
 * reported (poll_cqs()), and none is checked further.
 */
bool wc_flushed(const struct ibv_wc *wc, const char *fmt, ...)
{
	size_t n;
	va_list ap;

	if (wc->status != IBV_WC_WR_FLUSH_ERR)
		return false;
	if (c.flushed[0])
		return true;
	va_start(ap, fmt);
	n = vsnprintf(c.flushed, sizeof(c.flushed), fmt, ap);
	va_end(ap);
	if (n < sizeof(c.flushed))
		snprintf(c.flushed + n, sizeof(c.flushed) - n,
			 ": completion status %s", ibv_wc_status_str(wc->status));
	return true;
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
	left = c.deadline - tool_now();
	if (poll(pfd, 3, left < 0.2 ? (left > 0 ? (int)(left * 1000) : 0) : 200) < 0 &&
	    errno != EINTR)
		fatal("poll: %s", strerror(errno));
	if (pfd[0].revents)
		while (!ibv_get_cq_event(c.chan, &cq, &cq_ctx))
			ibv_ack_cq_events(cq, 1);
	if (pfd[2].revents)
		handle_async();
}

void run(void)
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
		if (tool_now() > c.deadline)
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

void dump_outstanding(void)
{
	uint32_t q;

	if (!c.qp)
		return;
	for (q = 0; q < c.p.qps; q++)
		dump_qp(&c.qp[q]);
	say("peer: %s; %s", c.peer_tx_done ? "its ops all completed" : "its ops not all completed",
	    c.peer_verdict ? "it sent its verdict" : "no verdict from it");
}
