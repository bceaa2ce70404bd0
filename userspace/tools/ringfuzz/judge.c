// SPDX-License-Identifier: GPL-2.0 OR Linux-OpenIB
/*
 * The end of a round (settle, then ERR with evidence, or a probe that
 * works) and what `rdma resource show` says this process holds.
 */
#include "ringfuzz.h"

/* ------------------------------------------------------------------ */
/* The end of a round: settle, then ERR with evidence, or usable */

/* Put back the indices this process owns where libsroce has them. */
void restore_indices(struct fpair *fp)
{
	if (load_idx(&fp->sq.hdr->producer) != fp->sq.shadow)
		store_idx(&fp->sq.hdr->producer, fp->sq.shadow);
	if (load_idx(&fp->rq.hdr->producer) != fp->rq.shadow)
		store_idx(&fp->rq.hdr->producer, fp->rq.shadow);
	if (load_idx(&fp->cqr.hdr->consumer) != fp->cqr.shadow)
		store_idx(&fp->cqr.hdr->consumer, fp->cqr.shadow);
}

void settle(struct fpair *fp)
{
	control_finish();
	restore_indices(fp);
	ring_sq(fp);
	ring_rq(fp);
	poll_for(fp, 100);
	/* Until F's CQ is quiet for 100 ms, at most 2 s. */
	{
		uint64_t start = tool_now_ms(), quiet = tool_now_ms();
		uint32_t last = load_idx(&fp->cqr.hdr->producer);

		while (tool_now_ms() - quiet < 100 && tool_now_ms() - start < 2000) {
			poll_all(fp);
			if (load_idx(&fp->cqr.hdr->producer) != last) {
				last = load_idx(&fp->cqr.hdr->producer);
				quiet = tool_now_ms();
			}
			tool_sleep_us(2000);
		}
	}
}

void evidence(const struct fpair *fp, char *buf, size_t len)
{
	if (fp->err_cqes)
		snprintf(buf, len, "%u error completions, first %s",
			 fp->err_cqes, ibv_wc_status_str(fp->first_err));
	else if (fp->db_errnos)
		snprintf(buf, len, "doorbell %s", tool_errname(fp->last_errno));
	else if (fp->err_events)
		snprintf(buf, len, "event %s", fp->last_event);
	else
		snprintf(buf, len, "no evidence");
}

/* With --inject evidence, nothing counts: every ERR is SILENT. */
bool has_evidence(const struct fpair *fp)
{
	return !inject_evidence &&
	       (fp->err_cqes || fp->db_errnos || fp->err_events);
}

/* Post one SEND from the probe MR; ENOMEM (SQ full) is retried. */
static bool probe_post(struct fpair *fp, uint64_t id)
{
	struct ibv_sge sge = { .addr = (uintptr_t)w.buf_probe,
			       .lkey = w.mr_probe->lkey };
	struct ibv_send_wr wr = {
		.wr_id = id, .sg_list = &sge, .num_sge = 1,
		.opcode = IBV_WR_SEND, .send_flags = IBV_SEND_SIGNALED,
	}, *bad = NULL;
	uint64_t start = tool_now_ms();
	int ret;

	fp->probe_len = 16 + rnd((fp->type == IBV_QPT_UD ? 1024 : PROBE_MAX) - 15);
	tool_rng_fill(&data_rng, fp->probe, fp->probe_len);
	memcpy(fp->probe, &id, 8);
	memcpy(w.buf_probe, fp->probe, fp->probe_len);
	if (inject_probe)
		fp->probe[fp->probe_len - 1] ^= 1;
	sge.length = fp->probe_len;
	wr.wr.ud.ah = fp->ah;
	wr.wr.ud.remote_qpn = fp->pqp->qp_num;
	wr.wr.ud.remote_qkey = QKEY;
	fp->probe_id = id;
	fp->probe_done = fp->probe_arrived = false;
	for (;;) {
		beat("%s: probe SEND on QP %u", rep.cur, fp->qp->qp_num);
		bad = NULL;
		ret = ibv_post_send(fp->qp, &wr, &bad);
		note_post(fp, &fp->sq, ret, !bad, !ret || bad != &wr);
		if (ret != ENOMEM || bad != &wr)
			return !ret || !bad;
		if (tool_now_ms() - start > WAIT_MS)
			return false;
		poll_all(fp);
		tool_sleep_us(1000);
	}
}

