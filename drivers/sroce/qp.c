// SPDX-License-Identifier: GPL-2.0 OR Linux-OpenIB
/*
 * DOC: Queue pairs
 *
 * A QP owns a send ring and, unless it uses an SRQ, a receive ring, with
 * entries as the ABI defines them (struct sroce_send_wqe and struct
 * sroce_recv_wqe). A user QP's rings are mapped into its process; a kernel
 * QP's rings are filled by sroce_qp_post_send() and sroce_qp_post_recv().
 *
 * QP numbers: 1 is the GSI QP (IBA 13.5.1; RoCE has no QP0); ordinary QPs
 * take numbers from SROCE_FIRST_QPN on. A QP is stored in the device's QP
 * table only when it is fully built, and erased from it first on destroy.
 */
#include <rdma/ib_user_verbs.h>
#include <rdma/sroce-abi.h>

#include "cq.h"
#include "device.h"
#include "params.h"
#include "qp.h"
#include "qp_core.h"
#include "srq.h"
#include "ucontext.h"
#include "wqe.h"

static_assert(sizeof(struct sroce_send_wqe) == 64);
static_assert(sizeof(struct sroce_recv_wqe) == 16);

static int check_init_attr(struct sroce_dev *sdev,
			   const struct ib_qp_init_attr *init, bool user)
{
	const struct ib_qp_cap *cap = &init->cap;

	switch (init->qp_type) {
	case IB_QPT_RC:
	case IB_QPT_UC:
	case IB_QPT_UD:
		break;
	case IB_QPT_GSI:
		if (init->port_num != 1)
			return -EINVAL;
		break;
	case IB_QPT_XRC_INI:
		/* Its WQEs name a remote SRQ, which ib_send_wr cannot. */
		if (!user)
			return -EOPNOTSUPP;
		if (init->srq || cap->max_recv_wr || cap->max_recv_sge)
			return -EINVAL;
		break;
	case IB_QPT_XRC_TGT:
		/* Created for the XRC domain, with no queue of its own. */
		if (!init->xrcd)
			return -EINVAL;
		return init->create_flags ? -EOPNOTSUPP : 0;
	default:
		return -EOPNOTSUPP;
	}
	if (init->create_flags || init->rwq_ind_tbl)
		return -EOPNOTSUPP;
	if (cap->max_send_wr > SROCE_MAX_QP_WR ||
	    cap->max_send_sge > SROCE_MAX_SEND_SGE ||
	    cap->max_inline_data > SROCE_MAX_INLINE_DATA)
		return -EINVAL;
	if (!init->srq && (cap->max_recv_wr > SROCE_MAX_QP_WR ||
			   cap->max_recv_sge > SROCE_MAX_RECV_SGE))
		return -EINVAL;
	return 0;
}

/*
 * Size the rings, allocate them and report what they hold. An XRC target
 * QP sends only responses: its SQ is one unused entry, which keeps the
 * send engine's view of an empty ring.
 */
static int init_queues(struct sroce_qp *qp, struct ib_qp_init_attr *init)
{
	enum sroce_queue_side side = qp->user ? SROCE_QUEUE_USER_PRODUCER :
						SROCE_QUEUE_KERNEL;
	struct ib_qp_cap *cap = &init->cap;
	u32 room, size;
	int err;

	if (init->qp_type == IB_QPT_XRC_TGT)
		memset(cap, 0, sizeof(*cap));
	room = max(cap->max_send_sge * sizeof(struct sroce_sge),
		   cap->max_inline_data);
	size = ALIGN(sizeof(struct sroce_send_wqe) + room, 64);
	err = sroce_queue_init(&qp->sq, max(cap->max_send_wr, 1U), size, side);
	if (err)
		return err;
	room = size - sizeof(struct sroce_send_wqe);
	if (init->qp_type != IB_QPT_XRC_TGT) {
		cap->max_send_wr = qp->sq.num_entries;
		cap->max_send_sge = min_t(u32, room / sizeof(struct sroce_sge),
					  SROCE_MAX_SEND_SGE);
		cap->max_inline_data = min_t(u32, room, SROCE_MAX_INLINE_DATA);
	}

	if (!sroce_qp_has_rq(qp)) {
		cap->max_recv_wr = 0;
		cap->max_recv_sge = 0;
	} else {
		size = ALIGN(sizeof(struct sroce_recv_wqe) +
			     max(cap->max_recv_sge, 1U) *
			     sizeof(struct sroce_sge), 64);
		err = sroce_queue_init(&qp->rq, cap->max_recv_wr, size, side);
		if (err)
			goto err_sq;
		cap->max_recv_wr = qp->rq.num_entries;
		cap->max_recv_sge = min_t(u32, (size - sizeof(struct sroce_recv_wqe)) /
					  sizeof(struct sroce_sge),
					  SROCE_MAX_RECV_SGE);
	}
	qp->cap = *cap;
	return 0;

err_sq:
	sroce_queue_cleanup(&qp->sq);
	return err;
}

