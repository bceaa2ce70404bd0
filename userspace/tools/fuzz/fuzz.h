/* SPDX-License-Identifier: GPL-2.0 OR Linux-OpenIB */
/*
 * sroce-fuzz: what its files share (main.c says what the tool does): the
 * opcode table, the targets and their models, packets, verdicts, the
 * generator's state and the sender's. wire.c: randomness, CRC and
 * checksums, bytes, opcodes; targets.c: the targets file; packet.c:
 * building frames and classifying them; gen.c: requests and mutations;
 * respond.c: responses, datagrams and the rest of the classes; send.c:
 * sending in batches, dumps, probes.
 */
#ifndef SROCE_TOOLS_FUZZ_H
#define SROCE_TOOLS_FUZZ_H

#define _GNU_SOURCE
#include <arpa/inet.h>
#include <errno.h>
#include <getopt.h>
#include <inttypes.h>
#include <limits.h>
#include <linux/if_packet.h>
#include <net/ethernet.h>
#include <net/if.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#include "tool.h"

#define ROCE_PORT	4791
#define GSI_QKEY	0x80010000U
#define MCAST_QPN	0xffffffU
#define PSN_MASK	0xffffffU
#define MAX_FRAME	9216
#define MAX_TARGETS	1024
#define MAX_KEYS	256
#define MAX_XSRQ	16
#define MAX_BATCH	256
#define POOL_SIZE	65536
#define ORPHAN_READ_LEN	24
#define ORPHAN_KINDS	5

extern uint64_t rng_state;

/* ---------------------------------------------------------------------- */
/*
 * The opcodes of IBA vol. 1 table 38 (and IBA 1.5's FLUSH and
 * ATOMIC_WRITE, annex A14's XRC), with the extended headers each
 * carries: the same facts as drivers/sroce/opcode.c, written down again
 * here so that a difference shows as a miscount.
 */
enum {
	F_VALID = 1 << 0,
	F_REQ = 1 << 1,
	F_RESP = 1 << 2,
	F_FIRST = 1 << 3,
	F_MIDDLE = 1 << 4,
	F_LAST = 1 << 5,
	F_PAYLOAD = 1 << 6,
	F_SEND = 1 << 7,
	F_WRITE = 1 << 8,
	F_READ = 1 << 9,
	F_ATOMIC = 1 << 10,
	F_RRESP = 1 << 11,
	F_ACK = 1 << 12,
	F_ATMACK_OP = 1 << 13,
	F_RC = 1 << 14,
	F_UC = 1 << 15,
	F_UD = 1 << 16,
	F_XRC = 1 << 17,
	F_DETH = 1 << 18,
	F_RETH = 1 << 19,
	F_ATMETH = 1 << 20,
	F_AETH = 1 << 21,
	F_ATMACK = 1 << 22,
	F_IMM = 1 << 23,
	F_IETH = 1 << 24,
	F_FETH = 1 << 25,
	F_XRCETH = 1 << 26,
	F_FLUSH = 1 << 27,
	F_AWRITE = 1 << 28,
};

#define F_ONLY		(F_FIRST | F_LAST)
#define SEND		(F_VALID | F_REQ | F_SEND | F_PAYLOAD)
#define WR		(F_VALID | F_REQ | F_WRITE | F_PAYLOAD)
#define RRESP		(F_VALID | F_RESP | F_RRESP | F_PAYLOAD)
#define ATOMIC		(F_VALID | F_REQ | F_ATOMIC | F_ONLY | F_ATMETH)

