// SPDX-License-Identifier: GPL-2.0 OR Linux-OpenIB
/*
 * A device's port MTU and GIDs, its PD, non-blocking event fds, and
 * page-aligned buffers for MRs: each dies with a message on failure.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>

#include "tool.h"

enum ibv_mtu tool_port_mtu(struct ibv_context *ctx, const char *name)
{
	struct ibv_port_attr port;

	if (ibv_query_port(ctx, 1, &port))
		tool_die("%s: ibv_query_port failed", name);
	return port.active_mtu;
}

void tool_query_gid(struct ibv_context *ctx, const char *name, int index,
		    union ibv_gid *gid)
{
	if (ibv_query_gid(ctx, 1, index, gid))
		tool_die("%s: ibv_query_gid %d failed", name, index);
}

void tool_nonblock(int fd, const char *name)
{
	int flags = fcntl(fd, F_GETFL);

	if (fcntl(fd, F_SETFL, flags | O_NONBLOCK))
		tool_die("%s: fcntl: %s", name, strerror(errno));
}

struct ibv_pd *tool_alloc_pd(struct ibv_context *ctx, const char *name)
{
	struct ibv_pd *pd = ibv_alloc_pd(ctx);

	if (!pd)
		tool_die("%s: ibv_alloc_pd: %s", name, strerror(errno));
	return pd;
}

void *tool_alloc(size_t len)
{
	void *p = aligned_alloc(4096, (len + 4095) / 4096 * 4096 ?: 4096);

	if (!p)
		tool_die("out of memory (%zu bytes)", len);
	memset(p, 0, len);
	return p;
}

enum ibv_mtu tool_mtu_min(enum ibv_mtu a, enum ibv_mtu b)
{
	return a < b ? a : b;
}

uint32_t tool_mtu_bytes(enum ibv_mtu mtu)
{
	return 128U << mtu;	/* IBV_MTU_256 is 1 */
}
