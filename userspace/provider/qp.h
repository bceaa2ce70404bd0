/* SPDX-License-Identifier: GPL-2.0 OR Linux-OpenIB */
/*
 * libsroce: queue pairs and shared receive queues (qp.c).
 */
#ifndef SROCE_QP_H
#define SROCE_QP_H

#include "sroce.h"

struct ibv_srq *sroce_create_srq(struct ibv_pd *ibpd,
				 struct ibv_srq_init_attr *attr);
struct ibv_srq *sroce_create_srq_ex(struct ibv_context *ibctx,
				    struct ibv_srq_init_attr_ex *attr);
int sroce_get_srq_num(struct ibv_srq *ibsrq, uint32_t *srq_num);
int sroce_modify_srq(struct ibv_srq *ibsrq, struct ibv_srq_attr *attr,
		     int attr_mask);
int sroce_query_srq(struct ibv_srq *ibsrq, struct ibv_srq_attr *attr);
int sroce_destroy_srq(struct ibv_srq *ibsrq);

struct ibv_qp *sroce_create_qp(struct ibv_pd *ibpd,
			       struct ibv_qp_init_attr *attr);
struct ibv_qp *sroce_create_qp_ex(struct ibv_context *ibctx,
				  struct ibv_qp_init_attr_ex *attr);
int sroce_modify_qp(struct ibv_qp *ibqp, struct ibv_qp_attr *attr,
		    int attr_mask);
int sroce_query_qp(struct ibv_qp *ibqp, struct ibv_qp_attr *attr,
		   int attr_mask, struct ibv_qp_init_attr *init_attr);
int sroce_destroy_qp(struct ibv_qp *ibqp);

#endif /* SROCE_QP_H */
