// SPDX-License-Identifier: GPL-2.0 OR Linux-OpenIB
/*
 * The QPs: creating them, walking them to their states, keeping their
 * receives (or an orphan's requests) posted, their completions, and
 * putting back a QP the fuzzer killed.
 */
#include "fuzz-target.h"

/* ---------------------------------------------------------------------- */
/* QPs. */

bool has_peer(const struct target *x)
{
	return x->fam && x->role != R_ORPHAN;
}

static unsigned int access_of(const struct target *x)
{
	if (x->type == IBV_QPT_UC)
		return IBV_ACCESS_REMOTE_WRITE;
	if (x->role == R_SRQ)
		return IBV_ACCESS_REMOTE_READ;
	return IBV_ACCESS_REMOTE_WRITE | IBV_ACCESS_REMOTE_READ |
	       IBV_ACCESS_REMOTE_ATOMIC;
}

struct ibv_qp *create_qp(struct side *s, enum ibv_qp_type type,
			 struct ibv_srq *srq, struct ibv_xrcd *xrcd)
{
	struct ibv_qp_init_attr_ex init = {
		.send_cq = s->cq,
		.recv_cq = s->cq,
		.srq = srq,
		.cap = {
			.max_send_wr = SQ_DEPTH,
			.max_recv_wr = type == IBV_QPT_XRC_RECV ? 0 : RQ_POSTED,
			.max_send_sge = 2,
			.max_recv_sge = 2,
		},
		.qp_type = type,
		.comp_mask = IBV_QP_INIT_ATTR_PD,
		.pd = s->pd,
	};
	struct ibv_qp *qp;

	if (type == IBV_QPT_XRC_RECV) {
		memset(&init, 0, sizeof(init));
		init.qp_type = type;
		init.comp_mask = IBV_QP_INIT_ATTR_XRCD;
		init.xrcd = xrcd;
	} else if (type == IBV_QPT_XRC_SEND) {
		init.cap.max_recv_wr = 0;
		init.cap.max_recv_sge = 0;
	}
	qp = ibv_create_qp_ex(s->ctx, &init);
	if (!qp)
		tool_die("create QP (type %d): %s", type, strerror(errno));
	return qp;
}

/*
 * During setup every transition must work. A restore may race with the
 * fuzzer killing the QP again: its failures are counted, and the next
 * check tries again.
 */
static bool restoring;

static int modify(struct ibv_qp *qp, struct ibv_qp_attr *attr, int mask,
		  void *arg)
{
	int err = ibv_modify_qp(qp, attr, mask);

	(void)arg;
	if (err && !restoring)
		tool_die("QP %u to state %d: %s", qp->qp_num, attr->qp_state,
			 strerror(err));
	return err;
}

/*
 * Walk @qp (of any type) on side @s from RESET to @want, towards @dest_qpn at
 * @dgid. Its SQ and RQ start at @psn; its local ACK timeout is infinite
 * (requests wait for the fuzzer). Return 0 or an errno.
 */
static int bring_up(struct ibv_qp *qp, struct side *s, enum ibv_qp_state want, int fam, enum ibv_mtu mtu,
		    unsigned int access, uint32_t dest_qpn,
		    const union ibv_gid *dgid, uint32_t psn)
{
	struct tool_qp_conn c = {
		.access = access, .qkey = UD_QKEY, .dgid = *dgid,
		.sgid_index = s->gid_index[fam == 6], .mtu = mtu,
		.dest_qpn = dest_qpn, .rq_psn = psn, .max_dest_rd_atomic = 16,
		.min_rnr_timer = 1, .sq_psn = psn, .timeout = 0,
		.retry_cnt = 7, .rnr_retry = 7, .max_rd_atomic = 16,
		.modify = modify,
	};
	struct ibv_qp_attr at = { .qp_state = IBV_QPS_ERR };
	int err;

	if (want == IBV_QPS_RESET)
		return 0;
	err = tool_qp_connect(qp, &c, want == IBV_QPS_ERR ? IBV_QPS_INIT : want);
	if (err || want != IBV_QPS_ERR)
		return err;
	return modify(qp, &at, IBV_QP_STATE, NULL);
}

