// SPDX-License-Identifier: GPL-2.0 OR Linux-OpenIB
/*
 * sroce-stress: verified traffic of every opcode while objects are torn
 * down under it.
 *
 *   sroce-stress -d DEV -g GID -6 GID6 -D PEER_DEV -G PEER_GID -7 PEER_GID6
 *                [--events N | --forever] [--pairs N] [--only EVENT,...]
 *                [--seed S] [--gap-ms MS] [--min-ms MS] [--verbose]
 *                [--inject data]
 *
 * One process opens two devices (sroce_a and sroce_b of tests/lib.sh; GID
 * and GID6 are the indices of each device's IPv4 and IPv6 RoCE v2 GIDs)
 * and connects --pairs QP pairs (default 5), the kinds in turn: RC, RC
 * whose responder takes its receives from an SRQ, UC, UD, and RC again.
 * On every pair the requester on DEV keeps up to 8 operations in flight
 * towards the responder on PEER_DEV, and the responder keeps up to 4
 * SENDs in flight back:
 *
 *   RC  SEND, SEND_WITH_IMM, RDMA WRITE, WRITE_WITH_IMM, RDMA READ,
 *       CMP_AND_SWP, FETCH_AND_ADD, ATOMIC_WRITE (ibv_wr_atomic_write());
 *       WRITE and READ go through a type 2 memory window that the
 *       responder bound with a BIND_MW work request, one time in three
 *   UC  SEND, SEND_WITH_IMM, RDMA WRITE, WRITE_WITH_IMM
 *   UD  SEND, SEND_WITH_IMM
 *
 * FLUSH is not offered by the libibverbs the tools link (rdma-core 44.0
 * has no ibv_wr_flush()): it is counted as skipped. Sizes go from 0 to
 * 4096 bytes (at least 8 on UC and UD, whose payload starts with the
 * operation's id; at most the path MTU on UD).
 *
 * Every byte is checked: each operation's data is a pseudo-random pattern
 * of its id. A SEND's receive (in order on RC; by id on UC and UD, where
 * a datagram may be lost) must hold exactly it, with the immediate data
 * and length it was sent with; a successful RC WRITE must have placed it;
 * a successful READ must have fetched the responder's bytes; an atomic
 * must have returned the old value and left the new one. A successful
 * completion with wrong bytes is a mismatch: the run fails.
 *
 * Events, one every --gap-ms (default 150) ms of traffic, on a random
 * pair, --events times (0: none), or until killed with --forever:
 *
 *   qp-responder  destroy the responder's QP while requests arrive
 *   qp-requester  destroy the requester's QP while the responder sends
 *                 to it and its own requests are in flight
 *   mr            deregister the responder's target MR, or the
 *                 requester's source MR, under the traffic (EBUSY while a
 *                 window is bound to it: the window is deallocated first)
 *   mw            the responder invalidates (LOCAL_INV) or deallocates its
 *                 window while the requester reads and writes through it
 *   cq            destroy the requester's CQ: EBUSY while its QP lives
 *                 (checked), then the QP and the CQ
 *   sqd           (RC) RTS -> SQD on both QPs, at once or after
 *                 IBV_EVENT_SQ_DRAINED, then SQD -> SQD with a new address
 *                 vector (their IPv4 GIDs for IPv6 ones or back: both
 *                 move, since a connected QP takes packets only from its
 *                 path's address) and new timeout, retry_cnt, rnr_retry,
 *                 max_rd_atomic and max_dest_rd_atomic, then SQD -> RTS,
 *                 in a random order, with traffic in between. Each
 *                 modify must work (or find the QP in ERR). The traffic
 *                 must resume (a later operation of each side succeeds,
 *                 byte for byte) or, unless SQD waited for both SQs to
 *                 drain (IBA's way to change a path: then it must
 *                 resume), end in error completions; by the time its
 *                 timer and retries allow (plus 10 s): a pair that does
 *                 neither fails the run ("stalled")
 *   reset         both QPs to ERR, drained, RESET, and connected again
 *                 with new PSNs, under the peer's traffic
 *
 * A pair whose operation failed (an error completion, expected after
 * these events) stops, is destroyed and built anew: QPs, CQs, SRQ, MRs,
 * window. Every destroy must return 0 (but the CQ's EBUSY above). An
 * error completion on a pair no event touched fails the run.
 *
 * A device that goes away (rdma link del, the netdev deleted, rmmod)
 * raises IBV_EVENT_DEVICE_FATAL: the tool then stops, destroys all it has
 * (errors are expected and ignored), closes both devices, prints its
 * summary and exits 3.
 *
 * --gap-ms MS sets the time between events; --min-ms MS (default 1000)
 * the least time the traffic runs after "ready" when it stops on its own;
 * --removal-ms MS (default 3000) how long an error may wait for the
 * removal event that explains it (longer on a slow kernel);
 * --verbose prints each event, what became of each SQD dance and, once a
 * second, the operations in flight; --inject data flips one byte of the
 * 100th received message longer than 100 bytes before it is checked, to
 * show that the check fails.
 *
 * Output: "ready" once every pair has completed an operation; with
 * --verbose a line per event; at the end
 *
 *   sroce-stress: events=N qp=.. mr=.. mw=.. cq=.. sqd=.. reset=..
 *   ops=N verified=N bytes=N errors=N lost=N reordered=N unverified=N
 *   rebuilt=N
 *   sqd_resumed=N sqd_failed=N sqd_stalled=N skipped_flush=N
 *   [atomic_write=unsupported:WHY] mismatches=N failures=N
 *   device_removed=0|1 time=T
 *
 * ("verified": completions whose bytes were checked; "unverified": UC
 * WRITEs, whose arrival nothing reports; "lost": UC/UD messages that
 * never arrived, while later ones did; "reordered": UC/UD messages that
 * came after later ones (a veth may deliver what two CPUs sent out of
 * order), checked as any other; "errors": error completions, all after
 * events). Exit status: 0 if nothing failed, 1 if something did, 2
 * for a usage or setup error, 3 if a device went away (after a clean
 * stop). --only EVENT,... restricts the events.
 */
