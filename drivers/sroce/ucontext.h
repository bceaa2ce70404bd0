/* SPDX-License-Identifier: GPL-2.0 OR Linux-OpenIB */
#ifndef SROCE_UCONTEXT_H
#define SROCE_UCONTEXT_H

#include <rdma/ib_verbs.h>
#include <rdma/uverbs_ioctl.h>

/**
 * struct sroce_ucontext - a process's context on a device
 * @ibuc: the RDMA core's context
 */
struct sroce_ucontext {
	struct ib_ucontext ibuc;
};

/**
 * sroce_udata_ucontext() - the user context a verbs call came from
 * @udata: the call's driver data, or NULL for a kernel caller
 *
 * Return: the context, or NULL for a kernel caller.
 */
static inline struct ib_ucontext *sroce_udata_ucontext(struct ib_udata *udata)
{
	struct sroce_ucontext *uc;

	uc = rdma_udata_to_drv_context(udata, struct sroce_ucontext, ibuc);
	return uc ? &uc->ibuc : NULL;
}

int sroce_ucontext_alloc(struct ib_ucontext *ibuc, struct ib_udata *udata);
void sroce_ucontext_dealloc(struct ib_ucontext *ibuc);
void sroce_ucontext_disassociate(struct ib_ucontext *ibuc);

#endif /* SROCE_UCONTEXT_H */
