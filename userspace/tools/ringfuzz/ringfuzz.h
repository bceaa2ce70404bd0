/* SPDX-License-Identifier: GPL-2.0 OR Linux-OpenIB */
/*
 * sroce-ringfuzz: what its files share (main.c says what the tool does).
 * util.c: small helpers and the watchdog; rings.c: the devices and F's
 * rings as libsroce maps them; control.c: QP plumbing and the control
 * pair; pair.c: F and P, their doorbells, building them and finding the
 * rings; posts.c: real work requests; ringops.c: what a hostile process
 * does to the rings; judge.c: the end of a round and the resource
 * counts; sequences.c: the random sequences; cases.c: the named cases.
 */
#ifndef SROCE_TOOLS_RINGFUZZ_H
#define SROCE_TOOLS_RINGFUZZ_H

#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <sched.h>
#include <getopt.h>
#include <inttypes.h>
#include <signal.h>
#include <spawn.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <sys/wait.h>
#include <unistd.h>

#include <rdma/ib_user_verbs.h>

#include "../../../include/uapi/rdma/sroce-abi.h"
#include "tool.h"

extern char **environ;

#define F_BUF_SIZE	65536		/* F's MR: sources, targets, receives */
#define F_RECV_OFF	32768		/* F's receive slots start here */
#define F_RECV_SLOT	2048
#define P_TGT_SIZE	65536		/* P's target of WRITE, READ, atomics */
#define P_RECV_SLOTS	32
#define P_RECV_SLOT	4096
#define P_SRC_SIZE	16384
#define P_BUF_SIZE	(P_TGT_SIZE + P_RECV_SLOTS * P_RECV_SLOT + P_SRC_SIZE)
#define PROBE_MAX	1024		/* bytes of a probe SEND */
#define GRH_SIZE	40
#define F_SQ_WR		16
#define F_RQ_WR		16
#define F_SGE		4
#define F_INLINE	64
#define F_CQE		64
#define P_CQE		256
#define P_RECV_KEEP	16		/* receives P keeps posted */
#define QKEY		0x11111111
#define WAIT_MS		15000		/* any single wait for completions */

#define C_BUF_SIZE	65536		/* each control buffer */
#define C_PART		16384		/* four parts of it, see ctl */

/* wr_id tags, so that completions tell what they are. */
#define TAG_REAL	0x5245410000000000ULL	/* a post through libibverbs */
#define TAG_RAW		0x5241570000000000ULL	/* written into the ring */
#define TAG_DISC	0x4449530000000000ULL	/* ring discovery */
#define TAG_PROBE	0x50524f0000000000ULL
#define TAG_PRECV	0x5052430000000000ULL	/* P's receives */
#define TAG_FRECV	0x4652430000000000ULL	/* F's receives */
#define TAG_MASK	0xffffff0000000000ULL

/* The check lines: "CASE CHECK expected X got Y ok|FAIL". */
extern struct tool_report rep;
extern bool inject_control, inject_probe, inject_leak, inject_stall,
	    inject_evidence;

/* The fuzzing decisions of the current sequence; data bytes elsewhere. */
extern uint64_t R, data_rng;

struct progress {
	uint64_t beat;			/* tool_now_ms() of the last step */
	char what[200];			/* what the worker is doing */
};

extern struct progress *prog;
extern unsigned int stall_s;
extern bool verbose;

struct dev {
	const char *name;
	int gid_index;
	union ibv_gid gid;
	struct ibv_context *ctx;
	enum ibv_mtu mtu;
	dev_t map_dev;			/* the uverbs file, as maps shows it */
	ino_t map_ino;
};

extern struct dev dev_a, dev_b;

/**
 * struct ring - one of F's rings, as mapped by libsroce
 * @name: SQ, RQ, SRQ or CQ
 * @hdr: the mapping
 * @data: the first slot
 * @len: the mapping's length
 * @num: slots
 * @mask: @num - 1
 * @es: bytes per slot
 * @shadow: the index this process owns (producer of a work queue,
 *	    consumer of the CQ) as libsroce last published it: where the
 *	    tool puts it back
 * @moved: this process moved that index since the ring was made
 */
struct ring {
	const char *name;
	struct sroce_queue_hdr *hdr;
	uint8_t *data;
	size_t len;
	uint32_t num;
	uint32_t mask;
	uint32_t es;
	uint32_t shadow;
	bool moved;
};

#define MAX_MAPS 256

