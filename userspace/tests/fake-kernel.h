/* SPDX-License-Identifier: GPL-2.0 OR Linux-OpenIB */
/*
 * The fake sroce.ko of fake-kernel.c, as the tests that drive the provider
 * through it (verbs-test.c, post-test.c, wr-test.c, post-stress.c and
 * trace.c) see it: its rings (the kernel's own mapping of each), the
 * commands it counted, and the failures it can be told to inject.
 */
#ifndef FAKE_KERNEL_H
#define FAKE_KERNEL_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include <infiniband/verbs.h>
#include <rdma/ib_user_verbs.h>
#include <rdma/sroce-abi.h>

#define MAX_QUEUES	64

struct fake_queue {
	bool used;
	uint8_t *kaddr;
	size_t size;
	uint64_t offset;
	uint32_t num_entries;
	uint32_t entry_size;
};

extern struct fake_queue queues[MAX_QUEUES];
extern int live_aliases;

/*
 * Per QP handle: its queues (rq -1 on an SRQ or an XRC send QP), the
 * doorbells it got and its type (enum ibv_qp_type).
 */
struct fake_qp {
	int sq, rq;
	_Atomic unsigned int send_db, recv_db;
	uint8_t type;
};

extern struct fake_qp qps[MAX_QUEUES];
/* Per SRQ handle (a queue number): POST_SRQ_RECV doorbells. */
extern _Atomic unsigned int srq_db[MAX_QUEUES];
/* Called, if set, on every doorbell; the thread that rang it runs it. */
extern void (*doorbell_hook)(void);

/* REQ_NOTIFY_CQ as last received. */
extern unsigned int notify_count;
extern uint32_t notify_cq_handle, notify_solicited;

/* Failure injection for the next command of its kind. */
enum bad_caps {
	CAPS_OK,
	CAPS_INLINE_PAST_ENTRY,	/* max_inline_data larger than an entry holds */
	CAPS_SGE_PAST_ENTRY,	/* max_send_sge larger than an entry holds */
	CAPS_WR_PAST_RING,	/* max_send_wr larger than the ring */
};

extern enum bad_caps bad_qp_caps;
extern bool bad_next_cq;		/* num_entries not a power of two */
extern bool qp_without_rq;		/* rq.mmap_size 0 although no SRQ */
extern int modify_srq_errno;		/* MODIFY_SRQ fails with this, once */
extern int rereg_errno;			/* REREG_MR fails with this, once */
extern uint32_t rereg_keys;		/* REREG_MR answers with these keys */
extern int doorbell_errno;		/* POST_* fails with this, once */
extern bool wq_start_set;		/* new work rings start at wq_start */
extern uint32_t wq_start;

/* What the fake counted and recorded. */
extern unsigned int destroyed_cqs, destroyed_qps;
extern unsigned int modify_srq_count;
extern uint32_t srq_limit[MAX_QUEUES];	/* per SRQ handle, as last set */
extern uint32_t nr_xrcds;		/* XRCDs open */
extern struct ib_uverbs_create_xsrq xsrq_last;
extern struct ib_uverbs_rereg_mr last_rereg;

/* Find the C library's calls that write(), mmap() and munmap() wrap. */
void fake_kernel_init(void);
struct sroce_queue_hdr *qhdr(struct fake_queue *q);
void *qslot(struct fake_queue *q, uint32_t i);
struct sroce_cqe *qcqe(struct fake_queue *q, uint32_t i);
/* The provider's mapping of queue @h, or NULL. */
void *queue_alias(int h);
/* Queue an event on the completion channel of the CQ with handle @h. */
void kernel_comp_event(int h);

void check(bool ok, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));

#endif /* FAKE_KERNEL_H */
