#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# 56-resp-errors: the responder's answer to every kind of bad request, on
# RC, UC, UD and XRC, with and without an SRQ: the table of
# Documentation/responder-errors.md, row by row.
#
#   +------- netns a -------+          +----------- netns b -----------+
#   | sroce_a on veth_a     |   veth   | no RoCE device: a fake peer   |
#   | 192.0.2.1             |==========| (tests/lib-peer.py) sends     |
#   | 2001:db8::1           |          | crafted packets from veth_b   |
#   | QPs made by pyverbs   |          | and listens on UDP port 4791  |
#   +-----------------------+          +-------------------------------+
#
# lib.sh's topology without sroce_b: tests/lib-resperr.py (its table; the
# QP under test in lib-target.py, the other cases in lib-resperr-cases.py)
# makes, for each row, fresh verbs objects on sroce_a whose path points at
# the fake peer, has the peer send the row's packets, and checks the
# answer (NAK code, RNR NAK, ACK or none), the receive completions, the
# QP's state, whether a receive WQE was used up (a follow-up SEND tells),
# the drop counters, and that memory outside what a request may touch is
# unchanged (a canary page after the MR, and the MR itself when the
# request must fail). Among the rows: atomics and ATOMIC WRITE through
# zero-based type 1 and type 2 windows that an aligned packet address maps
# to a misaligned one (they must be refused: the old code wrote across a
# page boundary), atomics through an MR registered at another iova,
# atomics and ATOMIC WRITE into the canary page, a WRITE FIRST whose RETH
# says 0 bytes, packets from a spoofed source or of another transport, UD
# datagrams longer than their receive buffer, READ, atomics and RNR on an
# XRC target.
#
# Every row (73 of them) runs over IPv4; a selection again over IPv6.
# Then, with sroce_a's responders held (the resp_hold knob in debugfs),
# the peer sends a 64 MiB READ and floods 3000 SENDs: at most "backlog"
# (the module parameter, set to 1024 for it) may wait, the rest must be
# dropped and counted; released, the responder must answer the READ
# first, and the QP is destroyed in mid-response, its queue full.
# Last the requester's side: the peer answers a QP's SENDs with a NAK
# (invalid request, sequence error) or RNR NAK older than what it had
# acknowledged, which must change nothing (no completion, nothing
# counted, the SEND completes once ACKed); a control NAK at the SEND's
# own PSN must fail it; and a NAK at a READ's own PSN after two of its
# three responses (how rdma_rxe fails a READ part-way) must fail the
# READ at once. And an ACK the responder held (the ack_hold knob keeps
# it) must go out when the user ends the QP: destroyed, moved to the
# error state or reset (the old code dropped it, and a peer whose last
# SEND it was failed with a retry error). And a READ whose MR is
# deregistered while its 64 MiB response goes out fails part-way (remote
# access NAK): the WRITE the peer sent right behind it must not land
# (IBA 9.9.3; the old responder executed it, on the QP already in ERR).
# Last, a READ of 2 GiB at a 256-byte MTU, 2^23 PSNs, more than a
# requester may have outstanding (IBA 9.7.1): it must fail at once with
# IBV_WC_LOC_LEN_ERR, its request never sent.
# The table in
# Documentation/responder-errors.md must be the one the script prints.
# The kernel must not complain.
#
# What it would have caught:
#
# Atomics through a window written across a page boundary (the canary
# page shows the bytes that land outside), WRITE FIRST with a 0-byte RETH,
# packets from spoofed sources, unbounded request queues: 19 rows answered
# against the IBA's classes, which failed when the test was run against
# the code before their fixes. Again later, on both Debian kernels, with
# two fixes undone in the current code (alignment checked on the packet's
# address only, the 8 bytes done through one page's mapping; an oversize
# UC or UD message completing its receive WQE with loc_len_err), 8 rows
# failed: the six zero-based window atomics, answered with an atomic ACK
# or a READ response and, for FETCH_ADD and ATOMIC WRITE, bytes changed at
# buffer offset 0xffc; uc-send-too-long and ud-too-long.
#
# On the requester's side: a stale NAK that failed the next SEND, or
# resent and waited for nothing. And an ACK held at the end of an inline
# run and lost when the user destroyed the QP before the tasklet ran
# (found by 40-pingpong on the debug kernel: ibv_rc_pingpong's server
# failed its last SEND with a retry error).
# timeout: 400
set -e
. "$(dirname "$0")/lib.sh"

