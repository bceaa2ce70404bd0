// SPDX-License-Identifier: GPL-2.0 OR Linux-OpenIB
/*
 * ucp-test: byte-checked UCX (UCP) traffic between two processes, for
 * tests/64-ucx.sh.
 *
 *   ucp-test --server [-p PORT]
 *   ucp-test --client HOST [-p PORT]
 *
 * The two exchange their UCP worker addresses over TCP (PORT, default
 * 18520), connect an endpoint each way, and then:
 *
 *   tag     the client sends messages of 1 B to 4 MiB (eager and
 *           rendezvous), the server checks each and sends it back, the
 *           client checks the echo
 *   stream  the client streams the same sizes, the server receives each
 *           whole (UCP_STREAM_RECV_FLAG_WAITALL) and checks it
 *   rma     the server maps 4 MiB and sends its address and packed rkey;
 *           the client GETs it (the server's pattern) and checks it, then
 *           PUTs its own pattern, flushes and says so over TCP; the server
 *           checks its memory
 *
 * Every message has its own pattern (size and sequence number in it), so
 * a message delivered twice, late, or into the wrong buffer fails too.
 * Which transports and devices UCX uses is UCX's choice, steered by the
 * environment (UCX_TLS, UCX_NET_DEVICES) the caller sets.
 *
 * Prints "ok:" and "FAIL:" lines and "N passed, N failed"; exits 1 if a
 * check failed (at once if a UCP operation did: the peer then waits for
 * what will not come, until the caller's timeout), 2 if setup did.
 */
#include <arpa/inet.h>
#include <errno.h>
#include <getopt.h>
#include <netdb.h>
#include <poll.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include <ucp/api/ucp.h>

#include "check.h"

#define MAX_SIZE	(4u << 20)

static const size_t sizes[] = {
	1, 7, 64, 1000, 4096, 8193, 65536, 300000, 1u << 20, MAX_SIZE,
};
#define NUM_SIZES	(sizeof(sizes) / sizeof(sizes[0]))

static int sock = -1;
static ucp_context_h ctx;
static ucp_worker_h worker;
static ucp_ep_h ep;

static void die(const char *fmt, ...)
{
	va_list ap;

	fprintf(stderr, "ucp-test: ");
	va_start(ap, fmt);
	vfprintf(stderr, fmt, ap);
	va_end(ap);
	fputc('\n', stderr);
	exit(2);
}

/* End at the first failed operation: the peer would wait for ever. */
static void give_up(void)
{
	printf("%d passed, %d failed\n", passed, failed);
	exit(1);
}

/* TCP, for what UCP cannot carry before it is connected. */

static void tcp_write(const void *buf, size_t len)
{
	const uint8_t *p = buf;
	ssize_t n;

	while (len) {
		n = write(sock, p, len);
		if (n <= 0)
			die("TCP write: %s", n ? strerror(errno) : "closed");
		p += n;
		len -= n;
	}
}

/*
 * Read from the peer; meanwhile keep the UCP worker going: over a
 * transport without one-sided operations (UD, TCP) the peer's GET and PUT
 * are carried out by this side's progress.
 */
static void tcp_read(void *buf, size_t len)
{
	struct pollfd pfd = { .fd = sock, .events = POLLIN };
	uint8_t *p = buf;
	ssize_t n;

	while (len) {
		if (worker) {
			ucp_worker_progress(worker);
			if (poll(&pfd, 1, 0) == 0)
				continue;
		}
		n = read(sock, p, len);
		if (n <= 0)
			die("TCP read: %s", n ? strerror(errno) : "peer closed");
		p += n;
		len -= n;
	}
}

/* A blob: its 64-bit length, then its bytes. */
static void blob_send(const void *buf, uint64_t len)
{
	tcp_write(&len, sizeof(len));
	tcp_write(buf, len);
}

static void *blob_recv(uint64_t *len)
{
	void *buf;

	tcp_read(len, sizeof(*len));
	if (*len > (1u << 20))
		die("TCP: a blob of %llu bytes", (unsigned long long)*len);
	buf = malloc(*len ? *len : 1);
	if (!buf)
		die("out of memory");
	tcp_read(buf, *len);
	return buf;
}

