// SPDX-License-Identifier: GPL-2.0 OR Linux-OpenIB
/*
 * DOC: Implicit on-demand paging
 *
 * An MR registered with IB_ACCESS_ON_DEMAND at address 0 and length
 * U64_MAX (ibv_reg_mr(pd, NULL, SIZE_MAX, ...)) covers the process's whole
 * address space, at iova equal to the address. It holds the RDMA core's
 * implicit umem (ib_umem_odp_alloc_implicit()), which maps nothing, and
 * children: one per SROCE_ODP_CHILD_SIZE of address space that has been
 * touched, each an ODP umem of its own (ib_umem_odp_alloc_child()), with
 * its MMU interval notifier and a table as an explicit ODP MR's (odp.c).
 *
 * - The data path finds a child by its index (address >> the child
 *   shift) in an xarray, under the MR's reg_lock: a missing child is a
 *   missing page, and the access faults as for an explicit MR.
 * - A fault or prefetch creates the children of its range, under the
 *   MR's mutex @lock, and maps them. A child that comes out of its first
 *   mapping with nothing mapped (the process has no memory there) is
 *   freed at once, so a peer that names addresses the process never
 *   mapped leaves nothing behind.
 * - When the process unmaps memory (MMU_NOTIFY_UNMAP) and a child's table
 *   is left empty, the notifier marks it; a work item (on the system's
 *   unbound workqueue) frees the marked children that are still empty.
 *   Other invalidations only clear.
 * - A child is removed from the xarray under reg_lock, so no copy holds
 *   it once it is removed; it is then released outside the lock.
 *
 * Lock order: @lock, then mmap_lock (the core's fault), then umem_mutex,
 * then reg_lock, then the xarray's lock, which is taken with bottom halves
 * off everywhere (a softirq spinning on reg_lock must not interrupt its
 * holder). A notifier takes only umem_mutex, reg_lock and the xarray's.
 */
#include <linux/mm.h>
#include <linux/mmu_notifier.h>
#include <linux/overflow.h>
#include <linux/sched/mm.h>
#include <linux/slab.h>
#include <linux/xarray.h>
#include <rdma/ib_umem_odp.h>

#include "device.h"
#include "mr.h"
#include "odp.h"
#include "odp_table.h"
#include "params.h"
#include "stats.h"

/* The xarray mark of a child whose table an unmap left empty. */
#define SROCE_ODP_CHILD_EMPTY	XA_MARK_1

/**
 * struct sroce_odp_imr - an implicit ODP MR's children
 * @root: the RDMA core's implicit umem
 * @mm: the process's address space, held (mmgrab()) for the children
 * @limit: one past the highest address of @mm
 * @lock: serializes the creation, mapping and freeing of children
 * @children: the children by index: inserted under @lock, erased under
 *	      @lock and the MR's reg_lock (the data path reads it under
 *	      reg_lock, so no copy holds a child once it is erased)
 * @reap: frees the children marked SROCE_ODP_CHILD_EMPTY
 * @mr: the MR
 */
struct sroce_odp_imr {
	struct ib_umem_odp *root;
	struct mm_struct *mm;
	unsigned long limit;
	struct mutex lock;		/* see above */
	struct xarray children;
	struct work_struct reap;
	struct sroce_mr *mr;
};

/**
 * struct sroce_odp_child - SROCE_ODP_CHILD_SIZE of an implicit ODP MR
 * @odp: its ODP umem, of the child's range
 * @imr: the MR's children
 * @index: its index in @imr's xarray
 * @map: one entry per page, as an explicit ODP MR's odp_map (odp.c)
 */
struct sroce_odp_child {
	struct ib_umem_odp *odp;
	struct sroce_odp_imr *imr;
	unsigned long index;
	unsigned long map[SROCE_ODP_CHILD_PAGES];
};

/* Whether nothing of @child is mapped; a notifier may be clearing it. */
static bool child_empty(struct sroce_odp_child *child)
{
	spinlock_t *lock = &child->imr->mr->reg_lock;
	bool empty;

	spin_lock_bh(lock);
	empty = !memchr_inv(child->map, 0, sizeof(child->map));
	spin_unlock_bh(lock);
	return empty;
}

/*
 * A child's MMU interval notifier: clear as for an explicit MR; an unmap
 * that leaves the table empty marks the child to be freed.
 */
