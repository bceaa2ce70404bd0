/* SPDX-License-Identifier: GPL-2.0 OR Linux-OpenIB */
/*
 * Tracepoints of the data path: the story of one QP, as perf trace,
 * trace-cmd or tracefs tell it (Documentation/tracing.md).
 */
#undef TRACE_SYSTEM
#define TRACE_SYSTEM sroce

#if !defined(SROCE_TRACE_H) || defined(TRACE_HEADER_MULTI_READ)
#define SROCE_TRACE_H

#include <linux/tracepoint.h>
#include <rdma/ib_verbs.h>

#include "qp.h"

#ifndef SROCE_TRACE_HELPERS
#define SROCE_TRACE_HELPERS
/* Where every event starts: the device's name and the QP's number. */
static inline void sroce_trace_qp(char *dev, u32 *qpn,
				  const struct sroce_qp *qp)
{
	strscpy(dev, dev_name(&qp->ibqp.device->dev), IB_DEVICE_NAME_MAX);
	*qpn = qp->ibqp.qp_num;
}
#endif

#define sroce_trace_qp_state(s)						\
	__print_symbolic(s, { IB_QPS_RESET, "RESET" },			\
			 { IB_QPS_INIT, "INIT" }, { IB_QPS_RTR, "RTR" },	\
			 { IB_QPS_RTS, "RTS" }, { IB_QPS_SQD, "SQD" },	\
			 { IB_QPS_SQE, "SQE" }, { IB_QPS_ERR, "ERR" })

/* A QP changed state: modify_qp, or an engine's error (IBA 10.3.1). */
TRACE_EVENT(sroce_qp_state,
	    TP_PROTO(const struct sroce_qp *qp, enum ib_qp_state old,
		     enum ib_qp_state new),
	    TP_ARGS(qp, old, new),
	    TP_STRUCT__entry(__array(char, dev, IB_DEVICE_NAME_MAX)
			     __field(u32, qpn)
			     __field(u32, old)
			     __field(u32, new)),
	    TP_fast_assign(sroce_trace_qp(__entry->dev, &__entry->qpn, qp);
			   __entry->old = old;
			   __entry->new = new;),
	    TP_printk("%s qp %u %s -> %s", __entry->dev, __entry->qpn,
		      sroce_trace_qp_state(__entry->old),
		      sroce_trace_qp_state(__entry->new))
);

/*
 * A QP's event at a PSN, with two numbers whose meaning each event's own
 * format says; the class's format is the NAKs'.
 */
DECLARE_EVENT_CLASS(sroce_qp_psn,
		    TP_PROTO(const struct sroce_qp *qp, u32 psn, u32 a, u32 b),
		    TP_ARGS(qp, psn, a, b),
		    TP_STRUCT__entry(__array(char, dev, IB_DEVICE_NAME_MAX)
				     __field(u32, qpn)
				     __field(u32, psn)
				     __field(u32, a)
				     __field(u32, b)),
		    TP_fast_assign(sroce_trace_qp(__entry->dev, &__entry->qpn,
						  qp);
				   __entry->psn = psn;
				   __entry->a = a;
				   __entry->b = b;),
		    TP_printk("%s qp %u psn %u syndrome 0x%02x", __entry->dev,
			      __entry->qpn, __entry->psn, __entry->a)
);

/* The responder sent a NAK or an RNR NAK (IBA 9.7.5.2.3, 9.7.5.2.8). */
DEFINE_EVENT(sroce_qp_psn, sroce_nak_sent,
	     TP_PROTO(const struct sroce_qp *qp, u32 psn, u32 a, u32 b),
	     TP_ARGS(qp, psn, a, b)
);

/* The requester received a NAK or an RNR NAK that asks something. */
DEFINE_EVENT(sroce_qp_psn, sroce_nak_rcvd,
	     TP_PROTO(const struct sroce_qp *qp, u32 psn, u32 a, u32 b),
	     TP_ARGS(qp, psn, a, b)
);

/* An event of the class with a format of its own: TP_printk's arguments. */
#define SROCE_TRACE_QP_PSN(name, ...)					\
	DEFINE_EVENT_PRINT(sroce_qp_psn, name,				\
			   TP_PROTO(const struct sroce_qp *qp, u32 psn,	\
				    u32 a, u32 b),			\
			   TP_ARGS(qp, psn, a, b), TP_printk(__VA_ARGS__))

/* The requester goes back to a PSN after a loss (IBA 9.7.6.1.3). */
SROCE_TRACE_QP_PSN(sroce_retry,
		   "%s qp %u psn %u %s retries_left %u",
		   __entry->dev, __entry->qpn, __entry->psn,
		   __entry->a ? "timeout" : "nak", __entry->b);

/*
 * The requester gives up: no retry left after a loss (a NAK's, 0, or a
 * timeout's, 1), or no RNR retry after an RNR NAK (2); the WQE fails.
 */
