# SPDX-License-Identifier: GPL-2.0
# shellcheck shell=bash disable=SC2034,SC2154 # the caller sets top; bench_d, opt_used: its
#
# Host side, sourced by scripts/bench, bench-wire, bench-profile and
# bench-clients (never run in a VM): what the benchmarks' entry points
# share. The options that scripts/bench and scripts/bench-wire both take
# (bench_defaults, bench_option, bench_check), the kernels to boot, the
# build to check, the Python for the reports, and the loop over kernels.
# The caller sets top (the repository) and set -euo pipefail.

bench_d=$top/scripts/bench.d

die() {
	echo "bench: $*" >&2
	exit 2
}

# The Python that has matplotlib (Debian's python3-matplotlib lives in
# /usr/bin/python3, which another python3 on PATH may hide), or any.
pick_python() {
	local py

	for py in /usr/bin/python3 python3; do
		command -v "$py" >/dev/null || continue
		if "$py" -c 'import matplotlib' 2>/dev/null; then
			echo "$py"
			return 0
		fi
	done
	for py in /usr/bin/python3 python3; do
		command -v "$py" >/dev/null && { echo "$py"; return 0; }
	done
	return 1
}

# bench_kernels ALL KERNEL OUT: the releases to boot, one a line: every
# supported one if ALL is 1, else KERNEL, else the newest; dies (nothing
# printed) if there is none, or several with an OUT directory.
bench_kernels() {
	local -a rels

	if (($1)); then
		mapfile -t rels < <("$top/scripts/kernels" --boot)
	elif [[ -n $2 ]]; then
		rels=("$2")
	else
		mapfile -t rels < <("$top/scripts/kernels" --boot | tail -n 1)
	fi
	[[ -n ${rels[0]:-} ]] || die "no bootable supported kernel; run scripts/setup"
	((${#rels[@]} == 1)) || [[ -z $3 ]] || die "--out with --all: give one kernel at a time"
	printf '%s\n' "${rels[@]}"
}

# The options of scripts/bench that scripts/bench-wire takes too, at
# their defaults.
bench_defaults() {
	kernel='' all=0 out='' rounds=3 iters='' mtu=9000 quick=0 params=''
}

# bench_option ARGS...: take the option $1 (and its value, $2) if it is
# one of bench_defaults'; opt_used: how many words it took. False, and
# nothing taken, if $1 is another.
bench_option() {
	opt_used=2
	case $1 in
	--kernel) kernel=${2:?} ;;
	--param) params=${2:?} ;;
	--rounds) rounds=${2:?} ;;
	--iters) iters=${2:?} ;;
	--mtu) mtu=${2:?} ;;
	--out) out=${2:?} ;;
	--all) all=1 opt_used=1 ;;
	--quick) quick=1 opt_used=1 ;;
	*) return 1 ;;
	esac
}

# bench_check: die unless bench_defaults' options are well formed; one
# round with --quick.
bench_check() {
	[[ $rounds =~ ^[1-9][0-9]*$ ]] || die "--rounds wants a positive number"
	[[ -z $iters || $iters =~ ^[1-9][0-9]*$ ]] || die "--iters wants a number"
	[[ $mtu =~ ^[0-9]+$ ]] || die "--mtu wants a number"
	((mtu >= 1280)) || die "--mtu wants at least 1280"
	[[ -z $params || $params =~ ^[a-z_]+=[a-z0-9_]+(,[a-z_]+=[a-z0-9_]+)*$ ]] ||
		die "--param wants NAME=VALUE[,NAME=VALUE...] (VALUE: a number or a word)"
	if ((quick)); then
		rounds=1
	fi
}

# bench_built REL: die unless sroce.ko for REL and libsroce are built.
bench_built() {
	[[ -f $top/build/$1/sroce.ko ]] ||
		die "no build/$1/sroce.ko: run 'make' first"
	[[ -f $top/build/userspace/libsroce-rdmav34.so ]] ||
		die "no build/userspace/libsroce-rdmav34.so: run 'make' first"
}

# The commit the tree is at, for the report ("?" outside git).
host_commit() {
	git -C "$top" rev-parse --short HEAD 2>/dev/null || echo '?'
}

# bench_each SUBDIR FUNC WHO: FUNC REL DIR for each release to boot
# (bench_kernels; DIR: --out, else build/SUBDIR/REL), with py set; false,
# saying which failed ("WHO or the report failed"), if any did.
bench_each() {
	local subdir=$1 func=$2 who=$3 rel
	local -a rels failed=()

	py=$(pick_python) || die "no python3"
	mapfile -t rels < <(bench_kernels "$all" "$kernel" "$out")
	((${#rels[@]})) || exit 2
	for rel in "${rels[@]}"; do
		"$func" "$rel" "${out:-$top/build/$subdir/$rel}" || failed+=("$rel")
	done
	if ((${#failed[@]})); then
		echo "bench: incomplete ($who or the report failed): ${failed[*]}" >&2
		return 1
	fi
}
