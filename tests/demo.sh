#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# The demo, run inside the VM by scripts/demo: two sroce devices in two
# namespaces (the topology in lib.sh), shown the ways a user would look.
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
