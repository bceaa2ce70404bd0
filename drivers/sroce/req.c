// SPDX-License-Identifier: GPL-2.0 OR Linux-OpenIB
/*
 * DOC: Requester
 *
 * The send engine of a QP runs the requester (this file) and the completer
 * (comp.c) of IBA 9.7.4 one after the other, so they share their state
 * without locks. The requester takes WQEs from the SQ ring in order,
 * copies each into a private slot (struct sroce_swqe) and checks it there
 * (so a process rewriting its ring cannot change a WQE under us), assigns
 * its PSNs and sends its packets, segmented at the path MTU (IBA 9.7.2):
 *
 * - SEND and WRITE: one packet per MTU of payload, FIRST/MIDDLE/LAST or
 *   ONLY; a zero-length message is one ONLY packet.
 * - READ: one request packet, but it consumes one PSN per response packet
 *   (IBA 9.7.4.1.4).
 * - Atomics, ATOMIC_WRITE (8 bytes of payload) and FLUSH: one packet,
 *   one PSN; each is answered by a response of its own (IBA 9.4.5 to
 *   9.4.7).
 *
 * On RC, the last packet of every message, every SROCE_REQ_ACK_EVERY-th
 * packet and, when the congestion window is smaller, every packet that
 * fills half of it or all of it ask for an acknowledgment (a window the
 * acknowledgments cannot reopen would wait for the transport timer). A
 * READ or atomic starts only while fewer than max_rd_atomic are
 * outstanding (and, when fenced, none, IBA 10.8.3.3). The transport
 * timer (local ACK timeout, IBA 9.7.6.1.3) restarts on every acknowledged
 * progress; when it fires the requester resends from the oldest
 * unacknowledged PSN, up to retry_cnt times.
 *
 * Congestion: a timeout resends everything outstanding, READ responses
 * included, so without restraint one loss on a busy link can bring a storm
 * of resends that itself causes the next timeout. The requester therefore
 * keeps a congestion window of unacknowledged packets, as TCP does (RFC
 * 5681): SROCE_REQ_WINDOW at first; after a loss the slow-start threshold
 * is half the window, and the window becomes that threshold (sequence
 * NAK) or SROCE_REQ_MIN_WINDOW (timeout). Below the threshold every
 * packet acknowledged opens the window by one (slow start), from it on a
 * whole window acknowledged opens it by one (congestion avoidance), so
 * that a link that drops what exceeds its buffer is not overrun again
 * every round trip. Consecutive timeouts double the wait (the local ACK
 * timeout is a minimum). On UC and UD a WQE is finished when its last
 * packet is sent.
 *
 * Tail loss: a sequence NAK reports a lost packet only when a later one
 * arrives. When the last packets before a pause are lost (the end of a
 * burst that overflowed a link's buffer, or of the last message), nothing
 * follows them and only the transport timer would notice, a full local
 * ACK timeout later (67 ms at perftest's default, a second at rdma_cm's).
 * As TCP's RACK-TLP does (RFC 8985, 7), the timer first fires after a
 * probe timeout of twice the smoothed round trip (at least two ticks,
 * measured from AckReq packets sent once, RFC 6298's smoothing): the
 * requester then sends its oldest unacknowledged packet and its last
 * packet again, both asking for an acknowledgment (sroce_req_probe() says
 * what each reveals). A probe is neither a retry nor a loss by itself: it
 * uses no retry and leaves the window as it is; a sequence NAK it brings
 * is a loss as any other. One probe per wait; the timer then runs for
 * the rest of the local ACK timeout, so that a probe never delays it. The
 * probe timeout runs from the last packet sent for the first time (RFC
 * 8985, 7.2), so a QP still sending new packets is not probed. No probe
 * while a READ or atomic is outstanding: their requests are not probed
 * (the response is the acknowledgment, and a repeated request would be
 * executed again up to the responder's resources), and a peer's ACK of a
 * probed duplicate could cover a READ whose response is on its way, an
 * implied NAK (IBA 9.7.5.2.1) that would resend the READ for nothing.
 *
 * Many QPs: each QP's window alone does not keep many QPs from overrunning
 * a link together (64 QPs at the least window of 8 packets are 512
 * packets in flight). So a device also bounds what its RC and XRC QPs
 * keep unacknowledged together (module parameter "flight", in packets):
 * each send engine counts its QP's unacknowledged packets into the
 * device's total as it goes (flight_count()). Before a packet goes,
 * flight_hold() decides: a QP sends while the total is below the bound;
 * a QP below its fair share (the bound divided among the QPs with packets
 * in flight, at least SROCE_REQ_MIN_SHARE) while the total is below the
 * bound plus that least share for every such QP, so that a QP that comes
 * late gets its share even while earlier ones hold the whole bound; and a
 * QP with nothing in flight always sends. A held QP always has a packet
 * in flight whose acknowledgment runs its engine again: the last packet
 * before it is held asks for one. The hardware counter flight_holds
 * counts the holds.
 */
#include <linux/jiffies.h>
#include <linux/ktime.h>
#include <linux/math64.h>
#include <linux/moduleparam.h>
#include <rdma/ib_mad.h>
#include <rdma/ib_user_verbs.h>

#include "comp.h"
#include "compat.h"
#include "params.h"
#include "cq.h"
#include "device.h"
#include "mem.h"
#include "mr.h"
#include "mw.h"
#include "net.h"
#include "pkt.h"
#include "qp.h"
#include "req.h"

/* Kernel and user WQEs share the send flags' values. */
static_assert(SROCE_SEND_FENCE == IB_SEND_FENCE);
static_assert(SROCE_SEND_SIGNALED == IB_SEND_SIGNALED);
static_assert(SROCE_SEND_SOLICITED == IB_SEND_SOLICITED);
static_assert(SROCE_SEND_INLINE == IB_SEND_INLINE);

#define SROCE_REQ_ACK_EVERY	32	/* AckReq at least this often */
#define SROCE_REQ_BUDGET	64	/* packets per engine run */
#define SROCE_REQ_MIN_PTO_MS	10	/* a probe timeout's least */
#define SROCE_REQ_MAX_RTT_RTO_MS 1000	/* a round trip lengthens the timer to this */
#define SROCE_REQ_MIN_SHARE	2	/* a QP's least share of the device's flight */

static bool sroce_req_tail_probe = true;
module_param_named(tail_probe, sroce_req_tail_probe, bool, 0644);
MODULE_PARM_DESC(tail_probe, "RC tail-loss probes: 1 (the default) or 0; read when the transport timer is armed");

static unsigned int sroce_req_flight = SROCE_REQ_WINDOW;
module_param_named(flight, sroce_req_flight, uint, 0644);
MODULE_PARM_DESC(flight, "RC packets a device's QPs may keep unacknowledged together before a QP past its fair share waits (default 256; 0: no bound)");

/**
 * sroce_req_swqe() - the private copy of the WQE at an SQ index
 * @qp: the QP
 * @index: a free-running SQ index
 *
 * Return: the slot.
 */
struct sroce_swqe *sroce_req_swqe(const struct sroce_qp *qp, u32 index)
{
	const struct sroce_req *req = &qp->req;

	return (void *)req->swqe +
	       (size_t)(index & (qp->sq.num_entries - 1)) * req->swqe_size;
}

