/* SPDX-License-Identifier: GPL-2.0 OR Linux-OpenIB */
#ifndef SROCE_PKT_H
#define SROCE_PKT_H

#include <linux/skbuff.h>

#include "opcode.h"
#include "wire.h"

/**
 * struct sroce_pkt - what the receive path learned about a packet
 * @opcode: BTH opcode
 * @pad: pad bytes after the payload
 * @flags: the opcode's enum sroce_op_flag bits
 * @psn: BTH PSN
 * @paylen: payload bytes
 * @se: solicited event requested
 * @ackreq: acknowledgment requested
 * @loopback: sent by a QP of this host, not over a network
 *
 * Lives in skb->cb while the packet waits in a QP's queue. skb->data
 * points at the BTH.
 */
struct sroce_pkt {
	u8 opcode;
	u8 pad;
	u32 flags;
	u32 psn;
	u32 paylen;
	bool se;
	bool ackreq;
	bool loopback;
};

static inline struct sroce_pkt *sroce_pkt(struct sk_buff *skb)
{
	BUILD_BUG_ON(sizeof(struct sroce_pkt) > sizeof(skb->cb));
	return (struct sroce_pkt *)skb->cb;
}

static inline const struct sroce_opcode_info *
sroce_pkt_op(const struct sk_buff *skb)
{
	return &sroce_opcodes[((const struct sroce_pkt *)skb->cb)->opcode];
}

static inline struct sroce_bth *sroce_pkt_bth(struct sk_buff *skb)
{
	return (struct sroce_bth *)skb->data;
}

/* The extended header at offset @off of the opcode's layout. */
static inline void *sroce_pkt_hdr(struct sk_buff *skb, u8 off)
{
	return skb->data + off;
}

static inline void *sroce_pkt_payload(struct sk_buff *skb)
{
	return skb->data + sroce_pkt_op(skb)->hdr_len;
}

#endif /* SROCE_PKT_H */
