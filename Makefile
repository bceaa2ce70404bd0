# SPDX-License-Identifier: GPL-2.0
#
# sroce: a software RoCEv2 RDMA device.
#
#   make                 sroce.ko for every supported kernel with headers
#                        installed, the rdma-core provider and the test
#                        tools (build/userspace/bin/)
#                        and, best effort, a newer librdmacm for
#                        tests/66-rsocket (scripts/build-rsocket)
#   make KERNELRELEASE=R only kernel release R
#   make trixie          Debian 13's kernels (trixie's 6.12, backports'
#                        7.2 and 7.3) and sroce.ko for each: they are built
#                        for in a cached trixie chroot (scripts/kernel-trixie)
#   make setup           install what the build, the VMs and the tests need,
#                        if anything is missing (scripts/setup --if-needed;
#                        make demo, check, check-debug and style do it first)
#   make check           build (trixie included), then run the test suite
#                        in VMs: all of it on the newest kernel, on the
#                        others what their "# runs-on:" lines name
#                        (scripts/check; SROCE_CHECK_ALL=1: all of it on
#                        every kernel)
#   make test T=NAME [K=KERNEL]
#                        build, then run the tests named (T="40 43"
#                        works too) on KERNEL, on every supported kernel
#                        without K, on the debug kernel with K=debug
#   make kernel-debug    build the debug kernel (KASAN, lockdep, UBSAN,
#                        kmemleak, ...; scripts/kernel-debug)
#   make check-debug     build sroce.ko against it, the provider and the
#                        tools, then run the test suite on it
#                        (TESTS="01-harness 40-pingpong" runs only those;
#                        RESUME=1 only those of the suite, or of TESTS,
#                        without a pass for the code as it is now:
#                        scripts/debug-ledger)
#   make check-debug-safety  the same, for the safety set alone (an hour)
#   make check-debug-status  what check-debug boots have proved for the
#                        code as it is now: a row a test
#   make demo            build, then show two sroce devices in a VM
#   make install         build, then install sroce.ko for each kernel
#                        (/lib/modules/R/updates/, depmod), the provider
#                        beside the system's and /etc/libibverbs.d/
#                        sroce.driver (scripts/install; DESTDIR works)
#   make uninstall       remove what make install put there
#   make deb             the Debian packages sroce-dkms and sroce-provider
#                        in build/deb/ (scripts/build-deb), and after
#                        make trixie the same for Debian 13 in
#                        build/deb/trixie/
#   make style           checkpatch, sparse and kernel-doc; the test
#                        catalogue (Documentation/tests.md) up to date
#   make clean           remove build/

KERNELRELEASE ?=
TESTS ?=
T ?=
K ?=
RESUME ?=
# The kernels to build for, listed when a recipe runs (scripts/setup may
# have just installed their headers).
KERNELS = $(if $(KERNELRELEASE),$(KERNELRELEASE),$$(scripts/kernels))

all: module provider tools rsocket

# What the build, the VMs and the tests need, installed only if missing:
# make demo and make check start with it (a host that only builds and
# installs sroce needs less: README).
setup:
	scripts/setup --if-needed

module:
	rels=$(KERNELS) && for rel in $$rels; do scripts/build-module "$$rel" || exit 1; done

module-%:
	scripts/build-module $*

provider:
	scripts/build-provider

tools:
	$(MAKE) -C userspace/tools

rsocket:
	scripts/build-rsocket

# Debian 13's kernels (6.12, 7.2, 7.3): a cached trixie chroot with their
# headers and toolchain, their images and modules, and sroce.ko for each.
trixie: setup
	rels=$$(scripts/kernel-trixie) && for rel in $$rels; do \
		scripts/build-module "$$rel" || exit 1; done

# One step after the other, also under make -j: setup may install the
# headers the module build lists, and the Debian 13 packages need the
# chroot that trixie makes.
check: setup
	$(MAKE) all
	$(MAKE) trixie
	$(MAKE) deb
	scripts/check $(KERNELRELEASE)

# One test or a few on one kernel: the module for that kernel alone.
test: setup
	@[ -n "$(T)" ] || { echo "usage: make test T=NAME [K=KERNEL|debug]" >&2; exit 2; }
	$(MAKE) provider tools
	set -e; k='$(K)'; [ "$$k" != debug ] || k=$$(scripts/kernel-debug); \
	rels=$${k:-$$(scripts/kernels --boot)}; \
	for rel in $$rels; do scripts/build-module "$$rel"; done; \
	set --; for t in $(T); do \
		f=$$(ls tests/$$t*.sh 2>/dev/null | head -n 1); \
		[ -n "$$f" ] || { echo "make test: no test $$t" >&2; exit 2; }; \
		set -- "$$@" -t "$$(basename "$$f" .sh)"; done; \
	scripts/check "$$@" $$k

kernel-debug:
	scripts/kernel-debug

# The kernel directory that scripts/kernel-debug prints stands for a
# release everywhere: build-module, check.
check-debug: setup
	$(MAKE) provider tools rsocket deb
	set -e; dir=$$(scripts/kernel-debug); \
	scripts/build-module "$$dir"; \
	tests='$(TESTS)'; \
	if [ "$(RESUME)" = 1 ]; then \
		tests=$$(scripts/debug-ledger missing "$$dir" $$tests); \
		[ -n "$$tests" ] || { scripts/debug-ledger status "$$dir"; exit 0; }; \
	fi; \
	set --; for t in $$tests; do set -- "$$@" -t "$$t"; done; \
	scripts/debug-ledger begin "$$dir"; \
	st=0; scripts/check "$$@" "$$dir" || st=$$?; \
	scripts/debug-ledger record "$$dir"; \
	scripts/debug-ledger status "$$dir" | tail -n 1; \
	exit $$st

# The debug kernel's safety set, about an hour (Documentation/testing.md,
# "The debug kernel"): the error, teardown and hostile-input tests.
DEBUG_SAFETY = 01-harness 30-badinput 31-killed-holder 40-pingpong \
	56-resp-errors 58-faults 59-failslab 60-fuzz-packets 61-fuzz-rings \
	62-teardown 72-frmr-race 75-lying-peer 76-memcg 78-trace

check-debug-safety:
	$(MAKE) check-debug TESTS="$(DEBUG_SAFETY)" RESUME=$(RESUME)

# What the debug kernel has proved with the code as it is now, across
# boots (scripts/debug-ledger); make check-debug RESUME=1 runs the rest.
check-debug-status:
	@[ -d build/kernel-debug/current ] || { echo "no debug kernel (make kernel-debug)"; exit 1; }
	scripts/debug-ledger status build/kernel-debug/current

style:
	scripts/setup --if-needed --style
	scripts/style $(KERNELRELEASE)

clean:
	rm -rf build

demo: setup
	$(MAKE) all
	scripts/demo

install: module provider
	scripts/install $(KERNELRELEASE)

uninstall:
	scripts/install --uninstall $(KERNELRELEASE)

deb: provider
	scripts/build-deb

.PHONY: test check-debug-safety all setup module provider tools rsocket trixie check kernel-debug check-debug \
	check-debug-status \
	style clean demo install uninstall deb
