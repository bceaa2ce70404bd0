// SPDX-License-Identifier: GPL-2.0 OR Linux-OpenIB
/*
 * DOC: Receive dispatch
 *
 * Every RoCEv2 packet for a device arrives here, from its namespace's UDP
 * socket (softirq, under rcu_read_lock()) or, for a packet between two QPs
 * of this host, straight from the sender. The dispatcher applies the
 * transport header checks of IBA 9.6.1 (opcode, transport version,
 * P_Key, lengths), checks the ICRC, finds the destination QP, checks that
 * the QP's type and state take the packet (IBA 10.3.1), and hands requests
 * to the QP's responder and responses to its completer. Every packet it
 * drops is counted, by reason, in the device's counters.
 */
#include <linux/skbuff.h>
#include <linux/udp.h>

#include "device.h"
#include "fault.h"
#include "icrc.h"
#include "mcast.h"
#include "pkt.h"
#include "qp.h"
#include "qp_core.h"
#include "recv.h"
#include "req.h"
#include "resp.h"

static void drop(struct sroce_dev *sdev, struct sk_buff *skb,
		 enum sroce_stat why)
{
	sroce_stats_drop(&sdev->stats, why);
	kfree_skb(skb);
}

static bool icrc_ok(struct sk_buff *skb)
{
	__le32 icrc;

	if (skb_copy_bits(skb, skb->len - SROCE_ICRC_SIZE, &icrc, sizeof(icrc)))
		return false;
	return le32_to_cpu(icrc) ==
	       sroce_icrc_compute(skb, 0, skb->len - SROCE_ICRC_SIZE);
}

/* IBA 9.6.1: the checks that need no QP. */
static bool headers_ok(struct sk_buff *skb)
{
	struct sroce_pkt *pkt = sroce_pkt(skb);
	const struct sroce_opcode_info *op;
	struct sroce_bth *bth;
	unsigned int tail;

	if (!pskb_may_pull(skb, sizeof(*bth)))
		return false;
	bth = sroce_pkt_bth(skb);
	op = &sroce_opcodes[bth->opcode];
	if (!(op->flags & SROCE_OP_VALID) || sroce_bth_tver(bth))
		return false;
	if (!pskb_may_pull(skb, op->hdr_len))
		return false;
	bth = sroce_pkt_bth(skb);

	/* Our only P_Key is the default, full member (IBA 10.9.3). */
	if ((be16_to_cpu(bth->pkey) & 0x7fff) != 0x7fff)
		return false;
	tail = sroce_bth_pad(bth) + SROCE_ICRC_SIZE;
	if (skb->len < op->hdr_len + tail)
		return false;

	pkt->opcode = bth->opcode;
	pkt->flags = op->flags;
	pkt->pad = sroce_bth_pad(bth);
	pkt->psn = sroce_bth_psn(bth);
	pkt->paylen = skb->len - op->hdr_len - tail;
	pkt->se = sroce_bth_se(bth);
	pkt->ackreq = sroce_bth_ackreq(bth);
	return pkt->paylen == 0 || (op->flags & SROCE_OP_PAYLOAD);
}

/* IBA 10.3.1 and 9.6.1.2: does this QP take this packet? */
static bool qp_takes(struct sroce_qp *qp, const struct sroce_pkt *pkt)
{
	/* Pairs with change_state(): what entering the state set is seen. */
	enum ib_qp_state state = smp_load_acquire(&qp->state);
	u32 transport;

	switch (qp->ibqp.qp_type) {
	case IB_QPT_RC:
		transport = SROCE_OP_RC;
		break;
	case IB_QPT_UC:
		transport = SROCE_OP_UC;
		break;
	case IB_QPT_XRC_INI:
		/* XRC splits the two halves (IBA annex A14): responses here, */
		transport = SROCE_OP_XRC | SROCE_OP_RESP;
		break;
	case IB_QPT_XRC_TGT:
		/* and requests here. */
		transport = SROCE_OP_XRC | SROCE_OP_REQ;
		break;
	default:
		transport = SROCE_OP_UD;
		break;
	}
	if ((pkt->flags & transport) != transport)
		return false;
	if (pkt->flags & SROCE_OP_REQ)
		return state >= IB_QPS_RTR && state <= IB_QPS_SQE;
	return state >= IB_QPS_RTS && state <= IB_QPS_SQE;
}

