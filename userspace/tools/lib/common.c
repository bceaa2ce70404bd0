// SPDX-License-Identifier: GPL-2.0 OR Linux-OpenIB
/*
 * Opening a device by name, IP addresses as GIDs, the names of errnos,
 * events, QP states and types, numbers on the command line, dying.
 */
#define _GNU_SOURCE
#include <arpa/inet.h>
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "tool.h"

void tool_die(const char *fmt, ...)
{
	va_list ap;

	fprintf(stderr, "%s: ", program_invocation_short_name);
	va_start(ap, fmt);
	vfprintf(stderr, fmt, ap);
	va_end(ap);
	fputc('\n', stderr);
	exit(2);
}

struct ibv_context *tool_open_device(const char *name)
{
	struct ibv_device **list;
	struct ibv_context *ctx = NULL;
	int i, n;

	list = ibv_get_device_list(&n);
	if (!list)
		tool_die("ibv_get_device_list: %s", strerror(errno));
	for (i = 0; i < n; i++) {
		if (strcmp(ibv_get_device_name(list[i]), name))
			continue;
		ctx = ibv_open_device(list[i]);
		if (!ctx)
			tool_die("ibv_open_device %s: %s", name, strerror(errno));
		break;
	}
	ibv_free_device_list(list);
	if (!ctx)
		tool_die("no device %s", name);
	return ctx;
}

void tool_ip_to_gid(const char *ip, union ibv_gid *gid)
{
	struct in_addr v4;

	memset(gid, 0, sizeof(*gid));
	if (inet_pton(AF_INET6, ip, gid->raw) == 1)
		return;
	if (inet_pton(AF_INET, ip, &v4) != 1)
		tool_die("not an IP address: %s", ip);
	/* IPv4-mapped IPv6 address, ::ffff:a.b.c.d */
	gid->raw[10] = 0xff;
	gid->raw[11] = 0xff;
	memcpy(&gid->raw[12], &v4, sizeof(v4));
}

const char *tool_errname(int err)
{
	const char *name;

	if (!err)
		return "0";
	name = strerrorname_np(err);
	return name ? name : "E?";
}

const char *tool_event_name(enum ibv_event_type type)
{
	static const char *const names[] = {
		[IBV_EVENT_CQ_ERR] = "CQ_ERR",
		[IBV_EVENT_QP_FATAL] = "QP_FATAL",
		[IBV_EVENT_QP_REQ_ERR] = "QP_REQ_ERR",
		[IBV_EVENT_QP_ACCESS_ERR] = "QP_ACCESS_ERR",
		[IBV_EVENT_COMM_EST] = "COMM_EST",
		[IBV_EVENT_SQ_DRAINED] = "SQ_DRAINED",
		[IBV_EVENT_PATH_MIG] = "PATH_MIG",
		[IBV_EVENT_PATH_MIG_ERR] = "PATH_MIG_ERR",
		[IBV_EVENT_DEVICE_FATAL] = "DEVICE_FATAL",
		[IBV_EVENT_PORT_ACTIVE] = "PORT_ACTIVE",
		[IBV_EVENT_PORT_ERR] = "PORT_ERR",
		[IBV_EVENT_LID_CHANGE] = "LID_CHANGE",
		[IBV_EVENT_PKEY_CHANGE] = "PKEY_CHANGE",
		[IBV_EVENT_SM_CHANGE] = "SM_CHANGE",
		[IBV_EVENT_SRQ_ERR] = "SRQ_ERR",
		[IBV_EVENT_SRQ_LIMIT_REACHED] = "SRQ_LIMIT_REACHED",
		[IBV_EVENT_QP_LAST_WQE_REACHED] = "QP_LAST_WQE_REACHED",
		[IBV_EVENT_CLIENT_REREGISTER] = "CLIENT_REREGISTER",
		[IBV_EVENT_GID_CHANGE] = "GID_CHANGE",
		[IBV_EVENT_WQ_FATAL] = "WQ_FATAL",
	};

	if ((unsigned int)type < ARRAY_SIZE(names) && names[type])
		return names[type];
	return "UNKNOWN";
}

const char *tool_qp_state_name(int state)
{
	static const char *const names[] = {
		[IBV_QPS_RESET] = "RESET", [IBV_QPS_INIT] = "INIT",
		[IBV_QPS_RTR] = "RTR", [IBV_QPS_RTS] = "RTS",
		[IBV_QPS_SQD] = "SQD", [IBV_QPS_SQE] = "SQE",
		[IBV_QPS_ERR] = "ERR",
	};

	if (state >= 0 && (unsigned int)state < ARRAY_SIZE(names) && names[state])
		return names[state];
	return "UNKNOWN";
}

const char *tool_qp_type_name(enum ibv_qp_type type, const char *other)
{
	switch (type) {
	case IBV_QPT_RC:
		return "RC";
	case IBV_QPT_UC:
		return "UC";
	case IBV_QPT_UD:
		return "UD";
	case IBV_QPT_XRC_SEND:
		return "XRC_INI";
	case IBV_QPT_XRC_RECV:
		return "XRC_TGT";
	default:
		return other;
	}
}

unsigned long tool_number(const char *s, unsigned long max)
{
	unsigned long v;
	char *end;

	errno = 0;
	v = strtoul(s, &end, 0);
	if (errno || end == s || *end || v > max)
		tool_die("bad number: %s", s);
	return v;
}
