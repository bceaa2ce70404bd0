#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# 59-failslab: memory allocations that fail, in every verbs call and on
# the data path, are errors for the caller and nothing else: no leak, no
# kernel complaint, no object left behind, and the devices work after.
#
#   netns a: sroce_a on veth_a 192.0.2.1  <==>  netns b: sroce_b on veth_b 192.0.2.2
#
# Needs the kernel's fault injection (failslab, fail_page_alloc: the
# debug kernel of scripts/kernel-debug, with its stack trace filter);
# skipped without it. With task-filter, only processes that wrote 1 to
# /proc/self/make-it-fail see allocations fail, and with require-start
# and require-end only those made with sroce's code on the stack (but not
# under vmalloc, which reports each failure with a stack trace): 10% of
# them (slab) and 2% (pages) in a first round, 3% and 1% in a second,
# 1% and 1% in a third, whatever their flags. (Failing every
# allocation of the process failed its exec and its loader's reads over
# 9p, and left 9p unable to open files for every process after.)
#
#   - sroce-badinput (some 260 create, modify and destroy calls),
#     sroce-hold (some 250 objects of every kind, killed), and short
#     sroce-traffic runs on RC, UC and UD: each may fail, with an errno or
#     an error completion; none may hang (a timeout) or crash;
#   - then, without fault injection: the devices hold no more objects than
#     before, RC traffic is byte-exact, and sroce unloads.
#
# The packet buffers that softirq allocates are failed by sroce's own
# alloc_fail knob (58-faults). The numbers of failures injected are
# printed. The harness's kmemleak scan after the test catches leaks.
#
# What it would have caught:
#
# Leaks and crashes on allocation failure.
# timeout: 600
# skip-ok: ^no failslab/fail_page_alloc: this kernel has no fault injection
set -e
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/lib-traffic.sh"

dbg=/sys/kernel/debug
tmp=$(mktemp -d)
times=1000000

attrs_off() {
	local a

	for a in failslab fail_page_alloc; do
		[[ -d $dbg/$a ]] || continue
		echo 0 >"$dbg/$a/probability" 2>/dev/null || true
	done
}

cleanup() {
	attrs_off
	topo_down
}
trap cleanup EXIT

mountpoint -q $dbg || mount -t debugfs none $dbg || fail "cannot mount debugfs"
[[ -d $dbg/failslab && -d $dbg/fail_page_alloc ]] ||
	skip "no failslab/fail_page_alloc: this kernel has no fault injection (make check-debug)"
[[ -e $dbg/failslab/require-start ]] ||
	skip "no stack trace filter for fault injection (CONFIG_FAULT_INJECTION_STACKTRACE_FILTER): rebuild the debug kernel (make kernel-debug)"

