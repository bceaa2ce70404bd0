// SPDX-License-Identifier: GPL-2.0 OR Linux-OpenIB
/*
 * sroce-traffic: a byte-verifying RDMA traffic generator.
 *
 *   sroce-traffic --server [options]
 *   sroce-traffic --client HOST [options]
 *
 * Two processes connect over TCP, exchange what they need (QPNs, PSNs,
 * GIDs, MR addresses and rkeys, the seed and the negotiated parameters),
 * then both initiate random streams of operations on every QP at once and
 * check everything that comes back. See --help and
 * Documentation/testing.md.
 *
 * Theory of operation. Every QP pair carries two streams of operations,
 * one initiated by each side. A stream is a pure function of (seed, side,
 * QP): the initiator generates it to post it, the target generates the
 * same stream again ("replay") to know what must arrive, so no payload
 * travels twice. Payloads are slices of three source pools whose content
 * is a function of the seed only: both sides hold identical pools, the
 * target rebuilds any payload from the op's gather list, and RDMA READs
 * read the peer's pools. Writes land in a per-QP window of the target,
 * which the target replays into a model and compares at the end (so
 * overlapping writes and untouched guard bytes are checked). Atomics hit
 * one 8-byte word per QP and stream, so their sequence of original values
 * is predictable. The last op of every stream is a SEND with immediate:
 * once it arrived, so did everything before it (RC and UC keep order).
 *
 * Receives are posted with credits over the TCP connection, so an
 * unreliable transport never finds an empty receive queue. The target
 * knows the size of every message, so each receive buffer is sized for
 * its message (plus random slack) and scattered over both scatter MRs.
 */
#include "traffic.h"

const char *const kind_names[K_NR] = {
	"send", "send_imm", "write", "write_imm", "read", "cas", "fadd",
};
const char *const kind_verbs[K_NR] = {
	"SEND", "SEND_WITH_IMM", "RDMA_WRITE", "RDMA_WRITE_WITH_IMM",
	"RDMA_READ", "ATOMIC_CMP_AND_SWP", "ATOMIC_FETCH_AND_ADD",
};
const enum ibv_wr_opcode wr_opcodes[K_NR] = {
	IBV_WR_SEND, IBV_WR_SEND_WITH_IMM, IBV_WR_RDMA_WRITE,
	IBV_WR_RDMA_WRITE_WITH_IMM, IBV_WR_RDMA_READ,
	IBV_WR_ATOMIC_CMP_AND_SWP, IBV_WR_ATOMIC_FETCH_AND_ADD,
};
const enum ibv_wc_opcode wc_opcodes[K_NR] = {
	IBV_WC_SEND, IBV_WC_SEND, IBV_WC_RDMA_WRITE, IBV_WC_RDMA_WRITE,
	IBV_WC_RDMA_READ, IBV_WC_COMP_SWAP, IBV_WC_FETCH_ADD,
};
const char *const inject_names[INJ_NR] = {
	"none", "data", "imm", "read", "guard", "atomic", "window", "tally", "hang",
};
struct options opt = {
	.port = "18515", .gid_index = -1, .qps = 4, .ops = 1000,
	.max_size = 32768, .sq_depth = 32, .rq_depth = 32, .timeout = 300,
	.ack_timeout = 14, .transport = IBV_QPT_RC,
};
struct run c;

/* Output and failures */

static void vsay(const char *what, const char *fmt, va_list ap)
{
	printf("sroce-traffic: %s: %s", c.role, what);
	vprintf(fmt, ap);
	putchar('\n');
	fflush(stdout);
}

void __attribute__((format(printf, 1, 2))) say(const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vsay("", fmt, ap);
	va_end(ap);
}

void __attribute__((format(printf, 1, 2))) mismatch(const char *fmt, ...)
{
	va_list ap;

	if (++c.mismatches > MAX_REPORTS) {
		if (c.mismatches == MAX_REPORTS + 1)
			say("MISMATCH: further mismatches are counted, not shown");
		return;
	}
	va_start(ap, fmt);
	vsay("MISMATCH ", fmt, ap);
	va_end(ap);
}

