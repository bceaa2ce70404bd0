// SPDX-License-Identifier: GPL-2.0 OR Linux-OpenIB
/*
 * Devices and pairs: opening a device, building a QP pair (CQs, MRs, SRQ,
 * QPs, AHs, receives, window), connecting it, destroying it.
 */
#include "stress.h"

void dev_open(struct dev *d)
{
	int i;

	d->ctx = tool_open_device(d->name);
	d->mtu = tool_port_mtu(d->ctx, d->name);
	for (i = 0; i < 2; i++)
		tool_query_gid(d->ctx, d->name, d->gid_index[i], &d->gid[i]);
	d->pd = tool_alloc_pd(d->ctx, d->name);
	tool_nonblock(d->ctx->async_fd, d->name);
}

void set_av(struct ibv_ah_attr *ah, const struct dev *from,
	    const struct dev *to, int v6)
{
	tool_set_av(ah, &to->gid[v6], from->gid_index[v6]);
}

void fifo_push(struct fifo *f, uint64_t id, uint32_t len,
	       enum op_kind kind)
{
	if (f->tail - f->head == FIFO_LEN)
		tool_die("receive FIFO full");
	f->e[f->tail++ % FIFO_LEN] = (struct expect){ id, len, kind };
}

/*
 * A modify with an address vector makes the RDMA core resolve the peer's
 * MAC address; on a veth just created, or a busy VM, that can time out
 * (ETIMEDOUT). Try again, as applications do.
 */
int modify_av(struct ibv_qp *qp, struct ibv_qp_attr *a, int mask)
{
	int err, tries = 0;

	while ((err = ibv_modify_qp(qp, a, mask)) == ETIMEDOUT &&
	       (mask & IBV_QP_AV) && ++tries < 10)
		tool_sleep_us(200000);
	return err;
}

/* An AH resolves the peer's MAC too: the same. */
static struct ibv_ah *create_ah(struct ibv_pd *pd, struct ibv_ah_attr *a)
{
	struct ibv_ah *ah;
	int tries = 0;

	while (!(ah = ibv_create_ah(pd, a)) && errno == ETIMEDOUT && ++tries < 10)
		tool_sleep_us(200000);
	return ah;
}

/* A step of connect_qp(): it works, or a device going away explains it. */
static int modify(struct ibv_qp *qp, struct ibv_qp_attr *a, int mask,
		  void *arg)
{
	int err = modify_av(qp, a, mask);

	(void)arg;
	if (err && !removal_explains())
		tool_die("QP %u to %s: %s", qp->qp_num,
			 tool_qp_state_name(a->qp_state), strerror(err));
	return 0;
}

/* RESET to RTS, facing @peer on @to, with address family @v6. */
void connect_qp(struct ibv_qp *qp, const struct dev *from,
		const struct dev *to, uint32_t peer, int v6,
		uint32_t sq_psn, uint32_t rq_psn, uint8_t rd_atomic)
{
	struct tool_qp_conn c = {
		.access = IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_REMOTE_WRITE |
			  (qp->qp_type == IBV_QPT_RC ? IBV_ACCESS_REMOTE_READ |
			   IBV_ACCESS_REMOTE_ATOMIC : 0),
		.qkey = QKEY, .dgid = to->gid[v6],
		.sgid_index = from->gid_index[v6],
		.mtu = tool_mtu_min(from->mtu, to->mtu), .dest_qpn = peer,
		.rq_psn = rq_psn, .max_dest_rd_atomic = rd_atomic,
		.min_rnr_timer = 1, .sq_psn = sq_psn, .timeout = 14,
		.retry_cnt = 6, .rnr_retry = 6, .max_rd_atomic = rd_atomic,
		.modify = modify,
	};

	tool_qp_connect(qp, &c, IBV_QPS_RTS);
}

/*
 * Post receive @wr_id of @buf (RSLOT bytes, @lkey) on @srq, or on @qp
 * unless an event destroyed it; a failure kills the pair.
 */
static void post_recv_on(struct pair *p, struct ibv_qp *qp,
			 struct ibv_srq *srq, uint8_t *buf, uint32_t lkey,
			 uint64_t wr_id, const char *side)
{
	struct ibv_sge sge = { .addr = (uintptr_t)buf, .length = RSLOT,
			       .lkey = lkey };
	struct ibv_recv_wr wr = { .wr_id = wr_id, .sg_list = &sge,
				  .num_sge = 1 }, *bad;
	int err;

	if (srq)
		err = ibv_post_srq_recv(srq, &wr, &bad);
	else if (!qp)
		return;		/* destroyed by an event */
	else
		err = ibv_post_recv(qp, &wr, &bad);
	if (err && !removal_explains()) {
		note("pair %u: posting a receive on %s: %s", p->n, side,
		     strerror(err));
		p->dead = true;
	}
}

void post_recv_a(struct pair *p, unsigned int slot)
{
	post_recv_on(p, p->aqp, NULL, p->abuf + A_RECV + slot * RSLOT,
		     p->alkey, W_ARECV | slot, "A");
}

