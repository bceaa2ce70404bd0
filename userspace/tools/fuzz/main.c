// SPDX-License-Identifier: GPL-2.0 OR Linux-OpenIB
/*
 * sroce-fuzz: a structure-aware RoCEv2 packet fuzzer.
 *
 *   sroce-fuzz -i IFACE -M DST_MAC -t TARGETS [-s SEED] [-n PACKETS]
 *              [--from I] [--count N] [-f 4|6|46] [--rate PPS]
 *              [--src4 IP] [--dst4 IP] [--src6 IP] [--dst6 IP]
 *              [--port-mtu BYTES] [--batch N] [--dump] [--hex] [--dry-run]
 *   sroce-fuzz -i IFACE -M DST_MAC -t TARGETS --probe QPN:PSN:COUNT[:KIND]
 *              --probe-src IP
 *
 * It writes whole Ethernet frames (AF_PACKET on IFACE, so it controls
 * every byte of the IP, UDP and InfiniBand transport headers) addressed
 * to DST_MAC and to the RoCEv2 port (4791) of --dst4 / --dst6, and
 * attacks the QPs that TARGETS lists. Defaults match tests/lib.sh: from
 * netns b (veth_b, 192.0.2.2, 2001:db8::2) to sroce_a (192.0.2.1,
 * 2001:db8::1).
 *
 * TARGETS, one object a line ('#' starts a comment; numbers in C syntax;
 * '-' where a value is unknown or does not apply):
 *
 *   qp QPN TYPE STATE EPSN NPSN UPSN FAMILY QKEY MTU ACCESS ROLE
 *   key RKEY VA LEN RIGHTS QPN
 *   xsrq SRQN
 *
 * TYPE is RC, UC, UD, GSI, XRC_TGT or XRC_INI (anything else counts as
 * UD, as the driver treats it); STATE one of RESET INIT RTR RTS SQD SQE
 * ERR. EPSN, NPSN and UPSN are the responder's expected PSN, the
 * requester's next and oldest unacknowledged PSN (`rdma -dd resource
 * show qp`: expected_psn, next_psn, unacked_psn). FAMILY (4 or 6) is the
 * address family of a connected QP's path. QKEY is a UD QP's Q_Key, MTU
 * its path MTU. ACCESS holds r, w and a for the remote rights the QP
 * grants. ROLE is "probe" for a QP kept for --probe (never aimed at
 * otherwise), "orphan" for an RC requester (sroce-fuzz-target) that
 * keeps one-packet requests outstanding towards a QP that never
 * answers, the kind of each a function of its PSN: (PSN - UPSN) mod 5
 * is SEND, WRITE, READ (of 24 bytes), CMP_SWAP, FETCH_ADD; the fuzzer
 * answers them in its place. A key is an MR or memory window that
 * remote requests may name: its rkey, the address a requester names its
 * first byte by (0 for a zero-based one), its length, its rights (r, w,
 * a; x if it belongs to another PD than the QPs, so that every access
 * is refused) and, for a type 2 window, the QP it is bound through
 * (requests through any other QP are refused). An xsrq is an XRC SRQ
 * that XRC requests may name. sroce-fuzz-target writes all but the PSNs
 * and the live states; tests/60-fuzz-packets.sh adds those, and QP 1,
 * from `rdma -j -dd resource show qp`.
 *
 * WHAT IT SENDS. Packet I of a run is a function of the seed, I, the
 * families allowed and TARGETS only; each is one of these classes:
 *
 *   valid     a well-formed request at a connected QP that takes
 *             requests (RC, UC, XRC target in RTR, RTS or SQD): SEND,
 *             SEND with immediate or invalidate, RDMA WRITE (with
 *             immediate), READ, CMP_SWAP, FETCH_ADD, FLUSH, ATOMIC_WRITE;
 *             multi-packet messages as FIRST, MIDDLE..., LAST at the
 *             QP's path MTU; at the PSN the responder expects; RETH,
 *             AtomicETH, FETH, XRCETH, IETH in range of a live key with
 *             the rights it needs.
 *   mutated   a valid request with one to three mutations: PSN (a
 *             duplicate, a little or far ahead, across the 2^23 window),
 *             opcode (of any transport, or invalid), payload length
 *             (0, off by a few, the MTU, beyond it), pad count, RETH
 *             (length 0 with a payload, huge lengths, addresses just
 *             outside a key, rkeys next to live ones), AtomicETH
 *             (unaligned or outside addresses, rkeys next to live ones),
 *             XRCETH, IETH and FETH values, destination QP, P_Key (the
 *             limited-member key 0x7fff is valid), TVer, a flipped
 *             header byte, truncation, trailing bytes, and harmless
 *             changes (SE, AckReq, MigReq, reserved bits, immediate
 *             data, FECN/BECN and the masked IP fields).
 *   response  ACKs, NAKs of every code, RNR NAKs, READ responses (FIRST,
 *             MIDDLE, LAST, ONLY) and atomic ACKs at RC and XRC
 *             initiator QPs; at an orphan, mostly the right response at
 *             the PSN it waits for, so they reach its completer.
 *   ud        UD SEND (with immediate) at the UD QPs in any state: the
 *             right Q_Key or a wrong one, sizes from 0 to the MTU,
 *             beyond the receive buffers and beyond the MTU.
 *   gsi       UD datagrams at QP 1: 256-byte MADs with plausible
 *             headers (CM, SA, performance classes...), oversize ones
 *             (257 bytes to the MTU, bigger than the GSI's receive
 *             buffers), bigger than the MTU, short ones, wrong Q_Keys.
 *   any-state any opcode at any listed QP, whatever its type and state.
 *   invalid   opcodes no table defines (RD, CNP, reserved), TVer, P_Key,
 *             truncated headers, payloads on opcodes that have none.
 *   bad-icrc  a plausible packet with a wrong ICRC.
 *   bad-udp   a plausible packet with a wrong UDP checksum (the UDP
 *             layer drops it: InCsumErrors).
 *   no-qp     QPs that do not exist, and the multicast QPN 0xFFFFFF.
 *
 * About one packet in ten comes from a spoofed source (another address
 * of the /24 or /64), the rest from --src4/--src6; a few go to a QP
 * connected over the other family. The IP TOS or traffic class, flow
 * label, TTL or hop limit, the IP ID and the BTH's FECN/BECN byte vary:
 * the ICRC masks them. The ICRC (IBA Annex A17.3.3) is computed over the
 * masked headers, and the UDP checksum is right (or 0 over IPv4) unless
 * the class says otherwise.
 *
 * To reach the engines, the generator keeps an open-loop model of each
 * QP: the PSN its responder expects, the message under way, the PSN an
 * orphan's completer waits for. It never reads the device's answers, so
 * a run replays exactly. A packet that should kill an RC QP resets the
 * model to the QP's first PSN, which is where sroce-fuzz-target puts a
 * QP back when it finds it in the error state. A packet that the
 * classification below says does not reach the QP's engines leaves the
 * model as it was.
 *
 * KEPT ALIVE. Every other QP that takes requests (orphans aside) is kept
 * alive, so that its responder stays in step with the model and long
 * runs of requests execute: it gets valid requests only (and now and
 * then a duplicate), from its peer over its family (if -f allows it),
 * nothing it lacks the rights or a key for, no FLUSH (no MR grants it),
 * no SEND with invalidate, no key of another PD. The others get the
 * mutations and the any-state garbage.
 *
 * WHAT IT EXPECTS. Each packet is classified as sroce's receive dispatch
 * (drivers/sroce/recv.c) will treat it, from its bytes and the target
 * states: dropped by UDP (udp_csum), by the header checks (header), the
 * ICRC check (icrc), for want of a QP (no_qp), by the QP's type or state
 * (qp_state), or handed on: to a UD QP with a wrong Q_Key (ud_qkey), one
 * longer than its MTU (ud_long), one that may be received (ud), to a
 * connected QP from another address than its peer's or to our address of
 * the other family, which it must drop (addr), or to an RC, UC or XRC
 * engine (deep). The last line printed is
 *
 *   expect sent=N udp_csum=N header=N icrc=N no_qp=N qp_state=N
 *          ud_qkey=N ud_long=N ud=N addr=N deep=N v4=N v6=N spoofed=N
 *
 * (one line), for the packets actually sent; tests/60-fuzz-packets.sh
 * holds sroce's drop counters against it. Before it: the seed, then a
 * summary of the packets sent by class, by opcode and by verdict.
 *
 * REPRODUCING. Packets 0 to PACKETS-1 (-n) are generated in order;
 * packet I depends on the seed, I, -f and TARGETS only, not on -n.
 * --from I --count C sends only packets I to I+C-1 (the others are
 * generated all the same, so the model is where it was). So a failure
 * seen after a run can be bisected by sending ranges of it to targets
 * set up the same way. --dump prints one line per packet sent (index,
 * seconds since the start, class, family, source, opcode, QPN, PSN,
 * length, verdict); --hex adds the frame's bytes. --dry-run generates
 * and classifies without sending (no IFACE needed).
 *
 * SPEED. Frames go out in sendmmsg() batches of --batch (64). --rate
 * caps packets per second (0: as fast as the kernel takes them).
 *
 * PROBING. With --probe QPN:PSN:COUNT --probe-src IP it sends only COUNT
 * requests at QPN (of its transport in TARGETS, else RC), at PSN, PSN + 1
 * and on, from IP (to --dst4 or --dst6 by IP's family): valid SEND ONLY
 * requests of 8 bytes, or with QPN:PSN:COUNT:write0 RDMA WRITE FIRST
 * packets whose RETH says 0 bytes while they carry a path MTU of payload
 * (the first key of TARGETS in the RETH). A connected QP must drop what
 * does not come from its peer (the address checks of IBA 9.6.1, as
 * rdma_rxe makes them in check_addr()): its expected PSN must not move.
 * A WRITE FIRST of length 0 with a payload is an invalid request: NAK
 * (naks_sent) and the QP in error.
 *
 * Exit status: 0 when every packet was sent, 2 on a usage or setup
 * error, 1 when sending failed.
 */
