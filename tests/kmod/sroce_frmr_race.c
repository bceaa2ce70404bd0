// SPDX-License-Identifier: GPL-2.0 OR Linux-OpenIB
/*
 * sroce_frmr_race: a test module for tests/72-frmr-race.sh, never
 * installed. Fast registration is a kernel-only verb, so only a kernel
 * consumer can race an access to a fast-registration MR against the
 * MR's invalidation and next registration, as an aborted I/O of a
 * storage ULP does: the peer's late RDMA WRITE was checked against the
 * old registration, and the consumer registers its next buffer at the
 * same addresses (here: zero-based) before the WRITE's data is placed.
 * The data must not land in the next buffer (IBA 10.6.7.2.5: once
 * invalidated, the key gives no access).
 *
 * Two RC QPs of one device are connected to each other. Each round:
 *   1. QP 0 registers buffer A zero-based (REG_MR, key K1);
 *   2. a work item on CPU 0 posts an RDMA WRITE of 256 bytes to K1 on
 *      QP 1; sroce's access_delay_us (set by the test) holds QP 0's
 *      responder between the access check and the copy;
 *   3. meanwhile a work item on CPU 1 posts LOCAL_INV K1 and REG_MR of
 *      buffer B zero-based with key K2 on QP 0.
 * Then it classifies the round by where the bytes went: into A (the copy
 * came first), nowhere with the WRITE refused (the check came after the
 * invalidation, or the copy found the registration gone: sroce's
 * debugfs counter stale_accesses tells the test how often), nowhere with
 * the WRITE acknowledged (lost without a word), or into B: the last two
 * are defects. The wait between
 * the two work items adapts: longer after a refused WRITE, shorter after
 * one placed first, so that on a slow kernel too most rounds race. The
 * last line of the module's log is the summary the test reads; loading
 * fails with -EIO if any round corrupted B or lost the bytes.
 */
#include <linux/delay.h>
#include <linux/etherdevice.h>
#include <linux/module.h>
#include <linux/scatterlist.h>
#include <linux/workqueue.h>
#include <net/ipv6.h>
#include <rdma/ib_cache.h>
#include <rdma/ib_verbs.h>

static char *dev = "sroce_a";
module_param(dev, charp, 0444);
MODULE_PARM_DESC(dev, "the RDMA device");
static int rounds = 20;
module_param(rounds, int, 0444);
MODULE_PARM_DESC(rounds, "rounds");
static int gap_us = 2000;
module_param(gap_us, int, 0444);
MODULE_PARM_DESC(gap_us, "first wait between posting the WRITE and the re-registration; adapted");

#define FR_LEN		256
#define FR_BYTE		0xa5
#define FR_TIMEOUT_MS	20000

enum { WR_WRITE = 1, WR_INV, WR_REG };

struct fr_test {
	struct ib_device *ibdev;
	struct ib_pd *pd;
	struct ib_cq *cq[2];
	struct ib_qp *qp[2];
	struct ib_mr *mr;
	bool mr_valid;
	struct page *buf[2];
	struct scatterlist sg[2];
	void *src;
	u64 src_dma;
	struct rdma_ah_attr ah;
	struct work_struct write_work;
	struct work_struct rereg_work;
	u32 write_key;
	int write_err;
	int rereg_err;
};

/*
 * The device is found as a client of the RDMA core (add() runs for each
 * device when the client registers): ib_device_get_by_name() is not
 * exported by every kernel.
 */
static struct ib_device *fr_found;

static int fr_add(struct ib_device *ibdev)
{
	if (!fr_found && !strcmp(dev_name(&ibdev->dev), dev) &&
	    ib_device_try_get(ibdev))
		fr_found = ibdev;
	return 0;
}

static void fr_remove(struct ib_device *ibdev, void *client_data)
{
}

static struct ib_client fr_client = {
	.name = "sroce_frmr_race",
	.add = fr_add,
	.remove = fr_remove,
};

