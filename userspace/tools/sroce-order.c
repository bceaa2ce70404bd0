// SPDX-License-Identifier: GPL-2.0 OR Linux-OpenIB
/*
 * sroce-order: the data of an RDMA WRITE becomes visible at the responder
 * with its last byte last, as a NIC's DMA in address order makes it.
 *
 *   sroce-order [-n ITERATIONS] [-s SEED] DEV_A GID_INDEX_A DEV_B GID_INDEX_B
 *
 * One process, an RC QP on DEV_A (requester) connected to one on DEV_B
 * (responder). Each iteration picks a length of 33 to 4096 bytes and a
 * destination offset of 0 to 63, zeroes that window of the responder's
 * buffer, fills the source with the iteration's pattern (no zero byte)
 * and posts a WRITE. A reader thread, pinned to another CPU than the
 * poster (the poster's system calls and softirqs place the data), spins
 * on the window's last byte until it is no longer zero and at once
 * compares the whole window with the pattern.
 * Programs that poll the last byte of a WRITE's target (perftest's
 * ib_write_lat, rsocket's riowrite(), ...) rely on every other byte being
 * in place by then; a copy that stores the last byte first (the kernel's
 * memcpy copies backwards for some alignments) breaks them. Then the
 * completion is reaped: status success, opcode RDMA_WRITE, and the
 * window is checked again. Lengths above the path MTU (1024) take
 * several packets.
 *
 * Prints one line per failure (the first 10) and
 * "N writes, N early last bytes, N wrong completions"; exits 1 if any
 * iteration failed, 2 if the setup did.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <pthread.h>
#include <sched.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "tool.h"

#define BUF_SIZE	8192
#define MAX_LEN		4096
#define MIN_LEN		33
#define MAX_OFF		64
#define TIMEOUT_S	10

struct end {
	const char *name;
	int gid_index;
	union ibv_gid gid;
	struct ibv_context *ctx;
	struct ibv_pd *pd;
	struct ibv_cq *cq;
	struct ibv_qp *qp;
	uint8_t *buf;
	struct ibv_mr *mr;
};

static void end_open(struct end *e, const char *name, const char *gid_index)
{
	struct ibv_qp_init_attr qa = {
		.qp_type = IBV_QPT_RC,
		.cap = { .max_send_wr = 4, .max_recv_wr = 1,
			 .max_send_sge = 1, .max_recv_sge = 1 },
	};

	e->name = name;
	e->ctx = tool_open_device(name);
	e->gid_index = (int)tool_number(gid_index, 255);
	tool_query_gid(e->ctx, name, e->gid_index, &e->gid);
	e->pd = tool_alloc_pd(e->ctx, name);
	e->cq = ibv_create_cq(e->ctx, 8, NULL, NULL, 0);
	if (!e->cq)
		tool_die("%s: ibv_create_cq: %s", name, strerror(errno));
	qa.send_cq = e->cq;
	qa.recv_cq = e->cq;
	e->qp = ibv_create_qp(e->pd, &qa);
	if (!e->qp)
		tool_die("%s: ibv_create_qp: %s", name, strerror(errno));
	e->buf = aligned_alloc(4096, BUF_SIZE);
	if (!e->buf)
		tool_die("aligned_alloc failed");
	memset(e->buf, 0, BUF_SIZE);
	e->mr = ibv_reg_mr(e->pd, e->buf, BUF_SIZE, IBV_ACCESS_LOCAL_WRITE |
			   IBV_ACCESS_REMOTE_WRITE);
	if (!e->mr)
		tool_die("%s: ibv_reg_mr: %s", name, strerror(errno));
}

static int modify(struct ibv_qp *qp, struct ibv_qp_attr *a, int mask,
		  void *arg)
{
	const struct end *e = arg;
	int err = ibv_modify_qp(qp, a, mask);

	if (err)
		tool_die("%s: modify QP to %s: %s", e->name,
			 tool_qp_state_name(a->qp_state), strerror(err));
	return 0;
}

/*
 * RESET to RTS, @e's QP facing @peer's, path MTU 1024 (IBA 9.7.3); PSNs
 * 0, no RDMA READ or atomic resources.
 */
