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
 * CQ polling are tested here, posting in post-test.c, concurrency and the
 * benchmark in post-stress.c.
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

#define CHECK_EXTERN
#include "check.h"
#include "fake-kernel.h"
#include "post-stress.h"
#include "post-test.h"
#include "wr-test.h"

/* ------------------------------------------------------------------ */
/* The fake kernel */

struct fake_queue queues[MAX_QUEUES];
static uint64_t next_offset = 1 << 12;

/* The provider's mappings of the rings, and which queue each shows. */
static void *aliases[MAX_QUEUES];
static int alias_queue[MAX_QUEUES];
int live_aliases;
static unsigned int destroyed_cqs, destroyed_qps;

/* Failure injection for the next create. */
static bool bad_next_cq;	/* num_entries not a power of two */
static bool qp_without_rq;	/* rq.mmap_size 0 although no SRQ */
enum bad_caps bad_qp_caps;
int doorbell_errno;
bool wq_start_set;
uint32_t wq_start;

/* Per SRQ handle: what QUERY_SRQ reports besides the ring size. */
static uint32_t srq_max_sge[MAX_QUEUES], srq_limit[MAX_QUEUES];
static unsigned int modify_srq_count;
static int modify_srq_errno;		/* MODIFY_SRQ fails with this, once */

static uint32_t nr_pds, nr_xrcds;
static struct ib_uverbs_create_xsrq xsrq_last;
static struct ib_uverbs_rereg_mr last_rereg;
static uint32_t rereg_keys;
static int rereg_errno;			/* REREG_MR fails with this, once */

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

static struct sroce_cqe *qcqe(struct fake_queue *q, uint32_t i)
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

/* ------------------------------------------------------------------ */
/* The test */

void check(bool ok, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vcheck(ok, fmt, ap);
	va_end(ap);
}

/* Produce @n completions with wr_id @first.. into CQ ring @h. */
static void kernel_complete(int h, uint64_t first, int n)
{
	struct fake_queue *q = &queues[h];
	uint32_t prod = qhdr(q)->producer;
	int i;

	for (i = 0; i < n; i++, prod++) {
		struct sroce_cqe *cqe = qcqe(q, prod);

		memset(cqe, 0, sizeof(*cqe));
		cqe->wr_id = first + i;
		cqe->status = IBV_WC_SUCCESS;
		cqe->opcode = IBV_WC_RECV;
		cqe->byte_len = 1000 + i;
		cqe->ex = htobe32(0xabc0 + i);
		cqe->qp_num = 0x111;
		cqe->src_qp = 0x222;
		cqe->wc_flags = IBV_WC_WITH_IMM;
		cqe->pkey_index = 3;
		cqe->sl = 4;
	}
	atomic_store_explicit((_Atomic(uint32_t) *)&qhdr(q)->producer, prod,
			      memory_order_release);
}

static int cq_handle(struct ibv_cq *cq)
{
	return cq->handle;
}

static uint32_t consumer(int h)
{
	return qhdr(&queues[h])->consumer;
}

static void test_cq(struct ibv_context *ctx)
{
	struct ibv_wc wc[16];
	struct ibv_cq *cq;
	int h, n, i;
	bool in_order;

	cq = ibv_create_cq(ctx, 5, NULL, NULL, 0);
	check(cq && live_aliases == 1, "create_cq maps the ring");
	if (!cq)
		return;
	h = cq_handle(cq);
	check(ibv_poll_cq(cq, 16, wc) == 0, "an empty CQ polls nothing");

	kernel_complete(h, 100, 3);
	n = ibv_poll_cq(cq, 2, wc);
	check(n == 2 && wc[0].wr_id == 100 && wc[1].wr_id == 101,
	      "poll_cq takes at most ne completions, oldest first");
	check(wc[1].byte_len == 1001 && wc[1].imm_data == htobe32(0xabc1) &&
	      wc[1].qp_num == 0x111 && wc[1].src_qp == 0x222 &&
	      wc[1].wc_flags == IBV_WC_WITH_IMM && wc[1].pkey_index == 3 &&
	      wc[1].sl == 4 && wc[1].opcode == IBV_WC_RECV &&
	      wc[1].status == IBV_WC_SUCCESS,
	      "every field of a completion arrives");
	check(consumer(h) == 2, "the consumer index is published");
	n = ibv_poll_cq(cq, 16, wc);
	check(n == 1 && wc[0].wr_id == 102 && consumer(h) == 3,
	      "the rest follows");

	kernel_complete(h, 200, 8);
	n = ibv_poll_cq(cq, 16, wc);
	for (i = 0, in_order = true; i < n; i++)
		in_order &= wc[i].wr_id == 200 + (uint64_t)i;
	check(n == 8 && in_order && consumer(h) == 11,
	      "a full ring wraps around in order");

	qhdr(&queues[h])->producer = consumer(h) + 9;
	check(ibv_poll_cq(cq, 16, wc) < 0 && consumer(h) == 11,
	      "a producer more than a ring ahead fails the poll");
	qhdr(&queues[h])->producer = consumer(h);

	kernel_complete(h, 300, 2);
	check(!ibv_resize_cq(cq, 20) && live_aliases == 1 &&
	      queues[h].num_entries == 32, "resize_cq swaps the mapping");
	n = ibv_poll_cq(cq, 16, wc);
	check(n == 2 && wc[0].wr_id == 300 && wc[1].wr_id == 301 &&
	      consumer(h) == 2, "completions survive a resize");

	check(!ibv_destroy_cq(cq) && live_aliases == 0,
	      "destroy_cq unmaps the ring");
}

