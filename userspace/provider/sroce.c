// SPDX-License-Identifier: GPL-2.0 OR Linux-OpenIB
/*
 * libsroce: the rdma-core provider for sroce, a software RoCEv2 device.
 *
 * Control verbs go through the kernel with the core uverbs commands and
 * the driver data of <rdma/sroce-abi.h>. The kernel allocates every queue;
 * create and resize return where to mmap() it on the context's command fd.
 * This stage reads completions from the mapped CQ ring; posting work
 * requests to the mapped send and receive rings comes next.
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

	srq->srq_num = resp.srq_num;
	return &srq->vsrq.srq;

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
 * Map the rings of a QP the kernel has just created; on failure nothing
 * stays mapped. The receive ring is absent exactly when the QP uses an SRQ.
 */
static int qp_map(struct sroce_qp *qp, struct ibv_context *ibctx,
		  const struct sroce_create_qp_resp *resp, bool has_srq)
{
	int ret;

	if (!resp->sq.mmap_size || has_srq != !resp->rq.mmap_size)
		return EINVAL;

	ret = wq_map(&qp->sq, ibctx, &resp->sq, sizeof(struct sroce_send_wqe));
	if (ret)
		return ret;
	ret = wq_map(&qp->rq, ibctx, &resp->rq, sizeof(struct sroce_recv_wqe));
	if (ret)
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

	ret = qp_map(qp, ibpd->context, &resp.drv_payload, attr->srq);
	if (ret)
		goto err_destroy;
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

	ret = qp_map(qp, ibctx, &resp.drv_payload, attr->srq);
	if (ret)
		goto err_destroy;
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
/* Work requests: the next stage posts them to the mapped rings. */

static int sroce_post_send(struct ibv_qp *ibqp, struct ibv_send_wr *wr,
			   struct ibv_send_wr **bad_wr)
{
	*bad_wr = wr;
	return EOPNOTSUPP;
}

static int sroce_post_recv(struct ibv_qp *ibqp, struct ibv_recv_wr *wr,
			   struct ibv_recv_wr **bad_wr)
{
	*bad_wr = wr;
	return EOPNOTSUPP;
}

static int sroce_post_srq_recv(struct ibv_srq *ibsrq, struct ibv_recv_wr *wr,
			       struct ibv_recv_wr **bad_wr)
{
	*bad_wr = wr;
	return EOPNOTSUPP;
}

static int sroce_bind_mw(struct ibv_qp *ibqp, struct ibv_mw *mw,
			 struct ibv_mw_bind *bind)
{
	return EOPNOTSUPP;
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
