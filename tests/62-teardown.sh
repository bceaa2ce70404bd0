#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# 62-teardown: objects, devices, namespaces, processes and the module
# torn down under verified traffic of every opcode, and nothing leaks.
#
#   netns a: sroce_a on veth_a 192.0.2.1     <==>  netns b: sroce_b on veth_b 192.0.2.2
#            2001:db8::1                                    2001:db8::2
#     requester QPs  \______ one sroce-stress process ______/  responder QPs
#     (RC, RC with an SRQ on the responder, UC, UD, RC: every opcode both
#      ways, every byte checked; see userspace/tools/stress/main.c)
#
# SROCE_STRESS_CYCLES (default 10; a cycle costs about 9 s on Debian's
# kernels, about 40 s on the debug kernel) and SROCE_STRESS_EVENTS
# (default 10 x CYCLES, and 1000 on a lockdep kernel, the debug kernel;
# an event costs about 0.2 s, 0.4 s on the debug kernel) set the amount
# of work:
#
#   1. Churn: one sroce-stress run with EVENTS events, one every
#      150 ms on a random pair, under its traffic: the responder's or the
#      requester's QP destroyed (receive and send engines running), the
#      target or source MR deregistered, the window invalidated or
#      deallocated, the CQ destroyed (EBUSY while its QP lives, checked),
#      both QPs reset and reconnected, and the SQD dance of an RC pair:
#      RTS -> SQD -> SQD with a new address vector (IPv4 GIDs <-> IPv6
#      GIDs) and new timeout, retry_cnt, rnr_retry, max_rd_atomic,
#      max_dest_rd_atomic -> RTS on both QPs. Every destroy must work; a
#      successful completion must carry exactly the right bytes; traffic
#      must resume after a dance that waited for the SQs to drain, and
#      otherwise resume or end in error completions; a pair no event
#      touched must see no error.
#   2. Teardown from outside, CYCLES times, the kinds in turn: SIGKILL of
#      the verbs process, `rdma link del` of one device, deletion of the
#      veth pair, deletion of one network namespace, `rmmod sroce`, each
#      while sroce-stress runs traffic and its own churn (without SQD).
#      A killed process must leave the devices as they were (`rdma
#      resource show`); after a removal the process must see it
#      (IBV_EVENT_DEVICE_FATAL), release everything and exit 3 within
#      30 s, its data verified so far; a device that remains must be as
#      it was; rmmod must succeed within 60 s; the kernel must not
#      complain (checked after every cycle, to name the cycle).
#   3. Afterwards: sroce unloads, new devices come up, and sroce-traffic
#      (RC, all seven opcodes, and UD) and sroce-stress without events
#      (every opcode, ATOMIC_WRITE, SRQ, window) pass byte for byte;
#      `rdma resource show` is back to the baseline; sroce unloads.
#
# FLUSH is skipped (the libibverbs the tools link has no ibv_wr_flush());
# sroce-stress counts it. Seeds are printed; reproduce phase 1 with
#   sroce-stress -d sroce_a -g G -6 G6 -D sroce_b -G G -7 G6 --seed S --events N
# after topo_up, or the whole test with
#   scripts/vm-run --kernel REL -- env SROCE_STRESS_CYCLES=N tests/run 62-teardown
#
# What it would have caught:
#
# Use after free and leaks on teardown.
# timeout: 1500
set -e
. "$(dirname "$0")/lib.sh"

cycles=${SROCE_STRESS_CYCLES:-10}
[[ $cycles =~ ^[1-9][0-9]*$ ]] || fail "SROCE_STRESS_CYCLES must be a positive number"
# The debug kernel's run destroys under traffic a thousand times.
events=$((10 * cycles))
! debug_kernel || events=1000
events=${SROCE_STRESS_EVENTS:-$events}
[[ $events =~ ^[1-9][0-9]*$ ]] || fail "SROCE_STRESS_EVENTS must be a positive number"
tmp=
stress=

cleanup() {
	[[ -z $stress ]] || kill -KILL "$stress" 2>/dev/null || true
	topo_down
	[[ -z $tmp ]] || rm -rf "$tmp"
}
trap cleanup EXIT

