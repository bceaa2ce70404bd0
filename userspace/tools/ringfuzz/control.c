// SPDX-License-Identifier: GPL-2.0 OR Linux-OpenIB
/*
 * QP plumbing shared by the control pair and F/P, and the control pair:
 * byte-verified RC traffic next to the fuzzing.
 */
#include "ringfuzz.h"

void modify(struct ibv_qp *qp, struct ibv_qp_attr *a, int mask,
	    const char *to)
{
	int err = ibv_modify_qp(qp, a, mask);

	if (err)
		tool_die("QP %u to %s: %s", qp->qp_num, to, strerror(err));
}

static int modify_step(struct ibv_qp *qp, struct ibv_qp_attr *a, int mask,
		       void *arg)
{
	(void)arg;
	modify(qp, a, mask, tool_qp_state_name(a->qp_state));
	return 0;
}

void set_av(struct ibv_ah_attr *ah, const struct dev *from,
	    const struct dev *to)
{
	tool_set_av(ah, &to->gid, from->gid_index);
}

/* RESET to RTS (to INIT only, with @init_only), facing @peer_qpn on @to. */
void qp_connect(struct ibv_qp *qp, const struct dev *from,
		const struct dev *to, uint32_t peer_qpn,
		const struct qp_params *p, bool init_only)
{
	struct tool_qp_conn c = {
		.access = IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_REMOTE_WRITE |
			  (qp->qp_type == IBV_QPT_RC ? IBV_ACCESS_REMOTE_READ |
			   IBV_ACCESS_REMOTE_ATOMIC : 0),
		.qkey = QKEY, .dgid = to->gid, .sgid_index = from->gid_index,
		.mtu = tool_mtu_min(from->mtu, to->mtu), .dest_qpn = peer_qpn,
		.rq_psn = 0x1000, .max_dest_rd_atomic = 4,
		.min_rnr_timer = p->min_rnr_timer, .sq_psn = 0x1000,
		.timeout = p->timeout, .retry_cnt = p->retry_cnt,
		.rnr_retry = p->rnr_retry, .max_rd_atomic = 4,
		.modify = modify_step,
	};

	tool_qp_connect(qp, &c, init_only ? IBV_QPS_INIT : IBV_QPS_RTS);
}

struct ibv_mr *reg(struct ibv_pd *pd, void *buf, size_t len, int access)
{
	struct ibv_mr *mr = ibv_reg_mr(pd, buf, len, access);

	if (!mr)
		tool_die("ibv_reg_mr: %s", strerror(errno));
	return mr;
}

/* A PD on each device, or die with @what first in the message. */
void alloc_pds(struct ibv_pd **a, struct ibv_pd **b, const char *what)
{
	*a = ibv_alloc_pd(dev_a.ctx);
	*b = ibv_alloc_pd(dev_b.ctx);
	if (!*a || !*b)
		tool_die("%sibv_alloc_pd: %s", what, strerror(errno));
}

