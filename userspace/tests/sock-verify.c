// SPDX-License-Identifier: GPL-2.0
/*
 * sock-verify: a byte-verified TCP stream through the plain socket API,
 * for running under librspreload (LD_PRELOAD), where every call below
 * becomes an rsocket call.
 *
 *   sock-verify --server PORT            accept one connection, read to
 *                                        end of stream, checking every
 *                                        byte; reply with the count
 *   sock-verify --client IP PORT BYTES   send BYTES of the same pattern
 *                                        in chunks of varied sizes, shut
 *                                        the write side, wait for the
 *                                        server's count
 *
 * The pattern is a function of the stream offset (splitmix64 of the
 * offset / 8 from a fixed seed), so both ends know every byte without
 * sharing a file. The client writes chunks of 1 B to 256 KiB (drawn from
 * a xorshift generator), so that rsocket's 64 KiB
 * transfers and buffer wrap-arounds fall at odd offsets. The server reads
 * with recv() into buffers of varied sizes too.
 *
 * Unlike iperf3, whose server stops counting when the end-of-test message
 * on its control connection overtakes the last data on the data
 * connection, this counts to the end of the stream: every byte sent must
 * arrive, in order, unchanged.
 *
 * Output: the server prints "received N bytes, all verified", the client
 * "sent N bytes, server verified N". Exit status 0 on success, 1 on any
 * error (with the offset of the first wrong byte).
 */
#include <arpa/inet.h>
#include <endian.h>
#include <errno.h>
#include <netinet/in.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#define SEED		0x9e3779b97f4a7c15ULL
#define MAX_CHUNK	(256 * 1024)

static uint64_t xorshift(uint64_t *s)
{
	*s ^= *s << 13;
	*s ^= *s >> 7;
	*s ^= *s << 17;
	return *s;
}

/* The pattern's 8 bytes at offset 8 * idx: splitmix64 of idx. */
static uint64_t pattern_word(uint64_t idx)
{
	uint64_t z = SEED + idx * 0x9e3779b97f4a7c15ULL;

	z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
	z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
	return z ^ (z >> 31);
}

/* pattern_fill - the pattern's LEN bytes from stream offset OFF into P. */
static void pattern_fill(uint8_t *p, uint64_t off, size_t len)
{
	while (len && (off & 7)) {
		*p++ = pattern_word(off >> 3) >> ((off & 7) * 8);
		off++;
		len--;
	}
	for (; len >= 8; p += 8, off += 8, len -= 8) {
		uint64_t w = pattern_word(off >> 3);

		for (int i = 0; i < 8; i++)
			p[i] = w >> (i * 8);
	}
	for (; len; off++, len--)
		*p++ = pattern_word(off >> 3) >> ((off & 7) * 8);
}

static size_t chunk_size(uint64_t *s)
{
	return 1 + xorshift(s) % MAX_CHUNK;
}

static int write_all(int fd, const uint8_t *p, size_t len)
{
	while (len) {
		ssize_t n = write(fd, p, len);

		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0) {
			fprintf(stderr, "write: %s\n", n ? strerror(errno) : "wrote nothing");
			return -1;
		}
		p += n;
		len -= n;
	}
	return 0;
}

static int server(int port)
{
	struct sockaddr_in sin = { .sin_family = AF_INET };
	uint64_t sizes = SEED ^ 1, total = 0, reply;
	static uint8_t buf[MAX_CHUNK], want[MAX_CHUNK];
	int lfd, fd, one = 1;

	sin.sin_port = htons(port);
	sin.sin_addr.s_addr = htonl(INADDR_ANY);
	lfd = socket(AF_INET, SOCK_STREAM, 0);
	if (lfd < 0 || setsockopt(lfd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one)) ||
	    bind(lfd, (struct sockaddr *)&sin, sizeof(sin)) || listen(lfd, 1)) {
		perror("server socket");
		return 1;
	}
	fd = accept(lfd, NULL, NULL);
	if (fd < 0) {
		perror("accept");
		return 1;
	}
	for (;;) {
		ssize_t n = recv(fd, buf, chunk_size(&sizes), 0);

		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0) {
			perror("recv");
			return 1;
		}
		if (!n)
			break;
		pattern_fill(want, total, n);
		if (memcmp(buf, want, n)) {
			ssize_t i = 0;

			while (buf[i] == want[i])
				i++;
			fprintf(stderr, "byte %llu is 0x%02x, expected 0x%02x\n",
				(unsigned long long)(total + i), buf[i], want[i]);
			return 1;
		}
		total += n;
	}
	printf("received %llu bytes, all verified\n", (unsigned long long)total);
	reply = htobe64(total);
	if (write_all(fd, (uint8_t *)&reply, sizeof(reply)))
		return 1;
	close(fd);
	close(lfd);
	return 0;
}

static int client(const char *ip, int port, uint64_t bytes)
{
	struct sockaddr_in sin = { .sin_family = AF_INET };
	uint64_t sizes = SEED ^ 2, sent = 0, reply = 0;
	static uint8_t buf[MAX_CHUNK];
	size_t got = 0;
	int fd;

	sin.sin_port = htons(port);
	if (inet_pton(AF_INET, ip, &sin.sin_addr) != 1) {
		fprintf(stderr, "bad address %s\n", ip);
		return 1;
	}
	fd = socket(AF_INET, SOCK_STREAM, 0);
	if (fd < 0 || connect(fd, (struct sockaddr *)&sin, sizeof(sin))) {
		perror("connect");
		return 1;
	}
	while (sent < bytes) {
		size_t len = chunk_size(&sizes);

		if (len > bytes - sent)
			len = bytes - sent;
		pattern_fill(buf, sent, len);
		if (write_all(fd, buf, len))
			return 1;
		sent += len;
	}
	if (shutdown(fd, SHUT_WR)) {
		perror("shutdown");
		return 1;
	}
	while (got < sizeof(reply)) {
		ssize_t n = recv(fd, (uint8_t *)&reply + got, sizeof(reply) - got, 0);

		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0) {
			fprintf(stderr, "no count from the server (%s)\n",
				n ? strerror(errno) : "end of stream");
			return 1;
		}
		got += n;
	}
	close(fd);
	reply = be64toh(reply);
	printf("sent %llu bytes, server verified %llu\n", (unsigned long long)sent,
	       (unsigned long long)reply);
	return reply == sent ? 0 : 1;
}

/* A number in [1, max], or 0 if ARG is not one. */
static unsigned long long number(const char *arg, unsigned long long max)
{
	unsigned long long v;
	char *end;

	errno = 0;
	v = strtoull(arg, &end, 0);
	if (errno || end == arg || *end || !v || v > max || arg[0] == '-')
		return 0;
	return v;
}

int main(int argc, char **argv)
{
	unsigned long long port = argc >= 3 ? number(argv[argc == 5 ? 3 : 2], 65535) : 0;

	if (argc == 3 && !strcmp(argv[1], "--server") && port)
		return server(port);
	if (argc == 5 && !strcmp(argv[1], "--client") && port) {
		unsigned long long bytes = number(argv[4], ~0ULL);

		if (bytes)
			return client(argv[2], port, bytes);
	}
	fprintf(stderr, "usage: %s --server PORT | --client IP PORT BYTES\n", argv[0]);
	return 1;
}
