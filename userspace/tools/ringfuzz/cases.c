// SPDX-License-Identifier: GPL-2.0 OR Linux-OpenIB
/*
 * The named cases: each corrupts F's rings in one known way and checks
 * what F, its CQ and the kernel do about it.
 */
#include "ringfuzz.h"

/* Named cases */

static const struct qp_params case_params = {
	.timeout = 14, .retry_cnt = 5, .rnr_retry = 3, .min_rnr_timer = 1,
};

/* Wait up to @ms for F to be in @state; return the state it is in. */
static int wait_state(struct fpair *fp, int state, unsigned int ms)
{
	uint64_t start = tool_now_ms();
	int st;

	for (;;) {
		st = tool_qp_state(fp->qp);
		if (st == state || tool_now_ms() - start > ms)
			return st;
		poll_all(fp);
		tool_sleep_us(5000);
	}
}

/* F must be in ERR, and must have said so (judge_err()). */
static void expect_err(struct fpair *fp)
{
	int st = wait_state(fp, IBV_QPS_ERR, 5000);
	char ev[96];

	tool_check(&rep, "F ends in ERR", "ERR", tool_qp_state_name(st));
	if (st != IBV_QPS_ERR)
		return;
	poll_for(fp, 100);
	evidence(fp, ev, sizeof(ev));
	if (!has_evidence(fp))
		info("no error completion, errno or event before a SEND is posted");
	tool_check(&rep, "F in ERR says so (judge_err)", "ERR",
	      (const char *[]){ "usable", "ERR", "FAILED", "SILENT" }
	      [judge_err(fp, "after the corruption")]);
	evidence(fp, ev, sizeof(ev));
	info("evidence: %s", ev);
}

/* The end of every named case: the control pair, destroy, leaks. */
static void case_end(struct fpair *fp)
{
	unsigned int before = rep.failures;

	control_round();
	tool_check_true(&rep, "the control pair passes", rep.failures == before, "failed");
	before = rep.failures;
	pair_down(fp, false);
	tool_check_true(&rep, "destroying F, P and theirs works", rep.failures == before,
		   "failed");
	before = rep.failures;
	check_resources(rep.cur);
	tool_check_true(&rep, "nothing left of them", rep.failures == before, "leaked");
}

/* A BIND_MW that unbinds the type 1 window: it succeeds again and again. */
static void unbind_wqe(struct fpair *fp, uint8_t *e, uint64_t wr_id)
{
	struct sroce_send_wqe *q = (void *)e;

	memset(e, 0, fp->sq.es);
	q->wr_id = wr_id;
	q->opcode = IBV_WR_BIND_MW;
	q->send_flags = SROCE_SEND_SIGNALED;
	q->ex = w.mw1->rkey;
	q->wr.bind_mw.mw_rkey = w.mw1->rkey;
}

/*
 * The known defect: the requester has fetched WQEs up to the ring's end
 * while a SEND holds the consumer index back; the producer then moves
 * back by one. A requester that fetches until it meets the producer
 * never meets it again, and local WQEs cost it no packet budget.
 */
/* A signaled SEND of 64 bytes, wr_id TAG_REAL | 1, through libibverbs. */
static int post_send_1(struct fpair *fp)
{
	struct ibv_sge sge = { .addr = (uintptr_t)w.buf_f, .length = 64,
			       .lkey = w.mr_f->lkey };
	struct ibv_send_wr wr = {
		.wr_id = TAG_REAL | 1, .sg_list = &sge, .num_sge = 1,
		.opcode = IBV_WR_SEND, .send_flags = IBV_SEND_SIGNALED,
	}, *bad;

	return ibv_post_send(fp->qp, &wr, &bad);
}

