#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# 46-nvme: NVMe over RDMA between two sroce devices, target and host in
# the kernel (nvmet-rdma, nvme-rdma), and sroce pinned while they use it.
#
#   target: nvmet-rdma, port 192.0.2.1:4420 on sroce_a (veth_a), one
#           namespace backed by null_blk (memory_backed=1, 1 GiB)
#   host:   nvme-rdma, /dev/nvme-fabrics, from 192.0.2.2 (host_traddr)
#           on sroce_b (veth_b)
#
# The target is configured through configfs, the host through
# /dev/nvme-fabrics (no nvme-cli needed). Both are in the initial
# network namespace, not in netns a and b as in
# lib.sh's topology: nvmet-rdma and nvme-rdma create their rdma_cm IDs in
# init_net (6.1 and 6.12), so a device in another namespace is out of
# their reach, whichever namespace configures them. Policy routing
# (tests/lib-ulp.sh) makes the two addresses talk over the veth, as two
# hosts would, instead of over lo: every packet crosses the veth with its
# ICRC, which the veths' byte counters confirm.
#
# What is checked:
#
#   1. With the target's port listening and no host, sroce's module
#      reference count is 0: neither the RDMA core's own PDs nor a
#      listening port pin it.
#   2. The host connects; the namespace appears as a block device of the
#      target's size. 64 MiB of random data, written with direct I/O
#      (the first MiB in 4 KiB writes, which nvme-rdma sends inline in
#      the command capsule, the rest in 1 MiB writes, which the target
#      fetches with RDMA READ from fast-registered host memory),
#      read back with direct I/O identical byte for byte, through the
#      host and from the target's null_blk device.
#   3. rmmod sroce fails ("in use"), and so does the delete_module()
#      system call itself (EWOULDBLOCK), while a direct read runs; that
#      read returns the right bytes, and a new 8 MiB write afterwards
#      reads back right: the devices kept working.
#   4. Disconnect: the controller and block device go. Reconnect: the
#      64 MiB read back identical, then are written again with new
#      random data and read back.
#   5. After the last disconnect and the target's teardown the reference
#      count drops to 0 and rmmod sroce succeeds, at the first attempt.
#   6. The veths carried the data: at least 64 MiB into veth_a for each
#      64 MiB written, into veth_b for each 64 MiB read.
#
# The kernel must not complain.
#
# What it would have caught:
#
# A driver that lets the device go under the host (tried by building
# sroce without the pin): the test then fails at its rmmod step in under a
# minute, and the tests after it still run. The host connects with
# ctrl_loss_tmo=20,reconnect_delay=2 for that, so that a lost connection
# fails the I/O waiting on it in seconds rather than after the default
# 600 s.
# runs-on: oldest debian13-6.12
# timeout: 300
set -euo pipefail
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/lib-ulp.sh"

nqn=nqn.2014-08.org.example:sroce-nvme
cfs=/sys/kernel/config/nvmet
port=$cfs/ports/1
subsys=$cfs/subsystems/$nqn
mib=64
tmp=

# Controllers of our subsystem: /sys/class/nvme/nvmeN, one a line.
our_ctrls() {
	local c s

	for c in /sys/class/nvme/nvme*; do
		[[ -e $c/subsysnqn ]] || continue
		read -r s <"$c/subsysnqn" || continue
		[[ $s == "$nqn" ]] && echo "$c"
	done
	return 0
}

nvmet_down() {
	[[ -d $cfs ]] || return 0
	if [[ -L $port/subsystems/$nqn ]]; then
		rm -f "$port/subsystems/$nqn" || return 1
	fi
	if [[ -d $port ]]; then
		rmdir "$port" || return 1
	fi
	if [[ -d $subsys/namespaces/1 ]]; then
		echo 0 >"$subsys/namespaces/1/enable" || return 1
		rmdir "$subsys/namespaces/1" || return 1
	fi
	if [[ -d $subsys ]]; then
		rmdir "$subsys" || return 1
	fi
}

cleanup() {
	local c

	set +e
	jobs -p | xargs -r kill 2>/dev/null
	wait 2>/dev/null
	for c in $(our_ctrls); do
		echo 1 >"$c/delete_controller"
	done
	nvmet_down
	modprobe -r nvme_rdma nvmet_rdma nvmet null_blk 2>/dev/null
	# nvmet (6.12: passthru) held nvme_core when nvme_rdma's went.
	modprobe -r nvme_fabrics nvme_core 2>/dev/null
	ulp_topo_down
	[[ -n $tmp ]] && rm -rf "$tmp"
}
trap cleanup EXIT

# put VALUE FILE: write VALUE into the configfs attribute FILE.
put() {
	echo "$1" >"$2" || fail "cannot write '$1' to $2"
}

