// SPDX-License-Identifier: GPL-2.0 OR Linux-OpenIB
/*
 * Completion queues, shared receive queues, memory regions and windows,
 * address handles: what creating and changing them must refuse or take.
 */
#include "badinput.h"

/* ------------------------------------------------------------------ */
/* Completion queues */

static int try_create_cq(int cqe, int vector, int *actual)
{
	struct ibv_cq *cq;

	errno = 0;
	cq = ibv_create_cq(b.ctx, cqe, NULL, NULL, vector);
	if (!cq)
		return create_err(cq);
	if (actual)
		*actual = cq->cqe;
	ibv_destroy_cq(cq);
	return 0;
}

void cq_cases(void)
{
	struct ibv_cq *cq;
	int actual = 0;

	check_err("create_cq cqe 0", EINVAL, try_create_cq(0, 0, NULL));
	check_err("create_cq cqe max_cqe+1", EINVAL,
		  try_create_cq(b.dev.max_cqe + 1, 0, NULL));
	check_err("create_cq cqe INT32_MAX", EINVAL,
		  try_create_cq(INT32_MAX, 0, NULL));
	check_err("create_cq cqe -1", EINVAL, try_create_cq(-1, 0, NULL));
	/* The core checks the vector (uverbs_cmd.c create_cq()). */
	check_err("create_cq comp_vector num_comp_vectors", EINVAL,
		  try_create_cq(16, b.ctx->num_comp_vectors, NULL));

	check_err("create_cq cqe 1", 0, try_create_cq(1, 0, &actual));
	check_range("create_cq cqe 1: cq->cqe", 1, b.dev.max_cqe, actual);
	actual = 0;
	check_err("create_cq cqe max_cqe", 0,
		  try_create_cq(b.dev.max_cqe, 0, &actual));
	/* IBA 11.2.8.1: at least what was asked; never past max_cqe. */
	check_range("create_cq cqe max_cqe: cq->cqe", b.dev.max_cqe,
		    b.dev.max_cqe, actual);

	cq = ibv_create_cq(b.ctx, 16, NULL, NULL, 0);
	if (!cq)
		tool_die("create_cq: %s", strerror(errno));
	check_err("resize_cq 0", EINVAL, ibv_resize_cq(cq, 0));
	check_err("resize_cq max_cqe+1", EINVAL,
		  ibv_resize_cq(cq, b.dev.max_cqe + 1));
	check_err("resize_cq 100", 0, ibv_resize_cq(cq, 100));
	check_range("resize_cq 100: cq->cqe", 100, b.dev.max_cqe, cq->cqe);
	check_err("destroy resized cq", 0, ibv_destroy_cq(cq));
}

/* ------------------------------------------------------------------ */
/* Shared receive queues */

static int try_create_srq(uint32_t max_wr, uint32_t max_sge, uint32_t limit)
{
	struct ibv_srq_init_attr init = {
		.attr = { .max_wr = max_wr, .max_sge = max_sge,
			  .srq_limit = limit },
	};
	struct ibv_srq *srq;

	errno = 0;
	srq = ibv_create_srq(b.pd, &init);
	if (!srq)
		return create_err(srq);
	ibv_destroy_srq(srq);
	return 0;
}

