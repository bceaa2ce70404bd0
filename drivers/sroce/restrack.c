// SPDX-License-Identifier: GPL-2.0 OR Linux-OpenIB
/*
 * DOC: Resource tracking details
 *
 * `rdma resource show qp|cq|mr|srq ... -dd` prints, after the RDMA core's
 * own fields, the driver attributes these functions add: ring sizes and
 * indices, and the transport state of a QP. They are a snapshot read
 * without the engines' locks, for diagnosis; each value is read once.
 */
#include <linux/capability.h>
#include <net/netlink.h>
#include <rdma/rdma_netlink.h>
#include <rdma/restrack.h>

#include "cq.h"
#include "mr.h"
#include "qp.h"
#include "restrack.h"
#include "srq.h"

/*
 * Driver attributes go in one nested table (RDMA_NLDEV_ATTR_DRIVER), which
 * @fill puts in @msg; all or nothing.
 */
static int put_table(struct sk_buff *msg, int (*fill)(struct sk_buff *msg,
						      void *obj), void *obj)
{
	struct nlattr *table = nla_nest_start_noflag(msg, RDMA_NLDEV_ATTR_DRIVER);

	if (!table)
		return -EMSGSIZE;
	if (fill(msg, obj)) {
		nla_nest_cancel(msg, table);
		return -EMSGSIZE;
	}
	nla_nest_end(msg, table);
	return 0;
}

/* A ring's size and its producer and consumer indices, as shared. */
static int put_queue(struct sk_buff *msg, const char *size, const char *pi,
		     const char *ci, const struct sroce_queue *q)
{
	if (rdma_nl_put_driver_u32(msg, size, q->num_entries) ||
	    rdma_nl_put_driver_u32(msg, pi, READ_ONCE(q->hdr->producer)) ||
	    rdma_nl_put_driver_u32(msg, ci, READ_ONCE(q->hdr->consumer)))
		return -EMSGSIZE;
	return 0;
}

/*
 * The live PSNs and MSN of a connection are all a process of this host
 * needs to inject packets into it, from a raw socket, that the QP would
 * take as its peer's; so only a caller who may administer the network
 * sees them, as only such a one sees the keys. The RDMA core asks the
 * driver in the caller's context, without its credentials: ask here.
 */
static bool may_see_psns(void)
{
	return ns_capable_noaudit(&init_user_ns, CAP_NET_ADMIN);
}

static int fill_qp_psns(struct sk_buff *msg, const struct sroce_qp *qp)
{
	if (rdma_nl_put_driver_u32_hex(msg, "next_psn",
				       READ_ONCE(qp->req.psn)) ||
	    rdma_nl_put_driver_u32_hex(msg, "unacked_psn",
				       READ_ONCE(qp->req.unacked_psn)) ||
	    rdma_nl_put_driver_u32_hex(msg, "expected_psn",
				       READ_ONCE(qp->resp.epsn)) ||
	    rdma_nl_put_driver_u32(msg, "msn", READ_ONCE(qp->resp.msn)))
		return -EMSGSIZE;
	return 0;
}

/* The QP attributes. */
static int fill_qp(struct sk_buff *msg, void *obj)
{
	struct sroce_qp *qp = obj;
	const struct sroce_req *req = &qp->req;

	if (put_queue(msg, "sq_size", "sq_pi", "sq_ci", &qp->sq))
		return -EMSGSIZE;
	if (sroce_qp_has_rq(qp) &&
	    put_queue(msg, "rq_size", "rq_pi", "rq_ci", &qp->rq))
		return -EMSGSIZE;
	if (qp->srq &&
	    rdma_nl_put_driver_u32(msg, "srqn", qp->srq->srq_num))
		return -EMSGSIZE;
	if (rdma_nl_put_driver_string(msg, "engine",
				      sroce_task_engine_name(&req->task)))
		return -EMSGSIZE;
	if (!sroce_qp_is_reliable(qp))
		return 0;
	if (may_see_psns() && fill_qp_psns(msg, qp))
		return -EMSGSIZE;
	if (rdma_nl_put_driver_u32(msg, "rd_atomic_out",
				   READ_ONCE(req->rd_atomic)) ||
	    rdma_nl_put_driver_u32(msg, "retry_left",
				   READ_ONCE(req->retry.left)) ||
	    rdma_nl_put_driver_u32(msg, "rnr_retry_left",
				   READ_ONCE(req->retry.rnr_left)) ||
	    rdma_nl_put_driver_u32(msg, "cwnd", READ_ONCE(req->win.cwnd)) ||
	    rdma_nl_put_driver_u32(msg, "ssthresh", READ_ONCE(req->win.ssthresh)) ||
	    rdma_nl_put_driver_u32(msg, "srtt_us", READ_ONCE(req->retry.srtt_us)) ||
	    rdma_nl_put_driver_u32(msg, "rttvar_us",
				   READ_ONCE(req->retry.rttvar_us)))
		return -EMSGSIZE;
	return 0;
}

