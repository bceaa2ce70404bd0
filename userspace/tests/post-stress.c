// SPDX-License-Identifier: GPL-2.0 OR Linux-OpenIB
/*
 * The provider's rings under concurrency, against fake kernel threads:
 *
 *   - a kernel send engine that sleeps on NEED_WAKEUP, as the ABI
 *     describes, consumes the send queue of two posting threads: every
 *     entry arrives intact and in order (the per-QP lock);
 *   - the same engine against one request at a time, posted just as it
 *     goes idle: no post is ever missed (the NEED_WAKEUP handshake and its
 *     two full barriers);
 *   - a kernel thread produces completions while the test polls.
 *
 * bench_post() measures the cost of posting and polling with the kernel
 * side idle.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <sched.h>
#include <semaphore.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#include "fake-kernel.h"
#include "post-stress.h"
#include "post-test.h"

#define POSTERS		2
#define PER_POSTER	100000

/* A kernel send engine that sleeps on NEED_WAKEUP, as the ABI describes. */
static struct {
	struct fake_queue *q;
	sem_t doorbell;
	uint64_t next[POSTERS];
	unsigned long consumed, sleeps, missed, bad;
} eng;

static void engine_doorbell(void)
{
	sem_post(&eng.doorbell);
}

static bool engine_entry_ok(uint32_t i)
{
	struct sroce_send_wqe *w = qslot(eng.q, i);
	uint64_t id = w->wr_id, t = id >> 32, seq = id & 0xffffffff;

	if (t >= POSTERS || seq != eng.next[t]++ || w->opcode != IBV_WR_SEND)
		return false;
	if (seq & 1)
		return w->send_flags == IBV_SEND_INLINE && !w->num_sge &&
		       w->inline_len == 8 && !memcmp(w->sge, &id, 8);
	return !w->send_flags && w->num_sge == 1 && !w->inline_len &&
	       w->sge[0].addr == id * 8 && w->sge[0].length == (seq & 0xff);
}

/* Sleep until a doorbell; a timeout with work pending is a missed post. */
static void engine_sleep(uint32_t cons)
{
	struct sroce_queue_hdr *h = qhdr(eng.q);
	struct timespec ts;

	atomic_store_explicit((_Atomic(uint32_t) *)&h->flags,
			      SROCE_QUEUE_NEED_WAKEUP, memory_order_relaxed);
	atomic_thread_fence(memory_order_seq_cst);
	if (load_acquire(&h->producer) == cons) {
		eng.sleeps++;
		clock_gettime(CLOCK_REALTIME, &ts);
		ts.tv_sec += 1;
		if (sem_timedwait(&eng.doorbell, &ts) &&
		    load_acquire(&h->producer) != cons)
			eng.missed++;
	}
	atomic_store_explicit((_Atomic(uint32_t) *)&h->flags, 0,
			      memory_order_relaxed);
}

static void *engine(void *arg)
{
	struct sroce_queue_hdr *h = qhdr(eng.q);
	uint32_t cons = h->consumer, prod;

	while (eng.consumed < POSTERS * PER_POSTER) {
		prod = load_acquire(&h->producer);
		if (prod == cons) {
			engine_sleep(cons);
			continue;
		}
		for (; cons != prod; cons++, eng.consumed++)
			eng.bad += !engine_entry_ok(cons);
		store_release(&h->consumer, cons);
	}
	return NULL;
}

static void *poster(void *arg)
{
	static _Atomic int ids;
	struct ibv_qp *qp = arg;
	uint64_t t = ids++, seq = 0, data[8];
	struct ibv_send_wr wr[8], *bad;
	struct ibv_sge sge[8];
	unsigned int seed = t;
	int n, i;

	while (seq < PER_POSTER) {
		n = 1 + rand_r(&seed) % 8;
		if (seq + n > PER_POSTER)
			n = PER_POSTER - seq;
		for (i = 0; i < n; i++) {
			uint64_t s = seq + i, id = t << 32 | s;

			data[i] = id;
			sge[i] = (struct ibv_sge){ .addr = id * 8,
						   .length = s & 0xff };
			if (s & 1)
				sge[i] = (struct ibv_sge){
					.addr = (uintptr_t)&data[i], .length = 8 };
			wr[i] = (struct ibv_send_wr){
				.wr_id = id, .sg_list = &sge[i], .num_sge = 1,
				.opcode = IBV_WR_SEND,
				.send_flags = s & 1 ? IBV_SEND_INLINE : 0,
				.next = i < n - 1 ? &wr[i + 1] : NULL };
		}
		i = ibv_post_send(qp, wr, &bad);
		if (i && i != ENOMEM)
			abort();
		if (i) {
			seq += bad - wr;	/* full: the rest again */
			sched_yield();
		} else {
			seq += n;
		}
	}
	return NULL;
}

