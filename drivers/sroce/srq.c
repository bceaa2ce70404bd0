// SPDX-License-Identifier: GPL-2.0 OR Linux-OpenIB
/*
 * DOC: Shared receive queues
 *
 * An SRQ is a receive ring that many QPs draw from (IBA 10.2.9). A resize
 * (IB_SRQ_MAX_WR, IBA 11.2.3.3) moves the WQEs not yet taken to a new
 * ring; a user SRQ's provider then maps the new ring (see the ABI
 * header). The limit event (IBA 10.2.9.4) is armed with IB_SRQ_LIMIT.
 *
 * An XRC SRQ (IBA annex A14) belongs to an XRC domain and has a CQ of
 * its own; XRC target QPs of the same domain find it by the number in
 * each request's XRCETH, and complete its WQEs to its CQ. Its number is
 * 24 bits, like a QP number. Such a lookup holds a reference for one
 * engine run at most, and destroy waits for it.
 */
#include <linux/uaccess.h>
#include <rdma/sroce-abi.h>

#include "device.h"
#include "params.h"
#include "resp.h"
#include "srq.h"
#include "trace.h"
#include "ucontext.h"
#include "wqe.h"

/* A ring of at least @max_wr receive WQEs of @max_sge entries. */
static int srq_queue_init(struct sroce_srq *srq, struct sroce_queue *q,
			  u32 max_wr, u32 max_sge)
{
	u32 size = ALIGN(sizeof(struct sroce_recv_wqe) +
			 max(max_sge, 1U) * sizeof(struct sroce_sge), 64);

	return sroce_queue_init(q, max_wr, size,
				srq->user ? SROCE_QUEUE_USER_PRODUCER :
					    SROCE_QUEUE_KERNEL);
}