#include "fuzz.h"

uint64_t rng_state;
struct opinfo ops[256];
uint8_t valid_ops[256], invalid_ops[256];
int num_valid_ops, num_invalid_ops;
const char *const qtype_names[] = {
	"RC", "UC", "UD", "GSI", "XRC_TGT", "XRC_INI", "OTHER",
};
const char *const qstate_names[] = {
	"RESET", "INIT", "RTR", "RTS", "SQD", "SQE", "ERR",
};
struct tqp tq[MAX_TARGETS];
int num_tq;
struct tkey keys[MAX_KEYS];
int num_keys;
uint32_t xsrq[MAX_XSRQ];
int num_xsrq;
uint32_t port_mtu = 1024;
struct group g_req[2];	/* take requests now; [0] IPv4, [1] IPv6 */
struct group g_resp[2];	/* take responses now */
struct group g_orphan[2];
struct group g_ud;	/* UD QPs, any state */
struct group g_all;
struct net net;
uint8_t pool[POOL_SIZE];
const char *const verdict_names[V_NR] = {
	"udp_csum", "header", "icrc", "no_qp", "qp_state",
	"ud_qkey", "ud_long", "ud", "addr", "deep",
};
const char *const cls_names[C_NR] = {
	"valid", "mutated", "response", "ud", "gsi", "any-state", "invalid",
	"bad-icrc", "bad-udp", "no-qp",
};
const unsigned int cls_weight[C_NR] = {
	[C_VALID] = 380, [C_MUTATED] = 220, [C_RESPONSE] = 90, [C_UD] = 60,
	[C_GSI] = 80, [C_ANY_STATE] = 60, [C_INVALID] = 60, [C_BAD_ICRC] = 25,
	[C_BAD_UDP] = 5, [C_NO_QP] = 20,
};
struct sender tx;

