#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# 55-sqd-modify: RC QPs moved to another path (IPv4 to IPv6 and back)
# and given new timeout, retry and RDMA READ/atomic limits in SQD, with
# traffic in flight.
#
#   netns a: sroce_a on veth_a 192.0.2.1, 2001:db8::1
#        <==> netns b: sroce_b on veth_b 192.0.2.2, 2001:db8::2
#
# tests/lib-sqd.py (pyverbs; tests/lib-rcpair.py connects the QPs)
# connects one RC QP on each device over IPv4; each round posts RDMA
# WRITEs and a SEND with immediate on both, moves both QPs to SQD at
# once, then SQD to SQD onto the other IP version with new attributes
# (query_qp must report them), then back to RTS: every work request must
# complete successfully and every byte land, and an RDMA READ over the
# new path must bring the peer's bytes. The engines must have stopped
# while the path changed (drivers/sroce/qp_state.c); packets built for
# the old path meanwhile are recovered by resending. Then the UDP
# traffic over IPv6 on veth_b must have grown. The kernel must not
# complain.
#
# What it would have caught:
#
# An address vector changed under running engines: the old route and UDP
# port kept. Run against the code before its fix, the test failed.
# timeout: 300
set -e
. "$(dirname "$0")/lib.sh"

trap topo_down EXIT

udp6_in() {
	nb awk '$1 == "Udp6InDatagrams" { print $2 }' /proc/net/snmp6
}

topo_up
topo_neigh_pin
gids_a=$(gid_index sroce_a 192.0.2.1),$(gid_index sroce_a 2001:db8::1)
gids_b=$(gid_index sroce_b 192.0.2.2),$(gid_index sroce_b 2001:db8::2)
v6_before=$(udp6_in)
out=$(mktemp)
status=0
python3 "$SROCE_TOP/tests/lib-sqd.py" --dev-a sroce_a --gid-a "$gids_a" \
	--dev-b sroce_b --gid-b "$gids_b" --rounds 12 >"$out" 2>&1 || status=$?
sed 's/^/  /' "$out"
summary=$(tail -n 1 "$out")
[[ $summary =~ ^([0-9]+)\ rounds,\ 0\ failures$ ]] && ((status == 0)) ||
	fail "lib-sqd.py: $summary (status $status)"
(($(udp6_in) > v6_before + 100)) ||
	fail "hardly any RoCE traffic crossed over IPv6 ($v6_before, then $(udp6_in))"
kernel_log_clean || fail "the kernel complained"
rm -f "$out"
