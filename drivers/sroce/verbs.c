// SPDX-License-Identifier: GPL-2.0 OR Linux-OpenIB
/*
 * DOC: Verbs
 *
 * The top of the driver: the RDMA core's entry points (the ops table),
 * the query verbs, and the creation and removal of devices. Nothing in
 * sroce calls back up into this file; it calls down into the objects
 * (ucontext.c, pd.c, ah.c, cq.c, srq.c, qp.c, qp_state.c, mr.c, mw.c,
 * mcast.c), the device's own state (device.c), the sockets (socket.c),
 * fault injection (fault.c) and the counters (stats.c, restrack.c).
 *
 * A sroce device is created by `rdma link add NAME type sroce netdev IF`
 * and lives until `rdma link del NAME`, until IF is unregistered, or until
 * the module is unloaded. It registers one RoCE port with UDP
 * encapsulation (RoCE v2) whose GID table the RDMA core's RoCE GID cache
 * fills from IF's IPv4 and IPv6 addresses.
 *
 * Teardown always runs through the RDMA core: ib_unregister_device*()
 * calls dev_dealloc() once no verbs call can reach the device, and
 * that undoes sroce_verbs_add() step by step.
 */
#include <linux/if_arp.h>
#include <net/addrconf.h>
#include <rdma/ib_addr.h>
#include <rdma/ib_cache.h>
#include <rdma/ib_mad.h>

#include "advise.h"
#include "ah.h"
#include "compat.h"
#include "cq.h"
#include "device.h"
#include "fault.h"
#include "mcast.h"
#include "mr.h"
#include "mw.h"
#include "odp.h"
#include "params.h"
#include "pd.h"
#include "queue.h"
#include "qp.h"
#include "qp_state.h"
#include "restrack.h"
#include "socket.h"
#include "srq.h"
#include "ucontext.h"
#include "verbs.h"

static void init_attr(struct sroce_dev *sdev)
{
	struct ib_device_attr *a = &sdev->attr;

	a->sys_image_guid = sdev->ibdev.node_guid;
	a->max_mr_size = SROCE_MAX_MR_SIZE;
	a->page_size_cap = SROCE_PAGE_SIZE_CAP;
	a->vendor_id = SROCE_VENDOR_ID;
	a->vendor_part_id = SROCE_VENDOR_PART_ID;
	a->max_qp = SROCE_MAX_QP;
	a->max_qp_wr = SROCE_MAX_QP_WR;
	a->device_cap_flags = IB_DEVICE_PORT_ACTIVE_EVENT |
			      IB_DEVICE_SYS_IMAGE_GUID |
			      IB_DEVICE_RC_RNR_NAK_GEN |
			      IB_DEVICE_MEM_WINDOW |
			      IB_DEVICE_MEM_WINDOW_TYPE_2B |
			      IB_DEVICE_MEM_MGT_EXTENSIONS |
			      IB_DEVICE_SRQ_RESIZE | IB_DEVICE_XRC |
			      IB_DEVICE_ATOMIC_WRITE | IB_DEVICE_FLUSH_GLOBAL;
	a->kernel_cap_flags = IBK_ALLOW_USER_UNREG;
	/* On-demand paging, for what odp.c and its tests cover (80-odp). */
	if (sroce_odp_supported()) {
		a->kernel_cap_flags |= IBK_ON_DEMAND_PAGING;
		a->odp_caps.general_caps = IB_ODP_SUPPORT |
					   IB_ODP_SUPPORT_IMPLICIT;
		a->odp_caps.per_transport_caps.rc_odp_caps =
			IB_ODP_SUPPORT_SEND | IB_ODP_SUPPORT_RECV |
			IB_ODP_SUPPORT_WRITE | IB_ODP_SUPPORT_READ |
			IB_ODP_SUPPORT_ATOMIC | IB_ODP_SUPPORT_SRQ_RECV;
		a->odp_caps.per_transport_caps.xrc_odp_caps =
			a->odp_caps.per_transport_caps.rc_odp_caps;
		a->odp_caps.per_transport_caps.uc_odp_caps =
			IB_ODP_SUPPORT_SEND | IB_ODP_SUPPORT_RECV |
			IB_ODP_SUPPORT_WRITE;
		a->odp_caps.per_transport_caps.ud_odp_caps =
			IB_ODP_SUPPORT_SEND | IB_ODP_SUPPORT_RECV;
	}
	a->max_send_sge = SROCE_MAX_SEND_SGE;
	a->max_recv_sge = SROCE_MAX_RECV_SGE;
	a->max_sge_rd = SROCE_MAX_SGE_RD;
	a->max_cq = SROCE_MAX_CQ;
	a->max_cqe = SROCE_MAX_CQE;
	a->max_mr = SROCE_MAX_MR;
	a->max_mw = SROCE_MAX_MW;
	a->max_pd = SROCE_MAX_PD;
	a->max_qp_rd_atom = SROCE_MAX_QP_RD_ATOM;
	a->max_qp_init_rd_atom = SROCE_MAX_QP_INIT_RD_ATOM;
	a->max_res_rd_atom = SROCE_MAX_QP * SROCE_MAX_QP_RD_ATOM;
	a->atomic_cap = IB_ATOMIC_HCA;
	a->masked_atomic_cap = IB_ATOMIC_NONE;
	a->max_ah = SROCE_MAX_AH;
	a->max_srq = SROCE_MAX_SRQ;
	a->max_srq_wr = SROCE_MAX_SRQ_WR;
	a->max_srq_sge = SROCE_MAX_SRQ_SGE;
	a->max_fast_reg_page_list_len = SROCE_MAX_FAST_REG_PAGES;
	a->max_pkeys = SROCE_MAX_PKEYS;
	a->max_mcast_grp = SROCE_MAX_MCAST_GRP;
	a->max_mcast_qp_attach = SROCE_MAX_MCAST_QP_ATTACH;
	a->max_total_mcast_qp_attach = SROCE_MAX_MCAST_GRP *
					SROCE_MAX_MCAST_QP_ATTACH;
	a->local_ca_ack_delay = SROCE_LOCAL_CA_ACK_DELAY;
}