#include "stress.h"

const char *const kind_names[] = { "RC", "RC+SRQ", "UC", "UD" };
const char *const op_names[] = {
	"SEND", "SEND_IMM", "WRITE", "WRITE_IMM", "READ", "CAS", "FADD",
	"ATOMIC_WRITE",
};
const char *const ev_names[] = {
	"qp-responder", "qp-requester", "mr", "mw", "cq", "sqd", "reset",
};
unsigned int failures, mismatches;
bool verbose, inject_data;
uint64_t rng;
struct dev dev_a, dev_b;
bool removed;
struct pair pairs[MAX_PAIRS];
unsigned int npairs = 5;
bool awrite_ok = true;		/* ATOMIC_WRITE can be posted */
const char *awrite_why;
uint64_t next_id = 1;
struct ibv_device_attr attr_a, attr_b;
struct stats st;
unsigned long removal_ms = 3000;
unsigned int event_mask = (1U << EV_NR) - 1;
unsigned int gap_ms = 150;
unsigned long events = 0, min_ms = 1000;
bool forever;

uint32_t rnd(uint32_t n)
{
	return tool_rng_mod(&rng, n);
}

/* The bytes of operation @id: a pattern only the id determines. */
void pattern(uint64_t id, uint8_t *p, uint32_t len)
{
	uint64_t s = id * 0x2545f4914f6cdd1dULL;

	tool_rng_fill(&s, p, len);
}

void fail(const char *fmt, ...)
{
	va_list ap;

	failures++;
	printf("FAIL: ");
	va_start(ap, fmt);
	vprintf(fmt, ap);
	va_end(ap);
	putchar('\n');
}

void note(const char *fmt, ...)
{
	va_list ap;

	if (!verbose)
		return;
	va_start(ap, fmt);
	vprintf(fmt, ap);
	va_end(ap);
	putchar('\n');
}

static bool all_recovered(void)
{
	unsigned int i;

	for (i = 0; i < npairs; i++)
		if (!pairs[i].alive || !pairs[i].ok_since_build ||
		    pairs[i].disturbed || pairs[i].dead ||
		    pairs[i].sqd_pending)
			return false;
	return true;
}

/* Let the operations in flight complete (or not), for a clean end. */
static void quiesce(void)
{
	uint64_t t0 = tool_now_ms();
	unsigned int i, left;

	do {
		left = 0;
		for (i = 0; i < npairs; i++) {
			struct pair *p = &pairs[i];

			if (!p->alive)
				continue;
			left += poll_pair(p);
		}
		drain_events();
	} while (left && !removed && tool_now_ms() - t0 < 2 * WAIT_MS);
	/* After a failure, this may be its consequence: say it once. */
	if (left && !removed && !failures)
		fail("%u operations still in flight %u ms after the traffic "
		     "stopped", left, 2 * WAIT_MS);
}

