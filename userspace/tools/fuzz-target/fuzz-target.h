/* SPDX-License-Identifier: GPL-2.0 OR Linux-OpenIB */
/*
 * sroce-fuzz-target: what its files share (main.c says what the tool does).
 * main.c plans the targets, opens both devices, creates everything, runs
 * and reports; qps.c brings the QPs up and keeps them posted and alive;
 * memory.c registers the MRs, binds the windows and writes the targets file.
 */
#ifndef SROCE_TOOLS_FUZZ_TARGET_H
#define SROCE_TOOLS_FUZZ_TARGET_H

#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "tool.h"

#define UD_QKEY		0x11111111
#define RQ_POSTED	32
#define SRQ_POSTED	128
#define ORPHAN_POSTED	32
#define SQ_DEPTH	64
#define RECV_LEN	4096
#define UD_RECV_LEN	(40 + 512)
#define FAKE_QPN	0xfa0000
#define CQ_SIZE		8192
#define BUF_SIZE	(1 << 20)
#define CHECK_MS	20

enum role { R_PLAIN, R_SRQ, R_ORPHAN, R_PROBE };

/* One QP on the device under attack, and its partner if it has one. */
struct target {
	enum ibv_qp_type type;
	enum ibv_qp_state want;
	int fam;		/* 4, 6, or 0: unconnected */
	enum ibv_mtu mtu;
	enum role role;
	struct ibv_qp *qp;
	struct ibv_qp *peer;	/* on PEER_DEV */
	uint32_t psn;		/* its first SQ and RQ PSN */
	uint32_t gen;		/* bumped on each restore */
	unsigned int posted;	/* receives, or an orphan's requests */
	uint64_t ops;		/* an orphan's requests since the restore */
	uint64_t done;		/* receives or requests completed successfully */
	unsigned int restores;
};

/* One side: the device under attack (a) or its peer (b). */
struct side {
	struct ibv_context *ctx;
	struct ibv_pd *pd;
	struct ibv_cq *cq;
	uint8_t gid_index[2];	/* IPv4, IPv6 */
	union ibv_gid gid[2];
};

/* wr_id kinds: binds, receives on a QP, on the SRQ, requests, XRC SRQ. */
enum { K_BIND, K_RECV, K_SRQ, K_ORPHAN, K_XSRQ };

extern struct side a, b;
extern struct target t[64];
extern int num_t;

/* The objects the targets share: PDs, SRQs, XRC domains, MRs, windows. */
struct objects {
	struct ibv_pd *pd2;
	struct ibv_srq *srq, *xsrq;
	struct ibv_xrcd *xrcd, *peer_xrcd;
	uint32_t xsrqn;
	struct ibv_mr *buf_mr, *mr[5];
	struct ibv_mw *mw[4];
	uint32_t mw_rkey[4];
	void *buf, *mem;
	int plain_rts4;		/* the QP type 2 windows are bound through */
};
extern struct objects o;

struct stats {
	uint64_t recv_ok, recv_err, recv_flush, send_ok, send_err, send_flush;
	uint64_t events[IBV_EVENT_WQ_FATAL + 1];
	unsigned int restores, restore_failures;
};
extern struct stats st;

extern volatile sig_atomic_t stop;
extern bool verbose;
extern long start_ms;

/* qps.c */
bool has_peer(const struct target *x);
struct ibv_qp *create_qp(struct side *s, enum ibv_qp_type type,
			 struct ibv_srq *srq, struct ibv_xrcd *xrcd);
int target_up(struct target *x);
void peer_up(struct target *x);
uint64_t wr_id(const struct target *x, unsigned int kind);
void post_srq_recv(struct ibv_srq *srq, unsigned int n);
void top_up(struct target *x);
void completion(const struct ibv_wc *wc);
void check_states(void);
/* memory.c */
void create_memory(void);
const char *type_name(enum ibv_qp_type type);
const char *state_name(enum ibv_qp_state s);
void write_file(const char *path);

#endif /* SROCE_TOOLS_FUZZ_TARGET_H */
