/* SPDX-License-Identifier: GPL-2.0 OR Linux-OpenIB */
#ifndef SROCE_ODP_H
#define SROCE_ODP_H

#include <linux/spinlock.h>
#include <linux/workqueue.h>
#include <rdma/ib_verbs.h>

struct sroce_dev;
struct sroce_mr;
struct sroce_task;

/* An odp_map entry's page is mapped for writing (struct sroce_mr). */
#define SROCE_ODP_WRITABLE	1UL

/* The most a fault maps at once: an access asks again for the rest. */
#define SROCE_ODP_FAULT_MAX	SZ_1M

/**
 * struct sroce_odp_fault - an engine's page fault, resolved in process
 *			    context (odp.c)
 * @work: runs the fault on the device's ODP workqueue
 * @lock: orders the fields below between the engine and @work
 * @busy: a fault is queued or running; no other is queued meanwhile
 * @mr: the MR faulted, referenced while @busy
 * @iova: first byte to map
 * @len: bytes to map
 * @write: map for writing
 * @failed: the last fault failed (the range is not mapped in the
 *	    process, or not writable): the next access to that range of
 *	    that MR fails, and this is cleared
 * @failed_key: the MR key of that fault
 * @failed_iova: its first byte
 * @failed_end: one past its last byte
 * @task: the engine, scheduled when a fault ends
 * @sdev: the device, for its counters
 */
struct sroce_odp_fault {
	struct work_struct work;
	spinlock_t lock;	/* see above */
	bool busy;
	struct sroce_mr *mr;
	u64 iova;
	u32 len;
	bool write;
	bool failed;
	u32 failed_key;
	u64 failed_iova;
	u64 failed_end;
	struct sroce_task *task;
	struct sroce_dev *sdev;
};

int sroce_odp_module_init(void);
void sroce_odp_module_exit(void);
bool sroce_odp_supported(void);

/* The children of an implicit ODP MR: 2 MiB of address space each. */
#define SROCE_ODP_CHILD_SHIFT	21
#define SROCE_ODP_CHILD_SIZE	BIT(SROCE_ODP_CHILD_SHIFT)
#define SROCE_ODP_CHILD_PAGES	(SROCE_ODP_CHILD_SIZE >> PAGE_SHIFT)

int sroce_odp_reg(struct sroce_mr *mr, u64 start, u64 length, int access);
void sroce_odp_release(struct sroce_mr *mr);
void *sroce_odp_map(struct sroce_mr *mr, u64 iova, u32 len, bool write,
		    u32 *chunk);

void sroce_odp_fault_init(struct sroce_odp_fault *f, struct sroce_dev *sdev,
			  struct sroce_task *task);
int sroce_odp_fault_queue(struct sroce_odp_fault *f, struct sroce_mr *mr,
			  u64 iova, u64 len, bool write);
void sroce_odp_fault_cancel(struct sroce_odp_fault *f);
bool sroce_odp_fault_busy(struct sroce_odp_fault *f);

int sroce_odp_prefetch(struct sroce_mr *mr, u64 iova, u64 len, bool write,
		       bool fault);
void sroce_odp_queue(struct work_struct *work);

/* Implicit ODP MRs (odp_implicit.c). */
int sroce_odp_imr_reg(struct sroce_mr *mr, int access);
void sroce_odp_imr_release(struct sroce_mr *mr);
void *sroce_odp_imr_map(struct sroce_mr *mr, u64 iova, u32 len, bool write,
			u32 *chunk);
int sroce_odp_imr_fault(struct sroce_mr *mr, u64 iova, u64 len, bool write,
			bool fault);

#endif /* SROCE_ODP_H */
