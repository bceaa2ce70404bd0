// SPDX-License-Identifier: GPL-2.0 OR Linux-OpenIB
/*
 * sroce-badinput: hand a device control-path requests it must refuse, and
 * the valid requests around them, and check what the caller sees.
 *
 *   sroce-badinput -d DEV -g SGID_INDEX -r PEER_IP
 *
 * SGID_INDEX is a RoCE v2 GID of DEV, PEER_IP an address its netdev
 * reaches: the address vectors of connected QPs and AHs point at it.
 * Prints one line per case,
 *
 *   <case>  expected <errno or 0>  got <errno or 0>  ok|MISMATCH
 *
 * and exits 1 if any case went otherwise. Valid requests are checked
 * too, so that a device that refuses everything does not pass.
 *
 * "expected" is what a libibverbs caller sees, wherever the request is
 * refused. Where that is not the driver, the case's comment names who:
 * libibverbs, the provider, or the RDMA core (drivers/infiniband/core:
 * uverbs_cmd.c, verbs.c, ib_check_mr_access()). The expected values are
 * those of rdma_rxe unless sroce's kernel-doc says otherwise.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "tool.h"

#define QKEY		0x11111111
#define DEST_QPN	0x123
#define RQ_PSN		0x1000
#define SQ_PSN		0x2000
#define BUF_LEN		(64 * 1024)
#define UNKNOWN_ACCESS	(1 << 12)	/* no IBV_ACCESS_* flag */
#define WR_CAP		16384

static struct {
	struct ibv_context *ctx;
	struct ibv_device_attr dev;
	struct ibv_pd *pd;
	struct ibv_cq *cq;
	struct ibv_srq *srq;
	union ibv_gid dgid;
	uint8_t sgid_index;
	void *buf;
	unsigned int cases;
	unsigned int mismatches;
} b;

static void line(const char *name, const char *expected, const char *got,
		 bool ok)
{
	b.cases++;
	if (!ok)
		b.mismatches++;
	printf("%-52s expected %-10s got %-10s %s\n", name, expected, got,
	       ok ? "ok" : "MISMATCH");
	fflush(stdout);
}

/* A case whose outcome is an errno (0: success). */
static void check_err(const char *name, int expected, int got)
{
	line(name, tool_errname(expected), tool_errname(got), expected == got);
}

/* A case with two acceptable outcomes. */
static void check_err2(const char *name, int expected1, int expected2, int got)
{
	char e[32];

	snprintf(e, sizeof(e), "%s|%s", tool_errname(expected1),
		 tool_errname(expected2));
	line(name, e, tool_errname(got), got == expected1 || got == expected2);
}

/* A case whose outcome is a value. */
static void check_val(const char *name, unsigned long expected,
		      unsigned long got)
{
	char e[24], g[24];

	snprintf(e, sizeof(e), "%#lx", expected);
	snprintf(g, sizeof(g), "%#lx", got);
	line(name, e, g, expected == got);
}

/* A case whose outcome is a value in [lo, hi]. */
static void check_range(const char *name, unsigned long lo, unsigned long hi,
			unsigned long got)
{
	char e[48], g[24];

	snprintf(e, sizeof(e), "%lu..%lu", lo, hi);
	snprintf(g, sizeof(g), "%lu", got);
	line(name, e, g, got >= lo && got <= hi);
}

/* The errno of a create that returned @obj. */
static int create_err(const void *obj)
{
	return obj ? 0 : (errno ? errno : -1);
}

static const char *const state_names[] = {
	"RESET", "INIT", "RTR", "RTS", "SQD", "SQE", "ERR", "UNKNOWN",
};

static const char *type_name(enum ibv_qp_type type)
{
	switch (type) {
	case IBV_QPT_RC:
		return "RC";
	case IBV_QPT_UC:
		return "UC";
	case IBV_QPT_UD:
		return "UD";
	default:
		return "QP";
	}
}

/* ------------------------------------------------------------------ */
/* Queue pairs */

static struct ibv_qp *qp_create(enum ibv_qp_type type)
{
	struct ibv_qp_init_attr init = {
		.send_cq = b.cq,
		.recv_cq = b.cq,
		.cap = {
			.max_send_wr = 8,
			.max_recv_wr = 8,
			.max_send_sge = 1,
			.max_recv_sge = 1,
		},
		.qp_type = type,
	};
	struct ibv_qp *qp;

	qp = ibv_create_qp(b.pd, &init);
	if (!qp)
		tool_die("create %s QP: %s", type_name(type), strerror(errno));
	return qp;
}

static int qp_state(struct ibv_qp *qp)
{
	struct ibv_qp_init_attr init;
	struct ibv_qp_attr attr;
	int err;

	err = ibv_query_qp(qp, &attr, IBV_QP_STATE, &init);
	return err ? -err : (int)attr.qp_state;
}

static void set_av(struct ibv_ah_attr *ah)
{
	memset(ah, 0, sizeof(*ah));
	ah->is_global = 1;
	ah->port_num = 1;
	ah->grh.dgid = b.dgid;
	ah->grh.sgid_index = b.sgid_index;
	ah->grh.hop_limit = 64;
}

/*
 * The valid attributes of the step of a @type QP into state @to, for the
 * state it comes from in the usual walk (RESET->INIT->RTR->RTS->SQD, ERR
 * from anywhere, RESET from anywhere, RTS from SQD). Returns the mask.
 */
static int step_attr(enum ibv_qp_type type, enum ibv_qp_state to,
		     struct ibv_qp_attr *a)
{
	int mask = IBV_QP_STATE;