/* Operation codes (the low five bits). */
enum {
	OP_SEND_FIRST = 0x00,
	OP_SEND_MIDDLE = 0x01,
	OP_SEND_LAST = 0x02,
	OP_SEND_LAST_IMM = 0x03,
	OP_SEND_ONLY = 0x04,
	OP_SEND_ONLY_IMM = 0x05,
	OP_WRITE_FIRST = 0x06,
	OP_WRITE_MIDDLE = 0x07,
	OP_WRITE_LAST = 0x08,
	OP_WRITE_LAST_IMM = 0x09,
	OP_WRITE_ONLY = 0x0a,
	OP_WRITE_ONLY_IMM = 0x0b,
	OP_READ = 0x0c,
	OP_RRESP_FIRST = 0x0d,
	OP_RRESP_MIDDLE = 0x0e,
	OP_RRESP_LAST = 0x0f,
	OP_RRESP_ONLY = 0x10,
	OP_ACK = 0x11,
	OP_ATOMIC_ACK = 0x12,
	OP_CMP_SWAP = 0x13,
	OP_FETCH_ADD = 0x14,
	OP_SEND_LAST_INV = 0x16,
	OP_SEND_ONLY_INV = 0x17,
	OP_FLUSH = 0x1c,
	OP_ATOMIC_WRITE = 0x1d,
};

/* Transport codes (the top three bits). */
#define TR_RC	0x00
#define TR_UC	0x20
#define TR_RD	0x40
#define TR_UD	0x60
#define TR_CNP	0x80
#define TR_XRC	0xa0

struct opinfo {
	char name[32];
	uint32_t flags;
	uint8_t hdr_len;
	uint8_t xrceth, deth, feth, reth, aeth, atmack, immdt;
};

extern struct opinfo ops[256];
/* Every valid opcode, and every other one, for random choices. */
extern uint8_t valid_ops[256], invalid_ops[256];
extern int num_valid_ops, num_invalid_ops;

/* ---------------------------------------------------------------------- */
/* Targets. */

enum qtype { QT_RC, QT_UC, QT_UD, QT_GSI, QT_XRC_TGT, QT_XRC_INI, QT_OTHER };
enum qstate { QS_RESET, QS_INIT, QS_RTR, QS_RTS, QS_SQD, QS_SQE, QS_ERR };

extern const char *const qtype_names[];
extern const char *const qstate_names[];

#define RIGHT_R	1
#define RIGHT_W	2
#define RIGHT_A	4
#define FOREIGN	8	/* a key of another PD: looks fine, is refused */

/*
 * What the generator believes about a QP (open loop: it never hears
 * back). All PSNs are 24-bit.
 */
struct model {
	uint32_t epsn;		/* the PSN the responder expects */
	uint32_t upsn;		/* the oldest PSN an orphan waits an answer for */
	uint32_t msn;		/* the MSN to put in AETHs */
	uint32_t msg;		/* F_SEND or F_WRITE: a message under way */
	uint32_t left;		/* its bytes still to come */
	uint8_t last_op;	/* its LAST opcode (with IMM or IETH) */
	uint32_t imm;		/* its immediate data or rkey to invalidate */
	uint32_t srqn;		/* XRC: the SRQ it names */
};

struct tqp {
	uint32_t qpn;
	enum qtype type;
	enum qstate state;
	bool psn_known;
	uint32_t epsn, npsn, upsn;	/* at the snapshot */
	int fam;			/* 4, 6, or 0: any */
	uint32_t qkey;
	uint32_t mtu;
	unsigned int access;
	bool orphan;
	bool probe;		/* for --probe only: left alone otherwise */
	bool clean;		/* only requests that should execute */
	struct model m;
};

struct tkey {
	uint32_t rkey;
	uint64_t va, len;
	unsigned int rights;
	bool bound;		/* a type 2 window: only through @qpn */
	uint32_t qpn;
	bool dead;		/* we invalidated it */
};

extern struct tqp tq[MAX_TARGETS];
extern int num_tq;
extern struct tkey keys[MAX_KEYS];
extern int num_keys;
extern uint32_t xsrq[MAX_XSRQ];
extern int num_xsrq;
extern uint32_t port_mtu;

/* Groups of targets by what the generator does with them. */
struct group {
	int idx[MAX_TARGETS];
	int n;
};

