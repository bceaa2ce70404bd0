// SPDX-License-Identifier: GPL-2.0 OR Linux-OpenIB
/*
 * libsroce: completion queues. The provider is the consumer of a CQ's
 * ring: poll_cq and the lazy ibv_start_poll() family read the entries the
 * kernel produced, without a system call. Creating, resizing and
 * destroying a CQ are uverbs commands; each maps or unmaps the ring the
 * kernel describes in its response.
 */
#include <config.h>

#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "sroce.h"
#include "ring.h"
#include "cq.h"

DECLARE_DRV_CMD(sroce_cmd_create_cq, IB_USER_VERBS_CMD_CREATE_CQ,
		empty, sroce_create_cq_resp);
DECLARE_DRV_CMD(sroce_cmd_create_cq_ex, IB_USER_VERBS_EX_CMD_CREATE_CQ,
		empty, sroce_create_cq_resp);
DECLARE_DRV_CMD(sroce_cmd_resize_cq, IB_USER_VERBS_CMD_RESIZE_CQ,
		empty, sroce_resize_cq_resp);

/* A CQ ring starts where the kernel says its consumer is. */
static int cq_ring_map(struct sroce_ring *ring, struct ibv_context *ibctx,
		       const struct sroce_queue_info *info)
{
	int ret;

	if (!info->mmap_size)
		return EINVAL;
	ret = sroce_ring_map(ring, ibctx, info, sizeof(struct sroce_cqe));
	if (ret)
		return ret;
	ring->index = ring_load_acquire(&ring->hdr->consumer);
	return 0;
}

/*
 * The service level a completion reports. struct ibv_wc has no field for
 * the L3 header of a RoCE UD receive, whose GRH area holds an IPv4 header
 * in its last 20 bytes or an IPv6 header in all 40 (IBA A17.4.5.2).
 * mlx5's provider reports it in wc.sl, as its CQE's RoCE packet type (bit
 * 3: a UDP header, RoCEv2; bits 2:0: 1 IPv6, 2 IPv4), and software
 * written for that hardware reads it there: UCX before 1.18 looks for the
 * destination address where (wc.sl & 7) == 2 says an IPv4 header is, and
 * drops the datagram if it is not its own. RoCE has no LRH, so no SL of
 * its own to report: libsroce reports what mlx5 does
 * (Documentation/provider.md, "UD receives").
 */
#define ROCE_PKT_UDP	0x8
#define ROCE_PKT_IPV6	0x1
#define ROCE_PKT_IPV4	0x2

static uint8_t cqe_sl(const struct sroce_cqe *cqe)
{
	switch (cqe->network_hdr_type) {
	case SROCE_NETWORK_IPV4:
		return ROCE_PKT_UDP | ROCE_PKT_IPV4;
	case SROCE_NETWORK_IPV6:
		return ROCE_PKT_UDP | ROCE_PKT_IPV6;
	default:
		return cqe->sl;
	}
}

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
	wc->sl = cqe_sl(cqe);
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

int sroce_poll_cq(struct ibv_cq *ibcq, int ne, struct ibv_wc *wc)
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
	return cqe_sl(&ex_to_scq(ibcq)->cur);
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

/*
 * The rest of a create, once the kernel has answered @ret: map the CQ's
 * ring, or destroy the CQ again and free it, with errno set.
 * Return: @cq, or NULL.
 */
static struct sroce_cq *cq_created(struct sroce_cq *cq,
				   struct ibv_context *ibctx, int ret,
				   const struct sroce_queue_info *info)
{
	if (ret)
		return sroce_create_failed(cq, ret);
	ret = cq_ring_map(&cq->ring, ibctx, info);
	if (ret) {
		ibv_cmd_destroy_cq(&cq->vcq.cq);
		return sroce_create_failed(cq, ret);
	}
	pthread_spin_init(&cq->lock, PTHREAD_PROCESS_PRIVATE);
	return cq;
}

struct ibv_cq *sroce_create_cq(struct ibv_context *ibctx, int cqe,
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
	return cq_created(cq, ibctx, ret, &resp.cq) ? &cq->vcq.cq : NULL;
}

struct ibv_cq_ex *sroce_create_cq_ex(struct ibv_context *ibctx,
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
	if (!cq_created(cq, ibctx, ret, &resp.cq))
		return NULL;
	cq_ex_set_ops(&cq->vcq.cq_ex);
	return &cq->vcq.cq_ex;
}

/*
 * The kernel moves the outstanding completions into a new ring. The lock
 * keeps pollers off both rings meanwhile; the old one is unmapped only once
 * the kernel has accepted, since until then it is still the live ring.
 */
int sroce_resize_cq(struct ibv_cq *ibcq, int cqe)
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
	sroce_ring_unmap(&old);
out:
	pthread_spin_unlock(&cq->lock);
	return ret;
}

int sroce_destroy_cq(struct ibv_cq *ibcq)
{
	struct sroce_cq *cq = to_scq(ibcq);
	int ret = ibv_cmd_destroy_cq(ibcq);

	if (!ret) {
		sroce_ring_unmap(&cq->ring);
		pthread_spin_destroy(&cq->lock);
		free(cq);
	}
	return ret;
}

/*
 * Remove the completions of QP @qpn that are still in the CQ, keeping the
 * others in order. The slots from the consumer to the producer index are
 * the consumer's until it moves past them, so the entries to keep are
 * moved up over the removed ones, from the newest down, and the consumer
 * index then skips as many slots as were removed.
 */
void sroce_cq_clean(struct ibv_cq *ibcq, uint32_t qpn)
{
	struct sroce_cq *cq;
	struct sroce_ring *ring;
	uint32_t i, keep;
	int64_t ready;

	if (!ibcq)
		return;
	cq = to_scq(ibcq);
	ring = &cq->ring;
	pthread_spin_lock(&cq->lock);
	ready = cq_ready(cq);
	if (ready <= 0)
		goto out;
	keep = ring->index + ready;
	for (i = ring->index + ready; i != ring->index; ) {
		struct sroce_cqe *cqe = ring_slot(ring, --i);

		if (cqe->qp_num == qpn)
			continue;
		if (--keep != i)
			memcpy(ring_slot(ring, keep), cqe, sizeof(*cqe));
	}
	if (keep != ring->index) {
		ring->index = keep;
		cq_publish(cq);
	}
out:
	pthread_spin_unlock(&cq->lock);
}