static void cleanup_queues(struct sroce_qp *qp)
{
	if (sroce_qp_has_rq(qp))
		sroce_queue_cleanup(&qp->rq);
	sroce_queue_cleanup(&qp->sq);
}

static int publish_queues(struct sroce_qp *qp, struct ib_udata *udata)
{
	struct ib_ucontext *uctx = sroce_udata_ucontext(udata);
	struct sroce_create_qp_resp resp = {};
	int err;

	err = sroce_queue_publish(&qp->sq, uctx, &resp.sq);
	if (err)
		return err;
	if (sroce_qp_has_rq(qp)) {
		err = sroce_queue_publish(&qp->rq, uctx, &resp.rq);
		if (err)
			return err;
	}
	return ib_copy_to_udata(udata, &resp, min(sizeof(resp), udata->outlen));
}

/* Reserve a QP number; the QP is stored under it once complete. */
static int alloc_qpn(struct sroce_dev *sdev, enum ib_qp_type type, u32 *qpn)
{
	static u32 next = SROCE_FIRST_QPN;	/* a hint; races are harmless */
	int err;

	if (type == IB_QPT_GSI) {
		*qpn = 1;
		return xa_insert_bh(&sdev->qps, 1, NULL, GFP_KERNEL);
	}
	err = xa_alloc_cyclic_bh(&sdev->qps, qpn, NULL,
				 XA_LIMIT(SROCE_FIRST_QPN, SROCE_MAX_QPN),
				 &next, GFP_KERNEL);
	return err < 0 ? err : 0;
}

/**
 * sroce_qp_create() - ib_device_ops.create_qp
 * @ibqp: the QP, allocated by the RDMA core
 * @init: type, CQs, SRQ and sizes; the sizes are updated to what the QP
 *        holds
 * @udata: response to the provider, or NULL for a kernel QP
 *
 * Return: 0, -EOPNOTSUPP for a QP type or flag we lack, -EINVAL for sizes
 * past the device limits, or another negative errno.
 */
int sroce_qp_create(struct ib_qp *ibqp, struct ib_qp_init_attr *init,
		    struct ib_udata *udata)
{
	struct sroce_dev *sdev = to_sdev(ibqp->device);
	struct sroce_qp *qp = to_sqp(ibqp);
	u32 qpn;
	int err;

	err = check_init_attr(sdev, init, !!udata);
	if (err)
		return err;
	err = sroce_dev_obj_get(sdev, SROCE_OBJ_QP);
	if (err)
		return err;

	mutex_init(&qp->mutex);
	spin_lock_init(&qp->sq_lock);
	spin_lock_init(&qp->rq_lock);
	spin_lock_init(&qp->state_lock);
	refcount_set(&qp->ref, 1);
	init_completion(&qp->released);
	qp->state = IB_QPS_RESET;
	qp->scq = init->send_cq ? to_scq(init->send_cq) : NULL;
	qp->rcq = init->recv_cq ? to_scq(init->recv_cq) : NULL;
	qp->srq = init->srq ? to_ssrq(init->srq) : NULL;
	qp->xrcd = init->qp_type == IB_QPT_XRC_TGT ? init->xrcd : NULL;
	qp->sq_sig_all = init->sq_sig_type == IB_SIGNAL_ALL_WR;
	qp->user = !!udata;
	qp->engine_bh = sroce_task_engine_bh();

