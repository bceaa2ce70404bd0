// SPDX-License-Identifier: GPL-2.0 OR Linux-OpenIB
/*
 * libsroce: the rdma-core provider for sroce, a software RoCEv2 device.
 *
 * Control verbs go through the kernel with the core uverbs commands and
 * the driver data of <rdma/sroce-abi.h>. The kernel allocates every queue;
 * create and resize return where to mmap() it on the context's command fd.
 * The data path runs on those rings without a system call: work requests
 * are written into the send and receive rings, completions are read from
 * the CQ ring, and the kernel is woken (a uverbs POST_SEND, POST_RECV or
 * POST_SRQ_RECV command with no work requests) only when the ring's header
 * says that it is idle.
 *
 * The provider is built in rdma-core 56.1 but must also load into the
 * libibverbs 44.0 of Debian 12 (both private ABI 34): it uses no libibverbs
 * entry point younger than 44.0. scripts/build-provider checks that.
 */
#include <config.h>

#include <errno.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <ccan/array_size.h>

#include "sroce.h"
#include "ring.h"
#include "cq.h"

/*
 * An out-of-tree driver has no driver id of its own, so libibverbs can only
 * match it by name. VERBS_NAME_MATCH() would build the fnmatch() pattern
 * "rdma_device:*Nsroce*", which also matches a name with "Nsroce" anywhere
 * in it; this pattern is anchored: the device name must begin with "sroce".
 */
static const struct verbs_match_ent sroce_match_table[] = {
	VERBS_MODALIAS_MATCH("rdma_device:Nsroce*", NULL),
	{},
};

/* ------------------------------------------------------------------ */
/* Device, port, PD, MR, MW */

static int sroce_query_device(struct ibv_context *ibctx,
			      const struct ibv_query_device_ex_input *input,
			      struct ibv_device_attr_ex *attr, size_t attr_size)
{
	struct ib_uverbs_ex_query_device_resp resp;
	size_t resp_size = sizeof(resp);
	uint64_t fw;
	int ret;

	ret = ibv_cmd_query_device_any(ibctx, input, attr, attr_size, &resp,
				       &resp_size);
	if (ret)
		return ret;

	fw = resp.base.fw_ver;
	snprintf(attr->orig_attr.fw_ver, sizeof(attr->orig_attr.fw_ver),
		 "%u.%u.%u", (unsigned int)(fw >> 32) & 0xffff,
		 (unsigned int)(fw >> 16) & 0xffff, (unsigned int)fw & 0xffff);
	return 0;
}

static int sroce_query_port(struct ibv_context *ibctx, uint8_t port,
			    struct ibv_port_attr *attr)
{
	struct ibv_query_port cmd = {};

	return ibv_cmd_query_port(ibctx, port, attr, &cmd, sizeof(cmd));
}

static struct ibv_pd *sroce_alloc_pd(struct ibv_context *ibctx)
{
	struct sroce_cmd_alloc_pd cmd = {};
	struct sroce_cmd_alloc_pd_resp resp = {};
	struct sroce_pd *pd;
	int ret;

	pd = calloc(1, sizeof(*pd));
	if (!pd)
		return NULL;

	ret = ibv_cmd_alloc_pd(ibctx, &pd->ibv_pd, &cmd.ibv_cmd, sizeof(cmd),
			       &resp.ibv_resp, sizeof(resp));
	if (ret) {
		free(pd);
		errno = ret;
		return NULL;
	}
	pd->pdn = resp.pdn;
	return &pd->ibv_pd;
}

static int sroce_dealloc_pd(struct ibv_pd *ibpd)
{
	int ret;

	ret = ibv_cmd_dealloc_pd(ibpd);
	if (ret)
		return ret;
	free(to_spd(ibpd));
	return 0;
}

static struct ibv_mr *sroce_reg_mr(struct ibv_pd *ibpd, void *addr,
				   size_t length, uint64_t hca_va, int access)
{
	struct ib_uverbs_reg_mr_resp resp;
	struct ibv_reg_mr cmd;
	struct verbs_mr *vmr;
	int ret;

	vmr = calloc(1, sizeof(*vmr));
	if (!vmr)
		return NULL;

	ret = ibv_cmd_reg_mr(ibpd, addr, length, hca_va, access, vmr, &cmd,
			     sizeof(cmd), &resp, sizeof(resp));
	if (ret) {
		free(vmr);
		errno = ret;
		return NULL;
	}
	return &vmr->ibv_mr;
}

static int sroce_dereg_mr(struct verbs_mr *vmr)
{
	int ret;

	ret = ibv_cmd_dereg_mr(vmr);
	if (ret)
		return ret;
	free(vmr);
	return 0;
}

/*
 * libibverbs has checked the flags and updates mr->pd, addr and length on
 * success; the kernel's response gives the keys, which change when the
 * kernel registers the memory anew. A new range is accessed by its own
 * address, as ibv_reg_mr() registers it.
 */
static int sroce_rereg_mr(struct verbs_mr *vmr, int flags, struct ibv_pd *pd,
			  void *addr, size_t length, int access)
{
	struct ib_uverbs_rereg_mr_resp resp;
	struct ibv_rereg_mr cmd;
	int ret;

	ret = ibv_cmd_rereg_mr(vmr, flags, addr, length, (uintptr_t)addr,
			       access, pd, &cmd, sizeof(cmd), &resp,
			       sizeof(resp));
	if (ret)
		errno = ret;
	return ret;
}

static struct ibv_mw *sroce_alloc_mw(struct ibv_pd *ibpd,
				     enum ibv_mw_type type)
{
	struct ib_uverbs_alloc_mw_resp resp = {};
	struct ibv_alloc_mw cmd = {};
	struct ibv_mw *mw;
	int ret;

	mw = calloc(1, sizeof(*mw));
	if (!mw)
		return NULL;

	ret = ibv_cmd_alloc_mw(ibpd, type, mw, &cmd, sizeof(cmd), &resp,
			       sizeof(resp));
	if (ret) {
		free(mw);
		errno = ret;
		return NULL;
	}
	return mw;
}

static int sroce_dealloc_mw(struct ibv_mw *mw)
{
	int ret;

	ret = ibv_cmd_dealloc_mw(mw);
	if (ret)
		return ret;
	free(mw);
	return 0;
}

static struct ibv_xrcd *sroce_open_xrcd(struct ibv_context *ibctx,
					struct ibv_xrcd_init_attr *attr)
{
	struct ib_uverbs_open_xrcd_resp resp = {};
	struct ibv_open_xrcd cmd = {};
	struct verbs_xrcd *xrcd;
	int ret;

	xrcd = calloc(1, sizeof(*xrcd));
	if (!xrcd)
		return NULL;

	ret = ibv_cmd_open_xrcd(ibctx, xrcd, sizeof(*xrcd), attr, &cmd,
				sizeof(cmd), &resp, sizeof(resp));
	if (ret) {
		free(xrcd);
		errno = ret;
		return NULL;
	}
	return &xrcd->xrcd;
}

static int sroce_close_xrcd(struct ibv_xrcd *ibxrcd)
{
	struct verbs_xrcd *xrcd = container_of(ibxrcd, struct verbs_xrcd, xrcd);
	int ret;

	ret = ibv_cmd_close_xrcd(xrcd);
	if (ret)
		return ret;
	free(xrcd);
	return 0;
}

/* ------------------------------------------------------------------ */
/* Shared receive queues */

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

static struct ibv_srq *sroce_create_srq(struct ibv_pd *ibpd,
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
	if (ret)
		goto err_free;
	ret = srq_map(srq, ibpd->context, &resp.drv_payload, &attr->attr);
	if (ret)
		goto err_destroy;
	return &srq->vsrq.srq;

err_destroy:
	ibv_cmd_destroy_srq(&srq->vsrq.srq);
err_free:
	free(srq);
	errno = ret;
	return NULL;
}

enum {
	SROCE_SRQ_INIT_ATTR_MASK = IBV_SRQ_INIT_ATTR_TYPE |
				   IBV_SRQ_INIT_ATTR_PD |
				   IBV_SRQ_INIT_ATTR_XRCD |
				   IBV_SRQ_INIT_ATTR_CQ,
};

