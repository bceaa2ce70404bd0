/* SPDX-License-Identifier: GPL-2.0 OR Linux-OpenIB */
#ifndef SROCE_RETRY_H
#define SROCE_RETRY_H

#include <linux/timer.h>
#include <linux/types.h>

struct sroce_build_sent;
struct sroce_qp;

/**
 * struct sroce_retry - a requester's loss recovery (retry.c)
 * @left: transport retries left (IBA 9.7.6.1.3)
 * @retrying: went back to @psn and has made no progress since
 * @psn: the PSN of the last resend
 * @rnr_left: RNR retries left; 7 means without limit
 * @rnr_wait: waiting for the RNR timer before resending
 * @timer: transport timer (the retransmission timeout)
 * @rnr_timer: RNR NAK timer
 * @timeout: transport timeout in jiffies (the local ACK timeout); 0 is
 *	     infinite
 * @backoff: timeouts in a row; the timer waits the retransmission
 *	     timeout << @backoff (at least @timeout). Progress ends the row
 *	     only past @timeout_high, or with a round trip measured
 * @timeout_high: the requester's tx_high when the last timeout sent
 *		  everything again: an acknowledgment up to it may be of
 *		  either sending
 * @probed: the tail-loss probe of this wait for an acknowledgment went
 * @probe_armed: the transport timer runs for the probe timeout, @pto
 * @pto: the probe timeout armed, in jiffies
 * @tx_jiffies: when the last packet sent for the first time went
 * @rtt_busy: a round-trip sample is running, from the packet @rtt_psn
 * @rtt_psn: a packet sent once, with AckReq, at @rtt_start (ns)
 * @rtt_start: see @rtt_psn
 * @srtt_us: smoothed round-trip time in microseconds; 0: no sample yet
 * @rttvar_us: its mean deviation in microseconds (RFC 6298)
 *
 * Written only by retry.c, from the send engine (or with it stopped);
 * others read it.
 */
struct sroce_retry {
	u8 left;
	bool retrying;
	u32 psn;
	u8 rnr_left;
	bool rnr_wait;
	struct timer_list timer;
	struct timer_list rnr_timer;
	unsigned long timeout;
	u8 backoff;
	u32 timeout_high;
	bool probed;
	bool probe_armed;
	unsigned long pto;
	unsigned long tx_jiffies;
	bool rtt_busy;
	u32 rtt_psn;
	u64 rtt_start;
	u32 srtt_us;
	u32 rttvar_us;
};

void sroce_retry_init(struct sroce_qp *qp);
void sroce_retry_stop(struct sroce_qp *qp);
void sroce_retry_reset(struct sroce_qp *qp);
void sroce_retry_start(struct sroce_qp *qp);
void sroce_retry_update(struct sroce_qp *qp, int mask);
void sroce_retry_arm(struct sroce_qp *qp);
void sroce_retry_cancel(struct sroce_qp *qp);
void sroce_retry_sent(struct sroce_qp *qp, const struct sroce_build_sent *out);
void sroce_retry_wait(struct sroce_qp *qp);
void sroce_retry_acked(struct sroce_qp *qp, u32 psn);
bool sroce_retry_loss(struct sroce_qp *qp, u32 psn, bool timeout);
void sroce_retry_hold(struct sroce_qp *qp, u32 psn);
void sroce_retry_fault(struct sroce_qp *qp, u32 psn);
bool sroce_retry_rnr(struct sroce_qp *qp, u32 psn, u8 timer);
void sroce_retry_rnr_over(struct sroce_qp *qp);
bool sroce_retry_timed_out(struct sroce_qp *qp);

#endif /* SROCE_RETRY_H */
