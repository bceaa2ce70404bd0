// SPDX-License-Identifier: GPL-2.0 OR Linux-OpenIB
/*
 * The provider's data path against the fake kernel of fake-kernel.c:
 *
 *   post_send, post_recv, post_srq_recv
 *       the ring entry byte for byte, for every opcode, inline data, UD
 *       and immediate data in network order; bytes the entry does not
 *       announce stay untouched; wrap-around of the slots and of the 32-bit
 *       indices; a full queue; every errno case with *bad_wr
 *   doorbell
 *       rung (a uverbs POST_* command without work requests) exactly when
 *       the ring's NEED_WAKEUP flag is set; a list of work requests is
 *       published with a single store of the producer index, after all the
 *       entries, and the flag is read after that store (on x86-64 every
 *       access the provider makes to the ring is traced: the ring is
 *       mapped PROT_NONE and each fault is single-stepped)
 *   notification
 *       req_notify_cq reaches the kernel; a completion channel delivers
 *
 * The helpers at the top serve post-stress.c too (post-test.h).
 */
#define _GNU_SOURCE
#include <endian.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "fake-kernel.h"
#include "post-test.h"
#include "trace.h"

#define CANARY		0xa5
#define ARRAY_SIZE(a)	(sizeof(a) / sizeof((a)[0]))

/* ------------------------------------------------------------------ */
/* Helpers */

struct ibv_qp *qp_new(struct ibv_pd *pd, struct ibv_cq *cq,
		      enum ibv_qp_type type, struct ibv_qp_cap *cap,
		      struct ibv_srq *srq, int sig_all)
{
	struct ibv_qp_init_attr attr = {
		.send_cq = cq, .recv_cq = cq, .srq = srq, .cap = *cap,
		.qp_type = type, .sq_sig_all = sig_all,
	};
	struct ibv_qp *qp = ibv_create_qp(pd, &attr);

	if (qp)
		*cap = attr.cap;
	return qp;
}

int qp_to(struct ibv_qp *qp, enum ibv_qp_state state)
{
	struct ibv_qp_attr attr = { .qp_state = state };

	return ibv_modify_qp(qp, &attr, IBV_QP_STATE);
}

struct fake_queue *sq_of(struct ibv_qp *qp)
{
	return &queues[qps[qp->handle].sq];
}

struct fake_queue *rq_of(struct ibv_qp *qp)
{
	return &queues[qps[qp->handle].rq];
}

void set_wakeup(struct fake_queue *q, bool on)
{
	qhdr(q)->flags = on ? SROCE_QUEUE_NEED_WAKEUP : 0;
}

/* The kernel takes everything posted. */
void consume_all(struct fake_queue *q)
{
	store_release(&qhdr(q)->consumer, load_acquire(&qhdr(q)->producer));
}

void ring_fill(struct fake_queue *q)
{
	memset(q->kaddr + SROCE_QUEUE_DATA_OFFSET, CANARY,
	       (size_t)q->num_entries * q->entry_size);
}

/* Every byte of the ring but the first @used of slot @i is still CANARY. */
bool ring_untouched_but(struct fake_queue *q, uint32_t i, size_t used)
{
	uint8_t *data = q->kaddr + SROCE_QUEUE_DATA_OFFSET;
	uint8_t *slot = qslot(q, i);
	size_t n = (size_t)q->num_entries * q->entry_size, k;

	for (k = 0; k < n; k++)
		if ((data + k < slot || data + k >= slot + used) &&
		    data[k] != CANARY)
			return false;
	return true;
}

/* ------------------------------------------------------------------ */
/* Send queue entries, byte for byte */

/*
 * Post @wr alone on a ring full of CANARY; the slot must hold @exp, then
 * @payload (the scatter list or the inline data), and nothing else of the
 * ring may have changed.
 */
static void send_expect(struct ibv_qp *qp, struct ibv_send_wr *wr,
			const struct sroce_send_wqe *exp, const void *payload,
			size_t len, const char *what)
{
	struct fake_queue *q = sq_of(qp);
	uint32_t prod = qhdr(q)->producer;
	struct ibv_send_wr *bad = NULL;
	uint8_t *slot = qslot(q, prod);
	int ret;

	ring_fill(q);
	ret = ibv_post_send(qp, wr, &bad);
	check(!ret && qhdr(q)->producer == prod + 1 &&
	      !memcmp(slot, exp, sizeof(*exp)) &&
	      !memcmp(slot + sizeof(*exp), payload, len) &&
	      ring_untouched_but(q, prod, sizeof(*exp) + len),
	      "%s: the entry, byte for byte", what);
	consume_all(q);
}

struct sroce_send_wqe wqe_of(const struct ibv_send_wr *wr)
{
	struct sroce_send_wqe w;

