#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# 74-flight: a device bounds what its RC QPs keep unacknowledged together
# (module parameter "flight"; drivers/sroce/flight.c, Documentation/
# datapath.md "Send engine"), without holding any QP back for good.
#
#   netns a: sroce_a on veth_a 192.0.2.1  <==>  netns b: sroce_b on veth_b 192.0.2.2
#            sroce-traffic server                  sroce-traffic client
#
# Byte-verified traffic over 8 RC QPs both ways (SEND and WRITE,
# messages up to 32 KiB: up to 32 packets of 1 KiB at veth MTU 1500),
# netem delaying each veth by 10 ms (100 ms on the debug kernel), while a sampler reads each device's
# count of unacknowledged packets (debugfs sroce/<device>/flight) every
# few milliseconds:
#
#   1. flight=0 (no bound), the control: some sample exceeds what the
#      bound below allows, else the sampler could not see a bound work
#      and the test proves nothing.
#   2. flight=16: no sample exceeds 16 plus 4 packets a QP (a QP below
#      its fair share may take the total 2 a QP past the bound, one with
#      nothing in flight sends one, and one held right after a packet
#      that asked for no acknowledgment sends one more, asking), plus 2
#      for two CPUs racing; flight_holds grows; and, nothing being lost,
#      at most 4 transport timeouts or tail-loss probes a QP pair (the
#      local ACK timeout is 1 s, so that the first wait, before a round
#      trip is measured, outlasts the debug kernel's round trip), where a
#      held QP that waited for a timer would make about one of every
#      hold: it goes on when its acknowledgment comes.
#   3. flight=4, READs too, 2 % of sroce_b's packets dropped (fault
#      injection): losses and holds together, the traffic (at least 30
#      operations a QP, even on the debug kernel) still completes, with
#      drops and resends counted (either requester may resend: on the
#      debug kernel's 10 operations a QP, the drops once hit only ACKs
#      that later ones covered). (A READ request counts its whole
#      response at once, so READs may take a device past its bound: not
#      sampled.)
#   4. The client killed in the middle of a run: once its QPs are gone,
#      both devices count 0 in flight (and so at every step: a device
#      removed with packets counted warns, which fails the test).
#   5. A greedy neighbour, at the default bound (256) and 1 ms each way:
#      tests/lib-stall.py makes two RC QPs on sroce_b whose 1 MiB READs
#      go to a QP number sroce_a does not have (local ACK timeout 31:
#      never answered for hours; sroce_a's rx_drop_no_qp shows the
#      requests came); ib_write_bw 64 KiB from sroce_b to sroce_a (the
#      victim) must keep at least half the bandwidth it gets alone (runs
#      alone and beside the stalled READs, interleaved, the best of each
#      compared: before 2026-11-28 each READ counted its whole response,
#      256 packets, in sroce_b's flight, and the victim, held to its
#      least share of 2 packets a round trip, fell to a thirtieth). The
#      hogs' QPs are destroyed at the end: sroce_b counts 0 again.
# Every run must end with every byte verified; the kernel must not
# complain.
#
# What it would have caught:
#
# A bound that does not hold (the control's samples: 213 to 1108 packets
# in flight from 8 QPs together); a held QP that waits for a timer (its
# last packet asked for no acknowledgment: with that mechanism taken out,
# the run stalled until retries ran out and failed); a device's count
# left behind by a QP destroyed with packets in flight (a device removed
# with packets counted also warns, which fails any test). And the greedy
# neighbour of part 5: on 2026-11-28 on 6.12 the victim's best was 38
# alone and 35 to 37 beside the stalled READs; with the old driver, 50
# alone and 0 beside.
# timeout: 400
set -euo pipefail
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/lib-traffic.sh"

dbg=/sys/kernel/debug/sroce
param=/sys/module/sroce/parameters/flight
tmp=$(mktemp -d)
qps=8
bound0=
spid=
mpid=

cleanup() {
	set +e
	[[ -n $mpid ]] && kill "$mpid" 2>/dev/null
	[[ -n $spid ]] && kill "$spid" 2>/dev/null
	wait 2>/dev/null
	[[ -f $dbg/sroce_b/tx_drop ]] && echo 0 >"$dbg/sroce_b/tx_drop"
	[[ -w $param && -n $bound0 ]] && echo "$bound0" >"$param"
	topo_down
	rm -rf "$tmp"
}
trap cleanup EXIT