	err = init_queues(qp, init);
	if (err)
		goto err_put;
	err = dst_cache_init(&qp->dst_cache, GFP_KERNEL);
	if (err)
		goto err_queues;
	err = sroce_req_init(qp);
	if (err)
		goto err_dst;
	sroce_resp_init(qp);
	err = alloc_qpn(sdev, init->qp_type, &qpn);
	if (err)
		goto err_req;
	ibqp->qp_num = qpn;
	if (udata) {
		err = publish_queues(qp, udata);
		if (err)
			goto err_qpn;
	}
	/* Posting before RTS rings the doorbell; RTS runs the engine anyway. */
	WRITE_ONCE(qp->sq.hdr->flags, SROCE_QUEUE_NEED_WAKEUP);
	xa_store_bh(&sdev->qps, qpn, qp, GFP_KERNEL);
	return 0;

err_qpn:
	xa_erase_bh(&sdev->qps, qpn);
err_req:
	sroce_req_cleanup(qp);
err_dst:
	dst_cache_destroy(&qp->dst_cache);
err_queues:
	cleanup_queues(qp);
err_put:
	mutex_destroy(&qp->mutex);
	sroce_dev_obj_put(sdev, SROCE_OBJ_QP);
	return err;
}

/**
 * sroce_qp_destroy() - ib_device_ops.destroy_qp
 * @ibqp: the QP
 * @udata: unused
 *
 * The QP leaves the QP table first, so no packet can find it; then we wait
 * for the lookups in progress, stop the engines and their timers, and free
 * what is left. Work requests still posted are dropped without
 * completions (IBA 10.3.1).
 *
 * Each engine may wake the other while it runs (an error moves the QP to
 * ERR, which runs both) and the send engine's timers wake it, so stopping
 * one by waiting for it is not enough: sroce_task_stop() marks an engine
 * stopped before it waits, and a stopped engine is never scheduled again.
 * Once both are stopped, nothing of the QP runs or can be made to run.
 *
 * Return: 0.
 */
int sroce_qp_destroy(struct ib_qp *ibqp, struct ib_udata *udata)
{
	struct sroce_dev *sdev = to_sdev(ibqp->device);
	struct sroce_qp *qp = to_sqp(ibqp);

	xa_erase_bh(&sdev->qps, ibqp->qp_num);
	sroce_qp_put(qp);
	wait_for_completion(&qp->released);
	sroce_req_stop(qp);
	sroce_resp_stop(qp);
	/* Our own packets may have waited in our own receive queue. */
	sroce_zcopy_drain(qp);

	sroce_resp_cleanup(qp);
	sroce_req_cleanup(qp);
	dst_cache_destroy(&qp->dst_cache);
	cleanup_queues(qp);
	mutex_destroy(&qp->mutex);
	sroce_dev_obj_put(sdev, SROCE_OBJ_QP);
	return 0;
}

static void fill_init_attr(struct sroce_qp *qp, struct ib_qp_init_attr *init)
{
	init->event_handler = qp->ibqp.event_handler;
	init->qp_context = qp->ibqp.qp_context;
	init->send_cq = qp->ibqp.send_cq;
	init->recv_cq = qp->ibqp.recv_cq;
	init->srq = qp->ibqp.srq;
	init->cap = qp->cap;
	init->sq_sig_type = qp->sq_sig_all ? IB_SIGNAL_ALL_WR : IB_SIGNAL_REQ_WR;
	init->qp_type = qp->ibqp.qp_type;
	init->port_num = 1;
}

/**
 * sroce_qp_query() - ib_device_ops.query_qp
 * @ibqp: the QP
 * @attr: current attributes
 * @mask: attributes asked for; all are filled
 * @init: creation attributes
 *
 * Return: 0.
 */
int sroce_qp_query(struct ib_qp *ibqp, struct ib_qp_attr *attr, int mask,
		   struct ib_qp_init_attr *init)
{
	struct sroce_qp *qp = to_sqp(ibqp);
	const struct sroce_qp_attr *a = &qp->attr;

