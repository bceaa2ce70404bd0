# SPDX-License-Identifier: GPL-2.0
#
# tests/lib-ulp.sh: the topology of the kernel-ULP tests (46-nvme,
# 47-rds). Source it after tests/lib.sh.
#
# The kernel's RDMA upper-layer protocols (nvmet-rdma, nvme-rdma, rds_rdma)
# create their rdma_cm IDs in the initial network namespace, whatever
# namespace configures them: lib.sh's topology, one device in netns a and
# one in netns b, is out of their reach. Both devices live in the initial
# namespace instead, on the two ends of one veth pair:
#
#   +------------------------ initial netns ------------------------+
#   |                                                               |
#   |  sroce_a (rdma link)                      sroce_b (rdma link) |
#   |     |                                        |                |
#   |  veth_a  192.0.2.1/24  <==== veth ====>  veth_b  192.0.2.2/24 |
#   +---------------------------------------------------------------+
#
# Two addresses of one namespace normally reach each other through the
# local routing table, over lo, and sroce hands a packet whose route is
# local straight to the destination device's receive path (no ICRC, no
# veth). Policy routing makes the pair use the wire instead, as two
# hosts would:
#
#   - the "local" table's rule moves from preference 0 to 1000, below
#     two rules (preferences 100 and 101) that send what this host itself
#     sends (iif lo) from 192.0.2.2 to 192.0.2.1 out of veth_b, and from
#     192.0.2.1 to 192.0.2.2 out of veth_a (tables 4601 and 4602);
#   - permanent neighbour entries give each side the other veth's MAC
#     (no ARP between two addresses of one host);
#   - both veths accept packets whose source is a local address
#     (accept_local) and do no reverse-path filtering.
#
# So rdma_cm resolves 192.0.2.1 from 192.0.2.2 to veth_b and veth_a's MAC,
# sroce routes its packets the same way, and every packet between sroce_a
# and sroce_b crosses the veth with its ICRC, as in lib.sh's topology.
# Received packets arrive on veth_a (veth_b) and go to sroce_a (sroce_b).
#
# API:
#   ulp_topo_up       build it (loads sroce), wait until both ports are
#                     ACTIVE with their GIDs, check the routes
#   ulp_topo_down     tear it down and restore the rules, whatever state
#                     it is in (devices, veth, rules, neighbours)
#   ulp_links_up      add sroce_a or sroce_b again if it was removed, and
#                     wait as ulp_topo_up does
#   veth_bytes DEV rx|tx  print DEV's byte counter
#   ulp_iser_disk, ulp_srp_disk
#                     print the disk of the iSCSI session or of ib_srp's
#                     SCSI host; fail (status 1) while there is none

ULP_TABLE_AB=4601	# from 192.0.2.2 to 192.0.2.1, out of veth_b
ULP_TABLE_BA=4602	# from 192.0.2.1 to 192.0.2.2, out of veth_a

_ulp_mac() {
	local mac

	read -r mac </sys/class/net/"$1"/address || return 1
	echo "$mac"
}

