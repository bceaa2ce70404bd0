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
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <time.h>
#include <unistd.h>

#include "tool.h"

#define UD_QKEY		0x11111111
#define RQ_POSTED	32
#define SRQ_POSTED	128
#define ORPHAN_POSTED	32
#define SQ_DEPTH	64
#define RECV_LEN	4096
#define UD_RECV_LEN	(40 + 512)
#define FAKE_QPN	0xfa0000
#define CQ_SIZE		8192
#define BUF_SIZE	(1 << 20)
#define CHECK_MS	20

enum role { R_PLAIN, R_SRQ, R_ORPHAN, R_PROBE };

/* One QP on the device under attack, and its partner if it has one. */
struct target {
	enum ibv_qp_type type;
	enum ibv_qp_state want;
	int fam;		/* 4, 6, or 0: unconnected */
	enum ibv_mtu mtu;
	enum role role;
	struct ibv_qp *qp;
	struct ibv_qp *peer;	/* on PEER_DEV */
	uint32_t psn;		/* its first SQ and RQ PSN */
	uint32_t gen;		/* bumped on each restore */
	unsigned int posted;	/* receives, or an orphan's requests */
	uint64_t ops;		/* an orphan's requests since the restore */
	uint64_t done;		/* receives or requests completed successfully */
	unsigned int restores;
};

/* One side: the device under attack (a) or its peer (b). */
struct side {
	struct ibv_context *ctx;
	struct ibv_pd *pd;
	struct ibv_cq *cq;
	uint8_t gid_index[2];	/* IPv4, IPv6 */
	union ibv_gid gid[2];
};

static struct side a, b;
static struct target t[64];
static int num_t;

static struct {
	struct ibv_pd *pd2;
	struct ibv_srq *srq, *xsrq;
	struct ibv_xrcd *xrcd, *peer_xrcd;
	uint32_t xsrqn;
	struct ibv_mr *buf_mr, *mr[5];
	struct ibv_mw *mw[4];
	uint32_t mw_rkey[4];
	void *buf, *mem;
	int plain_rts4;		/* the QP type 2 windows are bound through */
} o;

static struct {
	uint64_t recv_ok, recv_err, recv_flush, send_ok, send_err, send_flush;
	uint64_t events[IBV_EVENT_WQ_FATAL + 1];
	unsigned int restores, restore_failures;
} st;

static volatile sig_atomic_t stop;
static bool verbose;
static long start_ms;

static void on_signal(int sig)
{
	(void)sig;
	stop = 1;
}

static long now_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
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
/* QPs. */

static bool has_peer(const struct target *x)
{
	return x->fam && x->role != R_ORPHAN;
}

static unsigned int access_of(const struct target *x)
{
	if (x->type == IBV_QPT_UC)
		return IBV_ACCESS_REMOTE_WRITE;
	if (x->role == R_SRQ)
		return IBV_ACCESS_REMOTE_READ;
	return IBV_ACCESS_REMOTE_WRITE | IBV_ACCESS_REMOTE_READ |
	       IBV_ACCESS_REMOTE_ATOMIC;
}

static struct ibv_qp *create_qp(struct side *s, enum ibv_qp_type type,
				struct ibv_srq *srq, struct ibv_xrcd *xrcd)
{
	struct ibv_qp_init_attr_ex init = {
		.send_cq = s->cq,
		.recv_cq = s->cq,
		.srq = srq,
		.cap = {
			.max_send_wr = SQ_DEPTH,
			.max_recv_wr = type == IBV_QPT_XRC_RECV ? 0 : RQ_POSTED,
			.max_send_sge = 2,
			.max_recv_sge = 2,
		},
		.qp_type = type,
		.comp_mask = IBV_QP_INIT_ATTR_PD,
		.pd = s->pd,
	};
	struct ibv_qp *qp;