static u32 wqe_mask(u32 opcode)
{
	const u32 rc = BIT(IB_QPT_RC) | BIT(IB_QPT_XRC_INI);

	switch (opcode) {
	case IB_UVERBS_WR_SEND:
	case IB_UVERBS_WR_SEND_WITH_IMM:
		return rc | BIT(IB_QPT_UC) | BIT(IB_QPT_UD) | BIT(IB_QPT_GSI);
	case IB_UVERBS_WR_RDMA_WRITE:
	case IB_UVERBS_WR_RDMA_WRITE_WITH_IMM:
		return rc | BIT(IB_QPT_UC);
	case IB_UVERBS_WR_SEND_WITH_INV:
	case IB_UVERBS_WR_RDMA_READ:
	case IB_UVERBS_WR_ATOMIC_CMP_AND_SWP:
	case IB_UVERBS_WR_ATOMIC_FETCH_AND_ADD:
	case SROCE_WR_ATOMIC_WRITE:
	case SROCE_WR_FLUSH:
		return rc;
	case IB_UVERBS_WR_BIND_MW:
	case IB_UVERBS_WR_LOCAL_INV:
		return BIT(IB_QPT_RC) | BIT(IB_QPT_UC);
	default:
		return 0;
	}
}

/* Work requests done inside this host, without packets (IBA 10.8.3.?). */
static bool is_local(u32 opcode)
{
	return opcode == IB_UVERBS_WR_BIND_MW ||
	       opcode == IB_UVERBS_WR_LOCAL_INV || opcode == IB_WR_REG_MR;
}

/* Requests of one packet without payload. */
static bool is_bare_request(u32 opcode)
{
	return opcode == IB_UVERBS_WR_RDMA_READ ||
	       opcode == IB_UVERBS_WR_ATOMIC_CMP_AND_SWP ||
	       opcode == IB_UVERBS_WR_ATOMIC_FETCH_AND_ADD ||
	       opcode == SROCE_WR_FLUSH;
}

/* Resolve a UD destination; the AH is read under its table's lock. */
static int fetch_ah(struct sroce_qp *qp, struct sroce_swqe *s, u32 ah_num)
{
	struct sroce_dev *sdev = to_sdev(qp->ibqp.device);
	struct sroce_ah *ah;
	int err = 0;

	xa_lock_bh(&sdev->ahs);
	ah = xa_load(&sdev->ahs, ah_num);
	if (ah && ah->ibah.pd == qp->ibqp.pd)
		s->av = ah->av;
	else
		err = -EINVAL;
	xa_unlock_bh(&sdev->ahs);
	return err;
}

/*
 * Copy the WQE at @index into its private slot and check it (IBA 10.8.3).
 * Returns the completion status: IB_WC_SUCCESS, or why the WQE fails.
 */
static enum ib_wc_status fetch_wqe(struct sroce_qp *qp, u32 index,
				   struct sroce_swqe *s)
{
	const struct sroce_send_wqe *w = sroce_queue_slot(&qp->sq, index);
	struct sroce_send_wqe hdr;
	u64 len;

	memcpy(&hdr, w, sizeof(hdr));
	memset(s, 0, sizeof(*s));
	s->wr_id = hdr.wr_id;
	s->opcode = hdr.opcode;
	s->send_flags = hdr.send_flags;
	s->ex = hdr.ex;
	s->signaled = qp->sq_sig_all ||
		      (hdr.send_flags & IB_SEND_SIGNALED);
	s->state = SROCE_SWQE_SENDING;

	/* Fast registration is for kernel consumers only. */
	if (hdr.opcode == IB_WR_REG_MR && !qp->user) {
		s->rkey = hdr.wr.bind_mw.mr_lkey;
		s->bind_access = hdr.wr.bind_mw.access;
		return IB_WC_SUCCESS;
	}
	if (!(wqe_mask(hdr.opcode) & BIT(qp->ibqp.qp_type)))
		return IB_WC_LOC_QP_OP_ERR;
	/* IBA annex A14: every XRC message names the target's SRQ. */
	if (qp->ibqp.qp_type == IB_QPT_XRC_INI)
		s->xrc_srqn = hdr.xrc_remote_srqn & SROCE_QPN_MASK;
	if (hdr.opcode == IB_UVERBS_WR_BIND_MW) {
		s->rkey = hdr.wr.bind_mw.mw_rkey;
		s->remote_addr = hdr.wr.bind_mw.addr;
		s->bind_len = hdr.wr.bind_mw.length;
		s->bind_lkey = hdr.wr.bind_mw.mr_lkey;
		s->bind_access = hdr.wr.bind_mw.access;
		return IB_WC_SUCCESS;
	}
	if (hdr.opcode == IB_UVERBS_WR_LOCAL_INV)
		return IB_WC_SUCCESS;
	if (hdr.opcode == SROCE_WR_ATOMIC_WRITE) {
		/* IBA 9.4.7: 8 bytes, to an 8-byte aligned address. */
		s->remote_addr = hdr.wr.atomic_write.remote_addr;
		s->rkey = hdr.wr.atomic_write.rkey;
		memcpy(s->sge, hdr.wr.atomic_write.data,
		       sizeof(hdr.wr.atomic_write.data));
		s->length = sizeof(hdr.wr.atomic_write.data);
		return IB_WC_SUCCESS;
	}
	if (hdr.opcode == SROCE_WR_FLUSH) {
		/* IBA 9.4.6: the range is the RETH's; nothing local. */
		if (hdr.wr.flush.length > U32_MAX)
			return IB_WC_LOC_LEN_ERR;
		s->remote_addr = hdr.wr.flush.remote_addr;
		s->rkey = hdr.wr.flush.rkey;
		s->length = hdr.wr.flush.length;
		s->flush_type = hdr.wr.flush.type;
		s->flush_level = hdr.wr.flush.level;
		return IB_WC_SUCCESS;
	}

	if (hdr.send_flags & IB_SEND_INLINE) {
		if (sroce_wr_is_rd_atomic(hdr.opcode) ||
		    hdr.inline_len > qp->cap.max_inline_data)
			return IB_WC_LOC_LEN_ERR;
		memcpy(s->sge, w->sge, hdr.inline_len);
		len = hdr.inline_len;
	} else {
		if (hdr.num_sge > qp->cap.max_send_sge)
			return IB_WC_LOC_LEN_ERR;
		s->num_sge = hdr.num_sge;
		memcpy(s->sge, w->sge, hdr.num_sge * sizeof(struct sroce_sge));
		len = sroce_sgl_length(s->sge, s->num_sge);
	}
	if (len > SROCE_MAX_MSG_SIZE)
		return IB_WC_LOC_LEN_ERR;
	s->length = len;

	switch (hdr.opcode) {
	case IB_UVERBS_WR_RDMA_WRITE:
	case IB_UVERBS_WR_RDMA_WRITE_WITH_IMM:
	case IB_UVERBS_WR_RDMA_READ:
		s->remote_addr = hdr.wr.rdma.remote_addr;
		s->rkey = hdr.wr.rdma.rkey;
		break;
	case IB_UVERBS_WR_ATOMIC_CMP_AND_SWP:
	case IB_UVERBS_WR_ATOMIC_FETCH_AND_ADD:
		if (len != sizeof(u64))
			return IB_WC_LOC_LEN_ERR;
		s->remote_addr = hdr.wr.atomic.remote_addr;
		s->rkey = hdr.wr.atomic.rkey;
		s->compare_add = hdr.wr.atomic.compare_add;
		s->swap = hdr.wr.atomic.swap;
		break;
	default:
		break;
	}

	if (qp->ibqp.qp_type == IB_QPT_UD || qp->ibqp.qp_type == IB_QPT_GSI) {
		if (fetch_ah(qp, s, hdr.wr.ud.ah_num))
			return IB_WC_LOC_QP_OP_ERR;
		if (len > qp->mtu)
			return IB_WC_LOC_LEN_ERR;
		s->remote_qpn = hdr.wr.ud.remote_qpn & SROCE_QPN_MASK;
		s->remote_qkey = hdr.wr.ud.remote_qkey;
	}
	return IB_WC_SUCCESS;
}

