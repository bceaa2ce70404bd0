// SPDX-License-Identifier: GPL-2.0 OR Linux-OpenIB
/*
 * The control path and CQ polling of libsroce against the fake kernel of
 * fake-kernel.c: CQs (plain, extended, the SL of a completion), QPs on SRQs, a CQ's
 * clean-up on QP destruction, SRQ resize, REREG_MR, XRC, and the
 * failures the fake injects. Posting is tested in post-test.c and
 * wr-test.c, concurrency and the benchmark in post-stress.c; main() here
 * runs them all.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <stdarg.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <infiniband/verbs.h>
#include <rdma/sroce-abi.h>

#define CHECK_EXTERN
#include "check.h"
#include "fake-kernel.h"
#include "post-stress.h"
#include "post-test.h"
#include "wr-test.h"

void check(bool ok, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vcheck(ok, fmt, ap);
	va_end(ap);
}

/* Produce @n completions with wr_id @first.. into CQ ring @h. */
static void kernel_complete(int h, uint64_t first, int n)
{
	struct fake_queue *q = &queues[h];
	uint32_t prod = qhdr(q)->producer;
	int i;

	for (i = 0; i < n; i++, prod++) {
		struct sroce_cqe *cqe = qcqe(q, prod);

		memset(cqe, 0, sizeof(*cqe));
		cqe->wr_id = first + i;
		cqe->status = IBV_WC_SUCCESS;
		cqe->opcode = IBV_WC_RECV;
		cqe->byte_len = 1000 + i;
		cqe->ex = htobe32(0xabc0 + i);
		cqe->qp_num = 0x111;
		cqe->src_qp = 0x222;
		cqe->wc_flags = IBV_WC_WITH_IMM;
		cqe->pkey_index = 3;
		cqe->sl = 4;
	}
	atomic_store_explicit((_Atomic(uint32_t) *)&qhdr(q)->producer, prod,
			      memory_order_release);
}

static int cq_handle(struct ibv_cq *cq)
{
	return cq->handle;
}

static uint32_t consumer(int h)
{
	return qhdr(&queues[h])->consumer;
}

static void test_cq(struct ibv_context *ctx)
{
	struct ibv_wc wc[16];
	struct ibv_cq *cq;
	int h, n, i;
	bool in_order;

	cq = ibv_create_cq(ctx, 5, NULL, NULL, 0);
	check(cq && live_aliases == 1, "create_cq maps the ring");
	if (!cq)
		return;
	h = cq_handle(cq);
	check(ibv_poll_cq(cq, 16, wc) == 0, "an empty CQ polls nothing");

	kernel_complete(h, 100, 3);
	n = ibv_poll_cq(cq, 2, wc);
	check(n == 2 && wc[0].wr_id == 100 && wc[1].wr_id == 101,
	      "poll_cq takes at most ne completions, oldest first");
	check(wc[1].byte_len == 1001 && wc[1].imm_data == htobe32(0xabc1) &&
	      wc[1].qp_num == 0x111 && wc[1].src_qp == 0x222 &&
	      wc[1].wc_flags == IBV_WC_WITH_IMM && wc[1].pkey_index == 3 &&
	      wc[1].sl == 4 && wc[1].opcode == IBV_WC_RECV &&
	      wc[1].status == IBV_WC_SUCCESS,
	      "every field of a completion arrives");
	check(consumer(h) == 2, "the consumer index is published");
	n = ibv_poll_cq(cq, 16, wc);
	check(n == 1 && wc[0].wr_id == 102 && consumer(h) == 3,
	      "the rest follows");

	kernel_complete(h, 200, 8);
	n = ibv_poll_cq(cq, 16, wc);
	for (i = 0, in_order = true; i < n; i++)
		in_order &= wc[i].wr_id == 200 + (uint64_t)i;
	check(n == 8 && in_order && consumer(h) == 11,
	      "a full ring wraps around in order");

	qhdr(&queues[h])->producer = consumer(h) + 9;
	check(ibv_poll_cq(cq, 16, wc) < 0 && consumer(h) == 11,
	      "a producer more than a ring ahead fails the poll");
	qhdr(&queues[h])->producer = consumer(h);

	kernel_complete(h, 300, 2);
	check(!ibv_resize_cq(cq, 20) && live_aliases == 1 &&
	      queues[h].num_entries == 32, "resize_cq swaps the mapping");
	n = ibv_poll_cq(cq, 16, wc);
	check(n == 2 && wc[0].wr_id == 300 && wc[1].wr_id == 301 &&
	      consumer(h) == 2, "completions survive a resize");

	check(!ibv_destroy_cq(cq) && live_aliases == 0,
	      "destroy_cq unmaps the ring");
}