	memset(a, 0, sizeof(*a));
	a->qp_state = to;
	switch (to) {
	case IBV_QPS_INIT:
		a->pkey_index = 0;
		a->port_num = 1;
		mask |= IBV_QP_PKEY_INDEX | IBV_QP_PORT;
		if (type == IBV_QPT_UD) {
			a->qkey = QKEY;
			return mask | IBV_QP_QKEY;
		}
		a->qp_access_flags = IBV_ACCESS_REMOTE_WRITE;
		if (type == IBV_QPT_RC)
			a->qp_access_flags |= IBV_ACCESS_REMOTE_READ;
		return mask | IBV_QP_ACCESS_FLAGS;
	case IBV_QPS_RTR:
		if (type == IBV_QPT_UD)
			return mask;
		set_av(&a->ah_attr);
		a->path_mtu = IBV_MTU_1024;
		a->dest_qp_num = DEST_QPN;
		a->rq_psn = RQ_PSN;
		mask |= IBV_QP_AV | IBV_QP_PATH_MTU | IBV_QP_DEST_QPN |
			IBV_QP_RQ_PSN;
		if (type != IBV_QPT_RC)
			return mask;
		a->max_dest_rd_atomic = 4;
		a->min_rnr_timer = 12;
		return mask | IBV_QP_MAX_DEST_RD_ATOMIC | IBV_QP_MIN_RNR_TIMER;
	case IBV_QPS_RTS:
		a->sq_psn = SQ_PSN;
		mask |= IBV_QP_SQ_PSN;
		if (type != IBV_QPT_RC)
			return mask;
		a->timeout = 14;
		a->retry_cnt = 7;
		a->rnr_retry = 7;
		a->max_rd_atomic = 4;
		return mask | IBV_QP_TIMEOUT | IBV_QP_RETRY_CNT |
		       IBV_QP_RNR_RETRY | IBV_QP_MAX_QP_RD_ATOMIC;
	default:
		return mask;
	}
}

/*
 * A new @type QP brought to @state by valid steps, or NULL (reported) if
 * a step failed.
 */
static struct ibv_qp *qp_at(enum ibv_qp_type type, enum ibv_qp_state state)
{
	static const enum ibv_qp_state walk[] = {
		IBV_QPS_INIT, IBV_QPS_RTR, IBV_QPS_RTS, IBV_QPS_SQD,
	};
	struct ibv_qp *qp = qp_create(type);
	struct ibv_qp_attr a;
	char name[64];
	unsigned int i;
	int err, mask;

	for (i = 0; i < ARRAY_SIZE(walk); i++) {
		if (state == IBV_QPS_RESET || (state != IBV_QPS_ERR &&
					       walk[i] > state))
			break;
		mask = step_attr(type, walk[i], &a);
		err = ibv_modify_qp(qp, &a, mask);
		if (err) {
			snprintf(name, sizeof(name), "setup: %s to %s",
				 type_name(type), state_names[walk[i]]);
			check_err(name, 0, err);
			ibv_destroy_qp(qp);
			return NULL;
		}
	}
	if (state == IBV_QPS_ERR) {
		mask = step_attr(type, IBV_QPS_ERR, &a);
		err = ibv_modify_qp(qp, &a, mask);
		if (err) {
			check_err("setup: to ERR", 0, err);
			ibv_destroy_qp(qp);
			return NULL;
		}
	}
	return qp;
}

/* Attribute values a case changes from the valid ones. */
enum field {
	F_NONE,
	F_STATE,
	F_CUR_STATE,
	F_PORT,
	F_PKEY_INDEX,
	F_ACCESS,
	F_PATH_MTU,
	F_DEST_QPN,
	F_MAX_DEST_RD_ATOMIC,
	F_MIN_RNR_TIMER,
	F_TIMEOUT,
	F_RETRY_CNT,
	F_RNR_RETRY,
	F_MAX_RD_ATOMIC,
	F_ALT_PATH,
	F_PATH_MIG,
	F_AV,
};

static void set_field(struct ibv_qp_attr *a, enum field f, unsigned int v)
{
	switch (f) {
	case F_NONE:
		break;
	case F_STATE:
		a->qp_state = v;
		break;
	case F_CUR_STATE:
		a->cur_qp_state = v;
		break;
	case F_PORT:
		a->port_num = v;
		break;
	case F_PKEY_INDEX:
		a->pkey_index = v;
		break;
	case F_ACCESS:
		a->qp_access_flags = v;
		break;
	case F_PATH_MTU:
		a->path_mtu = v;
		break;
	case F_DEST_QPN:
		a->dest_qp_num = v;
		break;
	case F_MAX_DEST_RD_ATOMIC:
		a->max_dest_rd_atomic = v;
		break;
	case F_MIN_RNR_TIMER:
		a->min_rnr_timer = v;
		break;
	case F_TIMEOUT:
		a->timeout = v;
		break;
	case F_RETRY_CNT:
		a->retry_cnt = v;
		break;
	case F_RNR_RETRY:
		a->rnr_retry = v;
		break;
	case F_MAX_RD_ATOMIC:
		a->max_rd_atomic = v;
		break;
	case F_ALT_PATH:
		set_av(&a->alt_ah_attr);
		a->alt_port_num = 1;
		a->alt_pkey_index = 0;
		a->alt_timeout = v;
		break;
	case F_PATH_MIG:
		a->path_mig_state = v;
		break;
	case F_AV:
		set_av(&a->ah_attr);
		break;
	}
}

/*
 * One modify_qp case: a @type QP in state @from is asked to go to @to
 * with the valid attributes of that step, changed by @add and @drop (mask
 * bits) and @field = @value.
 */
struct mod_case {
	const char *name;
	enum ibv_qp_type type;
	enum ibv_qp_state from;
	enum ibv_qp_state to;
	int add;
	int drop;
	enum field field;
	unsigned int value;
	int err;
};

#define RC IBV_QPT_RC
#define UC IBV_QPT_UC
#define UD IBV_QPT_UD
#define RESET IBV_QPS_RESET
#define INIT IBV_QPS_INIT
#define RTR IBV_QPS_RTR
#define RTS IBV_QPS_RTS
#define SQD IBV_QPS_SQD
#define ERR IBV_QPS_ERR
#define T(n, t, f, s) .name = n, .type = t, .from = f, .to = s

