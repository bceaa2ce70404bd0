#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# 70-packages: sroce installed from its Debian packages (make deb,
# scripts/build-deb) with apt, as a host installs a driver.
#
#   1. Before: no sroce package, module, source tree or provider.
#   2. apt-get install of sroce-dkms and sroce-provider (no network: their
#      dependencies are installed already). sroce-dkms's postinst has DKMS
#      install sroce.ko for the running kernel; it must be in modprobe's
#      index. DKMS's build is done on the host, at native speed, from the
#      same package (scripts/dkms-prebuild, which scripts/check runs
#      first): a binaries-only DKMS archive that the test puts where the
#      postinst loads one from (/usr/share/sroce-dkms/), so that the
#      guest installs what DKMS built instead of compiling for 4 to 5
#      minutes under TCG. Without an archive for the running kernel, or
#      with SROCE_DKMS_EVERY_KERNEL=1, the guest's DKMS compiles. DKMS would also build for the newest kernel
#      installed (its common.postinst's choice, not ours); under TCG one
#      build and depmod take 4-5 minutes, so every other kernel's headers
#      are hidden (an empty tmpfs on them), and DKMS must then have built
#      for the running kernel alone (on 6.1, where the guest compiled,
#      that halved the test's time: 690 s to 388 s; the host's make still
#      builds sroce.ko for 6.12 with Kbuild). SROCE_DKMS_EVERY_KERNEL=1
#      (in the guest: scripts/check with
#      SROCE_VM_APPEND=sroce_dkms_every_kernel=1)
#      hides nothing and requires a second kernel where one has headers.
#   3. sroce unloaded, `rdma link add` in lib.sh's two namespaces loads it;
#      with RDMAV_DRIVERS unset, ibv_devices lists both devices,
#      ibv_rc_pingpong --chk and ib_write_bw run between the namespaces.
#   4. sroce-provider depends on the libibverbs1 release it was built
#      against, bounded above, so apt refuses a libibverbs whose private
#      ABI may differ.
#   5. apt-get purge: no package left (not even its configuration), no
#      module for any kernel, no DKMS tree, no source, no provider, no
#      driver file; modprobe no longer knows sroce.
#
# The guest's root is a throwaway overlay: the host never sees the
# packages. Kernel directories without headers where /lib/modules/R/build
# says (the debug kernel) are skipped: DKMS needs them. On a Debian 13
# kernel the test runs in Debian 13's userland (scripts/check: the trixie
# chroot as the guest's root, with the kernel's headers, gcc-14 and
# DKMS), with the packages make deb built for it (build/deb/trixie/:
# sroce-provider depends on trixie's libibverbs1), as on a Debian 13 host.
#
# What it would have caught:
#
# A package that installs but whose module DKMS cannot build, or that
# leaves files behind.
# userland: kernel
# runs-on: oldest
# timeout: 1200
set -e
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/lib-install.sh"

# The packages for this system's release: build/deb/ has the build host's
# (build/deb/codename names its release), build/deb/CODENAME/ another
# release's (scripts/build-deb).
debdir=$SROCE_BUILD/deb
codename=$(. /etc/os-release && echo "${VERSION_CODENAME:-}")
if [[ -n $codename && -d $debdir/$codename ]]; then
	debdir=$debdir/$codename
elif [[ -f $debdir/codename && $(<"$debdir/codename") != "$codename" ]]; then
	skip "no packages for $codename: build/deb/ has $(<"$debdir/codename")'s (make trixie deb)"
fi
debs=("$debdir"/sroce-dkms_*_all.deb "$debdir"/sroce-provider_*.deb)
[[ -f ${debs[0]} && -f ${debs[1]} ]] || skip "no packages in ${debdir#"$SROCE_TOP"/} (make deb)"
log "packages: ${debdir#"$SROCE_TOP"/}, on $(. /etc/os-release && echo "$PRETTY_NAME")"
command -v dkms >/dev/null || skip "no dkms here (scripts/setup installs it)"
[[ -e /lib/modules/$KREL/build/Makefile ]] || skip "no kernel headers for $KREL where DKMS looks"

tmp=
installed=
hidden=()

