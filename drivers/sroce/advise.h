/* SPDX-License-Identifier: GPL-2.0 OR Linux-OpenIB */
#ifndef SROCE_ADVISE_H
#define SROCE_ADVISE_H

#include <rdma/ib_verbs.h>

int sroce_mr_advise(struct ib_pd *ibpd,
		    enum ib_uverbs_advise_mr_advice advice, u32 flags,
		    struct ib_sge *sg_list, u32 num_sge,
		    struct uverbs_attr_bundle *attrs);

#endif /* SROCE_ADVISE_H */
