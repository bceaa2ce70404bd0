// SPDX-License-Identifier: GPL-2.0 OR Linux-OpenIB
/*
 * Trace every access the provider makes to one ring, in order.
 *
 * The provider's mapping of the ring is made PROT_NONE. Each access faults;
 * the SIGSEGV handler records the offset and whether it was a store (the
 * page fault error code), opens the mapping and sets the trap flag, so
 * that the access completes and SIGTRAP follows right after it, where the
 * mapping is closed again. Vector stores are recorded once per
 * instruction, at their first byte. x86-64 only; elsewhere trace_begin()
 * reports that it cannot trace.
 */
#define _GNU_SOURCE
#include <signal.h>
#include <stdbool.h>
#include <stdint.h>
#include <sys/mman.h>

#include "fake-kernel.h"
#include "trace.h"

#define OFF_PRODUCER	offsetof(struct sroce_queue_hdr, producer)
#define OFF_FLAGS	offsetof(struct sroce_queue_hdr, flags)

struct access trace[TRACE_MAX];
volatile sig_atomic_t ntrace;
static uint8_t *trace_base;
static size_t trace_len;
static volatile sig_atomic_t tracing;

#if defined(__x86_64__)
#include <sys/ucontext.h>

#define EFLAGS_TF	0x100
#define PF_WRITE	0x2

/* Record the access, let the instruction through, trap right after it. */
static void trace_fault(int sig, siginfo_t *si, void *ucv)
{
	ucontext_t *uc = ucv;
	uint8_t *addr = si->si_addr;

	if (!tracing || addr < trace_base || addr >= trace_base + trace_len) {
		signal(SIGSEGV, SIG_DFL);	/* a real crash */
		return;
	}
	if (ntrace < TRACE_MAX) {
		trace[ntrace].off = addr - trace_base;
		trace[ntrace].write = uc->uc_mcontext.gregs[REG_ERR] & PF_WRITE;
		ntrace++;
	}
	mprotect(trace_base, trace_len, PROT_READ | PROT_WRITE);
	uc->uc_mcontext.gregs[REG_EFL] |= EFLAGS_TF;
}

static void trace_step(int sig, siginfo_t *si, void *ucv)
{
	ucontext_t *uc = ucv;

	uc->uc_mcontext.gregs[REG_EFL] &= ~EFLAGS_TF;
	if (tracing)
		mprotect(trace_base, trace_len, PROT_NONE);
}

bool trace_begin(struct fake_queue *q)
{
	struct sigaction sa = { .sa_flags = SA_SIGINFO };

	trace_base = queue_alias(q - queues);
	trace_len = q->size;
	if (!trace_base)
		return false;
	sa.sa_sigaction = trace_fault;
	sigaction(SIGSEGV, &sa, NULL);
	sa.sa_sigaction = trace_step;
	sigaction(SIGTRAP, &sa, NULL);
	ntrace = 0;
	tracing = 1;
	return !mprotect(trace_base, trace_len, PROT_NONE);
}

void trace_end(void)
{
	tracing = 0;
	mprotect(trace_base, trace_len, PROT_READ | PROT_WRITE);
	signal(SIGSEGV, SIG_DFL);
	signal(SIGTRAP, SIG_DFL);
}
#else
bool trace_begin(struct fake_queue *q)
{
	return false;
}

void trace_end(void)
{
}
#endif

struct trace_sum trace_summary(void)
{
	struct trace_sum t = { .entries_first = true };
	int i, first = -1;

	for (i = 0; i < ntrace; i++) {
		uint32_t off = trace[i].off;

		if (trace[i].write && off - OFF_PRODUCER < 4) {
			t.producer_stores++;
			if (first < 0)
				first = i;
		} else if (trace[i].write && off >= SROCE_QUEUE_DATA_OFFSET) {
			if (first >= 0)
				t.entries_first = false;
		} else if (trace[i].write) {
			t.stray = true;
		} else if (off >= OFF_FLAGS && off < OFF_FLAGS + 4 && first >= 0) {
			t.flags_after = true;
		}
	}
	return t;
}
