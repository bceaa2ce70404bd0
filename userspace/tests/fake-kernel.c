// SPDX-License-Identifier: GPL-2.0 OR Linux-OpenIB
/*
 * Drive libsroce through the system's libibverbs against a fake kernel.
 *
 * provider-host.sh runs this in a mount namespace whose uverbs0 is
 * /dev/zero. ioctl() on it fails with ENOTTY, so libibverbs falls back to
 * the write() commands, which this program interposes (it is linked with
 * --export-dynamic, so the dlopen()ed provider and libibverbs bind to these
 * definitions): write() answers the uverbs commands the provider sends,
 * mmap() on the device hands out an alias of the fake kernel's ring
 * (mremap() of a shared mapping with old size 0), munmap() counts the
 * aliases going away. The test then plays the kernel's side of the rings
 * and checks what the provider's verbs make of them. The control path and
 * CQ polling are tested in verbs-test.c, posting in post-test.c and
 * wr-test.c, concurrency and the benchmark in post-stress.c.
 */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <errno.h>
#include <fcntl.h>
#include <stdarg.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <unistd.h>

#include <infiniband/verbs.h>
#include <rdma/ib_user_verbs.h>
#include <rdma/sroce-abi.h>

#include "fake-kernel.h"

/* ------------------------------------------------------------------ */
/* The fake kernel */

struct fake_queue queues[MAX_QUEUES];
static uint64_t next_offset = 1 << 12;

/* The provider's mappings of the rings, and which queue each shows. */
static void *aliases[MAX_QUEUES];
static int alias_queue[MAX_QUEUES];
int live_aliases;
unsigned int destroyed_cqs, destroyed_qps;

/* Failure injection for the next create. */
bool bad_next_cq;
bool qp_without_rq;
enum bad_caps bad_qp_caps;
int doorbell_errno;
bool wq_start_set;
uint32_t wq_start;

/* Per SRQ handle: what QUERY_SRQ reports besides the ring size. */
static uint32_t srq_max_sge[MAX_QUEUES];
uint32_t srq_limit[MAX_QUEUES];
unsigned int modify_srq_count;
int modify_srq_errno;

static uint32_t nr_pds;
uint32_t nr_xrcds;
struct ib_uverbs_create_xsrq xsrq_last;
struct ib_uverbs_rereg_mr last_rereg;
uint32_t rereg_keys;
int rereg_errno;

_Atomic unsigned int srq_db[MAX_QUEUES];
void (*doorbell_hook)(void);
unsigned int notify_count;
uint32_t notify_cq_handle, notify_solicited;

/* Per CQ handle: its completion channel's write end (or -1), user handle. */
static int cq_channel[MAX_QUEUES];
static uint64_t cq_user_handle[MAX_QUEUES];
static uint32_t cq_events[MAX_QUEUES];
/* The write end of the channel whose read end is the index. */
static int channel_wfd[1024];

static ssize_t (*real_write)(int, const void *, size_t);
static void *(*real_mmap)(void *, size_t, int, int, int, off_t);
static int (*real_munmap)(void *, size_t);

static bool is_uverbs(int fd)
{
	struct stat st;

	return !fstat(fd, &st) && S_ISCHR(st.st_mode) &&
	       st.st_rdev == makedev(1, 5);
}

struct sroce_queue_hdr *qhdr(struct fake_queue *q)
{
	return (struct sroce_queue_hdr *)q->kaddr;
}

void *qslot(struct fake_queue *q, uint32_t i)
{
	return q->kaddr + SROCE_QUEUE_DATA_OFFSET +
	       (size_t)(i & (q->num_entries - 1)) * q->entry_size;
}

struct sroce_cqe *qcqe(struct fake_queue *q, uint32_t i)
{
	return qslot(q, i);
}

void *queue_alias(int h)
{
	int i;

	for (i = 0; i < MAX_QUEUES; i++)
		if (aliases[i] && alias_queue[i] == h)
			return aliases[i];
	return NULL;
}

