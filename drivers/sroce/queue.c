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
 * safe without holding the entry: the mapping took a reference on every
 * page it mapped (vm_insert_page()), so vfree() leaves those pages to the
 * process until it unmaps them. The VMAs deliberately hold no entry
 * reference; the RDMA core requires every entry to be gone when it frees
 * the context.
 *
 * Memory: a ring is charged to the memory cgroup of the process that
 * creates its object (__GFP_ACCOUNT), as the pages of a socket buffer
 * are, so that a process cannot take more of the host through sroce than
 * its cgroup allows. A ring may be 16 MiB (a CQ of SROCE_MAX_CQE entries).
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

#include "params.h"
#include "queue.h"

/* Largest ring: above every queue limit (params.h). */
#define SROCE_QUEUE_MAX_ENTRIES		0x100000
/* Rounds of a move without the lock (sroce_queue_move_begin()). */
#define SROCE_QUEUE_MOVE_ROUNDS		4

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
	q->hdr = __vmalloc(queue_size(q), SROCE_GFP_USER_OBJ | __GFP_ZERO);
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

/* Both indices as published in the header: readable without the locks. */
static void load_published(const struct sroce_queue *q, u32 *prod, u32 *cons)
{
	*prod = sroce_queue_load_index(&q->hdr->producer);
	*cons = sroce_queue_load_index(&q->hdr->consumer);
}

/*
 * Copy the entries of @from from @m->end up to @prod into @to, skipping
 * those consumed (before @cons): entry i goes to @to's index i - @m->start.
 * The caller checked that @prod - @cons fits @from; a @prod behind what
 * was copied (userspace went back) copies nothing. Returns how many
 * entries it copied.
 */
static u32 copy_pending(struct sroce_queue *from, struct sroce_queue *to,
			struct sroce_queue_move *m, u32 prod, u32 cons)
{
	u32 i, n;

	if ((s32)(cons - m->end) > 0)
		m->end = cons;
	if ((s32)(prod - m->end) <= 0)
		return 0;
	n = prod - m->end;
	for (i = m->end; i != prod; i++)
		memcpy(sroce_queue_slot(to, i - m->start), sroce_queue_slot(from, i),
		       to->entry_size);
	m->end = prod;
	return n;
}

/**
 * sroce_queue_move_begin() - copy a queue's pending entries into a new ring
 * @from: the ring being replaced; the caller holds none of its locks
 * @to: an empty ring with entries of the same size
 * @m: the move's state, for sroce_queue_replace()
 *
 * A resize (IBA chapter 11's Resize CQ and Modify SRQ verbs) moves the
 * entries posted and not yet consumed into a new ring, and a ring may hold
 * 16 MiB: copied under the object's lock, with interrupts off, that would
 * stop a CPU for as long. So the bulk is copied here, without the lock, in
 * a few rounds that catch up with what was posted meanwhile;
 * sroce_queue_replace() copies the rest under the lock. It may: an entry
 * posted and not consumed stays as it is until consumed (the consumer only
 * moves past entries, and the producer writes only free slots), so a copy
 * of it stays right; one consumed meanwhile, even torn by the producer
 * reusing its slot, is not taken over. The contents of a user ring are the
 * process's to write at any time, as ever: nothing in them is trusted.
 *
 * Return: 0, or -EINVAL when the entry sizes differ or an index userspace
 * wrote cannot be right.
 */
int sroce_queue_move_begin(struct sroce_queue *from, struct sroce_queue *to,
			   struct sroce_queue_move *m)
{
	u32 prod, cons;
	int round;

	if (from->entry_size != to->entry_size)
		return -EINVAL;
	load_published(from, &prod, &cons);
	m->start = cons;
	m->end = cons;
	m->unlocked = 0;
	m->locked = 0;
	for (round = 0; round < SROCE_QUEUE_MOVE_ROUNDS; round++) {
		if (prod - cons > from->num_entries ||
		    (s32)(cons - m->start) < 0)
			return -EINVAL;
		if (prod == m->end)
			break;
		m->unlocked += copy_pending(from, to, m, prod, cons);
		cond_resched();
		load_published(from, &prod, &cons);
	}
	return 0;
}

/**
 * sroce_queue_replace() - put a new ring in place of a queue's
 * @q: the queue; the caller holds both sides' locks, or the kernel's
 *     side's lock and userspace was told not to touch it
 * @repl: the ring sroce_queue_move_begin() filled; on success it holds
 *	  the old ring instead, and on failure it is unchanged: either way,
 *	  the caller frees it
 * @m: the move's state
 *
 * The entries posted since sroce_queue_move_begin() looked are copied
 * too; the new ring's indices keep the distance between the old ones.
 *
 * Return: 0, or -EINVAL when the pending entries do not fit or an index
 * userspace wrote cannot be right.
 */
int sroce_queue_replace(struct sroce_queue *q, struct sroce_queue *repl,
			struct sroce_queue_move *m)
{
	u32 prod, cons;

	load_indices(q, &prod, &cons);
	if (prod - cons > q->num_entries || prod - cons > repl->num_entries ||
	    (s32)(cons - m->start) < 0)
		return -EINVAL;
	m->locked = copy_pending(q, repl, m, prod, cons);
	repl->prod = prod - m->start;
	repl->cons = cons - m->start;
	/* The entries are in place before the indices that cover them. */
	smp_store_release(&repl->hdr->producer, repl->prod);
	/* As above. */
	smp_store_release(&repl->hdr->consumer, repl->cons);
	swap(*q, *repl);
	return 0;
}

/*
 * Map a ring's pages into @vma, whose length the entry lookup checked
 * against the ring's, page by page, each referenced by the mapping (see
 * the DOC above); as remap_vmalloc_range() would, but that one wants
 * memory from vmalloc_user(), which cannot be charged to a cgroup.
 */
static int map_ring(struct vm_area_struct *vma, void *buf)
{
	unsigned long off;
	int err;

	for (off = 0; off < vma->vm_end - vma->vm_start; off += PAGE_SIZE) {
		err = vm_insert_page(vma, vma->vm_start + off,
				     vmalloc_to_page(buf + off));
		if (err)
			return err;
	}
	vm_flags_set(vma, VM_DONTEXPAND | VM_DONTDUMP);
	return 0;
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
	err = map_ring(vma, to_mentry(e)->buf);
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
