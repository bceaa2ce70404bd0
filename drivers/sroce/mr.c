// SPDX-License-Identifier: GPL-2.0 OR Linux-OpenIB
/*
 * DOC: Memory regions
 *
 * An MR's key is a slot of the device's key table (key.c), which MWs
 * share. An MR is published there once it is complete; the data path
 * references it for one access at a time (sroce_mr_put()) and checks each
 * access against it (sroce_mr_check(), mem.c).
 *
 * Access rights follow IBA 10.6.3.1: remote write and remote atomic
 * require local write. IB_ACCESS_FLUSH_GLOBAL lets FLUSH requests name
 * the MR (IBA 1.5, 10.6.3.1; kernels without the FLUSH rights cannot ask
 * for it). IB_ACCESS_ON_DEMAND registers user memory without pinning it
 * (odp.c). IB_ACCESS_FLUSH_PERSISTENT is not supported (-EOPNOTSUPP):
 * sroce has no persistent memory to promise.
 * Optional flags (relaxed ordering) and the huge-page hint are accepted
 * and ignored, as the RDMA core intends.
 */
#include <linux/slab.h>

#include "device.h"
#include "key.h"
#include "mr.h"
#include "odp.h"
#include "params.h"
#include "qp.h"

#define MR_ACCESS_FLAGS (IB_ACCESS_LOCAL_WRITE | IB_ACCESS_REMOTE_WRITE | \
			 IB_ACCESS_REMOTE_READ | IB_ACCESS_REMOTE_ATOMIC | \
			 IB_ACCESS_MW_BIND | IB_ACCESS_HUGETLB | \
			 IB_ACCESS_OPTIONAL | IB_ACCESS_FLUSH_GLOBAL | \
			 IB_ACCESS_ON_DEMAND)

static int check_access(int access)
{
	if ((access & (IB_ACCESS_REMOTE_WRITE | IB_ACCESS_REMOTE_ATOMIC)) &&
	    !(access & IB_ACCESS_LOCAL_WRITE))
		return -EINVAL;
	if ((access & IB_ACCESS_FLUSH_PERSISTENT) ||
	    ((access & IB_ACCESS_ON_DEMAND) && !sroce_odp_supported()))
		return -EOPNOTSUPP;
	if (access & ~MR_ACCESS_FLAGS)
		return -EINVAL;
	return 0;
}

static struct sroce_mr *mr_new(struct sroce_dev *sdev, enum sroce_mr_type type,
			       int access)
{
	struct sroce_mr *mr;
	int err;

	err = check_access(access);
	if (err)
		return ERR_PTR(err);
	err = sroce_dev_obj_get(sdev, SROCE_OBJ_MR);
	if (err)
		return ERR_PTR(err);
	mr = kzalloc(sizeof(*mr), GFP_KERNEL);
	if (!mr) {
		err = -ENOMEM;
		goto err_put;
	}
	err = sroce_key_alloc(sdev, &mr->key);
	if (err)
		goto err_free;
	mr->ibmr.lkey = mr->key;
	mr->ibmr.rkey = mr->key;
	mr->type = type;
	mr->access = access;
	refcount_set(&mr->ref, 1);
	init_completion(&mr->released);
	spin_lock_init(&mr->lock);
	spin_lock_init(&mr->reg_lock);
	return mr;

err_free:
	kfree(mr);
err_put:
	sroce_dev_obj_put(sdev, SROCE_OBJ_MR);
	return ERR_PTR(err);
}

/*
 * Unpublish the key first, then wait for the data path to let go, and
 * only then release the memory: a packet being copied holds a reference.
 */
static void mr_free(struct sroce_dev *sdev, struct sroce_mr *mr)
{
	sroce_key_free(sdev, mr->key);
	sroce_mr_put(mr);
	wait_for_completion(&mr->released);
	if (mr->type == SROCE_MR_ODP)
		sroce_odp_release(mr);
	else if (mr->umem)
		ib_umem_release(mr->umem);
	kvfree(mr->upages);
	kfree(mr->pages);
	kfree(mr->reg_pages);
	kfree(mr);
	sroce_dev_obj_put(sdev, SROCE_OBJ_MR);
}

