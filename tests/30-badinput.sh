#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# 30-badinput: sroce refuses bad control-path requests with the errno
# they deserve, and nothing else happens.
#
# userspace/tools/sroce-badinput, through libibverbs and libsroce, asks
# sroce_a (lib.sh's topology; address vectors point at sroce_b's
# 192.0.2.2) for QP transitions that the state diagram lacks, transitions
# without required or with disallowed attributes, attributes out of
# range (timeout 32, retry_cnt 8, path_mtu 0 and 6, port 2, dest_qp_num
# 1<<24...), alternate paths, bad MR access rights, oversize CQs, QPs and
# SRQs, unsupported QP types (raw packet), SRQ resizes out of range and
# bad limits, bad AHs; and for the valid requests around them: the full
# RESET->INIT->RTR->RTS walk for RC, UC and UD with query_qp reading back
# what was set (PSNs masked to 24 bits), SQD and back, every state to ERR
# and back to RESET, an XRC send QP, an SRQ resized to 32 and read back,
# and requests at the limits: about 260 requests. It prints one line per
# case (case, expected, got) and exits non-zero on any unexpected result;
# the comments in userspace/tools/badinput/main.c say which layer
# refuses what.
#
# Afterwards: sroce_a holds no more than the RDMA core's own objects,
# and the kernel logged no complaint.
#
# With SROCE_TEST_RXE=1 the tool also runs against rdma_rxe (lib-rxe.sh)
# for comparison; rxe's differences are printed, not judged.
# timeout: 180
set -e
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/lib-rxe.sh"

trap rxe_cleanup EXIT

topo_up
before=$(rdma resource show sroce_a)
gid=$(gid_index sroce_a 192.0.2.1)
out=$(mktemp)
status=0
sroce-badinput -d sroce_a -g "$gid" -r 192.0.2.2 >"$out" 2>&1 || status=$?
cat "$out"
summary=$(tail -n 1 "$out")
[[ $summary =~ ^([0-9]+)\ cases,\ ([0-9]+)\ mismatches$ ]] ||
	fail "sroce-badinput did not finish (status $status): $summary"
((status == 0 && BASH_REMATCH[2] == 0)) ||
	fail "sroce-badinput: $(grep -c MISMATCH "$out") unexpected results:" \
		"$(grep MISMATCH "$out" | cut -c1-52 | sed 's/  *$//' | paste -sd, -)"
log "sroce-badinput: $summary"

after=$(rdma resource show sroce_a)
[[ $after == "$before" ]] ||
	fail "sroce_a's resources: '$before' before, '$after' after"
kernel_log_clean || fail "the kernel complained"

if [[ ${SROCE_TEST_RXE:-0} == 1 ]]; then
	rxe_up
	gid=$(gid_index rxe0 198.51.100.1)
	log "=== rdma_rxe, for comparison (not judged)"
	rxe_run sroce-badinput -d rxe0 -g "$gid" -r 198.51.100.2 | grep -v ' ok$' || true
fi
rm -f "$out"
