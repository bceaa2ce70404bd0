/* SPDX-License-Identifier: GPL-2.0 OR Linux-OpenIB */
#ifndef SROCE_CWND_H
#define SROCE_CWND_H

#include <linux/minmax.h>
#include <linux/types.h>

#define SROCE_CWND_MAX	256	/* unacknowledged packets at most, RC */
#define SROCE_CWND_MIN	8	/* ... after a loss */

/**
 * struct sroce_cwnd - a QP's congestion window (cwnd.c)
 * @cwnd: packets that may be unacknowledged now (RC), at most
 *	  SROCE_CWND_MAX
 * @ssthresh: below it @cwnd grows by every packet acknowledged (slow
 *	      start), from it by one packet a window (congestion avoidance)
 * @acked: packets acknowledged towards @cwnd's next step above @ssthresh
 *
 * Written only by cwnd.c, from the send engine.
 */
struct sroce_cwnd {
	u32 cwnd;
	u32 ssthresh;
	u32 acked;
};

void sroce_cwnd_reset(struct sroce_cwnd *win);
void sroce_cwnd_acked(struct sroce_cwnd *win, u32 acked);
void sroce_cwnd_loss(struct sroce_cwnd *win, bool timeout);

#endif /* SROCE_CWND_H */
