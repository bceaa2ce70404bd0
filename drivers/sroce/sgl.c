// SPDX-License-Identifier: GPL-2.0 OR Linux-OpenIB
/*
 * DOC: Scatter/gather lists
 *
 * A WQE's local data is a list of SGEs, each an lkey, an address and a
 * length. The engines walk such a list piece by piece: each piece lies in
 * one SGE, its MR is looked up and the access checked (mem.c), and the
 * piece is copied or attached by one of the steps below. The list itself
 * may be in memory the process can rewrite (a user QP's receive ring), so
 * every field is read once, with READ_ONCE(), and checked as read.
 */
#include "mem.h"
#include "mr.h"
#include "odp.h"
#include "sgl.h"

/**
 * sroce_sgl_length() - total bytes of a scatter/gather list
 * @sge: the list
 * @num: its entries
 *
 * Return: the sum of the lengths (at most 32 * 2^32, no overflow).
 */
u64 sroce_sgl_length(const struct sroce_sge *sge, u32 num)
{
	u64 len = 0;
	u32 i;

	for (i = 0; i < num; i++)
		len += READ_ONCE(sge[i].length);
	return len;
}

/*
 * The next piece of the list, at most @len bytes, in one SGE: look up and
 * check its MR. Returns the referenced MR and sets *iova, *gen and *n.
 */
static struct sroce_mr *sgl_next(struct sroce_dev *sdev, struct ib_pd *pd,
				 struct sroce_sgl *sgl, u32 len, int access,
				 u64 *iova, u32 *gen, u32 *n, int *err)
{
	const struct sroce_sge *sge;
	struct sroce_mr *mr;

	while (sgl->idx < sgl->num &&
	       sgl->off == READ_ONCE(sgl->sge[sgl->idx].length)) {
		sgl->idx++;
		sgl->off = 0;
	}
	if (sgl->idx == sgl->num) {
		*err = -ENOSPC;
		return NULL;
	}
	sge = &sgl->sge[sgl->idx];
	*n = min(len, READ_ONCE(sge->length) - sgl->off);
	*iova = READ_ONCE(sge->addr) + sgl->off;
	mr = sroce_mem_get_local(sdev, pd, READ_ONCE(sge->lkey), *iova, *n,
				 access, gen);
	if (!mr) {
		*err = -EACCES;
		return NULL;
	}
	sgl->off += *n;
	return mr;
}

/*
 * One step of a walk: @n bytes at @iova of @mr (checked against
 * registration @gen), the next @n of the data that @arg says where. An
 * error ends the walk with it.
 */
typedef int (*sgl_step)(struct sroce_mr *mr, u32 gen, u64 iova, u32 n,
			void *arg);

/*
 * A page of an ODP MR in the piece at @iova, @n bytes, is not mapped:
 * fault in the rest of the entry from there, so that the next packets
 * find their pages too. Returns -EFAULT (wait for the fault), or -EACCES
 * when the list has no fault to queue or the last one of this range
 * failed.
 */
static int sgl_fault(struct sroce_sgl *sgl, struct sroce_mr *mr, u64 iova,
		     u32 n, int access)
{
	u32 size = READ_ONCE(sgl->sge[sgl->idx].length);
	u64 rest = size > sgl->off ? size - sgl->off + n : n;

	if (!sgl->fault ||
	    sroce_odp_fault_queue(sgl->fault, mr, iova, rest, !!access))
		return -EACCES;
	return -EFAULT;
}

/*
 * Walk @len bytes of the list with the right @access, one step a piece.
 * Returns 0; the error of sgl_next(); the error of a step; or -EFAULT as
 * sgl_fault(): the list's position is then past the piece that faulted.
 */
static __always_inline int sgl_walk(struct sroce_dev *sdev, struct ib_pd *pd,
				    struct sroce_sgl *sgl, u32 len, int access,
				    sgl_step step, void *arg)
{
	struct sroce_mr *mr;
	u32 n, gen;
	u64 iova;
	int err;

	while (len) {
		mr = sgl_next(sdev, pd, sgl, len, access, &iova, &gen, &n, &err);
		if (!mr)
			return err;
		err = step(mr, gen, iova, n, arg);
		if (err == -EFAULT)
			err = sgl_fault(sgl, mr, iova, n, access);
		sroce_mr_put(mr);
		if (err)
			return err;
		len -= n;
	}
	return 0;
}

/* Where a packet's data is read from: @skb at @off, advanced. */
struct skb_pos {
	const struct sk_buff *skb;
	unsigned int off;
};

static int step_copy_in(struct sroce_mr *mr, u32 gen, u64 iova, u32 n,
			void *arg)
{
	struct skb_pos *pos = arg;

	pos->off += n;
	return sroce_mem_copy_in(mr, gen, iova, pos->skb, pos->off - n, n);
}

static int step_copy_in_buf(struct sroce_mr *mr, u32 gen, u64 iova, u32 n,
			    void *arg)
{
	const void **buf = arg;

	*buf += n;
	return sroce_mem_copy_in_buf(mr, gen, iova, *buf - n, n);
}

static int step_copy_out(struct sroce_mr *mr, u32 gen, u64 iova, u32 n,
			 void *arg)
{
	void **buf = arg;

	*buf += n;
	return sroce_mem_copy_out(mr, gen, iova, *buf - n, n);
}

