// SPDX-License-Identifier: GPL-2.0 OR Linux-OpenIB
/*
 * Events: the asynchronous events of both devices, a device going away,
 * and the events this tool raises on a pair under traffic (destroys,
 * deregistrations, the SQD dance, resets).
 */
#include "stress.h"

/* ------------------------------------------------------------------ */
/* Asynchronous events */

void drain_events(void)
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

bool removed_now(void)
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
bool removal_explains(void)
{
	uint64_t t0 = tool_now_ms();

	while (!removed_now() && tool_now_ms() - t0 < removal_ms)
		tool_sleep_us(10000);
	return removed;
}

/* ------------------------------------------------------------------ */
/* Events */

/* With --verbose, once a second: what is in flight on each pair. */
static void progress(void)
{
	static uint64_t last;
	unsigned int i, k, na, nb;

	if (!verbose || tool_now_ms() - last < 1000)
		return;
	last = tool_now_ms();
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

void traffic_step(void)
{
	unsigned int i;

	progress();
	for (i = 0; i < npairs; i++) {
		struct pair *p = &pairs[i];

		if (!p->alive)
			continue;
		post_all(p);
		poll_pair(p);
	}
	drain_events();
}

void disturb(struct pair *p)
{
	p->disturbed = true;
	p->disturbed_at = tool_now_ms();
}

/* Destroy @whose QP *@qp of @p under traffic: it must work. */
static void destroy_qp(struct pair *p, struct ibv_qp **qp, const char *whose)
{
	int err = ibv_destroy_qp(*qp);

	if (err)
		fail("pair %u (%s): destroying %s QP under traffic: %s", p->n,
		     kind_names[p->kind], whose, strerror(err));
	*qp = NULL;
}

static void ev_qp_responder(struct pair *p)
{
	destroy_qp(p, &p->bqp, "the responder's");
	disturb(p);
}

static void ev_qp_requester(struct pair *p)
{
	destroy_qp(p, &p->aqp, "the requester's");
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

/* A modify of the SQD dance: it works, or the QP failed meanwhile. */
static bool sqd_modify(struct pair *p, struct ibv_qp *qp, struct ibv_qp_attr *a,
		       int mask, const char *what)
{
	int err = modify_av(qp, a, mask);

	if (!err)
		return true;
	if (tool_qp_state(qp) == IBV_QPS_ERR || removal_explains()) {
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
		t0 = tool_now_ms();
		while (p->drained != 3 && tool_now_ms() - t0 < WAIT_MS && !p->dead &&
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
	p->disturbed_at = tool_now_ms();	/* for the message: when it began */
	/*
	 * Resumed, or failed cleanly, by when: the transport timer's
	 * doublings through every retry (4.096 us << timeout each, at
	 * least 1 ms), and 10 s to spare.
	 */
	p->sqd_deadline = tool_now_ms() + 10000;
	for (s = 0; s < 2; s++) {
		uint64_t ms = ((4096ULL << a[s].timeout) / 1000000 + 1) *
			      ((2ULL << a[s].retry_cnt) - 1);

		if (p->sqd_deadline < tool_now_ms() + 10000 + ms)
			p->sqd_deadline = tool_now_ms() + 10000 + ms;
	}
}

/* Both QPs of @p to @a's state (@name); false, the pair disturbed, if not. */
static bool both_to(struct pair *p, struct ibv_qp_attr *a, const char *name)
{
	if (!ibv_modify_qp(p->aqp, a, IBV_QP_STATE) &&
	    !ibv_modify_qp(p->bqp, a, IBV_QP_STATE))
		return true;
	if (!removal_explains())
		fail("pair %u: modify to %s failed", p->n, name);
	disturb(p);
	return false;
}

/* Both QPs to ERR, every work request flushed, RESET, connected again. */
static void ev_reset(struct pair *p)
{
	struct ibv_qp_attr a = { .qp_state = IBV_QPS_ERR };
	uint32_t psn_ab = rnd(1 << 24), psn_ba = rnd(1 << 24);
	unsigned int i, left;
	uint64_t t0;

	p->grace_until = ~0ULL;
	if (!both_to(p, &a, "ERR"))
		return;
	t0 = tool_now_ms();
	do {
		left = poll_pair(p);
	} while (left && tool_now_ms() - t0 < WAIT_MS && !removed_now());
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
	if (!both_to(p, &a, "RESET"))
		return;
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
	p->grace_until = tool_now_ms() + 500;
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

void do_event(void)
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
