#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# 11-devinfo: what sroce devices tell userspace about themselves.
#
# With lib.sh's topology (sroce_a on veth_a in netns a, sroce_b on veth_b
# in netns b):
#
#   - `rdma link show`: both ports ACTIVE, each on its netdev;
#   - `ibv_devices` lists both;
#   - `ibv_devinfo -v`, through libsroce: port ACTIVE, Ethernet link
#     layer, MTUs, node and system image GUIDs derived from the netdev's
#     MAC, the RoCE v2 GIDs of the netdev's IPv4 (::ffff:192.0.2.x) and
#     IPv6 addresses (and not the peer's), and every limit it prints
#     (max_qp, max_qp_wr, max_sge, max_cq, max_cqe, max_mr, max_pd,
#     max_mw, max_ah, max_srq, max_srq_wr, max_srq_sge, max_qp_rd_atom,
#     max_pkeys, gid_tbl_len, max_msg_sz...) equal to the one in
#     drivers/sroce/params.h, which the test parses, so that the test
#     fails if the driver, the provider or the header drifts;
#   - the on-demand paging capabilities it prints are exactly those the
#     driver has and 80-odp tests (RC and XRC: send, receive, write,
#     read, atomics, SRQ; UC: send, receive, write; UD: send, receive;
#     implicit ODP, which 80-odp's implicit phase tests);
#   - libsroce really is the provider: libibverbs loads it from
#     build/userspace/ and warns about nothing, and without RDMAV_DRIVERS
#     no provider claims the devices.
# runs-on: every
# timeout: 120
set -e
. "$(dirname "$0")/lib.sh"
trap topo_down EXIT

# The #defines of params.h (and the ABI header it includes) become shell
# variables; bash arithmetic then evaluates "(1 << 16)" or
# "SROCE_MAX_SGE" in them.
load_params() {
	local name value

	while IFS='=' read -r name value; do
		[[ -n $value ]] && declare -g "$name=$value"
	done < <(sed -n -e 's|/\*.*\*/||' \
		-e 's/\([0-9a-fA-F]\)\(ULL\|UL\|U\|LL\|L\)\b/\1/g' \
		-e 's/^#define[[:space:]]\+\(SROCE_[A-Z0-9_]*\)[[:space:]]\+\(.*[^[:space:]]\)[[:space:]]*$/\1=\2/p' \
		"$SROCE_TOP/include/uapi/rdma/sroce-abi.h" \
		"$SROCE_TOP/drivers/sroce/params.h")
	[[ -n ${SROCE_MAX_QP:-} && -n ${SROCE_MAX_SGE:-} ]] ||
		fail "could not read the limits from params.h"
}

