/* SPDX-License-Identifier: GPL-2.0 OR Linux-OpenIB */
#ifndef SROCE_TASK_H
#define SROCE_TASK_H

#include <linux/interrupt.h>
#include <linux/spinlock.h>
#include <linux/timer.h>
#include <linux/workqueue.h>

#include "compat.h"

/**
 * struct sroce_task - one engine of a QP, run in a tasklet, a BH work item
 *			or inline
 * @tasklet: runs @fn in softirq context, unless @bh
 * @fn: the engine; returns true when it stopped with work left
 * @lock: makes "is it stopped?" and "schedule it" one step
 * @stopped: the engine may not be scheduled or run; protected by @lock
 *	     for writers, read locklessly after winning the RUN bit
 * @kick: schedules the engine a tick later (sroce_task_kick())
 * @inline_run: the run under way is inline (sroce_task_run()), not the
 *		tasklet or work item; written and read only by the holder of the RUN bit
 * @work: runs @fn in softirq context from the BH workqueue, in place of
 *	  @tasklet when @bh (module parameter engine=bh)
 * @state: with @bh, the engine's own RUN bit (SROCE_TASK_RUN) and a
 *	   request to run again that came while it was held (SROCE_TASK_AGAIN)
 * @bh: the engine runs from @work, not @tasklet; set once, at init
 *
 * The RUN bit (the tasklet's, or @state's with @bh) is the engine's lock:
 * whoever holds it (the tasklet or work item, or a caller of
 * sroce_task_run() that won it) is the only one running @fn, so an
 * engine's state needs no other lock.
 */
struct sroce_task {
	struct tasklet_struct tasklet;
#ifdef SROCE_HAVE_BH_WORKQUEUE
	struct work_struct work;
	unsigned long state;
	bool bh;
#endif
	bool (*fn)(struct sroce_task *task);
	spinlock_t lock;	/* see above */
	bool stopped;
	struct timer_list kick;
	bool inline_run;
};

bool sroce_task_engine_bh(void);
const char *sroce_task_engine_name(const struct sroce_task *task);
void sroce_task_init(struct sroce_task *task,
		     bool (*fn)(struct sroce_task *task), bool bh);
void sroce_task_run(struct sroce_task *task);
void sroce_task_sched(struct sroce_task *task);
void sroce_task_kick(struct sroce_task *task);
void sroce_task_stop(struct sroce_task *task);
void sroce_task_start(struct sroce_task *task);

#endif /* SROCE_TASK_H */
