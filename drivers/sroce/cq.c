// SPDX-License-Identifier: GPL-2.0 OR Linux-OpenIB
/*
 * DOC: Completion queues
 *
 * A CQ is a ring the kernel produces into (sroce_cq_post()) and its
 * consumer polls: the provider, without a system call, for a user CQ, or
 * sroce_cq_poll() for a kernel CQ. Entries of a user CQ are struct
 * sroce_cqe, the ABI; a kernel CQ stores struct ib_wc as is.
 *
 * Events follow IBA 11.4.2.2: a consumer arms the CQ for the next
 * completion or the next solicited one, and the first matching completion
 * added afterwards calls the completion handler once and disarms. A CQ
 * that overflows raises IB_EVENT_CQ_ERR (IBA 11.6.2) and the completion is
 * lost; the caller moves its QP to the error state.
 */
#include <rdma/sroce-abi.h>

#include "cq.h"
#include "device.h"
#include "params.h"
#include "trace.h"
#include "ucontext.h"

#define KERNEL_CQE_SIZE		ALIGN(sizeof(struct ib_wc), 64)

static int cq_queue_init(struct sroce_queue *q, int cqe, bool user)
{
	if (cqe < 1 || cqe > SROCE_MAX_CQE)
		return -EINVAL;
	if (user)
		return sroce_queue_init(q, cqe, sizeof(struct sroce_cqe),
					SROCE_QUEUE_USER_CONSUMER);
	return sroce_queue_init(q, cqe, KERNEL_CQE_SIZE, SROCE_QUEUE_KERNEL);
}

/*
 * Hand a new ring to the process and tell the provider where it is. The
 * create and resize responses have the same layout.
 */
static int cq_queue_publish(struct sroce_queue *q, struct ib_udata *udata)
{
	struct sroce_create_cq_resp resp = {};
	int err;

	static_assert(sizeof(struct sroce_create_cq_resp) ==
		      sizeof(struct sroce_resize_cq_resp));
	err = sroce_queue_publish(q, sroce_udata_ucontext(udata), &resp.cq);
	if (err)
		return err;
	return ib_copy_to_udata(udata, &resp, min(sizeof(resp), udata->outlen));
}

/* create_cq, with the provider's udata or NULL for a kernel CQ. */
static int cq_create(struct ib_cq *ibcq, const struct ib_cq_init_attr *attr,
		     struct ib_udata *udata)
{
	struct sroce_dev *sdev = to_sdev(ibcq->device);
	struct sroce_cq *cq = to_scq(ibcq);
	int err;

	if (attr->flags)
		return -EOPNOTSUPP;
	if (attr->comp_vector >= ibcq->device->num_comp_vectors)
		return -EINVAL;

	err = sroce_dev_obj_get(sdev, SROCE_OBJ_CQ);
	if (err)
		return err;
	spin_lock_init(&cq->lock);
	cq->user = !!udata;
	err = cq_queue_init(&cq->queue, attr->cqe, cq->user);
	if (err)
		goto err_put;
	if (cq->user) {
		err = cq_queue_publish(&cq->queue, udata);
		if (err)
			goto err_queue;
	}
	ibcq->cqe = min_t(u32, cq->queue.num_entries, SROCE_MAX_CQE);
	return 0;

err_queue:
	sroce_queue_cleanup(&cq->queue);
err_put:
	sroce_dev_obj_put(sdev, SROCE_OBJ_CQ);
	return err;
}

/**
 * sroce_cq_create() - ib_device_ops.create_cq
 * @ibcq: the CQ, allocated by the RDMA core
 * @attr: size, completion vector and flags
 * @SROCE_CREATE_CQ_LAST_ARG: the provider's data, in whatever form this
 *	kernel passes it (compat.h)
 *
 * Return: 0 or a negative errno.
 */
int sroce_cq_create(struct ib_cq *ibcq, const struct ib_cq_init_attr *attr,
		    SROCE_CREATE_CQ_LAST_ARG)
{
	return cq_create(ibcq, attr, sroce_create_cq_udata(last));
}

/**
 * sroce_cq_destroy() - ib_device_ops.destroy_cq
 * @ibcq: the CQ; the RDMA core has checked that no QP or SRQ uses it
 * @udata: unused
 *
 * Return: 0.
 */
