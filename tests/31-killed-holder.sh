#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# 31-killed-holder: a process's sroce objects go away with the process,
# and a device goes away even while a process holds objects on it.
#
# userspace/tools/sroce-hold opens a device (lib.sh's topology), creates
# 4 PDs, 4 CQs, 4 SRQs, 100 QPs (RC and UD, some on SRQs, a third of them
# in RTS), 100 MRs, 10 MWs and 10 AHs, says "ready" and waits.
#
#   1. SIGKILL: `rdma resource show` counts exactly the holder's objects
#      on top of the RDMA core's own while it lives, and nothing of them
#      once it is killed; then `rdma link del` works.
#   2. `rdma link del` while the holder lives: the deletion completes (the
#      RDMA core disassociates the process's context) and the holder sees
#      IBV_EVENT_DEVICE_FATAL and EIO from every command, but can still
#      poll its CQs (their rings stay mapped) and destroy everything.
#   3. rmmod sroce while a holder lives: the same, and the holder polls its
#      CQ rings and cleans up only after the module is gone.
#
# No kernel complaint, and sroce unloads at the end.
# timeout: 180
set -e
. "$(dirname "$0")/lib.sh"

holder=
cleanup() {
	[[ -z $holder ]] || kill -KILL "$holder" 2>/dev/null || true
	topo_down
}
trap cleanup EXIT

tmp=$(mktemp -d)

# What the holder must print once its device is gone (the first two lines
# in either order: which it notices first is a race).
after_removal='event DEVICE_FATAL
query_port: EIO
poll_cq: 4 ok
alloc_pd: EIO
modify_qp: EIO
destroy_ah: 10 ok
dealloc_mw: 10 ok
dereg_mr: 100 ok
destroy_qp: 100 ok
destroy_srq: 4 ok
destroy_cq: 4 ok
dealloc_pd: 4 ok
close_device: 0
done'

# plus BASE N...: BASE ("pd 1 cq 1 ...") with N added to each count, in
# order (pd cq qp cm_id mr ctx srq).
plus() {
	local -a f
	local i=1 n

	read -ra f <<<"$1"
	shift
	for n; do
		f[i]=$((f[i] + n))
		i=$((i + 2))
	done
	echo "${f[*]}"
}

# start_holder DEV NS IP PEER [ARGS...]: start sroce-hold in netns NS,
# wait until it is ready.
start_holder() {
	local dev=$1 ns=$2 ip=$3 peer=$4 gid

	shift 4
	gid=$(gid_index "$dev" "$ip")
	ip netns exec "$ns" sroce-hold -d "$dev" -g "$gid" -r "$peer" -t 120 "$@" \
		>"$tmp/$dev.out" 2>&1 &
	holder=$!
	wait_for 30 grep -q '^ready ' "$tmp/$dev.out"
	log "holder on $dev: $(head -n 1 "$tmp/$dev.out")"
}

# check_holder_saw DEV: the holder exited 0 and printed $after_removal.
check_holder_saw() {
	local status=0 got

	wait "$holder" || status=$?
	holder=
	got=$(tail -n +2 "$tmp/$1.out")
	got=$(sort <(head -n 2 <<<"$got"))$'\n'$(tail -n +3 <<<"$got")
	if ((status != 0)) || [[ $got != "$after_removal" ]]; then
		sed 's/^/holder: /' "$tmp/$1.out"
		fail "the holder on $1 (status $status) did not see what it should"
	fi
	log "holder on $1 saw: $(tail -n +2 "$tmp/$1.out" | paste -sd, -)"
}

device_gone() {
	[[ ! -e /sys/class/infiniband/$1 ]]
}

topo_up
base_a=$(resources sroce_a)
base_b=$(resources sroce_b)

# 1. SIGKILL
start_holder sroce_a a 192.0.2.1 192.0.2.2
want=$(plus "$base_a" 4 4 100 0 100 1 4)
[[ $(resources sroce_a) == "$want" ]] ||
	fail "sroce_a holds '$(resources sroce_a)', expected '$want'"
mrs=$(rdma resource show mr | grep -c '^dev sroce_a .*comm sroce-hold') || true
((mrs == 100)) || fail "rdma resource show mr: $mrs MRs of sroce-hold, expected 100"
log "sroce_a with the holder: $want"
kill -KILL "$holder"
wait "$holder" 2>/dev/null || true
holder=
wait_for 10 resources_are sroce_a "$base_a"
log "holder killed: sroce_a back to $base_a"
rdma link del sroce_a || fail "rdma link del sroce_a failed after the holder died"
wait_for 10 device_gone sroce_a

# 2. rdma link del under a live holder
start_holder sroce_b b 192.0.2.2 192.0.2.1
timeout 30 rdma link del sroce_b || fail "rdma link del sroce_b under a holder: status $?"
wait_for 10 device_gone sroce_b
check_holder_saw sroce_b

# 3. rmmod under a live holder, which cleans up only after the module is gone
topo_down
topo_up
start_holder sroce_a a 192.0.2.1 192.0.2.2 -w "$tmp/go"
timeout 60 rmmod sroce || fail "rmmod sroce under a holder: status $?"
wait_for 10 device_gone sroce_a
wait_for 10 grep -q '^query_port: EIO$' "$tmp/sroce_a.out"
touch "$tmp/go"
check_holder_saw sroce_a

kernel_log_clean || fail "the kernel complained"
rm -rf "$tmp"