/* Packets a WQE's message occupies in the PSN space. */
static u32 wqe_npkts(struct sroce_qp *qp, const struct sroce_swqe *s)
{
	if (s->opcode != IB_UVERBS_WR_RDMA_READ &&
	    sroce_wr_is_rd_atomic(s->opcode))
		return 1;
	return max(DIV_ROUND_UP(s->length, qp->mtu), 1U);
}

/* The opcode of one packet of @s: @first and @last place it. */
static u8 packet_opcode(struct sroce_qp *qp, const struct sroce_swqe *s,
			bool first, bool last)
{
	static const u8 bases[] = {
		[IB_QPT_RC] = IB_OPCODE_RC,
		[IB_QPT_UC] = IB_OPCODE_UC,
		[IB_QPT_UD] = IB_OPCODE_UD,
		[IB_QPT_GSI] = IB_OPCODE_UD,
		[IB_QPT_XRC_INI] = SROCE_OPCODE_XRC,
	};
	u8 base = bases[qp->ibqp.qp_type];
	bool imm = s->opcode == IB_UVERBS_WR_SEND_WITH_IMM ||
		   s->opcode == IB_UVERBS_WR_RDMA_WRITE_WITH_IMM;
	u8 op;

	switch (s->opcode) {
	case IB_UVERBS_WR_RDMA_READ:
		return base + IB_OPCODE_RDMA_READ_REQUEST;
	case IB_UVERBS_WR_ATOMIC_CMP_AND_SWP:
		return base + IB_OPCODE_COMPARE_SWAP;
	case IB_UVERBS_WR_ATOMIC_FETCH_AND_ADD:
		return base + IB_OPCODE_FETCH_ADD;
	case SROCE_WR_ATOMIC_WRITE:
		return base + SROCE_OPCODE_RC_ATOMIC_WRITE;
	case SROCE_WR_FLUSH:
		return base + SROCE_OPCODE_RC_FLUSH;
	case IB_UVERBS_WR_RDMA_WRITE:
	case IB_UVERBS_WR_RDMA_WRITE_WITH_IMM:
		if (first && last)
			op = imm ? IB_OPCODE_RDMA_WRITE_ONLY_WITH_IMMEDIATE :
				   IB_OPCODE_RDMA_WRITE_ONLY;
		else if (last)
			op = imm ? IB_OPCODE_RDMA_WRITE_LAST_WITH_IMMEDIATE :
				   IB_OPCODE_RDMA_WRITE_LAST;
		else
			op = first ? IB_OPCODE_RDMA_WRITE_FIRST :
				     IB_OPCODE_RDMA_WRITE_MIDDLE;
		return base + op;
	case IB_UVERBS_WR_SEND_WITH_INV:
		if (last)
			return base + (first ? IB_OPCODE_SEND_ONLY_WITH_INVALIDATE :
					       IB_OPCODE_SEND_LAST_WITH_INVALIDATE);
		break;
	default:
		if (last && imm)
			return base + (first ? IB_OPCODE_SEND_ONLY_WITH_IMMEDIATE :
					       IB_OPCODE_SEND_LAST_WITH_IMMEDIATE);
		if (last)
			return base + (first ? IB_OPCODE_SEND_ONLY :
					       IB_OPCODE_SEND_LAST);
		break;
	}
	return base + (first ? IB_OPCODE_SEND_FIRST : IB_OPCODE_SEND_MIDDLE);
}

static void fill_ext_headers(struct sroce_qp *qp, const struct sroce_swqe *s,
			     struct sk_buff *skb, u8 opcode, u32 offset)
{
	const struct sroce_opcode_info *op = &sroce_opcodes[opcode];
	struct sroce_reth *reth = (void *)skb->data + op->reth;
	struct sroce_atmeth *atm = (void *)skb->data + op->reth;
	u32 qkey;

	if (op->flags & SROCE_OP_XRCETH)
		sroce_xrceth_set((void *)skb->data + op->xrceth, s->xrc_srqn);
	if (op->flags & SROCE_OP_DETH) {
		/* IBA 10.2.5: a Q_Key with the high bit set means the QP's. */
		qkey = s->remote_qkey & BIT(31) ? qp->attr.qkey : s->remote_qkey;
		sroce_deth_set((void *)skb->data + op->deth, qkey,
			       qp->ibqp.qp_num);
	}
	if (op->flags & SROCE_OP_FETH)
		sroce_feth_set((void *)skb->data + op->feth, s->flush_type,
			       s->flush_level);
	if (op->flags & SROCE_OP_RETH) {
		reth->va = cpu_to_be64(s->remote_addr + offset);
		reth->rkey = cpu_to_be32(s->rkey);
		reth->len = cpu_to_be32(s->length - offset);
	}
	if (op->flags & SROCE_OP_ATMETH) {
		atm->va = cpu_to_be64(s->remote_addr);
		atm->rkey = cpu_to_be32(s->rkey);
		if (s->opcode == IB_UVERBS_WR_ATOMIC_CMP_AND_SWP) {
			atm->swap_add = cpu_to_be64(s->swap);
			atm->compare = cpu_to_be64(s->compare_add);
		} else {
			atm->swap_add = cpu_to_be64(s->compare_add);
			atm->compare = 0;
		}
	}
	/* Immediate data is opaque, kept as given; an R_Key is big-endian. */
	if (op->flags & SROCE_OP_IMMDT)
		((struct sroce_immdt *)(skb->data + op->immdt))->imm =
			(__force __be32)s->ex;
	else if (op->flags & SROCE_OP_IETH)
		((struct sroce_ieth *)(skb->data + op->immdt))->rkey =
			cpu_to_be32(s->ex);
}

/* Copy @len bytes of the message at the requester's position. */
static int fill_payload(struct sroce_qp *qp, const struct sroce_swqe *s,
			void *dst, u32 len)
{
	if (!s->num_sge) {
		memcpy(dst, (const u8 *)s->sge + qp->req.offset, len);
		return 0;
	}
	return sroce_sgl_copy_out(to_sdev(qp->ibqp.device), qp->ibqp.pd,
				  &qp->req.sgl, dst, len);
}

/*
 * The payload of the packet being built, after its headers: attached
 * (@zcopy) and followed by the trailer, or copied and padded. Returns 0,
 * -EAGAIN when it could not be attached (nothing was: copy it instead),
 * -ENOMEM for no trailer (nothing was attached), or the error of
 * sroce_sgl_copy_out() or sroce_sgl_attach().
 */
static int add_payload(struct sroce_qp *qp, struct sroce_swqe *s,
		       struct sk_buff *skb, u32 hdr_len, u32 paylen, u32 pad,
		       bool zcopy)
{
	struct sroce_dev *sdev = to_sdev(qp->ibqp.device);
	void *trailer;
	int err;

	if (!zcopy) {
		err = paylen ? fill_payload(qp, s, skb->data + hdr_len, paylen) :
			       0;
		memset(skb->data + hdr_len + paylen, 0, pad);
		return err;
	}
	trailer = sroce_net_trailer_alloc(sdev);
	if (!trailer)
		return -ENOMEM;
	/* One fragment left for the trailer. */
	err = sroce_sgl_attach(sdev, qp->ibqp.pd, &qp->req.sgl, skb, paylen, 1);
	if (err) {
		sroce_net_trailer_free(trailer);
		return err;
	}
	sroce_net_trailer_add(skb, trailer, pad);
	sroce_zcopy_attach(qp, &s->zcopy, skb);
	sroce_stats_add(&sdev->stats, SROCE_STAT_TX_ZCOPY, 1);
	return 0;
}

