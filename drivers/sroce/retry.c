// SPDX-License-Identifier: GPL-2.0 OR Linux-OpenIB
/*
 * DOC: Loss recovery
 *
 * This file owns the requester's loss-recovery state (struct
 * sroce_retry): the retry budgets, the transport and RNR timers, the
 * tail-loss probe and the round-trip estimate. The other parts of the send
 * engine only report to it what happened: a packet sent for the first
 * time (build.c), packets acknowledged, a loss found by a NAK, an RNR NAK
 * (comp.c), and the timers' expiry, which the engine picks up as events
 * (comp.c again). Only the send engine runs it, so it needs no lock
 * (task.c); the timers only set an event bit and schedule the engine.
 *
 * The transport timer (local ACK timeout, IBA 9.7.6.1.3) restarts on
 * every acknowledged progress; when it fires the requester resends from
 * the oldest unacknowledged PSN, up to retry_cnt times. Going back is
 * go-back-N: every WQE from the lost PSN on is sent again with the PSNs
 * it had (IBA 9.7.4.1.3). A sequence NAK also uses a retry; any
 * acknowledged progress restores them. Consecutive timeouts double the
 * wait (the local ACK timeout is a minimum). An RNR NAK makes the
 * requester wait for the timer the NAK names (IBA 9.7.5.2.8, table 45)
 * and resend, rnr_retry times (7: without limit). A loss also shrinks the
 * congestion window (cwnd.c).
 *
 * Tail loss: a sequence NAK reports a lost packet only when a later one
 * arrives. When the last packets before a pause are lost (the end of a
 * burst that overflowed a link's buffer, or of the last message), nothing
 * follows them and only the transport timer would notice, a full local
 * ACK timeout later (67 ms at perftest's default, a second at rdma_cm's).
 * As TCP's RACK-TLP does (RFC 8985, 7), the timer first fires after a
 * probe timeout of twice the smoothed round trip (at least two ticks,
 * measured from AckReq packets sent once, RFC 6298's smoothing): the
 * requester then sends its oldest unacknowledged packet and its last
 * packet again, both asking for an acknowledgment (probe() says what
 * each reveals). A probe is neither a retry nor a loss by itself: it
 * uses no retry and leaves the window as it is; a sequence NAK it brings
 * is a loss as any other. One probe per wait; the timer then runs for
 * the rest of the local ACK timeout, so that a probe never delays it. The
 * probe timeout runs from the last packet sent for the first time (RFC
 * 8985, 7.2), so a QP still sending new packets is not probed. No probe
 * while a READ or atomic is outstanding: their requests are not probed
 * (the response is the acknowledgment, and a repeated request would be
 * executed again up to the responder's resources), and a peer's ACK of a
 * probed duplicate could cover a READ whose response is on its way, an
 * implied NAK (IBA 9.7.5.2.1) that would resend the READ for nothing.
 */
#include <linux/jiffies.h>
#include <linux/ktime.h>
#include <linux/math64.h>
#include <linux/moduleparam.h>
#include <rdma/ib_user_verbs.h>

#include "build.h"
#include "device.h"
#include "pkt.h"
#include "qp.h"
#include "retry.h"
#include "trace.h"

#define SROCE_RETRY_MIN_PTO_MS	10	/* a probe timeout's least */
#define SROCE_RETRY_MAX_RTO_MS	1000	/* a round trip lengthens the timer to this */

static bool sroce_retry_tail_probe = true;
module_param_named(tail_probe, sroce_retry_tail_probe, bool, 0644);
MODULE_PARM_DESC(tail_probe, "RC tail-loss probes: 1 (the default) or 0; read when the transport timer is armed");

/* RNR NAK timer codes in microseconds (IBA 9.7.5.2.8, table 45). */
static const u32 rnr_usec[32] = {
	655360, 10, 20, 30, 40, 60, 80, 120, 160, 240, 320, 480, 640, 960,
	1280, 1920, 2560, 3840, 5120, 7680, 10240, 15360, 20480, 30720,
	40960, 61440, 81920, 122880, 163840, 245760, 327680, 491520,
};

/*
 * Resend from @psn (a NAK, an RNR NAK or a timeout): the requester goes
 * back (build.c), and a round-trip sample whose packet is sent again
 * measures nothing (Karn's rule, RFC 6298, 3).
 */