void srq_cases(void)
{
	struct ibv_srq_attr a;

	check_err("create_srq max_wr 0", EINVAL, try_create_srq(0, 1, 0));
	check_err("create_srq max_wr max_srq_wr+1", EINVAL,
		  try_create_srq(b.dev.max_srq_wr + 1, 1, 0));
	check_err("create_srq max_sge max_srq_sge+1", EINVAL,
		  try_create_srq(16, b.dev.max_srq_sge + 1, 0));
	/*
	 * srq_limit means nothing at creation (IBA 11.2.3.1, ibv_create_srq(3)):
	 * accepted and not armed, as rdma_rxe does.
	 */
	check_err("create_srq srq_limit > max_wr", 0,
		  try_create_srq(16, 1, 17));
	check_err("create_srq at the limits", 0,
		  try_create_srq(b.dev.max_srq_wr < WR_CAP ? b.dev.max_srq_wr :
				 WR_CAP, b.dev.max_srq_sge, 0));

	/* b.srq: max_wr 16, max_sge 1 */
	memset(&a, 0, sizeof(a));
	check_err("query_srq", 0, ibv_query_srq(b.srq, &a));
	check_range("query_srq max_wr", 16, b.dev.max_srq_wr, a.max_wr);
	/* Resizes (IBV_DEVICE_SRQ_RESIZE): in range, or EINVAL. */
	a.max_wr = b.dev.max_srq_wr + 1;
	check_err("modify_srq MAX_WR max_srq_wr+1", EINVAL,
		  ibv_modify_srq(b.srq, &a, IBV_SRQ_MAX_WR));
	a.max_wr = 0;
	check_err("modify_srq MAX_WR 0", EINVAL,
		  ibv_modify_srq(b.srq, &a, IBV_SRQ_MAX_WR));
	a.max_wr = 32;
	check_err("modify_srq MAX_WR 32", 0,
		  ibv_modify_srq(b.srq, &a, IBV_SRQ_MAX_WR));
	memset(&a, 0, sizeof(a));
	ibv_query_srq(b.srq, &a);
	check_range("query_srq max_wr after resize", 32, b.dev.max_srq_wr,
		    a.max_wr);
	memset(&a, 0, sizeof(a));
	ibv_query_srq(b.srq, &a);
	a.srq_limit = a.max_wr + 1;
	check_err("modify_srq srq_limit max_wr+1", EINVAL,
		  ibv_modify_srq(b.srq, &a, IBV_SRQ_LIMIT));
	a.srq_limit = 8;
	check_err("modify_srq srq_limit 8", 0,
		  ibv_modify_srq(b.srq, &a, IBV_SRQ_LIMIT));
	memset(&a, 0, sizeof(a));
	ibv_query_srq(b.srq, &a);
	check_val("query_srq srq_limit", 8, a.srq_limit);
}

/* ------------------------------------------------------------------ */
/* Memory regions and windows */

static int try_reg_mr(void *addr, size_t len, int access)
{
	struct ibv_mr *mr;

	errno = 0;
	mr = ibv_reg_mr(b.pd, addr, len, access);
	if (!mr)
		return create_err(mr);
	ibv_dereg_mr(mr);
	return 0;
}

