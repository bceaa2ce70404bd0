#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# 60-fuzz-packets: sroce survives a structure-aware RoCEv2 packet fuzzer,
# stays usable, and accounts for every packet it drops.
#
#   +----------- netns a ------------+        +----------- netns b ------------+
#   | sroce_a  <- attacked           |        | sroce_b                        |
#   |  sroce-fuzz-target: 33 QPs, RC |        |  15 partners of sroce_a's QPs  |
#   |  UC UD XRC in RESET..ERR, MRs, |        |  (driven by sroce-fuzz-target) |
#   |  windows, QP 1 (the GSI)       |        |  sroce-fuzz: AF_PACKET frames  |
#   | veth_a 192.0.2.1, 2001:db8::1  |========| veth_b 192.0.2.2, 2001:db8::2  |
#   +--------------------------------+        +--------------------------------+
#
# First sroce-traffic (RC, all opcodes, every byte checked) between the
# two devices. Then one round per address family (SROCE_FUZZ_FAMILIES,
# default "4 6"), each with a fresh sroce-fuzz-target (see its header:
# QPs of every type in every state, partners on sroce_b, orphans whose
# requests only the fuzzer answers, MRs and type 1 and 2 windows, some
# zero-based at odd offsets):
#
#   - the targets file: sroce-fuzz-target's QPs, each of which `rdma -j
#     -dd resource show qp` must list in the state it was put in, with
#     the PSNs the driver reports, and QP 1 and any other QP of sroce_a;
#   - sroce-fuzz, in netns b, sends its share of the packets (below)
#     from veth_b at sroce_a;
#   - the accounting, once sroce_a's counters have settled. With S the
#     packets sent, C those the fuzzer gave a bad UDP checksum, L the
#     packets sroce_b sent meanwhile (its GSI answering what sroce_a's
#     GSI sent it: the only traffic towards sroce_a besides the fuzzer),
#     and the fuzzer's own verdicts (what drivers/sroce/recv.c must do
#     with each packet, given the targets' states):
#
#       rx_packets(a) = S - C + L                  every datagram the UDP
#                                                  layer took reached sroce
#       InCsumErrors(a, UDP + UDP6) = C            the rest it dropped
#       InDatagrams(a, UDP + UDP6) = rx_packets(a) no other UDP traffic
#       veth_b tx_dropped + veth_a rx_dropped = 0  nothing lost before
#       rx_dropped = sum of rx_drop_*              every drop has a reason
#       rx_drop_header = header, rx_drop_icrc = icrc    (exact)
#       no_qp <= rx_drop_no_qp <= no_qp + L
#       rx_drop_qp_state >= qp_state
#       rx_drop_qkey <= ud_qkey + L
#       rx_drop_addr <= addr + L                   (where it exists)
#       qp_state + ud_qkey + ud_long <= the drops after the QP lookup
#         <= qp_state + ud_qkey + ud_long + ud + addr + deep + L
#
#     (all as increases over the round; "the drops after the QP lookup"
#     are all rx_drop_* but header, icrc and no_qp, so that a driver may
#     add reasons). The bounds are loose where the fuzzer cannot know: a
#     deep request may kill its QP, and what follows until
#     sroce-fuzz-target restores it is dropped for its state; a UD
#     datagram finds a receive WQE or not;
#   - QP 1 (the GSI) has every receive WQE posted again, once quiet (but
#     one, which the driver may hold for the next datagram): the MAD
#     layer reposts a buffer that completes successfully, never one that
#     completes in error, so a datagram that the driver completes in
#     error (one bigger than the buffer, say) costs a WQE for good;
#   - sroce-fuzz-target's probe QP over the round's family (RC, RTR,
#     left alone by the fuzzer) takes no request from another address
#     than its peer's: 8 valid SENDs in sequence from another address of
#     the peer's subnet, 8 from the peer's address of the other family
#     (sroce-fuzz --probe) leave its expected PSN where it was; and an
#     RDMA WRITE FIRST from its peer whose RETH says 0 bytes but that
#     carries a path MTU of payload earns a NAK (naks_sent);
#   - sroce-fuzz-target, stopped, destroys everything without an error;
#   - after the round: sroce-traffic between the devices again; a new
#     rdma_cm connection to sroce_a (rping -V, 20 pings verified, over
#     the round's family); both ports ACTIVE; no kernel complaint.
#
# Every failed check is reported, and every round runs; then the test
# fails, printing the seed and the command that repeats the run.
#
# Parameters come from the environment or, as the guest's environment is
# not the host's, from the kernel command line (lower case: e.g.
# SROCE_VM_APPEND="sroce_fuzz_seed=7 sroce_fuzz_packets=1000000"
# scripts/check -t 60-fuzz-packets REL):
#
#   SROCE_FUZZ_PACKETS   packets in all, shared evenly by the rounds
#                        (default 400000; 1000000 on a lockdep kernel,
#                        the debug kernel)
#   SROCE_FUZZ_SEED      the seed of every round (random if unset)
#   SROCE_FUZZ_FAMILIES  the rounds ("4 6" or "4,6"; default both)
#   SROCE_FUZZ_FROM, SROCE_FUZZ_COUNT  send only packets FROM to
#                        FROM+COUNT-1 of each round's stream (to bisect)
#   SROCE_FUZZ_RATE      packets per second at most (default: no limit)
#
# A round's packets depend on the seed, its share and the targets, which
# sroce-fuzz-target sets up the same way each time; what sroce_a's QP 1
# lost in earlier rounds carries over.
#
# What it would have caught:
#
# Anything the wire can do to the receive path. Run against the code
# before its fix, the test failed. Its first run on the debug kernel found
# a lock misuse: the AH table's lock, taken with bottom halves disabled,
# under a CM path that runs with interrupts off.
# timeout: 1800
set -e
. "$(dirname "$0")/lib.sh"