static void rewind(struct sroce_qp *qp, u32 psn)
{
	struct sroce_retry *rt = &qp->req.retry;

	psn = sroce_build_rewind(qp, psn);
	if (rt->rtt_busy && sroce_psn_diff(psn, rt->rtt_psn) <= 0)
		rt->rtt_busy = false;
}

/*
 * The tail-loss probe, when the probe timeout fired: two packets again, with
 * AckReq. The oldest unacknowledged packet, then the last one sent (one packet
 * if they are the same). A responder that had both acknowledges again. If the
 * last ones were lost, the first is a duplicate (acknowledged: what arrived is
 * done) and the second out of sequence (a sequence NAK: go back from the first
 * lost). If the responder's sequence NAK was lost, it drops everything out of
 * sequence without a word until its expected PSN comes (IBA 9.7.5.1.1): the
 * first probe is that PSN, and the second, out of sequence again, gets a new
 * NAK. See the top of this file. Nothing while a READ or atomic is outstanding
 * (see probe_timeout()). Returns the number of packets sent.
 */
static int probe(struct sroce_qp *qp)
{
	struct sroce_req *req = &qp->req;
	struct sroce_retry *rt = &req->retry;
	u32 last = sroce_psn_add(req->psn, SROCE_PSN_MASK);	/* psn - 1 */
	int n = 0;

	if (req->psn == req->unacked_psn || rt->rnr_wait || req->rd_atomic)
		return 0;
	/* An ACK a probe brings says nothing of the sample's packet. */
	rt->rtt_busy = false;
	n += sroce_build_probe(qp, req->unacked_psn);
	if (last != req->unacked_psn)
		n += sroce_build_probe(qp, last);
	trace_sroce_tail_probe(qp, req->unacked_psn, n, 0);
	return n;
}

/*
 * The packets before @psn are acknowledged: end the round-trip sample
 * running, if it covers its packet, and smooth it into srtt_us and
 * rttvar_us (RFC 6298, 2: an eighth of each new sample, and a quarter of
 * its deviation). Returns whether a sample ended.
 */
static bool rtt_sample(struct sroce_qp *qp, u32 psn)
{
	struct sroce_retry *rt = &qp->req.retry;
	u64 us, dev;

	if (!rt->rtt_busy || sroce_psn_diff(psn, rt->rtt_psn) <= 0)
		return false;
	rt->rtt_busy = false;
	us = div_u64(ktime_get_ns() - rt->rtt_start, NSEC_PER_USEC);
	us = clamp_t(u64, us, 1, U32_MAX / 8);
	if (!rt->srtt_us) {
		rt->srtt_us = us;
		rt->rttvar_us = us / 2;
	} else {
		dev = us > rt->srtt_us ? us - rt->srtt_us : rt->srtt_us - us;
		rt->rttvar_us = rt->rttvar_us - (rt->rttvar_us >> 2) +
				(dev >> 2);
		rt->srtt_us = rt->srtt_us - (rt->srtt_us >> 3) + (us >> 3);
	}
	rt->srtt_us = max(rt->srtt_us, 1U);
	return true;
}

/* The round trip's part of the timer (RFC 6298, 2), in microseconds. */
static u64 rtt_rto_us(const struct sroce_req *req)
{
	const struct sroce_retry *rt = &req->retry;
	/* At least a quarter of the round trip: a steady one has no deviation. */
	return rt->srtt_us + max(4 * (u64)rt->rttvar_us,
				  (u64)rt->srtt_us / 4);
}

/*
 * The retransmission timeout, in jiffies (0 when the local ACK timeout is
 * infinite): the local ACK timeout, or longer when the round trip
 * measured says the acknowledgments take longer (RFC 6298, 2: srtt + 4
 * rttvar, at least srtt / 4 more than srtt, here at most
 * SROCE_RETRY_MAX_RTO_MS). The IBA's timeout
 * is the least a requester waits (9.7.6.1.3); on a slow link many QPs together
 * fill the queues until the round trip exceeds it, and a timer that fired then
 * would resend what is only late, and spend the retries of a QP that lost
 * nothing.
 */
static unsigned long retrans_timeout(const struct sroce_req *req)
{
	const struct sroce_retry *rt = &req->retry;
	u64 us;

	if (!rt->timeout || !rt->srtt_us)
		return rt->timeout;
	us = min_t(u64, rtt_rto_us(req), SROCE_RETRY_MAX_RTO_MS * USEC_PER_MSEC);
	return max(rt->timeout, usecs_to_jiffies(us));
}

