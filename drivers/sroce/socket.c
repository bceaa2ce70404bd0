// SPDX-License-Identifier: GPL-2.0 OR Linux-OpenIB
/*
 * DOC: UDP sockets
 *
 * RoCEv2 runs over UDP port 4791 (IBA Annex A17.2.1). Each network
 * namespace that holds the netdev of at least one sroce device has one
 * IPv4 and one IPv6 UDP tunnel socket bound to that port; the first device
 * in a namespace opens them and the last one closes them. Because the
 * sockets are per namespace, two devices in two namespaces of one host
 * reach each other over a veth pair, as two hosts would.
 *
 * A device detaches from its namespace when its netdev is unregistered,
 * before the RDMA core has finished removing the device, or when the
 * namespace is dismantled: kernel sockets hold no reference on their
 * namespace, so none may outlive it. Attaching and detaching happen under
 * sroce_devices_lock.
 */
#include <linux/in6.h>
#include <net/net_namespace.h>
#include <net/netns/generic.h>
#include <net/udp_tunnel.h>
#include <rdma/ib_verbs.h>

#include "compat.h"
#include "device.h"
#include "recv.h"
#include "socket.h"

/**
 * struct sroce_net - sroce's state in one network namespace
 * @users: devices attached to the sockets
 * @sk4: the IPv4 socket, or NULL
 * @sk6: the IPv6 socket, or NULL when the namespace has no IPv6
 *
 * All fields are written under sroce_devices_lock. The transmit path reads
 * the sockets under RCU: they are unpublished before they are released,
 * and udp_tunnel_sock_release() waits for a grace period.
 */
struct sroce_net {
	unsigned int users;
	struct socket __rcu *sk4;
	struct socket __rcu *sk6;
};

static unsigned int sroce_net_id __read_mostly;

/*
 * encap_rcv of both sockets. The UDP layer has checked the UDP checksum,
 * if any; skb->data points at the UDP header. Return 0: the skb is ours.
 */
static int sroce_socket_recv(struct sock *sk, struct sk_buff *skb)
{
	struct sroce_dev *sdev;

	sdev = sroce_dev_find_rcu(skb->dev);
	if (!sdev) {
		kfree_skb(skb);
		return 0;
	}
	sroce_recv_skb(sdev, skb);
	return 0;
}

static struct socket *open_socket(struct net *net, bool ipv6)
{
	struct udp_tunnel_sock_cfg tnl_cfg = {
		.encap_type = 1,
		.encap_rcv = sroce_socket_recv,
	};
	struct udp_port_cfg cfg = {
		.family = ipv6 ? AF_INET6 : AF_INET,
		.ipv6_v6only = ipv6,
		.local_udp_port = htons(ROCE_V2_UDP_DPORT),
	};
	struct socket *sock;
	int err;

	err = udp_sock_create(net, &cfg, &sock);
	if (err)
		return ERR_PTR(err);
	sroce_udp_tunnel_setup(net, sock, &tnl_cfg);
	return sock;
}

static void close_socket(struct socket __rcu **slot)
{
	struct socket *sock;

	sock = rcu_dereference_protected(*slot,
					 lockdep_is_held(&sroce_devices_lock));
	if (!sock)
		return;
	RCU_INIT_POINTER(*slot, NULL);
	sroce_udp_tunnel_release(sock);
}

static void close_sockets(struct sroce_net *sn)
{
	close_socket(&sn->sk6);
	close_socket(&sn->sk4);
}

static int open_sockets(struct net *net, struct sroce_net *sn)
{
	struct socket *sock;

	sock = open_socket(net, false);
	if (IS_ERR(sock))
		return PTR_ERR(sock);
	rcu_assign_pointer(sn->sk4, sock);

	sock = open_socket(net, true);
	if (PTR_ERR(sock) == -EAFNOSUPPORT)
		return 0;	/* no IPv6 here: RoCE over IPv4 only */
	if (IS_ERR(sock)) {
		close_sockets(sn);
		return PTR_ERR(sock);
	}
	rcu_assign_pointer(sn->sk6, sock);
	return 0;
}

