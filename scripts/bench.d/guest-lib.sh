# SPDX-License-Identifier: GPL-2.0
# shellcheck shell=bash disable=SC2034,SC2154 # the variables the caller sets (below) or reads
#
# Guest side, sourced in the VM by guest-loopback.sh, guest-wire.sh,
# scripts/bench-profile and scripts/bench-clients: the helpers of
# perftest runs in a VM. Progress lines "bench: ..." and result lines
# "@..." go to the console, which is how they reach the host (the guest
# cannot write into the repository). The caller defines the
# configurations (configs, server_of, client_of), the figures' iterations
# (iters_of, quick_iters_of) and the sweep's sizes (sweep_sizes,
# quick_sweep_sizes): loopback.sh or wire.sh; sets quick, iters, params
# and work (a scratch directory); and sources tests/lib.sh (fail,
# gid_index, SROCE_KO, RDMAV_DRIVERS) before it runs anything.

perftest_port=18515
run_timeout=300
nrows=0
declare -A gid_of

emit() {
	printf '@%s\n' "$*"
	nrows=$((nrows + 1))
}

progress() {
	printf 'bench: %s\n' "$*"
}

# in_ns NETNS CMD...: run CMD in NETNS. rxe's users, in the initial
# namespace, get the system's providers only (librxe); sroce's get
# libsroce through RDMAV_DRIVERS (tests/lib.sh).
in_ns() {
	local ns=$1

	shift
	if [[ $ns == - ]]; then
		env -u RDMAV_DRIVERS "$@"
	else
		ip netns exec "$ns" "$@"
	fi
}

listening() {
	in_ns "$1" ss -Htln "sport = :$perftest_port" | grep -q .
}

# Module parameters of sroce from --param (NAME=VALUE,...; - for none),
# in $params: set in the guest once sroce is loaded.
set_params() {
	local p

	[[ ${params:--} == - ]] && return 0
	for p in ${params//,/ }; do
		echo "${p#*=}" >"/sys/module/sroce/parameters/${p%%=*}" ||
			fail "cannot set sroce's parameter ${p%%=*}"
	done
}

# The devices configuration $1 uses.
devices() {
	local cdev sdev

	read -r _ sdev _ <<<"${server_of[$1]}"
	read -r _ cdev _ <<<"${client_of[$1]}"
	echo "$sdev"
	[[ $cdev == "$sdev" ]] || echo "$cdev"
}

# The hw_counters of the devices of configuration $1 in this VM, "device
# name value" a line.
counters() {
	local dev f v

	for dev in $(devices "$1"); do
		for f in /sys/class/infiniband/"$dev"/ports/1/hw_counters/*; do
			[[ -f $f ]] || continue
			read -r v <"$f" 2>/dev/null || continue
			printf '%s %s %s\n' "$dev" "${f##*/}" "$v"
		done
	done
}

# counter_deltas BEFORE AFTER: "device counter delta" for each counter
# of AFTER (the output of counters) that moved since BEFORE.
counter_deltas() {
	local dev name v
	local -A was=()

	while read -r dev name v; do
		[[ -n $name ]] && was[$dev/$name]=$v
	done <<<"$1"
	while read -r dev name v; do
		[[ -n $name && $name != lifespan ]] || continue
		((v != ${was[$dev/$name]:-0})) || continue
		echo "$dev $name $((v - ${was[$dev/$name]:-0}))"
	done <<<"$2"
}

# server_ready PID NETNS: wait (30 s at most) until the perftest server
# PID listens in NETNS; fail at once if it exits.
server_ready() {
	local i

	for ((i = 0; i < 300; i++)); do
		listening "$2" && return 0
		kill -0 "$1" 2>/dev/null || return 1
		sleep 0.1
	done
	return 1
}

# stop_server PID: end the background job PID that runs a server under
# timeout(1), and wait (10 s at most, then SIGKILL) until it is gone, so
# that the next server finds its port free. timeout puts itself in a
# process group of its own, so a signal to PID or to PID's group misses
# it: it is signalled as PID's child, passes the signal on to the server
# and exits when the server has.
stop_server() {
	local kids kid i alive

	kids=$(pgrep -P "$1" | paste -sd' ') || kids=
	for kid in $kids; do
		kill -TERM "$kid" 2>/dev/null || true
	done
	kill "$1" 2>/dev/null || true
	for ((i = 0; i < 100; i++)); do
		alive=0
		for kid in $kids; do
			kill -0 "$kid" 2>/dev/null && alive=1
		done
		((alive)) || return 0
		sleep 0.1
	done
	for kid in $kids; do
		pkill -KILL -P "$kid" 2>/dev/null || true
		kill -KILL "$kid" 2>/dev/null || true
	done
}

