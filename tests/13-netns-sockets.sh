#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# 13-netns-sockets: each network namespace with a sroce device has its own
# RoCE v2 UDP socket (port 4791), and a device binds to one netdev.
#
#   +--------- netns a ----------+          +--------- netns b ----------+
#   |  sroce_a   veth_a          |==========|  veth_b   sroce_b          |
#   |  192.0.2.1, 2001:db8::1    |          |  192.0.2.2, 2001:db8::2    |
#   +----------------------------+          +----------------------------+
#   +------- initial netns ------+          +--------- netns rxp --------+
#   |  rxe0      veth_r          |==========|  veth_rp                   |
#   |  198.51.100.1              |          |  198.51.100.2              |
#   |  veth_i (sroce refused)    |          |                            |
#   +----------------------------+          +----------------------------+
#
#   - UDP datagrams from a to 192.0.2.2:4791 and [2001:db8::2]:4791 reach
#     sroce_b: its rx_packets and rx_bytes counters (hw_counters in sysfs)
#     rise by exactly what was sent, for each IP version, and as they are
#     no RoCE packets, rx_drop_header and rx_dropped by as many; sroce_a's
#     counters do not move; and the other way round;
#   - with sroce_a deleted, netns a has no UDP socket on 4791 left and
#     netns b still has its IPv4 and IPv6 ones;
#   - a second device on veth_b fails (EEXIST), one on lo (not Ethernet)
#     with EINVAL, one whose name is taken with ENFILE, each with its
#     reason in the kernel log;
#   - rdma_rxe, which only binds 4791 in the initial namespace, works there
#     next to sroce's namespaces; and a sroce device in the initial
#     namespace, where rxe holds the port, fails with EADDRINUSE and says
#     so in the kernel log;
#   - a failed `rdma link add` leaves no reference on the netdev behind:
#     veth_i and veth_b can be deleted at once afterwards (a leaked one
#     makes unregister_netdevice wait for it forever).
# runs-on: oldest
# timeout: 180
set -e
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/lib-rxe.sh"

trap rxe_cleanup EXIT

# send NS DST PAYLOAD COUNT: COUNT UDP datagrams to DST port 4791 from
# namespace NS (bash's /dev/udp, one socket per datagram).
send() {
	ip netns exec "$1" bash -c '
		for ((i = 0; i < $4; i++)); do
			printf %s "$3" >"/dev/udp/$2/4791" || exit 1
		done' _ "$@"
}

# expect_counter DEV NAME VALUE
expect_counter() {
	counter_is "$1" "$2" "$3" ||
		fail "$1: $2 is $(counter "$1" "$2"), expected $3"
}

