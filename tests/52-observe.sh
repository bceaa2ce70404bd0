#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# 52-observe: what `rdma statistic` and `rdma resource show` tell about
# sroce devices.
#
#   netns a: sroce_a on veth_a 192.0.2.1  <==>  netns b: sroce_b on veth_b 192.0.2.2
#
#   - Counters: ibv_rc_pingpong (1000 x 4 KiB each way, path MTU 1024)
#     between b and a; sroce_a's tx_packets and rx_packets (`rdma
#     statistic show link sroce_a/1`, the same as sysfs) rise by at least
#     4000 (4 packets a message), tx_bytes and rx_bytes by at least the
#     4096000 bytes of payload.
#   - Drops by reason: from netns b, UDP datagrams to 192.0.2.1:4791 that
#     are not RoCE: one of 6 bytes (shorter than a BTH) raises
#     rx_drop_header by one; one of 16 bytes with a plausible BTH and a
#     wrong ICRC raises rx_drop_icrc by one (and rx_dropped by two in all).
#   - Resources: with sroce-hold holding 4 PDs, 4 CQs, 4 SRQs, 100 QPs (34
#     in RTS) and 100 MRs on sroce_a, `rdma resource show qp|cq|mr|pd|srq`
#     lists them, and with -dd the driver details (iproute2 shows them
#     with a drv_ prefix): every QP its SQ ring
#     (sq_size, sq_pi, sq_ci) and its engine (engine: the holder's QPs
#     are created with the module parameter engine set to the one sroce
#     was not loaded with, bh or tasklet, where the kernel has BH
#     workqueues, and must all show it; the parameter is set back however
#     the test ends), the RC QPs in RTS their PSNs (next_psn,
#     unacked_psn, expected_psn) and msn, to root only since 2026-11-28
#     (as user nobody, the same command lists the QPs and their rings but
#     none of these), every CQ its
#     ring (ring_size), every MR
#     whether a key change waits for its REG_MR (key_pending, 0
#     here), rights (access) and windows
#     (bound_mws); SRQs their ring where
#     the kernel asks the driver (6.12's RDMA core does, 6.1's does not).
#
# The kernel must not complain.
# timeout: 180
set -e
. "$(dirname "$0")/lib.sh"

holder=
loaded=
cleanup() {
	[[ -z $holder ]] || kill -KILL "$holder" 2>/dev/null || true
	# sroce stays loaded for the tests after this one.
	[[ -z $loaded ]] || echo "$loaded" >/sys/module/sroce/parameters/engine 2>/dev/null || true
	topo_down
}
trap cleanup EXIT

tmp=$(mktemp -d)

# rdma_counter DEV NAME: the same, as `rdma statistic` shows it.
rdma_counter() {
	rdma statistic show link "$1/1" | tr ' ' '\n' |
		awk -v n="$2" 'prev == n { print; exit } { prev = $0 }'
}

# rose_by DEV NAME BEFORE MIN: NAME rose by at least MIN since BEFORE.
rose_by() {
	local now

	now=$(rdma_counter "$1" "$2")
	[[ -n $now ]] || fail "rdma statistic shows no $2 for $1"
	((now - $3 >= $4)) ||
		fail "$1 $2: $3 -> $now, expected a rise of at least $4"
	log "$1 $2: +$((now - $3))"
}

topo_up
gid_a=$(gid_index sroce_a 192.0.2.1)
gid_b=$(gid_index sroce_b 192.0.2.2)

# 1. Traffic counters.
declare -A before
for c in tx_packets rx_packets tx_bytes rx_bytes; do
	before[$c]=$(rdma_counter sroce_a $c)
	[[ ${before[$c]} == "$(counter sroce_a $c)" ]] ||
		fail "rdma statistic and sysfs disagree on sroce_a $c"
done
na ibv_rc_pingpong -d sroce_a -g "$gid_a" -s 4096 -n 1000 >"$tmp/s" 2>&1 &
spid=$!
wait_server 10 "$spid" na ss -Htln "sport = :18515" ||
	fail "ibv_rc_pingpong server: $(cat "$tmp/s")"
nb ibv_rc_pingpong -d sroce_b -g "$gid_b" -s 4096 -n 1000 192.0.2.1 \
	>"$tmp/c" 2>&1 || fail "ibv_rc_pingpong client: $(cat "$tmp/c")"
wait "$spid" || fail "ibv_rc_pingpong server: $(cat "$tmp/s")"
for c in tx_packets rx_packets; do
	rose_by sroce_a $c "${before[$c]}" 4000
done
for c in tx_bytes rx_bytes; do
	rose_by sroce_a $c "${before[$c]}" $((1000 * 4096))
done

# 2. Drops by reason.
for c in rx_drop_header rx_drop_icrc rx_dropped; do
	before[$c]=$(rdma_counter sroce_a $c)
done
nb python3 - <<'PY'
import socket
s = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
s.sendto(b"\x04\x00\xff\xff\x00\x00", ("192.0.2.1", 4791))
# BTH: RC SEND ONLY, default P_Key, QP 0x11, PSN 0; then a wrong ICRC.
s.sendto(bytes.fromhex("0400ffff00000011000000000badc0de"), ("192.0.2.1", 4791))
PY
wait_for 5 test "$(rdma_counter sroce_a rx_dropped)" -ge "$((before[rx_dropped] + 2))" ||
	fail "sroce_a rx_dropped did not rise by 2"
