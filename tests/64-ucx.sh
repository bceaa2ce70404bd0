#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# 64-ucx: UCX and Open MPI run on sroce as installed, with no workaround
# in their environment (Documentation/clients.md).
#
#   netns a: sroce_a on veth_a 192.0.2.1, 2001:db8::1   (servers)
#   netns b: sroce_b on veth_b 192.0.2.2, 2001:db8::2   (clients)
#
# 1. userspace/tests/ucp-test.c (built here against Debian's libucx-dev):
#    UCP tag messages of 1 B to 4 MiB (eager and rendezvous) echoed and
#    checked byte for byte on both sides, streams of the same sizes, a
#    4 MiB GET and PUT of the peer's memory, checked. Each process sees
#    only its own device (UCX_NET_DEVICES), over UCX_TLS=ud_verbs (UCP
#    entirely over UD: the datagrams UCX drops unless their GRH area and
#    wc.sl say they are for it), rc_verbs and ud_verbs (UCP needs UD to
#    wire RC up: rc_verbs alone is "no auxiliary transport"), and with no
#    UCX_TLS (UCX's own choice, shared memory included); over IPv4 and,
#    for UD, over IPv6 (UCX_IB_GID_INDEX). The UD and RC runs must move
#    their data through sroce: sroce_a's rx_bytes must grow by at least
#    the 4 MiB the client PUTs.
# 2. ucx_perftest: UCT ud_verbs am_lat and am_bw, rc_verbs put_bw, get,
#    fadd and cswap on one device (UCT tests use the device the client
#    names on both sides); UCP tag_bw of 1 MiB and 4 MiB, ucp_get and
#    stream_bw across the veth over UD. Each must exit 0 and print its
#    final figures.
# 3. Open MPI 4.1 over pml ucx: userspace/tests/mpi-test.c, 2 ranks,
#    messages of 1 B to 4 MiB echoed and checked, an MPI_Sendrecv and an
#    MPI_Allreduce, over UD, over RC, and with UCX's own choice. The ranks
#    run in the initial namespace (Open MPI's launcher talks to them over
#    its loopback), one on each device: each device's QPs are routed in
#    its netdev's namespace whoever uses it. Open MPI accepts UCX only
#    on devices whose driver matches pml_ucx_devices ("mlx*" by default);
#    a software device has no driver in sysfs, so this is given as
#    "any": Open MPI's policy, not a workaround for sroce (the same holds
#    for rdma_rxe).
#
# Skips if UCX, libucx-dev, Open MPI or mpicc is missing (scripts/setup
# installs them). Fails on any failed check or kernel report. About 50 s.
#
# What it would have caught:
#
# wc.sl 0 on UD receives: UCX 1.13 then looks for its address in the
# wrong bytes of the GRH area and drops every IPv4 datagram. Run with
# libsroce reporting 0 (as before), every IPv4 UCX run and the Open MPI
# runs over UD and over RC failed (UCX's timeout abort, 134); IPv6, and
# Open MPI's run on shared memory, passed.
# timeout: 900
set -e
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/lib-traffic.sh"

tmp=
status=0

trap topo_tmp_down EXIT

for cmd in ucx_perftest ucx_info mpirun mpicc cc; do
	command -v "$cmd" >/dev/null || skip "no $cmd (scripts/setup installs UCX and Open MPI)"
done
echo '#include <ucp/api/ucp.h>' | cc -E - >/dev/null 2>&1 ||
	skip "no ucp/api/ucp.h (scripts/setup installs libucx-dev)"
tmp=$(mktemp -d)
cc -O2 -Wall -Werror "$SROCE_TOP/userspace/tests/ucp-test.c" -o "$tmp/ucp-test" \
	-lucp -lucs || fail "cannot build ucp-test"
mpicc -O2 -Wall -Werror "$SROCE_TOP/userspace/tests/mpi-test.c" -o "$tmp/mpi-test" ||
	fail "cannot build mpi-test"
log "$(ucx_info -v | head -n 1)"
log "$(mpirun --version | head -n 1)"

topo_up

# ucp_run NAME IP GID_A GID_B ENV...: ucp-test between the namespaces,
# server in a, client in b, each on its own device; ENV (VAR=VALUE) for
# both.
ucp_run() {
	local name=$1 ip=$2 gid_a=$3 gid_b=$4 rx0 rx1

	shift 4
	rx0=$(counter sroce_a rx_bytes)
	if ! ns_pair 18520 "$tmp/s" "$tmp/c" \
		env UCX_NET_DEVICES=sroce_a:1 UCX_IB_GID_INDEX="$gid_a" "$@" \
		timeout "$(scaled 120)" "$tmp/ucp-test" --server -- \
		env UCX_NET_DEVICES=sroce_b:1 UCX_IB_GID_INDEX="$gid_b" "$@" \
		timeout "$(scaled 120)" "$tmp/ucp-test" --client "$ip"; then
		log "FAIL: ucp-test $name: the server exited before it listened"
		status=1
		return 0
	fi
	rx1=$(counter sroce_a rx_bytes)
	grep -h '^FAIL' "$tmp/s" "$tmp/c" | sed 's/^/  /' || true
	if ((pair_st_s || pair_st_c)) || ! grep -q '^21 passed, 0 failed$' "$tmp/s" ||
		! grep -q '^11 passed, 0 failed$' "$tmp/c"; then
		sed 's/^/  server: /' "$tmp/s" | grep -v '^  server: ok' | tail -n 20
		sed 's/^/  client: /' "$tmp/c" | grep -v '^  client: ok' | tail -n 20
		log "FAIL: ucp-test $name: exit status $pair_st_s (server) $pair_st_c (client)"
		status=1
		return 0
	fi
	log "ucp-test $name: 32 checks passed; sroce_a received $((rx1 - rx0)) bytes"
	if [[ $name != *default* ]] && ((rx1 - rx0 < 4 << 20)); then
		log "FAIL: ucp-test $name: the data did not go through sroce"
		status=1
	fi
}

