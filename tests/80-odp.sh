#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# 80-odp: memory regions registered on demand (IBV_ACCESS_ON_DEMAND), their
# pages missing, dropped and unmapped under traffic.
#
#   netns a: sroce_a on veth_a 192.0.2.1
#        <==> netns b: sroce_b on veth_b 192.0.2.2
#
# tests/lib-odp.py (pyverbs; its header lists the phases; it reuses
# tests/lib-bigmem.py's accesses) registers ODP MRs on sroce_b and
# reaches them through every engine: sroce_b's responder (A's WRITE,
# READ, atomics and SEND into untouched pages), its requester (WRITE and
# SEND from them) and its completer (READ responses and atomic results
# landing in them), on RC, UC and UD; on RC QPs with retry_cnt 0 (a
# fault spends no retry); again after MADV_DONTNEED; with
# another thread dropping a memfd region's pages every 20 ms; with
# ibv_advise_mr; with the region unmapped under the MR (the errors); and
# through an implicit ODP MR (the whole address space), whose children
# must be made as memory is touched and freed when it is unmapped.
# Every work request's status and every byte are checked. Then the
# counters must show the registrations and the faults: sroce_b's
# odp_mrs, odp_faults and rnr_naks_sent (the RC responder's answer to a
# fault), rx_drop_odp (UC and UD drop while the fault runs), odp_children
# and odp_children_freed all grew. The kernel must not complain. About
# 20 s under TCG.
#
# What it would have caught:
#
# With the notifier's clearing of the page table taken out
# (drivers/sroce/odp.c, odp_invalidate()), the WRITE after MADV_DONTNEED
# lands in the pages the process no longer has: refault fails its byte
# checks, and munmap's WRITE succeeds. With the completer's or the
# requester's wait for a fault taken out (drivers/sroce/comp.c, build.c),
# fresh, refault and concurrent fail with local protection errors. With
# a flushed ibv_advise_mr made a no-op, advise counts RNR NAKs after it.
# With the unmap's reaping of children taken out (drivers/sroce/
# odp_implicit.c, child_invalidate()), implicit finds children left after
# munmap; with a child that maps nothing kept, after the WRITEs to memory
# never mapped.
# runs-on: every
# timeout: 300
set -e
. "$(dirname "$0")/lib.sh"

trap topo_down EXIT

topo_up
topo_neigh_pin
names=(odp_mrs odp_faults rnr_naks_sent rx_drop_odp odp_children odp_children_freed)
declare -A before
for n in "${names[@]}"; do
	before[$n]=$(counter sroce_b "$n")
done

# Each phase's line as it ends, so that a hang shows where it hung.
python3 "$SROCE_TOP/tests/lib-odp.py" --dev-a sroce_a \
	--gid-a "$(gid_index sroce_a 192.0.2.1)" --dev-b sroce_b \
	--gid-b "$(gid_index sroce_b 192.0.2.2)" 2>&1 |
	tee "$SROCE_STATE/odp.out"
st=${PIPESTATUS[0]}
summary=$(tail -n 1 "$SROCE_STATE/odp.out")
[[ $summary == "9 phases, 0 failures" ]] && ((st == 0)) ||
	fail "lib-odp.py: $(grep -m 1 -vE ': ok$' "$SROCE_STATE/odp.out" || echo "$summary")"

for n in "${names[@]}"; do
	d=$(($(counter sroce_b "$n") - before[$n]))
	log "sroce_b $n: +$d"
	((d > 0)) || fail "sroce_b's $n did not grow"
done
kernel_log_clean || fail "the kernel complained"
