#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# 76-memcg: the memory a process makes sroce allocate is charged to its
# memory cgroup, so the cgroup's limit bounds it.
#
#   netns a: sroce_a on veth_a 192.0.2.1    (sroce_b unused)
#   /sys/fs/cgroup/sroce-76: memory.max 100M, an unprivileged process:
#     tests/lib-memhog.py sroce_a cq, then tests/lib-memhog.py sroce_a qp
#
# As user nobody (the device node opened to all, as Debian's udev rules
# do), in a cgroup limited to 100 MiB, lib-memhog.py creates CQs of the
# device's largest size (262144 entries: 16 MiB rings), then, in a second
# run, RC QPs of the largest size (max_qp_wr WRs, max_sge SGEs each way),
# until creation fails. Each run must be stopped by ENOMEM before its
# objects would weigh three times the limit; while it holds what it made,
# the cgroup must be charged at least half of the limit and at most the
# limit (the rings and the private WQE copies are what is charged), and
# the host's MemAvailable must have fallen by no more than the limit plus
# 32 MiB. The kernel must not complain (an allocation failure warning
# or an OOM report would). About 10 s.
#
# What it would have caught:
#
# On b41a22f: 19 CQs (304 MiB) made, 26 MiB charged, MemAvailable down
# 316 MiB. The old driver charged at most 16 MiB while a 2 GiB VM ran out
# of memory and the global OOM killer, not the cgroup's, stopped the
# process.
# runs-on: oldest
# timeout: 240
set -e
. "$(dirname "$0")/lib.sh"

cg=/sys/fs/cgroup/sroce-76
limit=$((100 << 20))
mounted=
nodes=()

cleanup() {
	set +e
	[[ -d $cg ]] && rmdir "$cg"
	[[ -n $mounted ]] && umount /sys/fs/cgroup
	((${#nodes[@]})) && chmod 600 "${nodes[@]}"
	topo_down
}
trap cleanup EXIT

topo_up

if [[ ! -e /sys/fs/cgroup/cgroup.controllers ]]; then
	mount -t cgroup2 none /sys/fs/cgroup || skip "no cgroup v2 here"
	mounted=1
fi
grep -qw memory /sys/fs/cgroup/cgroup.controllers || skip "no memory controller"
echo +memory >/sys/fs/cgroup/cgroup.subtree_control
mkdir "$cg"
echo "$limit" >"$cg/memory.max"
[[ ! -e $cg/memory.swap.max ]] || echo 0 >"$cg/memory.swap.max"

for n in /dev/infiniband/uverbs*; do
	[[ $(<"/sys/class/infiniband_verbs/${n##*/}/ibdev") == sroce_a ]] || continue
	chmod 666 "$n"
	nodes+=("$n")
done
((${#nodes[@]})) || fail "no uverbs node for sroce_a"

# hog KIND: lib-memhog.py as nobody, in the cgroup; its output in $out.
hog() {
	out=$( (echo "$BASHPID" >"$cg/cgroup.procs"
		exec setpriv --reuid=65534 --regid=65534 --clear-groups -- \
			env RDMAV_DRIVERS="$RDMAV_DRIVERS" \
			python3 "$SROCE_TOP/tests/lib-memhog.py" sroce_a "$1") 2>&1) ||
		fail "lib-memhog.py $1 failed: $out"
	log "$out" | grep -v '^made '
}

# field NAME: the value lib-memhog.py printed for NAME.
field() {
	sed -n "s/^$1 //p" <<<"$out"
}

for kind in cq qp; do
	hog "$kind"
	read -r n why <<<"$(field stopped)"
	[[ -n $n ]] || fail "$kind: nothing refused the objects: $(field cap) made, 3 times the limit at 16 MiB each"
	[[ $why == ENOMEM ]] || fail "$kind: stopped by $why after $n, not by ENOMEM"
	((n >= 1)) || fail "$kind: not even one object fits in 100 MiB"
	charged=$(field charged)
	drop=$(field available-drop)
	((charged >= limit / 2)) ||
		fail "$kind: $n objects held, the cgroup charged only $((charged >> 20)) MiB of $((limit >> 20))"
	((charged <= limit)) || fail "$kind: charged $charged, past the limit $limit"
	((drop <= limit + (32 << 20))) ||
		fail "$kind: MemAvailable fell by $((drop >> 20)) MiB, the limit is $((limit >> 20)) MiB"
	log "$kind: $n made, ENOMEM, $((charged >> 20)) MiB charged, MemAvailable down $((drop >> 20)) MiB"
done
kernel_log_clean || fail "the kernel complained"
