// SPDX-License-Identifier: GPL-2.0 OR Linux-OpenIB
/*
 * DOC: Memory windows
 *
 * A window takes a key from the MR key space (mr.c) when allocated and is
 * unbound, so it grants no access, until a bind (IBA 10.6.7):
 *
 * - Type 1 windows are bound, and bound again, by ibv_bind_mw(); binding
 *   with length 0 unbinds. They belong to a PD.
 * - Type 2B windows are bound by a BIND_MW work request, only while
 *   unbound, and are then tied to the QP that bound them and to its PD;
 *   LOCAL_INV, a remote SEND with Invalidate or deallocation unbinds them.
 *
 * Every bind gives the window a new key: the same index, a new variant
 * (IBA 10.6.7.2.3), so a peer holding the old key is refused. A bound
 * window holds a reference on its MR, which cannot be deregistered while
 * windows are bound to it (-EBUSY).
 *
 * A remote access through a window is checked against the window (bound,
 * key, PD, QP for type 2, rights, range) and then uses the MR's memory.
 * Lookups hold the key table's lock while they check the window, and
 * deallocation removes the key first, so a lookup never sees a window
 * being freed.
 */
#include <rdma/ib_user_verbs.h>

#include "device.h"
#include "key.h"
#include "mr.h"
#include "mw.h"
#include "qp.h"
#include "req.h"

/* The remote rights a window may grant. */
#define MW_ACCESS (IB_ACCESS_REMOTE_WRITE | IB_ACCESS_REMOTE_READ | \
		   IB_ACCESS_REMOTE_ATOMIC)

static struct sroce_mw *to_smw(struct ib_mw *ibmw)
{
	return container_of(ibmw, struct sroce_mw, ibmw);
}

/**
 * sroce_mw_alloc() - ib_device_ops.alloc_mw
 * @ibmw: the MW, allocated by the RDMA core, with its type set
 * @udata: unused
 *
 * Return: 0 or a negative errno.
 */
int sroce_mw_alloc(struct ib_mw *ibmw, struct ib_udata *udata)
{
	struct sroce_dev *sdev = to_sdev(ibmw->device);
	struct sroce_mw *mw = to_smw(ibmw);
	int err;

	if (ibmw->type != IB_MW_TYPE_1 && ibmw->type != IB_MW_TYPE_2)
		return -EINVAL;
	err = sroce_dev_obj_get(sdev, SROCE_OBJ_MW);
	if (err)
		return err;
	err = sroce_key_alloc(sdev, &ibmw->rkey);
	if (err) {
		sroce_dev_obj_put(sdev, SROCE_OBJ_MW);
		return err;
	}
	spin_lock_init(&mw->lock);
	sroce_key_publish(sdev, ibmw->rkey, mw, SROCE_KEY_MW);
	return 0;
}

/* Drop the binding; the caller holds mw->lock. Returns the MR to put. */
static struct sroce_mr *unbind(struct sroce_mw *mw)
{
	struct sroce_mr *mr = mw->mr;

	lockdep_assert_held(&mw->lock);
	mw->mr = NULL;
	if (mr)
		atomic_dec(&mr->num_mw);
	return mr;
}

/**
 * sroce_mw_dealloc() - ib_device_ops.dealloc_mw
 * @ibmw: the MW; a bound window is unbound first
 *
 * Return: 0.
 */
int sroce_mw_dealloc(struct ib_mw *ibmw)
{
	struct sroce_dev *sdev = to_sdev(ibmw->device);
	struct sroce_mw *mw = to_smw(ibmw);
	struct sroce_mr *mr;

	sroce_key_free(sdev, ibmw->rkey);
	spin_lock_bh(&mw->lock);
	mr = unbind(mw);
	spin_unlock_bh(&mw->lock);
	if (mr)
		sroce_mr_put(mr);
	sroce_dev_obj_put(sdev, SROCE_OBJ_MW);
	return 0;
}

/* IBA 10.6.7.2.2: may this window be bound to @mr for @s? */
static enum ib_wc_status check_bind(struct sroce_qp *qp, struct sroce_mw *mw,
				    struct sroce_mr *mr,
				    const struct sroce_swqe *s)
{
	u64 end;

	lockdep_assert_held(&mw->lock);
	if (mw->ibmw.pd != qp->ibqp.pd || (s->ex >> 8) != (mw->ibmw.rkey >> 8))
		return IB_WC_MW_BIND_ERR;
	if (mw->ibmw.type == IB_MW_TYPE_2 && mw->mr)
		return IB_WC_MW_BIND_ERR;	/* type 2: unbind first */
	if (!s->bind_len)
		return IB_WC_SUCCESS;		/* type 1: unbind */
	/* A window grants remote rights; a local one asked for is moot. */
	if (!mr || mr->ibmr.pd != qp->ibqp.pd ||
	    !(mr->access & IB_ACCESS_MW_BIND) ||
	    (s->bind_access & ~(MW_ACCESS | IB_ZERO_BASED |
				IB_ACCESS_LOCAL_WRITE)))
		return IB_WC_MW_BIND_ERR;
	/* Remote write or atomic needs local write on the MR (10.6.3.1). */
	if ((s->bind_access & (IB_ACCESS_REMOTE_WRITE |
			       IB_ACCESS_REMOTE_ATOMIC)) &&
	    !(mr->access & IB_ACCESS_LOCAL_WRITE))
		return IB_WC_MW_BIND_ERR;
	if (check_add_overflow(s->remote_addr, s->bind_len, &end) ||
	    s->remote_addr < mr->ibmr.iova ||
	    end > mr->ibmr.iova + mr->ibmr.length)
		return IB_WC_MW_BIND_ERR;
	return IB_WC_SUCCESS;
}