static union ibv_gid fake_gid;

int target_up(struct target *x)
{
	uint32_t dest = x->peer ? x->peer->qp_num : FAKE_QPN + (x - t);
	const union ibv_gid *dgid = x->fam ? &b.gid[x->fam == 6] : &fake_gid;

	return bring_up(x->qp, &a, x->want, x->fam, x->mtu, access_of(x),
		 dest, dgid, x->psn);
}

/* The partner: an XRC send QP for an XRC target, else of @x's type. */
void peer_up(struct target *x)
{
	bring_up(x->peer, &b, IBV_QPS_RTS, x->fam, x->mtu,
		 IBV_ACCESS_REMOTE_WRITE, x->qp->qp_num, &a.gid[x->fam == 6],
		 x->psn);
}

/* ---------------------------------------------------------------------- */
/* Receives and an orphan's requests. */

uint64_t wr_id(const struct target *x, unsigned int kind)
{
	return (uint64_t)kind << 56 | (uint64_t)(x - t) << 32 | x->gen;
}

static bool has_rq(const struct target *x)
{
	return (x->type == IBV_QPT_RC || x->type == IBV_QPT_UC ||
		x->type == IBV_QPT_UD) && x->role != R_SRQ &&
	       x->want != IBV_QPS_RESET && x->want != IBV_QPS_ERR;
}

static int post_recv_one(struct target *x)
{
	struct ibv_sge sge[2] = {
		{ (uintptr_t)o.buf, 1000, o.buf_mr->lkey },
		{ (uintptr_t)o.buf + 1000, RECV_LEN - 1000, o.buf_mr->lkey },
	};
	struct ibv_recv_wr wr = { .wr_id = wr_id(x, K_RECV), .sg_list = sge,
				  .num_sge = 2 }, *bad;

	if (x->type == IBV_QPT_UD) {
		sge[0].length = UD_RECV_LEN;
		wr.num_sge = 1;
	}
	return ibv_post_recv(x->qp, &wr, &bad);
}

void post_srq_recv(struct ibv_srq *srq, unsigned int n)
{
	struct ibv_sge sge = { (uintptr_t)o.buf, RECV_LEN, o.buf_mr->lkey };
	struct ibv_recv_wr wr = {
		.wr_id = (uint64_t)(srq == o.srq ? K_SRQ : K_XSRQ) << 56,
		.sg_list = &sge,
		.num_sge = 1,
	}, *bad;

	while (n--)
		if (ibv_post_srq_recv(srq, &wr, &bad))
			tool_die("post_srq_recv: %s", strerror(errno));
}

/* The next request of an orphan: its kind is its PSN's offset mod 5. */
static int post_orphan_one(struct target *x)
{
	static const enum ibv_wr_opcode kinds[] = {
		IBV_WR_SEND, IBV_WR_RDMA_WRITE, IBV_WR_RDMA_READ,
		IBV_WR_ATOMIC_CMP_AND_SWP, IBV_WR_ATOMIC_FETCH_AND_ADD,
	};
	static const uint32_t lens[] = { 16, 16, 24, 8, 8 };
	unsigned int k = x->ops % ARRAY_SIZE(kinds);
	struct ibv_sge sge = { (uintptr_t)o.buf + 8192, lens[k],
			       o.buf_mr->lkey };
	struct ibv_send_wr wr = {
		.wr_id = wr_id(x, K_ORPHAN),
		.sg_list = &sge,
		.num_sge = 1,
		.opcode = kinds[k],
		.send_flags = IBV_SEND_SIGNALED,
	}, *bad;
	int err;

	wr.wr.rdma.remote_addr = 0x10000;
	wr.wr.rdma.rkey = 0x1234;
	if (k >= 3) {
		wr.wr.atomic.remote_addr = 0x10000;
		wr.wr.atomic.rkey = 0x1234;
		wr.wr.atomic.compare_add = 1;
		wr.wr.atomic.swap = 2;
	}
	err = ibv_post_send(x->qp, &wr, &bad);
	if (!err)
		x->ops++;
	return err;
}