/* A basic or an XRC SRQ; no tag matching. */
static struct ibv_srq *sroce_create_srq_ex(struct ibv_context *ibctx,
					   struct ibv_srq_init_attr_ex *attr)
{
	struct sroce_cmd_create_srq_ex_resp resp = {};
	struct sroce_cmd_create_srq_ex cmd = {};
	struct sroce_srq *srq;
	int ret;

	ret = EOPNOTSUPP;
	if ((attr->comp_mask & ~SROCE_SRQ_INIT_ATTR_MASK) ||
	    ((attr->comp_mask & IBV_SRQ_INIT_ATTR_TYPE) &&
	     attr->srq_type != IBV_SRQT_BASIC && attr->srq_type != IBV_SRQT_XRC))
		goto err;

	srq = calloc(1, sizeof(*srq));
	if (!srq)
		return NULL;

	ret = ibv_cmd_create_srq_ex(ibctx, &srq->vsrq, attr, &cmd.ibv_cmd,
				    sizeof(cmd), &resp.ibv_resp, sizeof(resp));
	if (ret)
		goto err_free;
	ret = srq_map(srq, ibctx, &resp.drv_payload, &attr->attr);
	if (ret)
		goto err_destroy;
	return &srq->vsrq.srq;

err_destroy:
	ibv_cmd_destroy_srq(&srq->vsrq.srq);
err_free:
	free(srq);
err:
	errno = ret;
	return NULL;
}

