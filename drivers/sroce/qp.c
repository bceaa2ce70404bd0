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
#include "srq.h"
#include "ucontext.h"
#include "wqe.h"

static_assert(sizeof(struct sroce_send_wqe) == 64);
static_assert(sizeof(struct sroce_recv_wqe) == 16);

static int check_init_attr(struct sroce_dev *sdev,
			   const struct ib_qp_init_attr *init)
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

/* Size the rings, allocate them and report what they hold. */
static int init_queues(struct sroce_qp *qp, struct ib_qp_init_attr *init)
{
	enum sroce_queue_side side = qp->user ? SROCE_QUEUE_USER_PRODUCER :
						SROCE_QUEUE_KERNEL;
	struct ib_qp_cap *cap = &init->cap;
	u32 room, size;
	int err;

	room = max(cap->max_send_sge * sizeof(struct sroce_sge),
		   cap->max_inline_data);
	size = ALIGN(sizeof(struct sroce_send_wqe) + room, 64);
	err = sroce_queue_init(&qp->sq, cap->max_send_wr, size, side);
	if (err)
		return err;
	room = size - sizeof(struct sroce_send_wqe);
	cap->max_send_wr = qp->sq.num_entries;
	cap->max_send_sge = min_t(u32, room / sizeof(struct sroce_sge),
				  SROCE_MAX_SEND_SGE);
	cap->max_inline_data = min_t(u32, room, SROCE_MAX_INLINE_DATA);

	if (init->srq) {
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
	if (!qp->srq)
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
	if (!qp->srq) {
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
		return xa_insert(&sdev->qps, 1, NULL, GFP_KERNEL);
	}
	err = xa_alloc_cyclic(&sdev->qps, qpn, NULL,
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

	err = check_init_attr(sdev, init);
	if (err)
		return err;
	err = sroce_dev_obj_get(sdev, SROCE_OBJ_QP);
	if (err)
		return err;

	mutex_init(&qp->mutex);
	spin_lock_init(&qp->sq_lock);
	spin_lock_init(&qp->rq_lock);
	qp->state = IB_QPS_RESET;
	qp->scq = to_scq(init->send_cq);
	qp->rcq = to_scq(init->recv_cq);
	qp->srq = init->srq ? to_ssrq(init->srq) : NULL;
	qp->sq_sig_all = init->sq_sig_type == IB_SIGNAL_ALL_WR;
	qp->user = !!udata;

	err = init_queues(qp, init);
	if (err)
		goto err_put;
	err = alloc_qpn(sdev, init->qp_type, &qpn);
	if (err)
		goto err_queues;
	ibqp->qp_num = qpn;
	if (udata) {
		err = publish_queues(qp, udata);
		if (err)
			goto err_qpn;
	}
	xa_store(&sdev->qps, qpn, qp, GFP_KERNEL);
	return 0;

err_qpn:
	xa_erase(&sdev->qps, qpn);
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
 * Return: 0.
 */
int sroce_qp_destroy(struct ib_qp *ibqp, struct ib_udata *udata)
{
	struct sroce_dev *sdev = to_sdev(ibqp->device);
	struct sroce_qp *qp = to_sqp(ibqp);

	xa_erase(&sdev->qps, ibqp->qp_num);
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

/**
 * sroce_qp_event() - raise an asynchronous event on a QP
 * @qp: the QP
 * @type: the event
 */
void sroce_qp_event(struct sroce_qp *qp, enum ib_event_type type)
{
	struct ib_event ev = {
		.device = qp->ibqp.device,
		.element.qp = &qp->ibqp,
		.event = type,
	};

	if (qp->ibqp.event_handler)
		qp->ibqp.event_handler(&ev, qp->ibqp.qp_context);
}

/* The completion opcode of a send work request (IBA 11.4.2.1). */
static enum ib_wc_opcode send_wc_opcode(u32 wr_opcode)
{
	switch (wr_opcode) {
	case IB_UVERBS_WR_RDMA_WRITE:
	case IB_UVERBS_WR_RDMA_WRITE_WITH_IMM:
		return IB_WC_RDMA_WRITE;
	case IB_UVERBS_WR_RDMA_READ:
		return IB_WC_RDMA_READ;
	case IB_UVERBS_WR_ATOMIC_CMP_AND_SWP:
		return IB_WC_COMP_SWAP;
	case IB_UVERBS_WR_ATOMIC_FETCH_AND_ADD:
		return IB_WC_FETCH_ADD;
	case IB_UVERBS_WR_LOCAL_INV:
		return IB_WC_LOCAL_INV;
	case IB_UVERBS_WR_BIND_MW:
		return IB_WC_BIND_MW;
	default:
		return IB_WC_SEND;
	}
}

/*
 * Complete every WQE posted on @q with IB_WC_WR_FLUSH_ERR (IBA 10.3.1,
 * 11.4.2: in the error state outstanding work requests complete in error,
 * signaled or not). Only the entries present when we start are flushed,
 * so a process that keeps posting cannot keep us here.
 */
static void flush_queue(struct sroce_qp *qp, struct sroce_queue *q,
			struct sroce_cq *cq, bool send)
{
	struct ib_wc wc = {
		.status = IB_WC_WR_FLUSH_ERR,
		.opcode = IB_WC_RECV,
		.qp = &qp->ibqp,
	};
	u32 count;

	if (sroce_queue_count(q, &count))
		return;
	while (count--) {
		struct sroce_send_wqe *swqe = sroce_queue_slot(q, q->cons);

		/* Both WQE layouts start with wr_id. */
		wc.wr_id = READ_ONCE(swqe->wr_id);
		if (send)
			wc.opcode = send_wc_opcode(READ_ONCE(swqe->opcode));
		if (sroce_cq_post(cq, &wc, false))
			return;
		sroce_queue_pop(q);
	}
}

/**
 * sroce_qp_flush() - complete all outstanding work requests in error
 * @qp: a QP in the error state
 */
void sroce_qp_flush(struct sroce_qp *qp)
{
	unsigned long flags;

	spin_lock_irqsave(&qp->sq_lock, flags);
	flush_queue(qp, &qp->sq, qp->scq, true);
	spin_unlock_irqrestore(&qp->sq_lock, flags);

	if (qp->srq)
		return;
	spin_lock_irqsave(&qp->rq_lock, flags);
	flush_queue(qp, &qp->rq, qp->rcq, false);
	spin_unlock_irqrestore(&qp->rq_lock, flags);
}

/**
 * sroce_qp_post_send() - ib_device_ops.post_send, for kernel QPs
 * @ibqp: the QP
 * @wr: work requests
 * @bad_wr: set to the first one not posted
 *
 * Return: -EOPNOTSUPP: the send data path is not there yet.
 */
int sroce_qp_post_send(struct ib_qp *ibqp, const struct ib_send_wr *wr,
		       const struct ib_send_wr **bad_wr)
{
	*bad_wr = wr;
	return -EOPNOTSUPP;
}

/**
 * sroce_qp_post_recv() - ib_device_ops.post_recv, for kernel QPs
 * @ibqp: the QP
 * @wr: work requests
 * @bad_wr: set to the first one not posted
 *
 * Receives may be posted from the INIT state on (IBA 10.8.2.2); in the
 * error state they complete at once with a flush error.
 *
 * Context: any.
 * Return: 0, -EINVAL for a QP in RESET, on an SRQ, or a WR with too many
 * SGEs, -ENOMEM when the ring is full.
 */
int sroce_qp_post_recv(struct ib_qp *ibqp, const struct ib_recv_wr *wr,
		       const struct ib_recv_wr **bad_wr)
{
	struct sroce_qp *qp = to_sqp(ibqp);
	unsigned long flags;
	int err = 0;

	if (qp->srq || qp->user) {
		*bad_wr = wr;
		return -EINVAL;
	}
	spin_lock_irqsave(&qp->rq_lock, flags);
	if (qp->state == IB_QPS_RESET)
		err = -EINVAL;
	while (wr && !err) {
		err = sroce_wqe_post_recv(&qp->rq, wr, qp->cap.max_recv_sge);
		if (!err)
			wr = wr->next;
	}
	if (err)
		*bad_wr = wr;
	if (qp->state == IB_QPS_ERR)
		flush_queue(qp, &qp->rq, qp->rcq, false);
	spin_unlock_irqrestore(&qp->rq_lock, flags);
	return err;
}