static int query_device(struct ib_device *ibdev, struct ib_device_attr *attr,
			struct ib_udata *udata)
{
	if (udata && (udata->inlen || udata->outlen))
		return -EINVAL;
	*attr = to_sdev(ibdev)->attr;
	return 0;
}

static int query_port(struct ib_device *ibdev, u32 port,
		      struct ib_port_attr *attr)
{
	struct sroce_dev *sdev = to_sdev(ibdev);

	/* The RDMA core zeroed *attr. */
	spin_lock_bh(&sdev->port_lock);
	attr->state = sdev->port_state;
	attr->active_mtu = sdev->active_mtu;
	spin_unlock_bh(&sdev->port_lock);

	attr->phys_state = attr->state == IB_PORT_ACTIVE ?
			   IB_PORT_PHYS_STATE_LINK_UP :
			   IB_PORT_PHYS_STATE_DISABLED;
	attr->max_mtu = IB_MTU_4096;
	attr->gid_tbl_len = SROCE_GID_TABLE_LEN;
	attr->port_cap_flags = IB_PORT_CM_SUP;
	attr->max_msg_sz = SROCE_MAX_MSG_SIZE;
	attr->pkey_tbl_len = SROCE_MAX_PKEYS;
	attr->max_vl_num = 1;

	/*
	 * Report the netdev's speed when it has one. While the netdev is being
	 * unregistered there is none to ask: keep the slowest rate rather than
	 * fail a query the RDMA core makes during our own teardown.
	 */
	attr->active_speed = IB_SPEED_SDR;
	attr->active_width = IB_WIDTH_1X;
	ib_get_eth_speed(ibdev, port, &attr->active_speed, &attr->active_width);
	return 0;
}

static int query_pkey(struct ib_device *ibdev, u32 port, u16 index,
		      u16 *pkey)
{
	if (index >= SROCE_MAX_PKEYS)
		return -EINVAL;
	*pkey = IB_DEFAULT_PKEY_FULL;
	return 0;
}

static int get_port_immutable(struct ib_device *ibdev, u32 port,
			      struct ib_port_immutable *immutable)
{
	immutable->core_cap_flags = RDMA_CORE_PORT_IBA_ROCE_UDP_ENCAP;
	immutable->pkey_tbl_len = SROCE_MAX_PKEYS;
	immutable->gid_tbl_len = SROCE_GID_TABLE_LEN;
	immutable->max_mad_size = IB_MGMT_MAD_SIZE;
	return 0;
}

static enum rdma_link_layer get_link_layer(struct ib_device *ibdev,
					   u32 port)
{
	return IB_LINK_LAYER_ETHERNET;
}

/*
 * The RDMA core wants NULL once the netdev is on its way out
 * (NETDEV_UNREGISTER has begun), although we still hold our reference.
 */
static struct net_device *get_netdev(struct ib_device *ibdev, u32 port)
{
	struct net_device *ndev = to_sdev(ibdev)->ndev;

	if (READ_ONCE(ndev->reg_state) != NETREG_REGISTERED)
		return NULL;
	dev_hold(ndev);
	return ndev;
}