static bool child_invalidate(struct mmu_interval_notifier *mni,
			     const struct mmu_notifier_range *range,
			     unsigned long cur_seq)
{
	struct ib_umem_odp *odp = container_of(mni, struct ib_umem_odp,
					       notifier);
	struct sroce_odp_child *child;
	struct sroce_odp_imr *imr;

	if (!mmu_notifier_range_blockable(range))
		return false;
	mutex_lock(&odp->umem_mutex);
	mmu_interval_set_seq(mni, cur_seq);
	/* Before child_new() set private, the table holds nothing. */
	child = odp->private;
	if (child) {
		imr = child->imr;
		sroce_odp_table_clear(odp, child->map, &imr->mr->reg_lock, range);
		if (range->event == MMU_NOTIFY_UNMAP && child_empty(child)) {
			xa_lock_bh(&imr->children);
			__xa_set_mark(&imr->children, child->index,
				      SROCE_ODP_CHILD_EMPTY);
			xa_unlock_bh(&imr->children);
			queue_work(system_unbound_wq, &imr->reap);
		}
	}
	mutex_unlock(&odp->umem_mutex);
	return true;
}

static const struct mmu_interval_notifier_ops sroce_odp_child_ops = {
	.invalidate = child_invalidate,
};

/* Remove @child from the data path's view, then free it. */
static void child_free(struct sroce_odp_imr *imr,
		       struct sroce_odp_child *child)
{
	struct sroce_dev *sdev = to_sdev(imr->mr->ibmr.device);

	lockdep_assert_held(&imr->lock);
	spin_lock_bh(&imr->mr->reg_lock);
	xa_erase(&imr->children, child->index);
	spin_unlock_bh(&imr->mr->reg_lock);
	/* Removes the notifier, waiting for one running. */
	ib_umem_odp_release(child->odp);
	kvfree(child);
	sroce_stats_add(&sdev->stats, SROCE_STAT_ODP_CHILDREN_FREED, 1);
}

/* Create the child of index @index and publish it, its table empty. */
static struct sroce_odp_child *child_new(struct sroce_odp_imr *imr,
					 unsigned long index)
{
	struct sroce_dev *sdev = to_sdev(imr->mr->ibmr.device);
	struct sroce_odp_child *child;
	struct ib_umem_odp *odp;
	int err;

	lockdep_assert_held(&imr->lock);
	child = kvzalloc(sizeof(*child), SROCE_GFP_USER_OBJ);
	if (!child)
		return ERR_PTR(-ENOMEM);
	child->imr = imr;
	child->index = index;
	odp = ib_umem_odp_alloc_child(imr->root,
				      index << SROCE_ODP_CHILD_SHIFT,
				      SROCE_ODP_CHILD_SIZE,
				      &sroce_odp_child_ops);
	if (IS_ERR(odp)) {
		err = PTR_ERR(odp);
		goto err_free;
	}
	child->odp = odp;
	mutex_lock(&odp->umem_mutex);
	odp->private = child;
	mutex_unlock(&odp->umem_mutex);
	/* Under @lock nobody else inserts: only memory can fail. */
	err = xa_insert_bh(&imr->children, index, child, GFP_KERNEL);
	if (err)
		goto err_odp;
	sroce_stats_add(&sdev->stats, SROCE_STAT_ODP_CHILDREN, 1);
	return child;

err_odp:
	ib_umem_odp_release(odp);
err_free:
	kvfree(child);
	return ERR_PTR(err);
}

/* Map [va, end), all in the child of index @index, creating the child. */
static int child_map(struct sroce_odp_imr *imr, unsigned long index,
		     unsigned long va, unsigned long end, bool write,
		     bool fault)
{
	struct sroce_odp_child *child;
	bool fresh = false;
	int err;

	lockdep_assert_held(&imr->lock);
	child = xa_load(&imr->children, index);
	if (!child) {
		child = child_new(imr, index);
		if (IS_ERR(child))
			return PTR_ERR(child);
		fresh = true;
	}
	err = sroce_odp_table_fault(child->odp, child->map,
				    &imr->mr->reg_lock, va, end, write, fault);
	/* Faults fill only under @lock: the check holds until it is freed. */
	if (fresh && (err || child_empty(child)))
		child_free(imr, child);
	return err;
}

/**
 * sroce_odp_imr_fault() - map a range of an implicit ODP MR
 * @mr: the MR, referenced
 * @iova: first byte, the process address
 * @len: bytes
 * @write: map for writing
 * @fault: fault in what is missing; false: map only what is present
 *
 * Context: process; sleeps.
 * Return: 0; -EFAULT when the range is past the address space or not
 * mapped in the process; -EACCES for a write to a read-only MR; -ENOMEM;
 * or what the RDMA core returned.
 */
