/* SPDX-License-Identifier: GPL-2.0 OR Linux-OpenIB */
/*
 * The tools' library: what the sroce test tools share. A clock, a random generator,
 * option and case parsing, the lines of a check table, opening a device
 * and its resources, and bringing a QP from RESET to RTS (or SQD).
 * Every function that can fail in a way a tool does not handle dies with
 * a message and exit status 2 (tool_die()).
 */
#ifndef SROCE_TOOLS_TOOL_H
#define SROCE_TOOLS_TOOL_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include <infiniband/verbs.h>

#ifndef ARRAY_SIZE
#define ARRAY_SIZE(a) (sizeof(a) / sizeof((a)[0]))
#endif

/* ---- common.c: devices, addresses, names, numbers, dying ---- */

/* Open device @name or exit with a message. */
struct ibv_context *tool_open_device(const char *name);

/* Parse an IPv4 or IPv6 address into a RoCE GID; exit on error. */
void tool_ip_to_gid(const char *ip, union ibv_gid *gid);

/* "0" for 0, else the errno's name ("EINVAL"). */
const char *tool_errname(int err);

/* The name of an asynchronous event without its IBV_EVENT_ prefix. */
const char *tool_event_name(enum ibv_event_type type);

/* "RESET", "INIT"... "ERR" for a QP state, "UNKNOWN" for anything else. */
const char *tool_qp_state_name(int state);

/*
 * "RC", "UC", "UD", "XRC_INI" (XRC send) or "XRC_TGT" (XRC receive) for
 * a QP type, @other for any other.
 */
const char *tool_qp_type_name(enum ibv_qp_type type, const char *other);

/* Parse a non-negative number or exit. */
unsigned long tool_number(const char *s, unsigned long max);

/* Print a message with the program's name and exit with status 2. */
void tool_die(const char *fmt, ...) __attribute__((format(printf, 1, 2), noreturn));

/* ---- clock.c: CLOCK_MONOTONIC and sleeping ---- */

uint64_t tool_now_ns(void);
uint64_t tool_now_us(void);
uint64_t tool_now_ms(void);
/* Seconds, as a double. */
double tool_now(void);
void tool_sleep_us(unsigned int us);
void tool_sleep_ms(unsigned int ms);
/* A seed from the clock and the pid: now_ms ^ pid << 32. */
uint64_t tool_clock_seed(void);

/* ---- rng.c: splitmix64, one uint64_t of state a stream ---- */

/* The next 64 bits of the stream @s; every seed gives a good stream. */
uint64_t tool_rng_next(uint64_t *s);
/* next % @n, 0 if @n is 0. */
uint32_t tool_rng_mod(uint64_t *s, uint32_t n);
/* Uniform in [0, @n) by multiply and shift of the top 32 bits; 0 if @n is 0. */
uint32_t tool_rng_below(uint64_t *s, uint32_t n);
/* @len bytes of the stream, 8 from each number, lowest byte first. */
void tool_rng_fill(uint64_t *s, void *buf, size_t len);

/* ---- args.c: names, lists and cases on the command line ---- */

/* The index of @s in @names (NULL entries are skipped), or -1. */
int tool_name_index(const char *const *names, unsigned int n, const char *s);

/*
 * A comma-separated list of names as a bit mask (bit i: names[i]). An
 * unknown one dies with @unknown, a format with one %s for the name.
 */
uint32_t tool_name_mask(const char *list, const char *const *names,
			unsigned int n, const char *unknown);

/*
 * An option of a tool's command line: its short letter (or a key of 256
 * and up for a long-only one), its long name (or NULL), and what it does.
 * A number is parsed with tool_number(arg, max) into a variable of the
 * type's size; CALL gets the argument, CALL0 (no argument) NULL.
 */
enum tool_opt_type {
	TOOL_OPT_FLAG,		/* no argument: *(bool *)dest = true */
	TOOL_OPT_STR,		/* *(const char **)dest = arg */
	TOOL_OPT_INT,		/* int */
	TOOL_OPT_LONG,		/* long */
	TOOL_OPT_UINT,		/* unsigned int, uint32_t */
	TOOL_OPT_ULONG,		/* unsigned long */
	TOOL_OPT_U64,		/* uint64_t */
	TOOL_OPT_CALL,
	TOOL_OPT_CALL0,
	TOOL_OPT_HELP,		/* no argument: usage(0) */
};

struct tool_opt {
	int key;
	const char *name;
	enum tool_opt_type type;
	void *dest;
	unsigned long max;
	void (*call)(const char *arg);
};

