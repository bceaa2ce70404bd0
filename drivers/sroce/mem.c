// SPDX-License-Identifier: GPL-2.0 OR Linux-OpenIB
/*
 * DOC: Memory access
 *
 * The data path reaches registered memory only through this file (sgl.c
 * walks a local scatter/gather list through it). A key is looked up in
 * the device's key table (key.c) under the table's lock and the
 * MR is referenced for the duration of one access; deregistration
 * unpublishes the key and waits for those references (mr.c). Every access
 * is checked first (IBA 10.6.3: the MR's PD is the QP's, its
 * rights include the access, and the range lies inside the MR), so memory
 * outside an MR is never touched, whatever a peer or a process asks.
 *
 * User MRs are reached page by page through the pinned pages of their
 * umem; the DMA MR of a kernel PD is kernel virtual memory, and so are the
 * pages of a fast-registration MR (sroce uses the RDMA core's virtual DMA
 * mapping, so a "DMA address" is a kernel address). A remote key may also
 * name a memory window (mw.c), which maps part of an MR.
 *
 * An on-demand paged MR's pages are reached through its own table, under
 * its reg_lock; a page not mapped ends the access with -EFAULT, for the
 * engine to fault it in and try again (odp.c).
 *
 * A packet's payload from a user MR may go out without a copy: the pages
 * themselves are attached to the packet as fragments, each referenced
 * until the packet is freed (sroce_mem_attach()), so that a deregistration
 * meanwhile frees nothing the packet still points at.
 */
#include <linux/highmem.h>
#include <linux/overflow.h>

#include "device.h"
#include "fault.h"
#include "key.h"
#include "mem.h"
#include "mr.h"
#include "mw.h"
#include "odp.h"

/**
 * sroce_mem_get_local() - check a local access and find its MR
 * @sdev: the device
 * @pd: the PD of the QP (or the caller) making the access
 * @lkey: the SGE's key
 * @iova: first byte
 * @len: bytes
 * @access: the IB_ACCESS_LOCAL_WRITE right, or 0 for a read
 * @gen: set to the registration the access was checked against, for the
 *	 copy (sroce_mem_copy_in() and the others)
 *
 * The key and the check are taken under the key table's lock, as for a
 * remote access: an invalidation and a REG_MR (both under that lock) fall
 * wholly before or after it, so the check never reads a fast-registration
 * MR's translation half replaced (IBA 10.6.3).
 *
 * Context: process or softirq, interrupts enabled (the key table's lock
 * is taken with xa_lock_bh()).
 * Return: the MR, referenced, or NULL when the access is refused.
 */
struct sroce_mr *sroce_mem_get_local(struct sroce_dev *sdev, struct ib_pd *pd,
				     u32 lkey, u64 iova, u64 len, int access,
				     u32 *gen)
{
	struct sroce_mr *mr;

	xa_lock_bh(&sdev->keys);
	mr = sroce_key_get_mr_locked(sdev, lkey);
	if (mr && sroce_mr_check(mr, pd, iova, len, access)) {
		sroce_mr_put(mr);
		mr = NULL;
	} else if (mr) {
		*gen = mr->reg_gen;
	}
	xa_unlock_bh(&sdev->keys);
	return mr;
}

/**
 * sroce_mem_get_remote() - check a remote access and find its memory
 * @sdev: the device
 * @pd: the PD of the QP the request arrived on
 * @qpn: that QP
 * @rkey: the key the request carries: an MR's or a window's
 * @va: the address the request carries
 * @len: bytes; 0 checks the key alone, not a range (a FLUSH of a whole MR)
 * @access: the IB_ACCESS_REMOTE_* or IB_ACCESS_FLUSH_* rights needed
 * @iova: set to the address to access in the returned MR
 * @gen: set as by sroce_mem_get_local()
 *
 * Context: process or softirq, interrupts enabled (the key table's lock
 * is taken with xa_lock_bh()).
 * Return: the MR, referenced, or NULL when the access is refused (IBA
 * 9.4.1.1: unknown key, wrong PD or QP, missing right, out of range).
 */
