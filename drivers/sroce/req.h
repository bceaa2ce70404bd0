/* SPDX-License-Identifier: GPL-2.0 OR Linux-OpenIB */
#ifndef SROCE_REQ_H
#define SROCE_REQ_H

#include <linux/skbuff.h>
#include <linux/timer.h>
#include <rdma/sroce-abi.h>

#include "ah.h"
#include "sgl.h"
#include "task.h"
#include "zcopy.h"

struct sroce_qp;

#define SROCE_REQ_WINDOW	256	/* unacknowledged packets at most, RC */
#define SROCE_REQ_MIN_WINDOW	8	/* ... after a loss */

/**
 * enum sroce_swqe_state - where a send WQE is
 * @SROCE_SWQE_SENDING: packets remain to be sent
 * @SROCE_SWQE_SENT: all sent; waiting for the acknowledgment (RC)
 * @SROCE_SWQE_DONE: finished, @status says how; waiting to be completed
 *	in order
 */
enum sroce_swqe_state {
	SROCE_SWQE_SENDING,
	SROCE_SWQE_SENT,
	SROCE_SWQE_DONE,
};

/**
 * struct sroce_swqe - the send engine's private, checked copy of a WQE
 * @wr_id: from the WQE
 * @opcode: IB_UVERBS_WR_* value
 * @send_flags: IB_UVERBS_SEND_* flags
 * @ex: immediate data (network order) or rkey to invalidate
 * @length: message bytes
 * @num_sge: entries in @sge (0 for inline data)
 * @remote_addr: RDMA or atomic address
 * @rkey: RDMA or atomic rkey
 * @compare_add: atomic compare (CAS) or add (FAA) operand
 * @swap: atomic swap operand
 * @bind_len: BIND_MW: window length
 * @bind_lkey: BIND_MW: the MR's lkey
 * @bind_access: BIND_MW, REG_MR: rights (IB_ACCESS_*, IB_ZERO_BASED)
 * @av: destination (UD), copied from the AH when the WQE was fetched
 * @remote_qpn: destination QP (UD)
 * @remote_qkey: Q_Key (UD)
 * @xrc_srqn: the target's XRC SRQ (XRC send QP)
 * @first_psn: PSN of the first packet
 * @last_psn: PSN of the last packet (of the response, for a READ)
 * @state: enum sroce_swqe_state
 * @status: completion status once DONE
 * @signaled: completes with a CQE even on success
 * @read_off: bytes of READ response data received
 * @flush_type: FLUSH: placement type (FETH PLT)
 * @flush_level: FLUSH: selectivity level (FETH SEL)
 * @zcopy: the packets that carry the WQE's pages (zcopy.c)
 * @sge: scatter/gather list, or inline data when @num_sge is 0
 */
struct sroce_swqe {
	u64 wr_id;
	u32 opcode;
	u32 send_flags;
	u32 ex;
	u32 length;
	u32 num_sge;
	u64 remote_addr;
	u32 rkey;
	u64 compare_add;
	u64 swap;
	u64 bind_len;
	u32 bind_lkey;
	int bind_access;
	struct sroce_av av;
	u32 remote_qpn;
	u32 xrc_srqn;
	u32 remote_qkey;
	u32 first_psn;
	u32 last_psn;
	u8 state;
	u8 status;
	bool signaled;
	u32 read_off;
	u8 flush_type;
	u8 flush_level;
	struct sroce_zcopy zcopy;
	struct sroce_sge sge[];
};