static void test_cq_ex(struct ibv_context *ctx)
{
	struct ibv_cq_init_attr_ex attr = {
		.cqe = 4,
		.wc_flags = IBV_WC_EX_WITH_BYTE_LEN | IBV_WC_EX_WITH_QP_NUM,
	};
	struct ibv_poll_cq_attr pattr = {};
	struct ibv_cq_ex *cq;
	bool ok;
	int h;

	attr.wc_flags |= IBV_WC_EX_WITH_COMPLETION_TIMESTAMP;
	cq = ibv_create_cq_ex(ctx, &attr);
	check(!cq && errno == EOPNOTSUPP,
	      "create_cq_ex refuses completion timestamps");
	attr.wc_flags &= ~IBV_WC_EX_WITH_COMPLETION_TIMESTAMP;

	cq = ibv_create_cq_ex(ctx, &attr);
	check(cq && live_aliases == 1, "create_cq_ex maps the ring");
	if (!cq)
		return;
	h = ibv_cq_ex_to_cq(cq)->handle;
	check(ibv_start_poll(cq, &pattr) == ENOENT, "start_poll on empty");

	kernel_complete(h, 400, 2);
	ok = ibv_start_poll(cq, &pattr) == 0 && cq->wr_id == 400 &&
	     ibv_wc_read_byte_len(cq) == 1000 &&
	     ibv_wc_read_qp_num(cq) == 0x111 &&
	     ibv_wc_read_opcode(cq) == IBV_WC_RECV;
	ok &= ibv_next_poll(cq) == 0 && cq->wr_id == 401 &&
	      ibv_wc_read_byte_len(cq) == 1001;
	ok &= ibv_next_poll(cq) == ENOENT;
	ibv_end_poll(cq);
	check(ok && consumer(h) == 2, "start/next/end_poll walk the ring");
	check(!ibv_destroy_cq(ibv_cq_ex_to_cq(cq)) && live_aliases == 0,
	      "destroying a cq_ex unmaps the ring");
}

/*
 * The L3 header type of a UD receive (the CQE's network_hdr_type) comes
 * out as wc.sl, mlx5's RoCE packet type (0xa IPv4, 0x9 IPv6), through
 * poll_cq and through ibv_wc_read_sl(); other completions keep their sl.
 */
static void test_cq_sl(struct ibv_context *ctx)
{
	static const uint8_t type[] = { SROCE_NETWORK_IPV4, SROCE_NETWORK_IPV6, 0 };
	static const uint8_t sl[] = { 0xa, 0x9, 4 };
	struct ibv_cq_init_attr_ex attr = {
		.cqe = 4,
		.wc_flags = IBV_WC_EX_WITH_SL,
	};
	struct ibv_poll_cq_attr pattr = {};
	struct ibv_cq_ex *cqx;
	struct ibv_wc wc[4];
	struct ibv_cq *cq;
	bool ok = true;
	int h, i, n;

	cq = ibv_create_cq(ctx, 4, NULL, NULL, 0);
	cqx = ibv_create_cq_ex(ctx, &attr);
	check(cq && cqx, "create_cq and create_cq_ex for the sl checks");
	if (!cq || !cqx)
		goto out;
	h = cq->handle;
	kernel_complete(h, 600, 3);
	for (i = 0; i < 3; i++)
		qcqe(&queues[h], qhdr(&queues[h])->producer - 3 + i)->network_hdr_type = type[i];
	n = ibv_poll_cq(cq, 4, wc);
	for (i = 0; i < n; i++)
		ok &= wc[i].sl == sl[i];
	check(n == 3 && ok, "poll_cq: wc.sl 0x%x 0x%x %u for IPv4, IPv6, neither",
	      n > 0 ? wc[0].sl : 0, n > 1 ? wc[1].sl : 0, n > 2 ? wc[2].sl : 0);

	h = ibv_cq_ex_to_cq(cqx)->handle;
	kernel_complete(h, 700, 3);
	for (i = 0; i < 3; i++)
		qcqe(&queues[h], qhdr(&queues[h])->producer - 3 + i)->network_hdr_type = type[i];
	ok = ibv_start_poll(cqx, &pattr) == 0 && ibv_wc_read_sl(cqx) == sl[0];
	ok &= ibv_next_poll(cqx) == 0 && ibv_wc_read_sl(cqx) == sl[1];
	ok &= ibv_next_poll(cqx) == 0 && ibv_wc_read_sl(cqx) == sl[2];
	ibv_end_poll(cqx);
	check(ok, "ibv_wc_read_sl: the same");
out:
	if (cq)
		ibv_destroy_cq(cq);
	if (cqx)
		ibv_destroy_cq(ibv_cq_ex_to_cq(cqx));
}

