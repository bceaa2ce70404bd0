/* SPDX-License-Identifier: GPL-2.0 OR Linux-OpenIB */
/*
 * sroce-traffic: what its files share (main.c says what the tool does).
 * main.c: output, failures, options and main; stream.c: the streams both
 * sides derive from the seed, and scatter lists; tcp.c: the setup
 * connection; setup.c: the device, the parameters, the QPs; initiator.c
 * and target.c: the two roles on every QP; verdict.c: the final checks;
 * loop.c: the event loop.
 */
#ifndef SROCE_TOOLS_TRAFFIC_H
#define SROCE_TOOLS_TRAFFIC_H

#define _GNU_SOURCE
#include <arpa/inet.h>
#include <endian.h>
#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <netdb.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <poll.h>
#include <signal.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#include "tool.h"

#define MAX_SGE		16	/* per work request, if the device allows */
#define MAX_QPS		256
#define NUM_POOL	3	/* source pools, one MR each */
#define NUM_SMR		2	/* scatter MRs per QP */
#define GUARD		64	/* guard bytes around every target range */
#define GRH_LEN		40
#define FILL		0xa5	/* what every unwritten target byte holds */
#define ATOM_STRIDE	16	/* an 8-byte atomic word, then a guard word */
#define LOOKBEHIND	64	/* --allow-loss: how late a message may be */
#define EXTRA_EXP	128	/* expected messages beyond the receive queue */
#define MAX_REPORTS	30
#define UD_QKEY		0x11111111
#define MSG_WORDS	(16 + MAX_QPS * 8)
#define PROTO_MAGIC	0x73726f6365747266ULL	/* "srocetrf" */
#define PROTO_VERSION	2
#define IDLE_SECS	2.0	/* --allow-loss: when the last message is late */

enum kind { K_SEND, K_SEND_IMM, K_WRITE, K_WRITE_IMM, K_READ, K_CAS, K_FADD, K_NR };

extern const char *const kind_names[K_NR];

extern const char *const kind_verbs[K_NR];

extern const enum ibv_wr_opcode wr_opcodes[K_NR];

extern const enum ibv_wc_opcode wc_opcodes[K_NR];

#define MIX_UD	(1u << K_SEND | 1u << K_SEND_IMM)
#define MIX_UC	(MIX_UD | 1u << K_WRITE | 1u << K_WRITE_IMM)
#define MIX_RC	((1u << K_NR) - 1)
#define MIX_ATOMIC (1u << K_CAS | 1u << K_FADD)

enum inject {
	INJ_NONE, INJ_DATA, INJ_IMM, INJ_READ, INJ_GUARD, INJ_ATOMIC,
	INJ_WINDOW, INJ_TALLY, INJ_HANG, INJ_NR
};

extern const char *const inject_names[INJ_NR];

/* Salts of the random streams derived from the seed. */
enum { SALT_STREAM = 1, SALT_LOCAL, SALT_RECV, SALT_POOL, SALT_ATOM, SALT_PSN };

/* One entry of a gather list (mr: pool) or a scatter list (mr: 0 or 1). */
struct seg {
	uint32_t off;
	uint32_t len;
	uint8_t mr;
};

/*
 * One operation. The fields up to lseg are the stream's (both sides
 * derive them); signaled, inl and lseg are the initiator's own choice.
 */
struct op {
	uint32_t idx;		/* in its stream */
	uint32_t len;		/* payload bytes (8 for atomics) */
	uint32_t imm;		/* host order */
	int32_t rseq;		/* which receive it consumes, or -1 */
	uint64_t roff;		/* write: window offset; read: pool offset */
	uint64_t cmp, arg, orig; /* atomics: compare, swap or add, result */
	uint8_t kind, pool, nseg, nlseg;
	bool signaled, inl;
	struct seg seg[MAX_SGE];	/* gather list: send, write */
	struct seg lseg[MAX_SGE];	/* scatter list: read, atomic result */
};

/* A generator of one stream (side, QP). */
struct stream {
	uint64_t rng;
	uint64_t atom;		/* the simulated atomic word */
	uint32_t next, nops;
	uint32_t nrecv;		/* receive-consuming ops generated */
	uint32_t count[K_NR];
	uint64_t bytes[K_NR];
};

/* A posted receive. */
struct rwqe {
	uint32_t cap;
	uint8_t nseg;
	struct seg seg[MAX_SGE];
};

/* Parameters both sides agree on (the client's options, both devices' limits). */
struct params {
	uint64_t seed;
	uint32_t qps, ops[2], max_size, mix, transport, sq_depth, rq_depth;
	uint32_t max_sge, mtu, max_msg, max_rd_atomic, pool_size, win_size;
	uint8_t ack_timeout;
	bool allow_loss;
};

struct tqp {
	uint32_t idx;
	struct ibv_qp *qp;
	struct ibv_ah *ah;
	uint32_t psn, peer_qpn, peer_psn;
	uint8_t *sbuf[NUM_SMR];
	struct ibv_mr *smr[NUM_SMR];

	/* Initiator: my stream on this QP. */
	struct stream tx;
	uint64_t lrng;
	struct op *ring;	/* sq_depth ops, by op index */
	uint32_t posted, done, since_sig;
	bool have_next;
	uint32_t rlimit;	/* the peer's credit: rseq < rlimit may go */
	uint32_t tx_count[K_NR];

	/* Target: the peer's stream on this QP. */
	struct stream rx;
	uint64_t rrng;
	uint8_t *model, *touched;	/* of my window */
	struct op *exp;		/* expected messages, by rseq */
	uint8_t *got;
	uint32_t exp_lo, exp_hi;
	struct rwqe *wqe;	/* rq_depth receives, by index */
	uint32_t wposted, wdone;
	uint32_t accounted, distinct, dups, sent_limit;
	uint32_t rx_count[K_NR];
	double last_rx;
	double credit_at;	/* --allow-loss: when credit was last forced */
};