void control_setup(void)
{
	struct ibv_qp_init_attr init = {
		.qp_type = IBV_QPT_RC,
		.cap = { .max_send_wr = 16, .max_recv_wr = 16,
			 .max_send_sge = 1, .max_recv_sge = 1 },
	};
	struct qp_params p = { .timeout = 14, .retry_cnt = 7, .rnr_retry = 7,
			       .min_rnr_timer = 1 };
	int access = IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_REMOTE_WRITE |
		     IBV_ACCESS_REMOTE_READ | IBV_ACCESS_REMOTE_ATOMIC;

	alloc_pds(&ctl.pd_a, &ctl.pd_b, "control: ");
	ctl.cq_a = ibv_create_cq(dev_a.ctx, 64, NULL, NULL, 0);
	ctl.cq_b = ibv_create_cq(dev_b.ctx, 64, NULL, NULL, 0);
	if (!ctl.cq_a || !ctl.cq_b)
		tool_die("control: ibv_create_cq: %s", strerror(errno));
	ctl.buf_a = tool_alloc(C_BUF_SIZE);
	ctl.buf_b = tool_alloc(C_BUF_SIZE);
	ctl.img_a = tool_alloc(C_BUF_SIZE);
	ctl.img_b = tool_alloc(C_BUF_SIZE);
	tool_rng_fill(&data_rng, ctl.buf_a, C_BUF_SIZE);
	tool_rng_fill(&data_rng, ctl.buf_b, C_BUF_SIZE);
	memcpy(ctl.img_a, ctl.buf_a, C_BUF_SIZE);
	memcpy(ctl.img_b, ctl.buf_b, C_BUF_SIZE);
	ctl.mr_a = reg(ctl.pd_a, ctl.buf_a, C_BUF_SIZE, access);
	ctl.mr_b = reg(ctl.pd_b, ctl.buf_b, C_BUF_SIZE, access);
	init.send_cq = init.recv_cq = ctl.cq_a;
	ctl.qp_a = ibv_create_qp(ctl.pd_a, &init);
	init.send_cq = init.recv_cq = ctl.cq_b;
	ctl.qp_b = ibv_create_qp(ctl.pd_b, &init);
	if (!ctl.qp_a || !ctl.qp_b)
		tool_die("control: ibv_create_qp: %s", strerror(errno));
	qp_connect(ctl.qp_a, &dev_a, &dev_b, ctl.qp_b->qp_num, &p, false);
	qp_connect(ctl.qp_b, &dev_b, &dev_a, ctl.qp_a->qp_num, &p, false);
}

void control_teardown(void)
{
	int err = 0;

	err |= ibv_destroy_qp(ctl.qp_a);
	err |= ibv_destroy_qp(ctl.qp_b);
	err |= ibv_destroy_cq(ctl.cq_a);
	err |= ibv_destroy_cq(ctl.cq_b);
	err |= ibv_dereg_mr(ctl.mr_a);
	err |= ibv_dereg_mr(ctl.mr_b);
	err |= ibv_dealloc_pd(ctl.pd_a);
	err |= ibv_dealloc_pd(ctl.pd_b);
	if (err)
		fail("control: a destroy failed");
}

static void ctl_post_send(struct ibv_qp *qp, struct ibv_mr *mr, uint64_t wr_id,
			  enum ibv_wr_opcode op, uint32_t off, uint32_t len,
			  uint64_t raddr, uint32_t rkey, uint64_t add)
{
	struct ibv_sge sge = {
		.addr = (uintptr_t)mr->addr + off, .length = len, .lkey = mr->lkey,
	};
	struct ibv_send_wr wr = {
		.wr_id = wr_id, .sg_list = &sge, .num_sge = 1, .opcode = op,
		.send_flags = IBV_SEND_SIGNALED,
	}, *bad;
	int err;

	if (op == IBV_WR_ATOMIC_FETCH_AND_ADD) {
		wr.wr.atomic.remote_addr = raddr;
		wr.wr.atomic.rkey = rkey;
		wr.wr.atomic.compare_add = add;
	} else {
		wr.wr.rdma.remote_addr = raddr;
		wr.wr.rdma.rkey = rkey;
	}
	err = ibv_post_send(qp, &wr, &bad);
	if (err)
		tool_die("control: post_send: %s", strerror(err));
}

static void ctl_post_recv(struct ibv_qp *qp, struct ibv_mr *mr, uint32_t off)
{
	struct ibv_sge sge = {
		.addr = (uintptr_t)mr->addr + off, .length = C_PART,
		.lkey = mr->lkey,
	};
	struct ibv_recv_wr wr = { .wr_id = 100, .sg_list = &sge, .num_sge = 1 },
			   *bad;
	int err = ibv_post_recv(qp, &wr, &bad);

	if (err)
		tool_die("control: post_recv: %s", strerror(err));
}