holder=
rping_pid=
cleanup() {
	[[ -z $holder ]] || kill -KILL "$holder" 2>/dev/null || true
	[[ -z $rping_pid ]] || kill -KILL "$rping_pid" 2>/dev/null || true
	topo_down
}
trap cleanup EXIT

for t in sroce-fuzz sroce-fuzz-target sroce-traffic; do
	command -v "$t" >/dev/null || skip "$t is not built (make tools)"
done
command -v rping >/dev/null || skip "rping is missing (rdmacm-utils)"
command -v python3 >/dev/null || skip "python3 is missing"

# fuzz_param NAME DEFAULT: SROCE_FUZZ_NAME (lib.sh's test_param).
fuzz_param() {
	test_param "FUZZ_$1" "$2"
}

tmp=$(mktemp -d)
# The debug kernel's run fuzzes a million packets a kernel (about half an
# hour there); the others, which the debug kernel's checkers do not
# watch, less.
packets=400000
! debug_kernel || packets=1000000
packets=$(fuzz_param PACKETS "$packets")
seed=$(fuzz_param SEED $(( (RANDOM << 30 | RANDOM << 15 | RANDOM) )))
families=$(fuzz_param FAMILIES "4 6")
families=${families//,/ }
from=$(fuzz_param FROM "")
count=$(fuzz_param COUNT "")
rate=$(fuzz_param RATE "")
rounds=$(wc -w <<<"$families")
per_round=$(( (packets + rounds - 1) / rounds ))
log "sroce-fuzz: seed $seed, $per_round packets a round, families $families"
errors=()

# check CONDITION MESSAGE...: note a failed check.
check() {
	local cond=$1

	shift
	if ! eval "$cond"; then
		log "FAILED: $*"
		errors+=("IPv$fam round: $*")
	fi
}

# All of sroce_a's counters, sroce_b's tx_packets, netns a's UDP counters
# and the veths' drops, as NAME=VALUE lines.
snapshot() {
	local f

	for f in /sys/class/infiniband/sroce_a/ports/1/hw_counters/*; do
		echo "a_${f##*/}=$(<"$f")"
	done
	echo "b_tx_packets=$(counter sroce_b tx_packets)"
	na awk '
		$1 == "Udp:" && !h { for (i = 2; i <= NF; i++) n[i] = $i; h = 1; next }
		$1 == "Udp:" { for (i = 2; i <= NF; i++) print "udp_" n[i] "=" $i }
		$1 ~ /^Udp6/ { print "udp6_" substr($1, 5) "=" $2 }
	' /proc/net/snmp /proc/net/snmp6
	echo "veth_drops=$(( $(na cat /sys/class/net/veth_a/statistics/rx_dropped) +
		$(nb cat /sys/class/net/veth_b/statistics/tx_dropped) ))"
}

