// SPDX-License-Identifier: GPL-2.0 OR Linux-OpenIB
/*
 * DOC: Transmit
 *
 * A packet is built from the BTH on (sroce_net_alloc_skb() leaves room for
 * the link, IP and UDP headers), then sroce_net_xmit() routes it in the
 * device's namespace, adds the UDP header (destination port 4791, source
 * port from the flow label for ECMP entropy, IBA Annex A17.3.1; checksum
 * zero, A17.3.2) and the IPv4 or IPv6 header (DF set, A17.4.3), computes
 * the ICRC and hands it to the IP stack.
 *
 * A packet whose route is local goes to the sroce device that owns the
 * destination address directly, without ICRC: it never leaves the host.
 *
 * A packet's payload may instead be attached as page fragments
 * (sroce_mem_attach()): its headers are then in the linear part, and its
 * padding and ICRC in a last, small fragment of the packet's own, the
 * trailer (sroce_net_trailer_alloc(), sroce_net_trailer_add()).
 */
#include <linux/if_ether.h>
#include <linux/inetdevice.h>
#include <linux/ip.h>
#include <linux/ipv6.h>
#include <linux/udp.h>
#include <net/addrconf.h>
#include <net/ip.h>
#include <net/ip6_route.h>
#include <net/ipv6.h>
#include <net/route.h>
#include <net/udp_tunnel.h>
#include <rdma/ib_verbs.h>

#include "ah.h"
#include "device.h"
#include "fault.h"
#include "icrc.h"
#include "net.h"
#include "recv.h"
#include "socket.h"
#include "wire.h"

static unsigned int ip_hdr_len(const struct sroce_av *av)
{
	return av->network_type == RDMA_NETWORK_IPV4 ? sizeof(struct iphdr) :
						       sizeof(struct ipv6hdr);
}

/**
 * sroce_net_alloc_skb() - a packet buffer for one RoCEv2 packet
 * @sdev: the sending device
 * @av: where it goes (selects IPv4 or IPv6)
 * @len: bytes from the BTH to the end of the ICRC
 *
 * Context: any.
 * Return: the skb with @len bytes at skb->data, or NULL.
 */
struct sk_buff *sroce_net_alloc_skb(struct sroce_dev *sdev,
				    const struct sroce_av *av,
				    unsigned int len)
{
	unsigned int headroom = LL_RESERVED_SPACE(sdev->ndev) +
				ip_hdr_len(av) + sizeof(struct udphdr);
	struct sk_buff *skb;

	if (unlikely(sroce_fault_alloc(sdev)))
		return NULL;
	skb = alloc_skb(headroom + len, GFP_ATOMIC);
	if (unlikely(!skb))
		return NULL;
	skb_reserve(skb, headroom);
	skb_put(skb, len);
	skb->protocol = av->network_type == RDMA_NETWORK_IPV4 ?
			htons(ETH_P_IP) : htons(ETH_P_IPV6);
	return skb;
}

/**
 * sroce_net_trailer_alloc() - memory for a packet's trailer
 * @sdev: the sending device (its alloc_fail fault applies)
 *
 * Taken before the payload is attached, so that a packet whose trailer
 * cannot be had is not built at all.
 *
 * Context: any.
 * Return: room for SROCE_NET_TRAILER_MAX bytes, or NULL.
 */
void *sroce_net_trailer_alloc(struct sroce_dev *sdev)
{
	if (unlikely(sroce_fault_alloc(sdev)))
		return NULL;
	return netdev_alloc_frag(SROCE_NET_TRAILER_MAX);
}

/**
 * sroce_net_trailer_free() - memory from sroce_net_trailer_alloc() unused
 * @buf: the memory
 */
void sroce_net_trailer_free(void *buf)
{
	skb_free_frag(buf);
}

/**
 * sroce_net_trailer_add() - end a packet with its padding and ICRC field
 * @skb: the packet, its payload in page fragments, one fragment free
 * @buf: from sroce_net_trailer_alloc(); now the packet's
 * @pad: pad bytes (0 to 3)
 *
 * The trailer is zeroed: sroce_net_xmit() fills the ICRC.
 */
void sroce_net_trailer_add(struct sk_buff *skb, void *buf, unsigned int pad)
{
	struct page *page = virt_to_head_page(buf);
	unsigned int len = pad + SROCE_ICRC_SIZE;

	memset(buf, 0, len);
	skb_fill_page_desc(skb, skb_shinfo(skb)->nr_frags, page,
			   buf - page_address(page), len);
	skb->len += len;
	skb->data_len += len;
	skb->truesize += SKB_DATA_ALIGN(SROCE_NET_TRAILER_MAX);
}

/* The ICRC field: the last bytes of the linear part or of the trailer. */
static u8 *icrc_field(struct sk_buff *skb)
{
	const struct skb_shared_info *si = skb_shinfo(skb);
	const skb_frag_t *f;

	if (!skb->data_len)
		return skb_tail_pointer(skb) - SROCE_ICRC_SIZE;
	f = &si->frags[si->nr_frags - 1];
	return (u8 *)skb_frag_address(f) + skb_frag_size(f) - SROCE_ICRC_SIZE;
}