static void summary(void)
{
	const struct verdicts *st = &tx.st;
	double t = elapsed();
	int i;

	printf("sroce-fuzz: sent %" PRIu64 " packets (%" PRIu64
	       " bytes) in %.1f s: %.0f packets/s\n", st->sent, st->bytes, t,
	       t > 0 ? st->sent / t : 0);
	for (i = 0; i < C_NR; i++)
		printf("class %s %" PRIu64 "\n", cls_names[i], st->cls[i]);
	for (i = 0; i < 256; i++)
		if (st->op[i])
			printf("opcode 0x%02x %s %" PRIu64 "\n", i, ops[i].name,
			       st->op[i]);
	printf("expect sent=%" PRIu64, st->sent);
	for (i = 0; i < V_NR; i++)
		printf(" %s=%" PRIu64, verdict_names[i], st->v[i]);
	printf(" v4=%" PRIu64 " v6=%" PRIu64 " spoofed=%" PRIu64 "\n",
	       st->fam[0], st->fam[1], st->spoofed);
}

static void print_targets(void)
{
	int counts[QT_OTHER + 1] = { 0 }, i;

	for (i = 0; i < num_tq; i++)
		counts[tq[i].type]++;
	printf("sroce-fuzz: targets: %d QPs (", num_tq);
	for (i = 0; i <= QT_OTHER; i++)
		printf("%s%s %d", i ? ", " : "", qtype_names[i], counts[i]);
	printf("), %d keys, %d XRC SRQs; requests to %d+%d, responses to"
	       " %d+%d and %d+%d orphans (IPv4+IPv6), %d UD\n", num_keys,
	       num_xsrq, g_req[0].n, g_req[1].n, g_resp[0].n, g_resp[1].n,
	       g_orphan[0].n, g_orphan[1].n, g_ud.n);
}