/* Start a round: A sends, writes, reads, adds; B sends. */
void control_start(void)
{
	uint64_t b_base = (uintptr_t)ctl.buf_b;

	if (ctl.in_flight)
		return;
	beat("%s: control round %u: start", rep.cur, ctl.rounds);
	ctl.len_s = tool_rng_next(&data_rng) % (C_PART + 1);
	ctl.len_b = tool_rng_next(&data_rng) % (C_PART - 4096 + 1);
	ctl.len_w = tool_rng_next(&data_rng) % (C_PART / 2 + 1);
	ctl.off_w = tool_rng_next(&data_rng) % (C_PART - ctl.len_w + 1);
	ctl.src_w = tool_rng_next(&data_rng) % (C_PART - ctl.len_w + 1);
	ctl.len_r = tool_rng_next(&data_rng) % (C_PART / 2 + 1);
	ctl.off_r = tool_rng_next(&data_rng) % (C_PART - ctl.len_r + 1);
	ctl.add = tool_rng_next(&data_rng);
	tool_rng_fill(&data_rng, ctl.buf_a, C_PART);
	memcpy(ctl.img_a, ctl.buf_a, C_PART);
	tool_rng_fill(&data_rng, ctl.buf_b + C_SRC_B, ctl.len_b);
	memcpy(ctl.img_b + C_SRC_B, ctl.buf_b + C_SRC_B, ctl.len_b);
	if (tool_rng_next(&data_rng) % 4 == 0) {
		tool_rng_fill(&data_rng, ctl.buf_b + 2 * C_PART, C_PART);
		memcpy(ctl.img_b + 2 * C_PART, ctl.buf_b + 2 * C_PART, C_PART);
	}
	ctl_post_recv(ctl.qp_b, ctl.mr_b, 0);
	ctl_post_recv(ctl.qp_a, ctl.mr_a, C_PART);
	ctl_post_send(ctl.qp_a, ctl.mr_a, 1, IBV_WR_SEND, 0, ctl.len_s, 0, 0, 0);
	ctl_post_send(ctl.qp_a, ctl.mr_a, 2, IBV_WR_RDMA_WRITE, ctl.src_w,
		      ctl.len_w, b_base + C_PART + ctl.off_w, ctl.mr_b->rkey, 0);
	ctl_post_send(ctl.qp_a, ctl.mr_a, 3, IBV_WR_RDMA_READ,
		      2 * C_PART + ctl.off_r, ctl.len_r,
		      b_base + 2 * C_PART + ctl.off_r, ctl.mr_b->rkey, 0);
	ctl_post_send(ctl.qp_a, ctl.mr_a, 4, IBV_WR_ATOMIC_FETCH_AND_ADD,
		      3 * C_PART, 8, b_base + 3 * C_PART, ctl.mr_b->rkey, ctl.add);
	ctl_post_send(ctl.qp_b, ctl.mr_b, 5, IBV_WR_SEND, C_SRC_B, ctl.len_b,
		      0, 0, 0);
	ctl.in_flight = true;
	ctl.started = tool_now_ms();
}

/* The first byte where @buf and @img differ, or -1. */
long first_diff(const uint8_t *buf, const uint8_t *img, size_t len)
{
	size_t i;

	if (!memcmp(buf, img, len))
		return -1;
	for (i = 0; i < len && buf[i] == img[i]; i++)
		;
	return i;
}

