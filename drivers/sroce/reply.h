/* SPDX-License-Identifier: GPL-2.0 OR Linux-OpenIB */
#ifndef SROCE_REPLY_H
#define SROCE_REPLY_H

#include <linux/skbuff.h>

struct sroce_qp;

struct sk_buff *sroce_reply_alloc(struct sroce_qp *qp, u8 opcode, u32 psn,
				  u32 paylen);
void sroce_reply_xmit(struct sroce_qp *qp, struct sk_buff *skb);
void sroce_reply_flush_ack(struct sroce_qp *qp);
void sroce_reply_nak(struct sroce_qp *qp, u8 syndrome, u32 psn);
void sroce_reply_atomic_ack(struct sroce_qp *qp, u32 psn, u64 orig);
void sroce_reply_empty_read(struct sroce_qp *qp, u32 psn);

#endif /* SROCE_REPLY_H */
