/* SPDX-License-Identifier: GPL-2.0 OR Linux-OpenIB */
#ifndef SROCE_MEM_H
#define SROCE_MEM_H

#include <linux/skbuff.h>
#include <rdma/ib_verbs.h>

struct sroce_dev;
struct sroce_mr;

struct sroce_mr *sroce_mem_get_local(struct sroce_dev *sdev, struct ib_pd *pd,
				     u32 lkey, u64 iova, u64 len, int access,
				     u32 *gen);
struct sroce_mr *sroce_mem_get_remote(struct sroce_dev *sdev,
				      struct ib_pd *pd, u32 qpn, u32 rkey,
				      u64 va, u64 len, int access, u64 *iova,
				      u32 *gen);
int sroce_mem_invalidate(struct sroce_dev *sdev, struct ib_pd *pd, u32 qpn,
			 u32 rkey);
int sroce_mem_copy_in(struct sroce_mr *mr, u32 gen, u64 iova,
		      const struct sk_buff *skb, unsigned int off, u32 len);
int sroce_mem_copy_in_buf(struct sroce_mr *mr, u32 gen, u64 iova,
			  const void *buf, u32 len);
int sroce_mem_copy_out(struct sroce_mr *mr, u32 gen, u64 iova, void *buf,
		       u32 len);
bool sroce_mem_attach(struct sroce_mr *mr, u64 iova, u32 len,
		      struct sk_buff *skb, unsigned int room);
int sroce_mem_atomic(struct sroce_mr *mr, u32 gen, u64 iova, bool cmp_swap,
		     u64 compare, u64 swap_add, u64 *orig);
int sroce_mem_atomic_write(struct sroce_mr *mr, u32 gen, u64 iova, u64 val);

#endif /* SROCE_MEM_H */