/* Top up what @x keeps posted; stop at the first refusal (QP in error). */
void top_up(struct target *x)
{
	unsigned int want = x->role == R_ORPHAN ? ORPHAN_POSTED : RQ_POSTED;

	if (x->role != R_ORPHAN && !has_rq(x))
		return;
	if (x->role == R_ORPHAN && x->type != IBV_QPT_RC)
		return;
	while (x->posted < want) {
		if (x->role == R_ORPHAN ? post_orphan_one(x) : post_recv_one(x))
			return;
		x->posted++;
	}
}

void completion(const struct ibv_wc *wc)
{
	unsigned int kind = wc->wr_id >> 56, i = (wc->wr_id >> 32) & 0xffffff;
	bool flush = wc->status == IBV_WC_WR_FLUSH_ERR;
	bool ok = wc->status == IBV_WC_SUCCESS;
	struct target *x;

	if (verbose && !ok && !flush)
		printf("completion kind %u qp %u: %s (vendor_err 0x%x) at %.3f s\n",
		       kind, wc->qp_num, ibv_wc_status_str(wc->status),
		       wc->vendor_err, ((long)tool_now_ms() - start_ms) / 1000.0);
	/* The opcode of a completion in error is undefined: go by wr_id. */
	if (kind == K_ORPHAN || kind == K_BIND) {
		st.send_ok += ok;
		st.send_flush += flush;
		st.send_err += !ok && !flush;
	} else {
		st.recv_ok += ok;
		st.recv_flush += flush;
		st.recv_err += !ok && !flush;
	}
	if (kind == K_SRQ || kind == K_XSRQ) {
		/* An SRQ never dies: give back what was taken. */
		post_srq_recv(kind == K_SRQ ? o.srq : o.xsrq, 1);
		return;
	}
	if ((kind != K_RECV && kind != K_ORPHAN) || i >= (unsigned int)num_t)
		return;
	x = &t[i];
	x->done += ok;
	if ((uint32_t)wc->wr_id != x->gen || !x->posted)
		return;		/* from before a restore */
	x->posted--;
	if (!flush)
		top_up(x);
}

/*
 * Put back a QP found out of the state it is meant to be in. The fuzzer
 * may kill it again on the way: then the next check tries again.
 */
static void restore(struct target *x)
{
	struct ibv_qp_attr at = { .qp_state = IBV_QPS_RESET };
	int err = ibv_modify_qp(x->qp, &at, IBV_QP_STATE);

	if (err)
		tool_die("QP %u to RESET: %s", x->qp->qp_num, strerror(err));
	restoring = true;
	x->gen++;
	x->posted = 0;
	x->ops = 0;
	x->restores++;
	st.restores++;
	if (target_up(x))
		st.restore_failures++;
	else
		top_up(x);
	restoring = false;
}

void check_states(void)
{
	struct ibv_qp_init_attr init;
	struct ibv_qp_attr at;
	int i;

	for (i = 0; i < num_t; i++) {
		if (t[i].want < IBV_QPS_RTR || t[i].want == IBV_QPS_ERR)
			continue;
		if (ibv_query_qp(t[i].qp, &at, IBV_QP_STATE, &init))
			tool_die("query_qp: %s", strerror(errno));
		if (at.qp_state == t[i].want)
			continue;
		if (verbose)
			printf("restore qp %u from %s at %.3f s\n",
			       t[i].qp->qp_num, state_name(at.qp_state),
			       ((long)tool_now_ms() - start_ms) / 1000.0);
		restore(&t[i]);
	}
}