/* UDP source port of a datagram: from the flow label (IBA A17.3.1). */
static u16 ud_src_port(struct sroce_qp *qp, const struct sroce_swqe *s)
{
	u32 fl = s->av.flow_label ?:
		 rdma_calc_flow_label(qp->ibqp.qp_num, s->remote_qpn);

	return rdma_flow_label_to_udp_sport(fl);
}

static const struct sroce_av *packet_av(struct sroce_qp *qp,
					const struct sroce_swqe *s)
{
	return qp->ibqp.qp_type == IB_QPT_UD || qp->ibqp.qp_type == IB_QPT_GSI ?
	       &s->av : &qp->attr.av;
}

/*
 * Whether the packet of @psn (not the last of its message) asks for an
 * acknowledgment: every SROCE_REQ_ACK_EVERY-th, and the one that fills
 * half of a smaller window or all of it.
 */
static bool ack_due(struct sroce_qp *qp, u32 psn)
{
	struct sroce_req *req = &qp->req;
	u32 used = sroce_psn_diff(psn, req->unacked_psn) + 1;

	if (!(psn % SROCE_REQ_ACK_EVERY))
		return true;
	if (req->cwnd >= 2 * SROCE_REQ_ACK_EVERY)
		return false;
	return used >= req->cwnd || used == req->cwnd / 2;
}

/*
 * Build and send the next packet of @s; *@sent says whether it went (no
 * packet buffer: it did not, and is tried again). Returns IB_WC_SUCCESS,
 * or a completion status when the WQE fails locally.
 */
static enum ib_wc_status send_packet(struct sroce_qp *qp, struct sroce_swqe *s,
				     bool *sent)
{
	struct sroce_dev *sdev = to_sdev(qp->ibqp.device);
	struct sroce_req *req = &qp->req;
	const struct sroce_av *av = packet_av(qp, s);
	/* Packets are MTU-sized up to the last: the offset gives the PSN. */
	u32 paylen, pad, psn = sroce_psn_add(s->first_psn,
					      req->offset / qp->mtu);
	const struct sroce_opcode_info *op;
	bool last, single, ackreq, zcopy;
	struct sk_buff *skb;
	u8 opcode;
	int err;

	/* READ, atomic and FLUSH requests: one packet, no payload. */
	single = is_bare_request(s->opcode);
	paylen = single ? 0 : min(s->length - req->offset, qp->mtu);
	last = single || req->offset + paylen == s->length;
	opcode = packet_opcode(qp, s, req->offset == 0, last);
	op = &sroce_opcodes[opcode];
	pad = -paylen & 3;
	ackreq = sroce_qp_is_reliable(qp) && (last || ack_due(qp, psn));
	ackreq |= req->probing || req->ack_now;

	*sent = false;
	zcopy = !single && sroce_zcopy_ok(qp, s, paylen);
	for (;;) {
		/* Attached, the payload and trailer are not in the buffer. */
		skb = sroce_net_alloc_skb(sdev, av, op->hdr_len + (zcopy ? 0 :
					  paylen + pad + SROCE_ICRC_SIZE));
		if (!skb)
			return IB_WC_SUCCESS;
		sroce_bth_init((void *)skb->data, opcode,
			       last && (s->send_flags & IB_SEND_SOLICITED), pad,
			       IB_DEFAULT_PKEY_FULL,
			       s->remote_qpn ?: qp->attr.dest_qpn, ackreq, psn);
		fill_ext_headers(qp, s, skb, opcode, req->offset);
		err = add_payload(qp, s, skb, op->hdr_len, paylen, pad, zcopy);
		if (!err)
			break;
		kfree_skb(skb);
		if (err == -ENOMEM)
			return IB_WC_SUCCESS;	/* tried again */
		if (err != -EAGAIN)
			return IB_WC_LOC_PROT_ERR;
		zcopy = false;
	}

	if (sroce_psn_diff(psn, req->tx_high) >= 0) {
		/* Sent for the first time: the probe timeout runs from here. */
		req->tx_jiffies = jiffies;
		/* A round-trip sample from a SEND or WRITE packet. */
		if (ackreq && !single && !req->rtt_busy) {
			req->rtt_busy = true;
			req->rtt_psn = psn;
			req->rtt_start = ktime_get_ns();
		}
	}
	if (single) {
		req->psn = sroce_psn_add(s->last_psn, 1);
		req->offset = s->length;
	} else {
		req->psn = sroce_psn_add(psn, 1);
		req->offset += paylen;
	}
	if (sroce_psn_diff(req->psn, req->tx_high) > 0)
		req->tx_high = req->psn;
	req->ack_now = false;
	req->ackreq_last = ackreq;
	if (av == &qp->attr.av)
		sroce_net_xmit(sdev, &qp->dst_cache, av, qp->src_port, skb);
	else
		sroce_net_xmit(sdev, NULL, av, ud_src_port(qp, s), skb);
	*sent = true;
	return IB_WC_SUCCESS;
}

/**
 * sroce_req_seek() - position the requester in a WQE
 * @qp: the QP; called by its send engine
 * @index: SQ index of the WQE
 * @offset: byte of its message to send next
 */
void sroce_req_seek(struct sroce_qp *qp, u32 index, u32 offset)
{
	struct sroce_swqe *s = sroce_req_swqe(qp, index);
	struct sroce_req *req = &qp->req;

	req->cur = index;
	req->offset = offset;
	sroce_sgl_init(&req->sgl, s->sge, s->num_sge);
	sroce_sgl_skip(&req->sgl, offset);
}

/**
 * sroce_req_rewind() - resend from a PSN (a NAK, an RNR NAK or a timeout)
 * @qp: the QP; called by its send engine
 * @psn: the first PSN to resend; it lies in an outstanding WQE
 *
 * Every WQE from the one holding @psn on is sent again with the PSNs it
 * had (IBA 9.7.4.1.3); a READ asks again only for what has not arrived.
 */
void sroce_req_rewind(struct sroce_qp *qp, u32 psn)
{
	struct sroce_req *req = &qp->req;
	struct sroce_swqe *s;
	u32 i;

	for (i = qp->sq.cons; i != req->next; i++) {
		s = sroce_req_swqe(qp, i);
		if (s->state == SROCE_SWQE_DONE ||
		    sroce_psn_diff(psn, s->last_psn) > 0)
			continue;
		break;
	}
	if (i == req->next) {
		/* Nothing left to resend: go on with new WQEs. */
		req->psn = req->next_psn;
		sroce_req_seek(qp, req->next, 0);
		return;
	}
	s = sroce_req_swqe(qp, i);
	if (s->opcode == IB_UVERBS_WR_RDMA_READ) {
		psn = sroce_psn_add(s->first_psn, s->read_off / qp->mtu);
		sroce_req_seek(qp, i, s->read_off);
	} else if (sroce_psn_diff(psn, s->first_psn) <= 0) {
		psn = s->first_psn;
		sroce_req_seek(qp, i, 0);
	} else {
		sroce_req_seek(qp, i, sroce_psn_diff(psn, s->first_psn) * qp->mtu);
	}
	req->psn = psn;
	/* A sample whose packet is sent again measures nothing (Karn). */
	if (req->rtt_busy && sroce_psn_diff(psn, req->rtt_psn) <= 0)
		req->rtt_busy = false;
	for (; i != req->next; i++) {
		s = sroce_req_swqe(qp, i);
		if (s->state == SROCE_SWQE_SENT)
			s->state = SROCE_SWQE_SENDING;
	}
}

