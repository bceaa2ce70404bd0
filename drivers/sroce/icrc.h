/* SPDX-License-Identifier: GPL-2.0 OR Linux-OpenIB */
#ifndef SROCE_ICRC_H
#define SROCE_ICRC_H

#include <linux/skbuff.h>

u32 sroce_icrc_compute(struct sk_buff *skb, unsigned int bth_off,
		       unsigned int len);
void sroce_icrc_init(void);
void sroce_icrc_exit(void);

#endif /* SROCE_ICRC_H */
