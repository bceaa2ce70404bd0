#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# 43-traffic: byte-verified random traffic between two sroce devices, on
# a clean link and on a lossy one.
#
#   netns a: sroce_a on veth_a 192.0.2.1  <==>  netns b: sroce_b on veth_b 192.0.2.2
#            sroce-traffic --server                sroce-traffic --client
#
# userspace/tools/sroce-traffic (Documentation/testing.md) runs random
# streams of operations in both directions over several QP pairs and
# checks every byte, completion and tally:
#
#   - clean veth: RC with all seven opcodes (4 QPs), UC with sends and
#     writes (4 QPs), UD with sends (4 QPs) over IPv4 and over IPv6: exit
#     status 0 and "OK ... mismatches=0 peer_mismatches=0" on both sides.
#     UD receives are checked for the IP header in the GRH area (IPv4:
#     zeros, then the header) and the RoCE packet type in wc.sl (0xa IPv4,
#     0x9 IPv6), which UCX reads to find its address there. RC payloads
#     of 1 KiB and more go out from the MRs' pages without a copy: both
#     devices' tx_zcopy must grow; the veth copies them as they cross
#     (tx_zcopy_copied must grow) and each QP then copies for itself (at
#     most 64 attached a device); on one device (ib_write_bw 64 KiB, both
#     ends in netns a) every packet stays attached, none copied; a
#     second RC run with zcopy=0 copies every payload (tx_zcopy must not
#     grow);
#   - then netem on both veths (loss 2%, reordering 10%, duplication 1%,
#     1 ms delay), 4 QPs each: RC must still be exact; UC and UD run with
#     --allow-loss (lost, duplicated, reordered messages are counted) and
#     must be exact otherwise. RC must also have recovered: sroce_a's and
#     sroce_b's retransmits counters must have risen.
#
# Between the two parts, userspace/tools/sroce-order (one process, an RC
# QP from sroce_a to sroce_b) posts 10000 WRITEs of 33 to 4096 bytes at
# offsets 0 to 63 while a thread on the other CPU spins on each target's
# last byte: when it turns non-zero, every other byte must already be
# there (161 of 10000 were not, with the fix taken out), as programs that
# poll the last byte (ib_write_lat, rsocket's riowrite) assume. The
# kernel's memcpy copies backwards for some alignments; sroce stores each
# packet's last byte last (riostream failed one run in two before).
#
# The retransmit, timeout and NAK counters are printed after each part.
# Seeds are printed, so a failure can be repeated. The kernel must not
# complain.
#
# What it would have caught:
#
# A UD receive completing with wc.sl 0, as libsroce's did until 64-ucx
# found UCX dropping every IPv4 datagram for it: the test failed on the
# first receive.
# runs-on: oldest
# timeout: 300
set -e
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/lib-traffic.sh"

trap topo_down EXIT

tmp=$(mktemp -d)

counters() {
	local d c line

	for d in sroce_a sroce_b; do
		line=
		for c in retransmits timeouts seq_naks_rcvd rnr_naks_rcvd dup_requests \
			rx_dropped tx_dropped; do
			line+=" $c=$(counter "$d" "$c")"
		done
		log "  $d:$line"
	done
}

topo_up

log "clean link:"
zc_a=$(counter sroce_a tx_zcopy)
zc_b=$(counter sroce_b tx_zcopy)
cp_a=$(counter sroce_a tx_zcopy_copied)
cp_b=$(counter sroce_b tx_zcopy_copied)
traffic "$tmp" --transport rc --qps 4 --ops 8000
# RC payloads of 1 KiB and more leave from the MR's pages (module
# parameter zcopy): the byte check above covered that path. Over the
# veth the kernel copies them all the same as they cross into the other
# namespace (tx_zcopy_copied), and each QP then copies its payloads
# itself: a few packets a QP attach, not the thousands the run sends.
zc_a=$(($(counter sroce_a tx_zcopy) - zc_a))
zc_b=$(($(counter sroce_b tx_zcopy) - zc_b))
cp_a=$(($(counter sroce_a tx_zcopy_copied) - cp_a))
cp_b=$(($(counter sroce_b tx_zcopy_copied) - cp_b))
((zc_a > 0 && zc_b > 0)) ||
	fail "RC: no packet sent without a copy (tx_zcopy +$zc_a, +$zc_b)"
((cp_a > 0 && cp_b > 0)) ||
	fail "RC: the veth copied no attached packet (tx_zcopy_copied +$cp_a, +$cp_b)"