static void test_concurrent_send(struct fixture *f)
{
	struct ibv_qp_cap cap = { .max_send_wr = 64, .max_send_sge = 1,
				  .max_inline_data = 8, .max_recv_wr = 1,
				  .max_recv_sge = 1 };
	pthread_t k, p[POSTERS];
	struct ibv_qp *qp;
	unsigned int db;
	int i;

	qp = qp_new(f->pd, f->cq, IBV_QPT_RC, &cap, NULL, 0);
	if (!qp)
		return;
	qp_to(qp, IBV_QPS_RTS);
	memset(&eng, 0, sizeof(eng));
	eng.q = sq_of(qp);
	sem_init(&eng.doorbell, 0, 0);
	doorbell_hook = engine_doorbell;
	pthread_create(&k, NULL, engine, NULL);
	for (i = 0; i < POSTERS; i++)
		pthread_create(&p[i], NULL, poster, qp);
	for (i = 0; i < POSTERS; i++)
		pthread_join(p[i], NULL);
	pthread_join(k, NULL);
	doorbell_hook = NULL;
	db = qps[qp->handle].send_db;
	check(eng.consumed == POSTERS * PER_POSTER && !eng.bad && !eng.missed,
	      "%d posting threads, a sleeping kernel: %lu entries intact, in order, no post missed (%lu sleeps, %u doorbells)",
	      POSTERS, eng.consumed, eng.sleeps, db);
	sem_destroy(&eng.doorbell);
	ibv_destroy_qp(qp);
}

/*
 * Ping-pong: one request at a time, posted as soon as the kernel took the
 * last one, when the kernel is just going idle. That lines up the two
 * halves of the NEED_WAKEUP handshake on every round. A post is missed
 * when post_send() has returned without ringing, the kernel sleeps and the
 * entry waits. (A post that rang may still wait for a while: the woken
 * kernel thread is not always scheduled at once on a loaded host. The
 * kernel clears NEED_WAKEUP only once awake, so a post that did not ring
 * saw it busy, and a busy kernel looks at the producer index again.)
 */
#define PINGS		200000

static struct {
	struct fake_queue *q;
	sem_t doorbell;
	_Atomic bool sleeping, done;
	unsigned long missed, sleeps;
} pp;

static void pp_doorbell(void)
{
	sem_post(&pp.doorbell);
}

/* A random pause of up to a few hundred ns, to vary who comes first. */
static void pp_jitter(unsigned int *seed)
{
	unsigned int n = rand_r(seed) % 128;

	while (n--)
		atomic_signal_fence(memory_order_seq_cst);	/* kept */
}

static void *pp_engine(void *arg)
{
	_Atomic(uint32_t) *flags = (void *)&qhdr(pp.q)->flags;
	struct sroce_queue_hdr *h = qhdr(pp.q);
	uint32_t cons = h->consumer, prod;
	unsigned int seed = 1;

	while (!pp.done) {
		prod = load_acquire(&h->producer);
		if (prod != cons) {
			cons = prod;
			store_release(&h->consumer, cons);
			pp_jitter(&seed);
			continue;
		}
		atomic_store_explicit(flags, SROCE_QUEUE_NEED_WAKEUP,
				      memory_order_relaxed);
		atomic_thread_fence(memory_order_seq_cst);
		if (load_acquire(&h->producer) == cons) {
			pp.sleeping = true;
			pp.sleeps++;
			sem_wait(&pp.doorbell);
			pp.sleeping = false;
		}
		atomic_store_explicit(flags, 0, memory_order_relaxed);
	}
	return NULL;
}

/* Wait until the kernel took everything; count and repair a missed post. */
static void pp_wait(struct sroce_queue_hdr *h, bool rang)
{
	double deadline = 0;
	struct timespec ts;

	while (load_acquire(&h->consumer) != h->producer) {
		clock_gettime(CLOCK_MONOTONIC, &ts);
		if (!deadline)
			deadline = ts.tv_sec + ts.tv_nsec / 1e9 + 0.2;
		if (ts.tv_sec + ts.tv_nsec / 1e9 > deadline && !rang &&
		    pp.sleeping && load_acquire(&h->consumer) != h->producer) {
			pp.missed++;
			sem_post(&pp.doorbell);
			deadline = 0;
		}
	}
}

