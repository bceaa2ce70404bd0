# SPDX-License-Identifier: GPL-2.0
#
# tests/lib-rxe.sh: an rdma_rxe device to compare sroce with. Source it
# after lib.sh.
#
#   +------- initial netns ------+          +--------- netns rxp --------+
#   |                            |          |                            |
#   |  rxe0 (rdma link)          |          |                            |
#   |     |                      |          |                            |
#   |  veth_r                    |   veth   |  veth_rp                   |
#   |  198.51.100.1/24           |==========|  198.51.100.2/24           |
#   +----------------------------+          +----------------------------+
#
# rdma_rxe opens its UDP socket only in the initial namespace (see
# PLATFORM.md), so its device lives there. Its peer address, which the
# address vectors of connected QPs and AHs resolve, is in a namespace of
# its own: an address of the initial namespace would route over lo.
#
#   rxe_up      load rdma_rxe, build the above, wait until rxe0 is usable
#   rxe_down    tear it down, whatever state it is in
#
# libibverbs finds rxe0's provider (librxe) in the system's provider
# directory; run rxe's users with RDMAV_DRIVERS unset ("rxe_run CMD...").

rxe_up() {
	modprobe rdma_rxe || fail "cannot load rdma_rxe"
	ip netns add rxp || fail "cannot add netns rxp"
	ip link add veth_r type veth peer name veth_rp netns rxp ||
		fail "cannot add the rxe veth pair"
	ip addr add 198.51.100.1/24 dev veth_r
	ip -n rxp addr add 198.51.100.2/24 dev veth_rp
	ip -n rxp link set veth_rp up
	ip link set veth_r up
	rdma link add rxe0 type rxe netdev veth_r ||
		fail "rdma link add rxe0 failed"
	wait_for 10 _port_active rxe0
	wait_for 10 _has_gids rxe0 198.51.100.1
}

_rxe_gone() {
	[[ ! -e /sys/class/infiniband/rxe0 && ! -e /run/netns/rxp ]]
}

rxe_down() {
	rdma link del rxe0 2>/dev/null || true
	ip link del veth_r 2>/dev/null || true
	ip netns del rxp 2>/dev/null || true
	wait_for 10 _rxe_gone
}

# rxe_run CMD...: run CMD with the system's providers only.
rxe_run() {
	env -u RDMAV_DRIVERS "$@"
}