struct sroce_mr *sroce_mem_get_remote(struct sroce_dev *sdev,
				      struct ib_pd *pd, u32 qpn, u32 rkey,
				      u64 va, u64 len, int access, u64 *iova,
				      u32 *gen)
{
	struct sroce_mr *mr = NULL;
	void *entry;

	xa_lock_bh(&sdev->keys);
	entry = xa_load(&sdev->keys, rkey >> 8);
	if (!entry)
		goto out;
	if (xa_pointer_tag(entry) == SROCE_KEY_MW) {
		mr = sroce_mw_access(xa_untag_pointer(entry), rkey, pd, qpn, va,
				     len, access, iova);
		/* The window checked the rest; the MR must still map it. */
		if (mr && sroce_mr_check(mr, mr->ibmr.pd, *iova, len, 0)) {
			sroce_mr_put(mr);
			mr = NULL;
		}
		goto out;
	}
	mr = sroce_key_get_mr_locked(sdev, rkey);
	if (mr && sroce_mr_check(mr, pd, va, len, access)) {
		sroce_mr_put(mr);
		mr = NULL;
	}
	*iova = va;
out:
	if (mr)
		*gen = mr->reg_gen;
	xa_unlock_bh(&sdev->keys);
	return mr;
}

/**
 * sroce_mem_invalidate() - LOCAL_INV, or a received SEND with Invalidate
 * @sdev: the device
 * @pd: the PD of the QP asking
 * @qpn: that QP
 * @rkey: the key to invalidate
 *
 * A fast-registration MR of the same PD, or a type 2 window bound through
 * this QP, can be invalidated (IBA 10.6.5, 10.6.7.2.5); nothing else.
 *
 * Context: process or softirq, interrupts enabled (the key table's lock
 * is taken with xa_lock_bh()).
 * Return: 0, or -EINVAL when the key cannot be invalidated.
 */
int sroce_mem_invalidate(struct sroce_dev *sdev, struct ib_pd *pd, u32 qpn,
			 u32 rkey)
{
	struct sroce_mr *mr;
	int err = -EINVAL;
	void *entry;

	xa_lock_bh(&sdev->keys);
	entry = xa_load(&sdev->keys, rkey >> 8);
	if (entry && xa_pointer_tag(entry) == SROCE_KEY_MW) {
		err = sroce_mw_invalidate(xa_untag_pointer(entry), rkey, pd,
					  qpn);
	} else if (entry) {
		mr = xa_untag_pointer(entry);
		if (mr->key == rkey && mr->type == SROCE_MR_FAST &&
		    mr->ibmr.pd == pd) {
			/* After an access's copy under way, before its next. */
			spin_lock(&mr->reg_lock);
			WRITE_ONCE(mr->valid, false);
			spin_unlock(&mr->reg_lock);
			err = 0;
		}
	}
	xa_unlock_bh(&sdev->keys);
	return err;
}

/*
 * A fast-registration MR's memory, under its reg_lock. The access was
 * checked against the registration current then (@gen), but the consumer
 * may invalidate and register the MR anew before the copy (a remote SEND
 * with Invalidate races the peer's own WRITE on another QP, then the
 * consumer registers its next buffer, and frees this one). Invalidation
 * and REG_MR take the same lock, so the translation read here is whole,
 * and nothing of a registration is touched once its invalidation has
 * returned: the access touches nothing unless the registration it was
 * checked against is still the valid one. Not the range alone: the next
 * registration may map other memory at the same addresses, or grant
 * other rights, and an access checked under the old key (an aborted I/O's
 * late WRITE) must not land in the next I/O's buffer.
 */
static void *map_fast(struct sroce_mr *mr, u32 gen, u64 iova, u32 len,
		      u32 *chunk)
{
	u64 ps, off, end;

	lockdep_assert_held(&mr->reg_lock);
	*chunk = len;
	if (!mr->valid || mr->reg_gen != gen) {
		sroce_fault_stale_access();
		return NULL;
	}
	if (iova < mr->reg_iova ||
	    check_add_overflow(iova, (u64)len, &end))
		return NULL;
	/* Pages of page_size from the page holding reg_iova on. */
	ps = mr->reg_page_size;
	off = iova - (mr->reg_iova & ~(ps - 1));
	*chunk = min_t(u64, len, ps - (off & (ps - 1)));
	if (iova + *chunk > mr->reg_iova + mr->reg_length ||
	    off / ps >= mr->reg_npages)
		return NULL;
	return (void *)(uintptr_t)(mr->reg_pages[off / ps] + (off & (ps - 1)));
}

/*
 * The page of user MR @mr that holds @iova; *@pgoff is @iova's offset in
 * it, *@chunk the bytes of [iova, iova + len) that lie there.
 */
