/* SPDX-License-Identifier: GPL-2.0 OR Linux-OpenIB */
#ifndef SROCE_SGL_H
#define SROCE_SGL_H

#include <linux/skbuff.h>
#include <rdma/ib_verbs.h>
#include <rdma/sroce-abi.h>

struct sroce_dev;
struct sroce_odp_fault;

/**
 * struct sroce_sgl - a position in a local scatter/gather list
 * @sge: the list
 * @num: its entries
 * @idx: current entry
 * @off: bytes of the current entry already used
 * @fault: the engine's fault, queued when an on-demand paged page of the
 *	   list is not mapped (odp.c); NULL: such a page fails the access
 */
struct sroce_sgl {
	const struct sroce_sge *sge;
	u32 num;
	u32 idx;
	u32 off;
	struct sroce_odp_fault *fault;
};

static inline void sroce_sgl_init(struct sroce_sgl *sgl,
				  const struct sroce_sge *sge, u32 num,
				  struct sroce_odp_fault *fault)
{
	sgl->sge = sge;
	sgl->num = num;
	sgl->idx = 0;
	sgl->off = 0;
	sgl->fault = fault;
}

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

#endif /* SROCE_SGL_H */
