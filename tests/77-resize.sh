#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# 77-resize: resizing a full CQ or SRQ moves every entry, and keeps
# interrupts off only for a small part of the work.
#
#   netns a: sroce_a on veth_a 192.0.2.1    (no traffic: flushes fill the CQ)
#
# tests/lib-resize.py (its header says what it checks) fills a CQ of
# 262144 entries with the flush completions of 4 x 16384 receive WQEs,
# resizes it, and polls every completion back exactly once; then resizes
# an SRQ with 16384 WQEs waiting, which must all still wait (where the
# kernel shows SRQs). Meanwhile
# the function graph tracer times sroce_cq_resize() and
# sroce_queue_replace(), the part of a resize that runs under the
# object's lock with interrupts off: it must take at most a tenth of the
# CQ's resize. The kernel must not complain. About 6 s.
#
# What it would have caught:
#
# The whole move under the lock, as until 2026-11-28 (the ring of a CQ
# can be 16 MiB): on b41a22f, 10.8 of 43.8 ms under the lock (the whole
# copy).
# runs-on: oldest
# timeout: 240
set -e
. "$(dirname "$0")/lib.sh"

tr=/sys/kernel/tracing
mounted=

cleanup() {
	set +e
	if [[ -w $tr/current_tracer ]]; then
		echo nop >"$tr/current_tracer"
		echo >"$tr/set_ftrace_filter"
		echo 0 >"$tr/options/funcgraph-tail"
	fi
	[[ -n $mounted ]] && umount "$tr"
	topo_down
}
trap cleanup EXIT

topo_up
if [[ ! -e $tr/current_tracer ]]; then
	mount -t tracefs none "$tr" || skip "no tracefs"
	mounted=1
fi
grep -qw function_graph "$tr/available_tracers" || skip "no function_graph tracer"
echo 'sroce_cq_resize sroce_queue_replace' >"$tr/set_ftrace_filter" ||
	fail "sroce_cq_resize or sroce_queue_replace cannot be traced"
echo 1 >"$tr/options/funcgraph-tail"
echo function_graph >"$tr/current_tracer"
echo >"$tr/trace"

out=$(python3 "$SROCE_TOP/tests/lib-resize.py" sroce_a 4 2>&1) || st=$?
echo 0 >"$tr/tracing_on"
cp "$tr/trace" "$SROCE_STATE/resize-trace"
echo 1 >"$tr/tracing_on"
echo nop >"$tr/current_tracer"
log "$out"
((${st:-0} == 0)) || fail "lib-resize.py: $(grep -m 1 MISMATCH <<<"$out" || tail -n 1 <<<"$out")"

# Durations (us) of the calls: the resize's closing brace, the first
# replace's own line (the CQ's; it calls nothing traced).
read -r resize replace < <(awk '
	/sroce_cq_resize/ && /}/ { for (i = 1; i <= NF; i++) if ($(i + 1) == "us") r = $i }
	/sroce_queue_replace/ && !seen { seen = 1; for (i = 1; i <= NF; i++) if ($(i + 1) == "us") q = $i }
	END { print r + 0, q + 0 }' "$SROCE_STATE/resize-trace")
log "CQ resize: $resize us, of which $replace us under its lock"
awk -v r="$resize" 'BEGIN { exit !(r > 0) }' || fail "no resize in the trace: $(grep -v '^#' "$SROCE_STATE/resize-trace" | head -n 5)"
awk -v r="$resize" -v q="$replace" 'BEGIN { exit !(q * 10 <= r) }' ||
	fail "the CQ's resize spent $replace of its $resize us under its lock, interrupts off"
kernel_log_clean || fail "the kernel complained"