static const struct mod_case mod_cases[] = {
	/* Transitions the state diagram (IBA 10.3.1) does not have. */
	{ T("RC RESET->RTR", RC, RESET, RTR), .err = EINVAL },
	{ T("RC RESET->RTS", RC, RESET, RTS), .err = EINVAL },
	{ T("RC RESET->SQD", RC, RESET, SQD), .err = EINVAL },
	{ T("RC INIT->RTS", RC, INIT, RTS), .err = EINVAL },
	{ T("RC INIT->SQD", RC, INIT, SQD), .err = EINVAL },
	{ T("RC RTR->INIT", RC, RTR, INIT), .err = EINVAL },
	{ T("RC RTR->RTR", RC, RTR, RTR), .err = EINVAL },
	{ T("RC RTS->RTR", RC, RTS, RTR), .err = EINVAL },
	{ T("RC RTS->INIT", RC, RTS, INIT), .err = EINVAL },
	{ T("RC ERR->RTS", RC, ERR, RTS), .err = EINVAL },
	{ T("RC ERR->INIT", RC, ERR, INIT), .err = EINVAL },
	/* Not even to ERR: the kernel's table has no RESET->ERR. */
	{ T("RC RESET->ERR", RC, RESET, ERR), .err = EINVAL },
	{ T("UD RESET->ERR", UD, RESET, ERR), .err = EINVAL },
	{ T("UD RESET->RTS", UD, RESET, RTS), .err = EINVAL },
	{ T("UC INIT->RTS", UC, INIT, RTS), .err = EINVAL },
	/* The core refuses a state past ERR (uverbs_cmd.c modify_qp()). */
	{ T("RC RESET->qp_state 7", RC, RESET, INIT), .field = F_STATE,
	  .value = 7, .err = EINVAL },

	/* Required attributes missing (IBA 11.2.4.2, ib_modify_qp_is_ok()). */
	{ T("RC RESET->INIT without PORT", RC, RESET, INIT),
	  .drop = IBV_QP_PORT, .err = EINVAL },
	{ T("RC RESET->INIT without PKEY_INDEX", RC, RESET, INIT),
	  .drop = IBV_QP_PKEY_INDEX, .err = EINVAL },
	{ T("RC RESET->INIT without ACCESS_FLAGS", RC, RESET, INIT),
	  .drop = IBV_QP_ACCESS_FLAGS, .err = EINVAL },
	{ T("UD RESET->INIT without QKEY", UD, RESET, INIT),
	  .drop = IBV_QP_QKEY, .err = EINVAL },
	{ T("RC INIT->RTR without AV", RC, INIT, RTR),
	  .drop = IBV_QP_AV, .err = EINVAL },
	{ T("RC INIT->RTR without DEST_QPN", RC, INIT, RTR),
	  .drop = IBV_QP_DEST_QPN, .err = EINVAL },
	{ T("RC INIT->RTR without PATH_MTU", RC, INIT, RTR),
	  .drop = IBV_QP_PATH_MTU, .err = EINVAL },
	{ T("RC INIT->RTR without RQ_PSN", RC, INIT, RTR),
	  .drop = IBV_QP_RQ_PSN, .err = EINVAL },
	{ T("RC INIT->RTR without MAX_DEST_RD_ATOMIC", RC, INIT, RTR),
	  .drop = IBV_QP_MAX_DEST_RD_ATOMIC, .err = EINVAL },
	{ T("RC INIT->RTR without MIN_RNR_TIMER", RC, INIT, RTR),
	  .drop = IBV_QP_MIN_RNR_TIMER, .err = EINVAL },
	{ T("UC INIT->RTR without AV", UC, INIT, RTR),
	  .drop = IBV_QP_AV, .err = EINVAL },
	{ T("UC INIT->RTR without DEST_QPN", UC, INIT, RTR),
	  .drop = IBV_QP_DEST_QPN, .err = EINVAL },
	{ T("RC RTR->RTS without SQ_PSN", RC, RTR, RTS),
	  .drop = IBV_QP_SQ_PSN, .err = EINVAL },
	{ T("RC RTR->RTS without TIMEOUT", RC, RTR, RTS),
	  .drop = IBV_QP_TIMEOUT, .err = EINVAL },
	{ T("RC RTR->RTS without RETRY_CNT", RC, RTR, RTS),
	  .drop = IBV_QP_RETRY_CNT, .err = EINVAL },
	{ T("RC RTR->RTS without RNR_RETRY", RC, RTR, RTS),
	  .drop = IBV_QP_RNR_RETRY, .err = EINVAL },
	{ T("RC RTR->RTS without MAX_QP_RD_ATOMIC", RC, RTR, RTS),
	  .drop = IBV_QP_MAX_QP_RD_ATOMIC, .err = EINVAL },
	{ T("UD RTR->RTS without SQ_PSN", UD, RTR, RTS),
	  .drop = IBV_QP_SQ_PSN, .err = EINVAL },

	/* Attributes the transition does not allow. */
	{ T("RC RESET->INIT with SQ_PSN", RC, RESET, INIT),
	  .add = IBV_QP_SQ_PSN, .err = EINVAL },
	{ T("UD INIT->RTR with AV", UD, INIT, RTR),
	  .add = IBV_QP_AV, .field = F_AV, .err = EINVAL },
	{ T("UC INIT->RTR with MAX_DEST_RD_ATOMIC", UC, INIT, RTR),
	  .add = IBV_QP_MAX_DEST_RD_ATOMIC, .err = EINVAL },

	/* Values out of range. */
	/* The core checks the port (uverbs_cmd.c modify_qp()). */
	{ T("RC RESET->INIT port 2", RC, RESET, INIT),
	  .field = F_PORT, .value = 2, .err = EINVAL },
	{ T("RC RESET->INIT pkey_index 1", RC, RESET, INIT),
	  .field = F_PKEY_INDEX, .value = 1, .err = EINVAL },
	{ T("RC RESET->INIT access unknown bit", RC, RESET, INIT),
	  .field = F_ACCESS, .value = IBV_ACCESS_REMOTE_WRITE | UNKNOWN_ACCESS,
	  .err = EINVAL },
	{ T("RC INIT->RTR path_mtu 0", RC, INIT, RTR),
	  .field = F_PATH_MTU, .value = 0, .err = EINVAL },
	{ T("RC INIT->RTR path_mtu 6", RC, INIT, RTR),
	  .field = F_PATH_MTU, .value = 6, .err = EINVAL },
	{ T("UC INIT->RTR path_mtu 6", UC, INIT, RTR),
	  .field = F_PATH_MTU, .value = 6, .err = EINVAL },
	{ T("RC INIT->RTR dest_qp_num 1<<24", RC, INIT, RTR),
	  .field = F_DEST_QPN, .value = 1 << 24, .err = EINVAL },
	{ T("RC INIT->RTR max_dest_rd_atomic 129", RC, INIT, RTR),
	  .field = F_MAX_DEST_RD_ATOMIC, .value = 129, .err = EINVAL },
	{ T("RC INIT->RTR min_rnr_timer 32", RC, INIT, RTR),
	  .field = F_MIN_RNR_TIMER, .value = 32, .err = EINVAL },
	{ T("RC RTR->RTS timeout 32", RC, RTR, RTS),
	  .field = F_TIMEOUT, .value = 32, .err = EINVAL },
	{ T("RC RTR->RTS retry_cnt 8", RC, RTR, RTS),
	  .field = F_RETRY_CNT, .value = 8, .err = EINVAL },
	{ T("RC RTR->RTS rnr_retry 8", RC, RTR, RTS),
	  .field = F_RNR_RETRY, .value = 8, .err = EINVAL },
	{ T("RC RTR->RTS max_rd_atomic 129", RC, RTR, RTS),
	  .field = F_MAX_RD_ATOMIC, .value = 129, .err = EINVAL },
	{ T("RC RTR->RTS cur_qp_state INIT (is RTR)", RC, RTR, RTS),
	  .add = IBV_QP_CUR_STATE, .field = F_CUR_STATE, .value = INIT,
	  .err = EINVAL },
	{ T("RC RTS->RTS cur_qp_state SQD (is RTS)", RC, RTS, RTS),
	  .drop = ~(IBV_QP_STATE), .add = IBV_QP_CUR_STATE,
	  .field = F_CUR_STATE, .value = SQD, .err = EINVAL },

	/*
	 * Alternate paths: sroce's kernel-doc says -EOPNOTSUPP, but the RDMA
	 * core bans alternate paths on RoCE ports with -EINVAL before the
	 * driver is asked (verbs.c _ib_modify_qp()). A path migration state
	 * alone reaches the driver.
	 */
	{ T("RC INIT->RTR with ALT_PATH", RC, INIT, RTR),
	  .add = IBV_QP_ALT_PATH, .field = F_ALT_PATH, .value = 14,
	  .err = EINVAL },
	{ T("RC RTR->RTS with PATH_MIG_STATE", RC, RTR, RTS),
	  .add = IBV_QP_PATH_MIG_STATE, .field = F_PATH_MIG,
	  .value = IBV_MIG_MIGRATED, .err = EOPNOTSUPP },

	/* Valid requests next to the invalid ones. */
	{ T("RC RTR->RTS cur_qp_state RTR", RC, RTR, RTS),
	  .add = IBV_QP_CUR_STATE, .field = F_CUR_STATE, .value = RTR },
	{ T("RC RESET->RESET", RC, RESET, RESET) },
	{ T("RC RESET->INIT pkey_index 0 port 1", RC, RESET, INIT) },
	{ T("RC RESET->INIT access LOCAL_WRITE|ATOMIC", RC, RESET, INIT),
	  .field = F_ACCESS, .value = IBV_ACCESS_LOCAL_WRITE |
	  IBV_ACCESS_REMOTE_ATOMIC | IBV_ACCESS_REMOTE_READ |
	  IBV_ACCESS_REMOTE_WRITE },
	{ T("RC INIT->RTR path_mtu 4096", RC, INIT, RTR),
	  .field = F_PATH_MTU, .value = IBV_MTU_4096 },
	{ T("RC INIT->RTR dest_qp_num 0xffffff", RC, INIT, RTR),
	  .field = F_DEST_QPN, .value = 0xffffff },
	{ T("RC INIT->RTR max_dest_rd_atomic 128", RC, INIT, RTR),
	  .field = F_MAX_DEST_RD_ATOMIC, .value = 128 },
	{ T("RC RTR->RTS timeout 31", RC, RTR, RTS),
	  .field = F_TIMEOUT, .value = 31 },
	{ T("RC RTR->RTS max_rd_atomic 128", RC, RTR, RTS),
	  .field = F_MAX_RD_ATOMIC, .value = 128 },
	{ T("RC RTS->SQD", RC, RTS, SQD) },
	{ T("UC RTS->SQD", UC, RTS, SQD) },
	{ T("UD RTS->SQD", UD, RTS, SQD) },
	{ T("RC SQD->RTS", RC, SQD, RTS), .drop = ~(IBV_QP_STATE) },
};

