/* SPDX-License-Identifier: GPL-2.0 OR Linux-OpenIB */
#ifndef SROCE_PD_H
#define SROCE_PD_H

#include <rdma/ib_verbs.h>

/**
 * struct sroce_pd - a protection domain
 * @ibpd: the RDMA core's PD
 * @pdn: PD number, reported to the provider
 */
struct sroce_pd {
	struct ib_pd ibpd;
	u32 pdn;
};

static inline struct sroce_pd *to_spd(struct ib_pd *ibpd)
{
	return container_of(ibpd, struct sroce_pd, ibpd);
}

int sroce_pd_alloc(struct ib_pd *ibpd, struct ib_udata *udata);
int sroce_pd_dealloc(struct ib_pd *ibpd, struct ib_udata *udata);

#endif /* SROCE_PD_H */
