/* SPDX-License-Identifier: GPL-2.0 OR Linux-OpenIB */
/*
 * libsroce: completion queues (cq.c).
 */
#ifndef SROCE_CQ_H
#define SROCE_CQ_H

#include "sroce.h"

struct ibv_cq *sroce_create_cq(struct ibv_context *ibctx, int cqe,
			       struct ibv_comp_channel *channel,
			       int comp_vector);
struct ibv_cq_ex *sroce_create_cq_ex(struct ibv_context *ibctx,
				     struct ibv_cq_init_attr_ex *attr);
int sroce_poll_cq(struct ibv_cq *ibcq, int ne, struct ibv_wc *wc);
int sroce_resize_cq(struct ibv_cq *ibcq, int cqe);
int sroce_destroy_cq(struct ibv_cq *ibcq);

/* Take the completions of QP @qpn out of @ibcq (which may be NULL). */
void sroce_cq_clean(struct ibv_cq *ibcq, uint32_t qpn);

#endif /* SROCE_CQ_H */