void case_sq_producer_back(void)
{
	struct qp_params p = { .timeout = 20, .retry_cnt = 7, .rnr_retry = 7,
			       .min_rnr_timer = 1 };
	struct ibv_qp_attr a = { .qp_state = IBV_QPS_ERR };
	struct ibv_wc wc[64];
	uint32_t cons, i;
	uint64_t t0;
	uint8_t e[4096];
	struct fpair fp;
	bool send_ok = false, send_seen = false;
	char got[64];
	int err, n;

	pair_up(&fp, IBV_QPT_RC, false, &p);
	control_round();
	/* P drops whatever comes: F's SEND stays unacknowledged (4 s timer). */
	modify(fp.pqp, &a, IBV_QP_STATE, "ERR");
	err = post_send_1(&fp);
	tool_check(&rep, "post a SEND through libibverbs", "0", tool_errname(err));
	note_published(&fp.sq);
	cons = load_idx(&fp.sq.hdr->consumer);
	snprintf(got, sizeof(got), "%u", fp.sq.shadow - cons);
	tool_check(&rep, "the SEND is outstanding (producer - consumer)", "1", got);

	for (i = 0; i < fp.sq.num; i++) {
		unbind_wqe(&fp, e, TAG_RAW | i);
		memcpy(slot(&fp.sq, cons + i), e, fp.sq.es);
	}
	store_idx(&fp.sq.hdr->producer, cons + fp.sq.num);
	beat("%s: doorbell with %u WQEs in the SQ", rep.cur, fp.sq.num);
	err = db_send(fp.qp, false);
	tool_check(&rep, "doorbell with the ring full of unbinds", "0", tool_errname(err));
	store_idx(&fp.sq.hdr->producer, cons + fp.sq.num - 1);
	beat("%s: doorbell after the producer moved back by one (a send engine "
	     "that never returns here is the known defect)", rep.cur);
	t0 = tool_now_ms();
	err = db_send(fp.qp, false);
	alive();
	snprintf(got, sizeof(got), "%s after %" PRIu64 " ms", tool_errname(err),
		 tool_now_ms() - t0);
	tool_check_true(&rep, "the doorbell returns", true, got);
	info("doorbell: %s", got);
	store_idx(&fp.sq.hdr->producer, fp.sq.shadow);

	tool_check(&rep, "F ends in ERR", "ERR",
	      tool_qp_state_name(wait_state(&fp, IBV_QPS_ERR, 5000)));
	t0 = tool_now_ms();
	while (!send_seen && tool_now_ms() - t0 < 5000) {
		n = ibv_poll_cq(fp.cq, 64, wc);
		for (i = 0; n > 0 && i < (uint32_t)n; i++) {
			if (wc[i].status != IBV_WC_SUCCESS && !fp.err_cqes++)
				fp.first_err = wc[i].status;
			if (wc[i].wr_id == (TAG_REAL | 1)) {
				send_seen = true;
				send_ok = wc[i].status == IBV_WC_SUCCESS;
			}
		}
		drain_events(&fp);
		tool_sleep_us(2000);
	}
	if (fp.err_cqes)
		snprintf(got, sizeof(got), "%s", ibv_wc_status_str(fp.first_err));
	tool_check_true(&rep, "an error completion on F's CQ", fp.err_cqes, "none");
	tool_check_true(&rep, "the SEND completes, not successfully",
		   send_seen && !send_ok, send_seen ? "success" : "never");
	case_end(&fp);
}

/* Producer index where the kernel cannot accept it, nothing outstanding. */
static void sq_producer_bad(bool past)
{
	struct fpair fp;
	uint32_t cons;

	pair_up(&fp, IBV_QPT_RC, false, &case_params);
	cons = load_idx(&fp.sq.hdr->consumer);
	store_idx(&fp.sq.hdr->producer, past ? cons + fp.sq.num + 1 : cons - 1);
	fp.sq.moved = true;
	ring_sq(&fp);
	poll_for(&fp, 200);
	restore_indices(&fp);
	expect_err(&fp);
	case_end(&fp);
}

/* P sends @n SENDs to F, which must receive them. */
static void p_send_wait(struct fpair *fp, unsigned int n)
{
	struct ibv_send_wr wr = { .opcode = IBV_WR_SEND,
				  .send_flags = IBV_SEND_SIGNALED }, *bad;
	struct ibv_wc wc;
	unsigned int got = 0, i;
	uint64_t t0 = tool_now_ms();

	for (i = 0; i < n; i++) {
		wr.wr_id = TAG_REAL | ++fp->wr_seq;
		if (ibv_post_send(fp->pqp, &wr, &bad))
			tool_die("P: post_send failed");
	}
	while (got < n && tool_now_ms() - t0 < WAIT_MS) {
		if (ibv_poll_cq(fp->cq, 1, &wc) == 1) {
			if (wc.status != IBV_WC_SUCCESS)
				tool_die("F: receive: %s",
					 ibv_wc_status_str(wc.status));
			got++;
		}
		p_poll(fp);
		alive();
	}
	if (got < n)
		tool_die("F received %u of %u SENDs from P", got, n);
	fp->cqr.shadow = load_idx(&fp->cqr.hdr->consumer);
}

