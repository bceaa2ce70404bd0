// SPDX-License-Identifier: GPL-2.0 OR Linux-OpenIB
/*
 * DOC: Fault injection
 *
 * For tests, in the style of netdevsim: every device has knobs in
 * debugfs, /sys/kernel/debug/sroce/<device>/, that make it lose,
 * duplicate, reorder or damage a chosen fraction of the packets it sends
 * and receives, and fail packet buffer allocations, so that every
 * recovery path of the transport can be driven on purpose:
 *
 * - tx_drop, tx_dup, tx_reorder, tx_corrupt, rx_drop, rx_dup, rx_reorder,
 *   rx_corrupt, alloc_fail: parts per million (0, the default, is off;
 *   1000000 is every packet);
 * - tx_drop_next: the next N packets the device sends are dropped, all
 *   of them (so that a test can lose exactly the last packets of a
 *   message, which tx_drop's chance cannot promise);
 * - hits (read only): how many faults of each kind were injected;
 * - resp_hold (Y/N): the responders of the device's QPs take no request
 *   while it is Y, so that a test can fill a QP's request queue up to its
 *   bound (the backlog parameter) whatever the speed of the host; after N
 *   a responder runs again with its QP's next packet;
 * - req_hold (Y/N): the send engines of the device's QPs do not run while
 *   it is Y, so responses wait in their queues and timers expire meanwhile,
 *   as behind an engine that runs late on a loaded host; after N an engine
 *   runs again at its QP's next event (a packet, a doorbell, a timer);
 * - ack_hold (Y/N): the responders keep the ACK they owe at the end of a
 *   run in their tasklet too, as they do at the end of an inline run
 *   until the tasklet comes, so that a test can end a QP (destroy,
 *   reset, error) with an ACK pending whatever the speed of the host; a
 *   later response or the QP's end sends it (N releases nothing by
 *   itself).
 *
 * A damaged packet has one byte after its UDP header flipped once its
 * ICRC is computed, as a wire would damage it, so the receiver's ICRC
 * check drops it; between two QPs of one host, which carry no ICRC, it is
 * dropped instead. A reordered packet is held back until the next packet
 * in the same direction has passed it (or, if none comes, the next timer
 * tick); loopback packets are not held.
 *
 * Three knobs for the whole module, in /sys/kernel/debug/sroce/, widen
 * race windows for tests: engines_inline (Y, the default; N runs every
 * engine in its tasklet, never inline in the caller), error_delay_us (a
 * busy wait, at most 10 ms, in the responder's error path) and
 * access_delay_us (a busy wait, at most 10 ms, between the check of an
 * access to a fast-registration MR and its copy, counted in
 * access_delays). And two counters: refused_scheds, the requests to run
 * or schedule an engine that were refused because the engine was stopped
 * (task.c), so that a test can tell that it made a dying QP's engine wake
 * the other one; and stale_accesses, the accesses to a fast-registration
 * MR refused at the copy because the MR had been invalidated or
 * registered anew since their check (mem.c).
 *
 * Injected faults are counted in hits, not in the device's drop counters:
 * to the transport they look like what the network did.
 */
#include <linux/debugfs.h>
#include <linux/delay.h>
#include <linux/random.h>
#include <linux/seq_file.h>

#include "compat.h"
#include "device.h"
#include "fault.h"
#include "pkt.h"

#define SROCE_FAULT_MAX_DELAY_US	10000

static const char *const fault_names[SROCE_FAULT_NUM] = {
	[SROCE_FAULT_TX_DROP] = "tx_drop",
	[SROCE_FAULT_TX_DUP] = "tx_dup",
	[SROCE_FAULT_TX_REORDER] = "tx_reorder",
	[SROCE_FAULT_TX_CORRUPT] = "tx_corrupt",
	[SROCE_FAULT_RX_DROP] = "rx_drop",
	[SROCE_FAULT_RX_DUP] = "rx_dup",
	[SROCE_FAULT_RX_REORDER] = "rx_reorder",
	[SROCE_FAULT_RX_CORRUPT] = "rx_corrupt",
	[SROCE_FAULT_ALLOC] = "alloc_fail",
};

static struct dentry *fault_root;
/* Set once at module load, before any device exists. */
static const struct sroce_fault_ops *ops;