/* Should the self-test corruption @what happen now? Once per run. */
bool inject(enum inject what)
{
	if (opt.inject != what || c.injected)
		return false;
	c.injected = true;
	say("injecting corruption '%s' (self-test)", inject_names[what]);
	return true;
}

void __attribute__((format(printf, 1, 2), noreturn)) fatal(const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vsay("FAIL: ", fmt, ap);
	va_end(ap);
	dump_outstanding();
	say("FAIL qps=%u mismatches=%llu", c.p.qps,
	    (unsigned long long)c.mismatches + 1);
	exit(1);
}

static void on_alarm(int sig)
{
	static const char msg[] = "sroce-traffic: FAIL: hung past --timeout (alarm)\n";

	(void)sig;
	if (write(STDOUT_FILENO, msg, sizeof(msg) - 1) < 0)
		_exit(1);
	_exit(1);
}

/* Setup and main */

static void handshake(void)
{
	uint64_t mine[MSG_WORDS], theirs[MSG_WORDS];
	struct caps caps;
	uint32_t n, one = 1;

	open_device(&caps);
	n = hello_words(&caps, mine);
	if (opt.server) {
		tcp_accept();
		expect_msg(M_HELLO, theirs, n);
		send_msg(M_HELLO, mine, n);
		negotiate(theirs, mine);
	} else {
		c.sock = tcp_connect();
		send_msg(M_HELLO, mine, n);
		expect_msg(M_HELLO, theirs, n);
		negotiate(mine, theirs);
	}
	setsockopt(c.sock, IPPROTO_TCP, TCP_NODELAY, &one, sizeof(one));
	c.ipv4 = c.gid.raw[10] == 0xff && c.gid.raw[11] == 0xff &&
		 !memcmp(c.gid.raw, "\0\0\0\0\0\0\0\0\0", 10);
}

static void bring_up(void)
{
	uint64_t w[MSG_WORDS];
	uint32_t q, n;
	uint64_t type;

	create_qps();
	exchange_info();
	for (q = 0; q < c.p.qps; q++) {
		connect_qp(&c.qp[q]);
		post_recvs(&c.qp[q]);
		c.qp[q].last_rx = tool_now();
		send_credit(&c.qp[q], true);
	}
	send_msg(M_READY, NULL, 0);
	while ((type = recv_msg(w, &n)) != M_READY)
		handle_msg(type, w, n);
}

static void summary(void)
{
	unsigned long long ops = 0, bytes = 0, lost = 0, dups = 0, mine[K_NR] = { 0 }, peer[K_NR] = { 0 };
	uint32_t q, k;
	bool ok = !c.mismatches && !c.peer_mismatches;

	for (q = 0; q < c.p.qps; q++) {
		for (k = 0; k < K_NR; k++) {
			mine[k] += c.qp[q].tx_count[k];
			peer[k] += c.peer_count[q][k];
		}
		lost += c.qp[q].rx.nrecv - c.qp[q].distinct;
		dups += c.qp[q].dups;
	}
	for (k = 0; k < K_NR; k++) {
		ops += mine[k] + peer[k];
		bytes += c.tx_bytes[k] + c.peer_bytes[k];
	}
	say("initiated (mine/peer's): send %llu/%llu send_imm %llu/%llu write %llu/%llu "
	    "write_imm %llu/%llu read %llu/%llu cas %llu/%llu fadd %llu/%llu",
	    mine[0], peer[0], mine[1], peer[1], mine[2], peer[2], mine[3], peer[3],
	    mine[4], peer[4], mine[5], peer[5], mine[6], peer[6]);
	if (c.p.allow_loss)
		say("lost %llu and duplicated %llu of the peer's messages (--allow-loss)",
		    lost, dups);
	say("%s qps=%u ops=%llu bytes=%llu mismatches=%llu peer_mismatches=%llu time=%.1fs",
	    ok ? "OK" : "FAIL", c.p.qps, ops, bytes, (unsigned long long)c.mismatches,
	    (unsigned long long)c.peer_mismatches, tool_now() - c.start);
}

