// SPDX-License-Identifier: GPL-2.0 OR Linux-OpenIB
/*
 * DOC: On-demand paging
 *
 * An MR registered with IB_ACCESS_ON_DEMAND pins nothing. It holds the RDMA
 * core's ODP umem (ib_umem_odp_get()), whose MMU interval notifier tells
 * when the process's pages of the range go away, and a table of its own,
 * @odp_map, one entry per page: the struct page and whether it may be
 * written, or 0 when the page is not mapped. The data path reads only that
 * table, under the MR's reg_lock, and copies under the same lock (mem.c).
 *
 * - Invalidation (odp_invalidate(), process context, umem_mutex held)
 *   clears the range's entries under reg_lock before the core unmaps the
 *   range: once it returns, no packet reads or writes a page of it.
 * - A fault maps the range in process context: the engines run in
 *   softirq, and hmm_range_fault() sleeps. An access that finds an entry
 *   0 (or read-only, for a write) stops and queues a fault on the
 *   device's ODP workqueue, one per engine at a time (struct
 *   sroce_odp_fault). The worker calls ib_umem_odp_map_dma_and_lock(),
 *   which retries against racing invalidations and returns with
 *   umem_mutex held; the table is filled from the core's pfn list under
 *   that mutex, where the list is known current; then the engine is
 *   scheduled again. What the engine does meanwhile is the transport's
 *   (Documentation/datapath.md, "On-demand paging"): an RC responder
 *   answers an RNR NAK, UC and UD drop the message, a requester parks its
 *   WQE, a completer drops the response and resends.
 * - A fault that fails (the range is not mapped in the process, or not
 *   writable for a write) is remembered: the next access to that range
 *   fails as a bad range does, and the engine does not fault forever. A
 *   fault ahead that fails is tried again for the access's first page
 *   alone; a transient error (the core's retries against invalidations
 *   timed out, no memory) is not remembered: the access is tried again.
 * - Registration maps what is present without faulting (a snapshot), as
 *   ibv_advise_mr's PREFETCH_NO_FAULT does; PREFETCH and PREFETCH_WRITE
 *   fault the range in, now (IB_UVERBS_ADVISE_MR_FLAG_FLUSH) or from the
 *   workqueue (advise.c).
 *
 * The huge-page hint is not passed to the core: the table has one entry
 * per base page whatever backs it, so hugetlbfs and THP memory need
 * nothing of their own.
 *
 * An implicit ODP MR, registered at address 0 for the whole address space
 * (length U64_MAX), has no umem of its own range: it is made of children
 * of a fixed size, each an ODP umem and a table as above, created as
 * they are touched and freed when the process unmaps them
 * (odp_implicit.c). The fault and access paths here hand it over.
 */
#include <linux/mm.h>
#include <linux/slab.h>
#include <rdma/ib_umem_odp.h>
#include <rdma/ib_user_verbs.h>

#include "device.h"
#include "mr.h"
#include "odp.h"
#include "odp_table.h"
#include "params.h"
#include "stats.h"
#include "task.h"

static struct workqueue_struct *sroce_odp_wq;

/**
 * sroce_odp_supported() - can this kernel give on-demand paging?
 *
 * Return: whether the RDMA core was built with it.
 */
bool sroce_odp_supported(void)
{
	return IS_ENABLED(CONFIG_INFINIBAND_ON_DEMAND_PAGING);
}

/* The process address of @iova of an explicit ODP MR. */
static unsigned long odp_va(const struct sroce_mr *mr, u64 iova)
{
	return iova - mr->ibmr.iova + mr->odp->umem.address;
}

/*
 * The MMU interval notifier of an explicit ODP MR. umem_mutex orders it
 * with a fault's fill.
 */
static bool odp_invalidate(struct mmu_interval_notifier *mni,
			   const struct mmu_notifier_range *range,
			   unsigned long cur_seq)
{
	struct ib_umem_odp *odp = container_of(mni, struct ib_umem_odp,
					       notifier);
	struct sroce_mr *mr;

	if (!mmu_notifier_range_blockable(range))
		return false;
	mutex_lock(&odp->umem_mutex);
	mmu_interval_set_seq(mni, cur_seq);
	mr = odp->private;
	/* Before sroce_odp_reg() set private, the table holds nothing. */
	if (mr)
		sroce_odp_table_clear(odp, mr->odp_map, &mr->reg_lock, range);
	mutex_unlock(&odp->umem_mutex);
	return true;
}

static const struct mmu_interval_notifier_ops sroce_odp_ops = {
	.invalidate = odp_invalidate,
};

/**
 * sroce_odp_reg() - set up the on-demand paging of a new user MR
 * @mr: the MR, not yet published
 * @start: the process address of the range
 * @length: its bytes
 * @access: the MR's rights (IB_ACCESS_ON_DEMAND among them)
 *
 * Maps what is present of the range, faulting nothing in.
 *
 * Context: process, as the process that registers.
 * Return: 0, -ENOMEM, or what the RDMA core returned.
 */