/* Run every engine in its tasklet when false (task.c). */
bool sroce_fault_engines_inline = true;
/* Microseconds the responder waits in its error path (resp.c). */
u32 sroce_fault_error_delay_us;
/* Microseconds an access to a fast-registration MR waits (mem.c). */
static u32 access_delay_us;
static atomic_t access_delays = ATOMIC_INIT(0);
/* Accesses refused at the copy: their MR registered anew (mem.c). */
static atomic_t stale_accesses = ATOMIC_INIT(0);
/* Requests to run a stopped engine, refused (task.c). */
atomic_t sroce_fault_refused_scheds = ATOMIC_INIT(0);

/* Does fault @kind strike now? */
static bool strikes(struct sroce_dev *sdev, enum sroce_fault_kind kind)
{
	u32 rate = READ_ONCE(sdev->fault.rate[kind]);

	if (likely(!rate) || get_random_u32() % 1000000 >= rate)
		return false;
	atomic64_inc(&sdev->fault.hits[kind]);
	return true;
}

/* Flip one byte after the UDP header (@from: where that byte range starts). */
static void corrupt(struct sk_buff *skb, unsigned int from)
{
	unsigned int off;

	if (skb->len <= from || skb_ensure_writable(skb, skb->len))
		return;
	off = from + get_random_u32() % (skb->len - from);
	skb->data[off] ^= 1 << (get_random_u32() % 8);
}

/* Hold @skb back until the next tick, unless the device is going. */
static void hold(struct sroce_dev *sdev, struct sk_buff *skb,
		 struct sk_buff_head *queue)
{
	struct sroce_fault *f = &sdev->fault;
	unsigned long flags;

	spin_lock_irqsave(&f->lock, flags);
	if (f->dead) {
		spin_unlock_irqrestore(&f->lock, flags);
		kfree_skb(skb);
		return;
	}
	__skb_queue_tail(queue, skb);
	if (!timer_pending(&f->timer))
		mod_timer(&f->timer, jiffies + 1);
	spin_unlock_irqrestore(&f->lock, flags);
}

/* Take what @queue holds into @list. */
static void take_held(struct sroce_dev *sdev, struct sk_buff_head *queue,
		      struct sk_buff_head *list)
{
	unsigned long flags;

	__skb_queue_head_init(list);
	if (skb_queue_empty_lockless(queue))
		return;
	spin_lock_irqsave(&sdev->fault.lock, flags);
	skb_queue_splice_init(queue, list);
	spin_unlock_irqrestore(&sdev->fault.lock, flags);
}

/*
 * Deliver @skb (sent or received, as @deliver does), if any, then what
 * @queue held back to come after it.
 */
static void deliver_then_held(struct sroce_dev *sdev, struct sk_buff *skb,
			      struct sk_buff_head *queue,
			      void (*deliver)(struct sroce_dev *sdev,
					      struct sk_buff *skb))
{
	struct sk_buff_head list;

	take_held(sdev, queue, &list);
	if (skb)
		deliver(sdev, skb);
	while ((skb = __skb_dequeue(&list)))
		deliver(sdev, skb);
}

/* No packet came to pass what is held: let it go now. */
static void release_held(struct timer_list *t)
{
	struct sroce_dev *sdev = timer_container_of(sdev, t, fault.timer);

	rcu_read_lock();
	deliver_then_held(sdev, NULL, &sdev->fault.held_tx, ops->output);
	deliver_then_held(sdev, NULL, &sdev->fault.held_rx, ops->input);
	rcu_read_unlock();
}

/**
 * sroce_fault_alloc() - should allocating a packet buffer fail?
 * @sdev: the device
 *
 * Return: true to fail it.
 */
bool sroce_fault_alloc(struct sroce_dev *sdev)
{
	return strikes(sdev, SROCE_FAULT_ALLOC);
}

/**
 * sroce_fault_tx() - faults for a packet about to leave
 * @sdev: the sending device
 * @skb: the packet, from its IP header on, ICRC computed and route set
 * @loop: it goes to a device of this host, without ICRC
 *
 * May send a copy first (the output of the fault ops), damage the
 * packet, or take it: drop it, hold it back, or send it and then what it
 * overtook.
 *
 * Context: bottom halves disabled, in an RCU read-side section.
 * Return: what the caller does with @skb.
 */
enum sroce_fault_verdict sroce_fault_tx(struct sroce_dev *sdev,
					struct sk_buff *skb, bool loop)
{
	struct sk_buff *copy;

