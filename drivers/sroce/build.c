// SPDX-License-Identifier: GPL-2.0 OR Linux-OpenIB
/*
 * DOC: Request packets
 *
 * How the requester (req.c) turns a WQE into packets. A WQE is first
 * copied from the SQ ring into its private slot and checked there
 * (sroce_build_fetch(), IBA 10.8.3), so that a process rewriting its ring
 * cannot change a WQE under us; its packets are then built one at a time
 * at the requester's position (sroce_build_send()), segmented at the path
 * MTU (IBA 9.7.2):
 *
 * - SEND and WRITE: one packet per MTU of payload, FIRST/MIDDLE/LAST or
 *   ONLY; a zero-length message is one ONLY packet.
 * - READ: one request packet, but it consumes one PSN per response packet
 *   (IBA 9.7.4.1.4).
 * - Atomics, ATOMIC_WRITE (8 bytes of payload) and FLUSH: one packet,
 *   one PSN; each is answered by a response of its own (IBA 9.4.5 to
 *   9.4.7).
 *
 * On RC, the last packet of every message, every SROCE_BUILD_ACK_EVERY-th
 * packet and, when the congestion window is smaller, every packet that
 * fills half of it or all of it ask for an acknowledgment (a window the
 * acknowledgments cannot reopen would wait for the transport timer).
 * A payload from a user MR is attached to the packet rather than copied
 * when zero copy allows it (zcopy.c).
 */
#include <rdma/ib_mad.h>
#include <rdma/ib_user_verbs.h>

#include "build.h"
#include "device.h"
#include "net.h"
#include "params.h"
#include "pkt.h"
#include "qp.h"
#include "req.h"

#define SROCE_BUILD_ACK_EVERY	32	/* AckReq at least this often */

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

/**
 * sroce_build_fetch() - copy a WQE into its private slot and check it
 * @qp: the QP; called by its send engine
 * @index: the WQE's SQ index
 * @s: its private slot
 *
 * IBA 10.8.3: what the WQE asks must be possible for the QP's type and
 * within its limits. Nothing is read from the ring after this.
 *
 * Return: IB_WC_SUCCESS, or the completion status the WQE fails with.
 */
enum ib_wc_status sroce_build_fetch(struct sroce_qp *qp, u32 index,
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

/**
 * sroce_build_npkts() - the PSNs a WQE's message occupies
 * @qp: the QP
 * @s: the WQE, fetched
 *
 * Return: its packets, or for a READ its response packets (at least 1).
 */
u32 sroce_build_npkts(struct sroce_qp *qp, const struct sroce_swqe *s)
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
 * acknowledgment: every SROCE_BUILD_ACK_EVERY-th, and the one that fills
 * half of a smaller window or all of it.
 */
static bool ack_due(struct sroce_qp *qp, u32 psn)
{
	struct sroce_req *req = &qp->req;
	u32 used = sroce_psn_diff(psn, req->unacked_psn) + 1;

	if (!(psn % SROCE_BUILD_ACK_EVERY))
		return true;
	if (req->win.cwnd >= 2 * SROCE_BUILD_ACK_EVERY)
		return false;
	return used >= req->win.cwnd || used == req->win.cwnd / 2;
}

/*
 * Build and send the next packet of @s at the requester's position, which
 * moves past it once it went; a probe asks for an acknowledgment. Returns
 * as sroce_build_send().
 */
static enum ib_wc_status send_packet(struct sroce_qp *qp, struct sroce_swqe *s,
				     struct sroce_build_sent *out, bool probe)
{
	struct sroce_dev *sdev = to_sdev(qp->ibqp.device);
	struct sroce_req *req = &qp->req;
	const struct sroce_av *av = packet_av(qp, s);
	/* Packets are MTU-sized up to the last: the offset gives the PSN. */
	u32 paylen, pad, psn = sroce_psn_add(s->first_psn,
					      req->offset / qp->mtu);
	const struct sroce_opcode_info *op;
	bool last, single, ackreq, zcopy;
	struct sroce_sgl sgl = req->sgl;
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
	ackreq |= probe || req->ack_now;

	out->sent = false;
	out->fault = false;
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
		if (err == -EFAULT) {
			/* From this packet's start, once the fault ended. */
			req->sgl = sgl;
			out->fault = true;
			return IB_WC_SUCCESS;
		}
		if (err != -EAGAIN)
			return IB_WC_LOC_PROT_ERR;
		zcopy = false;
	}

	out->first = sroce_psn_diff(psn, req->tx_high) >= 0;
	out->psn = psn;
	out->sample = ackreq && !single;
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
	out->sent = true;
	return IB_WC_SUCCESS;
}

/**
 * sroce_build_send() - build and send the next packet of a WQE
 * @qp: the QP; called by its send engine
 * @s: the WQE at the requester's position
 * @out: what went (nothing for want of a packet buffer: it is tried
 *	 again); the caller reports it to loss recovery
 *
 * The requester's position moves past the packet once it went.
 *
 * Return: IB_WC_SUCCESS, or the completion status when the WQE fails
 * locally (its memory cannot be read).
 */
