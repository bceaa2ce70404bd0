/* SPDX-License-Identifier: GPL-2.0 OR Linux-OpenIB */
#ifndef SROCE_DEVICE_H
#define SROCE_DEVICE_H

#include <linux/mutex.h>
#include <linux/netdevice.h>
#include <linux/xarray.h>
#include <rdma/ib_verbs.h>

#include "fault.h"
#include "stats.h"

/**
 * enum sroce_obj - object kinds whose number per device is limited
 * @SROCE_OBJ_UCONTEXT: user contexts
 * @SROCE_OBJ_PD: protection domains
 * @SROCE_OBJ_AH: address handles
 * @SROCE_OBJ_CQ: completion queues
 * @SROCE_OBJ_QP: queue pairs
 * @SROCE_OBJ_SRQ: shared receive queues
 * @SROCE_OBJ_MR: memory regions
 * @SROCE_OBJ_MW: memory windows
 * @SROCE_OBJ_XRCD: XRC domains
 * @SROCE_NUM_OBJ: number of kinds
 */
enum sroce_obj {
	SROCE_OBJ_UCONTEXT,
	SROCE_OBJ_PD,
	SROCE_OBJ_AH,
	SROCE_OBJ_CQ,
	SROCE_OBJ_QP,
	SROCE_OBJ_SRQ,
	SROCE_OBJ_MR,
	SROCE_OBJ_MW,
	SROCE_OBJ_XRCD,
	SROCE_NUM_OBJ,
};

struct sroce_net;

/**
 * struct sroce_dev - one sroce device, bound to one Ethernet device
 * @ibdev: the RDMA core's device; first, see INIT_RDMA_OBJ_SIZE
 * @ndev: the Ethernet device, referenced for the device's whole life
 * @ndev_tracker: tracks that reference
 * @net: network namespace of @ndev when the device was created
 * @list: entry in the device list (RCU; writers hold sroce_devices_lock)
 * @sn: the namespace's UDP socket state while attached, else NULL;
 *      written under sroce_devices_lock, read under RCU
 * @attr: what query_device reports; constant after creation
 * @port_lock: protects @port_state and @active_mtu
 * @port_state: IB_PORT_ACTIVE or IB_PORT_DOWN, following the netdev
 * @active_mtu: largest IB MTU whose packets fit the netdev's MTU
 * @qps: QP number to struct sroce_qp
 * @srqs: SRQ number to struct sroce_srq
 * @ahs: AH number to struct sroce_ah
 * @keys: MR and MW key index to struct sroce_mr or struct sroce_mw
 * @pd_ida: PD numbers
 * @num_obj: live objects of each kind, checked against the limits
 * @stats: counters
 * @mcast_lock: protects @mcgs (readers: RCU) and @num_mcg
 * @mcgs: multicast groups with QPs attached (mcast.c)
 * @num_mcg: entries of @mcgs
 * @fault: fault injection for tests (fault.c)
 * @req_flight: unacknowledged packets of the device's RC and XRC QPs
 *		together, as each send engine last counted its own (flight.c)
 * @req_active: QPs counted in @req_flight with at least one packet
 *
 * The xarrays hold an object only once it is fully built (see each
 * object's create function) and lose it before it is torn down.
 */
struct sroce_dev {
	struct ib_device ibdev;
	struct net_device *ndev;
	netdevice_tracker ndev_tracker;
	struct net *net;
	struct list_head list;
	struct sroce_net __rcu *sn;
	struct ib_device_attr attr;

	spinlock_t port_lock;		/* see above */
	enum ib_port_state port_state;
	enum ib_mtu active_mtu;

	struct xarray qps;
	struct xarray srqs;
	struct xarray ahs;
	struct xarray keys;
	struct ida pd_ida;
	atomic_t num_obj[SROCE_NUM_OBJ];
	struct sroce_stats stats;
	struct mutex mcast_lock;	/* see above */
	struct list_head mcgs;
	u32 num_mcg;
	struct sroce_fault fault;
	/* Written at every RC packet: not beside what every packet reads. */
	atomic_t req_flight ____cacheline_aligned_in_smp;
	atomic_t req_active;
};

extern struct mutex sroce_devices_lock;

static inline struct sroce_dev *to_sdev(struct ib_device *ibdev)
{
	return container_of(ibdev, struct sroce_dev, ibdev);
}

struct sroce_dev *sroce_dev_get_by_netdev(struct net_device *ndev);
struct sroce_dev *sroce_dev_find_rcu(const struct net_device *ndev);
struct sroce_dev *sroce_dev_find_locked(const struct net_device *ndev);
void sroce_dev_list_add(struct sroce_dev *sdev);
void sroce_dev_list_del(struct sroce_dev *sdev);
struct sroce_dev *sroce_dev_next_locked(struct sroce_dev *prev);
void sroce_dev_port_update(struct sroce_dev *sdev);
void sroce_dev_mtu_update(struct sroce_dev *sdev);
int sroce_dev_obj_get(struct sroce_dev *sdev, enum sroce_obj kind);
void sroce_dev_obj_put(struct sroce_dev *sdev, enum sroce_obj kind);

#define sroce_dbg(sdev, fmt, ...) ibdev_dbg(&(sdev)->ibdev, fmt, ##__VA_ARGS__)

#endif /* SROCE_DEVICE_H */
