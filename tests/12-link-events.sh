#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# 12-link-events: a sroce port follows its netdev.
#
# With lib.sh's topology (sroce_a on veth_a in netns a, sroce_b on veth_b
# in netns b):
#
#   - veth_a down: both ports DOWN (veth_b loses its carrier), in `rdma
#     link show` and ibv_devinfo; veth_a up: both ACTIVE again. A process
#     waiting on sroce_a's asynchronous events (userspace/tools/
#     sroce-events) sees IBV_EVENT_PORT_ERR, then IBV_EVENT_PORT_ACTIVE,
#     for port 1, and no other event but IBV_EVENT_GID_CHANGE (the RDMA
#     core's GID cache drops and restores the addresses' GIDs);
#   - the netdev MTU sets the active MTU: the largest IB MTU that fits
#     with 84 bytes of RoCE v2 headers (drivers/sroce/device.c), so 9000
#     gives 4096, 1108 gives 1024, 1107 gives 512, 1500 gives 1024;
#   - deleting veth_a (the pair goes) removes sroce_a and sroce_b;
#     deleting netns b, with it veth_b (and the pair) removes both again;
#   - and the kernel logs no complaint.
# runs-on: oldest
# timeout: 120
set -e
. "$(dirname "$0")/lib.sh"

events_pid=
cleanup() {
	[[ -n $events_pid ]] && kill "$events_pid" 2>/dev/null
	topo_down
}
trap cleanup EXIT

tmp=$(mktemp -d)

port_state() {
	rdma link show "$1/1" | grep -q "state $2 "
}

devinfo_field() {
	ibv_devinfo -d "$1" | sed -n "s/^[[:space:]]*$2:[[:space:]]*//p"
}

expect_port() {
	local dev=$1 state=$2 got

	wait_for 10 port_state "$dev" "$state"
	got=$(devinfo_field "$dev" state)
	[[ $got == "PORT_$state "* ]] ||
		fail "$dev: rdma link says $state, ibv_devinfo says '$got'"
}

expect_mtu() {
	local mtu=$1 want=$2 got dev

	na ip link set veth_a mtu "$mtu"
	nb ip link set veth_b mtu "$mtu"
	for dev in sroce_a sroce_b; do
		got=$(devinfo_field "$dev" active_mtu)
		[[ $got == "$want "* ]] ||
			fail "$dev: netdev MTU $mtu: active_mtu '$got', expected $want"
	done
	log "netdev MTU $mtu: active_mtu $want"
}

device_gone() {
	[[ ! -e /sys/class/infiniband/$1 ]]
}

# Port state and events.
topo_up
sroce-events -d sroce_a -n 100 -t 60 >"$tmp/events" 2>&1 &
events_pid=$!
wait_for 10 grep -qx ready "$tmp/events"

na ip link set veth_a down
expect_port sroce_a DOWN
expect_port sroce_b DOWN
log "veth_a down: sroce_a and sroce_b DOWN"
na ip link set veth_a up
expect_port sroce_a ACTIVE
expect_port sroce_b ACTIVE
log "veth_a up: sroce_a and sroce_b ACTIVE"

wait_for 10 grep -qx 'PORT_ACTIVE port 1' "$tmp/events"
kill "$events_pid"
wait "$events_pid" 2>/dev/null || true
events_pid=
events=$(grep -v '^ready$' "$tmp/events" | paste -sd, -)
[[ $(grep '^PORT_' "$tmp/events" | paste -sd, -) == 'PORT_ERR port 1,PORT_ACTIVE port 1' ]] ||
	fail "sroce_a's events: '$events', expected PORT_ERR then PORT_ACTIVE"
! grep -Ev '^(ready|PORT_ERR port 1|PORT_ACTIVE port 1|GID_CHANGE port 1)$' "$tmp/events" ||
	fail "sroce_a's events: '$events': an unexpected one"
log "sroce_a's events: $events"

# Active MTU.
expect_mtu 9000 4096
expect_mtu 1108 1024
expect_mtu 1107 512
expect_mtu 1500 1024

# The devices go with their netdevs.
na ip link del veth_a
wait_for 10 device_gone sroce_a
wait_for 10 device_gone sroce_b
log "veth_a deleted: sroce_a and sroce_b gone"
topo_down

topo_up
ip netns del b
wait_for 10 device_gone sroce_b
wait_for 10 device_gone sroce_a
log "netns b deleted: sroce_b and sroce_a gone"
topo_down

kernel_log_clean || fail "the kernel complained"
rm -rf "$tmp"