int sroce_odp_reg(struct sroce_mr *mr, u64 start, u64 length, int access)
{
	struct ib_umem_odp *odp;
	size_t n;
	int err;

	n = (PAGE_ALIGN(start + length) - ALIGN_DOWN(start, PAGE_SIZE)) >>
	    PAGE_SHIFT;
	mr->odp_map = kvcalloc(n, sizeof(*mr->odp_map), SROCE_GFP_USER_OBJ);
	if (!mr->odp_map)
		return -ENOMEM;
	odp = ib_umem_odp_get(mr->ibmr.device, start, length,
			      access & ~IB_ACCESS_HUGETLB, &sroce_odp_ops);
	if (IS_ERR(odp)) {
		err = PTR_ERR(odp);
		goto err_map;
	}
	if (WARN_ON_ONCE(ib_umem_odp_num_pages(odp) != n)) {
		err = -EINVAL;
		goto err_odp;
	}
	mr->odp = odp;
	mr->umem = &odp->umem;
	mutex_lock(&odp->umem_mutex);
	odp->private = mr;
	mutex_unlock(&odp->umem_mutex);
	/* A snapshot is best effort: what is missing faults later. */
	sroce_odp_table_fault(odp, mr->odp_map, &mr->reg_lock, start,
			      start + length, false, false);
	return 0;

err_odp:
	ib_umem_odp_release(odp);
err_map:
	kvfree(mr->odp_map);
	mr->odp_map = NULL;
	return err;
}

/**
 * sroce_odp_release() - free what sroce_odp_reg() set up
 * @mr: the MR; no access and no fault uses it any more
 *
 * Releasing the umem removes the notifier, waiting for one running.
 */
void sroce_odp_release(struct sroce_mr *mr)
{
	if (mr->imr) {
		sroce_odp_imr_release(mr);
		return;
	}
	if (mr->odp)
		ib_umem_odp_release(mr->odp);
	mr->odp = NULL;
	mr->umem = NULL;
	kvfree(mr->odp_map);
	mr->odp_map = NULL;
}

/**
 * sroce_odp_map() - the address of an ODP MR's byte, if its page is mapped
 * @mr: the MR; its reg_lock is held
 * @iova: the byte; the range was checked against the MR
 * @len: bytes wanted from @iova
 * @write: they are to be written
 * @chunk: set to the bytes of [iova, iova + len) in @iova's page
 *
 * Return: the address, mapped with kmap_local_page(), or NULL when the
 * page is not mapped (or not for writing): a fault is needed.
 */
void *sroce_odp_map(struct sroce_mr *mr, u64 iova, u32 len, bool write,
		    u32 *chunk)
{
	unsigned long va;

	lockdep_assert_held(&mr->reg_lock);
	if (mr->imr)
		return sroce_odp_imr_map(mr, iova, len, write, chunk);
	va = odp_va(mr, iova);
	*chunk = min_t(u64, len, PAGE_SIZE - (va & ~PAGE_MASK));
	return sroce_odp_table_page(mr->odp, mr->odp_map, va, write);
}

/* Map a range of an ODP MR in process context. */
static int odp_fault(struct sroce_mr *mr, u64 iova, u64 len, bool write,
		     bool fault)
{
	unsigned long va;

	if (mr->imr)
		return sroce_odp_imr_fault(mr, iova, len, write, fault);
	va = odp_va(mr, iova);
	return sroce_odp_table_fault(mr->odp, mr->odp_map, &mr->reg_lock, va,
				   va + len, write, fault);
}

/*
 * Errors that say nothing of the range: the core gave up retrying against
 * invalidations, or memory ran short. The access is tried again.
 */
static bool odp_transient(int err)
{
	return err == -EBUSY || err == -ENOMEM || err == -EAGAIN;
}

static void odp_fault_work(struct work_struct *work)
{
	struct sroce_odp_fault *f = container_of(work, struct sroce_odp_fault,
						 work);
	struct sroce_mr *mr = f->mr;
	u32 first = PAGE_SIZE - (f->iova & ~PAGE_MASK);
	int err;

	err = odp_fault(mr, f->iova, f->len, f->write, true);
	/*
	 * What was faulted ahead may end in memory the process has not
	 * mapped: the access itself needs only its first page now.
	 */
	if (err && !odp_transient(err) && f->len > first)
		err = odp_fault(mr, f->iova, first, f->write, true);
	spin_lock_bh(&f->lock);
	f->failed = err && !odp_transient(err);
	if (f->failed) {
		f->failed_key = mr->key;
		f->failed_iova = f->iova;
		f->failed_end = f->iova + f->len;
	}
	f->mr = NULL;
	f->busy = false;
	spin_unlock_bh(&f->lock);
	sroce_mr_put(mr);
	sroce_task_sched(f->task);
}

