// SPDX-License-Identifier: GPL-2.0 OR Linux-OpenIB
/*
 * sroce-ringfuzz: a hostile process on its own mmapped rings.
 *
 *   sroce-ringfuzz -d DEV -g GID_INDEX -D PEER_DEV -G PEER_GID_INDEX
 *                  [-c CASE]... [--seed S] [--iterations N] [--first K]
 *                  [--stall S] [--wait-file FILE] [--inject FAULT]
 *                  [--verbose]
 *
 * One process opens two devices (sroce_a and sroce_b of tests/lib.sh) and
 * builds, on DEV, a "fuzzed" QP F with its own CQ (and, at random, an SRQ)
 * connected to a peer QP P on PEER_DEV, and a separate "control" RC pair
 * (its own PDs, CQs and MRs on both devices). It then does to F's rings,
 * which libsroce maps from the kernel (include/uapi/rdma/sroce-abi.h),
 * what a buggy or malicious process could, while F carries real traffic
 * with P and the control pair carries byte-verified traffic:
 *
 *   - producer indices of the SQ, RQ and SRQ moved forwards, backwards and
 *     past the ring; the CQ's consumer index moved backwards and past the
 *     producer; the indices the kernel owns scribbled on (and put back);
 *   - posted WQEs rewritten (opcode, send flags, num_sge, inline_len, SGE
 *     address/length/lkey, ah_num, remote QPN and Q_Key, rkeys, immediate
 *     or invalidate key, window and MR keys of BIND_MW, FLUSH type and
 *     level, ATOMIC_WRITE data, XRC SRQ number);
 *   - WQEs written straight into the ring, past the provider: every
 *     opcode (SEND..SEND_WITH_INV, LOCAL_INV, BIND_MW, FLUSH = 14,
 *     ATOMIC_WRITE = 15, and invalid ones: TSO, DRIVER1, 12, 13, 16, 17,
 *     255, 0xffffffff, random) with every send flag, plausible or random
 *     operands;
 *   - doorbells at random moments. libibverbs cannot post an empty work
 *     request list, so the tool rings them as libsroce does (provider.md):
 *     the uverbs POST_SEND, POST_RECV or POST_SRQ_RECV command with
 *     wr_count 0 written to the context's command fd; and, now and then,
 *     one carrying a work request, which sroce must refuse (EINVAL).
 *
 * Finding the rings. libibverbs hides the provider's structures, so the
 * tool finds the mappings itself: /proc/self/maps before and after each
 * create, matched to the uverbs file by device and inode. A new QP maps
 * its SQ (created with SROCE_QUEUE_NEED_WAKEUP set, as the ABI says) and
 * its RQ (flag clear); a CQ or SRQ one ring. The slot size is found by
 * posting two work requests through libibverbs and looking for their
 * wr_ids; the slot count is the limit the kernel reported (max_send_wr,
 * max_recv_wr, max_wr, cqe), checked against the mapping's length. The
 * provider's own copy of the index it owns (what it last published) is
 * tracked as it posts and polls, so that the tool can put it back.
 *
 * Each random sequence (seeded; its seed is derived from --seed and its
 * number) creates a fresh F/P pair: RC (most), UC or UD, on an RQ or an
 * SRQ, with a hostility level, and runs up to three rounds. A round is 4
 * to 31 random steps (real posts on F and from P, ring operations,
 * doorbells, polls, pauses, control rounds started and finished around
 * them). The ring operations of each level (cumulative):
 *
 *   0  what the kernel must not even notice: free slots (past the
 *      producer) filled with garbage, the indices the kernel owns and the
 *      flags scribbled on (and put back), the CQ's consumer index moved
 *      back by 1 to 3; F's real work requests leave the windows alone and
 *      P sends only into posted receives;
 *   1  posted WQEs rewritten, WQEs written past libsroce (and published),
 *      the CQ's consumer index moved anywhere;
 *   2  producer indices of the SQ, RQ and SRQ moved anywhere: forwards,
 *      backwards, a lap ahead, past the ring, behind the consumer.
 *
 * Then a settle: the indices the process owns are put back where
 * libsroce keeps them, the doorbells rung, both CQs drained. Then F must
 * either
 *
 *   - be in ERR and have said so: an error completion on F's CQ, an errno
 *     from a doorbell of F, or an event (QP_FATAL, QP_REQ_ERR,
 *     QP_ACCESS_ERR, CQ_ERR, SRQ_ERR, or LAST_WQE_REACHED, how a QP on an
 *     SRQ reports ERR) for F, its CQ or its SRQ; failing those, a SEND
 *     posted now must complete in error (flushed). If the SQ's producer
 *     index was never moved (the kernel's view of the ring was never out
 *     of step), that SEND must be flushed in any case. A QP in ERR that
 *     said nothing and whose SQ is out of step (the kernel's consumer
 *     index past libsroce's producer, so nothing posted can ever be
 *     flushed) is "SILENT ERR": the kernel saw the corruption and told no
 *     one; the run fails, naming the first such sequence; or
 *   - be usable: a probe SEND (unique bytes from a separate MR) completes
 *     successfully on F and arrives at P byte for byte. A probe that
 *     fails and leaves F in ERR counts as the first case.
 *
 * At random (one in eight) a round ends without a settle: F and its CQ
 * and SRQ are destroyed mid-flight. Every destroy must return 0. After
 * every sequence the process's objects on both devices, counted with
 * `rdma resource show {qp,cq,mr,pd,srq}` (lines with this process's pid),
 * must be what they were before it. Throughout, the control pair runs
 * rounds of SEND both ways, WRITE, READ and FETCH_ADD with random sizes
 * and bytes, with every completion checked and every byte of both
 * control buffers compared with the expected image; any asynchronous
 * event for a control object fails the run.
 *
 * Named cases (-c; default: all of them, in this order, with the random
 * sequences before the last):
 *
 *   sq-producer-past  producer = consumer + slots + 1, doorbell: F in ERR
 *                     and says so (as above)
 *   sq-producer-behind  producer = consumer - 1, doorbell: the same
 *   sq-producer-lap   F's RQ emptied; a full lap of unsignaled BIND_MW
 *                     unbinds written and published past libsroce, the
 *                     doorbell rung (the kernel runs them), the producer
 *                     put back where libsroce has it: the kernel's
 *                     consumer is now a lap ahead and F must end in ERR
 *                     and say so (there is nothing it can flush)
 *   rq-producer-past  RQ producer + slots + 1, P sends: the same, and
 *                     the evidence includes IBV_EVENT_QP_FATAL (a local
 *                     work queue catastrophic error, IBA 11.6.3.1)
 *   srq-producer-past the same on an SRQ, and IBV_EVENT_SRQ_ERR too
 *   rq-wqe-sge        a posted receive's num_sge set to 1000, P sends: F
 *                     in ERR with evidence
 *   cq-consumer-back  CQ consumer moved back by the ring's size (the CQ
 *                     looks full), F completes a SEND: F in ERR with
 *                     evidence, and the CQ works again once its consumer
 *                     index is put back
 *   cq-consumer-past  CQ consumer = producer + 5: the same
 *   cq-full-flush     F in ERR, its CQ looking full, a ring of WQEs and
 *                     one doorbell: exactly one CQ_ERR, one WQE taken
 *                     (no engine flushing a WQE a run by itself); the
 *                     rest flushed once the CQ has room and the doorbell
 *                     rings again
 *   opcodes           one WQE of each opcode written into an RC SQ with
 *                     plausible operands: each valid one completes (with
 *                     a status of its own), each invalid one (10 to 13,
 *                     16, 17, 0x20 (the kernel's REG_MR), 255,
 *                     0xffffffff) with IBV_WC_LOC_QP_OP_ERR and F in ERR
 *   random            --iterations random sequences (default 50), from
 *                     number --first (default 0) on
 *   sq-producer-back  the known defect: an RC SEND left unacknowledged (P
 *                     in ERR drops it; F's timeout is 4 s), every SQ slot
 *                     rewritten with a BIND_MW unbind of a type 1 window
 *                     and the producer moved to the ring's end, a
 *                     doorbell (the binds execute, the SEND keeps the
 *                     consumer index back), then the producer lowered by
 *                     one and the doorbell rung again. Expected: the
 *                     doorbell returns (a send engine that refetches past
 *                     the producer loops forever in it: an RCU stall or
 *                     soft lockup, and the watchdog below), F ends in ERR
 *                     with an error completion, the SEND's among them
 *                     and not successful, the control pair still passes,
 *                     the destroy works
 *
 * Each named case ends with a control round, the destroy of F and P and
 * a check that nothing of them is left.
 *
 * Options:
 *   --seed S          the run's seed (default: SROCE_RINGFUZZ_SEED, else
 *                     from the clock); printed first. A sequence's seed
 *                     is a function of S and its number only, so
 *                     "--seed S -c random --first K --iterations 1"
 *                     repeats sequence K (the same operations; the
 *                     kernel's timing may differ)
 *   --iterations N    random sequences (default SROCE_RINGFUZZ_ITERATIONS,
 *                     else 50)
 *   --stall S         the watchdog: fail if the worker makes no progress
 *                     for S seconds (default 30), e.g. a doorbell that
 *                     never returns; it names the step that hung
 *   --wait-file FILE  after destroying everything and closing both
 *                     devices, print "closed" and wait (up to 120 s) for
 *                     FILE to exist, so a test can look at the devices
 *                     while the process lives
 *   --verbose         print every step (and index moves) as it is done
 *   --inject FAULT    make one check fail on purpose, to show it can:
 *                     control (one byte of the control image), probe
 *                     (one byte of the probe's expected bytes), leak (one
 *                     CQ of the first sequence is not destroyed), stall
 *                     (the worker sleeps past the watchdog), evidence
 *                     (no error completion, errno or event of F counts)
 *
 * Output: one line per check of a named case ("CASE CHECK expected X got
 * Y ok|FAIL"), one line per random sequence ("seq N seed S RC srq
 * hostility 1: round 1: 17 steps ... -> usable"), "FAIL:" lines for what
 * went wrong, and
 *
 *   sroce-ringfuzz: seed=S sequences=N usable=U err=E silent=S
 *   destroyed=D ring_ops=R doorbells=B control_rounds=C checks=K
 *   failures=F time=T
 *
 * Exit status: 0 if nothing failed, 1 if something did (or the watchdog
 * fired), 2 for a usage or setup error. A parent process is the watchdog;
 * the worker, its child, does all the verbs work.
 */