	memset(&w, 0, sizeof(w));
	w.wr_id = wr->wr_id;
	w.opcode = wr->opcode;
	w.send_flags = wr->send_flags;
	w.num_sge = wr->num_sge;
	return w;
}

static void test_send_rc(struct fixture *f)
{
	struct ibv_qp_cap cap = { .max_send_wr = 4, .max_send_sge = 2,
				  .max_inline_data = 40, .max_recv_wr = 4,
				  .max_recv_sge = 3 };
	struct ibv_sge sge[2] = {
		{ .addr = 0x1000200030004000ULL, .length = 100, .lkey = 0x11 },
		{ .addr = 0x5000600070008000ULL, .length = 8, .lkey = 0x22 },
	};
	uint8_t big[64];
	struct ibv_sge isge[2] = {
		{ .addr = (uintptr_t)"hello, ", .length = 7 },
		{ .addr = (uintptr_t)"world", .length = 5 },
	};
	struct ibv_send_wr wr = { .wr_id = 0x0123456789abcdefULL,
				  .sg_list = sge, .num_sge = 2 };
	struct ibv_mw mw2 = { .context = f->ctx, .pd = f->pd,
			      .type = IBV_MW_TYPE_2 };
	struct sroce_send_wqe exp;
	struct ibv_qp *qp;
	uint8_t *ex;

	qp = qp_new(f->pd, f->cq, IBV_QPT_RC, &cap, NULL, 0);
	check(qp && cap.max_send_wr == 4 && cap.max_send_sge == 4 &&
	      cap.max_inline_data == 64 && cap.max_recv_wr == 4 &&
	      cap.max_recv_sge == 3,
	      "create_qp reports the limits the kernel returned");
	if (!qp)
		return;
	check(sq_of(qp)->entry_size == 128 && rq_of(qp)->entry_size == 64,
	      "... which the kernel derived from its entry sizes");
	qp_to(qp, IBV_QPS_RTS);

	wr.opcode = IBV_WR_SEND;
	wr.send_flags = IBV_SEND_SIGNALED | IBV_SEND_SOLICITED | IBV_SEND_FENCE;
	exp = wqe_of(&wr);
	send_expect(qp, &wr, &exp, sge, sizeof(sge), "SEND, two SGEs");

	wr.opcode = IBV_WR_SEND_WITH_IMM;
	wr.send_flags = IBV_SEND_SIGNALED;
	wr.imm_data = htobe32(0x12345678);
	exp = wqe_of(&wr);
	exp.ex = wr.imm_data;
	send_expect(qp, &wr, &exp, sge, sizeof(sge), "SEND_WITH_IMM");
	ex = (uint8_t *)qslot(sq_of(qp), qhdr(sq_of(qp))->producer - 1) +
	     offsetof(struct sroce_send_wqe, ex);
	check(ex[0] == 0x12 && ex[1] == 0x34 && ex[2] == 0x56 && ex[3] == 0x78,
	      "immediate data stays in network order");

	wr.opcode = IBV_WR_SEND_WITH_INV;
	wr.invalidate_rkey = 0xdeadbeef;
	exp = wqe_of(&wr);
	exp.ex = 0xdeadbeef;
	send_expect(qp, &wr, &exp, sge, sizeof(sge), "SEND_WITH_INV");

	wr.opcode = IBV_WR_LOCAL_INV;
	wr.invalidate_rkey = 0x01020304;
	exp = wqe_of(&wr);
	exp.ex = 0x01020304;
	send_expect(qp, &wr, &exp, sge, sizeof(sge), "LOCAL_INV");

	/* The kernel finds the window by its current key, in mw_rkey. */
	mw2.rkey = 0x4217;
	wr.opcode = IBV_WR_BIND_MW;
	wr.bind_mw.mw = &mw2;
	wr.bind_mw.rkey = ibv_inc_rkey(mw2.rkey);
	wr.bind_mw.bind_info = (struct ibv_mw_bind_info){
		.addr = 0x1000, .length = 0x2000,
		.mw_access_flags = IBV_ACCESS_REMOTE_WRITE };
	exp = wqe_of(&wr);
	exp.ex = 0x4218;
	exp.wr.bind_mw.addr = 0x1000;
	exp.wr.bind_mw.length = 0x2000;
	exp.wr.bind_mw.mw_rkey = 0x4217;
	exp.wr.bind_mw.access = IBV_ACCESS_REMOTE_WRITE;
	send_expect(qp, &wr, &exp, sge, sizeof(sge), "BIND_MW of a type 2 window");

	wr.opcode = IBV_WR_RDMA_WRITE;
	wr.send_flags = 0;
	wr.wr.rdma.remote_addr = 0x1122334455667788ULL;
	wr.wr.rdma.rkey = 0x99aabbcc;
	exp = wqe_of(&wr);
	exp.wr.rdma.remote_addr = 0x1122334455667788ULL;
	exp.wr.rdma.rkey = 0x99aabbcc;
	send_expect(qp, &wr, &exp, sge, sizeof(sge), "RDMA_WRITE");

	wr.opcode = IBV_WR_RDMA_WRITE_WITH_IMM;
	wr.imm_data = htobe32(0xcafe);
	exp.opcode = wr.opcode;
	exp.ex = wr.imm_data;
	send_expect(qp, &wr, &exp, sge, sizeof(sge), "RDMA_WRITE_WITH_IMM");

	wr.opcode = IBV_WR_RDMA_READ;
	exp.opcode = wr.opcode;
	exp.ex = 0;
	send_expect(qp, &wr, &exp, sge, sizeof(sge), "RDMA_READ");

	wr.opcode = IBV_WR_ATOMIC_CMP_AND_SWP;
	wr.num_sge = 1;
	sge[0].length = 8;
	wr.wr.atomic.remote_addr = 0xfedcba9876543210ULL;
	wr.wr.atomic.compare_add = 0x0102030405060708ULL;
	wr.wr.atomic.swap = 0x1112131415161718ULL;
	wr.wr.atomic.rkey = 0x31323334;
	exp = wqe_of(&wr);
	exp.wr.atomic.remote_addr = wr.wr.atomic.remote_addr;
	exp.wr.atomic.compare_add = wr.wr.atomic.compare_add;
	exp.wr.atomic.swap = wr.wr.atomic.swap;
	exp.wr.atomic.rkey = wr.wr.atomic.rkey;
	send_expect(qp, &wr, &exp, sge, sizeof(sge[0]), "ATOMIC_CMP_AND_SWP");

	wr.opcode = IBV_WR_ATOMIC_FETCH_AND_ADD;
	wr.wr.atomic.swap = 0;
	exp.opcode = wr.opcode;
	exp.wr.atomic.swap = 0;
	send_expect(qp, &wr, &exp, sge, sizeof(sge[0]), "ATOMIC_FETCH_AND_ADD");

	wr.opcode = IBV_WR_SEND;
	wr.send_flags = IBV_SEND_INLINE;
	wr.sg_list = isge;
	wr.num_sge = 2;
	exp = wqe_of(&wr);
	exp.num_sge = 0;
	exp.inline_len = 12;
	send_expect(qp, &wr, &exp, "hello, world", 12,
		    "inline SEND gathers its SGEs, num_sge 0");

	memset(big, 0x3c, sizeof(big));
	isge[0] = (struct ibv_sge){ .addr = (uintptr_t)big, .length = 64 };
	wr.opcode = IBV_WR_RDMA_WRITE_WITH_IMM;
	wr.num_sge = 1;
	wr.imm_data = htobe32(7);
	exp = wqe_of(&wr);
	exp.num_sge = 0;
	exp.inline_len = 64;
	exp.ex = wr.imm_data;
	exp.wr.rdma.remote_addr = wr.wr.rdma.remote_addr;
	exp.wr.rdma.rkey = wr.wr.rdma.rkey;
	send_expect(qp, &wr, &exp, big, 64,
		    "inline of max_inline_data fills the entry to its end");

	wr.num_sge = 0;
	wr.opcode = IBV_WR_SEND;
	exp = wqe_of(&wr);
	send_expect(qp, &wr, &exp, "", 0, "inline of nothing");

	ibv_destroy_qp(qp);

	/* sq_sig_all: every entry asks for a completion. */
	cap = (struct ibv_qp_cap){ .max_send_wr = 2, .max_send_sge = 1,
				   .max_recv_wr = 1, .max_recv_sge = 1 };
	qp = qp_new(f->pd, f->cq, IBV_QPT_RC, &cap, NULL, 1);
	if (!qp)
		return;
	qp_to(qp, IBV_QPS_RTS);
	wr = (struct ibv_send_wr){ .wr_id = 5, .sg_list = sge, .num_sge = 1,
				   .opcode = IBV_WR_SEND };
	exp = wqe_of(&wr);
	exp.send_flags = IBV_SEND_SIGNALED;
	send_expect(qp, &wr, &exp, sge, sizeof(sge[0]),
		    "sq_sig_all sets SIGNALED in every entry");
	ibv_destroy_qp(qp);
}

