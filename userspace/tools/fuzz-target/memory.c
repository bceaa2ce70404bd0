// SPDX-License-Identifier: GPL-2.0 OR Linux-OpenIB
/*
 * Memory: the MRs and windows the fuzzer aims at, and the targets file
 * that tells it about them and the QPs.
 */
#include "fuzz-target.h"

/* ---------------------------------------------------------------------- */
/* Memory. */

static struct ibv_mr *reg(struct ibv_pd *pd, void *addr, size_t len,
			  unsigned int access)
{
	struct ibv_mr *mr = ibv_reg_mr(pd, addr, len, access);

	if (!mr)
		tool_die("reg_mr: %s", strerror(errno));
	return mr;
}

#define RWA	(IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_REMOTE_WRITE | \
		 IBV_ACCESS_REMOTE_READ | IBV_ACCESS_REMOTE_ATOMIC)

static void wait_send(struct target *x, uint64_t id, const char *what)
{
	long deadline = (long)tool_now_ms() + 10000;
	struct ibv_wc wc;
	int n;

	while ((long)tool_now_ms() < deadline) {
		n = ibv_poll_cq(a.cq, 1, &wc);
		if (n < 0)
			tool_die("poll_cq: %d", n);
		if (!n) {
			usleep(1000);
			continue;
		}
		if (wc.wr_id != id)
			continue;
		if (wc.status != IBV_WC_SUCCESS)
			tool_die("%s on QP %u: %s", what, x->qp->qp_num,
				 ibv_wc_status_str(wc.status));
		return;
	}
	tool_die("%s on QP %u: no completion", what, x->qp->qp_num);
}

/* Bind window @i over [@off, @off + @len) of MR 0, through @x's QP. */
static void bind_window(struct target *x, int i, size_t off, size_t len,
			bool zero_based)
{
	struct ibv_mw_bind_info info = {
		.mr = o.mr[0],
		.addr = (uintptr_t)o.mem + off,
		.length = len,
		.mw_access_flags = IBV_ACCESS_REMOTE_WRITE |
				   IBV_ACCESS_REMOTE_READ |
				   IBV_ACCESS_REMOTE_ATOMIC |
				   (zero_based ? IBV_ACCESS_ZERO_BASED : 0),
	};
	struct ibv_mw_bind bind = { .wr_id = (uint64_t)K_BIND << 56 | i,
				    .send_flags = IBV_SEND_SIGNALED,
				    .bind_info = info };
	struct ibv_send_wr wr = { .wr_id = (uint64_t)K_BIND << 56 | i,
				  .opcode = IBV_WR_BIND_MW,
				  .send_flags = IBV_SEND_SIGNALED }, *bad;
	struct ibv_mw *mw = o.mw[i];
	int err;

	if (mw->type == IBV_MW_TYPE_1) {
		err = ibv_bind_mw(x->qp, mw, &bind);
		o.mw_rkey[i] = mw->rkey;
	} else {
		wr.bind_mw.mw = mw;
		wr.bind_mw.rkey = ibv_inc_rkey(mw->rkey);
		wr.bind_mw.bind_info = info;
		err = ibv_post_send(x->qp, &wr, &bad);
		o.mw_rkey[i] = wr.bind_mw.rkey;
	}
	if (err)
		tool_die("bind window %d: %s", i, strerror(err));
	wait_send(x, (uint64_t)K_BIND << 56 | i, "bind window");
}

/* The windows, over MR 0. */
static const struct {
	enum ibv_mw_type type;
	size_t off, len;
	bool zero;
} win[4] = {
	{ IBV_MW_TYPE_1, 8192, 4096, false },
	{ IBV_MW_TYPE_1, 4, 256, true },	/* unaligned, zero-based */
	{ IBV_MW_TYPE_2, 12, 512, true },
	{ IBV_MW_TYPE_2, 16384, 4096, false },
};

