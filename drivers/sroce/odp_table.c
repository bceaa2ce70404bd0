// SPDX-License-Identifier: GPL-2.0 OR Linux-OpenIB
/*
 * DOC: ODP page tables
 *
 * The table of an on-demand paged umem, the data path's view of it: one
 * entry per page from the umem's first, the page's struct page with
 * SROCE_ODP_WRITABLE when it is mapped for writing, or 0 when it is not
 * mapped. An explicit ODP MR has one (odp.c), each child of an implicit
 * one has its own (odp_implicit.c). A table is written under the MR's
 * reg_lock with the umem's umem_mutex held (a fault's fill, an
 * invalidation's clearing), and read by the data path under reg_lock.
 */
#include <linux/hmm.h>
#include <linux/highmem.h>
#include <linux/mm.h>
#include <rdma/ib_umem_odp.h>

#include "compat.h"
#include "odp.h"
#include "odp_table.h"

/* The index in @odp's table of its page at @va. */
static size_t odp_index(struct ib_umem_odp *odp, unsigned long va)
{
	return (va - ib_umem_start(odp)) >> PAGE_SHIFT;
}

/*
 * Copy the core's view of [va, end) into @map, @odp's table, under @lock.
 * Called with umem_mutex held after ib_umem_odp_map_dma_and_lock()
 * succeeded: the pfn list is then current for the range (no invalidation
 * can run).
 */
static void odp_fill(struct ib_umem_odp *odp, unsigned long *map,
		     spinlock_t *lock, unsigned long va, unsigned long end)
{
	unsigned long *pfns = sroce_odp_pfns(odp);
	size_t i, first, last;
	unsigned long e;

	lockdep_assert_held(&odp->umem_mutex);
	first = odp_index(odp, ALIGN_DOWN(va, PAGE_SIZE));
	last = odp_index(odp, ALIGN(end, PAGE_SIZE));
	spin_lock_bh(lock);
	for (i = first; i < last; i++) {
		e = 0;
		if (pfns[i] & HMM_PFN_VALID) {
			e = (unsigned long)hmm_pfn_to_page(pfns[i]);
			/* Writable as the core has it: it dirties on unmap. */
			if (sroce_odp_writable(odp, i))
				e |= SROCE_ODP_WRITABLE;
		}
		map[i] = e;
	}
	spin_unlock_bh(lock);
}

/**
 * sroce_odp_table_fault() - map a range of an ODP umem into its table
 * @odp: the umem
 * @map: its table, one entry per page
 * @lock: the MR's reg_lock, which guards @map
 * @va: first process address
 * @end: one past the last (both clipped to @odp)
 * @write: map for writing
 * @fault: fault in what is missing; false: map only what is present
 *
 * Context: process; sleeps.
 * Return: 0, -EFAULT (nothing of the range is in @odp, or the process has
 * not mapped it), -EACCES (a write to a read-only umem), or what the RDMA
 * core returned.
 */
int sroce_odp_table_fault(struct ib_umem_odp *odp, unsigned long *map,
			  spinlock_t *lock, unsigned long va,
			  unsigned long end, bool write, bool fault)
{
	int ret;

	va = max(va, ib_umem_start(odp));
	end = min(end, ib_umem_end(odp));
	if (va >= end)
		return -EFAULT;
	if (write && !odp->umem.writable)
		return -EACCES;
	/*
	 * A writable MR's pages are faulted in for writing even for a read,
	 * as the hardware drivers do: a read fault would record a page the
	 * core had marked writable (and so dirties on unmap) as read-only,
	 * losing a write made before, and the next write would fault again.
	 */
	write |= fault && odp->umem.writable;
	ret = ib_umem_odp_map_dma_and_lock(odp, va, end - va,
					   write ? SROCE_ODP_ACCESS_WRITE :
						   SROCE_ODP_ACCESS_READ, fault);
	if (ret < 0)
		return ret;
	odp_fill(odp, map, lock, va, end);
	mutex_unlock(&odp->umem_mutex);
	return 0;
}

/**
 * sroce_odp_table_clear() - pages of an ODP umem are going away
 * @odp: the umem; its umem_mutex is held
 * @map: its table
 * @lock: the MR's reg_lock, which guards @map
 * @range: what the MMU notifier invalidates
 *
 * Clears the range's entries under @lock, which a copy holds, then lets
 * the core unmap the pages: once this returns, no packet reads or writes
 * a page of the range.
 */
void sroce_odp_table_clear(struct ib_umem_odp *odp, unsigned long *map,
			   spinlock_t *lock,
			   const struct mmu_notifier_range *range)
{
	unsigned long start, end;
	size_t first, last;

	lockdep_assert_held(&odp->umem_mutex);
	start = max(range->start, ib_umem_start(odp));
	end = min(range->end, ib_umem_end(odp));
	if (start >= end)
		return;
	first = odp_index(odp, start);
	last = odp_index(odp, ALIGN(end, PAGE_SIZE));
	spin_lock_bh(lock);
	memset(&map[first], 0, (last - first) * sizeof(*map));
	spin_unlock_bh(lock);
	ib_umem_odp_unmap_dma_pages(odp, start, end);
}

/**
 * sroce_odp_table_page() - the address of a byte of an ODP umem
 * @odp: the umem
 * @map: its table; the MR's reg_lock is held
 * @va: the byte's process address, in @odp
 * @write: it is to be written
 *
 * Return: the address, mapped with kmap_local_page(), or NULL when the
 * table says the page is not mapped (or not for writing).
 */
void *sroce_odp_table_page(struct ib_umem_odp *odp, unsigned long *map,
			   unsigned long va, bool write)
{
	unsigned long e = map[odp_index(odp, va)];

	if (!e || (write && !(e & SROCE_ODP_WRITABLE)))
		return NULL;
	return kmap_local_page((struct page *)(e & ~SROCE_ODP_WRITABLE)) +
	       (va & ~PAGE_MASK);
}