gid4_a=$(gid_index sroce_a 192.0.2.1)
gid4_b=$(gid_index sroce_b 192.0.2.2)
gid6_a=$(gid_index sroce_a 2001:db8::1)
gid6_b=$(gid_index sroce_b 2001:db8::2)

log "=== ucp-test"
ucp_run "UD IPv4" 192.0.2.1 "$gid4_a" "$gid4_b" UCX_TLS=ud_verbs
ucp_run "UD IPv6" 2001:db8::1 "$gid6_a" "$gid6_b" UCX_TLS=ud_verbs
ucp_run "RC+UD IPv4" 192.0.2.1 "$gid4_a" "$gid4_b" UCX_TLS=rc_verbs,ud_verbs
ucp_run "default IPv4" 192.0.2.1 "$gid4_a" "$gid4_b"

# perftest NAME SERVER_ENV CLIENT_ARGS...: ucx_perftest, server in a.
perftest() {
	local name=$1 senv=$2

	shift 2
	# shellcheck disable=SC2086 # $senv is VAR=VALUE words
	if ! ns_pair 18521 "$tmp/ps" "$tmp/pc" \
		env $senv timeout "$(scaled 120)" ucx_perftest -p 18521 -- \
		timeout "$(scaled 120)" ucx_perftest 192.0.2.1 -p 18521 "$@"; then
		log "FAIL: ucx_perftest $name: the server exited before it listened"
		status=1
		return 0
	fi
	if ((pair_st_s || pair_st_c)) || ! grep -Eq '^ *Final: ' "$tmp/pc"; then
		sed 's/^/  client: /' "$tmp/pc" | tail -n 20
		sed 's/^/  server: /' "$tmp/ps" | tail -n 20
		log "FAIL: ucx_perftest $name: exit status $pair_st_s (server) $pair_st_c (client)"
		status=1
		return 0
	fi
	log "ucx_perftest $name: $(grep -E '^ *Final: ' "$tmp/pc" | tr -s ' ')"
}

log "=== ucx_perftest"
perftest "UCT ud_verbs am_lat" "" -t am_lat -x ud_verbs -d sroce_b:1 -n 2000
perftest "UCT ud_verbs am_bw" "" -t am_bw -x ud_verbs -d sroce_b:1 -D bcopy -s 1000 -n 2000
perftest "UCT rc_verbs put_bw" "" -t put_bw -x rc_verbs -d sroce_b:1 -D zcopy -s 65536 -n 500
perftest "UCT rc_verbs get" "" -t get -x rc_verbs -d sroce_b:1 -D zcopy -s 65536 -n 500
perftest "UCT rc_verbs fadd" "" -t fadd -x rc_verbs -d sroce_b:1 -n 500
perftest "UCT rc_verbs cswap" "" -t cswap -x rc_verbs -d sroce_b:1 -n 500
export UCX_TLS=ud_verbs UCX_NET_DEVICES=sroce_b:1
ucp_senv="UCX_TLS=ud_verbs UCX_NET_DEVICES=sroce_a:1"
perftest "UCP tag_bw 1 MiB over UD" "$ucp_senv" -t tag_bw -s 1048576 -n 20
perftest "UCP tag_bw 4 MiB over UD" "$ucp_senv" -t tag_bw -s 4194304 -n 10
perftest "UCP ucp_get 1 MiB over UD" "$ucp_senv" -t ucp_get -s 1048576 -n 20
perftest "UCP stream_bw 64 KiB over UD" "$ucp_senv" -t stream_bw -s 65536 -n 200
unset UCX_TLS UCX_NET_DEVICES

# mpi_run NAME ENV...: mpi-test, rank 0 on sroce_a, rank 1 on sroce_b.
mpi_run() {
	local name=$1 st=0 e
	local -a xs=()

	shift
	for e in "$@"; do
		xs+=(-x "$e")
	done
	timeout "$(scaled 180)" mpirun --allow-run-as-root --oversubscribe -np 2 \
		--mca plm isolated --mca pml ucx --mca pml_ucx_devices any \
		"${xs[@]}" "$tmp/rank" "$tmp/mpi-test" >"$tmp/m" 2>&1 || st=$?
	grep '^FAIL' "$tmp/m" | sed 's/^/  /' || true
	if ((st)) || ! grep -q '^24 passed, 0 failed$' "$tmp/m"; then
		grep -v '^ok' "$tmp/m" | tail -n 30 | sed 's/^/  /'
		log "FAIL: mpi-test $name: exit status $st"
		status=1
		return 0
	fi
	log "mpi-test $name: 24 checks passed"
}

cat >"$tmp/rank" <<EOF
#!/bin/bash
# One device per rank, with its IPv4 GID.
if [[ \${OMPI_COMM_WORLD_RANK:-0} == 0 ]]; then
	export UCX_NET_DEVICES=sroce_a:1 UCX_IB_GID_INDEX=$gid4_a
else
	export UCX_NET_DEVICES=sroce_b:1 UCX_IB_GID_INDEX=$gid4_b
fi
exec "\$@"
EOF
chmod +x "$tmp/rank"

log "=== Open MPI"
mpi_run "over UD" UCX_TLS=ud_verbs,self
mpi_run "over RC" UCX_TLS=rc_verbs,ud_verbs,self
mpi_run "UCX's choice"

kernel_log_clean || { log "the kernel complained"; status=1; }
((status == 0)) || fail "UCX or Open MPI failed (above)"
