#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# 51-mckey: UD multicast through the RDMA CM, with librdmacm's mckey.
#
#   netns a: sroce_a on veth_a 192.0.2.1  <==>  netns b: sroce_b on veth_b 192.0.2.2
#            mckey -s (sender)                      mckey (receiver)
#
# The receiver (line-buffered by stdbuf) joins 239.255.1.1 (the RDMA CM attaches its UD QP to the
# group, sroce accepts the group's Ethernet address on veth_b) and waits
# for 100 datagrams of 1024 bytes; once it has joined, the sender joins
# and sends them to the group (QP 0xFFFFFF). Both must print "test
# complete" and "return status 0", the receiver "data transfers
# complete". While it is joined, veth_b accepts the group's Ethernet
# address; afterwards no group is left attached (the receiver's QP
# detached when it left): veth_b no longer lists the group's Ethernet
# address. (IPv6 groups cannot be tested this way: the RDMA CM refuses
# to join them on RoCE v2 ports, ENOTSUPP, whatever the device.) The
# kernel must not complain.
# timeout: 120
set -e
. "$(dirname "$0")/lib.sh"

trap topo_down EXIT

tmp=$(mktemp -d)

joined() {
	grep -q "^mckey: joined" "$tmp/r"
}

# mckey GROUP MAC SENDER_ADDR RECEIVER_ADDR: MAC is the group's Ethernet
# address, which veth_b must accept while the receiver is joined.
mckey() {
	local group=$1 mac=$2 saddr=$3 raddr=$4 pid status=0 t0=$SECONDS

	nb timeout "$(scaled 60)" stdbuf -oL mckey -m "$group" -b "$raddr" -C 100 -S 1024 \
		>"$tmp/r" 2>&1 &
	pid=$!
	if ! wait_server 20 "$pid" joined; then
		sed 's/^/  receiver: /' "$tmp/r"
		fail "mckey $group: the receiver did not join"
	fi
	nb ip maddr show dev veth_b | grep -q "link  $mac" ||
		fail "mckey $group: joined, but veth_b does not accept $mac"
	na timeout "$(scaled 60)" stdbuf -oL mckey -m "$group" -b "$saddr" -s -C 100 -S 1024 \
		>"$tmp/s" 2>&1 || status=$?
	wait "$pid" || status=$?
	if ((status)) ||
		! grep -qx "data transfers complete" "$tmp/r" ||
		! grep -qx "return status 0" "$tmp/r" ||
		! grep -qx "return status 0" "$tmp/s"; then
		sed 's/^/  sender: /' "$tmp/s"
		sed 's/^/  receiver: /' "$tmp/r"
		fail "mckey $group: exit status $status, or an incomplete transfer"
	fi
	log "mckey $group: 100 datagrams received ($((SECONDS - t0)) s)"
}

topo_up
# 239.255.1.1 maps to 01:00:5e:7f:01:01.
mckey 239.255.1.1 01:00:5e:7f:01:01 192.0.2.1 192.0.2.2
if nb ip maddr show dev veth_b | grep -q "link  01:00:5e:7f:01:01"; then
	fail "veth_b still accepts 01:00:5e:7f:01:01 after the receiver left"
fi

kernel_log_clean || fail "the kernel complained"
rm -rf "$tmp"