/* Index the pinned pages, so the data path finds a page in O(1). */
static int map_umem(struct sroce_mr *mr)
{
	size_t n = ib_umem_num_pages(mr->umem), i = 0;
	struct sg_page_iter iter;

	mr->upages = kvmalloc_array(n, sizeof(*mr->upages),
				    SROCE_GFP_USER_OBJ);
	if (!mr->upages)
		return -ENOMEM;
	for_each_sgtable_page(&mr->umem->sgt_append.sgt, &iter, 0) {
		if (WARN_ON_ONCE(i == n))
			break;
		mr->upages[i++] = sg_page_iter_page(&iter);
	}
	return i == n ? 0 : -EFAULT;
}

static struct ib_mr *mr_publish(struct sroce_dev *sdev, struct sroce_mr *mr)
{
	sroce_key_publish(sdev, mr->key, mr, SROCE_KEY_MR);
	return &mr->ibmr;
}

/**
 * sroce_mr_get_dma() - ib_device_ops.get_dma_mr: all kernel memory
 * @ibpd: the PD
 * @access: access rights
 *
 * Return: the MR or an ERR_PTR.
 */
struct ib_mr *sroce_mr_get_dma(struct ib_pd *ibpd, int access)
{
	struct sroce_dev *sdev = to_sdev(ibpd->device);
	struct sroce_mr *mr;

	mr = mr_new(sdev, SROCE_MR_DMA, access);
	if (IS_ERR(mr))
		return ERR_CAST(mr);
	mr->ibmr.length = U64_MAX;
	return mr_publish(sdev, mr);
}

/*
 * Register [start, start + length) on demand (odp.c) as a new MR at @iova,
 * or with @implicit the whole address space at its own addresses
 * (odp_implicit.c).
 */
static struct ib_mr *mr_reg_odp(struct ib_pd *ibpd, u64 start, u64 length,
				u64 iova, int access, bool implicit)
{
	struct sroce_dev *sdev = to_sdev(ibpd->device);
	struct sroce_mr *mr;
	int err;

	mr = mr_new(sdev, SROCE_MR_ODP, access);
	if (IS_ERR(mr))
		return ERR_CAST(mr);
	mr->ibmr.device = ibpd->device;
	mr->ibmr.iova = iova;
	mr->ibmr.length = length;
	if (implicit)
		err = sroce_odp_imr_reg(mr, access);
	else
		err = sroce_odp_reg(mr, start, length, access);
	if (err) {
		mr_free(sdev, mr);
		return ERR_PTR(err);
	}
	sroce_stats_add(&sdev->stats, SROCE_STAT_ODP_MRS, 1);
	return mr_publish(sdev, mr);
}

/* Pin [start, start + length) and register it as a new MR at @iova. */
static struct ib_mr *mr_reg_user(struct ib_pd *ibpd, u64 start, u64 length,
				 u64 iova, int access)
{
	struct sroce_dev *sdev = to_sdev(ibpd->device);
	struct ib_umem *umem;
	struct sroce_mr *mr;
	int err;

	/* Implicit ODP: address 0 and length U64_MAX (SIZE_MAX). */
	if ((access & IB_ACCESS_ON_DEMAND) && !start && length == U64_MAX) {
		if (iova)
			return ERR_PTR(-EINVAL);
		return mr_reg_odp(ibpd, 0, length, 0, access, true);
	}
	if (!length || length > SROCE_MAX_MR_SIZE)
		return ERR_PTR(-EINVAL);
	if (access & IB_ACCESS_ON_DEMAND)
		return mr_reg_odp(ibpd, start, length, iova, access, false);
	mr = mr_new(sdev, SROCE_MR_USER, access);
	if (IS_ERR(mr))
		return ERR_CAST(mr);
	umem = ib_umem_get_va(ibpd->device, start, length, access);
	if (IS_ERR(umem)) {
		mr_free(sdev, mr);
		return ERR_CAST(umem);
	}
	mr->umem = umem;
	err = map_umem(mr);
	if (err) {
		mr_free(sdev, mr);
		return ERR_PTR(err);
	}
	mr->ibmr.iova = iova;
	mr->ibmr.length = length;
	return mr_publish(sdev, mr);
}