#include "ringfuzz.h"

struct tool_report rep = {
	.cur = "setup", .case_w = 20, .what_w = 46, .val_w = 24, .bad = "FAIL",
};
bool inject_control, inject_probe, inject_leak, inject_stall,
	    inject_evidence;
uint64_t R, data_rng;
struct progress *prog;
unsigned int stall_s = 30;
bool verbose;
struct dev dev_a, dev_b;
struct control ctl;
struct world w;
unsigned int total_ring_ops, total_doorbells;
struct counts base_counts;
uint64_t run_seed;
unsigned int n_seq, n_usable, n_err, n_destroyed, first_seq;
unsigned int n_silent, first_silent;
unsigned int iterations = 50;
const char *wait_file;

/* Without -c, all of them, in this order. */
static const struct tool_case case_list[] = {
	{ "sq-producer-past", case_sq_producer_past, true },
	{ "sq-producer-behind", case_sq_producer_behind, true },
	{ "sq-producer-lap", case_sq_producer_lap, true },
	{ "rq-producer-past", case_rq_producer_past, true },
	{ "srq-producer-past", case_srq_producer_past, true },
	{ "rq-wqe-sge", case_rq_wqe_sge, true },
	{ "cq-consumer-back", case_cq_consumer_back, true },
	{ "cq-consumer-past", case_cq_consumer_past, true },
	{ "cq-full-flush", case_cq_full_flush, true },
	{ "opcodes", case_opcodes, true },
	{ "random", case_random, true },
	/* Last: before the fix it never returns. */
	{ "sq-producer-back", case_sq_producer_back, true },
};
static bool chosen[ARRAY_SIZE(case_list)];
static struct tool_cases cases = {
	.list = case_list, .n = ARRAY_SIZE(case_list), .chosen = chosen,
};

