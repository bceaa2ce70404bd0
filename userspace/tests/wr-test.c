// SPDX-License-Identifier: GPL-2.0 OR Linux-OpenIB
/*
 * The extended send API (struct ibv_qp_ex, ibv_wr_*()) against the fake
 * kernel of fake-kernel.c:
 *
 *   create_qp_ex
 *       ibv_qp_to_qp_ex() finds the QP's ibv_qp_ex only when it was asked
 *       for (so VERBS_QP_EX is where the running libibverbs looks); send
 *       operations the QP type does not have are refused; FLUSH needs a
 *       libibverbs whose ibv_qp_ex has wr_flush
 *   entries
 *       every builder and setter writes, byte for byte, the entry that
 *       post_send writes for the same request (on a ring full of a canary,
 *       nothing else changes); ATOMIC_WRITE, FLUSH and the XRC SRQ number
 *       as the ABI header describes them
 *   batches
 *       one producer store and at most one doorbell per wr_complete(); a
 *       batch with an error, or aborted, posts nothing and the next one
 *       starts in the same slot; every errno case
 *
 * These tests are built with the system's headers. When they are 44.0's,
 * struct ibv_qp_ex has no wr_flush: it is reached at the offset rdma-core
 * 45 gave it, which lies in the provider's own allocation of the QP.
 */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <endian.h>
#include <errno.h>
#include <stddef.h>
#include <stdio.h>
#include <string.h>

#include "fake-kernel.h"
#include "post-test.h"
#include "trace.h"
#include "wr-test.h"

#define ARRAY_SIZE(a)	(sizeof(a) / sizeof((a)[0]))

/* rdma-core 45's names, which 44.0's headers do not have. */
#define QP_EX_WITH_FLUSH	(1ULL << 11)
#define WR_FLUSH		14
#define FLUSH_GLOBAL		1
#define FLUSH_PERSISTENT	2
#define FLUSH_RANGE		0
#define FLUSH_MR		1

typedef void (*wr_flush_fn)(struct ibv_qp_ex *qp, uint32_t rkey,
			    uint64_t remote_addr, size_t len, uint8_t type,
			    uint8_t level);

static void call_wr_flush(struct ibv_qp_ex *qpx, uint32_t rkey, uint64_t addr,
			  size_t len, uint8_t type, uint8_t level)
{
	wr_flush_fn fn;

	memcpy(&fn, (uint8_t *)qpx + offsetof(struct ibv_qp_ex, wr_atomic_write) +
	       sizeof(void *), sizeof(fn));
	fn(qpx, rkey, addr, len, type, level);
}

/*
 * Is the running libibverbs newer than 45 (where ibv_qp_ex has wr_flush)?
 * ibv_wr_opcode_str() came later than that; the two libraries this runs
 * with are the system's 44.0 and the 56.1 the provider was built in.
 */
static bool lib_has_wr_flush(void)
{
	return dlsym(RTLD_DEFAULT, "ibv_wr_opcode_str");
}

#define ALL_RC_OPS (IBV_QP_EX_WITH_RDMA_WRITE | \
		    IBV_QP_EX_WITH_RDMA_WRITE_WITH_IMM | IBV_QP_EX_WITH_SEND | \
		    IBV_QP_EX_WITH_SEND_WITH_IMM | IBV_QP_EX_WITH_RDMA_READ | \
		    IBV_QP_EX_WITH_ATOMIC_CMP_AND_SWP | \
		    IBV_QP_EX_WITH_ATOMIC_FETCH_AND_ADD | \
		    IBV_QP_EX_WITH_LOCAL_INV | IBV_QP_EX_WITH_BIND_MW | \
		    IBV_QP_EX_WITH_SEND_WITH_INV | IBV_QP_EX_WITH_ATOMIC_WRITE)

/* A QP from create_qp_ex; @cap is updated to the kernel's limits. */
static struct ibv_qp *qp_ex_new(struct fixture *f, enum ibv_qp_type type,
				struct ibv_qp_cap *cap, uint64_t ops,
				int sig_all)
{
	struct ibv_qp_init_attr_ex attr = {
		.send_cq = f->cq, .recv_cq = f->cq, .cap = *cap,
		.qp_type = type, .sq_sig_all = sig_all, .pd = f->pd,
		.comp_mask = IBV_QP_INIT_ATTR_PD,
	};
	struct ibv_qp *qp;

	if (ops) {
		attr.comp_mask |= IBV_QP_INIT_ATTR_SEND_OPS_FLAGS;
		attr.send_ops_flags = ops;
	} else {
		/* More than a PD, so that the provider's create_qp_ex runs. */
		attr.comp_mask |= IBV_QP_INIT_ATTR_CREATE_FLAGS;
	}
	if (type == IBV_QPT_XRC_SEND) {
		attr.recv_cq = NULL;
		attr.cap.max_recv_wr = 0;
		attr.cap.max_recv_sge = 0;
	}
	qp = ibv_create_qp_ex(f->ctx, &attr);
	if (qp)
		*cap = attr.cap;
	return qp;
}

/* ------------------------------------------------------------------ */
/* create_qp_ex */

