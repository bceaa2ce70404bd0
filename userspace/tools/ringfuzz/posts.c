// SPDX-License-Identifier: GPL-2.0 OR Linux-OpenIB
/*
 * Real work requests on F and P, through libibverbs and libsroce, and
 * polling their CQs.
 */
#include "ringfuzz.h"

/* Real work requests, through libibverbs and libsroce */

/* After a post that published something: where libsroce's index is. */
void note_published(struct ring *r)
{
	r->shadow = load_idx(&r->hdr->producer);
}

/* ret and bad_wr of a post: a failed doorbell is evidence. */
void note_post(struct fpair *fp, struct ring *r, int ret, bool none_bad,
	       bool posted)
{
	if (posted)
		note_published(r);
	if (ret && none_bad) {
		fp->db_errnos++;
		fp->last_errno = ret;
	}
}

void f_post_recv(struct fpair *fp, uint64_t wr_id)
{
	struct ibv_sge sge = {
		.addr = (uintptr_t)w.buf_f + F_RECV_OFF +
			(fp->f_slot++ % 16) * F_RECV_SLOT,
		.length = F_RECV_SLOT,
		.lkey = w.mr_f->lkey,
	};
	struct ibv_recv_wr wr = { .wr_id = wr_id, .sg_list = &sge, .num_sge = 1 },
			   *bad = NULL;
	int ret;

	beat("%s: post_recv on QP %u", rep.cur, fp->qp->qp_num);
	if (fp->srq)
		ret = ibv_post_srq_recv(fp->srq, &wr, &bad);
	else
		ret = ibv_post_recv(fp->qp, &wr, &bad);
	note_post(fp, &fp->rq, ret, !bad, !ret || bad != &wr);
	fp->f_credit += !ret;
}

/* P keeps its receive slots posted. */
void p_replenish(struct fpair *fp)
{
	unsigned int n, posted = __builtin_popcount(fp->p_posted);

	for (n = 0; n < P_RECV_SLOTS && posted < P_RECV_KEEP; n++) {
		struct ibv_sge sge = {
			.addr = (uintptr_t)w.buf_p + P_TGT_SIZE + n * P_RECV_SLOT,
			.length = P_RECV_SLOT,
			.lkey = w.mr_p->lkey,
		};
		struct ibv_recv_wr wr = { .wr_id = TAG_PRECV | n,
					  .sg_list = &sge, .num_sge = 1 }, *bad;

		if (fp->p_posted & (1U << n))
			continue;
		if (ibv_post_recv(fp->pqp, &wr, &bad))
			return;		/* P in ERR: nothing to do */
		fp->p_posted |= 1U << n;
		posted++;
	}
}

/* A P receive completed: was it the probe, and were its bytes right? */
static void p_recv_done(struct fpair *fp, const struct ibv_wc *wc)
{
	uint32_t n = wc->wr_id & 0xff, hdr = fp->type == IBV_QPT_UD ? GRH_SIZE : 0;
	const uint8_t *buf;
	uint64_t id;

	if (n >= P_RECV_SLOTS)
		return;
	fp->p_posted &= ~(1U << n);
	if (wc->status != IBV_WC_SUCCESS || !fp->probe_id)
		return;
	buf = w.buf_p + P_TGT_SIZE + n * P_RECV_SLOT + hdr;
	if (wc->byte_len < hdr + 8)
		return;
	memcpy(&id, buf, 8);
	if (id != fp->probe_id)
		return;
	if (wc->byte_len != hdr + fp->probe_len) {
		fail("probe %#" PRIx64 ": P received %u bytes, F sent %u",
		     id, wc->byte_len - hdr, fp->probe_len);
	} else if (memcmp(buf, fp->probe, fp->probe_len)) {
		long d = first_diff(buf, fp->probe, fp->probe_len);

		fail("probe %#" PRIx64 ": byte %ld of %u is %#x, F sent %#x",
		     id, d, fp->probe_len, buf[d], fp->probe[d]);
	}
	fp->probe_arrived = true;
}