/* Each named case starts with its own stream of decisions. */
static void start_case(unsigned int i)
{
	rep.cur = case_list[i].name;
	R = run_seed ^ (i + 1);
}

static int worker(void)
{
	uint64_t t0 = tool_now_ms();
	struct counts c;
	char got[128];
	struct stat st;

	beat("opening the devices");
	dev_open(&dev_a);
	dev_open(&dev_b);
	data_rng = run_seed;
	world_setup();
	control_setup();
	control_round();
	if (!count_resources(&base_counts))
		tool_die("rdma resource show failed");
	counts_equal(&base_counts, &base_counts, got, sizeof(got));
	printf("sroce-ringfuzz: this process holds %s\n", got);

	tool_case_run(&cases, start_case);

	rep.cur = "teardown";
	beat("teardown");
	world_teardown();
	control_teardown();
	memset(&base_counts, 0, sizeof(base_counts));
	check_resources("the teardown");
	if (ibv_close_device(dev_a.ctx) || ibv_close_device(dev_b.ctx))
		fail("ibv_close_device failed");
	if (count_resources(&c))
		counts_equal(&c, &c, got, sizeof(got));
	printf("closed\n");
	if (wait_file) {
		uint64_t start = tool_now_ms();

		while (stat(wait_file, &st)) {
			beat("waiting for %s", wait_file);
			if (tool_now_ms() - start > 120000) {
				fail("%s did not appear in 120 s", wait_file);
				break;
			}
			tool_sleep_us(100000);
		}
	}
	printf("sroce-ringfuzz: seed=%" PRIu64 " sequences=%u usable=%u err=%u "
	       "silent=%u destroyed=%u ring_ops=%u doorbells=%u "
	       "control_rounds=%u checks=%u failures=%u time=%.1fs\n", run_seed,
	       n_seq, n_usable, n_err, n_silent, n_destroyed, total_ring_ops,
	       total_doorbells, ctl.rounds, rep.checks, rep.failures,
	       (tool_now_ms() - t0) / 1000.0);
	return rep.failures ? 1 : 0;
}

