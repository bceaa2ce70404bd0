/* SPDX-License-Identifier: GPL-2.0 OR Linux-OpenIB */
/*
 * sroce-stress: what its files share (main.c says what the tool does).
 * main.c runs the traffic and the events and sums up; pairs.c opens the
 * devices and builds, connects and destroys the QP pairs; post.c posts the
 * operations, complete.c checks their completions and bytes; events.c
 * raises the events and watches the asynchronous ones.
 */
#ifndef SROCE_TOOLS_STRESS_H
#define SROCE_TOOLS_STRESS_H

#define _GNU_SOURCE
#include <arpa/inet.h>
#include <errno.h>
#include <getopt.h>
#include <inttypes.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "tool.h"

#define MAX_PAIRS	16
#define DEPTH		8		/* requester operations in flight */
#define BDEPTH		4		/* responder SENDs in flight */
#define RQ_DEPTH	16		/* receives posted on each side */
#define SLOT		4096
#define GRH_SIZE	40
#define RSLOT		(SLOT + GRH_SIZE)
#define QKEY		0x11111111
#define WAIT_MS		10000

/* Requester buffer: SRC, RDST (slots of SLOT), ARES (8 each), RECV. */
#define A_SRC		0
#define A_RDST		(DEPTH * SLOT)
#define A_ARES		(2 * DEPTH * SLOT)
#define A_RECV		(2 * DEPTH * SLOT + 4096)
#define A_SIZE		(A_RECV + RQ_DEPTH * RSLOT)
/* Responder target MR: WDST, RSRC, ATGT; its other MR: RECV, BSRC. */
#define B_WDST		0
#define B_RSRC		(DEPTH * SLOT)
#define B_ATGT		(2 * DEPTH * SLOT)
#define B_TSIZE		(2 * DEPTH * SLOT + 4096)
#define B_RECV		0
#define B_BSRC		(RQ_DEPTH * RSLOT)
#define B_RSIZE		(B_BSRC + BDEPTH * SLOT)

enum kind { K_RC, K_RC_SRQ, K_UC, K_UD };
extern const char *const kind_names[];

enum op_kind {
	OP_SEND, OP_SEND_IMM, OP_WRITE, OP_WRITE_IMM, OP_READ, OP_CAS,
	OP_FADD, OP_AWRITE, OP_NR
};
extern const char *const op_names[];

enum event {
	EV_QP_RESPONDER, EV_QP_REQUESTER, EV_MR, EV_MW, EV_CQ, EV_SQD,
	EV_RESET, EV_NR
};
extern const char *const ev_names[];

extern unsigned int failures, mismatches;
extern bool verbose, inject_data;

/* The decisions of the run: one stream from --seed. */
extern uint64_t rng;

struct dev {
	const char *name;
	int gid_index[2];		/* IPv4, IPv6 */
	union ibv_gid gid[2];
	struct ibv_context *ctx;
	struct ibv_pd *pd;
	enum ibv_mtu mtu;
	bool gone;
};

extern struct dev dev_a, dev_b;
extern bool removed;

/* One operation in flight; id 0 is a free slot. */
struct op {
	uint64_t id;
	enum op_kind kind;
	uint32_t len;
	uint64_t old;			/* atomics: the target's value before */
	uint64_t arg;			/* CAS swap, FADD add, ATOMIC_WRITE data */
	bool hit;			/* CAS: compare equals old */
	bool mw;			/* through the window */
};

/* A message that takes a receive, as its receiver expects it. */
struct expect {
	uint64_t id;
	uint32_t len;
	enum op_kind kind;
};

#define FIFO_LEN 64

/*
 * Messages a receiver is to get, oldest first; and (UC, UD) the last ones
 * it skipped as lost, in case they come late: a veth hands packets that
 * two CPUs sent to two backlogs, so datagrams can overtake each other.
 */
struct fifo {
	struct expect e[FIFO_LEN];
	unsigned int head, tail;
	struct expect skipped[FIFO_LEN];
	unsigned int nskipped;
	uint64_t got[FIFO_LEN];		/* the last ones received */
	unsigned int ngot;
};

