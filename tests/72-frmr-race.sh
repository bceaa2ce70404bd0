#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# 72-frmr-race: a late RDMA WRITE to a fast-registration MR that was
# invalidated and registered anew (another buffer at the same, zero-based,
# addresses) between the WRITE's access check and its copy must not land
# in the new buffer (drivers/sroce/mem.c: the copy checks that the
# registration it was checked against is still the current one).
#
# Fast registration is a kernel-only verb: the test module
# tests/kmod/sroce_frmr_race.ko plays the kernel consumer on sroce_a
# (two RC QPs of one device, see its header), and sroce's debugfs knob
# access_delay_us holds each such access 10 ms between check and copy so
# that the re-registration, posted from the other CPU, falls inside. The
# module counts where each round's bytes went: they must never be in the
# new buffer, nor lost with the WRITE acknowledged; a WRITE whose copy
# found the registration gone must fail (remote access error), and some
# rounds must have raced so (sroce's counter stale_accesses grew); else
# the test proved nothing.
#
# Twenty rounds: the module registers buffer A zero-based, posts an RDMA
# WRITE to it from CPU 0 while access_delay_us holds the access, and from
# CPU 1 invalidates the key and registers buffer B zero-based (the same
# addresses: the next I/O's buffer). Each round's bytes must land in A
# (copied first) or nowhere with the WRITE failed
# (IBV_WC_REM_ACCESS_ERR: checked after the invalidation, or the copy
# found the registration gone); never in B, and never nowhere with the
# WRITE acknowledged. The wait between the two CPUs adapts so that many
# accesses race. scripts/build-module builds the module next to
# sroce.ko; nothing installs it.
#
# What it would have caught:
#
# An aborted I/O's late WRITE placed in the next registration of the same
# MR (the copy checked the range against the new translation, not that
# the registration was the one checked): before the fix 20 of 20 rounds
# corrupted B; with the first fix (1c9ed3b), which dropped such a copy
# silently, the WRITE was acknowledged with nothing placed (19 of 20
# rounds).
# timeout: 300
set -e
. "$(dirname "$0")/lib.sh"

dbg=/sys/kernel/debug/sroce
ko=$SROCE_BUILD/$KREL/kmod/sroce_frmr_race.ko

cleanup() {
	[[ ! -e $dbg/access_delay_us ]] || echo 0 >"$dbg/access_delay_us"
	rmmod sroce_frmr_race 2>/dev/null || true
	topo_down
}
trap cleanup EXIT

[[ -f $ko ]] || fail "$ko is missing (scripts/build-module builds it)"
(($(nproc) >= 2)) || skip "the race needs two CPUs"
topo_up
delays=$(<"$dbg/access_delays")
stale=$(<"$dbg/stale_accesses")
echo 10000 >"$dbg/access_delay_us"
status=0
insmod "$ko" dev=sroce_a rounds=20 gap_us=2000 || status=$?
echo 0 >"$dbg/access_delay_us"
rmmod sroce_frmr_race 2>/dev/null || true
summary=$(dmesg | grep -o 'sroce_frmr_race: [0-9]* rounds: .*' | tail -n 1)
log "$summary"
re='([0-9]+) rounds: ([0-9]+) placed first, ([0-9]+) refused, ([0-9]+) dropped, ([0-9]+) corrupt, ([0-9]+) other'
[[ $summary =~ $re ]] || fail "no summary from the module (insmod status $status)"
((status == 0)) || fail "the module failed (insmod status $status)"
((BASH_REMATCH[1] == 20)) || fail "only ${BASH_REMATCH[1]} of 20 rounds ran"
((BASH_REMATCH[5] == 0)) ||
	fail "${BASH_REMATCH[5]} late WRITEs landed in the next registration's buffer"
((BASH_REMATCH[6] == 0)) || fail "${BASH_REMATCH[6]} rounds left unexpected bytes"
((BASH_REMATCH[4] == 0)) ||
	fail "${BASH_REMATCH[4]} WRITEs were acknowledged and their bytes placed nowhere"
(($(<"$dbg/access_delays") > delays)) || fail "access_delay_us delayed nothing"
stale=$(($(<"$dbg/stale_accesses") - stale))
log "$stale accesses refused at the copy (the registration gone since the check)"
((stale > 0)) ||
	fail "no round raced (the re-registration never fell between check and copy)"
kernel_log_clean || fail "the kernel complained"
