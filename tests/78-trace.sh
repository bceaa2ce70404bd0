#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# 78-trace: the data path's tracepoints tell the story of one QP
# (drivers/sroce/trace.h, Documentation/tracing.md).
#
#   netns a: sroce_a on veth_a 192.0.2.1  <==>  netns b: sroce_b on veth_b 192.0.2.2
#            ibv_rc_pingpong client (requester)    ibv_rc_pingpong server
#
# ibv_rc_pingpong --chk sends 4 KiB messages (4 packets of 1 KiB at veth
# MTU 1500), retry_cnt 7; tail_probe=0 so that a loss is found by a NAK or
# by the transport timer alone. tx_drop_next (fault injection) drops
# exactly the next N packets sroce_a sends.
#
#   1. Off: the eleven sroce events are in tracefs and none is enabled; a
#      run that times out leaves no sroce line in the trace buffer.
#   2. A forced timeout: sroce_a loses its whole first message. With the
#      events on, the client QP's story holds, in this order: RESET ->
#      INIT -> RTR -> RTS, sroce_timeout, and sroce_retry of kind
#      "timeout" with 6 retries left.
#   3. A sequence NAK: sroce_a loses the first packet of its first
#      message. sroce_b's QP tells sroce_nak_sent with syndrome 0x60 (PSN
#      sequence error, IBA 9.7.5.2.3) at some PSN P; the client QP then
#      tells sroce_nak_rcvd at P with the same syndrome and sroce_retry of
#      kind "nak" at P, and no sroce_timeout.
# Every run ends well with its data checked; the kernel must not complain.
#
# What it would have caught:
#
# A tracepoint missing or renamed, one that fires while disabled, an
# event in the wrong place of the story (a retry before its cause), a NAK
# traced at a PSN other than the one resent.
# runs-on: oldest
# timeout: 300
set -euo pipefail
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/lib-traffic.sh"

dbg=/sys/kernel/debug/sroce
tr=/sys/kernel/tracing
probe=/sys/module/sroce/parameters/tail_probe
events=(sroce_qp_state sroce_nak_sent sroce_nak_rcvd sroce_retry sroce_give_up
	sroce_timeout sroce_tail_probe sroce_rnr_wait sroce_resp_error sroce_flight_hold
	sroce_queue_resize)
tmp=$(mktemp -d)
spid=

cleanup() {
	set +e
	[[ -w $tr/events/sroce/enable ]] && echo 0 >"$tr/events/sroce/enable"
	[[ -w $probe ]] && echo 1 >"$probe"
	perftest_down
}
trap cleanup EXIT

debugfs_mount
mountpoint -q "$tr" || mount -t tracefs nodev "$tr" || fail "cannot mount tracefs"
topo_up
topo_neigh_pin
ga=$(gid_index sroce_a 192.0.2.1)
gb=$(gid_index sroce_b 192.0.2.2)
echo 0 >"$probe"

# run DROP: one pingpong run with sroce_a's next DROP packets lost.
run() {
	nb timeout "$(scaled 60)" ibv_rc_pingpong -d sroce_b -g "$gb" -m 1024 -s 4096 \
		-n 5 --chk >"$tmp/s" 2>&1 &
	spid=$!
	wait_server 10 "$spid" ns_listening b 18515 ||
		fail "ibv_rc_pingpong server: $(cat "$tmp/s")"
	echo "$1" >"$dbg/sroce_a/tx_drop_next"
	na timeout "$(scaled 60)" ibv_rc_pingpong -d sroce_a -g "$ga" -m 1024 -s 4096 \
		-n 5 --chk 192.0.2.2 >"$tmp/c" 2>&1 ||
		fail "ibv_rc_pingpong client, $1 lost: $(cat "$tmp/c")"
	wait "$spid" || fail "ibv_rc_pingpong server, $1 lost: $(cat "$tmp/s")"
	spid=
	[[ $(cat "$dbg/sroce_a/tx_drop_next") == 0 ]] || fail "tx_drop_next not used up"
}

trace_clear() {
	echo >"$tr/trace"
}