static void end_connect(struct end *e, const struct end *peer)
{
	struct tool_qp_conn c = {
		.access = IBV_ACCESS_REMOTE_WRITE, .dgid = peer->gid,
		.sgid_index = e->gid_index, .mtu = IBV_MTU_1024,
		.dest_qpn = peer->qp->qp_num, .min_rnr_timer = 1,
		.timeout = 14, .retry_cnt = 7, .rnr_retry = 7,
		.modify = modify, .arg = e,
	};

	tool_qp_connect(e->qp, &c, IBV_QPS_RTS);
}

/* Byte @i of iteration @it's message of @len bytes: never zero. */
static uint8_t pattern(unsigned int it, unsigned int len, unsigned int i)
{
	return (uint8_t)((it * 7 + len * 3 + i * 131 + (i >> 8)) % 255 + 1);
}

/*
 * Offset of the first byte of @p that is not the pattern, or @len; the
 * byte found there into @seen (it may change right after).
 */
static unsigned int first_bad(const uint8_t *p, unsigned int it,
			      unsigned int len, uint8_t *seen)
{
	unsigned int i;

	for (i = 0; i < len; i++)
		if ((*seen = p[i]) != pattern(it, len, i))
			break;
	return i;
}

static bool expired(time_t end)
{
	return time(NULL) >= end;
}

/* Poll @cq for one completion for at most TIMEOUT_S; false if none. */
static bool poll_one(struct ibv_cq *cq, struct ibv_wc *wc)
{
	time_t end = time(NULL) + TIMEOUT_S;
	int n;

	while (!(n = ibv_poll_cq(cq, 1, wc)) && !expired(end))
		;
	return n == 1;
}

static unsigned int reported;

static void report(unsigned int it, unsigned int off, unsigned int len,
		   const char *what, unsigned int at, uint8_t seen)
{
	if (++reported > 10)
		return;
	printf("FAIL: write %u (%u bytes at offset %u): %s", it, len, off, what);
	if (at < len)
		printf(": byte %u was 0x%02x, expected 0x%02x", at, seen,
		       pattern(it, len, at));
	putchar('\n');
}

/* The write in flight, armed by the poster, checked by the reader. */
static struct {
	uint8_t *window;
	unsigned int it, off, len;
	unsigned int armed, checked;	/* iteration + 1; __atomic */
	unsigned int early;
} shot;

static bool pin(pthread_t t, int cpu)
{
	cpu_set_t set;

	CPU_ZERO(&set);
	CPU_SET(cpu, &set);
	return !pthread_setaffinity_np(t, sizeof(set), &set);
}

/*
 * The reader, on another CPU than the poster (whose system calls and
 * softirqs place the data): spins on the armed window's last byte, then
 * checks the rest at once.
 */
static void *reader(void *arg)
{
	unsigned int n = *(unsigned int *)arg, next, at;
	volatile uint8_t *last;
	uint8_t seen;
	time_t end;

	for (next = 1; next <= n; next++) {
		end = time(NULL) + TIMEOUT_S;
		while (__atomic_load_n(&shot.armed, __ATOMIC_ACQUIRE) < next)
			if (expired(end))
				return NULL;
		last = shot.window + shot.len - 1;
		while (!*last && !expired(end))
			;
		__atomic_thread_fence(__ATOMIC_ACQUIRE);
		at = first_bad(shot.window, shot.it, shot.len, &seen);
		if (at < shot.len) {
			shot.early++;
			report(shot.it, shot.off, shot.len, *last ?
			       "last byte visible before" :
			       "last byte never arrived", at, seen);
		}
		__atomic_store_n(&shot.checked, next, __ATOMIC_RELEASE);
	}
	return NULL;
}

