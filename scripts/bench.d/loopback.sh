# SPDX-License-Identifier: GPL-2.0
# shellcheck shell=bash disable=SC2034 # the users' variables
#
# Host and guest: what scripts/bench measures, sourced by scripts/bench
# (the host, for the VM's time limit) and by guest-loopback.sh (the VM).
# The figures, their iterations, the size sweep, and the configurations
# with their devices and addresses (scripts/bench's picture).

# The figures: name, tool, message size, unit. Each round runs each
# figure once in every configuration.
figures=(
	"write_bw_64k ib_write_bw 65536 MB/s"
	"write_bw_4k ib_write_bw 4096 MB/s"
	"send_bw_64k ib_send_bw 65536 MB/s"
	"read_bw_64k ib_read_bw 65536 MB/s"
	"write_lat_2b ib_write_lat 2 usec"
)

# perftest -n per figure. Under TCG rdma_rxe's loopback moves 64 KiB
# writes at 15 to 40 MB/s, 4 KiB ones at about 20 MB/s and 2-byte writes
# in 15 to 130 us (PLATFORM.md), sroce's several times faster: a run
# takes 5 to 15 s on rxe and 1 to 3 s on sroce.
declare -A iters_of=(
	[write_bw_64k]=5000 [write_bw_4k]=40000 [send_bw_64k]=5000
	[read_bw_64k]=5000 [write_lat_2b]=40000
)
declare -A quick_iters_of=(
	[write_bw_64k]=200 [write_bw_4k]=500 [send_bw_64k]=200
	[read_bw_64k]=200 [write_lat_2b]=1000
)
# The chart's ib_write_bw sizes (guest-lib.sh's sweep_setup).
sweep_sizes=(64 256 1024 4096 16384 65536 262144 1048576)
quick_sweep_sizes=(256 4096 65536)

# The configurations: rdma_rxe and sroce in loopback (client and server
# on one device, compared), and sroce between two devices over its veth
# pair (for information: unlike loopback, this computes and checks the
# ICRC and goes through the IP stack). Each side is "netns device
# address", "-" being the initial namespace; the client connects to the
# server's address.
configs=(rxe sroce sroce-veth)
declare -A server_of=(
	[rxe]="- rxe0 198.51.100.1"
	[sroce]="s sroce0 192.0.2.1"
	[sroce-veth]="s sroce0 192.0.2.1"
)
declare -A client_of=(
	[rxe]="- rxe0 198.51.100.1"
	[sroce]="s sroce0 192.0.2.1"
	[sroce-veth]="t sroce1 192.0.2.2"
)