# story DEV QPN: the QP's events in order, one a line: "event: details".
story() {
	sed -nE "s/.* (sroce_[a-z_]+): $1 qp $2 (.*)/\1: \2/p" "$tr/trace"
}

# The QP numbers of DEV that told EVENT.
qps_of() {
	sed -nE "s/.* $2: $1 qp ([0-9]+) .*/\1/p" "$tr/trace" | sort -u
}

# in_order FILE PATTERN...: the lines of FILE match the extended regular
# expressions in this order (other lines may come between).
in_order() {
	local file=$1 line re

	shift
	re=$1
	while IFS= read -r line; do
		[[ $line =~ $re ]] || continue
		shift
		(($#)) || return 0
		re=$1
	done <"$file"
	log "not found in order: $re"
	return 1
}

# 1. Off.
for e in "${events[@]}"; do
	[[ -f $tr/events/sroce/$e/enable ]] || fail "no tracepoint sroce:$e"
	[[ $(cat "$tr/events/sroce/$e/enable") == 0 ]] || fail "sroce:$e enabled at load"
done
[[ $(ls "$tr/events/sroce" | grep -c '^sroce_') == "${#events[@]}" ]] ||
	fail "tracepoints: $(ls "$tr/events/sroce" | tr '\n' ' '), not the ${#events[@]} expected"
t0=$(counter sroce_a timeouts)
trace_clear
run 4
(($(counter sroce_a timeouts) > t0)) || fail "off: no timeout: the run proves nothing"
! grep -q ' sroce_' "$tr/trace" || fail "events off, yet: $(grep -m 3 ' sroce_' "$tr/trace")"
log "off: a timeout, no sroce line in the trace"

# 2. A forced timeout.
echo 1 >"$tr/events/sroce/enable"
trace_clear
run 4
echo 0 >"$tr/events/sroce/enable"
qp=$(qps_of sroce_a sroce_timeout | head -n 1)
[[ -n $qp ]] || fail "timeout: no sroce_timeout of sroce_a: $(grep -c ' sroce_' "$tr/trace") sroce lines"
story sroce_a "$qp" >"$tmp/timeout"
log "timeout: the story of sroce_a's QP $qp:"
sed 's/^/  /' "$tmp/timeout" | head -n 20
in_order "$tmp/timeout" '^sroce_qp_state: RESET -> INIT$' '^sroce_qp_state: INIT -> RTR$' \
	'^sroce_qp_state: RTR -> RTS$' '^sroce_timeout: unacked_psn [0-9]+ backoff 0$' \
	'^sroce_retry: psn [0-9]+ timeout retries_left 6$' ||
	fail "timeout: the story of QP $qp is not RESET..RTS, timeout, retry (above)"

# 3. A sequence NAK.
echo 1 >"$tr/events/sroce/enable"
trace_clear
run 1
echo 0 >"$tr/events/sroce/enable"
sent=$(grep -m 1 -E ' sroce_nak_sent: sroce_b qp [0-9]+ psn [0-9]+ syndrome 0x60$' "$tr/trace") ||
	fail "nak: sroce_b sent no sequence NAK: $(grep -c ' sroce_' "$tr/trace") sroce lines"
psn=$(sed -E 's/.* psn ([0-9]+) .*/\1/' <<<"$sent")
qp=$(qps_of sroce_a sroce_nak_rcvd | head -n 1)
[[ -n $qp ]] || fail "nak: sroce_a's QP received no NAK"
story sroce_a "$qp" >"$tmp/nak"
log "nak: sroce_b sent a sequence NAK at PSN $psn; the story of sroce_a's QP $qp:"
sed 's/^/  /' "$tmp/nak" | head -n 20
in_order "$tmp/nak" '^sroce_qp_state: RTR -> RTS$' "^sroce_nak_rcvd: psn $psn syndrome 0x60\$" \
	"^sroce_retry: psn $psn nak retries_left 6\$" ||
	fail "nak: the story of QP $qp is not RTS, NAK received at $psn, retry at $psn (above)"
! grep -q '^sroce_timeout' "$tmp/nak" || fail "nak: the QP timed out too: the NAK did not recover the loss"

kernel_log_clean || fail "the kernel complained"
