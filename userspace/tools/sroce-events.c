// SPDX-License-Identifier: GPL-2.0 OR Linux-OpenIB
/*
 * sroce-events: print a device's asynchronous events as they arrive.
 *
 *   sroce-events -d DEV [-n COUNT] [-t SECONDS]
 *
 * Opens DEV, prints "ready" once the context exists (events raised from
 * then on are seen), then one line per event, "EVENT port N" for port
 * events and "EVENT" for the others, until COUNT events (default 2) were
 * printed: exit 0. Exit 1 if SECONDS (default 30) pass first.
 */
#include <errno.h>
#include <poll.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "tool.h"

static void print_event(const struct ibv_async_event *ev)
{
	switch (ev->event_type) {
	case IBV_EVENT_PORT_ACTIVE:
	case IBV_EVENT_PORT_ERR:
	case IBV_EVENT_LID_CHANGE:
	case IBV_EVENT_PKEY_CHANGE:
	case IBV_EVENT_GID_CHANGE:
	case IBV_EVENT_SM_CHANGE:
	case IBV_EVENT_CLIENT_REREGISTER:
		printf("%s port %d\n", tool_event_name(ev->event_type),
		       ev->element.port_num);
		break;
	default:
		printf("%s\n", tool_event_name(ev->event_type));
		break;
	}
	fflush(stdout);
}

static void usage(int status)
{
	(void)status;
	tool_die("usage: sroce-events -d DEV [-n COUNT] [-t SECONDS]");
}

int main(int argc, char **argv)
{
	unsigned long count = 2, secs = 30, seen = 0;
	const char *dev = NULL;
	struct ibv_context *ctx;
	struct ibv_async_event ev;
	struct pollfd pfd;
	long deadline;
	int ret;
	const struct tool_opt opts[] = {
		TOOL_STR('d', NULL, &dev),
		TOOL_NUM('n', NULL, ULONG, &count, 1000),
		TOOL_NUM('t', NULL, ULONG, &secs, 86400),
	};

	tool_getopt(argc, argv, opts, ARRAY_SIZE(opts), usage);
	if (!dev)
		usage(2);

	ctx = tool_open_device(dev);
	pfd.fd = ctx->async_fd;
	pfd.events = POLLIN;
	printf("ready\n");
	fflush(stdout);

	deadline = (long)tool_now_ms() + secs * 1000;
	while (seen < count) {
		long left = deadline - (long)tool_now_ms();

		if (left <= 0) {
			printf("timeout after %lu events\n", seen);
			return 1;
		}
		ret = poll(&pfd, 1, left);
		if (ret < 0 && errno != EINTR)
			tool_die("poll: %s", strerror(errno));
		if (ret <= 0)
			continue;
		if (ibv_get_async_event(ctx, &ev))
			tool_die("ibv_get_async_event: %s", strerror(errno));
		print_event(&ev);
		ibv_ack_async_event(&ev);
		seen++;
	}
	ibv_close_device(ctx);
	return 0;
}
