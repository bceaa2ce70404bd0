# SPDX-License-Identifier: GPL-2.0
#
# tests/lib.sh: helpers for the sroce tests. Every test sources it; it runs
# inside the test VM (scripts/vm-run), as root, never on the host.
#
# The standard topology, built by topo_up [TYPE] and torn down by topo_down
# (TYPE is sroce, the default, or rxe; devices are then rxe_a and rxe_b;
# or installed: sroce devices, the module loaded by rdma link add):
#
#   +--------- netns a ----------+          +--------- netns b ----------+
#   |                            |          |                            |
#   |  sroce_a (rdma link)       |          |  sroce_b (rdma link)       |
#   |     |                      |          |     |                      |
#   |  veth_a                    |   veth   |  veth_b                    |
#   |  192.0.2.1/24              |==========|  192.0.2.2/24              |
#   |  2001:db8::1/64            |          |  2001:db8::2/64            |
#   +----------------------------+          +----------------------------+
#
# RDMA devices are shared across network namespaces (the kernel's default),
# so both devices are visible, in /sys/class/infiniband and to libibverbs,
# from every namespace; the netdev each is bound to is not.
#
# API (see Documentation/testing.md):
#   SROCE_TOP SROCE_BUILD KREL SROCE_KO; RDMAV_DRIVERS and PATH exported
#   log MSG...            print MSG
#   fail MSG...           print MSG, exit 1 (the test fails)
#   skip MSG...           print MSG, exit 77 (the test is skipped)
#   wait_for SECS CMD...  poll CMD every 0.1 s until it succeeds (for SECS
#                         times SROCE_TIMEOUT_SCALE)
#   scaled SECS           print SECS times SROCE_TIMEOUT_SCALE, for a
#                         test's own time limits (timeout $(scaled 120) ...)
#   scaled_down N         print N divided by SROCE_TIMEOUT_SCALE (at least
#                         1), for a count of work on a slow kernel
#   wait_server SECS PID CMD...  the same, but return 1 if process PID exits
#   sroce_load            load sroce.ko and what it needs (no-op if loaded)
#   sroce_unload          unload sroce, wait until it is gone
#   na CMD... / nb CMD... run CMD in network namespace a / b
#   ns_listening NS PORT  something listens on TCP PORT in netns NS
#   ns_pair PORT OUT_S OUT_C SERVER... -- CLIENT...
#                         SERVER in netns a until it listens on PORT, then
#                         CLIENT in netns b; exit statuses in pair_st_s
#                         and pair_st_c; returns 1 (the server's output
#                         shown) if the server exits before it listens
#   topo_up [TYPE]        build the topology above, wait until it is usable
#   topo_down             tear it down, whatever state it is in
#   kernel_log_clean      no kernel complaint since the last call?
#   gid_index DEV IP [TYPE]  print the GID table index of IP on DEV
#   topo_neigh_pin        make each side's neighbour entries for the other
#                         (IPv4, IPv6) permanent
#   test_param NAME DEFAULT  print SROCE_NAME from the environment, else
#                         sroce_name= (lower case) from the kernel command
#                         line (the guest's environment is not the host's:
#                         SROCE_VM_APPEND="sroce_name=V" scripts/check ...),
#                         else DEFAULT
#   debug_kernel          is this a lockdep kernel (make check-debug's)?
#   kernel_has_bh_wq      does this kernel have BH workqueues (6.9 on: sroce's
#                         module parameter engine=bh)?
#
# Each helper that cannot do its job calls fail, which exits the shell
# it runs in: call helpers from the test's own shell, not from $(...) or
# a pipeline, or check their status.