/**
 * sroce_mr_reg_user() - ib_device_ops.reg_user_mr: pin and register user memory
 * @ibpd: the PD
 * @start: user virtual address
 * @length: bytes
 * @iova: the address the MR is accessed by
 * @access: access rights
 * @udata: unused
 *
 * Where the kernel passes a DMA handle (a PCIe TPH steering hint; see
 * compat.h) it comes before @udata and is refused: sroce does no DMA.
 *
 * Return: the MR, or an ERR_PTR: -EINVAL for bad rights or a length of 0
 * or past the device limit, -EOPNOTSUPP for unsupported rights or a DMA
 * handle, or what pinning the pages returned.
 */
struct ib_mr *sroce_mr_reg_user(struct ib_pd *ibpd, u64 start, u64 length,
				u64 iova, int access, SROCE_REG_USER_MR_DMAH
				struct ib_udata *udata)
{
	if (sroce_reg_user_mr_dmah())
		return ERR_PTR(-EOPNOTSUPP);
	return mr_reg_user(ibpd, start, length, iova, access);
}

/*
 * Rereg of the PD or the rights alone, keeping the keys. Under the MR's
 * lock no window is bound and none can be until the change is complete:
 * a bind counts itself there before it checks the MR (mw.c). The RDMA
 * core sets ibmr.pd to the same PD after this returns; setting it here
 * makes it part of the change that the lock orders with binds. The data
 * path reads both without the lock (sroce_mr_check()): an access sees
 * the old or the new value, as an access in flight during a rereg may.
 */
static struct ib_mr *mr_rereg_in_place(struct sroce_mr *mr, int access,
				       struct ib_pd *ibpd)
{
	int err = 0;

	spin_lock_bh(&mr->lock);
	if (atomic_read(&mr->num_mw)) {
		err = -EBUSY;
	} else {
		WRITE_ONCE(mr->access, access);
		WRITE_ONCE(mr->ibmr.pd, ibpd);
	}
	spin_unlock_bh(&mr->lock);
	return err ? ERR_PTR(err) : NULL;
}

static void mr_unblock_binds(struct sroce_mr *mr)
{
	spin_lock_bh(&mr->lock);
	mr->dying = false;
	spin_unlock_bh(&mr->lock);
}

/* No window may be bound to @mr from now on, or -EBUSY if one is. */
static int mr_block_binds(struct sroce_mr *mr)
{
	int err = 0;

	spin_lock_bh(&mr->lock);
	if (atomic_read(&mr->num_mw))
		err = -EBUSY;
	else
		mr->dying = true;
	spin_unlock_bh(&mr->lock);
	return err;
}

