// SPDX-License-Identifier: GPL-2.0 OR Linux-OpenIB
/*
 * DOC: Address vectors and handles
 *
 * On RoCE every address vector carries a GRH (IBA Annex A17.4.5.1): its
 * source GID, from the port's GID table, fixes the IP version and source
 * address; its destination GID is the destination IP address (IPv4 as an
 * IPv4-mapped IPv6 address). The RDMA core resolves the destination MAC
 * before calling us.
 */
#include <linux/ip.h>
#include <net/ipv6.h>
#include <rdma/ib_cache.h>
#include <rdma/sroce-abi.h>

#include "ah.h"
#include "device.h"

/**
 * sroce_av_from_attr() - check an address vector and resolve it
 * @av: result
 * @attr: the consumer's attributes, with sgid_attr set by the RDMA core
 *
 * Return: 0, or -EINVAL when the attributes cannot address a RoCEv2 peer.
 */
int sroce_av_from_attr(struct sroce_av *av, const struct rdma_ah_attr *attr)
{
	const struct ib_global_route *grh = rdma_ah_read_grh(attr);
	const struct ib_gid_attr *sgid_attr = grh->sgid_attr;
	bool v4;
	int type;

	if (attr->type != RDMA_AH_ATTR_TYPE_ROCE ||
	    !(rdma_ah_get_ah_flags(attr) & IB_AH_GRH) ||
	    rdma_ah_get_port_num(attr) != 1 || !sgid_attr ||
	    sgid_attr->gid_type != IB_GID_TYPE_ROCE_UDP_ENCAP ||
	    rdma_ah_get_sl(attr) > 15)
		return -EINVAL;

	/* The destination must be of the source's IP version. */
	type = rdma_gid_attr_network_type(sgid_attr);
	v4 = ipv6_addr_v4mapped((const struct in6_addr *)grh->dgid.raw);
	if (type != (v4 ? RDMA_NETWORK_IPV4 : RDMA_NETWORK_IPV6))
		return -EINVAL;

	memset(av, 0, sizeof(*av));
	memcpy(&av->sgid, sgid_attr->gid.raw, sizeof(av->sgid));
	memcpy(&av->dgid, grh->dgid.raw, sizeof(av->dgid));
	av->flow_label = grh->flow_label;
	av->sgid_index = grh->sgid_index;
	av->hop_limit = grh->hop_limit;
	av->traffic_class = grh->traffic_class;
	av->sl = rdma_ah_get_sl(attr);
	av->network_type = type;
	memcpy(av->dmac, attr->roce.dmac, ETH_ALEN);
	return 0;
}

/**
 * sroce_av_is_peer() - did a packet come along a connected QP's path?
 * @av: the QP's primary path
 * @skb: a received packet, its network header set
 *
 * A connected QP takes packets only from the address its path points at,
 * sent to the address the path leaves from: the RoCE form of the header
 * checks of IBA 9.6.1 (as rdma_rxe applies them). Otherwise anyone who
 * reaches UDP port 4791 and guesses a QP number and a PSN could inject
 * into the connection.
 *
 * Return: true if the packet's IP source and destination are @av's
 * destination and source.
 */
bool sroce_av_is_peer(const struct sroce_av *av, const struct sk_buff *skb)
{
	const struct ipv6hdr *ip6h;
	const struct iphdr *iph;

	if (skb->protocol == htons(ETH_P_IP)) {
		iph = ip_hdr(skb);
		return av->network_type == RDMA_NETWORK_IPV4 &&
		       iph->saddr == av->dgid.s6_addr32[3] &&
		       iph->daddr == av->sgid.s6_addr32[3];
	}
	ip6h = ipv6_hdr(skb);
	return av->network_type == RDMA_NETWORK_IPV6 &&
	       ipv6_addr_equal(&ip6h->saddr, &av->dgid) &&
	       ipv6_addr_equal(&ip6h->daddr, &av->sgid);
}

/**
 * sroce_av_to_attr() - report an address vector (query_ah, query_qp)
 * @av: the address vector
 * @attr: result; its sgid_attr is left for the RDMA core to fill
 */
