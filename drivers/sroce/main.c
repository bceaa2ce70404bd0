// SPDX-License-Identifier: GPL-2.0 OR Linux-OpenIB
/*
 * sroce: a software RoCEv2 RDMA device.
 *
 * DOC: Module
 *
 * Loading the module registers the "sroce" link type with the RDMA core's
 * netlink interface, a netdev notifier and the per-namespace state.
 * Devices are created with `rdma link add NAME type sroce netdev IF`.
 * Unloading removes every device first.
 */
#include <linux/module.h>
#include <linux/netdevice.h>
#include <rdma/rdma_netlink.h>

#include "device.h"
#include "fault.h"
#include "icrc.h"
#include "net.h"
#include "odp.h"
#include "opcode.h"
#include "recv.h"
#include "socket.h"
#include "verbs.h"

/*
 * The netdev notifier: the device follows its netdev's state, and goes
 * away with it. Runs under rtnl_lock.
 */
static int sroce_netdev_event(struct notifier_block *nb, unsigned long event,
			      void *ptr)
{
	struct net_device *ndev = netdev_notifier_info_to_dev(ptr);
	struct sroce_dev *sdev;

	if (event == NETDEV_UNREGISTER) {
		sroce_verbs_netdev_gone(ndev);
		return NOTIFY_OK;
	}

	sdev = sroce_dev_get_by_netdev(ndev);
	if (!sdev)
		return NOTIFY_DONE;
	switch (event) {
	case NETDEV_UP:
	case NETDEV_DOWN:
	case NETDEV_CHANGE:
		sroce_dev_port_update(sdev);
		break;
	case NETDEV_CHANGEMTU:
		sroce_dev_mtu_update(sdev);
		break;
	default:
		break;
	}
	ib_device_put(&sdev->ibdev);
	return NOTIFY_OK;
}

static struct notifier_block sroce_netdev_notifier = {
	.notifier_call = sroce_netdev_event,
};

/* Fault injection re-sends and re-receives through the real paths. */
static const struct sroce_fault_ops sroce_fault_deliver = {
	.output = sroce_net_output,
	.input = sroce_recv_again,
};

static struct rdma_link_ops sroce_link_ops = {
	.type = "sroce",
	.newlink = sroce_verbs_add,
};

static int __init sroce_init(void)
{
	int err;

	sroce_opcode_init();
	sroce_icrc_init();
	sroce_fault_module_init(&sroce_fault_deliver);
	err = sroce_odp_module_init();
	if (err)
		goto err_fault;
	err = sroce_socket_init();
	if (err)
		goto err_odp;
	err = register_netdevice_notifier(&sroce_netdev_notifier);
	if (err)
		goto err_socket;
	rdma_link_register(&sroce_link_ops);
	return 0;

err_socket:
	sroce_socket_exit();
err_odp:
	sroce_odp_module_exit();
err_fault:
	sroce_fault_module_exit();
	sroce_icrc_exit();
	return err;
}

static void __exit sroce_exit(void)
{
	rdma_link_unregister(&sroce_link_ops);
	sroce_verbs_remove_all();
	unregister_netdevice_notifier(&sroce_netdev_notifier);
	sroce_socket_exit();
	sroce_odp_module_exit();
	sroce_fault_module_exit();
	sroce_icrc_exit();
}

module_init(sroce_init);
module_exit(sroce_exit);

MODULE_DESCRIPTION("sroce: software RoCEv2 RDMA device");
MODULE_LICENSE("Dual BSD/GPL");
MODULE_ALIAS_RDMA_LINK("sroce");