#ifdef SROCE_HAVE_REPORT_PORT_EVENT
/*
 * ib_device_ops.report_port_event, where the RDMA core has it: without it
 * the core raises its own PORT_ACTIVE and PORT_ERR for the netdev beside
 * ours, and a consumer sees each twice. The core calls it from its netdev
 * notifier, as ours calls sroce_dev_port_update(): whichever comes first
 * raises the event, the other finds the state unchanged.
 */
static void report_port_event(struct ib_device *ibdev, struct net_device *ndev,
			      unsigned long event)
{
	sroce_dev_port_update(to_sdev(ibdev));
}
#endif

static void dev_dealloc(struct ib_device *ibdev);

static const struct ib_device_ops sroce_verbs_ops = {
	.owner = THIS_MODULE,
	.driver_id = RDMA_DRIVER_UNKNOWN,
	.uverbs_abi_ver = SROCE_UVERBS_ABI_VERSION,

	.advise_mr = sroce_mr_advise,
	.alloc_hw_port_stats = sroce_stats_alloc,
	.alloc_mr = sroce_mr_alloc,
	.alloc_mw = sroce_mw_alloc,
	.alloc_pd = sroce_pd_alloc,
	.alloc_xrcd = sroce_xrcd_alloc,
	.alloc_ucontext = sroce_ucontext_alloc,
	.attach_mcast = sroce_mcast_attach,
	.create_ah = sroce_ah_create,
	.create_cq = sroce_cq_create,
	.create_qp = sroce_qp_create,
	.create_srq = sroce_srq_create,
	.create_user_ah = sroce_ah_create,
	.dealloc_driver = dev_dealloc,
	.dealloc_mw = sroce_mw_dealloc,
	.dealloc_pd = sroce_pd_dealloc,
	.dealloc_xrcd = sroce_xrcd_dealloc,
	.fill_res_cq_entry = sroce_restrack_fill_cq,
	.fill_res_mr_entry = sroce_restrack_fill_mr,
	.fill_res_qp_entry = sroce_restrack_fill_qp,
#ifdef SROCE_HAVE_FILL_RES_SRQ
	.fill_res_srq_entry = sroce_restrack_fill_srq,
#endif
#ifdef SROCE_HAVE_REPORT_PORT_EVENT
	.report_port_event = report_port_event,
#endif
	.dealloc_ucontext = sroce_ucontext_dealloc,
	.dereg_mr = sroce_mr_dereg,
	.destroy_ah = sroce_ah_destroy,
	.destroy_cq = sroce_cq_destroy,
	.destroy_qp = sroce_qp_destroy,
	.destroy_srq = sroce_srq_destroy,
	.detach_mcast = sroce_mcast_detach,
	.disassociate_ucontext = sroce_ucontext_disassociate,
	.get_dma_mr = sroce_mr_get_dma,
	.get_hw_stats = sroce_stats_get,
	.get_link_layer = get_link_layer,
	.get_netdev = get_netdev,
	.get_port_immutable = get_port_immutable,
	.map_mr_sg = sroce_mr_map_sg,
	.mmap = sroce_queue_mmap,
	.mmap_free = sroce_queue_mmap_free,
	.modify_qp = sroce_qp_modify,
	.modify_srq = sroce_srq_modify,
	.poll_cq = sroce_cq_poll,
	.post_recv = sroce_qp_post_recv,
	.post_send = sroce_qp_post_send,
	.post_srq_recv = sroce_srq_post_recv,
	.query_ah = sroce_ah_query,
	.query_device = query_device,
	.query_pkey = query_pkey,
	.query_port = query_port,
	.query_qp = sroce_qp_query,
	.query_srq = sroce_srq_query,
	.reg_user_mr = sroce_mr_reg_user,
	.rereg_user_mr = sroce_mr_rereg_user,
	.req_notify_cq = sroce_cq_req_notify,
	.SROCE_OP_RESIZE_CQ = sroce_cq_resize,

	INIT_RDMA_OBJ_SIZE(ib_ah, sroce_ah, ibah),
	INIT_RDMA_OBJ_SIZE(ib_cq, sroce_cq, ibcq),
	INIT_RDMA_OBJ_SIZE(ib_mw, sroce_mw, ibmw),
	INIT_RDMA_OBJ_SIZE(ib_pd, sroce_pd, ibpd),
	INIT_RDMA_OBJ_SIZE(ib_qp, sroce_qp, ibqp),
	INIT_RDMA_OBJ_SIZE(ib_srq, sroce_srq, ibsrq),
	INIT_RDMA_OBJ_SIZE(ib_ucontext, sroce_ucontext, ibuc),
	INIT_RDMA_OBJ_SIZE(ib_xrcd, sroce_xrcd, ibxrcd),
};

