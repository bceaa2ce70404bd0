// SPDX-License-Identifier: GPL-2.0 OR Linux-OpenIB
/*
 * sroce-fuzz-target: live QPs in every state, with memory to aim at, for
 * sroce-fuzz to attack.
 *
 *   sroce-fuzz-target -d DEV -g GID4,GID6 -D PEER_DEV -G GID4,GID6 -o FILE
 *                     [-t SECONDS] [-v]
 *
 * On DEV (the device under attack; GID4 and GID6 are the indices of its
 * RoCE v2 GIDs of an IPv4 and an IPv6 address) it creates, in this order:
 *
 *   RC       RESET, INIT, ERR; RTR, RTS, SQD over IPv4 and over IPv6
 *            (path MTU 1024, but 256 for RTS over IPv6); RTS on an SRQ
 *            granting remote READ only; two orphans (RTS, one a family)
 *   UC       RESET, INIT, ERR; RTR, RTS, SQD over IPv4 and over IPv6
 *   UD       RESET, INIT, RTR, RTS, SQD, ERR (Q_Key 0x11111111)
 *   XRC_TGT  RESET, INIT, ERR; RTR over IPv4, RTS over IPv6 (one XRC SRQ)
 *   XRC_INI  RTS over IPv4
 *   RC       RTR over IPv4 and over IPv6, for directed probes (role
 *            "probe": sroce-fuzz leaves them alone)
 *
 * Every connected QP in RTR, RTS or SQD has a partner in RTS on PEER_DEV
 * (GIDs of the same families), connected back to it: an RC or UC QP, an
 * XRC send QP for an XRC target. The orphans and the XRC initiator are
 * connected to a QP number that PEER_DEV does not have: an orphan keeps
 * 32 requests of one packet outstanding (SEND 16 B, WRITE 16 B, READ
 * 24 B, CMP_SWAP, FETCH_ADD, in turn from its first PSN; local ACK
 * timeout 0, infinite), which only the fuzzer answers. RC QPs grant
 * remote READ, WRITE and atomics (the SRQ one READ only), UC ones WRITE.
 *
 * Memory, in one PD with the QPs: a 64 KiB MR (rwa, windows may bind),
 * a 4093-byte MR at an odd address (rwa), a 4 KiB read-only MR, a
 * zero-based MR if the device takes one, an MR in another PD; type 1
 * windows over 4 KiB of the first MR and, zero-based, over 256 bytes at
 * its offset 4; type 2 windows, bound through the RC QP in RTS over
 * IPv4, zero-based over 512 bytes at offset 12 and over 4 KiB at offset
 * 16384.
 *
 * Receives are kept posted: 32 on each RC, UC and UD QP in INIT, RTR,
 * RTS or SQD (4096 bytes in two pieces; UD 40 + 512 bytes), 128 on each
 * SRQ. Every 20 ms the QPs meant to be in RTR, RTS or SQD are queried;
 * one found in another state (the fuzzer killed it) is reset and brought
 * back with its first PSNs, and its receives or requests posted again
 * (with -v, each time: "restore qp QPN from STATE at SECONDS s", counted
 * from "ready"; and each completion in error but a flush).
 *
 * FILE (written whole, then renamed into place) lists, one a line, in
 * the order above:
 *
 *   qp QPN TYPE STATE FAMILY QKEY MTU ACCESS ROLE
 *   key RKEY VA LEN RIGHTS QPN
 *   xsrq SRQN
 *
 * as sroce-fuzz reads them (see sroce-fuzz.c; FAMILY, QKEY, MTU and QPN
 * '-' where they do not apply, ROLE "orphan", "probe" or "-"). It then
 * prints
 *
 *   ready qps N partners N keys N
 *
 * and runs until SIGTERM or SIGINT, or SECONDS (default 3600) pass. It
 * then prints one line per QP ("qp QPN TYPE WANTED -> STATE completed N
 * restores N": its receives, or an orphan's requests, that completed
 * successfully, and how often it was put back)
 * and a summary (restores, completions by kind and status, asynchronous
 * events), destroys everything, and exits 0; 1 if SECONDS passed or a
 * destroy failed, 2 on a setup error.
 */