/**
 * sroce_mr_rereg_user() - ib_device_ops.rereg_user_mr
 * @ibmr: a user MR; the RDMA core holds its object exclusively
 * @flags: IB_MR_REREG_TRANS, IB_MR_REREG_PD, IB_MR_REREG_ACCESS
 * @start: with IB_MR_REREG_TRANS, the user virtual address to register
 * @length: with IB_MR_REREG_TRANS, its length
 * @iova: with IB_MR_REREG_TRANS, the address the MR is accessed by
 * @access: with IB_MR_REREG_ACCESS, the new rights
 * @ibpd: the PD the MR is to be in: the new one with IB_MR_REREG_PD
 * @udata: unused
 *
 * Reregistration (IBA 11.2.8, Reregister Memory Region) is refused while
 * memory windows are bound to the MR. The PD and the rights change in
 * place, and the keys stay. A new translation is a new registration, as
 * is a change to rights that write (ib_access_writable()) for memory that
 * was pinned without write access: pages pinned for reading may be
 * shared, and must not be written. The new MR, with new keys, replaces
 * the old one in the process's object, and the RDMA core deregisters the
 * old one; binds to it are blocked meanwhile, so that cannot fail. The
 * rights are checked as reg_user_mr checks them.
 *
 * Return: NULL when the MR was changed in place, the new MR, or an
 * ERR_PTR: -EBUSY while windows are bound, -EINVAL or -EOPNOTSUPP for
 * rights or a length that reg_user_mr refuses, or what pinning returned.
 * On an error the MR is as it was.
 */
struct ib_mr *sroce_mr_rereg_user(struct ib_mr *ibmr, int flags, u64 start,
				  u64 length, u64 iova, int access,
				  struct ib_pd *ibpd, struct ib_udata *udata)
{
	struct sroce_mr *mr = container_of(ibmr, struct sroce_mr, ibmr);
	struct ib_mr *new;
	int err;

	if (mr->type != SROCE_MR_USER && mr->type != SROCE_MR_ODP)
		return ERR_PTR(-EINVAL);
	/* An implicit ODP MR has no range to keep or change. */
	if (mr->imr)
		return ERR_PTR(-EOPNOTSUPP);
	if (!(flags & IB_MR_REREG_ACCESS))
		access = mr->access;
	err = check_access(access);
	if (err)
		return ERR_PTR(err);
	/* Paged on demand, or to be: register anew, keep nothing. */
	if (mr->type == SROCE_MR_ODP || (access & IB_ACCESS_ON_DEMAND)) {
		if (!(flags & IB_MR_REREG_TRANS)) {
			start = mr->umem->address;
			length = mr->ibmr.length;
			iova = mr->ibmr.iova;
		}
		goto anew;
	}

	if (!(flags & IB_MR_REREG_TRANS)) {
		if (mr->umem->writable || !ib_access_writable(access))
			return mr_rereg_in_place(mr, access, ibpd);
		/* The same range again, pinned for writing. */
		start = mr->umem->address;
		length = mr->ibmr.length;
		iova = mr->ibmr.iova;
	}
anew:
	err = mr_block_binds(mr);
	if (err)
		return ERR_PTR(err);
	new = mr_reg_user(ibpd, start, length, iova, access);
	if (IS_ERR(new))
		mr_unblock_binds(mr);
	return new;
}

/**
 * sroce_mr_alloc() - ib_device_ops.alloc_mr: an MR for fast registration
 * @ibpd: the PD
 * @type: IB_MR_TYPE_MEM_REG; other types are not supported
 * @max_num_sg: pages the MR can map
 *
 * The MR is invalid until a registration work request maps it.
 *
 * Return: the MR or an ERR_PTR.
 */
struct ib_mr *sroce_mr_alloc(struct ib_pd *ibpd, enum ib_mr_type type,
			     u32 max_num_sg)
{
	struct sroce_dev *sdev = to_sdev(ibpd->device);
	struct sroce_mr *mr;

	if (type != IB_MR_TYPE_MEM_REG)
		return ERR_PTR(-EOPNOTSUPP);
	if (!max_num_sg || max_num_sg > SROCE_MAX_FAST_REG_PAGES)
		return ERR_PTR(-EINVAL);
	mr = mr_new(sdev, SROCE_MR_FAST, 0);
	if (IS_ERR(mr))
		return ERR_CAST(mr);
	mr->pages = kcalloc(max_num_sg, sizeof(*mr->pages), GFP_KERNEL);
	mr->reg_pages = kcalloc(max_num_sg, sizeof(*mr->reg_pages), GFP_KERNEL);
	if (!mr->pages || !mr->reg_pages) {
		mr_free(sdev, mr);
		return ERR_PTR(-ENOMEM);
	}
	mr->max_pages = max_num_sg;
	return mr_publish(sdev, mr);
}

