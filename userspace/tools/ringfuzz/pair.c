// SPDX-License-Identifier: GPL-2.0 OR Linux-OpenIB
/*
 * F and P: the objects that live for the run, asynchronous events,
 * doorbells as libsroce rings them (provider.md), and building and tearing
 * down a pair and finding F's rings.
 */
#include "ringfuzz.h"

void world_setup(void)
{
	int access = IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_REMOTE_WRITE |
		     IBV_ACCESS_REMOTE_READ | IBV_ACCESS_REMOTE_ATOMIC;

	alloc_pds(&w.pd_f, &w.pd_p, "");
	w.buf_f = tool_alloc(F_BUF_SIZE);
	w.buf_probe = tool_alloc(PROBE_MAX);
	w.buf_p = tool_alloc(P_BUF_SIZE);
	w.mr_f = reg(w.pd_f, w.buf_f, F_BUF_SIZE, access | IBV_ACCESS_MW_BIND);
	w.mr_probe = reg(w.pd_f, w.buf_probe, PROBE_MAX, IBV_ACCESS_LOCAL_WRITE);
	w.mr_p = reg(w.pd_p, w.buf_p, P_BUF_SIZE, access);
	w.mw1 = ibv_alloc_mw(w.pd_f, IBV_MW_TYPE_1);
	w.mw2 = ibv_alloc_mw(w.pd_f, IBV_MW_TYPE_2);
	if (!w.mw1 || !w.mw2)
		tool_die("ibv_alloc_mw: %s", strerror(errno));
}

void world_teardown(void)
{
	int err;

	err = ibv_dealloc_mw(w.mw1);
	err = err ?: ibv_dealloc_mw(w.mw2);
	err = err ?: ibv_dereg_mr(w.mr_f);
	err = err ?: ibv_dereg_mr(w.mr_probe);
	err = err ?: ibv_dereg_mr(w.mr_p);
	err = err ?: ibv_dealloc_pd(w.pd_f);
	err = err ?: ibv_dealloc_pd(w.pd_p);
	if (err)
		fail("destroying the PDs, MRs and windows: %s", strerror(err));
}

/* Asynchronous events: for F, its CQ or SRQ, evidence; for control, fatal. */
void drain_events(struct fpair *fp)
{
	struct dev *devs[] = { &dev_a, &dev_b };
	struct ibv_async_event ev;
	unsigned int i;

	for (i = 0; i < ARRAY_SIZE(devs); i++) {
		while (!ibv_get_async_event(devs[i]->ctx, &ev)) {
			enum ibv_event_type t = ev.event_type;
			/* LAST_WQE_REACHED: how a QP on an SRQ says ERR. */
			bool err = t == IBV_EVENT_QP_FATAL ||
				   t == IBV_EVENT_QP_REQ_ERR ||
				   t == IBV_EVENT_QP_ACCESS_ERR ||
				   t == IBV_EVENT_CQ_ERR ||
				   t == IBV_EVENT_SRQ_ERR ||
				   t == IBV_EVENT_QP_LAST_WQE_REACHED;
			bool mine = fp && ((t == IBV_EVENT_CQ_ERR ?
					    ev.element.cq == fp->cq :
					    t == IBV_EVENT_SRQ_ERR ||
					    t == IBV_EVENT_SRQ_LIMIT_REACHED ?
					    ev.element.srq == fp->srq :
					    ev.element.qp == fp->qp));
			bool control = t == IBV_EVENT_CQ_ERR ?
				       ev.element.cq == ctl.cq_a ||
				       ev.element.cq == ctl.cq_b :
				       ev.element.qp == ctl.qp_a ||
				       ev.element.qp == ctl.qp_b;

			if (control && t != IBV_EVENT_COMM_EST)
				fail("control: asynchronous event %s",
				     tool_event_name(t));
			if (mine && err) {
				fp->err_events++;
				fp->last_event = tool_event_name(t);
				fp->qp_fatal += t == IBV_EVENT_QP_FATAL;
				fp->srq_err += t == IBV_EVENT_SRQ_ERR;
				fp->cq_err += t == IBV_EVENT_CQ_ERR;
			}
			ibv_ack_async_event(&ev);
		}
	}
}

/* ------------------------------------------------------------------ */
/* Doorbells, as libsroce rings them (provider.md) */

/* Write one uverbs command; 0 or the errno. */
static int uverbs_write(struct ibv_context *ctx, const void *cmd, size_t len)
{
	ssize_t n = write(ctx->cmd_fd, cmd, len);

	if (n == (ssize_t)len)
		return 0;
	return n < 0 ? errno : EIO;
}