#include "fuzz-target.h"

struct side a, b;
struct target t[64];
int num_t;
struct objects o;
struct stats st;
volatile sig_atomic_t stop;
bool verbose;
long start_ms;

static void on_signal(int sig)
{
	(void)sig;
	stop = 1;
}

static void add(enum ibv_qp_type type, enum ibv_qp_state want, int fam,
		enum role role)
{
	struct target *x = &t[num_t++];

	x->type = type;
	x->want = want;
	x->fam = fam;
	x->role = role;
	x->mtu = fam == 6 && want == IBV_QPS_RTS ? IBV_MTU_256 : IBV_MTU_1024;
	x->psn = (0x10203 * num_t + 0x1111) & 0xffffff;
	if (num_t % 7 == 3)
		x->psn = 0xfffff8;	/* about to wrap */
}

static void plan(void)
{
	static const enum ibv_qp_state unconnected[] = {
		IBV_QPS_RESET, IBV_QPS_INIT, IBV_QPS_ERR,
	};
	static const enum ibv_qp_state connected[] = {
		IBV_QPS_RTR, IBV_QPS_RTS, IBV_QPS_SQD,
	};
	static const enum ibv_qp_type rcuc[] = { IBV_QPT_RC, IBV_QPT_UC };
	unsigned int i, j;
	int fam;

	for (j = 0; j < ARRAY_SIZE(rcuc); j++) {
		for (i = 0; i < ARRAY_SIZE(unconnected); i++)
			add(rcuc[j], unconnected[i], 0, R_PLAIN);
		for (fam = 4; fam <= 6; fam += 2)
			for (i = 0; i < ARRAY_SIZE(connected); i++)
				add(rcuc[j], connected[i], fam, R_PLAIN);
		if (rcuc[j] != IBV_QPT_RC)
			continue;
		add(IBV_QPT_RC, IBV_QPS_RTS, 4, R_SRQ);
		add(IBV_QPT_RC, IBV_QPS_RTS, 4, R_ORPHAN);
		add(IBV_QPT_RC, IBV_QPS_RTS, 6, R_ORPHAN);
	}
	for (i = IBV_QPS_RESET; i <= IBV_QPS_SQD; i++)
		add(IBV_QPT_UD, i, 0, R_PLAIN);
	add(IBV_QPT_UD, IBV_QPS_ERR, 0, R_PLAIN);
	for (i = 0; i < ARRAY_SIZE(unconnected); i++)
		add(IBV_QPT_XRC_RECV, unconnected[i], 0, R_PLAIN);
	add(IBV_QPT_XRC_RECV, IBV_QPS_RTR, 4, R_PLAIN);
	add(IBV_QPT_XRC_RECV, IBV_QPS_RTS, 6, R_PLAIN);
	add(IBV_QPT_XRC_SEND, IBV_QPS_RTS, 4, R_ORPHAN);
	add(IBV_QPT_RC, IBV_QPS_RTR, 4, R_PROBE);
	add(IBV_QPT_RC, IBV_QPS_RTR, 6, R_PROBE);
}

/* ---------------------------------------------------------------------- */

static void open_side(struct side *s, const char *dev, const char *gids)
{
	unsigned int g4, g6;
	int i;

	if (sscanf(gids, "%u,%u", &g4, &g6) != 2 || g4 > 255 || g6 > 255)
		tool_die("GIDs are given as GID4,GID6: %s", gids);
	s->ctx = tool_open_device(dev);
	s->gid_index[0] = g4;
	s->gid_index[1] = g6;
	for (i = 0; i < 2; i++)
		if (ibv_query_gid(s->ctx, 1, s->gid_index[i], &s->gid[i]))
			tool_die("%s: no GID %u", dev, s->gid_index[i]);
	s->pd = ibv_alloc_pd(s->ctx);
	s->cq = ibv_create_cq(s->ctx, CQ_SIZE, NULL, NULL, 0);
	if (!s->pd || !s->cq)
		tool_die("%s: alloc_pd/create_cq: %s", dev, strerror(errno));
}

