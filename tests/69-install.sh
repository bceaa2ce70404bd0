#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# 69-install: sroce as make install leaves it (scripts/install), used the
# way a host uses a driver: no insmod, no RDMAV_DRIVERS.
#
#   1. Before: modprobe does not know sroce; no provider, no driver file.
#   2. scripts/install for this kernel: sroce.ko in
#      /lib/modules/R/updates/ and in modprobe's index with its rdma-link
#      alias, the provider beside the system's, /etc/libibverbs.d/
#      sroce.driver.
#   3. With sroce unloaded, `rdma link add ... type sroce` in two
#      namespaces (lib.sh's topology) loads it by itself; with
#      RDMAV_DRIVERS unset, ibv_devices lists both devices,
#      ibv_rc_pingpong --chk (every received buffer checked) and
#      ib_write_bw run between the namespaces.
#   4. scripts/install --uninstall: every file gone, modprobe no longer
#      knows sroce, and a device made from the build tree (insmod) is
#      invisible to libibverbs without RDMAV_DRIVERS (so the check of 3
#      can fail).
#   5. DKMS (if installed): scripts/dkms-source's tree, `dkms install`
#      builds sroce.ko for this kernel here, in the guest (compat probe
#      included) into /lib/modules/R/updates/dkms/; rdma link add loads
#      it, ibv_rc_pingpong --chk runs over it; `dkms remove` leaves no
#      module and modprobe no longer knows sroce.
#
# The guest's root is a throwaway overlay, so the host is never touched.
# A kernel directory's modules (the debug kernel) are read-only in the
# guest: the test puts a tmpfs overlay on /lib/modules/R first.
# timeout: 900
set -e
. "$(dirname "$0")/lib.sh"

moddir=/lib/modules/$KREL
tmp=
overlay=
dkms_ver=

cleanup() {
	topo_down
	sroce_unload
	"$SROCE_TOP/scripts/install" --uninstall "$KREL" >/dev/null 2>&1 || true
	[[ -z $dkms_ver ]] || dkms remove "sroce/$dkms_ver" --all >/dev/null 2>&1 || true
	[[ -z $overlay ]] || umount "$moddir" || true
	[[ -z $tmp ]] || rm -rf "$tmp"
}
trap cleanup EXIT

