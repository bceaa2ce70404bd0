// SPDX-License-Identifier: GPL-2.0 OR Linux-OpenIB
/*
 * DOC: QP state machine
 *
 * Modify QP follows IBA 11.2.4.2 and the state diagram of IBA 10.3.1:
 * ib_modify_qp_is_ok() checks the transition and that the attribute mask
 * holds every required and only allowed attributes for it (table 91 and
 * following); we then check each attribute's value against the device
 * and apply all of them or none.
 *
 * Entering RTR fixes the path (MTU, UDP source port) and sets up the
 * responder; entering RTS starts the requester at sq_psn. Entering RESET
 * stops both engines, discards every posted work request and clears the
 * attributes. Entering ERR lets the engines complete every outstanding
 * work request with IB_WC_WR_FLUSH_ERR (IBA 10.3.1), and for a QP on an
 * SRQ raises IB_EVENT_QP_LAST_WQE_REACHED (IBA 11.6.3.1 and 10.2.9.5)
 * once the receive engine has let go of the WQE it held.
 * In SQD no new WQE starts; IB_EVENT_SQ_DRAINED is raised, when asked
 * (IBA 11.6.3.1), once nothing is in flight.
 *
 * Alternate paths and automatic path migration (IBA 17.2.8) are not
 * supported: requests for them fail with -EOPNOTSUPP (the RDMA core
 * already refuses alternate paths on RoCE ports with -EINVAL).
 */
#include "device.h"
#include "params.h"
#include "qp.h"
#include "qp_state.h"
#include "trace.h"

#define QP_ACCESS_FLAGS (IB_ACCESS_LOCAL_WRITE | IB_ACCESS_REMOTE_WRITE | \
			 IB_ACCESS_REMOTE_READ | IB_ACCESS_REMOTE_ATOMIC | \
			 IB_ACCESS_FLUSH_GLOBAL | IB_ACCESS_FLUSH_PERSISTENT | \
			 IB_ACCESS_ON_DEMAND)

/* Range checks of IBA 11.2.4.2 and of our device limits. */
static int check_ranges(const struct ib_qp_attr *attr, int mask)
{
	if ((mask & IB_QP_PORT) && attr->port_num != 1)
		return -EINVAL;
	if ((mask & IB_QP_PKEY_INDEX) && attr->pkey_index >= SROCE_MAX_PKEYS)
		return -EINVAL;
	if ((mask & IB_QP_PATH_MTU) &&
	    (attr->path_mtu < IB_MTU_256 || attr->path_mtu > IB_MTU_4096))
		return -EINVAL;
	if ((mask & IB_QP_TIMEOUT) && attr->timeout > 31)
		return -EINVAL;
	if ((mask & IB_QP_RETRY_CNT) && attr->retry_cnt > 7)
		return -EINVAL;
	if ((mask & IB_QP_RNR_RETRY) && attr->rnr_retry > 7)
		return -EINVAL;
	if ((mask & IB_QP_MIN_RNR_TIMER) && attr->min_rnr_timer > 31)
		return -EINVAL;
	if ((mask & IB_QP_MAX_QP_RD_ATOMIC) &&
	    attr->max_rd_atomic > SROCE_MAX_QP_INIT_RD_ATOM)
		return -EINVAL;
	if ((mask & IB_QP_MAX_DEST_RD_ATOMIC) &&
	    attr->max_dest_rd_atomic > SROCE_MAX_QP_RD_ATOM)
		return -EINVAL;
	if ((mask & IB_QP_ACCESS_FLAGS) &&
	    (attr->qp_access_flags & ~QP_ACCESS_FLAGS))
		return -EINVAL;
	if ((mask & IB_QP_DEST_QPN) && attr->dest_qp_num > SROCE_MAX_QPN)
		return -EINVAL;
	return 0;
}

static int check_attr(const struct ib_qp_attr *attr, int mask,
		      struct sroce_av *av)
{
	int err;

	if (mask & (IB_QP_ALT_PATH | IB_QP_PATH_MIG_STATE | IB_QP_RATE_LIMIT))
		return -EOPNOTSUPP;
	err = check_ranges(attr, mask);
	if (err)
		return err;
	if (mask & IB_QP_AV)
		return sroce_av_from_attr(av, &attr->ah_attr);
	return 0;
}

