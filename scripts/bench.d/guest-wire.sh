#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# guest-wire.sh VM ROUNDS MTU QUICK ITERS COMMIT FIGURES PARAMS PROF_HZ SWAP
# guest-wire.sh op OP ARGS...
#
# Guest side of scripts/bench-wire: what each of its two VMs runs
# (vm-run ... -- scripts/bench.d/guest-wire.sh 1|2 ...), from the
# repository the VMs share read-only. Both name their NICs by MAC and set
# up rdma_rxe and sroce on them (the picture in scripts/bench-wire). VM 1
# then serves VM 2's requests on the control link: control-server.py runs
# "guest-wire.sh op ..." for each (guest-wire-op.sh). VM 2 drives the
# schedule: every figure (wire.sh) in every configuration, round by
# round, the links for reference, and the size sweep, each run's server
# in VM 1 where the configuration says so; it prints "@" result lines,
# "bench:" progress lines (and "bench: mark" lines for the host's
# samples) on its console, and "@end N" last. QUICK: 1 for --quick;
# ITERS: --iters or empty; FIGURES, PARAMS: --figures, --param or "-";
# PROF_HZ: perf's rate with --profile, else 0; SWAP: 1 for --swap-links.
set -euo pipefail

bench_d=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
top=$(cd "$bench_d/../.." && pwd)
# shellcheck source=scripts/bench.d/guest-lib.sh
. "$bench_d/guest-lib.sh"
# shellcheck source=scripts/bench.d/guest-perf.sh
. "$bench_d/guest-perf.sh"
# shellcheck source=scripts/bench.d/wire.sh
. "$bench_d/wire.sh"

# ------------------------------------------------------------------------
# Both VMs: the NICs and the drivers.
# ------------------------------------------------------------------------

# The NIC whose MAC is $1.
nic_of_mac() {
	local d mac

	for d in /sys/class/net/*; do
		read -r mac <"$d/address" 2>/dev/null || continue
		[[ $mac == "$1" ]] && { echo "${d##*/}"; return 0; }
	done
	return 1
}

# _wire_nics VM: every link's NIC is there.
_wire_nics() {
	local l

	for l in "${links[@]}"; do
		nic_of_mac "$(link_mac "$l" "$1")" >/dev/null || return 1
	done
}

# wire_nics VM: each link's NIC renamed wire_LINK (--swap-links: rdma_rxe's
# netdev is the second NIC, sroce's the first).
wire_nics() {
	local me=$1 l dev name

	for l in "${links[@]}"; do
		dev=$(nic_of_mac "$(link_mac "$l" "$me")") ||
			fail "no NIC with MAC $(link_mac "$l" "$me") (link $l)"
		name=wire_$l
		if ((swap_links)) && [[ $l != c ]]; then
			name=wire_$([[ $l == r ]] && echo s || echo r)
		fi
		ip link set "$dev" down
		ip link set "$dev" name "$name" || fail "cannot rename $dev to $name"
	done
}

wire_setup() {
	local me=$1 mtu=$2

	modprobe virtio_net || fail "cannot load virtio_net"
	wait_for 10 _wire_nics "$me"
	wire_nics "$me"
	{ ip link set wire_r mtu "$mtu" && ip link set wire_s mtu "$mtu"; } ||
		fail "the wire NICs refuse MTU $mtu"
	ip -batch - <<-EOF || fail "cannot configure wire_r and wire_c"
		addr add 198.51.100.$me/24 dev wire_r
		addr add 192.0.2.$((128 + me))/25 dev wire_c
		link set wire_r up
		link set wire_c up
	EOF
	sroce_load
	set_params
	modprobe rdma_rxe || fail "cannot load rdma_rxe"
	ip netns add s || fail "cannot add netns s"
	ip link set wire_s netns s || fail "cannot move wire_s to netns s"
	ip -n s -batch - <<-EOF || fail "cannot configure wire_s"
		addr add 192.0.2.$me/25 dev wire_s
		link set lo up
		link set wire_s up
	EOF
	rdma link add rxe0 type rxe netdev wire_r || fail "rdma link add rxe0 failed"
	ip netns exec s rdma link add sroce0 type sroce netdev wire_s ||
		fail "rdma link add sroce0 failed"
	wait_for 10 _port_active rxe0
	wait_for 10 _port_active sroce0
	wait_for 10 _has_gids rxe0 "198.51.100.$me"
	wait_for 10 _has_gids sroce0 "192.0.2.$me"
	gid_of[rxe0]=$(gid_index rxe0 "198.51.100.$me")
	gid_of[sroce0]=$(gid_index sroce0 "192.0.2.$me")
}