static int set_page(struct ib_mr *ibmr, u64 addr)
{
	struct sroce_mr *mr = container_of(ibmr, struct sroce_mr, ibmr);

	if (mr->npages == mr->max_pages)
		return -ENOMEM;
	mr->pages[mr->npages++] = addr;
	return 0;
}

/**
 * sroce_mr_map_sg() - ib_device_ops.map_mr_sg: set a fast-registration
 * page list
 * @ibmr: an MR from sroce_mr_alloc()
 * @sg: the scatterlist
 * @sg_nents: its entries
 * @sg_offset: offset into the first entry
 *
 * Return: the number of entries mapped.
 */
int sroce_mr_map_sg(struct ib_mr *ibmr, struct scatterlist *sg, int sg_nents,
		    unsigned int *sg_offset)
{
	struct sroce_mr *mr = container_of(ibmr, struct sroce_mr, ibmr);

	mr->npages = 0;
	return ib_sg_to_pages(ibmr, sg, sg_nents, sg_offset, set_page);
}

/**
 * sroce_mr_dereg() - ib_device_ops.dereg_mr
 * @ibmr: the MR
 * @udata: unused
 *
 * Return: 0, or -EBUSY while memory windows are bound to it.
 */
int sroce_mr_dereg(struct ib_mr *ibmr, struct ib_udata *udata)
{
	struct sroce_mr *mr = container_of(ibmr, struct sroce_mr, ibmr);
	int err;

	err = mr_block_binds(mr);
	if (err)
		return err;
	mr_free(to_sdev(ibmr->device), mr);
	return 0;
}

/**
 * sroce_mr_bind_get() - count a window about to be bound to an MR
 * @mr: the MR, referenced
 *
 * Return: false when the MR is being deregistered.
 */
bool sroce_mr_bind_get(struct sroce_mr *mr)
{
	bool ok;

	spin_lock_bh(&mr->lock);
	ok = !mr->dying;
	if (ok)
		atomic_inc(&mr->num_mw);
	spin_unlock_bh(&mr->lock);
	return ok;
}

/**
 * sroce_mr_bind_put() - undo sroce_mr_bind_get() and the reference
 * @mr: the MR
 */
void sroce_mr_bind_put(struct sroce_mr *mr)
{
	atomic_dec(&mr->num_mw);
	sroce_mr_put(mr);
}

/*
 * Make the page list ib_map_mr_sg() set the registered translation, if it
 * covers the address range it was set with. The MR is Free, so no access
 * can pass sroce_mr_check() until valid is set after this; an access that
 * passed it before the invalidation reads the translation under reg_lock
 * and finds it replaced (mem.c).
 */
static bool fast_reg_translate(struct sroce_mr *mr)
{
	u32 n = min(mr->npages, mr->max_pages), ps = mr->ibmr.page_size;
	u64 span;

	lockdep_assert_held(&mr->reg_lock);
	if (!n || ps < SZ_4K || !is_power_of_2(ps) ||
	    check_add_overflow(mr->ibmr.length, mr->ibmr.iova & (ps - 1), &span) ||
	    span > (u64)n * ps)
		return false;
	/* sroce_mr_check() reads the range under the key table's lock. */
	memcpy(mr->reg_pages, mr->pages, n * sizeof(*mr->pages));
	WRITE_ONCE(mr->reg_npages, n);
	WRITE_ONCE(mr->reg_iova, mr->ibmr.iova);
	WRITE_ONCE(mr->reg_length, mr->ibmr.length);
	WRITE_ONCE(mr->reg_page_size, ps);
	return true;
}