static int queue_new(uint32_t min, uint32_t esz, struct sroce_queue_info *info)
{
	uint32_t n = 1;
	int i;

	while (n < min)
		n <<= 1;
	for (i = 0; i < MAX_QUEUES && queues[i].used; i++)
		;
	if (i == MAX_QUEUES)
		abort();
	queues[i] = (struct fake_queue){
		.used = true,
		.size = (SROCE_QUEUE_DATA_OFFSET + (size_t)n * esz + 4095) & ~4095UL,
		.offset = next_offset,
		.num_entries = n,
		.entry_size = esz,
	};
	queues[i].kaddr = real_mmap(NULL, queues[i].size, PROT_READ | PROT_WRITE,
				    MAP_SHARED | MAP_ANONYMOUS, -1, 0);
	if (queues[i].kaddr == MAP_FAILED)
		abort();
	next_offset += queues[i].size;
	info->mmap_offset = queues[i].offset;
	info->mmap_size = queues[i].size;
	info->num_entries = n;
	info->entry_size = esz;
	return i;
}

/* The kernel frees a ring when it is destroyed and no longer mapped. */
static void queue_free(int h)
{
	if (h < 0 || h >= MAX_QUEUES || !queues[h].used)
		return;
	real_munmap(queues[h].kaddr, queues[h].size);
	queues[h].used = false;
}

/* A new work queue starts empty at index wq_start if that is set. */
static int wq_new(uint32_t min, uint32_t esz, struct sroce_queue_info *info)
{
	int h = queue_new(min, esz, info);

	if (wq_start_set) {
		qhdr(&queues[h])->producer = wq_start;
		qhdr(&queues[h])->consumer = wq_start;
	}
	return h;
}

/* Round up to a multiple of 64, as sroce.ko sizes its entries. */
static uint32_t align64(size_t n)
{
	return (n + 63) & ~(size_t)63;
}

static uint32_t min_u32(uint32_t a, uint32_t b)
{
	return a < b ? a : b;
}

/* Handles: CQ and SRQ handles are queue numbers; a QP owns two queues. */
struct fake_qp qps[MAX_QUEUES];
static int nr_qps;

static void *resp_ptr(const void *cmd)
{
	return (void *)(uintptr_t)*(const uint64_t *)cmd;
}

static int cmd_create_cq(const struct ib_uverbs_create_cq *cmd, size_t out)
{
	struct ib_uverbs_create_cq_resp *resp = resp_ptr(cmd);
	struct sroce_create_cq_resp *drv = (void *)(resp + 1);
	int h;

	if (out < sizeof(*resp) + sizeof(*drv))
		return EINVAL;
	h = queue_new(cmd->cqe, sizeof(struct sroce_cqe), &drv->cq);
	if (bad_next_cq)
		drv->cq.num_entries = 3;
	bad_next_cq = false;
	cq_channel[h] = cmd->comp_channel < 0 ? -1 :
			channel_wfd[cmd->comp_channel];
	cq_user_handle[h] = cmd->user_handle;
	cq_events[h] = 0;
	resp->cq_handle = h;
	resp->cqe = queues[h].num_entries;
	return 0;
}

static int cmd_ex_create_cq(const struct ib_uverbs_ex_create_cq *cmd,
			    void *response, size_t out, size_t drv_out)
{
	struct ib_uverbs_ex_create_cq_resp *resp = response;
	struct sroce_create_cq_resp *drv = (void *)((uint8_t *)response + out);
	int h;

	if (out < sizeof(*resp) || drv_out < sizeof(*drv))
		return EINVAL;
	h = queue_new(cmd->cqe, sizeof(struct sroce_cqe), &drv->cq);
	cq_channel[h] = -1;
	cq_events[h] = 0;
	resp->base.cq_handle = h;
	resp->base.cqe = queues[h].num_entries;
	resp->response_length = sizeof(*resp);
	return 0;
}

/* Move the unpolled completions to a new ring, as sroce.ko does. */
static int cmd_resize_cq(const struct ib_uverbs_resize_cq *cmd, size_t out)
{
	struct ib_uverbs_resize_cq_resp *resp = resp_ptr(cmd);
	struct sroce_resize_cq_resp *drv = (void *)(resp + 1);
	struct fake_queue old = queues[cmd->cq_handle];
	uint32_t cons = qhdr(&old)->consumer, prod = qhdr(&old)->producer;
	struct fake_queue *q;
	int h;

	if (out < sizeof(*resp) + sizeof(*drv))
		return EINVAL;
	h = queue_new(cmd->cqe, sizeof(struct sroce_cqe), &drv->cq);
	q = &queues[h];
	for (; cons != prod; cons++)
		memcpy(qcqe(q, qhdr(q)->producer++), qcqe(&old, cons),
		       sizeof(struct sroce_cqe));
	/* The handle stays; the ring behind it changes. */
	queues[cmd->cq_handle] = *q;
	q->used = false;
	real_munmap(old.kaddr, old.size);
	resp->cqe = queues[cmd->cq_handle].num_entries;
	return 0;
}

