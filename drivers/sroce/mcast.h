/* SPDX-License-Identifier: GPL-2.0 OR Linux-OpenIB */
#ifndef SROCE_MCAST_H
#define SROCE_MCAST_H

#include <linux/skbuff.h>
#include <rdma/ib_verbs.h>

struct sroce_dev;

int sroce_mcast_attach(struct ib_qp *ibqp, union ib_gid *mgid, u16 lid);
int sroce_mcast_detach(struct ib_qp *ibqp, union ib_gid *mgid, u16 lid);
void sroce_mcast_recv(struct sroce_dev *sdev, struct sk_buff *skb);
void sroce_mcast_cleanup(struct sroce_dev *sdev);

#endif /* SROCE_MCAST_H */