# Builtins only, where it matters: every exec costs ~70 ms in the VM.
_lib=${BASH_SOURCE[0]}
[[ $_lib == */* ]] || _lib=./$_lib
SROCE_TOP=$(cd "${_lib%/*}/.." && pwd)
unset _lib
SROCE_BUILD=$SROCE_TOP/build
read -r KREL </proc/sys/kernel/osrelease
SROCE_KO=$SROCE_BUILD/$KREL/sroce.ko
RDMAV_DRIVERS=$SROCE_BUILD/userspace/libsroce
PATH=$SROCE_BUILD/userspace/bin:$PATH
export SROCE_TOP SROCE_BUILD KREL SROCE_KO RDMAV_DRIVERS PATH

# Where helpers keep state between calls (a tmpfs in the VM).
SROCE_STATE=${SROCE_STATE:-/run/sroce}

test_param() {
	local env=SROCE_$1 key=sroce_${1,,}= w

	if [[ -n ${!env:-} ]]; then
		echo "${!env}"
		return
	fi
	for w in $(</proc/cmdline); do
		if [[ $w == "$key"* ]]; then
			echo "${w#"$key"}"
			return
		fi
	done
	echo "$2"
}

# make check-debug's kernel is the one with lockdep.
debug_kernel() {
	[[ -e /proc/lockdep ]]
}

# BH workqueues (system_bh_wq) came with 6.9.
kernel_has_bh_wq() {
	local major minor

	IFS=. read -r major minor _ <<<"$KREL"
	((major > 6 || (major == 6 && minor >= 9)))
}

log() {
	printf '%s\n' "$*"
}

# tests/run names a file (SROCE_REASON) that receives the reason of a
# failure or skip, for its RESULT line. The first reason given stands: a
# fail in the cleanup trap is most likely a consequence.
_reason() {
	if [[ -n ${SROCE_REASON:-} && ! -e $SROCE_REASON ]]; then
		printf '%s\n' "$*" >"$SROCE_REASON"
	fi
	return 0
}

fail() {
	printf 'FAIL: %s\n' "$*" >&2
	_reason "$*"
	exit 1
}

skip() {
	printf 'SKIP: %s\n' "$*"
	_reason "$*"
	exit 77
}

# A slow kernel (the debug kernel: KASAN, lockdep) sets
# SROCE_TIMEOUT_SCALE (scripts/vm-run); every time limit stretches by it.
scaled() {
	echo "$((${1:?usage: scaled SECONDS} * ${SROCE_TIMEOUT_SCALE:-1}))"
}

# A count of work (messages, rounds) for a slow kernel: N divided by
# SROCE_TIMEOUT_SCALE, at least 1; the work a time limit is set for
# stays the same on every kernel where a test uses scaled() alone.
scaled_down() {
	local n=$((${1:?usage: scaled_down N} / ${SROCE_TIMEOUT_SCALE:-1}))

	echo "$((n > 0 ? n : 1))"
}

# "10s", or "10s x4" where the limit was scaled.
scaled_text() {
	local scale=${SROCE_TIMEOUT_SCALE:-1}

	((scale == 1)) && echo "${1}s" || echo "${1}s x$scale"
}

# wait_for SECONDS CMD...: SECONDS may have a fraction (0.5); the limit is
# SECONDS times SROCE_TIMEOUT_SCALE.
wait_for() {
	local secs=${1:?usage: wait_for SECONDS CMD...} frac='' limit start

	shift
	# A helper that does not exist would only look like a slow server.
	type -t "$1" >/dev/null || fail "wait_for: no command or function '$1'"
	[[ $secs == *.* ]] && frac=${secs#*.}
	frac=${frac}000000
	limit=$(((10#${secs%.*} * 1000000 + 10#${frac:0:6}) * ${SROCE_TIMEOUT_SCALE:-1}))
	start=${EPOCHREALTIME/./}
	until "$@" >/dev/null 2>&1; do
		if ((${EPOCHREALTIME/./} - start > limit)); then
			fail "timed out after $(scaled_text "$secs") waiting for: $*"
		fi
		sleep 0.1
	done
}

_ready_or_gone() {
	local pid=$1

	shift
	"$@" || ! kill -0 "$pid" 2>/dev/null
}

# wait_server SECONDS PID CMD...: wait_for CMD (a server started in the
# background as process PID is ready), but return 1 at once if the server
# exits first, so that the caller can show its output.
wait_server() {
	local secs=${1:?usage: wait_server SECONDS PID CMD...} pid=${2:?}

	shift 2
	wait_for "$secs" _ready_or_gone "$pid" "$@"
	kill -0 "$pid" 2>/dev/null
}

na() {
	ip netns exec a "$@"
}

_ns_a_listening() {
	na ss -Htuln "sport = :$1" | grep -q .
}

# ns_listening NS PORT: something listens on TCP PORT in netns NS (a
# perftest server's exchange port, 18515, for wait_server).
ns_listening() {
	ip netns exec "$1" ss -Htln "sport = :$2" | grep -q .
}

# cm_listening PORT: an rdma_cm ID listens on PORT (for wait_server).
cm_listening() {
	rdma resource show cm_id | grep -q "state LISTEN .*:$1 "
}

# debugfs_mount: debugfs is mounted (fault injection's knobs), or fail.
debugfs_mount() {
	mountpoint -q /sys/kernel/debug || mount -t debugfs none /sys/kernel/debug ||
		fail "cannot mount debugfs"
}

# counter DEV NAME: the device's hardware counter NAME (rdma statistic).
counter() {
	local v

	read -r v <"/sys/class/infiniband/$1/ports/1/hw_counters/$2"
	echo "$v"
}

# counter_is DEV NAME VALUE: the counter is VALUE (for wait_for).
counter_is() {
	[[ $(counter "$1" "$2") == "$3" ]]
}

# fault_hits DEV KIND: faults of KIND fault injection made on DEV
# (debugfs sroce/DEV/hits, drivers/sroce/fault.c).
fault_hits() {
	awk -v k="$2" '$1 == k { print $2 }' "/sys/kernel/debug/sroce/$1/hits"
}

# resources DEV: "pd N cq N qp N cm_id N mr N ctx N srq N" of `rdma
# resource show DEV`.
resources() {
	local line

	line=$(rdma resource show "$1") || return 1
	echo "${line#*"$1": }" | sed 's/ *$//'
}

# resources_are DEV COUNTS: resources DEV prints COUNTS (for wait_for).
resources_are() {
	[[ $(resources "$1") == "$2" ]]
}

# ns_pair PORT OUT_S OUT_C SERVER... -- CLIENT...: a client-server run
# across lib.sh's topology. SERVER runs in netns a, its output into
# OUT_S; once something listens on TCP or UDP port PORT there (at most
# 20 s), CLIENT runs in netns b, its output into OUT_C, then the server
# is waited for. Their exit statuses are left in pair_st_s and
# pair_st_c. Returns 1 if the server exits before it listens, after
# printing its output.
# shellcheck disable=SC2034 # pair_st_s and pair_st_c are the caller's
ns_pair() {
	local port=$1 out_s=$2 out_c=$3 pid
	local -a server=()

	shift 3
	while (($#)) && [[ $1 != -- ]]; do
		server+=("$1")
		shift
	done
	shift
	pair_st_s=0
	pair_st_c=0
	na "${server[@]}" >"$out_s" 2>&1 &
	pid=$!
	if ! wait_server 20 "$pid" _ns_a_listening "$port"; then
		wait "$pid" || pair_st_s=$?
		sed 's/^/  server: /' "$out_s"
		return 1
	fi
	nb "$@" >"$out_c" 2>&1 || pair_st_c=$?
	wait "$pid" || pair_st_s=$?
}

nb() {
	ip netns exec b "$@"
}

_module_loaded() {
	[[ -d /sys/module/$1 ]]
}

# sroce_load: insmod sroce.ko, with the module parameters that
# SROCE_MODULE_PARAMS or sroce_module_params= on the kernel command line
# name (test_param; NAME=VALUE, comma-separated: to run tests with
# another setting, e.g. SROCE_VM_APPEND="sroce_module_params=engine=bh").
sroce_load() {
	local deps params
	local -a mods opts

	_module_loaded sroce && return 0
	[[ -f $SROCE_KO ]] ||
		fail "$SROCE_KO is missing: build it with 'make module KERNELRELEASE=$KREL'"
	modprobe -a ib_core ib_uverbs rdma_ucm || fail "cannot load the RDMA core modules"
	deps=$(modinfo -F depends "$SROCE_KO") || fail "modinfo $SROCE_KO failed"
	IFS=, read -ra mods <<<"$deps"
	if ((${#mods[@]})); then
		modprobe -a "${mods[@]}" || fail "cannot load sroce's dependencies: $deps"
	fi
	params=$(test_param MODULE_PARAMS "")
	IFS=, read -ra opts <<<"$params"
	insmod "$SROCE_KO" "${opts[@]}" || fail "insmod $SROCE_KO ${opts[*]} failed"
	((${#opts[@]} == 0)) || log "sroce loaded with ${opts[*]}"
}

# Unload module $1 if it is loaded; succeed once it is gone.
_module_gone() {
	_module_loaded "$1" || return 0
	timeout 30 rmmod "$1" 2>/dev/null
	! _module_loaded "$1"
}

sroce_unload() {
	_module_loaded sroce || return 0
	# rmmod fails while a device or a user is still letting go: retry.
	wait_for 30 _module_gone sroce
}

# The GID of an IPv4 (RoCE v2 IPv4-mapped) or IPv6 address, in the
# eight-group form of /sys/class/infiniband/*/ports/*/gids/*.
_gid_of() {
	local ip=$1 a b c d head tail n g out=
	local -a h t groups

	if [[ $ip != *:* ]]; then
		IFS=. read -r a b c d <<<"$ip"
		printf '0000:0000:0000:0000:0000:ffff:%02x%02x:%02x%02x\n' "$a" "$b" "$c" "$d"
		return
	fi
	head=$ip tail=
	if [[ $ip == *::* ]]; then
		head=${ip%%::*} tail=${ip#*::}
	fi
	IFS=: read -ra h <<<"$head"
	IFS=: read -ra t <<<"$tail"
	groups=("${h[@]}")
	for ((n = 8 - ${#h[@]} - ${#t[@]}; n > 0; n--)); do
		groups+=(0)
	done
	groups+=("${t[@]}")
	for g in "${groups[@]}"; do
		printf -v out '%s%s%04x' "${out:-}" "${out:+:}" "$((16#$g))"
	done
	echo "$out"
}

# _gid_find DEV GID [TYPE]: print the index in port 1's GID table of DEV
# of GID (of type TYPE, if given); fail (status 1) if there is none. The
# table has up to 1024 entries, used ones first: a loop of builtins.
_gid_find() {
	local port=/sys/class/infiniband/$1/ports/1 gid=$2 type=${3:-} i g t

	for ((i = 0; ; i++)); do
		read -r g 2>/dev/null <"$port/gids/$i" || return 1
		[[ $g == "$gid" ]] || continue
		[[ -z $type ]] && { echo "$i"; return 0; }
		read -r t 2>/dev/null <"$port/gid_attrs/types/$i" || continue
		[[ $t == "$type" ]] && { echo "$i"; return 0; }
	done
}

# gid_index DEV IP [TYPE]: print the index in port 1's GID table of DEV of
# the GID for IP (192.0.2.1 or 2001:db8::1) of type TYPE ("RoCE v2", the
# default, or "IB/RoCE v1"); fail if there is none.
gid_index() {
	_gid_find "$1" "$(_gid_of "$2")" "${3:-RoCE v2}" ||
		fail "$1 has no ${3:-RoCE v2} GID for $2"
}

# topo_neigh_pin: modifying a QP to RTR (or SQD to SQD with a new path)
# resolves its peer's MAC through the neighbour table; on a loaded TCG
# host, or a veth full of RoCE traffic, neighbour discovery can time out
# and the modify fail with ETIMEDOUT. Tests about the driver pin them.
topo_neigh_pin() {
	local mac_a mac_b

	mac_a=$(na cat /sys/class/net/veth_a/address)
	mac_b=$(nb cat /sys/class/net/veth_b/address)
	if ! na ip neigh replace 192.0.2.2 lladdr "$mac_b" dev veth_a nud permanent ||
		! na ip neigh replace 2001:db8::2 lladdr "$mac_b" dev veth_a nud permanent ||
		! nb ip neigh replace 192.0.2.1 lladdr "$mac_a" dev veth_b nud permanent ||
		! nb ip neigh replace 2001:db8::1 lladdr "$mac_a" dev veth_b nud permanent; then
		fail "cannot pin the neighbour entries"
	fi
}

_port_active() {
	local state

	read -r state 2>/dev/null </sys/class/infiniband/"$1"/ports/1/state
	[[ $state == *ACTIVE ]]
}

_has_gids() {
	local dev=$1 ip

	shift
	for ip; do
		_gid_find "$dev" "$(_gid_of "$ip")" >/dev/null || return 1
	done
}

# Few execs: each costs ~50 ms in the VM.
_topo_net_up() {
	ip netns add a || fail "cannot add netns a (left over from an earlier test?)"
	ip netns add b || fail "cannot add netns b"
	ip link add veth_a netns a type veth peer name veth_b netns b ||
		fail "cannot add the veth pair"
	_topo_addr a 1
	_topo_addr b 2
}

# _topo_addr NS N: veth_NS gets 192.0.2.N and 2001:db8::N, and goes up.
_topo_addr() {
	ip -n "$1" -batch - <<-EOF || fail "cannot configure veth_$1"
		addr add 192.0.2.$2/24 dev veth_$1
		addr add 2001:db8::$2/64 dev veth_$1 nodad
		link set lo up
		link set veth_$1 up
	EOF
}

topo_up() {
	local type=${1:-sroce}

	case $type in
	sroce) sroce_load ;;
	# sroce as installed (69-install): rdma link add loads it by its alias.
	installed) type=sroce ;;
	rxe) modprobe rdma_rxe || fail "cannot load rdma_rxe" ;;
	*) fail "topo_up: unknown link type '$type'" ;;
	esac
	_topo_net_up
	na rdma link add "${type}_a" type "$type" netdev veth_a ||
		fail "rdma link add ${type}_a failed"
	nb rdma link add "${type}_b" type "$type" netdev veth_b ||
		fail "rdma link add ${type}_b failed"
	# The port state is what "rdma link show" prints.
	wait_for 10 _port_active "${type}_a"
	wait_for 10 _port_active "${type}_b"
	wait_for 10 _has_gids "${type}_a" 192.0.2.1 2001:db8::1
	wait_for 10 _has_gids "${type}_b" 192.0.2.2 2001:db8::2
}

_topo_devices() {
	local d

	for d in /sys/class/infiniband/*; do
		case ${d##*/} in
		sroce_[ab] | rxe_[ab]) echo "${d##*/}" ;;
		esac
	done
}