static void run_mod_case(const struct mod_case *c)
{
	struct ibv_qp_attr a;
	struct ibv_qp *qp;
	char name[96];
	int mask, err, before, after;

	qp = qp_at(c->type, c->from);
	if (!qp)
		return;
	mask = (step_attr(c->type, c->to, &a) & ~c->drop) | c->add;
	set_field(&a, c->field, c->value);
	before = qp_state(qp);
	err = ibv_modify_qp(qp, &a, mask);
	check_err(c->name, c->err, err);

	/* A refused request changes nothing; a granted one the state. */
	after = qp_state(qp);
	if (after != (c->err ? before : (int)c->to)) {
		snprintf(name, sizeof(name), "%s: state after", c->name);
		line(name, state_names[c->err ? before : (int)c->to],
		     after < 0 ? tool_errname(-after) : state_names[after],
		     false);
	}
	ibv_destroy_qp(qp);
}

/* What query_qp returns after a full walk to RTS with step_attr(). */
static void check_query(struct ibv_qp *qp, enum ibv_qp_type type)
{
	struct ibv_qp_init_attr init;
	struct ibv_qp_attr a;
	const char *t = type_name(type);
	char n[64];
	int err;

#define CHECK(field, value)						\
	do {								\
		snprintf(n, sizeof(n), "%s query_qp " #field, t);	\
		check_val(n, value, a.field);				\
	} while (0)

	memset(&a, 0xa5, sizeof(a));
	err = ibv_query_qp(qp, &a, IBV_QP_STATE | IBV_QP_PKEY_INDEX |
			   IBV_QP_PORT | IBV_QP_QKEY | IBV_QP_AV |
			   IBV_QP_PATH_MTU | IBV_QP_TIMEOUT |
			   IBV_QP_RETRY_CNT | IBV_QP_RNR_RETRY |
			   IBV_QP_RQ_PSN | IBV_QP_MAX_QP_RD_ATOMIC |
			   IBV_QP_MIN_RNR_TIMER | IBV_QP_SQ_PSN |
			   IBV_QP_MAX_DEST_RD_ATOMIC | IBV_QP_CAP |
			   IBV_QP_DEST_QPN | IBV_QP_ACCESS_FLAGS, &init);
	snprintf(n, sizeof(n), "%s query_qp", t);
	check_err(n, 0, err);
	if (err)
		return;
	CHECK(qp_state, IBV_QPS_RTS);
	CHECK(pkey_index, 0);
	CHECK(port_num, 1);
	CHECK(sq_psn, SQ_PSN);
	if (type == IBV_QPT_UD) {
		CHECK(qkey, QKEY);
	} else {
		CHECK(path_mtu, IBV_MTU_1024);
		CHECK(dest_qp_num, DEST_QPN);
		CHECK(rq_psn, RQ_PSN);
		CHECK(ah_attr.is_global, 1);
		CHECK(ah_attr.port_num, 1);
		CHECK(ah_attr.grh.sgid_index, b.sgid_index);
		CHECK(ah_attr.grh.hop_limit, 64);
		snprintf(n, sizeof(n), "%s query_qp ah_attr.grh.dgid", t);
		check_err(n, 0, memcmp(&a.ah_attr.grh.dgid, &b.dgid,
				       sizeof(b.dgid)) ? EBADMSG : 0);
	}
	if (type == IBV_QPT_RC) {
		CHECK(qp_access_flags, IBV_ACCESS_REMOTE_WRITE |
		      IBV_ACCESS_REMOTE_READ);
		CHECK(timeout, 14);
		CHECK(retry_cnt, 7);
		CHECK(rnr_retry, 7);
		CHECK(min_rnr_timer, 12);
		CHECK(max_rd_atomic, 4);
		CHECK(max_dest_rd_atomic, 4);
	}
	snprintf(n, sizeof(n), "%s query_qp cap.max_send_wr", t);
	check_range(n, 8, b.dev.max_qp_wr, a.cap.max_send_wr);
	snprintf(n, sizeof(n), "%s query_qp cap.max_recv_wr", t);
	check_range(n, 8, b.dev.max_qp_wr, a.cap.max_recv_wr);
	snprintf(n, sizeof(n), "%s query_qp init qp_type", t);
	check_val(n, type, init.qp_type);
#undef CHECK
}

/*
 * The full walk RESET->INIT->RTR->RTS, the attributes read back, then
 * RTS->SQD->RTS->ERR->RESET and the QP usable again.
 */
static void valid_walk(enum ibv_qp_type type)
{
	static const enum ibv_qp_state walk[] = {
		IBV_QPS_INIT, IBV_QPS_RTR, IBV_QPS_RTS, IBV_QPS_SQD,
		IBV_QPS_RTS, IBV_QPS_ERR, IBV_QPS_RESET, IBV_QPS_INIT,
	};
	struct ibv_qp *qp = qp_create(type);
	struct ibv_qp_attr a;
	enum ibv_qp_state from = IBV_QPS_RESET;
	unsigned int i;
	char n[64];
	int mask;

	for (i = 0; i < ARRAY_SIZE(walk); i++) {
		mask = step_attr(type, walk[i], &a);
		if (from == IBV_QPS_SQD)	/* SQD->RTS needs nothing */
			mask = IBV_QP_STATE;
		snprintf(n, sizeof(n), "%s walk %s->%s", type_name(type),
			 state_names[from], state_names[walk[i]]);
		check_err(n, 0, ibv_modify_qp(qp, &a, mask));
		snprintf(n, sizeof(n), "%s walk %s->%s: state", type_name(type),
			 state_names[from], state_names[walk[i]]);
		check_val(n, walk[i], qp_state(qp));
		if (walk[i] == IBV_QPS_RTS && from == IBV_QPS_RTR)
			check_query(qp, type);
		from = walk[i];
	}
	ibv_destroy_qp(qp);
}

/* From each state but RESET, to ERR and back to RESET. */
static void valid_err_reset(enum ibv_qp_type type)
{
	static const enum ibv_qp_state states[] = {
		IBV_QPS_INIT, IBV_QPS_RTR, IBV_QPS_RTS, IBV_QPS_SQD,
		IBV_QPS_ERR,
	};
	struct ibv_qp_attr a = {};
	struct ibv_qp *qp;
	unsigned int i;
	char n[64];

	for (i = 0; i < ARRAY_SIZE(states); i++) {
		qp = qp_at(type, states[i]);
		if (!qp)
			continue;
		a.qp_state = IBV_QPS_ERR;
		snprintf(n, sizeof(n), "%s %s->ERR", type_name(type),
			 state_names[states[i]]);
		check_err(n, 0, ibv_modify_qp(qp, &a, IBV_QP_STATE));
		a.qp_state = IBV_QPS_RESET;
		snprintf(n, sizeof(n), "%s %s->ERR->RESET", type_name(type),
			 state_names[states[i]]);
		check_err(n, 0, ibv_modify_qp(qp, &a, IBV_QP_STATE));
		snprintf(n, sizeof(n), "%s %s->ERR->RESET: state",
			 type_name(type), state_names[states[i]]);
		check_val(n, IBV_QPS_RESET, qp_state(qp));
		ibv_destroy_qp(qp);
	}
}

/* PSNs are 24 bits: the core masks bigger ones (and logs that it did). */
static void psn_cases(void)
{
	struct ibv_qp_init_attr init;
	struct ibv_qp_attr a;
	struct ibv_qp *qp;
	int mask;

	qp = qp_at(IBV_QPT_RC, IBV_QPS_INIT);
	if (!qp)
		return;
	mask = step_attr(IBV_QPT_RC, IBV_QPS_RTR, &a);
	a.rq_psn = 0xff123456;
	check_err("RC INIT->RTR rq_psn 0xff123456", 0,
		  ibv_modify_qp(qp, &a, mask));
	mask = step_attr(IBV_QPT_RC, IBV_QPS_RTS, &a);
	a.sq_psn = 0x1abcdef;
	check_err("RC RTR->RTS sq_psn 0x1abcdef", 0,
		  ibv_modify_qp(qp, &a, mask));
	memset(&a, 0, sizeof(a));
	check_err("RC query_qp PSNs", 0,
		  ibv_query_qp(qp, &a, IBV_QP_RQ_PSN | IBV_QP_SQ_PSN, &init));
	check_val("RC query_qp rq_psn (24 bits)", 0x123456, a.rq_psn);
	check_val("RC query_qp sq_psn (24 bits)", 0xabcdef, a.sq_psn);
	ibv_destroy_qp(qp);
}

static int try_create_qp(enum ibv_qp_type type, const struct ibv_qp_cap *cap,
			 bool srq, struct ibv_qp_cap *out)
{
	struct ibv_qp_init_attr init = {
		.send_cq = b.cq,
		.recv_cq = b.cq,
		.srq = srq ? b.srq : NULL,
		.cap = *cap,
		.qp_type = type,
	};
	struct ibv_qp *qp;

	errno = 0;
	qp = ibv_create_qp(b.pd, &init);
	if (!qp)
		return create_err(qp);
	if (out)
		*out = init.cap;
	ibv_destroy_qp(qp);
	return 0;
}

static void qp_create_cases(void)
{
	const struct ibv_qp_cap ok = {
		.max_send_wr = 16, .max_recv_wr = 16,
		.max_send_sge = 1, .max_recv_sge = 1,
	};
	struct ibv_qp_cap cap, out;

	cap = ok;
	cap.max_send_wr = b.dev.max_qp_wr + 1;
	check_err("create_qp max_send_wr max_qp_wr+1", EINVAL,
		  try_create_qp(IBV_QPT_RC, &cap, false, NULL));
	cap = ok;
	cap.max_recv_wr = b.dev.max_qp_wr + 1;
	check_err("create_qp max_recv_wr max_qp_wr+1", EINVAL,
		  try_create_qp(IBV_QPT_RC, &cap, false, NULL));
	cap = ok;
	cap.max_send_sge = b.dev.max_sge + 1;
	check_err("create_qp max_send_sge max_sge+1", EINVAL,
		  try_create_qp(IBV_QPT_RC, &cap, false, NULL));
	cap = ok;
	cap.max_recv_sge = b.dev.max_sge + 1;
	check_err("create_qp max_recv_sge max_sge+1", EINVAL,
		  try_create_qp(IBV_QPT_UD, &cap, false, NULL));
	cap = ok;
	cap.max_inline_data = 513;
	check_err("create_qp max_inline_data 513", EINVAL,
		  try_create_qp(IBV_QPT_RC, &cap, false, NULL));
	/* An XRC send QP has no RQ: the receive sizes are ignored. */
	check_err("create_qp type XRC_SEND", 0,
		  try_create_qp(IBV_QPT_XRC_SEND, &ok, false, NULL));
	/* QP types sroce does not have (its kernel-doc: -EOPNOTSUPP). */
	check_err("create_qp type RAW_PACKET", EOPNOTSUPP,
		  try_create_qp(IBV_QPT_RAW_PACKET, &ok, false, NULL));

	/*
	 * The limits themselves are fine (WRs capped, for devices whose
	 * limit is more than a test VM's memory: rdma_rxe's is 2^20).
	 */
	cap.max_send_wr = b.dev.max_qp_wr < WR_CAP ? b.dev.max_qp_wr : WR_CAP;
	cap.max_recv_wr = cap.max_send_wr;
	cap.max_send_sge = b.dev.max_sge;
	cap.max_recv_sge = b.dev.max_sge;
	cap.max_inline_data = 512;
	memset(&out, 0, sizeof(out));
	check_err("create_qp at every limit", 0,
		  try_create_qp(IBV_QPT_RC, &cap, false, &out));
	check_range("create_qp at every limit: max_send_wr", cap.max_send_wr,
		    b.dev.max_qp_wr, out.max_send_wr);
	check_range("create_qp at every limit: max_send_sge", cap.max_send_sge,
		    b.dev.max_sge, out.max_send_sge);
	check_range("create_qp at every limit: max_inline_data", 512, 512,
		    out.max_inline_data);
	/* On an SRQ the receive sizes do not apply (IBA 11.2.4.1). */
	cap = ok;
	cap.max_recv_wr = b.dev.max_qp_wr + 1;
	check_err("create_qp on SRQ, max_recv_wr ignored", 0,
		  try_create_qp(IBV_QPT_RC, &cap, true, NULL));
}

/* ------------------------------------------------------------------ */
/* Completion queues */

static int try_create_cq(int cqe, int vector, int *actual)
{
	struct ibv_cq *cq;

	errno = 0;
	cq = ibv_create_cq(b.ctx, cqe, NULL, NULL, vector);
	if (!cq)
		return create_err(cq);
	if (actual)
		*actual = cq->cqe;
	ibv_destroy_cq(cq);
	return 0;
}

static void cq_cases(void)
{
	struct ibv_cq *cq;
	int actual = 0;

	check_err("create_cq cqe 0", EINVAL, try_create_cq(0, 0, NULL));
	check_err("create_cq cqe max_cqe+1", EINVAL,
		  try_create_cq(b.dev.max_cqe + 1, 0, NULL));
	check_err("create_cq cqe INT32_MAX", EINVAL,
		  try_create_cq(INT32_MAX, 0, NULL));
	check_err("create_cq cqe -1", EINVAL, try_create_cq(-1, 0, NULL));
	/* The core checks the vector (uverbs_cmd.c create_cq()). */
	check_err("create_cq comp_vector num_comp_vectors", EINVAL,
		  try_create_cq(16, b.ctx->num_comp_vectors, NULL));

	check_err("create_cq cqe 1", 0, try_create_cq(1, 0, &actual));
	check_range("create_cq cqe 1: cq->cqe", 1, b.dev.max_cqe, actual);
	actual = 0;
	check_err("create_cq cqe max_cqe", 0,
		  try_create_cq(b.dev.max_cqe, 0, &actual));
	/* IBA 11.2.8.1: at least what was asked; never past max_cqe. */
	check_range("create_cq cqe max_cqe: cq->cqe", b.dev.max_cqe,
		    b.dev.max_cqe, actual);

	cq = ibv_create_cq(b.ctx, 16, NULL, NULL, 0);
	if (!cq)
		tool_die("create_cq: %s", strerror(errno));
	check_err("resize_cq 0", EINVAL, ibv_resize_cq(cq, 0));
	check_err("resize_cq max_cqe+1", EINVAL,
		  ibv_resize_cq(cq, b.dev.max_cqe + 1));
	check_err("resize_cq 100", 0, ibv_resize_cq(cq, 100));
	check_range("resize_cq 100: cq->cqe", 100, b.dev.max_cqe, cq->cqe);
	check_err("destroy resized cq", 0, ibv_destroy_cq(cq));
}

/* ------------------------------------------------------------------ */
/* Shared receive queues */

static int try_create_srq(uint32_t max_wr, uint32_t max_sge, uint32_t limit)
{
	struct ibv_srq_init_attr init = {
		.attr = { .max_wr = max_wr, .max_sge = max_sge,
			  .srq_limit = limit },
	};
	struct ibv_srq *srq;

	errno = 0;
	srq = ibv_create_srq(b.pd, &init);
	if (!srq)
		return create_err(srq);
	ibv_destroy_srq(srq);
	return 0;
}

static void srq_cases(void)
{
	struct ibv_srq_attr a;

	check_err("create_srq max_wr 0", EINVAL, try_create_srq(0, 1, 0));
	check_err("create_srq max_wr max_srq_wr+1", EINVAL,
		  try_create_srq(b.dev.max_srq_wr + 1, 1, 0));
	check_err("create_srq max_sge max_srq_sge+1", EINVAL,
		  try_create_srq(16, b.dev.max_srq_sge + 1, 0));
	/*
	 * srq_limit means nothing at creation (IBA 11.2.3.1, ibv_create_srq(3)):
	 * accepted and not armed, as rdma_rxe does.
	 */
	check_err("create_srq srq_limit > max_wr", 0,
		  try_create_srq(16, 1, 17));
	check_err("create_srq at the limits", 0,
		  try_create_srq(b.dev.max_srq_wr < WR_CAP ? b.dev.max_srq_wr :
				 WR_CAP, b.dev.max_srq_sge, 0));

	/* b.srq: max_wr 16, max_sge 1 */
	memset(&a, 0, sizeof(a));
	check_err("query_srq", 0, ibv_query_srq(b.srq, &a));
	check_range("query_srq max_wr", 16, b.dev.max_srq_wr, a.max_wr);
	/* Resizes (IBV_DEVICE_SRQ_RESIZE): in range, or EINVAL. */
	a.max_wr = b.dev.max_srq_wr + 1;
	check_err("modify_srq MAX_WR max_srq_wr+1", EINVAL,
		  ibv_modify_srq(b.srq, &a, IBV_SRQ_MAX_WR));
	a.max_wr = 0;
	check_err("modify_srq MAX_WR 0", EINVAL,
		  ibv_modify_srq(b.srq, &a, IBV_SRQ_MAX_WR));
	a.max_wr = 32;
	check_err("modify_srq MAX_WR 32", 0,
		  ibv_modify_srq(b.srq, &a, IBV_SRQ_MAX_WR));
	memset(&a, 0, sizeof(a));
	ibv_query_srq(b.srq, &a);
	check_range("query_srq max_wr after resize", 32, b.dev.max_srq_wr,
		    a.max_wr);
	memset(&a, 0, sizeof(a));
	ibv_query_srq(b.srq, &a);
	a.srq_limit = a.max_wr + 1;
	check_err("modify_srq srq_limit max_wr+1", EINVAL,
		  ibv_modify_srq(b.srq, &a, IBV_SRQ_LIMIT));
	a.srq_limit = 8;
	check_err("modify_srq srq_limit 8", 0,
		  ibv_modify_srq(b.srq, &a, IBV_SRQ_LIMIT));
	memset(&a, 0, sizeof(a));
	ibv_query_srq(b.srq, &a);
	check_val("query_srq srq_limit", 8, a.srq_limit);
}

/* ------------------------------------------------------------------ */
/* Memory regions and windows */

static int try_reg_mr(void *addr, size_t len, int access)
{
	struct ibv_mr *mr;

	errno = 0;
	mr = ibv_reg_mr(b.pd, addr, len, access);
	if (!mr)
		return create_err(mr);
	ibv_dereg_mr(mr);
	return 0;
}

static void mr_cases(void)
{
	const int lw = IBV_ACCESS_LOCAL_WRITE;
	struct ibv_mr *mr;
	struct ibv_mw *mw;

	/* ib_check_mr_access() in the core refuses these (IBA 10.6.3.1). */
	check_err("reg_mr REMOTE_WRITE without LOCAL_WRITE", EINVAL,
		  try_reg_mr(b.buf, BUF_LEN, IBV_ACCESS_REMOTE_WRITE));
	check_err("reg_mr REMOTE_ATOMIC without LOCAL_WRITE", EINVAL,
		  try_reg_mr(b.buf, BUF_LEN, IBV_ACCESS_REMOTE_ATOMIC));
	check_err("reg_mr unknown access bit", EINVAL,
		  try_reg_mr(b.buf, BUF_LEN, lw | UNKNOWN_ACCESS));
	/* No IBK_ON_DEMAND_PAGING: EINVAL up to Linux 6.1, EOPNOTSUPP since. */
	check_err2("reg_mr ON_DEMAND", EINVAL, EOPNOTSUPP,
		   try_reg_mr(b.buf, BUF_LEN, lw | IBV_ACCESS_ON_DEMAND));
	check_err("reg_mr length 0", EINVAL, try_reg_mr(b.buf, 0, lw));
	/* Pinning fails in the core. */
	check_err("reg_mr unmapped address", EFAULT,
		  try_reg_mr((void *)4096, BUF_LEN, lw));

	check_err("reg_mr LOCAL_WRITE|REMOTE_WRITE|REMOTE_READ", 0,
		  try_reg_mr(b.buf, BUF_LEN, lw | IBV_ACCESS_REMOTE_WRITE |
			     IBV_ACCESS_REMOTE_READ));
	check_err("reg_mr REMOTE_READ only", 0,
		  try_reg_mr(b.buf, BUF_LEN, IBV_ACCESS_REMOTE_READ));
	check_err("reg_mr 0 (local read only)", 0, try_reg_mr(b.buf, 1, 0));
	check_err("reg_mr LOCAL_WRITE|RELAXED_ORDERING", 0,
		  try_reg_mr(b.buf, BUF_LEN,
			     lw | IBV_ACCESS_RELAXED_ORDERING));
	check_err("reg_mr LOCAL_WRITE|MW_BIND", 0,
		  try_reg_mr(b.buf, BUF_LEN, lw | IBV_ACCESS_MW_BIND));
	/* A hint about the memory, not an access right: rxe ignores it. */
	check_err("reg_mr LOCAL_WRITE|HUGETLB", 0,
		  try_reg_mr(b.buf, BUF_LEN, lw | IBV_ACCESS_HUGETLB));

	mr = ibv_reg_mr(b.pd, (char *)b.buf + 100, 1000, lw);
	check_err("reg_mr unaligned 1000 bytes", 0, create_err(mr));
	if (mr) {
		check_val("reg_mr unaligned: length", 1000, mr->length);
		ibv_dereg_mr(mr);
	}

	errno = 0;
	mw = ibv_alloc_mw(b.pd, IBV_MW_TYPE_1);
	check_err("alloc_mw type 1", 0, create_err(mw));
	if (mw)
		check_err("dealloc_mw type 1", 0, ibv_dealloc_mw(mw));
	errno = 0;
	mw = ibv_alloc_mw(b.pd, IBV_MW_TYPE_2);
	check_err("alloc_mw type 2", 0, create_err(mw));
	if (mw)
		check_err("dealloc_mw type 2", 0, ibv_dealloc_mw(mw));
	/* The core checks the type (uverbs_cmd.c ib_uverbs_alloc_mw()). */
	errno = 0;
	mw = ibv_alloc_mw(b.pd, 3);
	check_err("alloc_mw type 3", EINVAL, create_err(mw));
	if (mw)
		ibv_dealloc_mw(mw);
}

/* ------------------------------------------------------------------ */
/* Address handles */

static int try_create_ah(const struct ibv_ah_attr *attr)
{
	struct ibv_ah_attr a = *attr;
	struct ibv_ah *ah;

	errno = 0;
	ah = ibv_create_ah(b.pd, &a);
	if (!ah)
		return create_err(ah);
	ibv_destroy_ah(ah);
	return 0;
}

static void ah_cases(void)
{
	struct ibv_port_attr port;
	struct ibv_ah_attr a;

	if (ibv_query_port(b.ctx, 1, &port))
		tool_die("query_port: %s", strerror(errno));

	set_av(&a);
	check_err("create_ah", 0, try_create_ah(&a));
	/* The core: port (uverbs), GRH required on RoCE (rdma_check_ah_attr). */
	set_av(&a);
	a.port_num = 2;
	check_err("create_ah port 2", EINVAL, try_create_ah(&a));
	set_av(&a);
	a.is_global = 0;
	check_err("create_ah without GRH", EINVAL, try_create_ah(&a));
	/* The core's GID cache: no entry there (rdma_get_gid_attr()). */
	set_av(&a);
	a.grh.sgid_index = port.gid_tbl_len - 1;
	check_err("create_ah sgid_index of an empty GID", ENODATA,
		  try_create_ah(&a));
	set_av(&a);
	a.grh.sgid_index = port.gid_tbl_len;
	check_err("create_ah sgid_index gid_tbl_len", EINVAL,
		  try_create_ah(&a));
}

/* ------------------------------------------------------------------ */

static void setup(const char *dev)
{
	struct ibv_srq_init_attr srq = {
		.attr = { .max_wr = 16, .max_sge = 1 },
	};

	b.ctx = tool_open_device(dev);
	if (ibv_query_device(b.ctx, &b.dev))
		tool_die("query_device: %s", strerror(errno));
	b.pd = ibv_alloc_pd(b.ctx);
	if (!b.pd)
		tool_die("alloc_pd: %s", strerror(errno));
	b.cq = ibv_create_cq(b.ctx, 64, NULL, NULL, 0);
	if (!b.cq)
		tool_die("create_cq: %s", strerror(errno));
	b.srq = ibv_create_srq(b.pd, &srq);
	if (!b.srq)
		tool_die("create_srq: %s", strerror(errno));
	b.buf = mmap(NULL, BUF_LEN, PROT_READ | PROT_WRITE,
		     MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (b.buf == MAP_FAILED)
		tool_die("mmap: %s", strerror(errno));
	memset(b.buf, 0, BUF_LEN);
}

static void teardown(void)
{
	check_err("destroy srq", 0, ibv_destroy_srq(b.srq));
	check_err("destroy cq", 0, ibv_destroy_cq(b.cq));
	check_err("dealloc pd", 0, ibv_dealloc_pd(b.pd));
	check_err("close device", 0, ibv_close_device(b.ctx));
	munmap(b.buf, BUF_LEN);
}

int main(int argc, char **argv)
{
	const char *usage = "usage: sroce-badinput -d DEV -g SGID_INDEX -r PEER_IP";
	const char *dev = NULL, *peer = NULL;
	long sgid = -1;
	unsigned int i;
	int opt;

	while ((opt = getopt(argc, argv, "d:g:r:")) != -1) {
		switch (opt) {
		case 'd':
			dev = optarg;
			break;
		case 'g':
			sgid = tool_number(optarg, 255);
			break;
		case 'r':
			peer = optarg;
			break;
		default:
			tool_die("%s", usage);
		}
	}
	if (!dev || !peer || sgid < 0)
		tool_die("%s", usage);
	b.sgid_index = sgid;
	tool_ip_to_gid(peer, &b.dgid);

	setup(dev);
	for (i = 0; i < ARRAY_SIZE(mod_cases); i++)
		run_mod_case(&mod_cases[i]);
	valid_walk(IBV_QPT_RC);
	valid_walk(IBV_QPT_UC);
	valid_walk(IBV_QPT_UD);
	valid_err_reset(IBV_QPT_RC);
	valid_err_reset(IBV_QPT_UD);
	psn_cases();
	qp_create_cases();
	cq_cases();
	srq_cases();
	mr_cases();
	ah_cases();
	teardown();

	printf("%u cases, %u mismatches\n", b.cases, b.mismatches);
	return b.mismatches ? 1 : 0;
}
