#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# 45-interop: sroce and the kernel's own Soft-RoCE, rdma_rxe, talk to
# each other.
#
#   +------- initial netns ------+          +--------- netns rxp --------+
#   |  rxe0 (rdma_rxe)           |          |  sroce_r (sroce)           |
#   |  veth_r 198.51.100.1/24    |==========|  veth_rp 198.51.100.2/24   |
#   +----------------------------+          +----------------------------+
#
# lib-rxe.sh builds the left half (rdma_rxe has its UDP socket only in the
# initial namespace); sroce_r sits on the peer veth. Each program runs
# twice, sroce as server and rxe as client, then the other way round:
#
#   - ibv_rc_pingpong (4 KiB, 500 iterations) and ibv_ud_pingpong (1024 B,
#     500): exit 0 on both sides and "<iters> iters in" on both;
#   - rping -V (500 pings of 2500 B, every one compared): all 500 printed,
#     no "data mismatch";
#   - ib_write_bw, ib_read_bw, ib_send_bw (64 KiB), ib_atomic_bw: exit 0,
#     a result line with a positive average bandwidth (a line that
#     perftest could not time under TCG, "Correlation coefficient ...",
#     is accepted as long as the run succeeded).
#
# Then sroce-traffic with rdma_rxe initiating random WRITEs and READs of
# up to 512 KiB at sroce (2 QPs, 200 operations each), every byte checked
# on both sides, and rdma_rxe must not complain: its completer WARNs and
# fails its QP when an ACK overtaken by a READ response arrives inside it,
# which a veth without RPS allows (Documentation/clients.md), so
# tests/lib-rxe.sh sets RPS on both ends of rdma_rxe's veth.
#
# Then, for the CRC-32 implementation sroce did not choose at load (the
# module parameter icrc: lib or crypto, see Documentation/datapath.md),
# ibv_rc_pingpong and ib_write_bw again both ways: rdma_rxe checks every
# ICRC sroce computes, and sroce every one rxe sends; sroce_r's
# rx_drop_icrc must stay 0 throughout. The crypto API's crc32 must be
# there (Debian builds it).
#
# Then the other engine (module parameter engine: tasklet or bh), where
# the kernel has BH workqueues (6.9 and later):
# ibv_rc_pingpong and ib_write_bw again both ways; elsewhere engine=bh
# must be refused with EOPNOTSUPP. A value that is neither is refused.
# Both module parameters are set back however the test ends (sroce stays
# loaded for the tests after it).
#
# Last, where rdma_rxe has sockets in every namespace (7.x), rxe0 moves to
# a namespace of its own (lib-rxe.sh's rxe_to_netns) and ibv_rc_pingpong,
# rping -V and ib_write_bw run again both ways; elsewhere that part is
# logged as skipped.
#
# rxe's programs run with the system's providers (rxe_run); sroce's with
# libsroce (RDMAV_DRIVERS). The kernel must not complain.
# runs-on: every
# timeout: 300
set -e
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/lib-rxe.sh"

# Module parameters this test changes, to set back however it ends (sroce
# stays loaded for the tests after it).
declare -A restore=()
cleanup() {
	local p

	for p in "${!restore[@]}"; do
		echo "${restore[$p]}" >"/sys/module/sroce/parameters/$p" 2>/dev/null || true
	done
	ip netns exec rxp rdma link del sroce_r 2>/dev/null || true
	rxe_down
}
trap cleanup EXIT

tmp=$(mktemp -d)
declare -A ip=([rxe]=198.51.100.1 [sroce]=198.51.100.2)
declare -A dev=([rxe]=rxe0 [sroce]=sroce_r) gid

# on SIDE CMD...: run CMD where SIDE's device lives, with its provider.
on() {
	local side=$1

	shift
	if [[ $side == rxe ]]; then
		rxe_run "$@"
	else
		ip netns exec rxp "$@"
	fi
}

other() {
	[[ $1 == rxe ]] && echo sroce || echo rxe
}

tcp_listening() {
	on "$1" ss -Htln "sport = :$2" | grep -q .
}

cm_listening() {
	rdma resource show cm_id | grep -q "state LISTEN .*:$2 "
}

show() {
	sed "s/^/  client ($1): /" "$tmp/c"
	sed "s/^/  server ($2): /" "$tmp/s"
}

# pair SERVER-SIDE READY PORT -- SERVER-ARGS... -- CLIENT-ARGS...: the
# server on SERVER-SIDE, the client on the other, each given its device
# and GID options by the caller through the words @DEV@ and @GID@ and
# the server's address through @SERVER@. Sets $status_s and $status_c.
pair() {
	local s=$1 ready=$2 port=$3 c pid arg
	local -a sargs=() cargs=()

	c=$(other "$s")
	shift 4
	while [[ $1 != -- ]]; do
		sargs+=("$(subst "$s" "$1")")
		shift
	done
	shift
	for arg; do
		cargs+=("$(subst "$c" "$arg")")
	done
	status_s=0 status_c=0
	on "$s" timeout "$(scaled 120)" "${sargs[@]}" >"$tmp/s" 2>&1 &
	pid=$!
	if ! wait_server 10 "$pid" "$ready" "$s" "$port"; then
		sed "s/^/  server ($s): /" "$tmp/s"
		fail "${sargs[*]}: the server ($s) exited before it listened"
	fi
	on "$c" timeout "$(scaled 120)" "${cargs[@]}" >"$tmp/c" 2>&1 || status_c=$?
	wait "$pid" || status_s=$?
}