/*
 * F is in ERR. It must have said so: an error completion, a failed
 * doorbell or an error event; failing those, a SEND posted now must be
 * flushed, which the kernel can do only if its view of the SQ is in step
 * with libsroce's (the consumer index at most a ring behind its producer).
 * If the SQ's producer index was never moved, that view is in step for
 * sure, and the SEND must be flushed whatever else was seen.
 */
enum outcome judge_err(struct fpair *fp, const char *when)
{
	uint32_t cons = load_idx(&fp->sq.hdr->consumer);
	bool in_step = fp->sq.shadow - cons <= fp->sq.num;
	bool pending = fp->probe_id && !fp->probe_done;
	uint64_t start;

	if (!pending && in_step && (!fp->sq.moved || !has_evidence(fp))) {
		if (!probe_post(fp, TAG_PROBE | ++fp->wr_seq)) {
			fail("QP %u in ERR: posting a SEND failed", fp->qp->qp_num);
			return OUT_FAILED;
		}
		start = tool_now_ms();
		while (!fp->probe_done && tool_now_ms() - start < WAIT_MS) {
			poll_all(fp);
			tool_sleep_us(1000);
		}
		if (!fp->probe_done) {
			fail("QP %u (%s) in ERR %s: a SEND posted then was never "
			     "flushed", fp->qp->qp_num, type_name(fp->type), when);
			return OUT_FAILED;
		}
		if (fp->probe_status == IBV_WC_SUCCESS) {
			fail("QP %u in ERR: a SEND posted then completed successfully",
			     fp->qp->qp_num);
			return OUT_FAILED;
		}
	}
	if (!has_evidence(fp)) {
		info("QP %u (%s) went to ERR %s without an error completion, "
		     "errno or error event, and with its SQ out of step (kernel "
		     "consumer %u, libsroce's producer %u) no SEND can be flushed",
		     fp->qp->qp_num, type_name(fp->type), when, cons,
		     fp->sq.shadow);
		return OUT_SILENT;
	}
	return OUT_ERR;
}

/* After the settle: ERR with evidence, or a probe through F that works. */
enum outcome judge(struct fpair *fp, unsigned int seq, unsigned int round)
{
	int st = tool_qp_state(fp->qp);
	uint64_t start, id;

	if (st == IBV_QPS_ERR)
		return judge_err(fp, "after the settle");
	if (st != IBV_QPS_RTS) {
		fail("QP %u is in %s after the settle", fp->qp->qp_num,
		     tool_qp_state_name(st));
		return OUT_FAILED;
	}
	id = TAG_PROBE | (uint64_t)seq << 16 | round << 8 | (fp->wr_seq++ & 0xff);
	p_replenish(fp);
	if (!probe_post(fp, id)) {
		if (tool_qp_state(fp->qp) == IBV_QPS_ERR)
			return judge_err(fp, "while the probe was posted");
		fail("QP %u in RTS: the probe SEND could not be posted in %u ms",
		     fp->qp->qp_num, WAIT_MS);
		return OUT_FAILED;
	}
	start = tool_now_ms();
	while (tool_now_ms() - start < WAIT_MS &&
	       !(fp->probe_done && (fp->probe_arrived ||
				    fp->probe_status != IBV_WC_SUCCESS))) {
		poll_all(fp);
		tool_sleep_us(500);
	}
	if (fp->probe_done && fp->probe_status == IBV_WC_SUCCESS &&
	    fp->probe_arrived)
		return OUT_USABLE;
	st = tool_qp_state(fp->qp);
	if (st == IBV_QPS_ERR && (!fp->probe_done ||
				  fp->probe_status != IBV_WC_SUCCESS)) {
		if (!fp->probe_done && !fp->sq.moved) {
			fail("QP %u went to ERR but its probe was never flushed",
			     fp->qp->qp_num);
			return OUT_FAILED;
		}
		return judge_err(fp, "during the probe");
	}
	if (fp->probe_done && fp->probe_status == IBV_WC_SUCCESS)
		fail("QP %u (%s): the probe completed but P (%s) never got it",
		     fp->qp->qp_num, type_name(fp->type),
		     tool_qp_state_name(tool_qp_state(fp->pqp)));
	else if (fp->probe_done)
		fail("QP %u (%s): the probe failed (%s) but F is in %s",
		     fp->qp->qp_num, type_name(fp->type),
		     ibv_wc_status_str(fp->probe_status), tool_qp_state_name(st));
	else
		fail("QP %u (%s) in %s: the probe neither completed nor failed "
		     "in %u ms", fp->qp->qp_num, type_name(fp->type),
		     tool_qp_state_name(st), WAIT_MS);
	return OUT_FAILED;
}