/* The outstanding WQE that holds @psn, if any; its SQ index in *@index. */
static struct sroce_swqe *wqe_of_psn(struct sroce_qp *qp, u32 psn, u32 *index)
{
	struct sroce_swqe *s;
	u32 i;

	for (i = qp->sq.cons; i != qp->req.next; i++) {
		s = sroce_req_swqe(qp, i);
		if (s->state == SROCE_SWQE_DONE)
			continue;
		if (sroce_psn_diff(psn, s->first_psn) >= 0 &&
		    sroce_psn_diff(psn, s->last_psn) <= 0) {
			*index = i;
			return s;
		}
	}
	return NULL;
}

/*
 * Send the packet of @psn once more, with AckReq, and leave the
 * requester where it was. Not for READ and atomic requests (see the top
 * of this file). Returns true if it went.
 */
static bool probe_packet(struct sroce_qp *qp, u32 psn)
{
	struct sroce_req *req = &qp->req;
	u32 cur = req->cur, offset = req->offset, next = req->psn;
	bool ackreq_last = req->ackreq_last;
	struct sroce_sgl sgl = req->sgl;
	enum ib_wc_status status;
	struct sroce_swqe *s;
	bool sent = false;
	u32 i;

	s = wqe_of_psn(qp, psn, &i);
	if (!s || sroce_wr_is_rd_atomic(s->opcode))
		return false;
	sroce_req_seek(qp, i, sroce_psn_diff(psn, s->first_psn) * qp->mtu);
	req->probing = true;
	status = send_packet(qp, s, &sent);
	req->probing = false;
	/* Whether the last packet in PSN order asked is as it was. */
	req->ackreq_last = ackreq_last || (sent && psn == sroce_psn_add(next,
									SROCE_PSN_MASK));
	req->cur = cur;
	req->offset = offset;
	req->sgl = sgl;
	req->psn = next;
	/* A failure here (an MR gone meanwhile) the next real send meets. */
	return status == IB_WC_SUCCESS && sent;
}

/**
 * sroce_req_probe() - the tail-loss probe: two packets again, with AckReq
 * @qp: the QP; called by its send engine when the probe timeout fired
 *
 * The oldest unacknowledged packet, then the last one sent (one packet
 * if they are the same). A responder that had both acknowledges again. If
 * the last ones were lost, the first is a duplicate (acknowledged: what
 * arrived is done) and the second out of sequence (a sequence NAK: go
 * back from the first lost). If the responder's sequence NAK was lost, it
 * drops everything out of sequence without a word until its expected PSN
 * comes (IBA 9.7.5.1.1): the first probe is that PSN, and the second,
 * out of sequence again, gets a new NAK. See the top of this file.
 *
 * Nothing while a READ or atomic is outstanding (see probe_timeout()).
 *
 * Return: the number of packets sent.
 */
int sroce_req_probe(struct sroce_qp *qp)
{
	struct sroce_req *req = &qp->req;
	u32 last = sroce_psn_add(req->psn, SROCE_PSN_MASK);	/* psn - 1 */
	int n = 0;

	if (req->psn == req->unacked_psn || req->rnr_wait || req->rd_atomic)
		return 0;
	/* An ACK a probe brings says nothing of the sample's packet. */
	req->rtt_busy = false;
	n += probe_packet(qp, req->unacked_psn);
	if (last != req->unacked_psn)
		n += probe_packet(qp, last);
	return n;
}

/**
 * sroce_req_rtt_sample() - the packets before a PSN are acknowledged
 * @qp: the QP; called by its send engine
 * @psn: the first PSN not acknowledged
 *
 * Ends the round-trip sample running, if it covers its packet, and
 * smooths it into srtt_us and rttvar_us (RFC 6298, 2: an eighth of each
 * new sample, and a quarter of its deviation).
 *
 * Return: whether a sample ended.
 */
bool sroce_req_rtt_sample(struct sroce_qp *qp, u32 psn)
{
	struct sroce_req *req = &qp->req;
	u64 us, dev;

	if (!req->rtt_busy || sroce_psn_diff(psn, req->rtt_psn) <= 0)
		return false;
	req->rtt_busy = false;
	us = div_u64(ktime_get_ns() - req->rtt_start, NSEC_PER_USEC);
	us = clamp_t(u64, us, 1, U32_MAX / 8);
	if (!req->srtt_us) {
		req->srtt_us = us;
		req->rttvar_us = us / 2;
	} else {
		dev = us > req->srtt_us ? us - req->srtt_us :
					  req->srtt_us - us;
		req->rttvar_us = req->rttvar_us - (req->rttvar_us >> 2) +
				 (dev >> 2);
		req->srtt_us = req->srtt_us - (req->srtt_us >> 3) + (us >> 3);
	}
	req->srtt_us = max(req->srtt_us, 1U);
	return true;
}

/* The round trip's part of the timer (RFC 6298, 2), in microseconds. */
static u64 rtt_rto_us(const struct sroce_req *req)
{
	/* At least a quarter of the round trip: a steady one has no deviation. */
	return req->srtt_us + max(4 * (u64)req->rttvar_us,
				  (u64)req->srtt_us / 4);
}

/**
 * sroce_req_rto() - the retransmission timeout
 * @req: the requester
 *
 * The local ACK timeout, or longer when the round trip measured says the
 * acknowledgments take longer (RFC 6298, 2: srtt + 4 rttvar, at least
 * srtt / 4 more than srtt, here at most SROCE_REQ_MAX_RTT_RTO_MS). The
 * IBA's timeout is the least a requester waits (9.7.6.1.3); on a slow
 * link many QPs together fill the queues until the round trip exceeds
 * it, and a timer that fired then would resend what is only late, and
 * spend the retries of a QP that lost nothing.
 *
 * Return: the timeout in jiffies; 0 when the local ACK timeout is
 * infinite.
 */
unsigned long sroce_req_rto(const struct sroce_req *req)
{
	u64 us;

	if (!req->timeout || !req->srtt_us)
		return req->timeout;
	us = min_t(u64, rtt_rto_us(req), SROCE_REQ_MAX_RTT_RTO_MS * USEC_PER_MSEC);
	return max(req->timeout, usecs_to_jiffies(us));
}

/*
 * The transport timer's wait after @req->backoff timeouts in a row: the
 * local ACK timeout doubled for each, as always; the round trip's longer
 * wait doubled too, but never past SROCE_REQ_MAX_RTT_RTO_MS: it only
 * keeps the timer from firing at acknowledgments on their way, and must
 * not make a dead peer take minutes to find.
 */
static unsigned long timer_wait(const struct sroce_req *req)
{
	unsigned long cap = msecs_to_jiffies(SROCE_REQ_MAX_RTT_RTO_MS);

	return max(req->timeout << req->backoff,
		   min(sroce_req_rto(req) << req->backoff, cap));
}

/*
 * The probe timeout (RFC 8985, 7.2): twice the smoothed round trip, half
 * the local ACK timeout before the first sample, at least
 * SROCE_REQ_MIN_PTO_MS (and two ticks). 0, no probe: when it would not
 * come well before the transport timer, and while a READ or atomic is
 * outstanding (their requests are not probed, and a peer's duplicate ACK
 * could look like an implied NAK for a READ whose response is on its
 * way).
 */
