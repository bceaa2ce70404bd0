/* SPDX-License-Identifier: GPL-2.0 OR Linux-OpenIB */
#ifndef SROCE_MEM_H
#define SROCE_MEM_H

#include <linux/skbuff.h>
#include <rdma/ib_verbs.h>
#include <rdma/sroce-abi.h>

struct sroce_dev;
struct sroce_mr;

/**
 * struct sroce_sgl - a position in a local scatter/gather list
 * @sge: the list
 * @num: its entries
 * @idx: current entry
 * @off: bytes of the current entry already used
 */
struct sroce_sgl {
	const struct sroce_sge *sge;
	u32 num;
	u32 idx;
	u32 off;
};

static inline void sroce_sgl_init(struct sroce_sgl *sgl,
				  const struct sroce_sge *sge, u32 num)
{
	sgl->sge = sge;
	sgl->num = num;
	sgl->idx = 0;
	sgl->off = 0;
}

struct sroce_mr *sroce_mr_get(struct sroce_dev *sdev, u32 key);
void sroce_mr_put(struct sroce_mr *mr);
struct sroce_mr *sroce_mem_get_local(struct sroce_dev *sdev, struct ib_pd *pd,
				     u32 lkey, u64 iova, u64 len, int access,
				     u32 *gen);
struct sroce_mr *sroce_mem_get_remote(struct sroce_dev *sdev,
				      struct ib_pd *pd, u32 qpn, u32 rkey,
				      u64 va, u64 len, int access, u64 *iova,
				      u32 *gen);
int sroce_mem_invalidate(struct sroce_dev *sdev, struct ib_pd *pd, u32 qpn,
			 u32 rkey);
int sroce_mr_check(struct sroce_mr *mr, struct ib_pd *pd, u64 iova, u64 len,
		   int access);
bool sroce_mr_copy_in(struct sroce_mr *mr, u32 gen, u64 iova,
		      const struct sk_buff *skb, unsigned int off, u32 len);
bool sroce_mr_copy_out(struct sroce_mr *mr, u32 gen, u64 iova, void *buf,
		       u32 len);
bool sroce_mr_attach(struct sroce_mr *mr, u64 iova, u32 len,
		     struct sk_buff *skb, unsigned int room);
int sroce_mr_atomic(struct sroce_mr *mr, u32 gen, u64 iova, bool cmp_swap,
		    u64 compare, u64 swap_add, u64 *orig);
int sroce_mr_atomic_write(struct sroce_mr *mr, u32 gen, u64 iova, u64 val);
u64 sroce_sgl_length(const struct sroce_sge *sge, u32 num);
int sroce_sgl_copy_in(struct sroce_dev *sdev, struct ib_pd *pd,
		      struct sroce_sgl *sgl, const struct sk_buff *skb,
		      unsigned int off, u32 len);
int sroce_sgl_copy_in_buf(struct sroce_dev *sdev, struct ib_pd *pd,
			  struct sroce_sgl *sgl, const void *buf, u32 len);
int sroce_sgl_skip(struct sroce_sgl *sgl, u32 len);
int sroce_sgl_copy_out(struct sroce_dev *sdev, struct ib_pd *pd,
		       struct sroce_sgl *sgl, void *buf, u32 len);
int sroce_sgl_attach(struct sroce_dev *sdev, struct ib_pd *pd,
		     struct sroce_sgl *sgl, struct sk_buff *skb, u32 len,
		     unsigned int room);

#endif /* SROCE_MEM_H */