static void test_wakeup_pingpong(struct fixture *f)
{
	struct ibv_qp_cap cap = { .max_send_wr = 4, .max_send_sge = 1,
				  .max_recv_wr = 1, .max_recv_sge = 1 };
	struct ibv_sge sge = { .addr = 0x1000, .length = 1 };
	struct ibv_send_wr wr = { .sg_list = &sge, .num_sge = 1,
				  .opcode = IBV_WR_SEND }, *bad;
	unsigned int db;
	struct ibv_qp *qp;
	unsigned int seed = 2;
	pthread_t k;
	long i;

	qp = qp_new(f->pd, f->cq, IBV_QPT_RC, &cap, NULL, 0);
	if (!qp)
		return;
	qp_to(qp, IBV_QPS_RTS);
	memset(&pp, 0, sizeof(pp));
	pp.q = sq_of(qp);
	sem_init(&pp.doorbell, 0, 0);
	doorbell_hook = pp_doorbell;
	pthread_create(&k, NULL, pp_engine, NULL);
	for (i = 0; i < PINGS; i++) {
		wr.wr_id = i;
		pp_jitter(&seed);
		db = qps[qp->handle].send_db;
		if (ibv_post_send(qp, &wr, &bad))
			abort();
		pp_wait(qhdr(pp.q), qps[qp->handle].send_db != db);
	}
	pp.done = true;
	sem_post(&pp.doorbell);
	pthread_join(k, NULL);
	doorbell_hook = NULL;
	db = qps[qp->handle].send_db;
	check(!pp.missed,
	      "ping-pong with a kernel going idle: %d posts, %lu missed (%lu sleeps, %u doorbells)",
	      PINGS, pp.missed, pp.sleeps, db);
	sem_destroy(&pp.doorbell);
	ibv_destroy_qp(qp);
}

#define CQ_TOTAL	300000

static void *cq_producer(void *arg)
{
	struct fake_queue *q = arg;
	struct sroce_queue_hdr *h = qhdr(q);
	uint32_t prod = h->producer;
	uint64_t i = 0;

	while (i < CQ_TOTAL) {
		uint32_t room = q->num_entries -
				(prod - load_acquire(&h->consumer));

		for (; room && i < CQ_TOTAL; room--, i++, prod++) {
			struct sroce_cqe *cqe = qslot(q, prod);

			memset(cqe, 0, sizeof(*cqe));
			cqe->wr_id = i;
			cqe->byte_len = (uint32_t)(i * 2654435761u);
			cqe->qp_num = (uint32_t)~i;
			if ((i & 7) == 0)
				store_release(&h->producer, prod + 1);
		}
		store_release(&h->producer, prod);
	}
	return NULL;
}

static void test_concurrent_poll(struct fixture *f)
{
	struct ibv_cq *cq = ibv_create_cq(f->ctx, 64, NULL, NULL, 0);
	uint64_t next = 0, bad = 0;
	struct ibv_wc wc[16];
	pthread_t t;
	int n, i;

	if (!cq)
		return;
	pthread_create(&t, NULL, cq_producer, &queues[cq->handle]);
	while (next < CQ_TOTAL && !bad) {
		n = ibv_poll_cq(cq, 16, wc);
		if (n < 0) {
			bad++;
			break;
		}
		for (i = 0; i < n; i++, next++)
			bad += wc[i].wr_id != next ||
			       wc[i].byte_len != (uint32_t)(next * 2654435761u) ||
			       wc[i].qp_num != (uint32_t)~next;
	}
	pthread_join(t, NULL);
	check(next == CQ_TOTAL && !bad,
	      "poll_cq against a producing kernel thread: %lu completions intact and in order",
	      (unsigned long)next);
	ibv_destroy_cq(cq);
}

/**
 * test_post_stress() - the concurrency tests
 * @ctx: the fake device's context
 */
void test_post_stress(struct ibv_context *ctx)
{
	struct fixture f;

	if (!fixture_init(&f, ctx)) {
		check(false, "PD, CQ and AH for the concurrency tests");
		return;
	}
	test_concurrent_send(&f);
	test_wakeup_pingpong(&f);
	test_concurrent_poll(&f);
	fixture_fini(&f);
}

/* ------------------------------------------------------------------ */
/* Benchmark */

static double now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec * 1e9 + ts.tv_nsec;
}

/*
 * ns per work request: @iters calls of ibv_post_send() with a list of
 * @batch; the test plays the kernel's consumer every 64 entries (ring 256).
 */
static double bench_send(struct ibv_qp *qp, struct ibv_send_wr *wr, int batch,
			 long iters)
{
	struct fake_queue *q = sq_of(qp);
	struct ibv_send_wr *bad;
	double t0 = now_ns();
	long i;

	for (i = 0; i < iters; i++) {
		if (ibv_post_send(qp, wr, &bad))
			abort();
		if (((i + 1) * batch) % 64 == 0)
			consume_all(q);
	}
	return (now_ns() - t0) / ((double)iters * batch);
}