/*
 * Size the rings and report the limits as sroce.ko's init_queues() does;
 * @cmd is the core of CREATE_QP or of the extended CREATE_QP, which start
 * alike (handled here: the limits, qp_type, is_srq).
 */
#define QP_NEW(cmd, resp, drv) \
	kernel_qp_new((cmd)->max_send_wr, (cmd)->max_recv_wr, \
		      (cmd)->max_send_sge, (cmd)->max_recv_sge, \
		      (cmd)->max_inline_data, (cmd)->qp_type, (cmd)->is_srq, \
		      resp, drv)

static int kernel_qp_new(uint32_t max_send_wr, uint32_t max_recv_wr,
			 uint32_t max_send_sge, uint32_t max_recv_sge,
			 uint32_t max_inline_data, uint8_t qp_type,
			 uint8_t is_srq, struct ib_uverbs_create_qp_resp *resp,
			 struct sroce_create_qp_resp *drv)
{
	struct fake_qp *qp = &qps[nr_qps];
	uint32_t room, esz;

	if (nr_qps == MAX_QUEUES)
		return EINVAL;
	qp->send_db = qp->recv_db = 0;
	qp->type = qp_type;
	if (qp_type == IBV_QPT_XRC_RECV) {
		/* Created without udata: no queue, no driver data. */
		qp->sq = qp->rq = -1;
		memset(resp, 0, sizeof(*resp));
		goto out;
	}
	room = max_send_sge * sizeof(struct sroce_sge);
	if (max_inline_data > room)
		room = max_inline_data;
	esz = align64(sizeof(struct sroce_send_wqe) + room);
	room = esz - sizeof(struct sroce_send_wqe);
	qp->sq = wq_new(max_send_wr, esz, &drv->sq);
	resp->max_send_wr = queues[qp->sq].num_entries;
	resp->max_send_sge = min_u32(room / sizeof(struct sroce_sge),
				     SROCE_MAX_SGE);
	resp->max_inline_data = min_u32(room, SROCE_MAX_INLINE_DATA);

	qp->rq = -1;
	memset(&drv->rq, 0, sizeof(drv->rq));
	resp->max_recv_wr = 0;
	resp->max_recv_sge = 0;
	if (!is_srq && qp_type != IBV_QPT_XRC_SEND && !qp_without_rq) {
		esz = align64(sizeof(struct sroce_recv_wqe) +
			      (max_recv_sge ? max_recv_sge : 1) *
			      sizeof(struct sroce_sge));
		qp->rq = wq_new(max_recv_wr, esz, &drv->rq);
		resp->max_recv_wr = queues[qp->rq].num_entries;
		resp->max_recv_sge = min_u32((esz - sizeof(struct sroce_recv_wqe)) /
					     sizeof(struct sroce_sge),
					     SROCE_MAX_SGE);
	}
	qp_without_rq = false;

	if (bad_qp_caps == CAPS_INLINE_PAST_ENTRY)
		resp->max_inline_data = room + 1;
	else if (bad_qp_caps == CAPS_SGE_PAST_ENTRY)
		resp->max_send_sge = room / sizeof(struct sroce_sge) + 1;
	else if (bad_qp_caps == CAPS_WR_PAST_RING)
		resp->max_send_wr++;
	bad_qp_caps = CAPS_OK;
out:
	resp->qp_handle = nr_qps++;
	resp->qpn = 0x100 + resp->qp_handle;
	return 0;
}

static int cmd_create_qp(const struct ib_uverbs_create_qp *cmd, size_t out)
{
	struct ib_uverbs_create_qp_resp *resp = resp_ptr(cmd);

	if (out < sizeof(*resp) + sizeof(struct sroce_create_qp_resp))
		return EINVAL;
	return QP_NEW(cmd, resp, (void *)(resp + 1));
}

