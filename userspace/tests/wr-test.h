/* SPDX-License-Identifier: GPL-2.0 OR Linux-OpenIB */
/* wr-test.c: the extended send API against the fake kernel. */
#ifndef WR_TEST_H
#define WR_TEST_H

#include <infiniband/verbs.h>

void test_wr(struct ibv_context *ctx);

#endif /* WR_TEST_H */
