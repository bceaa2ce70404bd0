#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# 53-ext-verbs: what rdma-core's tests leave out of the verbs sroce adds:
# SRQ resize with traffic, rereg_mr, ATOMIC_WRITE and FLUSH.
#
#   netns a: sroce_a on veth_a 192.0.2.1 (client and server of each test)
#   netns b: sroce_b on veth_b 192.0.2.2 (iba15-test's second run)
#
# 1. sroce's own pyverbs tests, userspace/tests/pyverbs_sroce.py, through
#    tests/lib-pyverbs.py (as test_sroce_ext): WQEs posted before an SRQ
#    resize are consumed from the new ring, in order, byte for byte; a
#    resize smaller than what waits is refused and the SRQ keeps working;
#    a resize with a limit past the new size changes neither size nor
#    limit;
#    rereg_mr keeps the keys for a change of rights, gives new keys for a
#    new translation (the old rkey then fails), and is refused while a
#    window is bound (EBUSY). Extra MODULEs given as arguments run too.
# 2. userspace/tests/iba15-test.c (ATOMIC_WRITE and FLUSH with ibv_wr_*()),
#    built with the headers of the rdma-core tree the provider is built in
#    and run with its libibverbs, whose struct ibv_qp_ex has wr_flush:
#    the 8 bytes land as given and nothing around them, WRITE then FLUSH
#    of its range in one batch, a FLUSH of the whole MR, a FLUSH without
#    the right fails with IBV_WC_REM_ACCESS_ERR. On a kernel whose RDMA
#    core lacks the FLUSH rights (6.1) the FLUSH checks are skipped by the
#    program, with a "skip:" line, and ATOMIC_WRITE is still checked.
#    It runs twice: both QPs on sroce_a (the requester's packets take
#    sroce's local path), then requester on sroce_a and responder on
#    sroce_b, so that the requests and their responses cross the veth as
#    RoCEv2 frames, ICRC included.
#
# Prints one line per pyverbs test, the traceback of each failure, then
# iba15-test's checks. Fails if anything failed, if fewer pyverbs tests
# passed than pyverbs_sroce.py defines (6 today, counted from the file, so
# that a test that skips or does not import fails), or if the kernel
# complained.
#
# What it would have caught:
#
# An SRQ resize with a limit past the new size that took effect, and
# then failed on the limit.
# timeout: 420
set -e
. "$(dirname "$0")/lib.sh"

suite=/usr/share/doc/rdma-core/tests
modules=${*:-}
tmp=
status=0

trap topo_tmp_down EXIT

[[ -f $suite/run_tests.py ]] || skip "no pyverbs test suite in $suite"
tmp=$(mktemp -d)
cp -r "$suite" "$tmp/tests"
gunzip -f "$tmp"/tests/*.gz
cp "$SROCE_TOP/userspace/tests/pyverbs_sroce.py" "$tmp/tests/test_sroce_ext.py"

topo_up
gid=$(gid_index sroce_a 192.0.2.1)

log "=== pyverbs on sroce_a: $modules test_sroce_ext"
# shellcheck disable=SC2086 # one word per module
na python3 "$SROCE_TOP/tests/lib-pyverbs.py" run --test-timeout "$(scaled 120)" \
	--module-timeout "$(scaled 600)" --json "$tmp/pyverbs.json" "$tmp/tests" sroce_a 1 \
	"$gid" $modules test_sroce_ext >"$tmp/pyverbs" 2>"$tmp/pyverbs.err" ||
	status=1
cat "$tmp/pyverbs"
grep -q '^total ' "$tmp/pyverbs" || { tail -n 20 "$tmp/pyverbs.err"; status=1; }
read -r _ _ pass _ skipped _ failed _ errors _ < <(grep '^total ' "$tmp/pyverbs") || true
log "pyverbs: ${pass:-0} passed, ${skipped:-0} skipped, ${failed:-?} failed, ${errors:-?} errors"
[[ ${failed:-1} == 0 && ${errors:-1} == 0 ]] || status=1
# Without extra modules, every test of sroce's own must have passed.
own=$(grep -c '^    def test_' "$SROCE_TOP/userspace/tests/pyverbs_sroce.py")
if [[ -z $modules ]] && ((${pass:-0} < own)); then
	log "pyverbs: ${pass:-0} of sroce's own $own tests passed"
	status=1
fi
[[ ! -s $tmp/pyverbs.json ]] || python3 - "$tmp/pyverbs.json" <<-'EOF'
	import json, sys
	for line in open(sys.argv[1]):
	    t = json.loads(line)
	    if t.get('outcome') in ('fail', 'error'):
	        print(f"--- {t['id']}\n{t.get('traceback', '')}{t.get('output', '')}")
	EOF

log "=== iba15-test on sroce_a"
tree=$(compgen -G "$SROCE_BUILD/userspace/rdma-core-*-build" | tail -n 1) || true
if [[ -z $tree ]]; then
	log "iba15-test: no rdma-core build tree: run make provider"
	status=1
elif cc -O2 -Wall -Werror -I "$tree/include" \
	"$SROCE_TOP/userspace/tests/iba15-test.c" -o "$tmp/iba15-test" \
	-L "$tree/lib" -libverbs; then
	LD_LIBRARY_PATH=$tree/lib na "$tmp/iba15-test" sroce_a "$gid" || status=1
	log "=== iba15-test from sroce_a to sroce_b, over the veth"
	LD_LIBRARY_PATH=$tree/lib na "$tmp/iba15-test" sroce_a "$gid" \
		sroce_b "$(gid_index sroce_b 192.0.2.2)" || status=1
else
	status=1
fi

kernel_log_clean || { log "the kernel complained"; status=1; }
((status == 0)) || fail "pyverbs or iba15-test failed (above)"