static void test_create(struct fixture *f)
{
	static const struct {
		enum ibv_qp_type type;
		uint64_t ops;
		const char *what;
	} refused[] = {
		{ IBV_QPT_RC, IBV_QP_EX_WITH_TSO, "TSO" },
		{ IBV_QPT_RC, 1ULL << 40, "an unknown operation" },
		{ IBV_QPT_UD, IBV_QP_EX_WITH_RDMA_WRITE, "RDMA_WRITE on UD" },
		{ IBV_QPT_UD, IBV_QP_EX_WITH_SEND_WITH_INV, "SEND_WITH_INV on UD" },
		{ IBV_QPT_UC, IBV_QP_EX_WITH_RDMA_READ, "RDMA_READ on UC" },
		{ IBV_QPT_UC, IBV_QP_EX_WITH_ATOMIC_WRITE, "ATOMIC_WRITE on UC" },
		{ IBV_QPT_UC, IBV_QP_EX_WITH_ATOMIC_FETCH_AND_ADD, "atomics on UC" },
	};
	struct ibv_qp_cap cap = { .max_send_wr = 2, .max_send_sge = 1,
				  .max_recv_wr = 2, .max_recv_sge = 1 };
	int aliases = live_aliases;
	struct ibv_qp_cap c;
	struct ibv_qp *qp;
	unsigned int i;

	c = cap;
	qp = qp_ex_new(f, IBV_QPT_RC, &c, 0, 0);
	check(qp && !ibv_qp_to_qp_ex(qp),
	      "create_qp_ex without send_ops_flags: no ibv_qp_ex");
	if (qp)
		ibv_destroy_qp(qp);

	c = cap;
	qp = qp_ex_new(f, IBV_QPT_RC, &c, ALL_RC_OPS, 0);
	check(qp && ibv_qp_to_qp_ex(qp) == (struct ibv_qp_ex *)qp,
	      "create_qp_ex with send_ops_flags: libibverbs finds the ibv_qp_ex");
	if (qp)
		ibv_destroy_qp(qp);

	for (i = 0; i < ARRAY_SIZE(refused); i++) {
		c = cap;
		qp = qp_ex_new(f, refused[i].type, &c, refused[i].ops, 0);
		check(!qp && errno == EOPNOTSUPP && live_aliases == aliases,
		      "create_qp_ex refuses %s: EOPNOTSUPP", refused[i].what);
	}

	c = cap;
	qp = qp_ex_new(f, IBV_QPT_RC, &c, QP_EX_WITH_FLUSH, 0);
	if (lib_has_wr_flush())
		check(qp && ibv_qp_to_qp_ex(qp),
		      "a libibverbs with wr_flush: FLUSH is offered");
	else
		check(!qp && errno == EOPNOTSUPP,
		      "libibverbs 44.0 (comp_mask where wr_flush would be): FLUSH is refused");
	if (qp)
		ibv_destroy_qp(qp);

	c = cap;
	qp = qp_ex_new(f, IBV_QPT_XRC_SEND, &c, IBV_QP_EX_WITH_SEND, 0);
	check(qp && ibv_qp_to_qp_ex(qp) && live_aliases == aliases + 1 &&
	      qps[qp->handle].rq < 0 && c.max_recv_wr == 0,
	      "an XRC send QP maps its SQ only");
	if (qp)
		ibv_destroy_qp(qp);
	check(live_aliases == aliases, "the QPs are unmapped");
}

/* ------------------------------------------------------------------ */
/* The same entries as post_send */

struct pair {
	struct ibv_qp *legacy;		/* posted to with post_send */
	struct ibv_qp *qp;		/* with ibv_wr_*() */
	struct ibv_qp_ex *qpx;
};

static bool pair_new(struct fixture *f, struct pair *p, enum ibv_qp_type type,
		     struct ibv_qp_cap *cap, uint64_t ops, int sig_all)
{
	struct ibv_qp_cap c = *cap;

	p->legacy = qp_new(f->pd, f->cq, type, cap, NULL, sig_all);
	p->qp = qp_ex_new(f, type, &c, ops, sig_all);
	p->qpx = p->qp ? ibv_qp_to_qp_ex(p->qp) : NULL;
	if (!p->legacy || !p->qpx) {
		check(false, "two QPs of type %d, one with ibv_qp_ex", type);
		return false;
	}
	qp_to(p->legacy, IBV_QPS_RTS);
	qp_to(p->qp, IBV_QPS_RTS);
	return true;
}

static void pair_free(struct pair *p)
{
	if (p->legacy)
		ibv_destroy_qp(p->legacy);
	if (p->qp)
		ibv_destroy_qp(p->qp);
}

/*
 * After post_send posted @wr to the legacy QP and @build the same request
 * with ibv_wr_*() to the other, the two entries must be identical over
 * the header and @len bytes after it, and the rest of the ex QP's ring
 * must still hold its canary.
 */
static void pair_expect(struct pair *p, struct ibv_send_wr *wr,
			void (*build)(struct ibv_qp_ex *qpx, void *arg),
			void *arg, size_t len, const char *what)
{
	struct fake_queue *lq = sq_of(p->legacy), *q = sq_of(p->qp);
	uint32_t lprod = qhdr(lq)->producer, prod = qhdr(q)->producer;
	struct ibv_send_wr *bad;
	size_t n = sizeof(struct sroce_send_wqe) + len;
	int ret, ret2;

	ring_fill(q);
	ret = ibv_post_send(p->legacy, wr, &bad);
	ibv_wr_start(p->qpx);
	build(p->qpx, arg);
	ret2 = ibv_wr_complete(p->qpx);
	check(!ret && !ret2 && qhdr(q)->producer == prod + 1 &&
	      qhdr(lq)->producer == lprod + 1 &&
	      !memcmp(qslot(q, prod), qslot(lq, lprod), n) &&
	      ring_untouched_but(q, prod, n),
	      "%s: ibv_wr_*() writes post_send's entry, byte for byte", what);
	consume_all(q);
	consume_all(lq);
}

/* One request of each kind, as post_send and as ibv_wr_*() see it. */
struct req {
	struct ibv_send_wr wr;
	struct ibv_sge sge[2];
	struct ibv_data_buf buf[2];
	struct ibv_mw *mw;
	struct ibv_ah *ah;
	int nbuf;	/* inline buffers for ibv_wr_set_inline_data_list() */
};