/* Produce a completion of QP @qpn with @wr_id into CQ ring @h. */
static void kernel_complete_qp(int h, uint32_t qpn, uint64_t wr_id)
{
	struct fake_queue *q = &queues[h];
	uint32_t prod = qhdr(q)->producer;
	struct sroce_cqe *cqe = qcqe(q, prod);

	memset(cqe, 0, sizeof(*cqe));
	cqe->wr_id = wr_id;
	cqe->status = IBV_WC_WR_FLUSH_ERR;
	cqe->opcode = IBV_WC_RECV;
	cqe->qp_num = qpn;
	atomic_store_explicit((_Atomic(uint32_t) *)&qhdr(q)->producer, prod + 1,
			      memory_order_release);
}

/*
 * A QP reset or destroyed takes its completions out of its CQ; the others
 * stay, in order, and nothing past the producer index is touched.
 */
static void test_cq_clean(struct ibv_context *ctx)
{
	static const int owner[] = { 0, 1, 0, 1, 1, 0, 0 };
	struct ibv_qp_cap cap = { .max_send_wr = 2, .max_send_sge = 1,
				  .max_recv_wr = 2, .max_recv_sge = 1 };
	struct ibv_pd *pd = ibv_alloc_pd(ctx);
	struct ibv_cq *cq = ibv_create_cq(ctx, 16, NULL, NULL, 0);
	struct ibv_qp *qp[2];
	struct ibv_wc wc[16];
	struct fake_queue *q;
	bool untouched = true;
	unsigned int i;
	int h, n;

	qp[0] = qp_new(pd, cq, IBV_QPT_RC, &cap, NULL, 0);
	qp[1] = qp_new(pd, cq, IBV_QPT_RC, &cap, NULL, 0);
	if (!cq || !qp[0] || !qp[1]) {
		check(false, "a CQ and two QPs to clean it of");
		return;
	}
	h = cq->handle;
	q = &queues[h];
	for (i = 0; i < 16; i++)
		memset(qcqe(q, i), 0xa5, sizeof(struct sroce_cqe));
	for (i = 0; i < 7; i++)
		kernel_complete_qp(h, qp[owner[i]]->qp_num, i);
	n = ibv_poll_cq(cq, 1, wc);
	qp_to(qp[0], IBV_QPS_RTS);
	check(n == 1 && wc[0].wr_id == 0 && consumer(h) == 1,
	      "clean: a completion polled; no other state cleans the CQ");

	qp_to(qp[0], IBV_QPS_RESET);
	for (i = 7; i < 16; i++)
		untouched &= ((uint8_t *)qcqe(q, i))[0] == 0xa5;
	check(consumer(h) == 4 && untouched,
	      "reset: the consumer skips the QP's three completions, the slots past the producer are untouched");
	n = ibv_poll_cq(cq, 16, wc);
	check(n == 3 && wc[0].wr_id == 1 && wc[1].wr_id == 3 &&
	      wc[2].wr_id == 4 && wc[2].qp_num == qp[1]->qp_num,
	      "reset: the other QP's completions remain, in order");

	kernel_complete_qp(h, qp[1]->qp_num, 7);
	kernel_complete_qp(h, qp[0]->qp_num, 8);
	kernel_complete_qp(h, qp[1]->qp_num, 9);
	ibv_destroy_qp(qp[1]);
	n = ibv_poll_cq(cq, 16, wc);
	check(n == 1 && wc[0].wr_id == 8, "destroy: the QP's completions go too");
	ibv_destroy_qp(qp[0]);
	ibv_destroy_cq(cq);
	ibv_dealloc_pd(pd);
}

