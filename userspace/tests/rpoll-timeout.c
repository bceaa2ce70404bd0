// SPDX-License-Identifier: GPL-2.0
/*
 * rpoll-timeout: a minimal reproducer of a librdmacm rsocket bug that
 * makes socket programs under librspreload (iperf3) stall.
 *
 *   rpoll-timeout --server PORT      accept one rsocket connection, wait
 *                                    DELAY_MS, send one byte, wait for
 *                                    the peer to close
 *   rpoll-timeout --client IP PORT   connect, then call rpoll(POLLIN)
 *                                    with a TIMEOUT_MS timeout three
 *                                    times while the server is silent
 *
 * With a correct librdmacm, every rpoll() returns 0 after about
 * TIMEOUT_MS. In librdmacm before rdma-core 63, rpoll() returns 0 on
 * timeout without leaving its "poll gate" (the count of threads inside
 * rpoll is not decremented), so the next rpoll() that blocks suspends
 * polling for good: it spins in sched_yield() and ignores its timeout,
 * returning only once data arrives (here, after DELAY_MS), or never.
 * iperf3 times its select() out at every report interval, hence its
 * stall. This program uses nothing of the device but an rsocket
 * connection: it behaves the same on rdma_rxe, sroce or a NIC.
 *
 * Output: one line per rpoll() call, then "rpoll: ok" or "rpoll: timeout
 * ignored". Exit status: 0 if every timeout was honoured and the byte
 * arrived intact, 2 if a timeout was ignored (the bug), 1 on any other
 * error.
 */
#include <arpa/inet.h>
#include <errno.h>
#include <netinet/in.h>
#include <poll.h>
#include <rdma/rsocket.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#define TIMEOUT_MS	200
#define DELAY_MS	3000
#define CALLS		3
#define PAYLOAD		'x'

static long now_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec * 1000L + ts.tv_nsec / 1000000L;
}

static int server(int port)
{
	struct sockaddr_in sin = { .sin_family = AF_INET };
	char c = PAYLOAD;
	int lfd, fd;

	sin.sin_port = htons(port);
	sin.sin_addr.s_addr = htonl(INADDR_ANY);
	lfd = rsocket(AF_INET, SOCK_STREAM, 0);
	if (lfd < 0 || rbind(lfd, (struct sockaddr *)&sin, sizeof(sin)) ||
	    rlisten(lfd, 1)) {
		perror("server: rsocket/rbind/rlisten");
		return 1;
	}
	fd = raccept(lfd, NULL, NULL);
	if (fd < 0) {
		perror("server: raccept");
		return 1;
	}
	usleep(DELAY_MS * 1000);
	if (rsend(fd, &c, 1, 0) != 1) {
		perror("server: rsend");
		return 1;
	}
	/* Wait for the client's close: rrecv returns 0 then. */
	if (rrecv(fd, &c, 1, 0) < 0) {
		perror("server: rrecv");
		return 1;
	}
	rclose(fd);
	rclose(lfd);
	return 0;
}

static int client(const char *ip, int port)
{
	struct sockaddr_in sin = { .sin_family = AF_INET };
	struct pollfd pfd;
	int fd, i, n, ignored = 0;
	long start, took;
	char c = 0;

	sin.sin_port = htons(port);
	if (inet_pton(AF_INET, ip, &sin.sin_addr) != 1) {
		fprintf(stderr, "client: bad address %s\n", ip);
		return 1;
	}
	fd = rsocket(AF_INET, SOCK_STREAM, 0);
	if (fd < 0 || rconnect(fd, (struct sockaddr *)&sin, sizeof(sin))) {
		perror("client: rsocket/rconnect");
		return 1;
	}
	for (i = 0; i < CALLS; i++) {
		pfd.fd = fd;
		pfd.events = POLLIN;
		pfd.revents = 0;
		start = now_ms();
		n = rpoll(&pfd, 1, TIMEOUT_MS);
		took = now_ms() - start;
		printf("rpoll(POLLIN, %d ms) #%d returned %d after %ld ms\n",
		       TIMEOUT_MS, i + 1, n, took);
		if (n < 0) {
			perror("client: rpoll");
			return 1;
		}
		/* Returning only with the server's late byte is the bug. */
		if (n > 0 || took > DELAY_MS / 2) {
			ignored = 1;
			break;
		}
	}
	if (rrecv(fd, &c, 1, 0) != 1 || c != PAYLOAD) {
		fprintf(stderr, "client: expected '%c', received 0x%02x\n",
			PAYLOAD, (unsigned char)c);
		return 1;
	}
	rclose(fd);
	printf("rpoll: %s\n", ignored ? "timeout ignored" : "ok");
	return ignored ? 2 : 0;
}

int main(int argc, char **argv)
{
	if (argc == 3 && !strcmp(argv[1], "--server"))
		return server(atoi(argv[2]));
	if (argc == 4 && !strcmp(argv[1], "--client"))
		return client(argv[2], atoi(argv[3]));
	fprintf(stderr, "usage: %s --server PORT | --client IP PORT\n",
		argv[0]);
	return 1;
}