static void test_send_ud_uc(struct fixture *f)
{
	struct ibv_qp_cap cap = { .max_send_wr = 2, .max_send_sge = 1,
				  .max_recv_wr = 2, .max_recv_sge = 1 };
	struct ibv_sge sge = { .addr = 0xabc, .length = 20, .lkey = 3 };
	struct ibv_send_wr wr = { .wr_id = 77, .sg_list = &sge, .num_sge = 1,
				  .opcode = IBV_WR_SEND_WITH_IMM,
				  .imm_data = htobe32(0xa1b2c3d4) };
	struct sroce_send_wqe exp;
	struct ibv_qp *qp;

	qp = qp_new(f->pd, f->cq, IBV_QPT_UD, &cap, NULL, 0);
	if (!qp || !f->ah) {
		check(false, "UD QP and AH");
		return;
	}
	qp_to(qp, IBV_QPS_RTS);
	wr.wr.ud.ah = f->ah;
	wr.wr.ud.remote_qpn = 0x123456;
	wr.wr.ud.remote_qkey = 0x11111111;
	exp = wqe_of(&wr);
	exp.ex = wr.imm_data;
	exp.wr.ud.ah_num = 0x55;
	exp.wr.ud.remote_qpn = 0x123456;
	exp.wr.ud.remote_qkey = 0x11111111;
	send_expect(qp, &wr, &exp, &sge, sizeof(sge),
		    "UD SEND_WITH_IMM: ah_num of create_ah, QPN, Q_Key");
	ibv_destroy_qp(qp);

	qp = qp_new(f->pd, f->cq, IBV_QPT_UC, &cap, NULL, 0);
	if (!qp)
		return;
	qp_to(qp, IBV_QPS_RTS);
	wr = (struct ibv_send_wr){ .wr_id = 78, .sg_list = &sge, .num_sge = 1,
				   .opcode = IBV_WR_RDMA_WRITE_WITH_IMM,
				   .imm_data = htobe32(1) };
	wr.wr.rdma.remote_addr = 0x4000;
	wr.wr.rdma.rkey = 0x44;
	exp = wqe_of(&wr);
	exp.ex = wr.imm_data;
	exp.wr.rdma.remote_addr = 0x4000;
	exp.wr.rdma.rkey = 0x44;
	send_expect(qp, &wr, &exp, &sge, sizeof(sge), "UC RDMA_WRITE_WITH_IMM");
	ibv_destroy_qp(qp);
}