static void test_cq_ex(struct ibv_context *ctx)
{
	struct ibv_cq_init_attr_ex attr = {
		.cqe = 4,
		.wc_flags = IBV_WC_EX_WITH_BYTE_LEN | IBV_WC_EX_WITH_QP_NUM,
	};
	struct ibv_poll_cq_attr pattr = {};
	struct ibv_cq_ex *cq;
	bool ok;
	int h;

	attr.wc_flags |= IBV_WC_EX_WITH_COMPLETION_TIMESTAMP;
	cq = ibv_create_cq_ex(ctx, &attr);
	check(!cq && errno == EOPNOTSUPP,
	      "create_cq_ex refuses completion timestamps");
	attr.wc_flags &= ~IBV_WC_EX_WITH_COMPLETION_TIMESTAMP;

	cq = ibv_create_cq_ex(ctx, &attr);
	check(cq && live_aliases == 1, "create_cq_ex maps the ring");
	if (!cq)
		return;
	h = ibv_cq_ex_to_cq(cq)->handle;
	check(ibv_start_poll(cq, &pattr) == ENOENT, "start_poll on empty");

	kernel_complete(h, 400, 2);
	ok = ibv_start_poll(cq, &pattr) == 0 && cq->wr_id == 400 &&
	     ibv_wc_read_byte_len(cq) == 1000 &&
	     ibv_wc_read_qp_num(cq) == 0x111 &&
	     ibv_wc_read_opcode(cq) == IBV_WC_RECV;
	ok &= ibv_next_poll(cq) == 0 && cq->wr_id == 401 &&
	      ibv_wc_read_byte_len(cq) == 1001;
	ok &= ibv_next_poll(cq) == ENOENT;
	ibv_end_poll(cq);
	check(ok && consumer(h) == 2, "start/next/end_poll walk the ring");
	check(!ibv_destroy_cq(ibv_cq_ex_to_cq(cq)) && live_aliases == 0,
	      "destroying a cq_ex unmaps the ring");
}

/*
 * The L3 header type of a UD receive (the CQE's network_hdr_type) comes
 * out as wc.sl, mlx5's RoCE packet type (0xa IPv4, 0x9 IPv6), through
 * poll_cq and through ibv_wc_read_sl(); other completions keep their sl.
 */