struct umap {
	uintptr_t start;
	uintptr_t end;
};

struct snapshot {
	struct umap m[MAX_MAPS];
	int n;
};

struct qp_params {
	uint8_t timeout;
	uint8_t retry_cnt;
	uint8_t rnr_retry;
	uint8_t min_rnr_timer;
};

/*
 * Each control buffer has four parts of C_PART bytes:
 *   a: 0 SEND and WRITE source, 1 receives B's SEND, 2 READ landing,
 *      3 FETCH_ADD result (8 bytes), then untouched
 *   b: 0 receives A's SEND, 1 WRITE target, 2 READ source,
 *      3 FETCH_ADD counter (8 bytes), then B's SEND source from +4096
 * img_a and img_b are what the buffers must hold.
 */
struct control {
	struct ibv_pd *pd_a, *pd_b;
	struct ibv_cq *cq_a, *cq_b;
	struct ibv_qp *qp_a, *qp_b;
	struct ibv_mr *mr_a, *mr_b;
	uint8_t *buf_a, *buf_b, *img_a, *img_b;
	bool in_flight;
	uint64_t started;
	/* the round in flight */
	uint32_t len_s, len_b, off_w, len_w, src_w, off_r, len_r;
	uint64_t add;
	unsigned int rounds;
};
extern struct control ctl;

#define C_SRC_B (3 * C_PART + 4096)

/* What lives for the whole run: PDs, MRs and windows of F and P. */
struct world {
	struct ibv_pd *pd_f, *pd_p;
	struct ibv_mr *mr_f, *mr_probe, *mr_p;
	struct ibv_mw *mw1, *mw2;
	uint8_t *buf_f, *buf_probe, *buf_p;
};
extern struct world w;

/**
 * struct fpair - one sequence's F and P
 * @type: the QP type of both
 * @cq: F's CQ, for its SQ and its RQ or SRQ
 * @srq: F's SRQ, or NULL
 * @qp: F
 * @ah: UD: F's address handle for P
 * @pcq, @pqp, @pah: P's CQ, QP and address handle for F
 * @sq, @rq, @cqr: F's rings; @rq is its RQ or its SRQ
 * @ah_num: UD: the AH number libsroce writes in F's WQEs
 * @p_posted: bit n: P's receive slot n is posted
 * @f_slot: the next of F's receive slots
 * @err_cqes, @first_err: error completions of F's work requests
 * @db_errnos, @last_errno: doorbells of F that failed
 * @err_events, @last_event: error events for F, its CQ or SRQ
 * @qp_fatal, @srq_err, @cq_err: how many of them were QP_FATAL (F),
 *	SRQ_ERR and CQ_ERR
 * @probe_*: the probe in flight: its wr_id, bytes, and what became of it
 * @ring_ops, @doorbells, @steps: what this sequence did
 */
struct fpair {
	enum ibv_qp_type type;
	struct ibv_cq *cq;
	struct ibv_srq *srq;
	struct ibv_qp *qp;
	struct ibv_ah *ah;
	struct ibv_cq *pcq;
	struct ibv_qp *pqp;
	struct ibv_ah *pah;
	struct ring sq, rq, cqr;
	uint32_t ah_num;
	uint32_t p_posted;
	unsigned int f_slot;
	unsigned int err_cqes;
	enum ibv_wc_status first_err;
	unsigned int db_errnos;
	int last_errno;
	unsigned int err_events;
	const char *last_event;
	unsigned int qp_fatal, srq_err, cq_err;
	uint64_t probe_id;
	uint32_t probe_len;
	uint8_t probe[PROBE_MAX];
	bool probe_done;
	enum ibv_wc_status probe_status;
	bool probe_arrived;
	unsigned int ring_ops, doorbells, steps;
	unsigned int hostility;
	int f_credit;
	uint64_t wr_seq;
};

extern unsigned int total_ring_ops, total_doorbells;

enum outcome {
	OUT_USABLE,
	OUT_ERR,
	OUT_FAILED,
	OUT_SILENT,	/* ERR, and nothing told the process */
};

struct counts {
	int n[5];
};

extern struct counts base_counts;

extern uint64_t run_seed;
extern unsigned int n_seq, n_usable, n_err, n_destroyed, first_seq;
extern unsigned int n_silent, first_silent;

extern unsigned int iterations;

extern const char *wait_file;

