/* SPDX-License-Identifier: GPL-2.0 OR Linux-OpenIB */
/*
 * libsroce: the rdma-core provider for sroce, a software RoCEv2 device.
 *
 * The kernel allocates every queue and the provider maps it; the layout of
 * a mapping is described in <rdma/sroce-abi.h>, shared with sroce.ko.
 *
 * What every file of the provider shares: its objects, the casts from the
 * libibverbs objects they embed, and how a create verb gives up. Each
 * file's own functions are declared in its own header.
 */
#ifndef SROCE_H
#define SROCE_H

#include <errno.h>
#include <pthread.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>

#include <infiniband/driver.h>
#include <infiniband/kern-abi.h>
#include <rdma/sroce-abi.h>
#include <kernel-abi/sroce-abi.h>

/*
 * Where the libibverbs that loaded the provider looks for VERBS_QP_EX in a
 * struct verbs_qp (see Documentation/provider.md).
 */
enum sroce_qp_ex_abi {
	/* Neither place below: no ibv_qp_ex is offered. */
	SROCE_QP_EX_NONE,
	/* verbs_qp.comp_mask of these headers: all of ibv_qp_ex is ours. */
	SROCE_QP_EX_FULL,
	/*
	 * rdma-core before 45, whose struct ibv_qp_ex ends before wr_flush:
	 * its comp_mask lies where these headers put wr_flush.
	 */
	SROCE_QP_EX_NO_FLUSH,
};

struct sroce_device {
	struct verbs_device	ibv_dev;
};

struct sroce_context {
	struct verbs_context	ibv_ctx;
	/* Both as the kernel reported them at context creation. */
	uint32_t		queue_data_offset;
	uint32_t		max_inline_data;
	enum sroce_qp_ex_abi	qp_ex_abi;
};

struct sroce_pd {
	struct ibv_pd		ibv_pd;
	uint32_t		pdn;
};

struct sroce_ah {
	struct ibv_ah		ibv_ah;
	uint32_t		ah_num;
};

/**
 * struct sroce_ring - one queue mapped from the kernel
 * @hdr: start of the mapping; NULL when the queue is absent
 * @data: first entry
 * @map_size: length of the mapping
 * @num_entries: slots, a power of two
 * @mask: @num_entries - 1
 * @entry_size: bytes per slot
 * @index: this side's private copy of the index it owns (consumer of a
 *	   CQ, producer of a work queue); published to @hdr with a release
 *	   store and never read back from the shared page
 *
 * Every slot address is @data + (i & @mask) * @entry_size; the ring was
 * mapped only after checking that all such slots lie inside the mapping.
 */
struct sroce_ring {
	struct sroce_queue_hdr	*hdr;
	uint8_t			*data;
	size_t			map_size;
	uint32_t		num_entries;
	uint32_t		mask;
	uint32_t		entry_size;
	uint32_t		index;
};

struct sroce_cq {
	struct verbs_cq		vcq;
	/* Serialises pollers and resize: protects ring and cur. */
	pthread_spinlock_t	lock;
	struct sroce_ring	ring;
	/* The completion ibv_start_poll()/ibv_next_poll() took, copied. */
	struct sroce_cqe	cur;
};

/**
 * struct sroce_wq - a work queue the provider produces into
 * @lock: serialises posters, and an SRQ's resize; protects @ring, @room
 *	  and, for an SRQ, @max_wr
 * @ring: the mapped ring; an SRQ's is replaced by a resize, and is absent
 *	  if mapping the new one failed
 * @room: slots known to be free, a lower bound: the kernel's consumer
 *	  index only moves forward, so it is read again only when this runs
 *	  out
 * @max_wr: work requests that may be outstanding, as the kernel reported
 * @max_sge: scatter/gather entries of one work request, as reported
 * @max_inline: inline bytes of one send work request, as reported
 *
 * The three limits are checked against the ring when it is mapped: no
 * more than num_entries outstanding, and whatever a work request may carry
 * fits in one entry. A post within them never writes past its slot.
 */
