// SPDX-License-Identifier: GPL-2.0 OR Linux-OpenIB
/*
 * DOC: Responses
 *
 * The packets a responder sends back (IBA 9.7.5.2): ACKs, NAKs and RNR
 * NAKs, atomic ACKs, the empty READ response that answers ATOMIC_WRITE
 * and FLUSH, and the buffers of READ responses (exec.c fills them).
 * Acknowledgments are coalesced: the ACK due is held until the end of the
 * engine run (resp.c), and sent before any response of a later PSN, so
 * responses leave in PSN order. A response that cannot be had (no buffer)
 * is not sent again (the requester's timer or a later ACK recovers, IBA
 * 9.7.6.1.3) and is counted as dropped.
 */
#include <rdma/ib_mad.h>

#include "device.h"
#include "net.h"
#include "pkt.h"
#include "qp.h"
#include "reply.h"
#include "trace.h"

static struct sroce_dev *qp_dev(struct sroce_qp *qp)
{
	return to_sdev(qp->ibqp.device);
}

/**
 * sroce_reply_alloc() - a response packet: ACK, atomic ACK or READ response
 * @qp: the QP; called by its receive engine
 * @opcode: the RC opcode (an XRC target's is made from it)
 * @psn: its PSN
 * @paylen: bytes of payload, for the caller to fill
 *
 * The BTH is filled, the AETH carries the MSN, the pad is zeroed.
 *
 * Return: the packet, or NULL when no buffer could be had.
 */
struct sk_buff *sroce_reply_alloc(struct sroce_qp *qp, u8 opcode, u32 psn,
				  u32 paylen)
{
	const struct sroce_opcode_info *op;
	u32 pad = -paylen & 3;
	struct sk_buff *skb;

	/* An XRC target answers with the XRC opcodes (IBA annex A14). */
	if (qp->ibqp.qp_type == IB_QPT_XRC_TGT)
		opcode = SROCE_OPCODE_XRC | (opcode & SROCE_OPCODE_OP_MASK);
	op = &sroce_opcodes[opcode];

	skb = sroce_net_alloc_skb(qp_dev(qp), &qp->attr.av, op->hdr_len +
				  paylen + pad + SROCE_ICRC_SIZE);
	if (!skb)
		return NULL;
	sroce_bth_init((void *)skb->data, opcode, false, pad,
		       IB_DEFAULT_PKEY_FULL, qp->attr.dest_qpn, false, psn);
	memset(skb->data + op->hdr_len + paylen, 0, pad);
	if (op->flags & SROCE_OP_AETH)
		sroce_aeth_set((void *)skb->data + op->aeth,
			       SROCE_AETH_ACK | SROCE_AETH_CREDIT_INVALID,
			       qp->resp.msn);
	return skb;
}

/**
 * sroce_reply_xmit() - send a response to the QP's peer
 * @qp: the QP; called by its receive engine
 * @skb: the response; consumed
 */
void sroce_reply_xmit(struct sroce_qp *qp, struct sk_buff *skb)
{
	sroce_net_xmit(qp_dev(qp), &qp->dst_cache, &qp->attr.av,
		       qp->src_port, skb);
}

/*
 * An acknowledgment that could not be had: not sent again (the
 * requester's timer or a later ACK recovers, IBA 9.7.6.1.3), so counted
 * as dropped, as the IP stack would count a packet it could not send.
 */
static void resp_drop(struct sroce_qp *qp)
{
	sroce_stats_add(&qp_dev(qp)->stats, SROCE_STAT_TX_DROPPED, 1);
}

static void send_aeth(struct sroce_qp *qp, u8 syndrome, u32 psn, u32 msn)
{
	struct sk_buff *skb;

	skb = sroce_reply_alloc(qp, IB_OPCODE_RC_ACKNOWLEDGE, psn, 0);
	if (!skb) {
		resp_drop(qp);
		return;
	}
	sroce_aeth_set((void *)skb->data + sizeof(struct sroce_bth), syndrome,
		       msn);
	sroce_reply_xmit(qp, skb);
}

static void send_ack(struct sroce_qp *qp, u8 syndrome, u32 psn)
{
	send_aeth(qp, syndrome, psn, qp->resp.msn);
}

/**
 * sroce_reply_flush_ack() - send the ACK held, if any
 * @qp: the QP; called by its receive engine, or with it stopped
 *
 * The ACK held for the end of the engine run goes out now, before a
 * response of a later PSN: responses leave in PSN order. A requester
 * that meets an older ACK in the middle of a READ response may take it
 * for the response's end (rdma_rxe's completer does).
 */
void sroce_reply_flush_ack(struct sroce_qp *qp)
{
	if (!qp->resp.ack_pending)
		return;
	qp->resp.ack_pending = false;
	send_aeth(qp, SROCE_AETH_ACK | SROCE_AETH_CREDIT_INVALID,
		  qp->resp.ack_psn, qp->resp.ack_msn);
}

/**
 * sroce_reply_nak() - send a NAK or an RNR NAK, after any ACK held
 * @qp: the QP; called by its receive engine
 * @syndrome: the AETH syndrome (IBA 9.7.5.2.3, 9.7.5.2.8)
 * @psn: the PSN it names
 */
void sroce_reply_nak(struct sroce_qp *qp, u8 syndrome, u32 psn)
{
	trace_sroce_nak_sent(qp, psn, syndrome, 0);
	sroce_reply_flush_ack(qp);
	send_ack(qp, syndrome, psn);
}

/**
 * sroce_reply_atomic_ack() - answer an atomic (IBA 9.7.5.2.6)
 * @qp: the QP; called by its receive engine
 * @psn: the atomic's PSN
 * @orig: the value before the operation
 */
void sroce_reply_atomic_ack(struct sroce_qp *qp, u32 psn, u64 orig)
{
	const struct sroce_opcode_info *op =
		&sroce_opcodes[IB_OPCODE_RC_ATOMIC_ACKNOWLEDGE];
	struct sroce_atmack *ack;
	struct sk_buff *skb;

	sroce_reply_flush_ack(qp);
	skb = sroce_reply_alloc(qp, IB_OPCODE_RC_ATOMIC_ACKNOWLEDGE, psn, 0);
	if (!skb) {
		resp_drop(qp);	/* a duplicate ATOMIC gets it again */
		return;
	}
	ack = (void *)skb->data + op->atmack;
	ack->orig = cpu_to_be64(orig);
	sroce_reply_xmit(qp, skb);
}

/**
 * sroce_reply_empty_read() - answer an ATOMIC_WRITE or a FLUSH
 * @qp: the QP; called by its receive engine
 * @psn: the request's PSN
 *
 * IBA 1.5: with an RDMA READ RESPONSE ONLY without payload.
 */
void sroce_reply_empty_read(struct sroce_qp *qp, u32 psn)
{
	struct sk_buff *skb;

	sroce_reply_flush_ack(qp);
	skb = sroce_reply_alloc(qp, IB_OPCODE_RC_RDMA_READ_RESPONSE_ONLY, psn, 0);
	if (!skb) {
		resp_drop(qp);
		return;
	}
	sroce_reply_xmit(qp, skb);
}