/*
 * The kernel runs a full lap of unsignaled unbinds past libsroce's
 * producer index, which is then put back: the kernel's consumer is now
 * a ring ahead of it. Nothing of F can complete any more (no SEND posted
 * through libsroce can be flushed), so the kernel must say that F failed.
 */
void case_sq_producer_lap(void)
{
	struct fpair fp;
	uint8_t e[4096];
	uint32_t i;

	pair_up(&fp, IBV_QPT_RC, false, &case_params);
	/* An empty RQ: nothing to flush there. */
	p_send_wait(&fp, 2);
	for (i = 0; i < fp.sq.num; i++) {
		unbind_wqe(&fp, e, TAG_RAW | i);
		((struct sroce_send_wqe *)e)->send_flags = 0;
		memcpy(slot(&fp.sq, fp.sq.shadow + i), e, fp.sq.es);
	}
	store_idx(&fp.sq.hdr->producer, fp.sq.shadow + fp.sq.num);
	fp.sq.moved = true;
	ring_sq(&fp);
	poll_for(&fp, 100);
	info("after the lap: kernel consumer %u, libsroce's producer %u",
	     load_idx(&fp.sq.hdr->consumer), fp.sq.shadow);
	restore_indices(&fp);
	ring_sq(&fp);
	expect_err(&fp);
	case_end(&fp);
}

void case_sq_producer_past(void)
{
	sq_producer_bad(true);
}

void case_sq_producer_behind(void)
{
	sq_producer_bad(false);
}

/* The receive side: a corrupt RQ or SRQ meets a SEND from P. */
static void rq_bad(bool srq, bool sge)
{
	struct fpair fp;
	uint32_t cons, v = 1000;

	pair_up(&fp, IBV_QPT_RC, srq, &case_params);
	cons = load_idx(&fp.rq.hdr->consumer);
	if (sge) {
		f_post_recv(&fp, TAG_FRECV | 7);
		memcpy((uint8_t *)slot(&fp.rq, cons) +
		       offsetof(struct sroce_recv_wqe, num_sge), &v, 4);
	} else {
		store_idx(&fp.rq.hdr->producer, cons + fp.rq.num + 1);
		fp.rq.moved = true;
	}
	p_post_send(&fp);
	poll_for(&fp, 300);
	restore_indices(&fp);
	expect_err(&fp);
	if (!sge) {
		poll_for(&fp, 100);
		tool_check(&rep, "F raised QP_FATAL", "yes", fp.qp_fatal ? "yes" : "no");
		if (srq)
			tool_check(&rep, "F's SRQ raised SRQ_ERR", "yes",
			      fp.srq_err ? "yes" : "no");
	}
	case_end(&fp);
}

void case_rq_producer_past(void)
{
	rq_bad(false, false);
}

void case_srq_producer_past(void)
{
	rq_bad(true, false);
}

void case_rq_wqe_sge(void)
{
	rq_bad(false, true);
}

/* The CQ looks full (or impossible) to the kernel when F completes. */
static void cq_bad(bool past)
{
	struct fpair fp;
	uint32_t prod;
	uint64_t t0;
	int err;

	pair_up(&fp, IBV_QPT_RC, false, &case_params);
	prod = load_idx(&fp.cqr.hdr->producer);
	store_idx(&fp.cqr.hdr->consumer,
		  past ? prod + 5 : fp.cqr.shadow - fp.cqr.num);
	err = post_send_1(&fp);
	tool_check(&rep, "post a SEND through libibverbs", "0", tool_errname(err));
	note_published(&fp.sq);
	/* No polling of F here: that would put the consumer index back. */
	t0 = tool_now_ms();
	while (tool_qp_state(fp.qp) != IBV_QPS_ERR && tool_now_ms() - t0 < 5000) {
		p_poll(&fp);
		drain_events(&fp);
		tool_sleep_us(5000);
	}
	drain_events(&fp);
	tool_check(&rep, "an error event for F", "CQ_ERR",
	      fp.last_event ? fp.last_event : "none");
	restore_indices(&fp);
	expect_err(&fp);
	case_end(&fp);
}