static struct dst_entry *route4(struct net *net, struct sroce_dev *sdev,
				struct dst_cache *cache, __be32 saddr,
				__be32 daddr)
{
	struct flowi4 fl4 = {
		.flowi4_oif = sdev->ndev->ifindex,
		.flowi4_proto = IPPROTO_UDP,
		.saddr = saddr,
		.daddr = daddr,
	};
	struct rtable *rt;

	if (cache) {
		rt = dst_cache_get_ip4(cache, &fl4.saddr);
		if (rt)
			return &rt->dst;
	}
	rt = ip_route_output_key(net, &fl4);
	if (IS_ERR(rt))
		return ERR_CAST(rt);
	if (cache)
		dst_cache_set_ip4(cache, &rt->dst, fl4.saddr);
	return &rt->dst;
}

static struct dst_entry *route6(struct net *net, struct sroce_dev *sdev,
				struct dst_cache *cache, struct sock *sk,
				const struct in6_addr *saddr,
				const struct in6_addr *daddr)
{
	struct flowi6 fl6 = {
		.flowi6_oif = sdev->ndev->ifindex,
		.flowi6_proto = IPPROTO_UDP,
		.saddr = *saddr,
		.daddr = *daddr,
	};
	struct dst_entry *dst;

	if (cache) {
		dst = dst_cache_get_ip6(cache, &fl6.saddr);
		if (dst)
			return dst;
	}
	/* IPv6 disabled at boot (ipv6.disable=1) has no routes. */
	if (!ipv6_mod_enabled())
		return ERR_PTR(-EAFNOSUPPORT);
	dst = ip6_dst_lookup_flow(net, sk, &fl6, NULL);
	if (IS_ERR(dst))
		return dst;
	if (cache)
		dst_cache_set_ip6(cache, dst, &fl6.saddr);
	return dst;
}

static void push_udp(struct sk_buff *skb, u16 sport)
{
	struct udphdr *uh;

	__skb_push(skb, sizeof(*uh));
	skb_reset_transport_header(skb);
	uh = udp_hdr(skb);
	uh->source = htons(sport);
	uh->dest = htons(ROCE_V2_UDP_DPORT);
	uh->len = htons(skb->len);
	uh->check = 0;
}

static void push_ip4(struct net *net, struct sk_buff *skb,
		     const struct sroce_av *av, struct dst_entry *dst)
{
	struct iphdr *iph;

	__skb_push(skb, sizeof(*iph));
	skb_reset_network_header(skb);
	iph = ip_hdr(skb);
	iph->version = 4;
	iph->ihl = sizeof(*iph) >> 2;
	iph->tos = av->traffic_class;
	iph->tot_len = htons(skb->len);
	iph->frag_off = htons(IP_DF);
	iph->ttl = av->hop_limit ?: ip4_dst_hoplimit(dst);
	iph->protocol = IPPROTO_UDP;
	iph->saddr = av->sgid.s6_addr32[3];
	iph->daddr = av->dgid.s6_addr32[3];
	__ip_select_ident(net, iph, 1);
	ip_send_check(iph);
	memset(IPCB(skb), 0, sizeof(*IPCB(skb)));
}

static void push_ip6(struct sk_buff *skb, const struct sroce_av *av,
		     struct dst_entry *dst)
{
	struct ipv6hdr *ip6h;

	__skb_push(skb, sizeof(*ip6h));
	skb_reset_network_header(skb);
	ip6h = ipv6_hdr(skb);
	ip6_flow_hdr(ip6h, av->traffic_class,
		     cpu_to_be32(av->flow_label) & IPV6_FLOWLABEL_MASK);
	ip6h->payload_len = htons(skb->len - sizeof(*ip6h));
	ip6h->nexthdr = IPPROTO_UDP;
	ip6h->hop_limit = av->hop_limit ?: ip6_dst_hoplimit(dst);
	ip6h->saddr = av->sgid;
	ip6h->daddr = av->dgid;
	memset(IP6CB(skb), 0, sizeof(*IP6CB(skb)));
}

/* The sroce device of this namespace that owns the destination address. */
static struct sroce_dev *local_target(struct net *net,
				      const struct sroce_av *av)
{
	struct net_device *ndev;

	if (av->network_type == RDMA_NETWORK_IPV4)
		ndev = __ip_dev_find(net, av->dgid.s6_addr32[3], false);
	else
		ndev = ipv6_dev_find(net, &av->dgid, NULL);
	return ndev ? sroce_dev_find_rcu(ndev) : NULL;
}

static bool is_mcast(const struct sroce_av *av)
{
	if (av->network_type == RDMA_NETWORK_IPV4)
		return ipv4_is_multicast(av->dgid.s6_addr32[3]);
	return ipv6_addr_is_multicast(&av->dgid);
}

/*
 * A datagram to a multicast group also reaches the QPs of the sending
 * port attached to it (IBA 10.5.2: a port may receive its own multicast
 * packets, and HCAs do unless a QP was created to block it). The UDP
 * tunnel socket has IP multicast loopback off, so a copy is delivered
 * here, as a loopback packet; the original goes out on the wire.
 */
