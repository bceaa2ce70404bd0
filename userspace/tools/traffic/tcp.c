// SPDX-License-Identifier: GPL-2.0 OR Linux-OpenIB
/*
 * The TCP connection: connecting or accepting, messages (hello, info,
 * credits, tallies, verdicts) and serving what the peer sends.
 */
#include "traffic.h"

/* TCP: setup exchange, credits, tallies */

static void write_all(const void *buf, size_t len)
{
	ssize_t r;

	while (len) {
		r = write(c.sock, buf, len);
		if (r < 0 && errno == EINTR)
			continue;
		if (r <= 0)
			fatal("TCP write to the peer: %s", strerror(errno));
		buf = (const char *)buf + r;
		len -= r;
	}
}

static void read_all(void *buf, size_t len)
{
	struct pollfd pfd = { .fd = c.sock, .events = POLLIN };
	ssize_t r;
	int ms;

	while (len) {
		ms = (int)((c.deadline - tool_now()) * 1000);
		if (ms <= 0 || !poll(&pfd, 1, ms))
			fatal("timed out after %us waiting for the peer", opt.timeout);
		r = read(c.sock, buf, len);
		if (r < 0 && (errno == EINTR || errno == EAGAIN))
			continue;
		if (r < 0)
			fatal("TCP read from the peer: %s", strerror(errno));
		if (!r)
			fatal("the peer closed the connection");
		buf = (char *)buf + r;
		len -= r;
	}
}

void send_msg(uint64_t type, const uint64_t *w, uint32_t n)
{
	uint64_t buf[2 + MSG_WORDS];
	uint32_t i;

	buf[0] = htobe64(type);
	buf[1] = htobe64(n);
	for (i = 0; i < n; i++)
		buf[2 + i] = htobe64(w[i]);
	write_all(buf, (2 + n) * sizeof(uint64_t));
}

/* Read one message into @w; return its type. */
uint64_t recv_msg(uint64_t *w, uint32_t *n)
{
	uint64_t hdr[2];
	uint32_t i;

	read_all(hdr, sizeof(hdr));
	*n = be64toh(hdr[1]);
	if (*n > MSG_WORDS)
		fatal("protocol: a message of %u words", *n);
	read_all(w, *n * sizeof(uint64_t));
	for (i = 0; i < *n; i++)
		w[i] = be64toh(w[i]);
	return be64toh(hdr[0]);
}

void expect_msg(uint64_t type, uint64_t *w, uint32_t n)
{
	uint32_t got_n;
	uint64_t got = recv_msg(w, &got_n);

	if (got != type || got_n < n)
		fatal("protocol: got message %llu (%u words), expected %llu (%u)",
		      (unsigned long long)got, got_n, (unsigned long long)type, n);
}

void handle_msg(uint64_t type, const uint64_t *w, uint32_t n)
{
	uint32_t q, k;

	switch (type) {
	case M_CREDIT:
		if (n < 2 || w[0] >= c.p.qps)
			fatal("protocol: bad credit message");
		c.qp[w[0]].rlimit = max32(c.qp[w[0]].rlimit, w[1]);
		break;
	case M_TXDONE:
		if (n < c.p.qps * K_NR + K_NR)
			fatal("protocol: short tally message");
		for (q = 0; q < c.p.qps; q++)
			for (k = 0; k < K_NR; k++)
				c.peer_count[q][k] = w[q * K_NR + k];
		for (k = 0; k < K_NR; k++)
			c.peer_bytes[k] = w[c.p.qps * K_NR + k];
		c.peer_tx_done = true;
		c.peer_tx_done_at = tool_now();
		break;
	case M_VERDICT:
		c.peer_mismatches = n ? w[0] : 1;
		c.peer_verdict = true;
		break;
	default:
		fatal("protocol: unexpected message %llu", (unsigned long long)type);
	}
}

/* Handle whatever the peer sent, without blocking for a new message. */
int service_tcp(void)
{
	struct pollfd pfd = { .fd = c.sock, .events = POLLIN };
	uint64_t w[MSG_WORDS];
	uint32_t n;
	uint64_t type;
	int handled = 0;

	/* After its verdict the peer sends nothing more, and may be gone. */
	while (!c.peer_verdict && poll(&pfd, 1, 0) > 0) {
		type = recv_msg(w, &n);
		handle_msg(type, w, n);
		handled++;
	}
	return handled;
}

int tcp_connect(void)
{
	struct addrinfo hints = { .ai_socktype = SOCK_STREAM }, *res, *ai;
	int fd, err;

	err = getaddrinfo(opt.host, opt.port, &hints, &res);
	if (err)
		tool_die("%s: %s", opt.host, gai_strerror(err));
	for (;;) {
		for (ai = res; ai; ai = ai->ai_next) {
			fd = socket(ai->ai_family, ai->ai_socktype, ai->ai_protocol);
			if (fd < 0)
				continue;
			if (!connect(fd, ai->ai_addr, ai->ai_addrlen)) {
				freeaddrinfo(res);
				return fd;
			}
			close(fd);
		}
		/* The server may not listen yet: retry until the timeout. */
		if (tool_now() > c.deadline)
			fatal("cannot connect to %s port %s: %s", opt.host, opt.port,
			      strerror(errno));
		tool_sleep_ms(100);
	}
}

int tcp_accept(void)
{
	struct sockaddr_in6 sa = { .sin6_family = AF_INET6, .sin6_addr = IN6ADDR_ANY_INIT };
	struct pollfd pfd = { .events = POLLIN };
	int fd, one = 1, zero = 0, ms;

	sa.sin6_port = htons(tool_number(opt.port, 65535));
	fd = socket(AF_INET6, SOCK_STREAM, 0);
	if (fd < 0)
		tool_die("socket: %s", strerror(errno));
	setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one));
	setsockopt(fd, IPPROTO_IPV6, IPV6_V6ONLY, &zero, sizeof(zero));
	if (bind(fd, (struct sockaddr *)&sa, sizeof(sa)) || listen(fd, 1))
		tool_die("listen on port %s: %s", opt.port, strerror(errno));
	say("listening on port %s", opt.port);
	pfd.fd = fd;
	ms = (int)((c.deadline - tool_now()) * 1000);
	if (ms <= 0 || poll(&pfd, 1, ms) <= 0)
		fatal("no client within %us", opt.timeout);
	c.sock = accept(fd, NULL, NULL);
	if (c.sock < 0)
		tool_die("accept: %s", strerror(errno));
	close(fd);
	return c.sock;
}
