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
 *
 * This file matches the device, makes the context with its table of
 * verbs, and holds the verbs that need no more than a uverbs command:
 * queries, PD, MR, MW, XRCD and AH. The rings are in ring.c, CQs in cq.c,
 * QPs and SRQs in qp.c, posting in post.c and the extended send API in
 * wr.c (Documentation/provider.md, "Source files").
 */
#include <config.h>

#include <errno.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>

#include "sroce.h"
#include "cq.h"
#include "post.h"
#include "qp.h"
#include "wr.h"

DECLARE_DRV_CMD(sroce_cmd_get_context, IB_USER_VERBS_CMD_GET_CONTEXT,
		empty, sroce_alloc_ucontext_resp);
DECLARE_DRV_CMD(sroce_cmd_alloc_pd, IB_USER_VERBS_CMD_ALLOC_PD,
		empty, sroce_alloc_pd_resp);
DECLARE_DRV_CMD(sroce_cmd_create_ah, IB_USER_VERBS_CMD_CREATE_AH,
		empty, sroce_create_ah_resp);

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
/* Queries, PD, MR, MW, XRCD, AH */

/*
 * The end of a destroy verb: once the kernel has destroyed the object
 * (@ret 0), free the provider's @obj. Return: @ret.
 */
static int destroyed(int ret, void *obj)
{
	if (!ret)
		free(obj);
	return ret;
}

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
	if (ret)
		return sroce_create_failed(pd, ret);
	pd->pdn = resp.pdn;
	return &pd->ibv_pd;
}

static int sroce_dealloc_pd(struct ibv_pd *ibpd)
{
	return destroyed(ibv_cmd_dealloc_pd(ibpd), to_spd(ibpd));
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
	if (ret)
		return sroce_create_failed(vmr, ret);
	return &vmr->ibv_mr;
}

static int sroce_dereg_mr(struct verbs_mr *vmr)
{
	return destroyed(ibv_cmd_dereg_mr(vmr), vmr);
}

/*
 * libibverbs has checked the flags and updates mr->pd, addr and length on
 * success; the kernel's response gives the keys, which change when the
 * kernel registers the memory anew. A new range is accessed by its own
 * address, as ibv_reg_mr() registers it.
 */
static int sroce_rereg_mr(struct verbs_mr *vmr, int flags, struct ibv_pd *pd,
			  void *addr, size_t length, int access)
{
	struct ib_uverbs_rereg_mr_resp resp;
	struct ibv_rereg_mr cmd;
	int ret;

	ret = ibv_cmd_rereg_mr(vmr, flags, addr, length, (uintptr_t)addr,
			       access, pd, &cmd, sizeof(cmd), &resp,
			       sizeof(resp));
	if (ret)
		errno = ret;
	return ret;
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
	if (ret)
		return sroce_create_failed(mw, ret);
	return mw;
}

static int sroce_dealloc_mw(struct ibv_mw *mw)
{
	return destroyed(ibv_cmd_dealloc_mw(mw), mw);
}

static struct ibv_xrcd *sroce_open_xrcd(struct ibv_context *ibctx,
					struct ibv_xrcd_init_attr *attr)
{
	struct ib_uverbs_open_xrcd_resp resp = {};
	struct ibv_open_xrcd cmd = {};
	struct verbs_xrcd *xrcd;
	int ret;

	xrcd = calloc(1, sizeof(*xrcd));
	if (!xrcd)
		return NULL;

	ret = ibv_cmd_open_xrcd(ibctx, xrcd, sizeof(*xrcd), attr, &cmd,
				sizeof(cmd), &resp, sizeof(resp));
	if (ret)
		return sroce_create_failed(xrcd, ret);
	return &xrcd->xrcd;
}

static int sroce_close_xrcd(struct ibv_xrcd *ibxrcd)
{
	struct verbs_xrcd *xrcd = container_of(ibxrcd, struct verbs_xrcd, xrcd);

	return destroyed(ibv_cmd_close_xrcd(xrcd), xrcd);
}

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
	if (ret)
		return sroce_create_failed(ah, ret);
	ah->ah_num = resp.ah_num;
	return &ah->ibv_ah;
}

static int sroce_destroy_ah(struct ibv_ah *ibah)
{
	return destroyed(ibv_cmd_destroy_ah(ibah), to_sah(ibah));
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
	/* ibv_advise_mr(): the kernel prefetches ODP MRs (odp.c). */
	.advise_mr = ibv_cmd_advise_mr,
	.rereg_mr = sroce_rereg_mr,
	.alloc_mw = sroce_alloc_mw,
	.dealloc_mw = sroce_dealloc_mw,
	.bind_mw = sroce_bind_mw,
	.open_xrcd = sroce_open_xrcd,
	.close_xrcd = sroce_close_xrcd,
	.create_cq = sroce_create_cq,
	.create_cq_ex = sroce_create_cq_ex,
	.poll_cq = sroce_poll_cq,
	.req_notify_cq = ibv_cmd_req_notify_cq,
	.resize_cq = sroce_resize_cq,
	.destroy_cq = sroce_destroy_cq,
	.create_srq = sroce_create_srq,
	.create_srq_ex = sroce_create_srq_ex,
	.get_srq_num = sroce_get_srq_num,
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
	ctx->qp_ex_abi = sroce_qp_ex_probe();

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
