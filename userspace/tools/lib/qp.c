// SPDX-License-Identifier: GPL-2.0 OR Linux-OpenIB
/*
 * Bringing a QP from RESET to INIT, RTR, RTS and SQD, with the attributes
 * each step requires for the QP's type (RC, UC, UD, XRC initiator and
 * target), and asking a QP its state. A step sets only the attributes of
 * its mask: a caller that adds mask bits (sroce-badinput) finds the
 * others zero.
 */
#include <string.h>

#include "tool.h"

void tool_set_av(struct ibv_ah_attr *ah, const union ibv_gid *dgid,
		 uint8_t sgid_index)
{
	memset(ah, 0, sizeof(*ah));
	ah->is_global = 1;
	ah->port_num = 1;
	ah->grh.dgid = *dgid;
	ah->grh.sgid_index = sgid_index;
	ah->grh.hop_limit = 64;
}

/* Takes requests (the responder's attributes at RTR). */
static bool responder(enum ibv_qp_type type)
{
	return type == IBV_QPT_RC || type == IBV_QPT_XRC_RECV;
}

/* Sends requests with acknowledgements (the requester's at RTS). */
static bool requester(enum ibv_qp_type type)
{
	return type == IBV_QPT_RC || type == IBV_QPT_XRC_SEND;
}

static int init_attr(enum ibv_qp_type type, const struct tool_qp_conn *c,
		     struct ibv_qp_attr *a)
{
	a->pkey_index = 0;
	a->port_num = 1;
	if (type == IBV_QPT_UD) {
		a->qkey = c->qkey;
		return IBV_QP_PKEY_INDEX | IBV_QP_PORT | IBV_QP_QKEY;
	}
	a->qp_access_flags = c->access;
	return IBV_QP_PKEY_INDEX | IBV_QP_PORT | IBV_QP_ACCESS_FLAGS;
}

static int rtr_attr(enum ibv_qp_type type, const struct tool_qp_conn *c,
		    struct ibv_qp_attr *a)
{
	int mask = IBV_QP_AV | IBV_QP_PATH_MTU | IBV_QP_DEST_QPN | IBV_QP_RQ_PSN;

	if (type == IBV_QPT_UD)
		return 0;
	tool_set_av(&a->ah_attr, &c->dgid, c->sgid_index);
	a->path_mtu = c->mtu;
	a->dest_qp_num = c->dest_qpn;
	a->rq_psn = c->rq_psn;
	if (!responder(type))
		return mask;
	a->max_dest_rd_atomic = c->max_dest_rd_atomic;
	a->min_rnr_timer = c->min_rnr_timer;
	return mask | IBV_QP_MAX_DEST_RD_ATOMIC | IBV_QP_MIN_RNR_TIMER;
}

static int rts_attr(enum ibv_qp_type type, const struct tool_qp_conn *c,
		    struct ibv_qp_attr *a)
{
	a->sq_psn = c->sq_psn;
	if (type == IBV_QPT_XRC_RECV) {
		a->timeout = c->timeout;
		return IBV_QP_SQ_PSN | IBV_QP_TIMEOUT;
	}
	if (!requester(type))
		return IBV_QP_SQ_PSN;
	a->timeout = c->timeout;
	a->retry_cnt = c->retry_cnt;
	a->rnr_retry = c->rnr_retry;
	a->max_rd_atomic = c->max_rd_atomic;
	return IBV_QP_SQ_PSN | IBV_QP_TIMEOUT | IBV_QP_RETRY_CNT |
	       IBV_QP_RNR_RETRY | IBV_QP_MAX_QP_RD_ATOMIC;
}

int tool_qp_attr(enum ibv_qp_type type, enum ibv_qp_state to,
		 const struct tool_qp_conn *c, struct ibv_qp_attr *a)
{
	memset(a, 0, sizeof(*a));
	a->qp_state = to;
	switch (to) {
	case IBV_QPS_INIT:
		return IBV_QP_STATE | init_attr(type, c, a);
	case IBV_QPS_RTR:
		return IBV_QP_STATE | rtr_attr(type, c, a);
	case IBV_QPS_RTS:
		return IBV_QP_STATE | rts_attr(type, c, a);
	default:
		return IBV_QP_STATE;
	}
}

int tool_qp_connect(struct ibv_qp *qp, const struct tool_qp_conn *c,
		    enum ibv_qp_state upto)
{
	static const enum ibv_qp_state walk[] = {
		IBV_QPS_INIT, IBV_QPS_RTR, IBV_QPS_RTS, IBV_QPS_SQD,
	};
	struct ibv_qp_attr a;
	unsigned int i;
	int mask, err;

	for (i = 0; i < ARRAY_SIZE(walk) && walk[i] <= upto; i++) {
		mask = tool_qp_attr(qp->qp_type, walk[i], c, &a);
		err = c->modify ? c->modify(qp, &a, mask, c->arg) :
				  ibv_modify_qp(qp, &a, mask);
		if (err)
			return err;
	}
	return 0;
}

int tool_qp_state(struct ibv_qp *qp)
{
	struct ibv_qp_init_attr init;
	struct ibv_qp_attr a;

	if (ibv_query_qp(qp, &a, IBV_QP_STATE, &init))
		return -1;
	return a.qp_state;
}