static void test_failures(struct ibv_context *ctx)
{
	struct ibv_qp_init_attr qattr = {
		.qp_type = IBV_QPT_RC,
		.cap = { .max_send_wr = 4, .max_recv_wr = 4,
			 .max_send_sge = 1, .max_recv_sge = 1 },
	};
	unsigned int cqs = destroyed_cqs, qps = destroyed_qps;
	struct ibv_pd *pd = ibv_alloc_pd(ctx);
	struct ibv_cq *cq;

	bad_next_cq = true;
	cq = ibv_create_cq(ctx, 4, NULL, NULL, 0);
	check(!cq && errno == EINVAL && destroyed_cqs == cqs + 1 &&
	      live_aliases == 0,
	      "a ring that is not a power of two is refused and destroyed");

	cq = ibv_create_cq(ctx, 4, NULL, NULL, 0);
	qattr.send_cq = qattr.recv_cq = cq;
	qp_without_rq = true;
	check(!ibv_create_qp(pd, &qattr) && errno == EINVAL &&
	      destroyed_qps == qps + 1 && live_aliases == 1,
	      "a QP without SRQ and without RQ is refused and unmapped");
	ibv_destroy_cq(cq);
	ibv_dealloc_pd(pd);
}

static void test_qp_srq(struct ibv_context *ctx)
{
	struct ibv_srq_init_attr sattr = { .attr = { .max_wr = 8, .max_sge = 1 } };
	struct ibv_qp_init_attr qattr = {
		.qp_type = IBV_QPT_RC,
		.cap = { .max_send_wr = 4, .max_recv_wr = 4,
			 .max_send_sge = 1, .max_recv_sge = 1 },
	};
	struct ibv_send_wr swr = { .opcode = IBV_WR_SEND }, *bad_swr = NULL;
	struct ibv_recv_wr rwr = {}, *bad_rwr = NULL;
	struct ibv_pd *pd = ibv_alloc_pd(ctx);
	struct ibv_cq *cq = ibv_create_cq(ctx, 8, NULL, NULL, 0);
	struct ibv_srq *srq;
	struct ibv_qp *qp;

	qattr.send_cq = qattr.recv_cq = cq;
	qp = ibv_create_qp(pd, &qattr);
	check(qp && live_aliases == 3, "create_qp maps SQ and RQ");
	check(qp && ibv_post_send(qp, &swr, &bad_swr) == EINVAL &&
	      bad_swr == &swr, "post_send in RESET fails");
	check(qp && ibv_post_recv(qp, &rwr, &bad_rwr) == EINVAL &&
	      bad_rwr == &rwr, "post_recv in RESET fails");
	check(qp && !ibv_destroy_qp(qp) && live_aliases == 1,
	      "destroy_qp unmaps both");

	srq = ibv_create_srq(pd, &sattr);
	check(srq && live_aliases == 2, "create_srq maps its ring");
	qattr.srq = srq;
	qp = ibv_create_qp(pd, &qattr);
	check(qp && live_aliases == 3, "a QP on an SRQ maps only its SQ");
	check(qp && !ibv_destroy_qp(qp) && !ibv_destroy_srq(srq) &&
	      live_aliases == 1, "destroying them unmaps everything");
	ibv_destroy_cq(cq);
	ibv_dealloc_pd(pd);
}

/* Post @n receives with wr_id @first.. to @srq; return what post said. */
static int srq_post(struct ibv_srq *srq, uint64_t first, int n)
{
	struct ibv_sge sge = { .addr = 0x1000, .length = 64, .lkey = 9 };
	struct ibv_recv_wr wr[32], *bad = NULL;
	int i;

	for (i = 0; i < n; i++)
		wr[i] = (struct ibv_recv_wr){ .wr_id = first + i, .sg_list = &sge,
					      .num_sge = 1,
					      .next = i + 1 < n ? &wr[i + 1] : NULL };
	return ibv_post_srq_recv(srq, wr, &bad);
}

