// SPDX-License-Identifier: GPL-2.0 OR Linux-OpenIB
/*
 * The modify_qp cases: a QP in one state asked to go to another with
 * the valid attributes of that step, changed by one field or mask bit.
 */
#include "badinput.h"

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
		line(name, tool_qp_state_name(c->err ? before : (int)c->to),
		     after < 0 ? tool_errname(-after) : tool_qp_state_name(after),
		     false);
	}
	ibv_destroy_qp(qp);
}

/* Every modify_qp case of the table, in order. */
void run_mod_cases(void)
{
	unsigned int i;

	for (i = 0; i < ARRAY_SIZE(mod_cases); i++)
		run_mod_case(&mod_cases[i]);
}
