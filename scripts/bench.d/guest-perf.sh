# SPDX-License-Identifier: GPL-2.0
# shellcheck shell=bash
#
# Guest side, sourced in the VM by scripts/bench-profile and guest-wire.sh
# (bench-wire --profile): perf's profiles of the guest kernel. TCG
# emulates no PMU: the clock is perf's software event cpu-clock. Needs
# tests/lib.sh's fail.

# perf_binary: the newest perf_<version> where linux-perf installs one per
# version (its /usr/bin/perf then refuses a kernel of another version),
# else perf itself (bookworm's linux-perf); it must run.
perf_binary() {
	local p
	local -a found=()

	for p in /usr/bin/perf_[0-9]*; do
		[[ -x $p ]] && found+=("$p")
	done
	p=
	((${#found[@]} == 0)) || p=$(printf '%s\n' "${found[@]}" | sort -V | tail -n 1)
	[[ -n $p ]] || p=$(command -v perf) || return 1
	"$p" --version >/dev/null 2>&1 && echo "$p"
}

# perf_setup: perf set to perf_binary's, and the whole system opened to
# it (kernel addresses shown, every CPU sampled); fails the run if not.
perf_setup() {
	perf=$(perf_binary) || fail "no working perf: install linux-perf on the host"
	sysctl -qw kernel.kptr_restrict=0 kernel.perf_event_paranoid=-1 ||
		fail "cannot open perf to the whole system"
}

# The module of each symbol of the modules the figures run through,
# from /proc/kallsyms: a perf older than the kernel may put them all in
# [kernel.vmlinux].
declare -A modof
module_symbols() {
	local _ sym mod

	while read -r _ _ sym mod; do
		modof[$sym]=$mod
	done < <(grep -E '[[:space:]]\[(sroce|rdma_rxe|ib_core|ib_uverbs|veth|virtio_net|udp_tunnel|ip6_udp_tunnel)\]$' /proc/kallsyms)
}

# perf_begin DATA: "perf record -a" ($perf, at $freq samples a second per
# CPU, call chains if $callers is set: the caller's) into DATA; its pid
# in perf_pid.
# Started disabled, enabled once it is ready (under TCG perf takes seconds
# to start), so the samples are what follows only. False if it did not
# start (its messages in DATA.log).
perf_begin() {
	local data=$1 line='' ctl ack
	local -a graph=()

	rm -f "$data" "$data.ctl" "$data.ack"
	mkfifo "$data.ctl" "$data.ack"
	# Opened read-write: no open waits for a perf that died first.
	exec {ctl}<>"$data.ctl" {ack}<>"$data.ack"
	[[ -z ${callers:-} ]] || graph=(-g)
	# shellcheck disable=SC2154 # perf and freq: the caller's
	"$perf" record -a "${graph[@]}" -e cpu-clock -F "$freq" -D -1 \
		--control "fifo:$data.ctl,$data.ack" -o "$data" -q \
		</dev/null >"$data.log" 2>&1 &
	# shellcheck disable=SC2034 # the caller's
	perf_pid=$!
	echo enable >&"$ctl"
	read -r -t 120 line <&"$ack" || true
	exec {ctl}>&- {ack}>&-
	[[ $line == ack* ]]
}

# perf_stop PID: stop perf PID and wait for it to write its data, whether
# this shell started it or another did.
perf_stop() {
	local i

	kill -INT "$1" 2>/dev/null || return 0
	wait "$1" 2>/dev/null || true
	for ((i = 0; i < 1200; i++)); do
		kill -0 "$1" 2>/dev/null || return 0
		sleep 0.1
	done
}

# perf_lines DATA: "samples N" and "prof PERCENT MODULE SYMBOL" for every
# symbol above 0.2 % of DATA's samples.
perf_lines() {
	local line sym

	while read -r line; do
		if [[ $line =~ ^#\ Samples:\ ([0-9]+[KM]?) ]]; then
			echo "samples ${BASH_REMATCH[1]}"
		elif [[ $line =~ ^([0-9.]+)%\ +([^ ]+)\ +\[[.k]\]\ +(.+)$ ]]; then
			sym=${BASH_REMATCH[3]// /_}
			echo "prof ${BASH_REMATCH[1]} ${modof[$sym]:-${BASH_REMATCH[2]}} $sym"
		fi
	done < <("$perf" report -i "$1" --stdio --sort dso,sym \
			--no-children --percent-limit 0.2 2>/dev/null | sed 's/^ *//')
}
