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
#   5. DKMS (if installed) takes scripts/dkms-source's tree and its
#      dkms.conf (dkms add, status, remove); 70-packages has it build
#      that tree, from the sroce-dkms package.
#
# The guest's root is a throwaway overlay, so the host is never touched.
# A kernel directory's modules (the debug kernel) are read-only in the
# guest: the test puts a tmpfs overlay on /lib/modules/R first. On a
# Debian 13 kernel it runs in Debian 13's userland (scripts/check: the
# trixie chroot as the guest's root), as on a host that runs that kernel.
#
# What it would have caught:
#
# An install that only works from the build tree; a module alias or
# provider path that a real host would not find; a DKMS build that misses
# the compat probe.
# userland: kernel
# runs-on: oldest
# timeout: 300
set -e
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/lib-install.sh"

moddir=/lib/modules/$KREL
tmp=
dkms_ver=

cleanup() {
	topo_down
	sroce_unload
	"$SROCE_TOP/scripts/install" --uninstall "$KREL" >/dev/null 2>&1 || true
	[[ -z $dkms_ver ]] || dkms remove "sroce/$dkms_ver" --all >/dev/null 2>&1 || true
	modules_restore
	[[ -z $tmp ]] || rm -rf "$tmp"
}
trap cleanup EXIT

tmp=$(mktemp -d)
files=("$moddir/updates/sroce.ko" "$INSTALLED_PROVIDER" /etc/libibverbs.d/sroce.driver)

# 1. Before.
sroce_unload
for f in "${files[@]}"; do
	[[ ! -e $f ]] || fail "$f exists before make install"
done
! modprobe -n -q sroce 2>/dev/null || fail "modprobe knows sroce before make install"
modules_writable

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
log "installed: sroce.ko in $moddir/updates, $INSTALLED_PROVIDER, /etc/libibverbs.d/sroce.driver"

# 3. Use it as installed.
use_installed "make install"

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
	fail "without its provider, ibv_devices still lists sroce devices: $(env -u RDMAV_DRIVERS ibv_devices 2>&1)"
fi
log "uninstalled: no file left, modprobe has no sroce, libibverbs no provider"
topo_down
sroce_unload

# 5. DKMS from the source tree: the tree and its dkms.conf as README's
# manual route makes them; DKMS must take them. (70-packages has DKMS
# build this same tree, from the sroce-dkms package.)
if ! command -v dkms >/dev/null; then
	kernel_log_clean || fail "the kernel complained"
	skip "make install checked; no dkms here for the DKMS part (scripts/setup installs it)"
fi
src=$("$SROCE_TOP/scripts/dkms-source" "$tmp/src")
dkms_ver=${src##*/sroce-}
dkms add --sourcetree "$tmp/src" "sroce/$dkms_ver" >"$tmp/dkms" 2>&1 ||
	{ cat "$tmp/dkms"; fail "dkms add sroce/$dkms_ver failed"; }
dkms status "sroce/$dkms_ver" | grep -q ': added' ||
	fail "dkms status after dkms add: $(dkms status "sroce/$dkms_ver" 2>&1)"
dkms remove "sroce/$dkms_ver" --all >"$tmp/dkms" 2>&1 ||
	{ cat "$tmp/dkms"; fail "dkms remove failed"; }
dkms_ver=
[[ ! -e /var/lib/dkms/sroce ]] || fail "dkms remove left /var/lib/dkms/sroce"
log "scripts/dkms-source: DKMS takes its tree (dkms add, status, remove)"
kernel_log_clean || fail "the kernel complained"