static void create_all(void)
{
	struct ibv_xrcd_init_attr xa = {
		.comp_mask = IBV_XRCD_INIT_ATTR_FD | IBV_XRCD_INIT_ATTR_OFLAGS,
		.fd = -1,
		.oflags = O_CREAT,
	};
	struct ibv_srq_init_attr srq = { .attr = { .max_wr = 256, .max_sge = 1 } };
	struct ibv_srq_init_attr_ex xs = {
		.attr = { .max_wr = 256, .max_sge = 1 },
		.comp_mask = IBV_SRQ_INIT_ATTR_TYPE | IBV_SRQ_INIT_ATTR_XRCD |
			     IBV_SRQ_INIT_ATTR_CQ | IBV_SRQ_INIT_ATTR_PD,
		.srq_type = IBV_SRQT_XRC,
		.cq = a.cq,
		.pd = a.pd,
	};
	struct target *x;
	int i;

	o.pd2 = ibv_alloc_pd(a.ctx);
	o.srq = ibv_create_srq(a.pd, &srq);
	o.xrcd = ibv_open_xrcd(a.ctx, &xa);
	o.peer_xrcd = ibv_open_xrcd(b.ctx, &xa);
	if (!o.pd2 || !o.srq || !o.xrcd || !o.peer_xrcd)
		tool_die("alloc_pd/create_srq/open_xrcd: %s", strerror(errno));
	xs.xrcd = o.xrcd;
	o.xsrq = ibv_create_srq_ex(a.ctx, &xs);
	if (!o.xsrq || ibv_get_srq_num(o.xsrq, &o.xsrqn))
		tool_die("create XRC SRQ: %s", strerror(errno));
	o.plain_rts4 = -1;
	for (i = 0; i < num_t; i++) {
		x = &t[i];
		x->qp = create_qp(&a, x->type, x->role == R_SRQ ? o.srq : NULL,
				  o.xrcd);
		if (has_peer(x))
			x->peer = create_qp(&b, x->type == IBV_QPT_XRC_RECV ?
					    IBV_QPT_XRC_SEND : x->type, NULL,
					    o.peer_xrcd);
		if (x->type == IBV_QPT_RC && x->want == IBV_QPS_RTS &&
		    x->fam == 4 && x->role == R_PLAIN)
			o.plain_rts4 = i;
	}
	for (i = 0; i < num_t; i++) {
		target_up(&t[i]);
		if (t[i].peer)
			peer_up(&t[i]);
	}
	create_memory();
	post_srq_recv(o.srq, SRQ_POSTED);
	post_srq_recv(o.xsrq, SRQ_POSTED);
	for (i = 0; i < num_t; i++)
		top_up(&t[i]);
}

static void drain_events(void)
{
	struct ibv_async_event ev;

	while (!ibv_get_async_event(a.ctx, &ev)) {
		if ((unsigned int)ev.event_type < ARRAY_SIZE(st.events))
			st.events[ev.event_type]++;
		ibv_ack_async_event(&ev);
	}
}

static void run(long deadline)
{
	struct pollfd pfd = { .fd = a.ctx->async_fd, .events = POLLIN };
	long next_check = (long)tool_now_ms() + CHECK_MS;
	struct ibv_wc wc[64];
	int n, i, busy;

	fcntl(pfd.fd, F_SETFL, fcntl(pfd.fd, F_GETFL) | O_NONBLOCK);
	while (!stop && (long)tool_now_ms() < deadline) {
		busy = 0;
		while ((n = ibv_poll_cq(a.cq, ARRAY_SIZE(wc), wc)) > 0) {
			for (i = 0; i < n; i++)
				completion(&wc[i]);
			busy = 1;
		}
		while (ibv_poll_cq(b.cq, ARRAY_SIZE(wc), wc) > 0)
			;
		if ((long)tool_now_ms() >= next_check) {
			check_states();
			next_check = (long)tool_now_ms() + CHECK_MS;
		}
		if (poll(&pfd, 1, busy ? 0 : 2) > 0)
			drain_events();
	}
}

