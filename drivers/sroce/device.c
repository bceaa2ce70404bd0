// SPDX-License-Identifier: GPL-2.0 OR Linux-OpenIB
/*
 * DOC: Devices
 *
 * The bottom of the device: the list of devices, each device's port state
 * and MTU as its netdev dictates, and the limits on its objects. Every
 * object and the data path call down into this file; it calls nothing of
 * sroce's back (verbs.c, above everything, creates and removes devices).
 *
 * All devices are on one list. Readers on the receive path walk it under
 * RCU; everything else takes sroce_devices_lock, which also serialises
 * attaching devices to their namespace's UDP socket (socket.c). Lock
 * order: rtnl_lock, then sroce_devices_lock.
 */
#include <rdma/ib_verbs.h>

#include "device.h"
#include "params.h"

/* Protects sroce_devices and every device's socket attachment. */
DEFINE_MUTEX(sroce_devices_lock);
static LIST_HEAD(sroce_devices);

/*
 * Worst-case headers around a payload that the netdev MTU must hold:
 * IPv6 (40), UDP (8), BTH (12), RETH (16), ImmDt (4) and ICRC (4).
 */
#define SROCE_MAX_HDR_LEN	84

static const unsigned int sroce_obj_limit[SROCE_NUM_OBJ] = {
	[SROCE_OBJ_UCONTEXT] = INT_MAX,
	[SROCE_OBJ_PD] = SROCE_MAX_PD,
	[SROCE_OBJ_AH] = SROCE_MAX_AH,
	[SROCE_OBJ_CQ] = SROCE_MAX_CQ,
	[SROCE_OBJ_QP] = SROCE_MAX_QP,
	[SROCE_OBJ_SRQ] = SROCE_MAX_SRQ,
	[SROCE_OBJ_MR] = SROCE_MAX_MR,
	[SROCE_OBJ_MW] = SROCE_MAX_MW,
	[SROCE_OBJ_XRCD] = SROCE_MAX_XRCD,
};

/**
 * sroce_dev_obj_get() - account for one more object of a kind
 * @sdev: the device
 * @kind: the object kind
 *
 * Return: 0, or -ENOMEM when the device's limit for @kind is reached.
 */
int sroce_dev_obj_get(struct sroce_dev *sdev, enum sroce_obj kind)
{
	if (atomic_inc_return(&sdev->num_obj[kind]) > sroce_obj_limit[kind]) {
		atomic_dec(&sdev->num_obj[kind]);
		return -ENOMEM;
	}
	return 0;
}

/**
 * sroce_dev_obj_put() - account for one object fewer
 * @sdev: the device
 * @kind: the object kind
 */
void sroce_dev_obj_put(struct sroce_dev *sdev, enum sroce_obj kind)
{
	atomic_dec(&sdev->num_obj[kind]);
}

static void port_event(struct sroce_dev *sdev, enum ib_event_type type)
{
	struct ib_event ev = {
		.device = &sdev->ibdev,
		.element.port_num = 1,
		.event = type,
	};

	ib_dispatch_event(&ev);
}

/**
 * sroce_dev_port_update() - follow the netdev's administrative and carrier
 * state
 * @sdev: the device
 *
 * The port is ACTIVE while the netdev is up and has carrier, else DOWN;
 * each change raises IB_EVENT_PORT_ACTIVE or IB_EVENT_PORT_ERR.
 */
void sroce_dev_port_update(struct sroce_dev *sdev)
{
	enum ib_port_state state, old;

	state = netif_running(sdev->ndev) && netif_carrier_ok(sdev->ndev) ?
		IB_PORT_ACTIVE : IB_PORT_DOWN;

	spin_lock_bh(&sdev->port_lock);
	old = sdev->port_state;
	sdev->port_state = state;
	spin_unlock_bh(&sdev->port_lock);

	if (old == state)
		return;
	ibdev_info(&sdev->ibdev, "port %s\n",
		   state == IB_PORT_ACTIVE ? "active" : "down");
	port_event(sdev, state == IB_PORT_ACTIVE ? IB_EVENT_PORT_ACTIVE :
						   IB_EVENT_PORT_ERR);
}