void sroce_av_to_attr(const struct sroce_av *av, struct rdma_ah_attr *attr)
{
	union ib_gid dgid;

	memcpy(dgid.raw, &av->dgid, sizeof(dgid.raw));
	memset(attr, 0, sizeof(*attr));
	attr->type = RDMA_AH_ATTR_TYPE_ROCE;
	rdma_ah_set_port_num(attr, 1);
	rdma_ah_set_sl(attr, av->sl);
	rdma_ah_set_grh(attr, &dgid, av->flow_label,
			av->sgid_index, av->hop_limit, av->traffic_class);
	memcpy(attr->roce.dmac, av->dmac, ETH_ALEN);
}

/*
 * The AH table's lock is taken with interrupts disabled: a kernel consumer
 * may create and destroy AHs with them disabled (the CM answers a SIDR
 * request under a spinlock), where a bottom-half lock would re-enable
 * softirqs. The data path only reads the table (build.c).
 */
static void ah_erase(struct sroce_dev *sdev, u32 ah_num)
{
	unsigned long flags;

	xa_lock_irqsave(&sdev->ahs, flags);
	__xa_erase(&sdev->ahs, ah_num);
	xa_unlock_irqrestore(&sdev->ahs, flags);
}

/**
 * sroce_ah_create() - ib_device_ops.create_ah and create_user_ah
 * @ibah: the AH, allocated by the RDMA core
 * @init_attr: attributes and RDMA_CREATE_AH_SLEEPABLE
 * @udata: response to the provider, or NULL
 *
 * The AH is published in the AH table only when complete.
 *
 * Return: 0 or a negative errno.
 */
int sroce_ah_create(struct ib_ah *ibah, struct rdma_ah_init_attr *init_attr,
		    struct ib_udata *udata)
{
	struct sroce_dev *sdev = to_sdev(ibah->device);
	gfp_t gfp = init_attr->flags & RDMA_CREATE_AH_SLEEPABLE ?
		    GFP_KERNEL : GFP_ATOMIC;
	struct sroce_ah *ah = to_sah(ibah);
	struct sroce_create_ah_resp resp = {};
	unsigned long flags;
	int err;

	err = sroce_av_from_attr(&ah->av, init_attr->ah_attr);
	if (err)
		return err;
	err = sroce_dev_obj_get(sdev, SROCE_OBJ_AH);
	if (err)
		return err;
	xa_lock_irqsave(&sdev->ahs, flags);
	err = __xa_alloc(&sdev->ahs, &ah->ah_num, NULL, xa_limit_32b, gfp);
	xa_unlock_irqrestore(&sdev->ahs, flags);
	if (err)
		goto err_put;
	if (udata) {
		resp.ah_num = ah->ah_num;
		err = ib_copy_to_udata(udata, &resp,
				       min(sizeof(resp), udata->outlen));
		if (err)
			goto err_erase;
	}
	xa_lock_irqsave(&sdev->ahs, flags);
	__xa_store(&sdev->ahs, ah->ah_num, ah, gfp);
	xa_unlock_irqrestore(&sdev->ahs, flags);
	return 0;

err_erase:
	ah_erase(sdev, ah->ah_num);
err_put:
	sroce_dev_obj_put(sdev, SROCE_OBJ_AH);
	return err;
}

/**
 * sroce_ah_destroy() - ib_device_ops.destroy_ah
 * @ibah: the AH
 * @flags: RDMA_DESTROY_AH_SLEEPABLE or 0
 *
 * Readers copy the AV under the table's lock, so once the AH is erased no
 * one can still be using it.
 *
 * Return: 0.
 */
int sroce_ah_destroy(struct ib_ah *ibah, u32 flags)
{
	struct sroce_dev *sdev = to_sdev(ibah->device);

	ah_erase(sdev, to_sah(ibah)->ah_num);
	sroce_dev_obj_put(sdev, SROCE_OBJ_AH);
	return 0;
}

/**
 * sroce_ah_query() - ib_device_ops.query_ah
 * @ibah: the AH
 * @attr: result
 *
 * Return: 0.
 */
int sroce_ah_query(struct ib_ah *ibah, struct rdma_ah_attr *attr)
{
	sroce_av_to_attr(&to_sah(ibah)->av, attr);
	return 0;
}