trap topo_down EXIT

doc=$SROCE_TOP/Documentation/responder-errors.md
table=$(python3 "$SROCE_TOP/tests/lib-resperr.py" --markdown)
sed -n '/^| row |/,/^$/p' "$doc" | sed '/^$/d' >"$SROCE_STATE/doc-table" ||
	fail "cannot read $doc"
[[ $(<"$SROCE_STATE/doc-table") == "$table" ]] ||
	fail "the table in Documentation/responder-errors.md is not lib-resperr.py's (--markdown)"

topo_up
# The peer takes namespace b's UDP port 4791.
rdma link del sroce_b || fail "cannot delete sroce_b"
dmac=$(na cat /sys/class/net/veth_a/address)

# resperr_mode MODE NAME: lib-resperr.py MODE (--backlog, --stale-nak,
# --held-ack, --read-abort, --psn-window) on sroce_a over IPv4, its output shown and kept in
# $SROCE_STATE/NAME; returns its status.
resperr_mode() {
	local status=0

	python3 "$SROCE_TOP/tests/lib-resperr.py" "$1" --dev sroce_a \
		--gid-index "$(gid_index sroce_a 192.0.2.1)" --ip 192.0.2.1 \
		--peer-ip 192.0.2.2 --netns b --ifname veth_b --dmac "$dmac" \
		>"$SROCE_STATE/$2" 2>&1 || status=$?
	sed 's/^/  /' "$SROCE_STATE/$2"
	return "$status"
}

run() {
	local ip=$1 peer=$2 out status=0

	shift 2
	out=$SROCE_STATE/resperr-$ip
	python3 "$SROCE_TOP/tests/lib-resperr.py" --dev sroce_a \
		--gid-index "$(gid_index sroce_a "$ip")" --ip "$ip" \
		--peer-ip "$peer" --netns b --ifname veth_b --dmac "$dmac" \
		"$@" >"$out" 2>&1 || status=$?
	sed "s/^/  [$ip] /" "$out"
	summary=$(tail -n 1 "$out")
	[[ $summary =~ ^([0-9]+)\ rows,\ ([0-9]+)\ mismatches$ ]] ||
		fail "lib-resperr.py ($ip) did not finish (status $status)"
	((status == 0 && BASH_REMATCH[2] == 0)) ||
		fail "$ip: $(grep -c MISMATCH "$out") rows went otherwise:" \
			"$(grep MISMATCH "$out" | cut -d' ' -f1 | paste -sd, -)"
	log "$ip: $summary"
}

run 192.0.2.1 192.0.2.2
run 2001:db8::1 2001:db8::2 --only rc-send --only rc-send-too-long \
	--only rc-spoofed-source --only uc-send-too-long --only ud-send \
	--only ud-too-long --only xrc-send --only mw-t2-zb-fetch-add \
	--only mr-iova-fetch-add \
	--only mw-t1-zb-aligned
# A flood while the responder is held: the QP's request queue is bounded
# and the excess counted (rx_drop_backlog).
debugfs_mount
backlog=/sys/module/sroce/parameters/backlog
read -r default_backlog <"$backlog"
echo 1024 >"$backlog"
status=0
resperr_mode --backlog backlog || status=$?
echo "$default_backlog" >"$backlog"
((status == 0)) || fail "the request queue of a busy QP: $(tail -n 1 "$SROCE_STATE/backlog")"
# Stale NAKs and RNR NAKs at a requester (IBA 9.7.5.2.2).
resperr_mode --stale-nak stale ||
	fail "stale answers at a requester: $(tail -n 1 "$SROCE_STATE/stale")"
# An ACK held at the end of a responder's run goes out when the QP ends.
resperr_mode --held-ack held ||
	fail "ACKs held when a QP ends: $(tail -n 1 "$SROCE_STATE/held")"
# A READ that fails part-way: the request behind it does not execute.
resperr_mode --read-abort abort ||
	fail "a request behind a READ that failed: $(tail -n 1 "$SROCE_STATE/abort")"
# A READ of more PSNs than the window holds (IBA 9.7.1) fails locally.
resperr_mode --psn-window window ||
	fail "a READ of 2^23 PSNs: $(tail -n 1 "$SROCE_STATE/window")"
kernel_log_clean || fail "the kernel complained"