void post_recv_b(struct pair *p, unsigned int slot)
{
	post_recv_on(p, p->bqp, p->bsrq, p->brbuf + B_RECV + slot * RSLOT,
		     p->brlkey, W_BRECV | slot, "B");
}

/* Wait for the completion of @wr_id on @cq; its status, or -1. */
static int wait_one(struct ibv_cq *cq, uint64_t wr_id)
{
	uint64_t t0 = tool_now_ms();
	struct ibv_wc wc;

	while (tool_now_ms() - t0 < WAIT_MS) {
		int n = ibv_poll_cq(cq, 1, &wc);

		if (n < 0)
			return -1;
		if (n && wc.wr_id == wr_id)
			return wc.status;
		if (!n)
			tool_sleep_us(200);
	}
	return -1;
}

/* The responder binds its window over its WRITE and READ targets. */
static bool bind_window(struct pair *p)
{
	struct ibv_send_wr wr = {
		.wr_id = W_BIND, .opcode = IBV_WR_BIND_MW,
		.send_flags = IBV_SEND_SIGNALED,
	}, *bad;
	int st;

	wr.bind_mw.mw = p->mw;
	wr.bind_mw.rkey = ibv_inc_rkey(p->mw->rkey);
	wr.bind_mw.bind_info.mr = p->btmr;
	wr.bind_mw.bind_info.addr = (uintptr_t)p->btbuf;
	wr.bind_mw.bind_info.length = B_ATGT;
	wr.bind_mw.bind_info.mw_access_flags = IBV_ACCESS_REMOTE_WRITE |
					       IBV_ACCESS_REMOTE_READ;
	if (ibv_post_send(p->bqp, &wr, &bad))
		return false;
	st = wait_one(p->bcq, W_BIND);
	if (st != IBV_WC_SUCCESS) {
		if (!removal_explains())
			fail("pair %u: binding the window: %s", p->n,
			     st < 0 ? "no completion" : ibv_wc_status_str(st));
		return false;
	}
	p->mw->rkey = wr.bind_mw.rkey;
	p->mw_rkey = wr.bind_mw.rkey;
	p->mw_bound = true;
	return true;
}

static struct ibv_qp *create_requester(struct pair *p)
{
	struct ibv_qp_init_attr_ex init = {
		.qp_type = p->type,
		.send_cq = p->acq, .recv_cq = p->acq,
		.cap = { .max_send_wr = DEPTH * 2, .max_recv_wr = RQ_DEPTH,
			 .max_send_sge = 1, .max_recv_sge = 1,
			 .max_inline_data = 64 },
		.comp_mask = IBV_QP_INIT_ATTR_PD,
		.pd = dev_a.pd,
	};
	struct ibv_qp *qp;

	if (p->type == IBV_QPT_RC && awrite_ok) {
		init.comp_mask |= IBV_QP_INIT_ATTR_SEND_OPS_FLAGS;
		init.send_ops_flags = IBV_QP_EX_WITH_SEND |
			IBV_QP_EX_WITH_SEND_WITH_IMM | IBV_QP_EX_WITH_RDMA_WRITE |
			IBV_QP_EX_WITH_RDMA_WRITE_WITH_IMM |
			IBV_QP_EX_WITH_RDMA_READ |
			IBV_QP_EX_WITH_ATOMIC_CMP_AND_SWP |
			IBV_QP_EX_WITH_ATOMIC_FETCH_AND_ADD |
			IBV_QP_EX_WITH_ATOMIC_WRITE;
		qp = ibv_create_qp_ex(dev_a.ctx, &init);
		if (qp) {
			p->aqpx = ibv_qp_to_qp_ex(qp);
			return qp;
		}
		if (removal_explains())
			return NULL;
		awrite_ok = false;
		awrite_why = errno == EOPNOTSUPP ? "EOPNOTSUPP" : "create failed";
		init.comp_mask &= ~IBV_QP_INIT_ATTR_SEND_OPS_FLAGS;
	}
	p->aqpx = NULL;
	return ibv_create_qp_ex(dev_a.ctx, &init);
}

