/* SPDX-License-Identifier: GPL-2.0 OR Linux-OpenIB */
#ifndef SROCE_RECV_H
#define SROCE_RECV_H

struct sk_buff;
struct sroce_dev;

void sroce_recv_skb(struct sroce_dev *sdev, struct sk_buff *skb);
void sroce_recv_loopback(struct sroce_dev *sdev, struct sk_buff *skb);
void sroce_recv_again(struct sroce_dev *sdev, struct sk_buff *skb);

#endif /* SROCE_RECV_H */