static void req_data(struct ibv_qp_ex *qpx, struct req *r)
{
	if (r->nbuf)
		ibv_wr_set_inline_data_list(qpx, r->nbuf, r->buf);
	else if (r->wr.num_sge == 1)
		ibv_wr_set_sge(qpx, r->sge[0].lkey, r->sge[0].addr,
			       r->sge[0].length);
	else
		ibv_wr_set_sge_list(qpx, r->wr.num_sge, r->sge);
}

/* The builder for r->wr.opcode, from the ibv_send_wr's own fields. */
static void build_req(struct ibv_qp_ex *qpx, void *arg)
{
	struct req *r = arg;
	struct ibv_send_wr *wr = &r->wr;

	qpx->wr_id = wr->wr_id;
	qpx->wr_flags = wr->send_flags;
	switch (wr->opcode) {
	case IBV_WR_SEND:
		ibv_wr_send(qpx);
		break;
	case IBV_WR_SEND_WITH_IMM:
		ibv_wr_send_imm(qpx, wr->imm_data);
		break;
	case IBV_WR_SEND_WITH_INV:
		ibv_wr_send_inv(qpx, wr->invalidate_rkey);
		break;
	case IBV_WR_RDMA_WRITE:
		ibv_wr_rdma_write(qpx, wr->wr.rdma.rkey, wr->wr.rdma.remote_addr);
		break;
	case IBV_WR_RDMA_WRITE_WITH_IMM:
		ibv_wr_rdma_write_imm(qpx, wr->wr.rdma.rkey,
				      wr->wr.rdma.remote_addr, wr->imm_data);
		break;
	case IBV_WR_RDMA_READ:
		ibv_wr_rdma_read(qpx, wr->wr.rdma.rkey, wr->wr.rdma.remote_addr);
		break;
	case IBV_WR_ATOMIC_CMP_AND_SWP:
		ibv_wr_atomic_cmp_swp(qpx, wr->wr.atomic.rkey,
				      wr->wr.atomic.remote_addr,
				      wr->wr.atomic.compare_add,
				      wr->wr.atomic.swap);
		break;
	case IBV_WR_ATOMIC_FETCH_AND_ADD:
		ibv_wr_atomic_fetch_add(qpx, wr->wr.atomic.rkey,
					wr->wr.atomic.remote_addr,
					wr->wr.atomic.compare_add);
		break;
	case IBV_WR_LOCAL_INV:
		ibv_wr_local_inv(qpx, wr->invalidate_rkey);
		return;
	case IBV_WR_BIND_MW:
		ibv_wr_bind_mw(qpx, wr->bind_mw.mw, wr->bind_mw.rkey,
			       &wr->bind_mw.bind_info);
		return;
	default:
		return;
	}
	if (r->ah)
		ibv_wr_set_ud_addr(qpx, r->ah, wr->wr.ud.remote_qpn,
				   wr->wr.ud.remote_qkey);
	req_data(qpx, r);
}