struct sroce_wq {
	pthread_spinlock_t	lock;
	struct sroce_ring	ring;
	uint32_t		room;
	uint32_t		max_wr;
	uint32_t		max_sge;
	uint32_t		max_inline;
};

struct send_opcode;

/**
 * struct sroce_wr_batch - an ibv_wr_start() ... ibv_wr_complete() batch
 * @start: the SQ's private producer index at wr_start()
 * @room: the SQ's count of free slots then
 * @err: the first error; the builders ignore what follows it, and
 *	 wr_complete() returns it and posts nothing
 * @wqe: the entry the last builder began, in its ring slot (unpublished);
 *	 NULL before the first builder and after an error
 * @op: how that entry's opcode is posted
 * @missing: WR_NEED_* bits: what that entry still lacks
 *
 * The SQ's lock is held from wr_start() to wr_complete() or wr_abort().
 */
struct sroce_wr_batch {
	uint32_t		start;
	uint32_t		room;
	int			err;
	struct sroce_send_wqe	*wqe;
	const struct send_opcode *op;
	uint32_t		missing;
};

/*
 * rdma-core 45 grew struct ibv_qp_ex (wr_flush) without changing the
 * private ABI, so libibverbs 44.0 keeps verbs_qp.comp_mask and .xrcd eight
 * bytes before where these headers do: where they put wr_flush. The
 * provider touches those fields only as sroce_context.qp_ex_abi says; see
 * Documentation/provider.md.
 */
struct sroce_qp {
	struct verbs_qp		vqp;
	struct sroce_wq		sq;
	/* Absent (ring.hdr NULL) on an SRQ and on an XRC send QP. */
	struct sroce_wq		rq;
	/* IBV_SEND_SIGNALED if the QP was created with sq_sig_all, else 0. */
	uint32_t		sq_signal;
	struct sroce_wr_batch	batch;
};

struct sroce_srq {
	struct verbs_srq	vsrq;
	struct sroce_wq		rq;
	uint32_t		srq_num;
};

static inline struct sroce_context *to_sctx(struct ibv_context *ibctx)
{
	return container_of(ibctx, struct sroce_context, ibv_ctx.context);
}

static inline struct sroce_device *to_sdev(struct ibv_device *ibdev)
{
	return container_of(ibdev, struct sroce_device, ibv_dev.device);
}

static inline struct sroce_pd *to_spd(struct ibv_pd *ibpd)
{
	return container_of(ibpd, struct sroce_pd, ibv_pd);
}

static inline struct sroce_ah *to_sah(struct ibv_ah *ibah)
{
	return container_of(ibah, struct sroce_ah, ibv_ah);
}

static inline struct sroce_cq *to_scq(struct ibv_cq *ibcq)
{
	return container_of(ibcq, struct sroce_cq, vcq.cq);
}

static inline struct sroce_cq *ex_to_scq(struct ibv_cq_ex *ibcq)
{
	return container_of(ibcq, struct sroce_cq, vcq.cq_ex);
}

static inline struct sroce_qp *to_sqp(struct ibv_qp *ibqp)
{
	return container_of(ibqp, struct sroce_qp, vqp.qp);
}

static inline struct sroce_qp *ex_to_sqp(struct ibv_qp_ex *ibqp)
{
	return container_of(ibqp, struct sroce_qp, vqp.qp_ex);
}

static inline struct sroce_srq *to_ssrq(struct ibv_srq *ibsrq)
{
	return container_of(ibsrq, struct sroce_srq, vsrq.srq);
}

/*
 * A create verb gives up: free the provider's @obj (the kernel has no
 * object for it, or has destroyed it again) and report @err in errno.
 * Return: NULL, for the verb to return.
 */
static inline void *sroce_create_failed(void *obj, int err)
{
	free(obj);
	errno = err;
	return NULL;
}

#endif /* SROCE_H */