	memset(attr, 0, sizeof(*attr));
	mutex_lock(&qp->mutex);
	attr->qp_state = READ_ONCE(qp->state);
	attr->cur_qp_state = attr->qp_state;
	attr->path_mtu = a->path_mtu;
	attr->path_mig_state = IB_MIG_MIGRATED;
	attr->qkey = a->qkey;
	attr->rq_psn = a->rq_psn;
	attr->sq_psn = a->sq_psn;
	attr->dest_qp_num = a->dest_qpn;
	attr->qp_access_flags = a->access_flags;
	attr->cap = qp->cap;
	if (a->av_valid)
		sroce_av_to_attr(&a->av, &attr->ah_attr);
	attr->pkey_index = a->pkey_index;
	attr->en_sqd_async_notify = a->en_sqd_async_notify;
	attr->sq_draining = 0;
	attr->max_rd_atomic = a->max_rd_atomic;
	attr->max_dest_rd_atomic = a->max_dest_rd_atomic;
	attr->min_rnr_timer = a->min_rnr_timer;
	attr->port_num = 1;
	attr->timeout = a->timeout;
	attr->retry_cnt = a->retry_cnt;
	attr->rnr_retry = a->rnr_retry;
	fill_init_attr(qp, init);
	mutex_unlock(&qp->mutex);
	return 0;
}

static int post_one_send(struct sroce_qp *qp, const struct ib_send_wr *wr)
{
	struct sroce_send_wqe *w;
	u32 i, len = 0;

	if (wr->num_sge < 0)
		return -EINVAL;
	w = sroce_queue_tail(&qp->sq);
	if (IS_ERR_OR_NULL(w))
		return -ENOMEM;
	memset(w, 0, sizeof(*w));
	w->wr_id = wr->wr_id;
	w->opcode = wr->opcode;
	w->send_flags = wr->send_flags;
	if (wr->opcode == IB_WR_SEND_WITH_INV || wr->opcode == IB_WR_LOCAL_INV)
		w->ex = wr->ex.invalidate_rkey;
	else
		w->ex = (__force u32)wr->ex.imm_data;

	switch (wr->opcode) {
	case IB_WR_SEND:
	case IB_WR_SEND_WITH_IMM:
	case IB_WR_SEND_WITH_INV:
		if (qp->ibqp.qp_type == IB_QPT_UD ||
		    qp->ibqp.qp_type == IB_QPT_GSI) {
			w->wr.ud.ah_num = to_sah(ud_wr(wr)->ah)->ah_num;
			w->wr.ud.remote_qpn = ud_wr(wr)->remote_qpn;
			w->wr.ud.remote_qkey = ud_wr(wr)->remote_qkey;
		}
		break;
	case IB_WR_RDMA_WRITE:
	case IB_WR_RDMA_WRITE_WITH_IMM:
	case IB_WR_RDMA_READ:
		w->wr.rdma.remote_addr = rdma_wr(wr)->remote_addr;
		w->wr.rdma.rkey = rdma_wr(wr)->rkey;
		break;
	case IB_WR_ATOMIC_CMP_AND_SWP:
	case IB_WR_ATOMIC_FETCH_AND_ADD:
		w->wr.atomic.remote_addr = atomic_wr(wr)->remote_addr;
		w->wr.atomic.compare_add = atomic_wr(wr)->compare_add;
		w->wr.atomic.swap = atomic_wr(wr)->swap;
		w->wr.atomic.rkey = atomic_wr(wr)->rkey;
		break;
	case IB_WR_LOCAL_INV:
		break;
	case IB_WR_REG_MR:
		w->wr.bind_mw.mr_lkey = reg_wr(wr)->mr->lkey;
		w->ex = reg_wr(wr)->key;
		w->wr.bind_mw.access = reg_wr(wr)->access;
		break;
	default:
		return -EINVAL;
	}

	if (wr->send_flags & IB_SEND_INLINE) {
		/* Kernel SGEs hold kernel virtual addresses (virtual DMA). */
		for (i = 0; i < wr->num_sge; i++) {
			if (wr->sg_list[i].length > qp->cap.max_inline_data - len)
				return -EINVAL;
			memcpy((u8 *)w->sge + len,
			       (void *)(uintptr_t)wr->sg_list[i].addr,
			       wr->sg_list[i].length);
			len += wr->sg_list[i].length;
		}
		w->inline_len = len;
	} else {
		if (wr->num_sge > qp->cap.max_send_sge)
			return -EINVAL;
		for (i = 0; i < wr->num_sge; i++) {
			w->sge[i].addr = wr->sg_list[i].addr;
			w->sge[i].length = wr->sg_list[i].length;
			w->sge[i].lkey = wr->sg_list[i].lkey;
		}
		w->num_sge = wr->num_sge;
	}
	sroce_queue_push(&qp->sq);
	return 0;
}