static int cmd_ex_create_qp(const struct ib_uverbs_ex_create_qp *cmd,
			    void *response, size_t out, size_t drv_out)
{
	struct ib_uverbs_ex_create_qp_resp *resp = response;
	struct sroce_create_qp_resp *drv = (void *)((uint8_t *)response + out);

	if (out < sizeof(*resp) || drv_out < sizeof(*drv))
		return EINVAL;
	resp->response_length = sizeof(*resp);
	return QP_NEW(cmd, &resp->base, drv);
}

static int cmd_create_srq(const struct ib_uverbs_create_srq *cmd, size_t out)
{
	struct ib_uverbs_create_srq_resp *resp = resp_ptr(cmd);
	struct sroce_create_srq_resp *drv = (void *)(resp + 1);
	uint32_t esz;
	int h;

	if (out < sizeof(*resp) + sizeof(*drv))
		return EINVAL;
	esz = align64(sizeof(struct sroce_recv_wqe) +
		      (cmd->max_sge ? cmd->max_sge : 1) * sizeof(struct sroce_sge));
	h = wq_new(cmd->max_wr, esz, &drv->rq);
	drv->srq_num = 7;
	srq_db[h] = 0;
	resp->srq_handle = h;
	resp->max_wr = queues[h].num_entries;
	resp->max_sge = min_u32((esz - sizeof(struct sroce_recv_wqe)) /
				sizeof(struct sroce_sge), SROCE_MAX_SGE);
	srq_max_sge[h] = resp->max_sge;
	srq_limit[h] = 0;
	return 0;
}

/* CREATE_XSRQ: as CREATE_SRQ; the SRQ number is the response's too. */
static int cmd_create_xsrq(const struct ib_uverbs_create_xsrq *cmd, size_t out)
{
	struct ib_uverbs_create_srq_resp *resp = resp_ptr(cmd);
	struct sroce_create_srq_resp *drv = (void *)(resp + 1);
	uint32_t esz;
	int h;

	if (out < sizeof(*resp) + sizeof(*drv) ||
	    (cmd->srq_type != IBV_SRQT_BASIC && cmd->srq_type != IBV_SRQT_XRC))
		return EINVAL;
	xsrq_last = *cmd;
	esz = align64(sizeof(struct sroce_recv_wqe) +
		      (cmd->max_sge ? cmd->max_sge : 1) * sizeof(struct sroce_sge));
	h = wq_new(cmd->max_wr, esz, &drv->rq);
	drv->srq_num = 0x100 + h;
	srq_db[h] = 0;
	resp->srq_handle = h;
	resp->max_wr = queues[h].num_entries;
	resp->max_sge = min_u32((esz - sizeof(struct sroce_recv_wqe)) /
				sizeof(struct sroce_sge), SROCE_MAX_SGE);
	resp->srqn = drv->srq_num;
	srq_max_sge[h] = resp->max_sge;
	srq_limit[h] = 0;
	return 0;
}

/*
 * As sroce.ko's srq_resize(): the WQEs not yet taken move to slots 0, 1,
 * ... of a new ring, and the provider learns where it is at the address
 * of the driver data; the old ring goes once its last mapping does.
 */
static int cmd_modify_srq(const struct ib_uverbs_modify_srq *cmd, size_t in)
{
	const struct sroce_modify_srq_cmd *drv = (const void *)(cmd + 1);
	struct sroce_queue_info *info;
	struct fake_queue old, *q;
	uint32_t cons, prod;
	int h = cmd->srq_handle, n, err;

	modify_srq_count++;
	err = modify_srq_errno;
	modify_srq_errno = 0;
	if (err)
		return err;
	if (h < 0 || h >= MAX_QUEUES || !queues[h].used ||
	    (cmd->attr_mask & ~(IBV_SRQ_MAX_WR | IBV_SRQ_LIMIT)))
		return EINVAL;
	if (cmd->attr_mask & IBV_SRQ_MAX_WR) {
		if (in < sizeof(*cmd) + sizeof(*drv) || !cmd->max_wr)
			return EINVAL;
		old = queues[h];
		cons = qhdr(&old)->consumer;
		prod = qhdr(&old)->producer;
		info = (void *)(uintptr_t)drv->queue_info_addr;
		if (prod - cons > cmd->max_wr)
			return EINVAL;
		n = queue_new(cmd->max_wr, old.entry_size, info);
		q = &queues[n];
		for (; cons != prod; cons++)
			memcpy(qslot(q, qhdr(q)->producer++), qslot(&old, cons),
			       old.entry_size);
		queues[h] = *q;
		q->used = false;
		real_munmap(old.kaddr, old.size);
	}
	if (cmd->attr_mask & IBV_SRQ_LIMIT)
		srq_limit[h] = cmd->srq_limit;
	return 0;
}