# subst SIDE WORD: WORD with @DEV@, @GID@ and @SERVER@ replaced for SIDE.
subst() {
	local w=$2

	w=${w//@DEV@/${dev[$1]}}
	w=${w//@GID@/${gid[$1]}}
	w=${w//@SERVER@/${ip[$(other "$1")]}}
	printf "%s\n" "$w"
}

pingpong() {
	local s=$1 prog=$2 size=$3 iters=$4 t0=$SECONDS side c

	c=$(other "$s")
	pair "$s" tcp_listening 18515 -- \
		"$prog" -d @DEV@ -g @GID@ -s "$size" -n "$iters" -c -- \
		"$prog" -d @DEV@ -g @GID@ -s "$size" -n "$iters" -c @SERVER@
	for side in s c; do
		if ((status_s || status_c)) ||
			! grep -q "^$iters iters in [0-9.]* seconds" "$tmp/$side" ||
			grep -q "invalid data" "$tmp/$side"; then
			show "$c" "$s"
			fail "$prog, server $s, client $c: exit status $status_s (server)" \
				"$status_c (client), or no result line"
		fi
	done
	log "$prog -s $size, server $s, client $c: $(grep ' iters in ' "$tmp/c")" \
		"($((SECONDS - t0)) s)"
}

rping_pair() {
	local s=$1 t0=$SECONDS c pings_s pings_c

	c=$(other "$s")
	pair "$s" cm_listening 7174 -- \
		rping -s -a "${ip[$s]}" -V -v -C 500 -S 2500 -- \
		rping -c -a "${ip[$s]}" -V -v -C 500 -S 2500
	pings_s=$(grep -c '^server ping data: rdma-ping-' "$tmp/s" || true)
	pings_c=$(grep -c '^ping data: rdma-ping-' "$tmp/c" || true)
	if ((status_s || status_c || pings_s != 500 || pings_c != 500)) ||
		grep -q 'data mismatch' "$tmp/c"; then
		show "$c" "$s" | grep -v 'ping data: \|^  [^:]*: [^ ]*$' || true
		fail "rping -V, server $s, client $c: exit status $status_s (server)" \
			"$status_c (client), $pings_s and $pings_c pings of 500"
	fi
	log "rping -V -C 500 -S 2500, server $s, client $c: $pings_c pings verified" \
		"($((SECONDS - t0)) s)"
}

# bw_result FILE [NOCLOCK]: the last result line's average bandwidth, or
# its message rate if the bandwidth rounds to 0.00 MB/s (8-byte atomics
# on a slow debug kernel), "unmeasured" if perftest could not time it (or
# NOCLOCK is 1: the server of a test the client measures prints the
# client's figures, without the client's warning), nothing if there is
# no such line.
bw_result() {
	awk -v noclock="${2:-0}" '
		$1 ~ /^[0-9]+$/ && $2 ~ /^[0-9]+$/ && NF >= 5 {
			r = ""
			if (noclock && $4 + 0 == 0 && $5 + 0 == 0)
				r = "unmeasured"
			else if ($4 + 0 > 0)
				r = $4 " MB/s"
			else if ($5 + 0 > 0)
				r = $5 " Mpps"
			noclock = 0
		}
		/Correlation coefficient/ { noclock = 1 }
		END { if (r != "") print r }' "$1"
}

perf() {
	local s=$1 prog=$2 t0=$SECONDS c bw_c bw_s

	shift 2
	c=$(other "$s")
	pair "$s" tcp_listening 18515 -- \
		"$prog" -d @DEV@ -x @GID@ -F "$@" -- \
		"$prog" -d @DEV@ -x @GID@ -F "$@" @SERVER@
	bw_c=$(bw_result "$tmp/c")
	bw_s=$(bw_result "$tmp/s" "$([[ $bw_c == unmeasured ]] && echo 1)")
	if ((status_s || status_c)) || [[ -z $bw_c || -z $bw_s ]]; then
		show "$c" "$s"
		fail "$prog $*, server $s, client $c: exit status $status_s (server)" \
			"$status_c (client), or no good result line"
	fi
	log "$prog $*, server $s, client $c: $bw_c ($((SECONDS - t0)) s)"
}

rxe_peer_up
gid[rxe]=$(gid_index rxe0 198.51.100.1)
gid[sroce]=$(gid_index sroce_r 198.51.100.2)

for s in sroce rxe; do
	pingpong "$s" ibv_rc_pingpong 4096 500
	pingpong "$s" ibv_ud_pingpong 1024 500
	rping_pair "$s"
	perf "$s" ib_write_bw -n 200
	perf "$s" ib_read_bw -n 200
	perf "$s" ib_send_bw -n 200
	perf "$s" ib_atomic_bw -n 1000
done

# rdma_rxe initiating WRITEs and long READs (up to 512 KiB: 512 packets
# at the veth's 1024-byte MTU) at sroce, every byte checked. rdma_rxe's
# completer WARNs and puts its QP in the error state when an ACK that a
# READ response overtook arrives inside it: without RPS on the veth
# (lib-rxe.sh) this step failed on 6.12 (Documentation/clients.md).
t0=$SECONDS
pair sroce tcp_listening 18515 -- \
	sroce-traffic --server -d @DEV@ -g @GID@ --timeout "$(scaled 100)" -- \
	sroce-traffic --client @SERVER@ -d @DEV@ -g @GID@ --qps 2 --ops 200 \
	--mix write,read --max-size 524288 --one-way --timeout "$(scaled 100)"
if ((status_s || status_c)) || ! grep -Eq \
	'^sroce-traffic: client: OK .* mismatches=0 peer_mismatches=0 ' "$tmp/c"; then
	show rxe sroce
	fail "sroce-traffic, writes and reads from rxe to sroce: exit status" \
		"$status_s (server), $status_c (client)"
fi
log "sroce-traffic, rxe's writes and reads of up to 512 KiB at sroce:" \
	"$(grep -o 'OK .*' "$tmp/c") ($((SECONDS - t0)) s)"

# ibv_rc_pingpong and ib_write_bw, each side as server in turn: after a
# module parameter changed.
rc_and_write_both_ways() {
	local s

	for s in sroce rxe; do
		pingpong "$s" ibv_rc_pingpong 4096 200
		perf "$s" ib_write_bw -n 200
	done
}

icrc=/sys/module/sroce/parameters/icrc
read -r chosen <"$icrc" || fail "no module parameter icrc"
[[ $chosen == lib || $chosen == crypto ]] || fail "icrc reads '$chosen'"
restore[icrc]=$chosen
log "ICRC at load: $chosen ($(dmesg | grep -o 'sroce: ICRC by .*' | tail -n 1))"
for impl in lib crypto; do
	[[ $impl != "$chosen" ]] || continue
	echo "$impl" >"$icrc" || fail "cannot set icrc=$impl"
	[[ $(<"$icrc") == "$impl" ]] || fail "icrc reads $(<"$icrc") after icrc=$impl"
	rc_and_write_both_ways
done
echo "$chosen" >"$icrc" || fail "cannot set icrc=$chosen again"
drops=$(cat /sys/class/infiniband/sroce_r/ports/1/hw_counters/rx_drop_icrc)
((drops == 0)) || fail "sroce_r dropped $drops packets for their ICRC"
log "icrc=lib and icrc=crypto: rxe and sroce agree on every ICRC"

# The engine sroce was not loaded with (module parameter engine): bh
# where the kernel has BH workqueues, refused with EOPNOTSUPP elsewhere.
engine=/sys/module/sroce/parameters/engine
read -r loaded <"$engine" || fail "no module parameter engine"
[[ $loaded == tasklet || $loaded == bh ]] || fail "engine reads '$loaded'"
restore[engine]=$loaded
if echo nonsense >"$engine" 2>/dev/null; then
	fail "engine=nonsense accepted"
fi
if kernel_has_bh_wq; then
	other=bh
	[[ $loaded == tasklet ]] || other=tasklet
	echo "$other" >"$engine" || fail "cannot set engine=$other"
	[[ $(<"$engine") == "$other" ]] || fail "engine reads $(<"$engine") after engine=$other"
	rc_and_write_both_ways
	echo "$loaded" >"$engine" || fail "cannot set engine=$loaded again"
	log "engine=$other (loaded with $loaded): RC and RDMA WRITE both ways"
else
	[[ $loaded == tasklet ]] || fail "engine=$loaded on a kernel without system_bh_wq"
	if err=$(echo bh 2>&1 >"$engine"); then
		fail "engine=bh accepted on a kernel without system_bh_wq"
	fi
	[[ $err == *"not supported"* ]] || fail "engine=bh refused with '$err', not EOPNOTSUPP"
	log "engine=bh refused here (no BH workqueues): ${err##*: }"
fi

# Both in namespaces other than the initial one, where rdma_rxe can be.
if rxe_has_netns; then
	rxe_to_netns
	gid[rxe]=$(gid_index rxe0 198.51.100.1)
	for s in sroce rxe; do
		pingpong "$s" ibv_rc_pingpong 4096 200
		rping_pair "$s"
		perf "$s" ib_write_bw -n 200
	done
	log "rxe0 in netns rxn, sroce_r in rxp: RC, rdma_cm and RDMA WRITE both ways"
else
	log "skipped: rdma_rxe has no sockets of its own in other namespaces" \
		"on this kernel (it has since 7.x): rxe0 stays in the initial one"
fi

kernel_log_clean || fail "the kernel complained"
rm -rf "$tmp"