# sample FILE: the largest of both devices' flight, read every few
# milliseconds; written to FILE when killed (SIGTERM).
sample() {
	local max=0 a b

	set +e
	trap 'echo "$max" >"$1"; exit 0' TERM
	while :; do
		read -r a <"$dbg/sroce_a/flight" || a=0
		read -r b <"$dbg/sroce_b/flight" || b=0
		((a > max)) && max=$a
		((b > max)) && max=$b
		sleep 0.002
	done
}

# both COUNTER...: the counters named, summed over both devices.
both() {
	local d c n=0

	for d in sroce_a sroce_b; do
		for c; do
			n=$((n + $(counter "$d" "$c")))
		done
	done
	echo "$n"
}

# Packets sroce_b's fault injection dropped (tx_drop).
dropped() {
	awk '$1 == "tx_drop" { print $2 }' "$dbg/sroce_b/hits"
}

# run SEED BOUND OPS MIX: one traffic run with the sampler; sets $max
# and $held.
run() {
	local h0

	echo "$2" >"$param"
	h0=$(both flight_holds)
	rm -f "$tmp/max"
	sample "$tmp/max" &
	mpid=$!
	traffic "$tmp" --qps "$qps" --ops "$3" --max-size 32768 --sq-depth 32 \
		--mix "$4" --seed "$1" --ack-timeout 18
	kill "$mpid"
	wait "$mpid" 2>/dev/null || true
	mpid=
	read -r max <"$tmp/max" || fail "the sampler wrote nothing"
	held=$(($(both flight_holds) - h0))
	log "flight=$2: at most $max packets in flight on a device, $held holds"
}

debugfs_mount
topo_up
for f in "$dbg/sroce_a/flight" "$dbg/sroce_b/flight" "$dbg/sroce_b/tx_drop" "$param"; do
	[[ -e $f ]] || fail "no $f"
done
read -r bound0 <"$param"
topo_neigh_pin
# A round trip of 20 ms keeps packets in flight long enough to be seen
# (as long again for each step of a slow kernel's scale, which sends
# that much slower).
delay=$((10 * ${SROCE_TIMEOUT_SCALE:-1}))ms
na tc qdisc add dev veth_a root netem delay "$delay" limit 100000 ||
	fail "cannot add netem to veth_a"
nb tc qdisc add dev veth_b root netem delay "$delay" limit 100000 ||
	fail "cannot add netem to veth_b"

# 1. The control.
allowed=$((16 + 4 * qps + 2))
run 74001 0 "$(scaled_down 1000)" send,write
((max > allowed)) ||
	fail "without a bound at most $max packets were in flight (not above $allowed): the test cannot see the bound"
((held == 0)) || fail "$held holds without a bound"

# 2. The bound.
stuck0=$(both timeouts tail_probes)
run 74002 16 "$(scaled_down 300)" send,write
((max <= allowed)) || fail "flight=16: $max packets in flight on a device (at most $allowed allowed)"
((held > 0)) || fail "flight=16: no QP was ever held"
stuck=$(($(both timeouts tail_probes) - stuck0))
log "flight=16: $stuck transport timeouts and tail-loss probes"
((stuck <= 4 * qps)) ||
	fail "flight=16, nothing lost: $stuck timeouts and tail-loss probes, more than $((4 * qps)) (held QPs waited for a timer)"

# 3. The bound and losses.
echo 20000 >"$dbg/sroce_b/tx_drop"
# Either requester may resend for a loss (after a NAK or timeout, or a
# tail-loss probe, which resends a last packet): sroce_b for its
# requests, sroce_a for its READ responses and acknowledgments lost. At least 30
# operations a QP even on a slow kernel: with 10 (the debug kernel's
# scale), 2 % of sroce_b's few hundred packets once hit only ACKs that
# later ones covered, and nothing was resent.
t0=$(both retransmits tail_probes)
d0=$(dropped)
ops=$(scaled_down 100)
((ops >= 30)) || ops=30
run 74003 4 "$ops" send,write,read
echo 0 >"$dbg/sroce_b/tx_drop"
((held > 0)) || fail "flight=4: no QP was ever held"
d=$(($(dropped) - d0))
r=$(($(both retransmits tail_probes) - t0))
log "flight=4: $d of sroce_b's packets dropped, $r resent"
((d > 0 && r > 0)) ||
	fail "flight=4: $d packets dropped, $r resent: the case proves nothing"

# 4. QPs destroyed with packets in flight.
echo 16 >"$param"
gid_a=$(gid_index sroce_a 192.0.2.1)
gid_b=$(gid_index sroce_b 192.0.2.2)
na sroce-traffic --server -d sroce_a -g "$gid_a" --timeout "$(scaled 60)" >"$tmp/s4" 2>&1 &
spid=$!
wait_server 10 "$spid" ns_listening a 18515 || fail "the server exited before it listened"
nb sroce-traffic --client 192.0.2.1 -d sroce_b -g "$gid_b" --qps "$qps" --ops 1000000 \
	--max-size 32768 --sq-depth 32 --mix send,write,read --timeout "$(scaled 60)" \
	>"$tmp/c4" 2>&1 &