int main(int argc, char **argv)
{
	unsigned int iterations = 20000, seed = (unsigned int)time(NULL);
	unsigned int it, wrong = 0, off, len, at;
	struct end a = { 0 }, b = { 0 };
	uint8_t seen;
	struct ibv_send_wr wr, *bad;
	struct ibv_sge sge;
	struct ibv_wc wc;
	pthread_t thread;
	bool pinned;
	time_t end;
	int opt;

	while ((opt = getopt(argc, argv, "n:s:")) != -1) {
		switch (opt) {
		case 'n':
			iterations = (unsigned int)tool_number(optarg, 100000000);
			break;
		case 's':
			seed = (unsigned int)tool_number(optarg, UINT32_MAX);
			break;
		default:
			goto usage;
		}
	}
	if (argc - optind != 4)
		goto usage;
	end_open(&a, argv[optind], argv[optind + 1]);
	end_open(&b, argv[optind + 2], argv[optind + 3]);
	end_connect(&a, &b);
	end_connect(&b, &a);
	if (pthread_create(&thread, NULL, reader, &iterations))
		tool_die("pthread_create failed");
	pinned = sysconf(_SC_NPROCESSORS_ONLN) > 1 &&
		 pin(pthread_self(), 0) && pin(thread, 1);
	printf("sroce-order: %u writes from %s to %s, seed %u, reader %s\n",
	       iterations, a.name, b.name, seed, pinned ?
	       "on CPU 1, poster on CPU 0" : "not pinned (one CPU?)");
	fflush(stdout);
	srandom(seed);

	for (it = 0; it < iterations; it++) {
		len = MIN_LEN + (unsigned int)random() % (MAX_LEN - MIN_LEN + 1);
		off = (unsigned int)random() % MAX_OFF;
		memset(b.buf + off, 0, len);
		for (at = 0; at < len; at++)
			a.buf[at] = pattern(it, len, at);
		shot.window = b.buf + off;
		shot.it = it;
		shot.off = off;
		shot.len = len;
		__atomic_store_n(&shot.armed, it + 1, __ATOMIC_RELEASE);

		sge = (struct ibv_sge){ .addr = (uintptr_t)a.buf, .length = len,
					.lkey = a.mr->lkey };
		wr = (struct ibv_send_wr){ .wr_id = it, .sg_list = &sge,
					   .num_sge = 1,
					   .opcode = IBV_WR_RDMA_WRITE,
					   .send_flags = IBV_SEND_SIGNALED };
		wr.wr.rdma.remote_addr = (uintptr_t)(b.buf + off);
		wr.wr.rdma.rkey = b.mr->rkey;
		if (ibv_post_send(a.qp, &wr, &bad))
			tool_die("ibv_post_send: %s", strerror(errno));
		if (!poll_one(a.cq, &wc) || wc.status != IBV_WC_SUCCESS ||
		    wc.opcode != IBV_WC_RDMA_WRITE || wc.wr_id != it) {
			wrong++;
			report(it, off, len, "no successful RDMA_WRITE completion",
			       len, 0);
			it++;
			break;
		}
		end = time(NULL) + TIMEOUT_S;
		while (__atomic_load_n(&shot.checked, __ATOMIC_ACQUIRE) <= it)
			if (expired(end))
				tool_die("write %u: the reader did not finish", it);
		at = first_bad(b.buf + off, it, len, &seen);
		if (at < len) {
			wrong++;
			report(it, off, len, "wrong after the completion", at,
			       seen);
		}
	}
	pthread_join(thread, NULL);	/* it gives up 10 s after the last */
	printf("%u writes, %u early last bytes, %u wrong completions\n", it,
	       shot.early, wrong);
	return shot.early || wrong ? 1 : 0;

usage:
	fprintf(stderr, "usage: sroce-order [-n ITERATIONS] [-s SEED] DEV_A GID_INDEX_A DEV_B GID_INDEX_B\n");
	return 2;
}
