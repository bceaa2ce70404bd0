// SPDX-License-Identifier: GPL-2.0 OR Linux-OpenIB
/*
 * The monotonic clock in ns, us, ms and seconds, sleeping, and a seed
 * taken from the clock.
 */
#define _GNU_SOURCE
#include <time.h>
#include <unistd.h>

#include "tool.h"

uint64_t tool_now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec * 1000000000ULL + ts.tv_nsec;
}

uint64_t tool_now_us(void)
{
	return tool_now_ns() / 1000;
}

uint64_t tool_now_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec * 1000ULL + ts.tv_nsec / 1000000;
}

double tool_now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec + ts.tv_nsec / 1e9;
}

void tool_sleep_us(unsigned int us)
{
	struct timespec ts = { us / 1000000, (us % 1000000) * 1000L };

	nanosleep(&ts, NULL);
}

void tool_sleep_ms(unsigned int ms)
{
	struct timespec ts = { ms / 1000, (ms % 1000) * 1000000L };

	nanosleep(&ts, NULL);
}

uint64_t tool_clock_seed(void)
{
	return tool_now_ms() ^ ((uint64_t)getpid() << 32);
}