static int dev_init(struct sroce_dev *sdev, struct net_device *ndev)
{
	struct ib_device *ibdev = &sdev->ibdev;

	ib_set_device_ops(ibdev, &sroce_verbs_ops);
	sroce_fault_init(sdev);
	sdev->ndev = ndev;
	netdev_hold(ndev, &sdev->ndev_tracker, GFP_KERNEL);
	sdev->net = dev_net(ndev);
	INIT_LIST_HEAD(&sdev->list);
	spin_lock_init(&sdev->port_lock);
	/* The data path looks QPs, AHs and keys up in softirq context. */
	xa_init_flags(&sdev->qps, XA_FLAGS_ALLOC | XA_FLAGS_LOCK_BH);
	xa_init_flags(&sdev->srqs, XA_FLAGS_ALLOC1 | XA_FLAGS_LOCK_BH);
	/* AHs may come and go with interrupts disabled (ah.c). */
	xa_init_flags(&sdev->ahs, XA_FLAGS_ALLOC1 | XA_FLAGS_LOCK_IRQ);
	xa_init_flags(&sdev->keys, XA_FLAGS_ALLOC1 | XA_FLAGS_LOCK_BH);
	ida_init(&sdev->pd_ida);
	mutex_init(&sdev->mcast_lock);
	INIT_LIST_HEAD(&sdev->mcgs);

	strscpy(ibdev->node_desc, "sroce", sizeof(ibdev->node_desc));
	ibdev->node_type = RDMA_NODE_IB_CA;
	ibdev->phys_port_cnt = 1;
	ibdev->num_comp_vectors = num_possible_cpus();
	ibdev->local_dma_lkey = 0;
	/* The post commands, without work requests, are the doorbells. */
	ibdev->uverbs_cmd_mask |= BIT_ULL(IB_USER_VERBS_CMD_REQ_NOTIFY_CQ) |
				  BIT_ULL(IB_USER_VERBS_CMD_POST_SEND) |
				  BIT_ULL(IB_USER_VERBS_CMD_POST_RECV) |
				  BIT_ULL(IB_USER_VERBS_CMD_POST_SRQ_RECV);
	addrconf_addr_eui48((unsigned char *)&ibdev->node_guid, ndev->dev_addr);
	init_attr(sdev);

	sdev->port_state = IB_PORT_DOWN;
	sroce_dev_mtu_update(sdev);
	return ib_device_set_netdev(ibdev, ndev, 1);
}

static void dev_uninit(struct sroce_dev *sdev)
{
	sroce_fault_fini(sdev);
	sroce_mcast_cleanup(sdev);
	mutex_destroy(&sdev->mcast_lock);
	ida_destroy(&sdev->pd_ida);
	xa_destroy(&sdev->keys);
	xa_destroy(&sdev->ahs);
	xa_destroy(&sdev->srqs);
	xa_destroy(&sdev->qps);
	netdev_put(sdev->ndev, &sdev->ndev_tracker);
}

/*
 * Make a registered device visible to the netdev notifier and the receive
 * path. Under rtnl_lock the netdev's registration state cannot change, so
 * either the notifier will see the device when the netdev goes away, or
 * the netdev is already going and we say so: the caller then unregisters.
 */
static int dev_publish(struct sroce_dev *sdev)
{
	int err = 0;

	rtnl_lock();
	mutex_lock(&sroce_devices_lock);
	if (sroce_dev_find_locked(sdev->ndev))
		err = -EEXIST;
	else if (sdev->ndev->reg_state != NETREG_REGISTERED)
		err = -ENODEV;
	else
		sroce_dev_list_add(sdev);
	mutex_unlock(&sroce_devices_lock);
	if (!err) {
		sroce_dev_mtu_update(sdev);
		sroce_dev_port_update(sdev);
	}
	rtnl_unlock();
	return err;
}

static int attach_socket(struct sroce_dev *sdev)
{
	int err;

	mutex_lock(&sroce_devices_lock);
	err = sroce_dev_find_locked(sdev->ndev) ? -EEXIST : sroce_socket_attach(sdev);
	mutex_unlock(&sroce_devices_lock);
	return err;
}

/**
 * sroce_verbs_add() - rdma_link_ops.newlink: create and register a device
 * @name: ib device name, starting with "sroce" (may hold a %d pattern)
 * @ndev: the Ethernet device to bind, referenced by the caller
 *
 * Return: 0 or a negative errno; the reason is logged.
 */
