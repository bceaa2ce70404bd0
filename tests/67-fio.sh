#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# 67-fio: fio's rdma engine runs on sroce (Documentation/clients.md).
#
#   netns a: sroce_a on veth_a 192.0.2.1   fio server (rw=read)
#   netns b: sroce_b on veth_b 192.0.2.2   fio client (rw=write)
#
# Debian 12's fio 3.33, 64 KiB blocks, 64 MiB a run:
#
#   - verb=send with data verification: the client sends blocks with
#     fio's crc32c verify headers, the server receives them as reads and
#     checks each one (offset, length and checksum); both must exit 0,
#     the server must have read all 1024 blocks and report no verify
#     error. The server posts 16 receives ahead (iodepth=16): fio's
#     rdma_connect() asks for no RNR retries (rnr_retry_count 0), so a
#     SEND that finds no receive posted fails the client with "RNR retry
#     counter exceeded" (IBA 9.7.5.2.8), on any RDMA device;
#   - the same with a client that sends fio's "pattern" blocks instead:
#     the server must report "verify: bad magic header" and fail, which
#     shows the check above looks at the data;
#   - verb=write and verb=read (the client WRITEs into, or READs from,
#     the buffers the server advertised): both exit 0 and the client
#     issued 1024 blocks. fio cannot check this data: the server's blocks
#     never complete one by one. 43-traffic and 42-perftest check the
#     same verbs byte for byte.
#
# A fio whose job is stuck waits 300 s after SIGTERM before it gives up
# (and then crashes freeing its options: the SIGSEGV users report), so
# the runs are ended with SIGKILL. Skips if fio is missing (scripts/setup
# installs it). Fails on any kernel report.
#
# What it would have caught:
#
# A send path that delivered wrong or short data; RNR handling that hung
# or crashed a peer instead of failing the SEND.
# timeout: 300
set -e
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/lib-cm.sh"

tmp=
status=0

trap topo_tmp_down EXIT

command -v fio >/dev/null || skip "no fio (scripts/setup installs it)"
tmp=$(mktemp -d)
log "$(fio --version)"
topo_up

# fio_stop: kill every fio. A job killed with its parent stays behind and
# may hold the port; a failed client leaves its server waiting for ever.
fio_stop() {
	pkill -KILL -x fio 2>/dev/null || true
}

# fio_pair NAME LIMIT: one fio run (cm_pair) with the options in the
# arrays srv and cli, the server in a, the client in b, each killed after
# LIMIT seconds (scaled), both in $tmp. Outputs in $tmp/a and $tmp/b,
# exit statuses in status_a and status_b.
fio_pair() {
	# The engine's options (--port, --hostname) only after --ioengine.
	local -a common=(--ioengine=rdma --port=47600 --bs=64k --verify_state_save=0)

	fio_stop
	log "=== $1"
	CM_LIMIT=$2 CM_SIGNAL=KILL CM_CLIENT_FAILED=fio_stop cm_pair "$tmp" 47600 \
		env -C "$tmp" fio --name=server --rw=read "${common[@]}" "${srv[@]}" -- \
		env -C "$tmp" fio --name=client --rw=write "${common[@]}" \
		--hostname=192.0.2.1 "${cli[@]}"
}

# issued FILE: the number of blocks fio's "issued rwts" line counts.
issued() {
	sed -n 's/.*issued rwts: total=\([0-9]*\),\([0-9]*\),.*/\1 \2/p' "$1" |
		awk '{ print $1 + $2 }'
}

# verdict NAME SIDE-THAT-COUNTS: both sides exit 0, err=0, 1024 blocks.
verdict() {
	local name=$1 counts=$2 n

	n=$(issued "$tmp/$counts")
	if ((status_a || status_b)) || ! grep -q 'err= 0' "$tmp/a" ||
		! grep -q 'err= 0' "$tmp/b" || [[ $n != 1024 ]] ||
		grep -q '^verify:' "$tmp/a"; then
		cm_show "$tmp" | grep -v '^  [a-z]*: *$' | tail -n 40
		log "FAIL: fio $name: exit status $status_a (server) $status_b (client), ${n:-no} blocks"
		status=1
		return 0
	fi
	log "fio $name: 1024 blocks of 64 KiB, $(grep -o 'BW=[^ ]*' "$tmp/b" | head -n 1)"
}

srv=(--size=64m --verb=send --iodepth=16 --verify=crc32c)
cli=(--size=64m --verb=send --iodepth=4 --verify=crc32c)
fio_pair "verb=send, crc32c verified by the server" 120
verdict "verb=send, crc32c verified by the server" a

srv=(--size=1m --verb=send --iodepth=16 --verify=crc32c)
cli=(--size=1m --verb=send --iodepth=1 --verify=pattern --verify_pattern=0x5a5a)
fio_pair "verb=send, wrong data" 20
if ((status_a == 0)) || ! grep -q '^verify: bad magic header' "$tmp/a"; then
	cm_show "$tmp" | tail -n 20
	log "FAIL: fio's server accepted blocks without its verify header (exit status $status_a)"
	status=1
else
	log "fio verb=send, wrong data: the server reported $(grep -c '^verify: bad magic header' "$tmp/a") bad blocks and failed"
fi

for verb in write read; do
	srv=(--size=64m "--verb=$verb" --iodepth=4)
	cli=("${srv[@]}")
	fio_pair "verb=$verb" 120
	verdict "verb=$verb" b
done

kernel_log_clean || fail "the kernel complained"
((status == 0)) || fail "fio failed (above)"
