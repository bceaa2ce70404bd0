// SPDX-License-Identifier: GPL-2.0 OR Linux-OpenIB
/*
 * libsroce: the rdma-core provider for sroce, a software RoCEv2 device.
 *
 * Control verbs go through the kernel with the core uverbs commands and
 * the driver data of <rdma/sroce-abi.h>. The kernel allocates every queue;
 * create and resize return where to mmap() it on the context's command fd.
 * The data path runs on those rings without a system call: work requests
 * are written into the send and receive rings, completions are read from
 * the CQ ring, and the kernel is woken (a uverbs POST_SEND, POST_RECV or
 * POST_SRQ_RECV command with no work requests) only when the ring's header
 * says that it is idle.
 *
 * The provider is built in rdma-core 56.1 but must also load into the
 * libibverbs 44.0 of Debian 12 (both private ABI 34): it uses no libibverbs
 * entry point younger than 44.0. scripts/build-provider checks that.
 */
#include <config.h>

#include <errno.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include <ccan/array_size.h>

#include "sroce.h"

/*
 * An out-of-tree driver has no driver id of its own, so libibverbs can only
 * match it by name. VERBS_NAME_MATCH() would build the fnmatch() pattern
 * "rdma_device:*Nsroce*", which also matches a name with "Nsroce" anywhere
 * in it; this pattern is anchored: the device name must begin with "sroce".
 */
static const struct verbs_match_ent sroce_match_table[] = {
	VERBS_MODALIAS_MATCH("rdma_device:Nsroce*", NULL),
	{},
};

/* ------------------------------------------------------------------ */
/* Shared rings */

static uint32_t ring_load_acquire(const uint32_t *p)
{
	return atomic_load_explicit((_Atomic(uint32_t) *)p,
				    memory_order_acquire);
}

static void ring_store_release(uint32_t *p, uint32_t val)
{
	atomic_store_explicit((_Atomic(uint32_t) *)p, val,
			      memory_order_release);
}

