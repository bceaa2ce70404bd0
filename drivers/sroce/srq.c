// SPDX-License-Identifier: GPL-2.0 OR Linux-OpenIB
/*
 * DOC: Shared receive queues
 *
 * An SRQ is a receive ring that many QPs draw from (IBA 10.2.9). Its size
 * is fixed at creation: resizing (IB_SRQ_MAX_WR) is not supported and the
 * device does not claim IB_DEVICE_SRQ_RESIZE. The limit event (IBA
 * 10.2.9.4) is armed with IB_SRQ_LIMIT.
 */
#include <rdma/sroce-abi.h>

#include "device.h"
#include "params.h"
#include "resp.h"
#include "srq.h"
#include "ucontext.h"
#include "wqe.h"

static int check_init(const struct ib_srq_init_attr *init)
{
	const struct ib_srq_attr *a = &init->attr;

	if (init->srq_type != IB_SRQT_BASIC)
		return -EOPNOTSUPP;
	/* srq_limit means nothing at creation (IBA 11.2.3.1): not armed. */
	if (!a->max_wr || a->max_wr > SROCE_MAX_SRQ_WR ||
	    a->max_sge > SROCE_MAX_SRQ_SGE)
		return -EINVAL;
	return 0;
}

static int publish(struct sroce_srq *srq, struct ib_udata *udata)
{
	struct sroce_create_srq_resp resp = { .srq_num = srq->srq_num };
	int err;

	err = sroce_queue_publish(&srq->rq, sroce_udata_ucontext(udata),
				  &resp.rq);
	if (err)
		return err;
	return ib_copy_to_udata(udata, &resp, min(sizeof(resp), udata->outlen));
}

/**
 * sroce_srq_create() - ib_device_ops.create_srq
 * @ibsrq: the SRQ, allocated by the RDMA core
 * @init: type and sizes; the sizes are updated to what the SRQ holds
 * @udata: response to the provider, or NULL
 *
 * Return: 0, -EOPNOTSUPP for XRC and tag-matching SRQs, -EINVAL for sizes
 * past the device limits, or another negative errno.
 */
int sroce_srq_create(struct ib_srq *ibsrq, struct ib_srq_init_attr *init,
		     struct ib_udata *udata)
{
	struct sroce_dev *sdev = to_sdev(ibsrq->device);
	struct sroce_srq *srq = to_ssrq(ibsrq);
	u32 size;
	int err;

	err = check_init(init);
	if (err)
		return err;
	err = sroce_dev_obj_get(sdev, SROCE_OBJ_SRQ);
	if (err)
		return err;

	spin_lock_init(&srq->lock);
	srq->user = !!udata;
	size = ALIGN(sizeof(struct sroce_recv_wqe) +
		     max(init->attr.max_sge, 1U) * sizeof(struct sroce_sge), 64);
	err = sroce_queue_init(&srq->rq, init->attr.max_wr, size,
			       srq->user ? SROCE_QUEUE_USER_PRODUCER :
					   SROCE_QUEUE_KERNEL);
	if (err)
		goto err_put;
	srq->max_wr = srq->rq.num_entries;
	srq->max_sge = min_t(u32, (size - sizeof(struct sroce_recv_wqe)) /
			     sizeof(struct sroce_sge), SROCE_MAX_SRQ_SGE);
	init->attr.max_wr = srq->max_wr;
	init->attr.max_sge = srq->max_sge;

	err = xa_alloc(&sdev->srqs, &srq->srq_num, NULL, xa_limit_32b,
		       GFP_KERNEL);
	if (err)
		goto err_queue;
	if (udata) {
		err = publish(srq, udata);
		if (err)
			goto err_erase;
	}
	xa_store(&sdev->srqs, srq->srq_num, srq, GFP_KERNEL);
	return 0;

err_erase:
	xa_erase(&sdev->srqs, srq->srq_num);
err_queue:
	sroce_queue_cleanup(&srq->rq);
err_put:
	sroce_dev_obj_put(sdev, SROCE_OBJ_SRQ);
	return err;
}

/**
 * sroce_srq_modify() - ib_device_ops.modify_srq
 * @ibsrq: the SRQ
 * @attr: new limit
 * @mask: IB_SRQ_LIMIT; IB_SRQ_MAX_WR is not supported
 * @udata: unused
 *
 * Return: 0, -EOPNOTSUPP for a resize, or -EINVAL for a limit past the
 * SRQ's size (IBA 11.2.3.3).
 */
int sroce_srq_modify(struct ib_srq *ibsrq, struct ib_srq_attr *attr,
		     enum ib_srq_attr_mask mask, struct ib_udata *udata)
{
	struct sroce_srq *srq = to_ssrq(ibsrq);