tmp=$(mktemp -d)

gids() {
	ga=$(gid_index sroce_a 192.0.2.1)
	ga6=$(gid_index sroce_a 2001:db8::1)
	gb=$(gid_index sroce_b 192.0.2.2)
	gb6=$(gid_index sroce_b 2001:db8::2)
}

# stress OUT ARGS...: sroce-stress between the two devices, in the
# background; its pid in $stress.
stress() {
	local out=$1

	shift
	sroce-stress -d sroce_a -g "$ga" -6 "$ga6" -D sroce_b -G "$gb" \
		-7 "$gb6" --removal-ms "$(scaled 3000)" "$@" >"$out" 2>&1 &
	stress=$!
}

# verdict OUT STATUS WANT WHAT: $summary is sroce-stress's summary line;
# if it is missing, shows a failure or the exit status is not WANT, add
# the reason to $problems and return 1.
problems=()
verdict() {
	local out=$1 status=$2 want=$3 what=$4

	summary=$(grep '^sroce-stress: events=' "$out" | tail -n 1) || true
	if [[ -z $summary ]]; then
		tail -n 30 "$out" | sed 's/^/  sroce-stress: /'
		problems+=("$what: sroce-stress did not finish (status $status)")
		return 1
	fi
	summary=${summary#sroce-stress: }
	if ((status != want)) || [[ $summary != *" mismatches=0 failures=0 "* ]]; then
		grep '^FAIL' "$out" | head -n 20 | sed 's/^/  /'
		problems+=("$what: sroce-stress exited $status with $(grep -c '^FAIL' "$out")\
 failures: $(grep -m 2 '^FAIL' "$out" | cut -c7-200 | paste -sd';' -)")
		return 1
	fi
}

exited() {
	! kill -0 "$1" 2>/dev/null
}

# One teardown from outside while sroce-stress runs: KIND, cycle N.
strike() {
	local kind=$1 n=$2 out=$tmp/cycle status=0 t0 victim=
	local base_a base_b left c0=$SECONDS

	topo_up
	gids
	base_a=$(resources sroce_a)
	base_b=$(resources sroce_b)
	stress "$out" --forever --gap-ms 100 --seed "$((seed + n))" \
		--only qp-responder,qp-requester,mr,mw,cq,reset
	if ! wait_server 60 "$stress" grep -qx ready "$out"; then
		cat "$out"
		fail "cycle $n: sroce-stress did not start"
	fi
	# Some traffic and churn first: 0.3 to 1.2 s.
	sleep "0.$((3 + RANDOM % 10))"
	t0=${EPOCHREALTIME/./}
	case $kind in
	kill)
		kill -KILL "$stress"
		;;
	link-del)
		victim=sroce_$([[ $((n % 2)) == 0 ]] && echo a || echo b)
		timeout "$(scaled 60)" rdma link del "$victim" ||
			fail "cycle $n: rdma link del $victim under traffic: status $?"
		;;
	veth-del)
		timeout "$(scaled 60)" ip -n a link del veth_a ||
			fail "cycle $n: deleting veth_a under traffic: status $?"
		;;
	netns-del)
		victim=$([[ $((n % 2)) == 0 ]] && echo a || echo b)
		timeout "$(scaled 60)" ip netns del "$victim" ||
			fail "cycle $n: ip netns del $victim under traffic: status $?"
		;;
	rmmod)
		timeout "$(scaled 60)" rmmod sroce ||
			fail "cycle $n: rmmod sroce under traffic: status $?"
		;;
	esac
	wait_for 30 exited "$stress"
	wait "$stress" || status=$?
	stress=
	left=$(((${EPOCHREALTIME/./} - t0) / 1000))
	case $kind in
	kill)
		((status == 137)) || fail "cycle $n: the killed sroce-stress: status $status"
		wait_for 10 resources_are sroce_a "$base_a"
		wait_for 10 resources_are sroce_b "$base_b"
		summary="killed; both devices back to their baseline"
		;;
	*)
		# 3: it saw the device go, released everything and left.
		verdict "$out" "$status" 3 "cycle $n ($kind)" || fail "${problems[-1]}"
		summary="exited 3 after ${left} ms: $summary"
		;;
	esac
	# A device that survived must be as it was.
	if [[ $kind == link-del ]]; then
		if [[ $victim == sroce_a ]]; then
			wait_for 10 resources_are sroce_b "$base_b"
		else
			wait_for 10 resources_are sroce_a "$base_a"
		fi
	fi
	kernel_log_clean || fail "cycle $n ($kind): the kernel complained"
	topo_down
	[[ $kind != rmmod ]] || ! _module_loaded sroce ||
		fail "cycle $n: sroce is still loaded after rmmod"
	log "cycle $n: $kind${victim:+ $victim}: $summary ($((SECONDS - c0)) s)"
}