static const char usage_text[] =
"usage: sroce-traffic --server [options]\n"
"       sroce-traffic --client HOST [options]\n"
"\n"
"A byte-verifying RDMA traffic generator. Both sides initiate random\n"
"operations on every QP and check every byte, completion and tally.\n"
"Exit status 0: no mismatch on either side; 1: a mismatch, a failed\n"
"completion or a timeout (details on standard output); 2: a usage or setup error.\n"
"\n"
"  -S, --server            wait for one client on --port\n"
"  -C, --client HOST       connect to the server at HOST (retried until --timeout)\n"
"  -p, --port PORT         TCP port of the setup connection (18515)\n"
"  -d, --dev DEV           RDMA device (the first one)\n"
"  -g, --gid-index N       GID index on port 1 (the first RoCE v2 GID, IPv4 first)\n"
"The client's values of the following options are the ones used:\n"
"  -q, --qps N             QP pairs, all busy at once (4)\n"
"  -n, --ops N             operations per QP pair, half initiated by each side (1000)\n"
"  -s, --seed S            seed of everything random (default: from the clock;\n"
"                          printed, so a run can be repeated)\n"
"  -m, --max-size BYTES    largest message (32768); UD: at most the path MTU\n"
"  -x, --mix LIST          operations to draw from, comma-separated, of send,\n"
"                          send_imm, write, write_imm, read, cas, fadd (all that\n"
"                          the transport has); the last op of each stream is\n"
"                          always a send_imm, which marks the end\n"
"  -t, --transport T       rc, uc or ud (rc)\n"
"      --sq-depth N        send queue depth (32)\n"
"      --rq-depth N        receive queue depth (32)\n"
"      --one-way           only the client initiates\n"
"      --ack-timeout N     rc: the QPs' local ACK timeout, 4.096 us * 2^N\n"
"                          (14: 67 ms; 0: infinite)\n"
"      --allow-loss        uc/ud: lost, duplicated and reordered messages are\n"
"                          counted, not mismatches (for netem); uc write targets\n"
"                          are then only checked where no write went\n"
"The following are each side's own:\n"
"  -T, --timeout SEC       fail if the run is not over after SEC seconds (300)\n"
"      --lax-grh-checksum  ud: accept a zero IPv4 header checksum in the GRH\n"
"                          area (rdma_rxe's loopback never computes it)\n"
"      --any-sl            ud: accept any wc.sl (rdma_rxe reports 0, not the\n"
"                          RoCE packet type 0xa or 0x9)\n"
"  -v, --verbose           more detail\n"
"      --inject-corruption KIND\n"
"                          self-test: corrupt one thing on this side and expect\n"
"                          the run to fail: data (a received byte), imm (a\n"
"                          predicted immediate), read (a byte READ), guard (a\n"
"                          byte next to a READ's target), atomic (a predicted\n"
"                          original value), window (a byte of the write target),\n"
"                          tally (the count sent to the peer), hang (QP 0's\n"
"                          last op is never posted: the timeout must fire)\n"
"  -h, --help              this text\n";

static void __attribute__((noreturn)) usage(int status)
{
	fputs(usage_text, status ? stderr : stdout);
	exit(status);
}

static uint32_t parse_mix(const char *s)
{
	uint32_t mix = tool_name_mask(s, kind_names, K_NR,
				      "--mix: unknown operation '%s'");

	if (!mix)
		tool_die("--mix: nothing to do");
	return mix;
}

static void parse_transport(const char *s)
{
	if (!strcmp(s, "rc"))
		opt.transport = IBV_QPT_RC;
	else if (!strcmp(s, "uc"))
		opt.transport = IBV_QPT_UC;
	else if (!strcmp(s, "ud"))
		opt.transport = IBV_QPT_UD;
	else
		tool_die("--transport: rc, uc or ud, not '%s'", s);
}

static void parse_inject(const char *s)
{
	int i = tool_name_index(inject_names, INJ_NR, s);

	if (i <= INJ_NONE)
		tool_die("--inject-corruption: unknown kind '%s'", s);
	opt.inject = i;
}

enum { O_SQ = 256, O_RQ, O_ONE_WAY, O_ALLOW_LOSS, O_INJECT, O_LAX_GRH, O_ANY_SL,
       O_ACK_TIMEOUT };

static void set_mix(const char *arg)
{
	opt.mix = parse_mix(arg);
	opt.mix_set = true;
}