static void summary(uint64_t t0)
{
	printf("sroce-stress: events=%lu qp=%lu mr=%lu mw=%lu cq=%lu sqd=%lu "
	       "reset=%lu ops=%lu verified=%lu bytes=%lu errors=%lu lost=%lu "
	       "reordered=%lu unverified=%lu rebuilt=%lu sqd_resumed=%lu sqd_failed=%lu "
	       "sqd_stalled=%lu "
	       "skipped_flush=%lu%s%s mismatches=%u failures=%u "
	       "device_removed=%d time=%.1fs\n", st.events,
	       st.by_event[EV_QP_RESPONDER] + st.by_event[EV_QP_REQUESTER],
	       st.by_event[EV_MR], st.by_event[EV_MW], st.by_event[EV_CQ],
	       st.by_event[EV_SQD], st.by_event[EV_RESET], st.ops, st.verified,
	       st.bytes, st.errors, st.lost, st.reordered, st.unverified,
	       st.rebuilt,
	       st.sqd_resumed, st.sqd_failed, st.sqd_stalled, st.skipped_flush,
	       awrite_ok ? "" : " atomic_write=unsupported:",
	       awrite_ok ? "" : awrite_why, mismatches, failures, removed,
	       (tool_now_ms() - t0) / 1000.0);
}

static int run(void)
{
	uint64_t t0 = tool_now_ms(), next_event = 0, last_event = tool_now_ms(), t_ready = 0;
	bool ready = false, built = false;
	unsigned int i;

	for (;;) {
		for (i = 0; i < npairs && !removed; i++) {
			struct pair *p = &pairs[i];

			if (p->alive && p->sqd_pending &&
			    tool_now_ms() > p->sqd_deadline) {
				fail("pair %u (%s): after RTS -> SQD -> SQD (IPv%d) "
				     "-> RTS, nothing the %s posted completed in %"
				     PRIu64 " ms, successfully or not: the traffic "
				     "stalled", p->n, kind_names[p->kind],
				     p->v6[0] ? 6 : 4, p->sqd_pending & 1 ?
				     "requester" : "responder",
				     p->sqd_deadline - p->disturbed_at);
				st.sqd_stalled++;
				p->sqd_pending = 0;
				disturb(p);
			}
			if (p->alive && (p->dead || (p->disturbed &&
			    tool_now_ms() - p->disturbed_at > 2000)))
				pair_destroy(p, true);
			if (!p->alive) {
				st.rebuilt += built;
				pair_build(p);
			}
		}
		built = true;
		if (removed_now())
			break;
		traffic_step();
		if (!ready && all_recovered()) {
			printf("ready\n");
			ready = true;
			t_ready = tool_now_ms();
			next_event = tool_now_ms() + gap_ms;
		}
		if (ready && (forever || st.events < events) &&
		    tool_now_ms() >= next_event) {
			do_event();
			next_event = tool_now_ms() + gap_ms;
			last_event = tool_now_ms();
		}
		if (forever)
			continue;
		if (ready && st.events >= events && all_recovered() &&
		    tool_now_ms() - last_event > 500 && tool_now_ms() - t_ready > min_ms)
			break;
		if (tool_now_ms() - last_event > 30000) {
			for (i = 0; i < npairs; i++)
				if (!pairs[i].ok_since_build)
					fail("pair %u (%s): no operation succeeded "
					     "in 30 s since it was built", i,
					     kind_names[pairs[i].kind]);
			if (!failures)
				fail("the pairs did not settle in 30 s");
			break;
		}
	}
	if (!removed)
		quiesce();
	for (i = 0; i < npairs; i++)
		pair_destroy(&pairs[i], !removed);
	if (!removed) {
		if (ibv_dealloc_pd(dev_a.pd) || ibv_dealloc_pd(dev_b.pd))
			fail("deallocating the PDs failed");
	} else {
		ibv_dealloc_pd(dev_a.pd);
		ibv_dealloc_pd(dev_b.pd);
	}
	ibv_close_device(dev_a.ctx);
	ibv_close_device(dev_b.ctx);
	summary(t0);
	if (removed)
		return 3;
	return failures ? 1 : 0;
}

