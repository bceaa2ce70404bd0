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
 *
 * Stopping. Anything may ask an engine to run: the other engine of the
 * same QP (an error moves the QP to ERR and wakes both), a timer, a
 * packet, a system call. tasklet_kill() alone cannot stop such an engine
 * for good: a request made just after it returns schedules the tasklet
 * again, on memory that is about to be freed. So sroce_task_stop() first
 * marks the engine stopped under @lock, which every scheduler takes, and
 * only then kills the tasklet: after the mark no one can schedule it, and
 * tasklet_kill() waits for the run or the schedule already under way. An
 * inline runner checks the mark only after winning the RUN bit; the mark
 * is stored before tasklet_kill() looks at that bit, and both sides order
 * the two with a full barrier (test_and_set_bit()), so either the runner
 * sees the mark or tasklet_kill() sees the runner and waits for it.
 * sroce_task_start() lifts the mark (a reset QP is used again).
 *
 * An engine that cannot go on for want of memory asks to run again a tick
 * later (sroce_task_kick()), rather than at once: an engine that kept
 * rescheduling itself would only spin. It runs again on the same CPU: the
 * packets a QP sends from two CPUs may overtake each other (a veth queues
 * what it receives per CPU), which an unreliable QP takes for loss.
 *
 * BH workqueue. Tasklets are on their way out of the kernel; their
 * successor is a work item on a workqueue that runs in softirq context
 * (WQ_BH, system_bh_wq, kernels that have it). With the module parameter
 * engine=bh, QPs created from then on run their engines from such a work
 * item instead of a tasklet, in the same context, on the CPU that queued
 * it (or where it is running, if it is). The BH workqueue runs up to ten
 * work items a pass, so an engine that asks to run again may run again
 * before the next packets are received, where a requeued tasklet waits
 * for the next softirq round. A work item has no RUN bit to try, so the
 * engine keeps its own (SROCE_TASK_RUN): a work item that finds it taken
 * leaves SROCE_TASK_AGAIN and returns, and the holder, after letting go,
 * queues the work again if it finds that mark (each side sets its bit,
 * then a full barrier, then looks at the other's: at least one of them
 * sees the other, so no request is lost; at worst the engine runs once
 * more with nothing to do). Stopping is the same with cancel_work_sync()
 * for tasklet_kill(), then a wait for an inline runner's RUN bit
 * (wait_var_event(), not a spin: under PREEMPT_RT an inline runner can
 * be preempted).
 */
#include <linux/moduleparam.h>
#include <linux/sysfs.h>
#include <linux/wait_bit.h>

#include "compat.h"
#include "fault.h"
#include "task.h"

/* A hardware uniprocessor build makes tasklet_trylock() always succeed. */
static_assert(IS_ENABLED(CONFIG_SMP),
	      "sroce relies on the tasklet RUN bit: build with CONFIG_SMP");

/*
 * engine=tasklet|bh: how the engines of QPs created from now on run (the
 * DOC above). Kernels without BH workqueues have tasklets only.
 */
static bool sroce_task_bh;

static int engine_param_set(const char *val, const struct kernel_param *kp)
{
	if (sysfs_streq(val, "tasklet")) {
		WRITE_ONCE(sroce_task_bh, false);
		return 0;
	}
	if (sysfs_streq(val, "bh")) {
#ifdef SROCE_HAVE_BH_WORKQUEUE
		WRITE_ONCE(sroce_task_bh, true);
		return 0;
#else
		return -EOPNOTSUPP;	/* no BH workqueues here */
#endif
	}
	return -EINVAL;
}

static int engine_param_get(char *buf, const struct kernel_param *kp)
{
	return sysfs_emit(buf, "%s\n", READ_ONCE(sroce_task_bh) ? "bh" : "tasklet");
}

static const struct kernel_param_ops engine_param_ops = {
	.set = engine_param_set,
	.get = engine_param_get,
};
module_param_cb(engine, &engine_param_ops, NULL, 0644);
MODULE_PARM_DESC(engine, "run QP engines in a tasklet (tasklet) or a BH work item (bh), for QPs created from then on");