cleanup() {
	topo_down
	sroce_unload
	[[ -z $installed ]] ||
		apt-get purge -y -q sroce-dkms sroce-provider >/dev/null 2>&1 || true
	((${#hidden[@]} == 0)) || umount "${hidden[@]}" || true
	modules_restore
	[[ -z $tmp ]] || rm -rf "$tmp"
}
trap cleanup EXIT
tmp=$(mktemp -d)

provider=$INSTALLED_PROVIDER
version=$(dpkg-deb -f "${debs[0]}" Version)
version=${version%-*}

# left: print every file or package of sroce that is on the system.
left() {
	dpkg-query -W -f='${db:Status-Abbrev} ${Package}\n' 'sroce-*' 2>/dev/null |
		grep -v '^un ' || true
	find /lib/modules -name 'sroce.ko*' -path '*/updates/*' 2>/dev/null || true
	ls -d /usr/src/sroce-* /var/lib/dkms/sroce 2>/dev/null || true
	ls "$provider" /etc/libibverbs.d/sroce.driver 2>/dev/null || true
}

# 1. Before.
sroce_unload
[[ -z $(left) ]] || fail "sroce is on the system before the packages: $(left | paste -sd' ' -)"

# 2. Install. DKMS builds for the running kernel and, by its own choice
# (common.postinst: /boot's configs, dpkg's version order), the newest
# installed one. Unless SROCE_DKMS_EVERY_KERNEL=1, every other kernel's
# headers are hidden first, so that it builds for the running one alone.
modules_writable
every=$(test_param DKMS_EVERY_KERNEL 0)
others=()
for d in /lib/modules/*/build; do
	rel=${d%/build}
	rel=${rel##*/}
	[[ $rel != "$KREL" && -e $d/include ]] || continue
	others+=("$rel")
	[[ $every != 1 ]] || continue
	h=$(readlink -f "$d")
	mount -t tmpfs -o ro,size=4k none "$h" || fail "cannot hide $h"
	hidden+=("$h")
done
((${#hidden[@]} == 0)) ||
	log "DKMS is to build for $KREL only: the headers of ${others[*]} hidden (SROCE_DKMS_EVERY_KERNEL=1 builds for DKMS's choice)"
archive=$SROCE_BUILD/deb/dkms/$KREL/sroce-$version.dkms.tar.gz
if [[ $every != 1 && -s $archive ]]; then
	mkdir -p /usr/share/sroce-dkms
	cp "$archive" /usr/share/sroce-dkms/
	log "DKMS's build from the host: ${archive#"$SROCE_TOP"/}"
else
	log "no archive of DKMS's build from the host: DKMS compiles here"
fi
installed=1
t0=$SECONDS
if ! apt-get install -y -q "${debs[@]}" >"$tmp/apt" 2>&1; then
	tail -n 40 "$tmp/apt"
	fail "apt-get install of the packages failed"
fi
# The kernels DKMS installed sroce for ("sroce/V, REL, ARCH: installed").
built=$(dkms status "sroce/$version" 2>/dev/null | awk -F', *' '/: installed/ { print $2 }')
grep -qxF "$KREL" <<<"$built" ||
	{ tail -n 40 "$tmp/apt"; fail "DKMS did not install sroce/$version for $KREL"; }
if ((${#hidden[@]})); then
	[[ $built == "$KREL" ]] || fail "DKMS built sroce for $(paste -sd' ' <<<"$built"), not $KREL alone: hiding headers failed"
	umount "${hidden[@]}" || fail "cannot unhide ${hidden[*]}"
	hidden=()
else
	# Every kernel's headers left: a newer kernel with headers must
	# have got its module too.
	for rel in "${others[@]}"; do
		dpkg --compare-versions "$rel" gt "$KREL" || continue
		(($(wc -l <<<"$built") >= 2)) ||
			{ tail -n 40 "$tmp/apt"; fail "DKMS built sroce for $KREL alone, though $rel is newer and has headers"; }
	done
fi
for rel in $built; do
	compgen -G "/lib/modules/$rel/updates/dkms/sroce.ko*" >/dev/null ||
		fail "no sroce.ko for $rel under updates/dkms/"
done
[[ $(modinfo -n sroce) == /lib/modules/$KREL/updates/dkms/sroce.ko* ]] ||
	fail "modprobe finds sroce at '$(modinfo -n sroce 2>&1)', not DKMS's"
[[ -f $provider && -f /etc/libibverbs.d/sroce.driver ]] ||
	fail "sroce-provider did not install $provider and /etc/libibverbs.d/sroce.driver"
log "apt-get install: sroce-dkms and sroce-provider $version in $((SECONDS - t0)) s; DKMS built sroce.ko for$(dkms status sroce 2>/dev/null | cut -d, -f2 | paste -sd' ' -)"

# 3. Use it.
use_installed "the packages"

# 4. The provider's libibverbs dependency.
deps=$(dpkg-query -W -f='${Depends}' sroce-provider)
grep -Eq 'libibverbs1 \(>= [0-9.]+\)' <<<"$deps" && grep -Eq 'libibverbs1 \(<< [0-9]+~\)' <<<"$deps" ||
	fail "sroce-provider's Depends does not bound libibverbs1 both ways: $deps"
log "sroce-provider depends on: $deps"

# 5. Purge.
apt-get purge -y -q sroce-dkms sroce-provider >"$tmp/apt" 2>&1 ||
	{ tail -n 40 "$tmp/apt"; fail "apt-get purge failed"; }
installed=
# The archive is the test's, not the package's: dpkg leaves it.
rm -rf /usr/share/sroce-dkms
[[ -z $(left) ]] || fail "left after apt-get purge: $(left | paste -sd' ' -)"
! modprobe -n -q sroce 2>/dev/null || fail "modprobe still knows sroce after the purge"
log "apt-get purge: nothing left"
kernel_log_clean || fail "the kernel complained"
