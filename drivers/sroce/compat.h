/* SPDX-License-Identifier: GPL-2.0 OR Linux-OpenIB */
/*
 * The one place where differences between supported kernels live.
 *
 * scripts/compat-probe inspects the headers of the kernel being built for
 * and writes compat-probe.h, a list of SROCE_HAVE_<capability> macros.
 * This file turns those into a single API for the rest of the driver, so
 * no .c file ever tests a kernel version. Built in tree, there is no probe
 * header (Kbuild defines SROCE_HAVE_COMPAT_PROBE when there is one) and the
 * newest API is assumed.
 */
#ifndef SROCE_COMPAT_H
#define SROCE_COMPAT_H

#ifdef SROCE_HAVE_COMPAT_PROBE
#include "compat-probe.h"
#else
#define SROCE_HAVE_CREATE_CQ_ATTRS 1
#define SROCE_HAVE_IB_ACCESS_FLUSH 1
#define SROCE_HAVE_LINUX_UNALIGNED_H 1
#define SROCE_HAVE_IB_WR_FLUSH 1
#define SROCE_HAVE_IB_WR_ATOMIC_WRITE 1
#endif

#include <rdma/uverbs_ioctl.h>

/*
 * ib_device_ops.create_cq: the last argument became the uverbs attribute
 * bundle, whose driver_udata is the old udata; kernel CQs pass NULL.
 * Declare it as SROCE_CREATE_CQ_LAST_ARG (its name is "last") and read the
 * udata with sroce_create_cq_udata(last).
 */
#ifdef SROCE_HAVE_CREATE_CQ_ATTRS
#define SROCE_CREATE_CQ_LAST_ARG struct uverbs_attr_bundle *last
static inline struct ib_udata *
sroce_create_cq_udata(struct uverbs_attr_bundle *attrs)
{
	return attrs ? &attrs->driver_udata : NULL;
}
#else
#define SROCE_CREATE_CQ_LAST_ARG struct ib_udata *last
static inline struct ib_udata *sroce_create_cq_udata(struct ib_udata *udata)
{
	return udata;
}
#endif

/* get_unaligned() and friends moved to <linux/unaligned.h>. */
#ifdef SROCE_HAVE_LINUX_UNALIGNED_H
#include <linux/unaligned.h>
#else
#include <asm/unaligned.h>
#endif

/* The FLUSH access rights of IBA 1.5 exist only on newer kernels. */
#ifndef SROCE_HAVE_IB_ACCESS_FLUSH
#define IB_ACCESS_FLUSH_GLOBAL		0
#define IB_ACCESS_FLUSH_PERSISTENT	0
#endif

/*
 * FLUSH and ATOMIC_WRITE (IBA 1.5, 9.4.6 and 9.4.7). The work request,
 * completion and capability values are uverbs ABI, so a kernel that lacks
 * the names still passes them through between sroce and its provider.
 * Without the FLUSH access rights (above) no MR can grant a FLUSH, and the
 * device does not claim one.
 */
#ifndef SROCE_HAVE_IB_WR_FLUSH
#define IB_UVERBS_WR_FLUSH		14
#define IB_WC_FLUSH			((enum ib_wc_opcode)8)
#define IB_DEVICE_FLUSH_GLOBAL		0ULL
#define IB_DEVICE_FLUSH_PERSISTENT	0ULL
#endif
#ifndef SROCE_HAVE_IB_WR_ATOMIC_WRITE
#define IB_UVERBS_WR_ATOMIC_WRITE	15
#define IB_WC_ATOMIC_WRITE		((enum ib_wc_opcode)9)
#define IB_DEVICE_ATOMIC_WRITE		BIT_ULL(40)
#endif

#endif /* SROCE_COMPAT_H */