((zc_a <= 64 && zc_b <= 64)) ||
	fail "RC: $zc_a and $zc_b packets attached over the veth: the QPs did not go on copying"
log "  RC packets sent from the MRs' pages: $zc_a and $zc_b (tx_zcopy), copied by the veth: $cp_a and $cp_b"
# On one device (both ends in netns a) nothing copies what is attached:
# every packet of a 64 KiB ib_write_bw stays zero-copy.
zc_a=$(counter sroce_a tx_zcopy)
cp_a=$(counter sroce_a tx_zcopy_copied)
ga=$(gid_index sroce_a 192.0.2.1)
na timeout "$(scaled 60)" ib_write_bw -d sroce_a -x "$ga" -s 65536 -n 200 \
	>"$tmp/lo-s" 2>&1 &
lo_pid=$!
wait_server 10 "$lo_pid" ns_listening a 18515 || fail "ib_write_bw server: $(cat "$tmp/lo-s")"
na timeout "$(scaled 60)" ib_write_bw -d sroce_a -x "$ga" -s 65536 -n 200 192.0.2.1 \
	>"$tmp/lo-c" 2>&1 || fail "ib_write_bw on one device: $(cat "$tmp/lo-c")"
wait "$lo_pid" || fail "ib_write_bw server on one device: $(cat "$tmp/lo-s")"
zc_a=$(($(counter sroce_a tx_zcopy) - zc_a))
cp_a=$(($(counter sroce_a tx_zcopy_copied) - cp_a))
mtu=$(ibv_devinfo -d sroce_a | sed -n 's/.*active_mtu:[^(]*(\([0-9]*\)).*/\1/p')
mtu=$((128 << ${mtu:-3}))
log "  one device: $zc_a packets of 64 KiB WRITEs attached (MTU $mtu), $cp_a copied"
((cp_a == 0)) || fail "one device: the kernel copied $cp_a attached packets"
((zc_a >= 200 * 65536 / mtu)) ||
	fail "one device: only $zc_a packets attached for 200 WRITEs of 64 KiB"
zc_min=$(</sys/module/sroce/parameters/zcopy)
echo 0 >/sys/module/sroce/parameters/zcopy
zc_a=$(counter sroce_a tx_zcopy)
traffic "$tmp" --transport rc --qps 2 --ops 2000
echo "$zc_min" >/sys/module/sroce/parameters/zcopy
(($(counter sroce_a tx_zcopy) == zc_a)) ||
	fail "RC with zcopy=0: tx_zcopy grew on sroce_a"
traffic "$tmp" --transport uc --qps 4 --ops 8000
traffic "$tmp" --transport ud --qps 4 --ops 8000
TRAFFIC_IPV6=1 traffic "$tmp" --transport ud --qps 4 --ops 4000
counters

log "placement order:"
if ! na sroce-order -n 10000 sroce_a "$(gid_index sroce_a 192.0.2.1)" \
	sroce_b "$(gid_index sroce_b 192.0.2.2)" >"$tmp/order" 2>&1; then
	sed 's/^/  /' "$tmp/order"
	fail "sroce-order: a WRITE's last byte was visible before the rest, or it failed"
fi
log "  $(tail -n 1 "$tmp/order") ($(sed -n 's/.*\(seed [0-9]*\).*/\1/p' "$tmp/order"))"

log "netem on veth_a and veth_b: loss 2% reorder 10% duplicate 1% delay 1ms"
for ns in a b; do
	ip -n "$ns" link show "veth_$ns" >/dev/null
	ip netns exec "$ns" tc qdisc add dev "veth_$ns" root netem \
		loss 2% reorder 10% duplicate 1% delay 1ms ||
		fail "cannot add netem to veth_$ns"
done
retrans_a=$(counter sroce_a retransmits)
retrans_b=$(counter sroce_b retransmits)
traffic "$tmp" --transport rc --qps 4 --ops 4000
counters
(($(counter sroce_a retransmits) > retrans_a && $(counter sroce_b retransmits) > retrans_b)) ||
	fail "RC passed on a lossy link without retransmitting on both sides"
traffic "$tmp" --transport uc --qps 4 --ops 4000 --allow-loss
traffic "$tmp" --transport ud --qps 4 --ops 4000 --allow-loss
counters
for ns in a b; do
	log "  veth_$ns: $(ip netns exec "$ns" tc -s qdisc show dev "veth_$ns" |
		grep -o 'Sent [0-9]* bytes [0-9]* pkt (dropped [0-9]*' | tr -d '(')"
done

kernel_log_clean || fail "the kernel complained"
rm -rf "$tmp"
