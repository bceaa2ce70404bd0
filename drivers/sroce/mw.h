/* SPDX-License-Identifier: GPL-2.0 OR Linux-OpenIB */
#ifndef SROCE_MW_H
#define SROCE_MW_H

#include <rdma/ib_verbs.h>

/**
 * struct sroce_mw - a memory window
 * @ibmw: the RDMA core's MW; its rkey is the window's key
 */
struct sroce_mw {
	struct ib_mw ibmw;
};

int sroce_mw_alloc(struct ib_mw *ibmw, struct ib_udata *udata);
int sroce_mw_dealloc(struct ib_mw *ibmw);

#endif /* SROCE_MW_H */
