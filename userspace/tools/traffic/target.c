// SPDX-License-Identifier: GPL-2.0 OR Linux-OpenIB
/*
 * The target: replaying the peer's stream, posting receives sized for
 * its messages, crediting the peer, and checking each receive.
 */
#include "traffic.h"

/* Target: the peer's stream, receives and my memory */

/* Replay the peer's next op: apply its writes to the model of my window. */
void replay_next(struct tqp *t, struct op *op)
{
	uint8_t *dst;

	gen_op(&t->rx, op);
	if (!kind_is_write(op->kind))
		return;
	dst = t->model + GUARD + op->roff;
	build_payload(op, dst);
	memset(t->touched + GUARD + op->roff, 1, op->len);
}

/* Generate expected messages as far as the ring allows. */
void replay_more(struct tqp *t)
{
	struct op op;

	if (c.p.allow_loss)
		while (t->exp_lo + LOOKBEHIND < t->accounted)
			t->exp_lo++;
	while (t->rx.next < t->rx.nops && t->exp_hi - t->exp_lo < c.exp_size) {
		replay_next(t, &op);
		if (op.rseq < 0)
			continue;
		t->exp[op.rseq % c.exp_size] = op;
		t->got[op.rseq % c.exp_size] = 0;
		t->exp_hi++;
	}
}

void post_recvs(struct tqp *t)
{
	struct ibv_sge sge[MAX_SGE];
	struct ibv_recv_wr wr = { .sg_list = sge }, *bad;
	uint32_t cap, k, grh = ud() ? GRH_LEN : 0;
	const struct op *op;
	struct rwqe *w;
	int err;

	while (t->wposted - t->wdone < c.p.rq_depth) {
		k = t->wposted;
		if (c.p.allow_loss) {
			cap = grh + c.p.max_msg + tool_rng_below(&t->rrng, 64);
		} else {
			replay_more(t);
			if (k >= t->exp_hi)
				break;
			op = &t->exp[k % c.exp_size];
			cap = grh + (op->kind == K_WRITE_IMM ? 0 : op->len) +
			      (tool_rng_below(&t->rrng, 2) ? 0 : tool_rng_below(&t->rrng, 64));
		}
		w = &t->wqe[k % c.p.rq_depth];
		w->cap = cap;
		w->nseg = layout_scatter(&t->rrng, cap, w->seg);
		wr.wr_id = (uint64_t)t->idx << 32 | k;
		wr.num_sge = sges_scatter(t, c.p.sq_depth + k % c.p.rq_depth, w->seg, w->nseg, sge);
		err = ibv_post_recv(t->qp, &wr, &bad);
		if (err)
			fatal("qp %u: ibv_post_recv: %s", t->idx, strerror(err));
		t->wposted++;
	}
}

/* Tell the peer how far it may go, before it has to wait. */
void send_credit(struct tqp *t, bool force)
{
	uint32_t limit;
	uint64_t w[2];

	/*
	 * --allow-loss: credit follows the messages that arrive, so a burst
	 * that loses all the peer could send (a full queue somewhere on a
	 * loaded host) would leave it waiting for credit for ever. After a
	 * quiet while, what it may have sent is taken for lost. Not
	 * last_rx: that is when a message last came (rx_done_qp()).
	 */
	if (c.p.allow_loss && !c.peer_tx_done && t->sent_limit > t->accounted &&
	    tool_now() > (t->last_rx > t->credit_at ? t->last_rx : t->credit_at) + IDLE_SECS) {
		t->accounted = t->sent_limit;
		t->credit_at = tool_now();
		force = true;
	}
	limit = c.p.allow_loss ? t->accounted + (t->wposted - t->wdone) : t->wposted;
	w[0] = t->idx;
	w[1] = limit;

	if (limit <= t->sent_limit && !force)
		return;
	if (!force && limit - t->sent_limit < max32(1, c.p.rq_depth / 4) &&
	    t->sent_limit - t->accounted > c.p.rq_depth / 2)
		return;
	send_msg(M_CREDIT, w, 2);
	t->sent_limit = limit;
}

