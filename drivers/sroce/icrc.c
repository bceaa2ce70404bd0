// SPDX-License-Identifier: GPL-2.0 OR Linux-OpenIB
/*
 * DOC: Invariant CRC
 *
 * Every RoCEv2 packet ends with a 4-byte ICRC (IBA 7.8.1, Annex A17.3.3):
 * a CRC-32 (the Ethernet polynomial) over the packet from the IP header
 * to the end of the padding, with the fields that routers may change
 * masked to all ones: IPv4 TOS, TTL and header checksum; IPv6 traffic
 * class, flow label and hop limit; the UDP checksum; the BTH's FECN, BECN
 * and reserved byte. The CRC starts as if it had already run over the
 * eight bytes of ones that stand for InfiniBand's masked LRH. The result
 * is inverted and sent least significant byte first.
 *
 * Packets between two QPs of one host (loopback) never reach a wire and
 * carry no ICRC check.
 */
#include <linux/crc32.h>
#include <linux/ip.h>
#include <linux/ipv6.h>
#include <linux/udp.h>

#include "icrc.h"
#include "wire.h"

/* crc32_le(~0, eight 0xff bytes): the masked LRH (IBA 7.8.1). */
#define ICRC_SEED	0xdebb20e3

static __wsum icrc_update(const void *buf, int len, __wsum crc)
{
	return (__force __wsum)crc32_le((__force u32)crc, buf, len);
}

static __wsum icrc_combine(__wsum crc, __wsum crc2, int offset, int len)
{
	return (__force __wsum)crc32_le_combine((__force u32)crc,
						(__force u32)crc2, len);
}

static const struct skb_checksum_ops icrc_ops = {
	.update = icrc_update,
	.combine = icrc_combine,
};

/* CRC of the masked IP, UDP and BTH headers. */
static u32 icrc_headers(const struct sk_buff *skb, const struct sroce_bth *bth)
{
	u8 buf[sizeof(struct ipv6hdr) + sizeof(struct udphdr) +
	       sizeof(struct sroce_bth)];
	const struct iphdr *iph = (const struct iphdr *)skb_network_header(skb);
	unsigned int iplen;
	struct udphdr *udph;
	struct sroce_bth *b;

	if (iph->version == 4) {
		struct iphdr *ip4 = (struct iphdr *)buf;

		iplen = sizeof(*ip4);
		memcpy(ip4, iph, iplen);
		ip4->tos = 0xff;
		ip4->ttl = 0xff;
		ip4->check = CSUM_MANGLED_0;
	} else {
		struct ipv6hdr *ip6 = (struct ipv6hdr *)buf;

		iplen = sizeof(*ip6);
		memcpy(ip6, iph, iplen);
		ip6->priority = 0xf;
		memset(ip6->flow_lbl, 0xff, sizeof(ip6->flow_lbl));
		ip6->hop_limit = 0xff;
	}
	udph = (struct udphdr *)(buf + iplen);
	memcpy(udph, skb_transport_header(skb), sizeof(*udph));
	udph->check = CSUM_MANGLED_0;
	b = (struct sroce_bth *)(udph + 1);
	memcpy(b, bth, sizeof(*b));
	b->qpn |= cpu_to_be32(SROCE_BTH_RESV8A_MASK);

	return crc32_le(ICRC_SEED, buf, iplen + sizeof(*udph) + sizeof(*b));
}

/**
 * sroce_icrc_compute() - the ICRC a packet must carry
 * @skb: the packet, with its network and transport headers set, and the
 *       IP, UDP and BTH headers in its linear part
 * @bth_off: offset of the BTH from skb->data
 * @len: bytes covered from the BTH on: headers, payload and padding
 *
 * Return: the ICRC, to be stored or compared least significant byte first.
 */
u32 sroce_icrc_compute(const struct sk_buff *skb, unsigned int bth_off,
		       unsigned int len)
{
	const struct sroce_bth *bth = (const void *)(skb->data + bth_off);
	u32 crc;

	crc = icrc_headers(skb, bth);
	crc = (__force u32)__skb_checksum(skb, bth_off + sizeof(*bth),
					  len - sizeof(*bth),
					  (__force __wsum)crc, &icrc_ops);
	return ~crc;
}