target_up() {
	mkdir "$subsys" || fail "cannot create the nvmet subsystem"
	put 1 "$subsys/attr_allow_any_host"
	mkdir "$subsys/namespaces/1" || fail "cannot create the nvmet namespace"
	put /dev/nullb0 "$subsys/namespaces/1/device_path"
	put 1 "$subsys/namespaces/1/enable"
	mkdir "$port" || fail "cannot create the nvmet port"
	put rdma "$port/addr_trtype"
	put ipv4 "$port/addr_adrfam"
	put 192.0.2.1 "$port/addr_traddr"
	put 4420 "$port/addr_trsvcid"
	# Linking the subsystem to the port enables the port: nvmet-rdma
	# binds and listens on 192.0.2.1, which only sroce_a has.
	ln -s "$subsys" "$port/subsystems/$nqn" ||
		fail "nvmet-rdma cannot listen on 192.0.2.1:4420"
}

# connect: connect the host; set ctrl (/sys/class/nvme/nvmeN) and dev
# (/dev/nvmeXnY, the namespace's block device).
connect() {
	local fd line t0=$SECONDS
	local opts="transport=rdma,traddr=192.0.2.1,trsvcid=4420,nqn=$nqn,host_traddr=192.0.2.2"

	# A lost connection gives up after 20 s (default 600 s) and fails the
	# I/O waiting on it, so that a broken transport fails the test in
	# time, not at its timeout.
	opts+=",reconnect_delay=2,ctrl_loss_tmo=20"

	exec {fd}<>/dev/nvme-fabrics || fail "cannot open /dev/nvme-fabrics"
	if ! printf '%s' "$opts" >&"$fd"; then
		exec {fd}>&-
		fail "nvme-rdma connect failed: $opts"
	fi
	IFS= read -r line <&"$fd" || true
	exec {fd}>&-
	[[ $line =~ ^instance=([0-9]+), ]] ||
		fail "/dev/nvme-fabrics answered '$line', not instance=N,..."
	ctrl=/sys/class/nvme/nvme${BASH_REMATCH[1]}
	[[ $(our_ctrls) == "$ctrl" ]] || fail "$ctrl is not the one controller of $nqn: $(our_ctrls)"
	read -r line <"$ctrl/transport"
	[[ $line == rdma ]] || fail "$ctrl: transport '$line', not rdma"
	wait_for 30 find_ns
	find_ns
	wait_for 10 test -b "$dev"
	log "connected: ${ctrl##*/} ($(<"$ctrl/address")), namespace $dev ($((SECONDS - t0)) s)"
}