/* A RoCEv2 GID with an IPv4 address, and the path to it (our own). */
static int fr_find_gid(struct fr_test *t)
{
	const struct ib_gid_attr *attr;
	struct net_device *ndev;
	union ib_gid gid;
	unsigned int i;

	for (i = 0; i < 16; i++) {
		attr = rdma_get_gid_attr(t->ibdev, 1, i);
		if (IS_ERR(attr))
			continue;
		if (attr->gid_type != IB_GID_TYPE_ROCE_UDP_ENCAP ||
		    !ipv6_addr_v4mapped((struct in6_addr *)attr->gid.raw)) {
			rdma_put_gid_attr(attr);
			continue;
		}
		memset(&t->ah, 0, sizeof(t->ah));
		t->ah.type = RDMA_AH_ATTR_TYPE_ROCE;
		rdma_ah_set_port_num(&t->ah, 1);
		gid = attr->gid;
		rdma_ah_set_grh(&t->ah, &gid, 0, attr->index, 64, 0);
		rcu_read_lock();
		ndev = rdma_read_gid_attr_ndev_rcu(attr);
		if (!IS_ERR(ndev))
			ether_addr_copy(t->ah.roce.dmac, ndev->dev_addr);
		rcu_read_unlock();
		rdma_put_gid_attr(attr);
		return 0;
	}
	return -ENOENT;
}

/* RESET, then INIT, RTR and RTS, connected to the other QP. */
static int fr_connect(struct fr_test *t, int i)
{
	struct ib_qp_attr a = { .qp_state = IB_QPS_RESET };
	int err;

	err = ib_modify_qp(t->qp[i], &a, IB_QP_STATE);
	if (err)
		return err;
	a = (struct ib_qp_attr) {
		.qp_state = IB_QPS_INIT, .port_num = 1,
		.qp_access_flags = IB_ACCESS_REMOTE_WRITE,
	};
	err = ib_modify_qp(t->qp[i], &a, IB_QP_STATE | IB_QP_PKEY_INDEX |
			   IB_QP_PORT | IB_QP_ACCESS_FLAGS);
	if (err)
		return err;
	a = (struct ib_qp_attr) {
		.qp_state = IB_QPS_RTR, .path_mtu = IB_MTU_1024,
		.dest_qp_num = t->qp[!i]->qp_num, .max_dest_rd_atomic = 1,
		.min_rnr_timer = 12, .ah_attr = t->ah,
	};
	err = ib_modify_qp(t->qp[i], &a, IB_QP_STATE | IB_QP_AV |
			   IB_QP_PATH_MTU | IB_QP_DEST_QPN | IB_QP_RQ_PSN |
			   IB_QP_MAX_DEST_RD_ATOMIC | IB_QP_MIN_RNR_TIMER);
	if (err)
		return err;
	a = (struct ib_qp_attr) {
		.qp_state = IB_QPS_RTS, .timeout = 14, .retry_cnt = 7,
		.rnr_retry = 7, .max_rd_atomic = 1,
	};
	return ib_modify_qp(t->qp[i], &a, IB_QP_STATE | IB_QP_SQ_PSN |
			    IB_QP_TIMEOUT | IB_QP_RETRY_CNT |
			    IB_QP_RNR_RETRY | IB_QP_MAX_QP_RD_ATOMIC);
}

/* The next completion of @cq, waiting at most FR_TIMEOUT_MS. */
static int fr_poll(struct ib_cq *cq, struct ib_wc *wc)
{
	unsigned long end = jiffies + msecs_to_jiffies(FR_TIMEOUT_MS);

	while (!ib_poll_cq(cq, 1, wc)) {
		if (time_after(jiffies, end))
			return -ETIMEDOUT;
		usleep_range(50, 100);
	}
	return 0;
}

/* Post on QP 0: LOCAL_INV of @key if nonzero, then REG_MR of buffer @b. */
static int fr_post_rereg(struct fr_test *t, u32 key, int b)
{
	struct ib_send_wr inv = {
		.opcode = IB_WR_LOCAL_INV, .send_flags = IB_SEND_SIGNALED,
		.wr_id = WR_INV, .ex.invalidate_rkey = key,
	};
	struct ib_reg_wr reg = {
		.wr = { .opcode = IB_WR_REG_MR, .wr_id = WR_REG,
			.send_flags = IB_SEND_SIGNALED },
		.access = IB_ACCESS_LOCAL_WRITE | IB_ACCESS_REMOTE_WRITE,
	};
	int n;

	n = ib_map_mr_sg_zbva(t->mr, &t->sg[b], 1, NULL, PAGE_SIZE);
	if (n != 1)
		return n < 0 ? n : -EINVAL;
	ib_update_fast_reg_key(t->mr, ib_inc_rkey(t->mr->rkey) & 0xff);
	reg.mr = t->mr;
	reg.key = t->mr->rkey;
	if (key)
		inv.next = &reg.wr;
	return ib_post_send(t->qp[0], key ? &inv : &reg.wr, NULL);
}

