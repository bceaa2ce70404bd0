#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# 73-rto: a round trip longer than the local ACK timeout costs no
# retransmissions once the requester has measured it (drivers/sroce/retry.c,
# retrans_timeout(); Documentation/datapath.md "Send engine").
#
#   netns a: sroce_a on veth_a 192.0.2.1  <==>  netns b: sroce_b on veth_b 192.0.2.2
#            ib_write_bw client (requester)        ib_write_bw server
#
# netem delays everything veth_b sends by 150 ms, so each acknowledgment
# comes at least 150 ms after its packet; perftest's local ACK timeout is
# 14 (67 ms). A requester whose timer waits the local ACK timeout alone
# times out while every acknowledgment is on its way, resends what was
# not lost and spends a retry each time; one that waits the RFC 6298
# retransmission timeout (smoothed round trip plus four deviations) when
# that is longer times out only before its first sample.
#
#   ib_write_bw -s 65536 -n 40 (one QP), nothing lost on the link:
#   - the run ends well (exit 0, a result line);
#   - at most 3 transport timeouts on sroce_a (those before a round trip
#     was measured);
#   - rdma resource show qp -dd showed drv_srtt_us of at least 150 ms and
#     a drv_rttvar_us while it ran.
# The kernel must not complain.
#
# What it would have caught:
#
# A transport timer at the local ACK timeout alone: every wait for an
# acknowledgment timed out, resent what was not lost and spent a retry
# (234 timeouts, 0.07 MB/s, before; 2 after). And an acknowledgment of a
# resent packet resetting the backoff, so that no round trip could ever be
# measured (the first version of the fix, without Karn's rule: 0.07 MB/s
# as before, srtt_us never set).
# timeout: 240
set -euo pipefail
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/lib-traffic.sh"

tmp=$(mktemp -d)
spid=
cpid=

cleanup() {
	set +e
	perftest_down
}
trap cleanup EXIT

topo_up
topo_neigh_pin
ga=$(gid_index sroce_a 192.0.2.1)
gb=$(gid_index sroce_b 192.0.2.2)
nb tc qdisc add dev veth_b root netem delay 150ms limit 100000 ||
	fail "cannot add netem to veth_b"

t_before=$(counter sroce_a timeouts)
r_before=$(counter sroce_a retransmits)
nb timeout "$(scaled 150)" ib_write_bw -d sroce_b -x "$gb" -s 65536 -n 40 -u 14 -F \
	>"$tmp/s" 2>&1 &
spid=$!
wait_server 10 "$spid" ns_listening b 18515 || { cat "$tmp/s"; fail "the ib_write_bw server exited"; }
na timeout "$(scaled 150)" ib_write_bw -d sroce_a -x "$ga" -s 65536 -n 40 -u 14 -F 192.0.2.2 \
	>"$tmp/c" 2>&1 &
cpid=$!

qp=
while kill -0 "$cpid" 2>/dev/null; do
	rdma -dd resource show qp >"$tmp/qps" 2>&1 || true
	line=$(grep -w sroce_a "$tmp/qps" | grep -m 1 'type RC state RTS.*drv_srtt_us' || true)
	if [[ $line =~ drv_srtt_us\ ([0-9]+) ]] && ((BASH_REMATCH[1] > 0)); then
		qp=$line
	fi
	sleep 0.5
done
perftest_end 65536 40

timeouts=$(($(counter sroce_a timeouts) - t_before))
resent=$(($(counter sroce_a retransmits) - r_before))
log "$timeouts timeouts, $resent resends"
((timeouts <= 3)) ||
	fail "$timeouts transport timeouts with nothing lost (at most 3 allowed): the timer ignored the round trip"
((resent <= timeouts)) ||
	fail "$resent resends for $timeouts timeouts with nothing lost: sequence NAKs without a loss"
if ! [[ $qp =~ drv_srtt_us\ ([0-9]+)\ drv_rttvar_us\ ([0-9]+) ]]; then
	cat "$tmp/qps" "$tmp/c"
	fail "rdma resource show qp -dd showed no srtt_us and rttvar_us: ${qp:-nothing}"
fi
log "round trip ${BASH_REMATCH[1]} us (deviation ${BASH_REMATCH[2]} us)"
((BASH_REMATCH[1] >= 150000)) ||
	fail "srtt_us ${BASH_REMATCH[1]}: the 150 ms delay was not measured"
kernel_log_clean || fail "the kernel complained"