static void test_same_as_post_send(struct fixture *f)
{
	struct ibv_qp_cap cap = { .max_send_wr = 4, .max_send_sge = 2,
				  .max_inline_data = 40, .max_recv_wr = 1,
				  .max_recv_sge = 1 };
	struct ibv_mw mw2 = { .context = f->ctx, .pd = f->pd,
			      .type = IBV_MW_TYPE_2, .rkey = 0x4217 };
	static uint8_t big[64];
	struct req r = {
		.wr = { .wr_id = 0x0123456789abcdefULL, .num_sge = 2 },
		.sge = {
			{ .addr = 0x1000200030004000ULL, .length = 100, .lkey = 0x11 },
			{ .addr = 0x5000600070008000ULL, .length = 8, .lkey = 0x22 },
		},
	};
	struct pair p = {};

	r.wr.sg_list = r.sge;
	if (!pair_new(f, &p, IBV_QPT_RC, &cap, ALL_RC_OPS, 0))
		goto out;

	r.wr.opcode = IBV_WR_SEND;
	r.wr.send_flags = IBV_SEND_SIGNALED | IBV_SEND_SOLICITED | IBV_SEND_FENCE;
	pair_expect(&p, &r.wr, build_req, &r, sizeof(r.sge), "SEND, two SGEs");
	r.wr.opcode = IBV_WR_SEND_WITH_IMM;
	r.wr.imm_data = htobe32(0x12345678);
	pair_expect(&p, &r.wr, build_req, &r, sizeof(r.sge), "SEND_WITH_IMM");
	r.wr.opcode = IBV_WR_SEND_WITH_INV;
	r.wr.invalidate_rkey = 0xdeadbeef;
	pair_expect(&p, &r.wr, build_req, &r, sizeof(r.sge), "SEND_WITH_INV");
	r.wr.opcode = IBV_WR_RDMA_WRITE;
	r.wr.send_flags = 0;
	r.wr.wr.rdma.remote_addr = 0x1122334455667788ULL;
	r.wr.wr.rdma.rkey = 0x99aabbcc;
	pair_expect(&p, &r.wr, build_req, &r, sizeof(r.sge), "RDMA_WRITE");
	r.wr.opcode = IBV_WR_RDMA_WRITE_WITH_IMM;
	pair_expect(&p, &r.wr, build_req, &r, sizeof(r.sge),
		    "RDMA_WRITE_WITH_IMM");
	r.wr.opcode = IBV_WR_RDMA_READ;
	pair_expect(&p, &r.wr, build_req, &r, sizeof(r.sge), "RDMA_READ");

	r.wr.num_sge = 1;
	r.sge[0].length = 8;
	r.wr.opcode = IBV_WR_ATOMIC_CMP_AND_SWP;
	r.wr.wr.atomic.remote_addr = 0xfedcba9876543210ULL;
	r.wr.wr.atomic.compare_add = 0x0102030405060708ULL;
	r.wr.wr.atomic.swap = 0x1112131415161718ULL;
	r.wr.wr.atomic.rkey = 0x31323334;
	pair_expect(&p, &r.wr, build_req, &r, sizeof(r.sge[0]),
		    "ATOMIC_CMP_AND_SWP, one SGE");
	r.wr.opcode = IBV_WR_ATOMIC_FETCH_AND_ADD;
	r.wr.wr.atomic.swap = 0;
	pair_expect(&p, &r.wr, build_req, &r, sizeof(r.sge[0]),
		    "ATOMIC_FETCH_AND_ADD");

	r.wr.opcode = IBV_WR_LOCAL_INV;
	r.wr.num_sge = 0;
	r.wr.send_flags = IBV_SEND_SIGNALED;
	r.wr.invalidate_rkey = 0x01020304;
	pair_expect(&p, &r.wr, build_req, &r, 0, "LOCAL_INV");
	r.wr.opcode = IBV_WR_BIND_MW;
	r.wr.bind_mw.mw = &mw2;
	r.wr.bind_mw.rkey = ibv_inc_rkey(mw2.rkey);
	r.wr.bind_mw.bind_info = (struct ibv_mw_bind_info){
		.addr = 0x1000, .length = 0x2000,
		.mw_access_flags = IBV_ACCESS_REMOTE_WRITE };
	pair_expect(&p, &r.wr, build_req, &r, 0, "BIND_MW of a type 2 window");

	/* Inline: the buffers of ibv_wr_set_inline_data_list() gathered. */
	r.wr.opcode = IBV_WR_SEND;
	r.wr.send_flags = IBV_SEND_INLINE;
	r.wr.num_sge = 2;
	r.sge[0] = (struct ibv_sge){ .addr = (uintptr_t)"hello, ", .length = 7 };
	r.sge[1] = (struct ibv_sge){ .addr = (uintptr_t)"world", .length = 5 };
	r.buf[0] = (struct ibv_data_buf){ .addr = "hello, ", .length = 7 };
	r.buf[1] = (struct ibv_data_buf){ .addr = "world", .length = 5 };
	r.nbuf = 2;
	pair_expect(&p, &r.wr, build_req, &r, 12,
		    "inline SEND from two buffers");
	memset(big, 0x3c, sizeof(big));
	r.wr.opcode = IBV_WR_RDMA_WRITE_WITH_IMM;
	r.wr.num_sge = 1;
	r.sge[0] = (struct ibv_sge){ .addr = (uintptr_t)big, .length = 64 };
	r.buf[0] = (struct ibv_data_buf){ .addr = big, .length = 64 };
	r.nbuf = 1;
	pair_expect(&p, &r.wr, build_req, &r, 64,
		    "inline of max_inline_data (64)");
	r.wr.opcode = IBV_WR_SEND;
	r.wr.send_flags = 0;
	r.wr.num_sge = 0;
	r.nbuf = 0;
	pair_expect(&p, &r.wr, build_req, &r, 0, "a SEND without data");
	pair_free(&p);

	/* sq_sig_all: every entry asks for a completion. */
	cap = (struct ibv_qp_cap){ .max_send_wr = 2, .max_send_sge = 1,
				   .max_recv_wr = 1, .max_recv_sge = 1 };
	if (!pair_new(f, &p, IBV_QPT_RC, &cap, IBV_QP_EX_WITH_SEND, 1))
		goto out;
	r = (struct req){ .wr = { .wr_id = 5, .opcode = IBV_WR_SEND,
				  .num_sge = 1 },
			  .sge = { { .addr = 0x4000, .length = 3, .lkey = 4 } } };
	r.wr.sg_list = r.sge;
	pair_expect(&p, &r.wr, build_req, &r, sizeof(r.sge[0]),
		    "sq_sig_all: SIGNALED in every entry");
	pair_free(&p);

	/* UD: the AH's ah_num, QPN and Q_Key. */
	if (!pair_new(f, &p, IBV_QPT_UD, &cap, IBV_QP_EX_WITH_SEND_WITH_IMM, 0))
		goto out;
	r.wr.opcode = IBV_WR_SEND_WITH_IMM;
	r.wr.imm_data = htobe32(0xa1b2c3d4);
	r.wr.wr.ud.ah = f->ah;
	r.wr.wr.ud.remote_qpn = 0x123456;
	r.wr.wr.ud.remote_qkey = 0x11111111;
	r.ah = f->ah;
	pair_expect(&p, &r.wr, build_req, &r, sizeof(r.sge[0]),
		    "UD SEND_WITH_IMM with wr_set_ud_addr()");
	pair_free(&p);

	/* UC */
	if (!pair_new(f, &p, IBV_QPT_UC, &cap,
		      IBV_QP_EX_WITH_RDMA_WRITE_WITH_IMM, 0))
		goto out;
	r = (struct req){ .wr = { .wr_id = 78, .num_sge = 1,
				  .opcode = IBV_WR_RDMA_WRITE_WITH_IMM,
				  .imm_data = htobe32(1) },
			  .sge = { { .addr = 0xabc, .length = 20, .lkey = 3 } } };
	r.wr.sg_list = r.sge;
	r.wr.wr.rdma.remote_addr = 0x4000;
	r.wr.wr.rdma.rkey = 0x44;
	pair_expect(&p, &r.wr, build_req, &r, sizeof(r.sge[0]),
		    "UC RDMA_WRITE_WITH_IMM");
out:
	pair_free(&p);
}

/* ------------------------------------------------------------------ */
/* Entries post_send cannot make */