tmp=$(mktemp -d)
libdir=$(dirname "$(readlink -f /usr/lib/x86_64-linux-gnu/libibverbs.so.1)")
provider=$(echo "$SROCE_BUILD"/userspace/libsroce-rdmav*.so)
provider=$libdir/libibverbs/${provider##*/}
files=("$moddir/updates/sroce.ko" "$provider" /etc/libibverbs.d/sroce.driver)

# no_env CMD...: CMD with no RDMAV_DRIVERS, as on a host.
no_env() {
	env -u RDMAV_DRIVERS "$@"
}

# lists_devices: ibv_devices, with no RDMAV_DRIVERS, lists sroce_a and sroce_b.
lists_devices() {
	local out

	out=$(no_env ibv_devices 2>&1) || return 1
	grep -qw sroce_a <<<"$out" && grep -qw sroce_b <<<"$out"
}

# 1. Before.
sroce_unload
for f in "${files[@]}"; do
	[[ ! -e $f ]] || fail "$f exists before make install"
done
! modprobe -n -q sroce 2>/dev/null || fail "modprobe knows sroce before make install"
if ! touch "$moddir/.sroce-write-test" 2>/dev/null; then
	mkdir "$tmp/upper" "$tmp/work"
	mount -t overlay overlay -o "lowerdir=$moddir,upperdir=$tmp/upper,workdir=$tmp/work" \
		"$moddir" || fail "cannot make $moddir writable"
	overlay=1
	log "$moddir is read-only here: installing into an overlay on it"
fi
rm -f "$moddir/.sroce-write-test"

# 2. Install.
"$SROCE_TOP/scripts/install" "$KREL" >"$tmp/install" 2>&1 ||
	{ cat "$tmp/install"; fail "scripts/install failed"; }
for f in "${files[@]}"; do
	[[ -f $f ]] || fail "scripts/install did not install $f"
done
[[ $(modinfo -n sroce) == "$moddir/updates/sroce.ko" ]] ||
	fail "modinfo finds sroce at '$(modinfo -n sroce 2>&1)', not in $moddir/updates"
cmp -s "$moddir/updates/sroce.ko" "$SROCE_KO" || fail "the installed sroce.ko is not the one built"
grep -q '^alias rdma-link-sroce sroce$' "$moddir/modules.alias" ||
	fail "depmod's modules.alias has no rdma-link-sroce alias for sroce"
log "installed: $(grep -c . "$tmp/install") steps; sroce.ko in $moddir/updates, provider in $libdir/libibverbs"

# 3. Use it as installed.
topo_up installed
_module_loaded sroce || fail "rdma link add did not load sroce"
wait_for 10 lists_devices || fail "ibv_devices without RDMAV_DRIVERS: $(no_env ibv_devices 2>&1)"
ga=$(gid_index sroce_a 192.0.2.1)
gb=$(gid_index sroce_b 192.0.2.2)
if ! ns_pair 18515 "$tmp/ps" "$tmp/pc" \
	env -u RDMAV_DRIVERS timeout "$(scaled 60)" ibv_rc_pingpong -d sroce_a -g "$ga" --chk -n 200 -s 4096 -- \
	env -u RDMAV_DRIVERS timeout "$(scaled 60)" ibv_rc_pingpong -d sroce_b -g "$gb" --chk -n 200 -s 4096 192.0.2.1 ||
	((pair_st_s || pair_st_c)) || ! grep -q '200 iters' "$tmp/pc"; then
	sed 's/^/  server: /' "$tmp/ps"
	sed 's/^/  client: /' "$tmp/pc"
	fail "ibv_rc_pingpong --chk without RDMAV_DRIVERS: status $pair_st_s (server) $pair_st_c (client)"
fi
log "ibv_rc_pingpong --chk: $(grep 'iters' "$tmp/pc")"
if ! ns_pair 18515 "$tmp/ws" "$tmp/wc" \
	env -u RDMAV_DRIVERS timeout "$(scaled 60)" ib_write_bw -d sroce_a -x "$ga" -F -s 65536 -n 200 -- \
	env -u RDMAV_DRIVERS timeout "$(scaled 60)" ib_write_bw -d sroce_b -x "$gb" -F -s 65536 -n 200 192.0.2.1 ||
	((pair_st_s || pair_st_c)) || ! grep -Eq '^ *65536 +200 ' "$tmp/wc"; then
	sed 's/^/  server: /' "$tmp/ws"
	sed 's/^/  client: /' "$tmp/wc"
	fail "ib_write_bw without RDMAV_DRIVERS: status $pair_st_s (server) $pair_st_c (client)"
fi
log "ib_write_bw: $(grep -E '^ *65536 +200 ' "$tmp/wc" | tr -s ' ')"
topo_down
sroce_unload

# 4. Uninstall.
"$SROCE_TOP/scripts/install" --uninstall "$KREL" >"$tmp/uninstall" 2>&1 ||
	{ cat "$tmp/uninstall"; fail "scripts/install --uninstall failed"; }
for f in "${files[@]}"; do
	[[ ! -e $f ]] || fail "$f is still there after uninstall"
done
! modprobe -n -q sroce 2>/dev/null || fail "modprobe still knows sroce after uninstall"
! grep -q 'rdma-link-sroce' "$moddir/modules.alias" || fail "modules.alias still has sroce's alias"
topo_up
if lists_devices; then
	fail "without its provider, ibv_devices still lists sroce devices: $(no_env ibv_devices 2>&1)"
fi
log "uninstalled: no file left, modprobe has no sroce, libibverbs no provider"
topo_down
sroce_unload

# pingpong: ibv_rc_pingpong --chk between the namespaces (this
# environment's provider).
pingpong() {
	if ! ns_pair 18515 "$tmp/ps" "$tmp/pc" \
		timeout "$(scaled 60)" ibv_rc_pingpong -d sroce_a -g "$ga" --chk -n 200 -s 4096 -- \
		timeout "$(scaled 60)" ibv_rc_pingpong -d sroce_b -g "$gb" --chk -n 200 -s 4096 192.0.2.1 ||
		((pair_st_s || pair_st_c)) || ! grep -q '200 iters' "$tmp/pc"; then
		sed 's/^/  server: /' "$tmp/ps"
		sed 's/^/  client: /' "$tmp/pc"
		fail "$1: ibv_rc_pingpong --chk: status $pair_st_s (server) $pair_st_c (client)"
	fi
}

# 5. DKMS.
if ! command -v dkms >/dev/null; then
	kernel_log_clean || fail "the kernel complained"
	skip "make install checked; no dkms here for the DKMS part (scripts/setup installs it)"
fi
src=$("$SROCE_TOP/scripts/dkms-source" "$tmp/src")
dkms_ver=${src##*/sroce-}
t0=$SECONDS
if ! dkms install --sourcetree "$tmp/src" "sroce/$dkms_ver" -k "$KREL" >"$tmp/dkms" 2>&1; then
	tail -n 30 "$tmp/dkms"
	find /var/lib/dkms/sroce -name make.log -exec tail -n 30 {} \; 2>/dev/null
	fail "dkms install sroce/$dkms_ver for $KREL failed"
fi
ko=$(modinfo -n sroce) || fail "modprobe does not know sroce after dkms install"
[[ $ko == "$moddir/updates/dkms/sroce.ko"* ]] || fail "sroce is at $ko, not where DKMS puts it"
log "dkms install sroce/$dkms_ver: built in the guest and installed in $((SECONDS - t0)) s: $ko"
topo_up installed
_module_loaded sroce || fail "rdma link add did not load DKMS's sroce"
ga=$(gid_index sroce_a 192.0.2.1)
gb=$(gid_index sroce_b 192.0.2.2)
pingpong "DKMS's sroce"
log "DKMS's sroce: ibv_rc_pingpong --chk: $(grep 'iters' "$tmp/pc")"
topo_down
sroce_unload
dkms remove "sroce/$dkms_ver" --all >"$tmp/dkms" 2>&1 ||
	{ cat "$tmp/dkms"; fail "dkms remove failed"; }
dkms_ver=
[[ ! -e $ko ]] || fail "$ko is still there after dkms remove"
! modprobe -n -q sroce 2>/dev/null || fail "modprobe still knows sroce after dkms remove"
log "dkms remove: no module left"
kernel_log_clean || fail "the kernel complained"