# _ulp_route_dev FROM TO: the device of this host's route from FROM to TO.
_ulp_route_dev() {
	local -a w
	local i

	read -ra w <<<"$(ip -4 route get "$2" from "$1")"
	for ((i = 0; i < ${#w[@]} - 1; i++)); do
		if [[ ${w[i]} == dev ]]; then
			echo "${w[i + 1]}"
			return 0
		fi
	done
	return 1
}

ulp_topo_up() {
	local mac_a mac_b dev

	sroce_load
	# tests/run does not restore rules that a killed test left.
	_ulp_rules_restore || fail "cannot restore the routing rules: $(ip -4 rule show)"
	ip link add veth_a type veth peer name veth_b ||
		fail "cannot add the veth pair (left over from an earlier test?)"
	mac_a=$(_ulp_mac veth_a) && mac_b=$(_ulp_mac veth_b) ||
		fail "cannot read the veths' MAC addresses"
	sysctl -qw net.ipv4.conf.veth_a.accept_local=1 \
		net.ipv4.conf.veth_b.accept_local=1 \
		net.ipv4.conf.veth_a.rp_filter=0 \
		net.ipv4.conf.veth_b.rp_filter=0 ||
		fail "cannot set the veths' sysctls"
	ip -batch - <<-EOF || fail "cannot configure the veths and the routing"
		addr add 192.0.2.1/24 dev veth_a
		addr add 192.0.2.2/24 dev veth_b
		link set veth_a up
		link set veth_b up
		neigh replace 192.0.2.1 lladdr $mac_a dev veth_b nud permanent
		neigh replace 192.0.2.2 lladdr $mac_b dev veth_a nud permanent
		route add 192.0.2.1/32 dev veth_b src 192.0.2.2 table $ULP_TABLE_AB
		route add 192.0.2.2/32 dev veth_a src 192.0.2.1 table $ULP_TABLE_BA
		rule add pref 100 from 192.0.2.2 to 192.0.2.1 iif lo table $ULP_TABLE_AB
		rule add pref 101 from 192.0.2.1 to 192.0.2.2 iif lo table $ULP_TABLE_BA
		rule add pref 1000 table local
		rule del pref 0 table local
	EOF
	dev=$(_ulp_route_dev 192.0.2.2 192.0.2.1) && [[ $dev == veth_b ]] ||
		fail "the route from 192.0.2.2 to 192.0.2.1 is not out of veth_b: $(ip -4 route get 192.0.2.1 from 192.0.2.2)"
	dev=$(_ulp_route_dev 192.0.2.1 192.0.2.2) && [[ $dev == veth_a ]] ||
		fail "the route from 192.0.2.1 to 192.0.2.2 is not out of veth_a: $(ip -4 route get 192.0.2.2 from 192.0.2.1)"
	[[ ! -e /sys/class/infiniband/sroce_a && ! -e /sys/class/infiniband/sroce_b ]] ||
		fail "sroce_a or sroce_b exists already (left over from an earlier test?)"
	ulp_links_up
}

# ulp_links_up: add whichever of sroce_a and sroce_b is missing (on
# veth_a, veth_b), then wait until both ports are ACTIVE with their GIDs.
ulp_links_up() {
	local d

	for d in sroce_a sroce_b; do
		[[ -e /sys/class/infiniband/$d ]] ||
			rdma link add "$d" type sroce netdev "veth_${d#sroce_}" ||
			fail "rdma link add $d failed"
	done
	wait_for 10 _port_active sroce_a
	wait_for 10 _port_active sroce_b
	wait_for 10 _has_gids sroce_a 192.0.2.1
	wait_for 10 _has_gids sroce_b 192.0.2.2
}

# The rules as ulp_topo_up found them: the local table at preference 0,
# none of ours.
_ulp_rules_restore() {
	local pref

	if ! ip -4 rule show pref 0 | grep -q 'lookup local'; then
		ip -4 rule add pref 0 table local || return 1
	fi
	for pref in 100 101 1000; do
		while ip -4 rule show pref "$pref" | grep -q .; do
			ip -4 rule del pref "$pref" || return 1
		done
	done
}

_ulp_gone() {
	[[ ! -e /sys/class/infiniband/sroce_a && ! -e /sys/class/infiniband/sroce_b &&
		! -e /sys/class/net/veth_a ]]
}

ulp_topo_down() {
	local d

	for d in sroce_a sroce_b; do
		[[ -e /sys/class/infiniband/$d ]] && { rdma link del "$d" || true; }
	done
	[[ -e /sys/class/net/veth_a ]] && { ip link del veth_a || true; }
	ip -4 route flush table "$ULP_TABLE_AB" 2>/dev/null || true
	ip -4 route flush table "$ULP_TABLE_BA" 2>/dev/null || true
	_ulp_rules_restore || fail "cannot restore the routing rules: $(ip -4 rule show)"
	wait_for 10 _ulp_gone
}

veth_bytes() {
	local n

	read -r n </sys/class/net/"$1"/statistics/"$2"_bytes || return 1
	echo "$n"
}

# refcnt: sroce's module reference count; refcnt_is N: it is N.
refcnt() {
	local n

	read -r n </sys/module/sroce/refcnt || return 1
	echo "$n"
}

refcnt_is() {
	[[ $(refcnt) == "$1" ]]
}

# ulp_iser_disk: the block device of the (one) iSCSI session, once it is
# there.
ulp_iser_disk() {
	local d

	d=$(iscsiadm -m session -P 3 2>/dev/null | awk '/Attached scsi disk/ { print $4; exit }')
	[[ -n $d && -b /dev/$d ]] && echo "$d"
}

# ulp_srp_disk: the block device of a SCSI host of ib_srp, once it is
# there.
ulp_srp_disk() {
	local h b name

	for h in /sys/class/scsi_host/host*; do
		read -r name <"$h/proc_name" || continue
		[[ $name == ib_srp ]] || continue
		for b in "$h"/device/target*/*/block/*; do
			[[ -b /dev/${b##*/} ]] && { echo "${b##*/}"; return 0; }
		done
	done
	return 1
}