static unsigned long probe_timeout(struct sroce_req *req)
{
	unsigned long pto;

	if (req->probed || req->backoff || !req->timeout || req->rd_atomic ||
	    !READ_ONCE(sroce_req_tail_probe))
		return 0;
	pto = req->srtt_us ? usecs_to_jiffies(2 * req->srtt_us) :
			     req->timeout / 2;
	pto = max3(pto, msecs_to_jiffies(SROCE_REQ_MIN_PTO_MS), 2UL);
	return 2 * pto <= sroce_req_rto(req) ? pto : 0;
}

/**
 * sroce_req_arm() - (re)start the transport timer from now
 * @qp: the QP; called by its send engine, with packets outstanding
 *
 * For the probe timeout while the probe of this wait has not gone, else
 * for the retransmission timeout (sroce_req_rto(): at least the local ACK
 * timeout), doubled for each timeout in a row (timer_wait()). Nothing
 * when the timeout is infinite.
 */
void sroce_req_arm(struct sroce_qp *qp)
{
	struct sroce_req *req = &qp->req;
	unsigned long pto = probe_timeout(req);

	if (!req->timeout)
		return;
	req->probe_armed = pto != 0;
	req->pto = pto;
	mod_timer(&req->retrans_timer,
		  jiffies + (pto ?: timer_wait(req)));
}

/* Bind a window, invalidate a key, or register a fast-registration MR. */
static enum ib_wc_status local_op(struct sroce_qp *qp, struct sroce_swqe *s)
{
	struct sroce_dev *sdev = to_sdev(qp->ibqp.device);

	switch (s->opcode) {
	case IB_UVERBS_WR_BIND_MW:
		return sroce_mw_bind(qp, s);
	case IB_UVERBS_WR_LOCAL_INV:
		return sroce_mem_invalidate(sdev, qp->ibqp.pd, qp->ibqp.qp_num,
					    s->ex) ? IB_WC_LOC_PROT_ERR :
						     IB_WC_SUCCESS;
	default:
		return sroce_mr_fast_reg(qp, s->rkey, s->ex, s->bind_access);
	}
}

/*
 * WQEs posted and not yet taken by the requester. The producer index is
 * the process's to write: one that went back past WQEs already taken (or
 * that claims more WQEs than slots) means a corrupt ring. Returns false
 * then.
 */
static bool sq_untaken(struct sroce_qp *qp, u32 *count)
{
	u32 taken = qp->req.next - qp->sq.cons;

	if (sroce_queue_count(&qp->sq, count) || *count < taken)
		return false;
	*count -= taken;
	return true;
}

/**
 * sroce_req_ring_corrupt() - the process broke its SQ ring's indices
 * @qp: the QP; called by its send engine
 *
 * A local work queue catastrophic error (IBA 11.6.3.1): the QP enters the
 * error state, which flushes the WQEs taken so far, and the consumer gets
 * IB_EVENT_QP_FATAL. Nothing else is read from the ring until a reset.
 */
void sroce_req_ring_corrupt(struct sroce_qp *qp)
{
	ibdev_warn_ratelimited(qp->ibqp.device,
			       "QP %u: send queue indices corrupt, QP to error\n",
			       qp->ibqp.qp_num);
	if (sroce_qp_fail(qp, IB_WC_LOC_QP_OP_ERR))
		sroce_qp_event(qp, IB_EVENT_QP_FATAL);
}

/*
 * May the WQE copied into @s start now? (IBA 10.8.3.3: fences,
 * rd_atomic) Asked of the private copy, never of the ring, which the
 * process may rewrite between the question and the copy.
 */
static bool may_start(struct sroce_qp *qp, const struct sroce_swqe *s)
{
	u32 max = max_t(u32, qp->attr.max_rd_atomic, 1);

	if ((s->send_flags & IB_SEND_FENCE) && qp->req.rd_atomic)
		return false;
	return !sroce_wr_is_rd_atomic(s->opcode) || qp->req.rd_atomic < max;
}

/*
 * Do @s's PSNs fit beside those outstanding? All of them together stay
 * within SROCE_PSN_MAX_OUTSTANDING (IBA 9.7.1), or an acknowledgment could
 * not be placed: a READ of 2 GiB at a 256-byte MTU takes 2^23 PSNs. One
 * that could never fit starts anyway, alone, to fail (start_next()).
 */
static bool psn_room(struct sroce_qp *qp, const struct sroce_swqe *s)
{
	const struct sroce_req *req = &qp->req;
	s32 used = sroce_psn_diff(req->next_psn, req->unacked_psn);

	/* Only a reliable QP's PSNs wait for acknowledgments. */
	if (!sroce_qp_is_reliable(qp) || used <= 0)
		return true;
	return (u64)used + wqe_npkts(qp, s) <= SROCE_PSN_MAX_OUTSTANDING;
}

/*
 * Take the next WQE off the ring, if the state and the limits allow.
 * Returns false when there is none to start.
 */
static bool start_next(struct sroce_qp *qp)
{
	struct sroce_req *req = &qp->req;
	enum ib_wc_status status;
	struct sroce_swqe *s;
	u32 count;

	if (READ_ONCE(qp->state) != IB_QPS_RTS)
		return false;	/* SQD: no new WQE starts (IBA 10.3.1) */
	if (!sq_untaken(qp, &count)) {
		sroce_req_ring_corrupt(qp);
		return false;
	}
	if (!count)
		return false;

	s = sroce_req_swqe(qp, req->next);
	status = fetch_wqe(qp, req->next, s);
	/* Not yet: the slot is copied again when it may start. */
	if (!may_start(qp, s) || !psn_room(qp, s))
		return false;
	/* A reliable message longer than the PSN window cannot be sent. */
	if (sroce_qp_is_reliable(qp) && status == IB_WC_SUCCESS &&
	    wqe_npkts(qp, s) > SROCE_PSN_MAX_OUTSTANDING)
		status = IB_WC_LOC_LEN_ERR;
	s->first_psn = req->next_psn;
	s->last_psn = sroce_psn_add(s->first_psn, wqe_npkts(qp, s) - 1);
	req->next_psn = sroce_psn_add(s->last_psn, 1);
	sroce_req_seek(qp, req->next, 0);
	req->next++;
	if (sroce_wr_is_rd_atomic(s->opcode))
		req->rd_atomic++;
	if (status == IB_WC_SUCCESS && is_local(s->opcode)) {
		/* Done here, in WQE order; no PSN is used. */
		s->last_psn = sroce_psn_add(s->first_psn, SROCE_PSN_MASK);
		req->next_psn = s->first_psn;
		status = local_op(qp, s);
		sroce_comp_wqe_done(qp, s, status);
		return status == IB_WC_SUCCESS;
	}
	if (status != IB_WC_SUCCESS) {
		sroce_comp_wqe_done(qp, s, status);
		return false;
	}
	return true;
}

/*
 * The PSNs between the QP's oldest unacknowledged one and its send
 * position that stand for READ responses still to come, beyond each
 * READ request's own: the responder's packets, not ours. Only the WQEs
 * up to the last READ or atomic outstanding are looked at.
 */
static u32 read_response_psns(const struct sroce_qp *qp)
{
	const struct sroce_req *req = &qp->req;
	u32 i, resume, left = req->rd_atomic, n = 0;
	const struct sroce_swqe *s;

	for (i = qp->sq.cons; left && i != req->cur; i++) {
		s = sroce_req_swqe(qp, i);
		if (!sroce_wr_is_rd_atomic(s->opcode))
			continue;
		left--;
		if (s->opcode != IB_UVERBS_WR_RDMA_READ ||
		    s->state == SROCE_SWQE_DONE)
			continue;
		resume = sroce_psn_add(s->first_psn, s->read_off / qp->mtu);
		/* Its request went (again) from @resume: the rest is theirs. */
		if (sroce_psn_diff(req->psn, resume) > 0)
			n += sroce_psn_diff(s->last_psn, resume);
	}
	return n;
}