static void fr_write_fn(struct work_struct *w)
{
	struct fr_test *t = container_of(w, struct fr_test, write_work);
	struct ib_sge sge = {
		.addr = t->src_dma, .length = FR_LEN, .lkey = t->pd->local_dma_lkey,
	};
	struct ib_rdma_wr wr = {
		.wr = { .opcode = IB_WR_RDMA_WRITE, .wr_id = WR_WRITE,
			.send_flags = IB_SEND_SIGNALED, .sg_list = &sge,
			.num_sge = 1 },
		.remote_addr = 0, .rkey = t->write_key,
	};

	t->write_err = ib_post_send(t->qp[1], &wr.wr, NULL);
}

static void fr_rereg_fn(struct work_struct *w)
{
	struct fr_test *t = container_of(w, struct fr_test, rereg_work);

	t->rereg_err = fr_post_rereg(t, t->write_key, 1);
}

/* Wait for QP 0's completions of @n posted WRs; track the MR's state. */
static int fr_reap0(struct fr_test *t, int n, int *bad)
{
	struct ib_wc wc;
	int err;

	while (n--) {
		err = fr_poll(t->cq[0], &wc);
		if (err)
			return err;
		if (wc.status != IB_WC_SUCCESS)
			(*bad)++;
		else if (wc.wr_id == WR_INV)
			t->mr_valid = false;
		else if (wc.wr_id == WR_REG)
			t->mr_valid = true;
	}
	return 0;
}

struct fr_counts {
	int first, refused, dropped, corrupt, other;
};

static int fr_round(struct fr_test *t, struct fr_counts *c)
{
	void *a = page_address(t->buf[0]), *b = page_address(t->buf[1]);
	int err, bad = 0;
	struct ib_wc wc;

	err = fr_connect(t, 0) ?: fr_connect(t, 1);
	if (err)
		return err;
	memset(a, 0, PAGE_SIZE);
	memset(b, 0, PAGE_SIZE);
	if (t->mr_valid) {
		/* Left registered by the last round: make it Free. */
		struct ib_send_wr inv = {
			.opcode = IB_WR_LOCAL_INV, .wr_id = WR_INV,
			.send_flags = IB_SEND_SIGNALED,
			.ex.invalidate_rkey = t->mr->rkey,
		};

		err = ib_post_send(t->qp[0], &inv, NULL);
		if (err || fr_reap0(t, 1, &bad) || bad)
			return err ?: -EIO;
	}
	err = fr_post_rereg(t, 0, 0);
	if (err || fr_reap0(t, 1, &bad) || bad)
		return err ?: -EIO;
	t->write_key = t->mr->rkey;

	queue_work_on(0, system_highpri_wq, &t->write_work);
	usleep_range(gap_us, gap_us + 100);
	queue_work_on(1, system_highpri_wq, &t->rereg_work);
	flush_work(&t->write_work);
	flush_work(&t->rereg_work);
	if (t->write_err || t->rereg_err)
		return t->write_err ?: t->rereg_err;
	err = fr_poll(t->cq[1], &wc) ?: fr_reap0(t, 2, &bad);
	if (err)
		return err;

	if (gap_us < 1)
		gap_us = 1;
	if (memchr_inv(b, 0, PAGE_SIZE)) {
		pr_err("sroce_frmr_race: a WRITE checked against key %#x landed in the next registration's buffer\n",
		       t->write_key);
		c->corrupt++;
	} else if (wc.status != IB_WC_SUCCESS) {
		c->refused++;
		gap_us += gap_us / 4 + 1;
	} else if (!memchr_inv(a, FR_BYTE, FR_LEN) &&
		   !memchr_inv(a + FR_LEN, 0, PAGE_SIZE - FR_LEN)) {
		c->first++;
		gap_us -= gap_us / 4;
	} else if (!memchr_inv(a, 0, PAGE_SIZE)) {
		pr_err("sroce_frmr_race: a WRITE was acknowledged and its bytes placed nowhere\n");
		c->dropped++;
	} else {
		pr_err("sroce_frmr_race: buffer A holds neither the WRITE nor zeros\n");
		c->other++;
	}
	return 0;
}