/*
 * The transport timer's wait after rt->backoff timeouts in a row: the
 * local ACK timeout doubled for each, as always; the round trip's longer wait
 * doubled too, but never past SROCE_RETRY_MAX_RTO_MS: it only keeps the timer
 * from firing at acknowledgments on their way, and must not make a dead peer
 * take minutes to find.
 */
static unsigned long timer_wait(const struct sroce_req *req)
{
	const struct sroce_retry *rt = &req->retry;
	unsigned long cap = msecs_to_jiffies(SROCE_RETRY_MAX_RTO_MS);

	return max(rt->timeout << rt->backoff,
		   min(retrans_timeout(req) << rt->backoff, cap));
}

/*
 * The probe timeout (RFC 8985, 7.2): twice the smoothed round trip, half
 * the local ACK timeout before the first sample, at least
 * SROCE_RETRY_MIN_PTO_MS (and two ticks). 0, no probe: when it would not
 * come well before the transport timer, and while a READ or atomic is
 * outstanding (their requests are not probed, and a peer's duplicate ACK
 * could look like an implied NAK for a READ whose response is on its
 * way).
 */
static unsigned long probe_timeout(struct sroce_req *req)
{
	struct sroce_retry *rt = &req->retry;
	unsigned long pto;

	if (rt->probed || rt->backoff || !rt->timeout ||
	    req->rd_atomic || !READ_ONCE(sroce_retry_tail_probe))
		return 0;
	pto = rt->srtt_us ? usecs_to_jiffies(2 * rt->srtt_us) :
				   rt->timeout / 2;
	pto = max3(pto, msecs_to_jiffies(SROCE_RETRY_MIN_PTO_MS), 2UL);
	return 2 * pto <= retrans_timeout(req) ? pto : 0;
}

/**
 * sroce_retry_arm() - (re)start the transport timer from now
 * @qp: the QP; called by its send engine, with packets outstanding
 *
 * For the probe timeout while the probe of this wait has not gone, else
 * for the retransmission timeout (retrans_timeout(): at least the local ACK
 * timeout), doubled for each timeout in a row (timer_wait()). Nothing
 * when the timeout is infinite.
 */
void sroce_retry_arm(struct sroce_qp *qp)
{
	struct sroce_req *req = &qp->req;
	struct sroce_retry *rt = &req->retry;
	unsigned long pto = probe_timeout(req);

	if (!rt->timeout)
		return;
	rt->probe_armed = pto != 0;
	rt->pto = pto;
	mod_timer(&rt->timer,
		  jiffies + (pto ?: timer_wait(req)));
}

/**
 * sroce_retry_sent() - a packet went
 * @qp: the QP; called by its send engine
 * @out: what sroce_build_send() said of it
 *
 * From a packet sent for the first time the probe timeout runs (RFC 8985,
 * 7.2), and a round trip may be measured.
 */
void sroce_retry_sent(struct sroce_qp *qp, const struct sroce_build_sent *out)
{
	struct sroce_retry *rt = &qp->req.retry;

	if (!out->first)
		return;
	rt->tx_jiffies = jiffies;
	if (out->sample && !rt->rtt_busy) {
		rt->rtt_busy = true;
		rt->rtt_psn = out->psn;
		rt->rtt_start = ktime_get_ns();
	}
}

/**
 * sroce_retry_wait() - packets may be outstanding: the timer runs for them
 * @qp: the QP; called by its send engine after it sent
 */
void sroce_retry_wait(struct sroce_qp *qp)
{
	struct sroce_req *req = &qp->req;
	struct sroce_retry *rt = &req->retry;

	if (req->next_psn != req->unacked_psn &&
	    !timer_pending(&rt->timer))
		sroce_retry_arm(qp);
}

/**
 * sroce_retry_acked() - the packets before a PSN are acknowledged
 * @qp: the QP; called by its send engine once unacked_psn moved to @psn
 * @psn: the first PSN not acknowledged
 *
 * Progress restores both retry budgets (IBA 9.7.6.1.3, 9.7.5.2.8), ends
 * a round-trip sample, and restarts the transport timer or stops it when
 * nothing is outstanding. A resend under way need not repeat what is
 * acknowledged meanwhile: it goes on from @psn.
 */