static struct page *user_page(const struct sroce_mr *mr, u64 iova, u32 len,
			      unsigned int *pgoff, u32 *chunk)
{
	u64 off = iova - mr->ibmr.iova + (mr->umem->address & ~PAGE_MASK);

	*pgoff = off & ~PAGE_MASK;
	*chunk = min_t(u64, len, PAGE_SIZE - *pgoff);
	return mr->upages[off >> PAGE_SHIFT];
}

/*
 * Map the part of [iova, iova + len) that lies in one page of @mr, for
 * writing if @write; the caller has checked the range against
 * registration @gen. Returns the address and sets *chunk, or returns NULL
 * (*chunk set all the same) for a fast-registration MR that was
 * invalidated or registered anew since the check (map_fast()), or an
 * on-demand paged MR whose page is not mapped (or not for writing; *miss
 * is set then: a fault is needed, odp.c): the access then touches
 * nothing. Every map_chunk() is followed by an unmap_chunk(), NULL or
 * not: a fast-registration or ODP MR's reg_lock is held between the two
 * (sparse sees the other types take it too).
 */
static void *map_chunk(struct sroce_mr *mr, u32 gen, u64 iova, u32 len,
		       bool write, u32 *chunk, bool *miss)
	__acquires(&mr->reg_lock)
{
	unsigned int pgoff;
	struct page *page;
	void *p;

	if (mr->type == SROCE_MR_FAST) {
		sroce_fault_access_delay();
		spin_lock(&mr->reg_lock);
		return map_fast(mr, gen, iova, len, chunk);
	}
	if (mr->type == SROCE_MR_ODP) {
		spin_lock(&mr->reg_lock);
		p = sroce_odp_map(mr, iova, len, write, chunk);
		*miss = !p;
		return p;
	}
	__acquire(&mr->reg_lock);
	if (mr->type == SROCE_MR_DMA) {
		*chunk = len;
		return (void *)(uintptr_t)iova;
	}
	page = user_page(mr, iova, len, &pgoff, chunk);
	return kmap_local_page(page) + pgoff;
}

static void unmap_chunk(struct sroce_mr *mr, void *addr)
	__releases(&mr->reg_lock)
{
	if (mr->type == SROCE_MR_FAST) {
		spin_unlock(&mr->reg_lock);
		return;
	}
	if (mr->type == SROCE_MR_ODP) {
		if (addr)
			kunmap_local(addr);
		spin_unlock(&mr->reg_lock);
		return;
	}
	__release(&mr->reg_lock);
	if (mr->type == SROCE_MR_USER)
		kunmap_local(addr);
}

/*
 * One piece of an access: @p maps @chunk bytes of the MR, the access's
 * bytes from @done on (NULL: the registration changed, see map_chunk());
 * @last says it is the access's last piece.
 */
typedef void (*mem_step)(void *p, u32 done, u32 chunk, bool last, void *arg);

/*
 * Walk [iova, iova + len) of @mr one mapped piece at a time, for writing
 * if @write. Returns 0; -EACCES if a piece could not be mapped because
 * the registration changed (the steps were told: p NULL); or -EFAULT at
 * the first page of an ODP MR that is not mapped, where the walk stops:
 * the access is to be tried again once a fault mapped it.
 */
static __always_inline int mem_walk(struct sroce_mr *mr, u32 gen, u64 iova,
				    u32 len, bool write, mem_step step,
				    void *arg)
{
	bool mapped = true, miss = false;
	u32 chunk, done = 0;
	void *p;

	while (done < len) {
		p = map_chunk(mr, gen, iova + done, len - done, write, &chunk,
			      &miss);
		if (miss) {
			unmap_chunk(mr, p);
			return -EFAULT;
		}
		mapped &= !!p;
		step(p, done, chunk, done + chunk == len, arg);
		unmap_chunk(mr, p);
		done += chunk;
	}
	return mapped ? 0 : -EACCES;
}

/* Where packet data comes from: @skb at @off. */
struct skb_src {
	const struct sk_buff *skb;
	unsigned int off;
};

static void step_copy_in(void *p, u32 done, u32 chunk, bool last, void *arg)
{
	const struct skb_src *src = arg;
	unsigned int off = src->off + done;

	if (!p)
		return;
	if (!last) {
		skb_copy_bits(src->skb, off, p, chunk);
		return;
	}
	skb_copy_bits(src->skb, off, p, chunk - 1);
	smp_wmb();	/* the body before the last byte */
	skb_copy_bits(src->skb, off + chunk - 1, p + chunk - 1, 1);
}

