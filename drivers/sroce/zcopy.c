// SPDX-License-Identifier: GPL-2.0 OR Linux-OpenIB
/*
 * DOC: Payload without a copy
 *
 * A user QP's RC and XRC requests may carry their payload as the MR's own
 * pages, attached to the packet (sroce_mem_attach()), rather than copied
 * into it. The process may write to that memory again as soon as the WQE
 * completes, so no packet may read it afterwards: a packet that still
 * waits in a qdisc, a NIC's ring or a capture's queue would otherwise
 * carry whatever the process wrote next (perhaps another client's data)
 * to the peer, under an ICRC computed over what the memory held before.
 * An acknowledgment does not prove that: a peer may acknowledge a message
 * while resends of it, queued after a sequence NAK, still wait to leave.
 *
 * So each such packet holds a count on its WQE, through the network
 * stack's zero-copy reference (struct ubuf_info, as MSG_ZEROCOPY and
 * vhost-net use): the count drops when the stack frees the packet, or
 * copies its fragments first, which it does before a packet may wait
 * without bound (a clone handed to a capture, a packet forwarded to
 * another namespace or looped back into the receive path; see
 * skb_orphan_frags()). The WQE keeps one count of its own until it is
 * finished (acknowledged, failed or flushed, sroce_zcopy_release()), so
 * that the last count, and @done with it, falls only when both the WQE
 * is finished and its last packet is gone. The completer writes the
 * WQE's completion only then (sroce_zcopy_wait()); the callback that
 * drops the last count runs the send engine again if it waits.
 *
 * Where the stack copies the fragments anyway (a packet forwarded into
 * another namespace's receive path, as over a veth, or looped back:
 * skb_orphan_frags_rx()), attaching costs more than sroce's own copy
 * into the packet: the stack allocates pages and copies, and the WQE's
 * completion waits for it. The callback says so (as MSG_ZEROCOPY reports
 * SO_EE_CODE_ZEROCOPY_COPIED to a process), and the QP then copies its
 * payloads itself until its path is set again (RTS, or a new path in
 * SQD), which sroce_req_start() and sroce_req_update() do.
 *
 * A QP leaves no packet behind that could call back into it: entering
 * RESET and destroy wait until every count of every WQE has fallen
 * (sroce_zcopy_drain()), so the QP, and the module, outlive its packets.
 */
#include <linux/moduleparam.h>
#include <linux/wait_bit.h>

#include "compat.h"
#include "device.h"
#include "qp.h"
#include "req.h"
#include "zcopy.h"

static unsigned int sroce_zcopy_min = 1024;
module_param_named(zcopy, sroce_zcopy_min, uint, 0644);
MODULE_PARM_DESC(zcopy, "Least payload, in bytes, that a user QP's RC request sends from the MR's pages instead of a copy (default 1024; 0: always copy)");

/**
 * sroce_zcopy_ok() - may a packet attach its payload rather than copy it?
 * @qp: the QP
 * @s: the WQE
 * @paylen: the packet's payload bytes
 *
 * Payloads of at least module parameter "zcopy" bytes from the SGEs of a
 * user QP's RC or XRC request: only a reliable QP's WQE waits for an
 * acknowledgment, so only there does finishing a WQE come after its
 * packets were built, and only a user MR's pages are attached (kernel
 * users' memory is copied, sroce_mem_attach()). Not once the stack copied
 * a packet's pages on the QP's path (see the top of this file).
 *
 * Return: true to attach.
 */
bool sroce_zcopy_ok(const struct sroce_qp *qp, const struct sroce_swqe *s,
		    u32 paylen)
{
	u32 min = READ_ONCE(sroce_zcopy_min);

	return min && paylen >= min && s->num_sge && qp->ibqp.uobject &&
	       sroce_qp_is_reliable(qp) && !READ_ONCE(qp->req.zcopy_copied);
}

/*
 * The last count fell: the WQE may complete. @zc is not touched after.
 * The engine runs again only if the completer waits for it: mostly the
 * packet is gone before the acknowledgment comes, and an engine run for
 * each WQE would cost more than the copy it saves.
 */
static void zcopy_done(struct sroce_zcopy *zc)
{
	struct sroce_qp *qp = zc->qp;

	/* Pairs with zcopy_busy(): the slot may be reused from here. */
	smp_store_release(&zc->done, true);
	smp_mb();	/* done before waiting: pairs with sroce_zcopy_wait() */
	if (READ_ONCE(qp->req.zcopy_waiting))
		sroce_task_sched(&qp->req.task);
	/* The QP stays until this falls to zero (sroce_zcopy_drain()). */
	if (atomic_dec_and_test(&qp->req.zcopy_live))
		wake_up_var(&qp->req.zcopy_live);
}