/**
 * sroce_socket_attach() - start using the UDP sockets of the device's namespace
 * @sdev: the device; sroce_devices_lock held
 *
 * Return: 0, or a negative errno when the sockets cannot be opened
 * (-EADDRINUSE: something else, such as rdma_rxe, holds UDP port 4791 in
 * this namespace).
 */
int sroce_socket_attach(struct sroce_dev *sdev)
{
	struct sroce_net *sn = net_generic(sdev->net, sroce_net_id);
	int err;

	lockdep_assert_held(&sroce_devices_lock);
	if (!sn->users) {
		err = open_sockets(sdev->net, sn);
		if (err) {
			netdev_err(sdev->ndev,
				   "sroce: cannot open UDP port %u%s: %d\n",
				   ROCE_V2_UDP_DPORT,
				   err == -EADDRINUSE ?
				   " (in use in this namespace, by rdma_rxe?)" : "",
				   err);
			return err;
		}
	}
	sn->users++;
	rcu_assign_pointer(sdev->sn, sn);
	return 0;
}

/**
 * sroce_socket_detach() - stop using the namespace's sockets
 * @sdev: the device; sroce_devices_lock held. Detaching twice is harmless.
 */
void sroce_socket_detach(struct sroce_dev *sdev)
{
	struct sroce_net *sn;

	sn = rcu_dereference_protected(sdev->sn,
				       lockdep_is_held(&sroce_devices_lock));
	if (!sn)
		return;
	RCU_INIT_POINTER(sdev->sn, NULL);
	if (!--sn->users)
		close_sockets(sn);
}

/**
 * sroce_socket_sk() - the socket a device sends from
 * @sdev: the device
 * @ipv6: the IPv6 socket, else the IPv4 one
 *
 * Context: rcu_read_lock() or bottom halves disabled; the socket stays
 * valid until then.
 * Return: the socket, or NULL when the device is detached from its
 * namespace or the namespace has no such socket.
 */
struct sock *sroce_socket_sk(struct sroce_dev *sdev, bool ipv6)
{
	struct sroce_net *sn = rcu_dereference(sdev->sn);
	struct socket *sock;

	if (!sn)
		return NULL;
	sock = ipv6 ? rcu_dereference(sn->sk6) : rcu_dereference(sn->sk4);
	return sock ? sock->sk : NULL;
}

/**
 * sroce_socket_detach_net() - stop every device of a namespace using its
 * socket
 * @net: the namespace being dismantled
 */
void sroce_socket_detach_net(struct net *net)
{
	struct sroce_dev *sdev = NULL;

	mutex_lock(&sroce_devices_lock);
	while ((sdev = sroce_dev_next_locked(sdev)))
		if (sdev->net == net)
			sroce_socket_detach(sdev);
	mutex_unlock(&sroce_devices_lock);
}

/*
 * Every netdev of the namespace was unregistered before this runs (netdevs
 * go in the device exit phase, before subsystems), which detached their
 * devices; detach again in case a device outlived its netdev's
 * registration, so the sockets never outlive the namespace.
 */
static void __net_exit sroce_net_exit(struct net *net)
{
	struct sroce_net *sn = net_generic(net, sroce_net_id);

	sroce_socket_detach_net(net);
	WARN_ON_ONCE(sn->users || rcu_access_pointer(sn->sk4) ||
		     rcu_access_pointer(sn->sk6));
}

static struct pernet_operations sroce_net_ops = {
	.exit = sroce_net_exit,
	.id = &sroce_net_id,
	.size = sizeof(struct sroce_net),
};

/**
 * sroce_socket_init() - register the per-namespace state
 *
 * Return: 0 or a negative errno.
 */
int sroce_socket_init(void)
{
	return register_pernet_subsys(&sroce_net_ops);
}

/**
 * sroce_socket_exit() - unregister the per-namespace state
 */
void sroce_socket_exit(void)
{
	unregister_pernet_subsys(&sroce_net_ops);
}