static void step_copy_in_buf(void *p, u32 done, u32 chunk, bool last,
			     void *arg)
{
	if (p)
		memcpy(p, arg + done, chunk);
}

static void step_copy_out(void *p, u32 done, u32 chunk, bool last, void *arg)
{
	if (p)
		memcpy(arg + done, p, chunk);
	else
		memset(arg + done, 0, chunk);
}

/**
 * sroce_mem_copy_in() - copy packet data into an MR
 * @mr: the MR; the range was checked (sroce_mem_get_remote())
 * @gen: the registration it was checked against
 * @iova: destination
 * @skb: the packet
 * @off: offset of the data in @skb
 * @len: bytes
 *
 * The last byte is stored last, after a write barrier: a program that
 * polls the last byte of an RDMA WRITE's target (rsocket's riowrite(),
 * perftest's ib_write_lat) finds every byte before it in place once it
 * sees that one change, as on a NIC, whose DMA writes land in address
 * order. IBA 9.5 leaves the order of placement within a message open, but
 * memcpy() does not even go forward: the kernel's x86-64 memcpy copies
 * backwards when the source's low address bits are below the
 * destination's, and riostream -T v failed its data check most runs.
 * Packets are placed in PSN order, so the message's last byte is the
 * last store of its last packet.
 *
 * Return: 0; -EACCES when a fast-registration MR was invalidated or
 * registered anew since the check: what was not placed by then is not;
 * or -EFAULT when a page of an on-demand paged MR is not mapped: part of
 * the data may have been placed, the rest is to be placed again once a
 * fault mapped it.
 */
int sroce_mem_copy_in(struct sroce_mr *mr, u32 gen, u64 iova,
		      const struct sk_buff *skb, unsigned int off, u32 len)
{
	struct skb_src src = { .skb = skb, .off = off };

	return mem_walk(mr, gen, iova, len, true, step_copy_in, &src);
}

/**
 * sroce_mem_copy_out() - copy data out of an MR
 * @mr: the MR; the range was checked (sroce_mem_get_remote())
 * @gen: the registration it was checked against
 * @iova: source
 * @buf: destination
 * @len: bytes
 *
 * Return: 0, or -EACCES or -EFAULT as sroce_mem_copy_in(): @buf then
 * holds zeros where the memory was not read (or is not filled), never
 * another registration's bytes.
 */
int sroce_mem_copy_out(struct sroce_mr *mr, u32 gen, u64 iova, void *buf,
		       u32 len)
{
	return mem_walk(mr, gen, iova, len, false, step_copy_out, buf);
}

/**
 * sroce_mem_attach() - attach MR memory to a packet, without copying it
 * @mr: the MR; the range was checked (sroce_mem_get_local() or _remote())
 * @iova: first byte
 * @len: bytes
 * @skb: the packet; its page fragments grow by @len bytes
 * @room: fragments @skb must keep free for the caller
 *
 * Only a user MR's pages are attached: their translation is fixed for the
 * MR's life, and they are pinned, ordinary pages, each referenced here
 * until the packet is freed. The packet is marked as having shared
 * fragments (SKBFL_SHARED_FRAG), so that nothing in the IP stack writes
 * to them: they are the process's memory.
 *
 * Return: true, or false when @mr is not a user MR or @skb would need more
 * fragments than it has: nothing is attached then.
 */
bool sroce_mem_attach(struct sroce_mr *mr, u64 iova, u32 len,
		      struct sk_buff *skb, unsigned int room)
{
	struct skb_shared_info *si = skb_shinfo(skb);
	unsigned int pgoff, i = si->nr_frags;
	struct page *page;
	u32 chunk;

	if (mr->type != SROCE_MR_USER)
		return false;
	user_page(mr, iova, len, &pgoff, &chunk);
	if (i + DIV_ROUND_UP(pgoff + len, PAGE_SIZE) + room > MAX_SKB_FRAGS)
		return false;
	while (len) {
		page = user_page(mr, iova, len, &pgoff, &chunk);
		get_page(page);
		skb_fill_page_desc(skb, i++, page, pgoff, chunk);
		skb->len += chunk;
		skb->data_len += chunk;
		skb->truesize += chunk;
		iova += chunk;
		len -= chunk;
	}
	si->flags |= SKBFL_SHARED_FRAG;
	return true;
}