static void apply_attr(struct sroce_qp *qp, const struct ib_qp_attr *attr,
		       int mask, const struct sroce_av *av)
{
	struct sroce_qp_attr *a = &qp->attr;

	lockdep_assert_held(&qp->mutex);
	if (mask & IB_QP_AV) {
		a->av = *av;
		a->av_valid = true;
	}
	if (mask & IB_QP_PATH_MTU)
		a->path_mtu = attr->path_mtu;
	if (mask & IB_QP_QKEY)
		a->qkey = attr->qkey;
	if (mask & IB_QP_DEST_QPN)
		a->dest_qpn = attr->dest_qp_num;
	if (mask & IB_QP_SQ_PSN)
		a->sq_psn = attr->sq_psn & SROCE_PSN_MASK;
	if (mask & IB_QP_RQ_PSN)
		a->rq_psn = attr->rq_psn & SROCE_PSN_MASK;
	if (mask & IB_QP_ACCESS_FLAGS)
		a->access_flags = attr->qp_access_flags;
	if (mask & IB_QP_PKEY_INDEX)
		a->pkey_index = attr->pkey_index;
	if (mask & IB_QP_TIMEOUT)
		a->timeout = attr->timeout;
	if (mask & IB_QP_RETRY_CNT)
		a->retry_cnt = attr->retry_cnt;
	if (mask & IB_QP_RNR_RETRY)
		a->rnr_retry = attr->rnr_retry;
	if (mask & IB_QP_MIN_RNR_TIMER)
		a->min_rnr_timer = attr->min_rnr_timer;
	if (mask & IB_QP_MAX_QP_RD_ATOMIC)
		a->max_rd_atomic = attr->max_rd_atomic;
	if (mask & IB_QP_MAX_DEST_RD_ATOMIC)
		a->max_dest_rd_atomic = attr->max_dest_rd_atomic;
	if (mask & IB_QP_EN_SQD_ASYNC_NOTIFY)
		/* Not quiesced for: the send engine reads it as it goes. */
		WRITE_ONCE(a->en_sqd_async_notify, attr->en_sqd_async_notify);
}

/*
 * Change the state, unless an engine moved the QP to the error state since
 * the transition was checked: then the modify fails.
 */
static int change_state(struct sroce_qp *qp, enum ib_qp_state cur,
			enum ib_qp_state new)
{
	unsigned long flags;
	int err = 0;

	lockdep_assert_held(&qp->mutex);
	spin_lock_irqsave(&qp->state_lock, flags);
	if (qp->state == cur) {
		/* What prepare_state() set up is seen with the new state. */
		smp_store_release(&qp->state, new);
		if (cur != new)
			trace_sroce_qp_state(qp, cur, new);
	} else {
		err = -EINVAL;
	}
	spin_unlock_irqrestore(&qp->state_lock, flags);
	return err;
}

/* The UDP source port and the route follow the path (IBA A17.3.1). */
static void setup_route(struct sroce_qp *qp)
{
	u32 fl = qp->attr.av.flow_label ?:
		 rdma_calc_flow_label(qp->ibqp.qp_num, qp->attr.dest_qpn);

	qp->src_port = rdma_flow_label_to_udp_sport(fl);
	dst_cache_reset(&qp->dst_cache);
}

/* The path MTU in bytes, at most the port's active MTU, and the route. */
static void setup_path(struct sroce_qp *qp)
{
	struct sroce_dev *sdev = to_sdev(qp->ibqp.device);
	enum ib_mtu mtu = qp->attr.path_mtu ?: IB_MTU_4096;

	spin_lock_bh(&sdev->port_lock);
	mtu = min(mtu, sdev->active_mtu);
	spin_unlock_bh(&sdev->port_lock);
	qp->mtu = ib_mtu_enum_to_int(mtu);
	setup_route(qp);
}

/*
 * Stop both engines: neither runs, nor can be made to, until resumed.
 * What they have pending stays: packets wait in their queues, and a timer
 * that fires meanwhile leaves its event for the next run (an RNR wait
 * must end even if a modify came in between).
 */
static void quiesce(struct sroce_qp *qp)
{
	sroce_task_stop(&qp->req.task);
	sroce_task_stop(&qp->resp.task);
}

/* Let both engines run again, and run them: they may have missed work. */
static void resume(struct sroce_qp *qp)
{
	sroce_task_start(&qp->req.task);
	sroce_task_start(&qp->resp.task);
	sroce_task_run(&qp->req.task);
	sroce_task_run(&qp->resp.task);
}

/*
 * RESET: forget every WQE, every packet waiting, the timers and the
 * attributes; the engines are stopped. A kernel consumer's post that
 * found the QP not yet in RESET ends before its ring is emptied (the
 * producer locks), and a later one is refused: no WQE outlives the reset.
 */
static void reset_qp(struct sroce_qp *qp)
{
	sroce_req_stop(qp);
	sroce_resp_stop(qp);
	/* Before the ring's WQEs go: they say which packets to wait for. */
	sroce_zcopy_drain(qp);
	spin_lock_irq(&qp->sq_lock);
	sroce_queue_discard(&qp->sq);
	spin_unlock_irq(&qp->sq_lock);
	if (sroce_qp_has_rq(qp)) {
		spin_lock_irq(&qp->rq_lock);
		sroce_queue_discard(&qp->rq);
		spin_unlock_irq(&qp->rq_lock);
	}
	sroce_req_reset(qp);
	sroce_resp_reset(qp);
	WRITE_ONCE(qp->sq.hdr->flags, SROCE_QUEUE_NEED_WAKEUP);
	if (sroce_qp_has_rq(qp))
		WRITE_ONCE(qp->rq.hdr->flags, 0);
	qp->drained = false;
	memset(&qp->attr, 0, sizeof(qp->attr));
}