# load_snapshot PREFIX: read snapshot's lines into the array PREFIX.
load_snapshot() {
	local -n arr=$1
	local k v

	while IFS== read -r k v; do
		arr[$k]=$v
	done
}

# traffic OPTION...: sroce-traffic, server sroce_a, client sroce_b.
traffic() {
	local pid status_s=0 status_c=0 side

	na sroce-traffic --server -d sroce_a -g "$gid4_a" --timeout "$(scaled 120)" \
		>"$tmp/s" 2>&1 &
	pid=$!
	if ! wait_server 10 "$pid" ns_listening a 18515; then
		sed 's/^/  server: /' "$tmp/s"
		errors+=("${fam:+IPv$fam round: }sroce-traffic $*: the server exited before it listened")
		return 1
	fi
	nb sroce-traffic --client 192.0.2.1 -d sroce_b -g "$gid4_b" \
		--timeout "$(scaled 120)" "$@" >"$tmp/c" 2>&1 || status_c=$?
	wait "$pid" || status_s=$?
	for side in s c; do
		if ((status_s || status_c)) ||
			! grep -Eq '^sroce-traffic: (client|server): OK .* mismatches=0 peer_mismatches=0 ' "$tmp/$side"; then
			sed 's/^/  client: /' "$tmp/c" | tail -n 20
			sed 's/^/  server: /' "$tmp/s" | tail -n 20
			errors+=("${fam:+IPv$fam round: }sroce-traffic $*: exit status $status_s (server) $status_c (client)")
			return 1
		fi
	done
	log "sroce-traffic $*: $(grep -o 'OK .*' "$tmp/c")"
}

# rping_check ADDRESS: a new rdma_cm connection to sroce_a, 20 pings of
# 1000 bytes, every one verified (-V).
rping_check() {
	local addr=$1 status_s=0 status_c=0 pings

	na timeout "$(scaled 60)" rping -s -a "$addr" -V -v -C 20 -S 1000 \
		>"$tmp/rs" 2>&1 &
	rping_pid=$!
	if ! wait_server 10 "$rping_pid" cm_listening 7174; then
		sed 's/^/  rping server: /' "$tmp/rs"
		errors+=("IPv$fam round: the rping server on $addr exited before it listened")
		rping_pid=
		return 1
	fi
	nb timeout "$(scaled 60)" rping -c -a "$addr" -V -v -C 20 -S 1000 \
		>"$tmp/rc" 2>&1 || status_c=$?
	if ((status_c)); then
		kill -KILL "$rping_pid" 2>/dev/null || true
	fi
	wait "$rping_pid" || status_s=$?
	rping_pid=
	pings=$(grep -c '^ping data: rdma-ping-' "$tmp/rc" || true)
	if ((status_c || status_s || pings != 20)) ||
		grep -q 'data mismatch' "$tmp/rc"; then
		grep -v 'ping data' "$tmp/rc" | sed 's/^/  rping client: /' | tail -n 10
		grep -v 'ping data' "$tmp/rs" | sed 's/^/  rping server: /' | tail -n 10
		errors+=("IPv$fam round: a new rdma_cm connection to $addr failed: rping exit status $status_c (client) $status_s (server), $pings of 20 pings")
		return 1
	fi
	log "rping -V to $addr: 20 pings verified"
}

