// SPDX-License-Identifier: GPL-2.0 OR Linux-OpenIB
/*
 * sroce-hold: open a device, fill it with objects of every kind, and hold
 * them until the device goes away or the process is killed.
 *
 *   sroce-hold -d DEV -g SGID_INDEX -r PEER_IP [-n QPS] [-t SECONDS] [-w FILE]
 *
 * Creates 4 PDs, 4 CQs, 4 SRQs, QPS QPs (default 100: even ones RC, odd
 * ones UD, every fourth RC on an SRQ, every third QP brought to RTS), 100
 * MRs, 10 MWs and 10 AHs (towards PEER_IP from GID SGID_INDEX), then
 * prints
 *
 *   ready ctx 1 pd 4 cq 4 srq 4 qp 100 rts 34 mr 100 mw 10 ah 10
 *
 * and waits. When the device is removed under it (the RDMA core
 * disassociates the context), it reports what it sees, one line each:
 * the asynchronous events, the first failing query_port, then (once
 * FILE exists, with -w) what polling the CQs (whose rings stay mapped),
 * creating, modifying, destroying every object and closing the device
 * return. It then prints "done" and exits 0. Exits 1 if SECONDS (default
 * 600) pass first.
 */
#include <errno.h>
#include <poll.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include "tool.h"

#define NUM_PD	4
#define NUM_CQ	4
#define NUM_SRQ	4
#define NUM_MR	100
#define NUM_MW	10
#define NUM_AH	10
#define MR_LEN	4096

static struct {
	struct ibv_context *ctx;
	struct ibv_pd *pd[NUM_PD];
	struct ibv_cq *cq[NUM_CQ];
	struct ibv_srq *srq[NUM_SRQ];
	struct ibv_qp **qp;
	unsigned int num_qp;
	unsigned int num_rts;
	struct ibv_mr *mr[NUM_MR];
	struct ibv_mw *mw[NUM_MW];
	struct ibv_ah *ah[NUM_AH];
	union ibv_gid dgid;
	uint8_t sgid_index;
	void *buf;
} h;

static int modify(struct ibv_qp *qp, struct ibv_qp_attr *a, int mask,
		  void *arg)
{
	int err = ibv_modify_qp(qp, a, mask);

	(void)arg;
	if (err)
		tool_die("QP %u to state %d: %s", qp->qp_num, a->qp_state,
			 strerror(err));
	return 0;
}

/* RESET->INIT->RTR->RTS with ordinary attributes (an RC QP faces itself). */
static void qp_to_rts(struct ibv_qp *qp)
{
	struct tool_qp_conn c = {
		.access = IBV_ACCESS_REMOTE_WRITE | IBV_ACCESS_REMOTE_READ,
		.qkey = 0x11111111, .dgid = h.dgid, .sgid_index = h.sgid_index,
		.mtu = IBV_MTU_1024, .dest_qpn = qp->qp_num, .rq_psn = 1,
		.max_dest_rd_atomic = 1, .min_rnr_timer = 12, .sq_psn = 1,
		.timeout = 14, .retry_cnt = 7, .rnr_retry = 7,
		.max_rd_atomic = 1, .modify = modify,
	};

	tool_qp_connect(qp, &c, IBV_QPS_RTS);
}

static struct ibv_qp *qp_new(unsigned int i)
{
	bool rc = i % 2 == 0;
	struct ibv_qp_init_attr init = {
		.send_cq = h.cq[i % NUM_CQ],
		.recv_cq = h.cq[(i + 1) % NUM_CQ],
		.srq = rc && i % 4 == 0 ? h.srq[i / 4 % NUM_SRQ] : NULL,
		.cap = {
			.max_send_wr = 16,
			.max_recv_wr = 16,
			.max_send_sge = 2,
			.max_recv_sge = 2,
		},
		.qp_type = rc ? IBV_QPT_RC : IBV_QPT_UD,
	};
	struct ibv_qp *qp;

	/* A QP and its SRQ must share the PD. */
	qp = ibv_create_qp(h.pd[init.srq ? i / 4 % NUM_SRQ : i % NUM_PD],
			   &init);
	if (!qp)
		tool_die("create QP %u: %s", i, strerror(errno));
	if (i % 3 == 0) {
		qp_to_rts(qp);
		h.num_rts++;
	}
	return qp;
}

