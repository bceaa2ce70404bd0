/* SPDX-License-Identifier: GPL-2.0 OR Linux-OpenIB */
#ifndef SROCE_EXEC_H
#define SROCE_EXEC_H

#include <linux/skbuff.h>
#include <rdma/ib_verbs.h>

#include "resp.h"

struct sroce_qp;

enum sroce_resp_result sroce_exec_request(struct sroce_qp *qp,
					  struct sk_buff *skb);
enum sroce_resp_result sroce_exec_need_rwqe(struct sroce_qp *qp);
enum sroce_resp_result sroce_exec_sgl_result(int err);
bool sroce_exec_complete_rwqe(struct sroce_qp *qp, struct ib_wc *wc, bool se);
void sroce_exec_fail_rwqe(struct sroce_qp *qp, enum ib_wc_status status);
int sroce_exec_read_resp(struct sroce_qp *qp, int budget);

#endif /* SROCE_EXEC_H */