static void test_cq_sl(struct ibv_context *ctx)
{
	static const uint8_t type[] = { SROCE_NETWORK_IPV4, SROCE_NETWORK_IPV6, 0 };
	static const uint8_t sl[] = { 0xa, 0x9, 4 };
	struct ibv_cq_init_attr_ex attr = {
		.cqe = 4,
		.wc_flags = IBV_WC_EX_WITH_SL,
	};
	struct ibv_poll_cq_attr pattr = {};
	struct ibv_cq_ex *cqx;
	struct ibv_wc wc[4];
	struct ibv_cq *cq;
	bool ok = true;
	int h, i, n;

	cq = ibv_create_cq(ctx, 4, NULL, NULL, 0);
	cqx = ibv_create_cq_ex(ctx, &attr);
	check(cq && cqx, "create_cq and create_cq_ex for the sl checks");
	if (!cq || !cqx)
		goto out;
	h = cq->handle;
	kernel_complete(h, 600, 3);
	for (i = 0; i < 3; i++)
		qcqe(&queues[h], qhdr(&queues[h])->producer - 3 + i)->network_hdr_type = type[i];
	n = ibv_poll_cq(cq, 4, wc);
	for (i = 0; i < n; i++)
		ok &= wc[i].sl == sl[i];
	check(n == 3 && ok, "poll_cq: wc.sl 0x%x 0x%x %u for IPv4, IPv6, neither",
	      n > 0 ? wc[0].sl : 0, n > 1 ? wc[1].sl : 0, n > 2 ? wc[2].sl : 0);

	h = ibv_cq_ex_to_cq(cqx)->handle;
	kernel_complete(h, 700, 3);
	for (i = 0; i < 3; i++)
		qcqe(&queues[h], qhdr(&queues[h])->producer - 3 + i)->network_hdr_type = type[i];
	ok = ibv_start_poll(cqx, &pattr) == 0 && ibv_wc_read_sl(cqx) == sl[0];
	ok &= ibv_next_poll(cqx) == 0 && ibv_wc_read_sl(cqx) == sl[1];
	ok &= ibv_next_poll(cqx) == 0 && ibv_wc_read_sl(cqx) == sl[2];
	ibv_end_poll(cqx);
	check(ok, "ibv_wc_read_sl: the same");
out:
	if (cq)
		ibv_destroy_cq(cq);
	if (cqx)
		ibv_destroy_cq(ibv_cq_ex_to_cq(cqx));
}

/* Produce a completion of QP @qpn with @wr_id into CQ ring @h. */
static void kernel_complete_qp(int h, uint32_t qpn, uint64_t wr_id)
{
	struct fake_queue *q = &queues[h];
	uint32_t prod = qhdr(q)->producer;
	struct sroce_cqe *cqe = qcqe(q, prod);

	memset(cqe, 0, sizeof(*cqe));
	cqe->wr_id = wr_id;
	cqe->status = IBV_WC_WR_FLUSH_ERR;
	cqe->opcode = IBV_WC_RECV;
	cqe->qp_num = qpn;
	atomic_store_explicit((_Atomic(uint32_t) *)&qhdr(q)->producer, prod + 1,
			      memory_order_release);
}

/*
 * A QP reset or destroyed takes its completions out of its CQ; the others
 * stay, in order, and nothing past the producer index is touched.
 */
static void test_cq_clean(struct ibv_context *ctx)
{
	static const int owner[] = { 0, 1, 0, 1, 1, 0, 0 };
	struct ibv_qp_cap cap = { .max_send_wr = 2, .max_send_sge = 1,
				  .max_recv_wr = 2, .max_recv_sge = 1 };
	struct ibv_pd *pd = ibv_alloc_pd(ctx);
	struct ibv_cq *cq = ibv_create_cq(ctx, 16, NULL, NULL, 0);
	struct ibv_qp *qp[2];
	struct ibv_wc wc[16];
	struct fake_queue *q;
	bool untouched = true;
	unsigned int i;
	int h, n;

	qp[0] = qp_new(pd, cq, IBV_QPT_RC, &cap, NULL, 0);
	qp[1] = qp_new(pd, cq, IBV_QPT_RC, &cap, NULL, 0);
	if (!cq || !qp[0] || !qp[1]) {
		check(false, "a CQ and two QPs to clean it of");
		return;
	}
	h = cq->handle;
	q = &queues[h];
	for (i = 0; i < 16; i++)
		memset(qcqe(q, i), 0xa5, sizeof(struct sroce_cqe));
	for (i = 0; i < 7; i++)
		kernel_complete_qp(h, qp[owner[i]]->qp_num, i);
	n = ibv_poll_cq(cq, 1, wc);
	qp_to(qp[0], IBV_QPS_RTS);
	check(n == 1 && wc[0].wr_id == 0 && consumer(h) == 1,
	      "clean: a completion polled; no other state cleans the CQ");

	qp_to(qp[0], IBV_QPS_RESET);
	for (i = 7; i < 16; i++)
		untouched &= ((uint8_t *)qcqe(q, i))[0] == 0xa5;
	check(consumer(h) == 4 && untouched,
	      "reset: the consumer skips the QP's three completions, the slots past the producer are untouched");
	n = ibv_poll_cq(cq, 16, wc);
	check(n == 3 && wc[0].wr_id == 1 && wc[1].wr_id == 3 &&
	      wc[2].wr_id == 4 && wc[2].qp_num == qp[1]->qp_num,
	      "reset: the other QP's completions remain, in order");

	kernel_complete_qp(h, qp[1]->qp_num, 7);
	kernel_complete_qp(h, qp[0]->qp_num, 8);
	kernel_complete_qp(h, qp[1]->qp_num, 9);
	ibv_destroy_qp(qp[1]);
	n = ibv_poll_cq(cq, 16, wc);
	check(n == 1 && wc[0].wr_id == 8, "destroy: the QP's completions go too");
	ibv_destroy_qp(qp[0]);
	ibv_destroy_cq(cq);
	ibv_dealloc_pd(pd);
}

