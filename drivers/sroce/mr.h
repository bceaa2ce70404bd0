/* SPDX-License-Identifier: GPL-2.0 OR Linux-OpenIB */
#ifndef SROCE_MR_H
#define SROCE_MR_H

#include <linux/completion.h>
#include <linux/refcount.h>
#include <rdma/ib_umem.h>
#include <rdma/ib_verbs.h>

#include "compat.h"

struct sroce_dev;
struct sroce_odp_imr;
struct sroce_qp;

/**
 * enum sroce_mr_type - how a memory region's memory is described
 * @SROCE_MR_DMA: all of kernel memory (get_dma_mr)
 * @SROCE_MR_USER: pinned user memory (@umem)
 * @SROCE_MR_FAST: a page list set by a fast-registration WR (@pages)
 * @SROCE_MR_ODP: on-demand paged user memory (@odp, @odp_map; odp.c), or
 *		  all of it (@imr; odp_implicit.c)
 */
enum sroce_mr_type {
	SROCE_MR_DMA,
	SROCE_MR_USER,
	SROCE_MR_FAST,
	SROCE_MR_ODP,
};

/**
 * struct sroce_mr - a memory region
 * @ibmr: the RDMA core's MR. Its lkey and rkey belong to the consumer, who
 *	  may change their low byte for its next fast registration
 *	  (ib_update_fast_reg_key()) before that REG_MR is executed
 * @key: the key the MR answers to (lkey and rkey are the same key): set at
 *	 allocation and by each REG_MR when it is executed, under the
 *	 device's key-table lock
 * @type: what describes the memory
 * @access: IB_ACCESS_* rights
 * @umem: pinned user memory (SROCE_MR_USER)
 * @upages: the pages of @umem, in order (SROCE_MR_USER)
 * @pages: page addresses that ib_map_mr_sg() sets for the consumer's next
 *	   registration (SROCE_MR_FAST); never read by the data path
 * @npages: entries of @pages in use
 * @max_pages: entries of @pages, and of @reg_pages
 * @reg_pages: the registered translation's pages, copied from @pages by
 *	       the REG_MR that made it current (SROCE_MR_FAST)
 * @reg_npages: entries of @reg_pages in use
 * @reg_iova: the registered address (ibmr.iova when REG_MR ran)
 * @reg_length: the registered length
 * @reg_page_size: the size of each @reg_pages entry's page
 * @valid: a fast-registration MR is registered (SROCE_MR_FAST); set with
 *	   release after the @reg_* fields, read with acquire
 * @reg_gen: counts the registrations of a fast-registration MR: each REG_MR
 *	     adds one under @reg_lock and the key-table lock. An access reads
 *	     it with its check and copies only while it is unchanged (mem.c)
 * @odp: the RDMA core's on-demand paging umem (SROCE_MR_ODP)
 * @odp_map: one entry per page of @odp from its first page: the page's
 *	     struct page pointer, with SROCE_ODP_WRITABLE when it is mapped
 *	     for writing, or 0 when it is not mapped; written under
 *	     @reg_lock (with @odp's umem_mutex held), read by the data path
 *	     under @reg_lock (SROCE_MR_ODP; odp.c)
 * @imr: the children of an implicit ODP MR, which has no @odp_map
 *	 (SROCE_MR_ODP; odp_implicit.c)
 * @reg_lock: held by the data path while it copies to or from a
 *	      fast-registration or on-demand paged MR's memory, by REG_MR
 *	      and invalidation (under the key-table lock) while they change
 *	      @valid and the @reg_* fields, and by the ODP fault and
 *	      invalidation paths while they change @odp_map: an
 *	      invalidation waits for a copy under way, and no copy touches
 *	      a translation or a page once invalidated (mem.c, odp.c)
 * @lock: makes the bound-window check of deregistration and a bind
 *	  exclusive
 * @dying: deregistration, or a rereg that registers anew, has begun: no
 *	   window may be bound
 * @num_mw: windows bound to the MR
 * @ref: references: one while the MR is registered, one per data-path
 *       user (mem.c)
 * @released: completed when @ref drops to zero
 */
struct sroce_mr {
	struct ib_mr ibmr;
	u32 key;
	enum sroce_mr_type type;
	int access;
	struct ib_umem *umem;
	struct page **upages;
	u64 *pages;
	u32 npages;
	u32 max_pages;
	u64 *reg_pages;
	u32 reg_npages;
	u64 reg_iova;
	u64 reg_length;
	u32 reg_page_size;
	bool valid;
	u32 reg_gen;
	struct ib_umem_odp *odp;
	unsigned long *odp_map;
	struct sroce_odp_imr *imr;
	spinlock_t reg_lock;		/* see above */
	spinlock_t lock;		/* see above */
	bool dying;
	atomic_t num_mw;
	refcount_t ref;
	struct completion released;
};

/**
 * sroce_mr_put() - drop a reference from sroce_key_get_mr(), or another
 * @mr: the MR
 *
 * Inline, so that the files below mr.c (odp.c) can drop the references
 * they hold.
 */
static inline void sroce_mr_put(struct sroce_mr *mr)
{
	if (refcount_dec_and_test(&mr->ref))
		complete(&mr->released);
}

int sroce_mr_check(struct sroce_mr *mr, struct ib_pd *pd, u64 iova, u64 len,
		   int access);

struct ib_mr *sroce_mr_get_dma(struct ib_pd *ibpd, int access);
struct ib_mr *sroce_mr_reg_user(struct ib_pd *ibpd, u64 start, u64 length,
				u64 iova, int access, SROCE_REG_USER_MR_DMAH
				struct ib_udata *udata);
struct ib_mr *sroce_mr_rereg_user(struct ib_mr *ibmr, int flags, u64 start,
				  u64 length, u64 iova, int access,
				  struct ib_pd *ibpd, struct ib_udata *udata);
struct ib_mr *sroce_mr_alloc(struct ib_pd *ibpd, enum ib_mr_type type,
			     u32 max_num_sg);
int sroce_mr_map_sg(struct ib_mr *ibmr, struct scatterlist *sg, int sg_nents,
		    unsigned int *sg_offset);
int sroce_mr_dereg(struct ib_mr *ibmr, struct ib_udata *udata);
bool sroce_mr_bind_get(struct sroce_mr *mr);
void sroce_mr_bind_put(struct sroce_mr *mr);
enum ib_wc_status sroce_mr_fast_reg(struct sroce_qp *qp, u32 index_key,
				    u32 new_key, int access);

#endif /* SROCE_MR_H */
