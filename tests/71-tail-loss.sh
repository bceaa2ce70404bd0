#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# 71-tail-loss: packets lost with nothing after them are found by the
# tail-loss probe, not by the transport timer (drivers/sroce/retry.c,
# Documentation/datapath.md "Send engine").
#
#   netns a: sroce_a on veth_a 192.0.2.1  <==>  netns b: sroce_b on veth_b 192.0.2.2
#            ibv_rc_pingpong client (requester)    ibv_rc_pingpong server
#
# ibv_rc_pingpong --chk sends 4 KiB messages (4 packets of 1 KiB, veth MTU
# 1500) one at a time and checks every byte of each. tx_drop_next (fault
# injection, debugfs) drops exactly the next N packets a device sends:
#
#   single: sroce_a loses the first message of 1 KiB (one packet).
#   tail:   sroce_a loses the whole first message (4 packets). No packet
#           follows, so the responder cannot tell the requester by a
#           sequence NAK.
#   nak:    sroce_a loses the first packet of the first message; the
#           responder's sequence NAK for it (sroce_b's first packet) is
#           lost too. The responder now drops everything out of sequence
#           without a word until the lost packet comes (IBA 9.7.5.1.1).
#
# Each case runs twice: with tail_probe=1 (the module's default), the
# message must arrive with no transport timeout and at least one probe;
# with tail_probe=0, the control, the same loss must cost at least one
# timeout (proving that the case is one only the timer or a probe can
# find). Every run must end well with its data checked, the injected
# drops must be exactly those asked for, and the kernel must not complain.
#
#   read:   ib_read_bw, sroce_a loses its first READ request: no probe
#           while a READ is outstanding (a repeated READ request would be
#           executed again), so the transport timer finds it, with
#           tail_probe=1.
#
# What it would have caught:
#
# A requester that waits a whole local ACK timeout for a lost tail (67 ms
# at perftest's default, a second at rdma_cm's); a probe of the last
# packet only, which the nak case defeats (the responder stays silent):
# the first version of the probe failed it.
# timeout: 300
set -euo pipefail
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/lib-traffic.sh"

dbg=/sys/kernel/debug/sroce
param=/sys/module/sroce/parameters/tail_probe
tmp=$(mktemp -d)
spid=

cleanup() {
	set +e
	[[ -w $param ]] && echo 1 >"$param"
	perftest_down
}
trap cleanup EXIT

debugfs_mount
topo_up
[[ -f $dbg/sroce_a/tx_drop_next ]] || fail "no $dbg/sroce_a/tx_drop_next"
[[ -f $param ]] || fail "no $param"
topo_neigh_pin
ga=$(gid_index sroce_a 192.0.2.1)
gb=$(gid_index sroce_b 192.0.2.2)

# run CASE PROBE: one pingpong run with CASE's loss; checks as above.
run() {
	local case=$1 probe=$2 t0 p0 ha0 hb0 t p ha hb drop_a drop_b size=4096

	case $case in
	single) drop_a=1 drop_b=0 size=1024 ;;
	tail) drop_a=4 drop_b=0 ;;
	nak) drop_a=1 drop_b=1 ;;
	esac
	echo "$probe" >"$param"
	nb timeout "$(scaled 60)" ibv_rc_pingpong -d sroce_b -g "$gb" -m 1024 -s "$size" \
		-n 5 --chk >"$tmp/s" 2>&1 &
	spid=$!
	wait_server 10 "$spid" ns_listening b 18515 ||
		fail "ibv_rc_pingpong server: $(cat "$tmp/s")"
	t0=$(counter sroce_a timeouts)
	p0=$(counter sroce_a tail_probes)
	ha0=$(fault_hits sroce_a tx_drop)
	hb0=$(fault_hits sroce_b tx_drop)
	echo "$drop_a" >"$dbg/sroce_a/tx_drop_next"
	echo "$drop_b" >"$dbg/sroce_b/tx_drop_next"
	na timeout "$(scaled 60)" ibv_rc_pingpong -d sroce_a -g "$ga" -m 1024 -s "$size" \
		-n 5 --chk 192.0.2.2 >"$tmp/c" 2>&1 ||
		fail "$case, tail_probe=$probe: ibv_rc_pingpong client: $(cat "$tmp/c")"
	wait "$spid" || fail "$case, tail_probe=$probe: ibv_rc_pingpong server: $(cat "$tmp/s")"
	spid=
	t=$(($(counter sroce_a timeouts) - t0))
	p=$(($(counter sroce_a tail_probes) - p0))
	ha=$(($(fault_hits sroce_a tx_drop) - ha0))
	hb=$(($(fault_hits sroce_b tx_drop) - hb0))
	log "$case, tail_probe=$probe: $ha + $hb packets dropped, $t timeouts, $p probe packets"
	((ha == drop_a && hb == drop_b)) ||
		fail "$case, tail_probe=$probe: dropped $ha and $hb packets, not $drop_a and $drop_b"
	[[ $(cat "$dbg/sroce_a/tx_drop_next") == 0 ]] ||
		fail "$case: tx_drop_next of sroce_a not used up"
	if ((probe)); then
		((t == 0)) || fail "$case: $t transport timeouts with tail-loss probes on"
		((p >= 1)) || fail "$case: no tail-loss probe was sent"
	else
		((t >= 1)) || fail "$case: no timeout without probes: the loss was not a tail loss, the test proves nothing"
		((p == 0)) || fail "$case: $p probe packets with tail_probe=0"
	fi
}

for case in single tail nak; do
	run "$case" 1
	run "$case" 0
done

# READ: its request lost, no probe; the timer resends it.
echo 1 >"$param"
nb timeout "$(scaled 60)" ib_read_bw -d sroce_b -x "$gb" -s 1024 -n 5 -F \
	>"$tmp/s" 2>&1 &
spid=$!
wait_server 10 "$spid" ns_listening b 18515 || fail "ib_read_bw server: $(cat "$tmp/s")"
t0=$(counter sroce_a timeouts)
p0=$(counter sroce_a tail_probes)
ha0=$(fault_hits sroce_a tx_drop)
echo 1 >"$dbg/sroce_a/tx_drop_next"
na timeout "$(scaled 60)" ib_read_bw -d sroce_a -x "$ga" -s 1024 -n 5 -F 192.0.2.2 \
	>"$tmp/c" 2>&1 || fail "read: ib_read_bw client: $(cat "$tmp/c")"
wait "$spid" || fail "read: ib_read_bw server: $(cat "$tmp/s")"
spid=
t=$(($(counter sroce_a timeouts) - t0))
p=$(($(counter sroce_a tail_probes) - p0))
ha=$(($(fault_hits sroce_a tx_drop) - ha0))
log "read, tail_probe=1: $ha packet dropped, $t timeouts, $p probe packets"
((ha == 1)) || fail "read: dropped $ha packets, not 1"
((t >= 1)) || fail "read: no timeout: the lost READ request was found otherwise"
((p == 0)) || fail "read: $p probe packets while a READ was outstanding"

kernel_log_clean || fail "the kernel complained"
