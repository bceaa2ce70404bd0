#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# 77-resize: resizing a full CQ or SRQ moves every entry, and moves only
# a small part of them with interrupts off.
#
#   netns a: sroce_a on veth_a 192.0.2.1    (no traffic: flushes fill the CQ)
#
# tests/lib-resize.py (its header says what it checks) fills a CQ of
# 262144 entries with the flush completions of 4 x 16384 receive WQEs,
# resizes it, and polls every completion back exactly once; then resizes
# an SRQ with 16384 WQEs waiting, which must all still wait (where the
# kernel shows SRQs). Meanwhile the tracepoint sroce_queue_resize
# (Documentation/tracing.md) says how many entries each resize moved
# without the object's lock and how many under it, with interrupts off
# (sroce_queue_replace()): every pending entry must have moved, and at
# most a tenth of them under the lock. A count, not a time: under TCG a
# vCPU can stall for milliseconds anywhere, so the time under the lock
# says nothing (a function_graph timing of it failed CI once at 5 of 31
# ms with nothing to copy under the lock). The kernel must not complain.
# About 6 s.
#
# What it would have caught:
#
# The whole move under the lock, as until 2026-11-28 (the ring of a CQ
# can be 16 MiB): on b41a22f, every entry moved under the lock (10.8 of
# 43.8 ms of the resize, the whole copy).
# runs-on: oldest
# timeout: 240
set -e
. "$(dirname "$0")/lib.sh"

tr=/sys/kernel/tracing
ev=
mounted=

cleanup() {
	set +e
	[[ -w $ev/enable ]] && echo 0 >"$ev/enable"
	[[ -n $mounted ]] && umount "$tr"
	topo_down
}
trap cleanup EXIT

topo_up
if [[ ! -e $tr/trace ]]; then
	mount -t tracefs none "$tr" || skip "no tracefs"
	mounted=1
fi
ev=$tr/events/sroce/sroce_queue_resize
[[ -w $ev/enable ]] || fail "no tracepoint sroce/sroce_queue_resize in $tr/events"
echo >"$tr/trace"
echo 1 >"$ev/enable"

out=$(python3 "$SROCE_TOP/tests/lib-resize.py" sroce_a 4 2>&1) || st=$?
echo 0 >"$ev/enable"
cp "$tr/trace" "$SROCE_STATE/resize-trace"
log "$out"
((${st:-0} == 0)) || fail "lib-resize.py: $(grep -m 1 MISMATCH <<<"$out" || tail -n 1 <<<"$out")"

# moved_under KIND WANT: the event of KIND's resize on sroce_a must say
# WANT entries moved, at most a tenth of them under the lock.
moved_under() {
	local line moved unlocked locked

	line=$(grep -m 1 "sroce_queue_resize: sroce_a $1 " "$SROCE_STATE/resize-trace") ||
		fail "no sroce_queue_resize event for the $1: $(grep -v '^#' "$SROCE_STATE/resize-trace" | head -n 3)"
	[[ $line =~ \ ([0-9]+)\ moved\ \(([0-9]+)\ unlocked,\ ([0-9]+)\ locked\) ]] ||
		fail "cannot read the $1's event: $line"
	moved=${BASH_REMATCH[1]} unlocked=${BASH_REMATCH[2]} locked=${BASH_REMATCH[3]}
	log "$1 resize: $moved entries moved, $unlocked without the lock, $locked under it"
	((moved == unlocked + locked)) || fail "the $1's event does not add up: $line"
	((moved == $2)) || fail "the $1's resize moved $moved entries, $2 were pending"
	((locked * 10 <= moved)) ||
		fail "the $1's resize moved $locked of its $moved entries under its lock, interrupts off"
}

want=$(sed -n 's/^resize cq \([0-9]*\)$/\1/p' <<<"$out")
[[ -n $want ]] || fail "lib-resize.py did not say what the CQ held: $out"
moved_under cq "$want"
want=$(sed -n 's/^resize srq \([0-9]*\) .*/\1/p' <<<"$out")
[[ -n $want ]] || fail "lib-resize.py did not say what the SRQ held: $out"
moved_under srq "$want"
kernel_log_clean || fail "the kernel complained"
