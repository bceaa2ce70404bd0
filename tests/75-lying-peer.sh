#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# 75-lying-peer: a peer that lies within the protocol gets no more from
# sroce's requester than an honest one.
#
#   +------- netns a -------+          +----------- netns b -----------+
#   | sroce_a on veth_a     |   veth   | no RoCE device: a lying peer  |
#   | 192.0.2.1             |==========| (tests/lib-liar.py, on        |
#   | an RC QP by pyverbs   |          | tests/lib-peer.py) answers    |
#   | (a user QP: zero copy)|          | from veth_b, captures on it   |
#   +-----------------------+          +-------------------------------+
#
# lib.sh's topology without sroce_b. tests/lib-liar.py (its QP from
# lib-target.py) connects a fresh RC QP of sroce_a to the fake peer for
# each case (its docstrings say exactly what each checks):
#   - zcopy-linger: NAK (as soon as the WRITE's 8 packets are counted
#     sent, before any crossed the veth, which would copy it and make the
#     QP copy from then on), then an ACK of the whole 8 KiB WRITE while the
#     NAK's resends wait in a 300 ms netem qdisc on veth_a (the ACK
#     timeout, 1 s, resends nothing meanwhile); the buffer is overwritten
#     the moment the completion is polled: every packet the peer captures
#     must carry the message's own bytes under a right ICRC, and
#     tx_zcopy must count them all (before
#     2026-11-28 the WQE completed at the ACK and the resends sent what
#     was written next, sent from the MR's pages); over IPv4, then again
#     over IPv6;
#   - ack-ahead: an ACK of a 512-packet WRITE's last PSN before it was
#     sent is dropped and counted (rx_drop_ghost); the WRITE completes
#     only once all of it was sent (it used to complete at the ghost);
#   - dup-stale-ack: repeated and older ACKs complete, resend and count
#     nothing (its two WRITEs are posted in one call: posted one by one,
#     the second would wait for the first's ACK or a tail-loss probe, as
#     a process that posts to a QP with packets in flight rings no
#     doorbell);
#   - silence: IBV_WC_RETRY_EXC_ERR in bounded time;
#   - trickle-read: READ responses one every 45 ms (timeout 67 ms): the
#     READ completes with its bytes, counting one packet in the device's
#     flight meanwhile (it used to count its whole response);
#   - read-implied-nak: an ACK past a READ whose responses stopped makes
#     it ask again for the rest (IBA 9.7.5.2.1), and it completes;
#   - late-engine: a READ's 8 responses wait in the QP's queue while the
#     send engine is held (debugfs req_hold) and the transport timer
#     expires; released, the engine takes them as the progress they are:
#     the READ completes, nothing is requested again, no timeout counts.
# The kernel must not complain. 29 to 37 s on 6.1, 6.12 and 7.3
# (2026-11-28, beside another VM).
#
# What it would have caught:
#
# On b41a22f: 15 of 16 packets (8 of 16 over IPv6) with bytes written
# after the completion, under an ICRC of the bytes before; a WRITE
# completed with 209 of 512 packets sent; a READ counting 32 in the
# flight. Before 2026-12-02 (be1730a) an engine that ran late handled
# the timer first: late-engine's READ was requested again, its queued
# responses dropped, a timeout counted.
# timeout: 300
set -e
. "$(dirname "$0")/lib.sh"

cleanup() {
	na tc qdisc del dev veth_a root 2>/dev/null || true
	topo_down
}
trap cleanup EXIT

topo_up
# The peer takes namespace b's UDP port 4791.
rdma link del sroce_b || fail "cannot delete sroce_b"
debugfs_mount
out=$SROCE_STATE/liar
status=0
python3 "$SROCE_TOP/tests/lib-liar.py" --dev sroce_a \
	--gid-index "$(gid_index sroce_a 192.0.2.1)" --ip 192.0.2.1 \
	--peer-ip 192.0.2.2 --netns b --ifname veth_b \
	--dmac "$(na cat /sys/class/net/veth_a/address)" --read-flight 1 \
	--ipv6 2001:db8::1 2001:db8::2 "$(gid_index sroce_a 2001:db8::1)" \
	>"$out" 2>&1 || status=$?
sed 's/^/  /' "$out"
summary=$(tail -n 1 "$out")
[[ $summary =~ ^([0-9]+)\ cases,\ 0\ mismatches$ ]] && ((status == 0)) ||
	fail "lib-liar.py: $(grep MISMATCH "$out" | cut -d' ' -f1 | paste -sd, -) ($summary, status $status)"
kernel_log_clean || fail "the kernel complained"
