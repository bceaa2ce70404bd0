/* SPDX-License-Identifier: GPL-2.0 OR Linux-OpenIB */
/*
 * libsroce: the rings shared with the kernel (ring.c).
 *
 * The layout of a ring and the doorbell protocol are defined in
 * <rdma/sroce-abi.h>. The small helpers every post and poll runs are
 * inline here; mapping, the limits a work queue may adopt, and the
 * doorbell are in ring.c.
 */
#ifndef SROCE_RING_H
#define SROCE_RING_H

#include <stdatomic.h>
#include <stdbool.h>

#include "sroce.h"

static inline uint32_t ring_load_acquire(const uint32_t *p)
{
	return atomic_load_explicit((_Atomic(uint32_t) *)p,
				    memory_order_acquire);
}

static inline void ring_store_release(uint32_t *p, uint32_t val)
{
	atomic_store_explicit((_Atomic(uint32_t) *)p, val,
			      memory_order_release);
}

static inline void *ring_slot(const struct sroce_ring *ring, uint32_t index)
{
	return ring->data + (size_t)(index & ring->mask) * ring->entry_size;
}

static inline void wq_advance(struct sroce_wq *wq)
{
	wq->ring.index++;
	wq->room--;
}

/*
 * Make the entries written so far visible: one release store of the
 * producer index for however many entries. Called with wq->lock held.
 */
static inline void wq_publish(struct sroce_wq *wq)
{
	ring_store_release(&wq->ring.hdr->producer, wq->ring.index);
}

/*
 * After wq_publish(): does the kernel need a doorbell? The kernel sets
 * NEED_WAKEUP, then issues a full barrier and looks at the producer index
 * a last time before it goes idle; we store the producer index, then issue
 * a full barrier and look at the flag. With both barriers at least one
 * side sees the other's store, so a post is never left unnoticed.
 */
static inline bool wq_needs_doorbell(struct sroce_wq *wq)
{
	atomic_thread_fence(memory_order_seq_cst);
	return atomic_load_explicit((_Atomic(uint32_t) *)&wq->ring.hdr->flags,
				    memory_order_relaxed) &
	       SROCE_QUEUE_NEED_WAKEUP;
}

int sroce_ring_map(struct sroce_ring *ring, struct ibv_context *ibctx,
		   const struct sroce_queue_info *info, size_t min_entry);
void sroce_ring_unmap(struct sroce_ring *ring);

int sroce_wq_map(struct sroce_wq *wq, struct ibv_context *ibctx,
		 const struct sroce_queue_info *info, size_t min_entry);
int sroce_wq_set_limits(struct sroce_wq *wq, size_t hdr_size,
			uint32_t max_wr, uint32_t max_sge, uint32_t max_inline);
void sroce_wq_unmap(struct sroce_wq *wq);
void *sroce_wq_next_slot(struct sroce_wq *wq);

/* The queues that ring the kernel, by the uverbs command they ring with. */
enum sroce_doorbell {
	SROCE_DOORBELL_SQ,	/* a QP's send queue: POST_SEND */
	SROCE_DOORBELL_RQ,	/* a QP's receive queue: POST_RECV */
	SROCE_DOORBELL_SRQ,	/* an SRQ: POST_SRQ_RECV */
};

int sroce_doorbell(struct ibv_context *ibctx, enum sroce_doorbell queue,
		   uint32_t handle);

#endif /* SROCE_RING_H */