static int header_problems(const struct tqp *t, const struct op *op, const struct ibv_wc *wc,
			   const char *what)
{
	enum ibv_wc_opcode opcode = op->kind == K_WRITE_IMM ? IBV_WC_RECV_RDMA_WITH_IMM : IBV_WC_RECV;
	/* RoCEv2 with an IPv4 (0xa) or IPv6 (0x9) header, as mlx5 reports it. */
	uint8_t sl = c.ipv4 ? 0xa : 0x9;
	uint32_t len = (ud() ? GRH_LEN : 0) + op->len, imm = op->imm;
	bool with_imm = wc->wc_flags & IBV_WC_WITH_IMM;
	int bad = 0;

	if (what && kind_has_imm(op->kind) && inject(INJ_IMM))
		imm ^= 1;
	if (wc->opcode != opcode && ++bad && what)
		mismatch("%s: receive opcode %d, expected %d", what, wc->opcode, opcode);
	if (with_imm != kind_has_imm(op->kind) && ++bad && what)
		mismatch("%s: wc_flags 0x%x, IBV_WC_WITH_IMM expected %s", what,
			 wc->wc_flags, kind_has_imm(op->kind) ? "set" : "clear");
	if (with_imm && kind_has_imm(op->kind) && wc->imm_data != htobe32(imm) && ++bad && what)
		mismatch("%s: imm_data 0x%08x, expected 0x%08x (network order)", what,
			 be32toh(wc->imm_data), imm);
	if (wc->byte_len != len && ++bad && what)
		mismatch("%s: byte_len %u, expected %u", what, wc->byte_len, len);
	if (ud() && !(wc->wc_flags & IBV_WC_GRH) && ++bad && what)
		mismatch("%s: wc_flags 0x%x without IBV_WC_GRH", what, wc->wc_flags);
	if (ud() && wc->src_qp != t->peer_qpn && ++bad && what)
		mismatch("%s: src_qp 0x%x, expected 0x%x", what, wc->src_qp, t->peer_qpn);
	if (ud() && !opt.any_sl && wc->sl != sl && ++bad && what)
		mismatch("%s: wc.sl 0x%x, expected 0x%x: the RoCE packet type of an %s receive "
			 "(--any-sl accepts any)", what, wc->sl, sl, c.ipv4 ? "IPv4" : "IPv6");
	return bad;
}

static uint16_t ip_checksum(const uint8_t *h)
{
	uint32_t sum = 0;
	int i;

	for (i = 0; i < 20; i += 2)
		sum += h[i] << 8 | h[i + 1];
	while (sum >> 16)
		sum = (sum & 0xffff) + (sum >> 16);
	return (uint16_t)sum;
}

/*
 * The GRH area of a UD receive holds the sender's IP header: IPv6 in all
 * 40 bytes, IPv4 in the last 20 and zeros before (the receive buffer was
 * filled with FILL). UCX finds its own address at the end of the area,
 * the last 16 bytes (IPv6) or 4 (IPv4), telling the two apart by wc.sl
 * (before 1.18) or by the first byte's version nibble (1.18 on).
 */
static void check_grh(const uint8_t *g, const struct op *op, const char *what)
{
	/* UDP + BTH + DETH [+ ImmDt] + payload + pad + ICRC */
	uint32_t udp = 8 + 12 + 8 + (kind_has_imm(op->kind) ? 4 : 0) +
		       ((op->len + 3) & ~3u) + 4;
	const uint8_t *ip = g + 20;

	if (c.ipv4) {
		static const uint8_t zero[20];

		if (memcmp(g, zero, sizeof(zero)))
			mismatch("%s: GRH area bytes 0..19 of an IPv4 receive are not zero: "
				 "%02x %02x %02x %02x ..", what, g[0], g[1], g[2], g[3]);
		if (ip[0] != 0x45 || ip[9] != IPPROTO_UDP || (uint32_t)(ip[2] << 8 | ip[3]) != 20 + udp ||
		    memcmp(ip + 12, c.peer_gid.raw + 12, 4) || memcmp(ip + 16, c.gid.raw + 12, 4))
			mismatch("%s: GRH area bytes 20..39 are not the IPv4 header from %u.%u.%u.%u "
				 "of %u bytes: %02x %02x %02x%02x .. proto %u src %u.%u.%u.%u dst %u.%u.%u.%u",
				 what, c.peer_gid.raw[12], c.peer_gid.raw[13], c.peer_gid.raw[14],
				 c.peer_gid.raw[15], 20 + udp, ip[0], ip[1], ip[2], ip[3], ip[9],
				 ip[12], ip[13], ip[14], ip[15], ip[16], ip[17], ip[18], ip[19]);
		else if (ip_checksum(ip) != 0xffff && !(opt.lax_grh && !ip[10] && !ip[11]))
			mismatch("%s: the IPv4 header in the GRH area has a bad checksum 0x%02x%02x "
				 "(--lax-grh-checksum accepts that)", what, ip[10], ip[11]);
		return;
	}
	if (g[0] >> 4 != 6 || g[6] != IPPROTO_UDP || (uint32_t)(g[4] << 8 | g[5]) != udp ||
	    memcmp(g + 8, c.peer_gid.raw, 16) || memcmp(g + 24, c.gid.raw, 16))
		mismatch("%s: GRH area is not the IPv6 header of the sender: version %u "
			 "next header %u payload length %u (expected %u)",
			 what, g[0] >> 4, g[6], g[4] << 8 | g[5], udp);
}