/* POST_SEND with no work request; with @bogus, one that sroce refuses. */
int db_send(struct ibv_qp *qp, bool bogus)
{
	struct {
		struct ib_uverbs_cmd_hdr hdr;
		struct ib_uverbs_post_send cmd;
		struct ib_uverbs_send_wr wr;
	} c;
	struct ib_uverbs_post_send_resp resp;
	size_t len = bogus ? sizeof(c) : sizeof(c.hdr) + sizeof(c.cmd);

	memset(&c, 0, sizeof(c));
	c.hdr.command = IB_USER_VERBS_CMD_POST_SEND;
	c.hdr.in_words = len / 4;
	c.hdr.out_words = sizeof(resp) / 4;
	c.cmd.response = (uintptr_t)&resp;
	c.cmd.qp_handle = qp->handle;
	c.cmd.wqe_size = sizeof(struct ib_uverbs_send_wr);
	if (bogus) {
		c.cmd.wr_count = 1;
		c.wr.wr_id = TAG_RAW | 0xdb;
		c.wr.opcode = IB_UVERBS_WR_SEND;
		c.wr.send_flags = IBV_SEND_SIGNALED;
	}
	return uverbs_write(qp->context, &c, len);
}

/*
 * POST_RECV (of a QP) or POST_SRQ_RECV (of an SRQ) with no work request:
 * both commands and their responses have the same layout, the QP's or
 * the SRQ's handle second.
 */
static int db_recv_cmd(struct ibv_context *ctx, uint32_t command,
		       uint32_t handle)
{
	struct {
		struct ib_uverbs_cmd_hdr hdr;
		struct ib_uverbs_post_recv cmd;
	} c;
	struct ib_uverbs_post_recv_resp resp;

	memset(&c, 0, sizeof(c));
	c.hdr.command = command;
	c.hdr.in_words = sizeof(c) / 4;
	c.hdr.out_words = sizeof(resp) / 4;
	c.cmd.response = (uintptr_t)&resp;
	c.cmd.qp_handle = handle;
	c.cmd.wqe_size = sizeof(struct ib_uverbs_recv_wr);
	return uverbs_write(ctx, &c, sizeof(c));
}

_Static_assert(sizeof(struct ib_uverbs_post_recv) ==
	       sizeof(struct ib_uverbs_post_srq_recv) &&
	       offsetof(struct ib_uverbs_post_recv, qp_handle) ==
	       offsetof(struct ib_uverbs_post_srq_recv, srq_handle),
	       "POST_RECV and POST_SRQ_RECV differ");

/* A doorbell of F that failed is evidence of an error on F. */
static void doorbell_rung(struct fpair *fp, int err)
{
	fp->doorbells++;
	if (err) {
		fp->db_errnos++;
		fp->last_errno = err;
	}
	alive();
}

/* Ring F's send doorbell; a failure is evidence of an error on F. */
void ring_sq(struct fpair *fp)
{
	int err;

	beat("%s: SQ doorbell of QP %u", rep.cur, fp->qp->qp_num);
	err = db_send(fp->qp, false);
	doorbell_rung(fp, err);
}

void ring_rq(struct fpair *fp)
{
	int err;

	beat("%s: %s doorbell of QP %u", rep.cur, fp->srq ? "SRQ" : "RQ",
	     fp->qp->qp_num);
	err = fp->srq ? db_recv_cmd(fp->srq->context,
				    IB_USER_VERBS_CMD_POST_SRQ_RECV,
				    fp->srq->handle) :
			db_recv_cmd(fp->qp->context, IB_USER_VERBS_CMD_POST_RECV,
				    fp->qp->handle);
	doorbell_rung(fp, err);
}

/* ------------------------------------------------------------------ */

/* ------------------------------------------------------------------ */
/* Building and tearing down a pair, and finding F's rings */

static struct ibv_ah *make_ah(struct ibv_pd *pd, const struct dev *from,
			      const struct dev *to)
{
	struct ibv_ah_attr a;
	struct ibv_ah *ah;

	set_av(&a, from, to);
	ah = ibv_create_ah(pd, &a);
	if (!ah)
		tool_die("ibv_create_ah: %s", strerror(errno));
	return ah;
}