# expect_rx SENDER_NS DST TO FROM: 3 datagrams of 13 bytes (too short for
# a BTH and an ICRC) from netns SENDER_NS to DST reach device TO, which
# counts and drops them, and none reach FROM.
expect_rx() {
	local ns=$1 dst=$2 to=$3 from=$4 payload=hello-sroce-1
	local p0 b0 h0 d0 q0

	p0=$(counter "$to" rx_packets)
	b0=$(counter "$to" rx_bytes)
	h0=$(counter "$to" rx_drop_header)
	d0=$(counter "$to" rx_dropped)
	q0=$(counter "$from" rx_packets)
	send "$ns" "$dst" "$payload" 3 || fail "cannot send to $dst"
	wait_for 10 counter_is "$to" rx_packets $((p0 + 3))
	expect_counter "$to" rx_bytes $((b0 + 3 * ${#payload}))
	expect_counter "$to" rx_drop_header $((h0 + 3))
	expect_counter "$to" rx_dropped $((d0 + 3))
	expect_counter "$from" rx_packets "$q0"
	log "3 datagrams from netns $ns to $dst:4791 counted by $to only"
}

listeners() {
	"$@" ss -Huln 'sport = :4791' | awk '{print $4}' | sort | tr '\n' ' '
}

process_gone() {
	! kill -0 "$1" 2>/dev/null
}

# netdev_deletes NS DEV: `ip link del DEV` in NS ("" for the initial one)
# returns; the kernel makes it wait while anyone holds a reference.
netdev_deletes() {
	local pid

	ip ${1:+-n "$1"} link del "$2" &
	pid=$!
	if ! (SROCE_REASON= wait_for 20 process_gone "$pid" 2>/dev/null); then
		fail "ip link del $2 hangs: a failed rdma link add leaked a reference" \
			"($(dmesg | grep -m1 "waiting for $2 to become free"))"
	fi
	wait "$pid" || fail "ip link del $2 failed"
}

# rdma link add that must fail: print its error message.
link_add_fails() {
	local out

	if out=$("$@" 2>&1); then
		fail "'$*' succeeded"
	fi
	echo "$out"
}

topo_up

expect_rx a 192.0.2.2 sroce_b sroce_a
expect_rx a 2001:db8::2 sroce_b sroce_a
expect_rx b 192.0.2.1 sroce_a sroce_b
expect_rx b 2001:db8::1 sroce_a sroce_b
# The counters are also what `rdma statistic` shows.
rdma statistic show link sroce_b/1 | grep -q "rx_packets $(counter sroce_b rx_packets) " ||
	fail "rdma statistic disagrees with sysfs: $(rdma statistic show link sroce_b/1)"

# One device per netdev; Ethernet only.
msg=$(link_add_fails nb rdma link add sroce_b2 type sroce netdev veth_b)
[[ $msg == *"File exists"* ]] || fail "second device on veth_b: '$msg', expected EEXIST"
[[ ! -e /sys/class/infiniband/sroce_b2 ]] || fail "sroce_b2 exists"
msg=$(link_add_fails rdma link add sroce_lo type sroce netdev lo)
[[ $msg == *"Invalid argument"* ]] || fail "device on lo: '$msg', expected EINVAL"
klog=$(dmesg | tail -n 20)
grep -q 'veth_b: sroce: a device is already bound to it' <<<"$klog" ||
	fail "the kernel log does not say why sroce_b2 failed"
grep -q 'lo: sroce: RoCE needs an Ethernet device' <<<"$klog" ||
	fail "the kernel log does not say why sroce_lo failed"
log "second device on veth_b: EEXIST; device on lo: EINVAL"

# The socket of a namespace goes with its last device.
[[ $(listeners na) == "0.0.0.0:4791 [::]:4791 " ]] ||
	fail "netns a listens on: $(listeners na)"
rdma link del sroce_a
[[ -z $(listeners na) ]] || fail "netns a still listens on: $(listeners na)"
[[ $(listeners nb) == "0.0.0.0:4791 [::]:4791 " ]] ||
	fail "netns b listens on: $(listeners nb)"
log "sroce_a deleted: netns a has no socket on 4791, netns b keeps its own"

# A name that is taken (the RDMA core refuses it: ENFILE).
ip link add veth_i type veth peer name veth_ip
ip link set veth_i up
msg=$(link_add_fails rdma link add sroce_b type sroce netdev veth_i)
[[ $msg == *"Too many open files in system"* ]] ||
	fail "device named sroce_b on veth_i: '$msg', expected ENFILE"
dmesg | tail -n 20 | grep -q 'veth_i: sroce: registering sroce_b failed: -23' ||
	fail "the kernel log does not say why the second sroce_b failed"
log "a second device named sroce_b: ENFILE"

# rxe in the initial namespace, next to sroce_b in netns b.
rxe_up
rdma link show rxe0/1 | grep -q 'state ACTIVE' || fail "rxe0 is not ACTIVE"
rdma link show sroce_b/1 | grep -q 'state ACTIVE' || fail "sroce_b is not ACTIVE"
[[ $(listeners) == *"0.0.0.0:4791"* ]] || fail "rxe holds no socket: $(listeners)"
log "rxe0 in the initial netns works next to sroce_b in netns b"

# ... where it holds 4791, so sroce cannot open it there.
msg=$(link_add_fails rdma link add sroce_init type sroce netdev veth_i)
[[ $msg == *"Address already in use"* ]] ||
	fail "sroce device in the initial netns: '$msg', expected EADDRINUSE"
[[ ! -e /sys/class/infiniband/sroce_init ]] || fail "sroce_init exists"
dmesg | tail -n 20 | grep -q 'veth_i: sroce: cannot open UDP port 4791 (in use in this namespace' ||
	fail "the kernel log does not say that port 4791 is in use"
log "sroce device in the initial netns while rxe holds 4791: EADDRINUSE"

# The netdevs of the failed devices go at once.
netdev_deletes "" veth_i
netdev_deletes b veth_b
log "veth_i and veth_b deleted: the failed devices held no reference"

kernel_log_clean || fail "the kernel complained"