int sroce_cq_destroy(struct ib_cq *ibcq, struct ib_udata *udata)
{
	struct sroce_cq *cq = to_scq(ibcq);

	sroce_queue_cleanup(&cq->queue);
	sroce_dev_obj_put(to_sdev(ibcq->device), SROCE_OBJ_CQ);
	return 0;
}

/**
 * sroce_cq_resize() - ib_device_ops.resize_cq (resize_user_cq; compat.h)
 * @ibcq: the CQ
 * @cqe: new minimum number of entries
 * @udata: response to the provider: where the new ring is
 *
 * The unpolled completions move to a new ring. For a user CQ the provider
 * maps the new ring and drops the old one; it must not poll the CQ during
 * the call.
 *
 * Return: 0, or -EINVAL when @cqe is out of range or smaller than the
 * number of unpolled completions, or another negative errno.
 */
int sroce_cq_resize(struct ib_cq *ibcq, SROCE_RESIZE_CQ_SIZE cqe,
		    struct ib_udata *udata)
{
	struct sroce_cq *cq = to_scq(ibcq);
	struct sroce_queue_move move;
	struct sroce_queue q;
	int err;

	if (cqe > SROCE_MAX_CQE)
		return -EINVAL;
	err = cq_queue_init(&q, cqe, cq->user);
	if (err)
		return err;
	if (cq->user) {
		err = cq_queue_publish(&q, udata);
		if (err)
			goto out;
	}

	/* The bulk without the lock, the rest with it (queue.c). */
	err = sroce_queue_move_begin(&cq->queue, &q, &move);
	if (err)
		goto out;
	spin_lock_irq(&cq->lock);
	err = sroce_queue_replace(&cq->queue, &q, &move);
	if (!err)
		ibcq->cqe = min_t(u32, cq->queue.num_entries, SROCE_MAX_CQE);
	spin_unlock_irq(&cq->lock);
	if (!err)
		trace_sroce_queue_resize(ibcq->device, false, ibcq->res.id,
					 cq->queue.num_entries, &move);
	/* The old ring, or the new one if it was not taken. */
out:
	sroce_queue_cleanup(&q);
	return err;
}

/* Kernel completion flags to the ABI's (enum ibv_wc_flags values). */
static u32 wc_flags_to_user(int flags)
{
	return (flags & IB_WC_GRH ? SROCE_WC_GRH : 0) |
	       (flags & IB_WC_WITH_IMM ? SROCE_WC_WITH_IMM : 0) |
	       (flags & IB_WC_IP_CSUM_OK ? SROCE_WC_IP_CSUM_OK : 0) |
	       (flags & IB_WC_WITH_INVALIDATE ? SROCE_WC_WITH_INV : 0);
}

/* The ABI's values of network_hdr_type are the kernel's. */
static_assert(RDMA_NETWORK_IPV4 == SROCE_NETWORK_IPV4);
static_assert(RDMA_NETWORK_IPV6 == SROCE_NETWORK_IPV6);

static void wc_to_cqe(const struct ib_wc *wc, struct sroce_cqe *cqe)
{
	memset(cqe, 0, sizeof(*cqe));
	cqe->wr_id = wc->wr_id;
	cqe->status = wc->status;
	cqe->opcode = wc->opcode;
	cqe->vendor_err = wc->vendor_err;
	cqe->byte_len = wc->byte_len;
	cqe->ex = wc->wc_flags & IB_WC_WITH_INVALIDATE ?
		  wc->ex.invalidate_rkey : (__force u32)wc->ex.imm_data;
	cqe->qp_num = wc->qp->qp_num;
	cqe->src_qp = wc->src_qp;
	cqe->wc_flags = wc_flags_to_user(wc->wc_flags);
	cqe->pkey_index = wc->pkey_index;
	cqe->sl = wc->sl;
	cqe->port_num = wc->port_num;
	if (wc->wc_flags & IB_WC_WITH_NETWORK_HDR_TYPE)
		cqe->network_hdr_type = wc->network_hdr_type;
	memcpy(cqe->smac, wc->smac, sizeof(cqe->smac));
	cqe->vlan_id = wc->vlan_id;
}

static void cq_event(struct sroce_cq *cq, enum ib_event_type type)
{
	struct ib_event ev = {
		.device = cq->ibcq.device,
		.element.cq = &cq->ibcq,
		.event = type,
	};

	if (cq->ibcq.event_handler)
		cq->ibcq.event_handler(&ev, cq->ibcq.cq_context);
}