/* Post what @build makes on a ring of canaries: the slot must be @exp. */
static void wr_expect(struct ibv_qp *qp,
		      void (*build)(struct ibv_qp_ex *qpx, void *arg),
		      void *arg, const struct sroce_send_wqe *exp,
		      const void *payload, size_t len, const char *what)
{
	struct fake_queue *q = sq_of(qp);
	uint32_t prod = qhdr(q)->producer;
	uint8_t *slot = qslot(q, prod);
	int ret;

	ring_fill(q);
	ibv_wr_start(ibv_qp_to_qp_ex(qp));
	build(ibv_qp_to_qp_ex(qp), arg);
	ret = ibv_wr_complete(ibv_qp_to_qp_ex(qp));
	check(!ret && qhdr(q)->producer == prod + 1 &&
	      !memcmp(slot, exp, sizeof(*exp)) &&
	      !memcmp(slot + sizeof(*exp), payload, len) &&
	      ring_untouched_but(q, prod, sizeof(*exp) + len),
	      "%s: the entry, byte for byte", what);
	consume_all(q);
}

static const uint8_t aw_data[8] = { 1, 2, 3, 4, 0xf5, 0xf6, 0xf7, 0xf8 };

static void build_atomic_write(struct ibv_qp_ex *qpx, void *arg)
{
	qpx->wr_id = 0x77;
	qpx->wr_flags = IBV_SEND_SIGNALED;
	ibv_wr_atomic_write(qpx, 0x5566, 0x10008, aw_data);
}

static void build_flush(struct ibv_qp_ex *qpx, void *arg)
{
	qpx->wr_id = 0x78;
	qpx->wr_flags = IBV_SEND_SIGNALED | IBV_SEND_FENCE;
	call_wr_flush(qpx, 0x6677, 0x20000, 0x1234567890ULL, FLUSH_GLOBAL,
		      FLUSH_MR);
}

static void build_xrc_send(struct ibv_qp_ex *qpx, void *arg)
{
	struct ibv_sge *sge = arg;

	qpx->wr_id = 0x79;
	qpx->wr_flags = 0;
	ibv_wr_send(qpx);
	ibv_wr_set_xrc_srqn(qpx, 0xabcdef);
	ibv_wr_set_sge(qpx, sge->lkey, sge->addr, sge->length);
}

static void test_iba15_xrc(struct fixture *f)
{
	struct ibv_qp_cap cap = { .max_send_wr = 2, .max_send_sge = 1,
				  .max_recv_wr = 1, .max_recv_sge = 1 };
	struct ibv_sge sge = { .addr = 0x9000, .length = 33, .lkey = 0x99 };
	struct ibv_send_wr wr = { .wr_id = 0x79, .opcode = IBV_WR_SEND,
				  .sg_list = &sge, .num_sge = 1 }, *bad;
	struct sroce_send_wqe exp;
	struct fake_queue *q;
	struct ibv_qp *qp;

	qp = qp_ex_new(f, IBV_QPT_RC, &cap, IBV_QP_EX_WITH_ATOMIC_WRITE |
		       (lib_has_wr_flush() ? QP_EX_WITH_FLUSH : 0), 0);
	if (!qp) {
		check(false, "a QP for ATOMIC_WRITE and FLUSH");
		return;
	}
	qp_to(qp, IBV_QPS_RTS);
	memset(&exp, 0, sizeof(exp));
	exp.wr_id = 0x77;
	exp.opcode = SROCE_WR_ATOMIC_WRITE;
	exp.send_flags = IBV_SEND_SIGNALED;
	exp.wr.atomic_write.remote_addr = 0x10008;
	exp.wr.atomic_write.rkey = 0x5566;
	memcpy(exp.wr.atomic_write.data, aw_data, sizeof(aw_data));
	wr_expect(qp, build_atomic_write, NULL, &exp, NULL, 0,
		  "ATOMIC_WRITE: its 8 bytes in memory order");

	if (lib_has_wr_flush()) {
		memset(&exp, 0, sizeof(exp));
		exp.wr_id = 0x78;
		exp.opcode = SROCE_WR_FLUSH;
		exp.send_flags = IBV_SEND_SIGNALED | IBV_SEND_FENCE;
		exp.wr.flush.remote_addr = 0x20000;
		exp.wr.flush.length = 0x1234567890ULL;
		exp.wr.flush.rkey = 0x6677;
		exp.wr.flush.type = FLUSH_GLOBAL;
		exp.wr.flush.level = FLUSH_MR;
		wr_expect(qp, build_flush, NULL, &exp, NULL, 0,
			  "FLUSH: range, placement type and selectivity");
	}
	q = sq_of(qp);
	wr.opcode = IBV_WR_ATOMIC_WRITE;
	check(ibv_post_send(qp, &wr, &bad) == EOPNOTSUPP && bad == &wr &&
	      qhdr(q)->producer == qhdr(q)->consumer,
	      "post_send has no fields for ATOMIC_WRITE: EOPNOTSUPP");
	ibv_destroy_qp(qp);

	qp = qp_ex_new(f, IBV_QPT_XRC_SEND, &cap, IBV_QP_EX_WITH_SEND, 0);
	if (!qp) {
		check(false, "an XRC send QP");
		return;
	}
	qp_to(qp, IBV_QPS_RTS);
	wr.opcode = IBV_WR_SEND;
	exp = wqe_of(&wr);
	exp.xrc_remote_srqn = 0xabcdef;
	wr_expect(qp, build_xrc_send, &sge, &exp, &sge, sizeof(sge),
		  "XRC SEND: the remote SRQ number");
	wr.qp_type.xrc.remote_srqn = 0xabcdef;
	ring_fill(sq_of(qp));
	check(!ibv_post_send(qp, &wr, &bad) &&
	      !memcmp(qslot(sq_of(qp), qhdr(sq_of(qp))->producer - 1), &exp,
		      sizeof(exp)),
	      "XRC SEND with post_send: the same entry");
	ibv_destroy_qp(qp);
}

/* ------------------------------------------------------------------ */
/* Batches */

static struct ibv_sge one_sge = { .addr = 0x1000, .length = 8, .lkey = 1 };