# gsi_ring: QP 1's receive ring, as "POSTED SIZE". POSTED counts what
# the driver has not taken from the ring: a UD QP may hold one WQE it took
# for a datagram it then dropped, for the next one.
gsi_ring() {
	rdma -dd resource show qp link sroce_a lqpn 1 |
		sed -n 's/.* drv_rq_size \([0-9]*\) drv_rq_pi \([0-9]*\) drv_rq_ci \([0-9]*\).*/\2 \3 \1/p' |
		awk '{ print ($1 - $2) % 4294967296, $3 }'
}

gsi_ring_full() {
	local posted size

	read -r posted size < <(gsi_ring)
	[[ -n $size ]] && ((posted >= size - 1))
}

# qp_field QPN NAME: the value after NAME in QPN's line of `rdma -dd
# resource show qp` (state, drv_expected_psn...).
qp_field() {
	rdma -dd resource show qp link sroce_a lqpn "$1" | tr ' ' '\n' |
		awk -v n="$2" 'prev == n { print; exit } { prev = $0 }'
}

qp_in() {
	[[ $(qp_field "$1" state) == "$2" ]]
}

rx_rose() {
	(($(counter sroce_a rx_packets) >= $1))
}

naks_rose() {
	(($(counter sroce_a naks_sent) >= $1))
}

# probe_checks FAM: sroce-fuzz-target's probe QP (RC, RTR) over FAM,
# which the fuzzer leaves alone, and sroce-fuzz --probe:
#   - it takes no request that does not come from its peer: 8 valid
#     SENDs in sequence from another address of the peer's subnet, then
#     8 from the peer's address of the other family; its expected PSN
#     must not move;
#   - an RDMA WRITE FIRST from its peer whose RETH says 0 bytes but that
#     carries a path MTU of payload is an invalid request: a NAK.
probe_checks() {
	local fam=$1 qpn src e1 e2 rx n
	local -A srcs=([4]="192.0.2.77 2001:db8::2" [6]="2001:db8::77 192.0.2.2")
	local -A peer=([4]=192.0.2.2 [6]=2001:db8::2)

	qpn=$(awk -v f="$fam" '$1 == "qp" && $9 == "probe" && $5 == f {
		print $2; exit }' "$tmp/holder")
	[[ -n $qpn ]] || fail "sroce-fuzz-target lists no probe QP over IPv$fam"
	for src in ${srcs[$fam]}; do
		wait_for 5 qp_in "$qpn" RTR
		e1=$(qp_field "$qpn" drv_expected_psn)
		rx=$(counter sroce_a rx_packets)
		nb sroce-fuzz -i veth_b -M "$mac_a" -t "$tmp/targets" \
			--probe "$qpn:$e1:8" --probe-src "$src" >/dev/null ||
			fail "sroce-fuzz --probe failed"
		wait_for 10 rx_rose $((rx + 8))
		e2=$(qp_field "$qpn" drv_expected_psn)
		check "[[ $e1 == $e2 ]]" "RC QP $qpn (RTR, connected to ${peer[$fam]})" \
			"took requests from $src: its expected PSN moved from $e1 to $e2"
	done
	wait_for 5 qp_in "$qpn" RTR
	e1=$(qp_field "$qpn" drv_expected_psn)
	rx=$(counter sroce_a rx_packets)
	n=$(counter sroce_a naks_sent)
	nb sroce-fuzz -i veth_b -M "$mac_a" -t "$tmp/targets" \
		--probe "$qpn:$e1:1:write0" --probe-src "${peer[$fam]}" >/dev/null ||
		fail "sroce-fuzz --probe failed"
	wait_for 10 rx_rose $((rx + 1))
	(SROCE_REASON='' wait_for 5 naks_rose $((n + 1))) 2>/dev/null || true
	e2=$(qp_field "$qpn" drv_expected_psn)
	check "naks_rose $((n + 1))" "RC QP $qpn took an RDMA WRITE FIRST whose" \
		"RETH says 0 bytes, with a path MTU of payload, without a NAK" \
		"(expected PSN $e1, then $e2)"
}