/**
 * sroce_cq_post() - add a completion
 * @cq: the CQ
 * @wc: the completion; for a user CQ only the fields of struct sroce_cqe
 *      are kept
 * @solicited: the completion is for a solicited event (IBA 11.4.2.2)
 *
 * An overflow is a CQ error (IBA 11.6.3.1): IB_EVENT_CQ_ERR is raised for
 * the first completion that does not fit, not for each one after it until
 * one fits again. A process that makes its ring look full (it writes the
 * consumer index) must not turn each flushed WQE into an event: the RDMA
 * core queues every event for the process, allocating as it goes.
 *
 * Context: any; takes @cq->lock with interrupts disabled.
 * Return: 0, or -ENOSPC when the CQ overflowed.
 */
int sroce_cq_post(struct sroce_cq *cq, const struct ib_wc *wc, bool solicited)
{
	unsigned long flags;
	bool wake = false, first;
	void *slot;

	spin_lock_irqsave(&cq->lock, flags);
	slot = sroce_queue_tail(&cq->queue);
	if (IS_ERR_OR_NULL(slot)) {
		first = !cq->overflowed;
		cq->overflowed = true;
		spin_unlock_irqrestore(&cq->lock, flags);
		if (first)
			cq_event(cq, IB_EVENT_CQ_ERR);
		return -ENOSPC;
	}
	cq->overflowed = false;
	if (cq->user)
		wc_to_cqe(wc, slot);
	else
		memcpy(slot, wc, sizeof(*wc));
	sroce_queue_push(&cq->queue);

	if (cq->notify == IB_CQ_NEXT_COMP ||
	    (cq->notify == IB_CQ_SOLICITED &&
	     (solicited || wc->status != IB_WC_SUCCESS))) {
		cq->notify = 0;
		wake = true;
	}
	spin_unlock_irqrestore(&cq->lock, flags);

	if (wake && cq->ibcq.comp_handler)
		cq->ibcq.comp_handler(&cq->ibcq, cq->ibcq.cq_context);
	return 0;
}

/**
 * sroce_cq_poll() - ib_device_ops.poll_cq, for kernel CQs
 * @ibcq: the CQ
 * @num_entries: room in @wc
 * @wc: completions, oldest first
 *
 * A user CQ is polled by the provider; the uverbs poll command is not
 * offered for this device.
 *
 * Return: the number of completions stored.
 */
int sroce_cq_poll(struct ib_cq *ibcq, int num_entries, struct ib_wc *wc)
{
	struct sroce_cq *cq = to_scq(ibcq);
	unsigned long flags;
	int n = 0;

	if (WARN_ON_ONCE(cq->user))
		return -EINVAL;

	spin_lock_irqsave(&cq->lock, flags);
	for (; n < num_entries; n++) {
		struct ib_wc *head = sroce_queue_head(&cq->queue);

		/* A kernel CQ's indices are the kernel's own: never an error. */
		if (IS_ERR_OR_NULL(head))
			break;
		wc[n] = *head;
		sroce_queue_pop(&cq->queue);
	}
	spin_unlock_irqrestore(&cq->lock, flags);
	return n;
}

/**
 * sroce_cq_req_notify() - ib_device_ops.req_notify_cq
 * @ibcq: the CQ
 * @flags: IB_CQ_SOLICITED or IB_CQ_NEXT_COMP, maybe with
 *         IB_CQ_REPORT_MISSED_EVENTS
 *
 * An armed IB_CQ_NEXT_COMP is not weakened by a later IB_CQ_SOLICITED.
 *
 * Return: 1 when missed events were asked about and the CQ is not empty,
 * else 0.
 */
int sroce_cq_req_notify(struct ib_cq *ibcq, enum ib_cq_notify_flags flags)
{
	struct sroce_cq *cq = to_scq(ibcq);
	unsigned long irqflags;
	u32 count = 0;
	int ret = 0;

	spin_lock_irqsave(&cq->lock, irqflags);
	if (cq->notify != IB_CQ_NEXT_COMP)
		cq->notify = flags & IB_CQ_SOLICITED_MASK;
	if ((flags & IB_CQ_REPORT_MISSED_EVENTS) &&
	    (sroce_queue_count(&cq->queue, &count) || count))
		ret = 1;
	spin_unlock_irqrestore(&cq->lock, irqflags);
	return ret;
}