/* Collect the round's 7 completions and check everything. */
void control_finish(void)
{
	static const struct {
		uint64_t wr_id;
		enum ibv_wc_opcode op;
	} want_a[] = {
		{ 1, IBV_WC_SEND }, { 2, IBV_WC_RDMA_WRITE },
		{ 3, IBV_WC_RDMA_READ }, { 4, IBV_WC_FETCH_ADD },
	};
	unsigned int na = 0, nb = 0, sends_a = 0;
	bool recv_a = false, recv_b = false;
	uint64_t old;
	struct ibv_wc wc;
	long d;

	if (!ctl.in_flight)
		return;
	beat("%s: control round %u: finish", rep.cur, ctl.rounds);
	while (na < 5 || nb < 2) {
		int n = 0;

		if (na < 5)
			n = ibv_poll_cq(ctl.cq_a, 1, &wc);
		if (n > 0) {
			na++;
			if (wc.status != IBV_WC_SUCCESS) {
				fail("control: A wr_id %" PRIu64 ": %s", wc.wr_id,
				     ibv_wc_status_str(wc.status));
			} else if (wc.opcode == IBV_WC_RECV) {
				recv_a = true;
				if (wc.byte_len != ctl.len_b)
					fail("control: A received %u bytes, B sent %u",
					     wc.byte_len, ctl.len_b);
			} else if (sends_a < ARRAY_SIZE(want_a) &&
				   (wc.wr_id != want_a[sends_a].wr_id ||
				    wc.opcode != want_a[sends_a].op)) {
				fail("control: A completion %u is wr_id %" PRIu64
				     " opcode %d", sends_a, wc.wr_id, wc.opcode);
				sends_a++;
			} else {
				sends_a++;
			}
			continue;
		}
		n = nb < 2 ? ibv_poll_cq(ctl.cq_b, 1, &wc) : 0;
		if (n > 0) {
			nb++;
			if (wc.status != IBV_WC_SUCCESS)
				fail("control: B wr_id %" PRIu64 ": %s", wc.wr_id,
				     ibv_wc_status_str(wc.status));
			else if (wc.opcode == IBV_WC_RECV) {
				recv_b = true;
				if (wc.byte_len != ctl.len_s)
					fail("control: B received %u bytes, A sent %u",
					     wc.byte_len, ctl.len_s);
			}
			continue;
		}
		if (n < 0 || tool_now_ms() - ctl.started > WAIT_MS) {
			fail("control: round %u: %u of 5 completions on A, %u of 2"
			     " on B after %u ms", ctl.rounds, na, nb, WAIT_MS);
			tool_die("the control pair is broken");
		}
		alive();
	}
	ctl.in_flight = false;
	if (!recv_a || !recv_b)
		fail("control: a receive did not complete");

	/* What the round did to the images. */
	memcpy(ctl.img_b, ctl.img_a, ctl.len_s);
	memcpy(ctl.img_b + C_PART + ctl.off_w, ctl.img_a + ctl.src_w, ctl.len_w);
	memcpy(ctl.img_a + 2 * C_PART + ctl.off_r,
	       ctl.img_b + 2 * C_PART + ctl.off_r, ctl.len_r);
	memcpy(&old, ctl.img_b + 3 * C_PART, 8);
	memcpy(ctl.img_a + 3 * C_PART, &old, 8);
	old += ctl.add;
	memcpy(ctl.img_b + 3 * C_PART, &old, 8);
	memcpy(ctl.img_a + C_PART, ctl.img_b + C_SRC_B, ctl.len_b);
	if (inject_control && ctl.rounds == 3)
		ctl.img_b[C_PART + 17] ^= 0x40;

	d = first_diff(ctl.buf_a, ctl.img_a, C_BUF_SIZE);
	if (d >= 0)
		fail("control: A's buffer differs at byte %ld: %#x, expected %#x",
		     d, ctl.buf_a[d], ctl.img_a[d]);
	d = first_diff(ctl.buf_b, ctl.img_b, C_BUF_SIZE);
	if (d >= 0)
		fail("control: B's buffer differs at byte %ld: %#x, expected %#x",
		     d, ctl.buf_b[d], ctl.img_b[d]);
	if (d >= 0 && inject_control)
		memcpy(ctl.img_b, ctl.buf_b, C_BUF_SIZE);	/* once */
	ctl.rounds++;
}

void control_round(void)
{
	control_start();
	control_finish();
}