void p_poll(struct fpair *fp)
{
	struct ibv_wc wc[16];
	int i, n;

	n = ibv_poll_cq(fp->pcq, 16, wc);
	for (i = 0; i < n; i++)
		if ((wc[i].wr_id & TAG_MASK) == TAG_PRECV)
			p_recv_done(fp, &wc[i]);
	p_replenish(fp);
}

static void f_poll(struct fpair *fp)
{
	struct ibv_wc wc[16];
	int i, n;

	n = ibv_poll_cq(fp->cq, 16, wc);
	if (n > 0)
		fp->cqr.shadow = load_idx(&fp->cqr.hdr->consumer);
	for (i = 0; i < n; i++) {
		if (fp->probe_id && wc[i].wr_id == fp->probe_id) {
			fp->probe_done = true;
			fp->probe_status = wc[i].status;
		}
		if (wc[i].status != IBV_WC_SUCCESS && !inject_evidence) {
			if (!fp->err_cqes++)
				fp->first_err = wc[i].status;
		}
	}
}

void poll_all(struct fpair *fp)
{
	beat("%s: polling", rep.cur);
	f_poll(fp);
	p_poll(fp);
	drain_events(fp);
}

/* Poll for @ms milliseconds. */
void poll_for(struct fpair *fp, unsigned int ms)
{
	uint64_t end = tool_now_ms() + ms;

	do {
		poll_all(fp);
		tool_sleep_us(1000);
	} while (tool_now_ms() < end);
}

uint64_t p_tgt(uint32_t off)
{
	return (uintptr_t)w.buf_p + off;
}

/* One to three valid work requests of F's type, through libibverbs. */
void f_post_send(struct fpair *fp)
{
	static const enum ibv_wr_opcode rc_ops[] = {
		IBV_WR_SEND, IBV_WR_SEND_WITH_IMM, IBV_WR_RDMA_WRITE,
		IBV_WR_RDMA_WRITE_WITH_IMM, IBV_WR_RDMA_READ,
		IBV_WR_ATOMIC_CMP_AND_SWP, IBV_WR_ATOMIC_FETCH_AND_ADD,
		IBV_WR_BIND_MW, IBV_WR_LOCAL_INV,
	};
	struct ibv_send_wr wr[3], *bad = NULL;
	struct ibv_sge sge[3];
	unsigned int i, n = 1 + rnd(3), nops;
	int ret;

	/* Windows change state: hostility 0 leaves them alone. */
	nops = fp->type == IBV_QPT_UC ? 4 : fp->type == IBV_QPT_UD ? 2 :
	       fp->hostility ? ARRAY_SIZE(rc_ops) : ARRAY_SIZE(rc_ops) - 2;
	memset(wr, 0, sizeof(wr));
	for (i = 0; i < n; i++) {
		enum ibv_wr_opcode op = rc_ops[rnd(nops)];
		uint32_t len = chance(20) ? 0 : 1 + rnd(4096);

		if (fp->type == IBV_QPT_UD && len > 1024)
			len = 1 + rnd(1024);
		wr[i].wr_id = TAG_REAL | ++fp->wr_seq;
		wr[i].opcode = op;
		wr[i].next = i + 1 < n ? &wr[i + 1] : NULL;
		wr[i].send_flags = chance(50) ? IBV_SEND_SIGNALED : 0;
		wr[i].imm_data = tool_rng_next(&R);
		sge[i].addr = (uintptr_t)w.buf_f + rnd(F_RECV_OFF - 4096);
		sge[i].length = len;
		sge[i].lkey = w.mr_f->lkey;
		wr[i].sg_list = &sge[i];
		wr[i].num_sge = 1;
		if (len <= F_INLINE && chance(30) &&
		    op != IBV_WR_RDMA_READ && op != IBV_WR_ATOMIC_CMP_AND_SWP &&
		    op != IBV_WR_ATOMIC_FETCH_AND_ADD)
			wr[i].send_flags |= IBV_SEND_INLINE;
		switch (op) {
		case IBV_WR_RDMA_WRITE:
		case IBV_WR_RDMA_WRITE_WITH_IMM:
		case IBV_WR_RDMA_READ:
			wr[i].wr.rdma.remote_addr = p_tgt(rnd(P_TGT_SIZE - len));
			wr[i].wr.rdma.rkey = w.mr_p->rkey;
			break;
		case IBV_WR_ATOMIC_CMP_AND_SWP:
		case IBV_WR_ATOMIC_FETCH_AND_ADD:
			sge[i].length = 8;
			sge[i].addr &= ~7ULL;
			wr[i].wr.atomic.remote_addr = p_tgt(rnd(P_TGT_SIZE / 8) * 8);
			wr[i].wr.atomic.rkey = w.mr_p->rkey;
			wr[i].wr.atomic.compare_add = tool_rng_next(&R);
			wr[i].wr.atomic.swap = tool_rng_next(&R);
			break;
		case IBV_WR_BIND_MW:
			wr[i].num_sge = 0;
			wr[i].bind_mw.mw = w.mw2;
			wr[i].bind_mw.rkey = ibv_inc_rkey(w.mw2->rkey);
			wr[i].bind_mw.bind_info.mr = w.mr_f;
			wr[i].bind_mw.bind_info.addr = (uintptr_t)w.buf_f;
			wr[i].bind_mw.bind_info.length = chance(30) ? 0 : 4096;
			wr[i].bind_mw.bind_info.mw_access_flags =
				IBV_ACCESS_REMOTE_WRITE;
			break;
		case IBV_WR_LOCAL_INV:
			wr[i].num_sge = 0;
			wr[i].invalidate_rkey = w.mw2->rkey;
			break;
		default:
			break;
		}
		if (fp->type == IBV_QPT_UD) {
			wr[i].wr.ud.ah = fp->ah;
			wr[i].wr.ud.remote_qpn = fp->pqp->qp_num;
			wr[i].wr.ud.remote_qkey = QKEY;
		}
	}
	beat("%s: post_send of %u on QP %u", rep.cur, n, fp->qp->qp_num);
	ret = ibv_post_send(fp->qp, wr, &bad);
	note_post(fp, &fp->sq, ret, !bad, !ret || bad != wr);
	for (i = 0; i < n; i++)
		if (wr[i].opcode == IBV_WR_BIND_MW && (!bad || &wr[i] < bad))
			w.mw2->rkey = wr[i].bind_mw.rkey;
}

