# SPDX-License-Identifier: GPL-2.0
#
# tests/lib-install.sh: what the tests of an installed sroce share
# (69-install, 70-packages). Source it after tests/lib.sh. They use sroce
# as a host would: the module from /lib/modules, the provider from the
# system's provider directory, no RDMAV_DRIVERS.
#
#   INSTALLED_PROVIDER   where an installed provider is: beside the
#                        system's providers, under the build's name
#   lists_devices        ibv_devices, with no RDMAV_DRIVERS, lists sroce_a
#                        and sroce_b
#   host_pair PROG ARGS...
#                        PROG ARGS between lib.sh's namespaces with no
#                        RDMAV_DRIVERS: server on sroce_a, client on
#                        sroce_b to 192.0.2.1, GID indexes $ga and $gb;
#                        outputs in $tmp/s and $tmp/c; fails the test
#                        on a non-zero exit
#   modules_writable     make /lib/modules/$KREL writable: a kernel
#                        directory's modules are mounted read-only in the
#                        VM, so they get an overlay whose upper layer is
#                        in $tmp (modules_restore takes it away)
#   use_installed WHAT   with sroce unloaded: lib.sh's topology with
#                        topo_up installed (rdma link add must load
#                        sroce), lists_devices, then ibv_rc_pingpong
#                        --chk and ib_write_bw by host_pair; torn down
#                        and unloaded again. WHAT names the install in
#                        messages.

INSTALLED_PROVIDER=$(echo "$SROCE_BUILD"/userspace/libsroce-rdmav*.so)
INSTALLED_PROVIDER=$(dirname "$(readlink -f /usr/lib/x86_64-linux-gnu/libibverbs.so.1)")/libibverbs/${INSTALLED_PROVIDER##*/}

modules_overlay=

modules_writable() {
	local moddir=/lib/modules/$KREL

	if touch "$moddir/.sroce-write-test" 2>/dev/null; then
		rm -f "$moddir/.sroce-write-test"
		return 0
	fi
	mkdir -p "$tmp/modules-upper" "$tmp/modules-work"
	mount -t overlay overlay \
		-o "lowerdir=$moddir,upperdir=$tmp/modules-upper,workdir=$tmp/modules-work" \
		"$moddir" || fail "cannot make $moddir writable"
	modules_overlay=$moddir
	log "$moddir is read-only here: installing into an overlay on it"
}

modules_restore() {
	[[ -z $modules_overlay ]] || umount "$modules_overlay" || true
	modules_overlay=
}

lists_devices() {
	local out

	out=$(env -u RDMAV_DRIVERS ibv_devices 2>&1) || return 1
	grep -qw sroce_a <<<"$out" && grep -qw sroce_b <<<"$out"
}

host_pair() {
	local prog=$1 gflag=-g

	shift
	[[ $prog == ib_* ]] && gflag=-x
	if ! ns_pair 18515 "$tmp/s" "$tmp/c" \
		env -u RDMAV_DRIVERS timeout "$(scaled 60)" "$prog" -d sroce_a "$gflag" "$ga" "$@" -- \
		env -u RDMAV_DRIVERS timeout "$(scaled 60)" "$prog" -d sroce_b "$gflag" "$gb" "$@" 192.0.2.1 ||
		((pair_st_s || pair_st_c)); then
		sed 's/^/  server: /' "$tmp/s"
		sed 's/^/  client: /' "$tmp/c"
		fail "$prog $*, installed sroce: status $pair_st_s (server) $pair_st_c (client)"
	fi
}

use_installed() {
	local what=$1

	sroce_unload
	topo_up installed
	_module_loaded sroce || fail "rdma link add did not load $what"
	wait_for 10 lists_devices ||
		fail "$what: ibv_devices without RDMAV_DRIVERS: $(env -u RDMAV_DRIVERS ibv_devices 2>&1)"
	ga=$(gid_index sroce_a 192.0.2.1)
	gb=$(gid_index sroce_b 192.0.2.2)
	host_pair ibv_rc_pingpong --chk -n 200 -s 4096
	grep -q '200 iters' "$tmp/c" || fail "$what: ibv_rc_pingpong: no result: $(cat "$tmp/c")"
	log "$what: ibv_rc_pingpong --chk: $(grep 'iters' "$tmp/c")"
	host_pair ib_write_bw -F -s 65536 -n 200
	grep -Eq '^ *65536 +200 ' "$tmp/c" || fail "$what: ib_write_bw: no result line: $(cat "$tmp/c")"
	log "$what: ib_write_bw: $(grep -E '^ *65536 +200 ' "$tmp/c" | tr -s ' ')"
	topo_down
	sroce_unload
}
