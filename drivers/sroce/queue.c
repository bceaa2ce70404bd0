// SPDX-License-Identifier: GPL-2.0 OR Linux-OpenIB
/*
 * DOC: Shared queues
 *
 * Every work queue and completion queue is a ring of fixed-size entries in
 * vmalloc memory, laid out as include/uapi/rdma/sroce-abi.h describes. For a
 * user object the ring is mapped into the process through an
 * rdma_user_mmap_entry, so the provider posts and polls without a system
 * call; a kernel object uses the same ring privately.
 *
 * Lifetime: once a ring is published to userspace, its buffer belongs to
 * the mmap entry and is freed in sroce_queue_mmap_free(), when the object
 * was destroyed and no mmap() of it is still in progress. A mapping that
 * outlives the object (or the whole device, after a hot removal) stays
 * safe without holding the entry: remap_vmalloc_range() took a reference
 * on every page it mapped, so vfree() leaves those pages to the process
 * until it unmaps them. The VMAs deliberately hold no entry reference; the
 * RDMA core requires every entry to be gone when it frees the context.
 *
 * Trust: userspace may write anything, at any time, to the index it owns
 * and to every entry. The kernel keeps its own copy of the index it owns,
 * reads the other one once per operation and checks that the distance
 * between them fits the ring; an entry must be copied before it is
 * checked.
 */
#include <linux/log2.h>
#include <linux/mm.h>
#include <linux/slab.h>
#include <linux/vmalloc.h>

#include "queue.h"

/* Largest ring: above every queue limit (params.h). */
#define SROCE_QUEUE_MAX_ENTRIES		0x100000

/**
 * struct sroce_mmap_entry - a ring published to userspace
 * @rdma: the RDMA core's entry, keyed by mmap offset
 * @buf: the ring's vmalloc buffer, owned by this entry
 */
struct sroce_mmap_entry {
	struct rdma_user_mmap_entry rdma;
	void *buf;
};

static struct sroce_mmap_entry *to_mentry(struct rdma_user_mmap_entry *e)
{
	return container_of(e, struct sroce_mmap_entry, rdma);
}

static size_t queue_size(const struct sroce_queue *q)
{
	return PAGE_ALIGN(SROCE_QUEUE_DATA_OFFSET +
			  (size_t)q->num_entries * q->entry_size);
}

/**
 * sroce_queue_init() - allocate an empty ring
 * @q: the queue to set up
 * @min_entries: slots needed; rounded up to a power of two
 * @entry_size: bytes per slot, a multiple of 64
 * @side: which index userspace will own, if the ring is published
 *
 * Return: 0, -EINVAL for an impossible size or -ENOMEM.
 */
int sroce_queue_init(struct sroce_queue *q, u32 min_entries, u32 entry_size,
		     enum sroce_queue_side side)
{
	if (!entry_size || entry_size % 64 ||
	    min_entries > SROCE_QUEUE_MAX_ENTRIES)
		return -EINVAL;

	memset(q, 0, sizeof(*q));
	q->num_entries = roundup_pow_of_two(max(min_entries, 1U));
	q->entry_size = entry_size;
	q->side = side;
	q->hdr = vmalloc_user(queue_size(q));
	if (!q->hdr)
		return -ENOMEM;
	q->data = (void *)q->hdr + SROCE_QUEUE_DATA_OFFSET;
	return 0;
}

/**
 * sroce_queue_publish() - make a ring mappable by a user context
 * @q: an initialised queue
 * @uctx: the context whose process will map it
 * @info: filled with what the provider needs to map it
 *
 * On success the buffer belongs to the mmap entry; see the DOC above.
 *
 * Return: 0 or a negative errno.
 */
int sroce_queue_publish(struct sroce_queue *q, struct ib_ucontext *uctx,
			struct sroce_queue_info *info)
{
	struct sroce_mmap_entry *entry;
	size_t size = queue_size(q);
	int err;

	entry = kzalloc(sizeof(*entry), GFP_KERNEL);
	if (!entry)
		return -ENOMEM;
	entry->buf = q->hdr;
	err = rdma_user_mmap_entry_insert(uctx, &entry->rdma, size);
	if (err) {
		kfree(entry);
		return err;
	}
	q->mentry = entry;

	info->mmap_offset = rdma_user_mmap_get_offset(&entry->rdma);
	info->mmap_size = size;
	info->num_entries = q->num_entries;
	info->entry_size = q->entry_size;
	return 0;
}

/**
 * sroce_queue_cleanup() - give up a ring
 * @q: the queue; it must not be used afterwards
 *
 * A published ring stays allocated until its last mapping goes away.
 */
void sroce_queue_cleanup(struct sroce_queue *q)
{
	if (q->mentry)
		rdma_user_mmap_entry_remove(&q->mentry->rdma);
	else
		vfree(q->hdr);
	q->hdr = NULL;
	q->data = NULL;
	q->mentry = NULL;
}

/*
 * The index a side owns comes from its private copy; the other side's
 * from the header, published with release semantics. A kernel queue's two
 * sides may run on different CPUs under different locks, so each side
 * reads the other's index from the header too.
 */
static void load_indices(struct sroce_queue *q, u32 *prod, u32 *cons)
{
	*prod = q->side == SROCE_QUEUE_USER_CONSUMER ? q->prod :
		sroce_queue_load_index(&q->hdr->producer);
	*cons = q->side == SROCE_QUEUE_USER_PRODUCER ? q->cons :
		sroce_queue_load_index(&q->hdr->consumer);
}

/**
 * sroce_queue_count() - entries posted and not yet consumed
 * @q: the queue
 * @count: set to the number of entries
 *
 * Return: 0, or -EOVERFLOW when an index written by userspace cannot be
 * right (more entries than slots); @count is then meaningless.
 */