/* P sends to F: SEND, SEND_WITH_IMM, or (RC, UC) WRITE_WITH_IMM. */
void p_post_send(struct fpair *fp)
{
	struct ibv_sge sge = {
		.addr = (uintptr_t)w.buf_p + P_TGT_SIZE + P_RECV_SLOTS * P_RECV_SLOT,
		.length = rnd(1025),
		.lkey = w.mr_p->lkey,
	};
	struct ibv_send_wr wr = {
		.wr_id = TAG_REAL | ++fp->wr_seq, .sg_list = &sge, .num_sge = 1,
		.send_flags = IBV_SEND_SIGNALED, .imm_data = tool_rng_next(&R),
	}, *bad;

	/* Hostility 0 keeps P from running into RNR and its retry limit. */
	if (!fp->hostility && fp->f_credit <= 0) {
		f_post_recv(fp, TAG_FRECV | ++fp->wr_seq);
		return;
	}
	fp->f_credit--;
	switch (rnd(fp->type == IBV_QPT_UD ? 2 : 3)) {
	case 0:
		wr.opcode = IBV_WR_SEND;
		break;
	case 1:
		wr.opcode = IBV_WR_SEND_WITH_IMM;
		break;
	default:
		wr.opcode = IBV_WR_RDMA_WRITE_WITH_IMM;
		wr.wr.rdma.remote_addr = (uintptr_t)w.buf_f + rnd(F_RECV_OFF - 1024);
		wr.wr.rdma.rkey = w.mr_f->rkey;
		break;
	}
	if (fp->type == IBV_QPT_UD) {
		wr.wr.ud.ah = fp->pah;
		wr.wr.ud.remote_qpn = fp->qp->qp_num;
		wr.wr.ud.remote_qkey = QKEY;
	}
	beat("%s: P posts to QP %u", rep.cur, fp->qp->qp_num);
	(void)ibv_post_send(fp->pqp, &wr, &bad);
}
