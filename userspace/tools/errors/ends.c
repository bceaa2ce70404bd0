// SPDX-License-Identifier: GPL-2.0 OR Linux-OpenIB
/*
 * The two ends of each case: devices, an RC pair built, connected and
 * destroyed, posting, and the checks of completions, events and states.
 */
#include "errors.h"

void info(const char *fmt, ...)
{
	va_list ap;

	printf("%-16s info: ", rep.cur);
	va_start(ap, fmt);
	vprintf(fmt, ap);
	va_end(ap);
	putchar('\n');
	fflush(stdout);
}

/* Setup */

void dev_open(struct dev *d)
{
	d->ctx = tool_open_device(d->name);
	d->pd = tool_alloc_pd(d->ctx, d->name);
	d->mtu = tool_port_mtu(d->ctx, d->name);
	tool_query_gid(d->ctx, d->name, d->gid_index, &d->gid);
	tool_nonblock(d->ctx->async_fd, d->name);
}

/* Print (not judge) the asynchronous events @d has for us. */
void dev_events(struct dev *d)
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
void expect_event(struct end *e, const char *what,
		  enum ibv_event_type type, unsigned int ms)
{
	double end = tool_now() + ms / 1000.0;
	struct ibv_async_event ev;
	bool seen = false;

	while (!seen && tool_now() < end) {
		if (ibv_get_async_event(e->dev->ctx, &ev)) {
			tool_sleep_ms(10);
			continue;
		}
		if (ev.event_type == type && ev.element.qp == e->qp)
			seen = true;
		else
			info("%s: async event %s", e->dev->name,
			     tool_event_name(ev.event_type));
		ibv_ack_async_event(&ev);
	}
	tool_check(&rep, what, tool_event_name(type), seen ? tool_event_name(type) : "none");
}

unsigned long counter(const struct dev *d, const char *name)
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
void end_destroy(struct end *e)
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

int modify(struct ibv_qp *qp, struct ibv_qp_attr *a, int mask,
	   void *arg)
{
	const struct end *e = arg;
	int err = ibv_modify_qp(qp, a, mask);

	if (err)
		tool_die("%s: modify QP to %s: %s", e->dev->name,
			 tool_qp_state_name(a->qp_state), strerror(err));
	return 0;
}

/* RESET to RTS, facing @peer; PSNs are the QP numbers, for a change. */
void end_connect(struct end *e, struct end *peer, const struct qp_params *p)
{
	struct tool_qp_conn c = {
		.access = IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_REMOTE_WRITE |
			  IBV_ACCESS_REMOTE_READ | IBV_ACCESS_REMOTE_ATOMIC,
		.dgid = peer->dev->gid, .sgid_index = e->dev->gid_index,
		.mtu = tool_mtu_min(e->dev->mtu, peer->dev->mtu),
		.dest_qpn = peer->qp->qp_num, .rq_psn = peer->qp->qp_num,
		.max_dest_rd_atomic = 1, .min_rnr_timer = p->min_rnr_timer,
		.sq_psn = e->qp->qp_num, .timeout = p->timeout,
		.retry_cnt = p->retry_cnt, .rnr_retry = p->rnr_retry,
		.max_rd_atomic = 1, .modify = modify, .arg = e,
	};

	tool_qp_connect(e->qp, &c, IBV_QPS_RTS);
}

void pair_up(struct end *a, struct end *b, const struct qp_params *p)
{
	end_create(a, &dev_a, IBV_ACCESS_LOCAL_WRITE);
	end_create(b, &dev_b, p->access);
	end_connect(a, b, p);
	end_connect(b, a, p);
}

void pair_down(struct end *a, struct end *b)
{
	end_destroy(a);
	end_destroy(b);
	dev_events(&dev_a);
	dev_events(&dev_b);
}

/* Posting */

void post_send(struct end *e, uint64_t id, enum ibv_wr_opcode op,
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

void post_recv(struct end *e, uint64_t id, uint32_t off, uint32_t len)
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
bool poll_one(struct end *e, struct ibv_wc *wc, unsigned int ms)
{
	double end = tool_now() + ms / 1000.0;
	int n;

	for (;;) {
		n = ibv_poll_cq(e->cq, 1, wc);
		if (n < 0)
			tool_die("%s: ibv_poll_cq failed", e->dev->name);
		if (n)
			return true;
		if (tool_now() > end)
			return false;
		tool_sleep_us(200);
	}
}

/* The next completion of @e is work request @id with @status. */
void expect_wc(struct end *e, const char *what, uint64_t id,
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
	tool_check(&rep, what, want, got);
}

void expect_no_wc(struct end *e, const char *what, unsigned int ms)
{
	struct ibv_wc wc;
	char got[64];

	if (poll_one(e, &wc, ms))
		snprintf(got, sizeof(got), "wr %" PRIu64 " %s", wc.wr_id,
			 ibv_wc_status_str(wc.status));
	else
		snprintf(got, sizeof(got), "none");
	tool_check(&rep, what, "none", got);
}

enum ibv_qp_state qp_state(struct end *e)
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
void expect_state(struct end *e, const char *what, enum ibv_qp_state state,
		  unsigned int ms)
{
	double end = tool_now() + ms / 1000.0;
	enum ibv_qp_state s;

	while ((s = qp_state(e)) != state && tool_now() < end)
		tool_sleep_ms(10);
	tool_check(&rep, what, tool_qp_state_name(state), tool_qp_state_name(s));
}

void fill(char *p, size_t len, unsigned int seed)
{
	size_t i;

	for (i = 0; i < len; i++)
		p[i] = (char)(seed + i * 7 + (i >> 8));
}