/* ------------------------------------------------------------------ */
/* Errors */

/* Post @wr alone: it must fail with @err and leave no trace. */
static void send_refused(struct ibv_qp *qp, struct ibv_send_wr *wr, int err,
			 const char *what)
{
	struct fake_queue *q = sq_of(qp);
	uint32_t prod = qhdr(q)->producer;
	unsigned int db = qps[qp->handle].send_db;
	struct ibv_send_wr *bad = NULL;
	int ret;

	set_wakeup(q, true);
	ret = ibv_post_send(qp, wr, &bad);
	check(ret == err && bad == wr && qhdr(q)->producer == prod &&
	      qps[qp->handle].send_db == db,
	      "%s: %s, *bad_wr set, nothing posted, no doorbell", what,
	      strerror(err));
	set_wakeup(q, false);
}

static void test_send_errors(struct fixture *f)
{
	struct ibv_mw mw1 = { .context = f->ctx, .pd = f->pd,
			      .type = IBV_MW_TYPE_1 };
	struct ibv_qp_cap cap = { .max_send_wr = 4, .max_send_sge = 2,
				  .max_inline_data = 16, .max_recv_wr = 1,
				  .max_recv_sge = 1 };
	uint8_t data[128] = {};
	struct ibv_sge sge[5] = {
		{ .addr = (uintptr_t)data, .length = 8 },
		{ .addr = (uintptr_t)data, .length = 8 },
		{ .addr = (uintptr_t)data, .length = 8 },
		{ .addr = (uintptr_t)data, .length = 8 },
		{ .addr = (uintptr_t)data, .length = 8 },
	};
	struct ibv_send_wr wr = { .sg_list = sge, .num_sge = 1,
				  .opcode = IBV_WR_SEND };
	struct ibv_send_wr list[4];
	struct ibv_send_wr *bad;
	struct fake_queue *q;
	struct ibv_qp *qp;
	uint32_t prod;
	int ret, i;

	qp = qp_new(f->pd, f->cq, IBV_QPT_RC, &cap, NULL, 0);
	if (!qp)
		return;
	/* 16 bytes of inline data or 2 SGEs: the kernel rounds to 4 SGEs. */
	check(cap.max_send_sge == 4 && cap.max_inline_data == 64,
	      "the limits the checks use");

	send_refused(qp, &wr, EINVAL, "RESET");
	qp_to(qp, IBV_QPS_INIT);
	send_refused(qp, &wr, EINVAL, "INIT");
	qp_to(qp, IBV_QPS_RTR);
	send_refused(qp, &wr, EINVAL, "RTR");
	qp_to(qp, IBV_QPS_RTS);

	wr.opcode = IBV_WR_BIND_MW;
	wr.bind_mw.mw = NULL;
	send_refused(qp, &wr, EINVAL, "BIND_MW without a window");
	wr.bind_mw.mw = &mw1;
	send_refused(qp, &wr, EINVAL, "BIND_MW of a type 1 window");
	wr.opcode = IBV_WR_ATOMIC_WRITE;
	send_refused(qp, &wr, EOPNOTSUPP, "ATOMIC_WRITE");
	wr.opcode = IBV_WR_TSO;
	send_refused(qp, &wr, EINVAL, "TSO on RC");
	wr.opcode = 99;
	send_refused(qp, &wr, EINVAL, "an unknown opcode");
	wr.opcode = -1;
	send_refused(qp, &wr, EINVAL, "a negative opcode");

	wr.opcode = IBV_WR_SEND;
	wr.num_sge = 5;
	send_refused(qp, &wr, EINVAL, "num_sge > max_send_sge");
	wr.num_sge = -1;
	send_refused(qp, &wr, EINVAL, "num_sge < 0");
	wr.num_sge = 4;
	sge[3].length = 41;	/* 65 bytes in all */
	wr.send_flags = IBV_SEND_INLINE;
	send_refused(qp, &wr, EINVAL, "inline data > max_inline_data");
	sge[3].length = 8;
	wr.send_flags = IBV_SEND_IP_CSUM;
	send_refused(qp, &wr, EINVAL, "an unsupported send flag");

	wr.send_flags = IBV_SEND_INLINE;
	wr.num_sge = 1;
	wr.opcode = IBV_WR_RDMA_READ;
	send_refused(qp, &wr, EINVAL, "inline RDMA_READ");
	wr.opcode = IBV_WR_ATOMIC_FETCH_AND_ADD;
	send_refused(qp, &wr, EINVAL, "inline atomic");
	wr.send_flags = 0;
	wr.wr.atomic.remote_addr = 0x1004;
	send_refused(qp, &wr, EINVAL, "misaligned atomic");
	wr.wr.atomic.remote_addr = 0x1000;
	sge[0].length = 4;
	send_refused(qp, &wr, EINVAL, "atomic into less than 8 bytes");
	sge[0].length = 8;

	/* A list stops at the first bad request; the rest is published. */
	q = sq_of(qp);
	prod = qhdr(q)->producer;
	set_wakeup(q, true);
	for (i = 0; i < 4; i++)
		list[i] = (struct ibv_send_wr){ .wr_id = i, .sg_list = sge,
						.num_sge = 1, .opcode = IBV_WR_SEND,
						.next = i < 3 ? &list[i + 1] : NULL };
	list[2].opcode = IBV_WR_RDMA_READ;
	list[2].send_flags = IBV_SEND_INLINE;
	ret = ibv_post_send(qp, list, &bad);
	check(ret == EINVAL && bad == &list[2] &&
	      qhdr(q)->producer == prod + 2 && qps[qp->handle].send_db == 1,
	      "a list up to a bad request is posted, with its doorbell");
	consume_all(q);

	/* A doorbell that fails: the requests are in, the error reported. */
	doorbell_errno = EFAULT;
	bad = &wr;
	wr.opcode = IBV_WR_SEND;
	ret = ibv_post_send(qp, &wr, &bad);
	check(ret == EFAULT && !bad && qhdr(q)->producer == prod + 3,
	      "a failed doorbell is reported, with *bad_wr NULL");
	set_wakeup(q, false);
	consume_all(q);

	qp_to(qp, IBV_QPS_ERR);
	ret = ibv_post_send(qp, &wr, &bad);
	check(!ret && qhdr(q)->producer == prod + 4,
	      "ERR accepts posts (the kernel flushes them)");
	ibv_destroy_qp(qp);

	cap = (struct ibv_qp_cap){ .max_send_wr = 1, .max_send_sge = 1,
				   .max_recv_wr = 1, .max_recv_sge = 1 };
	qp = qp_new(f->pd, f->cq, IBV_QPT_UD, &cap, NULL, 0);
	if (!qp)
		return;
	qp_to(qp, IBV_QPS_RTS);
	wr = (struct ibv_send_wr){ .sg_list = sge, .num_sge = 1,
				   .opcode = IBV_WR_SEND };
	send_refused(qp, &wr, EINVAL, "UD SEND without an AH");
	wr.wr.ud.ah = f->ah;
	wr.opcode = IBV_WR_RDMA_WRITE;
	send_refused(qp, &wr, EINVAL, "RDMA_WRITE on UD");
	wr.opcode = IBV_WR_SEND_WITH_INV;
	send_refused(qp, &wr, EINVAL, "SEND_WITH_INV on UD");
	wr.opcode = IBV_WR_LOCAL_INV;
	send_refused(qp, &wr, EINVAL, "LOCAL_INV on UD");
	ibv_destroy_qp(qp);

	qp = qp_new(f->pd, f->cq, IBV_QPT_UC, &cap, NULL, 0);
	if (!qp)
		return;
	qp_to(qp, IBV_QPS_RTS);
	wr.opcode = IBV_WR_RDMA_READ;
	send_refused(qp, &wr, EINVAL, "RDMA_READ on UC");
	wr.opcode = IBV_WR_ATOMIC_CMP_AND_SWP;
	send_refused(qp, &wr, EINVAL, "atomic on UC");
	wr.opcode = IBV_WR_SEND_WITH_INV;
	send_refused(qp, &wr, EINVAL, "SEND_WITH_INV on UC");
	ibv_destroy_qp(qp);
}