enum ib_wc_status sroce_build_send(struct sroce_qp *qp, struct sroce_swqe *s,
				   struct sroce_build_sent *out)
{
	return send_packet(qp, s, out, false);
}

/**
 * sroce_build_seek() - position the requester in a WQE
 * @qp: the QP; called by its send engine
 * @index: SQ index of the WQE
 * @offset: byte of its message to send next
 */
void sroce_build_seek(struct sroce_qp *qp, u32 index, u32 offset)
{
	struct sroce_swqe *s = sroce_req_swqe(&qp->req, index);
	struct sroce_req *req = &qp->req;

	req->cur = index;
	req->offset = offset;
	sroce_sgl_init(&req->sgl, s->sge, s->num_sge, &req->fault);
	sroce_sgl_skip(&req->sgl, offset);
}

/**
 * sroce_build_rewind() - go back to send again from a PSN
 * @qp: the QP; called by its send engine (loss recovery)
 * @psn: the first PSN to send again; it lies in an outstanding WQE
 *
 * Every WQE from the one holding @psn on is sent again with the PSNs it
 * had (IBA 9.7.4.1.3); a READ asks again only for what has not arrived.
 *
 * Return: the PSN the requester goes on from (for a READ, the first
 * response not received; when nothing is left to send again, the next
 * new one).
 */
u32 sroce_build_rewind(struct sroce_qp *qp, u32 psn)
{
	struct sroce_req *req = &qp->req;
	struct sroce_swqe *s;
	u32 i;

	for (i = qp->sq.cons; i != req->next; i++) {
		s = sroce_req_swqe(&qp->req, i);
		if (s->state == SROCE_SWQE_DONE ||
		    sroce_psn_diff(psn, s->last_psn) > 0)
			continue;
		break;
	}
	if (i == req->next) {
		/* Nothing left to resend: go on with new WQEs. */
		req->psn = req->next_psn;
		sroce_build_seek(qp, req->next, 0);
		return req->psn;
	}
	s = sroce_req_swqe(&qp->req, i);
	if (s->opcode == IB_UVERBS_WR_RDMA_READ) {
		psn = sroce_psn_add(s->first_psn, s->read_off / qp->mtu);
		sroce_build_seek(qp, i, s->read_off);
	} else if (sroce_psn_diff(psn, s->first_psn) <= 0) {
		psn = s->first_psn;
		sroce_build_seek(qp, i, 0);
	} else {
		sroce_build_seek(qp, i, sroce_psn_diff(psn, s->first_psn) * qp->mtu);
	}
	req->psn = psn;
	for (; i != req->next; i++) {
		s = sroce_req_swqe(&qp->req, i);
		if (s->state == SROCE_SWQE_SENT)
			s->state = SROCE_SWQE_SENDING;
	}
	return psn;
}

/* The outstanding WQE that holds @psn, if any; its SQ index in *@index. */
static struct sroce_swqe *wqe_of_psn(struct sroce_qp *qp, u32 psn, u32 *index)
{
	struct sroce_swqe *s;
	u32 i;

	for (i = qp->sq.cons; i != qp->req.next; i++) {
		s = sroce_req_swqe(&qp->req, i);
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

/**
 * sroce_build_probe() - send one packet once more, asking for an ACK
 * @qp: the QP; called by its send engine (the tail-loss probe, retry.c)
 * @psn: the packet's PSN
 *
 * The requester stays where it was. Not for READ and atomic requests,
 * whose repeated request the responder would execute again.
 *
 * Return: true if it went (a failure, an MR gone meanwhile, the next real
 * send meets).
 */
bool sroce_build_probe(struct sroce_qp *qp, u32 psn)
{
	struct sroce_req *req = &qp->req;
	u32 cur = req->cur, offset = req->offset, next = req->psn;
	bool ackreq_last = req->ackreq_last;
	struct sroce_sgl sgl = req->sgl;
	struct sroce_build_sent out = { .sent = false };
	enum ib_wc_status status;
	struct sroce_swqe *s;
	u32 i;

	s = wqe_of_psn(qp, psn, &i);
	if (!s || sroce_wr_is_rd_atomic(s->opcode))
		return false;
	sroce_build_seek(qp, i, sroce_psn_diff(psn, s->first_psn) * qp->mtu);
	status = send_packet(qp, s, &out, true);
	/* Whether the last packet in PSN order asked is as it was. */
	req->ackreq_last = ackreq_last || (out.sent && psn == sroce_psn_add(next,
									SROCE_PSN_MASK));
	req->cur = cur;
	req->offset = offset;
	req->sgl = sgl;
	req->psn = next;
	return status == IB_WC_SUCCESS && out.sent;
}