static void sync_peer(void)
{
	char c = 's';

	tcp_write(&c, 1);
	tcp_read(&c, 1);
	if (c != 's')
		die("TCP: out of step");
}

static void tcp_connect(const char *host, const char *port)
{
	struct addrinfo hints = { .ai_socktype = SOCK_STREAM }, *res, *ai;
	int err, tries;

	err = getaddrinfo(host, port, &hints, &res);
	if (err)
		die("%s: %s", host, gai_strerror(err));
	for (tries = 0; tries < 100 && sock < 0; tries++) {
		for (ai = res; ai; ai = ai->ai_next) {
			sock = socket(ai->ai_family, ai->ai_socktype, 0);
			if (sock < 0)
				continue;
			if (!connect(sock, ai->ai_addr, ai->ai_addrlen))
				break;
			close(sock);
			sock = -1;
		}
		if (sock < 0)
			usleep(100000);
	}
	freeaddrinfo(res);
	if (sock < 0)
		die("cannot connect to %s port %s", host, port);
}

static void tcp_accept(const char *port)
{
	struct sockaddr_in6 sa = {
		.sin6_family = AF_INET6,
		.sin6_addr = IN6ADDR_ANY_INIT,
		.sin6_port = htons(atoi(port)),
	};
	int fd, one = 1;

	fd = socket(AF_INET6, SOCK_STREAM, 0);
	if (fd < 0 ||
	    setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one)) ||
	    bind(fd, (struct sockaddr *)&sa, sizeof(sa)) || listen(fd, 1))
		die("listen on port %s: %s", port, strerror(errno));
	printf("listening on port %s\n", port);
	fflush(stdout);
	sock = accept(fd, NULL, NULL);
	if (sock < 0)
		die("accept: %s", strerror(errno));
	close(fd);
}

/* UCP */

/* Progress until @req is done; free it. A NULL request was done at once. */
static ucs_status_t req_wait(void *req)
{
	ucs_status_t st;

	if (!req)
		return UCS_OK;
	if (UCS_PTR_IS_ERR(req))
		return UCS_PTR_STATUS(req);
	do {
		ucp_worker_progress(worker);
		st = ucp_request_check_status(req);
	} while (st == UCS_INPROGRESS);
	ucp_request_free(req);
	return st;
}

static void must(ucs_status_t st, const char *what)
{
	if (st != UCS_OK)
		die("%s: %s", what, ucs_status_string(st));
}

static void ucp_setup(void)
{
	ucp_params_t params = {
		.field_mask = UCP_PARAM_FIELD_FEATURES,
		.features = UCP_FEATURE_TAG | UCP_FEATURE_STREAM |
			    UCP_FEATURE_RMA,
	};
	ucp_worker_params_t wparams = {
		.field_mask = UCP_WORKER_PARAM_FIELD_THREAD_MODE,
		.thread_mode = UCS_THREAD_MODE_SINGLE,
	};
	ucp_ep_params_t eparams = {
		.field_mask = UCP_EP_PARAM_FIELD_REMOTE_ADDRESS,
	};
	ucp_address_t *addr;
	size_t addr_len;
	uint64_t peer_len;
	void *peer;

	must(ucp_init(&params, NULL, &ctx), "ucp_init");
	must(ucp_worker_create(ctx, &wparams, &worker), "ucp_worker_create");
	must(ucp_worker_get_address(worker, &addr, &addr_len),
	     "ucp_worker_get_address");
	blob_send(addr, addr_len);
	ucp_worker_release_address(worker, addr);
	peer = blob_recv(&peer_len);
	eparams.address = peer;
	must(ucp_ep_create(worker, &eparams, &ep), "ucp_ep_create");
	free(peer);
	if (getenv("UCP_TEST_PRINT_EP"))
		ucp_ep_print_info(ep, stdout);
}