void sroce_retry_acked(struct sroce_qp *qp, u32 psn)
{
	struct sroce_req *req = &qp->req;
	struct sroce_retry *rt = &req->retry;

	rt->left = qp->attr.retry_cnt;
	rt->rnr_left = qp->attr.rnr_retry;
	rt->retrying = false;
	/*
	 * The timer's backoff stays while only what a timeout sent again is
	 * acknowledged (Karn's rule, RFC 6298, 5.7): such an acknowledgment
	 * may be the original's, late because the round trip exceeds the
	 * timer, and the short timer back would time out again, and again,
	 * and no round trip could be measured. A packet sent once after the
	 * timeout acknowledged ends it (a round trip measured is one). Until
	 * then the next wait has no tail probe and a longer timer: after a
	 * loss, for the next message or window at most.
	 */
	if (rtt_sample(qp, psn) ||
	    sroce_psn_diff(psn, rt->timeout_high) > 0)
		rt->backoff = 0;
	rt->probed = false;		/* a new wait, a new probe */
	if (req->next_psn == psn)
		timer_delete(&rt->timer);
	else
		sroce_retry_arm(qp);
	if (sroce_psn_diff(psn, req->psn) > 0)
		rewind(qp, psn);
}

/**
 * sroce_retry_loss() - a packet was lost: resend from it
 * @qp: the QP; called by its send engine, with a WQE outstanding
 * @psn: the lost PSN (a sequence NAK's, an implied NAK's, or the oldest
 *	 unacknowledged one on a timeout)
 * @timeout: the transport timer found it
 *
 * Go-back-N (IBA 9.7.6.1.3): everything from @psn on is sent again. So
 * while a resend has made no progress yet, a sequence error or implied
 * NAK at or after the PSN we went back to asks for nothing new (a
 * duplicated NAK, responses reordered or already in flight, a second
 * loss the resend covers): it neither resends again nor uses up a retry.
 * A timeout always does.
 *
 * Return: false when no retry is left: the oldest WQE fails with
 * IB_WC_RETRY_EXC_ERR (the caller completes it).
 */
bool sroce_retry_loss(struct sroce_qp *qp, u32 psn, bool timeout)
{
	struct sroce_req *req = &qp->req;
	struct sroce_retry *rt = &req->retry;

	if (!timeout && rt->retrying &&
	    sroce_psn_diff(psn, rt->psn) >= 0)
		return true;
	if (!rt->left) {
		trace_sroce_give_up(qp, psn, timeout, 0);
		return false;
	}
	rt->left--;
	trace_sroce_retry(qp, psn, timeout, rt->left);
	rt->retrying = true;
	rt->psn = psn;
	sroce_cwnd_loss(&req->win, timeout);
	if (timeout) {
		rt->backoff = min_t(u8, rt->backoff + 1, 7);
		rt->timeout_high = req->tx_high;
	}
	sroce_stats_add(&to_sdev(qp->ibqp.device)->stats,
			SROCE_STAT_RETRANSMITS, 1);
	rewind(qp, psn);
	return true;
}

/**
 * sroce_retry_hold() - responses from a PSN on are to be sent again
 * @qp: the QP; called by its send engine
 * @psn: the first PSN whose response was dropped
 *
 * The completer dropped a response because its local memory was not
 * mapped (on-demand paging: comp.c) and resends when the fault ends
 * (sroce_retry_fault()). Meanwhile the responses after it, which now look
 * lost, spend no retry: as after a resend, a loss at @psn or later is
 * already being recovered. The transport timer still runs.
 */
void sroce_retry_hold(struct sroce_qp *qp, u32 psn)
{
	struct sroce_retry *rt = &qp->req.retry;

	rt->retrying = true;
	rt->psn = psn;
}

/**
 * sroce_retry_fault() - send again from a PSN, a fault having ended
 * @qp: the QP; called by its send engine
 * @psn: the PSN sroce_retry_hold() was given
 *
 * Nothing was lost on the network, so no retry is spent and the window
 * stays as it is: the requester goes back to @psn and sends again.
 */
void sroce_retry_fault(struct sroce_qp *qp, u32 psn)
{
	struct sroce_retry *rt = &qp->req.retry;

	rt->retrying = true;
	rt->psn = psn;
	sroce_stats_add(&to_sdev(qp->ibqp.device)->stats,
			SROCE_STAT_RETRANSMITS, 1);
	rewind(qp, psn);
}