/**
 * sroce_mr_fast_reg() - execute a fast-registration (REG_MR) work request
 * @qp: the QP; called by its send engine, in WQE order
 * @index_key: the MR's lkey when the WR was posted: names the MR by its
 *	       index (the consumer may have changed the low byte already)
 * @new_key: the key the MR answers to from now on: same index, any variant
 * @access: rights (IB_ACCESS_*)
 *
 * The page list, address and length were set by ib_map_mr_sg(). As the
 * IBA's Fast Register Physical MR operation requires (10.6, Base Memory
 * Management Extensions), the MR must be a fast-registration MR of the
 * QP's PD in the Free state (never registered, or invalidated
 * by a LOCAL_INV or a SEND with Invalidate), and only the key's low byte
 * may change. The MR's own key changes here, not when the consumer
 * changed ibmr.lkey: a LOCAL_INV posted before this WR still names the
 * old key. Likewise the translation: ib_map_mr_sg() sets the page list,
 * address and length for the consumer's next registration, often while
 * the current one is still valid (ib_iser maps before its LOCAL_INV
 * runs), so the data path uses a copy that only this function makes.
 * A page list that does not cover the length is refused.
 *
 * Return: IB_WC_SUCCESS or IB_WC_LOC_PROT_ERR.
 */
enum ib_wc_status sroce_mr_fast_reg(struct sroce_qp *qp, u32 index_key,
				    u32 new_key, int access)
{
	struct sroce_dev *sdev = to_sdev(qp->ibqp.device);
	enum ib_wc_status status = IB_WC_LOC_PROT_ERR;
	struct sroce_mr *mr;
	void *entry;

	if ((index_key >> 8) != (new_key >> 8) || check_access(access))
		return status;
	xa_lock_bh(&sdev->keys);
	entry = xa_load(&sdev->keys, index_key >> 8);
	if (entry && xa_pointer_tag(entry) == SROCE_KEY_MR) {
		mr = xa_untag_pointer(entry);
		spin_lock(&mr->reg_lock);
		if (mr->type == SROCE_MR_FAST && !mr->valid &&
		    mr->ibmr.pd == qp->ibqp.pd && fast_reg_translate(mr)) {
			WRITE_ONCE(mr->access, access);
			WRITE_ONCE(mr->key, new_key);
			/* No access checked before is valid in this one. */
			mr->reg_gen++;
			/* The translation before valid (sroce_mr_check()). */
			smp_store_release(&mr->valid, true);
			status = IB_WC_SUCCESS;
		}
		spin_unlock(&mr->reg_lock);
	}
	xa_unlock_bh(&sdev->keys);
	return status;
}

/**
 * sroce_mr_check() - may this access use this MR?
 * @mr: the MR
 * @pd: the PD of the QP making the access
 * @iova: first byte
 * @len: bytes; 0 checks no range
 * @access: IB_ACCESS_* rights needed (0 for a local read)
 *
 * Return: 0, or -EACCES for a PD mismatch, missing rights, an MR that maps
 * nothing, or a range outside the MR.
 */
int sroce_mr_check(struct sroce_mr *mr, struct ib_pd *pd, u64 iova, u64 len,
		   int access)
{
	u64 end, start, size;

	/* A rereg may change both meanwhile (sroce_mr_rereg_user()). */
	if (READ_ONCE(mr->ibmr.pd) != pd ||
	    (READ_ONCE(mr->access) & access) != access)
		return -EACCES;
	if (mr->type == SROCE_MR_DMA)
		return 0;
	if (mr->type == SROCE_MR_FAST) {
		/* The registered translation, not the consumer's next one. */
		if (!smp_load_acquire(&mr->valid))
			return -EACCES;
		start = READ_ONCE(mr->reg_iova);
		size = READ_ONCE(mr->reg_length);
	} else {
		start = mr->ibmr.iova;
		size = mr->ibmr.length;
	}
	if (!len)
		return 0;
	if (check_add_overflow(iova, len, &end) || iova < start ||
	    end > start + size)
		return -EACCES;
	return 0;
}