static int fr_setup(struct fr_test *t)
{
	struct ib_qp_init_attr qa = {
		.qp_type = IB_QPT_RC, .sq_sig_type = IB_SIGNAL_ALL_WR,
		.cap = { .max_send_wr = 8, .max_recv_wr = 1,
			 .max_send_sge = 1, .max_recv_sge = 1 },
	};
	int i, err;

	err = ib_register_client(&fr_client);
	if (err)
		return err;
	ib_unregister_client(&fr_client);
	t->ibdev = fr_found;
	if (!t->ibdev)
		return -ENODEV;
	err = fr_find_gid(t);
	if (err)
		return err;
	t->pd = ib_alloc_pd(t->ibdev, 0);
	if (IS_ERR(t->pd))
		return PTR_ERR(t->pd);
	for (i = 0; i < 2; i++) {
		t->cq[i] = ib_alloc_cq(t->ibdev, NULL, 16, 0, IB_POLL_DIRECT);
		if (IS_ERR(t->cq[i]))
			return PTR_ERR(t->cq[i]);
		qa.send_cq = t->cq[i];
		qa.recv_cq = t->cq[i];
		t->qp[i] = ib_create_qp(t->pd, &qa);
		if (IS_ERR(t->qp[i]))
			return PTR_ERR(t->qp[i]);
		t->buf[i] = alloc_page(GFP_KERNEL | __GFP_ZERO);
		if (!t->buf[i])
			return -ENOMEM;
		sg_init_table(&t->sg[i], 1);
		sg_set_page(&t->sg[i], t->buf[i], PAGE_SIZE, 0);
		if (ib_dma_map_sg(t->ibdev, &t->sg[i], 1, DMA_BIDIRECTIONAL) != 1)
			return -EIO;
	}
	t->mr = ib_alloc_mr(t->pd, IB_MR_TYPE_MEM_REG, 1);
	if (IS_ERR(t->mr))
		return PTR_ERR(t->mr);
	t->src = kmalloc(FR_LEN, GFP_KERNEL);
	if (!t->src)
		return -ENOMEM;
	memset(t->src, FR_BYTE, FR_LEN);
	t->src_dma = ib_dma_map_single(t->ibdev, t->src, FR_LEN, DMA_TO_DEVICE);
	if (ib_dma_mapping_error(t->ibdev, t->src_dma)) {
		t->src_dma = 0;
		return -EIO;
	}
	INIT_WORK(&t->write_work, fr_write_fn);
	INIT_WORK(&t->rereg_work, fr_rereg_fn);
	return 0;
}

/*
 * Undo fr_setup(), whatever part of it was done: the QPs first, which may
 * still hold WRs that name the buffers and the MR (a round that failed).
 */
static void fr_teardown(struct fr_test *t)
{
	int i;

	for (i = 1; i >= 0; i--)
		if (!IS_ERR_OR_NULL(t->qp[i]))
			ib_destroy_qp(t->qp[i]);
	if (t->src_dma)
		ib_dma_unmap_single(t->ibdev, t->src_dma, FR_LEN, DMA_TO_DEVICE);
	kfree(t->src);
	if (!IS_ERR_OR_NULL(t->mr))
		ib_dereg_mr(t->mr);
	for (i = 1; i >= 0; i--) {
		if (t->buf[i]) {
			if (sg_dma_address(&t->sg[i]))
				ib_dma_unmap_sg(t->ibdev, &t->sg[i], 1,
						DMA_BIDIRECTIONAL);
			__free_page(t->buf[i]);
		}
		if (!IS_ERR_OR_NULL(t->cq[i]))
			ib_free_cq(t->cq[i]);
	}
	if (!IS_ERR_OR_NULL(t->pd))
		ib_dealloc_pd(t->pd);
	if (t->ibdev)
		ib_device_put(t->ibdev);
}

static int __init fr_init(void)
{
	struct fr_counts c = {};
	struct fr_test *t;
	int i, err;

	if (!cpu_online(0) || !cpu_online(1))
		return -EOPNOTSUPP;
	t = kzalloc(sizeof(*t), GFP_KERNEL);
	if (!t)
		return -ENOMEM;
	err = fr_setup(t);
	for (i = 0; !err && i < rounds; i++)
		err = fr_round(t, &c);
	if (err)
		pr_err("sroce_frmr_race: round %d: error %d\n", i, err);
	fr_teardown(t);
	kfree(t);
	pr_info("sroce_frmr_race: %d rounds: %d placed first, %d refused, %d dropped, %d corrupt, %d other (gap %d us)\n",
		i, c.first, c.refused, c.dropped, c.corrupt, c.other, gap_us);
	if (err)
		return err;
	return c.corrupt || c.dropped || c.other ? -EIO : 0;
}

static void __exit fr_exit(void)
{
}

module_init(fr_init);
module_exit(fr_exit);
MODULE_DESCRIPTION("sroce test: a late access to a fast-registration MR");
MODULE_LICENSE("Dual BSD/GPL");
