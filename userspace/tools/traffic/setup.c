// SPDX-License-Identifier: GPL-2.0 OR Linux-OpenIB
/*
 * Setup: the device and its GID, the parameters both sides agree on,
 * memory, the QPs, the exchange of what each side needs, connecting.
 */
#include "traffic.h"

/* Device and parameters */

static void pick_gid(void)
{
	struct ibv_port_attr pa;
	struct ibv_gid_entry e;
	int i, v2 = -1;

	if (opt.gid_index >= 0) {
		c.gid_index = opt.gid_index;
		return;
	}
	if (ibv_query_port(c.dev, 1, &pa))
		tool_die("ibv_query_port: %s", strerror(errno));
	for (i = 0; i < pa.gid_tbl_len; i++) {
		if (ibv_query_gid_ex(c.dev, 1, i, &e, 0) ||
		    e.gid_type != IBV_GID_TYPE_ROCE_V2)
			continue;
		if (v2 < 0)
			v2 = i;
		if (e.gid.raw[10] == 0xff && e.gid.raw[11] == 0xff) {
			v2 = i;	/* prefer IPv4 */
			break;
		}
	}
	if (v2 < 0)
		tool_die("%s has no RoCE v2 GID: use -g", ibv_get_device_name(c.dev->device));
	c.gid_index = v2;
}

void open_device(struct caps *caps)
{
	struct ibv_device_attr da;
	struct ibv_port_attr pa;
	struct ibv_device **list;

	if (opt.dev) {
		c.dev = tool_open_device(opt.dev);
	} else {
		list = ibv_get_device_list(NULL);
		if (!list || !list[0])
			tool_die("no RDMA device");
		c.dev = ibv_open_device(list[0]);
		if (!c.dev)
			tool_die("ibv_open_device: %s", strerror(errno));
		ibv_free_device_list(list);
	}
	if (ibv_query_device(c.dev, &da) || ibv_query_port(c.dev, 1, &pa))
		tool_die("cannot query the device: %s", strerror(errno));
	pick_gid();
	if (ibv_query_gid(c.dev, 1, c.gid_index, &c.gid))
		tool_die("no GID %u", c.gid_index);
	caps->max_sge = min32(da.max_sge, MAX_SGE);
	caps->mtu = pa.active_mtu;
	caps->rd_atom = da.max_qp_init_rd_atom;
	caps->dest_rd_atom = da.max_qp_rd_atom;
	caps->atomic = da.atomic_cap;
	caps->max_wr = min32(da.max_qp_wr, da.max_cqe / MAX_QPS);
}

/* HELLO: the client's options, then the sender's device limits. */
uint32_t hello_words(const struct caps *caps, uint64_t *w)
{
	uint64_t v[] = {
		PROTO_MAGIC, PROTO_VERSION, opt.seed, opt.qps, opt.ops, opt.max_size,
		opt.mix, opt.transport, opt.sq_depth, opt.rq_depth,
		opt.one_way | opt.allow_loss << 1 | opt.mix_set << 2 |
			(uint64_t)opt.ack_timeout << 8,
		caps->max_sge, caps->mtu, caps->rd_atom, caps->dest_rd_atom,
		caps->atomic, caps->max_wr,
	};

	memcpy(w, v, sizeof(v));
	return sizeof(v) / sizeof(v[0]);
}

void negotiate(const uint64_t *cl, const uint64_t *sv)
{
	struct params *p = &c.p;
	bool one_way = cl[10] & 1;

	if (cl[0] != PROTO_MAGIC || sv[0] != PROTO_MAGIC || cl[1] != sv[1])
		fatal("protocol: the peer is not sroce-traffic version %u", PROTO_VERSION);
	p->seed = cl[2];
	p->qps = cl[3];
	p->ops[0] = one_way ? cl[4] : (cl[4] + 1) / 2;
	p->ops[1] = one_way ? 0 : cl[4] / 2;
	p->max_size = cl[5];
	p->mix = cl[6];
	p->transport = cl[7];
	p->allow_loss = cl[10] & 2;
	p->ack_timeout = (cl[10] >> 8) & 31;
	p->sq_depth = min32(cl[8], min32(cl[16], sv[16]));
	p->rq_depth = min32(cl[9], min32(cl[16], sv[16]));
	p->max_sge = min32(cl[11], sv[11]);
	p->mtu = min32(cl[12], sv[12]);
	p->max_rd_atomic = max32(1, min32(16, min32(min32(cl[13], sv[14]), min32(sv[13], cl[14]))));
	if ((p->mix & MIX_ATOMIC) && (cl[15] == IBV_ATOMIC_NONE || sv[15] == IBV_ATOMIC_NONE)) {
		if (cl[10] & 4)
			fatal("--mix asks for atomics, but a device has none");
		p->mix &= ~MIX_ATOMIC;
		say("a device has no atomics: leaving cas and fadd out");
	}
	p->max_msg = ud() ? min32(p->max_size, tool_mtu_bytes(p->mtu)) : p->max_size;
	p->pool_size = (p->max_size + 4096 + 7) & ~7u;
	p->win_size = max32(2 * p->max_msg, 8192);
}

