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
#define SROCE_HAVE_RESIZE_USER_CQ 1
#define SROCE_HAVE_REG_USER_MR_DMAH 1
#define SROCE_HAVE_IB_UMEM_GET_VA 1
#define SROCE_HAVE_TIMER_CONTAINER_OF 1
#define SROCE_HAVE_TIMER_DELETE 1
#define SROCE_HAVE_UDP_TUNNEL_SK 1
#define SROCE_HAVE_REPORT_PORT_EVENT 1
#define SROCE_HAVE_BH_WORKQUEUE 1
#define SROCE_HAVE_UBUF_INFO_OPS 1
#define SROCE_HAVE_VM_FLAGS_SET 1
#endif

#include <linux/hmm.h>
#include <linux/mm.h>
#include <linux/skbuff.h>
#include <linux/timer.h>
#include <net/udp_tunnel.h>
#include <rdma/ib_umem.h>
#include <rdma/ib_umem_odp.h>
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

/*
 * ib_device_ops.resize_cq became resize_user_cq (kernel CQs are never
 * resized), with an unsigned size. The ops table names the member
 * SROCE_OP_RESIZE_CQ; sroce_cq_resize() takes a SROCE_RESIZE_CQ_SIZE.
 */
#ifdef SROCE_HAVE_RESIZE_USER_CQ
#define SROCE_OP_RESIZE_CQ	resize_user_cq
#define SROCE_RESIZE_CQ_SIZE	unsigned int
#else
#define SROCE_OP_RESIZE_CQ	resize_cq
#define SROCE_RESIZE_CQ_SIZE	int
#endif

/*
 * ib_device_ops.reg_user_mr gained a DMA handle (struct ib_dmah, a TPH
 * steering hint) before the udata. SROCE_REG_USER_MR_DMAH declares it,
 * comma included, where the kernel passes one; sroce_reg_user_mr_dmah()
 * is that handle, or NULL where there is none.
 */
#ifdef SROCE_HAVE_REG_USER_MR_DMAH
#define SROCE_REG_USER_MR_DMAH		struct ib_dmah *dmah,
#define sroce_reg_user_mr_dmah()	(dmah)
#else
#define SROCE_REG_USER_MR_DMAH
#define sroce_reg_user_mr_dmah()	NULL
#endif

/* ib_umem_get() of a user virtual address became ib_umem_get_va(). */
#ifndef SROCE_HAVE_IB_UMEM_GET_VA
#define ib_umem_get_va(dev, addr, size, access) \
	ib_umem_get(dev, addr, size, access)
#endif

/* del_timer() and del_timer_sync() became timer_delete*(). */
#ifndef SROCE_HAVE_TIMER_DELETE
#define timer_delete(timer)		del_timer(timer)
#define timer_delete_sync(timer)	del_timer_sync(timer)
#endif

/* from_timer() became timer_container_of(). */
#ifndef SROCE_HAVE_TIMER_CONTAINER_OF
#define timer_container_of(var, timer, field) from_timer(var, timer, field)
#endif

/* The UDP tunnel socket calls came to take the struct sock. */
static inline void sroce_udp_tunnel_setup(struct net *net,
					  struct socket *sock,
					  struct udp_tunnel_sock_cfg *cfg)
{
#ifdef SROCE_HAVE_UDP_TUNNEL_SK
	setup_udp_tunnel_sock(net, sock->sk, cfg);
#else
	setup_udp_tunnel_sock(net, sock, cfg);
#endif
}

static inline void sroce_udp_tunnel_release(struct socket *sock)
{
#ifdef SROCE_HAVE_UDP_TUNNEL_SK
	udp_tunnel_sock_release(sock->sk);
#else
	udp_tunnel_sock_release(sock);
#endif
}

/*
 * A zero-copy buffer's completion (struct ubuf_info) was a function
 * pointer in the structure; it became a table of operations. Where it is
 * not, the table is ours, and sroce_ubuf_init() copies its one entry in.
 */
#ifndef SROCE_HAVE_UBUF_INFO_OPS
struct ubuf_info_ops {
	void (*complete)(struct sk_buff *skb, struct ubuf_info *ubuf,
			 bool zerocopy_success);
};
#endif

static inline void sroce_ubuf_init(struct ubuf_info *ubuf,
				   const struct ubuf_info_ops *ops)
{
#ifdef SROCE_HAVE_UBUF_INFO_OPS
	ubuf->ops = ops;
#else
	ubuf->callback = ops->complete;
#endif
}

/* A VMA's flags came to be set through vm_flags_set(). */
#ifndef SROCE_HAVE_VM_FLAGS_SET
static inline void vm_flags_set(struct vm_area_struct *vma, vm_flags_t flags)
{
	vma->vm_flags |= flags;
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

/*
 * On-demand paging (odp.c). The umem's list of HMM pfns was
 * umem_odp->pfn_list, and the access mask of ib_umem_odp_map_dma_and_lock()
 * named read and write with bits of its own (read may not be 0). Newer
 * kernels keep the list in umem_odp->map and take HMM_PFN_WRITE for a
 * write, 0 for a read. The header's own macro tells which.
 */
#ifdef ODP_READ_ALLOWED_BIT
#define SROCE_ODP_ACCESS_READ	ODP_READ_ALLOWED_BIT
#define SROCE_ODP_ACCESS_WRITE	(ODP_READ_ALLOWED_BIT | ODP_WRITE_ALLOWED_BIT)
static inline unsigned long *sroce_odp_pfns(struct ib_umem_odp *odp)
{
	return odp->pfn_list;
}

/*
 * The core dirties a page when it unmaps it only if its DMA entry allows
 * writes, which a read fault does not grant even on a writable mapping:
 * such a page may be written only once a write fault marked it.
 */
static inline bool sroce_odp_writable(struct ib_umem_odp *odp, size_t i)
{
	return odp->dma_list[i] & ODP_WRITE_ALLOWED_BIT;
}
#else
#define SROCE_ODP_ACCESS_READ	0
#define SROCE_ODP_ACCESS_WRITE	HMM_PFN_WRITE
static inline unsigned long *sroce_odp_pfns(struct ib_umem_odp *odp)
{
	return odp->map.pfn_list;
}

/* The core dirties a page on unmap when its pfn allows writes. */
static inline bool sroce_odp_writable(struct ib_umem_odp *odp, size_t i)
{
	return odp->map.pfn_list[i] & HMM_PFN_WRITE;
}
#endif

#endif /* SROCE_COMPAT_H */
