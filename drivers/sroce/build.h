/* SPDX-License-Identifier: GPL-2.0 OR Linux-OpenIB */
#ifndef SROCE_BUILD_H
#define SROCE_BUILD_H

#include <rdma/ib_verbs.h>

struct sroce_qp;
struct sroce_swqe;

enum ib_wc_status sroce_build_fetch(struct sroce_qp *qp, u32 index,
				    struct sroce_swqe *s);
u32 sroce_build_npkts(struct sroce_qp *qp, const struct sroce_swqe *s);
enum ib_wc_status sroce_build_send(struct sroce_qp *qp, struct sroce_swqe *s,
				   bool *sent);

#endif /* SROCE_BUILD_H */
