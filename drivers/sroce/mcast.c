// SPDX-License-Identifier: GPL-2.0 OR Linux-OpenIB
/*
 * DOC: Multicast
 *
 * UD QPs join multicast groups with attach_mcast (IBA 10.5.2). On RoCE a
 * group's MGID is an IP multicast address (IPv4-mapped or IPv6, Annex
 * A17.4.5.1). The first QP to attach to a group makes the netdev accept
 * the group's Ethernet address (dev_mc_add(); the IGMP or MLD membership
 * is the consumer's, as rdma_cm does it), and the last one to detach
 * gives it up. A datagram for destination QP 0xFFFFFF is delivered to
 * every QP attached to the group of its destination IP address, each of
 * which checks the Q_Key as for any datagram.
 *
 * Groups are on a per-device list: writers hold mcast_lock (a mutex;
 * attach and detach may sleep), the receive path reads it under RCU.
 */
#include <linux/if_ether.h>
#include <linux/rculist.h>
#include <linux/slab.h>
#include <net/if_inet6.h>
#include <net/ip.h>

#include "device.h"
#include "mcast.h"
#include "params.h"
#include "pkt.h"
#include "qp.h"
#include "qp_core.h"
#include "resp.h"

/**
 * struct sroce_mcg - a multicast group with QPs attached
 * @list: entry in the device's group list
 * @rcu: frees the group after readers are done
 * @mgid: the group
 * @num_qp: entries of @qpn in use
 * @qpn: the attached QPs
 */
struct sroce_mcg {
	struct list_head list;
	struct rcu_head rcu;
	union ib_gid mgid;
	u32 num_qp;
	u32 qpn[SROCE_MAX_MCAST_QP_ATTACH];
};

/* The Ethernet address of a multicast GID (RFC 1112 6.4, RFC 2464 7). */
static void mcast_mac(const union ib_gid *mgid, u8 *mac)
{
	if (ipv6_addr_v4mapped((const struct in6_addr *)mgid->raw))
		ip_eth_mc_map(((const struct in6_addr *)mgid->raw)->s6_addr32[3],
			      mac);
	else
		ipv6_eth_mc_map((const struct in6_addr *)mgid->raw, mac);
}

static bool is_mcast_gid(const union ib_gid *gid)
{
	const struct in6_addr *a = (const struct in6_addr *)gid->raw;

	return ipv6_addr_v4mapped(a) ? ipv4_is_multicast(a->s6_addr32[3]) :
				       ipv6_addr_is_multicast(a);
}

static struct sroce_mcg *find_group(struct sroce_dev *sdev,
				    const union ib_gid *mgid)
{
	struct sroce_mcg *mcg;

	list_for_each_entry_rcu(mcg, &sdev->mcgs, list,
				lockdep_is_held(&sdev->mcast_lock))
		if (!memcmp(mcg->mgid.raw, mgid->raw, sizeof(mgid->raw)))
			return mcg;
	return NULL;
}

static int group_add(struct sroce_dev *sdev, const union ib_gid *mgid,
		     struct sroce_mcg **out)
{
	u8 mac[ETH_ALEN];
	struct sroce_mcg *mcg;
	int err;

	lockdep_assert_held(&sdev->mcast_lock);
	if (sdev->num_mcg >= SROCE_MAX_MCAST_GRP)
		return -ENOMEM;
	mcg = kzalloc(sizeof(*mcg), GFP_KERNEL);
	if (!mcg)
		return -ENOMEM;
	mcg->mgid = *mgid;
	mcast_mac(mgid, mac);
	err = dev_mc_add(sdev->ndev, mac);
	if (err) {
		kfree(mcg);
		return err;
	}
	list_add_tail_rcu(&mcg->list, &sdev->mcgs);
	sdev->num_mcg++;
	*out = mcg;
	return 0;
}

static void group_del(struct sroce_dev *sdev, struct sroce_mcg *mcg)
{
	u8 mac[ETH_ALEN];

	lockdep_assert_held(&sdev->mcast_lock);
	mcast_mac(&mcg->mgid, mac);
	dev_mc_del(sdev->ndev, mac);
	list_del_rcu(&mcg->list);
	sdev->num_mcg--;
	kfree_rcu(mcg, rcu);
}

/**
 * sroce_mcast_attach() - ib_device_ops.attach_mcast
 * @ibqp: a UD QP
 * @mgid: the group: an IP multicast address as a GID
 * @lid: unused on RoCE
 *
 * Attaching a QP twice to a group is not an error.
 *
 * Return: 0, -EINVAL for a QP that is not UD or a GID that is not
 * multicast, -ENOMEM past the device's group or QP limits.
 */
