/* SPDX-License-Identifier: GPL-2.0 OR Linux-OpenIB */
/*
 * sroce-errors: what its files share (main.c says what the tool does).
 * ends.c opens the devices, builds, connects and destroys an RC pair, posts
 * and checks completions and states; cases.c holds the cases up to the RNR
 * ones, gone.c the cases where the responder goes away.
 */
#ifndef SROCE_TOOLS_ERRORS_H
#define SROCE_TOOLS_ERRORS_H

#define _GNU_SOURCE
#include <errno.h>
#include <getopt.h>
#include <inttypes.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "tool.h"

#define BUF_SIZE	65536
#define SQ_DEPTH	16
#define RQ_DEPTH	16
#define CQ_DEPTH	64
#define PEER_GONE_DEPTH	8
#define PEER_GONE_SIZE	16384

/* The two ends: 'a' requests, 'b' responds. */
struct dev {
	const char *name;
	struct ibv_context *ctx;
	struct ibv_pd *pd;
	int gid_index;
	union ibv_gid gid;
	enum ibv_mtu mtu;
	bool gone;			/* deleted under us (peer-gone) */
};

struct end {
	struct dev *dev;
	struct ibv_cq *cq;
	struct ibv_qp *qp;
	struct ibv_mr *mr;
	char *buf;
};

/* QP attributes a case may change. */
struct qp_params {
	uint8_t timeout;
	uint8_t retry_cnt;
	uint8_t rnr_retry;
	uint8_t min_rnr_timer;
	int access;			/* the responder MR's access flags */
};

extern struct dev dev_a, dev_b;
extern struct tool_report rep;
extern unsigned int late_ms;
extern unsigned int deadline_s;
extern unsigned int race_iterations;
extern unsigned int race_ms;

extern const struct qp_params default_params;

/* ends.c */
void info(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
void dev_open(struct dev *d);
void dev_events(struct dev *d);
void expect_event(struct end *e, const char *what,
		  enum ibv_event_type type, unsigned int ms);
unsigned long counter(const struct dev *d, const char *name);
void end_destroy(struct end *e);
int modify(struct ibv_qp *qp, struct ibv_qp_attr *a, int mask,
	   void *arg);
void end_connect(struct end *e, struct end *peer, const struct qp_params *p);
void pair_up(struct end *a, struct end *b, const struct qp_params *p);
void pair_down(struct end *a, struct end *b);
void post_send(struct end *e, uint64_t id, enum ibv_wr_opcode op,
	       uint32_t off, uint32_t len, uint64_t raddr, uint32_t rkey);
void post_recv(struct end *e, uint64_t id, uint32_t off, uint32_t len);
bool poll_one(struct end *e, struct ibv_wc *wc, unsigned int ms);
void expect_wc(struct end *e, const char *what, uint64_t id,
	       enum ibv_wc_status status, unsigned int ms);
void expect_no_wc(struct end *e, const char *what, unsigned int ms);
enum ibv_qp_state qp_state(struct end *e);
void expect_state(struct end *e, const char *what, enum ibv_qp_state state,
		  unsigned int ms);
void fill(char *p, size_t len, unsigned int seed);
/* cases.c */
void case_ok(void);
void case_bad_rkey(void);
void case_read_bounds(void);
void case_no_remote_write(void);
void case_send_too_long(void);
void case_rnr_late(void);
void case_rnr_refill(void);
void case_rnr_exhausted(void);
/* gone.c */
void case_peer_gone(void);
void case_destroy_race(void);

#endif /* SROCE_TOOLS_ERRORS_H */