/**
 * sroce_odp_fault_init() - set up an engine's fault
 * @f: the fault
 * @sdev: the device
 * @task: the engine to schedule when a fault ends
 */
void sroce_odp_fault_init(struct sroce_odp_fault *f, struct sroce_dev *sdev,
			  struct sroce_task *task)
{
	INIT_WORK(&f->work, odp_fault_work);
	spin_lock_init(&f->lock);
	f->sdev = sdev;
	f->task = task;
}

/**
 * sroce_odp_fault_queue() - an access found a page of an ODP MR missing
 * @f: the engine's fault
 * @mr: the MR, referenced by the caller
 * @iova: the first byte missing
 * @len: bytes of the access from @iova (at most SROCE_ODP_FAULT_MAX are
 *	 mapped)
 * @write: the access writes
 *
 * Queues a fault, unless one of the engine's is queued or running: its
 * end schedules the engine, which tries the access again.
 *
 * Context: any; bottom halves may be enabled or not.
 * Return: 0, the engine is to wait; or -EACCES when the engine's last
 * fault, of this range of this MR, failed: the access fails.
 */
int sroce_odp_fault_queue(struct sroce_odp_fault *f, struct sroce_mr *mr,
			  u64 iova, u64 len, bool write)
{
	unsigned long flags;
	int err = 0;

	spin_lock_irqsave(&f->lock, flags);
	if (f->failed && f->failed_key == mr->key && iova >= f->failed_iova &&
	    iova < f->failed_end) {
		f->failed = false;
		err = -EACCES;
	} else if (!f->busy) {
		f->busy = true;
		refcount_inc(&mr->ref);
		f->mr = mr;
		f->iova = iova;
		f->len = min_t(u64, len, SROCE_ODP_FAULT_MAX);
		f->write = write;
		sroce_stats_add(&f->sdev->stats, SROCE_STAT_ODP_FAULTS, 1);
		queue_work(sroce_odp_wq, &f->work);
	}
	spin_unlock_irqrestore(&f->lock, flags);
	return err;
}

/**
 * sroce_odp_fault_busy() - is a fault of the engine's queued or running?
 * @f: the fault
 *
 * Return: true while it is.
 */
bool sroce_odp_fault_busy(struct sroce_odp_fault *f)
{
	return READ_ONCE(f->busy);
}

/**
 * sroce_odp_fault_cancel() - wait for an engine's fault, or cancel it
 * @f: the fault
 *
 * Afterwards no fault of the engine is queued or running, and none
 * schedules the engine, until the next sroce_odp_fault_queue().
 *
 * Context: process.
 */
void sroce_odp_fault_cancel(struct sroce_odp_fault *f)
{
	struct sroce_mr *mr = NULL;

	if (!f->task)
		return;
	if (cancel_work_sync(&f->work)) {
		/* It never ran: undo what queueing it took. */
		spin_lock_bh(&f->lock);
		mr = f->mr;
		f->mr = NULL;
		f->busy = false;
		spin_unlock_bh(&f->lock);
	}
	spin_lock_bh(&f->lock);
	f->failed = false;
	spin_unlock_bh(&f->lock);
	if (mr)
		sroce_mr_put(mr);
}

/**
 * sroce_odp_prefetch() - map a range of an ODP MR now (ibv_advise_mr)
 * @mr: the MR, referenced
 * @iova: first byte
 * @len: bytes
 * @write: map for writing
 * @fault: fault in what is missing; false: map only what is present
 *
 * Context: process.
 * Return: 0, or the error of the fault (-EFAULT: not mapped in the
 * process; -EACCES: a write to an MR that cannot be written).
 */
int sroce_odp_prefetch(struct sroce_mr *mr, u64 iova, u64 len, bool write,
		       bool fault)
{
	return odp_fault(mr, iova, len, write, fault);
}

/**
 * sroce_odp_queue() - run work on the ODP workqueue
 * @work: the work (an asynchronous prefetch, advise.c)
 */
void sroce_odp_queue(struct work_struct *work)
{
	queue_work(sroce_odp_wq, work);
}

/**
 * sroce_odp_module_init() - create the ODP workqueue
 *
 * Return: 0 or -ENOMEM.
 */
int sroce_odp_module_init(void)
{
	sroce_odp_wq = alloc_workqueue("sroce_odp", WQ_UNBOUND, 0);
	return sroce_odp_wq ? 0 : -ENOMEM;
}

/**
 * sroce_odp_module_exit() - destroy the ODP workqueue
 *
 * Every device is gone: no fault or prefetch is queued any more.
 */
void sroce_odp_module_exit(void)
{
	destroy_workqueue(sroce_odp_wq);
}
