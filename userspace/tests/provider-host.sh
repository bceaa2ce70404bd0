#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# Load libsroce into the system's libibverbs on a host without RDMA.
#
# 1. Matching. A fake sysfs announces four uverbs devices:
#
#      uverbs0  sroce0    ABI 1   ours: listed, and opening it reaches
#                                 sroce_alloc_context() (its char device is
#                                 /dev/null, so GET_CONTEXT answers zeros
#                                 and the provider must refuse the context)
#      uverbs1  xsroce0   ABI 1   not ours: "sroce" is not a prefix
#      uverbs2  myNsroce  ABI 1   not ours, though VERBS_NAME_MATCH("sroce")
#                                 would claim it
#      uverbs3  sroce1    ABI 2   ours by name, but the wrong ABI
#
# 2. Verbs. fake-kernel.c answers the uverbs commands itself, with sroce0
#    on /dev/zero; verbs-test.c checks the provider's queue mappings, CQ
#    polling, SRQ resize and rereg_mr through it; post-test.c checks
#    posting (ring entries byte for byte, errors, doorbells), wr-test.c
#    the extended send API (ibv_wr_*()) and post-stress.c the rings under
#    concurrency, against the same fake. It runs under the system's
#    libibverbs, then (without the stress tests) under the one built with
#    the provider, if any.
#
# With --bench, only the posting micro-benchmark of post-stress.c runs.
#
# libibverbs falls back to sysfs (SYSFS_PATH) only when RDMA netlink is
# absent, and needs /dev/infiniband/uverbsN: each run is in a private mount
# namespace with a tmpfs on /dev, so the test needs root and unshare.
set -euo pipefail

top=$(cd "$(dirname "$0")/../.." && pwd)
provider=$top/build/userspace/libsroce
passed=0
failed=0

skip() { echo "provider-host: skipped: $*"; echo "0 passed, 0 failed, 1 skipped"; exit 0; }
ok() { echo "ok: $*"; passed=$((passed + 1)); }
nok() { echo "FAIL: $*"; failed=$((failed + 1)); }
check() { if grep -qF -- "$2" "$3"; then ok "$1"; else nok "$1"; fi; }
check_not() { if grep -qF -- "$2" "$3"; then nok "$1"; else ok "$1"; fi; }

[[ -f $provider-rdmav34.so ]] || { echo "no $provider-rdmav34.so: run scripts/build-provider"; exit 1; }
[[ $(id -u) == 0 ]] || skip "needs root for a mount namespace"
[[ -d /sys/class/infiniband ]] && skip "this host has an RDMA stack; the fake sysfs would be ignored"
unshare -m true 2>/dev/null || skip "unshare -m is not permitted here"

tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

# fake_dev SYSFS uverbsN IBDEV ABI MAJOR:MINOR
fake_dev() {
	local uv=$1/class/infiniband_verbs/$2 ib=$1/class/infiniband/$3
	mkdir -p "$uv" "$ib"
	echo 6 >"$1/class/infiniband_verbs/abi_version"
	echo "$3" >"$uv/ibdev"
	echo "$4" >"$uv/abi_version"
	echo "$5" >"$uv/dev"
	echo "1: CA" >"$ib/node_type"
}

# with_fake_devices SYSFS COMMAND...: stdout and stderr go to $tmp/out.
# Every uverbsN of SYSFS becomes a char device with the numbers it names.
with_fake_devices() {
	local sysfs=$1
	shift
	# shellcheck disable=SC2016 # expanded by the inner shell
	SYSFS_PATH=$sysfs RDMAV_DRIVERS=$provider IBV_SHOW_WARNINGS=1 \
	VERBS_LOG_LEVEL=4 VERBS_LOG_FILE=$tmp/verbs.log \
	unshare -m sh -c '
		mount -t tmpfs none /dev && mkdir /dev/infiniband || exit 1
		for d in "$SYSFS_PATH"/class/infiniband_verbs/uverbs*; do
			IFS=: read -r maj min <"$d/dev"
			mknod "/dev/infiniband/${d##*/}" c "$maj" "$min" || exit 1
		done
		exec "$@"' sh "$@" >"$tmp/out" 2>&1
}

match=$tmp/match
fake_dev "$match" uverbs0 sroce0 1 1:3
fake_dev "$match" uverbs1 xsroce0 1 1:3
fake_dev "$match" uverbs2 myNsroce 1 1:3
fake_dev "$match" uverbs3 sroce1 2 1:3

with_fake_devices "$match" ibv_devices || true
check "sroce0 is listed" "sroce0" "$tmp/out"
check_not "the provider loads" "couldn't load driver" "$tmp/out"
check "xsroce0 is not claimed" "no userspace device-specific driver found for xsroce0" "$tmp/out"
check "myNsroce is not claimed" "no userspace device-specific driver found for myNsroce" "$tmp/out"
check "sroce1 has the wrong ABI" "Driver sroce does not support the kernel ABI of 2" "$tmp/out"

with_fake_devices "$match" ibv_devinfo -d sroce0 || true
check "opening sroce0 fails" "Failed to open device" "$tmp/out"
touch "$tmp/verbs.log"
check "alloc_context rejects the empty response" "kernel reports queue data offset 0" "$tmp/verbs.log"

verbs=$tmp/verbs
fake_dev "$verbs" uverbs0 sroce0 1 1:5
cc -O2 -g -Wall -Wextra -Wno-unused-parameter -Werror -pthread \
	-I "$top/include/uapi" -rdynamic \
	"$top/userspace/tests/fake-kernel.c" "$top/userspace/tests/post-test.c" \
	"$top/userspace/tests/post-stress.c" "$top/userspace/tests/trace.c" \
	"$top/userspace/tests/wr-test.c" "$top/userspace/tests/verbs-test.c" \
	-o "$tmp/fake-kernel" -libverbs -ldl
if [[ ${1:-} == --bench ]]; then
	with_fake_devices "$verbs" "$tmp/fake-kernel" --bench
	cat "$tmp/out"
	exit 0
fi
# run_fake NAME [ARG]: run fake-kernel; its checks count as this script's own.
run_fake() {
	with_fake_devices "$verbs" "$tmp/fake-kernel" ${2:+"$2"} || true
	grep -v ' passed, ' "$tmp/out" | awk -v p="$1" '{ print p $0 }' || true
	if read -r p _ f _ < <(grep -E '^[0-9]+ passed, [0-9]+ failed$' "$tmp/out"); then
		passed=$((passed + p))
		failed=$((failed + f))
	else
		nok "${1}fake-kernel did not finish"
	fi
}

run_fake ""
# Again, without the stress tests, under the libibverbs of the rdma-core
# tree the provider was built in: its struct ibv_qp_ex is the provider's
# (with wr_flush), the system's is older (see Documentation/provider.md).
lib=$(compgen -G "$top/build/userspace/rdma-core-*-build/lib/libibverbs.so.1" | tail -n 1) || true
if [[ -n $lib ]]; then
	LD_LIBRARY_PATH=${lib%/*} run_fake "[${lib#"$top"/build/userspace/}] " --quick
else
	echo "provider-host: no rdma-core build tree: tested with the system's libibverbs only"
fi

echo "$passed passed, $failed failed"
((failed == 0))