int sroce_queue_count(struct sroce_queue *q, u32 *count)
{
	u32 prod, cons;

	load_indices(q, &prod, &cons);
	*count = prod - cons;
	return *count > q->num_entries ? -EOVERFLOW : 0;
}

/**
 * sroce_queue_head() - the oldest entry, for the consumer
 * @q: the queue; the caller holds the consumer-side lock
 *
 * Return: the entry, NULL when the queue is empty, or
 * ERR_PTR(-EOVERFLOW) when userspace corrupted its index. The entry may be
 * changed by userspace at any time: copy it before checking it.
 */
void *sroce_queue_head(struct sroce_queue *q)
{
	u32 count;
	int err;

	err = sroce_queue_count(q, &count);
	if (err)
		return ERR_PTR(err);
	return count ? sroce_queue_slot(q, q->cons) : NULL;
}

/**
 * sroce_queue_pop() - release the entry sroce_queue_head() returned
 * @q: the queue; the caller holds the consumer-side lock
 */
void sroce_queue_pop(struct sroce_queue *q)
{
	q->cons++;
	/* Our reads of the entry happen before the producer may reuse it. */
	smp_store_release(&q->hdr->consumer, q->cons);
}

/**
 * sroce_queue_tail() - the next free slot, for the producer
 * @q: the queue; the caller holds the producer-side lock
 *
 * Return: the slot, NULL when the queue is full, or ERR_PTR(-EOVERFLOW)
 * when userspace corrupted its index.
 */
void *sroce_queue_tail(struct sroce_queue *q)
{
	u32 count;
	int err;

	err = sroce_queue_count(q, &count);
	if (err)
		return ERR_PTR(err);
	return count < q->num_entries ? sroce_queue_slot(q, q->prod) : NULL;
}

/**
 * sroce_queue_push() - publish the slot sroce_queue_tail() returned
 * @q: the queue; the caller holds the producer-side lock
 *
 * The release store orders the entry's contents before the new index.
 */
void sroce_queue_push(struct sroce_queue *q)
{
	q->prod++;
	/* The entry's contents are visible before the new index. */
	smp_store_release(&q->hdr->producer, q->prod);
}

/**
 * sroce_queue_discard() - drop every posted entry (QP reset)
 * @q: a queue the kernel consumes; the caller holds both sides' locks
 */
void sroce_queue_discard(struct sroce_queue *q)
{
	u32 prod, cons;

	load_indices(q, &prod, &cons);
	q->cons = prod;
	/* As in sroce_queue_pop(). */
	smp_store_release(&q->hdr->consumer, q->cons);
}

/**
 * sroce_queue_move() - move the pending entries of a ring into a new one
 * @from: the ring being replaced; the caller holds both sides' locks, or
 *	  the kernel's side's lock and userspace was told not to touch it
 * @to: an empty ring with entries of the same size
 *
 * The entries posted and not yet consumed are copied, oldest first, to
 * indices 0, 1, ... of @to, whose producer index then counts them and
 * whose consumer index is 0 (a resize, IBA 11.2.1.?, 11.2.3.3).
 *
 * Return: 0, or -EINVAL when they do not fit or an index userspace wrote
 * cannot be right.
 */
int sroce_queue_move(struct sroce_queue *from, struct sroce_queue *to)
{
	u32 prod, cons, count, i;

	load_indices(from, &prod, &cons);
	count = prod - cons;
	if (count > from->num_entries || count > to->num_entries ||
	    from->entry_size != to->entry_size)
		return -EINVAL;
	for (i = 0; i < count; i++)
		memcpy(sroce_queue_slot(to, i), sroce_queue_slot(from, cons + i),
		       to->entry_size);
	to->prod = count;
	to->cons = 0;
	/* The entries are in place before the indices that cover them. */
	smp_store_release(&to->hdr->producer, count);
	/* As above. */
	smp_store_release(&to->hdr->consumer, 0);
	return 0;
}

/**
 * sroce_queue_replace() - put a new ring in place of a queue's
 * @q: the queue; the caller holds what sroce_queue_move() asks for
 * @repl: an empty ring with entries of the same size; on success it holds
 *	  the old ring instead, and on failure it is unchanged: either way,
 *	  the caller frees it
 *
 * The pending entries move first (sroce_queue_move()).
 *
 * Return: 0, or -EINVAL as sroce_queue_move().
 */
int sroce_queue_replace(struct sroce_queue *q, struct sroce_queue *repl)
{
	int err = sroce_queue_move(q, repl);

	if (!err)
		swap(*q, *repl);
	return err;
}

/**
 * sroce_queue_mmap() - ib_device_ops.mmap: map a published ring
 * @uctx: the user context
 * @vma: the mapping; its offset selects the ring, its length must match
 *
 * Return: 0 or a negative errno.
 */
int sroce_queue_mmap(struct ib_ucontext *uctx, struct vm_area_struct *vma)
{
	struct rdma_user_mmap_entry *e;
	int err;

	e = rdma_user_mmap_entry_get(uctx, vma);
	if (!e)
		return -EINVAL;
	err = remap_vmalloc_range(vma, to_mentry(e)->buf, 0);
	rdma_user_mmap_entry_put(e);
	return err;
}

/**
 * sroce_queue_mmap_free() - ib_device_ops.mmap_free: free a ring
 * @e: the entry whose last reference went away
 */
void sroce_queue_mmap_free(struct rdma_user_mmap_entry *e)
{
	struct sroce_mmap_entry *entry = to_mentry(e);

	vfree(entry->buf);
	kfree(entry);
}
