/* SPDX-License-Identifier: GPL-2.0 OR Linux-OpenIB */
#ifndef SROCE_TASK_H
#define SROCE_TASK_H

#include <linux/interrupt.h>

/**
 * struct sroce_task - one engine of a QP, run in a tasklet or inline
 * @tasklet: runs @fn in softirq context
 * @fn: the engine; returns true when it stopped with work left
 *
 * The tasklet's RUN bit is the engine's lock: whoever holds it (the
 * tasklet itself, or a caller of sroce_task_run() that won it) is the only
 * one running @fn, so an engine's state needs no other lock.
 */
struct sroce_task {
	struct tasklet_struct tasklet;
	bool (*fn)(struct sroce_task *task);
};

void sroce_task_init(struct sroce_task *task,
		     bool (*fn)(struct sroce_task *task));
void sroce_task_run(struct sroce_task *task);
void sroce_task_sched(struct sroce_task *task);
void sroce_task_kill(struct sroce_task *task);

#endif /* SROCE_TASK_H */