/* The content of a receive for @op: payload, capacity, guards, GRH. */
static bool recv_content(struct tqp *t, uint32_t slot, const struct rwqe *w,
			 const struct op *op, const char *what)
{
	uint32_t skip = ud() ? GRH_LEN : 0, len = op->kind == K_WRITE_IMM ? 0 : op->len;

	build_payload(op, c.tmp_exp);
	/* With --allow-loss a UC receive may hold the rest of an aborted message. */
	return check_content(t, slot, w->seg, w->nseg, w->cap, skip, c.tmp_exp, len,
			     !c.p.allow_loss, what);
}

/* Find the message that arrived; return its rseq or -1. */
static int32_t match_tolerant(struct tqp *t, const struct ibv_wc *wc, uint32_t slot,
			      const struct rwqe *w)
{
	uint32_t j;

	replay_more(t);
	for (j = t->exp_lo; j < t->exp_hi; j++) {
		const struct op *op = &t->exp[j % c.exp_size];

		if (!header_problems(t, op, wc, NULL) && recv_content(t, slot, w, op, NULL))
			return j;
	}
	return -1;
}

static void rx_accept(struct tqp *t, const struct op *op, uint32_t slot, const struct rwqe *w,
		      const char *what)
{
	uint8_t *got = &t->got[op->rseq % c.exp_size];

	if (ud()) {
		scatter_read(t, slot, w->seg, w->nseg, c.tmp_got);
		check_grh(c.tmp_got, op, what);
	}
	if (*got) {
		t->dups++;
		return;
	}
	*got = 1;
	t->distinct++;
	t->rx_count[op->kind]++;
	t->accounted = max32(t->accounted, op->rseq + 1);
}

void on_recv_wc(const struct ibv_wc *wc)
{
	uint32_t q = wc->wr_id >> 32, k = (uint32_t)wc->wr_id, slot;
	const struct rwqe *w;
	const struct op *op;
	struct tqp *t;
	char what[96];
	int32_t j;

	if (q >= c.p.qps)
		fatal("receive completion with a wr_id I never posted: 0x%llx",
		      (unsigned long long)wc->wr_id);
	t = &c.qp[q];
	if (wc_flushed(wc, "qp %u receive %u", q, k))
		return;
	if (wc->status != IBV_WC_SUCCESS)
		fatal("qp %u receive %u: completion status %s (%d), vendor_err 0x%x",
		      q, k, ibv_wc_status_str(wc->status), wc->status, wc->vendor_err);
	if (wc->qp_num != t->qp->qp_num)
		mismatch("qp %u receive %u: completion has qp_num 0x%x, expected 0x%x",
			 q, k, wc->qp_num, t->qp->qp_num);
	if (k != t->wdone)
		fatal("qp %u: completion of receive %u, expected receive %u first", q, k, t->wdone);
	w = &t->wqe[k % c.p.rq_depth];
	slot = c.p.sq_depth + k % c.p.rq_depth;
	snprintf(what, sizeof(what), "qp %u receive %u", q, k);
	if (c.p.allow_loss) {
		j = match_tolerant(t, wc, slot, w);
		if (j < 0)
			mismatch("qp %u receive %u: opcode %d byte_len %u imm 0x%08x matches none of "
				 "the peer's messages %u..%u", q, k, wc->opcode, wc->byte_len,
				 be32toh(wc->imm_data), t->exp_lo, t->exp_hi - 1);
		else
			op = &t->exp[j % c.exp_size];
	} else {
		op = &t->exp[k % c.exp_size];
		j = k;
		snprintf(what, sizeof(what), "qp %u peer's op %u %s len %u (receive %u)",
			 q, op->idx, kind_verbs[op->kind], op->len, k);
		if (op->len && op->kind != K_WRITE_IMM && inject(INJ_DATA))
			scatter_flip(t, slot, w->seg, w->nseg, (ud() ? GRH_LEN : 0) + op->len / 2);
		header_problems(t, op, wc, what);
		recv_content(t, slot, w, op, what);
		t->exp_lo++;
	}
	if (j >= 0) {
		snprintf(what, sizeof(what), "qp %u peer's op %u %s len %u (receive %u)",
			 q, op->idx, kind_verbs[op->kind], op->len, k);
		rx_accept(t, op, slot, w, what);
	}
	check_guards(t, slot, w->seg, w->nseg, what);
	refill(t, slot, w->seg, w->nseg);
	t->wdone++;
	t->last_rx = tool_now();
}
