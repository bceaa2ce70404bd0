/* SPDX-License-Identifier: GPL-2.0 OR Linux-OpenIB */
#ifndef SROCE_ZCOPY_H
#define SROCE_ZCOPY_H

#include <linux/skbuff.h>

struct sroce_qp;
struct sroce_swqe;

/**
 * struct sroce_zcopy - the packets of one send WQE that carry its pages
 * @ubuf: the network stack's zero-copy reference: one count per packet
 *	  (skb) that still holds the WQE's pages, and one for the WQE
 *	  itself until it is finished (sroce_zcopy_release())
 * @qp: the QP, which outlives every packet (sroce_zcopy_drain())
 * @armed: a packet was attached since the WQE was fetched: @ubuf counts
 * @released: the WQE's own count was dropped
 * @done: every count is gone; written last by whoever dropped the last one
 *
 * Lives in the WQE's private slot, which is reused only once the WQE has
 * completed, that is once @done was seen.
 */
struct sroce_zcopy {
	struct ubuf_info ubuf;
	struct sroce_qp *qp;
	bool armed;
	bool released;
	bool done;
};

bool sroce_zcopy_ok(const struct sroce_qp *qp, const struct sroce_swqe *s,
		    u32 paylen);
void sroce_zcopy_attach(struct sroce_qp *qp, struct sroce_zcopy *zc,
			struct sk_buff *skb);
void sroce_zcopy_release(struct sroce_zcopy *zc);
bool sroce_zcopy_wait(struct sroce_qp *qp, const struct sroce_zcopy *zc);
void sroce_zcopy_drain(struct sroce_qp *qp);

#endif /* SROCE_ZCOPY_H */
