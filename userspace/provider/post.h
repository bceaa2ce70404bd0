/* SPDX-License-Identifier: GPL-2.0 OR Linux-OpenIB */
/*
 * libsroce: posting work requests (post.c), and what each send opcode
 * is, which the extended send API (wr.c) shares.
 */
#ifndef SROCE_POST_H
#define SROCE_POST_H

#include <stdbool.h>

#include "sroce.h"

/* The send flags a work queue entry may carry. */
#define SROCE_SEND_FLAGS (IBV_SEND_FENCE | IBV_SEND_SIGNALED | \
			  IBV_SEND_SOLICITED | IBV_SEND_INLINE)

/* What an opcode fills in the entry's @wr union. */
enum send_kind {
	SEND_KIND_NONE,		/* not an opcode of this device: EINVAL */
	SEND_KIND_SEND,		/* wr.ud on a UD QP, nothing otherwise */
	SEND_KIND_RDMA,		/* wr.rdma */
	SEND_KIND_ATOMIC,	/* wr.atomic */
	SEND_KIND_BIND,		/* wr.bind_mw */
	SEND_KIND_LOCAL,	/* a local operation: nothing */
	SEND_KIND_WR_ONLY,	/* only through ibv_wr_*(): post_send has no
				 * fields for it (EOPNOTSUPP there) */
};

/* What goes into the entry's @ex. */
enum send_ex {
	SEND_EX_NONE,
	SEND_EX_IMM,		/* imm_data, kept in network order */
	SEND_EX_INV,		/* invalidate_rkey */
	SEND_EX_BIND,		/* the window's new rkey */
};

/**
 * struct send_opcode - how to post one opcode
 * @kind: an enum send_kind
 * @qp_types: QPT_* bits (post.c) of the QP types it may be posted to
 * @ex: an enum send_ex
 * @inline_ok: data may be given inline (it is the source, not a target)
 */
struct send_opcode {
	uint8_t kind;
	uint8_t qp_types;
	uint8_t ex;
	bool inline_ok;
};

/* A QP type's QPT_* bit; 0 for a type that cannot send. */
unsigned int sroce_qpt_bit(enum ibv_qp_type type);
const struct send_opcode *sroce_send_opcode(enum ibv_qp_type type,
					    enum ibv_wr_opcode opcode);

/*
 * The opcode-specific part of a send entry, as post_send and the ibv_wr_*()
 * builders both fill it in.
 */
static inline void wqe_set_ud(struct sroce_send_wqe *wqe, struct ibv_ah *ah,
			      uint32_t remote_qpn, uint32_t remote_qkey)
{
	wqe->wr.ud.ah_num = to_sah(ah)->ah_num;
	wqe->wr.ud.remote_qpn = remote_qpn;
	wqe->wr.ud.remote_qkey = remote_qkey;
}

static inline void wqe_set_rdma(struct sroce_send_wqe *wqe,
				uint64_t remote_addr, uint32_t rkey)
{
	wqe->wr.rdma.remote_addr = remote_addr;
	wqe->wr.rdma.rkey = rkey;
}

static inline void wqe_set_atomic(struct sroce_send_wqe *wqe,
				  uint64_t remote_addr, uint64_t compare_add,
				  uint64_t swap, uint32_t rkey)
{
	wqe->wr.atomic.remote_addr = remote_addr;
	wqe->wr.atomic.compare_add = compare_add;
	wqe->wr.atomic.swap = swap;
	wqe->wr.atomic.rkey = rkey;
}

static inline void wqe_set_bind_mw(struct sroce_send_wqe *wqe,
				   const struct ibv_mw *mw,
				   const struct ibv_mw_bind_info *info)
{
	wqe->wr.bind_mw.addr = info->addr;
	wqe->wr.bind_mw.length = info->length;
	wqe->wr.bind_mw.mw_rkey = mw->rkey;
	wqe->wr.bind_mw.mr_lkey = info->mr ? info->mr->lkey : 0;
	wqe->wr.bind_mw.access = info->mw_access_flags;
}

/*
 * Posting to the send queue before RTS is an immediate error, and so is
 * posting receives in RESET (IBA 10.3.1, QP state table). libibverbs keeps
 * ibqp->state as of the last modify or query; a transition the kernel
 * makes on its own (to SQE or ERR) is not seen here, and the kernel
 * flushes what is posted then.
 */
static inline bool qp_can_send(const struct ibv_qp *ibqp)
{
	return ibqp->state != IBV_QPS_RESET && ibqp->state != IBV_QPS_INIT &&
	       ibqp->state != IBV_QPS_RTR;
}

/* The end of a post to the SQ: publish, unlock, ring the doorbell. */
int sroce_sq_publish_unlock(struct sroce_qp *qp, bool posted);

int sroce_post_send(struct ibv_qp *ibqp, struct ibv_send_wr *wr,
		    struct ibv_send_wr **bad_wr);
int sroce_post_recv(struct ibv_qp *ibqp, struct ibv_recv_wr *wr,
		    struct ibv_recv_wr **bad_wr);
int sroce_post_srq_recv(struct ibv_srq *ibsrq, struct ibv_recv_wr *wr,
			struct ibv_recv_wr **bad_wr);
int sroce_bind_mw(struct ibv_qp *ibqp, struct ibv_mw *mw,
		  struct ibv_mw_bind *bind);

#endif /* SROCE_POST_H */