	if (mask & ~(IB_SRQ_MAX_WR | IB_SRQ_LIMIT))
		return -EINVAL;
	if (mask & IB_SRQ_MAX_WR)
		return -EOPNOTSUPP;
	if (mask & IB_SRQ_LIMIT) {
		if (attr->srq_limit > srq->max_wr)
			return -EINVAL;
		spin_lock_irq(&srq->lock);
		srq->limit = attr->srq_limit;
		spin_unlock_irq(&srq->lock);
	}
	return 0;
}

/**
 * sroce_srq_query() - ib_device_ops.query_srq
 * @ibsrq: the SRQ
 * @attr: result
 *
 * Return: 0.
 */
int sroce_srq_query(struct ib_srq *ibsrq, struct ib_srq_attr *attr)
{
	struct sroce_srq *srq = to_ssrq(ibsrq);

	attr->max_wr = srq->max_wr;
	attr->max_sge = srq->max_sge;
	attr->srq_limit = READ_ONCE(srq->limit);
	return 0;
}

/**
 * sroce_srq_destroy() - ib_device_ops.destroy_srq
 * @ibsrq: the SRQ; the RDMA core has checked that no QP uses it
 * @udata: unused
 *
 * Return: 0.
 */
int sroce_srq_destroy(struct ib_srq *ibsrq, struct ib_udata *udata)
{
	struct sroce_dev *sdev = to_sdev(ibsrq->device);
	struct sroce_srq *srq = to_ssrq(ibsrq);

	xa_erase(&sdev->srqs, srq->srq_num);
	sroce_queue_cleanup(&srq->rq);
	sroce_dev_obj_put(sdev, SROCE_OBJ_SRQ);
	return 0;
}

static void srq_event(struct sroce_srq *srq, enum ib_event_type type)
{
	struct ib_event ev = {
		.device = srq->ibsrq.device,
		.element.srq = &srq->ibsrq,
		.event = type,
	};

	if (srq->ibsrq.event_handler)
		srq->ibsrq.event_handler(&ev, srq->ibsrq.srq_context);
}

/**
 * sroce_srq_take() - take the next receive WQE, for a QP's responder
 * @srq: the SRQ
 * @rwqe: where to copy and check it
 *
 * When the WQEs left fall below an armed limit, the limit is disarmed and
 * IB_EVENT_SRQ_LIMIT_REACHED raised (IBA 10.2.9.4).
 *
 * Context: any.
 * Return: 1, 0 when the SRQ is empty, or -EINVAL when the WQE or the ring
 * is corrupt.
 */
int sroce_srq_take(struct sroce_srq *srq, struct sroce_rwqe *rwqe)
{
	const struct sroce_recv_wqe *w;
	bool limit = false;
	unsigned long flags;
	int ret = 1;
	u32 count;

	spin_lock_irqsave(&srq->lock, flags);
	w = sroce_queue_head(&srq->rq);
	if (IS_ERR_OR_NULL(w)) {
		ret = w ? -EINVAL : 0;
		goto out;
	}
	rwqe->wr_id = READ_ONCE(w->wr_id);
	rwqe->num_sge = READ_ONCE(w->num_sge);
	if (rwqe->num_sge > srq->max_sge) {
		ret = -EINVAL;
		goto out;
	}
	memcpy(rwqe->sge, w->sge, rwqe->num_sge * sizeof(w->sge[0]));
	sroce_queue_pop(&srq->rq);
	if (srq->limit && !sroce_queue_count(&srq->rq, &count) &&
	    count < srq->limit) {
		srq->limit = 0;
		limit = true;
	}
out:
	spin_unlock_irqrestore(&srq->lock, flags);
	if (limit)
		srq_event(srq, IB_EVENT_SRQ_LIMIT_REACHED);
	return ret;
}

/**
 * sroce_srq_post_recv() - ib_device_ops.post_srq_recv, for kernel SRQs
 * @ibsrq: the SRQ
 * @wr: work requests
 * @bad_wr: set to the first one not posted
 *
 * Context: any.
 * Return: 0, -EINVAL for a WR with too many SGEs or a user SRQ, -ENOMEM
 * when the ring is full.
 */
int sroce_srq_post_recv(struct ib_srq *ibsrq, const struct ib_recv_wr *wr,
			const struct ib_recv_wr **bad_wr)
{
	struct sroce_srq *srq = to_ssrq(ibsrq);
	unsigned long flags;
	int err = 0;

	/* A process's doorbell: nothing to do, the responders take WQEs. */
	if (srq->user) {
		if (wr)
			*bad_wr = wr;
		return wr ? -EINVAL : 0;
	}
	spin_lock_irqsave(&srq->lock, flags);
	while (wr && !err) {
		err = sroce_wqe_post_recv(&srq->rq, wr, srq->max_sge);
		if (!err)
			wr = wr->next;
	}
	spin_unlock_irqrestore(&srq->lock, flags);
	if (err)
		*bad_wr = wr;
	return err;
}
