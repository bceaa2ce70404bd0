#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# 47-rds: RDS over RDMA (rds_rdma) between two sroce devices, and sroce
# pinned while rds_rdma holds them.
#
#   sroce_a on veth_a 192.0.2.1  <== veth ==>  sroce_b on veth_b 192.0.2.2
#   (both in the initial network namespace: tests/lib-ulp.sh)
#
# RDS over IB works only in the initial namespace (rds_ib_laddr_check()
# refuses any other, and rds_rdma creates its rdma_cm IDs in init_net),
# hence lib-ulp.sh's topology, whose policy routing sends the traffic of
# the two local addresses over the veth.
#
# Debian 12 packages no rds-tools (rds-ping, rds-info), so the ping is
# done as rds-ping does it, from Python (AF_RDS sockets, SOCK_SEQPACKET):
#
#   1. rds_rdma's ib_client takes a PD on each device as it loads, so
#      sroce's reference count goes from 0 to 2 and rmmod sroce fails.
#   2. Both sockets force the IB transport (SO_RDS_TRANSPORT =
#      RDS_TRANS_IB: bind fails unless an RDMA device owns the address).
#      From 192.0.2.2, 10 RDS pings (an empty message to port 0 of
#      192.0.2.1) each get their pong (an empty message from port 0).
#   3. Messages of 0 B to 150 kB (random bytes, across RDS's 4 KiB
#      fragments) to a socket on 192.0.2.1, which echoes each back:
#      both copies identical byte for byte to what was sent.
#   4. RDS_INFO_IB_CONNECTIONS lists the connection from 192.0.2.2 to
#      192.0.2.1 with the RoCE v2 GIDs of the two addresses, and the
#      veths carried at least the echoed bytes each way.
#   5. Once rds_rdma is unloaded the reference count is 0 again and rmmod
#      sroce succeeds.
#
# The kernel must not complain.
# runs-on: oldest debian13-6.12
# timeout: 240
# skip-ok: ^lockdep kernel: RDS
set -euo pipefail
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/lib-ulp.sh"

tmp=

cleanup() {
	set +e
	modprobe -r rds_rdma rds 2>/dev/null
	ulp_topo_down
	[[ -n $tmp ]] && rm -rf "$tmp"
}
trap cleanup EXIT

for m in rds rds_rdma; do
	modinfo "$m" >/dev/null 2>&1 || skip "kernel $KREL has no module $m"
done
# RDS's connect path takes rds_trans_sem under rdma_cm's handler_mutex,
# and rds_ib_laddr_check() the reverse: lockdep reports it at the first
# connection, the same with rdma_rxe (Documentation/testing.md), and then
# switches itself off for the rest of the boot.
if debug_kernel; then
	skip "lockdep kernel: RDS's own lock-order report (rds_trans_sem vs rdma_cm's handler_mutex, also with rdma_rxe) would switch lockdep off for the later tests"
fi
tmp=$(mktemp -d)

ulp_topo_up
refcnt_is 0 || fail "sroce's reference count is $(refcnt) before rds_rdma, not 0"

# 1. rds_rdma binds to both devices.
modprobe rds_rdma || fail "cannot load rds_rdma"
if rmmod sroce 2>"$tmp/rmmod"; then
	fail "rmmod sroce succeeded while rds_rdma used its devices"
fi
grep -q 'in use' "$tmp/rmmod" || fail "rmmod sroce failed, but not as 'in use': $(<"$tmp/rmmod")"
n=$(refcnt)
((n == 2)) || fail "sroce's reference count is $n with rds_rdma loaded, not 2 (a PD on each device)"
log "rds_rdma loaded: sroce refcnt $n, rmmod refused ($(<"$tmp/rmmod"))"

rx_a=$(veth_bytes veth_a rx) && rx_b=$(veth_bytes veth_b rx) ||
	fail "cannot read the veths' counters"

# 2. to 4. The ping, the echo and the connection's GIDs.
cat >"$tmp/rds.py" <<'EOF'
import os
import socket
import struct
import sys

SOL_RDS = 276
SO_RDS_TRANSPORT = 8
RDS_TRANS_IB = 0
RDS_INFO_IB_CONNECTIONS = 10008
A, B = "192.0.2.1", "192.0.2.2"
PORT = 18634
TIMEOUT = 60


def fail(msg):
    print("FAIL: " + msg, flush=True)
    sys.exit(1)


