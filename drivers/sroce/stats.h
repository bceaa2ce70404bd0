/* SPDX-License-Identifier: GPL-2.0 OR Linux-OpenIB */
#ifndef SROCE_STATS_H
#define SROCE_STATS_H

#include <linux/atomic.h>
#include <rdma/ib_verbs.h>

/**
 * enum sroce_stat - per-device counters, shown by `rdma statistic`
 * @SROCE_STAT_TX_PACKETS: packets sent
 * @SROCE_STAT_TX_BYTES: their bytes from the BTH on
 * @SROCE_STAT_TX_DROPPED: packets dropped before reaching the IP stack
 *	(no route, device leaving its namespace, no memory), and a
 *	responder's acknowledgments that could not be allocated (not sent
 *	again: the requester's timer or a later ACK recovers)
 * @SROCE_STAT_RX_PACKETS: RoCEv2 packets received for this device
 * @SROCE_STAT_RX_BYTES: their bytes from the BTH on
 * @SROCE_STAT_RX_DROPPED: received packets dropped, for any reason below
 * @SROCE_STAT_RX_DROP_HEADER: malformed or truncated headers, bad opcode,
 *	transport version or P_Key
 * @SROCE_STAT_RX_DROP_ICRC: ICRC mismatch
 * @SROCE_STAT_RX_DROP_NO_QP: no such destination QP
 * @SROCE_STAT_RX_DROP_QP_STATE: the QP's type or state does not take it
 * @SROCE_STAT_RX_DROP_QKEY: UD datagram with the wrong Q_Key
 * @SROCE_STAT_RX_DROP_NO_RWQE: UD datagram with no receive WQE
 * @SROCE_STAT_RX_DROP_LENGTH: UD datagram longer than the path MTU or than
 *	the receive WQE's buffers (IBA responder error class D, see
 *	Documentation/responder-errors.md)
 * @SROCE_STAT_RX_DROP_INVALID: UC or UD request that an RC responder would
 *	answer with an invalid request or remote access NAK
 * @SROCE_STAT_RX_DROP_ADDR: packet for a connected QP from an address other
 *	than the QP's peer, or to another of our addresses
 * @SROCE_STAT_RX_DROP_BACKLOG: a QP's queue of received packets was full
 *	(module parameter "backlog")
 * @SROCE_STAT_RX_DROP_GHOST: a response (ACK, NAK, READ response) for a
 *	PSN the requester never sent (IBA 9.7.5.2.2)
 * @SROCE_STAT_RX_DROP_ODP: UC or UD request whose on-demand paged target
 *			    memory was not mapped: dropped while the fault
 *			    is resolved (RC answers an RNR NAK instead)
 * @SROCE_STAT_RETRANSMITS: requester resends (after a NAK or a timeout)
 * @SROCE_STAT_TIMEOUTS: transport timer expiries
 * @SROCE_STAT_SEQ_NAKS_RCVD: PSN sequence error NAKs received
 * @SROCE_STAT_RNR_NAKS_RCVD: RNR NAKs received
 * @SROCE_STAT_SEQ_ERRORS: out-of-sequence requests received
 * @SROCE_STAT_RNR_NAKS_SENT: RNR NAKs sent
 * @SROCE_STAT_NAKS_SENT: other NAKs sent (invalid request, access error...)
 * @SROCE_STAT_DUP_REQUESTS: duplicate requests received
 * @SROCE_STAT_TAIL_PROBES: requester's tail-loss probes (its last packet
 *	sent again when no acknowledgment came for twice the round trip)
 * @SROCE_STAT_FLIGHT_HOLDS: times an RC QP held back a packet its own
 *	window allowed, because the device's QPs together had as many
 *	unacknowledged packets as module parameter "flight" allows
 * @SROCE_STAT_TX_ZCOPY: packets built with their payload attached from the
 *	MR's pages rather than copied (module parameter "zcopy")
 * @SROCE_STAT_TX_ZCOPY_COPIED: such packets whose pages the network stack
 *	copied all the same (forwarded into another namespace, as over a
 *	veth); the QP then copies its payloads itself (zcopy.c)
 * @SROCE_STAT_ODP_FAULTS: page faults queued for on-demand paged memory
 *	that an access found not mapped (odp.c), by any engine
 * @SROCE_STAT_ODP_MRS: memory regions registered on demand (odp.c): that
 *	a program asked for ODP and got it
 * @SROCE_STAT_ODP_CHILDREN: children of implicit ODP MRs created, each
 *	2 MiB of address space that an access or prefetch touched
 *	(odp_implicit.c)
 * @SROCE_STAT_ODP_CHILDREN_FREED: such children freed: unmapped by the
 *	process, mapping nothing when made, or with their MR
 * @SROCE_NUM_STATS: number of counters
 */