	if (type == IBV_QPT_XRC_RECV) {
		memset(&init, 0, sizeof(init));
		init.qp_type = type;
		init.comp_mask = IBV_QP_INIT_ATTR_XRCD;
		init.xrcd = xrcd;
	} else if (type == IBV_QPT_XRC_SEND) {
		init.cap.max_recv_wr = 0;
		init.cap.max_recv_sge = 0;
	}
	qp = ibv_create_qp_ex(s->ctx, &init);
	if (!qp)
		tool_die("create QP (type %d): %s", type, strerror(errno));
	return qp;
}

/*
 * During setup every transition must work. A restore may race with the
 * fuzzer killing the QP again: its failures are counted, and the next
 * check tries again.
 */
static bool restoring;

static int modify(struct ibv_qp *qp, struct ibv_qp_attr *attr, int mask)
{
	int err = ibv_modify_qp(qp, attr, mask);

	if (err && !restoring)
		tool_die("QP %u to state %d: %s", qp->qp_num, attr->qp_state,
			 strerror(err));
	return err;
}

static void set_av(struct ibv_ah_attr *ah, const struct side *s, int fam,
		   const union ibv_gid *dgid)
{
	memset(ah, 0, sizeof(*ah));
	ah->is_global = 1;
	ah->port_num = 1;
	ah->grh.dgid = *dgid;
	ah->grh.sgid_index = s->gid_index[fam == 6];
	ah->grh.hop_limit = 64;
}

/*
 * Walk @qp of @type on side @s from RESET to @want, towards @dest_qpn at
 * @dgid. Its SQ and RQ start at @psn. Return 0 or an errno.
 */
static int bring_up(struct ibv_qp *qp, struct side *s, enum ibv_qp_type type,
		     enum ibv_qp_state want, int fam, enum ibv_mtu mtu,
		     unsigned int access, uint32_t dest_qpn,
		     const union ibv_gid *dgid, uint32_t psn)
{
	bool ud = type == IBV_QPT_UD, rc = type == IBV_QPT_RC ||
					  type == IBV_QPT_XRC_RECV;
	bool ini = type == IBV_QPT_XRC_SEND;
	struct ibv_qp_attr at = {
		.qp_state = IBV_QPS_INIT,
		.port_num = 1,
		.qkey = UD_QKEY,
		.qp_access_flags = access,
	};

	int err;

	if (want == IBV_QPS_RESET)
		return 0;
	err = modify(qp, &at, IBV_QP_STATE | IBV_QP_PKEY_INDEX | IBV_QP_PORT |
		     (ud ? IBV_QP_QKEY : IBV_QP_ACCESS_FLAGS));
	if (err || want == IBV_QPS_INIT)
		return err;
	if (want == IBV_QPS_ERR) {
		at.qp_state = IBV_QPS_ERR;
		return modify(qp, &at, IBV_QP_STATE);
	}
	memset(&at, 0, sizeof(at));
	at.qp_state = IBV_QPS_RTR;
	if (!ud) {
		set_av(&at.ah_attr, s, fam, dgid);
		at.path_mtu = mtu;
		at.dest_qp_num = dest_qpn;
		at.rq_psn = psn;
		at.max_dest_rd_atomic = 16;
		at.min_rnr_timer = 1;
	}
	err = modify(qp, &at, IBV_QP_STATE |
		     (ud ? 0 : IBV_QP_AV | IBV_QP_PATH_MTU | IBV_QP_DEST_QPN |
		      IBV_QP_RQ_PSN) |
		     (rc ? IBV_QP_MAX_DEST_RD_ATOMIC | IBV_QP_MIN_RNR_TIMER : 0));
	if (err || want == IBV_QPS_RTR)
		return err;
	memset(&at, 0, sizeof(at));
	at.qp_state = IBV_QPS_RTS;
	at.sq_psn = psn;
	at.timeout = 0;		/* infinite: requests wait for the fuzzer */
	at.retry_cnt = 7;
	at.rnr_retry = 7;
	at.max_rd_atomic = 16;
	err = modify(qp, &at, IBV_QP_STATE | IBV_QP_SQ_PSN |
		     (type == IBV_QPT_RC || ini ? IBV_QP_TIMEOUT |
		      IBV_QP_RETRY_CNT | IBV_QP_RNR_RETRY |
		      IBV_QP_MAX_QP_RD_ATOMIC :
		      type == IBV_QPT_XRC_RECV ? IBV_QP_TIMEOUT : 0));
	if (err || want == IBV_QPS_RTS)
		return err;
	at.qp_state = IBV_QPS_SQD;
	return modify(qp, &at, IBV_QP_STATE);
}

