// SPDX-License-Identifier: GPL-2.0 OR Linux-OpenIB
/*
 * Random sequences: a fresh F/P pair each, rounds of random steps at a
 * hostility level, judged after each round.
 */
#include "ringfuzz.h"

/* ------------------------------------------------------------------ */
/* Random sequences */

static uint64_t seq_seed(unsigned int seq)
{
	uint64_t r = run_seed ^ (0x5851f42d4c957f2dULL * (seq + 1));

	return tool_rng_next(&r);
}

/*
 * The ring operations of each hostility level, cumulative:
 * 0: what the kernel must not even notice: free slots rewritten, the
 *    indices the kernel owns scribbled on, the CQ's consumer moved back
 *    a little, doorbells; 1: WQEs rewritten after posting and written
 *    past libsroce, the CQ's consumer moved anywhere; 2: producer
 *    indices moved anywhere.
 */
static void ring_step(struct fpair *fp)
{
	static void (*const ops[])(struct fpair *) = {
		sq_rewrite_free, rq_rewrite_free, kernel_scribble, cq_nudge,
		sq_rewrite, sq_rewrite, rq_rewrite, sq_inject, rq_inject, cq_move,
		sq_move, sq_move, rq_move,
	};
	static const unsigned int upto[] = { 4, 10, ARRAY_SIZE(ops) };

	ops[rnd(upto[fp->hostility])](fp);
}

/* One random step on F, P, their rings, the doorbells or the control. */
static void step(struct fpair *fp)
{
	unsigned int r = rnd(100);

	fp->steps++;
	if (r < 14)
		f_post_send(fp);
	else if (r < 22)
		f_post_recv(fp, TAG_FRECV | ++fp->wr_seq);
	else if (r < 30)
		p_post_send(fp);
	else if (r < 37)
		poll_all(fp);
	else if (r < 78)
		ring_step(fp);
	else if (r < 87)
		doorbell_any(fp);
	else if (r < 93)
		tool_sleep_us(rnd(3000));
	else if (ctl.in_flight)
		control_finish();
	else
		control_start();
}

static void reset_round(struct fpair *fp)
{
	fp->probe_id = 0;
	fp->probe_done = fp->probe_arrived = false;
	fp->err_cqes = fp->db_errnos = fp->err_events = 0;
	fp->qp_fatal = fp->srq_err = fp->cq_err = 0;
	fp->sq.moved = fp->rq.moved = fp->cqr.moved = false;
	fp->ring_ops = fp->doorbells = fp->steps = 0;
}

static void run_sequence(unsigned int seq)
{
	struct qp_params p = { .timeout = 14, .retry_cnt = 5, .rnr_retry = 3,
			       .min_rnr_timer = 1 };
	static const char *const outs[] = { "usable", "ERR", "FAILED",
					    "SILENT ERR" };
	uint64_t seed = seq_seed(seq), t0 = tool_now_ms();
	unsigned int round, nrounds, i, nsteps, before = rep.failures;
	enum outcome out = OUT_USABLE;
	bool destroyed = false, use_srq;
	unsigned int hostility;
	enum ibv_qp_type type;
	struct fpair fp;
	char line[1024], ev[96], name[32];
	size_t o;

	snprintf(name, sizeof(name), "seq %u", seq);
	rep.cur = name;
	R = seed;
	data_rng = seed ^ 0xda7a;
	type = rnd(10) < 6 ? IBV_QPT_RC : rnd(2) ? IBV_QPT_UC : IBV_QPT_UD;
	use_srq = chance(40);
	nrounds = 1 + rnd(3);
	hostility = rnd(10) < 3 ? 0 : rnd(2) + 1;
	if (inject_stall && seq == first_seq) {
		beat("%s: --inject stall", rep.cur);
		sleep(stall_s + 10);
	}
	pair_up(&fp, type, use_srq, &p);
	fp.hostility = hostility;
	o = snprintf(line, sizeof(line), "seq %u seed %#" PRIx64 " %s %s "
		     "hostility %u:", seq, seed, type_name(type),
		     use_srq ? "srq" : "rq", hostility);
	for (round = 1; round <= nrounds; round++) {
		reset_round(&fp);
		nsteps = 4 + rnd(28);
		for (i = 0; i < nsteps; i++)
			step(&fp);
		total_ring_ops += fp.ring_ops;
		o += snprintf(line + o, sizeof(line) - o,
			      " round %u: %u steps %u ring ops %u doorbells",
			      round, fp.steps, fp.ring_ops, fp.doorbells);
		if (chance(12)) {
			control_finish();
			pair_down(&fp, inject_leak && seq == first_seq);
			destroyed = true;
			o += snprintf(line + o, sizeof(line) - o,
				      " -> destroyed mid-flight");
			total_doorbells += fp.doorbells;
			break;
		}
		settle(&fp);
		out = judge(&fp, seq, round);
		total_doorbells += fp.doorbells;
		evidence(&fp, ev, sizeof(ev));
		o += snprintf(line + o, sizeof(line) - o, " -> %s%s%s%s",
			      outs[out], out == OUT_ERR ? " (" : "",
			      out == OUT_ERR ? ev : "", out == OUT_ERR ? ")" : "");
		if (o >= sizeof(line))
			o = sizeof(line) - 1;
		control_round();
		if (out != OUT_USABLE)
			break;
	}
	if (!destroyed)
		pair_down(&fp, inject_leak && seq == first_seq);
	n_seq++;
	n_destroyed += destroyed;
	n_usable += !destroyed && out == OUT_USABLE;
	n_err += !destroyed && out == OUT_ERR;
	if (!destroyed && out == OUT_SILENT && !n_silent++)
		first_silent = seq;
	check_resources(name);
	printf("%s (%.1f s)%s\n", line, (tool_now_ms() - t0) / 1000.0,
	       rep.failures != before ? " FAIL" : "");
}

/* ------------------------------------------------------------------ */

void case_random(void)
{
	unsigned int seq;

	for (seq = first_seq; seq < first_seq + iterations; seq++)
		run_sequence(seq);
	rep.cur = "random";
	if (n_silent)
		fail("%u of %u sequences left F in ERR without an error completion, "
		     "errno or error event for it (the kernel saw the corruption and "
		     "said nothing), the first: seq %u", n_silent, n_seq,
		     first_silent);
}
