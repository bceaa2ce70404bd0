#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# 50-xrc: XRC between two sroce devices, with libibverbs' example.
#
#   netns a: sroce_a on veth_a 192.0.2.1  <==>  netns b: sroce_b on veth_b 192.0.2.2
#            ibv_xsrq_pingpong server               two clients at once
#            (XRC domain, one XRC SRQ,              (each: XRC domain, XRC
#             a send and a target QP per client)     SRQ, send and target QP)
#
# Every message travels from an XRC send QP to the peer's XRC target QP
# and lands in the XRC SRQ its WQE names; its completion comes from that
# SRQ's CQ and names the target QP (the example looks the QP up by it).
# Run with polling, and with -e (sleeping on completion events), 50
# messages of 4 KiB per client each way. Each process must exit 0 and
# print "success"; a completion with an error status or an unknown QP
# makes it print an error instead. The kernel must not complain.
# timeout: 180
set -e
. "$(dirname "$0")/lib.sh"

trap topo_down EXIT

tmp=$(mktemp -d)

# xsrq [OPTION...]: a server in a for two clients, the clients in b.
xsrq() {
	local pid c status=0 t0=$SECONDS what="ibv_xsrq_pingpong -c 2 -n 50 $*"
	local -a cpid

	na ibv_xsrq_pingpong -d sroce_a -g "$gid_a" -c 2 -n 50 "$@" \
		>"$tmp/s" 2>&1 &
	pid=$!
	if ! wait_server 10 "$pid" ns_listening a 18515; then
		sed 's/^/  server: /' "$tmp/s"
		fail "$what: the server exited before it listened"
	fi
	for c in 1 2; do
		nb timeout "$(scaled 120)" ibv_xsrq_pingpong -d sroce_b -g "$gid_b" -n 50 \
			"$@" 192.0.2.1 >"$tmp/c$c" 2>&1 &
		cpid[c]=$!
	done
	for c in 1 2; do
		wait "${cpid[c]}" || status=$?
	done
	if ((status)); then
		kill "$pid" 2>/dev/null || true
	fi
	wait "$pid" || status=$?
	for c in s c1 c2; do
		if ((status)) || ! grep -qx success "$tmp/$c"; then
			for f in s c1 c2; do
				sed "s/^/  $f: /" "$tmp/$f"
			done
			fail "$what: exit status $status, or no success from $c"
		fi
	done
	log "$what: server and both clients succeeded ($((SECONDS - t0)) s)"
}

topo_up
gid_a=$(gid_index sroce_a 192.0.2.1)
gid_b=$(gid_index sroce_b 192.0.2.2)

xsrq
xsrq -e

kernel_log_clean || fail "the kernel complained"
rm -rf "$tmp"