void case_cq_consumer_back(void)
{
	cq_bad(false);
}

void case_cq_consumer_past(void)
{
	cq_bad(true);
}

/*
 * F in ERR, its CQ looking full, a ring of WQEs to flush and one doorbell:
 * the kernel says CQ_ERR once, not once per WQE (the RDMA core queues each
 * event for the process, allocating as it goes), and does not go on by
 * itself flushing a WQE a run into the full CQ (a CPU kept busy for as
 * long as the process keeps the ring full). Once the CQ has room and the
 * doorbell rings again, the rest are flushed.
 */
void case_cq_full_flush(void)
{
	struct ibv_qp_attr a = { .qp_state = IBV_QPS_ERR };
	uint32_t cons, i, n, flushed = 0;
	struct ibv_wc wc[64];
	uint8_t e[4096];
	struct fpair fp;
	uint64_t t0;
	char got[64], want[16];
	int k;

	pair_up(&fp, IBV_QPT_RC, false, &case_params);
	modify(fp.qp, &a, IBV_QP_STATE, "ERR");
	poll_for(&fp, 300);		/* the RQ's flushes */
	fp.cq_err = 0;
	store_idx(&fp.cqr.hdr->consumer, fp.cqr.shadow - fp.cqr.num);
	cons = load_idx(&fp.sq.hdr->consumer);
	n = fp.sq.num;
	for (i = 0; i < n; i++) {
		unbind_wqe(&fp, e, TAG_RAW | i);
		memcpy(slot(&fp.sq, cons + i), e, fp.sq.es);
	}
	store_idx(&fp.sq.hdr->producer, cons + n);
	fp.sq.shadow = cons + n;	/* libsroce's is behind: F is not reused */
	k = db_send(fp.qp, false);
	tool_check(&rep, "doorbell with the CQ full", "0", tool_errname(k));
	/* No polling of F here: that would put the consumer index back. */
	t0 = tool_now_ms();
	while (tool_now_ms() - t0 < 500) {
		p_poll(&fp);
		drain_events(&fp);
		tool_sleep_us(5000);
	}
	snprintf(got, sizeof(got), "%u", fp.cq_err);
	tool_check(&rep, "CQ_ERR events for one overflow", "1", got);
	snprintf(got, sizeof(got), "%u",
		 load_idx(&fp.sq.hdr->consumer) - cons);
	tool_check(&rep, "WQEs taken into the full CQ without a doorbell", "1", got);
	store_idx(&fp.cqr.hdr->consumer, fp.cqr.shadow);
	k = db_send(fp.qp, false);
	tool_check(&rep, "doorbell with room in the CQ", "0", tool_errname(k));
	t0 = tool_now_ms();
	while (flushed < n - 1 && tool_now_ms() - t0 < 5000) {
		k = ibv_poll_cq(fp.cq, 64, wc);
		for (i = 0; k > 0 && i < (uint32_t)k; i++)
			flushed += (wc[i].wr_id & TAG_MASK) == TAG_RAW &&
				   wc[i].status == IBV_WC_WR_FLUSH_ERR;
		drain_events(&fp);
		tool_sleep_us(2000);
	}
	fp.cqr.shadow = load_idx(&fp.cqr.hdr->consumer);
	snprintf(got, sizeof(got), "%u", flushed);
	snprintf(want, sizeof(want), "%u", n - 1);
	tool_check(&rep, "the rest flushed once the CQ has room", want, got);
	case_end(&fp);
}