_topo_gone() {
	[[ -z $(_topo_devices) && ! -e /run/netns/a && ! -e /run/netns/b ]]
}

# Tolerant of any half-built state, and usable as "trap topo_down EXIT".
topo_down() {
	local d ns

	for d in $(_topo_devices); do
		rdma link del "$d" 2>/dev/null || true
	done
	for ns in a b; do
		[[ -e /run/netns/$ns ]] || continue
		ip netns pids "$ns" | xargs -r kill -KILL 2>/dev/null || true
		ip netns del "$ns" || true
	done
	wait_for 10 _topo_gone
}

# topo_tmp_down: for "trap topo_tmp_down EXIT" in a test that keeps its
# scratch files in a directory named by $tmp (empty until it makes one):
# topo_down, then the directory removed.
topo_tmp_down() {
	topo_down
	[[ -z ${tmp-} ]] || rm -rf "$tmp"
}

# _klog_since NAME: print the kernel complaints (tests/kernel-complaints)
# logged since the last call with the same NAME, or since boot, and move
# NAME's cursor to now. The log is read from /dev/kmsg, whose sequence
# numbers, unlike line counts, survive the ring buffer wrapping. Each
# read() of /dev/kmsg returns one record; the non-blocking read that
# finds no more ends dd.
_klog_since() {
	local cursor=$SROCE_STATE/klog-$1.seq

	[[ -d $SROCE_STATE ]] || mkdir -p "$SROCE_STATE"
	{ dd if=/dev/kmsg iflag=nonblock bs=64k status=none 2>/dev/null || true; } |
		_klog_filter "$cursor"
}