int sroce_verbs_add(const char *name, struct net_device *ndev)
{
	struct sroce_dev *sdev;
	int err;

	if (ndev->type != ARPHRD_ETHER) {
		netdev_err(ndev, "sroce: RoCE needs an Ethernet device\n");
		return -EINVAL;
	}
	/* libibverbs finds our provider by device name: there is no driver id. */
	if (strncmp(name, SROCE_NAME_PREFIX, strlen(SROCE_NAME_PREFIX))) {
		netdev_err(ndev, "sroce: device name %s must start with \"%s\"\n",
			   name, SROCE_NAME_PREFIX);
		return -EINVAL;
	}

	sdev = ib_alloc_device(sroce_dev, ibdev);
	if (!sdev)
		return -ENOMEM;
	/*
	 * Once the ops are set (first thing in dev_init()), every undo is
	 * dev_dealloc()'s: ib_dealloc_device() calls it before
	 * registration and ib_unregister_device() after. It copes with a
	 * device built only in part.
	 */
	err = dev_init(sdev, ndev);
	if (err)
		goto err_dealloc;
	err = attach_socket(sdev);
	if (err == -EEXIST)
		netdev_err(ndev, "sroce: a device is already bound to it\n");
	if (err)
		goto err_dealloc;
	err = ib_register_device(&sdev->ibdev, name, NULL);
	if (err) {
		netdev_err(ndev, "sroce: registering %s failed: %d\n", name, err);
		goto err_dealloc;
	}

	sroce_fault_publish(sdev);
	err = dev_publish(sdev);
	if (err) {
		netdev_err(ndev, "sroce: device lost a race: %d\n", err);
		ib_unregister_device(&sdev->ibdev);
	}
	return err;

err_dealloc:
	ib_dealloc_device(&sdev->ibdev);
	return err;
}

/*
 * ib_device_ops.dealloc_driver: the RDMA core has unregistered the device
 * and no verbs call can reach it. Undo sroce_verbs_add(); the core frees the
 * memory after an RCU grace period, which the receive path relies on.
 */
static void dev_dealloc(struct ib_device *ibdev)
{
	struct sroce_dev *sdev = to_sdev(ibdev);

	mutex_lock(&sroce_devices_lock);
	sroce_dev_list_del(sdev);
	sroce_socket_detach(sdev);
	mutex_unlock(&sroce_devices_lock);
	/* Receivers that found the device before it left the list are done. */
	synchronize_net();
	/* Every QP is gone, and took its part of the device's flight along. */
	WARN_ONCE(atomic_read(&sdev->req_flight) ||
		  atomic_read(&sdev->req_active),
		  "sroce: %s: %d packets of %d QPs left counted in flight\n",
		  dev_name(&ibdev->dev), atomic_read(&sdev->req_flight),
		  atomic_read(&sdev->req_active));
	dev_uninit(sdev);
}

/**
 * sroce_verbs_netdev_gone() - NETDEV_UNREGISTER: remove the netdev's device
 * @ndev: the netdev being unregistered
 *
 * The device stops using the namespace's socket now, because the
 * namespace may be dismantled next (socket.c), and is unregistered from a
 * workqueue: the RDMA core cannot unregister under rtnl_lock. The netdev
 * waits for our reference, which dev_dealloc() drops.
 */
void sroce_verbs_netdev_gone(struct net_device *ndev)
{
	struct sroce_dev *sdev;

	ASSERT_RTNL();
	mutex_lock(&sroce_devices_lock);
	sdev = sroce_dev_find_locked(ndev);
	if (sdev) {
		sroce_socket_detach(sdev);
		if (ib_device_try_get(&sdev->ibdev)) {
			ib_unregister_device_queued(&sdev->ibdev);
			ib_device_put(&sdev->ibdev);
		}
	}
	mutex_unlock(&sroce_devices_lock);
}

/**
 * sroce_verbs_remove_all() - unregister every device (module unload)
 *
 * New devices cannot appear: the link ops are already unregistered.
 * ib_unregister_device() waits for an unregistration already under way,
 * after which dev_dealloc() has taken the device off the list.
 */
void sroce_verbs_remove_all(void)
{
	struct sroce_dev *sdev;

	for (;;) {
		mutex_lock(&sroce_devices_lock);
		sdev = sroce_dev_next_locked(NULL);
		if (sdev)
			get_device(&sdev->ibdev.dev);
		mutex_unlock(&sroce_devices_lock);
		if (!sdev)
			break;
		ib_unregister_device(&sdev->ibdev);
		put_device(&sdev->ibdev.dev);
	}
}