SROCE_TRACE_QP_PSN(sroce_give_up,
		   "%s qp %u psn %u gives up after a %s",
		   __entry->dev, __entry->qpn, __entry->psn,
		   __print_symbolic(__entry->a, { 0, "sequence NAK" },
				    { 1, "timeout" }, { 2, "RNR NAK" }));

/* The transport timer expired with packets unacknowledged. */
SROCE_TRACE_QP_PSN(sroce_timeout,
		   "%s qp %u unacked_psn %u backoff %u",
		   __entry->dev, __entry->qpn, __entry->psn, __entry->a);

/* The probe timeout expired: the tail-loss probe went (RFC 8985). */
SROCE_TRACE_QP_PSN(sroce_tail_probe,
		   "%s qp %u unacked_psn %u packets %u",
		   __entry->dev, __entry->qpn, __entry->psn, __entry->a);

/* An RNR NAK makes the requester wait before it resends. */
SROCE_TRACE_QP_PSN(sroce_rnr_wait,
		   "%s qp %u psn %u wait_us %u rnr_retries_left %u",
		   __entry->dev, __entry->qpn, __entry->psn, __entry->a,
		   __entry->b);

TRACE_DEFINE_ENUM(SROCE_RESP_RNR);
TRACE_DEFINE_ENUM(SROCE_RESP_INV_REQ);
TRACE_DEFINE_ENUM(SROCE_RESP_LENGTH);
TRACE_DEFINE_ENUM(SROCE_RESP_ACCESS);
TRACE_DEFINE_ENUM(SROCE_RESP_WQE_PROT);
TRACE_DEFINE_ENUM(SROCE_RESP_WQE_BAD);
TRACE_DEFINE_ENUM(SROCE_RESP_RING_BAD);
TRACE_DEFINE_ENUM(SROCE_RESP_CQ_FULL);
TRACE_DEFINE_ENUM(SROCE_RESP_FAULT);

/* The responder met an error (IBA 9.9.3; enum sroce_resp_result in exec.h). */
SROCE_TRACE_QP_PSN(sroce_resp_error,
		   "%s qp %u psn %u %s",
		   __entry->dev, __entry->qpn, __entry->psn,
		   __print_symbolic(__entry->a, { SROCE_RESP_RNR, "rnr" },
				    { SROCE_RESP_INV_REQ, "invalid_request" },
				    { SROCE_RESP_LENGTH, "length" },
				    { SROCE_RESP_ACCESS, "remote_access" },
				    { SROCE_RESP_WQE_PROT, "wqe_protection" },
				    { SROCE_RESP_WQE_BAD, "wqe_malformed" },
				    { SROCE_RESP_RING_BAD, "ring_corrupt" },
				    { SROCE_RESP_CQ_FULL, "cq_overflow" },
				    { SROCE_RESP_FAULT, "odp_fault" }));

/* The device's flight bound holds the QP's next packet (at psn) back. */
SROCE_TRACE_QP_PSN(sroce_flight_hold,
		   "%s qp %u psn %u in_flight %u device %u",
		   __entry->dev, __entry->qpn, __entry->psn, __entry->a,
		   __entry->b);

/*
 * A CQ or SRQ resized (the Resize CQ and Modify SRQ verbs of IBA chapter
 * 11): the entries it moved without the object's lock, and under it with
 * interrupts off (queue.c); the second is what the resize stopped a CPU
 * for.
 */
TRACE_EVENT(sroce_queue_resize,
	    TP_PROTO(const struct ib_device *ibdev, bool srq, u32 id,
		     u32 entries, const struct sroce_queue_move *m),
	    TP_ARGS(ibdev, srq, id, entries, m),
	    TP_STRUCT__entry(__array(char, dev, IB_DEVICE_NAME_MAX)
			     __field(bool, srq)
			     __field(u32, id)
			     __field(u32, entries)
			     __field(u32, unlocked)
			     __field(u32, locked)),
	    TP_fast_assign(strscpy(__entry->dev, dev_name(&ibdev->dev),
				   IB_DEVICE_NAME_MAX);
			   __entry->srq = srq;
			   __entry->id = id;
			   __entry->entries = entries;
			   __entry->unlocked = m->unlocked;
			   __entry->locked = m->locked;),
	    TP_printk("%s %s %u: %u entries, %u moved (%u unlocked, %u locked)",
		      __entry->dev, __entry->srq ? "srq" : "cq", __entry->id,
		      __entry->entries, __entry->unlocked + __entry->locked,
		      __entry->unlocked, __entry->locked)
);

#endif /* SROCE_TRACE_H */

/* Out of tree: the header is found beside the sources (Kbuild). */
#undef TRACE_INCLUDE_PATH
#define TRACE_INCLUDE_PATH .
#undef TRACE_INCLUDE_FILE
#define TRACE_INCLUDE_FILE trace
#include <trace/define_trace.h>