/**
 * struct sroce_req - the send engine: requester and completer (IBA 9.7.4)
 * @task: the engine
 * @resp_pkts: response packets waiting for the completer
 * @swqe: private copies of the WQEs, one slot per SQ slot
 * @swqe_size: bytes per slot of @swqe
 * @next: SQ index of the next WQE to fetch
 * @cur: SQ index of the WQE being sent, from the oldest outstanding one
 *       (qp->sq.cons) to @next
 * @psn: PSN of the next packet to send; goes back on a resend
 * @next_psn: PSN the next WQE fetched gets: one past the highest PSN sent
 * @offset: bytes of the WQE at @cur already sent
 * @sgl: position in that WQE's scatter/gather list
 * @unacked_psn: oldest PSN not yet acknowledged (RC)
 * @rd_atomic: READ and atomic WQEs outstanding
 * @retry_left: transport retries left (IBA 9.7.6.1.3)
 * @retrying: went back to @retry_psn and has made no progress since
 * @retry_psn: the PSN of the last resend
 * @rnr_left: RNR retries left; 7 means without limit
 * @rnr_wait: waiting for the RNR timer before resending
 * @retrans_timer: transport timer (the retransmission timeout, req.c)
 * @rnr_timer: RNR NAK timer
 * @timeout: transport timeout in jiffies (the local ACK timeout); 0 is
 *	     infinite
 * @backoff: timeouts in a row; the timer waits the retransmission
 *	     timeout << @backoff (req.c: at least @timeout). Progress ends
 *	     the row only past @timeout_high, or with a round trip measured
 * @timeout_high: @tx_high when the last timeout sent everything again: an
 *		  acknowledgment up to it may be of either sending
 * @cwnd: packets that may be unacknowledged now (RC), at most
 *	  SROCE_REQ_WINDOW
 * @ssthresh: below it @cwnd grows by every packet acknowledged (slow
 *	      start), from it by one packet a window (congestion avoidance)
 * @cwnd_acked: packets acknowledged towards @cwnd's next step above
 *		@ssthresh
 * @tx_high: one past the highest PSN sent so far (a packet below it is a
 *	     resend)
 * @probed: the tail-loss probe of this wait for an acknowledgment went
 * @probe_armed: the transport timer runs for the probe timeout, @pto
 * @pto: the probe timeout armed, in jiffies
 * @tx_jiffies: when the last packet sent for the first time went
 * @probing: the packet being sent is a probe (AckReq set)
 * @rtt_busy: a round-trip sample is running, from the packet @rtt_psn
 * @rtt_psn: a packet sent once, with AckReq, at @rtt_start (ns)
 * @rtt_start: see @rtt_psn
 * @srtt_us: smoothed round-trip time in microseconds; 0: no sample yet
 * @rttvar_us: its mean deviation in microseconds (RFC 6298)
 * @flight: packets this QP counts in its device's req_flight (req.c)
 * @ackreq_last: the last packet sent asked for an acknowledgment
 * @ack_now: the next packet is to ask for one (the device's bound)
 * @zcopy_live: WQEs whose zero-copy count has not yet fallen (zcopy.c);
 *		the QP is not freed before it is zero
 * @zcopy_copied: the network stack copied a packet's attached pages
 *		  (zcopy.c): the QP copies its payloads itself until its path
 *		  is set again; written by the stack's callbacks, any context
 * @zcopy_waiting: the completer stopped at a WQE whose packets still hold
 *		   its pages: the last one's release runs the engine (zcopy.c)
 *
 * Everything but the timers and @resp_pkts belongs to @task: only the
 * running engine touches it (see task.c).
 */
struct sroce_req {
	struct sroce_task task;
	struct sk_buff_head resp_pkts;
	struct sroce_swqe *swqe;
	u32 swqe_size;
	u32 next;
	u32 cur;
	u32 psn;
	u32 next_psn;
	u32 offset;
	struct sroce_sgl sgl;
	u32 unacked_psn;
	u32 rd_atomic;
	u8 retry_left;
	bool retrying;
	u32 retry_psn;
	u8 rnr_left;
	bool rnr_wait;
	struct timer_list retrans_timer;
	struct timer_list rnr_timer;
	unsigned long timeout;
	u8 backoff;
	u32 timeout_high;
	u32 cwnd;
	u32 ssthresh;
	u32 cwnd_acked;
	u32 tx_high;
	bool probed;
	bool probe_armed;
	unsigned long pto;
	unsigned long tx_jiffies;
	bool probing;
	bool rtt_busy;
	u32 rtt_psn;
	u64 rtt_start;
	u32 srtt_us;
	u32 rttvar_us;
	u32 flight;
	bool ackreq_last;
	bool ack_now;
	atomic_t zcopy_live;
	bool zcopy_copied;
	bool zcopy_waiting;
};

/**
 * sroce_wr_is_rd_atomic() - does a work request wait for a response?
 * @opcode: IB_UVERBS_WR_* value
 *
 * READ, the atomics, ATOMIC_WRITE and FLUSH are each answered by a
 * response of their own and use one of the responder's resources, so at
 * most max_rd_atomic of them are outstanding (IBA 9.4.4 to 9.4.7).
 *
 * Return: true for those.
 */
static inline bool sroce_wr_is_rd_atomic(u32 opcode)
{
	return opcode == IB_UVERBS_WR_RDMA_READ ||
	       opcode == IB_UVERBS_WR_ATOMIC_CMP_AND_SWP ||
	       opcode == IB_UVERBS_WR_ATOMIC_FETCH_AND_ADD ||
	       opcode == SROCE_WR_ATOMIC_WRITE || opcode == SROCE_WR_FLUSH;
}

int sroce_req_init(struct sroce_qp *qp);
void sroce_req_cleanup(struct sroce_qp *qp);
void sroce_req_stop(struct sroce_qp *qp);
void sroce_req_reset(struct sroce_qp *qp);
void sroce_req_rewind(struct sroce_qp *qp, u32 psn);
int sroce_req_probe(struct sroce_qp *qp);
bool sroce_req_rtt_sample(struct sroce_qp *qp, u32 psn);
unsigned long sroce_req_rto(const struct sroce_req *req);
void sroce_req_arm(struct sroce_qp *qp);
void sroce_req_ring_corrupt(struct sroce_qp *qp);
void sroce_req_update(struct sroce_qp *qp, int mask);
void sroce_req_seek(struct sroce_qp *qp, u32 index, u32 offset);
void sroce_req_start(struct sroce_qp *qp);
void sroce_req_rcv(struct sroce_qp *qp, struct sk_buff *skb);
struct sroce_swqe *sroce_req_swqe(const struct sroce_qp *qp, u32 index);

#endif /* SROCE_REQ_H */