int sroce_odp_imr_fault(struct sroce_mr *mr, u64 iova, u64 len, bool write,
			bool fault)
{
	struct sroce_odp_imr *imr = mr->imr;
	unsigned long va = iova, next;
	u64 end;
	int err = 0;

	if (check_add_overflow(iova, len, &end) || end > imr->limit)
		return -EFAULT;
	if (write && !imr->root->umem.writable)
		return -EACCES;
	mutex_lock(&imr->lock);
	while (va < end && !err) {
		next = min_t(u64, end, ALIGN_DOWN(va, SROCE_ODP_CHILD_SIZE) +
				       SROCE_ODP_CHILD_SIZE);
		err = child_map(imr, va >> SROCE_ODP_CHILD_SHIFT, va, next,
				write, fault);
		va = next;
	}
	mutex_unlock(&imr->lock);
	return err;
}

/**
 * sroce_odp_imr_map() - the address of an implicit ODP MR's byte
 * @mr: the MR; its reg_lock is held
 * @iova: the byte, its process address
 * @len: bytes wanted from @iova
 * @write: they are to be written
 * @chunk: set to the bytes of [iova, iova + len) in @iova's page
 *
 * Return: the address, mapped with kmap_local_page(), or NULL when its
 * child does not exist or its page is not mapped (or not for writing).
 */
void *sroce_odp_imr_map(struct sroce_mr *mr, u64 iova, u32 len, bool write,
			u32 *chunk)
{
	struct sroce_odp_child *child;
	unsigned long va = iova;

	lockdep_assert_held(&mr->reg_lock);
	*chunk = min_t(u64, len, PAGE_SIZE - (va & ~PAGE_MASK));
	child = xa_load(&mr->imr->children, va >> SROCE_ODP_CHILD_SHIFT);
	if (!child)
		return NULL;
	return sroce_odp_table_page(child->odp, child->map, va, write);
}

/* Free the children that an unmap left empty, if they still are. */
static void imr_reap(struct work_struct *work)
{
	struct sroce_odp_imr *imr = container_of(work, struct sroce_odp_imr,
						 reap);
	struct sroce_odp_child *child;
	unsigned long index;

	mutex_lock(&imr->lock);
	xa_for_each_marked(&imr->children, index, child,
			   SROCE_ODP_CHILD_EMPTY) {
		xa_lock_bh(&imr->children);
		__xa_clear_mark(&imr->children, index, SROCE_ODP_CHILD_EMPTY);
		xa_unlock_bh(&imr->children);
		if (child_empty(child))
			child_free(imr, child);
	}
	mutex_unlock(&imr->lock);
}

/**
 * sroce_odp_imr_reg() - set up a new implicit ODP MR
 * @mr: the MR, not yet published; its iova is 0, its length U64_MAX
 * @access: the MR's rights (IB_ACCESS_ON_DEMAND among them)
 *
 * Maps nothing: children are created as the MR is touched.
 *
 * Context: process, as the process that registers.
 * Return: 0, -ENOMEM, or what the RDMA core returned.
 */
int sroce_odp_imr_reg(struct sroce_mr *mr, int access)
{
	struct sroce_odp_imr *imr;
	int err;

	imr = kzalloc(sizeof(*imr), SROCE_GFP_USER_OBJ);
	if (!imr)
		return -ENOMEM;
	imr->root = ib_umem_odp_alloc_implicit(mr->ibmr.device,
					       access & ~IB_ACCESS_HUGETLB);
	if (IS_ERR(imr->root)) {
		err = PTR_ERR(imr->root);
		goto err_free;
	}
	/* The root holds no reference of its own on the address space. */
	imr->mm = imr->root->umem.owning_mm;
	mmgrab(imr->mm);
	imr->limit = imr->mm->task_size;
	mutex_init(&imr->lock);
	/*
	 * The xarray's lock is taken under reg_lock, which the data path
	 * takes in softirq: it is never held with bottom halves enabled.
	 */
	xa_init_flags(&imr->children, XA_FLAGS_LOCK_BH);
	INIT_WORK(&imr->reap, imr_reap);
	imr->mr = mr;
	mr->imr = imr;
	return 0;

err_free:
	kfree(imr);
	return err;
}

/**
 * sroce_odp_imr_release() - free what sroce_odp_imr_reg() set up
 * @mr: the MR; no access and no fault uses it any more
 */
void sroce_odp_imr_release(struct sroce_mr *mr)
{
	struct sroce_odp_imr *imr = mr->imr;
	struct sroce_odp_child *child;
	unsigned long index;

	mutex_lock(&imr->lock);
	xa_for_each(&imr->children, index, child)
		child_free(imr, child);
	mutex_unlock(&imr->lock);
	/* No notifier is left to queue it again. */
	cancel_work_sync(&imr->reap);
	xa_destroy(&imr->children);
	ib_umem_odp_release(imr->root);
	mmdrop(imr->mm);
	mutex_destroy(&imr->lock);
	kfree(imr);
	mr->imr = NULL;
}
