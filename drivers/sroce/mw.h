/* SPDX-License-Identifier: GPL-2.0 OR Linux-OpenIB */
#ifndef SROCE_MW_H
#define SROCE_MW_H

#include <rdma/ib_verbs.h>

struct sroce_mr;
struct sroce_qp;
struct sroce_swqe;

/**
 * struct sroce_mw - a memory window
 * @ibmw: the RDMA core's MW; its rkey is the window's current key
 * @lock: protects the binding: @mr to @qpn, and @ibmw.rkey
 * @mr: the MR the window is bound to, referenced; NULL when unbound
 * @addr: first byte of the window, in the MR's address space
 * @length: bytes
 * @access: remote rights the window grants (IB_ACCESS_REMOTE_*)
 * @zero_based: remote addresses are offsets from @addr
 * @qpn: type 2: the QP the window is bound to
 */
struct sroce_mw {
	struct ib_mw ibmw;
	spinlock_t lock;		/* see above */
	struct sroce_mr *mr;
	u64 addr;
	u64 length;
	int access;
	bool zero_based;
	u32 qpn;
};

int sroce_mw_alloc(struct ib_mw *ibmw, struct ib_udata *udata);
int sroce_mw_dealloc(struct ib_mw *ibmw);
enum ib_wc_status sroce_mw_bind(struct sroce_qp *qp,
				const struct sroce_swqe *s);
struct sroce_mr *sroce_mw_access(struct sroce_mw *mw, u32 rkey,
				 struct ib_pd *pd, u32 qpn, u64 va, u64 len,
				 int access, u64 *iova);
int sroce_mw_invalidate(struct sroce_mw *mw, u32 rkey, struct ib_pd *pd,
			u32 qpn);

#endif /* SROCE_MW_H */
