# SPDX-License-Identifier: GPL-2.0
# shellcheck shell=bash disable=SC2034 # the users' variables
#
# Host and guest: what scripts/bench-wire measures and how its two VMs
# are joined, sourced by scripts/bench-wire (the host: --figures, the
# VMs' NICs and time limit) and by guest-wire.sh (the VMs). The
# figures, their iterations, the size sweep, the
# configurations, the control link's and the links' addresses.

figures=(
	"write_bw_64k ib_write_bw 65536 MB/s 1"
	"write_bw_4k ib_write_bw 4096 MB/s 1"
	"send_bw_64k ib_send_bw 65536 MB/s 1"
	"read_bw_64k ib_read_bw 65536 MB/s 1"
	"write_lat_2b ib_write_lat 2 usec 1"
	"write_bw_64k_q8 ib_write_bw 65536 MB/s 8"
	"write_bw_64k_q64 ib_write_bw 65536 MB/s 64"
)
# perftest -n per figure (per QP: perftest's -n counts each QP's
# messages). A run takes a few seconds on rxe under TCG.
declare -A iters_of=(
	[write_bw_64k]=3000 [write_bw_4k]=20000 [send_bw_64k]=3000
	[read_bw_64k]=3000 [write_lat_2b]=10000 [write_bw_64k_q8]=400
	[write_bw_64k_q64]=50
)
declare -A quick_iters_of=(
	[write_bw_64k]=200 [write_bw_4k]=500 [send_bw_64k]=200
	[read_bw_64k]=200 [write_lat_2b]=500 [write_bw_64k_q8]=25
	[write_bw_64k_q64]=5
)
# The ib_write_bw size sweep, both drivers across the wire.
sweep_sizes=(64 256 1024 4096 16384 65536 262144 1048576)
quick_sweep_sizes=(256 4096 65536)

# Configurations: the two drivers across the wire (server in VM 1), and
# each in loopback on VM 2's device. "netns device address" of each side.
configs=(rxe sroce rxe-lo sroce-lo)
declare -A server_of=(
	[rxe]="- rxe0 198.51.100.1"
	[sroce]="s sroce0 192.0.2.1"
	[rxe-lo]="- rxe0 198.51.100.2"
	[sroce-lo]="s sroce0 192.0.2.2"
)
declare -A client_of=(
	[rxe]="- rxe0 198.51.100.2"
	[sroce]="s sroce0 192.0.2.2"
	[rxe-lo]="- rxe0 198.51.100.2"
	[sroce-lo]="s sroce0 192.0.2.2"
)
# Configurations whose server runs in VM 1.
declare -A remote_of=([rxe]=1 [sroce]=1)

control_addr=192.0.2.129
control_port=4700
iperf_port=5201
iperf_secs=5
ping_count=500
# VM 1's and VM 2's scratch directory (each VM's own tmpfs).
state=/tmp/bench-wire
# The links: name, then each VM's MAC ends in its number.
links=(r s c)
mac_prefix=52:54:00:5e:00

# link_mac LINK VM: the MAC of LINK's NIC in VM (1 or 2).
link_mac() {
	local i

	for i in "${!links[@]}"; do
		[[ ${links[i]} == "$1" ]] && { echo "$mac_prefix:$((i + 1))$2"; return 0; }
	done
	return 1
}

# Keep only the figures named in $1 (comma-separated); false if a name
# is not a figure.
only_figures() {
	local -a keep=()
	local want entry found

	for want in ${1//,/ }; do
		found=0
		for entry in "${figures[@]}"; do
			[[ ${entry%% *} == "$want" ]] || continue
			keep+=("$entry")
			found=1
		done
		((found)) || return 1
	done
	figures=("${keep[@]}")
}