/**
 * sroce_mem_copy_in_buf() - copy a kernel buffer into an MR
 * @mr: the MR; the range was checked
 * @gen: the registration it was checked against
 * @iova: destination
 * @buf: the data
 * @len: bytes
 *
 * As sroce_mem_copy_in(), without its ordering of the last byte.
 *
 * Return: as sroce_mem_copy_in().
 */
int sroce_mem_copy_in_buf(struct sroce_mr *mr, u32 gen, u64 iova,
			  const void *buf, u32 len)
{
	return mem_walk(mr, gen, iova, len, true, step_copy_in_buf,
			(void *)buf);
}

/*
 * May the 8 bytes an atomic access mapped at @p be used? They must be
 * mapped (-EACCES: a fast-registration MR registered anew since the
 * check; -EFAULT: an ODP MR's page is not mapped for writing), and
 * naturally aligned in memory, and so inside one page: not
 * only the address the request carried but the one it comes to through a
 * window and the MR's own offset into its first page (-EINVAL).
 */
static int u64_ok(const void *p, u32 chunk, bool miss)
{
	if (miss)
		return -EFAULT;
	if (!p)
		return -EACCES;
	if (chunk != sizeof(u64) || !IS_ALIGNED((uintptr_t)p, sizeof(u64)))
		return -EINVAL;
	return 0;
}

/* The 8-byte operations, in one mapping each (mem_u64()). */
enum mem_u64_op {
	MEM_CMP_SWAP,
	MEM_FETCH_ADD,
	MEM_STORE,
};

/*
 * Do @op on the 8 bytes at @iova of @mr, if they are mapped and aligned
 * (u64_ok()); @a and @b are its operands. Returns 0 or u64_ok()'s error.
 */
static int mem_u64(struct sroce_mr *mr, u32 gen, u64 iova,
		   enum mem_u64_op op, u64 a, u64 b, u64 *orig)
{
	bool miss = false;
	u32 chunk;
	u64 *p;
	int err;

	p = map_chunk(mr, gen, iova, sizeof(u64), true, &chunk, &miss);
	err = u64_ok(p, chunk, miss);
	if (!err && op == MEM_CMP_SWAP)
		*orig = cmpxchg64(p, a, b);
	else if (!err && op == MEM_FETCH_ADD)
		*orig = atomic64_fetch_add(b, (atomic64_t *)p);
	else if (!err)
		/* One 8-byte store, after every store of the requests before it. */
		smp_store_release(p, b);
	unmap_chunk(mr, p);
	return err;
}

/**
 * sroce_mem_atomic() - compare-and-swap or fetch-and-add on an MR
 * @mr: the MR; the range was checked
 * @gen: the registration it was checked against
 * @iova: the address
 * @cmp_swap: compare and swap, else fetch and add
 * @compare: compare operand
 * @swap_add: swap or add operand
 * @orig: set to the value before the operation
 *
 * The operation is a CPU atomic instruction on the memory itself, so it is
 * atomic with respect to every other atomic operation on it (IBA 9.4.5).
 *
 * Return: 0, -EINVAL when the 8 bytes are not naturally aligned in
 * memory, -EACCES when the MR was registered anew since the check, or
 * -EFAULT when an ODP MR's page is not mapped for writing (nothing is
 * accessed then).
 */
int sroce_mem_atomic(struct sroce_mr *mr, u32 gen, u64 iova, bool cmp_swap,
		     u64 compare, u64 swap_add, u64 *orig)
{
	return mem_u64(mr, gen, iova, cmp_swap ? MEM_CMP_SWAP : MEM_FETCH_ADD,
		       compare, swap_add, orig);
}

/**
 * sroce_mem_atomic_write() - the 8-byte store of an ATOMIC WRITE
 * @mr: the MR; the range was checked
 * @gen: the registration it was checked against
 * @iova: the address
 * @val: the bytes to store, in memory order
 *
 * One aligned 64-bit store, so no reader sees part of it (IBA 1.5, 9.4.7).
 *
 * Return: 0, -EINVAL, -EACCES or -EFAULT as sroce_mem_atomic().
 */
int sroce_mem_atomic_write(struct sroce_mr *mr, u32 gen, u64 iova, u64 val)
{
	return mem_u64(mr, gen, iova, MEM_STORE, 0, val, NULL);
}