void parse_ip(const char *s, int fam, uint8_t *out)
{
	if (inet_pton(fam == 4 ? AF_INET : AF_INET6, s, out) != 1)
		tool_die("not an IPv%d address: %s", fam, s);
}

static void parse_mac(const char *s, uint8_t *mac)
{
	if (sscanf(s, "%hhx:%hhx:%hhx:%hhx:%hhx:%hhx", &mac[0], &mac[1],
		   &mac[2], &mac[3], &mac[4], &mac[5]) != 6)
		tool_die("not a MAC address: %s", s);
}

static uint64_t random_seed(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_REALTIME, &ts);
	return (uint64_t)ts.tv_nsec * 1000003 ^ ts.tv_sec ^ getpid();
}

static const char usage[] =
	"usage: sroce-fuzz -i IFACE -M DST_MAC -t TARGETS [-s SEED] [-n PACKETS]\n"
	"         [--from I] [--count N] [-f 4|6|46] [--rate PPS] [--batch N]\n"
	"         [--src4 IP] [--dst4 IP] [--src6 IP] [--dst6 IP]\n"
	"         [--port-mtu BYTES] [--dump] [--hex] [--dry-run]\n"
	"       sroce-fuzz -i IFACE -M DST_MAC -t TARGETS --probe QPN:PSN:COUNT[:KIND]\n"
	"         --probe-src IP\n"
	"See the comment at the top of userspace/tools/fuzz/main.c.";

enum { O_FROM = 256, O_COUNT, O_RATE, O_BATCH, O_SRC4, O_DST4, O_SRC6,
       O_DST6, O_PORT_MTU, O_DUMP, O_HEX, O_DRY, O_PROBE, O_PROBE_SRC };

struct run {
	const char *ifname, *targets, *probe, *probe_src;
	bool have_mac, have_seed;
	uint64_t seed, packets, from, count;
	unsigned int fams;
	double last_report;
};

/* The command line's choices. */
static struct run run = { .packets = 10000, .count = UINT64_MAX, .fams = 46 };

static void usage_exit(int status)
{
	(void)status;
	tool_die("%s", usage);
}

static void set_mac(const char *arg)
{
	parse_mac(arg, net.dmac);
	run.have_mac = true;
}

static void set_seed(const char *arg)
{
	run.seed = tool_number(arg, ULONG_MAX);
	run.have_seed = true;
}

static void set_family(const char *arg)
{
	run.fams = tool_number(arg, 46);
	if (run.fams != 4 && run.fams != 6 && run.fams != 46)
		tool_die("-f takes 4, 6 or 46");
}

static void set_src4(const char *arg)
{
	parse_ip(arg, 4, net.src4);
}

static void set_dst4(const char *arg)
{
	parse_ip(arg, 4, net.dst4);
}

static void set_src6(const char *arg)
{
	parse_ip(arg, 6, net.src6);
}

static void set_dst6(const char *arg)
{
	parse_ip(arg, 6, net.dst6);
}

static void set_hex(const char *arg)
{
	(void)arg;
	tx.dump = tx.hex = true;
}