static void dispatch(struct sroce_dev *sdev, struct sk_buff *skb)
{
	struct sroce_pkt *pkt = sroce_pkt(skb);
	struct sroce_qp *qp;

	sroce_stats_add(&sdev->stats, SROCE_STAT_RX_PACKETS, 1);
	sroce_stats_add(&sdev->stats, SROCE_STAT_RX_BYTES, skb->len);
	if (!headers_ok(skb))
		return drop(sdev, skb, SROCE_STAT_RX_DROP_HEADER);
	if (!pkt->loopback && !icrc_ok(skb))
		return drop(sdev, skb, SROCE_STAT_RX_DROP_ICRC);

	/* IBA 10.5.2: datagrams for QP 0xFFFFFF go to a multicast group. */
	if (sroce_bth_qpn(sroce_pkt_bth(skb)) == IB_MULTICAST_QPN) {
		if (!(pkt->flags & SROCE_OP_UD))
			return drop(sdev, skb, SROCE_STAT_RX_DROP_HEADER);
		sroce_mcast_recv(sdev, skb);
		return;
	}
	qp = sroce_qp_get(sdev, sroce_bth_qpn(sroce_pkt_bth(skb)));
	if (!qp)
		return drop(sdev, skb, SROCE_STAT_RX_DROP_NO_QP);
	if (!qp_takes(qp, pkt)) {
		sroce_qp_put(qp);
		return drop(sdev, skb, SROCE_STAT_RX_DROP_QP_STATE);
	}
	/* A stranger's packet must not take a place in the QP's queue. */
	if (sroce_qp_is_connected(qp) &&
	    /* Unlocked: a modify may change the path; the engine checks again. */
	    !data_race(sroce_av_is_peer(&qp->attr.av, skb))) {
		sroce_qp_put(qp);
		return drop(sdev, skb, SROCE_STAT_RX_DROP_ADDR);
	}
	if (pkt->flags & SROCE_OP_REQ)
		sroce_resp_rcv(qp, skb);
	else
		sroce_req_rcv(qp, skb);
	sroce_qp_put(qp);
}

/**
 * sroce_recv_skb() - take one packet from the UDP socket
 * @sdev: the device whose netdev received it
 * @skb: the packet; skb->data points at the UDP header. Consumed.
 *
 * Context: softirq.
 */
void sroce_recv_skb(struct sroce_dev *sdev, struct sk_buff *skb)
{
	__skb_pull(skb, sizeof(struct udphdr));
	sroce_pkt(skb)->loopback = false;
	if (sroce_fault_rx(sdev, skb) == SROCE_FAULT_PASS)
		dispatch(sdev, skb);
}

/**
 * sroce_recv_loopback() - take one packet from a QP of this host
 * @sdev: the device that owns the destination address
 * @skb: the packet with IP and UDP headers; skb->data points at the BTH.
 *       Consumed.
 *
 * Context: bottom halves disabled.
 */
void sroce_recv_loopback(struct sroce_dev *sdev, struct sk_buff *skb)
{
	sroce_pkt(skb)->loopback = true;
	if (sroce_fault_rx(sdev, skb) == SROCE_FAULT_PASS)
		dispatch(sdev, skb);
}

/**
 * sroce_recv_again() - take a packet that fault injection held back
 * @sdev: the device that received it
 * @skb: the packet, as sroce_recv_skb() or sroce_recv_loopback() left it;
 *	 consumed
 *
 * Context: bottom halves disabled, in an RCU read-side section.
 */
void sroce_recv_again(struct sroce_dev *sdev, struct sk_buff *skb)
{
	dispatch(sdev, skb);
}