ports_active() {
	local d s

	for d in sroce_a sroce_b; do
		read -r _ s <"/sys/class/infiniband/$d/ports/1/state"
		[[ $s == ACTIVE ]] || { log "$d port is $s"; return 1; }
	done
}

# targets HOLDER_FILE: the fuzzer's targets file, on stdout. Fails (status
# 1, with the reason) if a holder QP is not live in the state it should be.
targets() {
	rdma -j -dd resource show qp link sroce_a >"$tmp/qp.json"
	python3 - "$1" "$tmp/qp.json" <<-'PY'
	import json, sys
	holder = [l.split() for l in open(sys.argv[1]) if l.strip() and l[0] != "#"]
	live = {q["lqpn"]: q for q in json.load(open(sys.argv[2]))}
	def psn(q, drv, core):
	    v = q.get("drv_" + drv, q.get(core))
	    return "-" if v is None else "0x%06x" % v
	seen, bad = set(), []
	for w in holder:
	    if w[0] != "qp":
	        continue
	    qpn = int(w[1])
	    q = live.get(qpn)
	    if q is None or q["type"] != w[2] or q["state"] != w[3]:
	        bad.append("QP %d %s %s: %s" % (qpn, w[2], w[3], "not listed" if q is None
	                   else "listed as %s %s" % (q["type"], q["state"])))
	        continue
	    seen.add(qpn)
	    print("qp", qpn, w[2], w[3], psn(q, "expected_psn", "rq-psn"),
	          psn(q, "next_psn", "sq-psn"), psn(q, "unacked_psn", "sq-psn"), *w[4:])
	for qpn, q in sorted(live.items()):
	    if qpn not in seen:
	        print("qp", qpn, q["type"], q["state"], psn(q, "expected_psn", "rq-psn"),
	              psn(q, "next_psn", "sq-psn"), psn(q, "unacked_psn", "sq-psn"),
	              "- - - - -")
	for w in holder:
	    if w[0] != "qp":
	        print(*w)
	if bad:
	    print("rdma resource show qp: " + "; ".join(bad), file=sys.stderr)
	    sys.exit(1)
	PY
}

# expect NAME: the fuzzer's count NAME from its "expect" line.
expect() {
	sed -n "s/^expect .* $1=\([0-9]*\).*/\1/p; s/^expect $1=\([0-9]*\).*/\1/p" \
		"$tmp/fuzz.out"
}

# Has sroce_a taken every datagram it will get? (S - C + L, see above.)
settled() {
	local rx b

	rx=$(counter sroce_a rx_packets)
	b=$(counter sroce_b tx_packets)
	((rx - before[a_rx_packets] >= sent - csum + b - before[b_tx_packets]))
}

