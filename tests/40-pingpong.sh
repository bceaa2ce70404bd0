#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# 40-pingpong: libibverbs' example programs run between two sroce devices.
#
#   netns a: sroce_a on veth_a 192.0.2.1  <==>  netns b: sroce_b on veth_b 192.0.2.2
#            server (listens on TCP 18515)          client
#
# With lib.sh's topology, ibverbs-utils' pingpongs exchange messages
# between the namespaces, server in a, client in b:
#
#   - ibv_rc_pingpong with 1 B, 4 KiB and 64 KiB messages (64 path-MTU
#     packets each), and with -e (sleeping on completion events);
#   - ibv_rc_pingpong -o (its buffer registered on demand, ODP) at 4 KiB,
#     and -o -P (prefetched with ibv_advise_mr) at 64 KiB;
#   - ibv_uc_pingpong (4 KiB), ibv_ud_pingpong (1024 B: a full path MTU),
#     ibv_srq_pingpong (16 QPs on one SRQ).
#
# Each run must end on both sides with exit status 0, the line
# "<iters> iters in <t> seconds", the matching byte count, and no
# "invalid data" from -c (which checks one byte per page). The kernel
# must not complain.
# runs-on: every
# timeout: 180
set -e
. "$(dirname "$0")/lib.sh"

trap topo_down EXIT

tmp=$(mktemp -d)

# pingpong PROGRAM ITERS SIZE [OPTION...]: server in a, client in b.
pingpong() {
	local prog=$1 iters=$2 size=$3 pid side status=0 t0=$SECONDS
	local what="$prog -s $size -n $iters${4:+ ${*:4}}"

	shift 3
	na "$prog" -d sroce_a -g "$gid_a" -s "$size" -n "$iters" -c "$@" \
		>"$tmp/a" 2>&1 &
	pid=$!
	if ! wait_server 10 "$pid" ns_listening a 18515; then
		sed 's/^/  server: /' "$tmp/a"
		fail "$what: the server exited before it listened"
	fi
	nb timeout "$(scaled 120)" "$prog" -d sroce_b -g "$gid_b" -s "$size" -n "$iters" -c "$@" \
		192.0.2.1 >"$tmp/b" 2>&1 || status=$?
	if ((status)); then
		kill "$pid" 2>/dev/null || true
		wait "$pid" 2>/dev/null || true
		sed 's/^/  client: /' "$tmp/b"
		sed 's/^/  server: /' "$tmp/a"
		fail "$what: client exit status $status"
	fi
	wait "$pid" || status=$?
	for side in a b; do
		if ((status)) ||
			! grep -q "^$((size * iters * 2)) bytes in " "$tmp/$side" ||
			! grep -q "^$iters iters in [0-9.]* seconds" "$tmp/$side" ||
			grep -q "invalid data" "$tmp/$side"; then
			sed 's/^/  client: /' "$tmp/b"
			sed 's/^/  server: /' "$tmp/a"
			fail "$what: server exit status $status, or a bad result in netns $side"
		fi
	done
	log "$what: $(grep ' iters in ' "$tmp/b") ($((SECONDS - t0)) s)"
}

topo_up
gid_a=$(gid_index sroce_a 192.0.2.1)
gid_b=$(gid_index sroce_b 192.0.2.2)

pingpong ibv_rc_pingpong 1000 1
pingpong ibv_rc_pingpong 1000 4096
pingpong ibv_rc_pingpong 100 65536
pingpong ibv_rc_pingpong 1000 4096 -e
pingpong ibv_rc_pingpong 1000 4096 -o
pingpong ibv_rc_pingpong 100 65536 -o -P
pingpong ibv_uc_pingpong 1000 4096
pingpong ibv_ud_pingpong 1000 1024
pingpong ibv_srq_pingpong 100 4096 -q 16

kernel_log_clean || fail "the kernel complained"
rm -rf "$tmp"