static void mcast_loop(struct sroce_dev *sdev, struct sk_buff *skb)
{
	struct sk_buff *copy = skb_copy(skb, GFP_ATOMIC);

	if (!copy) {
		sroce_stats_add(&sdev->stats, SROCE_STAT_TX_DROPPED, 1);
		return;
	}
	copy->dev = sdev->ndev;
	__skb_pull(copy, skb_transport_offset(copy) + sizeof(struct udphdr));
	sroce_recv_loopback(sdev, copy);
}

/* Hand a finished packet to the IP stack. */
static int output(struct net *net, struct sock *sk, struct sk_buff *skb)
{
	int err;

	if (ip_hdr(skb)->version == 4)
		err = ip_local_out(net, sk, skb);
	else
		err = ip6_local_out(net, sk, skb);
	return net_xmit_eval(err) ? -EIO : 0;
}

/**
 * sroce_net_output() - send again a packet that sroce_net_xmit() built
 * @sdev: the sending device
 * @skb: the packet, from its IP header on, ICRC computed and route set;
 *	 consumed
 *
 * For fault injection (a duplicate, a packet held back).
 *
 * Context: bottom halves disabled, in an RCU read-side section.
 */
void sroce_net_output(struct sroce_dev *sdev, struct sk_buff *skb)
{
	struct sock *sk = sroce_socket_sk(sdev, ip_hdr(skb)->version == 6);

	if (!sk) {
		sroce_stats_add(&sdev->stats, SROCE_STAT_TX_DROPPED, 1);
		kfree_skb(skb);
		return;
	}
	output(sdev->net, sk, skb);
}

/* sroce_net_xmit(), in an RCU read-side section. */
static int xmit(struct sroce_dev *sdev, struct dst_cache *cache,
		const struct sroce_av *av, u16 sport, struct sk_buff *skb)
{
	unsigned int len = skb->len;
	struct sroce_dev *target;
	struct dst_entry *dst;
	struct sock *sk;
	struct net *net = sdev->net;
	int err;

	sk = sroce_socket_sk(sdev, av->network_type == RDMA_NETWORK_IPV6);
	if (unlikely(!sk)) {
		err = -ENODEV;
		goto drop;
	}
	if (av->network_type == RDMA_NETWORK_IPV4)
		dst = route4(net, sdev, cache, av->sgid.s6_addr32[3],
			     av->dgid.s6_addr32[3]);
	else
		dst = route6(net, sdev, cache, sk, &av->sgid, &av->dgid);
	if (IS_ERR(dst)) {
		err = PTR_ERR(dst);
		goto drop;
	}

	push_udp(skb, sport);
	if (av->network_type == RDMA_NETWORK_IPV4)
		push_ip4(net, skb, av, dst);
	else
		push_ip6(skb, av, dst);
	sroce_stats_add(&sdev->stats, SROCE_STAT_TX_PACKETS, 1);
	sroce_stats_add(&sdev->stats, SROCE_STAT_TX_BYTES, len);
	if (is_mcast(av))
		mcast_loop(sdev, skb);

	if (dst->dev->flags & IFF_LOOPBACK) {
		target = local_target(net, av);
		dst_release(dst);
		if (!target) {
			err = -EHOSTUNREACH;
			goto drop;
		}
		if (sroce_fault_tx(sdev, skb, true) == SROCE_FAULT_TAKEN)
			return 0;
		skb->dev = target->ndev;
		__skb_pull(skb, skb_transport_offset(skb) + sizeof(struct udphdr));
		sroce_recv_loopback(target, skb);
		return 0;
	}

	put_unaligned_le32(sroce_icrc_compute(skb, skb_transport_offset(skb) +
					      sizeof(struct udphdr),
					      len - SROCE_ICRC_SIZE),
			   icrc_field(skb));
	skb_dst_set(skb, dst);
	skb->dev = dst->dev;
	skb->ip_summed = CHECKSUM_NONE;
	if (sroce_fault_tx(sdev, skb, false) == SROCE_FAULT_TAKEN)
		return 0;
	return output(net, sk, skb);

drop:
	sroce_stats_add(&sdev->stats, SROCE_STAT_TX_DROPPED, 1);
	kfree_skb(skb);
	return err;
}

/**
 * sroce_net_xmit() - send a packet built by sroce_net_alloc_skb()
 * @sdev: the sending device
 * @cache: the route cache of a connected QP, or NULL
 * @av: where the packet goes
 * @sport: UDP source port
 * @skb: the packet, BTH to ICRC filled but for the ICRC; consumed
 *
 * Context: bottom halves disabled.
 * Return: 0, or a negative errno when the packet was dropped before
 * reaching the IP stack (no route, device leaving its namespace).
 */
int sroce_net_xmit(struct sroce_dev *sdev, struct dst_cache *cache,
		   const struct sroce_av *av, u16 sport, struct sk_buff *skb)
{
	int err;

	rcu_read_lock();
	err = xmit(sdev, cache, av, sport, skb);
	rcu_read_unlock();
	return err;
}
