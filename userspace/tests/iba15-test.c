// SPDX-License-Identifier: GPL-2.0 OR Linux-OpenIB
/*
 * iba15-test DEV GID_INDEX [PEER_DEV PEER_GID_INDEX]: ATOMIC_WRITE and
 * FLUSH (IBA 1.5) posted with ibv_wr_*() on a connected RC QP.
 *
 * With one device, the requester and the responder QP are both on DEV
 * (tests/53-ext-verbs.sh). With two, the requester is on DEV and the
 * responder on PEER_DEV, each with its own PD and CQ, connected through
 * the given GIDs (tests/54-iba15-interop.sh: sroce against rdma_rxe). The
 * QP numbers and GIDs are exchanged in-process: an RDMA device belongs to
 * no network namespace, and the kernel routes each QP's packets in the
 * namespace of its GID's netdev, so one process can drive both ends
 * wherever it runs. The responder's memory is the process's own, so
 * every check reads it directly.
 *
 * ibv_wr_flush() needs a struct ibv_qp_ex with wr_flush (rdma-core 45 and
 * later): build this with the headers of the rdma-core tree the provider
 * is built in and run it with that tree's libibverbs (see
 * tests/53-ext-verbs.sh), with providers of that release for every
 * device used (RDMAV_DRIVERS). The checks:
 *
 *   - ATOMIC_WRITE stores its 8 bytes, as given, at the remote address and
 *     nothing around them; its completion is IBV_WC_ATOMIC_WRITE
 *   - an RDMA WRITE and a FLUSH of its range in one batch: one completion,
 *     IBV_WC_FLUSH, and the data is in place byte for byte
 *   - a FLUSH of the whole MR (IBV_FLUSH_MR) succeeds
 *   - a FLUSH of an MR without IBV_ACCESS_FLUSH_GLOBAL fails with
 *     IBV_WC_REM_ACCESS_ERR
 *
 * A kernel whose RDMA core does not know the FLUSH rights (6.1) refuses
 * to register an MR with IBV_ACCESS_FLUSH_GLOBAL: then the FLUSH checks
 * are skipped, with a "skip:" line.
 *
 * Prints "ok:" and "FAIL:" lines, then "N passed, N failed"; exits 1 if
 * any check failed, 2 if the setup did. With two devices it first prints
 * the devices and the responder's MRs ("responder MR: addr 0x... rkey
 * 0x..."), by which tests/54-iba15-interop.sh recognises its FLUSH on the
 * wire.
 */
#include <errno.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <infiniband/verbs.h>

#include "check.h"

#define BUF_SIZE	4096

static void die(const char *what)
{
	fprintf(stderr, "iba15-test: %s: %s\n", what, strerror(errno));
	exit(2);
}

/* One end: the requester (DEV) or the responder (PEER_DEV, or DEV again). */
struct side {
	struct ibv_context *ctx;
	struct ibv_pd *pd;
	struct ibv_cq *cq;
	struct ibv_qp *qp;
	union ibv_gid gid;
	int gid_index;
};

struct ctx {
	struct side req, resp;		/* resp shares req's objects if one device */
	bool two;			/* two devices */
	struct ibv_qp_ex *qpx;		/* of req.qp */
	uint8_t *src, *dst, *nf;	/* src on the requester, dst and nf on the responder */
	struct ibv_mr *src_mr, *dst_mr, *nf_mr;
	int flush_access;		/* IBV_ACCESS_FLUSH_GLOBAL, or 0 */
};

static struct ibv_context *open_dev(const char *name)
{
	struct ibv_device **list = ibv_get_device_list(NULL);
	struct ibv_context *ctx = NULL;
	int i;

	if (!list)
		die("ibv_get_device_list");
	for (i = 0; list[i]; i++)
		if (!strcmp(ibv_get_device_name(list[i]), name))
			ctx = ibv_open_device(list[i]);
	ibv_free_device_list(list);
	if (!ctx)
		die(name);
	return ctx;
}