struct options {
	const char *dev, *host, *port;
	bool server, one_way, allow_loss, verbose, mix_set, lax_grh, any_sl;
	int gid_index;
	uint32_t qps, ops, max_size, mix, sq_depth, rq_depth, timeout;
	uint32_t ack_timeout;
	uint64_t seed;
	enum ibv_qp_type transport;
	enum inject inject;
};
extern struct options opt;

/* The run: my side, the connection, the device and its objects, tallies. */
struct run {
	const char *role;
	int side;		/* 0: client, 1: server; my stream's index */
	struct params p;
	int sock;
	struct ibv_context *dev;
	struct ibv_pd *pd;
	struct ibv_comp_channel *chan;
	struct ibv_cq *scq, *rcq;
	union ibv_gid gid, peer_gid;
	uint8_t gid_index;
	bool ipv4;
	uint8_t *pool[NUM_POOL];
	struct ibv_mr *pool_mr[NUM_POOL];
	uint8_t *win, *atom;
	struct ibv_mr *win_mr, *atom_mr;
	size_t win_stride;
	struct {
		uint64_t pool_addr[NUM_POOL], win_addr, atom_addr;
		uint32_t pool_rkey[NUM_POOL], win_rkey, atom_rkey;
	} peer;
	struct tqp *qp;
	uint32_t slot_size, max_inline, exp_size;
	uint8_t *tmp_got, *tmp_exp;
	bool tx_done_sent, verdict_sent, peer_tx_done, peer_verdict;
	double peer_tx_done_at, start, deadline;
	uint32_t peer_count[MAX_QPS][K_NR];
	uint64_t peer_bytes[K_NR], tx_bytes[K_NR];
	uint64_t mismatches, peer_mismatches;
	bool injected;
	char flushed[160];	/* the first flushed completion, if any */
};
extern struct run c;

enum msg_type { M_HELLO = 1, M_INFO, M_CREDIT, M_READY, M_TXDONE, M_VERDICT };

struct caps {
	uint32_t max_sge, mtu, rd_atom, dest_rd_atom, atomic, max_wr;
};

/* main.c */
void __attribute__((format(printf, 1, 2))) say(const char *fmt, ...);
void __attribute__((format(printf, 1, 2))) mismatch(const char *fmt, ...);
bool inject(enum inject what);
void __attribute__((format(printf, 1, 2), noreturn)) fatal(const char *fmt, ...);
/* stream.c */
uint64_t seed_of(uint32_t salt, uint32_t a, uint32_t b);
uint32_t min32(uint32_t a, uint32_t b);
uint32_t max32(uint32_t a, uint32_t b);
bool kind_consumes_recv(unsigned int k);
bool kind_has_imm(unsigned int k);
bool kind_is_write(unsigned int k);
bool kind_is_atomic(unsigned int k);
bool ud(void);
void pool_fill(uint8_t *buf, uint32_t len, unsigned int i);
void stream_init(struct stream *s, int side, uint32_t q);
void gen_op(struct stream *s, struct op *op);
void build_payload(const struct op *op, uint8_t *buf);
uint8_t layout_scatter(uint64_t *s, uint32_t cap, struct seg *sg);
uint8_t *slot_addr(const struct tqp *t, uint8_t mr, uint32_t slot);
int sges_scatter(const struct tqp *t, uint32_t slot, const struct seg *sg,
		 unsigned int n, struct ibv_sge *out);
int sges_gather(const struct op *op, struct ibv_sge *out);
void scatter_read(const struct tqp *t, uint32_t slot, const struct seg *sg,
		  unsigned int n, uint8_t *out);
void scatter_flip(const struct tqp *t, uint32_t slot, const struct seg *sg,
		  unsigned int n, uint32_t pos);
bool is_fill(const uint8_t *p, size_t n);
bool check_content(const struct tqp *t, uint32_t slot, const struct seg *sg,
		   unsigned int n, uint32_t cap, uint32_t skip,
		   const uint8_t *exp, uint32_t len, bool rest, const char *what);
bool check_guards(const struct tqp *t, uint32_t slot, const struct seg *sg,
		  unsigned int n, const char *what);
void refill(const struct tqp *t, uint32_t slot, const struct seg *sg, unsigned int n);
/* tcp.c */
void send_msg(uint64_t type, const uint64_t *w, uint32_t n);
uint64_t recv_msg(uint64_t *w, uint32_t *n);
void expect_msg(uint64_t type, uint64_t *w, uint32_t n);
void handle_msg(uint64_t type, const uint64_t *w, uint32_t n);
int service_tcp(void);
int tcp_connect(void);
int tcp_accept(void);
/* setup.c */
void open_device(struct caps *caps);
uint32_t hello_words(const struct caps *caps, uint64_t *w);
void negotiate(const uint64_t *cl, const uint64_t *sv);
void create_qps(void);
void exchange_info(void);
void connect_qp(struct tqp *t);
/* initiator.c */
int post_sends(struct tqp *t);
void on_send_wc(const struct ibv_wc *wc);
/* target.c */
void replay_next(struct tqp *t, struct op *op);
void replay_more(struct tqp *t);
void post_recvs(struct tqp *t);
void send_credit(struct tqp *t, bool force);
void on_recv_wc(const struct ibv_wc *wc);
/* verdict.c */
int advance(void);
/* loop.c */
bool wc_flushed(const struct ibv_wc *wc, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));
void run(void);
void dump_outstanding(void);

#endif /* SROCE_TOOLS_TRAFFIC_H */