static int cmd_query_srq(const struct ib_uverbs_query_srq *cmd)
{
	struct ib_uverbs_query_srq_resp *resp = resp_ptr(cmd);

	resp->max_wr = queues[cmd->srq_handle].num_entries;
	resp->max_sge = srq_max_sge[cmd->srq_handle];
	resp->srq_limit = srq_limit[cmd->srq_handle];
	return 0;
}

/* MRs: REREG_MR is recorded and answered with keys from @rereg_keys. */
static int cmd_reg_mr(const struct ib_uverbs_reg_mr *cmd)
{
	struct ib_uverbs_reg_mr_resp *resp = resp_ptr(cmd);

	resp->mr_handle = 3;
	resp->lkey = 0x1234;
	resp->rkey = 0x1234;
	return 0;
}

static int cmd_rereg_mr(const struct ib_uverbs_rereg_mr *cmd)
{
	struct ib_uverbs_rereg_mr_resp *resp = resp_ptr(cmd);
	int err = rereg_errno;

	last_rereg = *cmd;
	rereg_errno = 0;
	if (err)
		return err;
	resp->lkey = rereg_keys;
	resp->rkey = rereg_keys;
	return 0;
}

static int async_fd(void)
{
	int p[2];

	if (pipe(p))
		abort();
	close(p[1]);
	return p[0];
}

static int cmd_create_comp_channel(const void *body)
{
	struct ib_uverbs_create_comp_channel_resp *resp = resp_ptr(body);
	int p[2];

	if (pipe(p) || p[0] >= (int)(sizeof(channel_wfd) / sizeof(int)))
		abort();
	channel_wfd[p[0]] = p[1];
	resp->fd = p[0];
	return 0;
}

void kernel_comp_event(int h)
{
	struct ib_uverbs_comp_event_desc ev = { .cq_handle = cq_user_handle[h] };

	if (cq_channel[h] < 0 ||
	    real_write(cq_channel[h], &ev, sizeof(ev)) != sizeof(ev))
		abort();
	cq_events[h]++;
}

static int cmd_create_ah(const struct ib_uverbs_create_ah *cmd, size_t out)
{
	struct ib_uverbs_create_ah_resp *resp = resp_ptr(cmd);
	struct sroce_create_ah_resp *drv = (void *)(resp + 1);

	if (out < sizeof(*resp) + sizeof(*drv))
		return EINVAL;
	resp->ah_handle = 9;
	drv->ah_num = 0x55;
	return 0;
}

/*
 * A doorbell: a POST_* command of exactly the core size, without work
 * requests, answered as uverbs answers it. @size is the command's core
 * struct, @wqe_min the smallest wqe_size uverbs accepts.
 */
static int doorbell(const struct ib_uverbs_cmd_hdr *hdr, size_t len,
		    size_t size, size_t wqe_min, _Atomic unsigned int *count)
{
	/* The three commands start alike: response, handle, counts, size. */
	const struct ib_uverbs_post_recv *cmd = (const void *)(hdr + 1);
	uint32_t *resp = resp_ptr(cmd);
	int err;

	if (len != sizeof(*hdr) + size || hdr->in_words * 4 != len ||
	    hdr->out_words * 4 != sizeof(uint32_t) || cmd->wr_count ||
	    cmd->sge_count || cmd->wqe_size < wqe_min) {
		fprintf(stderr, "fake kernel: malformed doorbell\n");
		return EINVAL;
	}
	(*count)++;
	if (doorbell_hook)
		doorbell_hook();
	err = doorbell_errno;
	doorbell_errno = 0;
	*resp = 0;	/* bad_wr */
	return err;
}

