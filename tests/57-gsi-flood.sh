#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# 57-gsi-flood: datagrams too long for QP 1's receive buffers cannot take
# connection setup away from a device.
#
#   netns a: sroce_a on veth_a 192.0.2.1  <==  netns b: veth_b 192.0.2.2,
#            rdma_cm server (ucmatose)           raw frames from lib-peer.py,
#                                                 then sroce_b's rdma_cm client
#
# lib.sh's topology. The kernel's MAD layer posts receive buffers of a
# GRH area and one MAD (296 bytes) on QP 1, and takes any error
# completion there for a flush: it never posts that buffer again. So a
# UD datagram longer than the buffer but within the path MTU must be
# dropped and counted, using up no buffer (IBA responder class D; see
# Documentation/responder-errors.md), or anyone reaching UDP port 4791
# empties QP 1. From namespace b, lib-peer.py sends 600 SEND ONLY
# datagrams of 512 bytes to QP 1 of sroce_a (more than the 512 buffers
# the MAD layer posts), over IPv4 and then over IPv6; after each flood:
#
#   - ucmatose connects from sroce_b to sroce_a (2 connections, 50 SENDs
#     of 1000 bytes each way): the rdma_cm's MADs still find buffers;
#   - sroce_a's rx_drop_length counter grew by exactly what was sent;
#   - the kernel did not complain.
#
# What it would have caught:
#
# QP 1 emptied of receive buffers for good. Run against the code before
# its fix, the test failed; and again later, with that fix undone in the
# current code (an oversize UC or UD message completing its receive WQE
# with loc_len_err), its rdma_cm connection timed out.
# timeout: 300
set -e
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/lib-cm.sh"

trap topo_down EXIT

tmp=$(mktemp -d)
count=600

# rx_reached N: sroce_a has received N packets in all.
rx_reached() {
	(($(counter sroce_a rx_packets) >= $1))
}

topo_up
dmac=$(na cat /sys/class/net/veth_a/address)

# flood SRC DST: the datagrams, then the counter's growth once all came.
flood() {
	local src=$1 dst=$2 before after rx

	before=$(counter sroce_a rx_drop_length 2>/dev/null || echo none)
	rx=$(counter sroce_a rx_packets)
	nb python3 "$SROCE_TOP/tests/lib-peer.py" gsi-flood --ifname veth_b \
		--dmac "$dmac" --src "$src" --dst "$dst" --count "$count" \
		--size 512 >"$tmp/flood" 2>&1 ||
		{ cat "$tmp/flood"; fail "lib-peer.py gsi-flood $dst failed"; }
	log "$dst: $count datagrams of 512 bytes sent to QP 1"
	wait_for 10 rx_reached "$((rx + count))"
	cm_ucmatose "$tmp" "$dst"
	log "ucmatose to $dst after the flood: return status 0 on both sides"
	[[ $before != none ]] || fail "sroce_a has no rx_drop_length counter"
	after=$(counter sroce_a rx_drop_length)
	((after - before == count)) ||
		fail "$dst: rx_drop_length grew by $((after - before)), not $count"
	log "$dst: all $count dropped and counted (rx_drop_length)"
}

flood 192.0.2.2 192.0.2.1
flood 2001:db8::2 2001:db8::1

kernel_log_clean || fail "the kernel complained"
rm -rf "$tmp"