static union ibv_gid fake_gid;

static int target_up(struct target *x)
{
	uint32_t dest = x->peer ? x->peer->qp_num : FAKE_QPN + (x - t);
	const union ibv_gid *dgid = x->fam ? &b.gid[x->fam == 6] : &fake_gid;

	return bring_up(x->qp, &a, x->type, x->want, x->fam, x->mtu, access_of(x),
		 dest, dgid, x->psn);
}

static void peer_up(struct target *x)
{
	enum ibv_qp_type type = x->type == IBV_QPT_XRC_RECV ? IBV_QPT_XRC_SEND :
				x->type;

	bring_up(x->peer, &b, type, IBV_QPS_RTS, x->fam, x->mtu,
		 IBV_ACCESS_REMOTE_WRITE, x->qp->qp_num, &a.gid[x->fam == 6],
		 x->psn);
}

/* ---------------------------------------------------------------------- */
/* Receives and an orphan's requests. */

/* wr_id kinds: binds, receives on a QP, on the SRQ, requests, XRC SRQ. */
enum { K_BIND, K_RECV, K_SRQ, K_ORPHAN, K_XSRQ };

static uint64_t wr_id(const struct target *x, unsigned int kind)
{
	return (uint64_t)kind << 56 | (uint64_t)(x - t) << 32 | x->gen;
}

static bool has_rq(const struct target *x)
{
	return (x->type == IBV_QPT_RC || x->type == IBV_QPT_UC ||
		x->type == IBV_QPT_UD) && x->role != R_SRQ &&
	       x->want != IBV_QPS_RESET && x->want != IBV_QPS_ERR;
}

static int post_recv_one(struct target *x)
{
	struct ibv_sge sge[2] = {
		{ (uintptr_t)o.buf, 1000, o.buf_mr->lkey },
		{ (uintptr_t)o.buf + 1000, RECV_LEN - 1000, o.buf_mr->lkey },
	};
	struct ibv_recv_wr wr = { .wr_id = wr_id(x, K_RECV), .sg_list = sge,
				  .num_sge = 2 }, *bad;

	if (x->type == IBV_QPT_UD) {
		sge[0].length = UD_RECV_LEN;
		wr.num_sge = 1;
	}
	return ibv_post_recv(x->qp, &wr, &bad);
}

static void post_srq_recv(struct ibv_srq *srq, unsigned int n)
{
	struct ibv_sge sge = { (uintptr_t)o.buf, RECV_LEN, o.buf_mr->lkey };
	struct ibv_recv_wr wr = {
		.wr_id = (uint64_t)(srq == o.srq ? K_SRQ : K_XSRQ) << 56,
		.sg_list = &sge,
		.num_sge = 1,
	}, *bad;

	while (n--)
		if (ibv_post_srq_recv(srq, &wr, &bad))
			tool_die("post_srq_recv: %s", strerror(errno));
}