cpid=$!
seen=0
for ((i = 0; i < 500 && !seen; i++)); do
	read -r a <"$dbg/sroce_b/flight"
	((a > 0)) && seen=1
	sleep 0.01
done
((seen)) || { cat "$tmp/c4"; fail "the client never had a packet in flight"; }
# nb and na run their command in a child: kill the programs themselves.
pkill -9 -f 'sroce-traffic --client' || fail "no sroce-traffic client to kill"
wait "$cpid" 2>/dev/null || true
pkill -f 'sroce-traffic --server' || true
wait "$spid" 2>/dev/null || true
spid=
_no_traffic() {
	! pgrep -f 'sroce-traffic' >/dev/null
}
wait_for 10 _no_traffic
_flight_zero() {
	local a b

	read -r a <"$dbg/sroce_a/flight"
	read -r b <"$dbg/sroce_b/flight"
	((a == 0 && b == 0))
}
if ! (wait_for 10 _flight_zero); then
	rdma -dd resource show qp | sed 's/^/  /'
	fail "QPs gone, flight still counted: sroce_a $(cat "$dbg/sroce_a/flight"), sroce_b $(cat "$dbg/sroce_b/flight")"
fi
log "client killed with packets in flight: both devices count 0"

# 5. A greedy neighbour: READs that are never answered.
echo "$bound0" >"$param"
na tc qdisc change dev veth_a root netem delay 1ms limit 100000
nb tc qdisc change dev veth_b root netem delay 1ms limit 100000
# victim: ib_write_bw 64 KiB from sroce_b to sroce_a; its MB/s in $mbs.
victim() {
	ns_pair 18515 "$tmp/vs" "$tmp/vc" \
		timeout "$(scaled 60)" ib_write_bw -d sroce_a -x "$gid_a" -F -s 65536 \
		-n "$(scaled_down 500)" -p 18515 -- \
		timeout "$(scaled 60)" ib_write_bw -d sroce_b -x "$gid_b" -F -s 65536 \
		-n "$(scaled_down 500)" -p 18515 192.0.2.1 ||
		fail "ib_write_bw: the server exited before it listened"
	((pair_st_s == 0 && pair_st_c == 0)) ||
		{ cat "$tmp/vs" "$tmp/vc"; fail "ib_write_bw failed ($pair_st_s, $pair_st_c)"; }
	mbs=$(awk '$1 == 65536 && $4 + 0 > 0 { print int($4) }' "$tmp/vc")
	[[ -n $mbs ]] || { cat "$tmp/vc"; fail "ib_write_bw printed no bandwidth"; }
}
best() {
	printf '%s\n' "$@" | sort -n | tail -n 1
}
alone=()
beside=()
victim
alone+=("$mbs")
coproc hog { nb python3 "$SROCE_TOP/tests/lib-stall.py" sroce_b "$gid_b" 192.0.2.1 2 $((1 << 20)) 2>&1; }
nq0=$(counter sroce_a rx_drop_no_qp)
read -r -t "$(scaled 30)" line <&"${hog[0]}" || fail "lib-stall.py said nothing"
[[ $line == "ready 2" ]] || fail "lib-stall.py: $line"
_hogs_sent() {
	(($(counter sroce_a rx_drop_no_qp) >= nq0 + 2))
}
wait_for 10 _hogs_sent || fail "the stalled READs never reached sroce_a (rx_drop_no_qp)"
log "stalled READs sent; sroce_b counts $(cat "$dbg/sroce_b/flight") in flight"
victim
beside+=("$mbs")
victim
beside+=("$mbs")
fd=${hog[1]}
exec {fd}>&-
# shellcheck disable=SC2154 # set by coproc
wait "$hog_PID" || fail "lib-stall.py failed"
victim
alone+=("$mbs")
log "ib_write_bw 64 KiB alone: ${alone[*]} MB/s; beside two stalled 1 MiB READs: ${beside[*]} MB/s"
a=$(best "${alone[@]}")
b=$(best "${beside[@]}")
((2 * b >= a)) ||
	fail "beside two stalled READs the victim got $b MB/s, alone $a MB/s: less than half"
wait_for 10 _flight_zero || fail "the stalled QPs gone, sroce_b still counts $(cat "$dbg/sroce_b/flight")"

kernel_log_clean || fail "the kernel complained"