/**
 * struct pair - a requester QP on DEV and a responder QP on PEER_DEV
 * @a*: the requester's CQ, QP (and its ibv_qp_ex), MR, buffer, AH (UD)
 * @b*: the responder's CQ, QP, SRQ, target MR (WRITE, READ, atomics),
 *	receive MR, buffers, AH
 * @mw, @mw_rkey, @mw_bound: the responder's type 2 window over its
 *	targets (RC)
 * @aop, @bop: operations in flight from each side
 * @to_b, @to_a: messages each side is to receive, oldest first
 * @dead: an operation failed: the pair stops and is built anew
 * @disturbed: an event touched it (since @disturbed_at): errors are
 *	expected
 * @v6: each side's address vector uses IPv6 GIDs
 * @rd_atomic: the requester's max_rd_atomic, the responder's
 *	max_dest_rd_atomic
 * @sqd_pending: after an SQD dance, bit 0 (the requester) and bit 1 (the
 *	responder) until an operation of that side succeeds
 * @sqd_strict: the dance waited for both SQs to drain: the traffic must
 *	resume, an error fails the run
 * @drained: bit 0, bit 1: IBV_EVENT_SQ_DRAINED of that side's QP
 * @ok_since_build: an operation succeeded since the pair was built
 */
struct pair {
	unsigned int n;
	enum kind kind;
	enum ibv_qp_type type;
	struct ibv_cq *acq;
	struct ibv_qp *aqp;
	struct ibv_qp_ex *aqpx;
	struct ibv_mr *amr;
	uint8_t *abuf;
	struct ibv_ah *aah;
	struct ibv_cq *bcq;
	struct ibv_qp *bqp;
	struct ibv_srq *bsrq;
	struct ibv_mr *btmr, *brmr;
	uint8_t *btbuf, *brbuf;
	struct ibv_ah *bah;
	struct ibv_mw *mw;
	uint32_t mw_rkey;
	bool mw_bound;
	struct op aop[DEPTH];
	struct op bop[BDEPTH];
	struct fifo to_b, to_a;
	bool alive, dead, disturbed;
	uint64_t disturbed_at;
	int v6[2];
	uint8_t rd_atomic[2];
	int sqd_pending;
	bool sqd_strict;
	int drained;
	unsigned int dances;		/* SQD dances since it was built */
	bool ok_since_build;
	uint64_t grace_until;
	uint64_t sqd_deadline;
	uint32_t alkey, btrkey, brlkey;
};

extern struct pair pairs[MAX_PAIRS];
extern unsigned int npairs;
extern bool awrite_ok;
extern const char *awrite_why;
extern uint64_t next_id;
extern struct ibv_device_attr attr_a, attr_b;

/* What the run did, for the summary. */
struct stats {
	unsigned long ops, verified, bytes, errors, lost, reordered, unverified;
	unsigned long rebuilt;
	unsigned long sqd_resumed, sqd_failed, sqd_stalled, skipped_flush;
	unsigned long by_event[EV_NR], events;
	unsigned long by_op[OP_NR];
};
extern struct stats st;

/* wr_id: what, which slot, which id */
#define W_AOP		(1ULL << 60)
#define W_BOP		(2ULL << 60)
#define W_ARECV		(3ULL << 60)
#define W_BRECV		(4ULL << 60)
#define W_BIND		(5ULL << 60)
#define W_INV		(6ULL << 60)
#define W_TYPE		(15ULL << 60)

extern unsigned long removal_ms;

extern unsigned int event_mask;
extern unsigned int gap_ms;

extern unsigned long events, min_ms;
extern bool forever;

/* main.c */
uint32_t rnd(uint32_t n);
void pattern(uint64_t id, uint8_t *p, uint32_t len);
void fail(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
void note(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
/* pairs.c */
void dev_open(struct dev *d);
void set_av(struct ibv_ah_attr *ah, const struct dev *from,
	    const struct dev *to, int v6);
void fifo_push(struct fifo *f, uint64_t id, uint32_t len,
	       enum op_kind kind);
int modify_av(struct ibv_qp *qp, struct ibv_qp_attr *a, int mask);
void connect_qp(struct ibv_qp *qp, const struct dev *from,
		const struct dev *to, uint32_t peer, int v6,
		uint32_t sq_psn, uint32_t rq_psn, uint8_t rd_atomic);
void post_recv_a(struct pair *p, unsigned int slot);
void post_recv_b(struct pair *p, unsigned int slot);
bool pair_build(struct pair *p);
void pair_destroy(struct pair *p, bool check);
/* post.c */
long diff(uint64_t id, const uint8_t *p, uint32_t len);
void post_all(struct pair *p);
/* complete.c */
void verified(struct pair *p, uint32_t bytes, int side);
void poll_a(struct pair *p);
void poll_b(struct pair *p);
unsigned int in_flight(const struct pair *p);
unsigned int poll_pair(struct pair *p);
/* events.c */
void drain_events(void);
bool removed_now(void);
bool removal_explains(void);
void traffic_step(void);
void disturb(struct pair *p);
void do_event(void);

#endif /* SROCE_TOOLS_STRESS_H */