static void send_one(struct ibv_qp_ex *qpx, uint64_t wr_id)
{
	qpx->wr_id = wr_id;
	qpx->wr_flags = IBV_SEND_SIGNALED;
	ibv_wr_send(qpx);
	ibv_wr_set_sge(qpx, one_sge.lkey, one_sge.addr, one_sge.length);
}

static void test_batch(struct fixture *f)
{
	struct ibv_qp_cap cap = { .max_send_wr = 4, .max_send_sge = 1,
				  .max_recv_wr = 1, .max_recv_sge = 1 };
	struct sroce_send_wqe *w;
	struct ibv_qp_ex *qpx;
	struct fake_queue *q;
	struct ibv_qp *qp;
	struct trace_sum t;
	uint32_t prod;
	bool traced;
	int ret;

	qp = qp_ex_new(f, IBV_QPT_RC, &cap, IBV_QP_EX_WITH_SEND |
		       IBV_QP_EX_WITH_RDMA_WRITE, 0);
	if (!qp) {
		check(false, "a QP for batches");
		return;
	}
	qp_to(qp, IBV_QPS_RTS);
	qpx = ibv_qp_to_qp_ex(qp);
	q = sq_of(qp);
	prod = qhdr(q)->producer;

	set_wakeup(q, true);
	traced = trace_begin(q);
	ibv_wr_start(qpx);
	send_one(qpx, 1);
	qpx->wr_id = 2;
	qpx->wr_flags = 0;
	ibv_wr_rdma_write(qpx, 0x22, 0x3000);
	ibv_wr_set_sge(qpx, 5, 0x6000, 16);
	send_one(qpx, 3);
	ret = ibv_wr_complete(qpx);
	trace_end();
	t = trace_summary();
	w = qslot(q, prod + 1);
	check(!ret && qhdr(q)->producer == prod + 3 &&
	      ((struct sroce_send_wqe *)qslot(q, prod))->wr_id == 1 &&
	      w->wr_id == 2 && w->send_flags == 0 &&
	      w->opcode == IBV_WR_RDMA_WRITE && w->sge[0].length == 16 &&
	      ((struct sroce_send_wqe *)qslot(q, prod + 2))->wr_id == 3 &&
	      qps[qp->handle].send_db == 1,
	      "three requests in a batch, each with its wr_id and flags; one doorbell");
	if (traced)
		check(t.producer_stores == 1 && t.entries_first &&
		      t.flags_after && !t.stray,
		      "traced batch: entries, one producer store, then the flags (%d accesses)",
		      ntrace);
	else
		printf("skip: access tracing needs x86-64\n");
	consume_all(q);

	ibv_wr_start(qpx);
	ret = ibv_wr_complete(qpx);
	check(!ret && qhdr(q)->producer == prod + 3 &&
	      qps[qp->handle].send_db == 1,
	      "an empty batch: nothing published, no doorbell");

	doorbell_errno = EFAULT;
	ibv_wr_start(qpx);
	send_one(qpx, 4);
	ret = ibv_wr_complete(qpx);
	check(ret == EFAULT && qhdr(q)->producer == prod + 4,
	      "a failed doorbell is returned, the request is in the ring");
	set_wakeup(q, false);
	consume_all(q);
	ibv_destroy_qp(qp);
}

/* ------------------------------------------------------------------ */
/* Errors: the whole batch is discarded */

struct bad_ctx {
	struct fixture *f;
	struct ibv_mw *mw;
};

typedef void (*bad_fn)(struct ibv_qp_ex *qpx, struct bad_ctx *c);

static void bad_flags(struct ibv_qp_ex *qpx, struct bad_ctx *c)
{
	send_one(qpx, 1);
	qpx->wr_flags = IBV_SEND_IP_CSUM;
	ibv_wr_send(qpx);
	send_one(qpx, 3);
}

static void bad_num_sge(struct ibv_qp_ex *qpx, struct bad_ctx *c)
{
	struct ibv_sge sge[5] = {};

	send_one(qpx, 1);
	ibv_wr_send(qpx);
	ibv_wr_set_sge_list(qpx, 5, sge);
}

static void bad_inline_len(struct ibv_qp_ex *qpx, struct bad_ctx *c)
{
	static uint8_t buf[65];
	struct ibv_data_buf list[2] = { { buf, 64 }, { buf, 1 } };

	ibv_wr_send(qpx);
	ibv_wr_set_inline_data_list(qpx, 2, list);
}

static void bad_inline_read(struct ibv_qp_ex *qpx, struct bad_ctx *c)
{
	ibv_wr_rdma_read(qpx, 1, 0x1000);
	ibv_wr_set_inline_data(qpx, "x", 1);
}

static void bad_inline_atomic(struct ibv_qp_ex *qpx, struct bad_ctx *c)
{
	static uint64_t v;

	ibv_wr_atomic_fetch_add(qpx, 1, 0x1000, 1);
	ibv_wr_set_inline_data(qpx, &v, sizeof(v));
}

static void bad_atomic_align(struct ibv_qp_ex *qpx, struct bad_ctx *c)
{
	ibv_wr_atomic_cmp_swp(qpx, 1, 0x1004, 1, 2);
	ibv_wr_set_sge(qpx, 1, 0x2000, 8);
}

static void bad_atomic_write_align(struct ibv_qp_ex *qpx, struct bad_ctx *c)
{
	ibv_wr_atomic_write(qpx, 1, 0x1001, aw_data);
}

static void bad_atomic_short(struct ibv_qp_ex *qpx, struct bad_ctx *c)
{
	ibv_wr_atomic_fetch_add(qpx, 1, 0x1000, 1);
	ibv_wr_set_sge(qpx, 1, 0x2000, 4);
}

static void bad_atomic_no_sge(struct ibv_qp_ex *qpx, struct bad_ctx *c)
{
	ibv_wr_atomic_fetch_add(qpx, 1, 0x1000, 1);
	send_one(qpx, 2);
}