static void test_failures(struct ibv_context *ctx)
{
	struct ibv_qp_init_attr qattr = {
		.qp_type = IBV_QPT_RC,
		.cap = { .max_send_wr = 4, .max_recv_wr = 4,
			 .max_send_sge = 1, .max_recv_sge = 1 },
	};
	unsigned int cqs = destroyed_cqs, qps = destroyed_qps;
	struct ibv_pd *pd = ibv_alloc_pd(ctx);
	struct ibv_cq *cq;

	bad_next_cq = true;
	cq = ibv_create_cq(ctx, 4, NULL, NULL, 0);
	check(!cq && errno == EINVAL && destroyed_cqs == cqs + 1 &&
	      live_aliases == 0,
	      "a ring that is not a power of two is refused and destroyed");

	cq = ibv_create_cq(ctx, 4, NULL, NULL, 0);
	qattr.send_cq = qattr.recv_cq = cq;
	qp_without_rq = true;
	check(!ibv_create_qp(pd, &qattr) && errno == EINVAL &&
	      destroyed_qps == qps + 1 && live_aliases == 1,
	      "a QP without SRQ and without RQ is refused and unmapped");
	ibv_destroy_cq(cq);
	ibv_dealloc_pd(pd);
}

static void test_qp_srq(struct ibv_context *ctx)
{
	struct ibv_srq_init_attr sattr = { .attr = { .max_wr = 8, .max_sge = 1 } };
	struct ibv_qp_init_attr qattr = {
		.qp_type = IBV_QPT_RC,
		.cap = { .max_send_wr = 4, .max_recv_wr = 4,
			 .max_send_sge = 1, .max_recv_sge = 1 },
	};
	struct ibv_send_wr swr = { .opcode = IBV_WR_SEND }, *bad_swr = NULL;
	struct ibv_recv_wr rwr = {}, *bad_rwr = NULL;
	struct ibv_pd *pd = ibv_alloc_pd(ctx);
	struct ibv_cq *cq = ibv_create_cq(ctx, 8, NULL, NULL, 0);
	struct ibv_srq *srq;
	struct ibv_qp *qp;

	qattr.send_cq = qattr.recv_cq = cq;
	qp = ibv_create_qp(pd, &qattr);
	check(qp && live_aliases == 3, "create_qp maps SQ and RQ");
	check(qp && ibv_post_send(qp, &swr, &bad_swr) == EINVAL &&
	      bad_swr == &swr, "post_send in RESET fails");
	check(qp && ibv_post_recv(qp, &rwr, &bad_rwr) == EINVAL &&
	      bad_rwr == &rwr, "post_recv in RESET fails");
	check(qp && !ibv_destroy_qp(qp) && live_aliases == 1,
	      "destroy_qp unmaps both");

	srq = ibv_create_srq(pd, &sattr);
	check(srq && live_aliases == 2, "create_srq maps its ring");
	qattr.srq = srq;
	qp = ibv_create_qp(pd, &qattr);
	check(qp && live_aliases == 3, "a QP on an SRQ maps only its SQ");
	check(qp && !ibv_destroy_qp(qp) && !ibv_destroy_srq(srq) &&
	      live_aliases == 1, "destroying them unmaps everything");
	ibv_destroy_cq(cq);
	ibv_dealloc_pd(pd);
}

