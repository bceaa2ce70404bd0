/* SPDX-License-Identifier: GPL-2.0 OR Linux-OpenIB */
#ifndef SROCE_QP_STATE_H
#define SROCE_QP_STATE_H

#include <rdma/ib_verbs.h>

int sroce_qp_modify(struct ib_qp *ibqp, struct ib_qp_attr *attr, int mask,
		    struct ib_udata *udata);

#endif /* SROCE_QP_STATE_H */
