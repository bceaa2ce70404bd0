#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# 20-pyverbs: rdma-core's own verbs tests (pyverbs), the whole suite,
# against sroce and against rdma_rxe, side by side.
#
#   +--------- netns a ----------+          +--------- netns b ----------+
#   |  sroce_a   veth_a          |==========|  veth_b   sroce_b          |
#   |  192.0.2.1 (GID used)      |          |  192.0.2.2                 |
#   +----------------------------+          +----------------------------+
#   +------- initial netns ------+          +--------- netns rxp --------+
#   |  rxe0      veth_r          |==========|  veth_rp                   |
#   |  198.51.100.1 (GID used)   |          |  198.51.100.2              |
#   +----------------------------+          +----------------------------+
#
# The suite is the one python3-pyverbs installs (rdma-core 44.0, in
# /usr/share/doc/rdma-core/tests, partly gzipped: unpacked into a copy),
# plus rdma-core 56.1's test_srq.py from the source tree that `make
# provider` fetched, when it is there. Every test_*.py module of it runs,
# through tests/lib-pyverbs.py, against sroce_a (port 1, its IPv4 RoCE v2
# GID; client and server both on it, the rdma_cm ones on 192.0.2.1, in
# netns a), then against rxe0 (198.51.100.1). Modules for other hardware
# (mlx5, efa, cuda, vfio...) skip themselves; one that cannot be imported
# is one skip. Each test has 90 s, each module 300 s; the suite takes 1 to
# 2.5 minutes a device under TCG, the whole test about 4 minutes.
#
# Printed: each test's outcome as it ends, then the counts per module
# side by side, the skip reasons with their counts, the tests whose
# outcome differs, and the traceback and output of every failure and
# error on sroce. The test fails if any test failed or errored on sroce,
# if fewer than SROCE_PYVERBS_MIN_PASS (100; on 7.3 on 2026-12-05, with
# 32 huge pages of 2 MiB reserved for test_odp: 127 passed, rdma_rxe
# 106; test_odp alone all 17 passed, implicit ODP included, on sroce,
# 7 passed, 8 skipped and 2 errors, huge pages, on rdma_rxe) passed on
# sroce, so that a suite whose modules cannot be
# imported (each one a skip) does not pass, or if the kernel complained.
# SROCE_PYVERBS_SUITE names another suite (01-harness breaks one's
# imports on purpose).
# timeout: 1500
set -e
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/lib-rxe.sh"

suite=${SROCE_PYVERBS_SUITE:-/usr/share/doc/rdma-core/tests}
min_pass=${SROCE_PYVERBS_MIN_PASS:-100}
runner=$SROCE_TOP/tests/lib-pyverbs.py
tmp=

pages=
cleanup() {
	[[ -z $pages ]] || echo "$pages" >/proc/sys/vm/nr_hugepages
	rxe_down
	topo_down
	[[ -z $tmp ]] || rm -rf "$tmp"
}
trap cleanup EXIT

[[ -f $suite/run_tests.py ]] || skip "no pyverbs test suite in $suite (python3-pyverbs)"
python3 -c 'import pyverbs.device' 2>/dev/null || skip "python3 cannot import pyverbs"

tmp=$(mktemp -d)
cp -r "$suite" "$tmp/tests"
gunzip -f "$tmp"/tests/*.gz
if [[ ! -e $tmp/tests/test_srq.py ]]; then
	srq=$(compgen -G "$SROCE_BUILD/rdma-core/*/src/tests/test_srq.py" | tail -n 1) || true
	if [[ -n $srq ]]; then
		cp "$srq" "$tmp/tests/"
		log "SRQ tests: ${srq#"$SROCE_BUILD"/}"
	else
		log "SRQ tests: none (no rdma-core source tree in $SROCE_BUILD/rdma-core)"
	fi
fi
modules=$(compgen -G "$tmp/tests/test_*.py" | wc -l)
log "pyverbs: $modules modules"

# run_suite NAME DEV GID CMD...: run every module against DEV with CMD
# (the runner's environment), into $tmp/NAME.json.
run_suite() {
	local name=$1 dev=$2 gid=$3 start=$SECONDS status

	shift 3
	log "=== pyverbs on $dev ($name)"
	set +e
	"$@" python3 "$runner" run --test-timeout "$(scaled 90)" --module-timeout "$(scaled 300)" \
		--json "$tmp/$name.json" "$tmp/tests" "$dev" 1 "$gid" \
		2>"$tmp/$name.err" | sed -u "s/^/$name: /"
	status=${PIPESTATUS[0]}
	set -e
	((status == 0)) ||
		fail "$name: the pyverbs runner failed ($status): $(tail -n 5 "$tmp/$name.err")"
	[[ -s $tmp/$name.json ]] ||
		fail "$name: no result from the pyverbs runner: $(tail -n 5 "$tmp/$name.err")"
	log "=== pyverbs on $dev ($name): $((SECONDS - start)) s"
	if [[ -s $tmp/$name.err ]]; then
		log "=== pyverbs on $dev ($name): output outside the tests (last 40 lines)"
		tail -n 40 "$tmp/$name.err" | sed "s/^/$name: stderr: /"
	fi
}

# test_odp's huge-page tests need 2 MiB pages reserved (a release kernel
# has hugetlbfs; the debug kernel's configuration may not).
if [[ -w /proc/sys/vm/nr_hugepages ]]; then
	pages=$(cat /proc/sys/vm/nr_hugepages)
	echo $((pages + 32)) >/proc/sys/vm/nr_hugepages ||
		fail "could not reserve 32 huge pages"
fi
topo_up
gid=$(gid_index sroce_a 192.0.2.1)
run_suite sroce sroce_a "$gid" na
rxe_up
gid=$(gid_index rxe0 198.51.100.1)
run_suite rxe rxe0 "$gid" rxe_run

log "=== pyverbs: sroce_a and rxe0 side by side (s: seconds, !: killed, <: sroce failed)"
status=0
PYVERBS_DEV_A=sroce_a PYVERBS_DEV_B=rxe0 python3 "$runner" compare \
	sroce="$tmp/sroce.json" rxe="$tmp/rxe.json" >"$tmp/table" || status=$?
cat "$tmp/table"
kernel_log_clean || fail "the kernel complained"
passed=$(sed -nE 's/^sroce: [0-9]+ tests: ([0-9]+) passed.*/\1/p' "$tmp/table")
[[ -n $passed ]] || fail "pyverbs: no count of sroce's results in the comparison"
((passed >= min_pass)) ||
	fail "pyverbs on sroce_a: $passed tests passed, fewer than $min_pass (modules that did not import count as skips)"
case $status in
0) ;;
1) fail "pyverbs on sroce_a: $(grep -m 1 -o '^sroce: .*' "$tmp/table")" ;;
*) fail "pyverbs: the comparison failed ($status)" ;;
esac