# _klog_filter CURSOR: of the /dev/kmsg records on standard input, print
# the complaints after the sequence number in file CURSOR (all if there is
# none), and write the last record's number to CURSOR. A WARNING comes
# with the message before it, which is where most WARNs say what went
# wrong (a workqueue's flush dependency names both queues there), unless
# that message was a complaint, already printed (scripts/check-selftest
# feeds it records).
_klog_filter() {
	awk -v cursor="$1" -v patterns="$SROCE_TOP/tests/kernel-complaints" '
		BEGIN {
			last = -1
			if ((getline line <cursor) > 0)
				last = line + 0
			while ((getline p <patterns) > 0)
				if (p ~ /^!/)
					ok[++m] = substr(p, 2)
				else if (p !~ /^(#|$)/)
					pat[++n] = p
		}
		/^[0-9]+,[0-9]+,/ {
			i = index($0, ";")
			split(substr($0, 1, i - 1), h, ",")
			if (h[2] + 0 <= last)
				next
			seen = h[2]
			msg = substr($0, i + 1)
			before = prev
			before_shown = prev_shown
			prev = msg
			prev_shown = 0
			for (k = 1; k <= m; k++)
				if (msg ~ ok[k])
					next
			for (k = 1; k <= n; k++)
				if (msg ~ pat[k]) {
					if (msg ~ /^WARNING:/ && before != "" && !before_shown)
						print "(before it) " before
					print msg
					prev_shown = 1
					break
				}
		}
		END {
			if (seen != "")
				print seen >cursor
		}'
}

# _klog_mark NAME: move NAME's cursor to now.
_klog_mark() {
	_klog_since "$1" >/dev/null
}

kernel_log_clean() {
	local bad

	bad=$(_klog_since user)
	[[ -z $bad ]] && return 0
	sed 's/^/kernel: /' <<<"$bad" >&2
	return 1
}
