#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# 41-rping: librdmacm's example programs run between two sroce devices.
#
#   netns a: sroce_a on veth_a 192.0.2.1  <==>  netns b: sroce_b on veth_b 192.0.2.2
#            servers (rdma_cm listeners)           clients
#
# With lib.sh's topology, connections made by the RDMA CM (address and
# route resolution, the CM's MADs over the QP1 of sroce):
#
#   - rping -V: 1000 round trips of 2500 bytes (SEND of the buffer's
#     address, the server's RDMA READ of the client's buffer, SEND,
#     RDMA WRITE back), the client comparing every byte. rping exits 0
#     even after a failure once the peer has disconnected, so both sides
#     must also print all 1000 pings ("ping data: rdma-ping-999: ..." last)
#     and the client no "data mismatch";
#   - ucmatose (RC, rdma_connect/rdma_accept, 2 connections, 50 SENDs of
#     1000 bytes each way) and udaddy (UD, rdma_resolve_addr to an AH,
#     2 connections, 50 SENDs each way): "return status 0" on both sides.
#
# Servers are ready once `rdma resource show cm_id` lists their LISTEN
# cm_id. The kernel must not complain.
# timeout: 180
set -e
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/lib-cm.sh"

trap topo_down EXIT

tmp=$(mktemp -d)

show() {
	cm_show "$tmp"
}

# run_pair PORT SERVER-CMD... -- CLIENT-CMD...: see cm_pair in lib-cm.sh.
run_pair() {
	cm_pair "$tmp" "$@"
}

topo_up

t0=$SECONDS
run_pair 7174 rping -s -a 192.0.2.1 -V -v -C 1000 -S 2500 -- \
	rping -c -a 192.0.2.1 -V -v -C 1000 -S 2500
pings_a=$(grep -c '^server ping data: rdma-ping-' "$tmp/a" || true)
pings_b=$(grep -c '^ping data: rdma-ping-' "$tmp/b" || true)
if ((status_a || status_b || pings_a != 1000 || pings_b != 1000)) ||
	grep -q 'data mismatch' "$tmp/b" ||
	[[ $(grep -o '^ping data: rdma-ping-[0-9]*' "$tmp/b" | tail -n 1) != *-999 ]]; then
	show | grep -v 'ping data: \|^  [a-zA-Z]*: [^ ]*$' || true
	fail "rping -V: exit status $status_a (server) $status_b (client)," \
		"$pings_a and $pings_b pings of 1000"
fi
log "rping -V -C 1000 -S 2500: $pings_b pings verified ($((SECONDS - t0)) s)"

t0=$SECONDS
cm_ucmatose "$tmp" 192.0.2.1
log "ucmatose -c 2 -C 50 -S 1000: return status 0 on both sides ($((SECONDS - t0)) s)"

t0=$SECONDS
run_pair 7174 udaddy -b 192.0.2.1 -c 2 -C 50 -- udaddy -s 192.0.2.1 -c 2 -C 50
if ((status_a || status_b)) || ! grep -q '^return status 0$' "$tmp/a" ||
	! grep -q '^return status 0$' "$tmp/b"; then
	show
	fail "udaddy: exit status $status_a (server) $status_b (client)"
fi
log "udaddy -c 2 -C 50: return status 0 on both sides ($((SECONDS - t0)) s)"

kernel_log_clean || fail "the kernel complained"
rm -rf "$tmp"