/**
 * sroce_dev_mtu_update() - follow the netdev's MTU
 * @sdev: the device
 *
 * The active MTU is the largest IB MTU whose packets, with the worst-case
 * RoCEv2 headers, fit in the netdev's MTU (at least 256).
 */
void sroce_dev_mtu_update(struct sroce_dev *sdev)
{
	int payload = (int)READ_ONCE(sdev->ndev->mtu) - SROCE_MAX_HDR_LEN;

	spin_lock_bh(&sdev->port_lock);
	sdev->active_mtu = ib_mtu_int_to_enum(max(payload, 256));
	spin_unlock_bh(&sdev->port_lock);
}

/**
 * sroce_dev_find_rcu() - the device bound to a netdev
 * @ndev: the netdev
 *
 * Context: rcu_read_lock() held; the result is valid until it is dropped.
 * Return: the device or NULL.
 */
struct sroce_dev *sroce_dev_find_rcu(const struct net_device *ndev)
{
	struct sroce_dev *sdev;

	list_for_each_entry_rcu(sdev, &sroce_devices, list)
		if (sdev->ndev == ndev)
			return sdev;
	return NULL;
}

/**
 * sroce_dev_get_by_netdev() - the registered device bound to a netdev
 * @ndev: the netdev
 *
 * Return: the device with a reference the caller drops with
 * ib_device_put(), or NULL if none is registered.
 */
struct sroce_dev *sroce_dev_get_by_netdev(struct net_device *ndev)
{
	struct sroce_dev *sdev;

	rcu_read_lock();
	sdev = sroce_dev_find_rcu(ndev);
	if (sdev && !ib_device_try_get(&sdev->ibdev))
		sdev = NULL;
	rcu_read_unlock();
	return sdev;
}

/**
 * sroce_dev_find_locked() - the device bound to a netdev, on the list
 * @ndev: the netdev
 *
 * Context: sroce_devices_lock held.
 * Return: the device or NULL.
 */
struct sroce_dev *sroce_dev_find_locked(const struct net_device *ndev)
{
	struct sroce_dev *sdev;

	lockdep_assert_held(&sroce_devices_lock);
	list_for_each_entry(sdev, &sroce_devices, list)
		if (sdev->ndev == ndev)
			return sdev;
	return NULL;
}

/**
 * sroce_dev_list_add() - put a registered device on the list
 * @sdev: the device, not on the list
 *
 * From here on the receive path and the netdev notifier find it.
 *
 * Context: sroce_devices_lock held.
 */
void sroce_dev_list_add(struct sroce_dev *sdev)
{
	lockdep_assert_held(&sroce_devices_lock);
	list_add_tail_rcu(&sdev->list, &sroce_devices);
}

/**
 * sroce_dev_list_del() - take a device off the list, if it is on it
 * @sdev: the device
 *
 * Readers under RCU may still see it until a grace period has passed.
 *
 * Context: sroce_devices_lock held.
 */
void sroce_dev_list_del(struct sroce_dev *sdev)
{
	lockdep_assert_held(&sroce_devices_lock);
	if (!list_empty(&sdev->list))
		list_del_rcu(&sdev->list);
}

/**
 * sroce_dev_next_locked() - walk the list of devices
 * @prev: a device on the list, or NULL for the first
 *
 * Context: sroce_devices_lock held across the whole walk.
 * Return: the device after @prev, or NULL past the last.
 */
struct sroce_dev *sroce_dev_next_locked(struct sroce_dev *prev)
{
	lockdep_assert_held(&sroce_devices_lock);
	if (!prev)
		return list_first_entry_or_null(&sroce_devices,
						struct sroce_dev, list);
	if (list_is_last(&prev->list, &sroce_devices))
		return NULL;
	return list_next_entry(prev, list);
}