	if (unlikely(atomic_read(&sdev->fault.tx_drop_next) > 0) &&
	    atomic_dec_if_positive(&sdev->fault.tx_drop_next) >= 0) {
		atomic64_inc(&sdev->fault.hits[SROCE_FAULT_TX_DROP]);
		kfree_skb(skb);
		return SROCE_FAULT_TAKEN;
	}
	if (strikes(sdev, SROCE_FAULT_TX_DROP) ||
	    (loop && strikes(sdev, SROCE_FAULT_TX_CORRUPT))) {
		kfree_skb(skb);
		return SROCE_FAULT_TAKEN;
	}
	if (!loop && strikes(sdev, SROCE_FAULT_TX_CORRUPT))
		corrupt(skb, skb_transport_offset(skb) + sizeof(struct udphdr));
	if (!loop && strikes(sdev, SROCE_FAULT_TX_DUP)) {
		copy = skb_copy(skb, GFP_ATOMIC);
		if (copy)
			ops->output(sdev, copy);
	}
	if (!loop && strikes(sdev, SROCE_FAULT_TX_REORDER)) {
		hold(sdev, skb, &sdev->fault.held_tx);
		return SROCE_FAULT_TAKEN;
	}
	/* A loopback packet has no route of its own: it passes nothing. */
	if (loop || skb_queue_empty_lockless(&sdev->fault.held_tx))
		return SROCE_FAULT_PASS;
	deliver_then_held(sdev, skb, &sdev->fault.held_tx, ops->output);
	return SROCE_FAULT_TAKEN;
}

/**
 * sroce_fault_rx() - faults for a packet just received
 * @sdev: the receiving device
 * @skb: the packet, skb->data at its BTH, sroce_pkt(skb)->loopback set
 *
 * May hand a copy to the input of the fault ops first, damage the
 * packet, or take it: drop it, hold it back, or take it in and then what
 * it overtook.
 *
 * Context: bottom halves disabled, in an RCU read-side section.
 * Return: what the caller does with @skb.
 */
enum sroce_fault_verdict sroce_fault_rx(struct sroce_dev *sdev,
					struct sk_buff *skb)
{
	bool loop = sroce_pkt(skb)->loopback;
	struct sk_buff *copy;

	if (strikes(sdev, SROCE_FAULT_RX_DROP) ||
	    (loop && strikes(sdev, SROCE_FAULT_RX_CORRUPT))) {
		kfree_skb(skb);
		return SROCE_FAULT_TAKEN;
	}
	if (!loop && strikes(sdev, SROCE_FAULT_RX_CORRUPT))
		corrupt(skb, 0);
	if (strikes(sdev, SROCE_FAULT_RX_DUP)) {
		copy = skb_copy(skb, GFP_ATOMIC);
		if (copy)
			ops->input(sdev, copy);
	}
	if (!loop && strikes(sdev, SROCE_FAULT_RX_REORDER)) {
		hold(sdev, skb, &sdev->fault.held_rx);
		return SROCE_FAULT_TAKEN;
	}
	if (loop || skb_queue_empty_lockless(&sdev->fault.held_rx))
		return SROCE_FAULT_PASS;
	deliver_then_held(sdev, skb, &sdev->fault.held_rx, ops->input);
	return SROCE_FAULT_TAKEN;
}

static int hits_show(struct seq_file *m, void *v)
{
	struct sroce_fault *f = m->private;
	int i;

	for (i = 0; i < SROCE_FAULT_NUM; i++)
		seq_printf(m, "%s %lld\n", fault_names[i],
			   atomic64_read(&f->hits[i]));
	return 0;
}
DEFINE_SHOW_ATTRIBUTE(hits);

/**
 * sroce_fault_init() - a new device injects no fault
 * @sdev: the device
 */
void sroce_fault_init(struct sroce_dev *sdev)
{
	struct sroce_fault *f = &sdev->fault;

	spin_lock_init(&f->lock);
	skb_queue_head_init(&f->held_tx);
	skb_queue_head_init(&f->held_rx);
	atomic_set(&f->tx_drop_next, 0);
	timer_setup(&f->timer, release_held, 0);
}

/**
 * sroce_fault_publish() - give a registered device its debugfs knobs
 * @sdev: the device, with its name
 */
void sroce_fault_publish(struct sroce_dev *sdev)
{
	struct sroce_fault *f = &sdev->fault;
	int i;

	f->dir = debugfs_create_dir(dev_name(&sdev->ibdev.dev), fault_root);
	for (i = 0; i < SROCE_FAULT_NUM; i++)
		debugfs_create_u32(fault_names[i], 0600, f->dir, &f->rate[i]);
	debugfs_create_file("hits", 0400, f->dir, f, &hits_fops);
	debugfs_create_bool("resp_hold", 0600, f->dir, &f->resp_hold);
	debugfs_create_bool("req_hold", 0600, f->dir, &f->req_hold);
	debugfs_create_bool("ack_hold", 0600, f->dir, &f->ack_hold);
	debugfs_create_atomic_t("tx_drop_next", 0600, f->dir, &f->tx_drop_next);
	/* Not a fault: what the device's RC requesters have in flight. */
	debugfs_create_atomic_t("flight", 0400, f->dir, &sdev->req_flight);
}