accounting() {
	local -A d
	local k L S C reasons=0 late v
	local header icrc no_qp qp_state ud_qkey ud_long ud addr deep

	for k in "${!after[@]}"; do
		d[$k]=$((after[$k] - ${before[$k]:-0}))
	done
	S=$(expect sent) C=$(expect udp_csum) L=${d[b_tx_packets]}
	for k in header icrc no_qp qp_state ud_qkey ud_long ud addr deep; do
		printf -v "$k" '%s' "$(expect "$k")"
	done
	v=
	for k in "${!d[@]}"; do
		[[ $k == a_rx_drop_* ]] || continue
		reasons=$((reasons + d[$k]))
		v+=" ${k#a_}=${d[$k]}"
	done
	# What was dropped at or after finding the QP.
	late=$((reasons - d[a_rx_drop_header] - d[a_rx_drop_icrc] - d[a_rx_drop_no_qp]))
	for k in rx_packets rx_dropped seq_errors dup_requests naks_sent \
		rnr_naks_sent tx_packets retransmits; do
		v+=" $k=${d[a_$k]:-?}"
	done
	log "  sroce_a:$v"
	log "  sroce_b tx_packets=$L; netns a: UDP InDatagrams=${d[udp_InDatagrams]}" \
		"InCsumErrors=${d[udp_InCsumErrors]} UDP6 InDatagrams=${d[udp6_InDatagrams]}" \
		"InCsumErrors=${d[udp6_InCsumErrors]}; veth drops=${d[veth_drops]}"
	check "((d[a_rx_packets] == S - C + L))" \
		"rx_packets rose by ${d[a_rx_packets]}, not S - C + L = $S - $C + $L"
	check "((d[udp_InCsumErrors] + d[udp6_InCsumErrors] == C))" \
		"UDP InCsumErrors rose by $((d[udp_InCsumErrors] + d[udp6_InCsumErrors])), not C = $C"
	check "((d[udp_InDatagrams] + d[udp6_InDatagrams] == d[a_rx_packets]))" \
		"UDP InDatagrams rose by $((d[udp_InDatagrams] + d[udp6_InDatagrams])), rx_packets by ${d[a_rx_packets]}"
	check "((d[veth_drops] == 0))" "the veths dropped ${d[veth_drops]} frames"
	check "((d[a_rx_dropped] == reasons))" \
		"rx_dropped rose by ${d[a_rx_dropped]}, the rx_drop_* counters by $reasons"
	check "((d[a_rx_drop_header] == header))" \
		"rx_drop_header rose by ${d[a_rx_drop_header]}, not $header"
	check "((d[a_rx_drop_icrc] == icrc))" \
		"rx_drop_icrc rose by ${d[a_rx_drop_icrc]}, not $icrc"
	check "((d[a_rx_drop_no_qp] >= no_qp && d[a_rx_drop_no_qp] <= no_qp + L))" \
		"rx_drop_no_qp rose by ${d[a_rx_drop_no_qp]}, not $no_qp (+ up to $L)"
	check "((d[a_rx_drop_qp_state] >= qp_state))" \
		"rx_drop_qp_state rose by ${d[a_rx_drop_qp_state]}, less than $qp_state"
	check "((d[a_rx_drop_qkey] <= ud_qkey + L))" \
		"rx_drop_qkey rose by ${d[a_rx_drop_qkey]}, more than $ud_qkey + $L"
	if [[ -n ${d[a_rx_drop_addr]:-} ]]; then
		check "((d[a_rx_drop_addr] <= addr + L))" \
			"rx_drop_addr rose by ${d[a_rx_drop_addr]}, more than $addr + $L"
	fi
	check "((late >= qp_state + ud_qkey + ud_long &&
		late <= qp_state + ud_qkey + ud_long + ud + addr + deep + L))" \
		"the drops after the QP lookup rose by $late, not" \
		"$((qp_state + ud_qkey + ud_long)) to" \
		"$((qp_state + ud_qkey + ud_long + ud + addr + deep + L))"
}

