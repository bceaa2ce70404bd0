// SPDX-License-Identifier: GPL-2.0 OR Linux-OpenIB
/*
 * DOC: Flight bound
 *
 * Each QP's window alone does not keep many QPs from overrunning a link
 * together (64 QPs at the least window of 8 packets are 512 packets in
 * flight). So a device also bounds what its RC and XRC QPs keep
 * unacknowledged together (module parameter "flight", in packets): each
 * send engine counts its QP's unacknowledged packets into the device's
 * total as it goes (flight_set()). Before a packet goes,
 * sroce_flight_hold() decides: a QP sends while the total is below the
 * bound; a QP below its fair share (the bound divided among the QPs with
 * packets in flight, at least SROCE_FLIGHT_MIN_SHARE) always, so that what
 * other QPs keep unacknowledged, for however long, never holds it below
 * its share; and a QP with nothing in flight always sends. A held QP
 * always has a packet in flight whose acknowledgment runs its engine
 * again: the last packet before it is held asks for one. The hardware
 * counter flight_holds counts the holds.
 */
#include <linux/moduleparam.h>
#include <rdma/ib_user_verbs.h>

#include "device.h"
#include "flight.h"
#include "pkt.h"
#include "qp.h"
#include "trace.h"

#define SROCE_FLIGHT_MIN_SHARE	2	/* a QP's least share of the device's flight */

static unsigned int sroce_flight_bound = SROCE_CWND_MAX;
module_param_named(flight, sroce_flight_bound, uint, 0644);
MODULE_PARM_DESC(flight, "RC packets a device's QPs may keep unacknowledged together before a QP past its fair share waits (default 256; 0: no bound)");

/*
 * The PSNs between the QP's oldest unacknowledged one and its send
 * position that stand for READ responses still to come, beyond each
 * READ request's own: the responder's packets, not ours. Only the WQEs
 * up to the last READ or atomic outstanding are looked at.
 */
static u32 read_response_psns(const struct sroce_qp *qp)
{
	const struct sroce_req *req = &qp->req;
	u32 i, resume, left = req->rd_atomic, n = 0;
	const struct sroce_swqe *s;

	for (i = qp->sq.cons; left && i != req->cur; i++) {
		s = sroce_req_swqe(&qp->req, i);
		if (!sroce_wr_is_rd_atomic(s->opcode))
			continue;
		left--;
		if (s->opcode != IB_UVERBS_WR_RDMA_READ ||
		    s->state == SROCE_SWQE_DONE)
			continue;
		resume = sroce_psn_add(s->first_psn, s->read_off / qp->mtu);
		/* Its request went (again) from @resume: the rest is theirs. */
		if (sroce_psn_diff(req->psn, resume) > 0)
			n += sroce_psn_diff(s->last_psn, resume);
	}
	return n;
}

/*
 * What the QP counts in its device's flight: nothing unless RC or XRC;
 * its packets sent and not yet acknowledged, as far as it knows (after a
 * rewind, those sent before it are counted again only as they are
 * resent), at most SROCE_CWND_MAX. A READ request counts as the one
 * packet it is: its responses are the responder's to send (until
 * 2026-11-28 they counted in full, up to 256, for as long as they did
 * not come). None while its transport timer is infinite (local ACK
 * timeout 0), since such a QP may keep its packets unacknowledged for
 * ever.
 */
static u32 flight_of(const struct sroce_qp *qp)
{
	const struct sroce_req *req = &qp->req;
	s32 used = sroce_psn_diff(req->psn, req->unacked_psn);

	if (!sroce_qp_is_reliable(qp) || !req->retry.timeout || used <= 0)
		return 0;
	if (req->rd_atomic)
		used -= min_t(u32, read_response_psns(qp), used);
	return min_t(u32, used, SROCE_CWND_MAX);
}

/*
 * Count @now packets of the QP in its device's flight (see the top of this
 * file): the engine's own count, so only the engine or a caller that
 * stopped it may change it.
 */
static void flight_set(struct sroce_qp *qp, u32 now)
{
	struct sroce_dev *sdev = to_sdev(qp->ibqp.device);
	struct sroce_req *req = &qp->req;

	if (now == req->flight)
		return;
	if (!req->flight)
		atomic_inc(&sdev->req_active);
	else if (!now)
		atomic_dec(&sdev->req_active);
	atomic_add((int)(now - req->flight), &sdev->req_flight);
	req->flight = now;
}

/**
 * sroce_flight_hold() - may the QP's next packet go?
 * @qp: the QP; called by its send engine, with a packet ready to go
 *
 * Decides whether the device's bound holds back the QP's next packet, and
 * counts a hold. Any QP sends while the device's
 * total is below the bound, and a QP below its fair share (the bound
 * divided among the QPs with packets counted, at least
 * SROCE_FLIGHT_MIN_SHARE) always: what other QPs keep unacknowledged, for
 * however long, never holds it below its share. A QP is held only once
 * its last packet asked for an acknowledgment, else one more goes, asking
 * for one: that acknowledgment runs the engine again.
 *
 * Return: true to hold it.
 */
bool sroce_flight_hold(struct sroce_qp *qp)
{
	struct sroce_dev *sdev = to_sdev(qp->ibqp.device);
	u32 bound = READ_ONCE(sroce_flight_bound);
	struct sroce_req *req = &qp->req;
	u32 used, active, total;

	used = flight_of(qp);
	flight_set(qp, used);
	if (!bound)
		return false;
	active = max(atomic_read(&sdev->req_active), 1);
	total = max(atomic_read(&sdev->req_flight), 0);
	if (total < bound || used < max(bound / active, SROCE_FLIGHT_MIN_SHARE))
		return false;
	if (!req->ackreq_last) {
		req->ack_now = true;
		return false;
	}
	sroce_stats_add(&sdev->stats, SROCE_STAT_FLIGHT_HOLDS, 1);
	trace_sroce_flight_hold(qp, req->psn, used, total);
	return true;
}

/**
 * sroce_flight_update() - count what the QP has in flight now
 * @qp: the QP; called by its send engine
 */
void sroce_flight_update(struct sroce_qp *qp)
{
	flight_set(qp, flight_of(qp));
}

/**
 * sroce_flight_clear() - take the QP's packets out of its device's flight
 * @qp: the QP; called by its send engine, or with the engine stopped
 */
void sroce_flight_clear(struct sroce_qp *qp)
{
	flight_set(qp, 0);
}