/**
 * sroce_qp_post_send() - ib_device_ops.post_send
 * @ibqp: the QP
 * @wr: work requests (kernel QP), or NULL: the doorbell of a user QP
 * @bad_wr: set to the first one not posted
 *
 * A process posts in its mapped SQ and rings this doorbell (the uverbs
 * post-send command with no work request) when the ring's flags ask for
 * it; the send engine then runs here, in process context.
 *
 * Context: any, for a kernel QP.
 * Return: 0, -EINVAL for a QP in RESET, an XRC target QP (it has no SQ)
 * or a bad work request (too many SGEs, inline data too long, an opcode
 * we lack; a user QP passing work requests), -ENOMEM when the SQ is full.
 */
int sroce_qp_post_send(struct ib_qp *ibqp, const struct ib_send_wr *wr,
		       const struct ib_send_wr **bad_wr)
{
	struct sroce_qp *qp = to_sqp(ibqp);
	unsigned long flags;
	int err = 0;

	if (ibqp->qp_type == IB_QPT_XRC_TGT) {
		*bad_wr = wr;
		return -EINVAL;
	}
	if (qp->user) {
		if (wr) {
			*bad_wr = wr;
			return -EINVAL;
		}
		sroce_task_run(&qp->req.task);
		return 0;
	}
	spin_lock_irqsave(&qp->sq_lock, flags);
	if (READ_ONCE(qp->state) == IB_QPS_RESET)
		err = -EINVAL;
	while (wr && !err) {
		err = post_one_send(qp, wr);
		if (!err)
			wr = wr->next;
	}
	spin_unlock_irqrestore(&qp->sq_lock, flags);
	if (err)
		*bad_wr = wr;
	sroce_task_run(&qp->req.task);
	return err;
}

/**
 * sroce_qp_post_recv() - ib_device_ops.post_recv
 * @ibqp: the QP
 * @wr: work requests (kernel QP), or NULL: the doorbell of a user QP
 * @bad_wr: set to the first one not posted
 *
 * Receives may be posted from the INIT state on (IBA 10.8.2.2); in the
 * error state they are flushed at once. A process rings this doorbell
 * only when the RQ's flags ask for it (the QP is in the error state).
 *
 * Context: any, for a kernel QP.
 * Return: 0, -EINVAL for a QP in RESET, without an RQ of its own (on an
 * SRQ, or XRC), or a WR with too many SGEs, -ENOMEM when the ring is full.
 */
int sroce_qp_post_recv(struct ib_qp *ibqp, const struct ib_recv_wr *wr,
		       const struct ib_recv_wr **bad_wr)
{
	struct sroce_qp *qp = to_sqp(ibqp);
	unsigned long flags;
	int err = 0;

	if (!sroce_qp_has_rq(qp) || (qp->user && wr)) {
		*bad_wr = wr;
		return -EINVAL;
	}
	if (!qp->user) {
		spin_lock_irqsave(&qp->rq_lock, flags);
		if (READ_ONCE(qp->state) == IB_QPS_RESET)
			err = -EINVAL;
		while (wr && !err) {
			err = sroce_wqe_post_recv(&qp->rq, wr,
						  qp->cap.max_recv_sge);
			if (!err)
				wr = wr->next;
		}
		spin_unlock_irqrestore(&qp->rq_lock, flags);
		if (err)
			*bad_wr = wr;
	}
	if (READ_ONCE(qp->state) == IB_QPS_ERR)
		sroce_task_run(&qp->resp.task);
	return err;
}