static int fake_doorbell(const struct ib_uverbs_cmd_hdr *hdr, size_t len)
{
	const struct ib_uverbs_post_send *cmd = (const void *)(hdr + 1);

	if (cmd->qp_handle >= MAX_QUEUES)
		return EINVAL;
	switch (hdr->command) {
	case IB_USER_VERBS_CMD_POST_SEND:
		return doorbell(hdr, len, sizeof(struct ib_uverbs_post_send),
				sizeof(struct ib_uverbs_send_wr),
				&qps[cmd->qp_handle].send_db);
	case IB_USER_VERBS_CMD_POST_RECV:
		return doorbell(hdr, len, sizeof(struct ib_uverbs_post_recv),
				sizeof(struct ib_uverbs_recv_wr),
				&qps[cmd->qp_handle].recv_db);
	default:
		return doorbell(hdr, len, sizeof(struct ib_uverbs_post_srq_recv),
				sizeof(struct ib_uverbs_recv_wr),
				&srq_db[cmd->qp_handle]);
	}
}

/* One legacy (non-extended) uverbs write command. */
static int fake_cmd(uint32_t command, const void *body, size_t in, size_t out)
{
	switch (command) {
	case IB_USER_VERBS_CMD_GET_CONTEXT: {
		struct ib_uverbs_get_context_resp *resp = resp_ptr(body);
		struct sroce_alloc_ucontext_resp *drv = (void *)(resp + 1);

		if (out < sizeof(*resp) + sizeof(*drv))
			return EINVAL;
		resp->async_fd = async_fd();
		resp->num_comp_vectors = 1;
		drv->queue_data_offset = SROCE_QUEUE_DATA_OFFSET;
		drv->max_inline_data = SROCE_MAX_INLINE_DATA;
		return 0;
	}
	case IB_USER_VERBS_CMD_ALLOC_PD: {
		struct ib_uverbs_alloc_pd_resp *resp = resp_ptr(body);
		struct sroce_alloc_pd_resp *drv = (void *)(resp + 1);

		resp->pd_handle = ++nr_pds;
		drv->pdn = nr_pds;
		return 0;
	}
	case IB_USER_VERBS_CMD_DEALLOC_PD:
		return 0;
	case IB_USER_VERBS_CMD_CREATE_CQ:
		return cmd_create_cq(body, out);
	case IB_USER_VERBS_CMD_RESIZE_CQ:
		return cmd_resize_cq(body, out);
	case IB_USER_VERBS_CMD_DESTROY_CQ: {
		const struct ib_uverbs_destroy_cq *cmd = body;
		struct ib_uverbs_destroy_cq_resp *resp = resp_ptr(cmd);

		memset(resp, 0, sizeof(*resp));
		/* libibverbs waits until the application acked them all. */
		resp->comp_events_reported = cq_events[cmd->cq_handle];
		queue_free(cmd->cq_handle);
		destroyed_cqs++;
		return 0;
	}
	case IB_USER_VERBS_CMD_CREATE_QP:
		return cmd_create_qp(body, out);
	case IB_USER_VERBS_CMD_DESTROY_QP: {
		const struct ib_uverbs_destroy_qp *cmd = body;
		struct ib_uverbs_destroy_qp_resp *resp = resp_ptr(cmd);

		memset(resp, 0, sizeof(*resp));
		queue_free(qps[cmd->qp_handle].sq);
		queue_free(qps[cmd->qp_handle].rq);
		destroyed_qps++;
		return 0;
	}
	case IB_USER_VERBS_CMD_CREATE_SRQ:
		return cmd_create_srq(body, out);
	case IB_USER_VERBS_CMD_DESTROY_SRQ: {
		const struct ib_uverbs_destroy_srq *cmd = body;
		struct ib_uverbs_destroy_srq_resp *resp = resp_ptr(cmd);

		memset(resp, 0, sizeof(*resp));
		queue_free(cmd->srq_handle);
		return 0;
	}
	case IB_USER_VERBS_CMD_CREATE_XSRQ:
		return cmd_create_xsrq(body, out);
	case IB_USER_VERBS_CMD_OPEN_XRCD: {
		struct ib_uverbs_open_xrcd_resp *resp = resp_ptr(body);

		resp->xrcd_handle = 0x40 + nr_xrcds++;
		return 0;
	}
	case IB_USER_VERBS_CMD_CLOSE_XRCD:
		return 0;
	case IB_USER_VERBS_CMD_MODIFY_SRQ:
		return cmd_modify_srq(body, in);
	case IB_USER_VERBS_CMD_QUERY_SRQ:
		return cmd_query_srq(body);
	case IB_USER_VERBS_CMD_MODIFY_QP:
		return 0;
	case IB_USER_VERBS_CMD_REG_MR:
		return cmd_reg_mr(body);
	case IB_USER_VERBS_CMD_REREG_MR:
		return cmd_rereg_mr(body);
	case IB_USER_VERBS_CMD_DEREG_MR:
		return 0;
	case IB_USER_VERBS_CMD_CREATE_AH:
		return cmd_create_ah(body, out);
	case IB_USER_VERBS_CMD_DESTROY_AH:
		return 0;
	case IB_USER_VERBS_CMD_CREATE_COMP_CHANNEL:
		return cmd_create_comp_channel(body);
	case IB_USER_VERBS_CMD_REQ_NOTIFY_CQ: {
		const struct ib_uverbs_req_notify_cq *cmd = body;

		notify_count++;
		notify_cq_handle = cmd->cq_handle;
		notify_solicited = cmd->solicited_only;
		return 0;
	}
	}
	fprintf(stderr, "fake kernel: command %u not emulated\n", command);
	return ENOSYS;
}