/**
 * sroce_fault_req_held() - may the device's send engines run?
 * @sdev: the device
 *
 * Return: true while a test holds them (req_hold).
 */
bool sroce_fault_req_held(struct sroce_dev *sdev)
{
	return READ_ONCE(sdev->fault.req_hold);
}

/**
 * sroce_fault_resp_held() - may the device's responders take requests?
 * @sdev: the device
 *
 * Return: true while a test holds them (resp_hold).
 */
bool sroce_fault_resp_held(struct sroce_dev *sdev)
{
	return READ_ONCE(sdev->fault.resp_hold);
}

/**
 * sroce_fault_ack_held() - must the device's responders keep their ACKs?
 * @sdev: the device
 *
 * Return: true while a test holds them (ack_hold).
 */
bool sroce_fault_ack_held(struct sroce_dev *sdev)
{
	return READ_ONCE(sdev->fault.ack_hold);
}

/**
 * sroce_fault_fini() - stop injecting, free what is held back
 * @sdev: the device, unregistered; packets may still be on their way in
 *	  under RCU, and are then dropped
 */
void sroce_fault_fini(struct sroce_dev *sdev)
{
	struct sroce_fault *f = &sdev->fault;
	struct sk_buff_head list;

	debugfs_remove_recursive(f->dir);
	f->dir = NULL;
	/*
	 * Take what is held under the lock that every taker holds: a
	 * receiver still on its way in finds the queues empty, and holds
	 * nothing more once dead is set. Nothing arms the timer then.
	 */
	__skb_queue_head_init(&list);
	spin_lock_irq(&f->lock);
	f->dead = true;
	skb_queue_splice_init(&f->held_tx, &list);
	skb_queue_splice_init(&f->held_rx, &list);
	spin_unlock_irq(&f->lock);
	timer_delete_sync(&f->timer);
	__skb_queue_purge(&list);
}

/**
 * sroce_fault_module_init() - the module's debugfs directory and knobs
 * @fops: where packets go that a fault sends again, duplicates or held
 *	  back: the same paths as the packets that pass (net.c's output,
 *	  recv.c's input); fault.c itself calls nothing above it
 */
void sroce_fault_module_init(const struct sroce_fault_ops *fops)
{
	ops = fops;
	fault_root = debugfs_create_dir("sroce", NULL);
	debugfs_create_bool("engines_inline", 0600, fault_root,
			    &sroce_fault_engines_inline);
	debugfs_create_u32("error_delay_us", 0600, fault_root,
			   &sroce_fault_error_delay_us);
	debugfs_create_u32("access_delay_us", 0600, fault_root,
			   &access_delay_us);
	debugfs_create_atomic_t("access_delays", 0400, fault_root,
				&access_delays);
	debugfs_create_atomic_t("stale_accesses", 0400, fault_root,
				&stale_accesses);
	debugfs_create_atomic_t("refused_scheds", 0400, fault_root,
				&sroce_fault_refused_scheds);
}

/**
 * sroce_fault_module_exit() - remove the module's debugfs directory
 */
void sroce_fault_module_exit(void)
{
	debugfs_remove_recursive(fault_root);
}

/* Busy-wait @us microseconds, at most SROCE_FAULT_MAX_DELAY_US. */
static void fault_delay(u32 us)
{
	udelay(min_t(u32, us, SROCE_FAULT_MAX_DELAY_US));
}

/**
 * sroce_fault_error_delay() - wait in an error path, if asked to
 *
 * Context: any; it busy-waits.
 */
void sroce_fault_error_delay(void)
{
	u32 us = READ_ONCE(sroce_fault_error_delay_us);

	if (us)
		fault_delay(us);
}

/**
 * sroce_fault_access_delay() - wait between an access's check and its
 * copy, if asked to
 *
 * Called for fast-registration MRs only (mem.c), whose registration can
 * change meanwhile.
 *
 * Context: any; it busy-waits.
 */
void sroce_fault_access_delay(void)
{
	u32 us = READ_ONCE(access_delay_us);

	if (likely(!us))
		return;
	atomic_inc(&access_delays);
	fault_delay(us);
}

/**
 * sroce_fault_stale_access() - count an access refused at the copy
 *
 * Context: any.
 */
void sroce_fault_stale_access(void)
{
	atomic_inc(&stale_accesses);
}