static void usage(int status)
{
	fprintf(status ? stderr : stdout,
		"usage: sroce-stress -d DEV -g GID -6 GID6 -D PEER_DEV -G PEER_GID -7 PEER_GID6\n"
		"                    [--events N | --forever] [--pairs N] [--only EVENT,...]\n"
		"                    [--seed S] [--gap-ms MS] [--min-ms MS] [--verbose]\n"
		"                    [--removal-ms MS] [--inject data]\n"
		"Events: qp-responder qp-requester mr mw cq sqd reset\n"
		"See the comment at the top of userspace/tools/stress/main.c.\n");
	exit(status);
}

static void parse_only(const char *list)
{
	event_mask = tool_name_mask(list, ev_names, EV_NR, "no event %s");
}

/* The run's seed: --seed, or from the clock. */
static uint64_t seed;

static void set_seed(const char *s)
{
	seed = strtoull(s, NULL, 0);
}

static void inject(const char *what)
{
	if (strcmp(what, "data"))
		tool_die("no fault %s", what);
	inject_data = true;
}

int main(int argc, char **argv)
{
	enum { O_EVENTS = 256, O_FOREVER, O_PAIRS, O_ONLY, O_SEED, O_GAP,
	       O_MIN, O_REMOVAL, O_INJECT };
	const struct tool_opt opts[] = {
		TOOL_STR('d', "dev", &dev_a.name),
		TOOL_NUM('g', "gid", INT, &dev_a.gid_index[0], 1023),
		TOOL_NUM('6', "gid6", INT, &dev_a.gid_index[1], 1023),
		TOOL_STR('D', "peer-dev", &dev_b.name),
		TOOL_NUM('G', "peer-gid", INT, &dev_b.gid_index[0], 1023),
		TOOL_NUM('7', "peer-gid6", INT, &dev_b.gid_index[1], 1023),
		TOOL_NUM(O_EVENTS, "events", ULONG, &events, 100000000),
		TOOL_FLAG(O_FOREVER, "forever", &forever),
		TOOL_NUM(O_PAIRS, "pairs", UINT, &npairs, MAX_PAIRS),
		TOOL_CALL(O_ONLY, "only", parse_only),
		TOOL_CALL(O_SEED, "seed", set_seed),
		TOOL_NUM(O_GAP, "gap-ms", UINT, &gap_ms, 600000),
		TOOL_NUM(O_MIN, "min-ms", ULONG, &min_ms, 86400000),
		TOOL_NUM(O_REMOVAL, "removal-ms", ULONG, &removal_ms, 600000),
		TOOL_FLAG('v', "verbose", &verbose),
		TOOL_CALL(O_INJECT, "inject", inject),
		TOOL_HELP('h', "help"),
	};
	static const enum kind kinds[] = { K_RC, K_RC_SRQ, K_UC, K_UD };
	unsigned int i;

	dev_a.gid_index[0] = dev_a.gid_index[1] = -1;
	dev_b.gid_index[0] = dev_b.gid_index[1] = -1;
	seed = tool_clock_seed();
	if (tool_getopt(argc, argv, opts, ARRAY_SIZE(opts), usage) != argc ||
	    !dev_a.name || !dev_b.name || !npairs ||
	    dev_a.gid_index[0] < 0 || dev_a.gid_index[1] < 0 ||
	    dev_b.gid_index[0] < 0 || dev_b.gid_index[1] < 0)
		usage(2);
	setvbuf(stdout, NULL, _IOLBF, 0);
	rng = seed;
	printf("sroce-stress: seed=%" PRIu64 " pairs=%u events=%s%lu\n", seed,
	       npairs, forever ? "forever, gap " : "", forever ? gap_ms : events);
	dev_open(&dev_a);
	dev_open(&dev_b);
	if (ibv_query_device(dev_a.ctx, &attr_a) ||
	    ibv_query_device(dev_b.ctx, &attr_b))
		tool_die("ibv_query_device failed");
	for (i = 0; i < npairs; i++) {
		struct pair *p = &pairs[i];

		p->n = i;
		p->kind = kinds[i % ARRAY_SIZE(kinds)];
		p->type = p->kind == K_UC ? IBV_QPT_UC :
			  p->kind == K_UD ? IBV_QPT_UD : IBV_QPT_RC;
		p->abuf = aligned_alloc(4096, (A_SIZE + 4095) / 4096 * 4096);
		p->btbuf = aligned_alloc(4096, (B_TSIZE + 4095) / 4096 * 4096);
		p->brbuf = aligned_alloc(4096, (B_RSIZE + 4095) / 4096 * 4096);
		if (!p->abuf || !p->btbuf || !p->brbuf)
			tool_die("out of memory");
	}
	return run();
}