ssize_t write(int fd, const void *buf, size_t len)
{
	const struct ib_uverbs_cmd_hdr *hdr = buf;
	int err;

	if (!is_uverbs(fd) || len < sizeof(*hdr))
		return real_write(fd, buf, len);

	if (hdr->command & IB_USER_VERBS_CMD_FLAG_EXTENDED) {
		const struct ib_uverbs_ex_cmd_hdr *ex = (const void *)(hdr + 1);
		uint32_t command = hdr->command & ~IB_USER_VERBS_CMD_FLAG_EXTENDED;

		if (command == IB_USER_VERBS_EX_CMD_CREATE_CQ) {
			err = cmd_ex_create_cq((const void *)(ex + 1),
					       (void *)(uintptr_t)ex->response,
					       hdr->out_words * 8,
					       ex->provider_out_words * 8);
		} else if (command == IB_USER_VERBS_EX_CMD_CREATE_QP) {
			err = cmd_ex_create_qp((const void *)(ex + 1),
					       (void *)(uintptr_t)ex->response,
					       hdr->out_words * 8,
					       ex->provider_out_words * 8);
		} else {
			fprintf(stderr, "fake kernel: ex command %u not emulated\n",
				command);
			err = ENOSYS;
		}
	} else if (hdr->command == IB_USER_VERBS_CMD_POST_SEND ||
		   hdr->command == IB_USER_VERBS_CMD_POST_RECV ||
		   hdr->command == IB_USER_VERBS_CMD_POST_SRQ_RECV) {
		err = fake_doorbell(hdr, len);
	} else {
		err = fake_cmd(hdr->command, hdr + 1, len - sizeof(*hdr),
			       hdr->out_words * 4);
	}
	if (err) {
		errno = err;
		return -1;
	}
	return len;
}

void *mmap(void *addr, size_t len, int prot, int flags, int fd, off_t off)
{
	struct fake_queue *q;
	void *alias;
	int i;

	if (fd < 0 || !is_uverbs(fd))
		return real_mmap(addr, len, prot, flags, fd, off);
	for (q = queues; q < queues + MAX_QUEUES; q++)
		if (q->used && q->offset == (uint64_t)off && q->size == len)
			break;
	for (i = 0; i < MAX_QUEUES && aliases[i]; i++)
		;
	if (q == queues + MAX_QUEUES || i == MAX_QUEUES) {
		errno = EINVAL;
		return MAP_FAILED;
	}
	alias = mremap(q->kaddr, 0, len, MREMAP_MAYMOVE);
	if (alias == MAP_FAILED)
		return MAP_FAILED;
	aliases[i] = alias;
	alias_queue[i] = q - queues;
	live_aliases++;
	return alias;
}

int munmap(void *addr, size_t len)
{
	int i;

	for (i = 0; i < MAX_QUEUES; i++)
		if (aliases[i] == addr) {
			aliases[i] = NULL;
			live_aliases--;
			break;
		}
	return real_munmap(addr, len);
}

/* Find the C library's write(), mmap() and munmap() that these wrap. */
void fake_kernel_init(void)
{
	real_write = dlsym(RTLD_NEXT, "write");
	real_mmap = dlsym(RTLD_NEXT, "mmap");
	real_munmap = dlsym(RTLD_NEXT, "munmap");
}
