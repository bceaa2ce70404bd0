#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# 79-bigmem: memory regions past 4 GiB and on huge pages.
#
#   netns a: sroce_a on veth_a 192.0.2.1
#        <==> netns b: sroce_b on veth_b 192.0.2.2
#
# tests/lib-bigmem.py (pyverbs; its header lists every access;
# tests/lib-rcpair.py connects the QPs) registers on sroce_b a 5 GiB MR
# of small pages, an 8 MiB MR of transparent huge pages (MADV_HUGEPAGE;
# /proc/self/smaps must show them) and an 8 MiB MR of a hugetlbfs file
# (2 MiB pages, mounted here), and an RC QP on each device accesses
# them: RDMA WRITE and READ across the 4 GiB offset, at the MR's end and
# across 2 MiB page borders, fetch-and-add and compare-and-swap on both
# sides of 4 GiB and at the last 8 bytes, and sroce_b as the requester
# WRITEs, SENDs, READs and receives at offsets past 4 GiB. Every work
# request must succeed and every byte be where it was sent; random bytes
# in the first 8 MiB of the big MR and in the MiB below 1 GiB must be
# untouched (an offset cut to 32 bits would land there). The VM gets 7
# GiB of memory for it ("mem:" below, scripts/check). The debug kernel
# has neither THP nor hugetlbfs (scripts/kernel-debug.config): there
# those two regions are reported as skipped, on a release kernel their
# absence fails. The kernel must not complain. About 60 s under TCG,
# most of it populating 5 GiB.
#
# What it would have caught:
#
# Nothing tested an MR past 4 GiB or on huge pages before (rdma_rxe fixed
# its page-size handling for huge pages in 7.0). Run with a user MR's
# page offset cut to 32 bits (drivers/sroce/mem.c, user_page()), on 6.1:
# every access past 4 GiB failed its byte check, and so did the guard.
# mem: 7168
# runs-on: oldest
# timeout: 480
set -e
. "$(dirname "$0")/lib.sh"

huge=$SROCE_STATE/hugetlbfs
mounted=
pages=
thp_mode=

cleanup() {
	set +e
	[[ -n $mounted ]] && umount "$huge"
	[[ -n $pages ]] && echo "$pages" >/proc/sys/vm/nr_hugepages
	[[ -n $thp_mode ]] && echo "$thp_mode" >"$thp"
	topo_down
}
trap cleanup EXIT

topo_up
topo_neigh_pin
skips=()
thp=/sys/kernel/mm/transparent_hugepage/enabled
if [[ -w $thp ]]; then
	if grep -q '\[never\]' "$thp"; then
		thp_mode=never
		echo madvise >"$thp"
	fi
else
	skips+=(thp)
fi
if grep -qw hugetlbfs /proc/filesystems; then
	pages=$(cat /proc/sys/vm/nr_hugepages)
	echo $((pages + 8)) >/proc/sys/vm/nr_hugepages ||
		fail "could not reserve 8 huge pages"
	mkdir -p "$huge"
	mount -t hugetlbfs -o pagesize=2M none "$huge" ||
		fail "could not mount hugetlbfs"
	mounted=1
else
	skips+=(hugetlbfs)
fi
if ((${#skips[@]})) && ! debug_kernel; then
	fail "this kernel has no ${skips[*]}: a release kernel must have it"
fi

out=$(python3 "$SROCE_TOP/tests/lib-bigmem.py" --dev-a sroce_a \
	--gid-a "$(gid_index sroce_a 192.0.2.1)" --dev-b sroce_b \
	--gid-b "$(gid_index sroce_b 192.0.2.2)" --huge-dir "$huge" \
	--skip "$(
		IFS=,
		echo "${skips[*]}"
	)" 2>&1) || st=$?
log "$out"
summary=$(tail -n 1 <<<"$out")
[[ $summary =~ ^3\ regions,\ 0\ failures,\ ([0-9]+)\ skipped$ ]] &&
	((${st:-0} == 0 && BASH_REMATCH[1] == ${#skips[@]})) ||
	fail "lib-bigmem.py: $(grep -m 1 -vE ': (ok|skipped.*)$' <<<"$out" || echo "$summary")"
kernel_log_clean || fail "the kernel complained"