# ------------------------------------------------------------------------
# VM 2: the runs, their servers in VM 1 or here.
# ------------------------------------------------------------------------

# remote OP ARGS...: run "guest-wire.sh op OP ARGS..." in VM 1; print its
# output and return its exit status (1 if VM 1 cannot be reached).
remote() {
	local fd line status=1

	{ exec {fd}<>"/dev/tcp/$control_addr/$control_port"; } 2>/dev/null || return 1
	printf '%s\n' "$*" >&"$fd"
	while IFS= read -r -t "$((run_timeout + 60))" line <&"$fd"; do
		if [[ $line =~ ^EXIT\ ([0-9]+)$ ]]; then
			status=${BASH_REMATCH[1]}
			break
		fi
		printf '%s\n' "$line"
	done
	exec {fd}>&-
	return "$status"
}

# perf_start_both: with $profiling, perf in VM 1 and here (perf_pid).
perf_start_both() {
	((${profiling:-0})) || return 0
	remote perf-start "$prof_hz" >"$work/perf-start.out" ||
		fail "perf did not start in VM 1: $(tail -n 3 "$work/perf-start.out")"
	perf_begin "$work/perf.data" || fail "perf did not start: $(cat "$work/perf.data.log")"
}

# read_finish: the lines of VM 1's "finish" ($work/finish.out) into
# peer_prof, sstatus, peer_cpu, peer_ctr and $work/server.log.
read_finish() {
	local line

	while IFS= read -r line; do
		case $line in
		"perf "*) peer_prof+=("${line#perf }") ;;
		"status "*) sstatus=${line#status } ;;
		"cpu "*) peer_cpu=${line#cpu } ;;
		"ctr "*) peer_ctr+=("${line#ctr }") ;;
		"log| "*) printf '%s\n' "${line#log| }" >>"$work/server.log" ;;
		esac
	done <"$work/finish.out"
}

# perftest_remote CONFIG TOOL ARGS...: the server in VM 1, the client
# here. peer_cpu: VM 1's kernel CPU time over the server's life.
perftest_remote() {
	local config=$1 tool=$2 cns cdev saddr status=0 sstatus=1 start

	shift 2
	read -r _ _ saddr <<<"${server_of[$config]}"
	read -r cns cdev _ <<<"${client_of[$config]}"
	start=$SECONDS
	: >"$work/client.log"
	: >"$work/server.log"
	peer_prof=()
	perf_start_both
	if ! remote serve "$config" "$tool" "$@" >"$work/serve.out"; then
		outcome="the server in VM 1 never listened: $(tail -n 3 "$work/serve.out" | tr '\n' ' ')"
		if ((${profiling:-0})); then
			perf_stop "$perf_pid"
			remote finish "$config" 1 >/dev/null || true
		fi
		return 1
	fi
	mark start
	in_ns "$cns" timeout -k 5 "$run_timeout" \
		"$tool" -d "$cdev" -x "${gid_of[$cdev]}" -p "$perftest_port" -F "$@" "$saddr" \
		>"$work/client.log" 2>&1 || status=$?
	mark end
	((${profiling:-0} == 0)) || perf_stop "$perf_pid"
	remote finish "$config" "$((status != 0))" >"$work/finish.out" || true
	read_finish
	outcome="client exit $status, server (VM 1) exit $sstatus, after $((SECONDS - start)) s"
	((status == 124 || sstatus == 124)) && outcome+=" (timed out)"
	((status)) || status=$sstatus
	return "$status"
}

# mark start|end: "bench: mark start|end ROUND FIGURE CONFIG" on the
# console as the client starts and ends (of the run named by $mark_tag),
# for the host, which notes when each line arrives and so which of its
# samples of the QEMU processes' CPU time fall in the run
# (host-sample.py). No line outside a figure's run.
mark() {
	[[ -z ${mark_tag:-} ]] || printf 'bench: mark %s %s\n' "$1" "$mark_tag"
}