void mr_cases(void)
{
	const int lw = IBV_ACCESS_LOCAL_WRITE;
	struct ibv_mr *mr;
	struct ibv_mw *mw;

	/* ib_check_mr_access() in the core refuses these (IBA 10.6.3.1). */
	check_err("reg_mr REMOTE_WRITE without LOCAL_WRITE", EINVAL,
		  try_reg_mr(b.buf, BUF_LEN, IBV_ACCESS_REMOTE_WRITE));
	check_err("reg_mr REMOTE_ATOMIC without LOCAL_WRITE", EINVAL,
		  try_reg_mr(b.buf, BUF_LEN, IBV_ACCESS_REMOTE_ATOMIC));
	check_err("reg_mr unknown access bit", EINVAL,
		  try_reg_mr(b.buf, BUF_LEN, lw | UNKNOWN_ACCESS));
	/*
	 * On-demand paging (odp.c) takes the rights pinned MRs take, and
	 * refuses the same: remote write without local write.
	 */
	check_err("reg_mr ON_DEMAND", 0,
		  try_reg_mr(b.buf, BUF_LEN, lw | IBV_ACCESS_ON_DEMAND));
	check_err("reg_mr ON_DEMAND REMOTE_WRITE without LOCAL_WRITE", EINVAL,
		  try_reg_mr(b.buf, BUF_LEN, IBV_ACCESS_ON_DEMAND |
			     IBV_ACCESS_REMOTE_WRITE));
	check_err("reg_mr length 0", EINVAL, try_reg_mr(b.buf, 0, lw));
	/* Pinning fails in the core. */
	check_err("reg_mr unmapped address", EFAULT,
		  try_reg_mr((void *)4096, BUF_LEN, lw));

	check_err("reg_mr LOCAL_WRITE|REMOTE_WRITE|REMOTE_READ", 0,
		  try_reg_mr(b.buf, BUF_LEN, lw | IBV_ACCESS_REMOTE_WRITE |
			     IBV_ACCESS_REMOTE_READ));
	check_err("reg_mr REMOTE_READ only", 0,
		  try_reg_mr(b.buf, BUF_LEN, IBV_ACCESS_REMOTE_READ));
	check_err("reg_mr 0 (local read only)", 0, try_reg_mr(b.buf, 1, 0));
	check_err("reg_mr LOCAL_WRITE|RELAXED_ORDERING", 0,
		  try_reg_mr(b.buf, BUF_LEN,
			     lw | IBV_ACCESS_RELAXED_ORDERING));
	check_err("reg_mr LOCAL_WRITE|MW_BIND", 0,
		  try_reg_mr(b.buf, BUF_LEN, lw | IBV_ACCESS_MW_BIND));
	/* A hint about the memory, not an access right: rxe ignores it. */
	check_err("reg_mr LOCAL_WRITE|HUGETLB", 0,
		  try_reg_mr(b.buf, BUF_LEN, lw | IBV_ACCESS_HUGETLB));

	mr = ibv_reg_mr(b.pd, (char *)b.buf + 100, 1000, lw);
	check_err("reg_mr unaligned 1000 bytes", 0, create_err(mr));
	if (mr) {
		check_val("reg_mr unaligned: length", 1000, mr->length);
		ibv_dereg_mr(mr);
	}

	errno = 0;
	mw = ibv_alloc_mw(b.pd, IBV_MW_TYPE_1);
	check_err("alloc_mw type 1", 0, create_err(mw));
	if (mw)
		check_err("dealloc_mw type 1", 0, ibv_dealloc_mw(mw));
	errno = 0;
	mw = ibv_alloc_mw(b.pd, IBV_MW_TYPE_2);
	check_err("alloc_mw type 2", 0, create_err(mw));
	if (mw)
		check_err("dealloc_mw type 2", 0, ibv_dealloc_mw(mw));
	/* The core checks the type (uverbs_cmd.c ib_uverbs_alloc_mw()). */
	errno = 0;
	mw = ibv_alloc_mw(b.pd, 3);
	check_err("alloc_mw type 3", EINVAL, create_err(mw));
	if (mw)
		ibv_dealloc_mw(mw);
}

/* ------------------------------------------------------------------ */
/* Address handles */

static int try_create_ah(const struct ibv_ah_attr *attr)
{
	struct ibv_ah_attr a = *attr;
	struct ibv_ah *ah;

	errno = 0;
	ah = ibv_create_ah(b.pd, &a);
	if (!ah)
		return create_err(ah);
	ibv_destroy_ah(ah);
	return 0;
}

void ah_cases(void)
{
	struct ibv_port_attr port;
	struct ibv_ah_attr a;

	if (ibv_query_port(b.ctx, 1, &port))
		tool_die("query_port: %s", strerror(errno));

	set_av(&a);
	check_err("create_ah", 0, try_create_ah(&a));
	/* The core: port (uverbs), GRH required on RoCE (rdma_check_ah_attr). */
	set_av(&a);
	a.port_num = 2;
	check_err("create_ah port 2", EINVAL, try_create_ah(&a));
	set_av(&a);
	a.is_global = 0;
	check_err("create_ah without GRH", EINVAL, try_create_ah(&a));
	/* The core's GID cache: no entry there (rdma_get_gid_attr()). */
	set_av(&a);
	a.grh.sgid_index = port.gid_tbl_len - 1;
	check_err("create_ah sgid_index of an empty GID", ENODATA,
		  try_create_ah(&a));
	set_av(&a);
	a.grh.sgid_index = port.gid_tbl_len;
	check_err("create_ah sgid_index gid_tbl_len", EINVAL,
		  try_create_ah(&a));
}
