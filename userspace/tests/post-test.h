/* SPDX-License-Identifier: GPL-2.0 OR Linux-OpenIB */
/*
 * post-test.c: the provider's posting path against the fake kernel, and
 * the helpers that post-stress.c shares with it.
 */
#ifndef POST_TEST_H
#define POST_TEST_H

#include <stdatomic.h>
#include <stdbool.h>
#include <stdint.h>

#include <infiniband/verbs.h>

#include "fake-kernel.h"

/* What most tests post with: the AH's ah_num is 0x55. */
struct fixture {
	struct ibv_context *ctx;
	struct ibv_pd *pd;
	struct ibv_cq *cq;
	struct ibv_ah *ah;
};

/* The kernel's side of an index in a queue header. */
static inline uint32_t load_acquire(uint32_t *p)
{
	return atomic_load_explicit((_Atomic(uint32_t) *)p,
				    memory_order_acquire);
}

static inline void store_release(uint32_t *p, uint32_t v)
{
	atomic_store_explicit((_Atomic(uint32_t) *)p, v, memory_order_release);
}

bool fixture_init(struct fixture *f, struct ibv_context *ctx);
void fixture_fini(struct fixture *f);
/* A QP; @cap is updated to the limits the kernel reported. */
struct ibv_qp *qp_new(struct ibv_pd *pd, struct ibv_cq *cq,
		      enum ibv_qp_type type, struct ibv_qp_cap *cap,
		      struct ibv_srq *srq, int sig_all);
int qp_to(struct ibv_qp *qp, enum ibv_qp_state state);
/* The fake kernel's view of a QP's rings. */
struct fake_queue *sq_of(struct ibv_qp *qp);
struct fake_queue *rq_of(struct ibv_qp *qp);
void set_wakeup(struct fake_queue *q, bool on);
void consume_all(struct fake_queue *q);
/* Fill the ring's slots with a canary byte; check that only part changed. */
void ring_fill(struct fake_queue *q);
bool ring_untouched_but(struct fake_queue *q, uint32_t i, size_t used);
/* The header post_send should write for @wr (no ex, no wr union). */
struct sroce_send_wqe wqe_of(const struct ibv_send_wr *wr);
void produce_cqe(struct fake_queue *q, uint64_t wr_id);

void test_post(struct ibv_context *ctx);

#endif /* POST_TEST_H */