/* Build pair @p anew; false if a device went away meanwhile. */
bool pair_build(struct pair *p)
{
	struct ibv_qp_init_attr init = {
		.qp_type = p->type,
		.cap = { .max_send_wr = BDEPTH * 2 + 4,
			 .max_recv_wr = RQ_DEPTH, .max_send_sge = 1,
			 .max_recv_sge = 1 },
	};
	struct ibv_srq_init_attr sa = {
		.attr = { .max_wr = RQ_DEPTH, .max_sge = 1 },
	};
	struct ibv_ah_attr ah;
	int tacc = IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_REMOTE_WRITE |
		   IBV_ACCESS_REMOTE_READ | IBV_ACCESS_REMOTE_ATOMIC |
		   IBV_ACCESS_MW_BIND;
	const char *step = "CQs";
	unsigned int i;

	memset(p->aop, 0, sizeof(p->aop));
	memset(p->bop, 0, sizeof(p->bop));
	memset(&p->to_a, 0, sizeof(p->to_a));
	memset(&p->to_b, 0, sizeof(p->to_b));
	p->dead = p->disturbed = p->mw_bound = p->ok_since_build = false;
	p->sqd_pending = p->drained = 0;
	p->dances = 0;
	p->mw_rkey = 0;
	p->grace_until = 0;
	/* One family for both: a connected QP takes only its path's packets. */
	p->v6[0] = p->v6[1] = rnd(2);
	p->rd_atomic[0] = p->rd_atomic[1] = 4;

	p->acq = ibv_create_cq(dev_a.ctx, 2 * (DEPTH * 2 + RQ_DEPTH), NULL,
			       NULL, 0);
	p->bcq = ibv_create_cq(dev_b.ctx, 2 * (BDEPTH * 2 + RQ_DEPTH + 8),
			       NULL, NULL, 0);
	if (!p->acq || !p->bcq)
		goto failed;
	step = "MRs";
	p->amr = ibv_reg_mr(dev_a.pd, p->abuf, A_SIZE, IBV_ACCESS_LOCAL_WRITE);
	p->btmr = ibv_reg_mr(dev_b.pd, p->btbuf, B_TSIZE, tacc);
	p->brmr = ibv_reg_mr(dev_b.pd, p->brbuf, B_RSIZE, IBV_ACCESS_LOCAL_WRITE);
	if (!p->amr || !p->btmr || !p->brmr)
		goto failed;
	p->alkey = p->amr->lkey;
	p->btrkey = p->btmr->rkey;
	p->brlkey = p->brmr->lkey;
	step = "the SRQ";
	if (p->kind == K_RC_SRQ) {
		p->bsrq = ibv_create_srq(dev_b.pd, &sa);
		if (!p->bsrq)
			goto failed;
		init.srq = p->bsrq;
	}
	step = "QPs";
	p->aqp = create_requester(p);
	init.send_cq = init.recv_cq = p->bcq;
	p->bqp = ibv_create_qp(dev_b.pd, &init);
	if (!p->aqp || !p->bqp)
		goto failed;
	connect_qp(p->aqp, &dev_a, &dev_b, p->bqp->qp_num, p->v6[0],
		   0x100 * p->n, 0x100 * p->n + 7, 4);
	connect_qp(p->bqp, &dev_b, &dev_a, p->aqp->qp_num, p->v6[1],
		   0x100 * p->n + 7, 0x100 * p->n, 4);
	step = "AHs";
	if (p->type == IBV_QPT_UD) {
		set_av(&ah, &dev_a, &dev_b, p->v6[0]);
		p->aah = create_ah(dev_a.pd, &ah);
		set_av(&ah, &dev_b, &dev_a, p->v6[1]);
		p->bah = create_ah(dev_b.pd, &ah);
		if (!p->aah || !p->bah)
			goto failed;
	}
	step = "receives";
	for (i = 0; i < RQ_DEPTH; i++) {
		post_recv_a(p, i);
		post_recv_b(p, i);
	}
	/* READ sources: fixed bytes of this pair. */
	for (i = 0; i < DEPTH; i++)
		pattern(~(uint64_t)(p->n * DEPTH + i), p->btbuf + B_RSRC +
			i * SLOT, SLOT);
	step = "the window";
	if (p->type == IBV_QPT_RC) {
		p->mw = ibv_alloc_mw(dev_b.pd, IBV_MW_TYPE_2);
		if (!p->mw || !bind_window(p))
			goto failed;
	}
	if (p->dead)
		goto failed;
	p->alive = true;
	return true;

failed:
	if (removal_explains())
		return false;
	tool_die("pair %u (%s): building it failed at %s: %s", p->n,
		 kind_names[p->kind], step,
		 p->dead ? "an error made it unusable (above)" : strerror(errno));
}

/* Destroy what @p has; with @check, each destroy must work. */
void pair_destroy(struct pair *p, bool check)
{
#define DESTROY(obj, fn, what)						\
	do {								\
		if (obj) {						\
			int e_ = fn(obj);				\
			if (e_ && check)				\
				fail("pair %u (%s): %s: %s", p->n,	\
				     kind_names[p->kind], what,		\
				     strerror(e_));			\
			obj = NULL;					\
		}							\
	} while (0)

	DESTROY(p->aqp, ibv_destroy_qp, "destroy the requester's QP");
	DESTROY(p->bqp, ibv_destroy_qp, "destroy the responder's QP");
	DESTROY(p->aah, ibv_destroy_ah, "destroy the requester's AH");
	DESTROY(p->bah, ibv_destroy_ah, "destroy the responder's AH");
	DESTROY(p->mw, ibv_dealloc_mw, "deallocate the window");
	DESTROY(p->bsrq, ibv_destroy_srq, "destroy the SRQ");
	DESTROY(p->acq, ibv_destroy_cq, "destroy the requester's CQ");
	DESTROY(p->bcq, ibv_destroy_cq, "destroy the responder's CQ");
	DESTROY(p->amr, ibv_dereg_mr, "deregister the requester's MR");
	DESTROY(p->btmr, ibv_dereg_mr, "deregister the target MR");
	DESTROY(p->brmr, ibv_dereg_mr, "deregister the receive MR");
#undef DESTROY
	p->aqpx = NULL;
	p->alive = false;
}