def rds_socket(addr, port):
    s = socket.socket(socket.AF_RDS, socket.SOCK_SEQPACKET, 0)
    s.setsockopt(SOL_RDS, SO_RDS_TRANSPORT, RDS_TRANS_IB)
    s.setsockopt(socket.SOL_SOCKET, socket.SO_SNDBUF, 1 << 20)
    s.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, 1 << 20)
    try:
        s.bind((addr, port))
    except OSError as e:
        fail(f"bind to {addr}:{port} over the IB transport: {e}")
    s.settimeout(TIMEOUT)
    return s


def recv(s, what):
    try:
        return s.recvfrom(1 << 20)
    except socket.timeout:
        fail(f"{what}: nothing within {TIMEOUT} s")


b = rds_socket(B, 0)
a = rds_socket(A, PORT)
b_port = b.getsockname()[1]

# RDS ping, as rds-ping: an empty message to port 0; the peer's RDS
# answers with an empty message from port 0.
for i in range(10):
    b.sendto(b"", (A, 0))
    data, frm = recv(b, f"ping {i}")
    if data != b"" or frm != (A, 0):
        fail(f"ping {i}: got {len(data)} bytes from {frm}, not a pong from {A}:0")
print(f"10 RDS pings {B} -> {A}: 10 pongs", flush=True)

total = 0
sizes = [0, 1, 100, 4095, 4096, 4097, 8192, 12345, 65535, 65536, 150000]
for i, size in enumerate(sizes):
    msg = os.urandom(size)
    b.sendto(msg, (A, PORT))
    data, frm = recv(a, f"message {i} ({size} B)")
    if frm != (B, b_port):
        fail(f"message {i}: from {frm}, not {B}:{b_port}")
    if data != msg:
        fail(f"message {i}: {len(data)} bytes arrived, {size} were sent, or they differ")
    a.sendto(data, frm)
    data, frm = recv(b, f"echo {i} ({size} B)")
    if frm != (A, PORT) or data != msg:
        fail(f"echo {i}: {len(data)} bytes from {frm} differ from the {size} sent")
    total += size
print(f"{len(sizes)} messages of 0 B to 150 kB ({total} B) echoed identical", flush=True)


def gid(addr):
    return b"\0" * 10 + b"\xff\xff" + socket.inet_aton(addr)


# struct rds_info_rdma_connection: src_addr, dst_addr, src_gid[16],
# dst_gid[16], then counters: 68 bytes in all.
# (Python allows at most 1024 bytes: room for 15 connections.)
info = a.getsockopt(SOL_RDS, RDS_INFO_IB_CONNECTIONS, 1024)
conns = []
for off in range(0, len(info) - 67, 68):
    src, dst, sgid, dgid = struct.unpack_from("4s4s16s16s", info, off)
    conns.append((socket.inet_ntoa(src), socket.inet_ntoa(dst), sgid, dgid))
if not any(c == (B, A, gid(B), gid(A)) for c in conns):
    fail(f"RDS_INFO_IB_CONNECTIONS has no {B} -> {A} connection with their GIDs: "
         f"{[(s, d) for s, d, _, _ in conns]}")
print(f"RDS_INFO_IB_CONNECTIONS: {B} -> {A} over IB with GIDs ::ffff:{B} and ::ffff:{A}",
      flush=True)
print(f"total {total}", flush=True)
EOF
out=$(python3 "$tmp/rds.py" 2>&1) || { printf '%s\n' "$out"; fail "RDS over sroce failed"; }
printf '%s\n' "$out" | grep -v '^total '
total=$(sed -n 's/^total //p' <<<"$out")
ra=$(veth_bytes veth_a rx) && rb=$(veth_bytes veth_b rx) ||
	fail "cannot read the veths' counters"
log "veth_a received $((ra - rx_a)) B, veth_b $((rb - rx_b)) B"
((ra - rx_a >= total && rb - rx_b >= total)) ||
	fail "less than the $total B echoed crossed the veth each way"

# 5. Without rds_rdma nothing pins sroce.
modprobe -r rds_rdma || fail "cannot unload rds_rdma"
wait_for 30 refcnt_is 0
rmmod sroce || fail "rmmod sroce failed after rds_rdma was unloaded"
log "rds_rdma unloaded: sroce refcnt 0, rmmod sroce succeeded"

kernel_log_clean || fail "the kernel complained"