/* The kernel's limits must fit its rings, or the QP is refused. */
static void test_bad_caps(struct fixture *f)
{
	static const struct {
		enum bad_caps bad;
		const char *what;
	} cases[] = {
		{ CAPS_INLINE_PAST_ENTRY, "max_inline_data past the entry" },
		{ CAPS_SGE_PAST_ENTRY, "max_send_sge past the entry" },
		{ CAPS_WR_PAST_RING, "max_send_wr past the ring" },
	};
	struct ibv_qp_cap cap = { .max_send_wr = 4, .max_send_sge = 1,
				  .max_recv_wr = 1, .max_recv_sge = 1 };
	int aliases = live_aliases;
	unsigned int i;

	for (i = 0; i < ARRAY_SIZE(cases); i++) {
		struct ibv_qp_cap c = cap;

		bad_qp_caps = cases[i].bad;
		check(!qp_new(f->pd, f->cq, IBV_QPT_RC, &c, NULL, 0) &&
		      errno == EINVAL && live_aliases == aliases,
		      "%s: the QP is refused and unmapped", cases[i].what);
	}
}

/* ------------------------------------------------------------------ */
/* Ring: wrap-around, full queue, doorbell, one producer update */

static void test_send_ring(struct fixture *f)
{
	struct ibv_qp_cap cap = { .max_send_wr = 4, .max_send_sge = 1,
				  .max_recv_wr = 1, .max_recv_sge = 1 };
	struct ibv_sge sge = { .addr = 0x1000, .length = 1 };
	struct ibv_send_wr wr[6], *bad;
	struct sroce_send_wqe *w;
	struct fake_queue *q;
	struct ibv_qp *qp;
	struct trace_sum t;
	bool ok;
	int ret, i;

	wq_start_set = true;
	wq_start = 0xfffffffe;
	qp = qp_new(f->pd, f->cq, IBV_QPT_RC, &cap, NULL, 0);
	wq_start_set = false;
	if (!qp)
		return;
	qp_to(qp, IBV_QPS_RTS);
	q = sq_of(qp);
	for (i = 0; i < 6; i++)
		wr[i] = (struct ibv_send_wr){ .wr_id = 100 + i, .sg_list = &sge,
					      .num_sge = 1, .opcode = IBV_WR_SEND,
					      .next = i < 5 ? &wr[i + 1] : NULL };

	/* Six requests into four slots, from index 2^32 - 2. */
	ret = ibv_post_send(qp, wr, &bad);
	for (i = 0, ok = true; i < 4; i++) {
		w = qslot(q, 0xfffffffe + i);
		ok &= w->wr_id == 100 + (uint64_t)i;
	}
	check(ret == ENOMEM && bad == &wr[4] && qhdr(q)->producer == 2 && ok,
	      "a full queue: ENOMEM at the fifth, indices wrap past 2^32");
	check(qps[qp->handle].send_db == 0, "NEED_WAKEUP clear: no doorbell");

	ret = ibv_post_send(qp, &wr[4], &bad);
	check(ret == ENOMEM && bad == &wr[4] && qhdr(q)->producer == 2,
	      "still full until the kernel consumes");

	store_release(&qhdr(q)->consumer, 0);	/* it took two */
	set_wakeup(q, true);
	ok = trace_begin(q);
	ret = ibv_post_send(qp, &wr[4], &bad);
	trace_end();
	check(ret == 0 && qhdr(q)->producer == 4 &&
	      ((struct sroce_send_wqe *)qslot(q, 2))->wr_id == 104 &&
	      ((struct sroce_send_wqe *)qslot(q, 3))->wr_id == 105,
	      "freed slots are reused in order");
	check(qps[qp->handle].send_db == 1,
	      "NEED_WAKEUP set: exactly one doorbell for two requests");
	if (ok) {
		t = trace_summary();
		check(t.producer_stores == 1 && t.entries_first &&
		      t.flags_after && !t.stray,
		      "traced: entries, one producer store, then the flags (%d accesses)",
		      ntrace);
	} else {
		printf("skip: access tracing needs x86-64\n");
	}

	consume_all(q);
	set_wakeup(q, false);
	ok = trace_begin(q);
	ret = ibv_post_send(qp, wr, &bad);	/* four fit, then full */
	trace_end();
	t = trace_summary();
	check(ret == ENOMEM && qps[qp->handle].send_db == 1 &&
	      (!ok || (t.producer_stores == 1 && t.entries_first && !t.stray)),
	      "four requests, one producer store, no doorbell");

	consume_all(q);
	bad = NULL;
	ret = ibv_post_send(qp, NULL, &bad);
	check(!ret && !bad && qhdr(q)->producer == 8,
	      "an empty list posts nothing");
	ibv_destroy_qp(qp);
}

