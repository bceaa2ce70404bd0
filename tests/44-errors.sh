#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# 44-errors: RC errors end with the right completions on both sides, and
# a peer that disappears ends a transfer in bounded time.
#
#   netns a: sroce_a on veth_a 192.0.2.1  <==>  netns b: sroce_b on veth_b 192.0.2.2
#            requester QPs                         responder QPs
#                  \___ one sroce-errors process ___/
#
# userspace/tools/sroce-errors opens both devices and connects a fresh RC
# QP pair for each case (requester on sroce_a, responder on sroce_b):
#
#   ok               WRITE, READ, SEND succeed, bytes checked (the pair works)
#   bad-rkey         WRITE with an unknown rkey
#   read-bounds      READ 32 bytes past the end of the responder's MR
#   no-remote-write  WRITE to an MR without IBV_ACCESS_REMOTE_WRITE
#       requester: IBV_WC_REM_ACCESS_ERR, the next WR IBV_WC_WR_FLUSH_ERR;
#       both QPs in ERR; the responder's QP gets IBV_EVENT_QP_ACCESS_ERR;
#       the responder's two receives flushed (and the target untouched); a
#       WR and a receive posted in ERR flushed too
#   send-too-long    SEND of 256 B into a 64-byte receive: requester
#       IBV_WC_REM_INV_REQ_ERR, responder receive IBV_WC_LOC_LEN_ERR, next
#       receive flushed, both QPs in ERR, IBV_EVENT_QP_REQ_ERR for the
#       responder's QP
#   rnr-late         SEND with no receive posted (rnr_retry 7, min_rnr_timer
#       1.28 ms); nothing completes for 200 ms; the receive is posted: both
#       complete successfully, the bytes arrive, rnr_naks_sent (sroce_b) and
#       rnr_naks_rcvd (sroce_a) rose, both QPs still in RTS
#   rnr-exhausted    the same with rnr_retry 0: IBV_WC_RNR_RETRY_EXC_ERR,
#       the next WR flushed, requester in ERR, responder still in RTS
#   rnr-refill       rnr_retry 1, min_rnr_timer 491 ms: four SENDs in a
#       row each meet one RNR NAK and then their receive and succeed (the
#       budget comes back with progress); one that never finds a receive
#       ends in IBV_WC_RNR_RETRY_EXC_ERR; both QPs reset and reconnected
#       then succeed twice more the same way
#
# and then, in a process of its own, peer-gone: a stream of 16 KiB WRITEs
# (QP timeout 14, i.e. 67 ms, retry_cnt 7) runs until this script deletes
# sroce_b with `rdma link del`. The requester must complete the oldest WR
# with IBV_WC_RETRY_EXC_ERR and flush the others within 30 s of the
# deletion (the local ACK timeout doubles on each retry: 67 ms x 255 =
# 17 s), and sroce_a's timeouts counter must have risen by retry_cnt + 1
# (or more: a stall of the VM can cause one during the stream).
#
# The statuses expected are those of IBA table 47, on both sides.
# sroce-errors prints one line per check; it fails on any. The kernel
# must not complain.
#
# What it would have caught:
#
# rnr-refill: an RNR retry budget that did not come back with progress,
# or did not start afresh on a QP reset and connected again. Run against
# the code before that fix, the case failed.
# timeout: 180
set -e
. "$(dirname "$0")/lib.sh"

trap topo_down EXIT

tmp=$(mktemp -d)

# summary FILE: the tool's last line, if it is its summary.
summary() {
	tail -n 1 "$1" | grep -E '^sroce-errors: [0-9]+ checks, [0-9]+ failures$'
}

topo_up
gid_a=$(gid_index sroce_a 192.0.2.1)
gid_b=$(gid_index sroce_b 192.0.2.2)

# The cases of one process first; a failure there does not keep
# peer-gone from running: the report names all that failed.
failed=()
status=0
sroce-errors -d sroce_a -g "$gid_a" -D sroce_b -G "$gid_b" >"$tmp/out" 2>&1 ||
	status=$?
cat "$tmp/out"
if ! line=$(summary "$tmp/out"); then
	failed+=("sroce-errors did not finish (status $status)")
elif ((status)) || [[ $line != *" 0 failures" ]]; then
	failed+=("sroce-errors: $(grep -c ' FAIL$' "$tmp/out") checks failed:
		$(grep ' FAIL$' "$tmp/out" | awk '{ print $1 }' | uniq -c |
			awk '{ print $2 " (" $1 ")" }' | paste -sd, -)")
else
	log "$line"
fi

log "peer-gone: deleting sroce_b during a stream of WRITEs"
timeouts=$(counter sroce_a timeouts)
sroce-errors -d sroce_a -g "$gid_a" -D sroce_b -G "$gid_b" -c peer-gone \
	--deadline 60 >"$tmp/gone" 2>&1 &
pid=$!
if ! wait_server 30 "$pid" grep -qx transferring "$tmp/gone"; then
	cat "$tmp/gone"
	fail "peer-gone: sroce-errors exited before its stream ran"
fi
t0=${EPOCHREALTIME/./}
rdma link del sroce_b || fail "rdma link del sroce_b failed"
deleted=$(((${EPOCHREALTIME/./} - t0) / 1000))
status=0
wait "$pid" || status=$?
elapsed=$(((${EPOCHREALTIME/./} - t0) / 1000))
cat "$tmp/gone"
timeouts=$(($(counter sroce_a timeouts) - timeouts))
if ! line=$(summary "$tmp/gone"); then
	failed+=("peer-gone: sroce-errors did not finish (status $status)")
elif ((status)) || [[ $line != *" 0 failures" ]]; then
	failed+=("peer-gone: $(grep ' FAIL$' "$tmp/gone" | head -n 1 |
		awk '{ $1 = ""; print }')")
elif ((elapsed > 30000)); then
	failed+=("peer-gone: the requester took ${elapsed} ms after the deletion to fail")
elif ((timeouts < 8)); then
	# At least: a stall of the VM during the stream may add one.
	failed+=("peer-gone: sroce_a counted $timeouts timeouts, expected retry_cnt + 1 = 8")
else
	log "peer-gone: rdma link del took $deleted ms; the requester was done" \
		"$elapsed ms after it began, with $timeouts timeouts"
fi

((${#failed[@]} == 0)) || fail "$(printf '%s; ' "${failed[@]}" | tr -s '\t\n' '  ')"
kernel_log_clean || fail "the kernel complained"
rm -rf "$tmp"
