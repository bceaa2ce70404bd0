/* SPDX-License-Identifier: GPL-2.0 OR Linux-OpenIB */
#ifndef SROCE_QUEUE_H
#define SROCE_QUEUE_H

#include <linux/types.h>
#include <rdma/ib_verbs.h>
#include <rdma/sroce-abi.h>

struct sroce_mmap_entry;

/**
 * enum sroce_queue_side - which index of a queue userspace owns
 * @SROCE_QUEUE_KERNEL: both ends in the kernel (kernel consumers)
 * @SROCE_QUEUE_USER_PRODUCER: userspace posts, the kernel consumes (SQ, RQ, SRQ)
 * @SROCE_QUEUE_USER_CONSUMER: the kernel posts, userspace consumes (CQ)
 */
enum sroce_queue_side {
	SROCE_QUEUE_KERNEL,
	SROCE_QUEUE_USER_PRODUCER,
	SROCE_QUEUE_USER_CONSUMER,
};

/**
 * struct sroce_queue - a ring of fixed-size entries, maybe shared by mmap
 * @hdr: start of the buffer; the indices userspace sees
 * @data: first entry
 * @num_entries: slots, a power of two
 * @entry_size: bytes per slot
 * @side: which index userspace writes
 * @prod: the kernel's own producer index, when the kernel produces
 * @cons: the kernel's own consumer index, when the kernel consumes
 * @mentry: mmap entry of a user queue; it owns the buffer, see queue.c
 *
 * An index the kernel owns is kept in @prod or @cons and copied to @hdr for
 * userspace to read; it is never read back from @hdr. An index userspace
 * owns is read from @hdr and checked on every read. Callers serialise the
 * producer side and the consumer side each with a lock of their object.
 */
struct sroce_queue {
	struct sroce_queue_hdr *hdr;
	void *data;
	u32 num_entries;
	u32 entry_size;
	enum sroce_queue_side side;
	u32 prod;
	u32 cons;
	struct sroce_mmap_entry *mentry;
};

/**
 * struct sroce_queue_move - a resize's move of pending entries, in rounds
 * @start: the old ring's consumer index when the move began: that entry
 *	   goes to the new ring's index 0
 * @end: one past the last entry copied
 * @unlocked: entries sroce_queue_move_begin() copied, without the lock
 * @locked: entries sroce_queue_replace() copied, under it
 */
struct sroce_queue_move {
	u32 start;
	u32 end;
	u32 unlocked;
	u32 locked;
};

int sroce_queue_init(struct sroce_queue *q, u32 min_entries, u32 entry_size,
		     enum sroce_queue_side side);
int sroce_queue_publish(struct sroce_queue *q, struct ib_ucontext *uctx,
			struct sroce_queue_info *info);
void sroce_queue_cleanup(struct sroce_queue *q);
int sroce_queue_count(struct sroce_queue *q, u32 *count);
void *sroce_queue_head(struct sroce_queue *q);
void sroce_queue_pop(struct sroce_queue *q);
void *sroce_queue_tail(struct sroce_queue *q);
void sroce_queue_push(struct sroce_queue *q);
void sroce_queue_discard(struct sroce_queue *q);
int sroce_queue_move_begin(struct sroce_queue *from, struct sroce_queue *to,
			   struct sroce_queue_move *m);
int sroce_queue_replace(struct sroce_queue *q, struct sroce_queue *repl,
			struct sroce_queue_move *m);
int sroce_queue_mmap(struct ib_ucontext *uctx, struct vm_area_struct *vma);
void sroce_queue_mmap_free(struct rdma_user_mmap_entry *e);

/**
 * sroce_queue_load_index() - read an index the other side publishes
 * @index: the index in the queue header
 *
 * Return: its value; what the other side wrote before publishing it (the
 * entries it produced, or its reads of the entries it consumed) is ordered
 * before our accesses that follow.
 */
static inline u32 sroce_queue_load_index(const u32 *index)
{
	/* Pairs with the release store that published the index. */
	return smp_load_acquire(index);
}

/**
 * sroce_queue_slot() - the entry at a free-running index
 * @q: the queue
 * @index: any index; it is reduced modulo the ring size
 */
static inline void *sroce_queue_slot(struct sroce_queue *q, u32 index)
{
	return q->data + (size_t)(index & (q->num_entries - 1)) * q->entry_size;
}

#endif /* SROCE_QUEUE_H */
