#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# 10-lifecycle: sroce can be loaded, used and unloaded again and again,
# whichever way its devices go, and leaves nothing behind.
#
# Twenty times: load sroce, build lib.sh's topology (sroce_a on veth_a in
# netns a, sroce_b on veth_b in netns b), then take the devices away in
# one of four ways, in turn:
#
#   1. rdma link del sroce_a, sroce_b
#   2. ip link del veth_a          (the veth pair goes, and both devices)
#   3. ip netns del a, b           (the veths go with their namespaces)
#   4. rmmod sroce                 (with both devices present)
#
# then tear the rest down and unload. After each round: no sroce device,
# no netns a or b, no veth, sroce unloaded. At the end: `rdma resource
# show` as before the first round, and slab memory no bigger than after
# the first round (below, and slab_kib).
#
# The slab check measures the kmalloc-1k to -8k caches (a struct
# sroce_dev is a kmalloc-4k object, a GID table a kmalloc-8k one). It
# shrinks them first, so that the "active" counts are exact (a shrink also
# empties KASAN's quarantine), and takes the smallest of readings 0.2 s
# apart, read until the smallest has held for 2 s: a deleted network
# namespace is freed later by a kernel worker, seconds later on the debug
# kernel, and two namespaces weigh about 200 KiB in these caches (the
# debug kernel failed one run in two by 195 KiB when five readings over
# half a second were taken). The limit is 48 KiB between rounds 1 and 20.
#
# What it would have caught:
#
# A leaked struct sroce_dev: the sum moved by -4 to +8 KiB in clean runs,
# and by 76 KiB when one more kmalloc-4k object (the size of a leaked
# sroce_dev) was held each round.
# timeout: 400
set -e
. "$(dirname "$0")/lib.sh"
trap topo_down EXIT

rounds=20

# Slab bytes, in KiB, in the kmalloc caches of 1 to 8 KiB objects: a
# struct sroce_dev (3.3 KiB, with the struct ib_device in it) is a
# kmalloc-4k object, each device's GID table a kmalloc-8k one, its port
# data kmalloc-1k/2k ones. Every slab of these caches is first given back
# (.../shrink flushes the per-CPU slabs, and KASAN's quarantine, so
# "active" counts are exact), and the smallest of readings 0.2 s apart is
# taken: what the rest of the system allocates for a moment (a seq_file
# buffer, a forking shell) only ever adds. The readings go on until the
# smallest has held for 2 s (at most 30 s): a deleted network namespace is
# freed later by a kernel worker (cleanup_net), which on the debug kernel
# can take seconds, and two namespaces' sysctl tables and neighbour
# tables in these caches weigh about 200 KiB. Measured this way, the sum
# moved by -4 to +8 KiB between rounds 1 and 20 on both kernels, while
# one more kmalloc-4k object held each round (a 3900-byte user key,
# standing in for a leaked sroce_dev) made it exactly 76 KiB = 19 x 4 KiB.
# A leaked ib_device with its GID table would be 19 x 12 KiB or more.
slab_caches="kmalloc-1k kmalloc-2k kmalloc-4k kmalloc-8k"
slab_threshold_kib=48

slab_kib() {
	local c name active total size rest sum min=-1 held=0 i

	for ((i = 0; i < 150 && held < 10; i++)); do
		for c in $slab_caches; do
			echo 1 >"/sys/kernel/slab/$c/shrink"
		done
		sum=0
		while read -r name active total size rest; do
			[[ " $slab_caches " == *" $name "* ]] || continue
			sum=$((sum + active * size))
		done </proc/slabinfo
		if ((min < 0 || sum < min)); then
			min=$sum
			held=0
		else
			held=$((held + 1))
		fi
		sleep 0.2	# sampling, not waiting for anything
	done
	echo $((min / 1024))
}

# Unreclaimable slab, in KiB (informational: it moves by hundreds of KiB
# from round to round as the rest of the system runs).
sunreclaim_kib() {
	local key val unit

	while read -r key val unit; do
		if [[ $key == SUnreclaim: ]]; then
			echo "$val"
		fi
	done </proc/meminfo
}

no_sroce_devices() {
	! compgen -G '/sys/class/infiniband/sroce*' >/dev/null
}

# The initial namespace's netdevs are in its /sys/class/net.
no_veths() {
	! compgen -G '/sys/class/net/veth_*' >/dev/null
}

no_netns() {
	[[ ! -e /run/netns/a && ! -e /run/netns/b ]]
}

load() {
	if (($1 == 1)); then
		sroce_load
	else
		insmod "$SROCE_KO" || fail "round $1: insmod failed"
	fi
}

# Take both devices away the round's way; return once they are gone.
remove_devices() {
	local how=$(($1 % 4))

	case $how in
	1)
		rdma link del sroce_a || fail "round $1: rdma link del sroce_a failed"
		rdma link del sroce_b || fail "round $1: rdma link del sroce_b failed"
		;;
	2) na ip link del veth_a || fail "round $1: ip link del veth_a failed" ;;
	3) ip netns del a && ip netns del b || fail "round $1: ip netns del failed" ;;
	0) sroce_unload ;;
	esac
	wait_for 10 no_sroce_devices
}

check_clean() {
	no_sroce_devices || fail "round $1: a sroce device is left"
	! _module_loaded sroce || fail "round $1: sroce is still loaded"
	no_netns || fail "round $1: netns a or b is left"
	no_veths || fail "round $1: a veth is left: $(compgen -G '/sys/class/net/veth_*')"
}

for c in $slab_caches; do
	[[ -w /sys/kernel/slab/$c/shrink ]] || skip "no /sys/kernel/slab/$c (SLUB sysfs)"
done
modprobe -a ib_core ib_uverbs rdma_ucm || fail "cannot load the RDMA core"
resources_before=$(rdma resource show)

# Every round loads the same module, read once: a build that rewrites
# $SROCE_KO meanwhile (on the host, through 9p) must not mix two.
ko=$(mktemp --suffix=.ko)
cp "$SROCE_KO" "$ko"
SROCE_KO=$ko

for ((round = 1; round <= rounds; round++)); do
	load "$round"
	topo_up
	remove_devices "$round"
	topo_down
	sroce_unload
	check_clean "$round"
	if ((round == 1)); then
		slab_first=$(slab_kib)
		sunreclaim_first=$(sunreclaim_kib)
	fi
done

slab_last=$(slab_kib)
sunreclaim_last=$(sunreclaim_kib)
log "kmalloc-1k..8k after round 1: $slab_first KiB, after round $rounds:" \
	"$slab_last KiB (growth $((slab_last - slab_first)) KiB, limit $slab_threshold_kib KiB)"
log "SUnreclaim after round 1: $sunreclaim_first KiB, after round $rounds:" \
	"$sunreclaim_last KiB (not judged)"

resources_after=$(rdma resource show)
[[ $resources_after == "$resources_before" ]] ||
	fail "rdma resource show: '$resources_before' before, '$resources_after' after"
((slab_last - slab_first <= slab_threshold_kib)) ||
	fail "slab grew by $((slab_last - slab_first)) KiB in $((rounds - 1)) rounds"
kernel_log_clean || fail "the kernel complained"
rm -f "$ko"
log "$rounds rounds, nothing left behind"