/* Post @n receives with wr_id @first.. to @srq; return what post said. */
static int srq_post(struct ibv_srq *srq, uint64_t first, int n)
{
	struct ibv_sge sge = { .addr = 0x1000, .length = 64, .lkey = 9 };
	struct ibv_recv_wr wr[32], *bad = NULL;
	int i;

	for (i = 0; i < n; i++)
		wr[i] = (struct ibv_recv_wr){ .wr_id = first + i, .sg_list = &sge,
					      .num_sge = 1,
					      .next = i + 1 < n ? &wr[i + 1] : NULL };
	return ibv_post_srq_recv(srq, wr, &bad);
}

/* Slots @from.. of ring @h hold receive entries with wr_id @first.. */
static bool srq_holds(int h, uint32_t from, uint64_t first, int n)
{
	struct sroce_recv_wqe *w;
	int i;

	for (i = 0; i < n; i++) {
		w = qslot(&queues[h], from + i);
		if (w->wr_id != first + i || w->num_sge != 1 ||
		    w->sge[0].lkey != 9)
			return false;
	}
	return true;
}

/*
 * IBV_SRQ_MAX_WR: the provider passes the address of a queue_info in the
 * driver data, maps the new ring, unmaps the old and goes on posting at
 * the new producer index, with the new ring's size as its limit.
 */
static void test_srq_resize(struct ibv_context *ctx)
{
	struct ibv_srq_init_attr sattr = { .attr = { .max_wr = 4, .max_sge = 1 } };
	struct ibv_srq_attr attr = { .max_wr = 12 };
	struct ibv_pd *pd = ibv_alloc_pd(ctx);
	struct ibv_srq *srq;
	unsigned int count;
	void *old_alias;
	int h, aliases;

	srq = ibv_create_srq(pd, &sattr);
	if (!srq) {
		check(false, "an SRQ to resize");
		return;
	}
	h = srq->handle;
	aliases = live_aliases;
	check(!srq_post(srq, 10, 4) && srq_post(srq, 14, 1) == ENOMEM,
	      "resize: four WQEs fill the SRQ of four");
	qhdr(&queues[h])->consumer = 1;		/* the kernel took one */

	old_alias = queue_alias(h);
	count = modify_srq_count;
	check(!ibv_modify_srq(srq, &attr, IBV_SRQ_MAX_WR) &&
	      modify_srq_count == count + 1 && queues[h].num_entries == 16 &&
	      live_aliases == aliases && queue_alias(h) != old_alias,
	      "resize: the new ring is mapped, the old one unmapped");
	check(qhdr(&queues[h])->producer == 3 && srq_holds(h, 0, 11, 3),
	      "resize: the three WQEs not taken moved to slots 0..2");
	check(!srq_post(srq, 20, 13) && qhdr(&queues[h])->producer == 16 &&
	      srq_holds(h, 3, 20, 13) && srq_post(srq, 40, 1) == ENOMEM,
	      "resize: posting goes on at index 3, up to the new size of 16");
	check(!ibv_query_srq(srq, &attr) && attr.max_wr == 16,
	      "resize: query_srq reports the new size");

	modify_srq_errno = ENOMEM;
	attr.max_wr = 64;
	check(ibv_modify_srq(srq, &attr, IBV_SRQ_MAX_WR) == ENOMEM &&
	      queues[h].num_entries == 16 && live_aliases == aliases,
	      "resize: a refused resize leaves the ring in place");
	qhdr(&queues[h])->consumer = 16;
	check(!srq_post(srq, 50, 2) && srq_holds(h, 16, 50, 2),
	      "resize: ... and posting goes on in it");

	/* Shrink: the free slots counted in the old ring do not carry over. */
	qhdr(&queues[h])->consumer = 18;
	attr.max_wr = 4;
	check(!ibv_modify_srq(srq, &attr, IBV_SRQ_MAX_WR) &&
	      queues[h].num_entries == 4 && qhdr(&queues[h])->producer == 0 &&
	      srq_post(srq, 60, 5) == ENOMEM && qhdr(&queues[h])->producer == 4 &&
	      srq_holds(h, 0, 60, 4),
	      "resize to fewer slots: four fit, the fifth is ENOMEM");

	attr.srq_limit = 5;
	count = modify_srq_count;
	check(!ibv_modify_srq(srq, &attr, IBV_SRQ_LIMIT) &&
	      queues[h].num_entries == 4 && srq_limit[h] == 5 &&
	      queue_alias(h) && modify_srq_count == count + 1,
	      "modify_srq(LIMIT) alone leaves the ring alone");
	check(!ibv_destroy_srq(srq) && live_aliases == aliases - 1,
	      "destroying a resized SRQ unmaps its ring");
	ibv_dealloc_pd(pd);
}