/* util.c */
uint32_t rnd(uint32_t n);
bool chance(unsigned int percent);
void fail(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
void info(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
const char *type_name(enum ibv_qp_type t);
void beat(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
void alive(void);
void pin(bool watchdog);
int watch(pid_t pid);
/* rings.c */
void dev_open(struct dev *d);
int uverbs_maps(const struct dev *d, struct umap *m);
int new_maps(const struct dev *d, const struct snapshot *before,
	     struct umap *out, int max);
void ring_set_map(struct ring *r, const char *name, struct umap m);
void ring_set_geometry(struct ring *r, uint32_t num, uint32_t es);
void *slot(const struct ring *r, uint32_t i);
uint32_t find_entry_size(const struct ring *r, uint32_t num, uint32_t i,
			 uint64_t id0, uint64_t id1);
uint32_t load_idx(const uint32_t *p);
void store_idx(uint32_t *p, uint32_t v);
uint32_t *kernel_idx(struct ring *r, bool cq);
/* control.c */
void alloc_pds(struct ibv_pd **a, struct ibv_pd **b, const char *what);
void modify(struct ibv_qp *qp, struct ibv_qp_attr *a, int mask,
	    const char *to);
void set_av(struct ibv_ah_attr *ah, const struct dev *from,
	    const struct dev *to);
void qp_connect(struct ibv_qp *qp, const struct dev *from,
		const struct dev *to, uint32_t peer_qpn,
		const struct qp_params *p, bool init_only);
struct ibv_mr *reg(struct ibv_pd *pd, void *buf, size_t len, int access);
void control_setup(void);
void control_teardown(void);
void control_start(void);
long first_diff(const uint8_t *buf, const uint8_t *img, size_t len);
void control_finish(void);
void control_round(void);
/* pair.c */
void world_setup(void);
void world_teardown(void);
void drain_events(struct fpair *fp);
int db_send(struct ibv_qp *qp, bool bogus);
void ring_sq(struct fpair *fp);
void ring_rq(struct fpair *fp);
void pair_up(struct fpair *fp, enum ibv_qp_type type, bool use_srq,
	     const struct qp_params *p);
void pair_down(struct fpair *fp, bool leak_cq);
/* posts.c */
void note_published(struct ring *r);
void note_post(struct fpair *fp, struct ring *r, int ret, bool none_bad,
	       bool posted);
void f_post_recv(struct fpair *fp, uint64_t wr_id);
void p_replenish(struct fpair *fp);
void p_poll(struct fpair *fp);
void poll_all(struct fpair *fp);
void poll_for(struct fpair *fp, unsigned int ms);
uint64_t p_tgt(uint32_t off);
void f_post_send(struct fpair *fp);
void p_post_send(struct fpair *fp);
/* ringops.c */
#define NUM_WQE_OPCODES 21
extern const uint32_t wqe_opcodes[NUM_WQE_OPCODES];
void sq_move(struct fpair *fp);
void sq_rewrite(struct fpair *fp);
void sq_rewrite_free(struct fpair *fp);
void rq_rewrite_free(struct fpair *fp);
void sq_inject(struct fpair *fp);
void rq_move(struct fpair *fp);
void rq_rewrite(struct fpair *fp);
void rq_inject(struct fpair *fp);
void cq_move(struct fpair *fp);
void cq_nudge(struct fpair *fp);
void kernel_scribble(struct fpair *fp);
void doorbell_any(struct fpair *fp);
/* judge.c */
void restore_indices(struct fpair *fp);
void settle(struct fpair *fp);
void evidence(const struct fpair *fp, char *buf, size_t len);
bool has_evidence(const struct fpair *fp);
enum outcome judge_err(struct fpair *fp, const char *when);
enum outcome judge(struct fpair *fp, unsigned int seq, unsigned int round);
bool count_resources(struct counts *c);
bool counts_equal(const struct counts *a, const struct counts *b,
		  char *buf, size_t len);
void check_resources(const char *after);
/* sequences.c */
void case_random(void);
/* cases.c */
void case_sq_producer_back(void);
void case_sq_producer_lap(void);
void case_sq_producer_past(void);
void case_sq_producer_behind(void);
void case_rq_producer_past(void);
void case_srq_producer_past(void);
void case_rq_wqe_sge(void);
void case_cq_consumer_back(void);
void case_cq_consumer_past(void);
void case_cq_full_flush(void);
void case_opcodes(void);

#endif /* SROCE_TOOLS_RINGFUZZ_H */
