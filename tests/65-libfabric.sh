#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# 65-libfabric: libfabric's verbs provider runs on sroce as installed
# (Documentation/clients.md).
#
#   netns a: sroce_a on veth_a 192.0.2.1   fi_pingpong server
#   netns b: sroce_b on veth_b 192.0.2.2   fi_pingpong client
#
# fi_pingpong (libfabric-bin) with data integrity checks (-c), every size
# from 64 B to 1 MiB (the last 10 iterations each), over:
#
#   - RDM endpoints, "verbs;ofi_rxm", messages and tagged messages: rxm
#     opens a verbs CQ of (rx_size + tx_size) x FI_UNIVERSE_SIZE entries,
#     (128 + 128) x 1024 = 262144 by default, which failed fi_enable()
#     with EINVAL while sroce's max_cqe was 65535 (rdma_rxe's is 32767);
#   - MSG endpoints, verbs (rdma_cm);
#   - DGRAM endpoints, verbs (UD; the domain is sroce_a-dgram), 64 B to
#     1 KiB (the MTU less the GRH area, as the provider reports);
#   - RDM and MSG again with FI_VERBS_USE_ODP=1, under which the verbs
#     provider registers its memory on demand (IBV_ACCESS_ON_DEMAND,
#     Documentation/datapath.md) when the device reports ODP for RC: both
#     devices' odp_mrs counters must grow, so that a provider that quietly
#     kept pinning fails.
#
# Each run must exit 0 on both sides and print its last size's row. Skips if
# fi_pingpong is missing (scripts/setup installs libfabric-bin). Fails
# on any kernel report. About 15 s.
#
# What it would have caught:
#
# A max_cqe too small for rxm's CQ of (128 + 128) x 1024 entries: with
# 65535, and with 262143, both RDM runs failed in fi_enable() with EINVAL
# (22), as they do on rdma_rxe.
# timeout: 300
set -e
. "$(dirname "$0")/lib.sh"

tmp=
status=0

trap topo_tmp_down EXIT

command -v fi_pingpong >/dev/null || skip "no fi_pingpong (scripts/setup installs libfabric-bin)"
tmp=$(mktemp -d)
log "$(fi_info --version | head -n 2 | tr '\n' ' ')"
topo_up

# pingpong NAME SUFFIX LAST OPTION...: server on sroce_a$SUFFIX, client
# on sroce_b$SUFFIX; LAST is the row of the largest size ("1m").
pingpong() {
	local name=$1 suffix=$2 last=$3

	shift 3
	if ! ns_pair 47592 "$tmp/s" "$tmp/c" \
		timeout "$(scaled 120)" fi_pingpong "$@" -c -d "sroce_a$suffix" -- \
		timeout "$(scaled 120)" fi_pingpong "$@" -c -d "sroce_b$suffix" 192.0.2.1; then
		log "FAIL: fi_pingpong $name: the server exited before it listened"
		status=1
		return 0
	fi
	if ((pair_st_s || pair_st_c)) || ! grep -q "^$last " "$tmp/s" || ! grep -q "^$last " "$tmp/c"; then
		sed 's/^/  server: /' "$tmp/s" | tail -n 20
		sed 's/^/  client: /' "$tmp/c" | tail -n 20
		log "FAIL: fi_pingpong $name: exit status $pair_st_s (server) $pair_st_c (client)"
		status=1
		return 0
	fi
	log "fi_pingpong $name: $(grep "^$last " "$tmp/c" | tr -s ' ')"
}

pingpong "rdm msg (verbs;ofi_rxm)" "" 1m -p "verbs;ofi_rxm" -e rdm -m msg
pingpong "rdm tagged (verbs;ofi_rxm)" "" 1m -p "verbs;ofi_rxm" -e rdm -m tagged
pingpong "msg (verbs)" "" 1m -p verbs -e msg
pingpong "dgram (verbs)" "-dgram" 1k -p verbs -e dgram

declare -A odp0
for d in sroce_a sroce_b; do
	odp0[$d]=$(counter "$d" odp_mrs)
done
export FI_VERBS_USE_ODP=1
pingpong "rdm msg (verbs;ofi_rxm), ODP" "" 1m -p "verbs;ofi_rxm" -e rdm -m msg
pingpong "msg (verbs), ODP" "" 1m -p verbs -e msg
unset FI_VERBS_USE_ODP
for d in sroce_a sroce_b; do
	n=$(($(counter "$d" odp_mrs) - odp0[$d]))
	log "$d odp_mrs: +$n"
	((n > 0)) || { log "FAIL: FI_VERBS_USE_ODP=1 registered no ODP MR on $d"; status=1; }
done

kernel_log_clean || { log "the kernel complained"; status=1; }
((status == 0)) || fail "libfabric failed (above)"
