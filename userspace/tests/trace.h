/* SPDX-License-Identifier: GPL-2.0 OR Linux-OpenIB */
/* trace.c: the provider's accesses to one ring, in order. */
#ifndef TRACE_H
#define TRACE_H

#include <signal.h>
#include <stdbool.h>
#include <stdint.h>

#include "fake-kernel.h"

#define TRACE_MAX	16384

struct access {
	uint32_t off;		/* from the start of the mapping */
	bool write;
};

extern struct access trace[TRACE_MAX];
extern volatile sig_atomic_t ntrace;

/* Start tracing the provider's mapping of @q; false if not possible. */
bool trace_begin(struct fake_queue *q);
void trace_end(void);

/**
 * struct trace_sum - what one traced post did to the ring
 * @producer_stores: stores to the producer index
 * @entries_first: every store to an entry came before the first of those
 * @flags_after: the flags were read after the first producer store
 * @stray: stores to the header other than the producer index
 */
struct trace_sum {
	int producer_stores;
	bool entries_first;
	bool flags_after;
	bool stray;
};

struct trace_sum trace_summary(void);

#endif /* TRACE_H */
