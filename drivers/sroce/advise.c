// SPDX-License-Identifier: GPL-2.0 OR Linux-OpenIB
/*
 * DOC: Memory advice
 *
 * ibv_advise_mr() (ib_device_ops.advise_mr): the ranges of on-demand
 * paged MRs (odp.c) that a process will use soon are mapped before its
 * traffic meets them missing. With IB_UVERBS_ADVISE_MR_FLAG_FLUSH the
 * mapping is done before the call returns, and its errors returned;
 * without, it is queued on the ODP workqueue, best effort, each MR
 * referenced until it is done.
 */
#include <linux/slab.h>
#include <rdma/ib_user_verbs.h>

#include "advise.h"
#include "device.h"
#include "mem.h"
#include "mr.h"
#include "odp.h"

/* An asynchronous prefetch: the ranges, their MRs referenced. */
struct odp_prefetch {
	struct work_struct work;
	bool write;
	bool fault;
	u32 num;
	struct {
		struct sroce_mr *mr;
		u64 iova;
		u32 len;
	} sge[];
};

static void odp_prefetch_work(struct work_struct *work)
{
	struct odp_prefetch *p = container_of(work, struct odp_prefetch, work);
	u32 i;

	/* Best effort: a range that cannot be mapped faults at its access. */
	for (i = 0; i < p->num; i++) {
		sroce_odp_prefetch(p->sge[i].mr, p->sge[i].iova,
				   p->sge[i].len, p->write, p->fault);
		sroce_mr_put(p->sge[i].mr);
	}
	kfree(p);
}

/*
 * The ODP MR of an advice's SGE: the key must name an ODP MR of @ibpd
 * whose range holds the SGE, with the local write right for a write.
 */
static int advise_mr_get(struct sroce_dev *sdev, struct ib_pd *ibpd,
			 const struct ib_sge *sge, bool write,
			 struct sroce_mr **mrp)
{
	struct sroce_mr *mr;
	u32 gen;

	mr = sroce_mem_get_local(sdev, ibpd, sge->lkey, sge->addr, sge->length,
				 0, &gen);
	if (!mr)
		return -EINVAL;
	if (mr->type != SROCE_MR_ODP) {
		sroce_mr_put(mr);
		return -EINVAL;
	}
	if (write && !(READ_ONCE(mr->access) & IB_ACCESS_LOCAL_WRITE)) {
		sroce_mr_put(mr);
		return -EPERM;
	}
	*mrp = mr;
	return 0;
}

/**
 * sroce_mr_advise() - ib_device_ops.advise_mr (ibv_advise_mr)
 * @ibpd: the PD of the MRs
 * @advice: PREFETCH (map for reading), PREFETCH_WRITE (map for writing)
 *	    or PREFETCH_NO_FAULT (map what is present, fault nothing in)
 * @flags: IB_UVERBS_ADVISE_MR_FLAG_FLUSH: done before this returns, its
 *	   errors returned; without it, queued, best effort
 * @sg_list: the ranges: each lies in an ODP MR of @ibpd
 * @num_sge: entries of @sg_list
 * @attrs: unused
 *
 * Context: process.
 * Return: 0; -EOPNOTSUPP for another advice or flag; -EINVAL for a key
 * that names no ODP MR of the PD, or a range outside it; -EPERM for a
 * write advice on an MR without the local write right; -ENOMEM; with
 * the flush flag, the error of a fault (-EFAULT: the range is not mapped
 * in the process).
 */
int sroce_mr_advise(struct ib_pd *ibpd,
		    enum ib_uverbs_advise_mr_advice advice, u32 flags,
		    struct ib_sge *sg_list, u32 num_sge,
		    struct uverbs_attr_bundle *attrs)
{
	struct sroce_dev *sdev = to_sdev(ibpd->device);
	bool write = advice == IB_UVERBS_ADVISE_MR_ADVICE_PREFETCH_WRITE;
	bool fault = advice != IB_UVERBS_ADVISE_MR_ADVICE_PREFETCH_NO_FAULT;
	struct odp_prefetch *p;
	struct sroce_mr *mr;
	int err = 0;
	u32 i;

	if ((advice != IB_UVERBS_ADVISE_MR_ADVICE_PREFETCH &&
	     advice != IB_UVERBS_ADVISE_MR_ADVICE_PREFETCH_WRITE &&
	     advice != IB_UVERBS_ADVISE_MR_ADVICE_PREFETCH_NO_FAULT) ||
	    (flags & ~IB_UVERBS_ADVISE_MR_FLAG_FLUSH))
		return -EOPNOTSUPP;
	if (flags & IB_UVERBS_ADVISE_MR_FLAG_FLUSH) {
		for (i = 0; i < num_sge && !err; i++) {
			err = advise_mr_get(sdev, ibpd, &sg_list[i], write, &mr);
			if (err)
				break;
			err = sroce_odp_prefetch(mr, sg_list[i].addr,
						 sg_list[i].length, write,
						 fault);
			sroce_mr_put(mr);
		}
		return err;
	}
	p = kzalloc(struct_size(p, sge, num_sge), GFP_KERNEL);
	if (!p)
		return -ENOMEM;
	for (i = 0; i < num_sge; i++) {
		err = advise_mr_get(sdev, ibpd, &sg_list[i], write,
				    &p->sge[i].mr);
		if (err)
			goto err_put;
		p->sge[i].iova = sg_list[i].addr;
		p->sge[i].len = sg_list[i].length;
		p->num = i + 1;
	}
	p->write = write;
	p->fault = fault;
	INIT_WORK(&p->work, odp_prefetch_work);
	sroce_odp_queue(&p->work);
	return 0;

err_put:
	while (p->num)
		sroce_mr_put(p->sge[--p->num].mr);
	kfree(p);
	return err;
}