# ibv_devinfo's "key: value" lines, into the associative array info;
# the first occurrence of a key wins (device keys come before port keys).
declare -A info
read_devinfo() {
	local key value

	info=()
	while IFS=: read -r key value; do
		key=${key//[[:space:]]/}
		value=${value#"${value%%[![:space:]]*}"}
		[[ -n $key && -z ${info[$key]+set} ]] && info[$key]=$value
	done <<<"$1"
	return 0
}

expect() {
	local dev=$1 key=$2 want=$3

	[[ ${info[$key]-} == "$want" ]] ||
		fail "$dev: ibv_devinfo $key is '${info[$key]-}', expected '$want'"
}

# A limit: numerically equal to the params.h expression.
expect_limit() {
	local dev=$1 key=$2 expr=$3 got want

	got=${info[$key]-}
	[[ -n $got ]] || fail "$dev: ibv_devinfo prints no $key"
	want=$((expr))
	(($(printf '%d' "$got") == want)) ||
		fail "$dev: $key is $got, params.h says $expr = $want"
}

# The EUI-64 GUID of a MAC address (U/L bit flipped, ff:fe in the middle),
# as ibv_devinfo prints it.
guid_of_mac() {
	local -a m

	IFS=: read -ra m <<<"$1"
	printf '%02x%s:%sff:fe%s:%s%s\n' $((16#${m[0]} ^ 2)) "${m[1]}" "${m[2]}" \
		"${m[3]}" "${m[4]}" "${m[5]}"
}

# What ibv_devinfo -v prints of the ODP caps, tabs removed, lines joined.
rc_odp="SUPPORT_SEND SUPPORT_RECV SUPPORT_WRITE SUPPORT_READ SUPPORT_ATOMIC SUPPORT_SRQ"
odp_want="general_odp_caps: ODP_SUPPORT ODP_SUPPORT_IMPLICIT rc_odp_caps: $rc_odp uc_odp_caps: SUPPORT_SEND SUPPORT_RECV SUPPORT_WRITE ud_odp_caps: SUPPORT_SEND SUPPORT_RECV xrc_odp_caps: $rc_odp"

check_device() {
	local dev=$1 ns=$2 netdev=$3 ip4=$4 ip6=$5 peer4=$6 peer6=$7
	local out mac guid

	out=$(ibv_devinfo -v -d "$dev") || fail "ibv_devinfo -v -d $dev failed"
	read_devinfo "$out"

	expect "$dev" hca_id "$dev"
	expect "$dev" transport "InfiniBand (0)"
	expect "$dev" phys_port_cnt 1
	expect "$dev" state "PORT_ACTIVE (4)"
	expect "$dev" phys_state "LINK_UP (5)"
	expect "$dev" link_layer Ethernet
	expect "$dev" max_mtu "4096 (5)"
	expect "$dev" active_mtu "1024 (3)"	# netdev MTU 1500
	expect "$dev" max_vl_num "1 (1)"

	mac=$(ip -n "$ns" -o link show "$netdev") || fail "no $netdev in netns $ns"
	mac=${mac#*link/ether }
	guid=$(guid_of_mac "${mac%% *}")
	expect "$dev" node_guid "$guid"
	expect "$dev" sys_image_guid "$guid"

	expect_limit "$dev" vendor_id SROCE_VENDOR_ID
	expect_limit "$dev" vendor_part_id SROCE_VENDOR_PART_ID
	expect_limit "$dev" max_mr_size SROCE_MAX_MR_SIZE
	expect_limit "$dev" page_size_cap SROCE_PAGE_SIZE_CAP
	expect_limit "$dev" max_qp SROCE_MAX_QP
	expect_limit "$dev" max_qp_wr SROCE_MAX_QP_WR
	expect_limit "$dev" max_sge SROCE_MAX_SEND_SGE
	expect_limit "$dev" max_sge SROCE_MAX_RECV_SGE
	expect_limit "$dev" max_sge_rd SROCE_MAX_SGE_RD
	expect_limit "$dev" max_cq SROCE_MAX_CQ
	expect_limit "$dev" max_cqe SROCE_MAX_CQE
	expect_limit "$dev" max_mr SROCE_MAX_MR
	expect_limit "$dev" max_pd SROCE_MAX_PD
	expect_limit "$dev" max_qp_rd_atom SROCE_MAX_QP_RD_ATOM
	expect_limit "$dev" max_qp_init_rd_atom SROCE_MAX_QP_INIT_RD_ATOM
	expect_limit "$dev" max_res_rd_atom "SROCE_MAX_QP * SROCE_MAX_QP_RD_ATOM"
	expect_limit "$dev" max_mw SROCE_MAX_MW
	expect_limit "$dev" max_ah SROCE_MAX_AH
	expect_limit "$dev" max_srq SROCE_MAX_SRQ
	expect_limit "$dev" max_srq_wr SROCE_MAX_SRQ_WR
	expect_limit "$dev" max_srq_sge SROCE_MAX_SRQ_SGE
	expect_limit "$dev" max_pkeys SROCE_MAX_PKEYS
	expect_limit "$dev" local_ca_ack_delay SROCE_LOCAL_CA_ACK_DELAY
	expect_limit "$dev" gid_tbl_len SROCE_GID_TABLE_LEN
	expect_limit "$dev" pkey_tbl_len SROCE_MAX_PKEYS
	expect_limit "$dev" max_msg_sz SROCE_MAX_MSG_SIZE

	# ODP: the "*_odp_caps:" lines from general_odp_caps on, each with
	# its capability lines (upper case) below it.
	local odp
	odp=$(awk '{ sub(/^[ \t]+/, "") }
		/^general_odp_caps:$/ { on = 1 }
		on && !/^[a-z_]*odp_caps:$/ && !/^[A-Z_ ]+$/ { exit }
		on' <<<"$out" | paste -sd' ')
	[[ $odp == "$odp_want" ]] ||
		fail "$dev: ODP caps \"$odp\", not \"$odp_want\""

	# GID lines: "GID[  1]:		::ffff:192.0.2.1, RoCE v2"
	grep -Eq "GID\[ *[0-9]+\]:[[:space:]]+::ffff:$ip4, RoCE v2\$" <<<"$out" ||
		fail "$dev: no RoCE v2 GID for $ip4"
	grep -Eq "GID\[ *[0-9]+\]:[[:space:]]+$ip6, RoCE v2\$" <<<"$out" ||
		fail "$dev: no RoCE v2 GID for $ip6"
	! grep -Eq "GID.*(::ffff:$peer4|$peer6)," <<<"$out" ||
		fail "$dev: has a GID of its peer's address"
	! grep -E 'GID\[' <<<"$out" | grep -vq 'RoCE v2$' ||
		fail "$dev: a GID that is not RoCE v2: $(grep 'GID\[' <<<"$out" | grep -v 'RoCE v2$')"
	log "$dev: ibv_devinfo -v agrees with params.h, GIDs ::ffff:$ip4 and $ip6"
}

load_params
topo_up

for dev in sroce_a sroce_b; do
	rdma link show "$dev/1" | grep -q "state ACTIVE physical_state LINK_UP" ||
		fail "rdma link show $dev/1: $(rdma link show "$dev/1")"
done
na rdma link show sroce_a/1 | grep -q 'netdev veth_a *$' ||
	fail "rdma link show in netns a: $(na rdma link show sroce_a/1)"
nb rdma link show sroce_b/1 | grep -q 'netdev veth_b *$' ||
	fail "rdma link show in netns b: $(nb rdma link show sroce_b/1)"

devices=$(ibv_devices) || fail "ibv_devices failed"
for dev in sroce_a sroce_b; do
	grep -Eq "^[[:space:]]+$dev[[:space:]]+[0-9a-f]{16}\$" <<<"$devices" ||
		fail "ibv_devices does not list $dev: $devices"
done

check_device sroce_a a veth_a 192.0.2.1 2001:db8::1 192.0.2.2 2001:db8::2
check_device sroce_b b veth_b 192.0.2.2 2001:db8::2 192.0.2.1 2001:db8::1

# The provider: loaded from our build, silently; and nothing else would do.
out=$(IBV_SHOW_WARNINGS=1 LD_DEBUG=files ibv_devinfo -d sroce_a 2>&1) ||
	fail "ibv_devinfo -d sroce_a failed: $out"
grep -q "file=$RDMAV_DRIVERS-rdmav[0-9]*\.so .*dynamically loaded" <<<"$out" ||
	fail "libibverbs did not load $RDMAV_DRIVERS-rdmav*.so"
! grep -q 'libibverbs: Warning' <<<"$out" ||
	fail "libibverbs warns: $(grep 'libibverbs: Warning' <<<"$out")"
if out=$(env -u RDMAV_DRIVERS IBV_SHOW_WARNINGS=1 ibv_devinfo -d sroce_a 2>&1); then
	fail "ibv_devinfo opened sroce_a without libsroce: $out"
fi
grep -q 'no userspace device-specific driver found for sroce_a' <<<"$out" ||
	fail "without RDMAV_DRIVERS, expected libibverbs to find no driver: $out"
log "libsroce is the provider, loaded from $RDMAV_DRIVERS-rdmav*.so"

kernel_log_clean || fail "the kernel complained"
