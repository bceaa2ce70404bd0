#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# 20-pyverbs: rdma-core's own verbs tests (pyverbs) against sroce, with
# rdma_rxe alongside for comparison.
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
# /usr/share/doc/rdma-core/tests, partly gzipped: unpacked into a copy).
# It has no SRQ tests; rdma-core 56.1's test_srq.py is added from the
# source tree that `make provider` fetched, when it is there. The
# classes of these modules run, through tests/lib-pyverbs.py, against
# sroce_a (port 1, its IPv4 RoCE v2 GID), client and server both on it:
#
#   test_device (device, DM), test_pd, test_mr (MR, MW, DM and dmabuf
#   MRs), test_cq, test_qp, test_addr (AH), test_srq
#
# then against rxe0. Both tables are printed, then the tests whose outcome
# differs. The test fails if any test failed or errored on sroce.
# timeout: 600
set -e
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/lib-rxe.sh"

suite=/usr/share/doc/rdma-core/tests
modules="test_device test_pd test_mr test_cq test_qp test_addr"
tmp=

cleanup() {
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
		modules+=" test_srq"
		log "SRQ tests: ${srq#"$SROCE_BUILD"/}"
	else
		log "SRQ tests: none (no rdma-core source tree in $SROCE_BUILD/rdma-core)"
	fi
fi

# run_suite NAME DEV GID CMD...: run the modules against DEV with CMD
# (the runner's environment), into $tmp/NAME, and print the table.
run_suite() {
	local name=$1 dev=$2 gid=$3 start=$SECONDS

	shift 3
	"$@" python3 "$SROCE_TOP/tests/lib-pyverbs.py" "$tmp/tests" "$dev" 1 \
		"$gid" $modules >"$tmp/$name" 2>"$tmp/$name.err" ||
		fail "$name: the pyverbs runner failed: $(tail -n 5 "$tmp/$name.err")"
	grep -q '^total ' "$tmp/$name" ||
		fail "$name: no result from the pyverbs runner: $(tail -n 5 "$tmp/$name.err")"
	log "=== pyverbs on $dev ($name, $((SECONDS - start)) s)"
	sed "s/^/$name: /" "$tmp/$name"
}

topo_up
gid=$(gid_index sroce_a 192.0.2.1)
run_suite sroce sroce_a "$gid" na
rxe_up
gid=$(gid_index rxe0 198.51.100.1)
run_suite rxe rxe0 "$gid" rxe_run

# outcomes NAME: "test-id outcome" lines of a table, sorted by test id.
outcomes() {
	awk '$1 ~ /^(pass|skip|fail|error|xfail|xpass)$/ {print $2, $1}' "$tmp/$1" | sort
}

log "=== outcomes that differ (sroce / rxe)"
join <(outcomes sroce) <(outcomes rxe) |
	awk '$2 != $3 {printf "%-6s %-6s %s\n", $2, $3, $1}'

read -r _ _ pass _ skipped _ failed _ errors _ < <(grep '^total ' "$tmp/sroce")
log "sroce: $pass passed, $skipped skipped, $failed failed, $errors errors"
((failed + errors == 0)) || fail "pyverbs: $failed failed, $errors errors on sroce_a"
kernel_log_clean || fail "the kernel complained"