/* The CQ attributes. */
static int fill_cq(struct sk_buff *msg, void *obj)
{
	struct sroce_cq *cq = obj;
	unsigned long flags;
	int err = 0;

	/* A resize replaces the ring under the lock. */
	spin_lock_irqsave(&cq->lock, flags);
	if (put_queue(msg, "ring_size", "pi", "ci", &cq->queue) ||
	    rdma_nl_put_driver_u32(msg, "armed", cq->notify))
		err = -EMSGSIZE;
	spin_unlock_irqrestore(&cq->lock, flags);
	return err;
}

/* The MR attributes. */
static int fill_mr(struct sk_buff *msg, void *obj)
{
	struct sroce_mr *mr = obj;

	/*
	 * key_pending: the consumer moved ibmr's key on for its next REG_MR,
	 * which has not run yet; the data path still accepts the old one
	 * (mr.c). Not the key itself: the RDMA core shows keys only to
	 * CAP_NET_ADMIN, but asks the driver for every caller.
	 */
	if (rdma_nl_put_driver_u32(msg, "type", mr->type) ||
	    rdma_nl_put_driver_u32(msg, "key_pending",
				   READ_ONCE(mr->key) != READ_ONCE(mr->ibmr.lkey)) ||
	    rdma_nl_put_driver_u32_hex(msg, "access", mr->access) ||
	    rdma_nl_put_driver_u32(msg, "pages", READ_ONCE(mr->npages)) ||
	    rdma_nl_put_driver_u32(msg, "valid", READ_ONCE(mr->valid)) ||
	    rdma_nl_put_driver_u32(msg, "bound_mws",
				   atomic_read(&mr->num_mw)))
		return -EMSGSIZE;
	return 0;
}

/* The SRQ attributes. */
static int fill_srq(struct sk_buff *msg, void *obj)
{
	struct sroce_srq *srq = obj;
	int err = 0;

	/* A resize replaces the ring under the lock. */
	spin_lock_irq(&srq->lock);
	if (put_queue(msg, "ring_size", "pi", "ci", &srq->rq) ||
	    rdma_nl_put_driver_u32(msg, "limit", srq->limit))
		err = -EMSGSIZE;
	spin_unlock_irq(&srq->lock);
	return err;
}

/**
 * sroce_restrack_fill_qp() - ib_device_ops.fill_res_qp_entry
 * @msg: the netlink message
 * @ibqp: the QP
 *
 * Return: 0, or -EMSGSIZE when @msg is full.
 */
int sroce_restrack_fill_qp(struct sk_buff *msg, struct ib_qp *ibqp)
{
	return put_table(msg, fill_qp, to_sqp(ibqp));
}

/**
 * sroce_restrack_fill_cq() - ib_device_ops.fill_res_cq_entry
 * @msg: the netlink message
 * @ibcq: the CQ
 *
 * Return: 0, or -EMSGSIZE when @msg is full.
 */
int sroce_restrack_fill_cq(struct sk_buff *msg, struct ib_cq *ibcq)
{
	return put_table(msg, fill_cq, to_scq(ibcq));
}

/**
 * sroce_restrack_fill_mr() - ib_device_ops.fill_res_mr_entry
 * @msg: the netlink message
 * @ibmr: the MR
 *
 * Return: 0, or -EMSGSIZE when @msg is full.
 */
int sroce_restrack_fill_mr(struct sk_buff *msg, struct ib_mr *ibmr)
{
	return put_table(msg, fill_mr, container_of(ibmr, struct sroce_mr, ibmr));
}

/**
 * sroce_restrack_fill_srq() - ib_device_ops.fill_res_srq_entry, where the
 * RDMA core has it
 * @msg: the netlink message
 * @ibsrq: the SRQ
 *
 * Return: 0, or -EMSGSIZE when @msg is full.
 */
int sroce_restrack_fill_srq(struct sk_buff *msg, struct ib_srq *ibsrq)
{
	return put_table(msg, fill_srq, to_ssrq(ibsrq));
}