static double bench_recv(struct ibv_qp *qp, struct ibv_recv_wr *wr, long iters)
{
	struct fake_queue *q = rq_of(qp);
	struct ibv_recv_wr *bad;
	double t0 = now_ns();
	long i;

	for (i = 0; i < iters; i++) {
		if (ibv_post_recv(qp, wr, &bad))
			abort();
		if ((i + 1) % 64 == 0)
			consume_all(q);
	}
	return (now_ns() - t0) / iters;
}

/* ns per ibv_poll_cq() that returns one completion. */
static double bench_poll(struct ibv_cq *cq, long iters)
{
	struct fake_queue *q = &queues[cq->handle];
	double spent = 0, t0;
	struct ibv_wc wc;
	long i, j;

	for (i = 0; i < iters; i += 128) {
		for (j = 0; j < 128; j++)
			produce_cqe(q, j);
		t0 = now_ns();
		for (j = 0; j < 128; j++)
			if (ibv_poll_cq(cq, 1, &wc) != 1)
				abort();
		spent += now_ns() - t0;
	}
	return spent / iters;
}

static double bench_syscall(long iters)
{
	int fd = open("/dev/null", O_WRONLY);
	char buf[32] = {};
	double t0 = now_ns();
	long i;

	for (i = 0; i < iters; i++)
		syscall(SYS_write, fd, buf, sizeof(buf));
	t0 = (now_ns() - t0) / iters;
	close(fd);
	return t0;
}

#define ROUNDS	9

static int cmp_double(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;

	return x < y ? -1 : x > y;
}

/* ROUNDS runs of @expr: the host may be busy, so print best and median. */
#define BENCH(label, expr) do {						\
	double r[ROUNDS];						\
	int k;								\
									\
	for (k = 0; k < ROUNDS; k++)					\
		r[k] = (expr);						\
	qsort(r, ROUNDS, sizeof(r[0]), cmp_double);			\
	printf("bench: %-44s best %6.1f ns, median %6.1f ns\n", label,	\
	       r[0], r[ROUNDS / 2]);					\
} while (0)

void bench_post(struct ibv_context *ctx)
{
	struct ibv_qp_cap cap = { .max_send_wr = 256, .max_send_sge = 1,
				  .max_inline_data = 64, .max_recv_wr = 256,
				  .max_recv_sge = 1 };
	static uint8_t buf[64];
	struct ibv_sge sge = { .addr = (uintptr_t)buf, .length = 64, .lkey = 1 };
	struct ibv_send_wr wr[16];
	struct ibv_recv_wr rwr = { .sg_list = &sge, .num_sge = 1 };
	struct ibv_cq *cq = ibv_create_cq(ctx, 256, NULL, NULL, 0);
	const long n = 400000;
	struct fixture f;
	struct ibv_qp *qp;
	int i;

	if (!cq || !fixture_init(&f, ctx))
		abort();
	qp = qp_new(f.pd, f.cq, IBV_QPT_RC, &cap, NULL, 0);
	if (!qp)
		abort();
	qp_to(qp, IBV_QPS_RTS);
	for (i = 0; i < 16; i++)
		wr[i] = (struct ibv_send_wr){ .wr_id = i, .sg_list = &sge,
					      .num_sge = 1, .opcode = IBV_WR_SEND,
					      .next = i < 15 ? &wr[i + 1] : NULL };
	printf("bench: %d rounds each, the kernel side idle (no doorbell)\n",
	       ROUNDS);
	bench_send(qp, wr, 16, n / 16);		/* warm up */

	wr[0].next = NULL;
	BENCH("post_send SEND 1 SGE, 1 WR per call", bench_send(qp, wr, 1, n));
	wr[0].next = &wr[1];
	BENCH("post_send SEND 1 SGE, 16 WRs per call, per WR",
	      bench_send(qp, wr, 16, n / 16));
	wr[0].next = NULL;
	wr[0].send_flags = IBV_SEND_INLINE;
	BENCH("post_send SEND 64 B inline, 1 WR per call",
	      bench_send(qp, wr, 1, n));
	wr[0].send_flags = 0;
	wr[0].opcode = IBV_WR_RDMA_WRITE;
	BENCH("post_send RDMA_WRITE 1 SGE, 1 WR per call",
	      bench_send(qp, wr, 1, n));
	BENCH("post_recv 1 SGE, 1 WR per call", bench_recv(qp, &rwr, n));
	BENCH("poll_cq, 1 completion per call", bench_poll(cq, n));
	set_wakeup(sq_of(qp), true);
	BENCH("post_send, NEED_WAKEUP set (fake doorbell)",
	      bench_send(qp, wr, 1, n / 10));
	BENCH("reference: write() syscall to /dev/null", bench_syscall(n / 10));
}