/*
 * What the QP counts in its device's flight: nothing unless RC or XRC;
 * its packets sent and not yet acknowledged, as far as it knows (after a
 * rewind, those sent before it are counted again only as they are
 * resent), at most SROCE_REQ_WINDOW. A READ request counts as the one
 * packet it is: its responses are the responder's to send (until
 * 2026-11-28 they counted in full, up to 256, for as long as they did
 * not come). None while its transport timer is infinite (local ACK
 * timeout 0), since such a QP may keep its packets unacknowledged for
 * ever.
 */
static u32 flight_of(const struct sroce_qp *qp)
{
	const struct sroce_req *req = &qp->req;
	s32 used = sroce_psn_diff(req->psn, req->unacked_psn);

	if (!sroce_qp_is_reliable(qp) || !req->timeout || used <= 0)
		return 0;
	if (req->rd_atomic)
		used -= min_t(u32, read_response_psns(qp), used);
	return min_t(u32, used, SROCE_REQ_WINDOW);
}

/*
 * Count @now packets of the QP in its device's flight (see the top of this
 * file): the engine's own count, so only the engine or a caller that
 * stopped it may change it.
 */
static void flight_count(struct sroce_qp *qp, u32 now)
{
	struct sroce_dev *sdev = to_sdev(qp->ibqp.device);
	struct sroce_req *req = &qp->req;

	if (now == req->flight)
		return;
	if (!req->flight)
		atomic_inc(&sdev->req_active);
	else if (!now)
		atomic_dec(&sdev->req_active);
	atomic_add((int)(now - req->flight), &sdev->req_flight);
	req->flight = now;
}

/*
 * Decide whether the device's bound holds back the QP's next packet (one
 * is ready to go), and count a hold. Any QP sends while the device's
 * total is below the bound, and a QP below its fair share (the bound
 * divided among the QPs with packets counted, at least
 * SROCE_REQ_MIN_SHARE) always: what other QPs keep unacknowledged, for
 * however long, never holds it below its share. A QP is held only once
 * its last packet asked for an acknowledgment, else one more goes, asking
 * for one: that acknowledgment runs the engine again.
 */
static bool flight_hold(struct sroce_qp *qp)
{
	struct sroce_dev *sdev = to_sdev(qp->ibqp.device);
	u32 bound = READ_ONCE(sroce_req_flight);
	struct sroce_req *req = &qp->req;
	u32 used, active, total;

	used = flight_of(qp);
	flight_count(qp, used);
	if (!bound)
		return false;
	active = max(atomic_read(&sdev->req_active), 1);
	total = max(atomic_read(&sdev->req_flight), 0);
	if (total < bound || used < max(bound / active, SROCE_REQ_MIN_SHARE))
		return false;
	if (!req->ackreq_last) {
		req->ack_now = true;
		return false;
	}
	sroce_stats_add(&sdev->stats, SROCE_STAT_FLIGHT_HOLDS, 1);
	return true;
}

static bool window_open(struct sroce_qp *qp)
{
	struct sroce_req *req = &qp->req;

	if (!sroce_qp_is_reliable(qp))
		return true;
	return !req->rnr_wait &&
	       sroce_psn_diff(req->psn, req->unacked_psn) < req->cwnd;
}

static void arm_timer(struct sroce_qp *qp)
{
	struct sroce_req *req = &qp->req;

	if (req->next_psn != req->unacked_psn &&
	    !timer_pending(&req->retrans_timer))
		sroce_req_arm(qp);
}

/*
 * Send up to @budget packets. Every step counts against the budget, a
 * packet or not (a local operation, a WQE skipped on a resend), so that a
 * ring full of local work requests cannot hold the CPU either. Returns
 * true when work remains that the window or the budget held back.
 */
static bool send_packets(struct sroce_qp *qp, int budget)
{
	struct sroce_req *req = &qp->req;
	enum ib_wc_status status;
	struct sroce_swqe *s;
	bool sent;

	while (budget > 0 && window_open(qp)) {
		budget--;
		if (req->cur == req->next && !start_next(qp))
			break;
		s = sroce_req_swqe(qp, req->cur);
		if (s->state != SROCE_SWQE_SENDING) {
			sroce_req_seek(qp, req->cur + 1, 0);
			continue;
		}
		if (flight_hold(qp))
			break;
		status = send_packet(qp, s, &sent);
		if (status != IB_WC_SUCCESS) {
			sroce_comp_wqe_done(qp, s, status);
			break;
		}
		if (!sent) {
			/* No memory now: try again a tick later. */
			sroce_task_kick(&qp->req.task);
			break;
		}
		if (req->offset < s->length)
			continue;
		s->state = sroce_qp_is_reliable(qp) ? SROCE_SWQE_SENT :
						      SROCE_SWQE_DONE;
		sroce_req_seek(qp, req->cur + 1, 0);
	}
	arm_timer(qp);
	return budget <= 0;
}

/*
 * Tell the process whether to ring the doorbell for new WQEs (see the ABI
 * header): not while responses outstanding will run us anyway. In ERR or
 * SQE nothing will arrive and every new WQE is to be flushed, so the
 * process must always ring. Setting the flag is followed by a last look
 * at the ring, which the process's barrier pairs with.
 */
static bool update_wakeup(struct sroce_qp *qp)
{
	enum ib_qp_state state = READ_ONCE(qp->state);
	bool error = state == IB_QPS_ERR || state == IB_QPS_SQE;
	struct sroce_req *req = &qp->req;
	u32 count;

	if (qp->sq.side != SROCE_QUEUE_USER_PRODUCER)
		return false;
	/* Only RC waits for acknowledgments; UC and UD are done when sent. */
	if (!error && (req->cur != req->next ||
		       (sroce_qp_is_reliable(qp) &&
			req->next_psn != req->unacked_psn))) {
		WRITE_ONCE(qp->sq.hdr->flags, 0);
		return false;
	}
	WRITE_ONCE(qp->sq.hdr->flags, SROCE_QUEUE_NEED_WAKEUP);
	smp_mb();	/* flag before producer; pairs with the provider */
	return sq_untaken(qp, &count) && count &&
	       (state == IB_QPS_RTS || error);
}

static bool req_engine(struct sroce_task *task)
{
	struct sroce_qp *qp = container_of(task, struct sroce_qp, req.task);
	/* Pairs with change_state(). */
	enum ib_qp_state state = smp_load_acquire(&qp->state);
	bool more;

	if (state < IB_QPS_RTS) {
		skb_queue_purge(&qp->req.resp_pkts);
		flight_count(qp, 0);
		return false;
	}
	if (state == IB_QPS_ERR || state == IB_QPS_SQE) {
		skb_queue_purge(&qp->req.resp_pkts);
		flight_count(qp, 0);
		more = sroce_comp_flush(qp);
		/* The CQ full: the flag says "ring" all the same, no rerun. */
		return update_wakeup(qp) && more;
	}
	more = sroce_comp_run(qp, SROCE_REQ_BUDGET);
	if (READ_ONCE(qp->state) != IB_QPS_ERR &&
	    READ_ONCE(qp->state) != IB_QPS_SQE)
		more |= send_packets(qp, SROCE_REQ_BUDGET);
	more |= sroce_comp_complete(qp);
	flight_count(qp, flight_of(qp));
	return update_wakeup(qp) || more;
}