/* Wait until F's CQ has given @want completions; return how many. */
static unsigned int f_wait(struct fpair *fp, struct ibv_wc *wc, unsigned int want)
{
	uint64_t start = tool_now_ms();
	unsigned int got = 0;

	while (got < want && tool_now_ms() - start < WAIT_MS) {
		int n = ibv_poll_cq(fp->cq, want - got, wc + got);

		if (n < 0)
			break;
		got += n;
		p_poll(fp);
		alive();
		if (!n)
			tool_sleep_us(500);
	}
	if (got)
		fp->cqr.shadow = load_idx(&fp->cqr.hdr->consumer);
	return got;
}

/*
 * Find the slot size of F's RQ (or SRQ) and SQ by posting two work
 * requests to each, and check the CQ's slots with their completions.
 */
static void discover(struct fpair *fp, uint32_t sq_num, uint32_t rq_num)
{
	struct ibv_send_wr swr[2], *bad;
	uint32_t i0, c0 = fp->cqr.shadow;
	struct ibv_wc wc[2];
	uint64_t id;
	int k, ret;

	i0 = load_idx(&fp->rq.hdr->producer);
	f_post_recv(fp, TAG_DISC | 0);
	f_post_recv(fp, TAG_DISC | 1);
	ring_set_geometry(&fp->rq, rq_num,
			  find_entry_size(&fp->rq, rq_num, i0, TAG_DISC | 0,
					  TAG_DISC | 1));
	fp->rq.shadow = load_idx(&fp->rq.hdr->producer);

	i0 = load_idx(&fp->sq.hdr->producer);
	memset(swr, 0, sizeof(swr));
	for (k = 0; k < 2; k++) {
		swr[k].wr_id = TAG_DISC | (2 + k);
		swr[k].opcode = IBV_WR_SEND;
		swr[k].send_flags = IBV_SEND_SIGNALED;
		swr[k].next = k ? NULL : &swr[1];
		swr[k].wr.ud.ah = fp->ah;
		swr[k].wr.ud.remote_qpn = fp->pqp->qp_num;
		swr[k].wr.ud.remote_qkey = QKEY;
	}
	ret = ibv_post_send(fp->qp, swr, &bad);
	if (ret)
		tool_die("discovery SENDs: %s", strerror(ret));
	ring_set_geometry(&fp->sq, sq_num,
			  find_entry_size(&fp->sq, sq_num, i0, TAG_DISC | 2,
					  TAG_DISC | 3));
	note_published(&fp->sq);
	if (fp->type == IBV_QPT_UD)
		memcpy(&fp->ah_num, (uint8_t *)slot(&fp->sq, i0) +
		       offsetof(struct sroce_send_wqe, wr.ud.ah_num), 4);

	if (f_wait(fp, wc, 2) != 2)
		tool_die("discovery SENDs did not complete");
	for (k = 0; k < 2; k++) {
		if (wc[k].status != IBV_WC_SUCCESS)
			tool_die("discovery SEND: %s",
				 ibv_wc_status_str(wc[k].status));
		memcpy(&id, slot(&fp->cqr, c0 + k), 8);
		if (id != wc[k].wr_id)
			tool_die("CQ: the completion of wr_id %#" PRIx64
				 " is not in slot %u", wc[k].wr_id, c0 + k);
	}
}

/*
 * A fresh pair: F on DEV with its own CQ (and SRQ), P on PEER_DEV,
 * connected, P's receives posted, F's rings found.
 */
