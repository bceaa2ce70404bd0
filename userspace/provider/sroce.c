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
#include "post.h"

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

	if (abi == SROCE_QP_EX_NONE || !sroce_qpt_bit(attr->qp_type))
		return EOPNOTSUPP;
	if (abi != SROCE_QP_EX_FULL && (ops & IBV_QP_EX_WITH_FLUSH))
		return EOPNOTSUPP;
	for (i = 0; i < ARRAY_SIZE(qp_ex_ops); i++) {
		if (!(ops & qp_ex_ops[i].flag))
			continue;
		if (!sroce_send_opcode(attr->qp_type, qp_ex_ops[i].opcode))
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
	b->op = sroce_send_opcode(type, opcode);
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

	if (wqe)
		wqe_set_rdma(wqe, remote_addr, rkey);
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
	if (wqe)
		wqe_set_atomic(wqe, remote_addr, compare_add, swap, rkey);
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
		wqe_set_bind_mw(wqe, mw, info);
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
	wqe_set_ud(wqe, ah, remote_qpn, remote_qkey);
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
	return sroce_sq_publish_unlock(qp, qp->sq.ring.index != b->start);
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