# perftest_local CONFIG TOOL ARGS...: run TOOL as server and as client in
# configuration CONFIG, both in this VM; their output goes to
# $work/server.log and $work/client.log, how they ended to $outcome. The
# server runs in the background; the client starts once it listens.
perftest_local() {
	local config=$1 tool=$2 sns sdev saddr cns cdev spid start
	local status=0 sstatus=0

	shift 2
	read -r sns sdev saddr <<<"${server_of[$config]}"
	read -r cns cdev _ <<<"${client_of[$config]}"
	start=$SECONDS
	: >"$work/client.log"
	in_ns "$sns" timeout -k 5 "$run_timeout" \
		"$tool" -d "$sdev" -x "${gid_of[$sdev]}" -p "$perftest_port" -F "$@" \
		>"$work/server.log" 2>&1 &
	spid=$!
	if ! server_ready "$spid" "$sns"; then
		stop_server "$spid"
		wait "$spid" 2>/dev/null || sstatus=$?
		outcome="the server never listened (exit $sstatus)"
		return 1
	fi
	in_ns "$cns" timeout -k 5 "$run_timeout" \
		"$tool" -d "$cdev" -x "${gid_of[$cdev]}" -p "$perftest_port" -F "$@" "$saddr" \
		>"$work/client.log" 2>&1 || status=$?
	if ((status)); then
		stop_server "$spid"
	fi
	wait "$spid" 2>/dev/null || sstatus=$?
	outcome="client exit $status, server exit $sstatus, after $((SECONDS - start)) s"
	((status == 124 || sstatus == 124)) && outcome+=" (timed out)"
	((status)) || status=$sstatus
	return "$status"
}

# perftest CONFIG TOOL ARGS...: one run, as perftest_local (guest-wire.sh
# puts the server in the other VM where the configuration says so).
perftest() {
	perftest_local "$@"
}

# perftest converts cycles to time with a CPU frequency it measures at
# start; when a busy host deschedules the vCPU while it samples, the
# samples do not line up (r^2 < 0.9), it says so on stderr and reports
# 0 MB/s or infinite latencies, with exit status 0. Such a run measured
# nothing: run it again.
calibration_failed() {
	grep -q 'Correlation coefficient' "$work/client.log"
}

# measure CONFIG TOOL ARGS...: perftest, again (twice at most) when the
# client's clock calibration failed.
measure() {
	local try

	for try in 1 2 3; do
		if perftest "$@"; then
			calibration_failed || return 0
		else
			calibration_failed || return 1
		fi
		progress "  $1 $2: perftest's clock calibration failed (a busy host?), try $try"
	done
	outcome="perftest's clock calibration failed 3 times"
	return 1
}

# The numbers of perftest's result line: bytes, iterations, then the
# tool's columns (bandwidth: peak, average MB/s, Mpps; latency: min, max,
# typical, average, stdev, 99%, 99.9%).
result_line() {
	local line

	while read -r line; do
		[[ $line =~ ^[0-9]+\ +[0-9]+\ +[0-9.]+ ]] && echo "$line"
	done <"$work/client.log" | tail -n 1
}

