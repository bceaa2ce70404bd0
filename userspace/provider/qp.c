// SPDX-License-Identifier: GPL-2.0 OR Linux-OpenIB
/*
 * libsroce: queue pairs and shared receive queues, their create, modify,
 * query and destroy verbs. The kernel allocates a QP's send and receive
 * rings and an SRQ's ring; these map them (ring.c) and adopt the limits
 * the kernel reported, once checked against the rings. Posting to them
 * is in post.c.
 */
#include <config.h>

#include <errno.h>
#include <stdbool.h>
#include <stdlib.h>

#include "sroce.h"
#include "ring.h"
#include "cq.h"
#include "wr.h"
#include "qp.h"

DECLARE_DRV_CMD(sroce_cmd_create_qp, IB_USER_VERBS_CMD_CREATE_QP,
		empty, sroce_create_qp_resp);
DECLARE_DRV_CMD(sroce_cmd_create_qp_ex, IB_USER_VERBS_EX_CMD_CREATE_QP,
		empty, sroce_create_qp_resp);
DECLARE_DRV_CMD(sroce_cmd_create_srq, IB_USER_VERBS_CMD_CREATE_SRQ,
		empty, sroce_create_srq_resp);
DECLARE_DRV_CMD(sroce_cmd_create_srq_ex, IB_USER_VERBS_CMD_CREATE_XSRQ,
		empty, sroce_create_srq_resp);
DECLARE_DRV_CMD(sroce_cmd_modify_srq, IB_USER_VERBS_CMD_MODIFY_SRQ,
		sroce_modify_srq_cmd, empty);

/*
 * Map the ring of an SRQ the kernel has just created and adopt the limits
 * it reported in @attr (libibverbs copied them from the response).
 */
static int srq_map(struct sroce_srq *srq, struct ibv_context *ibctx,
		   const struct sroce_create_srq_resp *resp,
		   const struct ibv_srq_attr *attr)
{
	int ret;

	if (!resp->rq.mmap_size)
		return EINVAL;
	ret = sroce_wq_map(&srq->rq, ibctx, &resp->rq,
			   sizeof(struct sroce_recv_wqe));
	if (ret)
		return ret;
	ret = sroce_wq_set_limits(&srq->rq, sizeof(struct sroce_recv_wqe),
				  attr->max_wr, attr->max_sge, 0);
	if (ret) {
		sroce_wq_unmap(&srq->rq);
		return ret;
	}
	srq->srq_num = resp->srq_num;
	return 0;
}

/*
 * The rest of a create, once the kernel has answered @ret: map the SRQ's
 * ring and adopt the limits in @attr (srq_map()), or destroy the SRQ again
 * and free it, with errno set.
 */
static struct ibv_srq *srq_created(struct sroce_srq *srq,
				   struct ibv_context *ibctx, int ret,
				   const struct sroce_create_srq_resp *resp,
				   const struct ibv_srq_attr *attr)
{
	if (ret)
		return sroce_create_failed(srq, ret);
	ret = srq_map(srq, ibctx, resp, attr);
	if (ret) {
		ibv_cmd_destroy_srq(&srq->vsrq.srq);
		return sroce_create_failed(srq, ret);
	}
	return &srq->vsrq.srq;
}

struct ibv_srq *sroce_create_srq(struct ibv_pd *ibpd,
				 struct ibv_srq_init_attr *attr)
{
	struct sroce_cmd_create_srq_resp resp = {};
	struct ibv_create_srq cmd = {};
	struct sroce_srq *srq;
	int ret;

	srq = calloc(1, sizeof(*srq));
	if (!srq)
		return NULL;

	ret = ibv_cmd_create_srq(ibpd, &srq->vsrq.srq, attr, &cmd, sizeof(cmd),
				 &resp.ibv_resp, sizeof(resp));
	return srq_created(srq, ibpd->context, ret, &resp.drv_payload,
			   &attr->attr);
}

enum {
	SROCE_SRQ_INIT_ATTR_MASK = IBV_SRQ_INIT_ATTR_TYPE |
				   IBV_SRQ_INIT_ATTR_PD |
				   IBV_SRQ_INIT_ATTR_XRCD |
				   IBV_SRQ_INIT_ATTR_CQ,
};