round() {
	local fam=$1 n=$2 addr status=0 out new i posted size
	local -a range=()
	local -A before after

	[[ $fam == 4 ]] && addr=192.0.2.1 || addr=2001:db8::1
	log "=== round IPv$fam: $n packets, seed $seed"
	ip netns exec a sroce-fuzz-target -d sroce_a -g "$gid4_a,$gid6_a" \
		-D sroce_b -G "$gid4_b,$gid6_b" -o "$tmp/holder" >"$tmp/holder.out" 2>&1 &
	holder=$!
	if ! wait_server 60 "$holder" grep -q '^ready ' "$tmp/holder.out"; then
		cat "$tmp/holder.out"
		fail "sroce-fuzz-target did not come up"
	fi
	log "sroce-fuzz-target: $(grep '^ready ' "$tmp/holder.out")"
	targets "$tmp/holder" >"$tmp/targets" 2>"$tmp/targets.err" ||
		fail "$(cat "$tmp/targets.err")"
	[[ -z $from ]] || range+=(--from "$from")
	[[ -z $count ]] || range+=(--count "$count")
	[[ -z $rate ]] || range+=(--rate "$rate")
	load_snapshot before < <(snapshot)
	nb sroce-fuzz -i veth_b -M "$mac_a" -t "$tmp/targets" -s "$seed" \
		-n "$n" -f "$fam" "${range[@]}" >"$tmp/fuzz.out" 2>&1 || status=$?
	grep -v '^opcode \|^class ' "$tmp/fuzz.out" | sed 's/^/  /'
	log "  classes: $(sed -n 's/^class //p' "$tmp/fuzz.out" | paste -sd, -);" \
		"$(grep -c '^opcode ' "$tmp/fuzz.out") opcodes"
	((status == 0)) && grep -q '^expect ' "$tmp/fuzz.out" ||
		fail "sroce-fuzz failed (status $status)"
	sent=$(expect sent) csum=$(expect udp_csum)
	# Quiet for a second, or 60 s at most: what the engines still hold
	# is then counted.
	if ! (SROCE_REASON='' wait_for 60 settled) 2>/dev/null; then
		log "  sroce_a's rx_packets did not reach what was sent in 60 s"
	fi
	out= i=0
	new=$(snapshot)
	while [[ $out != "$new" ]] && ((i++ < 30)); do
		out=$new
		sleep 1
		new=$(snapshot)
	done
	load_snapshot after <<<"$new"
	accounting
	# The MAD layer reposts every receive buffer that completes
	# successfully; one that completes in error is lost for good.
	(SROCE_REASON='' wait_for 30 gsi_ring_full) 2>/dev/null || true
	read -r posted size < <(gsi_ring)
	log "  QP 1 (GSI): $posted of $size receive WQEs posted"
	check gsi_ring_full "QP 1 (GSI) has $posted of its $size receive WQEs" \
		"posted: the MAD layer lost the others to receive completions in error"
	probe_checks "$fam"

	status=0
	check "kill -0 $holder 2>/dev/null" "sroce-fuzz-target died during the round:" \
		"$(tail -n 1 "$tmp/holder.out")"
	kill -TERM "$holder" 2>/dev/null || true
	wait "$holder" || status=$?
	grep -v '^qp .* completed 0 restores 0$' "$tmp/holder.out" | sed 's/^/  holder: /'
	holder=
	check "((status == 0))" "sroce-fuzz-target exited with status $status"

	traffic --transport rc --qps 2 --ops 1000 || true
	rping_check "$addr" || true
	check ports_active "a port is not ACTIVE"
	check kernel_log_clean "the kernel complained"
}

topo_up
gid4_a=$(gid_index sroce_a 192.0.2.1)
gid6_a=$(gid_index sroce_a 2001:db8::1)
gid4_b=$(gid_index sroce_b 192.0.2.2)
gid6_b=$(gid_index sroce_b 2001:db8::2)
mac_a=$(na cat /sys/class/net/veth_a/address)
topo_neigh_pin

traffic --transport rc --qps 2 --ops 2000 ||
	fail "before fuzzing: ${errors[*]}"

for fam in $families; do
	round "$fam" "$per_round"
done
if ((${#errors[@]})); then
	log "${#errors[@]} failed checks:"
	printf '  %s\n' "${errors[@]}"
	again="sroce_fuzz_seed=$seed sroce_fuzz_packets=$packets"
	again+=" sroce_fuzz_families=${families// /,}"
	again+="${from:+ sroce_fuzz_from=$from}${count:+ sroce_fuzz_count=$count}"
	again+="${rate:+ sroce_fuzz_rate=$rate}"
	log "to repeat: SROCE_VM_APPEND=\"$again\" scripts/check -t 60-fuzz-packets $KREL"
	fail "seed $seed: ${errors[*]}"
fi
rm -rf "$tmp"