void create_memory(void)
{
	char *m;
	int i;

	o.buf = mmap(NULL, BUF_SIZE, PROT_READ | PROT_WRITE,
		     MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	o.mem = mmap(NULL, 4 * 65536, PROT_READ | PROT_WRITE,
		     MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (o.buf == MAP_FAILED || o.mem == MAP_FAILED)
		tool_die("mmap: %s", strerror(errno));
	m = o.mem;
	o.buf_mr = reg(a.pd, o.buf, BUF_SIZE, IBV_ACCESS_LOCAL_WRITE);
	o.mr[0] = reg(a.pd, m, 65536, RWA | IBV_ACCESS_MW_BIND);
	o.mr[1] = reg(a.pd, m + 65536 + 3, 4093, RWA);
	o.mr[2] = reg(a.pd, m + 2 * 65536, 4096, IBV_ACCESS_REMOTE_READ);
	o.mr[3] = reg(o.pd2, m + 3 * 65536, 4096, RWA);
	/* Zero-based, if the device takes it: not every one does. */
	o.mr[4] = ibv_reg_mr_iova(a.pd, m + 3 * 65536 + 8192, 4096, 0, RWA);
	if (!o.mr[4])
		printf("zero-based MR: %s (left out)\n", strerror(errno));
	for (i = 0; i < 4; i++) {
		o.mw[i] = ibv_alloc_mw(a.pd, win[i].type);
		if (!o.mw[i])
			tool_die("alloc_mw: %s", strerror(errno));
		bind_window(&t[o.plain_rts4], i, win[i].off, win[i].len,
			    win[i].zero);
	}
}

/* ---------------------------------------------------------------------- */

/* Every target is of one of the five types. */
const char *type_name(enum ibv_qp_type type)
{
	return tool_qp_type_name(type, "XRC_INI");
}

const char *state_name(enum ibv_qp_state s)
{
	return (unsigned int)s <= IBV_QPS_ERR ? tool_qp_state_name(s) : "?";
}

void write_file(const char *path)
{
	/* MR 3 is in another PD: x, every access is refused. */
	static const char *const rights[] = { "rwa", "rwa", "r", "rwax", "rwa" };
	char tmp[4096];
	struct target *x;
	FILE *f;
	int i;

	snprintf(tmp, sizeof(tmp), "%s.tmp", path);
	f = fopen(tmp, "w");
	if (!f)
		tool_die("%s: %s", tmp, strerror(errno));
	fprintf(f, "# sroce-fuzz-target: QP TYPE STATE FAMILY QKEY MTU ACCESS ROLE\n");
	for (i = 0; i < num_t; i++) {
		x = &t[i];
		fprintf(f, "qp %u %s %s ", x->qp->qp_num, type_name(x->type),
			state_name(x->want));
		fprintf(f, x->fam ? "%d " : "- ", x->fam);
		fprintf(f, x->type == IBV_QPT_UD ? "0x%x " : "- ", UD_QKEY);
		fprintf(f, "%d %s %s\n",
			x->type == IBV_QPT_UD ? 1024 : 128 << x->mtu,
			x->type == IBV_QPT_UC ? "w" : x->role == R_SRQ ? "r" :
			x->type == IBV_QPT_UD ? "-" : "rwa",
			x->role == R_ORPHAN && x->type == IBV_QPT_RC ? "orphan" :
			x->role == R_PROBE ? "probe" : "-");
	}
	fprintf(f, "# key RKEY VA LEN RIGHTS QPN\n");
	for (i = 0; i < 5; i++)
		if (o.mr[i])
			fprintf(f, "key 0x%x 0x%llx %zu %s -\n", o.mr[i]->rkey,
				i == 4 ? 0ULL : (unsigned long long)(uintptr_t)
				o.mr[i]->addr, o.mr[i]->length, rights[i]);
	for (i = 0; i < 4; i++) {
		fprintf(f, "key 0x%x 0x%llx %zu rwa ", o.mw_rkey[i],
			win[i].zero ? 0ULL :
			(unsigned long long)(uintptr_t)o.mem + win[i].off,
			win[i].len);
		if (win[i].type == IBV_MW_TYPE_2)
			fprintf(f, "%u\n", t[o.plain_rts4].qp->qp_num);
		else
			fprintf(f, "-\n");
	}
	fprintf(f, "xsrq %u\n", o.xsrqn);
	if (fclose(f) || rename(tmp, path))
		tool_die("%s: %s", path, strerror(errno));
}