# perftest CONFIG TOOL ARGS...: in VM 1 and here, or here only; self_cpu
# and peer_cpu: each VM's kernel CPU time over the run.
perftest() {
	local before ctr_before rc=0

	peer_cpu="0 0 0 0 0 0"
	peer_ctr=()
	ctr_before=$(counters "$1")
	before=$(cpu_now)
	if [[ -n ${remote_of[$1]:-} ]]; then
		perftest_remote "$@" || rc=$?
	else
		mark start
		perftest_local "$@" || rc=$?
		mark end
	fi
	self_cpu=$(cpu_delta "$before" "$(cpu_now)")
	self_ctr=$(counter_deltas "$ctr_before" "$(counters "$1")")
	return "$rc"
}

# emit_ctrs FIG CONFIG: "@ctr FIG CONFIG VM:DEVICE COUNTER DELTA" for the
# hw_counters that moved in the last run, in VM 2 and VM 1.
emit_ctrs() {
	local line

	while read -r line; do
		[[ -n $line ]] && emit "ctr $1 $2 2:$line"
	done <<<"$self_ctr"
	for line in "${peer_ctr[@]}"; do
		emit "ctr $1 $2 1:$line"
	done
}

# One figure in one configuration in round R: "@run R FIG CONFIG VALUE
# [P99]", "@cpu R FIG CONFIG MESSAGES BYTES VM2(sys irq softirq user
# idle elapsed) VM1(the same)" (cpu_now) and its "@ctr" lines.
run_wire_figure() {
	local round=$1 fig=$2 tool=$3 size=$4 unit=$5 qps=$6 config=$7 n prof=0
	local -a f qarg=()

	n=$(iters_for "$fig")
	((qps == 1)) || qarg=(-q "$qps")
	if ((prof_hz && round == 1)) && [[ -n ${remote_of[$config]:-} ]]; then
		prof=1
		emit "info bytes_$fig $((n * qps * size))"
		emit "info iters_$fig $((n * qps))"
	fi
	mark_tag="$round $fig $config"
	profiling=$prof
	if ! measure "$config" "$tool" -s "$size" -n "$n" "${qarg[@]}"; then
		profiling=0 mark_tag=''
		((prof == 0)) || wire_profile "$fig" "$config" NA
		emit_ctrs "$fig" "$config"
		run_failed "$round" "$fig" "$config" "$tool failed"
		return 0
	fi
	profiling=0 mark_tag=''
	emit_ctrs "$fig" "$config"
	read -ra f <<<"$(result_line)"
	if ((prof)); then
		if [[ $unit == usec ]]; then
			wire_profile "$fig" "$config" "${f[4]:-NA}"
		else
			wire_profile "$fig" "$config" "${f[3]:-NA}"
		fi
	fi
	emit_run "$round" "$fig" "$config" "$unit" "${f[@]}" || return 0
	emit "cpu $round $fig $config $((n * qps)) $((n * qps * size)) $self_cpu $peer_cpu"
}

# wire_profile FIG CONFIG VALUE: the profiles of the last run, VM 2's as
# configuration CONFIG@2 and VM 1's as CONFIG@1 ("@val", "@samples",
# "@prof": bench-profile-report.py's lines).
wire_profile() {
	local kind line

	emit "val $1 $2@1 $3"
	emit "val $1 $2@2 $3"
	while read -r kind line; do
		emit "$kind $1 $2@2 $line"
	done < <(perf_lines "$work/perf.data")
	for line in "${peer_prof[@]}"; do
		emit "${line%% *} $1 $2@1 ${line#* }"
	done
}