/* ------------------------------------------------------------------ */
/* Resources: what `rdma resource show` says this process holds */

static const char *const res_kinds[] = { "qp", "cq", "mr", "pd", "srq" };
/* A word that starts the object's number on each kind's lines. */
static const char *const res_keys[] = { " lqpn ", " cqn ", " mrn ", " pdn ",
					" srqn " };

/* Count this process's objects on both devices; false if rdma failed. */
bool count_resources(struct counts *c)
{
	static const char cmds[] = "resource show qp\nresource show cq\n"
				   "resource show mr\nresource show pd\n"
				   "resource show srq\n";
	char *argv[] = { "rdma", "-b", "-", NULL };
	posix_spawn_file_actions_t fa;
	int in[2], out[2], status;
	char pid[32], line[1024];
	FILE *f;
	pid_t child;
	unsigned int k;

	memset(c, 0, sizeof(*c));
	beat("%s: rdma resource show", rep.cur);
	if (pipe(in) || pipe(out))
		tool_die("pipe: %s", strerror(errno));
	posix_spawn_file_actions_init(&fa);
	posix_spawn_file_actions_adddup2(&fa, in[0], 0);
	posix_spawn_file_actions_adddup2(&fa, out[1], 1);
	posix_spawn_file_actions_addclose(&fa, in[1]);
	posix_spawn_file_actions_addclose(&fa, out[0]);
	if (posix_spawnp(&child, "rdma", &fa, NULL, argv, environ))
		tool_die("cannot run rdma");
	posix_spawn_file_actions_destroy(&fa);
	close(in[0]);
	close(out[1]);
	if (write(in[1], cmds, sizeof(cmds) - 1) != sizeof(cmds) - 1)
		tool_die("write to rdma: %s", strerror(errno));
	close(in[1]);
	snprintf(pid, sizeof(pid), " pid %d ", (int)getpid());
	f = fdopen(out[0], "r");
	while (fgets(line, sizeof(line), f)) {
		const char *first = NULL, *at;
		int kind = -1;

		if (!strstr(line, pid))
			continue;
		/* An MR's line names its PD too: the first key is the kind. */
		for (k = 0; k < ARRAY_SIZE(res_keys); k++) {
			at = strstr(line, res_keys[k]);
			if (at && (!first || at < first)) {
				first = at;
				kind = k;
			}
		}
		if (kind >= 0)
			c->n[kind]++;
	}
	fclose(f);
	waitpid(child, &status, 0);
	alive();
	return WIFEXITED(status) && !WEXITSTATUS(status);
}

bool counts_equal(const struct counts *a, const struct counts *b,
		  char *buf, size_t len)
{
	size_t o = 0;
	unsigned int k;
	bool eq = true;

	buf[0] = 0;
	for (k = 0; k < ARRAY_SIZE(res_kinds); k++) {
		eq &= a->n[k] == b->n[k];
		o += snprintf(buf + o, o < len ? len - o : 0, "%s%s %d",
			      k ? " " : "", res_kinds[k], b->n[k]);
	}
	return eq;
}

/* After a sequence: nothing of it may be left. */
void check_resources(const char *after)
{
	struct counts now;
	char want[128], got[128];

	if (!count_resources(&now)) {
		fail("rdma resource show failed");
		return;
	}
	counts_equal(&now, &base_counts, want, sizeof(want));
	if (!counts_equal(&base_counts, &now, got, sizeof(got))) {
		fail("after %s this process holds %s, expected %s", after, got,
		     want);
		base_counts = now;	/* report each leak once */
	}
}
