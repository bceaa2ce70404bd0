#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# 61-fuzz-rings: a process that writes garbage into its own mmapped rings
# hurts nothing but its own QP.
#
#   netns a: sroce_a on veth_a 192.0.2.1  <==>  netns b: sroce_b on veth_b 192.0.2.2
#     fuzzed QP F (own CQ, SRQ)                    peer QP P
#     control QP                                   control QP
#            \______ one sroce-ringfuzz process ______/
#     sroce-traffic --server          <==>         sroce-traffic --client
#            (a second control, in a loop, while the fuzzer runs)
#
# userspace/tools/sroce-ringfuzz (its header says exactly what it does)
# runs its named cases, then SROCE_RINGFUZZ_ITERATIONS (default 100)
# random sequences from seed SROCE_RINGFUZZ_SEED (default: a new one,
# printed), at three levels of hostility: indices moved forwards,
# backwards and past the rings, WQEs rewritten and injected with every
# opcode and flag, the CQ's consumer moved, doorbells at random moments,
# while F and P exchange real traffic; last the known defect
# sq-producer-back (an SQ producer index moved back by one while a SEND
# is outstanding and the ring is full of BIND_MW unbinds: the send engine
# must not loop in the doorbell). It checks that F ends every sequence in
# ERR having said so (an error completion, errno or event for F), or stays
# usable (a probe SEND arrives byte for byte); that every destroy works
# and leaves nothing (`rdma resource show`, per sequence); that its own
# control pair passes byte-verified rounds throughout. A corrupt RQ or
# SRQ ring must raise QP_FATAL (and SRQ_ERR), as a corrupt SQ does; a
# ring of WQEs flushed into a CQ kept looking full must raise one CQ_ERR,
# not one per WQE, and take one WQE until the next doorbell.
#
# Around it the test checks that
#   - sroce-traffic (RC, all seven opcodes, bytes verified) passes every
#     run of its loop while the fuzzer runs;
#   - once the fuzzer has destroyed everything and closed the devices (it
#     waits, alive, for a go file), `rdma resource show` is back to the
#     baseline on both devices, and still is after it exits;
#   - a new rdma_cm connection to the fuzzed device works afterwards
#     (ucmatose from sroce_b to sroce_a: 2 connections, 50 SENDs each
#     way), so that connection setup, not only QPs made out of band,
#     survived the fuzzer;
#   - the kernel logged no complaint (a soft lockup in the doorbell is
#     one; the fuzzer's watchdog also fails a doorbell that does not
#     return in 30 s).
#
# Reproduce a failing sequence K of seed S (printed in the log) with
#   sroce-ringfuzz -d sroce_a -g GID -D sroce_b -G GID --seed S -c random \
#       --first K --iterations 1
# after topo_up, or the whole test with
#   scripts/vm-run --kernel REL -- env SROCE_RINGFUZZ_SEED=S tests/run 61-fuzz-rings
#
# What it would have caught:
#
# The send engine looping on an SQ producer moved backwards (a soft
# lockup: sq-producer-back failed so on the code before its fix); a
# corrupt receive ring that failed the QP without a word; an event per
# flushed WQE, the engine rescheduling itself into a full CQ.
# timeout: 900
set -e
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/lib-cm.sh"

tmp=
fuzz=
loop=

cleanup() {
	[[ -z $loop ]] || kill "$loop" 2>/dev/null || true
	[[ -z $fuzz ]] || kill -KILL "$fuzz" 2>/dev/null || true
	topo_down
	[[ -z $tmp ]] || rm -rf "$tmp"
}
trap cleanup EXIT

tmp=$(mktemp -d)

# traffic_loop: sroce-traffic runs, one after the other, at least once
# and until $tmp/stop exists; each must pass. Writes "runs N" or "FAILED
# N" to $tmp/traffic.
traffic_loop() {
	local n=0 pid status

	while ((n == 0)) || [[ ! -e $tmp/stop ]]; do
		n=$((n + 1))
		na sroce-traffic --server -d sroce_a -g "$gid_a" --timeout "$(scaled 120)" \
			>"$tmp/ts" 2>&1 &
		pid=$!
		if ! wait_server 10 "$pid" ns_listening a 18515; then
			echo "FAILED $n (the server did not start)" >"$tmp/traffic"
			return
		fi
		status=0
		nb sroce-traffic --client 192.0.2.1 -d sroce_b -g "$gid_b" \
			--timeout "$(scaled 120)" --transport rc --qps 2 --ops 2000 \
			>"$tmp/tc" 2>&1 || status=$?
		wait "$pid" || status=$((status | $?))
		if ((status)) || ! grep -q 'OK .* mismatches=0 peer_mismatches=0' "$tmp/tc"; then
			echo "FAILED $n" >"$tmp/traffic"
			return
		fi
		echo "runs $n" >"$tmp/traffic"
	done
}