/*
 * rereg_mr: the command carries the flags, the new range (as its own
 * address) and PD, and the keys of the response replace the MR's.
 */
static void test_rereg_mr(struct ibv_context *ctx)
{
	static uint8_t buf[256], buf2[128];
	struct ibv_pd *pd = ibv_alloc_pd(ctx), *pd2 = ibv_alloc_pd(ctx);
	struct ibv_mr *mr;
	int ret;

	mr = ibv_reg_mr(pd, buf, sizeof(buf), IBV_ACCESS_LOCAL_WRITE);
	if (!mr) {
		check(false, "an MR to reregister");
		return;
	}
	rereg_keys = 0x5678;
	ret = ibv_rereg_mr(mr, IBV_REREG_MR_CHANGE_TRANSLATION |
			   IBV_REREG_MR_CHANGE_ACCESS, NULL, buf2, sizeof(buf2),
			   IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_REMOTE_READ);
	check(!ret && last_rereg.mr_handle == 3 &&
	      last_rereg.flags == (IBV_REREG_MR_CHANGE_TRANSLATION |
				   IBV_REREG_MR_CHANGE_ACCESS) &&
	      last_rereg.start == (uintptr_t)buf2 &&
	      last_rereg.hca_va == (uintptr_t)buf2 &&
	      last_rereg.length == sizeof(buf2) && last_rereg.pd_handle == 0 &&
	      last_rereg.access_flags == (IBV_ACCESS_LOCAL_WRITE |
					  IBV_ACCESS_REMOTE_READ),
	      "rereg_mr: translation and access reach the kernel");
	check(mr->lkey == 0x5678 && mr->rkey == 0x5678 && mr->addr == buf2 &&
	      mr->length == sizeof(buf2), "rereg_mr: the MR takes the new keys");

	rereg_keys = 0x9abc;
	ret = ibv_rereg_mr(mr, IBV_REREG_MR_CHANGE_PD, pd2, NULL, 0, 0);
	check(!ret && last_rereg.flags == IBV_REREG_MR_CHANGE_PD &&
	      last_rereg.pd_handle == pd2->handle &&
	      pd2->handle != pd->handle && mr->pd == pd2 &&
	      mr->lkey == 0x9abc, "rereg_mr: a new PD reaches the kernel");

	rereg_errno = EBUSY;
	errno = 0;
	ret = ibv_rereg_mr(mr, IBV_REREG_MR_CHANGE_ACCESS, NULL, NULL, 0,
			   IBV_ACCESS_LOCAL_WRITE);
	check(ret == IBV_REREG_MR_ERR_CMD && errno == EBUSY &&
	      mr->lkey == 0x9abc && mr->pd == pd2,
	      "rereg_mr: a refusal is IBV_REREG_MR_ERR_CMD with the kernel's errno");
	check(!ibv_dereg_mr(mr), "rereg_mr: the MR deregisters");
	ibv_dealloc_pd(pd2);
	ibv_dealloc_pd(pd);
}

/*
 * XRC: a domain, an XRC SRQ (its ring, and its number for the senders),
 * and an XRC receive QP, which has no ring of its own.
 */
