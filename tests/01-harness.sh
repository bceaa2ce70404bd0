#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# 01-harness: the harness itself, with the in-tree rdma_rxe only.
#
# The guest runs on as many CPUs as QEMU gave it (vm-run's sroce_smp=; a
# kernel that finds fewer hides every race between CPUs: the debug
# kernel once ran on one), the standard topology comes up (lib.sh,
# topo_up rxe), libibverbs sees both devices with active ports and the
# RoCE v2 GIDs of their addresses, and it all goes away again without a
# kernel complaint. KFENCE must be sampling where the kernel has it.
#
# rxe in 6.1 and 6.12 opens its UDP socket in the initial network
# namespace only, so rxe_a and rxe_b cannot talk to each other: no
# traffic here.
#
# Then the counts: 20-pyverbs run on a copy of the pyverbs suite none of
# whose test modules can be imported (each is then one skip) must fail,
# saying how few passed: a suite that runs nothing does not pass.
# (scripts/check-selftest checks the host's side: unexpected skips,
# promised kernels, the deadline.)
# runs-on: every
# timeout: 300
set -euo pipefail

. "$(dirname "$0")/lib.sh"

# librxe from the system's provider directory, not libsroce (which the
# counts' 20-pyverbs run below gets back).
drivers=${RDMAV_DRIVERS:-}
unset RDMAV_DRIVERS

# check_device DEV IPV4 IPV6: DEV is listed with an active port and the
# RoCE v2 GIDs of both addresses.
check_device() {
	local dev=$1 info

	info=$(ibv_devinfo -v -d "$dev") || fail "ibv_devinfo -d $dev failed"
	grep -q 'state:.*PORT_ACTIVE' <<<"$info" || fail "$dev: port not PORT_ACTIVE"
	grep -Eq "GID\\[ *[0-9]+\\]:[[:space:]]+::ffff:$2, RoCE v2\$" <<<"$info" ||
		fail "$dev: no RoCE v2 GID ::ffff:$2"
	grep -Eq "GID\\[ *[0-9]+\\]:[[:space:]]+$3, RoCE v2\$" <<<"$info" ||
		fail "$dev: no RoCE v2 GID $3"
	# lib.sh reads the same table from sysfs.
	gid_index "$dev" "$2" >/dev/null
	gid_index "$dev" "$3" >/dev/null
	log "$dev: PORT_ACTIVE, GIDs ::ffff:$2 and $3 (RoCE v2)"
}

smp=$(grep -o 'sroce_smp=[0-9]*' /proc/cmdline) || smp=
if [[ -n $smp ]]; then
	(($(nproc) == ${smp#*=})) ||
		fail "the guest runs on $(nproc) CPUs, QEMU gave it ${smp#*=}"
	log "$(nproc) CPUs, as QEMU gave"
fi

# The memory checkers the kernel has are on: KFENCE (vm-run turns it on;
# Debian builds it in, off) and kmemleak (tests/run scans with it).
kfence=/sys/module/kfence/parameters/sample_interval
if [[ -r $kfence ]]; then
	(($(cat "$kfence") > 0)) || fail "KFENCE is built in but off (sample_interval $(cat "$kfence"))"
	log "KFENCE samples an allocation every $(cat "$kfence") ms"
else
	log "no KFENCE in this kernel"
fi
debugfs_mount
if [[ -e /sys/kernel/debug/kmemleak ]]; then
	log "kmemleak: on"
else
	log "no kmemleak in this kernel"
fi

trap topo_down EXIT
topo_up rxe

devices=$(ibv_devices) || fail "ibv_devices failed"
for dev in rxe_a rxe_b; do
	grep -qw "$dev" <<<"$devices" || fail "ibv_devices does not list $dev"
done
check_device rxe_a 192.0.2.1 2001:db8::1
check_device rxe_b 192.0.2.2 2001:db8::2
na busybox ping -c 1 -W 5 192.0.2.2 >/dev/null || fail "no IPv4 between the namespaces"
na busybox ping -c 1 -W 5 2001:db8::2 >/dev/null || fail "no IPv6 between the namespaces"

topo_down
trap - EXIT
[[ ! -e /sys/class/infiniband/rxe_a && ! -e /run/netns/a ]] ||
	fail "topo_down left rxe_a or netns a behind"
# The counts: a pyverbs suite that cannot import runs nothing, and fails.
suite=/usr/share/doc/rdma-core/tests
if [[ -f $suite/run_tests.py ]]; then
	broken=$(mktemp -d)
	trap 'rm -rf "$broken"' EXIT
	cp -r "$suite" "$broken/suite"
	gunzip -f "$broken"/suite/test_*.py.gz
	for m in "$broken"/suite/test_*.py; do
		sed -i '1i raise ImportError("broken on purpose by 01-harness")' "$m"
	done
	status=0
	RDMAV_DRIVERS=$drivers SROCE_PYVERBS_SUITE=$broken/suite SROCE_REASON=$broken/reason \
		"$SROCE_TOP/tests/20-pyverbs.sh" >"$broken/out" 2>&1 || status=$?
	reason=$(cat "$broken/reason" 2>/dev/null || true)
	((status == 1)) ||
		fail "20-pyverbs on a suite that cannot import: status $status, not 1 ($reason; $(tail -n 3 "$broken/out"))"
	[[ $reason == *"fewer than"* ]] ||
		fail "20-pyverbs on a suite that cannot import failed for another reason: $reason"
	log "counts: 20-pyverbs on a suite that cannot import fails: $reason"
	rm -rf "$broken"
	trap - EXIT
else
	fail "no pyverbs suite in $suite (python3-pyverbs)"
fi

kernel_log_clean || fail "the kernel complained"
log "harness OK"
