/* SPDX-License-Identifier: GPL-2.0 OR Linux-OpenIB */
#ifndef SROCE_STATS_H
#define SROCE_STATS_H

#include <linux/atomic.h>
#include <rdma/ib_verbs.h>

/**
 * enum sroce_stat - per-device counters, shown by `rdma statistic`
 * @SROCE_STAT_RX_PACKETS: RoCEv2 packets received for this device
 * @SROCE_STAT_RX_BYTES: their UDP payload bytes
 * @SROCE_STAT_RX_DROPPED: received packets dropped, for any reason
 * @SROCE_STAT_RX_DROP_NO_DATAPATH: dropped because nothing handles them yet
 * @SROCE_NUM_STATS: number of counters
 */
enum sroce_stat {
	SROCE_STAT_RX_PACKETS,
	SROCE_STAT_RX_BYTES,
	SROCE_STAT_RX_DROPPED,
	SROCE_STAT_RX_DROP_NO_DATAPATH,
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

struct rdma_hw_stats *sroce_stats_alloc(struct ib_device *ibdev, u32 port);
int sroce_stats_get(struct ib_device *ibdev, struct rdma_hw_stats *stats,
		    u32 port, int index);

#endif /* SROCE_STATS_H */
