// SPDX-License-Identifier: GPL-2.0 OR Linux-OpenIB
/*
 * DOC: Counters
 *
 * Each device keeps a few counters of what it received and dropped. They
 * are exposed as RDMA "hw" port counters, so `rdma statistic show link
 * <dev>/1` and /sys/class/infiniband/<dev>/ports/1/hw_counters show them.
 */
#include "device.h"
#include "stats.h"

static const struct rdma_stat_desc sroce_stat_descs[] = {
	[SROCE_STAT_TX_PACKETS].name = "tx_packets",
	[SROCE_STAT_TX_BYTES].name = "tx_bytes",
	[SROCE_STAT_TX_DROPPED].name = "tx_dropped",
	[SROCE_STAT_RX_PACKETS].name = "rx_packets",
	[SROCE_STAT_RX_BYTES].name = "rx_bytes",
	[SROCE_STAT_RX_DROPPED].name = "rx_dropped",
	[SROCE_STAT_RX_DROP_HEADER].name = "rx_drop_header",
	[SROCE_STAT_RX_DROP_ICRC].name = "rx_drop_icrc",
	[SROCE_STAT_RX_DROP_NO_QP].name = "rx_drop_no_qp",
	[SROCE_STAT_RX_DROP_QP_STATE].name = "rx_drop_qp_state",
	[SROCE_STAT_RX_DROP_QKEY].name = "rx_drop_qkey",
	[SROCE_STAT_RX_DROP_NO_RWQE].name = "rx_drop_no_rwqe",
	[SROCE_STAT_RX_DROP_LENGTH].name = "rx_drop_length",
	[SROCE_STAT_RX_DROP_INVALID].name = "rx_drop_invalid",
	[SROCE_STAT_RX_DROP_ADDR].name = "rx_drop_addr",
	[SROCE_STAT_RX_DROP_BACKLOG].name = "rx_drop_backlog",
	[SROCE_STAT_RX_DROP_GHOST].name = "rx_drop_ghost",
	[SROCE_STAT_RX_DROP_ODP].name = "rx_drop_odp",
	[SROCE_STAT_RETRANSMITS].name = "retransmits",
	[SROCE_STAT_TIMEOUTS].name = "timeouts",
	[SROCE_STAT_SEQ_NAKS_RCVD].name = "seq_naks_rcvd",
	[SROCE_STAT_RNR_NAKS_RCVD].name = "rnr_naks_rcvd",
	[SROCE_STAT_SEQ_ERRORS].name = "seq_errors",
	[SROCE_STAT_RNR_NAKS_SENT].name = "rnr_naks_sent",
	[SROCE_STAT_NAKS_SENT].name = "naks_sent",
	[SROCE_STAT_DUP_REQUESTS].name = "dup_requests",
	[SROCE_STAT_TAIL_PROBES].name = "tail_probes",
	[SROCE_STAT_FLIGHT_HOLDS].name = "flight_holds",
	[SROCE_STAT_TX_ZCOPY].name = "tx_zcopy",
	[SROCE_STAT_TX_ZCOPY_COPIED].name = "tx_zcopy_copied",
	[SROCE_STAT_ODP_FAULTS].name = "odp_faults",
	[SROCE_STAT_ODP_MRS].name = "odp_mrs",
	[SROCE_STAT_ODP_CHILDREN].name = "odp_children",
	[SROCE_STAT_ODP_CHILDREN_FREED].name = "odp_children_freed",
};

static_assert(ARRAY_SIZE(sroce_stat_descs) == SROCE_NUM_STATS);

/**
 * sroce_stats_alloc() - ib_device_ops.alloc_hw_port_stats
 * @ibdev: the device
 * @port: the port (always 1)
 *
 * Return: a new counter set, or NULL.
 */
struct rdma_hw_stats *sroce_stats_alloc(struct ib_device *ibdev, u32 port)
{
	return rdma_alloc_hw_stats_struct(sroce_stat_descs, SROCE_NUM_STATS,
					  RDMA_HW_STATS_DEFAULT_LIFESPAN);
}

/**
 * sroce_stats_get() - ib_device_ops.get_hw_stats: read the counters
 * @ibdev: the device
 * @stats: where to store the values
 * @port: the port
 * @index: the counter asked for; all are filled
 *
 * Return: the number of counters filled.
 */
int sroce_stats_get(struct ib_device *ibdev, struct rdma_hw_stats *stats,
		    u32 port, int index)
{
	struct sroce_dev *sdev = to_sdev(ibdev);
	int i;

	for (i = 0; i < SROCE_NUM_STATS; i++)
		stats->value[i] = atomic64_read(&sdev->stats.v[i]);
	return SROCE_NUM_STATS;
}