/* Resources */

static struct ibv_mr *reg(void *buf, size_t len, int access)
{
	struct ibv_mr *mr = ibv_reg_mr(c.pd, buf, len, access);

	if (!mr)
		tool_die("ibv_reg_mr (%zu bytes): %s", len, strerror(errno));
	return mr;
}

static void alloc_memory(void)
{
	const int remote = IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_REMOTE_WRITE;
	uint32_t max_cap, i;

	for (i = 0; i < NUM_POOL; i++) {
		c.pool[i] = tool_alloc(c.p.pool_size);
		pool_fill(c.pool[i], c.p.pool_size, i);
		c.pool_mr[i] = reg(c.pool[i], c.p.pool_size, IBV_ACCESS_REMOTE_READ);
	}
	c.win_stride = c.p.win_size + 2 * GUARD;
	c.win = tool_alloc(c.win_stride * c.p.qps);
	memset(c.win, FILL, c.win_stride * c.p.qps);
	c.win_mr = reg(c.win, c.win_stride * c.p.qps, remote);
	c.atom = tool_alloc(ATOM_STRIDE * c.p.qps);
	memset(c.atom, FILL, ATOM_STRIDE * c.p.qps);
	c.atom_mr = reg(c.atom, ATOM_STRIDE * c.p.qps, remote | IBV_ACCESS_REMOTE_ATOMIC);
	/* A slot holds the largest scatter list: capacity, gaps, guards. */
	max_cap = max32(c.p.max_size, GRH_LEN + c.p.max_msg) + 64;
	c.slot_size = (2 * GUARD + max_cap + MAX_SGE * 32 + 64 + 63) & ~63u;
	c.exp_size = c.p.rq_depth + EXTRA_EXP + LOOKBEHIND;
	c.tmp_got = tool_alloc(max32(c.slot_size, c.win_stride));
	c.tmp_exp = tool_alloc(max32(max32(c.slot_size, c.p.pool_size), c.win_stride));
}

static void alloc_qp_memory(struct tqp *t)
{
	size_t len = (size_t)(c.p.sq_depth + c.p.rq_depth) * c.slot_size;
	unsigned int m;

	for (m = 0; m < NUM_SMR; m++) {
		t->sbuf[m] = tool_alloc(len);
		memset(t->sbuf[m], FILL, len);
		t->smr[m] = reg(t->sbuf[m], len, IBV_ACCESS_LOCAL_WRITE);
	}
	t->ring = tool_alloc(sizeof(*t->ring) * c.p.sq_depth);
	t->exp = tool_alloc(sizeof(*t->exp) * c.exp_size);
	t->got = tool_alloc(c.exp_size);
	t->wqe = tool_alloc(sizeof(*t->wqe) * c.p.rq_depth);
	t->model = tool_alloc(c.win_stride);
	memset(t->model, FILL, c.win_stride);
	t->touched = tool_alloc(c.win_stride);
}

static struct ibv_qp *create_qp(uint32_t inline_want)
{
	struct ibv_qp_init_attr ia = {
		.send_cq = c.scq, .recv_cq = c.rcq, .qp_type = c.p.transport,
		.cap = {
			.max_send_wr = c.p.sq_depth, .max_recv_wr = c.p.rq_depth,
			.max_send_sge = c.p.max_sge, .max_recv_sge = c.p.max_sge,
			.max_inline_data = inline_want,
		},
	};
	struct ibv_qp *qp = ibv_create_qp(c.pd, &ia);

	if (qp)
		c.max_inline = ia.cap.max_inline_data;
	return qp;
}