/* A zeroed buffer and its MR; NULL if only the registration failed. */
static struct ibv_mr *reg(struct ibv_pd *pd, uint8_t **buf, int access)
{
	*buf = aligned_alloc(4096, BUF_SIZE);
	if (!*buf)
		die("aligned_alloc");
	memset(*buf, 0, BUF_SIZE);
	return ibv_reg_mr(pd, *buf, BUF_SIZE, access);
}

/* Open DEV, read its GID, make its PD and CQ. */
static void side_open(struct side *s, const char *dev, const char *gid_index)
{
	s->ctx = open_dev(dev);
	s->gid_index = atoi(gid_index);
	if (ibv_query_gid(s->ctx, 1, s->gid_index, &s->gid))
		die("ibv_query_gid");
	s->pd = ibv_alloc_pd(s->ctx);
	s->cq = s->pd ? ibv_create_cq(s->ctx, 16, NULL, NULL, 0) : NULL;
	if (!s->cq)
		die("PD and CQ");
}

static struct ibv_qp *qp_new(struct side *s)
{
	struct ibv_qp_init_attr_ex attr = {
		.send_cq = s->cq, .recv_cq = s->cq, .qp_type = IBV_QPT_RC,
		.cap = { .max_send_wr = 16, .max_recv_wr = 1,
			 .max_send_sge = 1, .max_recv_sge = 1 },
		.comp_mask = IBV_QP_INIT_ATTR_PD |
			     IBV_QP_INIT_ATTR_SEND_OPS_FLAGS,
		.pd = s->pd,
		.send_ops_flags = IBV_QP_EX_WITH_RDMA_WRITE |
				  IBV_QP_EX_WITH_ATOMIC_WRITE |
				  IBV_QP_EX_WITH_FLUSH,
	};
	struct ibv_qp *qp = ibv_create_qp_ex(s->ctx, &attr);

	if (!qp)
		die("ibv_create_qp_ex with ATOMIC_WRITE and FLUSH");
	return qp;
}

/*
 * RESET to RTS, @s's QP connected to @peer's, from @s's GID to @peer's.
 * A responder takes FLUSH requests only with the QP's
 * IBV_ACCESS_FLUSH_GLOBAL (IBA 1.5, 9.4.6), besides the MR's.
 */
static void connect_qp(struct side *s, const struct side *peer,
		       int flush_access)
{
	struct ibv_qp_attr a = {
		.qp_state = IBV_QPS_INIT, .port_num = 1,
		.qp_access_flags = IBV_ACCESS_REMOTE_WRITE | flush_access,
	};

	if (ibv_modify_qp(s->qp, &a, IBV_QP_STATE | IBV_QP_PKEY_INDEX |
			  IBV_QP_PORT | IBV_QP_ACCESS_FLAGS))
		die("modify to INIT");
	memset(&a, 0, sizeof(a));
	a.qp_state = IBV_QPS_RTR;
	a.path_mtu = IBV_MTU_1024;
	a.dest_qp_num = peer->qp->qp_num;
	a.max_dest_rd_atomic = 4;
	a.min_rnr_timer = 12;
	a.ah_attr.is_global = 1;
	a.ah_attr.grh.dgid = peer->gid;
	a.ah_attr.grh.sgid_index = s->gid_index;
	a.ah_attr.grh.hop_limit = 1;
	a.ah_attr.port_num = 1;
	if (ibv_modify_qp(s->qp, &a, IBV_QP_STATE | IBV_QP_AV |
			  IBV_QP_PATH_MTU | IBV_QP_DEST_QPN | IBV_QP_RQ_PSN |
			  IBV_QP_MAX_DEST_RD_ATOMIC | IBV_QP_MIN_RNR_TIMER))
		die("modify to RTR");
	memset(&a, 0, sizeof(a));
	a.qp_state = IBV_QPS_RTS;
	a.timeout = 14;
	a.retry_cnt = 7;
	a.rnr_retry = 7;
	a.max_rd_atomic = 4;
	if (ibv_modify_qp(s->qp, &a, IBV_QP_STATE | IBV_QP_TIMEOUT |
			  IBV_QP_RETRY_CNT | IBV_QP_RNR_RETRY | IBV_QP_SQ_PSN |
			  IBV_QP_MAX_QP_RD_ATOMIC))
		die("modify to RTS");
}