static void bad_setter_first(struct ibv_qp_ex *qpx, struct bad_ctx *c)
{
	ibv_wr_set_sge(qpx, 1, 0x2000, 4);
	send_one(qpx, 1);
}

static void bad_ud_addr_rc(struct ibv_qp_ex *qpx, struct bad_ctx *c)
{
	send_one(qpx, 1);
	ibv_wr_set_ud_addr(qpx, c->f->ah, 1, 1);
}

static void bad_srqn_rc(struct ibv_qp_ex *qpx, struct bad_ctx *c)
{
	send_one(qpx, 1);
	ibv_wr_set_xrc_srqn(qpx, 5);
}

static void bad_sge_local_inv(struct ibv_qp_ex *qpx, struct bad_ctx *c)
{
	ibv_wr_local_inv(qpx, 0x100);
	ibv_wr_set_sge(qpx, 1, 0x2000, 4);
}

static void bad_bind_type1(struct ibv_qp_ex *qpx, struct bad_ctx *c)
{
	struct ibv_mw_bind_info info = { .addr = 0x1000, .length = 8 };

	ibv_wr_bind_mw(qpx, c->mw, 0x101, &info);
}

static void bad_bind_no_mw(struct ibv_qp_ex *qpx, struct bad_ctx *c)
{
	struct ibv_mw_bind_info info = { .addr = 0x1000, .length = 8 };

	ibv_wr_bind_mw(qpx, NULL, 0x101, &info);
}

static void bad_full(struct ibv_qp_ex *qpx, struct bad_ctx *c)
{
	int i;

	for (i = 0; i < 5; i++)
		send_one(qpx, i);
}

static void bad_read_ud(struct ibv_qp_ex *qpx, struct bad_ctx *c)
{
	ibv_wr_rdma_read(qpx, 1, 0x1000);
}

static void bad_ud_no_addr(struct ibv_qp_ex *qpx, struct bad_ctx *c)
{
	send_one(qpx, 1);
}

static void bad_ud_no_ah(struct ibv_qp_ex *qpx, struct bad_ctx *c)
{
	send_one(qpx, 1);
	ibv_wr_set_ud_addr(qpx, NULL, 1, 1);
}

static void bad_xrc_no_srqn(struct ibv_qp_ex *qpx, struct bad_ctx *c)
{
	send_one(qpx, 1);
}

static void bad_flush_type(struct ibv_qp_ex *qpx, struct bad_ctx *c)
{
	call_wr_flush(qpx, 1, 0x1000, 8, 4, FLUSH_RANGE);
}

static void bad_flush_level(struct ibv_qp_ex *qpx, struct bad_ctx *c)
{
	call_wr_flush(qpx, 1, 0x1000, 8, FLUSH_GLOBAL, 2);
}

enum { ON_RC, ON_UD, ON_XRC, ON_RC_FLUSH };

static const struct {
	bad_fn build;
	int qp;
	int err;
	const char *what;
} bad_cases[] = {
	{ bad_flags, ON_RC, EINVAL, "a send flag it lacks, after a good request" },
	{ bad_num_sge, ON_RC, EINVAL, "num_sge > max_send_sge" },
	{ bad_inline_len, ON_RC, EINVAL, "inline data > max_inline_data" },
	{ bad_inline_read, ON_RC, EINVAL, "inline RDMA_READ" },
	{ bad_inline_atomic, ON_RC, EINVAL, "inline atomic" },
	{ bad_atomic_align, ON_RC, EINVAL, "misaligned atomic" },
	{ bad_atomic_write_align, ON_RC, EINVAL, "misaligned ATOMIC_WRITE" },
	{ bad_atomic_short, ON_RC, EINVAL, "atomic into less than 8 bytes" },
	{ bad_atomic_no_sge, ON_RC, EINVAL, "atomic without an SGE" },
	{ bad_setter_first, ON_RC, EINVAL, "a setter before any builder" },
	{ bad_ud_addr_rc, ON_RC, EINVAL, "wr_set_ud_addr() on RC" },
	{ bad_srqn_rc, ON_RC, EINVAL, "wr_set_xrc_srqn() on RC" },
	{ bad_sge_local_inv, ON_RC, EINVAL, "an SGE for LOCAL_INV" },
	{ bad_bind_type1, ON_RC, EINVAL, "wr_bind_mw() of a type 1 window" },
	{ bad_bind_no_mw, ON_RC, EINVAL, "wr_bind_mw() without a window" },
	{ bad_full, ON_RC, ENOMEM, "five requests into four slots" },
	{ bad_read_ud, ON_UD, EINVAL, "RDMA_READ on UD" },
	{ bad_ud_no_addr, ON_UD, EINVAL, "UD SEND without wr_set_ud_addr()" },
	{ bad_ud_no_ah, ON_UD, EINVAL, "UD SEND with a NULL AH" },
	{ bad_xrc_no_srqn, ON_XRC, EINVAL, "XRC SEND without wr_set_xrc_srqn()" },
	{ bad_flush_type, ON_RC_FLUSH, EINVAL, "FLUSH of an unknown placement type" },
	{ bad_flush_level, ON_RC_FLUSH, EINVAL, "FLUSH of an unknown selectivity level" },
};

/*
 * Build a batch that must fail with @err: nothing published, no doorbell,
 * and (in RTS) a good batch after it starts in the same slot.
 */