enum sroce_stat {
	SROCE_STAT_TX_PACKETS,
	SROCE_STAT_TX_BYTES,
	SROCE_STAT_TX_DROPPED,
	SROCE_STAT_RX_PACKETS,
	SROCE_STAT_RX_BYTES,
	SROCE_STAT_RX_DROPPED,
	SROCE_STAT_RX_DROP_HEADER,
	SROCE_STAT_RX_DROP_ICRC,
	SROCE_STAT_RX_DROP_NO_QP,
	SROCE_STAT_RX_DROP_QP_STATE,
	SROCE_STAT_RX_DROP_QKEY,
	SROCE_STAT_RX_DROP_NO_RWQE,
	SROCE_STAT_RX_DROP_LENGTH,
	SROCE_STAT_RX_DROP_INVALID,
	SROCE_STAT_RX_DROP_ADDR,
	SROCE_STAT_RX_DROP_BACKLOG,
	SROCE_STAT_RX_DROP_GHOST,
	SROCE_STAT_RX_DROP_ODP,
	SROCE_STAT_RETRANSMITS,
	SROCE_STAT_TIMEOUTS,
	SROCE_STAT_SEQ_NAKS_RCVD,
	SROCE_STAT_RNR_NAKS_RCVD,
	SROCE_STAT_SEQ_ERRORS,
	SROCE_STAT_RNR_NAKS_SENT,
	SROCE_STAT_NAKS_SENT,
	SROCE_STAT_DUP_REQUESTS,
	SROCE_STAT_TAIL_PROBES,
	SROCE_STAT_FLIGHT_HOLDS,
	SROCE_STAT_TX_ZCOPY,
	SROCE_STAT_TX_ZCOPY_COPIED,
	SROCE_STAT_ODP_FAULTS,
	SROCE_STAT_ODP_MRS,
	SROCE_STAT_ODP_CHILDREN,
	SROCE_STAT_ODP_CHILDREN_FREED,
	SROCE_NUM_STATS,
};

/**
 * struct sroce_stats - counter values
 * @v: one counter per enum sroce_stat
 */
struct sroce_stats {
	atomic64_t v[SROCE_NUM_STATS];
};

/**
 * sroce_stats_add() - add to a counter
 * @s: the device's counters
 * @which: the counter
 * @n: amount
 */
static inline void sroce_stats_add(struct sroce_stats *s, enum sroce_stat which,
				   u64 n)
{
	atomic64_add(n, &s->v[which]);
}

/**
 * sroce_stats_drop() - count a received packet dropped, and why
 * @s: the device's counters
 * @why: one of the SROCE_STAT_RX_DROP_* counters
 */
static inline void sroce_stats_drop(struct sroce_stats *s, enum sroce_stat why)
{
	atomic64_inc(&s->v[why]);
	atomic64_inc(&s->v[SROCE_STAT_RX_DROPPED]);
}

struct rdma_hw_stats *sroce_stats_alloc(struct ib_device *ibdev, u32 port);
int sroce_stats_get(struct ib_device *ibdev, struct rdma_hw_stats *stats,
		    u32 port, int index);

#endif /* SROCE_STATS_H */
