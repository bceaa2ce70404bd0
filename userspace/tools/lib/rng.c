// SPDX-License-Identifier: GPL-2.0 OR Linux-OpenIB
/*
 * splitmix64: small, fast, and every seed gives a good stream. A stream
 * is one uint64_t; the tools keep as many as they need.
 */
#include <stdint.h>

#include "tool.h"

uint64_t tool_rng_next(uint64_t *s)
{
	uint64_t z = (*s += 0x9e3779b97f4a7c15ULL);

	z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
	z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
	return z ^ (z >> 31);
}

uint32_t tool_rng_mod(uint64_t *s, uint32_t n)
{
	return n ? tool_rng_next(s) % n : 0;
}

uint32_t tool_rng_below(uint64_t *s, uint32_t n)
{
	return (uint32_t)(((tool_rng_next(s) >> 32) * n) >> 32);
}

void tool_rng_fill(uint64_t *s, void *buf, size_t len)
{
	uint8_t *p = buf;
	uint64_t v = 0;
	size_t i;

	for (i = 0; i < len; i++) {
		if (!(i % 8))
			v = tool_rng_next(s);
		p[i] = v >> (8 * (i % 8));
	}
}