static void batch_refused(struct ibv_qp *qp, bad_fn build, struct bad_ctx *c,
			  int err, const char *what)
{
	struct ibv_qp_ex *qpx = ibv_qp_to_qp_ex(qp);
	struct fake_queue *q = sq_of(qp);
	uint32_t prod = qhdr(q)->producer;
	unsigned int db = qps[qp->handle].send_db;
	struct sroce_send_wqe *w = qslot(q, prod);
	int ret, ret2;

	set_wakeup(q, true);
	ibv_wr_start(qpx);
	build(qpx, c);
	ret = ibv_wr_complete(qpx);
	check(ret == err && qhdr(q)->producer == prod &&
	      qps[qp->handle].send_db == db,
	      "%s: wr_complete() %s, nothing posted, no doorbell", what,
	      strerror(err));
	if (qp->state != IBV_QPS_RTS)
		goto out;

	ibv_wr_start(qpx);
	send_one(qpx, 0x600d);
	if (qp->qp_type == IBV_QPT_UD)
		ibv_wr_set_ud_addr(qpx, c->f->ah, 1, 1);
	if (qp->qp_type == IBV_QPT_XRC_SEND)
		ibv_wr_set_xrc_srqn(qpx, 1);
	ret2 = ibv_wr_complete(qpx);
	check(!ret2 && qhdr(q)->producer == prod + 1 && w->wr_id == 0x600d,
	      "%s: ... the next batch takes its slot", what);
out:
	set_wakeup(q, false);
	consume_all(q);
}

static void test_errors(struct fixture *f)
{
	struct ibv_qp_cap cap = { .max_send_wr = 4, .max_send_sge = 2,
				  .max_inline_data = 16, .max_recv_wr = 1,
				  .max_recv_sge = 1 };
	struct ibv_mw mw1 = { .context = f->ctx, .pd = f->pd,
			      .type = IBV_MW_TYPE_1 };
	struct bad_ctx c = { .f = f, .mw = &mw1 };
	struct ibv_qp *qp[4] = {}, *rc;
	struct ibv_qp_cap cp;
	struct ibv_qp_ex *qpx;
	struct fake_queue *q;
	unsigned int i;
	uint32_t prod;
	int ret;

	cp = cap;
	qp[ON_RC] = qp_ex_new(f, IBV_QPT_RC, &cp, ALL_RC_OPS, 0);
	cp = cap;
	qp[ON_UD] = qp_ex_new(f, IBV_QPT_UD, &cp, IBV_QP_EX_WITH_SEND, 0);
	cp = cap;
	qp[ON_XRC] = qp_ex_new(f, IBV_QPT_XRC_SEND, &cp, IBV_QP_EX_WITH_SEND, 0);
	if (lib_has_wr_flush()) {
		cp = cap;
		qp[ON_RC_FLUSH] = qp_ex_new(f, IBV_QPT_RC, &cp, QP_EX_WITH_FLUSH, 0);
	}
	rc = qp[ON_RC];
	if (!rc || !qp[ON_UD] || !qp[ON_XRC]) {
		check(false, "QPs for the error cases");
		goto out;
	}
	check(cp.max_send_sge == 4 && cp.max_inline_data == 64,
	      "the limits the checks use: 4 SGEs, 64 bytes inline");

	batch_refused(rc, bad_ud_no_addr, &c, EINVAL, "RESET");
	qp_to(rc, IBV_QPS_INIT);
	batch_refused(rc, bad_ud_no_addr, &c, EINVAL, "INIT");
	qp_to(rc, IBV_QPS_RTR);
	batch_refused(rc, bad_ud_no_addr, &c, EINVAL, "RTR");
	for (i = 0; i < ARRAY_SIZE(qp); i++)
		if (qp[i])
			qp_to(qp[i], IBV_QPS_RTS);

	for (i = 0; i < ARRAY_SIZE(bad_cases); i++)
		if (qp[bad_cases[i].qp])
			batch_refused(qp[bad_cases[i].qp], bad_cases[i].build, &c,
				      bad_cases[i].err, bad_cases[i].what);

	/* wr_abort() discards what was built. */
	qpx = ibv_qp_to_qp_ex(rc);
	q = sq_of(rc);
	prod = qhdr(q)->producer;
	ibv_wr_start(qpx);
	send_one(qpx, 1);
	send_one(qpx, 2);
	ibv_wr_abort(qpx);
	check(qhdr(q)->producer == prod, "wr_abort(): nothing posted");
	ibv_wr_start(qpx);
	send_one(qpx, 3);
	ret = ibv_wr_complete(qpx);
	check(!ret && qhdr(q)->producer == prod + 1 &&
	      ((struct sroce_send_wqe *)qslot(q, prod))->wr_id == 3,
	      "wr_abort(): the next batch takes the first slot");
	consume_all(q);

	/* Four fit after a rewind, but not after a full queue is consumed. */
	ibv_wr_start(qpx);
	bad_full(qpx, &c);
	ibv_wr_abort(qpx);
	ibv_wr_start(qpx);
	for (i = 0; i < 4; i++)
		send_one(qpx, 10 + i);
	ret = ibv_wr_complete(qpx);
	check(!ret && qhdr(q)->producer == prod + 5,
	      "after a failed full batch, the free slots are counted right");
	ibv_wr_start(qpx);
	send_one(qpx, 20);
	check(ibv_wr_complete(qpx) == ENOMEM && qhdr(q)->producer == prod + 5,
	      "... and a fifth waits for the kernel");
	consume_all(q);
out:
	for (i = 0; i < ARRAY_SIZE(qp); i++)
		if (qp[i])
			ibv_destroy_qp(qp[i]);
}

void test_wr(struct ibv_context *ctx)
{
	struct fixture f;
	int aliases = live_aliases;

	if (!fixture_init(&f, ctx)) {
		check(false, "PD, CQ and AH for the ibv_wr_*() tests");
		return;
	}
	printf("ibv_wr_*(): libibverbs %s wr_flush\n",
	       lib_has_wr_flush() ? "with" : "without");
	test_create(&f);
	test_same_as_post_send(&f);
	test_iba15_xrc(&f);
	test_batch(&f);
	test_errors(&f);
	fixture_fini(&f);
	check(live_aliases == aliases, "the ibv_wr_*() tests leave no mapping");
}
