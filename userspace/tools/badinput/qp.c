// SPDX-License-Identifier: GPL-2.0 OR Linux-OpenIB
/*
 * Queue pairs: creating one, bringing it to a state by valid steps, the
 * valid walks and PSNs that must work, and create_qp's limits.
 */
#include "badinput.h"

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

int qp_state(struct ibv_qp *qp)
{
	struct ibv_qp_init_attr init;
	struct ibv_qp_attr attr;
	int err;

	err = ibv_query_qp(qp, &attr, IBV_QP_STATE, &init);
	return err ? -err : (int)attr.qp_state;
}

void set_av(struct ibv_ah_attr *ah)
{
	tool_set_av(ah, &b.dgid, b.sgid_index);
}

/*
 * The valid attributes of the step of a @type QP into state @to, for the
 * state it comes from in the usual walk (RESET->INIT->RTR->RTS->SQD, ERR
 * from anywhere, RESET from anywhere, RTS from SQD). Returns the mask.
 */
int step_attr(enum ibv_qp_type type, enum ibv_qp_state to,
	      struct ibv_qp_attr *a)
{
	struct tool_qp_conn c = {
		.access = IBV_ACCESS_REMOTE_WRITE |
			  (type == IBV_QPT_RC ? IBV_ACCESS_REMOTE_READ : 0),
		.qkey = QKEY, .dgid = b.dgid, .sgid_index = b.sgid_index,
		.mtu = IBV_MTU_1024, .dest_qpn = DEST_QPN, .rq_psn = RQ_PSN,
		.max_dest_rd_atomic = 4, .min_rnr_timer = 12, .sq_psn = SQ_PSN,
		.timeout = 14, .retry_cnt = 7, .rnr_retry = 7,
		.max_rd_atomic = 4,
	};

	return tool_qp_attr(type, to, &c, a);
}

/*
 * A new @type QP brought to @state by valid steps, or NULL (reported) if
 * a step failed.
 */
struct ibv_qp *qp_at(enum ibv_qp_type type, enum ibv_qp_state state)
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
				 type_name(type), tool_qp_state_name(walk[i]));
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
void valid_walk(enum ibv_qp_type type)
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
			 tool_qp_state_name(from), tool_qp_state_name(walk[i]));
		check_err(n, 0, ibv_modify_qp(qp, &a, mask));
		snprintf(n, sizeof(n), "%s walk %s->%s: state", type_name(type),
			 tool_qp_state_name(from), tool_qp_state_name(walk[i]));
		check_val(n, walk[i], qp_state(qp));
		if (walk[i] == IBV_QPS_RTS && from == IBV_QPS_RTR)
			check_query(qp, type);
		from = walk[i];
	}
	ibv_destroy_qp(qp);
}

/* From each state but RESET, to ERR and back to RESET. */
void valid_err_reset(enum ibv_qp_type type)
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
			 tool_qp_state_name(states[i]));
		check_err(n, 0, ibv_modify_qp(qp, &a, IBV_QP_STATE));
		a.qp_state = IBV_QPS_RESET;
		snprintf(n, sizeof(n), "%s %s->ERR->RESET", type_name(type),
			 tool_qp_state_name(states[i]));
		check_err(n, 0, ibv_modify_qp(qp, &a, IBV_QP_STATE));
		snprintf(n, sizeof(n), "%s %s->ERR->RESET: state",
			 type_name(type), tool_qp_state_name(states[i]));
		check_val(n, IBV_QPS_RESET, qp_state(qp));
		ibv_destroy_qp(qp);
	}
}

/* PSNs are 24 bits: the core masks bigger ones (and logs that it did). */
void psn_cases(void)
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

void qp_create_cases(void)
{
	const struct ibv_qp_cap ok = {
		.max_send_wr = 16, .max_recv_wr = 16,
		.max_send_sge = 1, .max_recv_sge = 1,
	};
	struct ibv_qp_cap cap;
	/* One capability past the device's limit each: EINVAL. */
	const struct {
		const char *name;
		enum ibv_qp_type type;
		uint32_t *field;
		uint32_t value;
	} over[] = {
		{ "create_qp max_send_wr max_qp_wr+1", IBV_QPT_RC,
		  &cap.max_send_wr, b.dev.max_qp_wr + 1 },
		{ "create_qp max_recv_wr max_qp_wr+1", IBV_QPT_RC,
		  &cap.max_recv_wr, b.dev.max_qp_wr + 1 },
		{ "create_qp max_send_sge max_sge+1", IBV_QPT_RC,
		  &cap.max_send_sge, b.dev.max_sge + 1 },
		{ "create_qp max_recv_sge max_sge+1", IBV_QPT_UD,
		  &cap.max_recv_sge, b.dev.max_sge + 1 },
		{ "create_qp max_inline_data 513", IBV_QPT_RC,
		  &cap.max_inline_data, 513 },
	};
	struct ibv_qp_cap out;
	unsigned int i;

	for (i = 0; i < ARRAY_SIZE(over); i++) {
		cap = ok;
		*over[i].field = over[i].value;
		check_err(over[i].name, EINVAL,
			  try_create_qp(over[i].type, &cap, false, NULL));
	}
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