static void ucp_teardown(void)
{
	ucp_request_param_t p = {
		.op_attr_mask = UCP_OP_ATTR_FIELD_FLAGS,
		.flags = UCP_EP_CLOSE_FLAG_FORCE,
	};

	/* Both are done with the other before either closes. */
	sync_peer();
	req_wait(ucp_ep_close_nbx(ep, &p));
	ucp_worker_destroy(worker);
	ucp_cleanup(ctx);
}

static ucs_status_t tag_send(const void *buf, size_t len, ucp_tag_t tag)
{
	ucp_request_param_t p = { 0 };

	return req_wait(ucp_tag_send_nbx(ep, buf, len, tag, &p));
}

/* Receive the message with @tag; its length into *@len. */
static ucs_status_t tag_recv(void *buf, size_t cap, ucp_tag_t tag, size_t *len)
{
	ucp_tag_recv_info_t info = { 0 };
	/* Always a request, whose test gives the length. */
	ucp_request_param_t p = {
		.op_attr_mask = UCP_OP_ATTR_FLAG_NO_IMM_CMPL,
	};
	ucs_status_t st;
	void *req;

	*len = 0;
	req = ucp_tag_recv_nbx(worker, buf, cap, tag, (ucp_tag_t)-1, &p);
	if (UCS_PTR_IS_ERR(req))
		return UCS_PTR_STATUS(req);
	do {
		ucp_worker_progress(worker);
		st = ucp_tag_recv_request_test(req, &info);
	} while (st == UCS_INPROGRESS);
	ucp_request_free(req);
	*len = info.length;
	return st;
}

/* Operation @what of message @i went well, or the run is over. */
static void op_ok(ucs_status_t st, const char *what, unsigned int i)
{
	if (st == UCS_OK)
		return;
	check(false, "%s %u: %s", what, i, ucs_status_string(st));
	give_up();
}

/* Receive message @i (sizes[@i] bytes) with @tag into @buf and check it. */
static void tag_recv_check(uint8_t *buf, ucp_tag_t tag, unsigned int i,
			   const char *what)
{
	ucs_status_t st;
	size_t len;

	memset(buf, 0, sizes[i]);
	st = tag_recv(buf, MAX_SIZE, tag, &len);
	if (st != UCS_OK || len != sizes[i]) {
		check(false, "%s %u: %s, %zu bytes (expected %zu)", what, i,
		      ucs_status_string(st), len, sizes[i]);
		give_up();
	}
	check_buf(buf, len, i, what);
}

static void tag_test(bool server, uint8_t *buf)
{
	unsigned int i;

	for (i = 0; i < NUM_SIZES; i++) {
		if (server) {
			tag_recv_check(buf, 100 + i, i, "tag message received");
			op_ok(tag_send(buf, sizes[i], 200 + i), "tag echo", i);
		} else {
			fill(buf, sizes[i], i);
			op_ok(tag_send(buf, sizes[i], 100 + i), "tag send", i);
			tag_recv_check(buf, 200 + i, i, "tag echo received");
		}
	}
}

static void stream_test(bool server, uint8_t *buf)
{
	ucp_request_param_t p = {
		.op_attr_mask = UCP_OP_ATTR_FIELD_FLAGS,
		.flags = UCP_STREAM_RECV_FLAG_WAITALL,
	};
	ucs_status_t st;
	unsigned int i;
	size_t len;
	void *req;

	for (i = 0; i < NUM_SIZES; i++) {
		if (!server) {
			ucp_request_param_t sp = { 0 };

			fill(buf, sizes[i], 1000 + i);
			op_ok(req_wait(ucp_stream_send_nbx(ep, buf, sizes[i], &sp)),
			      "stream send", i);
			continue;
		}
		memset(buf, 0, sizes[i]);
		len = 0;
		req = ucp_stream_recv_nbx(ep, buf, sizes[i], &len, &p);
		if (req && !UCS_PTR_IS_ERR(req)) {
			do {
				ucp_worker_progress(worker);
				st = ucp_stream_recv_request_test(req, &len);
			} while (st == UCS_INPROGRESS);
			ucp_request_free(req);
		} else {
			st = UCS_PTR_STATUS(req);
		}
		if (st != UCS_OK || len != sizes[i]) {
			check(false, "stream receive %u: %s, %zu bytes (expected %zu)",
			      i, ucs_status_string(st), len, sizes[i]);
			give_up();
		}
		check_buf(buf, len, 1000 + i, "stream received");
	}
}

