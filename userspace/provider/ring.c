// SPDX-License-Identifier: GPL-2.0 OR Linux-OpenIB
/*
 * libsroce: the rings shared with the kernel. Every queue is allocated by
 * the kernel and mapped here, at the offset its create (or resize)
 * response gives, on the context's command fd; a work queue takes the
 * limits the kernel reported only if they fit its ring.
 */
#include <config.h>

#include <errno.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "ring.h"

/*
 * Check what the kernel says about a queue before trusting it with an
 * address: a power-of-two ring of entries at least @min_entry bytes, all
 * inside a mapping of the announced size.
 */
static int ring_check(const struct sroce_queue_info *info,
		      uint32_t data_offset, size_t min_entry)
{
	uint32_t n = info->num_entries;
	uint64_t need;

	if (!n || (n & (n - 1)) || n > (1U << 31))
		return EINVAL;
	if (info->entry_size < min_entry || info->entry_size % 64)
		return EINVAL;
	need = data_offset + (uint64_t)n * info->entry_size;
	if (info->mmap_size < need || info->mmap_size > SIZE_MAX)
		return EINVAL;
	return 0;
}

/*
 * Map one queue. A queue the kernel did not allocate (mmap_size 0) is
 * left absent with ring->hdr NULL.
 */
int sroce_ring_map(struct sroce_ring *ring, struct ibv_context *ibctx,
		   const struct sroce_queue_info *info, size_t min_entry)
{
	uint32_t data_offset = to_sctx(ibctx)->queue_data_offset;
	void *map;
	int ret;

	memset(ring, 0, sizeof(*ring));
	if (!info->mmap_size)
		return 0;

	ret = ring_check(info, data_offset, min_entry);
	if (ret)
		return ret;

	map = mmap(NULL, info->mmap_size, PROT_READ | PROT_WRITE, MAP_SHARED,
		   ibctx->cmd_fd, info->mmap_offset);
	if (map == MAP_FAILED)
		return errno;

	ring->hdr = map;
	ring->data = (uint8_t *)map + data_offset;
	ring->map_size = info->mmap_size;
	ring->num_entries = info->num_entries;
	ring->mask = info->num_entries - 1;
	ring->entry_size = info->entry_size;
	return 0;
}

void sroce_ring_unmap(struct sroce_ring *ring)
{
	if (ring->hdr)
		munmap(ring->hdr, ring->map_size);
	memset(ring, 0, sizeof(*ring));
}

/* A work queue ring starts where the kernel says its producer is. */
int sroce_wq_map(struct sroce_wq *wq, struct ibv_context *ibctx,
		 const struct sroce_queue_info *info, size_t min_entry)
{
	int ret;

	ret = sroce_ring_map(&wq->ring, ibctx, info, min_entry);
	if (ret)
		return ret;
	if (wq->ring.hdr)
		wq->ring.index = ring_load_acquire(&wq->ring.hdr->producer);
	pthread_spin_init(&wq->lock, PTHREAD_PROCESS_PRIVATE);
	return 0;
}

/*
 * Adopt the limits the kernel reported for a mapped work queue, after
 * checking them against the ring: at most one request per slot
 * outstanding, and the largest scatter list or inline payload within one
 * entry past its @hdr_size header (ring_check() made the entry at least
 * that large).
 */
int sroce_wq_set_limits(struct sroce_wq *wq, size_t hdr_size,
			uint32_t max_wr, uint32_t max_sge, uint32_t max_inline)
{
	size_t room = wq->ring.entry_size - hdr_size;

	if (max_wr > wq->ring.num_entries ||
	    max_sge > room / sizeof(struct sroce_sge) || max_inline > room)
		return EINVAL;
	wq->max_wr = max_wr;
	wq->max_sge = max_sge;
	wq->max_inline = max_inline;
	return 0;
}

void sroce_wq_unmap(struct sroce_wq *wq)
{
	sroce_ring_unmap(&wq->ring);
	pthread_spin_destroy(&wq->lock);
}

/*
 * The slot for the next entry, or NULL when max_wr requests are
 * outstanding. Called with wq->lock held. The kernel's consumer index is
 * read only when the free slots counted last time are used up; the acquire
 * orders the kernel's reads of the slots it gave back before our writes.
 */
void *sroce_wq_next_slot(struct sroce_wq *wq)
{
	uint32_t used;

	if (!wq->room) {
		used = wq->ring.index -
		       ring_load_acquire(&wq->ring.hdr->consumer);
		/* A consumer ahead of the producer is nonsense: no room. */
		wq->room = used < wq->max_wr ? wq->max_wr - used : 0;
		if (!wq->room)
			return NULL;
	}
	return ring_slot(&wq->ring, wq->ring.index);
}

/*
 * The doorbell, rung as rdma-core's rxe provider rings the kernel: the
 * queue's uverbs POST_* command with no work request in it. wqe_size must
 * still be a plausible size of one work request.
 */
static const struct {
	uint32_t command;
	uint32_t wqe_size;
} doorbells[] = {
	[SROCE_DOORBELL_SQ] = { IB_USER_VERBS_CMD_POST_SEND,
				sizeof(struct ib_uverbs_send_wr) },
	[SROCE_DOORBELL_RQ] = { IB_USER_VERBS_CMD_POST_RECV,
				sizeof(struct ib_uverbs_recv_wr) },
	[SROCE_DOORBELL_SRQ] = { IB_USER_VERBS_CMD_POST_SRQ_RECV,
				 sizeof(struct ib_uverbs_recv_wr) },
};

/*
 * The three commands are laid out alike: the response's address, the
 * QP's or SRQ's handle, two counts (0 in a doorbell) and wqe_size, and
 * the same 4-byte response. So POST_SEND's struct serves all three.
 */
#define POST_LIKE_SEND(cmd, handle, resp)				\
	static_assert(sizeof(struct cmd) == sizeof(struct ibv_post_send) && \
		      offsetof(struct cmd, response) ==			\
		      offsetof(struct ibv_post_send, response) &&	\
		      offsetof(struct cmd, handle) ==			\
		      offsetof(struct ibv_post_send, qp_handle) &&	\
		      offsetof(struct cmd, wqe_size) ==			\
		      offsetof(struct ibv_post_send, wqe_size) &&	\
		      sizeof(struct resp) ==				\
		      sizeof(struct ib_uverbs_post_send_resp), #cmd)
POST_LIKE_SEND(ibv_post_recv, qp_handle, ib_uverbs_post_recv_resp);
POST_LIKE_SEND(ibv_post_srq_recv, srq_handle,
	       ib_uverbs_post_srq_recv_resp);

int sroce_doorbell(struct ibv_context *ibctx, enum sroce_doorbell queue,
		   uint32_t handle)
{
	struct ib_uverbs_post_send_resp resp;
	struct ibv_post_send cmd = {
		.hdr = {
			.command = doorbells[queue].command,
			.in_words = sizeof(cmd) / 4,
			.out_words = sizeof(resp) / 4,
		},
	};
	ssize_t ret;

	cmd.response = (uintptr_t)&resp;
	cmd.qp_handle = handle;		/* srq_handle of POST_SRQ_RECV */
	cmd.wqe_size = doorbells[queue].wqe_size;
	ret = write(ibctx->cmd_fd, &cmd, sizeof(cmd));
	if (ret == (ssize_t)sizeof(cmd))
		return 0;
	return ret < 0 ? errno : EIO;
}
