# SPDX-License-Identifier: GPL-2.0
# shellcheck shell=bash disable=SC2034,SC2154 # guest-wire.sh's variables
#
# Guest side of scripts/bench-wire: VM 1's answers to VM 2's requests,
# sourced by guest-wire.sh for "guest-wire.sh op OP ARGS...", which
# control-server.py runs in VM 1 for each request once guest-wire.sh has
# set VM 1 up (its state in /tmp/bench-wire). Its output goes back to
# VM 2, then its exit status.
#   ping                   "pong"
#   icrc                   the CRC-32 VM 1's sroce uses for its ICRC
#   serve CONFIG TOOL ARGS...  start CONFIG's perftest server, "ready"
#   iperf NETNS ADDRESS    an iperf3 server for one test, "ready"
#   perf-start HZ          perf in VM 1 until the next finish
#   finish CONFIG FAILED   how the server ended: "status", "cpu", "ctr",
#                          "perf" and "log| " lines

# serve CONFIG TOOL ARGS...: start CONFIG's perftest server in the
# background and wait until it listens.
op_serve() {
	local config=$1 tool=$2 sns sdev saddr gid i

	shift 2
	[[ -n ${remote_of[$config]:-} ]] || fail "no configuration $config"
	read -r sns sdev saddr <<<"${server_of[$config]}"
	gid=$(gid_index "$sdev" "$saddr")
	op_stop
	rm -f "$state/status"
	counters "$config" >"$state/ctr0"
	cpu_now >"$state/cpu0"
	# shellcheck disable=SC2016 # expanded by the inner shell
	setsid bash -c '
		state=$1 ns=$2
		shift 2
		if [[ $ns == - ]]; then
			env -u RDMAV_DRIVERS "$@"
		else
			ip netns exec "$ns" "$@"
		fi >"$state/server.log" 2>&1
		echo $? >"$state/status"' _ "$state" "$sns" \
		timeout -k 5 "$run_timeout" "$tool" -d "$sdev" -x "$gid" \
		-p "$perftest_port" -F "$@" </dev/null >/dev/null 2>&1 &
	echo $! >"$state/pid"
	for ((i = 0; i < 300; i++)); do
		listening "$sns" && { echo ready; return 0; }
		[[ -f $state/status ]] && break
		sleep 0.1
	done
	cat "$state/server.log" 2>/dev/null
	fail "the $tool server did not listen"
}

# Kill a server still running (its client failed, or a run was cut).
op_stop() {
	local pid

	[[ -f $state/pid ]] || return 0
	read -r pid <"$state/pid"
	stop_server "$pid"
	kill -- -"$pid" 2>/dev/null || true
	rm -f "$state/pid"
}

# iperf NETNS ADDRESS: an iperf3 server for one test, bound to ADDRESS
# in NETNS ("-": the initial one); "ready" once it listens.
op_iperf() {
	local ns=$1 addr=$2 i

	pkill -x iperf3 2>/dev/null || true
	# shellcheck disable=SC2016 # expanded by the inner shell
	setsid bash -c '. "$1"; shift; in_ns "$@"' _ "$bench_d/guest-lib.sh" \
		"$ns" timeout -k 5 "$run_timeout" iperf3 -s -1 -B "$addr" \
		</dev/null >/dev/null 2>&1 &
	for ((i = 0; i < 100; i++)); do
		in_ns "$ns" ss -Htln "sport = :$iperf_port" | grep -q . &&
			{ echo ready; return 0; }
		sleep 0.1
	done
	fail "iperf3 did not listen in $ns on $addr"
}

# perf-start HZ: "perf record -a" at HZ until the next finish, which
# prints its profile ("perf " a line).
op_perf_start() {
	freq=$1
	perf_setup
	perf_begin "$state/perf.data" || fail "perf did not start: $(cat "$state/perf.data.log")"
	echo "$perf_pid" >"$state/perf.pid"
	echo started
}

# finish CONFIG FAILED: wait for the server to end (kill it at once if
# FAILED is 1: its client failed), then print "status N", "cpu ..." and
# its log, "log| " a line.
op_finish() {
	local config=$1 i

	shift
	if (($1)); then
		sleep 2
		op_stop
	fi
	for ((i = 0; i < (run_timeout + 15) * 10; i++)); do
		[[ -f $state/status ]] && break
		sleep 0.1
	done
	[[ -f $state/status ]] || op_stop
	if [[ -f $state/perf.pid ]]; then
		perf=$(perf_binary) || fail "no working perf"
		perf_stop "$(<"$state/perf.pid")"
		rm -f "$state/perf.pid"
		module_symbols
		perf_lines "$state/perf.data" | sed 's/^/perf /'
	fi
	echo "status $(cat "$state/status" 2>/dev/null || echo 255)"
	echo "cpu $(cpu_delta "$(<"$state/cpu0")" "$(cpu_now)")"
	counter_deltas "$(<"$state/ctr0")" "$(counters "$config")" | sed 's/^/ctr /'
	sed 's/^/log| /' "$state/server.log" 2>/dev/null || true
	rm -f "$state/pid"
}

# op_main OP ARGS...: one request.
op_main() {
	local op=$1

	shift
	# shellcheck source=tests/lib.sh
	. "$top/tests/lib.sh"
	[[ -d $state/build ]] || fail "no $state/build: VM 1 is not set up"
	# The copies guest-wire.sh made, as for VM 2's clients.
	RDMAV_DRIVERS=$state/build/libsroce
	case $op in
	ping) echo pong ;;
	icrc) cat /sys/module/sroce/parameters/icrc ;;
	serve) op_serve "$@" ;;
	iperf) op_iperf "$@" ;;
	finish) op_finish "$@" ;;
	perf-start) op_perf_start "$@" ;;
	*) fail "no op $op" ;;
	esac
}