int sroce_mcast_attach(struct ib_qp *ibqp, union ib_gid *mgid, u16 lid)
{
	struct sroce_dev *sdev = to_sdev(ibqp->device);
	struct sroce_mcg *mcg;
	int err = 0;
	u32 i;

	if (ibqp->qp_type != IB_QPT_UD || !is_mcast_gid(mgid))
		return -EINVAL;
	mutex_lock(&sdev->mcast_lock);
	mcg = find_group(sdev, mgid);
	if (!mcg)
		err = group_add(sdev, mgid, &mcg);
	if (err)
		goto out;
	for (i = 0; i < mcg->num_qp; i++)
		if (mcg->qpn[i] == ibqp->qp_num)
			goto out;
	if (mcg->num_qp == SROCE_MAX_MCAST_QP_ATTACH) {
		err = -ENOMEM;
		goto out;
	}
	WRITE_ONCE(mcg->qpn[mcg->num_qp], ibqp->qp_num);
	/* The QP number is in place before readers may see it. */
	smp_store_release(&mcg->num_qp, mcg->num_qp + 1);
out:
	mutex_unlock(&sdev->mcast_lock);
	return err;
}

/**
 * sroce_mcast_detach() - ib_device_ops.detach_mcast
 * @ibqp: the QP
 * @mgid: the group
 * @lid: unused on RoCE
 *
 * Return: 0, or -EINVAL when the QP is not attached to the group.
 */
int sroce_mcast_detach(struct ib_qp *ibqp, union ib_gid *mgid, u16 lid)
{
	struct sroce_dev *sdev = to_sdev(ibqp->device);
	struct sroce_mcg *mcg;
	int err = -EINVAL;
	u32 i;

	mutex_lock(&sdev->mcast_lock);
	mcg = find_group(sdev, mgid);
	for (i = 0; mcg && i < mcg->num_qp; i++) {
		if (mcg->qpn[i] != ibqp->qp_num)
			continue;
		/*
		 * Readers may see the old or the new list; either is a
		 * list of QPs that were attached, and looked up by number.
		 */
		WRITE_ONCE(mcg->qpn[i], mcg->qpn[mcg->num_qp - 1]);
		/* As in attach: entries before the count. */
		smp_store_release(&mcg->num_qp, mcg->num_qp - 1);
		if (!mcg->num_qp)
			group_del(sdev, mcg);
		err = 0;
		break;
	}
	mutex_unlock(&sdev->mcast_lock);
	return err;
}

/* The destination IP address of a received packet, as a GID. */
static void dest_gid(struct sk_buff *skb, union ib_gid *gid)
{
	if (skb->protocol == htons(ETH_P_IP))
		ipv6_addr_set_v4mapped(ip_hdr(skb)->daddr,
				       (struct in6_addr *)gid->raw);
	else
		memcpy(gid->raw, &ipv6_hdr(skb)->daddr, sizeof(gid->raw));
}

/**
 * sroce_mcast_recv() - deliver a datagram to every QP of its group
 * @sdev: the device
 * @skb: a checked UD packet for QP 0xFFFFFF; consumed
 *
 * Context: bottom halves disabled.
 */
void sroce_mcast_recv(struct sroce_dev *sdev, struct sk_buff *skb)
{
	u32 qpn[SROCE_MAX_MCAST_QP_ATTACH];
	bool delivered = false;
	struct sroce_mcg *mcg;
	struct sk_buff *copy;
	union ib_gid mgid;
	struct sroce_qp *qp;
	u32 i, n = 0;

	dest_gid(skb, &mgid);
	rcu_read_lock();
	mcg = find_group(sdev, &mgid);
	if (mcg) {
		/* Pairs with the release of the count in attach and detach. */
		n = smp_load_acquire(&mcg->num_qp);
		for (i = 0; i < n; i++)
			qpn[i] = READ_ONCE(mcg->qpn[i]);
	}
	rcu_read_unlock();

	/* Each QP but the last gets a copy; the last one the packet. */
	for (i = 0; i < n && skb; i++) {
		qp = sroce_qp_get(sdev, qpn[i]);
		if (!qp)
			continue;
		if (READ_ONCE(qp->state) >= IB_QPS_RTR &&
		    READ_ONCE(qp->state) <= IB_QPS_SQE) {
			copy = i + 1 < n ? skb_clone(skb, GFP_ATOMIC) : skb;
			if (copy == skb)
				skb = NULL;
			if (copy) {
				sroce_resp_rcv(qp, copy);
				delivered = true;
			}
		}
		sroce_qp_put(qp);
	}
	if (!skb)
		return;
	if (!delivered)
		sroce_stats_drop(&sdev->stats, SROCE_STAT_RX_DROP_NO_QP);
	kfree_skb(skb);
}

/**
 * sroce_mcast_cleanup() - forget every group (device teardown)
 * @sdev: the device; its QPs are gone
 */
void sroce_mcast_cleanup(struct sroce_dev *sdev)
{
	struct sroce_mcg *mcg, *tmp;

	mutex_lock(&sdev->mcast_lock);
	list_for_each_entry_safe(mcg, tmp, &sdev->mcgs, list)
		group_del(sdev, mcg);
	mutex_unlock(&sdev->mcast_lock);
}