/* ------------------------------------------------------------------ */
/* Receive queues */

static void test_recv(struct fixture *f)
{
	struct ibv_qp_cap cap = { .max_send_wr = 1, .max_send_sge = 1,
				  .max_recv_wr = 2, .max_recv_sge = 3 };
	struct ibv_sge sge[4] = {
		{ .addr = 0xa0, .length = 1, .lkey = 1 },
		{ .addr = 0xb0, .length = 2, .lkey = 2 },
		{ .addr = 0xc0, .length = 3, .lkey = 3 },
		{ .addr = 0xd0, .length = 4, .lkey = 4 },
	};
	struct ibv_recv_wr wr[3], *bad;
	struct sroce_recv_wqe exp = { .wr_id = 0x77, .num_sge = 3 };
	struct ibv_srq_init_attr sattr = { .attr = { .max_wr = 4, .max_sge = 2 } };
	struct fake_queue *q;
	struct ibv_srq *srq;
	struct ibv_qp *qp;
	struct trace_sum t;
	bool traced;
	int ret, i;

	qp = qp_new(f->pd, f->cq, IBV_QPT_RC, &cap, NULL, 0);
	if (!qp)
		return;
	q = rq_of(qp);
	for (i = 0; i < 3; i++)
		wr[i] = (struct ibv_recv_wr){ .wr_id = 0x77 + i, .sg_list = sge,
					      .num_sge = 3,
					      .next = i < 2 ? &wr[i + 1] : NULL };

	ret = ibv_post_recv(qp, wr, &bad);
	check(ret == EINVAL && bad == wr && qhdr(q)->producer == 0,
	      "post_recv in RESET: EINVAL");
	qp_to(qp, IBV_QPS_INIT);

	ring_fill(q);
	wr[0].next = NULL;
	ret = ibv_post_recv(qp, wr, &bad);
	check(!ret && qhdr(q)->producer == 1 &&
	      !memcmp(qslot(q, 0), &exp, sizeof(exp)) &&
	      !memcmp((uint8_t *)qslot(q, 0) + sizeof(exp), sge, 3 * sizeof(sge[0])) &&
	      ring_untouched_but(q, 0, sizeof(exp) + 3 * sizeof(sge[0])),
	      "a receive entry, byte for byte, posted in INIT");
	check(qps[qp->handle].recv_db == 0, "NEED_WAKEUP clear: no doorbell");

	wr[0].next = &wr[1];
	wr[1].num_sge = 4;
	set_wakeup(q, true);
	ret = ibv_post_recv(qp, &wr[1], &bad);
	check(ret == EINVAL && bad == &wr[1] && qhdr(q)->producer == 1 &&
	      qps[qp->handle].recv_db == 0,
	      "num_sge > max_recv_sge: EINVAL, no doorbell");
	wr[1].num_sge = 3;
	traced = trace_begin(q);
	ret = ibv_post_recv(qp, &wr[1], &bad);
	trace_end();
	t = trace_summary();
	check(ret == ENOMEM && bad == &wr[2] && qhdr(q)->producer == 2 &&
	      qps[qp->handle].recv_db == 1 &&
	      (!traced || (t.producer_stores == 1 && t.entries_first &&
			   t.flags_after && !t.stray)),
	      "full: ENOMEM, what fit is published once, one doorbell");
	set_wakeup(q, false);
	ibv_destroy_qp(qp);

	srq = ibv_create_srq(f->pd, &sattr);
	check(srq && sattr.attr.max_wr == 4 && sattr.attr.max_sge == 3,
	      "create_srq reports the kernel's limits");
	if (!srq)
		return;
	q = &queues[srq->handle];
	wr[0].next = NULL;
	qp = qp_new(f->pd, f->cq, IBV_QPT_RC, &cap, srq, 0);
	if (qp) {
		qp_to(qp, IBV_QPS_INIT);
		ret = ibv_post_recv(qp, wr, &bad);
		check(ret == EINVAL && bad == wr,
		      "post_recv on a QP with an SRQ: EINVAL");
		ibv_destroy_qp(qp);
	}
	ring_fill(q);
	exp.num_sge = 2;
	wr[0].num_sge = 2;
	ret = ibv_post_srq_recv(srq, wr, &bad);
	check(!ret && qhdr(q)->producer == 1 &&
	      !memcmp(qslot(q, 0), &exp, sizeof(exp)) &&
	      !memcmp((uint8_t *)qslot(q, 0) + sizeof(exp), sge, 2 * sizeof(sge[0])) &&
	      ring_untouched_but(q, 0, sizeof(exp) + 2 * sizeof(sge[0])) &&
	      srq_db[srq->handle] == 0,
	      "an SRQ entry, byte for byte, no doorbell");
	wr[0].num_sge = 4;
	ret = ibv_post_srq_recv(srq, wr, &bad);
	check(ret == EINVAL && bad == wr, "num_sge > the SRQ's max_sge: EINVAL");
	wr[0].num_sge = 1;
	wr[0].next = &wr[1];
	wr[1].next = &wr[2];
	wr[1].num_sge = 1;
	wr[2].num_sge = 1;
	set_wakeup(q, true);
	ret = ibv_post_srq_recv(srq, wr, &bad);
	check(!ret && qhdr(q)->producer == 4 && srq_db[srq->handle] == 1,
	      "three on an SRQ, one doorbell");
	ret = ibv_post_srq_recv(srq, wr, &bad);
	check(ret == ENOMEM && bad == wr && srq_db[srq->handle] == 1,
	      "a full SRQ: ENOMEM, nothing to ring for");
	ibv_destroy_srq(srq);
}