# How a failed run ended, and what each side said about it. perftest's
# errors go to stderr, unbuffered, so they come before its report in the
# log: show the lines that look like errors, or else the last ones.
log_tail() {
	local side line
	local -a lines

	progress "  $outcome"
	for side in client server; do
		mapfile -t lines < <(grep -m 4 -i -E 'error|fail|couldn|unable|exceeded|correlation' \
			"$work/$side.log")
		((${#lines[@]})) || mapfile -t lines < <(tail -n 2 "$work/$side.log")
		for line in "${lines[@]}"; do
			progress "  $side| $line"
		done
	done
}

# iters_for FIG: perftest -n for figure FIG: --iters, else the figure's
# own (quick_iters_of with --quick, else iters_of).
iters_for() {
	if [[ -n $iters ]]; then
		echo "$iters"
	elif ((quick)); then
		echo "${quick_iters_of[$1]}"
	else
		echo "${iters_of[$1]}"
	fi
}

# run_failed ROUND FIG CONFIG WHAT: a run that measured nothing (WHAT
# says why): the logs, and "@run ROUND FIG CONFIG NA".
run_failed() {
	progress "round $1 $2 $3: $4"
	log_tail
	emit "run $1 $2 $3 NA"
}

# emit_run ROUND FIG CONFIG UNIT FIELD...: "@run ROUND FIG CONFIG VALUE
# [P99]" from the FIELDs of the run's result_line (usec: typical and
# 99th percentile; else the average MB/s); false (after run_failed) if
# they are too few.
emit_run() {
	local round=$1 fig=$2 config=$3 unit=$4
	local -a f=("${@:5}")

	if [[ $unit == usec && ${#f[@]} -ge 8 ]]; then
		emit "run $round $fig $config ${f[4]} ${f[7]}"
		progress "round $round $fig $config: typical ${f[4]} us, 99% ${f[7]} us"
	elif [[ $unit != usec && ${#f[@]} -ge 4 ]]; then
		emit "run $round $fig $config ${f[3]}"
		progress "round $round $fig $config: ${f[3]} MB/s"
	else
		run_failed "$round" "$fig" "$config" "no result line"
		return 1
	fi
}

# What the figures depend on: the active MTU perftest reports ("Mtu :
# 4096[B]") and the crc32 rdma_rxe's ICRC gets from the crypto API.
report_setup() {
	local config line name=

	for config in "${configs[@]}"; do
		perftest "$config" ib_write_bw -s 2 -n 5 || continue
		while read -r line; do
			if [[ $line =~ Mtu\ *:\ *([0-9]+) ]]; then
				emit "info active_mtu_$config ${BASH_REMATCH[1]}"
				break
			fi
		done <"$work/client.log"
	done
	while read -r line; do
		case $line in
		name*:\ crc32) name=crc32 ;;
		driver*:*) [[ $name == crc32 ]] && { emit "info rxe_crc32 ${line##* }"; break; } ;;
		"") name= ;;
		esac
	done </proc/crypto
}

# The configurations in round (or step) $1's order: forwards, then
# backwards, so that a drift over the boot favours none of them.
order() {
	local i

	if (($1 % 2)); then
		echo "${configs[@]}"
		return
	fi
	for ((i = ${#configs[@]} - 1; i >= 0; i--)); do
		printf '%s ' "${configs[i]}"
	done
	echo
}

# sweep_setup BYTES MAX: the size sweep's sizes and -n (sweep_n) for
# this run: with --quick the quick sizes, about 4 MiB a run; else about
# BYTES a run, MAX iterations at most.
sweep_setup() {
	if ((quick)); then
		sweep_sizes=("${quick_sweep_sizes[@]}")
		sweep_bytes=$((4 << 20)) sweep_min=64 sweep_max=2000
	else
		sweep_bytes=$1 sweep_min=64 sweep_max=$2
	fi
}

# sweep_n SIZE: the sweep's perftest -n for SIZE (sweep_setup): a
# similar time per size.
sweep_n() {
	local n=$((sweep_bytes / $1))

	((n >= sweep_min)) || n=$sweep_min
	((n <= sweep_max)) || n=$sweep_max
	echo "$n"
}

# sweep_emit CONFIG SIZE OK: "@size CONFIG SIZE MB/s" for the last run
# of the sweep (NA, after the logs, unless OK is 1).
sweep_emit() {
	local -a f

	if (($3)); then
		read -ra f <<<"$(result_line)"
		emit "size $1 $2 ${f[3]:-NA}"
		progress "sweep $2 B $1: ${f[3]:-?} MB/s"
	else
		progress "sweep $2 B $1: ib_write_bw failed"
		log_tail
		emit "size $1 $2 NA"
	fi
}

# Copy sroce.ko and libsroce into $work and use the copies: the build
# directory is the host's, and a rebuild there during the benchmark must
# not change the driver between runs.
pin_build() {
	local lib ko_sum lib_sum

	for lib in "$RDMAV_DRIVERS"-rdmav*.so; do
		[[ -f $lib ]] || fail "no $RDMAV_DRIVERS-rdmav*.so: run 'make' first"
	done
	[[ -f $SROCE_KO ]] || fail "no $SROCE_KO: run 'make' first"
	mkdir "$work/build"
	cp "$SROCE_KO" "$lib" "$work/build/" || fail "cannot copy the build"
	SROCE_KO=$work/build/sroce.ko
	RDMAV_DRIVERS=$work/build/libsroce
	read -r ko_sum _ < <(sha256sum "$SROCE_KO")
	read -r lib_sum _ < <(sha256sum "$work/build/${lib##*/}")
	emit "info build sroce.ko:${ko_sum:0:12},${lib##*/}:${lib_sum:0:12}"
}

# cpu_now: /proc/stat's "cpu" line, all CPUs, in clock ticks (USER_HZ,
# 100 a second): the kernel's share (system, irq, softirq), user (and
# nice), idle (and iowait); then the time elapsed since boot times the
# number of CPUs, in the same unit. The first three are sampled at the
# tick, which an idle CPU stops: a softirq run on an idle CPU between
# two ticks is in none of them. Idle time is measured exactly, so the
# elapsed time minus idle and user is the kernel's true share
# (Documentation/benchmark.md, "Cost per byte and per message").
cpu_now() {
	local _cpu user nice sys idle iowait irq softirq up _

	: "${ncpus:=$(nproc)}"
	read -r _cpu user nice sys idle iowait irq softirq _ </proc/stat
	read -r up _ </proc/uptime
	up=${up/./}
	echo "$sys $irq $softirq $((user + nice)) $((idle + iowait))" \
		"$((10#$up * ncpus))"
}

# cpu_delta BEFORE AFTER: AFTER - BEFORE, field by field.
cpu_delta() {
	local -a a b d=()
	local i

	read -ra a <<<"$1"
	read -ra b <<<"$2"
	for i in "${!b[@]}"; do
		d+=($((b[i] - ${a[i]:-0})))
	done
	echo "${d[*]}"
}