/* Plausible operands, valid keys only: for the opcodes case. */
static void build_sane(struct fpair *fp, uint8_t *e, uint32_t op, uint64_t id)
{
	struct sroce_send_wqe *q = (void *)e;

	memset(e, 0, fp->sq.es);
	q->wr_id = id;
	q->opcode = op;
	q->send_flags = SROCE_SEND_SIGNALED;
	q->num_sge = 1;
	q->sge[0].addr = (uintptr_t)w.buf_f + 4096;
	q->sge[0].length = 256;
	q->sge[0].lkey = w.mr_f->lkey;
	switch (op) {
	case IBV_WR_RDMA_WRITE:
	case IBV_WR_RDMA_WRITE_WITH_IMM:
	case IBV_WR_RDMA_READ:
		q->wr.rdma.remote_addr = p_tgt(4096);
		q->wr.rdma.rkey = w.mr_p->rkey;
		break;
	case IBV_WR_ATOMIC_CMP_AND_SWP:
	case IBV_WR_ATOMIC_FETCH_AND_ADD:
		q->sge[0].length = 8;
		q->wr.atomic.remote_addr = p_tgt(8192);
		q->wr.atomic.rkey = w.mr_p->rkey;
		q->wr.atomic.compare_add = 1;
		break;
	case IBV_WR_LOCAL_INV:
	case IBV_WR_SEND_WITH_INV:
		q->num_sge = op == IBV_WR_LOCAL_INV ? 0 : 1;
		q->ex = w.mw2->rkey;
		break;
	case IBV_WR_BIND_MW:
		unbind_wqe(fp, e, id);
		break;
	case SROCE_WR_FLUSH:
		q->num_sge = 0;
		q->wr.flush.remote_addr = p_tgt(0);
		q->wr.flush.length = 4096;
		q->wr.flush.rkey = w.mr_p->rkey;
		q->wr.flush.type = 1;
		break;
	case SROCE_WR_ATOMIC_WRITE:
		q->num_sge = 0;
		q->wr.atomic_write.remote_addr = p_tgt(8192);
		q->wr.atomic_write.rkey = w.mr_p->rkey;
		break;
	default:
		break;
	}
}

void case_opcodes(void)
{
	const uint32_t *ops = wqe_opcodes;
	struct fpair fp;
	bool up = false;
	unsigned int k;
	uint8_t e[4096];

	for (k = 0; k < NUM_WQE_OPCODES; k++) {
		uint32_t op = ops[k], idx;
		bool valid = op <= IBV_WR_SEND_WITH_INV ||
			     op == SROCE_WR_FLUSH || op == SROCE_WR_ATOMIC_WRITE;
		uint64_t id = TAG_RAW | 0x1000 | k, t0;
		struct ibv_wc wc;
		bool seen = false;
		char what[64], got[64];
		int n;

		if (!up)
			pair_up(&fp, IBV_QPT_RC, false, &case_params);
		up = true;
		/* Past libsroce: post at the kernel's consumer index. */
		idx = load_idx(&fp.sq.hdr->consumer);
		build_sane(&fp, e, op, id);
		memcpy(slot(&fp.sq, idx), e, fp.sq.es);
		store_idx(&fp.sq.hdr->producer, idx + 1);
		fp.sq.moved = true;
		ring_sq(&fp);
		t0 = tool_now_ms();
		while (!seen && tool_now_ms() - t0 < WAIT_MS) {
			n = ibv_poll_cq(fp.cq, 1, &wc);
			if (n > 0 && wc.wr_id == id)
				seen = true;
			else if (!n)
				tool_sleep_us(1000);
			p_poll(&fp);
			alive();
		}
		fp.cqr.shadow = load_idx(&fp.cqr.hdr->consumer);
		fp.sq.shadow = idx + 1;
		snprintf(what, sizeof(what), "opcode %#x completes", op);
		snprintf(got, sizeof(got), "%s",
			 seen ? (wc.status == IBV_WC_SUCCESS ? "success" :
				 ibv_wc_status_str(wc.status)) : "never");
		if (valid) {
			tool_check_true(&rep, what, seen, got);
			if (seen)
				info("opcode %#x: %s", op, got);
		} else {
			tool_check(&rep, what, ibv_wc_status_str(IBV_WC_LOC_QP_OP_ERR), got);
			tool_check(&rep, "F ends in ERR", "ERR",
			      tool_qp_state_name(wait_state(&fp, IBV_QPS_ERR, 5000)));
		}
		if (tool_qp_state(fp.qp) == IBV_QPS_ERR || k + 1 == NUM_WQE_OPCODES) {
			/* libsroce's index is behind: do not post through it. */
			fp.sq.shadow = load_idx(&fp.sq.hdr->producer);
			case_end(&fp);
			up = false;
		}
	}
}
