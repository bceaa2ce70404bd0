/* SPDX-License-Identifier: GPL-2.0 OR Linux-OpenIB */
#ifndef SROCE_REQ_H
#define SROCE_REQ_H

#include <linux/skbuff.h>
#include <rdma/sroce-abi.h>

#include "ah.h"
#include "cwnd.h"
#include "retry.h"
#include "sgl.h"
#include "odp.h"
#include "task.h"
#include "zcopy.h"

struct sroce_qp;

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
 * @swqe_mask: SQ index to slot: the SQ's entries less one (a power of 2)
 * @next: SQ index of the next WQE to fetch
 * @cur: SQ index of the WQE being sent, from the oldest outstanding one
 *       (qp->sq.cons) to @next
 * @psn: PSN of the next packet to send; goes back on a resend
 * @next_psn: PSN the next WQE fetched gets: one past the highest PSN sent
 * @offset: bytes of the WQE at @cur already sent
 * @sgl: position in that WQE's scatter/gather list
 * @unacked_psn: oldest PSN not yet acknowledged (RC)
 * @rd_atomic: READ and atomic WQEs outstanding
 * @retry: loss recovery (retry.c)
 * @win: the congestion window (cwnd.c)
 * @tx_high: one past the highest PSN sent so far (a packet below it is a
 *	     resend)
 * @flight: packets this QP counts in its device's req_flight (flight.c)
 * @ackreq_last: the last packet sent asked for an acknowledgment
 * @ack_now: the next packet is to ask for one (the device's bound)
 * @zcopy_live: WQEs whose zero-copy count has not yet fallen (zcopy.c);
 *		the QP is not freed before it is zero
 * @zcopy_copied: the network stack copied a packet's attached pages
 *		  (zcopy.c): the QP copies its payloads itself until its path
 *		  is set again; written by the stack's callbacks, any context
 * @zcopy_waiting: the completer stopped at a WQE whose packets still hold
 *		   its pages: the last one's release runs the engine (zcopy.c)
 * @fault: the engine's fault of on-demand paged memory (odp.c): the
 *	   requester's, for the payload it sends, or the completer's, for a
 *	   READ response or atomic result it places
 * @fault_resend: the completer dropped a response whose memory was not
 *		  mapped: once @fault ends, send again from @fault_psn
 * @fault_psn: see @fault_resend
 *
 * Everything but the timers and @resp_pkts belongs to @task: only the
 * running engine touches it (see task.c).
 */
struct sroce_req {
	struct sroce_task task;
	struct sk_buff_head resp_pkts;
	struct sroce_swqe *swqe;
	u32 swqe_size;
	u32 swqe_mask;
	u32 next;
	u32 cur;
	u32 psn;
	u32 next_psn;
	u32 offset;
	struct sroce_sgl sgl;
	u32 unacked_psn;
	u32 rd_atomic;
	struct sroce_retry retry;
	struct sroce_cwnd win;
	u32 tx_high;
	u32 flight;
	bool ackreq_last;
	bool ack_now;
	atomic_t zcopy_live;
	bool zcopy_copied;
	bool zcopy_waiting;
	struct sroce_odp_fault fault;
	bool fault_resend;
	u32 fault_psn;
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

/**
 * sroce_req_swqe() - the private copy of the WQE at an SQ index
 * @req: the send engine
 * @index: a free-running SQ index
 *
 * Return: the slot.
 */
static inline struct sroce_swqe *sroce_req_swqe(const struct sroce_req *req,
						u32 index)
{
	return (void *)req->swqe + (size_t)(index & req->swqe_mask) *
				   req->swqe_size;
}

int sroce_req_init(struct sroce_qp *qp);
void sroce_req_cleanup(struct sroce_qp *qp);
void sroce_req_stop(struct sroce_qp *qp);
void sroce_req_reset(struct sroce_qp *qp);
void sroce_req_ring_corrupt(struct sroce_qp *qp);
void sroce_req_update(struct sroce_qp *qp, int mask);
void sroce_req_start(struct sroce_qp *qp);
void sroce_req_rcv(struct sroce_qp *qp, struct sk_buff *skb);

#endif /* SROCE_REQ_H */