static void test_xrc(struct ibv_context *ctx)
{
	struct ibv_xrcd_init_attr xattr = {
		.comp_mask = IBV_XRCD_INIT_ATTR_FD | IBV_XRCD_INIT_ATTR_OFLAGS,
		.fd = -1, .oflags = O_CREAT,
	};
	struct ibv_pd *pd = ibv_alloc_pd(ctx);
	struct ibv_cq *cq = ibv_create_cq(ctx, 8, NULL, NULL, 0);
	struct ibv_srq_init_attr_ex sattr = {
		.attr = { .max_wr = 4, .max_sge = 1 },
		.comp_mask = IBV_SRQ_INIT_ATTR_TYPE | IBV_SRQ_INIT_ATTR_PD |
			     IBV_SRQ_INIT_ATTR_XRCD | IBV_SRQ_INIT_ATTR_CQ,
		.srq_type = IBV_SRQT_XRC, .pd = pd, .cq = cq,
	};
	struct ibv_qp_init_attr_ex qattr = {
		.qp_type = IBV_QPT_XRC_RECV, .comp_mask = IBV_QP_INIT_ATTR_XRCD,
	};
	struct ibv_send_wr swr = { .opcode = IBV_WR_SEND }, *bad_swr;
	struct ibv_recv_wr rwr = {}, *bad_rwr;
	int aliases = live_aliases;
	struct ibv_xrcd *xrcd;
	struct ibv_srq *srq;
	struct ibv_qp *qp;
	uint32_t num = 0;

	xrcd = ibv_open_xrcd(ctx, &xattr);
	check(xrcd, "open_xrcd");
	if (!xrcd)
		return;
	sattr.xrcd = xrcd;
	srq = ibv_create_srq_ex(ctx, &sattr);
	check(srq && live_aliases == aliases + 1 &&
	      xsrq_last.srq_type == IBV_SRQT_XRC &&
	      xsrq_last.xrcd_handle == 0x40 + nr_xrcds - 1 &&
	      xsrq_last.cq_handle == cq->handle && sattr.attr.max_wr == 4,
	      "create_srq_ex: an XRC SRQ in the XRCD, its ring mapped");
	check(srq && !ibv_get_srq_num(srq, &num) &&
	      num == 0x100 + srq->handle, "get_srq_num: the kernel's number");
	check(srq && !srq_post(srq, 1, 2) &&
	      qhdr(&queues[srq->handle])->producer == 2 &&
	      srq_holds(srq->handle, 0, 1, 2), "an XRC SRQ takes receives");

	qattr.xrcd = xrcd;
	qp = ibv_create_qp_ex(ctx, &qattr);
	check(qp && live_aliases == aliases + 1 && !ibv_qp_to_qp_ex(qp),
	      "an XRC receive QP has no ring to map");
	if (qp) {
		qp_to(qp, IBV_QPS_RTS);
		check(ibv_post_send(qp, &swr, &bad_swr) == EINVAL &&
		      ibv_post_recv(qp, &rwr, &bad_rwr) == EINVAL,
		      "an XRC receive QP refuses posts: EINVAL");
		check(!ibv_destroy_qp(qp), "destroy the XRC receive QP");
	}
	qattr.comp_mask |= IBV_QP_INIT_ATTR_SEND_OPS_FLAGS;
	qattr.send_ops_flags = IBV_QP_EX_WITH_SEND;
	check(!ibv_create_qp_ex(ctx, &qattr) && errno == EOPNOTSUPP,
	      "an XRC receive QP has no send operations: EOPNOTSUPP");

	sattr.srq_type = IBV_SRQT_TM;
	check(!ibv_create_srq_ex(ctx, &sattr) && errno == EOPNOTSUPP,
	      "create_srq_ex refuses tag matching: EOPNOTSUPP");
	check(srq && !ibv_destroy_srq(srq) && live_aliases == aliases,
	      "destroying the XRC SRQ unmaps its ring");
	check(!ibv_close_xrcd(xrcd), "close_xrcd");
	ibv_destroy_cq(cq);
	ibv_dealloc_pd(pd);
}

int main(int argc, char **argv)
{
	bool bench = argc > 1 && !strcmp(argv[1], "--bench");
	bool quick = argc > 1 && !strcmp(argv[1], "--quick");
	struct ibv_device **list;
	struct ibv_context *ctx;
	int n;

	real_write = dlsym(RTLD_NEXT, "write");
	real_mmap = dlsym(RTLD_NEXT, "mmap");
	real_munmap = dlsym(RTLD_NEXT, "munmap");

	list = ibv_get_device_list(&n);
	check(list && n == 1 && !strcmp(ibv_get_device_name(list[0]), "sroce0"),
	      "libibverbs finds sroce0");
	if (!list || n != 1)
		return 1;
	ctx = ibv_open_device(list[0]);
	check(ctx, "open_device gets a context");
	if (!ctx)
		return 1;

	if (bench) {
		bench_post(ctx);
	} else {
		test_cq(ctx);
		test_cq_ex(ctx);
		test_cq_sl(ctx);
		test_qp_srq(ctx);
		test_cq_clean(ctx);
		test_srq_resize(ctx);
		test_rereg_mr(ctx);
		test_xrc(ctx);
		test_failures(ctx);
		test_post(ctx);
		test_wr(ctx);
		if (!quick)
			test_post_stress(ctx);
	}

	ibv_close_device(ctx);
	ibv_free_device_list(list);
	printf("%d passed, %d failed\n", passed, failed);
	return failed != 0;
}