void create_qps(void)
{
	uint32_t q, n = c.p.qps;
	uint64_t s;

	c.pd = ibv_alloc_pd(c.dev);
	c.chan = ibv_create_comp_channel(c.dev);
	if (!c.pd || !c.chan)
		tool_die("ibv_alloc_pd/ibv_create_comp_channel: %s", strerror(errno));
	c.scq = ibv_create_cq(c.dev, n * c.p.sq_depth + 1, NULL, c.chan, 0);
	c.rcq = ibv_create_cq(c.dev, n * c.p.rq_depth + 1, NULL, c.chan, 0);
	if (!c.scq || !c.rcq)
		tool_die("ibv_create_cq: %s", strerror(errno));
	fcntl(c.chan->fd, F_SETFL, fcntl(c.chan->fd, F_GETFL) | O_NONBLOCK);
	fcntl(c.dev->async_fd, F_SETFL, fcntl(c.dev->async_fd, F_GETFL) | O_NONBLOCK);
	alloc_memory();
	c.qp = tool_alloc(sizeof(*c.qp) * n);
	for (q = 0; q < n; q++) {
		struct tqp *t = &c.qp[q];

		t->idx = q;
		t->qp = create_qp(64);
		if (!t->qp)
			t->qp = create_qp(0);
		if (!t->qp)
			tool_die("ibv_create_qp: %s", strerror(errno));
		/* Odd QPs start just below the PSN wrap. */
		s = seed_of(SALT_PSN, c.side, q);
		t->psn = q & 1 ? 0xffffff - tool_rng_below(&s, 64) : tool_rng_below(&s, 1 << 24);
		t->lrng = seed_of(SALT_LOCAL, c.side, q);
		t->rrng = seed_of(SALT_RECV, c.side, q);
		stream_init(&t->tx, c.side, q);
		stream_init(&t->rx, !c.side, q);
		alloc_qp_memory(t);
		/* The peer's atomic word for this QP starts where its stream expects. */
		memcpy(c.atom + q * ATOM_STRIDE, &t->rx.atom, 8);
	}
}

/* INFO: my GID, MRs and QPs. */
void exchange_info(void)
{
	uint64_t w[MSG_WORDS], *p = w;
	uint32_t q, i;

	memcpy(p, c.gid.raw, 16);
	p += 2;
	for (i = 0; i < NUM_POOL; i++) {
		*p++ = (uintptr_t)c.pool[i];
		*p++ = c.pool_mr[i]->rkey;
	}
	*p++ = (uintptr_t)c.win;
	*p++ = c.win_mr->rkey;
	*p++ = (uintptr_t)c.atom;
	*p++ = c.atom_mr->rkey;
	for (q = 0; q < c.p.qps; q++) {
		*p++ = c.qp[q].qp->qp_num;
		*p++ = c.qp[q].psn;
	}
	/* The GID's bytes travel as they are: undo send_msg's swap. */
	w[0] = be64toh(w[0]);
	w[1] = be64toh(w[1]);
	send_msg(M_INFO, w, p - w);
	expect_msg(M_INFO, w, 12 + 2 * c.p.qps);
	w[0] = htobe64(w[0]);
	w[1] = htobe64(w[1]);
	memcpy(c.peer_gid.raw, w, 16);
	for (i = 0; i < NUM_POOL; i++) {
		c.peer.pool_addr[i] = w[2 + 2 * i];
		c.peer.pool_rkey[i] = w[3 + 2 * i];
	}
	c.peer.win_addr = w[8];
	c.peer.win_rkey = w[9];
	c.peer.atom_addr = w[10];
	c.peer.atom_rkey = w[11];
	for (q = 0; q < c.p.qps; q++) {
		c.qp[q].peer_qpn = w[12 + 2 * q];
		c.qp[q].peer_psn = w[13 + 2 * q];
	}
}

static int modify(struct ibv_qp *qp, struct ibv_qp_attr *a, int mask,
		  void *arg)
{
	const struct tqp *t = arg;
	int err = ibv_modify_qp(qp, a, mask);

	if (err)
		fatal("qp %u: modify QP to %s: %s", t->idx,
		      tool_qp_state_name(a->qp_state), strerror(err));
	return 0;
}

/* RESET to RTS facing the peer's QP; UD: then its address handle. */
void connect_qp(struct tqp *t)
{
	bool rc = c.p.transport == IBV_QPT_RC;
	struct tool_qp_conn conn = {
		.access = IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_REMOTE_WRITE |
			  (rc ? IBV_ACCESS_REMOTE_READ | IBV_ACCESS_REMOTE_ATOMIC : 0),
		.qkey = UD_QKEY, .dgid = c.peer_gid, .sgid_index = c.gid_index,
		.mtu = c.p.mtu, .dest_qpn = t->peer_qpn, .rq_psn = t->peer_psn,
		.max_dest_rd_atomic = c.p.max_rd_atomic, .min_rnr_timer = 1,
		.sq_psn = t->psn, .timeout = c.p.ack_timeout, .retry_cnt = 7,
		.rnr_retry = 7, .max_rd_atomic = c.p.max_rd_atomic,
		.modify = modify, .arg = t,
	};
	struct ibv_ah_attr ah;

	tool_qp_connect(t->qp, &conn, IBV_QPS_RTS);
	if (!ud())
		return;
	tool_set_av(&ah, &c.peer_gid, c.gid_index);
	t->ah = ibv_create_ah(c.pd, &ah);
	if (!t->ah)
		fatal("qp %u: ibv_create_ah: %s", t->idx, strerror(errno));
}
