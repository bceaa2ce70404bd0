// SPDX-License-Identifier: GPL-2.0 OR Linux-OpenIB
/*
 * sroce-badinput: hand a device control-path requests it must refuse, and
 * the valid requests around them, and check what the caller sees.
 *
 *   sroce-badinput -d DEV -g SGID_INDEX -r PEER_IP
 *
 * SGID_INDEX is a RoCE v2 GID of DEV, PEER_IP an address its netdev
 * reaches: the address vectors of connected QPs and AHs point at it.
 * Prints one line per case,
 *
 *   <case>  expected <errno or 0>  got <errno or 0>  ok|MISMATCH
 *
 * and exits 1 if any case went otherwise. Valid requests are checked
 * too, so that a device that refuses everything does not pass.
 *
 * "expected" is what a libibverbs caller sees, wherever the request is
 * refused. Where that is not the driver, the case's comment names who:
 * libibverbs, the provider, or the RDMA core (drivers/infiniband/core:
 * uverbs_cmd.c, verbs.c, ib_check_mr_access()). The expected values are
 * those of rdma_rxe unless sroce's kernel-doc says otherwise.
 */
#include "badinput.h"

struct state b;
struct tool_report rep = { .what_w = 52, .val_w = 10, .bad = "MISMATCH" };

void line(const char *name, const char *expected, const char *got,
	  bool ok)
{
	tool_report_line(&rep, name, expected, got, ok);
}

/* A case whose outcome is an errno (0: success). */
void check_err(const char *name, int expected, int got)
{
	line(name, tool_errname(expected), tool_errname(got), expected == got);
}

/* A case with two acceptable outcomes. */
void check_err2(const char *name, int expected1, int expected2, int got)
{
	char e[32];

	snprintf(e, sizeof(e), "%s|%s", tool_errname(expected1),
		 tool_errname(expected2));
	line(name, e, tool_errname(got), got == expected1 || got == expected2);
}

/* A case whose outcome is a value. */
void check_val(const char *name, unsigned long expected,
	       unsigned long got)
{
	char e[24], g[24];

	snprintf(e, sizeof(e), "%#lx", expected);
	snprintf(g, sizeof(g), "%#lx", got);
	line(name, e, g, expected == got);
}

/* A case whose outcome is a value in [lo, hi]. */
void check_range(const char *name, unsigned long lo, unsigned long hi,
		 unsigned long got)
{
	char e[48], g[24];

	snprintf(e, sizeof(e), "%lu..%lu", lo, hi);
	snprintf(g, sizeof(g), "%lu", got);
	line(name, e, g, got >= lo && got <= hi);
}

/* The errno of a create that returned @obj. */
int create_err(const void *obj)
{
	return obj ? 0 : (errno ? errno : -1);
}

const char *type_name(enum ibv_qp_type type)
{
	return tool_qp_type_name(type, "QP");
}

/* ------------------------------------------------------------------ */

static void setup(const char *dev)
{
	struct ibv_srq_init_attr srq = {
		.attr = { .max_wr = 16, .max_sge = 1 },
	};

	b.ctx = tool_open_device(dev);
	if (ibv_query_device(b.ctx, &b.dev))
		tool_die("query_device: %s", strerror(errno));
	b.pd = ibv_alloc_pd(b.ctx);
	if (!b.pd)
		tool_die("alloc_pd: %s", strerror(errno));
	b.cq = ibv_create_cq(b.ctx, 64, NULL, NULL, 0);
	if (!b.cq)
		tool_die("create_cq: %s", strerror(errno));
	b.srq = ibv_create_srq(b.pd, &srq);
	if (!b.srq)
		tool_die("create_srq: %s", strerror(errno));
	b.buf = mmap(NULL, BUF_LEN, PROT_READ | PROT_WRITE,
		     MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (b.buf == MAP_FAILED)
		tool_die("mmap: %s", strerror(errno));
	memset(b.buf, 0, BUF_LEN);
}

static void teardown(void)
{
	check_err("destroy srq", 0, ibv_destroy_srq(b.srq));
	check_err("destroy cq", 0, ibv_destroy_cq(b.cq));
	check_err("dealloc pd", 0, ibv_dealloc_pd(b.pd));
	check_err("close device", 0, ibv_close_device(b.ctx));
	munmap(b.buf, BUF_LEN);
}

static void usage(int status)
{
	(void)status;
	tool_die("usage: sroce-badinput -d DEV -g SGID_INDEX -r PEER_IP");
}

int main(int argc, char **argv)
{
	const char *dev = NULL, *peer = NULL;
	long sgid = -1;
	const struct tool_opt opts[] = {
		TOOL_STR('d', NULL, &dev),
		TOOL_NUM('g', NULL, LONG, &sgid, 255),
		TOOL_STR('r', NULL, &peer),
	};

	tool_getopt(argc, argv, opts, ARRAY_SIZE(opts), usage);
	if (!dev || !peer || sgid < 0)
		usage(2);
	b.sgid_index = sgid;
	tool_ip_to_gid(peer, &b.dgid);

	setup(dev);
	run_mod_cases();
	valid_walk(IBV_QPT_RC);
	valid_walk(IBV_QPT_UC);
	valid_walk(IBV_QPT_UD);
	valid_err_reset(IBV_QPT_RC);
	valid_err_reset(IBV_QPT_UD);
	psn_cases();
	qp_create_cases();
	cq_cases();
	srq_cases();
	mr_cases();
	ah_cases();
	teardown();

	printf("%u cases, %u mismatches\n", rep.checks, rep.failures);
	return rep.failures ? 1 : 0;
}