#define TOOL_FLAG(key, name, dest)	{ key, name, TOOL_OPT_FLAG, dest, 0, NULL }
#define TOOL_STR(key, name, dest)	{ key, name, TOOL_OPT_STR, dest, 0, NULL }
#define TOOL_NUM(key, name, type, dest, max) \
	{ key, name, TOOL_OPT_##type, dest, max, NULL }
#define TOOL_CALL(key, name, fn)	{ key, name, TOOL_OPT_CALL, NULL, 0, fn }
#define TOOL_CALL0(key, name, fn)	{ key, name, TOOL_OPT_CALL0, NULL, 0, fn }
#define TOOL_HELP(key, name)		{ key, name, TOOL_OPT_HELP, NULL, 0, NULL }

/*
 * -d DEV -g GID_INDEX -D PEER_DEV -G PEER_GID_INDEX (and their long
 * names) into the name and gid_index of @a and @b.
 */
#define TOOL_OPTS_DEV_PAIR(a, b)					\
	TOOL_STR('d', "dev", &(a)->name),				\
	TOOL_NUM('g', "gid-index", INT, &(a)->gid_index, 1023),		\
	TOOL_STR('D', "peer-dev", &(b)->name),				\
	TOOL_NUM('G', "peer-gid-index", INT, &(b)->gid_index, 1023)

/*
 * getopt_long() over the @n options @opts. An unknown option, or one
 * without its argument, calls @usage(2), TOOL_HELP @usage(0); @usage
 * must not return. Returns optind: the first argument not an option.
 */
int tool_getopt(int argc, char **argv, const struct tool_opt *opts,
		unsigned int n, void (*usage)(int status));

/* A named case of a tool: -c NAME picks it; without -c, the defaults run. */
struct tool_case {
	const char *name;
	void (*run)(void);
	bool by_default;
};

/*
 * A set of cases and which the command line chose (-c, repeatable).
 * @chosen has one entry per case.
 */
struct tool_cases {
	const struct tool_case *list;
	unsigned int n;
	bool *chosen;
	bool any;
};

/* -c @name: choose it, or die "no case NAME". */
void tool_case_choose(struct tool_cases *c, const char *name);
/*
 * Run the chosen cases (without -c: those by_default) in table order,
 * calling @start (if not NULL) with each one's index first.
 */
void tool_case_run(const struct tool_cases *c, void (*start)(unsigned int i));
/* " name" for each case, to @f. */
void tool_case_list(const struct tool_cases *c, FILE *f);

/* ---- report.c: a table of checks, one line each ---- */

/*
 * The lines look like
 *   [CASE ]WHAT expected WANT got GOT ok|BAD
 * each column padded to its width; no CASE column if @case_w is 0.
 */
struct tool_report {
	const char *cur;	/* the case now running */
	int case_w, what_w, val_w;
	const char *bad;	/* "FAIL", "MISMATCH" */
	unsigned int checks, failures;
};

/* One line, whose outcome is @ok; returns @ok. */
bool tool_report_line(struct tool_report *r, const char *what,
		      const char *want, const char *got, bool ok);
/* One line, ok if @want and @got are the same text. */
bool tool_check(struct tool_report *r, const char *what, const char *want,
		const char *got);
/* ok if @cond, else @detail is what was got. */
bool tool_check_true(struct tool_report *r, const char *what, bool cond,
		     const char *detail);

/* ---- verbs.c: a device's port, GIDs and resources, or die ---- */

/* Port 1's active MTU; dies "NAME: ibv_query_port failed". */
enum ibv_mtu tool_port_mtu(struct ibv_context *ctx, const char *name);
/* GID @index of port 1; dies "NAME: ibv_query_gid INDEX failed". */
void tool_query_gid(struct ibv_context *ctx, const char *name, int index,
		    union ibv_gid *gid);
/* O_NONBLOCK on @fd (an async_fd, a channel); dies "NAME: fcntl: ...". */
void tool_nonblock(int fd, const char *name);
/* dies "NAME: ibv_alloc_pd: ..." */
struct ibv_pd *tool_alloc_pd(struct ibv_context *ctx, const char *name);
/* Zeroed memory aligned to a page, a whole number of pages. */
void *tool_alloc(size_t len);
/* The smaller of two MTUs; the bytes of one. */
enum ibv_mtu tool_mtu_min(enum ibv_mtu a, enum ibv_mtu b);
uint32_t tool_mtu_bytes(enum ibv_mtu mtu);

/* ---- qp.c: bringing a QP up ---- */

/*
 * Everything the steps RESET -> INIT -> RTR -> RTS need. Each step sets
 * the attributes that IBA (and the kernel's ib_modify_qp_is_ok()) require
 * for the QP's type: INIT the P_Key index, port 1 and access flags (a UD
 * QP its Q_Key); RTR of a connected QP the address vector (port 1, GRH,
 * hop limit 64), path MTU, destination QPN and RQ PSN, and the responder's
 * max_dest_rd_atomic and min_rnr_timer (RC, XRC target); RTS the SQ PSN
 * and the requester's timeout, retry counts and max_rd_atomic (RC, XRC
 * initiator; an XRC target the timeout only). SQD, ERR and RESET: the
 * state alone.
 */
struct tool_qp_conn {
	int access;			/* INIT, not UD */
	uint32_t qkey;			/* INIT, UD */
	union ibv_gid dgid;		/* RTR, connected */
	uint8_t sgid_index;
	enum ibv_mtu mtu;
	uint32_t dest_qpn, rq_psn;
	uint8_t max_dest_rd_atomic, min_rnr_timer;
	uint32_t sq_psn;		/* RTS */
	uint8_t timeout, retry_cnt, rnr_retry, max_rd_atomic;
	/*
	 * How each step is made: 0 or an errno. NULL: ibv_modify_qp(). It
	 * may die, retry, or return the error, which stops the walk.
	 */
	int (*modify)(struct ibv_qp *qp, struct ibv_qp_attr *a, int mask,
		      void *arg);
	void *arg;
};

/* An address vector of port 1 with a GRH towards @dgid, hop limit 64. */
void tool_set_av(struct ibv_ah_attr *ah, const union ibv_gid *dgid,
		 uint8_t sgid_index);
/* The attributes of the step of a @type QP into @to; returns the mask. */
int tool_qp_attr(enum ibv_qp_type type, enum ibv_qp_state to,
		 const struct tool_qp_conn *c, struct ibv_qp_attr *a);
/*
 * Walk @qp from RESET up to @upto (INIT, RTR, RTS or SQD). Returns 0, or
 * the error of the step that failed (the QP stays where it got).
 */
int tool_qp_connect(struct ibv_qp *qp, const struct tool_qp_conn *c,
		    enum ibv_qp_state upto);
/* The QP's state, or -1 if it cannot be queried. */
int tool_qp_state(struct ibv_qp *qp);

#endif /* SROCE_TOOLS_TOOL_H */
