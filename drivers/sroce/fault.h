/* SPDX-License-Identifier: GPL-2.0 OR Linux-OpenIB */
#ifndef SROCE_FAULT_H
#define SROCE_FAULT_H

#include <linux/skbuff.h>
#include <linux/spinlock.h>
#include <linux/timer.h>

struct dentry;
struct sroce_dev;

/**
 * enum sroce_fault_kind - the faults a device can be told to inject
 * @SROCE_FAULT_TX_DROP: a packet sent is lost
 * @SROCE_FAULT_TX_DUP: a packet sent arrives twice
 * @SROCE_FAULT_TX_REORDER: a packet sent is overtaken by later ones
 * @SROCE_FAULT_TX_CORRUPT: a packet sent is damaged on the way
 * @SROCE_FAULT_RX_DROP: a packet received is lost
 * @SROCE_FAULT_RX_DUP: a packet received arrives twice
 * @SROCE_FAULT_RX_REORDER: a packet received is overtaken by later ones
 * @SROCE_FAULT_RX_CORRUPT: a packet received was damaged on the way
 * @SROCE_FAULT_ALLOC: allocating a packet buffer fails
 * @SROCE_FAULT_NUM: number of kinds
 */
enum sroce_fault_kind {
	SROCE_FAULT_TX_DROP,
	SROCE_FAULT_TX_DUP,
	SROCE_FAULT_TX_REORDER,
	SROCE_FAULT_TX_CORRUPT,
	SROCE_FAULT_RX_DROP,
	SROCE_FAULT_RX_DUP,
	SROCE_FAULT_RX_REORDER,
	SROCE_FAULT_RX_CORRUPT,
	SROCE_FAULT_ALLOC,
	SROCE_FAULT_NUM,
};

/**
 * struct sroce_fault - a device's fault injection (fault.c)
 * @rate: how often each kind strikes, in parts per million; set through
 *	  debugfs, read locklessly
 * @hits: how often each kind struck
 * @lock: protects @held_tx, @held_rx and @dead
 * @held_tx: packets sent, held back to be reordered
 * @held_rx: packets received, held back to be reordered
 * @timer: releases what is held
 * @dead: the device is going away: nothing more is held
 * @resp_hold: the responders of the device's QPs take no request: they
 *	       wait in the QPs' queues, bounded by the backlog parameter;
 *	       set through debugfs, read locklessly
 * @req_hold: the send engines of the device's QPs do not run (in RTS and
 *	      SQD): responses wait in their queues, timers expire; set
 *	      through debugfs, read locklessly
 * @ack_hold: the responders of the device's QPs keep the ACK they owe at
 *	      the end of a run in their tasklet, as an inline run does,
 *	      until a later response or the QP's stop sends it; set
 *	      through debugfs, read locklessly
 * @tx_drop_next: the next this many packets sent are dropped (counted in
 *		  @hits as tx_drop); set through debugfs
 * @dir: the device's debugfs directory
 */
struct sroce_fault {
	u32 rate[SROCE_FAULT_NUM];
	atomic64_t hits[SROCE_FAULT_NUM];
	spinlock_t lock;	/* see above */
	struct sk_buff_head held_tx;
	struct sk_buff_head held_rx;
	struct timer_list timer;
	bool dead;
	bool resp_hold;
	bool req_hold;
	bool ack_hold;
	atomic_t tx_drop_next;
	struct dentry *dir;
};

/**
 * enum sroce_fault_verdict - what to do with a packet
 * @SROCE_FAULT_PASS: go on with it
 * @SROCE_FAULT_TAKEN: the fault code consumed it (dropped or held back)
 */
enum sroce_fault_verdict {
	SROCE_FAULT_PASS,
	SROCE_FAULT_TAKEN,
};

void sroce_fault_init(struct sroce_dev *sdev);
void sroce_fault_publish(struct sroce_dev *sdev);
void sroce_fault_fini(struct sroce_dev *sdev);
bool sroce_fault_alloc(struct sroce_dev *sdev);
bool sroce_fault_req_held(struct sroce_dev *sdev);
bool sroce_fault_resp_held(struct sroce_dev *sdev);
bool sroce_fault_ack_held(struct sroce_dev *sdev);
enum sroce_fault_verdict sroce_fault_tx(struct sroce_dev *sdev,
					struct sk_buff *skb, bool loop);
enum sroce_fault_verdict sroce_fault_rx(struct sroce_dev *sdev,
					struct sk_buff *skb);
/**
 * struct sroce_fault_ops - where fault injection delivers packets
 * @output: send a packet, IP header on, as one that passed sroce_fault_tx()
 * @input: take a packet in, as one that passed sroce_fault_rx()
 */
struct sroce_fault_ops {
	void (*output)(struct sroce_dev *sdev, struct sk_buff *skb);
	void (*input)(struct sroce_dev *sdev, struct sk_buff *skb);
};

void sroce_fault_module_init(const struct sroce_fault_ops *fops);
void sroce_fault_module_exit(void);

extern bool sroce_fault_engines_inline;
extern u32 sroce_fault_error_delay_us;
extern atomic_t sroce_fault_refused_scheds;

void sroce_fault_error_delay(void);
void sroce_fault_access_delay(void);
void sroce_fault_stale_access(void);

#endif /* SROCE_FAULT_H */