# The links for reference in round R: "@link R LINK MB/s" for TCP
# (iperf3, one stream, iperf_secs) and "@linklat R LINK us" for half an
# ICMP echo's round trip, across link r (rxe's NICs) and link s (sroce's),
# the server in VM 1.
wire_links() {
	local round=$1 config link saddr cns mbs us

	for config in rxe sroce; do
		link=r
		[[ $config == sroce ]] && link=s
		read -r _ _ saddr <<<"${server_of[$config]}"
		read -r cns _ _ <<<"${client_of[$config]}"
		mbs=NA
		if remote iperf "$cns" "$saddr" >/dev/null; then
			mbs=$(in_ns "$cns" timeout -k 5 "$run_timeout" \
				iperf3 -c "$saddr" -t "$iperf_secs" -J 2>/dev/null |
				python3 -c 'import json, sys
print("%.3g" % (json.load(sys.stdin)["end"]["sum_received"]["bits_per_second"] / 8e6))' \
				2>/dev/null) || mbs=NA
		fi
		emit "link $round $link ${mbs:-NA}"
		# Half the average ICMP echo round trip (answered by VM 1's
		# kernel; ping sleeps for each reply, perftest polls).
		us=$(in_ns "$cns" ping -c "$ping_count" -i 0.002 -q "$saddr" 2>/dev/null |
			sed -n 's|^rtt [^=]*= [0-9.]*/\([0-9.]*\)/.*|\1|p')
		[[ -n $us ]] && us=$(awk -v ms="$us" 'BEGIN { printf "%.1f", ms * 500 }')
		emit "linklat $round $link ${us:-NA}"
		progress "round $round TCP across link $link: ${mbs:-NA} MB/s, half an ICMP echo: ${us:-NA} us"
	done
}

wire_sweep() {
	local size n i=0 config

	for size in "${sweep_sizes[@]}"; do
		n=$(sweep_n "$size")
		for config in $( ((++i % 2)) && echo rxe sroce || echo sroce rxe); do
			if measure "$config" ib_write_bw -s "$size" -n "$n"; then
				emit_ctrs "sweep_$size" "$config"
				sweep_emit "$config" "$size" 1
			else
				sweep_emit "$config" "$size" 0
			fi
		done
	done
}

# VM 1: serve VM 2's requests until it says "quit" (or is silent for
# longer than any run takes).
serve_control() {
	python3 "$bench_d/control-server.py" "$bench_d/guest-wire.sh" \
		"$control_addr" "$control_port" "$((run_timeout * 3))"
}

# VM 2's "@info" lines on the boots, the drivers and the clock.
wire_info() {
	local commit=$1 mtu=$2 rounds=$3

	emit "info commit $commit"
	emit "info kernel $KREL"
	emit "info mtu $mtu"
	emit "info rounds $rounds"
	emit "info hz $(getconf CLK_TCK)"
	emit "info smp $(nproc)"
	emit "info clocksource $(</sys/devices/system/clocksource/clocksource0/current_clocksource)"
	[[ $params == - ]] || emit "info sroce_params $params"
	if ((prof_hz)); then
		freq=$prof_hz callers=
		perf_setup
		module_symbols
		emit "info perf ${perf##*/}"
	fi
}

# wait_control: until VM 1 answers on the control link (two minutes).
wait_control() {
	local i

	for ((i = 0; i < 600; i++)); do
		remote ping >/dev/null 2>&1 && return 0
		sleep 0.2
	done
	fail "VM 1 never answered on $control_addr:$control_port"
}

wire_main() {
	local me=$1 rounds=$2 mtu=$3 round entry config name tool size unit qps

	quick=$4 iters=${5:-}
	if [[ ${7:--} != - ]]; then
		only_figures "$7" || fail "no figure among $7"
	fi
	params=${8:--}
	prof_hz=${9:-0} swap_links=${10:-0}
	# shellcheck source=tests/lib.sh
	. "$top/tests/lib.sh"
	mkdir -p "$state"
	work=$state
	pin_build
	wire_setup "$me" "$mtu"
	if ((me == 1)); then
		progress "VM 1 ready: serving VM 2 on $control_addr:$control_port"
		serve_control || fail "the control server failed"
		return 0
	fi
	wire_info "${6:-?}" "$mtu" "$rounds"
	wait_control
	# The CRC-32 each VM's sroce chose at load for its ICRC (icrc.c).
	emit "info sroce_icrc $(remote icrc | tail -n 1),$(</sys/module/sroce/parameters/icrc)"
	sweep_setup $((32 << 20)) 10000
	report_setup
	for ((round = 1; round <= rounds; round++)); do
		for entry in "${figures[@]}"; do
			read -r name tool size unit qps <<<"$entry"
			for config in $(order "$round"); do
				run_wire_figure "$round" "$name" "$tool" "$size" "$unit" "$qps" "$config"
			done
		done
		wire_links "$round"
	done
	[[ ${7:--} != - ]] || wire_sweep
	remote quit >/dev/null || true
	printf '@end %d\n' "$nrows"
}

if [[ ${1:-} == op ]]; then
	# shellcheck source=scripts/bench.d/guest-wire-op.sh
	. "$bench_d/guest-wire-op.sh"
	shift
	op_main "$@"
else
	wire_main "$@"
fi
