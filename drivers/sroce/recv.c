// SPDX-License-Identifier: GPL-2.0 OR Linux-OpenIB
/*
 * DOC: Receive dispatch
 *
 * Every RoCEv2 packet for a device arrives here from its namespace's UDP
 * socket, in softirq context under rcu_read_lock(). Until the requester,
 * responder and completer exist, the dispatcher counts each packet and
 * drops it.
 */
#include <linux/skbuff.h>
#include <linux/udp.h>

#include "device.h"
#include "recv.h"

/**
 * sroce_recv_skb() - take one received packet
 * @sdev: the device whose netdev received it
 * @skb: the packet; skb->data points at the UDP header. Consumed.
 */
void sroce_recv_skb(struct sroce_dev *sdev, struct sk_buff *skb)
{
	sroce_stats_add(&sdev->stats, SROCE_STAT_RX_PACKETS, 1);
	sroce_stats_add(&sdev->stats, SROCE_STAT_RX_BYTES,
			skb->len > sizeof(struct udphdr) ?
			skb->len - sizeof(struct udphdr) : 0);
	sroce_stats_add(&sdev->stats, SROCE_STAT_RX_DROP_NO_DATAPATH, 1);
	sroce_stats_add(&sdev->stats, SROCE_STAT_RX_DROPPED, 1);
	kfree_skb(skb);
}
