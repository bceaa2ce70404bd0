// SPDX-License-Identifier: GPL-2.0 OR Linux-OpenIB
/*
 * DOC: Engines
 *
 * Each QP has two engines: the send engine (requester and completer) and
 * the receive engine (responder). An engine runs in its tasklet, or
 * inline in the context that has work for it, when that is cheaper: the
 * doorbell system call runs the send engine in process context, and the
 * UDP receive path runs the responder in its softirq. Either way the
 * tasklet's RUN bit, taken with tasklet_trylock(), makes sure one engine
 * runs on one CPU at a time: who loses the race schedules the tasklet, and
 * the tasklet core retries until the winner is done.
 *
 * An engine does a bounded amount of work per run and says whether it
 * stopped early; it is then rescheduled, so that one busy QP cannot hold
 * a CPU's softirq.
 */
#include "task.h"

static void sroce_task_tasklet(struct tasklet_struct *t)
{
	struct sroce_task *task = from_tasklet(task, t, tasklet);

	if (task->fn(task))
		tasklet_schedule(t);
}

/**
 * sroce_task_init() - set up an engine
 * @task: the engine
 * @fn: its function
 */
void sroce_task_init(struct sroce_task *task,
		     bool (*fn)(struct sroce_task *task))
{
	task->fn = fn;
	tasklet_setup(&task->tasklet, sroce_task_tasklet);
}

/**
 * sroce_task_run() - run an engine now, here, if no one else is running it
 * @task: the engine
 *
 * With interrupts disabled (a kernel consumer posting under an irqsave
 * lock, or from a hard interrupt) the engine cannot run here, because
 * bottom halves cannot be re-enabled there: it is scheduled instead.
 *
 * Context: any.
 */
void sroce_task_run(struct sroce_task *task)
{
	bool more;

	if (in_hardirq() || irqs_disabled()) {
		tasklet_schedule(&task->tasklet);
		return;
	}
	local_bh_disable();
	if (tasklet_trylock(&task->tasklet)) {
		more = task->fn(task);
		tasklet_unlock(&task->tasklet);
		if (more)
			tasklet_schedule(&task->tasklet);
	} else {
		tasklet_schedule(&task->tasklet);
	}
	local_bh_enable();
}

/**
 * sroce_task_sched() - run an engine soon, in its tasklet
 * @task: the engine
 */
void sroce_task_sched(struct sroce_task *task)
{
	tasklet_schedule(&task->tasklet);
}

/**
 * sroce_task_kill() - wait until an engine is neither scheduled nor running
 * @task: the engine; nothing may schedule it any more
 *
 * Context: process.
 */
void sroce_task_kill(struct sroce_task *task)
{
	tasklet_kill(&task->tasklet);
}