/* Slots @from.. of ring @h hold receive entries with wr_id @first.. */
static bool srq_holds(int h, uint32_t from, uint64_t first, int n)
{
	struct sroce_recv_wqe *w;
	int i;

	for (i = 0; i < n; i++) {
		w = qslot(&queues[h], from + i);
		if (w->wr_id != first + i || w->num_sge != 1 ||
		    w->sge[0].lkey != 9)
			return false;
	}
	return true;
}

/*
 * IBV_SRQ_MAX_WR: the provider passes the address of a queue_info in the
 * driver data, maps the new ring, unmaps the old and goes on posting at
 * the new producer index, with the new ring's size as its limit.
 */
static void test_srq_resize(struct ibv_context *ctx)
{
	struct ibv_srq_init_attr sattr = { .attr = { .max_wr = 4, .max_sge = 1 } };
	struct ibv_srq_attr attr = { .max_wr = 12 };
	struct ibv_pd *pd = ibv_alloc_pd(ctx);
	struct ibv_srq *srq;
	unsigned int count;
	void *old_alias;
	int h, aliases;

	srq = ibv_create_srq(pd, &sattr);
	if (!srq) {
		check(false, "an SRQ to resize");
		return;
	}
	h = srq->handle;
	aliases = live_aliases;
	check(!srq_post(srq, 10, 4) && srq_post(srq, 14, 1) == ENOMEM,
	      "resize: four WQEs fill the SRQ of four");
	qhdr(&queues[h])->consumer = 1;		/* the kernel took one */

	old_alias = queue_alias(h);
	count = modify_srq_count;
	check(!ibv_modify_srq(srq, &attr, IBV_SRQ_MAX_WR) &&
	      modify_srq_count == count + 1 && queues[h].num_entries == 16 &&
	      live_aliases == aliases && queue_alias(h) != old_alias,
	      "resize: the new ring is mapped, the old one unmapped");
	check(qhdr(&queues[h])->producer == 3 && srq_holds(h, 0, 11, 3),
	      "resize: the three WQEs not taken moved to slots 0..2");
	check(!srq_post(srq, 20, 13) && qhdr(&queues[h])->producer == 16 &&
	      srq_holds(h, 3, 20, 13) && srq_post(srq, 40, 1) == ENOMEM,
	      "resize: posting goes on at index 3, up to the new size of 16");
	check(!ibv_query_srq(srq, &attr) && attr.max_wr == 16,
	      "resize: query_srq reports the new size");

	modify_srq_errno = ENOMEM;
	attr.max_wr = 64;
	check(ibv_modify_srq(srq, &attr, IBV_SRQ_MAX_WR) == ENOMEM &&
	      queues[h].num_entries == 16 && live_aliases == aliases,
	      "resize: a refused resize leaves the ring in place");
	qhdr(&queues[h])->consumer = 16;
	check(!srq_post(srq, 50, 2) && srq_holds(h, 16, 50, 2),
	      "resize: ... and posting goes on in it");

	/* Shrink: the free slots counted in the old ring do not carry over. */
	qhdr(&queues[h])->consumer = 18;
	attr.max_wr = 4;
	check(!ibv_modify_srq(srq, &attr, IBV_SRQ_MAX_WR) &&
	      queues[h].num_entries == 4 && qhdr(&queues[h])->producer == 0 &&
	      srq_post(srq, 60, 5) == ENOMEM && qhdr(&queues[h])->producer == 4 &&
	      srq_holds(h, 0, 60, 4),
	      "resize to fewer slots: four fit, the fifth is ENOMEM");

	attr.srq_limit = 5;
	count = modify_srq_count;
	check(!ibv_modify_srq(srq, &attr, IBV_SRQ_LIMIT) &&
	      queues[h].num_entries == 4 && srq_limit[h] == 5 &&
	      queue_alias(h) && modify_srq_count == count + 1,
	      "modify_srq(LIMIT) alone leaves the ring alone");
	check(!ibv_destroy_srq(srq) && live_aliases == aliases - 1,
	      "destroying a resized SRQ unmaps its ring");
	ibv_dealloc_pd(pd);
}

