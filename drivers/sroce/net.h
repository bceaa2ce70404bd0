/* SPDX-License-Identifier: GPL-2.0 OR Linux-OpenIB */
#ifndef SROCE_NET_H
#define SROCE_NET_H

#include <linux/skbuff.h>
#include <net/dst_cache.h>

struct sroce_av;
struct sroce_dev;

struct sk_buff *sroce_net_alloc_skb(struct sroce_dev *sdev,
				    const struct sroce_av *av,
				    unsigned int len);
/* A trailer: up to 3 pad bytes and the ICRC, rounded up. */
#define SROCE_NET_TRAILER_MAX	8

void *sroce_net_trailer_alloc(struct sroce_dev *sdev);
void sroce_net_trailer_free(void *buf);
void sroce_net_trailer_add(struct sk_buff *skb, void *buf, unsigned int pad);
void sroce_net_output(struct sroce_dev *sdev, struct sk_buff *skb);
int sroce_net_xmit(struct sroce_dev *sdev, struct dst_cache *cache,
		   const struct sroce_av *av, u16 sport, struct sk_buff *skb);

#endif /* SROCE_NET_H */