/* The next request of an orphan: its kind is its PSN's offset mod 5. */
static int post_orphan_one(struct target *x)
{
	static const enum ibv_wr_opcode kinds[] = {
		IBV_WR_SEND, IBV_WR_RDMA_WRITE, IBV_WR_RDMA_READ,
		IBV_WR_ATOMIC_CMP_AND_SWP, IBV_WR_ATOMIC_FETCH_AND_ADD,
	};
	static const uint32_t lens[] = { 16, 16, 24, 8, 8 };
	unsigned int k = x->ops % ARRAY_SIZE(kinds);
	struct ibv_sge sge = { (uintptr_t)o.buf + 8192, lens[k],
			       o.buf_mr->lkey };
	struct ibv_send_wr wr = {
		.wr_id = wr_id(x, K_ORPHAN),
		.sg_list = &sge,
		.num_sge = 1,
		.opcode = kinds[k],
		.send_flags = IBV_SEND_SIGNALED,
	}, *bad;
	int err;

	wr.wr.rdma.remote_addr = 0x10000;
	wr.wr.rdma.rkey = 0x1234;
	if (k >= 3) {
		wr.wr.atomic.remote_addr = 0x10000;
		wr.wr.atomic.rkey = 0x1234;
		wr.wr.atomic.compare_add = 1;
		wr.wr.atomic.swap = 2;
	}
	err = ibv_post_send(x->qp, &wr, &bad);
	if (!err)
		x->ops++;
	return err;
}

/* Top up what @x keeps posted; stop at the first refusal (QP in error). */
static void top_up(struct target *x)
{
	unsigned int want = x->role == R_ORPHAN ? ORPHAN_POSTED : RQ_POSTED;

	if (x->role != R_ORPHAN && !has_rq(x))
		return;
	if (x->role == R_ORPHAN && x->type != IBV_QPT_RC)
		return;
	while (x->posted < want) {
		if (x->role == R_ORPHAN ? post_orphan_one(x) : post_recv_one(x))
			return;
		x->posted++;
	}
}