/* The packet to attach to, and the fragments it must keep free. */
struct skb_room {
	struct sk_buff *skb;
	unsigned int room;
};

static int step_attach(struct sroce_mr *mr, u32 gen, u64 iova, u32 n,
		       void *arg)
{
	struct skb_room *to = arg;

	return sroce_mem_attach(mr, iova, n, to->skb, to->room) ? 0 : -EAGAIN;
}

/**
 * sroce_sgl_copy_in() - scatter packet data into a local list
 * @sdev: the device
 * @pd: the QP's PD
 * @sgl: where the data goes; advanced
 * @skb: the packet
 * @off: offset of the data in @skb
 * @len: bytes
 *
 * Return: 0, -ENOSPC when the list is too short (a local length error),
 * -EACCES when an entry names memory the QP may not write, or a
 * fast-registration MR registered anew during the copy (a local
 * protection error), or -EFAULT when an on-demand paged page is not
 * mapped: a fault was queued (@sgl's), and the caller tries again from
 * where it was once it ended.
 */
int sroce_sgl_copy_in(struct sroce_dev *sdev, struct ib_pd *pd,
		      struct sroce_sgl *sgl, const struct sk_buff *skb,
		      unsigned int off, u32 len)
{
	struct skb_pos pos = { .skb = skb, .off = off };

	return sgl_walk(sdev, pd, sgl, len, IB_ACCESS_LOCAL_WRITE,
			step_copy_in, &pos);
}

/**
 * sroce_sgl_copy_in_buf() - scatter a kernel buffer into a local list
 * @sdev: the device
 * @pd: the QP's PD
 * @sgl: where the data goes; advanced
 * @buf: the data
 * @len: bytes
 *
 * Return: as sroce_sgl_copy_in().
 */
int sroce_sgl_copy_in_buf(struct sroce_dev *sdev, struct ib_pd *pd,
			  struct sroce_sgl *sgl, const void *buf, u32 len)
{
	return sgl_walk(sdev, pd, sgl, len, IB_ACCESS_LOCAL_WRITE,
			step_copy_in_buf, &buf);
}

/**
 * sroce_sgl_skip() - move forward in a local list without copying
 * @sgl: the position; advanced
 * @len: bytes to skip
 *
 * Return: 0, or -ENOSPC when the list is shorter.
 */
int sroce_sgl_skip(struct sroce_sgl *sgl, u32 len)
{
	u32 n, size;

	while (len) {
		if (sgl->idx == sgl->num)
			return -ENOSPC;
		size = READ_ONCE(sgl->sge[sgl->idx].length);
		n = min(len, size - min(sgl->off, size));
		sgl->off += n;
		len -= n;
		if (sgl->off >= size) {
			sgl->idx++;
			sgl->off = 0;
		}
	}
	return 0;
}

/* Take off @skb the fragments past the first @nr, and their pages. */
static void unattach(struct sk_buff *skb, unsigned int nr)
{
	struct skb_shared_info *si = skb_shinfo(skb);
	skb_frag_t *f;

	while (si->nr_frags > nr) {
		f = &si->frags[--si->nr_frags];
		skb->len -= skb_frag_size(f);
		skb->data_len -= skb_frag_size(f);
		skb->truesize -= skb_frag_size(f);
		put_page(skb_frag_page(f));
	}
}

/**
 * sroce_sgl_attach() - attach data of a local list to a packet
 * @sdev: the device
 * @pd: the QP's PD
 * @sgl: where the data comes from; advanced, unless it returns -EAGAIN
 * @skb: the packet
 * @len: bytes
 * @room: fragments @skb must keep free for the caller
 *
 * As sroce_sgl_copy_out(), but the data is attached by sroce_mem_attach().
 *
 * Return: 0; -EAGAIN when the data cannot be attached (memory other than
 * a user MR's, too many fragments): @skb and @sgl are then as they were,
 * and the caller copies; or -ENOSPC or -EACCES as sroce_sgl_copy_out().
 */
int sroce_sgl_attach(struct sroce_dev *sdev, struct ib_pd *pd,
		     struct sroce_sgl *sgl, struct sk_buff *skb, u32 len,
		     unsigned int room)
{
	struct skb_room to = { .skb = skb, .room = room };
	unsigned int nr = skb_shinfo(skb)->nr_frags;
	struct sroce_sgl start = *sgl;
	int err;

	err = sgl_walk(sdev, pd, sgl, len, 0, step_attach, &to);
	if (err == -EAGAIN) {
		unattach(skb, nr);
		*sgl = start;
	}
	return err;
}

/**
 * sroce_sgl_copy_out() - gather data from a local list
 * @sdev: the device
 * @pd: the QP's PD
 * @sgl: where the data comes from; advanced
 * @buf: destination
 * @len: bytes
 *
 * Return: 0, -ENOSPC when the list is too short, -EACCES when an entry
 * names memory the QP may not read, or a fast-registration MR registered
 * anew during the copy, or -EFAULT as sroce_sgl_copy_in().
 */
int sroce_sgl_copy_out(struct sroce_dev *sdev, struct ib_pd *pd,
		       struct sroce_sgl *sgl, void *buf, u32 len)
{
	return sgl_walk(sdev, pd, sgl, len, 0, step_copy_out, &buf);
}
