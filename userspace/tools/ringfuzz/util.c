// SPDX-License-Identifier: GPL-2.0 OR Linux-OpenIB
/*
 * Small helpers (decisions, failures, names) and the watchdog: the parent
 * watches the heartbeat the worker writes, on another CPU.
 */
#include "ringfuzz.h"

uint32_t rnd(uint32_t n)
{
	return tool_rng_mod(&R, n);
}

bool chance(unsigned int percent)
{
	return rnd(100) < percent;
}

void fail(const char *fmt, ...)
{
	va_list ap;

	rep.failures++;
	printf("FAIL: %s: ", rep.cur);
	va_start(ap, fmt);
	vprintf(fmt, ap);
	va_end(ap);
	putchar('\n');
}

void info(const char *fmt, ...)
{
	va_list ap;

	printf("%s: ", rep.cur);
	va_start(ap, fmt);
	vprintf(fmt, ap);
	va_end(ap);
	putchar('\n');
}

const char *type_name(enum ibv_qp_type t)
{
	return tool_qp_type_name(t, "?");
}

/* The watchdog: the parent watches a heartbeat the worker writes. */

void beat(const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(prog->what, sizeof(prog->what), fmt, ap);
	va_end(ap);
	__atomic_store_n(&prog->beat, tool_now_ms(), __ATOMIC_RELEASE);
	if (verbose && !strstr(prog->what, "polling"))
		printf("  %s\n", prog->what);
}

void alive(void)
{
	__atomic_store_n(&prog->beat, tool_now_ms(), __ATOMIC_RELEASE);
}

/*
 * With two CPUs or more, the watchdog and the worker run on different
 * ones: a worker stuck in the kernel with preemption off (the known
 * defect loops in the doorbell with bottom halves disabled) must not
 * keep its watchdog from running.
 */
void pin(bool watchdog)
{
	long n = sysconf(_SC_NPROCESSORS_ONLN);
	cpu_set_t set;

	if (n < 2)
		return;
	CPU_ZERO(&set);
	CPU_SET(watchdog ? 0 : n - 1, &set);
	sched_setaffinity(0, sizeof(set), &set);
}

/*
 * Wait for the worker. If its heartbeat stops for stall_s seconds, say
 * what it was doing, kill it and return 1 without waiting for it: a
 * worker stuck in the kernel cannot die.
 */
int watch(pid_t pid)
{
	int status;
	uint64_t last;

	for (;;) {
		pid_t r = waitpid(pid, &status, WNOHANG);

		if (r == pid) {
			if (WIFEXITED(status))
				return WEXITSTATUS(status);
			printf("sroce-ringfuzz: FAIL: the worker died of signal %d"
			       " while: %s\n", WTERMSIG(status), prog->what);
			return 1;
		}
		last = __atomic_load_n(&prog->beat, __ATOMIC_ACQUIRE);
		if (tool_now_ms() - last > stall_s * 1000ULL) {
			printf("sroce-ringfuzz: FAIL: no progress for %u s while: %s\n",
			       stall_s, prog->what);
			fflush(stdout);
			fprintf(stderr, "sroce-ringfuzz: FAIL: no progress for %u s "
				"while: %s\n", stall_s, prog->what);
			kill(pid, SIGKILL);
			return 1;
		}
		tool_sleep_us(100000);
	}
}