/* ------------------------------------------------------------------ */
/* Completion notification */

void produce_cqe(struct fake_queue *q, uint64_t wr_id)
{
	uint32_t prod = qhdr(q)->producer;
	struct sroce_cqe *cqe = qslot(q, prod);

	memset(cqe, 0, sizeof(*cqe));
	cqe->wr_id = wr_id;
	cqe->opcode = IBV_WC_SEND;
	store_release(&qhdr(q)->producer, prod + 1);
}

static void test_notify(struct fixture *f)
{
	struct ibv_comp_channel *ch = ibv_create_comp_channel(f->ctx);
	struct ibv_cq *cq = NULL, *ev_cq = NULL;
	void *ev_ctx = NULL;
	struct ibv_wc wc;
	int h;

	check(!ibv_req_notify_cq(f->cq, 1) &&
	      notify_cq_handle == f->cq->handle && notify_solicited == 1,
	      "req_notify_cq(solicited) reaches the kernel");
	check(!ibv_req_notify_cq(f->cq, 0) && notify_solicited == 0,
	      "req_notify_cq(next completion) reaches the kernel");
	if (ch)
		cq = ibv_create_cq(f->ctx, 4, &h, ch, 0);
	check(ch && cq, "a CQ on a completion channel");
	if (!cq)
		return;
	h = cq->handle;
	ibv_req_notify_cq(cq, 0);
	produce_cqe(&queues[h], 42);
	kernel_comp_event(h);
	check(!ibv_get_cq_event(ch, &ev_cq, &ev_ctx) && ev_cq == cq &&
	      ev_ctx == &h, "ibv_get_cq_event returns the CQ and its context");
	ibv_ack_cq_events(cq, 1);
	check(ibv_poll_cq(cq, 1, &wc) == 1 && wc.wr_id == 42,
	      "the completion behind the event polls");
	ibv_destroy_cq(cq);
	ibv_destroy_comp_channel(ch);
}

/* ------------------------------------------------------------------ */

bool fixture_init(struct fixture *f, struct ibv_context *ctx)
{
	struct ibv_ah_attr ah = { .is_global = 1, .port_num = 1 };

	f->ctx = ctx;
	f->pd = ibv_alloc_pd(ctx);
	f->cq = ibv_create_cq(ctx, 16, NULL, NULL, 0);
	f->ah = f->pd ? ibv_create_ah(f->pd, &ah) : NULL;
	return f->pd && f->cq && f->ah;
}

void fixture_fini(struct fixture *f)
{
	ibv_destroy_ah(f->ah);
	ibv_destroy_cq(f->cq);
	ibv_dealloc_pd(f->pd);
}

void test_post(struct ibv_context *ctx)
{
	struct fixture f;
	int aliases = live_aliases;

	if (!fixture_init(&f, ctx)) {
		check(false, "PD, CQ and AH for the posting tests");
		return;
	}
	test_send_rc(&f);
	test_send_ud_uc(&f);
	test_send_errors(&f);
	test_bad_caps(&f);
	test_send_ring(&f);
	test_recv(&f);
	test_notify(&f);
	fixture_fini(&f);
	check(live_aliases == aliases, "the posting tests leave no mapping");
}
