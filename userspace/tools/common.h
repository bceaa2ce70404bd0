/* SPDX-License-Identifier: GPL-2.0 OR Linux-OpenIB */
/*
 * Helpers shared by the sroce test tools: opening a device by name,
 * turning an IP address into a RoCE GID, naming errnos and events.
 */
#ifndef SROCE_TOOLS_COMMON_H
#define SROCE_TOOLS_COMMON_H

#include <infiniband/verbs.h>

#ifndef ARRAY_SIZE
#define ARRAY_SIZE(a) (sizeof(a) / sizeof((a)[0]))
#endif

/* Open device @name or exit with a message. */
struct ibv_context *tool_open_device(const char *name);

/* Parse an IPv4 or IPv6 address into a RoCE GID; exit on error. */
void tool_ip_to_gid(const char *ip, union ibv_gid *gid);

/* "0" for 0, else the errno's name ("EINVAL"). */
const char *tool_errname(int err);

/* The name of an asynchronous event without its IBV_EVENT_ prefix. */
const char *tool_event_name(enum ibv_event_type type);

/* Parse a non-negative number or exit. */
unsigned long tool_number(const char *s, unsigned long max);

/* Print a message with the program's name and exit with status 2. */
void tool_die(const char *fmt, ...) __attribute__((format(printf, 1, 2), noreturn));

#endif /* SROCE_TOOLS_COMMON_H */