/*
 * Must the engines stop for this modify? From RTR on they run and read
 * the attributes as they go: an address vector is several words that a
 * packet is built from (its IP version sizes the headroom), and the
 * responder's resources are reallocated. So any change of attributes
 * there waits for both engines to stop, and they take the new values when
 * they start again; so does entering RESET, which clears their state.
 */
static bool must_quiesce(enum ib_qp_state cur, enum ib_qp_state new,
			 int mask)
{
	const int no_attr = IB_QP_STATE | IB_QP_CUR_STATE |
			    IB_QP_EN_SQD_ASYNC_NOTIFY;

	return new == IB_QPS_RESET ||
	       (cur >= IB_QPS_RTR && (mask & ~no_attr));
}

/*
 * What entering a state or changing attributes takes beyond the attribute
 * words; may sleep. The engines are stopped if they must be
 * (must_quiesce()). If the modify then fails (an engine moved the QP to
 * ERR meanwhile), the responder's resources keep their new number: it is
 * the engine's own affair, and the QP is in ERR.
 */
static int prepare_state(struct sroce_qp *qp, enum ib_qp_state cur,
			 enum ib_qp_state new, int mask)
{
	/* Before the state changes: an engine may find SQD drained at once. */
	if (new == IB_QPS_SQD && cur != IB_QPS_SQD)
		WRITE_ONCE(qp->drained, false);
	if (new == IB_QPS_RTR && cur != IB_QPS_RTR) {
		setup_path(qp);
		return sroce_resp_start(qp);
	}
	if (cur >= IB_QPS_RTR && (mask & IB_QP_MAX_DEST_RD_ATOMIC))
		return sroce_resp_resize(qp);
	return 0;
}

/* Attributes changed after RTR, the engines stopped (IBA 11.2.4.2). */
static void update_engines(struct sroce_qp *qp, int mask)
{
	if (mask & IB_QP_AV)
		setup_route(qp);
	sroce_req_update(qp, mask);
}

static void enter_state(struct sroce_qp *qp, enum ib_qp_state cur,
			enum ib_qp_state new)
{
	switch (new) {
	case IB_QPS_RESET:
		reset_qp(qp);
		break;
	case IB_QPS_RTS:
		if (cur == IB_QPS_RTR)
			sroce_req_start(qp);
		sroce_task_run(&qp->req.task);
		break;
	case IB_QPS_SQD:
		sroce_task_run(&qp->req.task);
		break;
	case IB_QPS_ERR:
		sroce_task_run(&qp->req.task);
		sroce_task_run(&qp->resp.task);
		break;
	default:
		break;
	}
}

/**
 * sroce_qp_modify() - ib_device_ops.modify_qp
 * @ibqp: the QP
 * @attr: new attributes
 * @mask: which attributes to change (enum ib_qp_attr_mask)
 * @udata: unused
 *
 * Return: 0; -EINVAL for a transition the state diagram forbids, a mask
 * that does not fit the transition, an attribute out of range, or a
 * stated current state that is not the QP's; -EOPNOTSUPP for alternate
 * paths, path migration and rate limits; -ENOMEM.
 */
int sroce_qp_modify(struct ib_qp *ibqp, struct ib_qp_attr *attr, int mask,
		    struct ib_udata *udata)
{
	struct sroce_qp *qp = to_sqp(ibqp);
	struct sroce_qp_attr saved;
	enum ib_qp_state cur, new;
	struct sroce_av av;
	bool quiet;
	int err;

	mutex_lock(&qp->mutex);
	cur = qp->state;
	new = mask & IB_QP_STATE ? attr->qp_state : cur;
	err = -EINVAL;
	if ((mask & IB_QP_CUR_STATE) && attr->cur_qp_state != cur)
		goto out;
	if (!ib_modify_qp_is_ok(cur, new, ibqp->qp_type, mask))
		goto out;
	err = check_attr(attr, mask, &av);
	if (err)
		goto out;

	quiet = must_quiesce(cur, new, mask);
	if (quiet)
		quiesce(qp);
	saved = qp->attr;
	apply_attr(qp, attr, mask, &av);
	err = prepare_state(qp, cur, new, mask) ?: change_state(qp, cur, new);
	if (err) {
		qp->attr = saved;	/* all or nothing */
	} else {
		if (cur >= IB_QPS_RTR)
			update_engines(qp, mask);
		enter_state(qp, cur, new);
	}
	if (quiet)
		resume(qp);
out:
	mutex_unlock(&qp->mutex);
	if (err)
		sroce_dbg(to_sdev(ibqp->device),
			  "QP %u: modify %d -> %d mask %#x: %d\n",
			  ibqp->qp_num, cur, new, mask, err);
	return err;
}