static void completion(const struct ibv_wc *wc)
{
	unsigned int kind = wc->wr_id >> 56, i = (wc->wr_id >> 32) & 0xffffff;
	bool flush = wc->status == IBV_WC_WR_FLUSH_ERR;
	bool ok = wc->status == IBV_WC_SUCCESS;
	struct target *x;

	if (verbose && !ok && !flush)
		printf("completion kind %u qp %u: %s (vendor_err 0x%x) at %.3f s\n",
		       kind, wc->qp_num, ibv_wc_status_str(wc->status),
		       wc->vendor_err, (now_ms() - start_ms) / 1000.0);
	/* The opcode of a completion in error is undefined: go by wr_id. */
	if (kind == K_ORPHAN || kind == K_BIND) {
		st.send_ok += ok;
		st.send_flush += flush;
		st.send_err += !ok && !flush;
	} else {
		st.recv_ok += ok;
		st.recv_flush += flush;
		st.recv_err += !ok && !flush;
	}
	if (kind == K_SRQ || kind == K_XSRQ) {
		/* An SRQ never dies: give back what was taken. */
		post_srq_recv(kind == K_SRQ ? o.srq : o.xsrq, 1);
		return;
	}
	if ((kind != K_RECV && kind != K_ORPHAN) || i >= (unsigned int)num_t)
		return;
	x = &t[i];
	x->done += ok;
	if ((uint32_t)wc->wr_id != x->gen || !x->posted)
		return;		/* from before a restore */
	x->posted--;
	if (!flush)
		top_up(x);
}

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
	long deadline = now_ms() + 10000;
	struct ibv_wc wc;
	int n;

	while (now_ms() < deadline) {
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

static void create_memory(void)
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

/* ---------------------------------------------------------------------- */

static const char *type_name(enum ibv_qp_type type)
{
	switch (type) {
	case IBV_QPT_RC:
		return "RC";
	case IBV_QPT_UC:
		return "UC";
	case IBV_QPT_UD:
		return "UD";
	case IBV_QPT_XRC_RECV:
		return "XRC_TGT";
	default:
		return "XRC_INI";
	}
}

static const char *state_name(enum ibv_qp_state s)
{
	static const char *const names[] = {
		"RESET", "INIT", "RTR", "RTS", "SQD", "SQE", "ERR",
	};

	return (unsigned int)s < ARRAY_SIZE(names) ? names[s] : "?";
}

static void write_file(const char *path)
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

/*
 * Put back a QP found out of the state it is meant to be in. The fuzzer
 * may kill it again on the way: then the next check tries again.
 */
static void restore(struct target *x)
{
	struct ibv_qp_attr at = { .qp_state = IBV_QPS_RESET };
	int err = ibv_modify_qp(x->qp, &at, IBV_QP_STATE);

	if (err)
		tool_die("QP %u to RESET: %s", x->qp->qp_num, strerror(err));
	restoring = true;
	x->gen++;
	x->posted = 0;
	x->ops = 0;
	x->restores++;
	st.restores++;
	if (target_up(x))
		st.restore_failures++;
	else
		top_up(x);
	restoring = false;
}

static void check_states(void)
{
	struct ibv_qp_init_attr init;
	struct ibv_qp_attr at;
	int i;

	for (i = 0; i < num_t; i++) {
		if (t[i].want < IBV_QPS_RTR || t[i].want == IBV_QPS_ERR)
			continue;
		if (ibv_query_qp(t[i].qp, &at, IBV_QP_STATE, &init))
			tool_die("query_qp: %s", strerror(errno));
		if (at.qp_state == t[i].want)
			continue;
		if (verbose)
			printf("restore qp %u from %s at %.3f s\n",
			       t[i].qp->qp_num, state_name(at.qp_state),
			       (now_ms() - start_ms) / 1000.0);
		restore(&t[i]);
	}
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
	long next_check = now_ms() + CHECK_MS;
	struct ibv_wc wc[64];
	int n, i, busy;

	fcntl(pfd.fd, F_SETFL, fcntl(pfd.fd, F_GETFL) | O_NONBLOCK);
	while (!stop && now_ms() < deadline) {
		busy = 0;
		while ((n = ibv_poll_cq(a.cq, ARRAY_SIZE(wc), wc)) > 0) {
			for (i = 0; i < n; i++)
				completion(&wc[i]);
			busy = 1;
		}
		while (ibv_poll_cq(b.cq, ARRAY_SIZE(wc), wc) > 0)
			;
		if (now_ms() >= next_check) {
			check_states();
			next_check = now_ms() + CHECK_MS;
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

int main(int argc, char **argv)
{
	const char *usage =
		"usage: sroce-fuzz-target -d DEV -g GID4,GID6 -D PEER_DEV -G GID4,GID6 -o FILE [-t SECONDS] [-v]";
	const char *dev = NULL, *gids = NULL, *pdev = NULL, *pgids = NULL;
	const char *out = NULL;
	unsigned long secs = 3600;
	long deadline;
	int opt, timed_out, peers = 0, i;

	while ((opt = getopt(argc, argv, "d:g:D:G:o:t:v")) != -1) {
		switch (opt) {
		case 'd':
			dev = optarg;
			break;
		case 'g':
			gids = optarg;
			break;
		case 'D':
			pdev = optarg;
			break;
		case 'G':
			pgids = optarg;
			break;
		case 'o':
			out = optarg;
			break;
		case 't':
			secs = tool_number(optarg, 86400);
			break;
		case 'v':
			verbose = true;
			break;
		default:
			tool_die("%s", usage);
		}
	}
	if (!dev || !gids || !pdev || !pgids || !out || optind != argc)
		tool_die("%s", usage);
	signal(SIGTERM, on_signal);
	signal(SIGINT, on_signal);
	deadline = now_ms() + secs * 1000;

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
	start_ms = now_ms();

	run(deadline);
	timed_out = !stop;
	if (timed_out)
		printf("timeout\n");
	report();
	i = destroy_all();
	printf("done\n");
	return timed_out || i ? 1 : 0;
}
