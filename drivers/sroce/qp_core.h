/* SPDX-License-Identifier: GPL-2.0 OR Linux-OpenIB */
#ifndef SROCE_QP_CORE_H
#define SROCE_QP_CORE_H

#include <rdma/ib_verbs.h>

struct sroce_dev;
struct sroce_qp;

extern unsigned int sroce_qp_backlog;

struct sroce_qp *sroce_qp_get(struct sroce_dev *sdev, u32 qpn);
void sroce_qp_put(struct sroce_qp *qp);
bool sroce_qp_fail(struct sroce_qp *qp, enum ib_wc_status status);
void sroce_qp_sq_drained(struct sroce_qp *qp);
void sroce_qp_event(struct sroce_qp *qp, enum ib_event_type type);

#endif /* SROCE_QP_CORE_H */
