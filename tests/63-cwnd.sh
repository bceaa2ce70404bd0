#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# 63-cwnd: after a loss, the requester's congestion window recovers by
# acknowledgments, not by the transport timer (drivers/sroce/cwnd.c,
# Documentation/datapath.md "Send engine").
#
#   netns a: sroce_a on veth_a 192.0.2.1  <==>  netns b: sroce_b on veth_b 192.0.2.2
#            ib_write_bw client (requester)        ib_write_bw server
#
# A timeout shrinks the window to 8 packets. Messages of 16 KiB are 16
# packets of 1 KiB (veth MTU 1500), and only a message's last packet and
# every 32nd PSN used to ask for an acknowledgment: a resend of 8 packets
# from a message's middle asked for none, and waited for the next timeout,
# again and again. Now the packets that fill half and all of a small
# window ask too.
#
#   1. ib_write_bw -s 16384 for 20 s, local ACK timeout 16 (268 ms, so
#      that a slow guest does not time out by itself); from 2 s on,
#      four times, sroce_a drops every packet it sends for 0.5 s: its
#      requester times out (at least once) and backs off.
#   2. Once a drop stops, at most one more timeout may come (the timer
#      already armed for the lost packets); none in the 2 s after
#      that, with a window that starts again at 8. (Where the resend
#      starts decides whether the old code stalled, about one loss in
#      two: hence four. On the debug kernel perftest ends early, after
#      three: at least two are required.)
#   3. The run ends well (exit 0, a result line), and the QP's window
#      state was visible meanwhile in `rdma resource show qp -dd`
#      (cwnd, ssthresh below 256 after a loss).
# The kernel must not complain.
#
# What it would have caught:
#
# A congestion window of 8 packets after a timeout, resent from a
# message's middle, with no packet asking for an acknowledgment: the
# requester waited for the timer again and again. Run against the code
# before the fix, the test failed on both kernels (2 timeouts after a
# loss).
# timeout: 180
set -euo pipefail
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/lib-traffic.sh"

dbg=/sys/kernel/debug/sroce
tmp=$(mktemp -d)
spid=
cpid=

cleanup() {
	set +e
	[[ -f $dbg/sroce_a/tx_drop ]] && echo 0 >"$dbg/sroce_a/tx_drop"
	perftest_down
}
trap cleanup EXIT

debugfs_mount
topo_up
[[ -f $dbg/sroce_a/tx_drop ]] || fail "no $dbg/sroce_a/tx_drop"
topo_neigh_pin
ga=$(gid_index sroce_a 192.0.2.1)
gb=$(gid_index sroce_b 192.0.2.2)

secs=$(scaled 20)
nb timeout "$(scaled 60)" ib_write_bw -d sroce_b -x "$gb" -s 16384 -u 16 -D "$secs" -F \
	>"$tmp/s" 2>&1 &
spid=$!
wait_server 10 "$spid" ns_listening b 18515 || { cat "$tmp/s"; fail "the ib_write_bw server exited"; }
na timeout "$(scaled 60)" ib_write_bw -d sroce_a -x "$ga" -s 16384 -u 16 -D "$secs" -F 192.0.2.2 \
	>"$tmp/c" 2>&1 &
cpid=$!

# 1. and 2. Losses long enough for the timer, and what follows each.
sleep "$(scaled 2)"
qp=
for round in 1 2 3 4; do
	if ! kill -0 "$cpid" 2>/dev/null; then
		# perftest times -D by the CPU clock it calibrated: on the
		# debug kernel under TCG it ends after about 75 s, whatever D.
		((round > 2)) || { cat "$tmp/c"; fail "ib_write_bw ended before loss $round"; }
		log "ib_write_bw ended before loss $round: $((round - 1)) losses checked"
		break
	fi
	t_before=$(counter sroce_a timeouts)
	echo 1000000 >"$dbg/sroce_a/tx_drop"
	sleep 0.5
	echo 0 >"$dbg/sroce_a/tx_drop"
	t_drop=$(counter sroce_a timeouts)
	sleep "$(scaled 2)"
	t_after=$(counter sroce_a timeouts)
	if [[ -z $qp ]]; then
		qp=$(rdma -dd resource show qp 2>/dev/null | grep -w sroce_a |
			grep -m 1 'type RC state RTS.*drv_cwnd' || true)
		log "after loss 1: drv_cwnd ${qp##*drv_cwnd }"
	fi
	log "loss $round: $((t_drop - t_before)) timeouts during the 0.5 s loss, $((t_after - t_drop)) in the $(scaled_text 2) after it"
	((t_drop - t_before >= 1)) || fail "loss $round caused no timeout: the test proves nothing"
	((t_after - t_drop <= 1)) ||
		fail "loss $round: $((t_after - t_drop)) timeouts after it ended (at most 1 allowed): the window waited for the timer"
done

# 2. and 3.
perftest_end 16384
[[ $qp =~ drv_cwnd\ ([0-9]+)\ drv_ssthresh\ ([0-9]+) ]] ||
	fail "rdma resource show qp -dd shows no cwnd and ssthresh: $qp"
((BASH_REMATCH[2] < 256)) || fail "ssthresh ${BASH_REMATCH[2]} after a loss, not below 256"

kernel_log_clean || fail "the kernel complained"