/* A basic or an XRC SRQ; no tag matching. */
struct ibv_srq *sroce_create_srq_ex(struct ibv_context *ibctx,
				    struct ibv_srq_init_attr_ex *attr)
{
	struct sroce_cmd_create_srq_ex_resp resp = {};
	struct sroce_cmd_create_srq_ex cmd = {};
	struct sroce_srq *srq;
	int ret;

	if ((attr->comp_mask & ~SROCE_SRQ_INIT_ATTR_MASK) ||
	    ((attr->comp_mask & IBV_SRQ_INIT_ATTR_TYPE) &&
	     attr->srq_type != IBV_SRQT_BASIC &&
	     attr->srq_type != IBV_SRQT_XRC)) {
		errno = EOPNOTSUPP;
		return NULL;
	}

	srq = calloc(1, sizeof(*srq));
	if (!srq)
		return NULL;

	ret = ibv_cmd_create_srq_ex(ibctx, &srq->vsrq, attr, &cmd.ibv_cmd,
				    sizeof(cmd), &resp.ibv_resp, sizeof(resp));
	return srq_created(srq, ibctx, ret, &resp.drv_payload, &attr->attr);
}

/* The number XRC senders name the SRQ by (any SRQ has one). */
int sroce_get_srq_num(struct ibv_srq *ibsrq, uint32_t *srq_num)
{
	*srq_num = to_ssrq(ibsrq)->srq_num;
	return 0;
}

/*
 * Map the ring a resize gave and unmap the old one, which the kernel no
 * longer uses. The WQEs not yet taken were moved to the new ring's first
 * slots, so posting goes on at its producer index. An SRQ's max_wr is its
 * ring's size: sroce.ko reports the same at create and query. If the new
 * ring cannot be mapped, the SRQ is left without one and posts fail.
 * Called with the SRQ's lock held.
 */
static int srq_remap(struct sroce_srq *srq, struct ibv_context *ibctx,
		     const struct sroce_queue_info *info)
{
	struct sroce_wq *rq = &srq->rq;
	struct sroce_ring old = rq->ring;
	int ret;

	ret = EINVAL;
	if (info->mmap_size)
		ret = sroce_ring_map(&rq->ring, ibctx, info,
				     sizeof(struct sroce_recv_wqe));
	if (!ret)
		ret = sroce_wq_set_limits(rq, sizeof(struct sroce_recv_wqe),
					  rq->ring.num_entries, rq->max_sge,
					  0);
	if (ret)
		sroce_ring_unmap(&rq->ring);
	else
		rq->ring.index = ring_load_acquire(&rq->ring.hdr->producer);
	rq->room = 0;
	sroce_ring_unmap(&old);
	return ret;
}

/*
 * IBV_SRQ_MAX_WR resizes: modify_srq has no response, so the driver data
 * gives the kernel the address of a struct sroce_queue_info to fill in. The
 * SRQ's lock keeps posters off the ring from before the command until the
 * new ring is in place (the ABI requires that nothing is posted meanwhile).
 * If the command fails, the old ring is still the live one.
 */
int sroce_modify_srq(struct ibv_srq *ibsrq, struct ibv_srq_attr *attr,
		     int attr_mask)
{
	struct sroce_srq *srq = to_ssrq(ibsrq);
	struct sroce_cmd_modify_srq cmd = {};
	struct sroce_queue_info info = {};
	int ret;

	if (!(attr_mask & IBV_SRQ_MAX_WR))
		return ibv_cmd_modify_srq(ibsrq, attr, attr_mask, &cmd.ibv_cmd,
					  sizeof(cmd));

	cmd.queue_info_addr = (uintptr_t)&info;
	pthread_spin_lock(&srq->rq.lock);
	ret = ibv_cmd_modify_srq(ibsrq, attr, attr_mask, &cmd.ibv_cmd,
				 sizeof(cmd));
	if (!ret)
		ret = srq_remap(srq, ibsrq->context, &info);
	pthread_spin_unlock(&srq->rq.lock);
	return ret;
}

int sroce_query_srq(struct ibv_srq *ibsrq, struct ibv_srq_attr *attr)
{
	struct ibv_query_srq cmd = {};

	return ibv_cmd_query_srq(ibsrq, attr, &cmd, sizeof(cmd));
}