static const struct tool_opt opts[] = {
	TOOL_STR('i', "iface", &run.ifname),
	TOOL_CALL('M', "mac", set_mac),
	TOOL_STR('t', "targets", &run.targets),
	TOOL_CALL('s', "seed", set_seed),
	TOOL_NUM('n', "packets", U64, &run.packets, ULONG_MAX),
	TOOL_CALL('f', "family", set_family),
	TOOL_NUM(O_FROM, "from", U64, &run.from, ULONG_MAX),
	TOOL_NUM(O_COUNT, "count", U64, &run.count, ULONG_MAX),
	TOOL_NUM(O_RATE, "rate", U64, &tx.rate, 100000000),
	TOOL_NUM(O_BATCH, "batch", UINT, &tx.batch, MAX_BATCH),
	TOOL_CALL(O_SRC4, "src4", set_src4),
	TOOL_CALL(O_DST4, "dst4", set_dst4),
	TOOL_CALL(O_SRC6, "src6", set_src6),
	TOOL_CALL(O_DST6, "dst6", set_dst6),
	TOOL_NUM(O_PORT_MTU, "port-mtu", UINT, &port_mtu, 4096),
	TOOL_FLAG(O_DUMP, "dump", &tx.dump),
	TOOL_CALL0(O_HEX, "hex", set_hex),
	TOOL_FLAG(O_DRY, "dry-run", &tx.dry),
	TOOL_STR(O_PROBE, "probe", &run.probe),
	TOOL_STR(O_PROBE_SRC, "probe-src", &run.probe_src),
	TOOL_HELP('h', "help"),
};

static void parse_args(int argc, char **argv, struct run *r)
{
	if (tool_getopt(argc, argv, opts, ARRAY_SIZE(opts), usage_exit) != argc ||
	    !r->targets || !tx.batch ||
	    (!tx.dry && (!r->ifname || !r->have_mac)) ||
	    !r->probe != !r->probe_src)
		tool_die("%s", usage);
}

static void progress(const struct run *r, uint64_t i)
{
	double t = elapsed();

	if (t - r->last_report < 10)
		return;
	((struct run *)r)->last_report = t;
	fprintf(stderr, "sroce-fuzz: %" PRIu64 "/%" PRIu64 " generated, %"
		PRIu64 " sent, %.0f packets/s\n", i, r->packets, tx.st.sent,
		tx.st.sent / t);
}

int main(int argc, char **argv)
{
	static struct pkt p;
	struct run r;
	enum verdict v;
	struct gen g;
	uint64_t i;
	uint32_t len;

	crc_init();
	ops_init();
	if (crc_update(~0U, (const uint8_t *)"\xff\xff\xff\xff\xff\xff\xff\xff",
		       8) != 0xdebb20e3)
		tool_die("CRC-32 self-test failed");
	tx.batch = 64;
	parse_ip("192.0.2.2", 4, net.src4);
	parse_ip("192.0.2.1", 4, net.dst4);
	parse_ip("2001:db8::2", 6, net.src6);
	parse_ip("2001:db8::1", 6, net.dst6);
	net.max_roce[0] = 1500 - 28;
	net.max_roce[1] = 1500 - 48;
	parse_args(argc, argv, &run);
	r = run;
	if (!r.have_seed)
		r.seed = random_seed();
	load_targets(r.targets);
	if (!tx.dry)
		open_socket(r.ifname);
	if (r.probe) {
		tx.start = tool_now();
		probe(r.probe, r.probe_src);
		return 0;
	}

	printf("sroce-fuzz: seed=%" PRIu64 " packets=%" PRIu64 " from=%"
	       PRIu64 " count=%" PRIu64 " family=%u\n", r.seed, r.packets,
	       r.from, r.count == UINT64_MAX ? r.packets : r.count, r.fams);
	print_targets();
	fflush(stdout);
	rng_state = r.seed;
	for (i = 0; i < POOL_SIZE; i += 8) {
		uint64_t x = rnd();

		memcpy(pool + i, &x, 8);
	}
	tx.start = tool_now();
	for (i = 0; i < r.packets; i++) {
		len = gen_one(&p, tx.frame[tx.n], r.fams, &g, &v);
		if (i >= r.from && i - r.from < r.count)
			enqueue(i, &g, v, len);
		if (!(i & 1023))
			progress(&r, i);
	}
	flush();
	summary();
	return 0;
}