seed=${SROCE_STRESS_SEED:-$(((RANDOM << 15) | RANDOM))}
log "cycles=$cycles events=$events seed=$seed"

# 1. Churn under traffic.
topo_up
gids
base_a=$(resources sroce_a)
base_b=$(resources sroce_b)
t0=$SECONDS
stress "$tmp/churn" --events "$events" --seed "$seed"
status=0
wait "$stress" || status=$?
stress=
# A failure here is recorded and the test goes on: phases 2 and 3 still
# tell what they tell.
verdict "$tmp/churn" "$status" 0 "churn" || true
log "churn: $summary ($((SECONDS - t0)) s)"
[[ $(resources sroce_a) == "$base_a" && $(resources sroce_b) == "$base_b" ]] ||
	problems+=("after the churn: sroce_a '$(resources sroce_a)', sroce_b\
 '$(resources sroce_b)'; baseline '$base_a', '$base_b'")
kernel_log_clean || fail "churn: the kernel complained"
topo_down

# 2. Teardown from outside.
kinds=(kill link-del veth-del netns-del rmmod)
t0=$SECONDS
for ((n = 0; n < cycles; n++)); do
	strike "${kinds[n % ${#kinds[@]}]}" "$n"
done
log "teardown: $cycles cycles ($((SECONDS - t0)) s)"

# 3. Afterwards: a clean unload, new devices, verified traffic.
sroce_unload
topo_up
gids
base_a=$(resources sroce_a)
base_b=$(resources sroce_b)
for transport in rc ud; do
	na sroce-traffic --server -d sroce_a -g "$ga" --timeout "$(scaled 120)" >"$tmp/ts" 2>&1 &
	pid=$!
	wait_server 10 "$pid" ns_listening a 18515 || fail "sroce-traffic: the server did not start"
	status=0
	nb sroce-traffic --client 192.0.2.1 -d sroce_b -g "$gb" --timeout "$(scaled 120)" \
		--transport "$transport" --qps 4 --ops 4000 >"$tmp/tc" 2>&1 || status=$?
	wait "$pid" || status=$((status | $?))
	if ((status)) || ! grep -q 'OK .* mismatches=0 peer_mismatches=0' "$tmp/tc"; then
		sed 's/^/  client: /' "$tmp/tc"
		sed 's/^/  server: /' "$tmp/ts"
		fail "afterwards: sroce-traffic $transport failed (status $status)"
	fi
	log "afterwards: sroce-traffic $transport: $(grep -o 'OK .*' "$tmp/tc")"
done
stress "$tmp/after" --events 0 --min-ms 3000 --seed "$seed"
status=0
wait "$stress" || status=$?
stress=
verdict "$tmp/after" "$status" 0 "afterwards" || true
log "afterwards: $summary"
[[ $(resources sroce_a) == "$base_a" && $(resources sroce_b) == "$base_b" ]] ||
	problems+=("afterwards: sroce_a '$(resources sroce_a)', sroce_b\
 '$(resources sroce_b)'; baseline '$base_a', '$base_b'")
topo_down
sroce_unload
kernel_log_clean || fail "the kernel complained"
((${#problems[@]} == 0)) || fail "$(printf '%s; ' "${problems[@]}")"