static void create_all(const char *dev, unsigned int num_qp)
{
	struct ibv_srq_init_attr srq = {
		.attr = { .max_wr = 64, .max_sge = 2 },
	};
	struct ibv_ah_attr ah;
	unsigned int i;

	h.ctx = tool_open_device(dev);
	for (i = 0; i < NUM_PD; i++) {
		h.pd[i] = ibv_alloc_pd(h.ctx);
		if (!h.pd[i])
			tool_die("alloc_pd: %s", strerror(errno));
	}
	for (i = 0; i < NUM_CQ; i++) {
		h.cq[i] = ibv_create_cq(h.ctx, 256, NULL, NULL, 0);
		if (!h.cq[i])
			tool_die("create_cq: %s", strerror(errno));
	}
	for (i = 0; i < NUM_SRQ; i++) {
		h.srq[i] = ibv_create_srq(h.pd[i], &srq);
		if (!h.srq[i])
			tool_die("create_srq: %s", strerror(errno));
	}

	h.num_qp = num_qp;
	h.qp = calloc(num_qp, sizeof(*h.qp));
	if (!h.qp)
		tool_die("out of memory");
	for (i = 0; i < num_qp; i++)
		h.qp[i] = qp_new(i);

	h.buf = mmap(NULL, NUM_MR * MR_LEN, PROT_READ | PROT_WRITE,
		     MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (h.buf == MAP_FAILED)
		tool_die("mmap: %s", strerror(errno));
	for (i = 0; i < NUM_MR; i++) {
		h.mr[i] = ibv_reg_mr(h.pd[i % NUM_PD], (char *)h.buf + i * MR_LEN,
				     MR_LEN, IBV_ACCESS_LOCAL_WRITE |
				     IBV_ACCESS_REMOTE_WRITE |
				     IBV_ACCESS_REMOTE_READ |
				     IBV_ACCESS_MW_BIND);
		if (!h.mr[i])
			tool_die("reg_mr: %s", strerror(errno));
	}
	for (i = 0; i < NUM_MW; i++) {
		h.mw[i] = ibv_alloc_mw(h.pd[i % NUM_PD], i % 2 ?
				       IBV_MW_TYPE_2 : IBV_MW_TYPE_1);
		if (!h.mw[i])
			tool_die("alloc_mw: %s", strerror(errno));
	}
	tool_set_av(&ah, &h.dgid, h.sgid_index);
	for (i = 0; i < NUM_AH; i++) {
		h.ah[i] = ibv_create_ah(h.pd[i % NUM_PD], &ah);
		if (!h.ah[i])
			tool_die("create_ah: %s", strerror(errno));
	}
}

/* Print "NAME: N ok" or "NAME: N ok, M ERRNO" for a run of results. */
struct tally {
	const char *name;
	unsigned int ok;
	unsigned int bad;
	int err;
};

static void tally_add(struct tally *t, int err)
{
	if (!err) {
		t->ok++;
		return;
	}
	t->bad++;
	t->err = err;
}

static void tally_print(const struct tally *t)
{
	if (t->bad)
		printf("%s: %u ok, %u %s\n", t->name, t->ok, t->bad,
		       tool_errname(t->err));
	else
		printf("%s: %u ok\n", t->name, t->ok);
}

/*
 * The device is gone: report what each kind of call returns now, and
 * release everything as a careful program would.
 */
static void after_removal(void)
{
	struct tally poll_t = { .name = "poll_cq" };
	struct tally qp_t = { .name = "destroy_qp" };
	struct tally mr_t = { .name = "dereg_mr" };
	struct tally mw_t = { .name = "dealloc_mw" };
	struct tally ah_t = { .name = "destroy_ah" };
	struct tally srq_t = { .name = "destroy_srq" };
	struct tally cq_t = { .name = "destroy_cq" };
	struct tally pd_t = { .name = "dealloc_pd" };
	struct ibv_qp_attr a = { .qp_state = IBV_QPS_ERR };
	struct ibv_wc wc;
	struct ibv_pd *pd;
	unsigned int i;
	int n;

	/* The CQ rings stay mapped: polling must not fault. */
	for (i = 0; i < NUM_CQ; i++) {
		n = ibv_poll_cq(h.cq[i], 1, &wc);
		tally_add(&poll_t, n < 0 ? -n : 0);
	}
	tally_print(&poll_t);

	errno = 0;
	pd = ibv_alloc_pd(h.ctx);
	printf("alloc_pd: %s\n", tool_errname(pd ? 0 : errno));
	if (pd)
		ibv_dealloc_pd(pd);
	printf("modify_qp: %s\n",
	       tool_errname(ibv_modify_qp(h.qp[0], &a, IBV_QP_STATE)));

	for (i = 0; i < NUM_AH; i++)
		tally_add(&ah_t, ibv_destroy_ah(h.ah[i]));
	for (i = 0; i < NUM_MW; i++)
		tally_add(&mw_t, ibv_dealloc_mw(h.mw[i]));
	for (i = 0; i < NUM_MR; i++)
		tally_add(&mr_t, ibv_dereg_mr(h.mr[i]));
	for (i = 0; i < h.num_qp; i++)
		tally_add(&qp_t, ibv_destroy_qp(h.qp[i]));
	for (i = 0; i < NUM_SRQ; i++)
		tally_add(&srq_t, ibv_destroy_srq(h.srq[i]));
	for (i = 0; i < NUM_CQ; i++)
		tally_add(&cq_t, ibv_destroy_cq(h.cq[i]));
	for (i = 0; i < NUM_PD; i++)
		tally_add(&pd_t, ibv_dealloc_pd(h.pd[i]));
	tally_print(&ah_t);
	tally_print(&mw_t);
	tally_print(&mr_t);
	tally_print(&qp_t);
	tally_print(&srq_t);
	tally_print(&cq_t);
	tally_print(&pd_t);
	printf("close_device: %s\n", tool_errname(ibv_close_device(h.ctx)));
}

/* Wait until @path exists; return 1 if @deadline passes first. */
static int wait_for_file(const char *path, long deadline)
{
	struct stat st;

	while (stat(path, &st)) {
		if ((long)tool_now_ms() > deadline) {
			printf("timeout\n");
			return 1;
		}
		tool_sleep_ms(100);
	}
	return 0;
}

/*
 * Wait for the device to go: the DEVICE_FATAL event and failing
 * commands. Return 0 once both were seen, 1 if @deadline passes first.
 */
static int wait_for_removal(long deadline)
{
	struct pollfd pfd = { .fd = h.ctx->async_fd, .events = POLLIN };
	bool fatal = false, failed = false;
	struct ibv_async_event ev;
	struct ibv_port_attr port;
	int err;

	while (!fatal || !failed) {
		if ((long)tool_now_ms() > deadline) {
			printf("timeout\n");
			return 1;
		}
		if (poll(&pfd, 1, 100) > 0 && !ibv_get_async_event(h.ctx, &ev)) {
			printf("event %s\n", tool_event_name(ev.event_type));
			fatal |= ev.event_type == IBV_EVENT_DEVICE_FATAL;
			ibv_ack_async_event(&ev);
		}
		err = ibv_query_port(h.ctx, 1, &port);
		if (err && !failed) {
			printf("query_port: %s\n", tool_errname(err));
			failed = true;
		}
		fflush(stdout);
	}
	return 0;
}

static void usage(int status)
{
	(void)status;
	tool_die("usage: sroce-hold -d DEV -g SGID_INDEX -r PEER_IP [-n QPS] "
		 "[-t SECONDS] [-w FILE]");
}

int main(int argc, char **argv)
{
	const char *dev = NULL, *peer = NULL, *go = NULL;
	unsigned long num_qp = 100, secs = 600;
	long deadline;
	long sgid = -1;
	const struct tool_opt opts[] = {
		TOOL_STR('d', NULL, &dev),
		TOOL_NUM('g', NULL, LONG, &sgid, 255),
		TOOL_STR('r', NULL, &peer),
		TOOL_NUM('n', NULL, ULONG, &num_qp, 10000),
		TOOL_NUM('t', NULL, ULONG, &secs, 86400),
		TOOL_STR('w', NULL, &go),
	};

	tool_getopt(argc, argv, opts, ARRAY_SIZE(opts), usage);
	if (!dev || !peer || sgid < 0 || !num_qp)
		usage(2);
	h.sgid_index = sgid;
	tool_ip_to_gid(peer, &h.dgid);
	deadline = (long)tool_now_ms() + secs * 1000;

	create_all(dev, num_qp);
	printf("ready ctx 1 pd %d cq %d srq %d qp %u rts %u mr %d mw %d ah %d\n",
	       NUM_PD, NUM_CQ, NUM_SRQ, h.num_qp, h.num_rts, NUM_MR, NUM_MW,
	       NUM_AH);
	fflush(stdout);

	if (wait_for_removal(deadline))
		return 1;
	if (go && wait_for_file(go, deadline))
		return 1;
	after_removal();
	printf("done\n");
	return 0;
}