/*
 * rereg_mr: the command carries the flags, the new range (as its own
 * address) and PD, and the keys of the response replace the MR's.
 */
static void test_rereg_mr(struct ibv_context *ctx)
{
	static uint8_t buf[256], buf2[128];
	struct ibv_pd *pd = ibv_alloc_pd(ctx), *pd2 = ibv_alloc_pd(ctx);
	struct ibv_mr *mr;
	int ret;

	mr = ibv_reg_mr(pd, buf, sizeof(buf), IBV_ACCESS_LOCAL_WRITE);
	if (!mr) {
		check(false, "an MR to reregister");
		return;
	}
	rereg_keys = 0x5678;
	ret = ibv_rereg_mr(mr, IBV_REREG_MR_CHANGE_TRANSLATION |
			   IBV_REREG_MR_CHANGE_ACCESS, NULL, buf2, sizeof(buf2),
			   IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_REMOTE_READ);
	check(!ret && last_rereg.mr_handle == 3 &&
	      last_rereg.flags == (IBV_REREG_MR_CHANGE_TRANSLATION |
				   IBV_REREG_MR_CHANGE_ACCESS) &&
	      last_rereg.start == (uintptr_t)buf2 &&
	      last_rereg.hca_va == (uintptr_t)buf2 &&
	      last_rereg.length == sizeof(buf2) && last_rereg.pd_handle == 0 &&
	      last_rereg.access_flags == (IBV_ACCESS_LOCAL_WRITE |
					  IBV_ACCESS_REMOTE_READ),
	      "rereg_mr: translation and access reach the kernel");
	check(mr->lkey == 0x5678 && mr->rkey == 0x5678 && mr->addr == buf2 &&
	      mr->length == sizeof(buf2), "rereg_mr: the MR takes the new keys");

	rereg_keys = 0x9abc;
	ret = ibv_rereg_mr(mr, IBV_REREG_MR_CHANGE_PD, pd2, NULL, 0, 0);
	check(!ret && last_rereg.flags == IBV_REREG_MR_CHANGE_PD &&
	      last_rereg.pd_handle == pd2->handle &&
	      pd2->handle != pd->handle && mr->pd == pd2 &&
	      mr->lkey == 0x9abc, "rereg_mr: a new PD reaches the kernel");

	rereg_errno = EBUSY;
	errno = 0;
	ret = ibv_rereg_mr(mr, IBV_REREG_MR_CHANGE_ACCESS, NULL, NULL, 0,
			   IBV_ACCESS_LOCAL_WRITE);
	check(ret == IBV_REREG_MR_ERR_CMD && errno == EBUSY &&
	      mr->lkey == 0x9abc && mr->pd == pd2,
	      "rereg_mr: a refusal is IBV_REREG_MR_ERR_CMD with the kernel's errno");
	check(!ibv_dereg_mr(mr), "rereg_mr: the MR deregisters");
	ibv_dealloc_pd(pd2);
	ibv_dealloc_pd(pd);
}

/*
 * XRC: a domain, an XRC SRQ (its ring, and its number for the senders),
 * and an XRC receive QP, which has no ring of its own.
 */