static const struct tool_opt opts[] = {
	TOOL_FLAG('S', "server", &opt.server),
	TOOL_STR('C', "client", &opt.host),
	TOOL_STR('p', "port", &opt.port),
	TOOL_STR('d', "dev", &opt.dev),
	TOOL_NUM('g', "gid-index", INT, &opt.gid_index, 65535),
	TOOL_NUM('q', "qps", UINT, &opt.qps, MAX_QPS),
	TOOL_NUM('n', "ops", UINT, &opt.ops, 1u << 30),
	TOOL_NUM('s', "seed", U64, &opt.seed, UINT64_MAX),
	TOOL_NUM('m', "max-size", UINT, &opt.max_size, 1u << 26),
	TOOL_CALL('x', "mix", set_mix),
	TOOL_CALL('t', "transport", parse_transport),
	TOOL_NUM(O_SQ, "sq-depth", UINT, &opt.sq_depth, 1u << 16),
	TOOL_NUM(O_RQ, "rq-depth", UINT, &opt.rq_depth, 1u << 16),
	TOOL_NUM('T', "timeout", UINT, &opt.timeout, 86400),
	TOOL_FLAG(O_ONE_WAY, "one-way", &opt.one_way),
	TOOL_FLAG(O_ALLOW_LOSS, "allow-loss", &opt.allow_loss),
	TOOL_CALL(O_INJECT, "inject-corruption", parse_inject),
	TOOL_FLAG(O_LAX_GRH, "lax-grh-checksum", &opt.lax_grh),
	TOOL_FLAG(O_ANY_SL, "any-sl", &opt.any_sl),
	TOOL_NUM(O_ACK_TIMEOUT, "ack-timeout", UINT, &opt.ack_timeout, 31),
	TOOL_FLAG('v', "verbose", &opt.verbose),
	TOOL_HELP('h', "help"),
};

static void parse_args(int argc, char **argv)
{
	uint32_t allowed;

	if (tool_getopt(argc, argv, opts, ARRAY_SIZE(opts), usage) != argc ||
	    opt.server == !!opt.host)
		usage(2);
	allowed = opt.transport == IBV_QPT_RC ? MIX_RC :
		  opt.transport == IBV_QPT_UC ? MIX_UC : MIX_UD;
	if (!opt.mix_set)
		opt.mix = allowed;
	if (opt.mix & ~allowed)
		tool_die("--mix: this transport has only send, send_imm%s",
			 opt.transport == IBV_QPT_UC ? ", write, write_imm" : "");
	if (opt.allow_loss && opt.transport == IBV_QPT_RC)
		tool_die("--allow-loss is for uc and ud: RC loses nothing");
	if (!opt.qps || !opt.sq_depth || !opt.rq_depth || !opt.timeout)
		tool_die("--qps, --sq-depth, --rq-depth and --timeout must not be 0");
	if (!opt.seed) {
		opt.seed = (uint64_t)time(NULL) << 20 ^ getpid();
		opt.seed &= 0xffffffffffffULL;
	}
}

int main(int argc, char **argv)
{
	c.role = "?";
	parse_args(argc, argv);
	c.role = opt.server ? "server" : "client";
	c.side = opt.server;
	c.sock = -1;
	signal(SIGPIPE, SIG_IGN);
	signal(SIGALRM, on_alarm);
	alarm(opt.timeout + 30);
	c.deadline = tool_now() + opt.timeout;
	handshake();
	say("seed=%llu transport=%s qps=%u ops=%u+%u max_size=%u mtu=%u max_sge=%u sq=%u rq=%u%s",
	    (unsigned long long)c.p.seed,
	    c.p.transport == IBV_QPT_RC ? "rc" : c.p.transport == IBV_QPT_UC ? "uc" : "ud",
	    c.p.qps, c.p.ops[0], c.p.ops[1], c.p.max_size, tool_mtu_bytes(c.p.mtu), c.p.max_sge,
	    c.p.sq_depth, c.p.rq_depth, c.p.allow_loss ? " allow-loss" : "");
	bring_up();
	c.start = tool_now();
	run();
	summary();
	return c.mismatches || c.peer_mismatches ? 1 : 0;
}
