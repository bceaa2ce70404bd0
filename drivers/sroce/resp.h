/* SPDX-License-Identifier: GPL-2.0 OR Linux-OpenIB */
#ifndef SROCE_RESP_H
#define SROCE_RESP_H

#include <linux/skbuff.h>
#include <rdma/sroce-abi.h>

#include "odp.h"
#include "sgl.h"
#include "task.h"

struct sroce_qp;

/**
 * enum sroce_resp_result - what executing one request packet came to
 * @SROCE_RESP_OK: executed
 * @SROCE_RESP_RNR: no receive WQE
 * @SROCE_RESP_INV_REQ: invalid request: opcode, sequence, size, rights
 * @SROCE_RESP_LENGTH: a message longer than its receive WQE's buffers
 * @SROCE_RESP_ACCESS: R_Key violation (IBA 9.4.1.1, 10.6.3)
 * @SROCE_RESP_WQE_PROT: the receive WQE names memory the QP may not write
 * @SROCE_RESP_WQE_BAD: the receive WQE is malformed
 * @SROCE_RESP_RING_BAD: the receive ring's indices are corrupt
 * @SROCE_RESP_CQ_FULL: executed, but its completion overflowed the CQ
 * @SROCE_RESP_FAULT: not executed: a page of on-demand paged memory it
 *		      reaches is not mapped, and the responder's fault was
 *		      queued (odp.c); the packet is to come again
 *
 * What follows an error depends on it and on the transport: see
 * resp_error() (resp.c) and the table in Documentation/responder-errors.md.
 */
enum sroce_resp_result {
	SROCE_RESP_OK,
	SROCE_RESP_RNR,
	SROCE_RESP_INV_REQ,
	SROCE_RESP_LENGTH,
	SROCE_RESP_ACCESS,
	SROCE_RESP_WQE_PROT,
	SROCE_RESP_WQE_BAD,
	SROCE_RESP_RING_BAD,
	SROCE_RESP_CQ_FULL,
	SROCE_RESP_FAULT,
};

/**
 * struct sroce_rwqe - the responder's private, checked copy of a receive WQE
 * @wr_id: from the WQE
 * @num_sge: entries in @sge
 * @sge: scatter list
 */
struct sroce_rwqe {
	u64 wr_id;
	u32 num_sge;
	struct sroce_sge sge[SROCE_MAX_SGE];
};

/**
 * struct sroce_rd_res - a responder resource: an executed READ or atomic,
 * kept to answer its duplicates (IBA 9.7.5.1.3, 9.7.5.1.4)
 * @valid: the entry holds a request
 * @atomic: an atomic
 * @empty: an ATOMIC_WRITE or FLUSH, answered by an empty READ response;
 *	   neither: a READ
 * @first_psn: PSN of the request
 * @last_psn: last PSN of its response
 * @va: READ: start address
 * @rkey: READ: rkey
 * @length: READ: bytes
 * @gen: READ: the registration of its MR that the request was checked
 *	 against (mem.c); the response reads no other
 * @orig: atomic: the value before the operation
 * @srqn: XRC target QP: the XRC SRQ the request named (its PD checks
 *	  the READ's accesses)
 */
struct sroce_rd_res {
	bool valid;
	bool atomic;
	bool empty;
	u32 first_psn;
	u32 last_psn;
	u64 va;
	u32 rkey;
	u32 length;
	u32 gen;
	u64 orig;
	u32 srqn;
};

/**
 * struct sroce_read - the READ response being sent
 * @active: a response is under way
 * @first: the next packet starts the response (FIRST or ONLY)
 * @psn: PSN of the next packet
 * @va: address of its data
 * @rkey: rkey of the data
 * @left: bytes still to send
 * @srqn: XRC target QP: the XRC SRQ the request named
 * @gen: the registration checked (struct sroce_rd_res)
 */
struct sroce_read {
	bool active;
	bool first;
	u32 psn;
	u64 va;
	u32 rkey;
	u32 left;
	u32 srqn;
	u32 gen;
};

/**
 * struct sroce_resp - the receive engine: the responder (IBA 9.7.5.1)
 * @task: the engine
 * @req_pkts: request packets waiting for the responder
 * @epsn: expected PSN
 * @msn: message sequence number: messages completed, 24 bits
 * @nak_sent: a PSN sequence error NAK was sent and not yet resolved
 * @drop_msg: UC: drop packets until the next FIRST or ONLY
 * @in_msg: SROCE_OP_SEND or SROCE_OP_WRITE while a message is in
 *	    progress, else 0
 * @last_wqe: in ERR, IB_EVENT_QP_LAST_WQE_REACHED was raised
 * @have_rwqe: @rwqe holds the receive WQE of the SEND in progress
 * @rwqe: that WQE
 * @sgl: position in @rwqe
 * @recv_len: bytes received into @rwqe
 * @va: WRITE in progress: next address
 * @rkey: WRITE in progress: rkey
 * @resid: WRITE in progress: bytes still expected
 * @write_len: WRITE in progress: its length
 * @write_gen: WRITE in progress: the registration of its MR that its first
 *	       packet was checked against; later packets may use no other
 * @ack_psn: PSN to acknowledge, when @ack_pending
 * @ack_msn: the MSN that acknowledgment carries: @msn when it became due
 * @done_psn: PSN of the last SEND, WRITE or atomic packet executed, which
 *	      a duplicate's acknowledgment carries
 * @ack_pending: an acknowledgment is due
 * @res: responder resources, a ring of @res_num entries
 * @res_num: entries of @res (max_dest_rd_atomic, at least 1)
 * @res_head: next entry of @res to use
 * @read: the READ response under way
 * @xsrq: XRC target QP: the XRC SRQ the request being handled names,
 *	  referenced for that time only (NULL outside, or if none matches)
 * @xsrqn: XRC target QP: the number of the XRC SRQ of the message in
 *	   progress, or of the last one; @rwqe came from it
 * @fault: the responder's fault of on-demand paged memory (odp.c)
 *
 * Everything belongs to @task but @req_pkts (see task.c).
 */
struct sroce_resp {
	struct sroce_task task;
	struct sk_buff_head req_pkts;
	u32 epsn;
	u32 msn;
	bool nak_sent;
	bool drop_msg;
	u32 in_msg;
	bool last_wqe;
	bool have_rwqe;
	struct sroce_rwqe rwqe;
	struct sroce_sgl sgl;
	u32 recv_len;
	u64 va;
	u32 rkey;
	u32 resid;
	u32 write_len;
	u32 write_gen;
	u32 ack_psn;
	u32 ack_msn;
	u32 done_psn;
	bool ack_pending;
	struct sroce_rd_res *res;
	u32 res_num;
	u32 res_head;
	struct sroce_read read;
	struct sroce_srq *xsrq;
	u32 xsrqn;
	struct sroce_odp_fault fault;
};

void sroce_resp_init(struct sroce_qp *qp);
void sroce_resp_stop(struct sroce_qp *qp);
void sroce_resp_cleanup(struct sroce_qp *qp);
void sroce_resp_reset(struct sroce_qp *qp);
int sroce_resp_start(struct sroce_qp *qp);
int sroce_resp_resize(struct sroce_qp *qp);
void sroce_resp_rcv(struct sroce_qp *qp, struct sk_buff *skb);

#endif /* SROCE_RESP_H */
