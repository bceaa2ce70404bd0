/* SPDX-License-Identifier: GPL-2.0 OR Linux-OpenIB */
#ifndef SROCE_COMP_H
#define SROCE_COMP_H

#include <rdma/ib_verbs.h>

struct sroce_qp;
struct sroce_swqe;

void sroce_comp_wqe_done(struct sroce_qp *qp, struct sroce_swqe *s,
			 enum ib_wc_status status);
bool sroce_comp_complete(struct sroce_qp *qp);
bool sroce_comp_flush(struct sroce_qp *qp);
bool sroce_comp_run(struct sroce_qp *qp, int budget);

#endif /* SROCE_COMP_H */