static void rma_test(bool server, uint8_t *buf)
{
	ucp_request_param_t p = { 0 };
	uint64_t raddr, rlen;
	ucp_rkey_h rkey;
	ucs_status_t st;
	void *packed;
	size_t plen;

	if (server) {
		ucp_mem_map_params_t mp = {
			.field_mask = UCP_MEM_MAP_PARAM_FIELD_ADDRESS |
				      UCP_MEM_MAP_PARAM_FIELD_LENGTH,
			.address = buf,
			.length = MAX_SIZE,
		};
		ucp_mem_h memh;

		fill(buf, MAX_SIZE, 2000);
		must(ucp_mem_map(ctx, &mp, &memh), "ucp_mem_map");
		must(ucp_rkey_pack(ctx, memh, &packed, &plen), "ucp_rkey_pack");
		raddr = (uintptr_t)buf;
		tcp_write(&raddr, sizeof(raddr));
		blob_send(packed, plen);
		ucp_rkey_buffer_release(packed);
		/* The client's GET, then its PUT and flush. */
		sync_peer();
		check_buf(buf, MAX_SIZE, 2001, "memory PUT by the peer");
		sync_peer();
		ucp_mem_unmap(ctx, memh);
		return;
	}
	tcp_read(&raddr, sizeof(raddr));
	packed = blob_recv(&rlen);
	must(ucp_ep_rkey_unpack(ep, packed, &rkey), "ucp_ep_rkey_unpack");
	free(packed);
	memset(buf, 0, MAX_SIZE);
	st = req_wait(ucp_get_nbx(ep, buf, MAX_SIZE, raddr, rkey, &p));
	if (st == UCS_OK)
		st = req_wait(ucp_ep_flush_nbx(ep, &p));
	if (st != UCS_OK)
		check(false, "GET: %s", ucs_status_string(st));
	else
		check_buf(buf, MAX_SIZE, 2000, "GET of the peer's memory");
	fill(buf, MAX_SIZE, 2001);
	st = req_wait(ucp_put_nbx(ep, buf, MAX_SIZE, raddr, rkey, &p));
	if (st == UCS_OK)
		st = req_wait(ucp_ep_flush_nbx(ep, &p));
	if (st != UCS_OK)
		check(false, "PUT: %s", ucs_status_string(st));
	sync_peer();
	sync_peer();
	ucp_rkey_destroy(rkey);
}

int main(int argc, char **argv)
{
	static const struct option opts[] = {
		{ "server", no_argument, NULL, 's' },
		{ "client", required_argument, NULL, 'c' },
		{ "port", required_argument, NULL, 'p' },
		{ NULL, 0, NULL, 0 },
	};
	const char *host = NULL, *port = "18520";
	bool server = false;
	uint8_t *buf;
	int c;

	while ((c = getopt_long(argc, argv, "sc:p:", opts, NULL)) != -1) {
		switch (c) {
		case 's':
			server = true;
			break;
		case 'c':
			host = optarg;
			break;
		case 'p':
			port = optarg;
			break;
		default:
			die("usage: ucp-test --server | --client HOST [-p PORT]");
		}
	}
	if (server == !!host)
		die("usage: ucp-test --server | --client HOST [-p PORT]");
	buf = aligned_alloc(4096, MAX_SIZE);
	if (!buf)
		die("out of memory");
	if (server)
		tcp_accept(port);
	else
		tcp_connect(host, port);
	ucp_setup();
	sync_peer();
	tag_test(server, buf);
	sync_peer();
	stream_test(server, buf);
	sync_peer();
	rma_test(server, buf);
	ucp_teardown();
	free(buf);
	printf("%d passed, %d failed\n", passed, failed);
	return failed ? 1 : 0;
}