/* The number XRC senders name the SRQ by (any SRQ has one). */
static int sroce_get_srq_num(struct ibv_srq *ibsrq, uint32_t *srq_num)
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
static int sroce_modify_srq(struct ibv_srq *ibsrq, struct ibv_srq_attr *attr,
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

static int sroce_query_srq(struct ibv_srq *ibsrq, struct ibv_srq_attr *attr)
{
	struct ibv_query_srq cmd = {};

	return ibv_cmd_query_srq(ibsrq, attr, &cmd, sizeof(cmd));
}

static int sroce_destroy_srq(struct ibv_srq *ibsrq)
{
	struct sroce_srq *srq = to_ssrq(ibsrq);
	int ret;

	ret = ibv_cmd_destroy_srq(ibsrq);
	if (ret)
		return ret;

	sroce_wq_unmap(&srq->rq);
	free(srq);
	return 0;
}

/* ------------------------------------------------------------------ */
/* Queue pairs */

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

static struct ibv_qp *sroce_create_qp(struct ibv_pd *ibpd,
				      struct ibv_qp_init_attr *attr)
{
	struct sroce_cmd_create_qp cmd = {};
	struct sroce_cmd_create_qp_resp resp = {};
	struct sroce_qp *qp;
	int ret;

	qp = calloc(1, sizeof(*qp));
	if (!qp)
		return NULL;

	ret = ibv_cmd_create_qp(ibpd, &qp->vqp.qp, attr, &cmd.ibv_cmd,
				sizeof(cmd), &resp.ibv_resp, sizeof(resp));
	if (ret)
		goto err_free;

	ret = qp_map(qp, ibpd->context, &resp.drv_payload, attr->qp_type,
		     attr->srq, &attr->cap);
	if (ret)
		goto err_destroy;
	qp->sq_signal = attr->sq_sig_all ? IBV_SEND_SIGNALED : 0;
	return &qp->vqp.qp;

err_destroy:
	ibv_cmd_destroy_qp(&qp->vqp.qp);
err_free:
	free(qp);
	errno = ret;
	return NULL;
}

static int qp_ex_check_ops(struct ibv_context *ibctx,
			   const struct ibv_qp_init_attr_ex *attr);
static void qp_ex_init(struct sroce_qp *qp, enum sroce_qp_ex_abi abi);

enum {
	SROCE_QP_INIT_ATTR_MASK = IBV_QP_INIT_ATTR_PD |
				  IBV_QP_INIT_ATTR_XRCD |
				  IBV_QP_INIT_ATTR_CREATE_FLAGS |
				  IBV_QP_INIT_ATTR_SEND_OPS_FLAGS,
};

/*
 * libibverbs calls this only when the caller asked for more than a PD: an
 * XRC receive QP (with its XRCD), no create flags, and with
 * IBV_QP_INIT_ATTR_SEND_OPS_FLAGS the QP offers struct ibv_qp_ex for the
 * operations it can carry.
 */
static struct ibv_qp *sroce_create_qp_ex(struct ibv_context *ibctx,
					 struct ibv_qp_init_attr_ex *attr)
{
	struct sroce_cmd_create_qp_ex cmd = {};
	struct sroce_cmd_create_qp_ex_resp resp = {};
	struct sroce_qp *qp;
	int ret;

	ret = EOPNOTSUPP;
	if ((attr->comp_mask & ~SROCE_QP_INIT_ATTR_MASK) ||
	    ((attr->comp_mask & IBV_QP_INIT_ATTR_CREATE_FLAGS) &&
	     attr->create_flags))
		goto err;
	if (attr->comp_mask & IBV_QP_INIT_ATTR_SEND_OPS_FLAGS) {
		ret = qp_ex_check_ops(ibctx, attr);
		if (ret)
			goto err;
	}

	qp = calloc(1, sizeof(*qp));
	if (!qp)
		return NULL;

	ret = ibv_cmd_create_qp_ex2(ibctx, &qp->vqp, attr, &cmd.ibv_cmd,
				    sizeof(cmd), &resp.ibv_resp, sizeof(resp));
	if (ret)
		goto err_free;

	ret = qp_map(qp, ibctx, &resp.drv_payload, attr->qp_type, attr->srq,
		     &attr->cap);
	if (ret)
		goto err_destroy;
	qp->sq_signal = attr->sq_sig_all ? IBV_SEND_SIGNALED : 0;
	/* After the command: libibverbs cleared the comp_mask. */
	if (attr->comp_mask & IBV_QP_INIT_ATTR_SEND_OPS_FLAGS)
		qp_ex_init(qp, to_sctx(ibctx)->qp_ex_abi);
	return &qp->vqp.qp;

err_destroy:
	ibv_cmd_destroy_qp(&qp->vqp.qp);
err_free:
	free(qp);
err:
	errno = ret;
	return NULL;
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

static int sroce_modify_qp(struct ibv_qp *ibqp, struct ibv_qp_attr *attr,
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

static int sroce_query_qp(struct ibv_qp *ibqp, struct ibv_qp_attr *attr,
			  int attr_mask, struct ibv_qp_init_attr *init_attr)
{
	struct ibv_query_qp cmd = {};

	return ibv_cmd_query_qp(ibqp, attr, attr_mask, init_attr, &cmd,
				sizeof(cmd));
}

static int sroce_destroy_qp(struct ibv_qp *ibqp)
{
	struct sroce_qp *qp = to_sqp(ibqp);
	int ret;

	ret = ibv_cmd_destroy_qp(ibqp);
	if (ret)
		return ret;

	qp_clean_cqs(ibqp);
	qp_unmap(qp);
	free(qp);
	return 0;
}

/* ------------------------------------------------------------------ */
/* Work requests */

/*
 * Scatter/gather lists go into the rings as they are: struct ibv_sge and
 * struct sroce_sge have the same layout. Opcodes and send flags are stored
 * with their libibverbs values, which are the kernel's uverbs values.
 */
static_assert(sizeof(struct ibv_sge) == sizeof(struct sroce_sge), "sge");
static_assert(offsetof(struct ibv_sge, addr) ==
	      offsetof(struct sroce_sge, addr), "sge addr");
static_assert(offsetof(struct ibv_sge, length) ==
	      offsetof(struct sroce_sge, length), "sge length");
static_assert(offsetof(struct ibv_sge, lkey) ==
	      offsetof(struct sroce_sge, lkey), "sge lkey");
#define SAME_OPCODE(op) \
	static_assert((int)IBV_WR_##op == (int)IB_UVERBS_WR_##op, #op)
SAME_OPCODE(RDMA_WRITE);
SAME_OPCODE(RDMA_WRITE_WITH_IMM);
SAME_OPCODE(SEND);
SAME_OPCODE(SEND_WITH_IMM);
SAME_OPCODE(RDMA_READ);
SAME_OPCODE(ATOMIC_CMP_AND_SWP);
SAME_OPCODE(ATOMIC_FETCH_AND_ADD);
SAME_OPCODE(SEND_WITH_INV);
static_assert(IBV_WR_ATOMIC_WRITE == SROCE_WR_ATOMIC_WRITE, "ATOMIC_WRITE");
static_assert(IBV_WR_FLUSH == SROCE_WR_FLUSH, "FLUSH");

/* The send flags a work queue entry may carry. */
#define SROCE_SEND_FLAGS (IBV_SEND_FENCE | IBV_SEND_SIGNALED | \
			  IBV_SEND_SOLICITED | IBV_SEND_INLINE)

enum {
	QPT_RC = 1 << 0,
	QPT_UC = 1 << 1,
	QPT_UD = 1 << 2,
	QPT_XRC = 1 << 3,	/* an XRC send QP: what RC has */
};

#define QPT_RCX (QPT_RC | QPT_XRC)

/* What an opcode fills in the entry's @wr union. */
enum send_kind {
	SEND_KIND_NONE,		/* not an opcode of this device: EINVAL */
	SEND_KIND_SEND,		/* wr.ud on a UD QP, nothing otherwise */
	SEND_KIND_RDMA,		/* wr.rdma */
	SEND_KIND_ATOMIC,	/* wr.atomic */
	SEND_KIND_BIND,		/* wr.bind_mw */
	SEND_KIND_LOCAL,	/* a local operation: nothing */
	SEND_KIND_WR_ONLY,	/* only through ibv_wr_*(): post_send has no
				 * fields for it (EOPNOTSUPP there) */
};

/* What goes into the entry's @ex. */
enum send_ex {
	SEND_EX_NONE,
	SEND_EX_IMM,		/* imm_data, kept in network order */
	SEND_EX_INV,		/* invalidate_rkey */
	SEND_EX_BIND,		/* the window's new rkey */
};

/**
 * struct send_opcode - how to post one opcode
 * @kind: an enum send_kind
 * @qp_types: QPT_* bits of the QP types it may be posted to
 * @ex: an enum send_ex
 * @inline_ok: data may be given inline (it is the source, not a target)
 */
struct send_opcode {
	uint8_t kind;
	uint8_t qp_types;
	uint8_t ex;
	bool inline_ok;
};

static const struct send_opcode send_opcodes[] = {
	[IBV_WR_RDMA_WRITE] = { SEND_KIND_RDMA, QPT_RCX | QPT_UC,
				SEND_EX_NONE, true },
	[IBV_WR_RDMA_WRITE_WITH_IMM] = { SEND_KIND_RDMA, QPT_RCX | QPT_UC,
					 SEND_EX_IMM, true },
	[IBV_WR_SEND] = { SEND_KIND_SEND, QPT_RCX | QPT_UC | QPT_UD,
			  SEND_EX_NONE, true },
	[IBV_WR_SEND_WITH_IMM] = { SEND_KIND_SEND, QPT_RCX | QPT_UC | QPT_UD,
				   SEND_EX_IMM, true },
	[IBV_WR_SEND_WITH_INV] = { SEND_KIND_SEND, QPT_RCX, SEND_EX_INV, true },
	[IBV_WR_RDMA_READ] = { SEND_KIND_RDMA, QPT_RCX },
	[IBV_WR_ATOMIC_CMP_AND_SWP] = { SEND_KIND_ATOMIC, QPT_RCX },
	[IBV_WR_ATOMIC_FETCH_AND_ADD] = { SEND_KIND_ATOMIC, QPT_RCX },
	[IBV_WR_LOCAL_INV] = { SEND_KIND_LOCAL, QPT_RCX | QPT_UC, SEND_EX_INV },
	[IBV_WR_BIND_MW] = { SEND_KIND_BIND, QPT_RCX | QPT_UC, SEND_EX_BIND },
	[IBV_WR_FLUSH] = { SEND_KIND_WR_ONLY, QPT_RCX },
	[IBV_WR_ATOMIC_WRITE] = { SEND_KIND_WR_ONLY, QPT_RCX },
};

static unsigned int qpt_bit(enum ibv_qp_type type)
{
	switch (type) {
	case IBV_QPT_RC:
		return QPT_RC;
	case IBV_QPT_UC:
		return QPT_UC;
	case IBV_QPT_UD:
		return QPT_UD;
	case IBV_QPT_XRC_SEND:
		return QPT_XRC;
	default:
		return 0;
	}
}

/* The opcode's entry, or NULL if it cannot be posted to this QP type. */
static const struct send_opcode *send_opcode(enum ibv_qp_type type,
					     enum ibv_wr_opcode opcode)
{
	const struct send_opcode *op;

	if ((unsigned int)opcode >= ARRAY_SIZE(send_opcodes))
		return NULL;
	op = &send_opcodes[opcode];
	if (op->kind == SEND_KIND_NONE || !(op->qp_types & qpt_bit(type)))
		return NULL;
	return op;
}

/*
 * Posting to the send queue before RTS is an immediate error, and so is
 * posting receives in RESET (IBA 10.3.1, QP state table). libibverbs keeps
 * ibqp->state as of the last modify or query; a transition the kernel
 * makes on its own (to SQE or ERR) is not seen here, and the kernel
 * flushes what is posted then.
 */
static bool qp_can_send(const struct ibv_qp *ibqp)
{
	return ibqp->state != IBV_QPS_RESET && ibqp->state != IBV_QPS_INIT &&
	       ibqp->state != IBV_QPS_RTR;
}

/* Bytes the scatter list of @wr describes, the inline payload. */
static uint64_t sge_total(const struct ibv_send_wr *wr)
{
	uint64_t len = 0;
	int i;

	for (i = 0; i < wr->num_sge; i++)
		len += wr->sg_list[i].length;
	return len;
}

/*
 * Check one send work request against the QP, as a hardware provider
 * would before building its descriptor.
 */
static int send_wr_check(const struct sroce_qp *qp,
			 const struct ibv_send_wr *wr,
			 const struct send_opcode *op,
			 enum ibv_mw_type bind_type)
{
	const struct sroce_wq *sq = &qp->sq;

	if (!op)
		return EINVAL;
	if (op->kind == SEND_KIND_WR_ONLY)
		return EOPNOTSUPP;
	if (wr->num_sge < 0 || (uint32_t)wr->num_sge > sq->max_sge ||
	    (wr->send_flags & ~SROCE_SEND_FLAGS))
		return EINVAL;
	if ((wr->send_flags & IBV_SEND_INLINE) &&
	    (!op->inline_ok || sge_total(wr) > sq->max_inline))
		return EINVAL;
	if (op->kind == SEND_KIND_ATOMIC &&
	    ((wr->wr.atomic.remote_addr & 7) || sge_total(wr) < 8))
		return EINVAL;
	if (qp->vqp.qp.qp_type == IBV_QPT_UD && !wr->wr.ud.ah)
		return EINVAL;
	/*
	 * A work request binds only type 2 windows; type 1 windows are bound
	 * by ibv_bind_mw() (IBA 10.6.7.2.1), which posts with @bind_type 1.
	 */
	if (op->kind == SEND_KIND_BIND &&
	    (!wr->bind_mw.mw || wr->bind_mw.mw->type != bind_type))
		return EINVAL;
	return 0;
}

/* The opcode-specific part of an entry; @hdr was zeroed. */
static void send_wqe_fill_wr(const struct sroce_qp *qp,
			     const struct ibv_send_wr *wr,
			     const struct send_opcode *op,
			     struct sroce_send_wqe *hdr)
{
	switch (op->kind) {
	case SEND_KIND_SEND:
		if (qp->vqp.qp.qp_type != IBV_QPT_UD)
			break;
		hdr->wr.ud.ah_num = to_sah(wr->wr.ud.ah)->ah_num;
		hdr->wr.ud.remote_qpn = wr->wr.ud.remote_qpn;
		hdr->wr.ud.remote_qkey = wr->wr.ud.remote_qkey;
		break;
	case SEND_KIND_RDMA:
		hdr->wr.rdma.remote_addr = wr->wr.rdma.remote_addr;
		hdr->wr.rdma.rkey = wr->wr.rdma.rkey;
		break;
	case SEND_KIND_ATOMIC:
		hdr->wr.atomic.remote_addr = wr->wr.atomic.remote_addr;
		hdr->wr.atomic.compare_add = wr->wr.atomic.compare_add;
		hdr->wr.atomic.swap = wr->wr.atomic.swap;
		hdr->wr.atomic.rkey = wr->wr.atomic.rkey;
		break;
	case SEND_KIND_BIND:
		hdr->wr.bind_mw.addr = wr->bind_mw.bind_info.addr;
		hdr->wr.bind_mw.length = wr->bind_mw.bind_info.length;
		hdr->wr.bind_mw.mw_rkey = wr->bind_mw.mw->rkey;
		hdr->wr.bind_mw.mr_lkey = wr->bind_mw.bind_info.mr ?
					  wr->bind_mw.bind_info.mr->lkey : 0;
		hdr->wr.bind_mw.access = wr->bind_mw.bind_info.mw_access_flags;
		break;
	}
}

/* Gather the inline payload into the entry, in place of its scatter list. */
static uint32_t send_wqe_copy_inline(struct sroce_send_wqe *wqe,
				     const struct ibv_send_wr *wr)
{
	uint8_t *dst = (uint8_t *)wqe->sge;
	int i;

	for (i = 0; i < wr->num_sge; i++) {
		memcpy(dst, (void *)(uintptr_t)wr->sg_list[i].addr,
		       wr->sg_list[i].length);
		dst += wr->sg_list[i].length;
	}
	return dst - (uint8_t *)wqe->sge;
}

/*
 * Write one checked work request into @wqe, a free slot. Every header
 * field is written, unused ones as zero, so nothing of an earlier entry in
 * this slot survives in the header. Past the header only the num_sge
 * scatter entries or inline_len bytes that the header announces are
 * written; the kernel reads no more than that.
 */
static void send_wqe_write(const struct sroce_qp *qp,
			   const struct ibv_send_wr *wr,
			   const struct send_opcode *op,
			   struct sroce_send_wqe *wqe)
{
	struct sroce_send_wqe hdr = {
		.wr_id = wr->wr_id,
		.opcode = wr->opcode,
		.send_flags = wr->send_flags | qp->sq_signal,
	};

	if (qp->vqp.qp.qp_type == IBV_QPT_XRC_SEND)
		hdr.xrc_remote_srqn = wr->qp_type.xrc.remote_srqn;

	if (op->ex == SEND_EX_IMM)
		hdr.ex = (uint32_t)wr->imm_data;	/* network order */
	else if (op->ex == SEND_EX_INV)
		hdr.ex = wr->invalidate_rkey;
	else if (op->ex == SEND_EX_BIND)
		hdr.ex = wr->bind_mw.rkey;
	send_wqe_fill_wr(qp, wr, op, &hdr);

	if (wr->send_flags & IBV_SEND_INLINE) {
		hdr.inline_len = send_wqe_copy_inline(wqe, wr);
	} else {
		hdr.num_sge = wr->num_sge;
		memcpy(wqe->sge, wr->sg_list,
		       wr->num_sge * sizeof(struct sroce_sge));
	}
	memcpy(wqe, &hdr, sizeof(hdr));
}

/* Check and write one send work request. Called with sq->lock held. */
static int sq_post_one(struct sroce_qp *qp, const struct ibv_send_wr *wr,
		       enum ibv_mw_type bind_type)
{
	const struct send_opcode *op = send_opcode(qp->vqp.qp.qp_type,
						   wr->opcode);
	void *slot;
	int ret;

	ret = send_wr_check(qp, wr, op, bind_type);
	if (ret)
		return ret;
	slot = sroce_wq_next_slot(&qp->sq);
	if (!slot)
		return ENOMEM;
	send_wqe_write(qp, wr, op, slot);
	wq_advance(&qp->sq);
	return 0;
}

/*
 * Publish what was written to the SQ with one producer update, drop the
 * SQ's lock, and ring the doorbell outside it if the kernel asks for it.
 * Return: the doorbell's error, or 0.
 */
static int sq_publish_unlock(struct sroce_qp *qp, bool posted)
{
	if (posted)
		wq_publish(&qp->sq);
	pthread_spin_unlock(&qp->sq.lock);
	if (!posted || !wq_needs_doorbell(&qp->sq))
		return 0;
	return sroce_doorbell(qp->vqp.qp.context, SROCE_DOORBELL_SQ,
			      qp->vqp.qp.handle);
}

/*
 * Post the list up to the first request that fails (*bad_wr) and publish
 * the requests written before it. If only the doorbell fails, every
 * request is in the ring but the kernel may not look at it before the next
 * post; that error is returned with *bad_wr NULL.
 */
static int post_send(struct ibv_qp *ibqp, struct ibv_send_wr *wr,
		     struct ibv_send_wr **bad_wr, enum ibv_mw_type bind_type)
{
	struct sroce_qp *qp = to_sqp(ibqp);
	unsigned int posted = 0;
	int ret = 0, err;

	if (!qp_can_send(ibqp)) {
		*bad_wr = wr;
		return EINVAL;
	}

	pthread_spin_lock(&qp->sq.lock);
	for (; wr; wr = wr->next, posted++) {
		ret = sq_post_one(qp, wr, bind_type);
		if (ret) {
			*bad_wr = wr;
			break;
		}
	}
	err = sq_publish_unlock(qp, posted);
	if (err && !ret) {
		*bad_wr = NULL;
		ret = err;
	}
	return ret;
}

static int sroce_post_send(struct ibv_qp *ibqp, struct ibv_send_wr *wr,
			   struct ibv_send_wr **bad_wr)
{
	return post_send(ibqp, wr, bad_wr, IBV_MW_TYPE_2);
}

/* Check and write one receive work request. Called with rq->lock held. */
static int rq_post_one(struct sroce_wq *rq, const struct ibv_recv_wr *wr)
{
	struct sroce_recv_wqe *wqe;

	if (wr->num_sge < 0 || (uint32_t)wr->num_sge > rq->max_sge)
		return EINVAL;
	wqe = sroce_wq_next_slot(rq);
	if (!wqe)
		return ENOMEM;
	wqe->wr_id = wr->wr_id;
	wqe->num_sge = wr->num_sge;
	wqe->reserved = 0;
	memcpy(wqe->sge, wr->sg_list, wr->num_sge * sizeof(struct sroce_sge));
	wq_advance(rq);
	return 0;
}

/*
 * Post a receive list to a QP's RQ or an SRQ as sroce_post_send() does,
 * except that the flags are read before the lock is dropped: a resize may
 * unmap an SRQ's ring as soon as it is. An SRQ whose new ring could not be
 * mapped takes nothing (EIO).
 * Return: whether to ring the doorbell; *ret is the error, if any.
 */
static bool rq_post_list(struct sroce_wq *rq, struct ibv_recv_wr *wr,
			 struct ibv_recv_wr **bad_wr, int *ret)
{
	unsigned int posted = 0;
	bool ring = false;

	*ret = 0;
	pthread_spin_lock(&rq->lock);
	if (!rq->ring.hdr) {
		*ret = EIO;
		*bad_wr = wr;
		goto out;
	}
	for (; wr; wr = wr->next, posted++) {
		*ret = rq_post_one(rq, wr);
		if (*ret) {
			*bad_wr = wr;
			break;
		}
	}
	if (posted) {
		wq_publish(rq);
		ring = wq_needs_doorbell(rq);
	}
out:
	pthread_spin_unlock(&rq->lock);
	return ring;
}

/*
 * Post a receive list, then ring the doorbell of @queue (@handle on
 * @ibctx) if the kernel asked for it. A failing doorbell is returned as
 * post_send() returns it.
 */
static int rq_post(struct sroce_wq *rq, struct ibv_recv_wr *wr,
		   struct ibv_recv_wr **bad_wr, struct ibv_context *ibctx,
		   enum sroce_doorbell queue, uint32_t handle)
{
	int ret, err;

	if (!rq_post_list(rq, wr, bad_wr, &ret))
		return ret;
	err = sroce_doorbell(ibctx, queue, handle);
	if (err && !ret) {
		*bad_wr = NULL;
		ret = err;
	}
	return ret;
}

/* A QP on an SRQ has no RQ of its own to post to. */
static int sroce_post_recv(struct ibv_qp *ibqp, struct ibv_recv_wr *wr,
			   struct ibv_recv_wr **bad_wr)
{
	struct sroce_qp *qp = to_sqp(ibqp);

	if (!qp->rq.ring.hdr || ibqp->state == IBV_QPS_RESET) {
		*bad_wr = wr;
		return EINVAL;
	}
	return rq_post(&qp->rq, wr, bad_wr, ibqp->context, SROCE_DOORBELL_RQ,
		       ibqp->handle);
}

static int sroce_post_srq_recv(struct ibv_srq *ibsrq, struct ibv_recv_wr *wr,
			       struct ibv_recv_wr **bad_wr)
{
	return rq_post(&to_ssrq(ibsrq)->rq, wr, bad_wr, ibsrq->context,
		       SROCE_DOORBELL_SRQ, ibsrq->handle);
}

/*
 * ibv_bind_mw(): bind a type 1 window. It is a BIND_MW work request like a
 * type 2 bind, with the window's next key; the kernel checks it in WQE
 * order and completes it on the send CQ.
 */
static int sroce_bind_mw(struct ibv_qp *ibqp, struct ibv_mw *mw,
			 struct ibv_mw_bind *bind)
{
	struct ibv_send_wr wr = {
		.wr_id = bind->wr_id,
		.opcode = IBV_WR_BIND_MW,
		.send_flags = bind->send_flags,
		.bind_mw = {
			.mw = mw,
			.rkey = ibv_inc_rkey(mw->rkey),
			.bind_info = bind->bind_info,
		},
	};
	struct ibv_send_wr *bad;
	int ret;

	if (mw->type != IBV_MW_TYPE_1 || mw->pd != ibqp->pd)
		return EINVAL;
	ret = post_send(ibqp, &wr, &bad, IBV_MW_TYPE_1);
	if (!ret)
		mw->rkey = wr.bind_mw.rkey;
	return ret;
}

/* ------------------------------------------------------------------ */
/* The extended send API: struct ibv_qp_ex and ibv_wr_*() */

/*
 * A batch is built in the SQ's free slots under the SQ's lock, from
 * wr_start() to wr_complete(), and published by wr_complete() as post_send
 * publishes a list. A builder (wr_send(), wr_rdma_write(), ...) begins an
 * entry: it writes the whole header, zeroing what it does not set, and
 * takes wr_id and wr_flags from the ibv_qp_ex; the setters that follow
 * (wr_set_sge*(), wr_set_inline_data*(), wr_set_ud_addr(),
 * wr_set_xrc_srqn()) fill in the entry the last builder began. The checks
 * are post_send's; their errors are latched, the rest of the batch is
 * ignored, and wr_complete() returns the first one and posts nothing.
 * wr_abort() discards the batch too.
 */

/* What a begun entry must still be given before it can be posted. */
enum {
	WR_NEED_UD_ADDR = 1 << 0,	/* wr_set_ud_addr(): a send on UD */
	WR_NEED_XRC_SRQN = 1 << 1,	/* wr_set_xrc_srqn(): on an XRC QP */
	WR_NEED_ATOMIC_SGE = 1 << 2,	/* an atomic's 8-byte local buffer */
};

/* The send operations of create_qp_ex's send_ops_flags, by opcode. */
static const struct {
	uint64_t flag;
	enum ibv_wr_opcode opcode;
} qp_ex_ops[] = {
	{ IBV_QP_EX_WITH_RDMA_WRITE, IBV_WR_RDMA_WRITE },
	{ IBV_QP_EX_WITH_RDMA_WRITE_WITH_IMM, IBV_WR_RDMA_WRITE_WITH_IMM },
	{ IBV_QP_EX_WITH_SEND, IBV_WR_SEND },
	{ IBV_QP_EX_WITH_SEND_WITH_IMM, IBV_WR_SEND_WITH_IMM },
	{ IBV_QP_EX_WITH_RDMA_READ, IBV_WR_RDMA_READ },
	{ IBV_QP_EX_WITH_ATOMIC_CMP_AND_SWP, IBV_WR_ATOMIC_CMP_AND_SWP },
	{ IBV_QP_EX_WITH_ATOMIC_FETCH_AND_ADD, IBV_WR_ATOMIC_FETCH_AND_ADD },
	{ IBV_QP_EX_WITH_LOCAL_INV, IBV_WR_LOCAL_INV },
	{ IBV_QP_EX_WITH_BIND_MW, IBV_WR_BIND_MW },
	{ IBV_QP_EX_WITH_SEND_WITH_INV, IBV_WR_SEND_WITH_INV },
	{ IBV_QP_EX_WITH_FLUSH, IBV_WR_FLUSH },
	{ IBV_QP_EX_WITH_ATOMIC_WRITE, IBV_WR_ATOMIC_WRITE },
};

/*
 * The layout facts that the two places of VERBS_QP_EX rest on: struct
 * ibv_qp_ex ends with wr_atomic_write (present in 44.0 too) and wr_flush
 * (added in 45), and verbs_qp.comp_mask follows it.
 */
static_assert(offsetof(struct ibv_qp_ex, wr_flush) ==
	      offsetof(struct ibv_qp_ex, wr_atomic_write) + sizeof(void *),
	      "wr_flush follows wr_atomic_write");
static_assert(sizeof(struct ibv_qp_ex) ==
	      offsetof(struct ibv_qp_ex, wr_flush) + sizeof(void *),
	      "wr_flush ends struct ibv_qp_ex");
static_assert(offsetof(struct verbs_qp, comp_mask) == sizeof(struct ibv_qp_ex),
	      "comp_mask follows struct ibv_qp_ex");

/*
 * Ask the running libibverbs where it looks for VERBS_QP_EX: hand its
 * ibv_qp_to_qp_ex() a zeroed verbs_qp (with room to spare) with the flag
 * at one place, then at the other.
 */
static enum sroce_qp_ex_abi qp_ex_probe(void)
{
	static const size_t where[] = {
		[SROCE_QP_EX_FULL] = offsetof(struct verbs_qp, comp_mask),
		[SROCE_QP_EX_NO_FLUSH] = offsetof(struct ibv_qp_ex, wr_flush),
	};
	union {
		struct verbs_qp vqp;
		uint8_t bytes[2 * sizeof(struct verbs_qp)];
	} probe;
	uint32_t mask = VERBS_QP_EX;
	unsigned int abi;

	for (abi = SROCE_QP_EX_FULL; abi < ARRAY_SIZE(where); abi++) {
		memset(&probe, 0, sizeof(probe));
		memcpy(probe.bytes + where[abi], &mask, sizeof(mask));
		if (ibv_qp_to_qp_ex(&probe.vqp.qp) == &probe.vqp.qp_ex)
			return abi;
	}
	return SROCE_QP_EX_NONE;
}

/*
 * create_qp_ex's send_ops_flags: each operation must be one this QP type
 * carries. IBV_QP_EX_WITH_FLUSH needs the wr_flush member, which a
 * libibverbs older than the headers keeps its comp_mask in.
 */
static int qp_ex_check_ops(struct ibv_context *ibctx,
			   const struct ibv_qp_init_attr_ex *attr)
{
	enum sroce_qp_ex_abi abi = to_sctx(ibctx)->qp_ex_abi;
	uint64_t ops = attr->send_ops_flags;
	unsigned int i;

	if (abi == SROCE_QP_EX_NONE || !qpt_bit(attr->qp_type))
		return EOPNOTSUPP;
	if (abi != SROCE_QP_EX_FULL && (ops & IBV_QP_EX_WITH_FLUSH))
		return EOPNOTSUPP;
	for (i = 0; i < ARRAY_SIZE(qp_ex_ops); i++) {
		if (!(ops & qp_ex_ops[i].flag))
			continue;
		if (!send_opcode(attr->qp_type, qp_ex_ops[i].opcode))
			return EOPNOTSUPP;
		ops &= ~qp_ex_ops[i].flag;
	}
	return ops ? EOPNOTSUPP : 0;	/* TSO, or unknown */
}

static void *wr_fail(struct sroce_wr_batch *b, int err)
{
	if (!b->err)
		b->err = err;
	b->wqe = NULL;
	return NULL;
}

/* The entry the last builder began is complete: does it lack anything? */
static void wr_end_entry(struct sroce_wr_batch *b)
{
	if (b->wqe && b->missing)
		wr_fail(b, EINVAL);
	b->wqe = NULL;
}

/*
 * Begin an entry for @opcode in the next free slot, or latch why not.
 * Return: the entry, with its header written, or NULL.
 */
static struct sroce_send_wqe *wr_begin(struct ibv_qp_ex *ibqp,
				       enum ibv_wr_opcode opcode)
{
	struct sroce_qp *qp = ex_to_sqp(ibqp);
	struct sroce_wr_batch *b = &qp->batch;
	enum ibv_qp_type type = ibqp->qp_base.qp_type;
	struct sroce_send_wqe *wqe;

	wr_end_entry(b);
	if (b->err)
		return NULL;
	b->op = send_opcode(type, opcode);
	if (!b->op || (ibqp->wr_flags & ~SROCE_SEND_FLAGS))
		return wr_fail(b, EINVAL);
	wqe = sroce_wq_next_slot(&qp->sq);
	if (!wqe)
		return wr_fail(b, ENOMEM);
	wq_advance(&qp->sq);

	memset(wqe, 0, sizeof(*wqe));
	wqe->wr_id = ibqp->wr_id;
	wqe->opcode = opcode;
	/* Inline data is what wr_set_inline_data*() give, not a flag. */
	wqe->send_flags = (ibqp->wr_flags & ~IBV_SEND_INLINE) | qp->sq_signal;
	b->missing = 0;
	if (type == IBV_QPT_UD)
		b->missing |= WR_NEED_UD_ADDR;
	if (type == IBV_QPT_XRC_SEND)
		b->missing |= WR_NEED_XRC_SRQN;
	if (b->op->kind == SEND_KIND_ATOMIC)
		b->missing |= WR_NEED_ATOMIC_SGE;
	b->wqe = wqe;
	return wqe;
}

/* The 8-byte aligned remote address of an atomic, or latch EINVAL. */
static struct sroce_send_wqe *wr_begin_atomic(struct ibv_qp_ex *ibqp,
					      enum ibv_wr_opcode opcode,
					      uint64_t remote_addr)
{
	if (remote_addr & 7)
		return wr_fail(&ex_to_sqp(ibqp)->batch, EINVAL);
	return wr_begin(ibqp, opcode);
}

static void wr_send(struct ibv_qp_ex *ibqp)
{
	wr_begin(ibqp, IBV_WR_SEND);
}

static void wr_send_imm(struct ibv_qp_ex *ibqp, __be32 imm_data)
{
	struct sroce_send_wqe *wqe = wr_begin(ibqp, IBV_WR_SEND_WITH_IMM);

	if (wqe)
		wqe->ex = (uint32_t)imm_data;	/* network order */
}

static void wr_send_inv(struct ibv_qp_ex *ibqp, uint32_t invalidate_rkey)
{
	struct sroce_send_wqe *wqe = wr_begin(ibqp, IBV_WR_SEND_WITH_INV);

	if (wqe)
		wqe->ex = invalidate_rkey;
}

static struct sroce_send_wqe *wr_rdma(struct ibv_qp_ex *ibqp,
				      enum ibv_wr_opcode opcode, uint32_t rkey,
				      uint64_t remote_addr)
{
	struct sroce_send_wqe *wqe = wr_begin(ibqp, opcode);

	if (wqe) {
		wqe->wr.rdma.remote_addr = remote_addr;
		wqe->wr.rdma.rkey = rkey;
	}
	return wqe;
}

static void wr_rdma_write(struct ibv_qp_ex *ibqp, uint32_t rkey,
			  uint64_t remote_addr)
{
	wr_rdma(ibqp, IBV_WR_RDMA_WRITE, rkey, remote_addr);
}

static void wr_rdma_write_imm(struct ibv_qp_ex *ibqp, uint32_t rkey,
			      uint64_t remote_addr, __be32 imm_data)
{
	struct sroce_send_wqe *wqe;

	wqe = wr_rdma(ibqp, IBV_WR_RDMA_WRITE_WITH_IMM, rkey, remote_addr);
	if (wqe)
		wqe->ex = (uint32_t)imm_data;
}

static void wr_rdma_read(struct ibv_qp_ex *ibqp, uint32_t rkey,
			 uint64_t remote_addr)
{
	wr_rdma(ibqp, IBV_WR_RDMA_READ, rkey, remote_addr);
}

static void wr_atomic(struct ibv_qp_ex *ibqp, enum ibv_wr_opcode opcode,
		      uint32_t rkey, uint64_t remote_addr, uint64_t compare_add,
		      uint64_t swap)
{
	struct sroce_send_wqe *wqe;

	wqe = wr_begin_atomic(ibqp, opcode, remote_addr);
	if (wqe) {
		wqe->wr.atomic.remote_addr = remote_addr;
		wqe->wr.atomic.compare_add = compare_add;
		wqe->wr.atomic.swap = swap;
		wqe->wr.atomic.rkey = rkey;
	}
}

static void wr_atomic_cmp_swp(struct ibv_qp_ex *ibqp, uint32_t rkey,
			      uint64_t remote_addr, uint64_t compare,
			      uint64_t swap)
{
	wr_atomic(ibqp, IBV_WR_ATOMIC_CMP_AND_SWP, rkey, remote_addr, compare,
		  swap);
}

static void wr_atomic_fetch_add(struct ibv_qp_ex *ibqp, uint32_t rkey,
				uint64_t remote_addr, uint64_t add)
{
	wr_atomic(ibqp, IBV_WR_ATOMIC_FETCH_AND_ADD, rkey, remote_addr, add, 0);
}

/* The 8 bytes are copied as they are to appear in the remote memory. */
static void wr_atomic_write(struct ibv_qp_ex *ibqp, uint32_t rkey,
			    uint64_t remote_addr, const void *atomic_wr)
{
	struct sroce_send_wqe *wqe;

	wqe = wr_begin_atomic(ibqp, IBV_WR_ATOMIC_WRITE, remote_addr);
	if (wqe) {
		wqe->wr.atomic_write.remote_addr = remote_addr;
		wqe->wr.atomic_write.rkey = rkey;
		memcpy(wqe->wr.atomic_write.data, atomic_wr,
		       sizeof(wqe->wr.atomic_write.data));
	}
}

static void wr_flush(struct ibv_qp_ex *ibqp, uint32_t rkey,
		     uint64_t remote_addr, size_t len, uint8_t type,
		     uint8_t level)
{
	struct sroce_send_wqe *wqe;

	if (!type || (type & ~(IBV_FLUSH_GLOBAL | IBV_FLUSH_PERSISTENT)) ||
	    (level != IBV_FLUSH_RANGE && level != IBV_FLUSH_MR)) {
		wr_fail(&ex_to_sqp(ibqp)->batch, EINVAL);
		return;
	}
	wqe = wr_begin(ibqp, IBV_WR_FLUSH);
	if (wqe) {
		wqe->wr.flush.remote_addr = remote_addr;
		wqe->wr.flush.length = len;
		wqe->wr.flush.rkey = rkey;
		wqe->wr.flush.type = type;
		wqe->wr.flush.level = level;
	}
}

/* A type 2 window, bound by a work request as post_send binds it. */
static void wr_bind_mw(struct ibv_qp_ex *ibqp, struct ibv_mw *mw,
		       uint32_t rkey, const struct ibv_mw_bind_info *info)
{
	struct sroce_send_wqe *wqe;

	if (!mw || mw->type != IBV_MW_TYPE_2 || !info) {
		wr_fail(&ex_to_sqp(ibqp)->batch, EINVAL);
		return;
	}
	wqe = wr_begin(ibqp, IBV_WR_BIND_MW);
	if (wqe) {
		wqe->ex = rkey;
		wqe->wr.bind_mw.addr = info->addr;
		wqe->wr.bind_mw.length = info->length;
		wqe->wr.bind_mw.mw_rkey = mw->rkey;
		wqe->wr.bind_mw.mr_lkey = info->mr ? info->mr->lkey : 0;
		wqe->wr.bind_mw.access = info->mw_access_flags;
	}
}

static void wr_local_inv(struct ibv_qp_ex *ibqp, uint32_t invalidate_rkey)
{
	struct sroce_send_wqe *wqe = wr_begin(ibqp, IBV_WR_LOCAL_INV);

	if (wqe)
		wqe->ex = invalidate_rkey;
}

/*
 * The entry a setter fills in, or NULL (with EINVAL latched when there is
 * none to fill in without an earlier error).
 */
static struct sroce_send_wqe *wr_current(struct ibv_qp_ex *ibqp)
{
	struct sroce_wr_batch *b = &ex_to_sqp(ibqp)->batch;

	return b->wqe ? b->wqe : wr_fail(b, EINVAL);
}

/* The entry whose data a setter gives, if its opcode carries data. */
static struct sroce_send_wqe *wr_data_entry(struct ibv_qp_ex *ibqp)
{
	struct sroce_wr_batch *b = &ex_to_sqp(ibqp)->batch;
	struct sroce_send_wqe *wqe = wr_current(ibqp);

	if (wqe && b->op->kind != SEND_KIND_SEND &&
	    b->op->kind != SEND_KIND_RDMA && b->op->kind != SEND_KIND_ATOMIC)
		return wr_fail(b, EINVAL);
	return wqe;
}

static void wr_set_sge_list(struct ibv_qp_ex *ibqp, size_t num_sge,
			    const struct ibv_sge *sg_list)
{
	struct sroce_qp *qp = ex_to_sqp(ibqp);
	struct sroce_wr_batch *b = &qp->batch;
	struct sroce_send_wqe *wqe = wr_data_entry(ibqp);
	uint64_t len = 0;
	size_t i;

	if (!wqe)
		return;
	if (num_sge > qp->sq.max_sge) {
		wr_fail(b, EINVAL);
		return;
	}
	for (i = 0; i < num_sge; i++)
		len += sg_list[i].length;
	if (b->op->kind == SEND_KIND_ATOMIC) {
		/* As post_send: the result needs 8 bytes. */
		if (len < 8) {
			wr_fail(b, EINVAL);
			return;
		}
		b->missing &= ~WR_NEED_ATOMIC_SGE;
	}
	wqe->send_flags &= ~SROCE_SEND_INLINE;
	wqe->inline_len = 0;
	wqe->num_sge = num_sge;
	memcpy(wqe->sge, sg_list, num_sge * sizeof(struct sroce_sge));
}

static void wr_set_sge(struct ibv_qp_ex *ibqp, uint32_t lkey, uint64_t addr,
		       uint32_t length)
{
	struct ibv_sge sge = { .addr = addr, .length = length, .lkey = lkey };

	wr_set_sge_list(ibqp, 1, &sge);
}

/* Inline data is the source of the message: not for READ or atomics. */
static void wr_set_inline_data_list(struct ibv_qp_ex *ibqp, size_t num_buf,
				    const struct ibv_data_buf *buf_list)
{
	struct sroce_qp *qp = ex_to_sqp(ibqp);
	struct sroce_wr_batch *b = &qp->batch;
	struct sroce_send_wqe *wqe = wr_data_entry(ibqp);
	uint8_t *dst;
	size_t len = 0, i;

	if (!wqe)
		return;
	for (i = 0; i < num_buf; i++) {
		len += buf_list[i].length;
		if (len > qp->sq.max_inline)
			break;
	}
	if (!b->op->inline_ok || len > qp->sq.max_inline) {
		wr_fail(b, EINVAL);
		return;
	}
	dst = (uint8_t *)wqe->sge;
	for (i = 0; i < num_buf; i++) {
		memcpy(dst, buf_list[i].addr, buf_list[i].length);
		dst += buf_list[i].length;
	}
	wqe->send_flags |= SROCE_SEND_INLINE;
	wqe->num_sge = 0;
	wqe->inline_len = len;
}

static void wr_set_inline_data(struct ibv_qp_ex *ibqp, void *addr,
			       size_t length)
{
	struct ibv_data_buf buf = { .addr = addr, .length = length };

	wr_set_inline_data_list(ibqp, 1, &buf);
}

static void wr_set_ud_addr(struct ibv_qp_ex *ibqp, struct ibv_ah *ah,
			   uint32_t remote_qpn, uint32_t remote_qkey)
{
	struct sroce_wr_batch *b = &ex_to_sqp(ibqp)->batch;
	struct sroce_send_wqe *wqe = wr_current(ibqp);

	if (!wqe)
		return;
	if (ibqp->qp_base.qp_type != IBV_QPT_UD || !ah) {
		wr_fail(b, EINVAL);
		return;
	}
	wqe->wr.ud.ah_num = to_sah(ah)->ah_num;
	wqe->wr.ud.remote_qpn = remote_qpn;
	wqe->wr.ud.remote_qkey = remote_qkey;
	b->missing &= ~WR_NEED_UD_ADDR;
}

static void wr_set_xrc_srqn(struct ibv_qp_ex *ibqp, uint32_t remote_srqn)
{
	struct sroce_wr_batch *b = &ex_to_sqp(ibqp)->batch;
	struct sroce_send_wqe *wqe = wr_current(ibqp);

	if (!wqe)
		return;
	if (ibqp->qp_base.qp_type != IBV_QPT_XRC_SEND) {
		wr_fail(b, EINVAL);
		return;
	}
	wqe->xrc_remote_srqn = remote_srqn;
	b->missing &= ~WR_NEED_XRC_SRQN;
}

/* A QP that cannot send yet fails the whole batch (as post_send would). */
static void wr_start(struct ibv_qp_ex *ibqp)
{
	struct sroce_qp *qp = ex_to_sqp(ibqp);

	pthread_spin_lock(&qp->sq.lock);
	qp->batch = (struct sroce_wr_batch){
		.start = qp->sq.ring.index,
		.room = qp->sq.room,
		.err = qp_can_send(&ibqp->qp_base) ? 0 : EINVAL,
	};
}

/* Forget the batch's entries: their slots are free again. */
static void wr_rewind_unlock(struct sroce_qp *qp)
{
	qp->sq.ring.index = qp->batch.start;
	qp->sq.room = qp->batch.room;
	qp->batch.wqe = NULL;
	pthread_spin_unlock(&qp->sq.lock);
}

/*
 * Post the batch, or nothing if any of it failed. As with post_send, an
 * error of the doorbell alone is returned with the entries in the ring.
 */
static int wr_complete(struct ibv_qp_ex *ibqp)
{
	struct sroce_qp *qp = ex_to_sqp(ibqp);
	struct sroce_wr_batch *b = &qp->batch;
	int err;

	wr_end_entry(b);
	if (b->err) {
		err = b->err;
		wr_rewind_unlock(qp);
		return err;
	}
	return sq_publish_unlock(qp, qp->sq.ring.index != b->start);
}

static void wr_abort(struct ibv_qp_ex *ibqp)
{
	wr_rewind_unlock(ex_to_sqp(ibqp));
}

/*
 * Offer struct ibv_qp_ex: set its operations, then VERBS_QP_EX where the
 * running libibverbs looks (qp_ex_probe()). With SROCE_QP_EX_NO_FLUSH that
 * is the first four bytes of wr_flush, which is therefore left alone;
 * qp_ex_check_ops() refused IBV_QP_EX_WITH_FLUSH. Every member before
 * wr_flush is where 44.0 has it, and all of it is inside this QP's own
 * allocation, whatever the library's idea of its size.
 */
static void qp_ex_init(struct sroce_qp *qp, enum sroce_qp_ex_abi abi)
{
	struct ibv_qp_ex *qpx = &qp->vqp.qp_ex;
	uint8_t *lib_mask = (uint8_t *)qpx + offsetof(struct ibv_qp_ex, wr_flush);
	uint32_t mask;

	qpx->wr_start = wr_start;
	qpx->wr_complete = wr_complete;
	qpx->wr_abort = wr_abort;
	qpx->wr_send = wr_send;
	qpx->wr_send_imm = wr_send_imm;
	qpx->wr_send_inv = wr_send_inv;
	qpx->wr_rdma_write = wr_rdma_write;
	qpx->wr_rdma_write_imm = wr_rdma_write_imm;
	qpx->wr_rdma_read = wr_rdma_read;
	qpx->wr_atomic_cmp_swp = wr_atomic_cmp_swp;
	qpx->wr_atomic_fetch_add = wr_atomic_fetch_add;
	qpx->wr_atomic_write = wr_atomic_write;
	qpx->wr_bind_mw = wr_bind_mw;
	qpx->wr_local_inv = wr_local_inv;
	qpx->wr_set_sge = wr_set_sge;
	qpx->wr_set_sge_list = wr_set_sge_list;
	qpx->wr_set_inline_data = wr_set_inline_data;
	qpx->wr_set_inline_data_list = wr_set_inline_data_list;
	qpx->wr_set_ud_addr = wr_set_ud_addr;
	qpx->wr_set_xrc_srqn = wr_set_xrc_srqn;

	if (abi == SROCE_QP_EX_FULL) {
		qpx->wr_flush = wr_flush;
		qp->vqp.comp_mask |= VERBS_QP_EX;
	} else {
		memcpy(&mask, lib_mask, sizeof(mask));
		mask |= VERBS_QP_EX;
		memcpy(lib_mask, &mask, sizeof(mask));
	}
}

/* ------------------------------------------------------------------ */
/* Address handles */

static struct ibv_ah *sroce_create_ah(struct ibv_pd *ibpd,
				      struct ibv_ah_attr *attr)
{
	struct sroce_cmd_create_ah_resp resp = {};
	struct sroce_ah *ah;
	int ret;

	ah = calloc(1, sizeof(*ah));
	if (!ah)
		return NULL;

	ret = ibv_cmd_create_ah(ibpd, &ah->ibv_ah, attr, &resp.ibv_resp,
				sizeof(resp));
	if (ret) {
		free(ah);
		errno = ret;
		return NULL;
	}
	ah->ah_num = resp.ah_num;
	return &ah->ibv_ah;
}

static int sroce_destroy_ah(struct ibv_ah *ibah)
{
	int ret;

	ret = ibv_cmd_destroy_ah(ibah);
	if (ret)
		return ret;
	free(to_sah(ibah));
	return 0;
}

/* ------------------------------------------------------------------ */
/* Context and device */

static void sroce_free_context(struct ibv_context *ibctx);

static const struct verbs_context_ops sroce_ctx_ops = {
	.query_device_ex = sroce_query_device,
	.query_port = sroce_query_port,
	.alloc_pd = sroce_alloc_pd,
	.dealloc_pd = sroce_dealloc_pd,
	.reg_mr = sroce_reg_mr,
	.dereg_mr = sroce_dereg_mr,
	.rereg_mr = sroce_rereg_mr,
	.alloc_mw = sroce_alloc_mw,
	.dealloc_mw = sroce_dealloc_mw,
	.bind_mw = sroce_bind_mw,
	.open_xrcd = sroce_open_xrcd,
	.close_xrcd = sroce_close_xrcd,
	.create_cq = sroce_create_cq,
	.create_cq_ex = sroce_create_cq_ex,
	.poll_cq = sroce_poll_cq,
	.req_notify_cq = ibv_cmd_req_notify_cq,
	.resize_cq = sroce_resize_cq,
	.destroy_cq = sroce_destroy_cq,
	.create_srq = sroce_create_srq,
	.create_srq_ex = sroce_create_srq_ex,
	.get_srq_num = sroce_get_srq_num,
	.modify_srq = sroce_modify_srq,
	.query_srq = sroce_query_srq,
	.destroy_srq = sroce_destroy_srq,
	.post_srq_recv = sroce_post_srq_recv,
	.create_qp = sroce_create_qp,
	.create_qp_ex = sroce_create_qp_ex,
	.modify_qp = sroce_modify_qp,
	.query_qp = sroce_query_qp,
	.destroy_qp = sroce_destroy_qp,
	.post_send = sroce_post_send,
	.post_recv = sroce_post_recv,
	.create_ah = sroce_create_ah,
	.destroy_ah = sroce_destroy_ah,
	.attach_mcast = ibv_cmd_attach_mcast,
	.detach_mcast = ibv_cmd_detach_mcast,
	.free_context = sroce_free_context,
};

/* The queue header must fit before the entries and keep them aligned. */
static bool context_resp_valid(const struct sroce_cmd_get_context_resp *resp)
{
	return resp->queue_data_offset >= sizeof(struct sroce_queue_hdr) &&
	       resp->queue_data_offset % 64 == 0;
}

static struct verbs_context *sroce_alloc_context(struct ibv_device *ibdev,
						 int cmd_fd,
						 void *private_data)
{
	struct sroce_cmd_get_context cmd = {};
	struct sroce_cmd_get_context_resp resp = {};
	struct sroce_context *ctx;
	int ret;

	ctx = verbs_init_and_alloc_context(ibdev, cmd_fd, ctx, ibv_ctx,
					   RDMA_DRIVER_UNKNOWN);
	if (!ctx)
		return NULL;

	ret = ibv_cmd_get_context(&ctx->ibv_ctx, &cmd.ibv_cmd, sizeof(cmd),
				  &resp.ibv_resp, sizeof(resp));
	if (ret)
		goto err_free;

	ret = EPROTO;
	if (!context_resp_valid(&resp)) {
		verbs_err(&ctx->ibv_ctx,
			  "sroce: kernel reports queue data offset %u\n",
			  resp.queue_data_offset);
		goto err_free;
	}
	ctx->queue_data_offset = resp.queue_data_offset;
	ctx->max_inline_data = resp.max_inline_data;
	ctx->qp_ex_abi = qp_ex_probe();

	verbs_set_ops(&ctx->ibv_ctx, &sroce_ctx_ops);
	return &ctx->ibv_ctx;

err_free:
	verbs_uninit_context(&ctx->ibv_ctx);
	free(ctx);
	errno = ret;
	return NULL;
}

static void sroce_free_context(struct ibv_context *ibctx)
{
	struct sroce_context *ctx = to_sctx(ibctx);

	verbs_uninit_context(&ctx->ibv_ctx);
	free(ctx);
}

/*
 * libibverbs calls this after the table match. A device with a driver id
 * of its own belongs to that driver's provider whatever its name.
 */
static bool sroce_match_device(struct verbs_sysfs_dev *sysfs_dev)
{
	return sysfs_dev->match &&
	       sysfs_dev->driver_id == RDMA_DRIVER_UNKNOWN;
}

static struct verbs_device *sroce_device_alloc(struct verbs_sysfs_dev *unused)
{
	struct sroce_device *dev;

	dev = calloc(1, sizeof(*dev));
	if (!dev)
		return NULL;
	return &dev->ibv_dev;
}

static void sroce_device_uninit(struct verbs_device *vdev)
{
	free(to_sdev(&vdev->device));
}

static const struct verbs_device_ops sroce_dev_ops = {
	.name = "sroce",
	.match_min_abi_version = SROCE_UVERBS_ABI_VERSION,
	.match_max_abi_version = SROCE_UVERBS_ABI_VERSION,
	.match_table = sroce_match_table,
	.match_device = sroce_match_device,
	.alloc_device = sroce_device_alloc,
	.uninit_device = sroce_device_uninit,
	.alloc_context = sroce_alloc_context,
};
PROVIDER_DRIVER(sroce, sroce_dev_ops);