/*
 * ubuf_info's completion: a packet was freed (@success), or its fragments
 * copied. A copy says that attaching gains nothing on this path.
 */
static void zcopy_complete(struct sk_buff *skb, struct ubuf_info *ubuf,
			   bool success)
{
	struct sroce_zcopy *zc = container_of(ubuf, struct sroce_zcopy, ubuf);

	if (!success) {
		sroce_stats_add(&to_sdev(zc->qp->ibqp.device)->stats,
				SROCE_STAT_TX_ZCOPY_COPIED, 1);
		if (!READ_ONCE(zc->qp->req.zcopy_copied))
			WRITE_ONCE(zc->qp->req.zcopy_copied, true);
	}
	if (refcount_dec_and_test(&ubuf->refcnt))
		zcopy_done(zc);
}

static const struct ubuf_info_ops zcopy_ops = {
	.complete = zcopy_complete,
};

/**
 * sroce_zcopy_attach() - count a packet that carries a WQE's pages
 * @qp: the QP; called by its send engine
 * @zc: the WQE's zero-copy state
 * @skb: the packet, its payload just attached
 *
 * The first packet since the WQE was fetched starts the count, with the
 * WQE's own reference.
 */
void sroce_zcopy_attach(struct sroce_qp *qp, struct sroce_zcopy *zc,
			struct sk_buff *skb)
{
	if (!zc->armed) {
		sroce_ubuf_init(&zc->ubuf, &zcopy_ops);
		/* SKBFL_SHARED_FRAG too: nothing may write to the pages. */
		zc->ubuf.flags = SKBFL_ZEROCOPY_FRAG;
		refcount_set(&zc->ubuf.refcnt, 1);
		zc->qp = qp;
		zc->released = false;
		zc->done = false;
		zc->armed = true;
		atomic_inc(&qp->req.zcopy_live);
	}
	skb_zcopy_set(skb, &zc->ubuf, NULL);
}

/**
 * sroce_zcopy_release() - a WQE is finished: no packet of it will be built
 * @zc: its zero-copy state
 *
 * Drops the WQE's own count. Called by the send engine, or with it
 * stopped.
 */
void sroce_zcopy_release(struct sroce_zcopy *zc)
{
	if (!zc->armed || zc->released)
		return;
	zc->released = true;
	if (refcount_dec_and_test(&zc->ubuf.refcnt))
		zcopy_done(zc);
}

/* Does a packet still hold a finished WQE's pages? */
static bool zcopy_busy(const struct sroce_zcopy *zc)
{
	/* Pairs with zcopy_done(): nothing of it reads the slot after. */
	return zc->armed && !smp_load_acquire(&zc->done);
}

/**
 * sroce_zcopy_wait() - may the completer go past a finished WQE?
 * @qp: the QP; called by its send engine
 * @zc: the WQE's zero-copy state, released
 *
 * If a packet still holds the WQE's pages, asks for its release to run
 * the engine again.
 *
 * Return: true while a packet holds them: the completer stops here.
 */
bool sroce_zcopy_wait(struct sroce_qp *qp, const struct sroce_zcopy *zc)
{
	if (!zcopy_busy(zc))
		return false;
	WRITE_ONCE(qp->req.zcopy_waiting, true);
	smp_mb();	/* waiting before done: pairs with zcopy_done() */
	return zcopy_busy(zc);
}

/**
 * sroce_zcopy_drain() - wait until no packet holds a WQE's pages
 * @qp: the QP, its send engine stopped (reset or destroy)
 *
 * Releases every WQE the requester took, then waits for the stack to free
 * or copy their packets: for as long as a qdisc or a ring keeps them, at
 * most a moment on a working link.
 *
 * Context: process.
 */
void sroce_zcopy_drain(struct sroce_qp *qp)
{
	struct sroce_req *req = &qp->req;
	u32 i;

	might_sleep();
	for (i = qp->sq.cons; i != req->next; i++)
		sroce_zcopy_release(&sroce_req_swqe(&qp->req, i)->zcopy);
	wait_var_event(&req->zcopy_live, !atomic_read(&req->zcopy_live));
}