static void report(void)
{
	struct ibv_qp_init_attr init;
	struct ibv_qp_attr at;
	unsigned int i;

	for (i = 0; i < (unsigned int)num_t; i++) {
		if (ibv_query_qp(t[i].qp, &at, IBV_QP_STATE, &init))
			at.qp_state = -1;
		printf("qp %u %s %s -> %s completed %llu restores %u\n",
		       t[i].qp->qp_num, type_name(t[i].type),
		       state_name(t[i].want), state_name(at.qp_state),
		       (unsigned long long)t[i].done, t[i].restores);
	}
	printf("restores %u (%u cut short) recv ok %llu err %llu flushed %llu"
	       " send ok %llu err %llu flushed %llu\n", st.restores,
	       st.restore_failures,
	       (unsigned long long)st.recv_ok, (unsigned long long)st.recv_err,
	       (unsigned long long)st.recv_flush,
	       (unsigned long long)st.send_ok, (unsigned long long)st.send_err,
	       (unsigned long long)st.send_flush);
	printf("events");
	for (i = 0; i < ARRAY_SIZE(st.events); i++)
		if (st.events[i])
			printf(" %s %llu", tool_event_name(i),
			       (unsigned long long)st.events[i]);
	printf("\n");
}

/* Destroy everything; count what the device refused. */
static int destroy_all(void)
{
	int bad = 0, i;

	for (i = 0; i < 4; i++)
		bad += !!ibv_dealloc_mw(o.mw[i]);
	for (i = 0; i < num_t; i++) {
		bad += !!ibv_destroy_qp(t[i].qp);
		if (t[i].peer)
			bad += !!ibv_destroy_qp(t[i].peer);
	}
	for (i = 0; i < 5; i++)
		if (o.mr[i])
			bad += !!ibv_dereg_mr(o.mr[i]);
	bad += !!ibv_dereg_mr(o.buf_mr);
	bad += !!ibv_destroy_srq(o.xsrq);
	bad += !!ibv_destroy_srq(o.srq);
	bad += !!ibv_close_xrcd(o.xrcd);
	bad += !!ibv_close_xrcd(o.peer_xrcd);
	bad += !!ibv_dealloc_pd(o.pd2);
	bad += !!ibv_destroy_cq(a.cq) + !!ibv_destroy_cq(b.cq);
	bad += !!ibv_dealloc_pd(a.pd) + !!ibv_dealloc_pd(b.pd);
	bad += !!ibv_close_device(a.ctx) + !!ibv_close_device(b.ctx);
	if (bad)
		printf("destroy: %d failed\n", bad);
	return bad;
}

static void usage(int status)
{
	(void)status;
	tool_die("usage: sroce-fuzz-target -d DEV -g GID4,GID6 -D PEER_DEV "
		 "-G GID4,GID6 -o FILE [-t SECONDS] [-v]");
}

int main(int argc, char **argv)
{
	const char *dev = NULL, *gids = NULL, *pdev = NULL, *pgids = NULL;
	const char *out = NULL;
	unsigned long secs = 3600;
	long deadline;
	int timed_out, peers = 0, i;
	const struct tool_opt opts[] = {
		TOOL_STR('d', NULL, &dev),
		TOOL_STR('g', NULL, &gids),
		TOOL_STR('D', NULL, &pdev),
		TOOL_STR('G', NULL, &pgids),
		TOOL_STR('o', NULL, &out),
		TOOL_NUM('t', NULL, ULONG, &secs, 86400),
		TOOL_FLAG('v', NULL, &verbose),
	};

	tool_getopt(argc, argv, opts, ARRAY_SIZE(opts), usage);
	if (!dev || !gids || !pdev || !pgids || !out || optind != argc)
		usage(2);
	signal(SIGTERM, on_signal);
	signal(SIGINT, on_signal);
	deadline = (long)tool_now_ms() + secs * 1000;

	open_side(&a, dev, gids);
	open_side(&b, pdev, pgids);
	plan();
	create_all();
	write_file(out);
	for (i = 0; i < num_t; i++)
		peers += !!t[i].peer;
	printf("ready qps %d partners %d keys %d\n", num_t, peers,
	       (o.mr[4] ? 5 : 4) + 4);
	fflush(stdout);
	start_ms = (long)tool_now_ms();

	run(deadline);
	timed_out = !stop;
	if (timed_out)
		printf("timeout\n");
	report();
	i = destroy_all();
	printf("done\n");
	return timed_out || i ? 1 : 0;
}