for c in rx_drop_header rx_drop_icrc; do
	now=$(rdma_counter sroce_a $c)
	((now == before[$c] + 1)) ||
		fail "sroce_a $c: ${before[$c]} -> $now, expected +1"
	log "sroce_a $c: +1"
done

# 3. Resources, with driver details. The holder's QPs are created with
# the engine sroce was not loaded with, where the kernel has two.
engine=/sys/module/sroce/parameters/engine
read -r loaded <"$engine" || fail "no module parameter engine"
want=$loaded
if kernel_has_bh_wq; then
	want=bh
	[[ $loaded == tasklet ]] || want=tasklet
	echo "$want" >"$engine" || fail "cannot set engine=$want"
fi
na sroce-hold -d sroce_a -g "$gid_a" -r 192.0.2.2 -t 120 >"$tmp/h" 2>&1 &
holder=$!
wait_for 30 grep -q '^ready ' "$tmp/h" || fail "sroce-hold: $(cat "$tmp/h")"
log "holder: $(head -n 1 "$tmp/h")"
echo "$loaded" >"$engine" || fail "cannot set engine=$loaded again"

for k in "pd 4" "cq 4" "qp 100" "mr 100" "srq 4"; do
	read -r kind n <<<"$k"
	got=$(rdma resource show "$kind" | grep -w "sroce_a\(/1\)\?" |
		grep -c "comm sroce-hold" || true)
	((got == n)) || fail "rdma resource show $kind: $got of sroce-hold's, expected $n"
done
log "rdma resource show: sroce-hold's 4 PDs, 4 CQs, 100 QPs, 100 MRs, 4 SRQs"

rdma -dd resource show qp | grep -w sroce_a >"$tmp/qp"
n=$(grep "comm sroce-hold" "$tmp/qp" | grep -c "drv_sq_size [0-9]* drv_sq_pi [0-9]* drv_sq_ci [0-9]*" || true)
((n == 100)) || fail "QP driver details: $n of 100 QPs show their SQ ring: $(head -n 3 "$tmp/qp")"
n=$(grep "comm sroce-hold" "$tmp/qp" | grep -c "drv_engine $want\b" || true)
((n == 100)) || fail "QP driver details: $n of 100 QPs show drv_engine $want (engine=$want when they were created)"
rc=$(grep "comm sroce-hold" "$tmp/qp" | grep -c "type RC state RTS" || true)
n=$(grep "comm sroce-hold" "$tmp/qp" | grep "type RC state RTS" |
	grep -c "drv_next_psn 0x[0-9a-f]* drv_unacked_psn 0x[0-9a-f]* drv_expected_psn" || true)
((rc > 0 && n == rc)) || fail "QP driver details: $n of $rc RC QPs in RTS show their PSNs"
# A user without CAP_NET_ADMIN sees the QPs and their rings, not their
# live PSNs, with which any process of the host could inject packets
# into another's connection.
setpriv --reuid=65534 --regid=65534 --clear-groups -- \
	rdma -dd resource show qp 2>&1 | grep -w sroce_a >"$tmp/qp-nobody" || true
n=$(grep -c "drv_sq_size" "$tmp/qp-nobody" || true)
((n >= 100)) || fail "as nobody, rdma -dd resource show qp lists $n QPs with driver details: $(head -n 2 "$tmp/qp-nobody")"
n=$(grep -c "drv_next_psn\|drv_unacked_psn\|drv_expected_psn\|drv_msn" "$tmp/qp-nobody" || true)
((n == 0)) || fail "as nobody, $n QPs show their live PSNs: $(grep -m 1 drv_next_psn "$tmp/qp-nobody")"
rdma -dd resource show cq | grep -w sroce_a >"$tmp/cq"
n=$(grep "comm sroce-hold" "$tmp/cq" | grep -c "drv_ring_size [0-9]*" || true)
((n == 4)) || fail "CQ driver details: $n of 4 CQs show their ring"
rdma -dd resource show mr | grep -w sroce_a >"$tmp/mr"
n=$(grep "comm sroce-hold" "$tmp/mr" | grep "drv_access 0x" | grep -c "drv_bound_mws" || true)
((n == 100)) || fail "MR driver details: $n of 100 MRs show rights and windows"
# drv_key_pending: an MR never fast-registered has no key change waiting.
n=$(grep "comm sroce-hold" "$tmp/mr" | grep -c "drv_key_pending 0" || true)
((n == 100)) || fail "MR driver details: $n of 100 MRs show drv_key_pending 0: $(head -n 2 "$tmp/mr")"
rdma -dd resource show srq | grep -w sroce_a >"$tmp/srq"
n=$(grep "comm sroce-hold" "$tmp/srq" | grep -c "drv_ring_size [0-9]*" || true)
# Where the RDMA core asks the driver about SRQs, every SRQ has them.
((n == 0 || n == 4)) || fail "SRQ driver details: $n of 4 SRQs show their ring"
log "driver details: QPs, CQs, MRs; SRQs $n of 4 ($(grep -c . "$tmp/srq") lines)"
log "  e.g. $(grep "comm sroce-hold" "$tmp/qp" | grep "state RTS" | head -n 1)"
kill -KILL "$holder"
wait "$holder" 2>/dev/null || true
holder=

kernel_log_clean || fail "the kernel complained"
rm -rf "$tmp"