static int check_init(const struct ib_srq_init_attr *init)
{
	const struct ib_srq_attr *a = &init->attr;

	if (init->srq_type != IB_SRQT_BASIC && init->srq_type != IB_SRQT_XRC)
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
 * Return: 0, -EOPNOTSUPP for tag-matching SRQs, -EINVAL for sizes past
 * the device limits, or another negative errno.
 */
int sroce_srq_create(struct ib_srq *ibsrq, struct ib_srq_init_attr *init,
		     struct ib_udata *udata)
{
	static u32 next_srqn = 1;	/* a hint; races are harmless */
	struct sroce_dev *sdev = to_sdev(ibsrq->device);
	struct sroce_srq *srq = to_ssrq(ibsrq);
	int err;

	err = check_init(init);
	if (err)
		return err;
	err = sroce_dev_obj_get(sdev, SROCE_OBJ_SRQ);
	if (err)
		return err;

	spin_lock_init(&srq->lock);
	refcount_set(&srq->ref, 1);
	init_completion(&srq->released);
	srq->user = !!udata;
	err = srq_queue_init(srq, &srq->rq, init->attr.max_wr,
			     init->attr.max_sge);
	if (err)
		goto err_put;
	srq->max_wr = srq->rq.num_entries;
	srq->max_sge = min_t(u32, (srq->rq.entry_size -
				   sizeof(struct sroce_recv_wqe)) /
			     sizeof(struct sroce_sge), SROCE_MAX_SRQ_SGE);
	init->attr.max_wr = srq->max_wr;
	init->attr.max_sge = srq->max_sge;

	/* Not reused soon: an XRC request names its SRQ by number. */
	err = xa_alloc_cyclic_bh(&sdev->srqs, &srq->srq_num, NULL,
				 XA_LIMIT(1, SROCE_MAX_SRQN), &next_srqn,
				 GFP_KERNEL);
	if (err < 0)
		goto err_queue;
	if (init->srq_type == IB_SRQT_XRC)
		ibsrq->ext.xrc.srq_num = srq->srq_num;
	if (udata) {
		err = publish(srq, udata);
		if (err)
			goto err_erase;
	}
	xa_store_bh(&sdev->srqs, srq->srq_num, srq, GFP_KERNEL);
	return 0;

err_erase:
	xa_erase_bh(&sdev->srqs, srq->srq_num);
err_queue:
	sroce_queue_cleanup(&srq->rq);
err_put:
	sroce_dev_obj_put(sdev, SROCE_OBJ_SRQ);
	return err;
}

/*
 * Resize (IBA 11.2.3.3): a new ring, of at least @max_wr WQEs and no fewer
 * than are waiting, takes the waiting WQEs; a user SRQ's provider learns
 * where to map it at the address its command gave. @limit, if not NULL, is
 * a new limit set with the new size, all or nothing: both are checked
 * before either takes effect.
 */
static int srq_resize(struct sroce_srq *srq, u32 max_wr, const u32 *limit,
		      struct ib_udata *udata)
{
	struct sroce_modify_srq_cmd cmd = {};
	struct sroce_queue_info info = {};
	struct sroce_queue_move move;
	struct sroce_queue q;
	u32 count;
	int err;

	if (!max_wr || max_wr > SROCE_MAX_SRQ_WR)
		return -EINVAL;
	if (srq->user) {
		if (udata->inlen < sizeof(cmd))
			return -EINVAL;
		err = ib_copy_from_udata(&cmd, udata, sizeof(cmd));
		if (err)
			return err;
	}
	err = srq_queue_init(srq, &q, max_wr, srq->max_sge);
	if (err)
		return err;

	/* The bulk without the lock, the rest with it (queue.c). */
	err = sroce_queue_move_begin(&srq->rq, &q, &move);
	if (err)
		goto out;
	spin_lock_irq(&srq->lock);
	err = sroce_queue_count(&srq->rq, &count);
	if (!err && (count > q.num_entries ||
		     (limit ? *limit : srq->limit) > q.num_entries))
		err = -EINVAL;
	spin_unlock_irq(&srq->lock);
	if (err)
		goto out;
	if (srq->user) {
		err = sroce_queue_publish(&q, sroce_udata_ucontext(udata), &info);
		if (err)
			goto out;
		if (copy_to_user(u64_to_user_ptr(cmd.queue_info_addr), &info,
				 sizeof(info))) {
			err = -EFAULT;
			goto out;
		}
	}

	/* The process posts nothing meanwhile (ABI): the rest, and swap. */
	spin_lock_irq(&srq->lock);
	err = sroce_queue_replace(&srq->rq, &q, &move);
	if (!err) {
		srq->max_wr = srq->rq.num_entries;
		if (limit)
			srq->limit = *limit;
	}
	spin_unlock_irq(&srq->lock);
	if (!err)
		trace_sroce_queue_resize(srq->ibsrq.device, true, srq->ibsrq.res.id,
					 srq->rq.num_entries, &move);
	/* The old ring, or the new one if it was not taken. */
out:
	sroce_queue_cleanup(&q);
	return err;
}

/**
 * sroce_srq_modify() - ib_device_ops.modify_srq
 * @ibsrq: the SRQ
 * @attr: new size or limit
 * @mask: IB_SRQ_MAX_WR, IB_SRQ_LIMIT
 * @udata: a user SRQ's struct sroce_modify_srq_cmd
 *
 * Return: 0, or -EINVAL for a size the waiting WQEs do not fit in or past
 * the device limit, or a limit past the SRQ's size (IBA 11.2.3.3).
 */
int sroce_srq_modify(struct ib_srq *ibsrq, struct ib_srq_attr *attr,
		     enum ib_srq_attr_mask mask, struct ib_udata *udata)
{
	struct sroce_srq *srq = to_ssrq(ibsrq);
	int err;

	if (mask & ~(IB_SRQ_MAX_WR | IB_SRQ_LIMIT))
		return -EINVAL;
	if (mask & IB_SRQ_MAX_WR)
		return srq_resize(srq, attr->max_wr, mask & IB_SRQ_LIMIT ?
				  &attr->srq_limit : NULL, udata);
	if (mask & IB_SRQ_LIMIT) {
		spin_lock_irq(&srq->lock);
		err = attr->srq_limit > srq->max_wr ? -EINVAL : 0;
		if (!err)
			srq->limit = attr->srq_limit;
		spin_unlock_irq(&srq->lock);
		return err;
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

	xa_erase_bh(&sdev->srqs, srq->srq_num);
	sroce_srq_put(srq);
	wait_for_completion(&srq->released);
	sroce_queue_cleanup(&srq->rq);
	sroce_dev_obj_put(sdev, SROCE_OBJ_SRQ);
	return 0;
}

/**
 * sroce_srq_get_xrc() - the XRC SRQ a request names, referenced
 * @sdev: the device
 * @srq_num: the number in the request's XRCETH
 * @xrcd: the XRC domain of the target QP the request arrived on
 *
 * Context: any.
 * Return: the SRQ, to release with sroce_srq_put(), or NULL when no XRC
 * SRQ of @xrcd has that number.
 */
struct sroce_srq *sroce_srq_get_xrc(struct sroce_dev *sdev, u32 srq_num,
				    struct ib_xrcd *xrcd)
{
	struct sroce_srq *srq;

	xa_lock_bh(&sdev->srqs);
	srq = xa_load(&sdev->srqs, srq_num);
	if (srq && (srq->ibsrq.srq_type != IB_SRQT_XRC ||
		    srq->ibsrq.ext.xrc.xrcd != xrcd ||
		    !refcount_inc_not_zero(&srq->ref)))
		srq = NULL;
	xa_unlock_bh(&sdev->srqs);
	return srq;
}

/**
 * sroce_srq_put() - drop a reference
 * @srq: the SRQ
 */
void sroce_srq_put(struct sroce_srq *srq)
{
	if (refcount_dec_and_test(&srq->ref))
		complete(&srq->released);
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
 * IB_EVENT_SRQ_LIMIT_REACHED raised (IBA 10.2.9.4). The first time the
 * ring's indices are found corrupt, IB_EVENT_SRQ_ERR is raised (an SRQ
 * catastrophic error, IBA 11.6.3.1); each QP that meets it fails.
 *
 * A malformed WQE (more SGEs than the SRQ holds) is taken all the same,
 * with no SGE, for the QP to complete in error: left at the head, it would
 * fail every QP of the SRQ in turn.
 *
 * Context: any.
 * Return: 1; 0 when the SRQ is empty; -EINVAL for a malformed WQE, taken
 * into @rwqe (its wr_id set); -EOVERFLOW when the ring's indices are
 * corrupt (nothing taken).
 */
int sroce_srq_take(struct sroce_srq *srq, struct sroce_rwqe *rwqe)
{
	const struct sroce_recv_wqe *w;
	bool limit = false, broken = false;
	unsigned long flags;
	int ret = 1;
	u32 count;

	spin_lock_irqsave(&srq->lock, flags);
	w = sroce_queue_head(&srq->rq);
	if (IS_ERR_OR_NULL(w)) {
		ret = w ? -EOVERFLOW : 0;
		broken = w && !srq->broken;
		srq->broken |= broken;
		goto out;
	}
	rwqe->wr_id = READ_ONCE(w->wr_id);
	rwqe->num_sge = READ_ONCE(w->num_sge);
	if (rwqe->num_sge > srq->max_sge) {
		rwqe->num_sge = 0;
		ret = -EINVAL;
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
	if (broken)
		srq_event(srq, IB_EVENT_SRQ_ERR);
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