# sroce_text: "START END", the addresses of sroce's code (its text
# symbols, with a page of slack for the last function).
sroce_text() {
	local addr type name mod a lo= hi=

	# Kernel addresses are in the upper half: as bash's signed numbers
	# they are negative, and still in order.
	while read -r addr type name mod; do
		[[ $type == [tT] ]] || continue
		a=$((16#$addr))
		[[ -n $lo ]] && ((a >= lo)) || lo=$a
		[[ -n $hi ]] && ((a <= hi)) || hi=$a
	done < <(grep -F '[sroce]' /proc/kallsyms)
	# Zeroes: kptr_restrict hides the addresses.
	[[ -n $lo ]] && ((lo != 0)) || return 1
	printf '%#x %#x\n' "$lo" "$((hi + 4096))"
}

# vmalloc_text: "START END" of the function under vmalloc_user(), which
# sroce's rings come from: its failures are excepted (reject-start,
# reject-end), as vmalloc reports every failure with a stack trace
# ("vmalloc error: ..."), which no flag of vmalloc_user() can turn off.
vmalloc_text() {
	awk '
	found { print "0x" start, "0x" $1; exit }
	$2 ~ /^[tT]$/ && $3 ~ /^__vmalloc_node_range(_noprof)?$/ {
		start = $1
		found = 1
	}' /proc/kallsyms
}

# arm ATTR PERCENT: fail PERCENT% of the allocations of marked processes
# made with sroce's code on the stack. Only those: failing every
# allocation of a process also fails its exec, its dynamic loader's
# reads over 9p, and leaves 9p failing opens for every process after.
arm() {
	local d=$dbg/$1

	echo 1 >"$d/task-filter"
	echo "$text_start" >"$d/require-start"
	echo "$text_end" >"$d/require-end"
	echo "$reject_start" >"$d/reject-start"
	echo "$reject_end" >"$d/reject-end"
	echo 32 >"$d/stacktrace-depth"
	echo 0 >"$d/interval" 2>/dev/null || echo 1 >"$d/interval"
	echo 0 >"$d/space"
	echo 1 >"$d/verbose"
	[[ ! -e $d/ignore-gfp-wait ]] || echo N >"$d/ignore-gfp-wait"
	[[ ! -e $d/ignore-gfp-highmem ]] || echo N >"$d/ignore-gfp-highmem"
	[[ ! -e $d/min-order ]] || echo 0 >"$d/min-order"
	echo "$2" >"$d/probability"
}

injected() {
	echo $((times - $(<"$dbg/$1/times")))
}

# failing [-n NS] CMD...: run CMD (in namespace NS) with failing
# allocations; its exit status does not matter, but it must end within
# 120 s.
failing() {
	local status=0
	local -a in=()

	if [[ $1 == -n ]]; then
		in=(ip netns exec "$2")
		shift 2
	fi
	"${in[@]}" timeout -k 5 120 sh -c 'echo 1 >/proc/self/make-it-fail && exec "$@"' \
		_ "$@" >"$tmp/out" 2>&1 || status=$?
	((status != 124 && status != 137)) || {
		tail -n 20 "$tmp/out"
		fail "$1 hung with failing allocations"
	}
	((status != 126 && status != 127)) || {
		tail -n 20 "$tmp/out"
		fail "$1 did not start (status $status): allocations outside sroce failed"
	}
	log "  $1: exit status $status, $(wc -l <"$tmp/out") lines of output;" \
		"the last: $(tail -n 1 "$tmp/out" | cut -c1-120)"
}

topo_up
read -r text_start text_end < <(sroce_text) ||
	fail "sroce's code is not in /proc/kallsyms"
read -r reject_start reject_end < <(vmalloc_text) ||
	fail "no __vmalloc_node_range in /proc/kallsyms"
log "sroce's code: $text_start to $text_end; not under $reject_start to $reject_end (vmalloc)"
before_a=$(rdma resource show sroce_a)
before_b=$(rdma resource show sroce_b)
gid_a=$(gid_index sroce_a 192.0.2.1)
gid_b=$(gid_index sroce_b 192.0.2.2)

# Set once: what is left of it counts the failures of every round.
echo "$times" >"$dbg/failslab/times"
echo "$times" >"$dbg/fail_page_alloc/times"
# Round by round fewer failures, so that the tools get further each time
# (at 10% most stop at opening the device).
for pct in 10 3 1; do
	arm failslab "$pct"
	arm fail_page_alloc "$((pct > 2 ? 2 : 1))"
	log "round: ${pct}% of slab allocations fail"
	failing sroce-badinput -d sroce_a -g "$gid_a" -r 192.0.2.2
	failing sroce-hold -d sroce_b -g "$gid_b" -r 192.0.2.1 -n 60 -t 3
	na sroce-traffic --server -d sroce_a -g "$gid_a" --timeout 60 \
		>"$tmp/server" 2>&1 &
	server=$!
	wait_server 10 "$server" ns_listening a 18515 || true
	failing -n b sroce-traffic --client 192.0.2.1 -d sroce_b \
		-g "$gid_b" --timeout 60 --transport rc --qps 2 --ops 500
	kill "$server" 2>/dev/null || true
	wait "$server" 2>/dev/null || true
done
log "failures injected: slab $(injected failslab), pages $(injected fail_page_alloc)"
(($(injected failslab) > 0)) || fail "no slab allocation was failed"
attrs_off

traffic_unchanged "$tmp" "$before_a" "$before_b"
