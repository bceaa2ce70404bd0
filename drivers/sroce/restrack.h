/* SPDX-License-Identifier: GPL-2.0 OR Linux-OpenIB */
#ifndef SROCE_RESTRACK_H
#define SROCE_RESTRACK_H

#include <linux/skbuff.h>
#include <rdma/ib_verbs.h>

int sroce_restrack_fill_qp(struct sk_buff *msg, struct ib_qp *ibqp);
int sroce_restrack_fill_cq(struct sk_buff *msg, struct ib_cq *ibcq);
int sroce_restrack_fill_mr(struct sk_buff *msg, struct ib_mr *ibmr);
int sroce_restrack_fill_srq(struct sk_buff *msg, struct ib_srq *ibsrq);

#endif /* SROCE_RESTRACK_H */
