#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# The harness itself, with the in-tree rdma_rxe only: the guest runs on
# as many CPUs as QEMU gave it (vm-run's sroce_smp=; a kernel that finds
# fewer hides every race between CPUs: the debug kernel once ran on one),
# the standard topology comes up (lib.sh, topo_up rxe), libibverbs sees
# both devices with active ports and the RoCE v2 GIDs of their addresses,
# and it all goes away again without a kernel complaint.
#
# rxe in 6.1 and 6.12 opens its UDP socket in the initial network
# namespace only, so rxe_a and rxe_b cannot talk to each other: no
# traffic here.
# timeout: 120
set -euo pipefail

. "$(dirname "$0")/lib.sh"

# librxe from the system's provider directory, not libsroce.
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
kernel_log_clean || fail "the kernel complained"
log "harness OK"