extern struct group g_req[2];
extern struct group g_resp[2];
extern struct group g_orphan[2];
extern struct group g_ud;
extern struct group g_all;

/* ---------------------------------------------------------------------- */
/* Packets: the header fields, then the bytes. */

struct fields {
	uint8_t opcode;
	uint8_t layout;		/* whose headers to lay out: usually opcode */
	bool se, mig, ackreq;
	uint8_t pad, tver;
	uint16_t pkey;
	uint8_t resv8a;		/* FECN, BECN, reserved: masked by the ICRC */
	uint8_t resv7;		/* reserved bits of the PSN word */
	uint32_t qpn, psn;
	uint32_t srqn;		/* XRCETH */
	uint32_t qkey, sqp;	/* DETH */
	uint32_t feth;
	uint64_t va;		/* RETH or AtomicETH */
	uint32_t rkey, dmalen;
	uint64_t swap, cmp;
	uint8_t syndrome;	/* AETH */
	uint32_t msn;
	uint64_t orig;		/* AtomicAckETH */
	uint32_t imm;		/* ImmDt or IETH */
	uint32_t paylen;
	bool mad;		/* the payload starts with a MAD header */
	bool pad_garbage;	/* pad bytes not zero */
};

enum icrc_mode { ICRC_GOOD, ICRC_BAD, ICRC_NONE };
enum csum_mode { CSUM_GOOD, CSUM_ZERO, CSUM_BAD };

struct pkt {
	int fam;		/* 4 or 6 */
	uint8_t src[16], dst[16];
	bool spoofed;
	uint16_t sport;
	uint8_t tclass, ttl;
	uint32_t flow;
	uint16_t ipid;
	enum icrc_mode icrc;
	enum csum_mode csum;
	uint32_t body;		/* bytes of roce[] before the ICRC */
	uint8_t roce[MAX_FRAME];
};

/* Where frames go, and what they may weigh. */
struct net {
	uint8_t smac[6], dmac[6];
	uint8_t src4[4], dst4[4], src6[16], dst6[16];
	uint32_t max_roce[2];	/* bytes after the UDP header, per family */
};
extern struct net net;

extern uint8_t pool[POOL_SIZE];

/* ---------------------------------------------------------------------- */
/*
 * The verdict on a frame, as drivers/sroce/recv.c will reach it: the
 * UDP layer, then the header checks of IBA 9.6.1, the ICRC, the QP, the
 * QP's type and state (IBA 10.3.1), then a UD QP's Q_Key and length.
 */
enum verdict {
	V_UDP_CSUM, V_HEADER, V_ICRC, V_NO_QP, V_QP_STATE,
	V_UD_QKEY, V_UD_LONG, V_UD, V_ADDR, V_DEEP, V_NR
};

extern const char *const verdict_names[V_NR];

/* ---------------------------------------------------------------------- */
/* Generation. */

enum cls {
	C_VALID, C_MUTATED, C_RESPONSE, C_UD, C_GSI, C_ANY_STATE, C_INVALID,
	C_BAD_ICRC, C_BAD_UDP, C_NO_QP, C_NR
};

extern const char *const cls_names[C_NR];

/* Per mille. */
extern const unsigned int cls_weight[C_NR];

/* Damage done to the bytes once they are built. */
enum damage { D_NONE, D_BYTES, D_TRUNCATE };

/* What one generator call made, for the model and the summary. */
struct gen {
	struct fields f;
	struct pkt *p;
	int cls;
	struct tqp *q;		/* the target whose model it may change */
	struct model saved;	/* @q's model before */
	bool fatal;		/* should it kill @q (RC, XRC)? */
	bool psn_off;		/* its PSN is deliberately not the expected one */
	enum damage damage;
	int fam_idx;		/* 0: IPv4, 1: IPv6 */
};