enum {
	SROCE_TASK_RUN,
	SROCE_TASK_AGAIN,
};

static bool sroce_task_is_bh(const struct sroce_task *task)
{
#ifdef SROCE_HAVE_BH_WORKQUEUE
	return task->bh;
#else
	return false;
#endif
}

/**
 * sroce_task_engine_bh() - should a new QP's engines run from BH work items?
 *
 * Return: the module parameter engine is bh (never on kernels without BH
 * workqueues).
 */
bool sroce_task_engine_bh(void)
{
	return READ_ONCE(sroce_task_bh);
}

/**
 * sroce_task_engine_name() - how an engine runs, for rdma resource show
 * @task: the engine
 *
 * Return: "bh" or "tasklet", as the module parameter engine names them.
 */
const char *sroce_task_engine_name(const struct sroce_task *task)
{
	return sroce_task_is_bh(task) ? "bh" : "tasklet";
}

/* Take the engine's RUN bit; a full barrier either way. */
static bool sroce_task_trylock(struct sroce_task *task)
{
#ifdef SROCE_HAVE_BH_WORKQUEUE
	if (task->bh)
		return !test_and_set_bit(SROCE_TASK_RUN, &task->state);
#endif
	return tasklet_trylock(&task->tasklet);
}

/*
 * Let go of the RUN bit. With a work item, a request that found the bit
 * taken (SROCE_TASK_AGAIN) is queued now: see the DOC.
 */
static void sroce_task_unlock(struct sroce_task *task)
{
#ifdef SROCE_HAVE_BH_WORKQUEUE
	if (task->bh) {
		clear_bit_unlock(SROCE_TASK_RUN, &task->state);
		/*
		 * RUN cleared before AGAIN is read, pairs with the work's;
		 * and before sroce_task_stop()'s waiter is looked for.
		 */
		smp_mb__after_atomic();
		wake_up_var(&task->state);
		if (test_and_clear_bit(SROCE_TASK_AGAIN, &task->state))
			sroce_task_sched(task);
		return;
	}
#endif
	tasklet_unlock(&task->tasklet);
}

#ifdef SROCE_HAVE_BH_WORKQUEUE
static void sroce_task_work(struct work_struct *w)
{
	struct sroce_task *task = container_of(w, struct sroce_task, work);
	bool more = false;

	if (!sroce_task_trylock(task)) {
		/* The holder queues the work again when it lets go. */
		set_bit(SROCE_TASK_AGAIN, &task->state);
		/* AGAIN set before RUN is tried; pairs with the unlock's. */
		smp_mb__after_atomic();
		if (!sroce_task_trylock(task))
			return;
	}
	if (!READ_ONCE(task->stopped))
		more = task->fn(task);
	sroce_task_unlock(task);
	if (more)
		sroce_task_sched(task);
}
#endif

static void sroce_task_kicked(struct timer_list *t)
{
	struct sroce_task *task = timer_container_of(task, t, kick);

	sroce_task_sched(task);
}

static void sroce_task_tasklet(struct tasklet_struct *t)
{
	struct sroce_task *task = from_tasklet(task, t, tasklet);

	if (!READ_ONCE(task->stopped) && task->fn(task))
		sroce_task_sched(task);
}

/**
 * sroce_task_init() - set up an engine
 * @task: the engine
 * @fn: its function
 * @bh: run it from a BH work item rather than a tasklet (from
 *	sroce_task_engine_bh(), once for both engines of a QP)
 */
void sroce_task_init(struct sroce_task *task,
		     bool (*fn)(struct sroce_task *task), bool bh)
{
	task->fn = fn;
	spin_lock_init(&task->lock);
	task->stopped = false;
	task->inline_run = false;
	tasklet_setup(&task->tasklet, sroce_task_tasklet);
#ifdef SROCE_HAVE_BH_WORKQUEUE
	INIT_WORK(&task->work, sroce_task_work);
	task->state = 0;
	task->bh = bh;
#endif
	/* Pinned: the engine resumes on the CPU it ran on (see the DOC). */
	timer_setup(&task->kick, sroce_task_kicked, TIMER_PINNED);
}