int sroce_destroy_srq(struct ibv_srq *ibsrq)
{
	struct sroce_srq *srq = to_ssrq(ibsrq);
	int ret = ibv_cmd_destroy_srq(ibsrq);

	if (!ret) {
		sroce_wq_unmap(&srq->rq);
		free(srq);
	}
	return ret;
}

/*
 * Map the rings of a QP the kernel has just created and adopt the limits
 * it reported in @cap (libibverbs copied them from the response; they are
 * what the caller sees too); on failure nothing stays mapped. The receive
 * ring is absent exactly when the QP uses an SRQ or is an XRC send QP; an
 * XRC receive QP has neither ring (the kernel gives it no driver data).
 */
static int qp_map(struct sroce_qp *qp, struct ibv_context *ibctx,
		  const struct sroce_create_qp_resp *resp,
		  enum ibv_qp_type type, bool has_srq,
		  const struct ibv_qp_cap *cap)
{
	bool has_sq = type != IBV_QPT_XRC_RECV;
	bool has_rq = has_sq && !has_srq && type != IBV_QPT_XRC_SEND;
	int ret;

	if (has_sq != !!resp->sq.mmap_size || has_rq != !!resp->rq.mmap_size)
		return EINVAL;

	ret = sroce_wq_map(&qp->sq, ibctx, &resp->sq,
			   sizeof(struct sroce_send_wqe));
	if (ret)
		return ret;
	if (has_sq) {
		ret = sroce_wq_set_limits(&qp->sq,
					  sizeof(struct sroce_send_wqe),
					  cap->max_send_wr, cap->max_send_sge,
					  cap->max_inline_data);
		if (ret)
			goto err_sq;
	}
	ret = sroce_wq_map(&qp->rq, ibctx, &resp->rq,
			   sizeof(struct sroce_recv_wqe));
	if (ret)
		goto err_sq;
	if (qp->rq.ring.hdr) {
		ret = sroce_wq_set_limits(&qp->rq,
					  sizeof(struct sroce_recv_wqe),
					  cap->max_recv_wr, cap->max_recv_sge,
					  0);
		if (ret)
			goto err_rq;
	}
	return 0;

err_rq:
	sroce_wq_unmap(&qp->rq);
err_sq:
	sroce_wq_unmap(&qp->sq);
	return ret;
}

static void qp_unmap(struct sroce_qp *qp)
{
	sroce_wq_unmap(&qp->rq);
	sroce_wq_unmap(&qp->sq);
}

/*
 * The rest of a create, once the kernel has answered @ret: map the rings
 * and adopt the limits in @attr->cap (qp_map()), offer struct ibv_qp_ex if
 * @attr asks for it, or destroy the QP again and free it, with errno set.
 */
static struct ibv_qp *qp_created(struct sroce_qp *qp, struct ibv_context *ibctx,
				 int ret,
				 const struct sroce_create_qp_resp *resp,
				 const struct ibv_qp_init_attr_ex *attr)
{
	if (ret)
		return sroce_create_failed(qp, ret);
	ret = qp_map(qp, ibctx, resp, attr->qp_type, attr->srq, &attr->cap);
	if (ret) {
		ibv_cmd_destroy_qp(&qp->vqp.qp);
		return sroce_create_failed(qp, ret);
	}
	qp->sq_signal = attr->sq_sig_all ? IBV_SEND_SIGNALED : 0;
	/* After the command: libibverbs cleared the comp_mask. */
	if (attr->comp_mask & IBV_QP_INIT_ATTR_SEND_OPS_FLAGS)
		sroce_qp_ex_init(qp, to_sctx(ibctx)->qp_ex_abi);
	return &qp->vqp.qp;
}

struct ibv_qp *sroce_create_qp(struct ibv_pd *ibpd,
			       struct ibv_qp_init_attr *attr)
{
	struct sroce_cmd_create_qp cmd = {};
	struct sroce_cmd_create_qp_resp resp = {};
	struct ibv_qp_init_attr_ex attr_ex;
	struct sroce_qp *qp;
	int ret;

	qp = calloc(1, sizeof(*qp));
	if (!qp)
		return NULL;

