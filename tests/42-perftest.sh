#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# 42-perftest: perftest's benchmarks run between two sroce devices.
#
#   netns a: sroce_a on veth_a 192.0.2.1  <==>  netns b: sroce_b on veth_b 192.0.2.2
#
# With lib.sh's topology, each in both directions (server in a and
# client in b, then server in b and client in a):
#
#   - ib_send_bw, ib_write_bw, ib_read_bw on RC with -a (every size from
#     2 B to 8 MiB, 5 iterations each), and with -q 8 (8 QPs, 64 KiB);
#     ib_atomic_bw alone and with -q 8;
#   - ib_send_lat, ib_write_lat, ib_read_lat, ib_atomic_lat on RC;
#
# and once (server in a): ib_write_bw and ib_send_bw on UC (-c UC),
# ib_send_bw on UD (-c UD, 1024 B: a full path MTU), and ib_send_bw and
# ib_write_lat connected by the RDMA CM (-R) instead of a TCP exchange.
#
# And with --odp (server in a), which registers perftest's buffers on
# demand (IBV_ACCESS_ON_DEMAND, Documentation/datapath.md): ib_write_bw
# with -a, ib_read_bw and ib_send_bw on RC, ib_send_bw on UD (perftest
# itself refuses --odp with atomics: "ODP does not support ATOMICS for
# now"). Both devices' odp_mrs counters must grow by at least the runs'
# MRs (one a side a run), so that a perftest that quietly fell back to
# pinned memory fails.
#
# Every run must exit 0 on both sides, and the client must print a result
# line for every size it ran (23 with -a) with a positive average
# bandwidth (BW tests) or positive typical and average latencies (latency
# tests); the server at least one such line. Numbers under TCG say
# nothing about sroce's speed: only that data moved. The kernel must not
# complain.
# timeout: 420
set -e
. "$(dirname "$0")/lib.sh"

trap topo_down EXIT

tmp=$(mktemp -d)
declare -A ip=([a]=192.0.2.1 [b]=192.0.2.2) gid

# Servers without -R listen on TCP 18515, with -R an rdma_cm ID does.
tcp_listening() {
	ip netns exec "$1" ss -Htln 'sport = :18515' | grep -q .
}

cm_listening() {
	rdma resource show cm_id | grep -q 'state LISTEN .*:18515 '
}

# results FILE KIND: print the good result lines of FILE as "bytes value".
# KIND bw: the value is the average bandwidth, which must be positive
# from 1 KiB on; below, perftest's two decimals of MB/s can round 5
# messages to 0.00, and the line itself says they all completed. KIND
# lat: the value is the typical latency; it and the average must be
# positive. Under TCG, perftest's measurement of the CPU clock sometimes
# fails ("Correlation coefficient r^2: 0.62 < 0.9" on stderr) and it then
# prints zeros: such a line counts, with the value "unmeasured". A third
# argument 1 counts a zero line so from the start: a passive server (of
# ib_read_bw, say) prints the figure its client measured, zero when the
# client's clock failed, without a warning of its own.
results() {
	awk -v kind="$2" -v noclock="${3:-0}" '
		$1 ~ /^[0-9]+$/ && $2 ~ /^[0-9]+$/ && NF >= 5 {
			if (noclock && $4 + 0 == 0)
				print $1, "unmeasured"
			else if (kind == "bw" && ($1 < 1024 || $4 + 0 > 0))
				print $1, $4
			else if (kind == "lat" && $5 + 0 > 0 && $6 + 0 > 0)
				print $1, $5
			noclock = 0
		}
		# After the numbers: stderr can end up on a result line.
		/Correlation coefficient/ { noclock = 1 }' "$1"
}

# summary KIND: "bytes value" as "65536 B: 29.04 MB/s".
summary() {
	local bytes value unit=" us typical"

	read -r bytes value
	[[ $1 == bw ]] && unit=" MB/s"
	[[ $value == unmeasured ]] && unit=
	echo "$bytes B: $value$unit"
}