void pair_up(struct fpair *fp, enum ibv_qp_type type, bool use_srq,
	     const struct qp_params *p)
{
	struct ibv_qp_init_attr init = {
		.qp_type = type,
		.cap = { .max_send_wr = F_SQ_WR, .max_recv_wr = F_RQ_WR,
			 .max_send_sge = F_SGE, .max_recv_sge = 2,
			 .max_inline_data = F_INLINE },
	};
	struct ibv_srq_init_attr sa = {
		.attr = { .max_wr = F_RQ_WR, .max_sge = 2 },
	};
	struct ibv_qp_init_attr got;
	struct ibv_qp_attr attr;
	struct snapshot snap;
	uint32_t rq_num;
	struct umap m[3];
	int n, i;

	memset(fp, 0, sizeof(*fp));
	fp->type = type;
	beat("%s: creating a %s pair", rep.cur, type_name(type));

	snap.n = uverbs_maps(&dev_a, snap.m);
	fp->cq = ibv_create_cq(dev_a.ctx, F_CQE, NULL, NULL, 0);
	if (!fp->cq)
		tool_die("ibv_create_cq: %s", strerror(errno));
	if (new_maps(&dev_a, &snap, m, 3) != 1)
		tool_die("CQ: not one new mapping");
	ring_set_map(&fp->cqr, "CQ", m[0]);
	ring_set_geometry(&fp->cqr, fp->cq->cqe, sizeof(struct sroce_cqe));
	fp->cqr.shadow = load_idx(&fp->cqr.hdr->consumer);

	if (use_srq) {
		snap.n = uverbs_maps(&dev_a, snap.m);
		fp->srq = ibv_create_srq(w.pd_f, &sa);
		if (!fp->srq)
			tool_die("ibv_create_srq: %s", strerror(errno));
		if (new_maps(&dev_a, &snap, m, 3) != 1)
			tool_die("SRQ: not one new mapping");
		ring_set_map(&fp->rq, "SRQ", m[0]);
		init.srq = fp->srq;
		init.cap.max_recv_wr = 0;
		init.cap.max_recv_sge = 0;
	}

	init.send_cq = init.recv_cq = fp->cq;
	snap.n = uverbs_maps(&dev_a, snap.m);
	fp->qp = ibv_create_qp(w.pd_f, &init);
	if (!fp->qp)
		tool_die("ibv_create_qp: %s", strerror(errno));
	n = new_maps(&dev_a, &snap, m, 3);
	if (n != (use_srq ? 1 : 2))
		tool_die("QP: %d new mappings", n);
	for (i = 0; i < n; i++) {
		bool sq = ((struct sroce_queue_hdr *)m[i].start)->flags &
			  SROCE_QUEUE_NEED_WAKEUP;

		if (sq && !fp->sq.hdr)
			ring_set_map(&fp->sq, "SQ", m[i]);
		else if (!sq && !use_srq && !fp->rq.hdr)
			ring_set_map(&fp->rq, "RQ", m[i]);
		else
			tool_die("QP: cannot tell its SQ from its RQ");
	}
	if (ibv_query_qp(fp->qp, &attr, IBV_QP_CAP, &got))
		tool_die("ibv_query_qp failed");
	rq_num = use_srq ? sa.attr.max_wr : got.cap.max_recv_wr;

	fp->pcq = ibv_create_cq(dev_b.ctx, P_CQE, NULL, NULL, 0);
	if (!fp->pcq)
		tool_die("ibv_create_cq: %s", strerror(errno));
	memset(&init, 0, sizeof(init));
	init.qp_type = type;
	init.send_cq = init.recv_cq = fp->pcq;
	init.cap.max_send_wr = 32;
	init.cap.max_recv_wr = P_RECV_SLOTS;
	init.cap.max_send_sge = 1;
	init.cap.max_recv_sge = 1;
	fp->pqp = ibv_create_qp(w.pd_p, &init);
	if (!fp->pqp)
		tool_die("ibv_create_qp: %s", strerror(errno));

	qp_connect(fp->qp, &dev_a, &dev_b, fp->pqp->qp_num, p, false);
	qp_connect(fp->pqp, &dev_b, &dev_a, fp->qp->qp_num, p, false);
	if (type == IBV_QPT_UD) {
		fp->ah = make_ah(w.pd_f, &dev_a, &dev_b);
		fp->pah = make_ah(w.pd_p, &dev_b, &dev_a);
	}
	p_replenish(fp);
	discover(fp, got.cap.max_send_wr, rq_num);
}

/* Destroy the pair; every destroy must work. */
void pair_down(struct fpair *fp, bool leak_cq)
{
	int err;

	beat("%s: destroying QP %u", rep.cur, fp->qp->qp_num);
	drain_events(fp);
	err = ibv_destroy_qp(fp->qp);
	if (err)
		fail("destroy QP %u (F): %s", fp->qp->qp_num, strerror(err));
	err = ibv_destroy_qp(fp->pqp);
	if (err)
		fail("destroy QP %u (P): %s", fp->pqp->qp_num, strerror(err));
	if (fp->ah && (err = ibv_destroy_ah(fp->ah)))
		fail("destroy F's AH: %s", strerror(err));
	if (fp->pah && (err = ibv_destroy_ah(fp->pah)))
		fail("destroy P's AH: %s", strerror(err));
	if (fp->srq && (err = ibv_destroy_srq(fp->srq)))
		fail("destroy F's SRQ: %s", strerror(err));
	if (!leak_cq && (err = ibv_destroy_cq(fp->cq)))
		fail("destroy F's CQ: %s", strerror(err));
	if ((err = ibv_destroy_cq(fp->pcq)))
		fail("destroy P's CQ: %s", strerror(err));
	alive();
}

/* ------------------------------------------------------------------ */
