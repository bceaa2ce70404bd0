#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# guest-loopback.sh ROUNDS MTU QUICK ITERS COMMIT PARAMS
#
# Guest side of scripts/bench: what its one VM runs (vm-run ... --
# scripts/bench.d/guest-loopback.sh ...), from the repository the VM
# shares read-only. Sets up rdma_rxe and sroce over veths (the picture in
# scripts/bench), then runs every figure (loopback.sh) in every
# configuration, round by round, and the size sweep; prints "@" result
# lines and "bench:" progress lines on the console, and "@end N" last.
# QUICK: 1 for --quick; ITERS: --iters or empty; PARAMS: --param or "-".
# scripts/bench-profile and scripts/bench-clients source this file for
# guest_setup and guest_teardown.
set -euo pipefail

bench_d=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
top=$(cd "$bench_d/../.." && pwd)
# shellcheck source=scripts/bench.d/guest-lib.sh
. "$bench_d/guest-lib.sh"
# shellcheck source=scripts/bench.d/loopback.sh
. "$bench_d/loopback.sh"

guest_setup() {
	local mtu=$1 d

	sroce_load
	set_params
	modprobe rdma_rxe || fail "cannot load rdma_rxe"
	ip netns add park || fail "cannot add netns park"
	ip netns add s || fail "cannot add netns s"
	ip netns add t || fail "cannot add netns t"
	ip link add veth_r mtu "$mtu" type veth peer name veth_rp mtu "$mtu" netns park ||
		fail "cannot add rxe's veth pair"
	ip link add veth_s mtu "$mtu" netns s type veth peer name veth_t mtu "$mtu" netns t ||
		fail "cannot add sroce's veth pair"
	ip -batch - <<-EOF || fail "cannot configure veth_r"
		addr add 198.51.100.1/24 dev veth_r
		link set veth_r up
	EOF
	ip -n park link set veth_rp up || fail "cannot configure veth_rp"
	ip -n s -batch - <<-EOF || fail "cannot configure veth_s"
		addr add 192.0.2.1/24 dev veth_s
		link set lo up
		link set veth_s up
	EOF
	ip -n t -batch - <<-EOF || fail "cannot configure veth_t"
		addr add 192.0.2.2/24 dev veth_t
		link set lo up
		link set veth_t up
	EOF
	rdma link add rxe0 type rxe netdev veth_r || fail "rdma link add rxe0 failed"
	ip netns exec s rdma link add sroce0 type sroce netdev veth_s ||
		fail "rdma link add sroce0 failed"
	ip netns exec t rdma link add sroce1 type sroce netdev veth_t ||
		fail "rdma link add sroce1 failed"
	for d in rxe0 sroce0 sroce1; do
		wait_for 10 _port_active "$d"
	done
	wait_for 10 _has_gids rxe0 198.51.100.1
	wait_for 10 _has_gids sroce0 192.0.2.1
	wait_for 10 _has_gids sroce1 192.0.2.2
	gid_of[rxe0]=$(gid_index rxe0 198.51.100.1)
	gid_of[sroce0]=$(gid_index sroce0 192.0.2.1)
	gid_of[sroce1]=$(gid_index sroce1 192.0.2.2)
}

guest_teardown() {
	ip netns exec t rdma link del sroce1 || true
	ip netns exec s rdma link del sroce0 || true
	rdma link del rxe0 || true
	ip link del veth_r 2>/dev/null || true
	ip netns del t || true
	ip netns del s || true
	ip netns del park || true
}

# emit_counter_deltas FIG CONFIG BEFORE: a "@ctr" line for each counter
# that moved since BEFORE (the output of counters).
emit_counter_deltas() {
	local dev name delta

	while read -r dev name delta; do
		[[ -n $name ]] && emit "ctr $1 $2 $dev $name $delta"
	done < <(counter_deltas "$3" "$(counters "$2")")
}

# One figure in one configuration in round R: "@run R FIG CONFIG VALUE
# [P99]" and its "@ctr" lines.
run_figure() {
	local round=$1 fig=$2 tool=$3 size=$4 unit=$5 config=$6 n before
	local -a f

	n=$(iters_for "$fig")
	before=$(counters "$config")
	if ! measure "$config" "$tool" -s "$size" -n "$n"; then
		emit_counter_deltas "$fig" "$config" "$before"
		run_failed "$round" "$fig" "$config" "$tool failed"
		return 0
	fi
	emit_counter_deltas "$fig" "$config" "$before"
	read -ra f <<<"$(result_line)"
	emit_run "$round" "$fig" "$config" "$unit" "${f[@]}" || true
}

# The chart's data: ib_write_bw per message size in every configuration.
sweep() {
	local size n i=0 config before ok

	for size in "${sweep_sizes[@]}"; do
		n=$(sweep_n "$size")
		for config in $(order $((++i))); do
			before=$(counters "$config")
			ok=1
			measure "$config" ib_write_bw -s "$size" -n "$n" || ok=0
			emit_counter_deltas "sweep_$size" "$config" "$before"
			sweep_emit "$config" "$size" "$ok"
		done
	done
}

loopback_main() {
	local rounds=$1 mtu=$2 round entry config name tool size unit

	quick=$3 iters=${4:-} params=${6:--}
	emit "info commit ${5:-?}"
	[[ $params == - ]] || emit "info sroce_params $params"
	# shellcheck source=tests/lib.sh
	. "$top/tests/lib.sh"
	work=$(mktemp -d)
	sweep_setup $((64 << 20)) 20000
	pin_build
	guest_setup "$mtu"
	emit "info kernel $KREL"
	emit "info mtu $mtu"
	emit "info rounds $rounds"
	report_setup
	for ((round = 1; round <= rounds; round++)); do
		for entry in "${figures[@]}"; do
			read -r name tool size unit <<<"$entry"
			for config in $(order "$round"); do
				run_figure "$round" "$name" "$tool" "$size" "$unit" "$config"
			done
		done
	done
	sweep
	printf '@end %d\n' "$nrows"
	guest_teardown
	rm -rf "$work"
}

[[ ${BASH_SOURCE[0]} != "$0" ]] || loopback_main "$@"