static void *ring_slot(const struct sroce_ring *ring, uint32_t index)
{
	return ring->data + (size_t)(index & ring->mask) * ring->entry_size;
}

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
static int ring_map(struct sroce_ring *ring, struct ibv_context *ibctx,
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

static void ring_unmap(struct sroce_ring *ring)
{
	if (ring->hdr)
		munmap(ring->hdr, ring->map_size);
	memset(ring, 0, sizeof(*ring));
}

/* A CQ ring starts where the kernel says its consumer is. */
static int cq_ring_map(struct sroce_ring *ring, struct ibv_context *ibctx,
		       const struct sroce_queue_info *info)
{
	int ret;

	if (!info->mmap_size)
		return EINVAL;
	ret = ring_map(ring, ibctx, info, sizeof(struct sroce_cqe));
	if (ret)
		return ret;
	ring->index = ring_load_acquire(&ring->hdr->consumer);
	return 0;
}

/* A work queue ring starts where the kernel says its producer is. */
static int wq_map(struct sroce_wq *wq, struct ibv_context *ibctx,
		  const struct sroce_queue_info *info, size_t min_entry)
{
	int ret;

	ret = ring_map(&wq->ring, ibctx, info, min_entry);
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
static int wq_set_limits(struct sroce_wq *wq, size_t hdr_size,
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

static void wq_unmap(struct sroce_wq *wq)
{
	ring_unmap(&wq->ring);
	pthread_spin_destroy(&wq->lock);
}

/* ------------------------------------------------------------------ */
/* Device, port, PD, MR, MW */

static int sroce_query_device(struct ibv_context *ibctx,
			      const struct ibv_query_device_ex_input *input,
			      struct ibv_device_attr_ex *attr, size_t attr_size)
{
	struct ib_uverbs_ex_query_device_resp resp;
	size_t resp_size = sizeof(resp);
	uint64_t fw;
	int ret;

	ret = ibv_cmd_query_device_any(ibctx, input, attr, attr_size, &resp,
				       &resp_size);
	if (ret)
		return ret;

	fw = resp.base.fw_ver;
	snprintf(attr->orig_attr.fw_ver, sizeof(attr->orig_attr.fw_ver),
		 "%u.%u.%u", (unsigned int)(fw >> 32) & 0xffff,
		 (unsigned int)(fw >> 16) & 0xffff, (unsigned int)fw & 0xffff);
	return 0;
}

static int sroce_query_port(struct ibv_context *ibctx, uint8_t port,
			    struct ibv_port_attr *attr)
{
	struct ibv_query_port cmd = {};

	return ibv_cmd_query_port(ibctx, port, attr, &cmd, sizeof(cmd));
}

static struct ibv_pd *sroce_alloc_pd(struct ibv_context *ibctx)
{
	struct sroce_cmd_alloc_pd cmd = {};
	struct sroce_cmd_alloc_pd_resp resp = {};
	struct sroce_pd *pd;
	int ret;

	pd = calloc(1, sizeof(*pd));
	if (!pd)
		return NULL;

	ret = ibv_cmd_alloc_pd(ibctx, &pd->ibv_pd, &cmd.ibv_cmd, sizeof(cmd),
			       &resp.ibv_resp, sizeof(resp));
	if (ret) {
		free(pd);
		errno = ret;
		return NULL;
	}
	pd->pdn = resp.pdn;
	return &pd->ibv_pd;
}

static int sroce_dealloc_pd(struct ibv_pd *ibpd)
{
	int ret;

	ret = ibv_cmd_dealloc_pd(ibpd);
	if (ret)
		return ret;
	free(to_spd(ibpd));
	return 0;
}

static struct ibv_mr *sroce_reg_mr(struct ibv_pd *ibpd, void *addr,
				   size_t length, uint64_t hca_va, int access)
{
	struct ib_uverbs_reg_mr_resp resp;
	struct ibv_reg_mr cmd;
	struct verbs_mr *vmr;
	int ret;

	vmr = calloc(1, sizeof(*vmr));
	if (!vmr)
		return NULL;

	ret = ibv_cmd_reg_mr(ibpd, addr, length, hca_va, access, vmr, &cmd,
			     sizeof(cmd), &resp, sizeof(resp));
	if (ret) {
		free(vmr);
		errno = ret;
		return NULL;
	}
	return &vmr->ibv_mr;
}

static int sroce_dereg_mr(struct verbs_mr *vmr)
{
	int ret;

	ret = ibv_cmd_dereg_mr(vmr);
	if (ret)
		return ret;
	free(vmr);
	return 0;
}

static struct ibv_mw *sroce_alloc_mw(struct ibv_pd *ibpd,
				     enum ibv_mw_type type)
{
	struct ib_uverbs_alloc_mw_resp resp = {};
	struct ibv_alloc_mw cmd = {};
	struct ibv_mw *mw;
	int ret;

	mw = calloc(1, sizeof(*mw));
	if (!mw)
		return NULL;

	ret = ibv_cmd_alloc_mw(ibpd, type, mw, &cmd, sizeof(cmd), &resp,
			       sizeof(resp));
	if (ret) {
		free(mw);
		errno = ret;
		return NULL;
	}
	return mw;
}

static int sroce_dealloc_mw(struct ibv_mw *mw)
{
	int ret;

	ret = ibv_cmd_dealloc_mw(mw);
	if (ret)
		return ret;
	free(mw);
	return 0;
}

/* ------------------------------------------------------------------ */
/* Completion queues */

static void cqe_to_wc(const struct sroce_cqe *cqe, struct ibv_wc *wc)
{
	wc->wr_id = cqe->wr_id;
	wc->status = cqe->status;
	wc->opcode = cqe->opcode;
	wc->vendor_err = cqe->vendor_err;
	wc->byte_len = cqe->byte_len;
	/* Immediate data stays in network order; an rkey shares the slot. */
	wc->imm_data = (__be32)cqe->ex;
	wc->qp_num = cqe->qp_num;
	wc->src_qp = cqe->src_qp;
	wc->wc_flags = cqe->wc_flags;
	wc->pkey_index = cqe->pkey_index;
	wc->slid = cqe->slid;
	wc->sl = cqe->sl;
	wc->dlid_path_bits = cqe->dlid_path_bits;
}

/*
 * Completions ready to consume, or -1 if the producer index claims more
 * than the ring holds. Called with cq->lock held. The acquire load orders
 * the reads of the entries after the kernel's writes of them.
 */
static int64_t cq_ready(struct sroce_cq *cq)
{
	struct sroce_ring *ring = &cq->ring;
	uint32_t ready;

	if (!ring->hdr)
		return -1;
	ready = ring_load_acquire(&ring->hdr->producer) - ring->index;
	if (ready > ring->num_entries)
		return -1;
	return ready;
}

/*
 * Take the next completion into cq->cur. The entry is copied before the
 * consumer index moves past it: once the kernel sees the new consumer it
 * may reuse the slot.
 */
static void cq_take(struct sroce_cq *cq)
{
	struct sroce_ring *ring = &cq->ring;

	memcpy(&cq->cur, ring_slot(ring, ring->index), sizeof(cq->cur));
	ring->index++;
}

static void cq_publish(struct sroce_cq *cq)
{
	ring_store_release(&cq->ring.hdr->consumer, cq->ring.index);
}

static int sroce_poll_cq(struct ibv_cq *ibcq, int ne, struct ibv_wc *wc)
{
	struct sroce_cq *cq = to_scq(ibcq);
	int64_t ready;
	int n;

	pthread_spin_lock(&cq->lock);
	ready = cq_ready(cq);
	if (ready < 0) {
		pthread_spin_unlock(&cq->lock);
		return -EIO;
	}
	for (n = 0; n < ne && n < ready; n++) {
		cq_take(cq);
		cqe_to_wc(&cq->cur, &wc[n]);
	}
	if (n)
		cq_publish(cq);
	pthread_spin_unlock(&cq->lock);
	return n;
}

/* Lazy polling (ibv_start_poll() and friends) over the same ring. */

static void cq_ex_set_current(struct sroce_cq *cq)
{
	cq_take(cq);
	cq->vcq.cq_ex.wr_id = cq->cur.wr_id;
	cq->vcq.cq_ex.status = cq->cur.status;
}

static int cq_start_poll(struct ibv_cq_ex *ibcq, struct ibv_poll_cq_attr *attr)
{
	struct sroce_cq *cq = ex_to_scq(ibcq);
	int64_t ready;

	if (attr->comp_mask)
		return EINVAL;

	pthread_spin_lock(&cq->lock);
	ready = cq_ready(cq);
	if (ready <= 0) {
		pthread_spin_unlock(&cq->lock);
		return ready ? EIO : ENOENT;
	}
	cq_ex_set_current(cq);
	return 0;
}

static int cq_next_poll(struct ibv_cq_ex *ibcq)
{
	struct sroce_cq *cq = ex_to_scq(ibcq);
	int64_t ready = cq_ready(cq);

	if (ready <= 0)
		return ready ? EIO : ENOENT;
	cq_ex_set_current(cq);
	return 0;
}

static void cq_end_poll(struct ibv_cq_ex *ibcq)
{
	struct sroce_cq *cq = ex_to_scq(ibcq);

	cq_publish(cq);
	pthread_spin_unlock(&cq->lock);
}

static enum ibv_wc_opcode cq_read_opcode(struct ibv_cq_ex *ibcq)
{
	return ex_to_scq(ibcq)->cur.opcode;
}

static uint32_t cq_read_vendor_err(struct ibv_cq_ex *ibcq)
{
	return ex_to_scq(ibcq)->cur.vendor_err;
}

static uint32_t cq_read_byte_len(struct ibv_cq_ex *ibcq)
{
	return ex_to_scq(ibcq)->cur.byte_len;
}

static __be32 cq_read_imm_data(struct ibv_cq_ex *ibcq)
{
	return (__be32)ex_to_scq(ibcq)->cur.ex;
}

static uint32_t cq_read_qp_num(struct ibv_cq_ex *ibcq)
{
	return ex_to_scq(ibcq)->cur.qp_num;
}

static uint32_t cq_read_src_qp(struct ibv_cq_ex *ibcq)
{
	return ex_to_scq(ibcq)->cur.src_qp;
}

static unsigned int cq_read_wc_flags(struct ibv_cq_ex *ibcq)
{
	return ex_to_scq(ibcq)->cur.wc_flags;
}

static uint32_t cq_read_slid(struct ibv_cq_ex *ibcq)
{
	return ex_to_scq(ibcq)->cur.slid;
}

static uint8_t cq_read_sl(struct ibv_cq_ex *ibcq)
{
	return ex_to_scq(ibcq)->cur.sl;
}

static uint8_t cq_read_dlid_path_bits(struct ibv_cq_ex *ibcq)
{
	return ex_to_scq(ibcq)->cur.dlid_path_bits;
}

enum {
	SROCE_WC_EX_FLAGS = IBV_WC_EX_WITH_BYTE_LEN | IBV_WC_EX_WITH_IMM |
			    IBV_WC_EX_WITH_QP_NUM | IBV_WC_EX_WITH_SRC_QP |
			    IBV_WC_EX_WITH_SLID | IBV_WC_EX_WITH_SL |
			    IBV_WC_EX_WITH_DLID_PATH_BITS,
};

static void cq_ex_set_ops(struct ibv_cq_ex *cq_ex)
{
	cq_ex->start_poll = cq_start_poll;
	cq_ex->next_poll = cq_next_poll;
	cq_ex->end_poll = cq_end_poll;
	cq_ex->read_opcode = cq_read_opcode;
	cq_ex->read_vendor_err = cq_read_vendor_err;
	cq_ex->read_wc_flags = cq_read_wc_flags;
	cq_ex->read_byte_len = cq_read_byte_len;
	cq_ex->read_imm_data = cq_read_imm_data;
	cq_ex->read_qp_num = cq_read_qp_num;
	cq_ex->read_src_qp = cq_read_src_qp;
	cq_ex->read_slid = cq_read_slid;
	cq_ex->read_sl = cq_read_sl;
	cq_ex->read_dlid_path_bits = cq_read_dlid_path_bits;
}

static struct ibv_cq *sroce_create_cq(struct ibv_context *ibctx, int cqe,
				      struct ibv_comp_channel *channel,
				      int comp_vector)
{
	struct sroce_cmd_create_cq cmd = {};
	struct sroce_cmd_create_cq_resp resp = {};
	struct sroce_cq *cq;
	int ret;

	cq = calloc(1, sizeof(*cq));
	if (!cq)
		return NULL;

	ret = ibv_cmd_create_cq(ibctx, cqe, channel, comp_vector, &cq->vcq.cq,
				&cmd.ibv_cmd, sizeof(cmd), &resp.ibv_resp,
				sizeof(resp));
	if (ret)
		goto err_free;

	ret = cq_ring_map(&cq->ring, ibctx, &resp.cq);
	if (ret)
		goto err_destroy;

	pthread_spin_init(&cq->lock, PTHREAD_PROCESS_PRIVATE);
	return &cq->vcq.cq;

err_destroy:
	ibv_cmd_destroy_cq(&cq->vcq.cq);
err_free:
	free(cq);
	errno = ret;
	return NULL;
}

static struct ibv_cq_ex *sroce_create_cq_ex(struct ibv_context *ibctx,
					    struct ibv_cq_init_attr_ex *attr)
{
	struct sroce_cmd_create_cq_ex cmd = {};
	struct sroce_cmd_create_cq_ex_resp resp = {};
	struct sroce_cq *cq;
	int ret;

	if (attr->wc_flags & ~(uint64_t)SROCE_WC_EX_FLAGS) {
		errno = EOPNOTSUPP;
		return NULL;
	}

	cq = calloc(1, sizeof(*cq));
	if (!cq)
		return NULL;

	ret = ibv_cmd_create_cq_ex(ibctx, attr, &cq->vcq, &cmd.ibv_cmd,
				   sizeof(cmd), &resp.ibv_resp, sizeof(resp),
				   0);
	if (ret)
		goto err_free;

	ret = cq_ring_map(&cq->ring, ibctx, &resp.cq);
	if (ret)
		goto err_destroy;

	pthread_spin_init(&cq->lock, PTHREAD_PROCESS_PRIVATE);
	cq_ex_set_ops(&cq->vcq.cq_ex);
	return &cq->vcq.cq_ex;

err_destroy:
	ibv_cmd_destroy_cq(&cq->vcq.cq);
err_free:
	free(cq);
	errno = ret;
	return NULL;
}

/*
 * The kernel moves the outstanding completions into a new ring. The lock
 * keeps pollers off both rings meanwhile; the old one is unmapped only once
 * the kernel has accepted, since until then it is still the live ring.
 */
static int sroce_resize_cq(struct ibv_cq *ibcq, int cqe)
{
	struct sroce_cq *cq = to_scq(ibcq);
	struct sroce_cmd_resize_cq_resp resp = {};
	struct ibv_resize_cq cmd = {};
	struct sroce_ring old;
	int ret;

	pthread_spin_lock(&cq->lock);
	ret = ibv_cmd_resize_cq(ibcq, cqe, &cmd, sizeof(cmd), &resp.ibv_resp,
				sizeof(resp));
	if (ret)
		goto out;

	old = cq->ring;
	ret = cq_ring_map(&cq->ring, ibcq->context, &resp.cq);
	/* On failure the CQ is left without a ring and polls fail. */
	ring_unmap(&old);
out:
	pthread_spin_unlock(&cq->lock);
	return ret;
}

static int sroce_destroy_cq(struct ibv_cq *ibcq)
{
	struct sroce_cq *cq = to_scq(ibcq);
	int ret;

	ret = ibv_cmd_destroy_cq(ibcq);
	if (ret)
		return ret;

	ring_unmap(&cq->ring);
	pthread_spin_destroy(&cq->lock);
	free(cq);
	return 0;
}

/* ------------------------------------------------------------------ */
/* Shared receive queues */

static struct ibv_srq *sroce_create_srq(struct ibv_pd *ibpd,
					struct ibv_srq_init_attr *attr)
{
	struct sroce_cmd_create_srq_resp resp = {};
	struct ibv_create_srq cmd = {};
	struct sroce_srq *srq;
	int ret;

	srq = calloc(1, sizeof(*srq));
	if (!srq)
		return NULL;

	ret = ibv_cmd_create_srq(ibpd, &srq->vsrq.srq, attr, &cmd, sizeof(cmd),
				 &resp.ibv_resp, sizeof(resp));
	if (ret)
		goto err_free;

	ret = EINVAL;
	if (!resp.rq.mmap_size)
		goto err_destroy;
	ret = wq_map(&srq->rq, ibpd->context, &resp.rq,
		     sizeof(struct sroce_recv_wqe));
	if (ret)
		goto err_destroy;
	/* libibverbs has put the kernel's limits in attr. */
	ret = wq_set_limits(&srq->rq, sizeof(struct sroce_recv_wqe),
			    attr->attr.max_wr, attr->attr.max_sge, 0);
	if (ret)
		goto err_unmap;

	srq->srq_num = resp.srq_num;
	return &srq->vsrq.srq;

err_unmap:
	wq_unmap(&srq->rq);
err_destroy:
	ibv_cmd_destroy_srq(&srq->vsrq.srq);
err_free:
	free(srq);
	errno = ret;
	return NULL;
}

/*
 * Resizing would need a new mapping, which modify_srq has no response to
 * carry; only the limit can be set.
 */
static int sroce_modify_srq(struct ibv_srq *ibsrq, struct ibv_srq_attr *attr,
			    int attr_mask)
{
	struct ibv_modify_srq cmd = {};

	if (attr_mask & IBV_SRQ_MAX_WR)
		return EOPNOTSUPP;
	return ibv_cmd_modify_srq(ibsrq, attr, attr_mask, &cmd, sizeof(cmd));
}

static int sroce_query_srq(struct ibv_srq *ibsrq, struct ibv_srq_attr *attr)
{
	struct ibv_query_srq cmd = {};

	return ibv_cmd_query_srq(ibsrq, attr, &cmd, sizeof(cmd));
}

static int sroce_destroy_srq(struct ibv_srq *ibsrq)
{
	struct sroce_srq *srq = to_ssrq(ibsrq);
	int ret;

	ret = ibv_cmd_destroy_srq(ibsrq);
	if (ret)
		return ret;

	wq_unmap(&srq->rq);
	free(srq);
	return 0;
}

/* ------------------------------------------------------------------ */
/* Queue pairs */

/*
 * Map the rings of a QP the kernel has just created and adopt the limits
 * it reported in @cap (libibverbs copied them from the response; they are
 * what the caller sees too); on failure nothing stays mapped. The receive
 * ring is absent exactly when the QP uses an SRQ.
 */
static int qp_map(struct sroce_qp *qp, struct ibv_context *ibctx,
		  const struct sroce_create_qp_resp *resp,
		  const struct ibv_qp_cap *cap, bool has_srq)
{
	int ret;

	if (!resp->sq.mmap_size || has_srq != !resp->rq.mmap_size)
		return EINVAL;

	ret = wq_map(&qp->sq, ibctx, &resp->sq, sizeof(struct sroce_send_wqe));
	if (ret)
		return ret;
	ret = wq_set_limits(&qp->sq, sizeof(struct sroce_send_wqe),
			    cap->max_send_wr, cap->max_send_sge,
			    cap->max_inline_data);
	if (ret)
		goto err_sq;
	ret = wq_map(&qp->rq, ibctx, &resp->rq, sizeof(struct sroce_recv_wqe));
	if (ret)
		goto err_sq;
	if (qp->rq.ring.hdr) {
		ret = wq_set_limits(&qp->rq, sizeof(struct sroce_recv_wqe),
				    cap->max_recv_wr, cap->max_recv_sge, 0);
		if (ret)
			goto err_rq;
	}
	return 0;

err_rq:
	wq_unmap(&qp->rq);
err_sq:
	wq_unmap(&qp->sq);
	return ret;
}

static void qp_unmap(struct sroce_qp *qp)
{
	wq_unmap(&qp->rq);
	wq_unmap(&qp->sq);
}

static struct ibv_qp *sroce_create_qp(struct ibv_pd *ibpd,
				      struct ibv_qp_init_attr *attr)
{
	struct sroce_cmd_create_qp cmd = {};
	struct sroce_cmd_create_qp_resp resp = {};
	struct sroce_qp *qp;
	int ret;

	qp = calloc(1, sizeof(*qp));
	if (!qp)
		return NULL;

	ret = ibv_cmd_create_qp(ibpd, &qp->vqp.qp, attr, &cmd.ibv_cmd,
				sizeof(cmd), &resp.ibv_resp, sizeof(resp));
	if (ret)
		goto err_free;

	ret = qp_map(qp, ibpd->context, &resp.drv_payload, &attr->cap,
		     attr->srq);
	if (ret)
		goto err_destroy;
	qp->sq_signal = attr->sq_sig_all ? IBV_SEND_SIGNALED : 0;
	return &qp->vqp.qp;

err_destroy:
	ibv_cmd_destroy_qp(&qp->vqp.qp);
err_free:
	free(qp);
	errno = ret;
	return NULL;
}

enum {
	SROCE_QP_INIT_ATTR_MASK = IBV_QP_INIT_ATTR_PD |
				  IBV_QP_INIT_ATTR_CREATE_FLAGS,
};

/*
 * libibverbs calls this only when the caller asked for more than a PD.
 * No create flags and no ibv_qp_ex send operations yet: the latter needs
 * the verbs_qp fields that 44.0 lays out differently (see sroce.h).
 */
static struct ibv_qp *sroce_create_qp_ex(struct ibv_context *ibctx,
					 struct ibv_qp_init_attr_ex *attr)
{
	struct sroce_cmd_create_qp_ex cmd = {};
	struct sroce_cmd_create_qp_ex_resp resp = {};
	struct sroce_qp *qp;
	int ret;

	if ((attr->comp_mask & ~SROCE_QP_INIT_ATTR_MASK) ||
	    ((attr->comp_mask & IBV_QP_INIT_ATTR_CREATE_FLAGS) &&
	     attr->create_flags)) {
		errno = EOPNOTSUPP;
		return NULL;
	}

	qp = calloc(1, sizeof(*qp));
	if (!qp)
		return NULL;

	ret = ibv_cmd_create_qp_ex2(ibctx, &qp->vqp, attr, &cmd.ibv_cmd,
				    sizeof(cmd), &resp.ibv_resp, sizeof(resp));
	if (ret)
		goto err_free;

	ret = qp_map(qp, ibctx, &resp.drv_payload, &attr->cap, attr->srq);
	if (ret)
		goto err_destroy;
	qp->sq_signal = attr->sq_sig_all ? IBV_SEND_SIGNALED : 0;
	return &qp->vqp.qp;

err_destroy:
	ibv_cmd_destroy_qp(&qp->vqp.qp);
err_free:
	free(qp);
	errno = ret;
	return NULL;
}

static int sroce_modify_qp(struct ibv_qp *ibqp, struct ibv_qp_attr *attr,
			   int attr_mask)
{
	struct ibv_modify_qp cmd = {};

	return ibv_cmd_modify_qp(ibqp, attr, attr_mask, &cmd, sizeof(cmd));
}

static int sroce_query_qp(struct ibv_qp *ibqp, struct ibv_qp_attr *attr,
			  int attr_mask, struct ibv_qp_init_attr *init_attr)
{
	struct ibv_query_qp cmd = {};

	return ibv_cmd_query_qp(ibqp, attr, attr_mask, init_attr, &cmd,
				sizeof(cmd));
}

static int sroce_destroy_qp(struct ibv_qp *ibqp)
{
	struct sroce_qp *qp = to_sqp(ibqp);
	int ret;

	ret = ibv_cmd_destroy_qp(ibqp);
	if (ret)
		return ret;

	qp_unmap(qp);
	free(qp);
	return 0;
}

/* ------------------------------------------------------------------ */
/* Work requests */

/*
 * Scatter/gather lists go into the rings as they are: struct ibv_sge and
 * struct sroce_sge have the same layout. Opcodes and send flags are stored
 * with their libibverbs values, which are the kernel's uverbs values.
 */
static_assert(sizeof(struct ibv_sge) == sizeof(struct sroce_sge), "sge");
static_assert(offsetof(struct ibv_sge, addr) ==
	      offsetof(struct sroce_sge, addr), "sge addr");
static_assert(offsetof(struct ibv_sge, length) ==
	      offsetof(struct sroce_sge, length), "sge length");
static_assert(offsetof(struct ibv_sge, lkey) ==
	      offsetof(struct sroce_sge, lkey), "sge lkey");
#define SAME_OPCODE(op) \
	static_assert((int)IBV_WR_##op == (int)IB_UVERBS_WR_##op, #op)
SAME_OPCODE(RDMA_WRITE);
SAME_OPCODE(RDMA_WRITE_WITH_IMM);
SAME_OPCODE(SEND);
SAME_OPCODE(SEND_WITH_IMM);
SAME_OPCODE(RDMA_READ);
SAME_OPCODE(ATOMIC_CMP_AND_SWP);
SAME_OPCODE(ATOMIC_FETCH_AND_ADD);
SAME_OPCODE(SEND_WITH_INV);

/* The send flags a work queue entry may carry. */
#define SROCE_SEND_FLAGS (IBV_SEND_FENCE | IBV_SEND_SIGNALED | \
			  IBV_SEND_SOLICITED | IBV_SEND_INLINE)

enum {
	QPT_RC = 1 << 0,
	QPT_UC = 1 << 1,
	QPT_UD = 1 << 2,
};

/* What an opcode fills in the entry's @wr union. */
enum send_kind {
	SEND_KIND_NONE,		/* not an opcode of this device: EINVAL */
	SEND_KIND_SEND,		/* wr.ud on a UD QP, nothing otherwise */
	SEND_KIND_RDMA,		/* wr.rdma */
	SEND_KIND_ATOMIC,	/* wr.atomic */
	SEND_KIND_BIND,		/* wr.bind_mw */
	SEND_KIND_LOCAL,	/* a local operation: nothing */
	SEND_KIND_LATER,	/* valid, not implemented: EOPNOTSUPP */
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
 * @qp_types: QPT_* bits of the QP types it may be posted to
 * @ex: an enum send_ex
 * @inline_ok: data may be given inline (it is the source, not a target)
 */
struct send_opcode {
	uint8_t kind;
	uint8_t qp_types;
	uint8_t ex;
	bool inline_ok;
};

static const struct send_opcode send_opcodes[] = {
	[IBV_WR_RDMA_WRITE] = { SEND_KIND_RDMA, QPT_RC | QPT_UC,
				SEND_EX_NONE, true },
	[IBV_WR_RDMA_WRITE_WITH_IMM] = { SEND_KIND_RDMA, QPT_RC | QPT_UC,
					 SEND_EX_IMM, true },
	[IBV_WR_SEND] = { SEND_KIND_SEND, QPT_RC | QPT_UC | QPT_UD,
			  SEND_EX_NONE, true },
	[IBV_WR_SEND_WITH_IMM] = { SEND_KIND_SEND, QPT_RC | QPT_UC | QPT_UD,
				   SEND_EX_IMM, true },
	[IBV_WR_SEND_WITH_INV] = { SEND_KIND_SEND, QPT_RC, SEND_EX_INV, true },
	[IBV_WR_RDMA_READ] = { SEND_KIND_RDMA, QPT_RC },
	[IBV_WR_ATOMIC_CMP_AND_SWP] = { SEND_KIND_ATOMIC, QPT_RC },
	[IBV_WR_ATOMIC_FETCH_AND_ADD] = { SEND_KIND_ATOMIC, QPT_RC },
	[IBV_WR_LOCAL_INV] = { SEND_KIND_LOCAL, QPT_RC | QPT_UC, SEND_EX_INV },
	[IBV_WR_BIND_MW] = { SEND_KIND_BIND, QPT_RC | QPT_UC, SEND_EX_BIND },
	[IBV_WR_FLUSH] = { SEND_KIND_LATER, QPT_RC },
	[IBV_WR_ATOMIC_WRITE] = { SEND_KIND_LATER, QPT_RC },
};

static unsigned int qpt_bit(enum ibv_qp_type type)
{
	switch (type) {
	case IBV_QPT_RC:
		return QPT_RC;
	case IBV_QPT_UC:
		return QPT_UC;
	case IBV_QPT_UD:
		return QPT_UD;
	default:
		return 0;
	}
}

/* The opcode's entry, or NULL if it cannot be posted to this QP at all. */
static const struct send_opcode *send_opcode(const struct ibv_qp *ibqp,
					     enum ibv_wr_opcode opcode)
{
	const struct send_opcode *op;

	if ((unsigned int)opcode >= ARRAY_SIZE(send_opcodes))
		return NULL;
	op = &send_opcodes[opcode];
	if (op->kind == SEND_KIND_NONE || !(op->qp_types & qpt_bit(ibqp->qp_type)))
		return NULL;
	return op;
}

/*
 * Posting to the send queue before RTS is an immediate error, and so is
 * posting receives in RESET (IBA 10.3.1, QP state table). libibverbs keeps
 * ibqp->state as of the last modify or query; a transition the kernel
 * makes on its own (to SQE or ERR) is not seen here, and the kernel
 * flushes what is posted then.
 */
static bool qp_can_send(const struct ibv_qp *ibqp)
{
	return ibqp->state != IBV_QPS_RESET && ibqp->state != IBV_QPS_INIT &&
	       ibqp->state != IBV_QPS_RTR;
}

/* Bytes the scatter list of @wr describes, the inline payload. */
static uint64_t sge_total(const struct ibv_send_wr *wr)
{
	uint64_t len = 0;
	int i;

	for (i = 0; i < wr->num_sge; i++)
		len += wr->sg_list[i].length;
	return len;
}

/*
 * Check one send work request against the QP, as a hardware provider
 * would before building its descriptor.
 */
static int send_wr_check(const struct sroce_qp *qp,
			 const struct ibv_send_wr *wr,
			 const struct send_opcode *op,
			 enum ibv_mw_type bind_type)
{
	const struct sroce_wq *sq = &qp->sq;

	if (!op)
		return EINVAL;
	if (op->kind == SEND_KIND_LATER)
		return EOPNOTSUPP;
	if (wr->num_sge < 0 || (uint32_t)wr->num_sge > sq->max_sge ||
	    (wr->send_flags & ~SROCE_SEND_FLAGS))
		return EINVAL;
	if ((wr->send_flags & IBV_SEND_INLINE) &&
	    (!op->inline_ok || sge_total(wr) > sq->max_inline))
		return EINVAL;
	if (op->kind == SEND_KIND_ATOMIC &&
	    ((wr->wr.atomic.remote_addr & 7) || sge_total(wr) < 8))
		return EINVAL;
	if (qp->vqp.qp.qp_type == IBV_QPT_UD && !wr->wr.ud.ah)
		return EINVAL;
	/*
	 * A work request binds only type 2 windows; type 1 windows are bound
	 * by ibv_bind_mw() (IBA 10.6.7.2.1), which posts with @bind_type 1.
	 */
	if (op->kind == SEND_KIND_BIND &&
	    (!wr->bind_mw.mw || wr->bind_mw.mw->type != bind_type))
		return EINVAL;
	return 0;
}

/* The opcode-specific part of an entry; @hdr was zeroed. */
static void send_wqe_fill_wr(const struct sroce_qp *qp,
			     const struct ibv_send_wr *wr,
			     const struct send_opcode *op,
			     struct sroce_send_wqe *hdr)
{
	switch (op->kind) {
	case SEND_KIND_SEND:
		if (qp->vqp.qp.qp_type != IBV_QPT_UD)
			break;
		hdr->wr.ud.ah_num = to_sah(wr->wr.ud.ah)->ah_num;
		hdr->wr.ud.remote_qpn = wr->wr.ud.remote_qpn;
		hdr->wr.ud.remote_qkey = wr->wr.ud.remote_qkey;
		break;
	case SEND_KIND_RDMA:
		hdr->wr.rdma.remote_addr = wr->wr.rdma.remote_addr;
		hdr->wr.rdma.rkey = wr->wr.rdma.rkey;
		break;
	case SEND_KIND_ATOMIC:
		hdr->wr.atomic.remote_addr = wr->wr.atomic.remote_addr;
		hdr->wr.atomic.compare_add = wr->wr.atomic.compare_add;
		hdr->wr.atomic.swap = wr->wr.atomic.swap;
		hdr->wr.atomic.rkey = wr->wr.atomic.rkey;
		break;
	case SEND_KIND_BIND:
		hdr->wr.bind_mw.addr = wr->bind_mw.bind_info.addr;
		hdr->wr.bind_mw.length = wr->bind_mw.bind_info.length;
		hdr->wr.bind_mw.mw_rkey = wr->bind_mw.mw->rkey;
		hdr->wr.bind_mw.mr_lkey = wr->bind_mw.bind_info.mr ?
					  wr->bind_mw.bind_info.mr->lkey : 0;
		hdr->wr.bind_mw.access = wr->bind_mw.bind_info.mw_access_flags;
		break;
	}
}

/* Gather the inline payload into the entry, in place of its scatter list. */
static uint32_t send_wqe_copy_inline(struct sroce_send_wqe *wqe,
				     const struct ibv_send_wr *wr)
{
	uint8_t *dst = (uint8_t *)wqe->sge;
	int i;

	for (i = 0; i < wr->num_sge; i++) {
		memcpy(dst, (void *)(uintptr_t)wr->sg_list[i].addr,
		       wr->sg_list[i].length);
		dst += wr->sg_list[i].length;
	}
	return dst - (uint8_t *)wqe->sge;
}

/*
 * Write one checked work request into @wqe, a free slot. Every header
 * field is written, unused ones as zero, so nothing of an earlier entry in
 * this slot survives in the header. Past the header only the num_sge
 * scatter entries or inline_len bytes that the header announces are
 * written; the kernel reads no more than that.
 */
static void send_wqe_write(const struct sroce_qp *qp,
			   const struct ibv_send_wr *wr,
			   const struct send_opcode *op,
			   struct sroce_send_wqe *wqe)
{
	struct sroce_send_wqe hdr = {
		.wr_id = wr->wr_id,
		.opcode = wr->opcode,
		.send_flags = wr->send_flags | qp->sq_signal,
	};

	if (op->ex == SEND_EX_IMM)
		hdr.ex = (uint32_t)wr->imm_data;	/* network order */
	else if (op->ex == SEND_EX_INV)
		hdr.ex = wr->invalidate_rkey;
	else if (op->ex == SEND_EX_BIND)
		hdr.ex = wr->bind_mw.rkey;
	send_wqe_fill_wr(qp, wr, op, &hdr);

	if (wr->send_flags & IBV_SEND_INLINE) {
		hdr.inline_len = send_wqe_copy_inline(wqe, wr);
	} else {
		hdr.num_sge = wr->num_sge;
		memcpy(wqe->sge, wr->sg_list,
		       wr->num_sge * sizeof(struct sroce_sge));
	}
	memcpy(wqe, &hdr, sizeof(hdr));
}

/*
 * The slot for the next entry, or NULL when max_wr requests are
 * outstanding. Called with wq->lock held. The kernel's consumer index is
 * read only when the free slots counted last time are used up; the acquire
 * orders the kernel's reads of the slots it gave back before our writes.
 */
static void *wq_next_slot(struct sroce_wq *wq)
{
	uint32_t used;

	if (!wq->room) {
		used = wq->ring.index - ring_load_acquire(&wq->ring.hdr->consumer);
		/* A consumer ahead of the producer is nonsense: no room. */
		wq->room = used < wq->max_wr ? wq->max_wr - used : 0;
		if (!wq->room)
			return NULL;
	}
	return ring_slot(&wq->ring, wq->ring.index);
}

static void wq_advance(struct sroce_wq *wq)
{
	wq->ring.index++;
	wq->room--;
}

/*
 * Make the entries written so far visible: one release store of the
 * producer index for however many entries. Called with wq->lock held.
 */
static void wq_publish(struct sroce_wq *wq)
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
static bool wq_needs_doorbell(struct sroce_wq *wq)
{
	atomic_thread_fence(memory_order_seq_cst);
	return atomic_load_explicit((_Atomic(uint32_t) *)&wq->ring.hdr->flags,
				    memory_order_relaxed) &
	       SROCE_QUEUE_NEED_WAKEUP;
}

/* Send one uverbs command with no work request in it: a doorbell. */
static int doorbell_write(struct ibv_context *ibctx, const void *cmd,
			  size_t size)
{
	ssize_t ret = write(ibctx->cmd_fd, cmd, size);

	if (ret == (ssize_t)size)
		return 0;
	return ret < 0 ? errno : EIO;
}

/*
 * As rdma-core's rxe provider does: the kernel's post_send is called with
 * no work request. wqe_size must still be a plausible struct size.
 */
static int qp_send_doorbell(struct ibv_qp *ibqp)
{
	struct ib_uverbs_post_send_resp resp;
	struct ibv_post_send cmd = {
		.hdr = {
			.command = IB_USER_VERBS_CMD_POST_SEND,
			.in_words = sizeof(cmd) / 4,
			.out_words = sizeof(resp) / 4,
		},
	};

	cmd.response = (uintptr_t)&resp;
	cmd.qp_handle = ibqp->handle;
	cmd.wqe_size = sizeof(struct ib_uverbs_send_wr);
	return doorbell_write(ibqp->context, &cmd, sizeof(cmd));
}

static int qp_recv_doorbell(struct ibv_qp *ibqp)
{
	struct ib_uverbs_post_recv_resp resp;
	struct ibv_post_recv cmd = {
		.hdr = {
			.command = IB_USER_VERBS_CMD_POST_RECV,
			.in_words = sizeof(cmd) / 4,
			.out_words = sizeof(resp) / 4,
		},
	};

	cmd.response = (uintptr_t)&resp;
	cmd.qp_handle = ibqp->handle;
	cmd.wqe_size = sizeof(struct ib_uverbs_recv_wr);
	return doorbell_write(ibqp->context, &cmd, sizeof(cmd));
}

static int srq_recv_doorbell(struct ibv_srq *ibsrq)
{
	struct ib_uverbs_post_srq_recv_resp resp;
	struct ibv_post_srq_recv cmd = {
		.hdr = {
			.command = IB_USER_VERBS_CMD_POST_SRQ_RECV,
			.in_words = sizeof(cmd) / 4,
			.out_words = sizeof(resp) / 4,
		},
	};

	cmd.response = (uintptr_t)&resp;
	cmd.srq_handle = ibsrq->handle;
	cmd.wqe_size = sizeof(struct ib_uverbs_recv_wr);
	return doorbell_write(ibsrq->context, &cmd, sizeof(cmd));
}

/* Check and write one send work request. Called with sq->lock held. */
static int sq_post_one(struct sroce_qp *qp, const struct ibv_send_wr *wr,
		       enum ibv_mw_type bind_type)
{
	const struct send_opcode *op = send_opcode(&qp->vqp.qp, wr->opcode);
	void *slot;
	int ret;

	ret = send_wr_check(qp, wr, op, bind_type);
	if (ret)
		return ret;
	slot = wq_next_slot(&qp->sq);
	if (!slot)
		return ENOMEM;
	send_wqe_write(qp, wr, op, slot);
	wq_advance(&qp->sq);
	return 0;
}

/*
 * Post the list up to the first request that fails (*bad_wr), publish all
 * that were written with one producer update, and ring the doorbell
 * outside the lock if the kernel asks for it. If only the doorbell fails,
 * every request is in the ring but the kernel may not look at it before
 * the next post; that error is returned with *bad_wr NULL.
 */
static int post_send(struct ibv_qp *ibqp, struct ibv_send_wr *wr,
		     struct ibv_send_wr **bad_wr, enum ibv_mw_type bind_type)
{
	struct sroce_qp *qp = to_sqp(ibqp);
	unsigned int posted = 0;
	int ret = 0, err;

	if (!qp_can_send(ibqp)) {
		*bad_wr = wr;
		return EINVAL;
	}

	pthread_spin_lock(&qp->sq.lock);
	for (; wr; wr = wr->next, posted++) {
		ret = sq_post_one(qp, wr, bind_type);
		if (ret) {
			*bad_wr = wr;
			break;
		}
	}
	if (posted)
		wq_publish(&qp->sq);
	pthread_spin_unlock(&qp->sq.lock);

	if (!posted || !wq_needs_doorbell(&qp->sq))
		return ret;
	err = qp_send_doorbell(ibqp);
	if (err && !ret) {
		*bad_wr = NULL;
		ret = err;
	}
	return ret;
}

static int sroce_post_send(struct ibv_qp *ibqp, struct ibv_send_wr *wr,
			   struct ibv_send_wr **bad_wr)
{
	return post_send(ibqp, wr, bad_wr, IBV_MW_TYPE_2);
}

/* Check and write one receive work request. Called with rq->lock held. */
static int rq_post_one(struct sroce_wq *rq, const struct ibv_recv_wr *wr)
{
	struct sroce_recv_wqe *wqe;

	if (wr->num_sge < 0 || (uint32_t)wr->num_sge > rq->max_sge)
		return EINVAL;
	wqe = wq_next_slot(rq);
	if (!wqe)
		return ENOMEM;
	wqe->wr_id = wr->wr_id;
	wqe->num_sge = wr->num_sge;
	wqe->reserved = 0;
	memcpy(wqe->sge, wr->sg_list, wr->num_sge * sizeof(struct sroce_sge));
	wq_advance(rq);
	return 0;
}

/*
 * Post a receive list to a QP's RQ or an SRQ as sroce_post_send() does.
 * Return: the number of requests published; *ret is the error, if any.
 */
static unsigned int rq_post(struct sroce_wq *rq, struct ibv_recv_wr *wr,
			    struct ibv_recv_wr **bad_wr, int *ret)
{
	unsigned int posted = 0;

	*ret = 0;
	pthread_spin_lock(&rq->lock);
	for (; wr; wr = wr->next, posted++) {
		*ret = rq_post_one(rq, wr);
		if (*ret) {
			*bad_wr = wr;
			break;
		}
	}
	if (posted)
		wq_publish(rq);
	pthread_spin_unlock(&rq->lock);
	return posted;
}

/* A QP on an SRQ has no RQ of its own to post to. */
static int sroce_post_recv(struct ibv_qp *ibqp, struct ibv_recv_wr *wr,
			   struct ibv_recv_wr **bad_wr)
{
	struct sroce_qp *qp = to_sqp(ibqp);
	int ret, err;

	if (!qp->rq.ring.hdr || ibqp->state == IBV_QPS_RESET) {
		*bad_wr = wr;
		return EINVAL;
	}
	if (!rq_post(&qp->rq, wr, bad_wr, &ret) || !wq_needs_doorbell(&qp->rq))
		return ret;
	err = qp_recv_doorbell(ibqp);
	if (err && !ret) {
		*bad_wr = NULL;
		ret = err;
	}
	return ret;
}

static int sroce_post_srq_recv(struct ibv_srq *ibsrq, struct ibv_recv_wr *wr,
			       struct ibv_recv_wr **bad_wr)
{
	struct sroce_srq *srq = to_ssrq(ibsrq);
	int ret, err;

	if (!rq_post(&srq->rq, wr, bad_wr, &ret) || !wq_needs_doorbell(&srq->rq))
		return ret;
	err = srq_recv_doorbell(ibsrq);
	if (err && !ret) {
		*bad_wr = NULL;
		ret = err;
	}
	return ret;
}

/*
 * ibv_bind_mw(): bind a type 1 window. It is a BIND_MW work request like a
 * type 2 bind, with the window's next key; the kernel checks it in WQE
 * order and completes it on the send CQ.
 */
static int sroce_bind_mw(struct ibv_qp *ibqp, struct ibv_mw *mw,
			 struct ibv_mw_bind *bind)
{
	struct ibv_send_wr wr = {
		.wr_id = bind->wr_id,
		.opcode = IBV_WR_BIND_MW,
		.send_flags = bind->send_flags,
		.bind_mw = {
			.mw = mw,
			.rkey = ibv_inc_rkey(mw->rkey),
			.bind_info = bind->bind_info,
		},
	};
	struct ibv_send_wr *bad;
	int ret;

	if (mw->type != IBV_MW_TYPE_1 || mw->pd != ibqp->pd)
		return EINVAL;
	ret = post_send(ibqp, &wr, &bad, IBV_MW_TYPE_1);
	if (!ret)
		mw->rkey = wr.bind_mw.rkey;
	return ret;
}

/* ------------------------------------------------------------------ */
/* Address handles */

static struct ibv_ah *sroce_create_ah(struct ibv_pd *ibpd,
				      struct ibv_ah_attr *attr)
{
	struct sroce_cmd_create_ah_resp resp = {};
	struct sroce_ah *ah;
	int ret;

	ah = calloc(1, sizeof(*ah));
	if (!ah)
		return NULL;

	ret = ibv_cmd_create_ah(ibpd, &ah->ibv_ah, attr, &resp.ibv_resp,
				sizeof(resp));
	if (ret) {
		free(ah);
		errno = ret;
		return NULL;
	}
	ah->ah_num = resp.ah_num;
	return &ah->ibv_ah;
}

static int sroce_destroy_ah(struct ibv_ah *ibah)
{
	int ret;

	ret = ibv_cmd_destroy_ah(ibah);
	if (ret)
		return ret;
	free(to_sah(ibah));
	return 0;
}

/* ------------------------------------------------------------------ */
/* Context and device */

static void sroce_free_context(struct ibv_context *ibctx);

static const struct verbs_context_ops sroce_ctx_ops = {
	.query_device_ex = sroce_query_device,
	.query_port = sroce_query_port,
	.alloc_pd = sroce_alloc_pd,
	.dealloc_pd = sroce_dealloc_pd,
	.reg_mr = sroce_reg_mr,
	.dereg_mr = sroce_dereg_mr,
	.alloc_mw = sroce_alloc_mw,
	.dealloc_mw = sroce_dealloc_mw,
	.bind_mw = sroce_bind_mw,
	.create_cq = sroce_create_cq,
	.create_cq_ex = sroce_create_cq_ex,
	.poll_cq = sroce_poll_cq,
	.req_notify_cq = ibv_cmd_req_notify_cq,
	.resize_cq = sroce_resize_cq,
	.destroy_cq = sroce_destroy_cq,
	.create_srq = sroce_create_srq,
	.modify_srq = sroce_modify_srq,
	.query_srq = sroce_query_srq,
	.destroy_srq = sroce_destroy_srq,
	.post_srq_recv = sroce_post_srq_recv,
	.create_qp = sroce_create_qp,
	.create_qp_ex = sroce_create_qp_ex,
	.modify_qp = sroce_modify_qp,
	.query_qp = sroce_query_qp,
	.destroy_qp = sroce_destroy_qp,
	.post_send = sroce_post_send,
	.post_recv = sroce_post_recv,
	.create_ah = sroce_create_ah,
	.destroy_ah = sroce_destroy_ah,
	.attach_mcast = ibv_cmd_attach_mcast,
	.detach_mcast = ibv_cmd_detach_mcast,
	.free_context = sroce_free_context,
};

/* The queue header must fit before the entries and keep them aligned. */
static bool context_resp_valid(const struct sroce_cmd_get_context_resp *resp)
{
	return resp->queue_data_offset >= sizeof(struct sroce_queue_hdr) &&
	       resp->queue_data_offset % 64 == 0;
}

static struct verbs_context *sroce_alloc_context(struct ibv_device *ibdev,
						 int cmd_fd,
						 void *private_data)
{
	struct sroce_cmd_get_context cmd = {};
	struct sroce_cmd_get_context_resp resp = {};
	struct sroce_context *ctx;
	int ret;

	ctx = verbs_init_and_alloc_context(ibdev, cmd_fd, ctx, ibv_ctx,
					   RDMA_DRIVER_UNKNOWN);
	if (!ctx)
		return NULL;

	ret = ibv_cmd_get_context(&ctx->ibv_ctx, &cmd.ibv_cmd, sizeof(cmd),
				  &resp.ibv_resp, sizeof(resp));
	if (ret)
		goto err_free;

	ret = EPROTO;
	if (!context_resp_valid(&resp)) {
		verbs_err(&ctx->ibv_ctx,
			  "sroce: kernel reports queue data offset %u\n",
			  resp.queue_data_offset);
		goto err_free;
	}
	ctx->queue_data_offset = resp.queue_data_offset;
	ctx->max_inline_data = resp.max_inline_data;

	verbs_set_ops(&ctx->ibv_ctx, &sroce_ctx_ops);
	return &ctx->ibv_ctx;

err_free:
	verbs_uninit_context(&ctx->ibv_ctx);
	free(ctx);
	errno = ret;
	return NULL;
}

static void sroce_free_context(struct ibv_context *ibctx)
{
	struct sroce_context *ctx = to_sctx(ibctx);

	verbs_uninit_context(&ctx->ibv_ctx);
	free(ctx);
}

/*
 * libibverbs calls this after the table match. A device with a driver id
 * of its own belongs to that driver's provider whatever its name.
 */
static bool sroce_match_device(struct verbs_sysfs_dev *sysfs_dev)
{
	return sysfs_dev->match &&
	       sysfs_dev->driver_id == RDMA_DRIVER_UNKNOWN;
}

static struct verbs_device *sroce_device_alloc(struct verbs_sysfs_dev *unused)
{
	struct sroce_device *dev;

	dev = calloc(1, sizeof(*dev));
	if (!dev)
		return NULL;
	return &dev->ibv_dev;
}

static void sroce_device_uninit(struct verbs_device *vdev)
{
	free(to_sdev(&vdev->device));
}

static const struct verbs_device_ops sroce_dev_ops = {
	.name = "sroce",
	.match_min_abi_version = SROCE_UVERBS_ABI_VERSION,
	.match_max_abi_version = SROCE_UVERBS_ABI_VERSION,
	.match_table = sroce_match_table,
	.match_device = sroce_match_device,
	.alloc_device = sroce_device_alloc,
	.uninit_device = sroce_device_uninit,
	.alloc_context = sroce_alloc_context,
};
PROVIDER_DRIVER(sroce, sroce_dev_ops);
