// SPDX-License-Identifier: GPL-2.0 OR Linux-OpenIB
/*
 * DOC: Congestion window
 *
 * A timeout resends everything outstanding, READ responses included, so
 * without restraint one loss on a busy link can bring a storm of resends
 * that itself causes the next timeout. The requester therefore keeps a
 * congestion window of unacknowledged packets, as TCP does (RFC 5681):
 * SROCE_CWND_MAX at first; after a loss the slow-start threshold is
 * half the window, and the window becomes that threshold (sequence NAK)
 * or SROCE_CWND_MIN (timeout). Below the threshold every packet
 * acknowledged opens the window by one (slow start), from it on a whole
 * window acknowledged opens it by one (congestion avoidance), so that a
 * link that drops what exceeds its buffer is not overrun again every
 * round trip.
 *
 * The window is this file's alone to change: the completer reports the
 * packets acknowledged, loss recovery (retry.c) the losses. Only the
 * send engine calls it, so it needs no lock (task.c).
 */
#include "cwnd.h"

/**
 * sroce_cwnd_reset() - a new connection's window
 * @win: the window
 *
 * Full, with nothing of a past loss.
 */
void sroce_cwnd_reset(struct sroce_cwnd *win)
{
	win->cwnd = SROCE_CWND_MAX;
	win->ssthresh = SROCE_CWND_MAX;
	win->acked = 0;
}

/**
 * sroce_cwnd_acked() - more packets were acknowledged
 * @win: the QP's window; called by its send engine
 * @acked: how many
 *
 * Below the slow-start threshold each opens the window by one, from it a
 * whole window's worth opens it by one (RFC 5681, 3.1).
 */
void sroce_cwnd_acked(struct sroce_cwnd *win, u32 acked)
{
	u32 grow;

	if (win->cwnd < win->ssthresh) {
		grow = min(acked, win->ssthresh - win->cwnd);
		win->cwnd += grow;
		acked -= grow;
	}
	win->acked += acked;
	while (win->acked >= win->cwnd && win->cwnd < SROCE_CWND_MAX) {
		win->acked -= win->cwnd;
		win->cwnd++;
	}
	if (win->cwnd >= SROCE_CWND_MAX)
		win->acked = 0;
}

/**
 * sroce_cwnd_loss() - a packet was lost
 * @win: the QP's window; called by its send engine
 * @timeout: the transport timer found it, not a sequence NAK
 *
 * The link held about half of what was in flight: that is the new
 * threshold, and the window itself after a NAK; after a timeout, which
 * means more was lost, the window starts again from SROCE_CWND_MIN.
 */
void sroce_cwnd_loss(struct sroce_cwnd *win, bool timeout)
{
	win->ssthresh = max_t(u32, win->cwnd / 2, SROCE_CWND_MIN);
	win->acked = 0;
	win->cwnd = timeout ? SROCE_CWND_MIN : win->ssthresh;
}