/**
 * sroce_task_run() - run an engine now, here, if no one else is running it
 * @task: the engine
 *
 * With interrupts disabled (a kernel consumer posting under an irqsave
 * lock, or from a hard interrupt) the engine cannot run here, because
 * bottom halves cannot be re-enabled there: it is scheduled instead; so
 * it is when fault injection asks for it (fault.c). A stopped engine is
 * neither run nor scheduled.
 *
 * Context: any.
 */
void sroce_task_run(struct sroce_task *task)
{
	bool more = false;

	if (in_hardirq() || irqs_disabled() ||
	    !READ_ONCE(sroce_fault_engines_inline)) {
		sroce_task_sched(task);
		return;
	}
	local_bh_disable();
	if (sroce_task_trylock(task)) {
		/* Ordered after the RUN bit: see the DOC above. */
		if (!READ_ONCE(task->stopped)) {
			task->inline_run = true;
			more = task->fn(task);
			task->inline_run = false;
		} else {
			atomic_inc(&sroce_fault_refused_scheds);
		}
		sroce_task_unlock(task);
	} else {
		more = true;	/* the winner may have looked already */
	}
	if (more)
		sroce_task_sched(task);
	local_bh_enable();
}

/**
 * sroce_task_sched() - run an engine soon, in its tasklet or work item
 * @task: the engine; nothing happens if it is stopped
 *
 * Context: any.
 */
void sroce_task_sched(struct sroce_task *task)
{
	unsigned long flags;

	spin_lock_irqsave(&task->lock, flags);
	if (task->stopped)
		atomic_inc(&sroce_fault_refused_scheds);
#ifdef SROCE_HAVE_BH_WORKQUEUE
	else if (task->bh)
		queue_work(system_bh_wq, &task->work);
#endif
	else
		tasklet_schedule(&task->tasklet);
	spin_unlock_irqrestore(&task->lock, flags);
}

/**
 * sroce_task_kick() - run an engine again a tick from now
 * @task: the engine; nothing happens then if it is stopped
 *
 * Context: any.
 */
void sroce_task_kick(struct sroce_task *task)
{
	if (!timer_pending(&task->kick))
		mod_timer(&task->kick, jiffies + 1);
}

/**
 * sroce_task_stop() - stop an engine until sroce_task_start()
 * @task: the engine
 *
 * On return the engine is neither running nor scheduled, nor will a kick
 * schedule it, and requests to run or schedule it are ignored. Only a run
 * of the engine kicks it, so once the run under way is over, the kick
 * timer stays quiet too. An inline runner that saw the mark may still be
 * letting go of the RUN bit and asking, in vain, for another run: the
 * task's memory must outlive such callers (destroy waits for every
 * reference to the QP first).
 *
 * Context: process.
 */
void sroce_task_stop(struct sroce_task *task)
{
	spin_lock_irq(&task->lock);
	task->stopped = true;
	spin_unlock_irq(&task->lock);
	if (sroce_task_is_bh(task)) {
#ifdef SROCE_HAVE_BH_WORKQUEUE
		cancel_work_sync(&task->work);
		/* The mark before the look at the RUN bit: see the DOC. */
		smp_mb();
		wait_var_event(&task->state,
			       !test_bit(SROCE_TASK_RUN, &task->state));
		clear_bit(SROCE_TASK_AGAIN, &task->state);
#endif
	} else {
		tasklet_kill(&task->tasklet);
	}
	timer_delete_sync(&task->kick);
}

/**
 * sroce_task_start() - let a stopped engine run again
 * @task: the engine
 *
 * The engine is not run here; the caller runs or schedules it when it has
 * work.
 */
void sroce_task_start(struct sroce_task *task)
{
	spin_lock_irq(&task->lock);
	task->stopped = false;
	spin_unlock_irq(&task->lock);
}