/**
 * sroce_mw_bind() - execute a BIND_MW work request (either window type)
 * @qp: the QP; called by its send engine, in WQE order
 * @s: the WQE: @s->rkey is the window's current key, @s->ex its new key,
 *     @s->remote_addr and @s->bind_len the range, @s->bind_lkey the MR's
 *     lkey and @s->bind_access the rights (with IB_ZERO_BASED)
 *
 * Return: IB_WC_SUCCESS, or IB_WC_MW_BIND_ERR when the bind is refused.
 */
enum ib_wc_status sroce_mw_bind(struct sroce_qp *qp, const struct sroce_swqe *s)
{
	struct sroce_dev *sdev = to_sdev(qp->ibqp.device);
	struct sroce_mr *mr, *old = NULL;
	enum ib_wc_status status;
	struct sroce_mw *mw;
	void *entry;

	mr = s->bind_len ? sroce_key_get_mr(sdev, s->bind_lkey) : NULL;
	/*
	 * Counted as bound only if it may be (check_bind() looks again): an
	 * MR of another PD, another process's say, would refuse its owner's
	 * dereg and rereg with -EBUSY for as long as the count lasts.
	 */
	if (mr && (mr->ibmr.pd != qp->ibqp.pd ||
		   !(READ_ONCE(mr->access) & IB_ACCESS_MW_BIND) ||
		   !sroce_mr_bind_get(mr))) {
		sroce_mr_put(mr);
		mr = NULL;
	}

	xa_lock_bh(&sdev->keys);
	entry = xa_load(&sdev->keys, s->rkey >> 8);
	status = IB_WC_MW_BIND_ERR;
	if (entry && xa_pointer_tag(entry) == SROCE_KEY_MW) {
		mw = xa_untag_pointer(entry);
		spin_lock(&mw->lock);
		if (mw->ibmw.rkey == s->rkey)
			status = check_bind(qp, mw, mr, s);
		if (status == IB_WC_SUCCESS) {
			old = unbind(mw);
			mw->mr = mr;		/* the bind's reference */
			mw->addr = s->remote_addr;
			mw->length = s->bind_len;
			mw->access = s->bind_access & MW_ACCESS;
			mw->zero_based = s->bind_access & IB_ZERO_BASED;
			mw->qpn = qp->ibqp.qp_num;
			mw->ibmw.rkey = s->ex;
			mr = NULL;
		}
		spin_unlock(&mw->lock);
	}
	xa_unlock_bh(&sdev->keys);

	if (mr)
		sroce_mr_bind_put(mr);	/* refused: not bound after all */
	if (old)
		sroce_mr_put(old);
	return status;
}

/**
 * sroce_mw_access() - check a remote access through a window
 * @mw: the window; the caller holds the key table's lock
 * @rkey: the key the request carries
 * @pd: the PD of the QP the request arrived on
 * @qpn: that QP
 * @va: remote address (an offset, for a zero-based window)
 * @len: bytes; 0 checks the key alone and gives the window's start
 * @access: the IB_ACCESS_REMOTE_* right needed
 * @iova: set to the address in the MR's address space
 *
 * Return: the MR, referenced, or NULL when the access is refused.
 */
struct sroce_mr *sroce_mw_access(struct sroce_mw *mw, u32 rkey,
				 struct ib_pd *pd, u32 qpn, u64 va, u64 len,
				 int access, u64 *iova)
{
	struct sroce_mr *mr = NULL;
	u64 off, end;

	spin_lock(&mw->lock);
	if (!mw->mr || mw->ibmw.rkey != rkey || mw->ibmw.pd != pd ||
	    (mw->ibmw.type == IB_MW_TYPE_2 && mw->qpn != qpn) ||
	    (mw->access & access) != access)
		goto out;
	off = mw->zero_based ? va : va - mw->addr;
	if (!len)
		off = 0;
	else if ((!mw->zero_based && va < mw->addr) ||
		 check_add_overflow(off, len, &end) || end > mw->length)
		goto out;
	if (refcount_inc_not_zero(&mw->mr->ref)) {
		mr = mw->mr;
		*iova = mw->addr + off;
	}
out:
	spin_unlock(&mw->lock);
	return mr;
}

/**
 * sroce_mw_invalidate() - LOCAL_INV or SEND with Invalidate of a window
 * @mw: the window; the caller holds the key table's lock
 * @rkey: the key to invalidate
 * @pd: the PD of the QP asking
 * @qpn: that QP
 *
 * Only a type 2 window bound through this QP (and PD) can be invalidated
 * (IBA 10.6.7.2.5, o10-37.2.26); it is then unbound.
 *
 * Return: 0, or -EINVAL.
 */
int sroce_mw_invalidate(struct sroce_mw *mw, u32 rkey, struct ib_pd *pd,
			u32 qpn)
{
	struct sroce_mr *mr = NULL;
	int err = -EINVAL;

	spin_lock(&mw->lock);
	if (mw->ibmw.type == IB_MW_TYPE_2 && mw->mr && mw->ibmw.rkey == rkey &&
	    mw->ibmw.pd == pd && mw->qpn == qpn) {
		mr = unbind(mw);
		err = 0;
	}
	spin_unlock(&mw->lock);
	if (mr)
		sroce_mr_put(mr);
	return err;
}
