# SPDX-License-Identifier: GPL-2.0
#
# sroce: a software RoCEv2 RDMA device.
#
#   make                 sroce.ko for every supported kernel with headers
#                        installed, the rdma-core provider and the test
#                        tools (build/userspace/bin/)
#   make KERNELRELEASE=R only kernel release R
#   make check           build, then run the test suite in VMs
#   make demo            build, then show two sroce devices in a VM
#   make style           checkpatch, sparse and kernel-doc
#   make clean           remove build/

KERNELRELEASE ?=
RELEASES := $(if $(KERNELRELEASE),$(KERNELRELEASE),$(shell scripts/kernels))

all: module provider tools

module: $(RELEASES:%=module-%)

module-%:
	scripts/build-module $*

provider:
	scripts/build-provider

tools:
	$(MAKE) -C userspace/tools

check: all
	scripts/check $(RELEASES)

style:
	scripts/style $(RELEASES)

clean:
	rm -rf build

demo: all
	scripts/demo

.PHONY: all module provider tools check style clean demo
