/* SPDX-License-Identifier: GPL-2.0 OR Linux-OpenIB */
#ifndef SROCE_PD_H
#define SROCE_PD_H

#include <rdma/ib_verbs.h>

/**
 * struct sroce_pd - a protection domain
 * @ibpd: the RDMA core's PD
 * @pdn: PD number, reported to the provider
 * @pins_module: the PD holds a reference on the module: it is a kernel
 *	upper-layer protocol's (see pd.c)
 */
struct sroce_pd {
	struct ib_pd ibpd;
	u32 pdn;
	bool pins_module;
};

static inline struct sroce_pd *to_spd(struct ib_pd *ibpd)
{
	return container_of(ibpd, struct sroce_pd, ibpd);
}

/**
 * struct sroce_xrcd - an XRC domain (IBA annex A14): what its SRQs and
 *	target QPs share; the RDMA core keeps its objects
 * @ibxrcd: the RDMA core's XRC domain
 */
struct sroce_xrcd {
	struct ib_xrcd ibxrcd;
};

int sroce_pd_alloc(struct ib_pd *ibpd, struct ib_udata *udata);
int sroce_pd_dealloc(struct ib_pd *ibpd, struct ib_udata *udata);
int sroce_xrcd_alloc(struct ib_xrcd *ibxrcd, struct ib_udata *udata);
int sroce_xrcd_dealloc(struct ib_xrcd *ibxrcd, struct ib_udata *udata);

#endif /* SROCE_PD_H */
