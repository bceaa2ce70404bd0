/* SPDX-License-Identifier: GPL-2.0 OR Linux-OpenIB */
/*
 * libsroce: the extended send API, struct ibv_qp_ex and ibv_wr_*() (wr.c).
 */
#ifndef SROCE_WR_H
#define SROCE_WR_H

#include "sroce.h"

/* Where the running libibverbs looks for VERBS_QP_EX; once per context. */
enum sroce_qp_ex_abi sroce_qp_ex_probe(void);

/* create_qp_ex's send_ops_flags: 0, or EOPNOTSUPP for what cannot be. */
int sroce_qp_ex_check_ops(struct ibv_context *ibctx,
			  const struct ibv_qp_init_attr_ex *attr);

/* Offer struct ibv_qp_ex on a QP just created. */
void sroce_qp_ex_init(struct sroce_qp *qp, enum sroce_qp_ex_abi abi);

#endif /* SROCE_WR_H */
