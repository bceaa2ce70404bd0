#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# The demo, run inside the VM by scripts/demo: two sroce devices in two
# namespaces (the topology in lib.sh), shown the ways a user would look,
# then RDMA WRITE bandwidth between them with perftest's ib_write_bw.
set -e
source "$(dirname "$0")/lib.sh"

trap topo_down EXIT
sroce_load
topo_up

show() {
	printf '\n$ %s\n' "$*"
	"$@"
}

show rdma link show
show rdma resource show
for dev in sroce_a sroce_b; do
	show grep -H . /sys/class/infiniband/$dev/ports/1/gids/[0-3]
done
show ibv_devices
show ibv_devinfo -d sroce_a

# ib_write_bw: the server in namespace a, the client in b, over RoCE v2
# (the IPv4 GID, index 1). The client retries until the server listens.
printf '\n$ ib_write_bw -d sroce_a -x %s -F   # in namespace a\n' \
	"$(gid_index sroce_a 192.0.2.1)"
printf '$ ib_write_bw -d sroce_b -x %s -F 192.0.2.1   # in namespace b\n' \
	"$(gid_index sroce_b 192.0.2.2)"
na ib_write_bw -d sroce_a -x "$(gid_index sroce_a 192.0.2.1)" -F \
	-s 65536 -n 2000 >/tmp/demo-server.log 2>&1 &
server=$!
for _ in $(seq 50); do
	nb ib_write_bw -d sroce_b -x "$(gid_index sroce_b 192.0.2.2)" -F \
		-s 65536 -n 2000 192.0.2.1 >/tmp/demo-client.log 2>&1 && break
	sleep 0.2
done
wait "$server" || fail "ib_write_bw server failed: $(tail -n 3 /tmp/demo-server.log)"
cat /tmp/demo-client.log
grep -qE '^ *65536 +2000 +[0-9.]+ +[0-9.]+' /tmp/demo-client.log ||
	fail "ib_write_bw did not report a bandwidth"
printf '\nCounters of sroce_b (rdma statistic show link sroce_b/1):\n'
rdma statistic show link sroce_b/1