static void test_xrc(struct ibv_context *ctx)
{
	struct ibv_xrcd_init_attr xattr = {
		.comp_mask = IBV_XRCD_INIT_ATTR_FD | IBV_XRCD_INIT_ATTR_OFLAGS,
		.fd = -1, .oflags = O_CREAT,
	};
	struct ibv_pd *pd = ibv_alloc_pd(ctx);
	struct ibv_cq *cq = ibv_create_cq(ctx, 8, NULL, NULL, 0);
	struct ibv_srq_init_attr_ex sattr = {
		.attr = { .max_wr = 4, .max_sge = 1 },
		.comp_mask = IBV_SRQ_INIT_ATTR_TYPE | IBV_SRQ_INIT_ATTR_PD |
			     IBV_SRQ_INIT_ATTR_XRCD | IBV_SRQ_INIT_ATTR_CQ,
		.srq_type = IBV_SRQT_XRC, .pd = pd, .cq = cq,
	};
	struct ibv_qp_init_attr_ex qattr = {
		.qp_type = IBV_QPT_XRC_RECV, .comp_mask = IBV_QP_INIT_ATTR_XRCD,
	};
	struct ibv_send_wr swr = { .opcode = IBV_WR_SEND }, *bad_swr;
	struct ibv_recv_wr rwr = {}, *bad_rwr;
	int aliases = live_aliases;
	struct ibv_xrcd *xrcd;
	struct ibv_srq *srq;
	struct ibv_qp *qp;
	uint32_t num = 0;

	xrcd = ibv_open_xrcd(ctx, &xattr);
	check(xrcd, "open_xrcd");
	if (!xrcd)
		return;
	sattr.xrcd = xrcd;
	srq = ibv_create_srq_ex(ctx, &sattr);
	check(srq && live_aliases == aliases + 1 &&
	      xsrq_last.srq_type == IBV_SRQT_XRC &&
	      xsrq_last.xrcd_handle == 0x40 + nr_xrcds - 1 &&
	      xsrq_last.cq_handle == cq->handle && sattr.attr.max_wr == 4,
	      "create_srq_ex: an XRC SRQ in the XRCD, its ring mapped");
	check(srq && !ibv_get_srq_num(srq, &num) &&
	      num == 0x100 + srq->handle, "get_srq_num: the kernel's number");
	check(srq && !srq_post(srq, 1, 2) &&
	      qhdr(&queues[srq->handle])->producer == 2 &&
	      srq_holds(srq->handle, 0, 1, 2), "an XRC SRQ takes receives");

	qattr.xrcd = xrcd;
	qp = ibv_create_qp_ex(ctx, &qattr);
	check(qp && live_aliases == aliases + 1 && !ibv_qp_to_qp_ex(qp),
	      "an XRC receive QP has no ring to map");
	if (qp) {
		qp_to(qp, IBV_QPS_RTS);
		check(ibv_post_send(qp, &swr, &bad_swr) == EINVAL &&
		      ibv_post_recv(qp, &rwr, &bad_rwr) == EINVAL,
		      "an XRC receive QP refuses posts: EINVAL");
		check(!ibv_destroy_qp(qp), "destroy the XRC receive QP");
	}
	qattr.comp_mask |= IBV_QP_INIT_ATTR_SEND_OPS_FLAGS;
	qattr.send_ops_flags = IBV_QP_EX_WITH_SEND;
	check(!ibv_create_qp_ex(ctx, &qattr) && errno == EOPNOTSUPP,
	      "an XRC receive QP has no send operations: EOPNOTSUPP");

	sattr.srq_type = IBV_SRQT_TM;
	check(!ibv_create_srq_ex(ctx, &sattr) && errno == EOPNOTSUPP,
	      "create_srq_ex refuses tag matching: EOPNOTSUPP");
	check(srq && !ibv_destroy_srq(srq) && live_aliases == aliases,
	      "destroying the XRC SRQ unmaps its ring");
	check(!ibv_close_xrcd(xrcd), "close_xrcd");
	ibv_destroy_cq(cq);
	ibv_dealloc_pd(pd);
}

int main(int argc, char **argv)
{
	bool bench = argc > 1 && !strcmp(argv[1], "--bench");
	bool quick = argc > 1 && !strcmp(argv[1], "--quick");
	struct ibv_device **list;
	struct ibv_context *ctx;
	int n;

	fake_kernel_init();

	list = ibv_get_device_list(&n);
	check(list && n == 1 && !strcmp(ibv_get_device_name(list[0]), "sroce0"),
	      "libibverbs finds sroce0");
	if (!list || n != 1)
		return 1;
	ctx = ibv_open_device(list[0]);
	check(ctx, "open_device gets a context");
	if (!ctx)
		return 1;

	if (bench) {
		bench_post(ctx);
	} else {
		test_cq(ctx);
		test_cq_ex(ctx);
		test_cq_sl(ctx);
		test_qp_srq(ctx);
		test_cq_clean(ctx);
		test_srq_resize(ctx);
		test_rereg_mr(ctx);
		test_xrc(ctx);
		test_failures(ctx);
		test_post(ctx);
		test_wr(ctx);
		if (!quick)
			test_post_stress(ctx);
	}

	ibv_close_device(ctx);
	ibv_free_device_list(list);
	printf("%d passed, %d failed\n", passed, failed);
	return failed != 0;
}