/**
 * sroce_retry_rnr() - an RNR NAK: wait, then resend from its PSN
 * @qp: the QP; called by its send engine, with a WQE outstanding
 * @psn: the NAK's PSN
 * @timer: the NAK's timer code (IBA 9.7.5.2.8, table 45)
 *
 * Return: false when no RNR retry is left: the oldest WQE fails with
 * IB_WC_RNR_RETRY_EXC_ERR (the caller completes it).
 */
bool sroce_retry_rnr(struct sroce_qp *qp, u32 psn, u8 timer)
{
	struct sroce_retry *rt = &qp->req.retry;

	if (!rt->rnr_left) {
		trace_sroce_give_up(qp, psn, 2, 0);
		return false;
	}
	if (rt->rnr_left != 7)
		rt->rnr_left--;
	trace_sroce_rnr_wait(qp, psn, rnr_usec[timer & 31], rt->rnr_left);
	rewind(qp, psn);
	/*
	 * The packets after @psn that were in flight meet the responder out
	 * of sequence, and a sequence NAK may follow: that loss is this
	 * resend's to recover, not a retry's (an ODP fault's RNR NAK is
	 * routine, datapath.md).
	 */
	rt->retrying = true;
	rt->psn = psn;
	rt->rnr_wait = true;
	timer_delete(&rt->timer);
	mod_timer(&rt->rnr_timer,
		  jiffies + max(usecs_to_jiffies(rnr_usec[timer & 31]), 1UL));
	return true;
}

/**
 * sroce_retry_rnr_over() - the RNR timer expired: sending may go on
 * @qp: the QP; called by its send engine
 */
void sroce_retry_rnr_over(struct sroce_qp *qp)
{
	qp->req.retry.rnr_wait = false;
}

/**
 * sroce_retry_timed_out() - the transport timer expired
 * @qp: the QP; called by its send engine
 *
 * If the probe timeout expired, sends the tail-loss probe and lets the
 * rest of the retransmission timeout run.
 *
 * Return: true when a timeout is a loss to recover from (the caller
 * resends from the oldest unacknowledged PSN with sroce_retry_loss()).
 */
bool sroce_retry_timed_out(struct sroce_qp *qp)
{
	struct sroce_req *req = &qp->req;
	struct sroce_retry *rt = &req->retry;
	unsigned long rto;

	/* Armed again since it fired (progress meanwhile): nothing to do. */
	if (timer_pending(&rt->timer))
		return false;
	if (rt->rnr_wait || req->next_psn == req->unacked_psn)
		return false;
	if (rt->probe_armed) {
		/* The probe timeout runs from the last new packet sent. */
		if (time_before(jiffies, rt->tx_jiffies + rt->pto)) {
			mod_timer(&rt->timer,
				  rt->tx_jiffies + rt->pto);
			return false;
		}
		/*
		 * Probe; the retransmission timeout's rest follows, if any
		 * is left: a timeout shortened in SQD since the probe was
		 * armed (IBA 11.2.4.2) may be shorter than the probe's.
		 */
		rt->probe_armed = false;
		rt->probed = true;
		sroce_stats_add(&to_sdev(qp->ibqp.device)->stats,
				SROCE_STAT_TAIL_PROBES, probe(qp));
		rto = retrans_timeout(req);
		mod_timer(&rt->timer, jiffies + (rto > rt->pto ?
							rto - rt->pto : 1));
		return false;
	}
	sroce_stats_add(&to_sdev(qp->ibqp.device)->stats,
			SROCE_STAT_TIMEOUTS, 1);
	trace_sroce_timeout(qp, req->unacked_psn, rt->backoff, 0);
	return true;
}

/**
 * sroce_retry_cancel() - the QP failed: no timer is to fire for it
 * @qp: the QP; called by its send engine
 */
void sroce_retry_cancel(struct sroce_qp *qp)
{
	timer_delete(&qp->req.retry.timer);
}

/* A stopped engine is not scheduled; it finds the event when it starts. */
static void retrans_timer_fn(struct timer_list *t)
{
	struct sroce_qp *qp = timer_container_of(qp, t, req.retry.timer);

	set_bit(SROCE_QP_EV_TIMEOUT, &qp->events);
	sroce_task_sched(&qp->req.task);
}

