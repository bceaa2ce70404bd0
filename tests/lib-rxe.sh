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
#   rxe_peer_up load sroce too, rxe_up, and put sroce_r on veth_rp: rxe0
#               and sroce_r are each other's peers (interop tests)
#   rxe_cleanup rxe_down and topo_down, for a trap
#
# Since 7.x rdma_rxe opens its sockets in every namespace (rxe_ns.c); where
# it does (rxe_has_netns), rxe_to_netns moves rxe0 and veth_r into a
# namespace of their own, rxn, so that neither side is in the initial one:
#
#   +--------- netns rxn --------+          +--------- netns rxp --------+
#   |  rxe0 on veth_r            |==========|  veth_rp                   |
#   +----------------------------+          +----------------------------+
#
# Both ends of the veth steer what they receive by RPS (rxe_in_order):
# without it a veth hands a packet to the stack on the CPU that sent it,
# so two packets of one flow sent from two CPUs in turn (two runs of a
# driver's engine) can arrive swapped, and rdma_rxe's completer takes a
# stale ACK that arrives inside a READ response for the response's end:
# it WARNs and fails the QP (rxe_comp.c, COMPST_ERROR with a successful
# WQE; Documentation/clients.md). RPS hashes a flow to one CPU's queue,
# in the order it was sent.
#
# libibverbs finds rxe0's provider (librxe) in the system's provider
# directory; run rxe's users with RDMAV_DRIVERS unset ("rxe_run CMD...",
# which also enters rxn once rxe0 is there).
rxe_netns=

# rxe_in_order DEV [NETNS]: DEV (in NETNS) hands what it receives to
# the stack on one CPU per flow (RPS over every CPU), in order. A kernel
# without RPS (CONFIG_RPS) is logged and left as it is.
rxe_in_order() {
	local mask file=/sys/class/net/$1/queues/rx-0/rps_cpus
	local -a ns=()

	[[ -z ${2:-} ]] || ns=(ip netns exec "$2")
	if ! "${ns[@]}" test -e "$file"; then
		log "no RPS in this kernel: $1 may hand rdma_rxe a flow out of order"
		return 0
	fi
	mask=$(printf '%x' $(((1 << $(nproc)) - 1)))
	"${ns[@]}" sh -c "echo $mask >$file" || fail "cannot set RPS on $1"
}

rxe_up() {
	modprobe rdma_rxe || fail "cannot load rdma_rxe"
	ip netns add rxp || fail "cannot add netns rxp"
	ip link add veth_r type veth peer name veth_rp netns rxp ||
		fail "cannot add the rxe veth pair"
	ip addr add 198.51.100.1/24 dev veth_r
	ip -n rxp addr add 198.51.100.2/24 dev veth_rp
	ip -n rxp link set veth_rp up
	ip link set veth_r up
	rxe_in_order veth_r
	rxe_in_order veth_rp rxp
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
	[[ -z $rxe_netns ]] || ip -n "$rxe_netns" link del veth_r 2>/dev/null || true
	ip netns del rxp 2>/dev/null || true
	[[ -z $rxe_netns ]] || ip netns del "$rxe_netns" 2>/dev/null || true
	wait_for 10 _rxe_gone
	[[ -z $rxe_netns ]] || wait_for 10 _rxe_netns_gone
	rxe_netns=
}

_rxe_netns_gone() {
	[[ ! -e /run/netns/$rxe_netns ]]
}

# rxe_has_netns: rdma_rxe (loaded) has sockets of its own in each network
# namespace.
rxe_has_netns() {
	grep -qw rxe_ns_pernet_sk4 /proc/kallsyms
}

# rxe_to_netns: rxe0 again, on veth_r moved into netns rxn.
rxe_to_netns() {
	rdma link del rxe0 || fail "rdma link del rxe0 failed"
	ip netns add rxn || fail "cannot add netns rxn"
	rxe_netns=rxn
	ip link set veth_r netns rxn || fail "cannot move veth_r into rxn"
	ip -n rxn addr add 198.51.100.1/24 dev veth_r
	ip -n rxn link set veth_r up
	ip -n rxn link set lo up
	rxe_in_order veth_r rxn
	ip netns exec rxn rdma link add rxe0 type rxe netdev veth_r ||
		fail "rdma link add rxe0 in netns rxn failed"
	wait_for 10 _port_active rxe0
	wait_for 10 _has_gids rxe0 198.51.100.1
}

# rxe_run CMD...: run CMD with the system's providers only, where rxe0's
# netdev is.
rxe_run() {
	if [[ -n $rxe_netns ]]; then
		ip netns exec "$rxe_netns" env -u RDMAV_DRIVERS "$@"
	else
		env -u RDMAV_DRIVERS "$@"
	fi
}

rxe_peer_up() {
	sroce_load
	rxe_up
	ip netns exec rxp rdma link add sroce_r type sroce netdev veth_rp ||
		fail "rdma link add sroce_r failed"
	wait_for 10 _port_active sroce_r
	wait_for 10 _has_gids sroce_r 198.51.100.2
}

rxe_cleanup() {
	rxe_down
	topo_down
}