/* A stopped engine is not scheduled; it finds the event when it starts. */
static void retrans_timer_fn(struct timer_list *t)
{
	struct sroce_qp *qp = timer_container_of(qp, t, req.retrans_timer);

	set_bit(SROCE_QP_EV_TIMEOUT, &qp->events);
	sroce_task_sched(&qp->req.task);
}

static void rnr_timer_fn(struct timer_list *t)
{
	struct sroce_qp *qp = timer_container_of(qp, t, req.rnr_timer);

	set_bit(SROCE_QP_EV_RNR, &qp->events);
	sroce_task_sched(&qp->req.task);
}

/**
 * sroce_req_rcv() - queue a response for the completer and run it
 * @qp: the QP, referenced by the caller
 * @skb: the response; consumed
 *
 * Context: bottom halves disabled.
 */
void sroce_req_rcv(struct sroce_qp *qp, struct sk_buff *skb)
{
	struct sroce_dev *sdev = to_sdev(qp->ibqp.device);

	/* A bound, not exact: racing receivers may pass it by a few. */
	if (skb_queue_len_lockless(&qp->req.resp_pkts) >=
	    READ_ONCE(sroce_qp_backlog)) {
		sroce_stats_drop(&sdev->stats, SROCE_STAT_RX_DROP_BACKLOG);
		kfree_skb(skb);
	} else {
		skb_queue_tail(&qp->req.resp_pkts, skb);
	}
	sroce_task_run(&qp->req.task);
}

/**
 * sroce_req_init() - set up the send engine of a new QP
 * @qp: the QP, with its SQ allocated
 *
 * Return: 0 or -ENOMEM.
 */
int sroce_req_init(struct sroce_qp *qp)
{
	struct sroce_req *req = &qp->req;

	req->swqe_size = ALIGN(sizeof(struct sroce_swqe) + qp->sq.entry_size -
			       sizeof(struct sroce_send_wqe), 64);
	req->swqe = kvcalloc(qp->sq.num_entries, req->swqe_size,
			     SROCE_GFP_USER_OBJ);
	if (!req->swqe)
		return -ENOMEM;
	skb_queue_head_init(&req->resp_pkts);
	atomic_set(&req->zcopy_live, 0);
	timer_setup(&req->retrans_timer, retrans_timer_fn, 0);
	timer_setup(&req->rnr_timer, rnr_timer_fn, 0);
	sroce_task_init(&req->task, req_engine, qp->engine_bh);
	return 0;
}

/**
 * sroce_req_stop() - stop the send engine and its timers
 * @qp: the QP
 *
 * Only a run of the engine arms the timers, and none runs once the engine
 * is stopped, so the timers stay stopped too; one firing meanwhile
 * schedules nothing (task.c). sroce_task_start() lets the engine run
 * again.
 *
 * Context: process.
 */
void sroce_req_stop(struct sroce_qp *qp)
{
	sroce_task_stop(&qp->req.task);
	timer_delete_sync(&qp->req.retrans_timer);
	timer_delete_sync(&qp->req.rnr_timer);
	skb_queue_purge(&qp->req.resp_pkts);
}

/**
 * sroce_req_cleanup() - free the send engine's memory, and take the QP's
 * packets out of its device's flight
 * @qp: the QP, its engine stopped
 */
void sroce_req_cleanup(struct sroce_qp *qp)
{
	flight_count(qp, 0);
	kvfree(qp->req.swqe);
}

/* A new connection: no probe, no round-trip sample; @psn is the first. */
static void probe_reset(struct sroce_req *req, u32 psn)
{
	req->tx_high = psn;
	req->timeout_high = psn;
	req->probed = false;
	req->probe_armed = false;
	req->pto = 0;
	req->tx_jiffies = 0;
	req->probing = false;
	req->rtt_busy = false;
	req->rtt_psn = 0;
	req->rtt_start = 0;
	req->srtt_us = 0;
	req->rttvar_us = 0;
}

/* A new connection's congestion window: full, nothing of a past loss. */
static void window_reset(struct sroce_req *req)
{
	req->cwnd = SROCE_REQ_WINDOW;
	req->ssthresh = SROCE_REQ_WINDOW;
	req->cwnd_acked = 0;
}

/**
 * sroce_req_reset() - forget everything (the QP entered RESET)
 * @qp: the QP, its engine stopped
 */
void sroce_req_reset(struct sroce_qp *qp)
{
	struct sroce_req *req = &qp->req;

	req->next = qp->sq.cons;
	req->cur = qp->sq.cons;
	req->psn = 0;
	req->next_psn = 0;
	req->offset = 0;
	req->unacked_psn = 0;
	req->rd_atomic = 0;
	/* Nothing of the last connection's loss recovery carries over. */
	req->retry_left = 0;
	req->retrying = false;
	req->retry_psn = 0;
	req->rnr_left = 0;
	req->rnr_wait = false;
	req->backoff = 0;
	window_reset(req);
	probe_reset(req, 0);
	flight_count(qp, 0);
	req->ackreq_last = false;
	req->ack_now = false;
	WRITE_ONCE(req->zcopy_copied, false);
	clear_bit(SROCE_QP_EV_TIMEOUT, &qp->events);
	clear_bit(SROCE_QP_EV_RNR, &qp->events);
}

/* Local ACK timeout, 4.096 us * 2^timeout (IBA 9.7.6.1.3); 0: infinite. */
static unsigned long timeout_jiffies(u8 timeout)
{
	u64 ns;

	if (!timeout)
		return 0;
	ns = 4096ULL << min_t(u8, timeout, 31);
	return max(nsecs_to_jiffies64(ns), 1ULL);
}

/**
 * sroce_req_start() - take the attributes the QP has on entering RTS
 * @qp: the QP; its modify mutex is held
 */
void sroce_req_start(struct sroce_qp *qp)
{
	struct sroce_req *req = &qp->req;

	lockdep_assert_held(&qp->mutex);
	req->psn = qp->attr.sq_psn;
	req->next_psn = req->psn;
	req->unacked_psn = req->psn;
	req->retry_left = qp->attr.retry_cnt;
	req->retrying = false;
	req->rnr_left = qp->attr.rnr_retry;
	req->rnr_wait = false;
	req->timeout = timeout_jiffies(qp->attr.timeout);
	req->backoff = 0;
	window_reset(req);
	probe_reset(req, req->psn);
	/* A path to try attaching on again (zcopy.c). */
	WRITE_ONCE(req->zcopy_copied, false);
}

/**
 * sroce_req_update() - take loss-recovery attributes changed after RTS
 * @qp: the QP; its modify mutex is held and its send engine stopped
 * @mask: the attributes that changed (enum ib_qp_attr_mask)
 *
 * A QP in SQD may be given a new local ACK timeout and retry counts (IBA
 * 11.2.4.2, table 91): they apply from now on, with full retry budgets,
 * as on entering RTS.
 */
void sroce_req_update(struct sroce_qp *qp, int mask)
{
	struct sroce_req *req = &qp->req;

	lockdep_assert_held(&qp->mutex);
	if (mask & IB_QP_TIMEOUT) {
		req->timeout = timeout_jiffies(qp->attr.timeout);
		req->backoff = 0;
	}
	/* A new path: its round trip is not the old one's. */
	if (mask & IB_QP_AV) {
		WRITE_ONCE(req->zcopy_copied, false);
		req->srtt_us = 0;
		req->rttvar_us = 0;
		req->rtt_busy = false;
	}
	if (mask & IB_QP_RETRY_CNT)
		req->retry_left = qp->attr.retry_cnt;
	if (mask & IB_QP_RNR_RETRY)
		req->rnr_left = qp->attr.rnr_retry;
}
