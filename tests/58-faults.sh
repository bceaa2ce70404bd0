#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# 58-faults: the transport recovers from every fault the devices can be
# told to inject, nothing leaks, and a QP can be destroyed while its
# engines race (drivers/sroce/fault.c, Documentation/testing.md).
#
#   netns a: sroce_a on veth_a 192.0.2.1  <==>  netns b: sroce_b on veth_b 192.0.2.2
#            sroce-traffic --server                sroce-traffic --client
#   /sys/kernel/debug/sroce/sroce_{a,b}/: tx_{drop,dup,reorder,corrupt},
#            rx_{drop,dup,reorder,corrupt}, alloc_fail (parts per million)
#
#   1. Every fault at once on both devices (1% to 2% each): RC traffic
#      with all seven opcodes must still be byte-exact, UC and UD exact
#      but for what was lost (--allow-loss); every kind of fault was
#      injected on each device (its "hits"), both requesters resent, and
#      damaged packets were dropped by the ICRC check (rx_drop_icrc).
#   1b. Only packet buffer allocations failing (5%): UC and UD traffic
#      must be exact, without --allow-loss: a buffer that cannot be had is
#      tried again, never taken for sent (an empty message was, once).
#      RC too (its payloads of 1 KiB and more attached without a copy,
#      whose trailers fail as often), and an ACK that could not be
#      allocated is counted in tx_dropped (it was dropped silently
#      before).
#      Both processes run on CPU 0, so that the veth cannot reorder.
#   2. The same RC traffic with every engine run in its tasklet
#      (engines_inline N), the path that the receive side takes when it
#      loses the race for an engine.
#   3. sroce-errors destroy-race: the responder's QP destroyed while its
#      receive engine lingers in its error path (error_delay_us 3000,
#      engines_inline N), 40 times. The error path wakes the send engine
#      that destroy has stopped: debugfs's refused_scheds must grow (the
#      old code scheduled it anyway, on a QP about to be freed, which
#      KASAN did not catch in 300 tries: the tasklet ran before the free).
#   4. Faults off: clean RC traffic passes; the devices hold no more
#      objects than before; sroce unloads.
# The kernel must not complain.
#
# What it would have caught:
#
# Lost recovery paths; an engine rescheduled after destroy (with KASAN,
# or by refused_scheds where KASAN sees nothing: part 3; the debug kernel
# once caught a stray tasklet of a destroyed QP there); an ACK dropped
# without a count (part 1b).
# timeout: 600
set -e
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/lib-traffic.sh"

dbg=/sys/kernel/debug/sroce
tmp=$(mktemp -d)
kinds="tx_drop tx_dup tx_reorder tx_corrupt rx_drop rx_dup rx_reorder rx_corrupt alloc_fail"

knobs_off() {
	local d k

	[[ -d $dbg ]] || return 0
	echo Y >"$dbg/engines_inline" 2>/dev/null || true
	echo 0 >"$dbg/error_delay_us" 2>/dev/null || true
	for d in sroce_a sroce_b; do
		for k in $kinds; do
			echo 0 >"$dbg/$d/$k" 2>/dev/null || true
		done
	done
}

cleanup() {
	knobs_off
	topo_down
}
trap cleanup EXIT

debugfs_mount
topo_up
[[ -d $dbg/sroce_a ]] || fail "no $dbg/sroce_a"
before_a=$(rdma resource show sroce_a)
before_b=$(rdma resource show sroce_b)

# set_rate KIND PPM: on both devices.
set_rate() {
	echo "$2" >"$dbg/sroce_a/$1"
	echo "$2" >"$dbg/sroce_b/$1"
}

log "1. every fault, 1-2% each, on both devices"
for k in $kinds; do
	set_rate "$k" 10000
done
set_rate tx_drop 20000
set_rate rx_reorder 20000
retrans_a=$(counter sroce_a retransmits)
retrans_b=$(counter sroce_b retransmits)
icrc=$(($(counter sroce_a rx_drop_icrc) + $(counter sroce_b rx_drop_icrc)))
traffic "$tmp" --transport rc --qps 4 --ops 3000
traffic "$tmp" --transport uc --qps 2 --ops 2000 --allow-loss
traffic "$tmp" --transport ud --qps 2 --ops 2000 --allow-loss
for d in sroce_a sroce_b; do
	line=
	for k in $kinds; do
		n=$(fault_hits "$d" "$k")
		line+=" $k=$n"
		((n > 0)) || fail "$d: no $k fault was injected"
	done
	log "  $d hits:$line"
done
(($(counter sroce_a retransmits) > retrans_a && $(counter sroce_b retransmits) > retrans_b)) ||
	fail "RC passed without resending on both sides"
(($(counter sroce_a rx_drop_icrc) + $(counter sroce_b rx_drop_icrc) > icrc)) ||
	fail "no damaged packet was dropped by the ICRC check"

log "1b. only packet buffers failing (5%): nothing may be lost, UC and UD included"
knobs_off
set_rate alloc_fail 50000
# On one CPU: packets a QP sends from two CPUs may overtake each other in
# the veth's per-CPU queues, which UC takes for loss (datapath.md).
TRAFFIC_WRAP="taskset -c 0" traffic "$tmp" --transport uc --qps 2 --ops 2000
TRAFFIC_WRAP="taskset -c 0" traffic "$tmp" --transport ud --qps 2 --ops 2000
# A responder's ACK that cannot be had is not sent again but counted.
dropped=$(($(counter sroce_a tx_dropped) + $(counter sroce_b tx_dropped)))
TRAFFIC_WRAP="taskset -c 0" traffic "$tmp" --transport rc --qps 2 --ops 2000
dropped=$(($(counter sroce_a tx_dropped) + $(counter sroce_b tx_dropped) - dropped))
((dropped > 0)) || fail "RC with 5% of buffers failing: no ACK counted in tx_dropped"
log "  RC: $dropped ACKs not allocated, counted in tx_dropped"
for k in $kinds; do
	set_rate "$k" 10000
done

log "2. the same, every engine in its tasklet"
echo N >"$dbg/engines_inline"
traffic "$tmp" --transport rc --qps 4 --ops 2000
knobs_off

log "3. QPs destroyed while their receive engine is in its error path"
echo N >"$dbg/engines_inline"
echo 3000 >"$dbg/error_delay_us"
status=0
refused=$(<"$dbg/refused_scheds")
sroce-errors -d sroce_a -g "$(gid_index sroce_a 192.0.2.1)" -D sroce_b \
	-G "$(gid_index sroce_b 192.0.2.2)" -c destroy-race --iterations 40 \
	--race-ms 6 >"$tmp/race" 2>&1 || status=$?
sed 's/^/  /' "$tmp/race"
((status == 0)) || fail "sroce-errors destroy-race: exit status $status"
refused=$(($(<"$dbg/refused_scheds") - refused))
((refused > 0)) ||
	fail "destroy-race: no request to run a stopped engine was refused (debugfs refused_scheds)"
log "destroy-race: $refused requests to run a dying QP's stopped engine refused"
knobs_off

log "4. faults off"
traffic_unchanged "$tmp" "$before_a" "$before_b"