static void rnr_timer_fn(struct timer_list *t)
{
	struct sroce_qp *qp = timer_container_of(qp, t, req.retry.rnr_timer);

	set_bit(SROCE_QP_EV_RNR, &qp->events);
	sroce_task_sched(&qp->req.task);
}

/**
 * sroce_retry_init() - set up the timers of a new QP
 * @qp: the QP
 */
void sroce_retry_init(struct sroce_qp *qp)
{
	timer_setup(&qp->req.retry.timer, retrans_timer_fn, 0);
	timer_setup(&qp->req.retry.rnr_timer, rnr_timer_fn, 0);
}

/**
 * sroce_retry_stop() - stop the timers
 * @qp: the QP, its send engine stopped
 *
 * Only a run of the engine arms them, and none runs once the engine is
 * stopped, so they stay stopped.
 *
 * Context: process.
 */
void sroce_retry_stop(struct sroce_qp *qp)
{
	timer_delete_sync(&qp->req.retry.timer);
	timer_delete_sync(&qp->req.retry.rnr_timer);
}

/* A new connection: no probe, no round-trip sample; @psn is the first. */
static void probe_reset(struct sroce_retry *rt, u32 psn)
{
	rt->timeout_high = psn;
	rt->probed = false;
	rt->probe_armed = false;
	rt->pto = 0;
	rt->tx_jiffies = 0;
	rt->rtt_busy = false;
	rt->rtt_psn = 0;
	rt->rtt_start = 0;
	rt->srtt_us = 0;
	rt->rttvar_us = 0;
}

/**
 * sroce_retry_reset() - forget everything (the QP entered RESET)
 * @qp: the QP, its send engine stopped
 *
 * Nothing of the last connection's loss recovery carries over.
 */
void sroce_retry_reset(struct sroce_qp *qp)
{
	struct sroce_retry *rt = &qp->req.retry;

	rt->left = 0;
	rt->retrying = false;
	rt->psn = 0;
	rt->rnr_left = 0;
	rt->rnr_wait = false;
	rt->backoff = 0;
	probe_reset(rt, 0);
	clear_bit(SROCE_QP_EV_TIMEOUT, &qp->events);
	clear_bit(SROCE_QP_EV_RNR, &qp->events);
}

/* Local ACK timeout, 4.096 us * 2^timeout (IBA 9.7.6.1.3); 0: infinite. */
static unsigned long timeout_jiffies(u8 timeout)
{
	u64 ns;

	if (!timeout)
		return 0;
	ns = 4096ULL << min_t(u8, timeout, 31);
	return max(nsecs_to_jiffies64(ns), 1ULL);
}

/**
 * sroce_retry_start() - take the attributes the QP has on entering RTS
 * @qp: the QP; its modify mutex is held
 */
void sroce_retry_start(struct sroce_qp *qp)
{
	struct sroce_retry *rt = &qp->req.retry;

	lockdep_assert_held(&qp->mutex);
	rt->left = qp->attr.retry_cnt;
	rt->retrying = false;
	rt->rnr_left = qp->attr.rnr_retry;
	rt->rnr_wait = false;
	rt->timeout = timeout_jiffies(qp->attr.timeout);
	rt->backoff = 0;
	probe_reset(rt, qp->attr.sq_psn);
}

/**
 * sroce_retry_update() - take loss-recovery attributes changed after RTS
 * @qp: the QP; its modify mutex is held and its send engine stopped
 * @mask: the attributes that changed (enum ib_qp_attr_mask)
 *
 * A QP in SQD may be given a new local ACK timeout and retry counts (IBA
 * 11.2.4.2, table 91): they apply from now on, with full retry budgets,
 * as on entering RTS. A new path's round trip is not the old one's.
 */
void sroce_retry_update(struct sroce_qp *qp, int mask)
{
	struct sroce_retry *rt = &qp->req.retry;

	lockdep_assert_held(&qp->mutex);
	if (mask & IB_QP_TIMEOUT) {
		rt->timeout = timeout_jiffies(qp->attr.timeout);
		rt->backoff = 0;
	}
	if (mask & IB_QP_AV) {
		rt->srtt_us = 0;
		rt->rttvar_us = 0;
		rt->rtt_busy = false;
	}
	if (mask & IB_QP_RETRY_CNT)
		rt->left = qp->attr.retry_cnt;
	if (mask & IB_QP_RNR_RETRY)
		rt->rnr_left = qp->attr.rnr_retry;
}