enum req_kind { RK_SEND, RK_WRITE, RK_READ, RK_CAS, RK_FADD, RK_FLUSH,
		RK_AWRITE, RK_NR };

enum want { W_ANY, W_CLEAN, W_DIRTY };

struct verdicts {
	uint64_t v[V_NR];
	uint64_t cls[C_NR];
	uint64_t op[256];
	uint64_t fam[2];
	uint64_t spoofed;
	uint64_t sent, bytes;
};

/* ---------------------------------------------------------------------- */
/* Sending, in sendmmsg() batches. */

struct sender {
	int fd;
	int ifindex;
	bool dry, dump, hex;
	unsigned int batch;
	uint64_t rate;
	struct sockaddr_ll sll[2];	/* IPv4, IPv6 */
	struct mmsghdr msg[MAX_BATCH];
	struct iovec iov[MAX_BATCH];
	uint8_t frame[MAX_BATCH][MAX_FRAME];
	enum verdict v[MAX_BATCH];
	int cls[MAX_BATCH], fam[MAX_BATCH];
	bool spoofed[MAX_BATCH];
	uint8_t opcode[MAX_BATCH];
	uint32_t roce_len[MAX_BATCH];
	unsigned int n;
	struct verdicts st;
	double start;		/* tool_now() when sending began */
};
extern struct sender tx;

/* main.c */
void parse_ip(const char *s, int fam, uint8_t *out);
/* wire.c */
uint64_t rnd(void);
uint32_t below(uint32_t n);
uint32_t between(uint32_t lo, uint32_t hi);
bool chance(unsigned int permille);
int pick(const unsigned int *w, int n);
void crc_init(void);
uint32_t crc_update(uint32_t crc, const uint8_t *p, size_t n);
uint32_t csum_add(uint32_t sum, const uint8_t *p, size_t n);
uint16_t csum_fold(uint32_t sum);
void put16(uint8_t *p, uint32_t v);
void put24(uint8_t *p, uint32_t v);
void put32(uint8_t *p, uint32_t v);
void put64(uint8_t *p, uint64_t v);
uint32_t get16(const uint8_t *p);
uint32_t get32(const uint8_t *p);
void ops_init(void);
/* targets.c */
bool takes_requests(const struct tqp *q);
bool takes_responses(const struct tqp *q);
void load_targets(const char *path);
struct tqp *find_qp(uint32_t qpn);
/* packet.c */
uint32_t build_body(const struct fields *f, uint8_t *b);
uint32_t assemble(const struct pkt *p, uint8_t *fr);
enum verdict classify(const struct pkt *p, const uint8_t *fr);
/* gen.c */
void touch(struct gen *g, struct tqp *q);
uint32_t psn_add(uint32_t psn, uint32_t n);
void set_paylen(struct gen *g, uint32_t n);
void fields_init(struct gen *g, uint8_t opcode, uint32_t qpn,
		 uint32_t psn);
uint32_t pick_len(uint32_t mtu, uint32_t max);
uint8_t transport_of(const struct tqp *q);
struct tqp *pick_from(struct group *grp, int fam_idx, enum want want);
struct tqp *pick_any(void);
void gen_valid(struct gen *g, enum want want);
bool mutate_fields(struct gen *g);
void damage_bytes(struct gen *g);
void gen_mutated(struct gen *g);
/* respond.c */
void gen_gsi(struct gen *g);
uint32_t gen_one(struct pkt *p, uint8_t *fr, unsigned int fams,
		 struct gen *g, enum verdict *v);
/* send.c */
double elapsed(void);
void open_socket(const char *ifname);
void flush(void);
void dump(uint64_t index, const struct gen *g, enum verdict v,
	  const uint8_t *fr, uint32_t len);
void enqueue(uint64_t index, const struct gen *g, enum verdict v,
	     uint32_t len);
void probe(const char *spec, const char *src);

#endif /* SROCE_TOOLS_FUZZ_H */