loop_done() {
	! kill -0 "$loop" 2>/dev/null
}

fuzzer_at() {
	grep -q "^$1" "$tmp/fuzz" || ! kill -0 "$fuzz" 2>/dev/null
}

topo_up
base_a=$(resources sroce_a)
base_b=$(resources sroce_b)
gid_a=$(gid_index sroce_a 192.0.2.1)
gid_b=$(gid_index sroce_b 192.0.2.2)
log "baseline: sroce_a $base_a; sroce_b $base_b"

traffic_loop &
loop=$!

# Its output goes to the console as it comes (but the named cases' "ok"
# lines), so that what it did before a hang is seen.
SROCE_RINGFUZZ_ITERATIONS=${SROCE_RINGFUZZ_ITERATIONS:-100} \
	sroce-ringfuzz -d sroce_a -g "$gid_a" -D sroce_b -G "$gid_b" \
	--wait-file "$tmp/go" > >(tee "$tmp/fuzz" | grep --line-buffered -v ' ok$') 2>&1 &
fuzz=$!
t0=$SECONDS
# The tool's watchdog ends it if it hangs: wait as long as the test may.
wait_for 860 fuzzer_at closed
grep -q '^closed' "$tmp/fuzz" ||
	fail "sroce-ringfuzz died: $(grep -m 1 'FAIL' "$tmp/fuzz" || tail -n 1 "$tmp/fuzz")"
# The fuzzer lives, with nothing open: once the traffic loop is done, the
# devices must be as they were.
touch "$tmp/stop"
wait_for 300 loop_done
loop=
now_a=$(resources sroce_a)
now_b=$(resources sroce_b)
touch "$tmp/go"
status=0
wait "$fuzz" || status=$?
fuzz=
summary=$(grep '^sroce-ringfuzz: seed=.* failures=' "$tmp/fuzz" | tail -n 1) || true
[[ -n $summary ]] ||
	fail "sroce-ringfuzz did not finish (status $status): $(tail -n 1 "$tmp/fuzz")"
if ((status)) || [[ $summary != *" failures=0 "* ]]; then
	fail "sroce-ringfuzz: $(grep -c '^FAIL\| FAIL$' "$tmp/fuzz") failures:" \
		"$(grep -m 3 '^FAIL\| FAIL$' "$tmp/fuzz" | cut -c1-120 | paste -sd';' -)"
fi
log "sroce-ringfuzz: $(grep -c ' ok$' "$tmp/fuzz") named case checks ok," \
	"$((SECONDS - t0)) s in all"

read -r traffic <"$tmp/traffic" || traffic="none"
[[ $traffic == runs* ]] || {
	sed 's/^/  client: /' "$tmp/tc"
	sed 's/^/  server: /' "$tmp/ts"
	fail "sroce-traffic next to the fuzzer: $traffic"
}
log "sroce-traffic next to the fuzzer: $traffic, all passed"

[[ $now_a == "$base_a" && $now_b == "$base_b" ]] ||
	fail "with the fuzzer's devices closed: sroce_a '$now_a', sroce_b '$now_b';" \
		"baseline '$base_a', '$base_b'"
[[ $(resources sroce_a) == "$base_a" && $(resources sroce_b) == "$base_b" ]] ||
	fail "after the fuzzer exited: sroce_a '$(resources sroce_a)'," \
		"sroce_b '$(resources sroce_b)'; baseline '$base_a', '$base_b'"
log "resources back to the baseline"
mkdir "$tmp/cm"
cm_ucmatose "$tmp/cm" 192.0.2.1
log "rdma_cm: ucmatose to the fuzzed device passed"
kernel_log_clean || fail "the kernel complained"
