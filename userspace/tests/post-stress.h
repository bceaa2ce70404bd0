/* SPDX-License-Identifier: GPL-2.0 OR Linux-OpenIB */
/* post-stress.c: the provider's rings under concurrency, and a benchmark. */
#ifndef POST_STRESS_H
#define POST_STRESS_H

#include <infiniband/verbs.h>

void test_post_stress(struct ibv_context *ctx);
void bench_post(struct ibv_context *ctx);

#endif /* POST_STRESS_H */