	ret = ibv_cmd_create_qp(ibpd, &qp->vqp.qp, attr, &cmd.ibv_cmd,
				sizeof(cmd), &resp.ibv_resp, sizeof(resp));
	/* What qp_created() reads, cap as libibverbs updated it. */
	attr_ex = (struct ibv_qp_init_attr_ex){
		.qp_type = attr->qp_type,
		.srq = attr->srq,
		.cap = attr->cap,
		.sq_sig_all = attr->sq_sig_all,
	};
	return qp_created(qp, ibpd->context, ret, &resp.drv_payload, &attr_ex);
}

enum {
	SROCE_QP_INIT_ATTR_MASK = IBV_QP_INIT_ATTR_PD |
				  IBV_QP_INIT_ATTR_XRCD |
				  IBV_QP_INIT_ATTR_CREATE_FLAGS |
				  IBV_QP_INIT_ATTR_SEND_OPS_FLAGS,
};

/*
 * What create_qp_ex offers: an XRC receive QP (with its XRCD), no create
 * flags, and with IBV_QP_INIT_ATTR_SEND_OPS_FLAGS struct ibv_qp_ex for
 * the operations the QP can carry.
 */
static int qp_ex_attr_check(struct ibv_context *ibctx,
			    const struct ibv_qp_init_attr_ex *attr)
{
	if ((attr->comp_mask & ~SROCE_QP_INIT_ATTR_MASK) ||
	    ((attr->comp_mask & IBV_QP_INIT_ATTR_CREATE_FLAGS) &&
	     attr->create_flags))
		return EOPNOTSUPP;
	if (attr->comp_mask & IBV_QP_INIT_ATTR_SEND_OPS_FLAGS)
		return sroce_qp_ex_check_ops(ibctx, attr);
	return 0;
}

/*
 * libibverbs calls this only when the caller asked for more than a PD
 * (qp_ex_attr_check()).
 */
struct ibv_qp *sroce_create_qp_ex(struct ibv_context *ibctx,
				  struct ibv_qp_init_attr_ex *attr)
{
	struct sroce_cmd_create_qp_ex cmd = {};
	struct sroce_cmd_create_qp_ex_resp resp = {};
	struct sroce_qp *qp;
	int ret;

	ret = qp_ex_attr_check(ibctx, attr);
	if (ret) {
		errno = ret;
		return NULL;
	}

	qp = calloc(1, sizeof(*qp));
	if (!qp)
		return NULL;

	ret = ibv_cmd_create_qp_ex2(ibctx, &qp->vqp, attr, &cmd.ibv_cmd,
				    sizeof(cmd), &resp.ibv_resp, sizeof(resp));
	return qp_created(qp, ibctx, ret, &resp.drv_payload, attr);
}

/*
 * A QP that is reset or destroyed leaves none of its completions in its
 * CQs, as hardware providers do: the work requests flushed when it went to
 * the error state would otherwise be polled after it is used again.
 */
static void qp_clean_cqs(struct ibv_qp *ibqp)
{
	sroce_cq_clean(ibqp->recv_cq, ibqp->qp_num);
	if (ibqp->send_cq != ibqp->recv_cq)
		sroce_cq_clean(ibqp->send_cq, ibqp->qp_num);
}

int sroce_modify_qp(struct ibv_qp *ibqp, struct ibv_qp_attr *attr,
		    int attr_mask)
{
	struct ibv_modify_qp cmd = {};
	int ret;

	ret = ibv_cmd_modify_qp(ibqp, attr, attr_mask, &cmd, sizeof(cmd));
	if (!ret && (attr_mask & IBV_QP_STATE) &&
	    attr->qp_state == IBV_QPS_RESET)
		qp_clean_cqs(ibqp);
	return ret;
}

int sroce_query_qp(struct ibv_qp *ibqp, struct ibv_qp_attr *attr,
		   int attr_mask, struct ibv_qp_init_attr *init_attr)
{
	struct ibv_query_qp cmd = {};

	return ibv_cmd_query_qp(ibqp, attr, attr_mask, init_attr, &cmd,
				sizeof(cmd));
}

int sroce_destroy_qp(struct ibv_qp *ibqp)
{
	struct sroce_qp *qp = to_sqp(ibqp);
	int ret = ibv_cmd_destroy_qp(ibqp);

	if (!ret) {
		qp_clean_cqs(ibqp);
		qp_unmap(qp);
		free(qp);
	}
	return ret;
}
