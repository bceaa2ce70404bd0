# SPDX-License-Identifier: GPL-2.0
#
# tests/lib-traffic.sh: byte-verified traffic across lib.sh's topology
# with userspace/tools/sroce-traffic (Documentation/testing.md). Sourced
# after lib.sh.
#
#   traffic DIR OPTION...   one run: the server on sroce_a in namespace a,
#                           the client on sroce_b in namespace b, both with
#                           OPTION...; fail unless both exit 0 and end with
#                           "OK ... mismatches=0 peer_mismatches=0";
#                           outputs in DIR/s and DIR/c; both run under
#                           the command in $TRAFFIC_WRAP, if set (such as
#                           "taskset -c 0"); over IPv6 (the
#                           GIDs of 2001:db8::1 and ::2) if $TRAFFIC_IPV6
#                           is 1, else over IPv4
#   traffic_unchanged DIR BEFORE_A BEFORE_B
#                           a clean rc run (4 QPs, 2000 operations) after
#                           faults; then both devices' `rdma resource show`
#                           must be BEFORE_A and BEFORE_B again, the kernel
#                           quiet; then the topology and sroce go, and DIR
#   perftest_down           the cleanup of a test with perftest pairs:
#                           their processes ($cpid, $spid) killed, the
#                           topology down, $tmp removed
#   perftest_end SIZE [ITERS]
#                           wait for a perftest client ($cpid, output in
#                           $tmp/c) and server ($spid); the client must
#                           exit 0 with a result line for SIZE bytes (ITERS
#                           iterations, when given)


# The devices' counters that are not zero, for a failure's report.
_traffic_counters() {
	local d f v line

	for d in sroce_a sroce_b; do
		line=
		for f in /sys/class/infiniband/"$d"/ports/1/hw_counters/*; do
			read -r v <"$f" 2>/dev/null || continue
			[[ $v == 0 ]] || line+=" ${f##*/}=$v"
		done
		log "  $d:$line"
	done
}

traffic() {
	local dir=$1 pid status_s=0 status_c=0 side t0=$SECONDS gid_a gid_b
	local ip_a=192.0.2.1 ip_b=192.0.2.2 over=

	shift
	if [[ ${TRAFFIC_IPV6:-0} == 1 ]]; then
		ip_a=2001:db8::1
		ip_b=2001:db8::2
		over=" (IPv6)"
	fi
	gid_a=$(gid_index sroce_a "$ip_a")
	gid_b=$(gid_index sroce_b "$ip_b")
	na ${TRAFFIC_WRAP:-} sroce-traffic --server -d sroce_a -g "$gid_a" --timeout "$(scaled 150)" \
		>"$dir/s" 2>&1 &
	pid=$!
	if ! wait_server 10 "$pid" ns_listening a 18515; then
		sed 's/^/  server: /' "$dir/s"
		fail "sroce-traffic $*: the server exited before it listened"
	fi
	nb ${TRAFFIC_WRAP:-} sroce-traffic --client "$ip_a" -d sroce_b -g "$gid_b" \
		--timeout "$(scaled 150)" "$@" >"$dir/c" 2>&1 || status_c=$?
	wait "$pid" || status_s=$?
	for side in s c; do
		if ((status_s || status_c)) ||
			! grep -Eq '^sroce-traffic: (client|server): OK .* mismatches=0 peer_mismatches=0 ' "$dir/$side"; then
			sed 's/^/  client: /' "$dir/c"
			sed 's/^/  server: /' "$dir/s"
			_traffic_counters
			fail "sroce-traffic $*: exit status $status_s (server) $status_c (client)"
		fi
	done
	log "sroce-traffic $*$over: $(grep -o 'seed=[0-9]*' "$dir/c" | head -n 1)," \
		"$(grep -o 'OK .*' "$dir/c") ($((SECONDS - t0)) s)"
	grep 'lost .* duplicated' "$dir/c" | sed 's/^/  /' || true
}

traffic_unchanged() {
	traffic "$1" --transport rc --qps 4 --ops 2000
	[[ $(rdma resource show sroce_a) == "$2" ]] ||
		fail "sroce_a's resources: '$2' before, '$(rdma resource show sroce_a)' after"
	[[ $(rdma resource show sroce_b) == "$3" ]] ||
		fail "sroce_b's resources: '$3' before, '$(rdma resource show sroce_b)' after"
	kernel_log_clean || fail "the kernel complained"
	topo_down
	sroce_unload
	rm -rf "$1"
}

perftest_end() {
	local status=0 iters=${2:-[0-9]+}

	wait "$cpid" || status=$?
	cpid=
	wait "$spid" || true
	spid=
	((status == 0)) || { cat "$tmp/c"; fail "the perftest client exited with status $status"; }
	grep -Eq "^ *$1 +$iters +[0-9.]+ +[0-9.]+" "$tmp/c" || { cat "$tmp/c"; fail "no result line"; }
}

perftest_down() {
	local p

	for p in "${cpid:-}" "${spid:-}"; do
		if [[ -n $p ]]; then
			kill "$p" 2>/dev/null || true
		fi
	done
	wait 2>/dev/null || true
	topo_down
	if [[ -n ${tmp:-} ]]; then
		rm -rf "$tmp"
	fi
}