/* One completion within 10 s, or status -1. */
static struct ibv_wc poll_one(struct ctx *c)
{
	struct ibv_wc wc = { .status = -1 };
	time_t end = time(NULL) + 10;
	int n;

	do {
		n = ibv_poll_cq(c->req.cq, 1, &wc);
	} while (!n && time(NULL) < end);
	if (n != 1)
		wc.status = -1;
	return wc;
}

/* A signaled FLUSH (global visibility) alone in a batch: its completion. */
static struct ibv_wc flush_one(struct ctx *c, uint64_t wr_id, uint32_t rkey,
			       const uint8_t *addr, size_t len, uint8_t level)
{
	struct ibv_wc wc = { .status = -1 };

	ibv_wr_start(c->qpx);
	c->qpx->wr_id = wr_id;
	c->qpx->wr_flags = IBV_SEND_SIGNALED;
	ibv_wr_flush(c->qpx, rkey, (uintptr_t)addr, len, IBV_FLUSH_GLOBAL,
		     level);
	if (!ibv_wr_complete(c->qpx))
		wc = poll_one(c);
	return wc;
}

static bool all_zero(const uint8_t *p, size_t n)
{
	while (n--)
		if (*p++)
			return false;
	return true;
}

int main(int argc, char **argv)
{
	static const uint8_t aw[8] = { 0x01, 0x23, 0x45, 0x67,
				       0x89, 0xab, 0xcd, 0xef };
	static uint8_t img[BUF_SIZE];	/* what the responder's MR must hold */
	struct ctx c = {};
	struct ibv_wc wc;
	int ret, i;

	if (argc != 3 && argc != 5) {
		fprintf(stderr,
			"usage: iba15-test DEV GID_INDEX [PEER_DEV PEER_GID_INDEX]\n");
		return 2;
	}
	side_open(&c.req, argv[1], argv[2]);
	c.two = argc == 5;
	if (c.two) {
		side_open(&c.resp, argv[3], argv[4]);
		printf("requester %s (GID index %d), responder %s (GID index %d)\n",
		       argv[1], c.req.gid_index, argv[3], c.resp.gid_index);
	} else {
		c.resp = c.req;
	}
	c.src_mr = reg(c.req.pd, &c.src, IBV_ACCESS_LOCAL_WRITE);
	c.nf_mr = reg(c.resp.pd, &c.nf, IBV_ACCESS_LOCAL_WRITE |
		      IBV_ACCESS_REMOTE_WRITE);
	c.flush_access = IBV_ACCESS_FLUSH_GLOBAL;
	c.dst_mr = reg(c.resp.pd, &c.dst, IBV_ACCESS_LOCAL_WRITE |
		       IBV_ACCESS_REMOTE_WRITE | c.flush_access);
	if (!c.dst_mr && errno == EINVAL) {
		printf("skip: FLUSH: the kernel refuses IBV_ACCESS_FLUSH_GLOBAL\n");
		c.flush_access = 0;
		c.dst_mr = ibv_reg_mr(c.resp.pd, c.dst, BUF_SIZE,
				      IBV_ACCESS_LOCAL_WRITE |
				      IBV_ACCESS_REMOTE_WRITE);
	}
	if (!c.src_mr || !c.dst_mr || !c.nf_mr)
		die("ibv_reg_mr");
	if (c.two)
		printf("responder MR: addr 0x%llx rkey 0x%x, without FLUSH right: addr 0x%llx rkey 0x%x\n",
		       (unsigned long long)(uintptr_t)c.dst, c.dst_mr->rkey,
		       (unsigned long long)(uintptr_t)c.nf, c.nf_mr->rkey);
	c.req.qp = qp_new(&c.req);
	c.resp.qp = qp_new(&c.resp);
	connect_qp(&c.req, &c.resp, c.flush_access);
	connect_qp(&c.resp, &c.req, c.flush_access);
	c.qpx = ibv_qp_to_qp_ex(c.req.qp);
	check(c.qpx, "ibv_qp_to_qp_ex() finds the QP's ibv_qp_ex");
	if (!c.qpx)
		return 1;

	ibv_wr_start(c.qpx);
	c.qpx->wr_id = 1;
	c.qpx->wr_flags = IBV_SEND_SIGNALED;
	ibv_wr_atomic_write(c.qpx, c.dst_mr->rkey, (uintptr_t)c.dst + 8, aw);
	ret = ibv_wr_complete(c.qpx);
	wc = poll_one(&c);
	check(!ret && wc.status == IBV_WC_SUCCESS && wc.wr_id == 1 &&
	      wc.opcode == IBV_WC_ATOMIC_WRITE,
	      "ATOMIC_WRITE completes (status %d, opcode %d)", wc.status,
	      wc.opcode);
	check(!memcmp(c.dst + 8, aw, sizeof(aw)) && all_zero(c.dst, 8) &&
	      all_zero(c.dst + 16, BUF_SIZE - 16),
	      "ATOMIC_WRITE stored its 8 bytes in order, and nothing else");

	if (!c.flush_access)
		goto out;
	for (i = 0; i < 512; i++)
		c.src[i] = i * 7 + 3;
	ibv_wr_start(c.qpx);
	c.qpx->wr_id = 2;
	c.qpx->wr_flags = 0;
	ibv_wr_rdma_write(c.qpx, c.dst_mr->rkey, (uintptr_t)c.dst + 256);
	ibv_wr_set_sge(c.qpx, c.src_mr->lkey, (uintptr_t)c.src, 512);
	c.qpx->wr_id = 3;
	c.qpx->wr_flags = IBV_SEND_SIGNALED;
	ibv_wr_flush(c.qpx, c.dst_mr->rkey, (uintptr_t)c.dst + 256, 512,
		     IBV_FLUSH_GLOBAL, IBV_FLUSH_RANGE);
	ret = ibv_wr_complete(c.qpx);
	wc = poll_one(&c);
	check(!ret && wc.status == IBV_WC_SUCCESS && wc.wr_id == 3 &&
	      wc.opcode == IBV_WC_FLUSH,
	      "WRITE then FLUSH of its range: one completion, the FLUSH's (status %d, opcode %d)",
	      wc.status, wc.opcode);
	check(!memcmp(c.dst + 256, c.src, 512) && all_zero(c.dst + 768, 256),
	      "the written range is in place, byte for byte");
	memset(img, 0, BUF_SIZE);
	memcpy(img + 8, aw, sizeof(aw));
	memcpy(img + 256, c.src, 512);
	check(!memcmp(c.dst, img, BUF_SIZE),
	      "the responder's MR holds the ATOMIC_WRITE and the WRITE, and zeroes elsewhere");

	wc = flush_one(&c, 4, c.dst_mr->rkey, c.dst, 0, IBV_FLUSH_MR);
	check(wc.status == IBV_WC_SUCCESS && wc.wr_id == 4 &&
	      wc.opcode == IBV_WC_FLUSH,
	      "FLUSH of the whole MR (status %d)", wc.status);

	wc = flush_one(&c, 5, c.nf_mr->rkey, c.nf, 64, IBV_FLUSH_RANGE);
	check(wc.status == IBV_WC_REM_ACCESS_ERR && wc.wr_id == 5,
	      "FLUSH of an MR without IBV_ACCESS_FLUSH_GLOBAL: remote access error (status %d)",
	      wc.status);
	check(!memcmp(c.dst, img, BUF_SIZE) && all_zero(c.nf, BUF_SIZE),
	      "the FLUSHes changed no byte of either MR");

out:
	ibv_destroy_qp(c.req.qp);
	ibv_destroy_qp(c.resp.qp);
	ibv_dereg_mr(c.src_mr);
	ibv_dereg_mr(c.dst_mr);
	ibv_dereg_mr(c.nf_mr);
	ibv_destroy_cq(c.req.cq);
	ibv_dealloc_pd(c.req.pd);
	ibv_close_device(c.req.ctx);
	if (c.two) {
		ibv_destroy_cq(c.resp.cq);
		ibv_dealloc_pd(c.resp.pd);
		ibv_close_device(c.resp.ctx);
	}
	printf("%d passed, %d failed\n", passed, failed);
	return failed != 0;
}