# perf SERVER-NS LINES PROGRAM [OPTION...]: run PROGRAM's server in
# SERVER-NS and its client in the other namespace; the client must print
# LINES good result lines, the server one (but the passive servers of
# ib_read_lat and ib_atomic_lat, whose memory is all that is used, print
# none).
perf() {
	local s=$1 lines=$2 prog=$3 c pid kind=bw status_s=0 status_c=0
	local what ready=tcp_listening t0=$SECONDS got_s got_c measured server_lines=1

	shift 3
	c=$([[ $s == a ]] && echo b || echo a)
	what="$prog $* (server in $s)"
	[[ $prog == *_lat ]] && kind=lat
	[[ $prog == ib_read_lat || $prog == ib_atomic_lat ]] && server_lines=0
	[[ " $* " == *" -R "* ]] && ready=cm_listening
	ip netns exec "$s" timeout "$(scaled 120)" "$prog" -d "sroce_$s" -x "${gid[$s]}" -F "$@" \
		>"$tmp/s" 2>&1 &
	pid=$!
	if ! wait_server 10 "$pid" "$ready" "$s"; then
		sed 's/^/  server: /' "$tmp/s"
		fail "$what: the server exited before it listened"
	fi
	ip netns exec "$c" timeout "$(scaled 120)" "$prog" -d "sroce_$c" -x "${gid[$c]}" -F "$@" \
		"${ip[$s]}" >"$tmp/c" 2>&1 || status_c=$?
	wait "$pid" || status_s=$?
	got_c=$(results "$tmp/c" "$kind" | wc -l)
	got_s=$(results "$tmp/s" "$kind" \
		"$(grep -qs 'Correlation coefficient' "$tmp/c" && echo 1 || echo 0)" | wc -l)
	measured=$(results "$tmp/c" "$kind" | grep -vc unmeasured || true)
	# One line may be unmeasured; of 23, not all.
	if ((status_s || status_c || got_c != lines || got_s < server_lines ||
		(lines > 1 && measured < 1))); then
		sed 's/^/  client: /' "$tmp/c"
		sed 's/^/  server: /' "$tmp/s"
		fail "$what: exit status $status_s (server) $status_c (client)," \
			"$got_c good result lines of $lines (client, $measured measured)," \
			"$got_s (server)"
	fi
	log "$what: $(results "$tmp/c" "$kind" | tail -n 1 | summary "$kind")" \
		"($((SECONDS - t0)) s)"
}

topo_up
gid[a]=$(gid_index sroce_a 192.0.2.1)
gid[b]=$(gid_index sroce_b 192.0.2.2)

for s in a b; do
	for t in send write read; do
		perf "$s" 23 "ib_${t}_bw" -a -n 5
		perf "$s" 1 "ib_${t}_bw" -q 8 -n 100
	done
	perf "$s" 1 ib_atomic_bw -n 1000
	perf "$s" 1 ib_atomic_bw -q 8 -n 200
	for t in send write read atomic; do
		perf "$s" 1 "ib_${t}_lat" -n 500
	done
done

perf a 1 ib_write_bw -c UC -n 500
perf a 1 ib_send_bw -c UC -n 500
perf a 1 ib_send_bw -c UD -s 1024 -n 2000
perf a 1 ib_send_bw -R -n 500
perf a 1 ib_write_lat -R -n 500

declare -A odp0
for s in a b; do
	odp0[$s]=$(counter "sroce_$s" odp_mrs)
done
perf a 23 ib_write_bw -a -n 5 --odp
perf a 1 ib_read_bw --odp -n 100
perf a 1 ib_send_bw --odp -n 500
perf a 1 ib_send_bw -c UD -s 1024 --odp -n 500
for s in a b; do
	d=$(($(counter "sroce_$s" odp_mrs) - odp0[$s]))
	log "sroce_$s odp_mrs: +$d"
	((d >= 4)) || fail "sroce_$s: --odp registered $d ODP MRs, not 4"
done

for d in sroce_a sroce_b; do
	log "$d: $(cd "/sys/class/infiniband/$d/ports/1/hw_counters" &&
		grep -H . retransmits timeouts seq_naks_rcvd rnr_naks_rcvd dup_requests |
		tr '\n' ' ')"
done
kernel_log_clean || fail "the kernel complained"
rm -rf "$tmp"