static void usage(int status)
{
	FILE *f = status ? stderr : stdout;

	fprintf(f,
		"usage: sroce-ringfuzz -d DEV -g GID_INDEX -D PEER_DEV -G PEER_GID_INDEX\n"
		"                      [-c CASE]... [--seed S] [--iterations N] [--first K]\n"
		"                      [--stall S] [--wait-file FILE] [--inject FAULT]\n"
		"                      [--verbose]\n"
		"Cases:");
	tool_case_list(&cases, f);
	fprintf(f, "\nFaults: control probe leak stall evidence\n"
		"See the comment at the top of userspace/tools/ringfuzz/main.c.\n");
	exit(status);
}

static void inject(const char *what)
{
	static const char *const faults[] = {
		"control", "probe", "leak", "stall", "evidence",
	};
	bool *const flags[] = {
		&inject_control, &inject_probe, &inject_leak, &inject_stall,
		&inject_evidence,
	};
	int i = tool_name_index(faults, ARRAY_SIZE(faults), what);

	if (i < 0)
		tool_die("no fault %s", what);
	*flags[i] = true;
}

static void set_seed(const char *s)
{
	run_seed = strtoull(s, NULL, 0);
}

static void choose_case(const char *name)
{
	tool_case_choose(&cases, name);
}

int main(int argc, char **argv)
{
	enum { O_SEED = 256, O_ITERATIONS, O_FIRST, O_STALL, O_WAIT, O_INJECT };
	const struct tool_opt opts[] = {
		TOOL_OPTS_DEV_PAIR(&dev_a, &dev_b),
		TOOL_CALL('c', "case", choose_case),
		TOOL_CALL(O_SEED, "seed", set_seed),
		TOOL_NUM(O_ITERATIONS, "iterations", UINT, &iterations, 1000000),
		TOOL_NUM(O_FIRST, "first", UINT, &first_seq, 1000000000),
		TOOL_NUM(O_STALL, "stall", UINT, &stall_s, 3600),
		TOOL_STR(O_WAIT, "wait-file", &wait_file),
		TOOL_CALL(O_INJECT, "inject", inject),
		TOOL_FLAG('v', "verbose", &verbose),
		TOOL_HELP('h', "help"),
	};
	const char *env;
	pid_t pid;

	run_seed = tool_clock_seed();
	env = getenv("SROCE_RINGFUZZ_SEED");
	if (env && *env)
		run_seed = strtoull(env, NULL, 0);
	env = getenv("SROCE_RINGFUZZ_ITERATIONS");
	if (env && *env)
		iterations = tool_number(env, 1000000);
	dev_a.gid_index = dev_b.gid_index = -1;
	if (tool_getopt(argc, argv, opts, ARRAY_SIZE(opts), usage) != argc ||
	    !dev_a.name || !dev_b.name ||
	    dev_a.gid_index < 0 || dev_b.gid_index < 0 || !stall_s)
		usage(2);
	setvbuf(stdout, NULL, _IOLBF, 0);
	printf("sroce-ringfuzz: seed=%" PRIu64 " iterations=%u (repeat with "
	       "--seed %" PRIu64 " or SROCE_RINGFUZZ_SEED=%" PRIu64 ")\n",
	       run_seed, iterations, run_seed, run_seed);

	prog = mmap(NULL, sizeof(*prog), PROT_READ | PROT_WRITE,
		    MAP_SHARED | MAP_ANONYMOUS, -1, 0);
	if (prog == MAP_FAILED)
		tool_die("mmap: %s", strerror(errno));
	beat("starting");
	pid = fork();
	if (pid < 0)
		tool_die("fork: %s", strerror(errno));
	if (!pid) {
		pin(false);
		exit(worker());
	}
	pin(true);
	return watch(pid);
}
