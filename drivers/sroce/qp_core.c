// SPDX-License-Identifier: GPL-2.0 OR Linux-OpenIB
/*
 * DOC: Queue pairs as the data path sees them
 *
 * What the engines and the receive path ask of a QP once it exists:
 * finding it by number and holding it while a packet is handled, raising
 * its asynchronous events, and failing it into the error state. Below the
 * engines (req.c, comp.c, resp.c), which call it; qp.c and qp_state.c,
 * which create and change QPs, sit above them.
 */
#include <linux/moduleparam.h>

#include "device.h"
#include "params.h"
#include "qp.h"
#include "qp_core.h"
#include "trace.h"

unsigned int sroce_qp_backlog = SROCE_QP_BACKLOG;
module_param_named(backlog, sroce_qp_backlog, uint, 0644);
MODULE_PARM_DESC(backlog, "received packets a QP may have waiting, each way (8192)");

/**
 * sroce_qp_get() - the QP with a number, referenced
 * @sdev: the device
 * @qpn: the QP number
 *
 * Context: any.
 * Return: the QP, to release with sroce_qp_put(), or NULL.
 */
struct sroce_qp *sroce_qp_get(struct sroce_dev *sdev, u32 qpn)
{
	struct sroce_qp *qp;

	xa_lock_bh(&sdev->qps);
	qp = xa_load(&sdev->qps, qpn);
	if (qp && !refcount_inc_not_zero(&qp->ref))
		qp = NULL;
	xa_unlock_bh(&sdev->qps);
	return qp;
}

/**
 * sroce_qp_put() - drop a reference from sroce_qp_get()
 * @qp: the QP
 */
void sroce_qp_put(struct sroce_qp *qp)
{
	if (refcount_dec_and_test(&qp->ref))
		complete(&qp->released);
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

/**
 * sroce_qp_fail() - an engine met an error that ends the QP's work
 * @qp: the QP
 * @status: the completion status of the error
 *
 * The QP enters the error state (IBA 10.3.1) and both engines run to
 * flush; the receive engine raises IB_EVENT_QP_LAST_WQE_REACHED for a QP
 * on an SRQ once it let go of its receive WQE (resp.c).
 *
 * Context: any.
 * Return: true if the QP was not in RESET or ERR already.
 */
bool sroce_qp_fail(struct sroce_qp *qp, enum ib_wc_status status)
{
	enum ib_qp_state old;
	unsigned long flags;

	spin_lock_irqsave(&qp->state_lock, flags);
	old = qp->state;
	if (old != IB_QPS_RESET && old != IB_QPS_ERR) {
		WRITE_ONCE(qp->state, IB_QPS_ERR);
		/* Under the lock: in the order of the state's changes. */
		trace_sroce_qp_state(qp, old, IB_QPS_ERR);
	}
	spin_unlock_irqrestore(&qp->state_lock, flags);
	if (old == IB_QPS_RESET || old == IB_QPS_ERR)
		return false;
	ibdev_dbg(qp->ibqp.device, "QP %u: error, status %d\n",
		  qp->ibqp.qp_num, status);
	sroce_task_sched(&qp->req.task);
	sroce_task_sched(&qp->resp.task);
	return true;
}

/**
 * sroce_qp_sq_drained() - the send engine found nothing in flight in SQD
 * @qp: the QP; called by its send engine
 *
 * Raises IB_EVENT_SQ_DRAINED once per entry to SQD, when asked for (IBA
 * 11.6.3.1).
 */
void sroce_qp_sq_drained(struct sroce_qp *qp)
{
	if (READ_ONCE(qp->drained) || qp->req.cur != qp->req.next ||
	    qp->sq.cons != qp->req.next)
		return;
	WRITE_ONCE(qp->drained, true);
	if (READ_ONCE(qp->attr.en_sqd_async_notify))
		sroce_qp_event(qp, IB_EVENT_SQ_DRAINED);
}