# find_ns: set dev to the block device of our subsystem's namespace 1
# (with native multipath, the head disk nvmeXnY, not a path nvmeXcYnZ).
find_ns() {
	local b s name

	for b in /sys/block/nvme*; do
		name=${b##*/}
		[[ $name =~ ^nvme[0-9]+n1$ ]] || continue
		read -r s 2>/dev/null <"$b/device/subsysnqn" || continue
		if [[ $s == "$nqn" ]]; then
			dev=/dev/$name
			return 0
		fi
	done
	return 1
}

disconnect() {
	local name=${dev#/dev/}

	echo 1 >"$ctrl/delete_controller" || fail "cannot delete ${ctrl##*/}"
	wait_for 30 test ! -e "$ctrl"
	wait_for 10 test ! -e "/sys/block/$name"
	log "disconnected: ${ctrl##*/} and $dev are gone"
}

# verify WHAT: read the namespace (through the host) back with direct I/O
# and compare it with the expected data, byte for byte.
verify() {
	local out t0=$SECONDS

	if ! out=$(dd if="$dev" bs=256k count=$((mib * 4)) iflag=direct status=none |
		cmp - "$tmp/data" 2>&1); then
		fail "$1: $dev does not read back what was written: ${out:-dd failed}"
	fi
	log "$1: $mib MiB read back identical through $dev ($((SECONDS - t0)) s)"
}

# write_all: new random data over the whole range, with direct I/O: the
# first MiB in 4 KiB writes (inline data), the rest in 1 MiB writes.
write_all() {
	local t0=$SECONDS

	head -c $((mib << 20)) /dev/urandom >"$tmp/data" || fail "cannot make random data"
	dd if="$tmp/data" of="$dev" bs=4k count=256 oflag=direct status=none ||
		fail "direct 4 KiB writes to $dev failed"
	dd if="$tmp/data" of="$dev" bs=1M skip=1 seek=1 count=$((mib - 1)) \
		oflag=direct status=none || fail "direct 1 MiB writes to $dev failed"
	log "wrote $mib MiB of random data to $dev ($((SECONDS - t0)) s)"
}

# traffic_mark: remember the veths' receive counters.
traffic_mark() {
	rx_a=$(veth_bytes veth_a rx) && rx_b=$(veth_bytes veth_b rx) ||
		fail "cannot read the veths' counters"
}

# traffic WHAT MIN_A MIN_B: veth_a received at least MIN_A MiB and veth_b
# at least MIN_B MiB since the last traffic_mark, which this one also is.
# What the host writes reaches the target (veth_a) in the responses to
# its RDMA READs; what it reads reaches the host (veth_b) in RDMA WRITEs.
traffic() {
	local ra=$rx_a rb=$rx_b

	traffic_mark
	log "$1: veth_a received $(((rx_a - ra) >> 20)) MiB, veth_b $(((rx_b - rb) >> 20)) MiB"
	(((rx_a - ra) >> 20 >= $2 && (rx_b - rb) >> 20 >= $3)) ||
		fail "$1: less than $2 MiB into veth_a or $3 MiB into veth_b: the data did not cross the veth"
}

# delete_module: the delete_module() system call itself for sroce
# (O_NONBLOCK, as rmmod), which kmod's rmmod does not even make when the
# reference count is not 0; print its errno's name, or "0".
delete_module() {
	python3 - <<-'PY'
		import ctypes, errno, os
		libc = ctypes.CDLL(None, use_errno=True)
		SYS_delete_module = 176  # x86_64
		r = libc.syscall(SYS_delete_module, b"sroce", os.O_NONBLOCK)
		print(errno.errorcode.get(ctypes.get_errno(), "?") if r else 0)
	PY
}

for m in nvmet nvmet-rdma nvme-rdma null_blk configfs; do
	modinfo "$m" >/dev/null 2>&1 || skip "kernel $KREL has no module $m"
done
tmp=$(mktemp -d)

ulp_topo_up
modprobe configfs || fail "cannot load configfs"
mountpoint -q /sys/kernel/config || mount -t configfs configfs /sys/kernel/config ||
	fail "cannot mount configfs"
modprobe null_blk nr_devices=1 memory_backed=1 gb=1 || fail "cannot load null_blk"
modprobe -a nvmet nvmet-rdma nvme-rdma || fail "cannot load nvmet, nvmet-rdma, nvme-rdma"
wait_for 10 test -b /dev/nullb0
[[ -e /dev/nvme-fabrics ]] || fail "no /dev/nvme-fabrics"
target_up

# 1. Nothing pins sroce yet: the MAD layer's PDs and a listening port
# don't (lib.sh's rmmod of idle devices depends on the first).
refcnt_is 0 || fail "sroce's reference count is $(refcnt) with no host connected, not 0"
log "target listening on 192.0.2.1:4420 (sroce_a): sroce refcnt 0"

# 2. Connect, write, read back.
connect
read -r size_ns <"/sys/block/${dev#/dev/}/size"
read -r size_null </sys/block/nullb0/size
((size_ns == size_null)) ||
	fail "$dev has $size_ns sectors, the target's /dev/nullb0 $size_null"
traffic_mark
write_all
traffic "write" "$mib" 0
verify "first connection"
traffic "read" 0 "$mib"
if ! out=$(dd if=/dev/nullb0 bs=1M count=$mib iflag=direct status=none |
	cmp - "$tmp/data" 2>&1); then
	fail "the target's /dev/nullb0 does not hold what the host wrote: ${out:-dd failed}"
fi
log "the target's /dev/nullb0 holds the same $mib MiB"

# 3. rmmod is refused while the host and target hold the devices, and
# they keep working.
dd if="$dev" bs=1M count=$mib iflag=direct status=none | cmp - "$tmp/data" \
	>"$tmp/cmp" 2>&1 &
reader=$!
if rmmod sroce 2>"$tmp/rmmod"; then
	fail "rmmod sroce succeeded with an NVMe host and target on sroce"
fi
grep -q 'in use' "$tmp/rmmod" || fail "rmmod sroce failed, but not as 'in use': $(<"$tmp/rmmod")"
n=$(refcnt)
((n > 0)) || fail "sroce's reference count is $n with a host connected"
err=$(delete_module)
[[ $err == EWOULDBLOCK || $err == EAGAIN ]] ||
	fail "delete_module(sroce) returned '$err', not EWOULDBLOCK"
[[ -e /sys/class/infiniband/sroce_a && -e /sys/class/infiniband/sroce_b ]] ||
	fail "a sroce device went away although rmmod failed"
wait "$reader" || fail "the read during rmmod returned wrong data or failed: $(<"$tmp/cmp")"
log "rmmod sroce refused while connected (refcnt $n: $(<"$tmp/rmmod"); delete_module: $err); a read meanwhile was right"
head -c 8M /dev/urandom >"$tmp/patch" || fail "cannot make random data"
dd if="$tmp/patch" of="$dev" bs=1M seek=16 oflag=direct status=none ||
	fail "a direct write after the rmmod attempt failed"
dd if="$tmp/patch" of="$tmp/data" bs=1M seek=16 conv=notrunc status=none ||
	fail "cannot update the expected data"
verify "after the rmmod attempt, with 8 MiB rewritten"

# 4. Disconnect, reconnect: the data is still there; write it all anew.
disconnect
connect
traffic_mark
verify "after reconnecting"
write_all
verify "rewritten after reconnecting"
traffic "after reconnecting: read, write, read" "$mib" $((2 * mib))

# 5. Tear down: then nothing pins sroce, and rmmod works.
disconnect
nvmet_down || fail "cannot tear the nvmet target down"
wait_for 30 refcnt_is 0
rmmod sroce || fail "rmmod sroce failed after the host and target were gone"
log "after disconnect and target teardown: sroce refcnt 0, rmmod sroce succeeded"

kernel_log_clean || fail "the kernel complained"
