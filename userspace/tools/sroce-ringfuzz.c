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
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <sched.h>
#include <getopt.h>
#include <inttypes.h>
#include <signal.h>
#include <spawn.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include <rdma/ib_user_verbs.h>

#include "../../include/uapi/rdma/sroce-abi.h"
#include "tool.h"

extern char **environ;

#define F_BUF_SIZE	65536		/* F's MR: sources, targets, receives */
#define F_RECV_OFF	32768		/* F's receive slots start here */
#define F_RECV_SLOT	2048
#define P_TGT_SIZE	65536		/* P's target of WRITE, READ, atomics */
#define P_RECV_SLOTS	32
#define P_RECV_SLOT	4096
#define P_SRC_SIZE	16384
#define P_BUF_SIZE	(P_TGT_SIZE + P_RECV_SLOTS * P_RECV_SLOT + P_SRC_SIZE)
#define PROBE_MAX	1024		/* bytes of a probe SEND */
#define GRH_SIZE	40
#define F_SQ_WR		16
#define F_RQ_WR		16
#define F_SGE		4
#define F_INLINE	64
#define F_CQE		64
#define P_CQE		256
#define P_RECV_KEEP	16		/* receives P keeps posted */
#define QKEY		0x11111111
#define WAIT_MS		15000		/* any single wait for completions */

#define C_BUF_SIZE	65536		/* each control buffer */
#define C_PART		16384		/* four parts of it, see ctl */

/* wr_id tags, so that completions tell what they are. */
#define TAG_REAL	0x5245410000000000ULL	/* a post through libibverbs */
#define TAG_RAW		0x5241570000000000ULL	/* written into the ring */
#define TAG_DISC	0x4449530000000000ULL	/* ring discovery */
#define TAG_PROBE	0x50524f0000000000ULL
#define TAG_PRECV	0x5052430000000000ULL	/* P's receives */
#define TAG_FRECV	0x4652430000000000ULL	/* F's receives */
#define TAG_MASK	0xffffff0000000000ULL

/* ------------------------------------------------------------------ */
/* Small helpers */

static unsigned int checks, failures;
static const char *cur_case = "setup";
static bool inject_control, inject_probe, inject_leak, inject_stall,
	    inject_evidence;

static uint64_t now_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec * 1000ULL + ts.tv_nsec / 1000000;
}

static void sleep_us(unsigned int us)
{
	struct timespec ts = { us / 1000000, (us % 1000000) * 1000L };

	nanosleep(&ts, NULL);
}

/* splitmix64: small, fast, and every seed gives a good stream. */
struct rng {
	uint64_t s;
};

static uint64_t rng_next(struct rng *r)
{
	uint64_t z = (r->s += 0x9e3779b97f4a7c15ULL);

	z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
	z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
	return z ^ (z >> 31);
}

/* The fuzzing decisions of the current sequence; data bytes elsewhere. */
static struct rng R, data_rng;

static uint32_t rnd(uint32_t n)
{
	return n ? rng_next(&R) % n : 0;
}

static bool chance(unsigned int percent)
{
	return rnd(100) < percent;
}

static void fill_random(struct rng *r, void *buf, size_t len)
{
	uint8_t *p = buf;
	uint64_t v = 0;
	size_t i;

	for (i = 0; i < len; i++) {
		if (!(i % 8))
			v = rng_next(r);
		p[i] = v >> (8 * (i % 8));
	}
}

static void fail(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
static void fail(const char *fmt, ...)
{
	va_list ap;

	failures++;
	printf("FAIL: %s: ", cur_case);
	va_start(ap, fmt);
	vprintf(fmt, ap);
	va_end(ap);
	putchar('\n');
}

static void info(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
static void info(const char *fmt, ...)
{
	va_list ap;

	printf("%s: ", cur_case);
	va_start(ap, fmt);
	vprintf(fmt, ap);
	va_end(ap);
	putchar('\n');
}

/* One check of a named case: @want and @got as text. */
static bool check(const char *what, const char *want, const char *got)
{
	bool ok = !strcmp(want, got);

	checks++;
	if (!ok)
		failures++;
	printf("%-20s %-46s expected %-24s got %-24s %s\n", cur_case, what,
	       want, got, ok ? "ok" : "FAIL");
	return ok;
}

static bool check_true(const char *what, bool cond, const char *detail)
{
	return check(what, "yes", cond ? "yes" : detail);
}

static const char *state_name(int s)
{
	static const char *const names[] = {
		[IBV_QPS_RESET] = "RESET", [IBV_QPS_INIT] = "INIT",
		[IBV_QPS_RTR] = "RTR", [IBV_QPS_RTS] = "RTS",
		[IBV_QPS_SQD] = "SQD", [IBV_QPS_SQE] = "SQE",
		[IBV_QPS_ERR] = "ERR",
	};

	if (s >= 0 && (unsigned int)s < ARRAY_SIZE(names) && names[s])
		return names[s];
	return "UNKNOWN";
}

static const char *type_name(enum ibv_qp_type t)
{
	return t == IBV_QPT_RC ? "RC" : t == IBV_QPT_UC ? "UC" :
	       t == IBV_QPT_UD ? "UD" : "?";
}

/* ------------------------------------------------------------------ */
/* The watchdog: the parent watches a heartbeat the worker writes. */

struct progress {
	uint64_t beat;			/* now_ms() of the last step */
	char what[200];			/* what the worker is doing */
};

static struct progress *prog;
static unsigned int stall_s = 30;
static bool verbose;

static void beat(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
static void beat(const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(prog->what, sizeof(prog->what), fmt, ap);
	va_end(ap);
	__atomic_store_n(&prog->beat, now_ms(), __ATOMIC_RELEASE);
	if (verbose && !strstr(prog->what, "polling"))
		printf("  %s\n", prog->what);
}

static void alive(void)
{
	__atomic_store_n(&prog->beat, now_ms(), __ATOMIC_RELEASE);
}

/*
 * With two CPUs or more, the watchdog and the worker run on different
 * ones: a worker stuck in the kernel with preemption off (the known
 * defect loops in the doorbell with bottom halves disabled) must not
 * keep its watchdog from running.
 */
static void pin(bool watchdog)
{
	long n = sysconf(_SC_NPROCESSORS_ONLN);
	cpu_set_t set;

	if (n < 2)
		return;
	CPU_ZERO(&set);
	CPU_SET(watchdog ? 0 : n - 1, &set);
	sched_setaffinity(0, sizeof(set), &set);
}

/*
 * Wait for the worker. If its heartbeat stops for stall_s seconds, say
 * what it was doing, kill it and return 1 without waiting for it: a
 * worker stuck in the kernel cannot die.
 */
static int watch(pid_t pid)
{
	int status;
	uint64_t last;

	for (;;) {
		pid_t r = waitpid(pid, &status, WNOHANG);

		if (r == pid) {
			if (WIFEXITED(status))
				return WEXITSTATUS(status);
			printf("sroce-ringfuzz: FAIL: the worker died of signal %d"
			       " while: %s\n", WTERMSIG(status), prog->what);
			return 1;
		}
		last = __atomic_load_n(&prog->beat, __ATOMIC_ACQUIRE);
		if (now_ms() - last > stall_s * 1000ULL) {
			printf("sroce-ringfuzz: FAIL: no progress for %u s while: %s\n",
			       stall_s, prog->what);
			fflush(stdout);
			fprintf(stderr, "sroce-ringfuzz: FAIL: no progress for %u s "
				"while: %s\n", stall_s, prog->what);
			kill(pid, SIGKILL);
			return 1;
		}
		sleep_us(100000);
	}
}

/* ------------------------------------------------------------------ */
/* Devices and events */

struct dev {
	const char *name;
	int gid_index;
	union ibv_gid gid;
	struct ibv_context *ctx;
	enum ibv_mtu mtu;
	dev_t map_dev;			/* the uverbs file, as maps shows it */
	ino_t map_ino;
};

static struct dev dev_a, dev_b;

static void dev_open(struct dev *d)
{
	struct ibv_port_attr port;
	struct stat st;
	int flags;

	d->ctx = tool_open_device(d->name);
	if (ibv_query_port(d->ctx, 1, &port))
		tool_die("%s: ibv_query_port failed", d->name);
	d->mtu = port.active_mtu;
	if (ibv_query_gid(d->ctx, 1, d->gid_index, &d->gid))
		tool_die("%s: ibv_query_gid %d failed", d->name, d->gid_index);
	flags = fcntl(d->ctx->async_fd, F_GETFL);
	if (fcntl(d->ctx->async_fd, F_SETFL, flags | O_NONBLOCK))
		tool_die("%s: fcntl: %s", d->name, strerror(errno));
	if (fstat(d->ctx->cmd_fd, &st))
		tool_die("%s: fstat: %s", d->name, strerror(errno));
	d->map_dev = st.st_dev;
	d->map_ino = st.st_ino;
}

/* ------------------------------------------------------------------ */
/* Rings: finding the provider's mappings */

/**
 * struct ring - one of F's rings, as mapped by libsroce
 * @name: SQ, RQ, SRQ or CQ
 * @hdr: the mapping
 * @data: the first slot
 * @len: the mapping's length
 * @num: slots
 * @mask: @num - 1
 * @es: bytes per slot
 * @shadow: the index this process owns (producer of a work queue,
 *	    consumer of the CQ) as libsroce last published it: where the
 *	    tool puts it back
 * @moved: this process moved that index since the ring was made
 */
struct ring {
	const char *name;
	struct sroce_queue_hdr *hdr;
	uint8_t *data;
	size_t len;
	uint32_t num;
	uint32_t mask;
	uint32_t es;
	uint32_t shadow;
	bool moved;
};

#define MAX_MAPS 256

struct umap {
	uintptr_t start;
	uintptr_t end;
};

/* The mappings of @d's uverbs file in this process. */
static int uverbs_maps(const struct dev *d, struct umap *m)
{
	char line[512];
	FILE *f = fopen("/proc/self/maps", "r");
	int n = 0;

	if (!f)
		tool_die("/proc/self/maps: %s", strerror(errno));
	while (fgets(line, sizeof(line), f)) {
		unsigned long start, end, ino;
		unsigned int maj, min;
		unsigned long long off;
		char perms[8];

		if (sscanf(line, "%lx-%lx %7s %llx %x:%x %lu", &start, &end,
			   perms, &off, &maj, &min, &ino) != 7)
			continue;
		if (makedev(maj, min) != d->map_dev || ino != d->map_ino)
			continue;
		if (n == MAX_MAPS)
			tool_die("more than %d uverbs mappings", MAX_MAPS);
		m[n++] = (struct umap){ start, end };
	}
	fclose(f);
	return n;
}

struct snapshot {
	struct umap m[MAX_MAPS];
	int n;
};

/* The mappings that are in @now and not in @before. */
static int new_maps(const struct dev *d, const struct snapshot *before,
		    struct umap *out, int max)
{
	struct snapshot now;
	int i, j, n = 0;

	now.n = uverbs_maps(d, now.m);
	for (i = 0; i < now.n; i++) {
		for (j = 0; j < before->n; j++)
			if (before->m[j].start == now.m[i].start)
				break;
		if (j < before->n)
			continue;
		if (n == max)
			return max + 1;
		out[n++] = now.m[i];
	}
	return n;
}

static void ring_set_map(struct ring *r, const char *name, struct umap m)
{
	memset(r, 0, sizeof(*r));
	r->name = name;
	r->hdr = (void *)m.start;
	r->data = (uint8_t *)m.start + SROCE_QUEUE_DATA_OFFSET;
	r->len = m.end - m.start;
}

static size_t page_align(size_t n)
{
	size_t page = sysconf(_SC_PAGESIZE);

	return (n + page - 1) / page * page;
}

/* Slots and slot size; @num as the kernel reported, @es found or known. */
static void ring_set_geometry(struct ring *r, uint32_t num, uint32_t es)
{
	if (!num || (num & (num - 1)))
		tool_die("%s: %u slots is not a power of two", r->name, num);
	if (page_align(SROCE_QUEUE_DATA_OFFSET + (size_t)num * es) != r->len)
		tool_die("%s: %u slots of %u bytes do not make a mapping of %zu "
			 "bytes: ring geometry unknown", r->name, num, es, r->len);
	r->num = num;
	r->mask = num - 1;
	r->es = es;
}

static void *slot(const struct ring *r, uint32_t i)
{
	return r->data + (size_t)(i & r->mask) * r->es;
}

/*
 * The slot size of a work queue whose slots @i and @i + 1 hold the
 * wr_ids @id0 and @id1 (a wr_id starts each entry).
 */
static uint32_t find_entry_size(const struct ring *r, uint32_t num, uint32_t i,
				uint64_t id0, uint64_t id1)
{
	uint32_t es;

	for (es = 64; es <= 65536; es += 64) {
		size_t o0 = (size_t)(i & (num - 1)) * es;
		size_t o1 = (size_t)((i + 1) & (num - 1)) * es;
		uint64_t v0, v1;

		if (SROCE_QUEUE_DATA_OFFSET + (size_t)num * es > r->len)
			break;
		memcpy(&v0, r->data + o0, 8);
		memcpy(&v1, r->data + o1, 8);
		if (v0 == id0 && v1 == id1)
			return es;
	}
	tool_die("%s: cannot find the discovery entries in the ring", r->name);
}

static uint32_t load_idx(const uint32_t *p)
{
	return __atomic_load_n(p, __ATOMIC_ACQUIRE);
}

static void store_idx(uint32_t *p, uint32_t v)
{
	__atomic_store_n(p, v, __ATOMIC_RELEASE);
}

/* The index the kernel owns in @r. */
static uint32_t *kernel_idx(struct ring *r, bool cq)
{
	return cq ? &r->hdr->producer : &r->hdr->consumer;
}

/* ------------------------------------------------------------------ */
/* QP plumbing shared by the control pair and F/P */

struct qp_params {
	uint8_t timeout;
	uint8_t retry_cnt;
	uint8_t rnr_retry;
	uint8_t min_rnr_timer;
};

static void modify(struct ibv_qp *qp, struct ibv_qp_attr *a, int mask,
		   const char *to)
{
	int err = ibv_modify_qp(qp, a, mask);

	if (err)
		tool_die("QP %u to %s: %s", qp->qp_num, to, strerror(err));
}

static void set_av(struct ibv_ah_attr *ah, const struct dev *from,
		   const struct dev *to)
{
	memset(ah, 0, sizeof(*ah));
	ah->is_global = 1;
	ah->port_num = 1;
	ah->grh.dgid = to->gid;
	ah->grh.sgid_index = from->gid_index;
	ah->grh.hop_limit = 64;
}

/* RESET to RTS (to INIT only, with @init_only), facing @peer_qpn on @to. */
static void qp_connect(struct ibv_qp *qp, const struct dev *from,
		       const struct dev *to, uint32_t peer_qpn,
		       const struct qp_params *p, bool init_only)
{
	enum ibv_qp_type t = qp->qp_type;
	struct ibv_qp_attr a = {
		.qp_state = IBV_QPS_INIT,
		.port_num = 1,
		.qkey = QKEY,
		.qp_access_flags = IBV_ACCESS_LOCAL_WRITE |
				   IBV_ACCESS_REMOTE_WRITE |
				   (t == IBV_QPT_RC ? IBV_ACCESS_REMOTE_READ |
				    IBV_ACCESS_REMOTE_ATOMIC : 0),
	};
	int mask;

	mask = IBV_QP_STATE | IBV_QP_PKEY_INDEX | IBV_QP_PORT |
	       (t == IBV_QPT_UD ? IBV_QP_QKEY : IBV_QP_ACCESS_FLAGS);
	modify(qp, &a, mask, "INIT");
	if (init_only)
		return;

	memset(&a, 0, sizeof(a));
	a.qp_state = IBV_QPS_RTR;
	mask = IBV_QP_STATE;
	if (t != IBV_QPT_UD) {
		set_av(&a.ah_attr, from, to);
		a.path_mtu = from->mtu < to->mtu ? from->mtu : to->mtu;
		a.dest_qp_num = peer_qpn;
		a.rq_psn = 0x1000;
		mask |= IBV_QP_AV | IBV_QP_PATH_MTU | IBV_QP_DEST_QPN |
			IBV_QP_RQ_PSN;
	}
	if (t == IBV_QPT_RC) {
		a.max_dest_rd_atomic = 4;
		a.min_rnr_timer = p->min_rnr_timer;
		mask |= IBV_QP_MAX_DEST_RD_ATOMIC | IBV_QP_MIN_RNR_TIMER;
	}
	modify(qp, &a, mask, "RTR");

	memset(&a, 0, sizeof(a));
	a.qp_state = IBV_QPS_RTS;
	a.sq_psn = 0x1000;
	mask = IBV_QP_STATE | IBV_QP_SQ_PSN;
	if (t == IBV_QPT_RC) {
		a.timeout = p->timeout;
		a.retry_cnt = p->retry_cnt;
		a.rnr_retry = p->rnr_retry;
		a.max_rd_atomic = 4;
		mask |= IBV_QP_TIMEOUT | IBV_QP_RETRY_CNT | IBV_QP_RNR_RETRY |
			IBV_QP_MAX_QP_RD_ATOMIC;
	}
	modify(qp, &a, mask, "RTS");
}

static int qp_state(struct ibv_qp *qp)
{
	struct ibv_qp_init_attr init;
	struct ibv_qp_attr a;

	if (ibv_query_qp(qp, &a, IBV_QP_STATE, &init))
		return -1;
	return a.qp_state;
}

static struct ibv_mr *reg(struct ibv_pd *pd, void *buf, size_t len, int access)
{
	struct ibv_mr *mr = ibv_reg_mr(pd, buf, len, access);

	if (!mr)
		tool_die("ibv_reg_mr: %s", strerror(errno));
	return mr;
}

static void *alloc_buf(size_t len)
{
	void *p = aligned_alloc(4096, (len + 4095) / 4096 * 4096);

	if (!p)
		tool_die("out of memory");
	memset(p, 0, len);
	return p;
}

/* ------------------------------------------------------------------ */
/* The control pair: byte-verified RC traffic next to the fuzzing */

/*
 * Each control buffer has four parts of C_PART bytes:
 *   a: 0 SEND and WRITE source, 1 receives B's SEND, 2 READ landing,
 *      3 FETCH_ADD result (8 bytes), then untouched
 *   b: 0 receives A's SEND, 1 WRITE target, 2 READ source,
 *      3 FETCH_ADD counter (8 bytes), then B's SEND source from +4096
 * img_a and img_b are what the buffers must hold.
 */
static struct {
	struct ibv_pd *pd_a, *pd_b;
	struct ibv_cq *cq_a, *cq_b;
	struct ibv_qp *qp_a, *qp_b;
	struct ibv_mr *mr_a, *mr_b;
	uint8_t *buf_a, *buf_b, *img_a, *img_b;
	bool in_flight;
	uint64_t started;
	/* the round in flight */
	uint32_t len_s, len_b, off_w, len_w, src_w, off_r, len_r;
	uint64_t add;
	unsigned int rounds;
} ctl;

#define C_SRC_B (3 * C_PART + 4096)

static void control_setup(void)
{
	struct ibv_qp_init_attr init = {
		.qp_type = IBV_QPT_RC,
		.cap = { .max_send_wr = 16, .max_recv_wr = 16,
			 .max_send_sge = 1, .max_recv_sge = 1 },
	};
	struct qp_params p = { .timeout = 14, .retry_cnt = 7, .rnr_retry = 7,
			       .min_rnr_timer = 1 };
	int access = IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_REMOTE_WRITE |
		     IBV_ACCESS_REMOTE_READ | IBV_ACCESS_REMOTE_ATOMIC;

	ctl.pd_a = ibv_alloc_pd(dev_a.ctx);
	ctl.pd_b = ibv_alloc_pd(dev_b.ctx);
	if (!ctl.pd_a || !ctl.pd_b)
		tool_die("control: ibv_alloc_pd: %s", strerror(errno));
	ctl.cq_a = ibv_create_cq(dev_a.ctx, 64, NULL, NULL, 0);
	ctl.cq_b = ibv_create_cq(dev_b.ctx, 64, NULL, NULL, 0);
	if (!ctl.cq_a || !ctl.cq_b)
		tool_die("control: ibv_create_cq: %s", strerror(errno));
	ctl.buf_a = alloc_buf(C_BUF_SIZE);
	ctl.buf_b = alloc_buf(C_BUF_SIZE);
	ctl.img_a = alloc_buf(C_BUF_SIZE);
	ctl.img_b = alloc_buf(C_BUF_SIZE);
	fill_random(&data_rng, ctl.buf_a, C_BUF_SIZE);
	fill_random(&data_rng, ctl.buf_b, C_BUF_SIZE);
	memcpy(ctl.img_a, ctl.buf_a, C_BUF_SIZE);
	memcpy(ctl.img_b, ctl.buf_b, C_BUF_SIZE);
	ctl.mr_a = reg(ctl.pd_a, ctl.buf_a, C_BUF_SIZE, access);
	ctl.mr_b = reg(ctl.pd_b, ctl.buf_b, C_BUF_SIZE, access);
	init.send_cq = init.recv_cq = ctl.cq_a;
	ctl.qp_a = ibv_create_qp(ctl.pd_a, &init);
	init.send_cq = init.recv_cq = ctl.cq_b;
	ctl.qp_b = ibv_create_qp(ctl.pd_b, &init);
	if (!ctl.qp_a || !ctl.qp_b)
		tool_die("control: ibv_create_qp: %s", strerror(errno));
	qp_connect(ctl.qp_a, &dev_a, &dev_b, ctl.qp_b->qp_num, &p, false);
	qp_connect(ctl.qp_b, &dev_b, &dev_a, ctl.qp_a->qp_num, &p, false);
}

static void control_teardown(void)
{
	int err = 0;

	err |= ibv_destroy_qp(ctl.qp_a);
	err |= ibv_destroy_qp(ctl.qp_b);
	err |= ibv_destroy_cq(ctl.cq_a);
	err |= ibv_destroy_cq(ctl.cq_b);
	err |= ibv_dereg_mr(ctl.mr_a);
	err |= ibv_dereg_mr(ctl.mr_b);
	err |= ibv_dealloc_pd(ctl.pd_a);
	err |= ibv_dealloc_pd(ctl.pd_b);
	if (err)
		fail("control: a destroy failed");
}

static void ctl_post_send(struct ibv_qp *qp, struct ibv_mr *mr, uint64_t wr_id,
			  enum ibv_wr_opcode op, uint32_t off, uint32_t len,
			  uint64_t raddr, uint32_t rkey, uint64_t add)
{
	struct ibv_sge sge = {
		.addr = (uintptr_t)mr->addr + off, .length = len, .lkey = mr->lkey,
	};
	struct ibv_send_wr wr = {
		.wr_id = wr_id, .sg_list = &sge, .num_sge = 1, .opcode = op,
		.send_flags = IBV_SEND_SIGNALED,
	}, *bad;
	int err;

	if (op == IBV_WR_ATOMIC_FETCH_AND_ADD) {
		wr.wr.atomic.remote_addr = raddr;
		wr.wr.atomic.rkey = rkey;
		wr.wr.atomic.compare_add = add;
	} else {
		wr.wr.rdma.remote_addr = raddr;
		wr.wr.rdma.rkey = rkey;
	}
	err = ibv_post_send(qp, &wr, &bad);
	if (err)
		tool_die("control: post_send: %s", strerror(err));
}

static void ctl_post_recv(struct ibv_qp *qp, struct ibv_mr *mr, uint32_t off)
{
	struct ibv_sge sge = {
		.addr = (uintptr_t)mr->addr + off, .length = C_PART,
		.lkey = mr->lkey,
	};
	struct ibv_recv_wr wr = { .wr_id = 100, .sg_list = &sge, .num_sge = 1 },
			   *bad;
	int err = ibv_post_recv(qp, &wr, &bad);

	if (err)
		tool_die("control: post_recv: %s", strerror(err));
}

/* Start a round: A sends, writes, reads, adds; B sends. */
static void control_start(void)
{
	uint64_t b_base = (uintptr_t)ctl.buf_b;

	if (ctl.in_flight)
		return;
	beat("%s: control round %u: start", cur_case, ctl.rounds);
	ctl.len_s = rng_next(&data_rng) % (C_PART + 1);
	ctl.len_b = rng_next(&data_rng) % (C_PART - 4096 + 1);
	ctl.len_w = rng_next(&data_rng) % (C_PART / 2 + 1);
	ctl.off_w = rng_next(&data_rng) % (C_PART - ctl.len_w + 1);
	ctl.src_w = rng_next(&data_rng) % (C_PART - ctl.len_w + 1);
	ctl.len_r = rng_next(&data_rng) % (C_PART / 2 + 1);
	ctl.off_r = rng_next(&data_rng) % (C_PART - ctl.len_r + 1);
	ctl.add = rng_next(&data_rng);
	fill_random(&data_rng, ctl.buf_a, C_PART);
	memcpy(ctl.img_a, ctl.buf_a, C_PART);
	fill_random(&data_rng, ctl.buf_b + C_SRC_B, ctl.len_b);
	memcpy(ctl.img_b + C_SRC_B, ctl.buf_b + C_SRC_B, ctl.len_b);
	if (rng_next(&data_rng) % 4 == 0) {
		fill_random(&data_rng, ctl.buf_b + 2 * C_PART, C_PART);
		memcpy(ctl.img_b + 2 * C_PART, ctl.buf_b + 2 * C_PART, C_PART);
	}
	ctl_post_recv(ctl.qp_b, ctl.mr_b, 0);
	ctl_post_recv(ctl.qp_a, ctl.mr_a, C_PART);
	ctl_post_send(ctl.qp_a, ctl.mr_a, 1, IBV_WR_SEND, 0, ctl.len_s, 0, 0, 0);
	ctl_post_send(ctl.qp_a, ctl.mr_a, 2, IBV_WR_RDMA_WRITE, ctl.src_w,
		      ctl.len_w, b_base + C_PART + ctl.off_w, ctl.mr_b->rkey, 0);
	ctl_post_send(ctl.qp_a, ctl.mr_a, 3, IBV_WR_RDMA_READ,
		      2 * C_PART + ctl.off_r, ctl.len_r,
		      b_base + 2 * C_PART + ctl.off_r, ctl.mr_b->rkey, 0);
	ctl_post_send(ctl.qp_a, ctl.mr_a, 4, IBV_WR_ATOMIC_FETCH_AND_ADD,
		      3 * C_PART, 8, b_base + 3 * C_PART, ctl.mr_b->rkey, ctl.add);
	ctl_post_send(ctl.qp_b, ctl.mr_b, 5, IBV_WR_SEND, C_SRC_B, ctl.len_b,
		      0, 0, 0);
	ctl.in_flight = true;
	ctl.started = now_ms();
}

/* The first byte where @buf and @img differ, or -1. */
static long first_diff(const uint8_t *buf, const uint8_t *img, size_t len)
{
	size_t i;

	if (!memcmp(buf, img, len))
		return -1;
	for (i = 0; i < len && buf[i] == img[i]; i++)
		;
	return i;
}

/* Collect the round's 7 completions and check everything. */
static void control_finish(void)
{
	static const struct {
		uint64_t wr_id;
		enum ibv_wc_opcode op;
	} want_a[] = {
		{ 1, IBV_WC_SEND }, { 2, IBV_WC_RDMA_WRITE },
		{ 3, IBV_WC_RDMA_READ }, { 4, IBV_WC_FETCH_ADD },
	};
	unsigned int na = 0, nb = 0, sends_a = 0;
	bool recv_a = false, recv_b = false;
	uint64_t old;
	struct ibv_wc wc;
	long d;

	if (!ctl.in_flight)
		return;
	beat("%s: control round %u: finish", cur_case, ctl.rounds);
	while (na < 5 || nb < 2) {
		int n = 0;

		if (na < 5)
			n = ibv_poll_cq(ctl.cq_a, 1, &wc);
		if (n > 0) {
			na++;
			if (wc.status != IBV_WC_SUCCESS) {
				fail("control: A wr_id %" PRIu64 ": %s", wc.wr_id,
				     ibv_wc_status_str(wc.status));
			} else if (wc.opcode == IBV_WC_RECV) {
				recv_a = true;
				if (wc.byte_len != ctl.len_b)
					fail("control: A received %u bytes, B sent %u",
					     wc.byte_len, ctl.len_b);
			} else if (sends_a < ARRAY_SIZE(want_a) &&
				   (wc.wr_id != want_a[sends_a].wr_id ||
				    wc.opcode != want_a[sends_a].op)) {
				fail("control: A completion %u is wr_id %" PRIu64
				     " opcode %d", sends_a, wc.wr_id, wc.opcode);
				sends_a++;
			} else {
				sends_a++;
			}
			continue;
		}
		n = nb < 2 ? ibv_poll_cq(ctl.cq_b, 1, &wc) : 0;
		if (n > 0) {
			nb++;
			if (wc.status != IBV_WC_SUCCESS)
				fail("control: B wr_id %" PRIu64 ": %s", wc.wr_id,
				     ibv_wc_status_str(wc.status));
			else if (wc.opcode == IBV_WC_RECV) {
				recv_b = true;
				if (wc.byte_len != ctl.len_s)
					fail("control: B received %u bytes, A sent %u",
					     wc.byte_len, ctl.len_s);
			}
			continue;
		}
		if (n < 0 || now_ms() - ctl.started > WAIT_MS) {
			fail("control: round %u: %u of 5 completions on A, %u of 2"
			     " on B after %u ms", ctl.rounds, na, nb, WAIT_MS);
			tool_die("the control pair is broken");
		}
		alive();
	}
	ctl.in_flight = false;
	if (!recv_a || !recv_b)
		fail("control: a receive did not complete");

	/* What the round did to the images. */
	memcpy(ctl.img_b, ctl.img_a, ctl.len_s);
	memcpy(ctl.img_b + C_PART + ctl.off_w, ctl.img_a + ctl.src_w, ctl.len_w);
	memcpy(ctl.img_a + 2 * C_PART + ctl.off_r,
	       ctl.img_b + 2 * C_PART + ctl.off_r, ctl.len_r);
	memcpy(&old, ctl.img_b + 3 * C_PART, 8);
	memcpy(ctl.img_a + 3 * C_PART, &old, 8);
	old += ctl.add;
	memcpy(ctl.img_b + 3 * C_PART, &old, 8);
	memcpy(ctl.img_a + C_PART, ctl.img_b + C_SRC_B, ctl.len_b);
	if (inject_control && ctl.rounds == 3)
		ctl.img_b[C_PART + 17] ^= 0x40;

	d = first_diff(ctl.buf_a, ctl.img_a, C_BUF_SIZE);
	if (d >= 0)
		fail("control: A's buffer differs at byte %ld: %#x, expected %#x",
		     d, ctl.buf_a[d], ctl.img_a[d]);
	d = first_diff(ctl.buf_b, ctl.img_b, C_BUF_SIZE);
	if (d >= 0)
		fail("control: B's buffer differs at byte %ld: %#x, expected %#x",
		     d, ctl.buf_b[d], ctl.img_b[d]);
	if (d >= 0 && inject_control)
		memcpy(ctl.img_b, ctl.buf_b, C_BUF_SIZE);	/* once */
	ctl.rounds++;
}

static void control_round(void)
{
	control_start();
	control_finish();
}

/* ------------------------------------------------------------------ */
/* The fuzzed QP F on DEV and its peer P on PEER_DEV */

/* What lives for the whole run: PDs, MRs and windows of F and P. */
static struct {
	struct ibv_pd *pd_f, *pd_p;
	struct ibv_mr *mr_f, *mr_probe, *mr_p;
	struct ibv_mw *mw1, *mw2;
	uint8_t *buf_f, *buf_probe, *buf_p;
} w;

/**
 * struct fpair - one sequence's F and P
 * @type: the QP type of both
 * @cq: F's CQ, for its SQ and its RQ or SRQ
 * @srq: F's SRQ, or NULL
 * @qp: F
 * @ah: UD: F's address handle for P
 * @pcq, @pqp, @pah: P's CQ, QP and address handle for F
 * @sq, @rq, @cqr: F's rings; @rq is its RQ or its SRQ
 * @ah_num: UD: the AH number libsroce writes in F's WQEs
 * @p_posted: bit n: P's receive slot n is posted
 * @f_slot: the next of F's receive slots
 * @err_cqes, @first_err: error completions of F's work requests
 * @db_errnos, @last_errno: doorbells of F that failed
 * @err_events, @last_event: error events for F, its CQ or SRQ
 * @qp_fatal, @srq_err, @cq_err: how many of them were QP_FATAL (F),
 *	SRQ_ERR and CQ_ERR
 * @probe_*: the probe in flight: its wr_id, bytes, and what became of it
 * @ring_ops, @doorbells, @steps: what this sequence did
 */
struct fpair {
	enum ibv_qp_type type;
	struct ibv_cq *cq;
	struct ibv_srq *srq;
	struct ibv_qp *qp;
	struct ibv_ah *ah;
	struct ibv_cq *pcq;
	struct ibv_qp *pqp;
	struct ibv_ah *pah;
	struct ring sq, rq, cqr;
	uint32_t ah_num;
	uint32_t p_posted;
	unsigned int f_slot;
	unsigned int err_cqes;
	enum ibv_wc_status first_err;
	unsigned int db_errnos;
	int last_errno;
	unsigned int err_events;
	const char *last_event;
	unsigned int qp_fatal, srq_err, cq_err;
	uint64_t probe_id;
	uint32_t probe_len;
	uint8_t probe[PROBE_MAX];
	bool probe_done;
	enum ibv_wc_status probe_status;
	bool probe_arrived;
	unsigned int ring_ops, doorbells, steps;
	unsigned int hostility;
	int f_credit;
	uint64_t wr_seq;
};

static unsigned int total_ring_ops, total_doorbells;

static void world_setup(void)
{
	int access = IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_REMOTE_WRITE |
		     IBV_ACCESS_REMOTE_READ | IBV_ACCESS_REMOTE_ATOMIC;

	w.pd_f = ibv_alloc_pd(dev_a.ctx);
	w.pd_p = ibv_alloc_pd(dev_b.ctx);
	if (!w.pd_f || !w.pd_p)
		tool_die("ibv_alloc_pd: %s", strerror(errno));
	w.buf_f = alloc_buf(F_BUF_SIZE);
	w.buf_probe = alloc_buf(PROBE_MAX);
	w.buf_p = alloc_buf(P_BUF_SIZE);
	w.mr_f = reg(w.pd_f, w.buf_f, F_BUF_SIZE, access | IBV_ACCESS_MW_BIND);
	w.mr_probe = reg(w.pd_f, w.buf_probe, PROBE_MAX, IBV_ACCESS_LOCAL_WRITE);
	w.mr_p = reg(w.pd_p, w.buf_p, P_BUF_SIZE, access);
	w.mw1 = ibv_alloc_mw(w.pd_f, IBV_MW_TYPE_1);
	w.mw2 = ibv_alloc_mw(w.pd_f, IBV_MW_TYPE_2);
	if (!w.mw1 || !w.mw2)
		tool_die("ibv_alloc_mw: %s", strerror(errno));
}

static void world_teardown(void)
{
	int err;

	err = ibv_dealloc_mw(w.mw1);
	err = err ?: ibv_dealloc_mw(w.mw2);
	err = err ?: ibv_dereg_mr(w.mr_f);
	err = err ?: ibv_dereg_mr(w.mr_probe);
	err = err ?: ibv_dereg_mr(w.mr_p);
	err = err ?: ibv_dealloc_pd(w.pd_f);
	err = err ?: ibv_dealloc_pd(w.pd_p);
	if (err)
		fail("destroying the PDs, MRs and windows: %s", strerror(err));
}

/* Asynchronous events: for F, its CQ or SRQ, evidence; for control, fatal. */
static void drain_events(struct fpair *fp)
{
	struct dev *devs[] = { &dev_a, &dev_b };
	struct ibv_async_event ev;
	unsigned int i;

	for (i = 0; i < ARRAY_SIZE(devs); i++) {
		while (!ibv_get_async_event(devs[i]->ctx, &ev)) {
			enum ibv_event_type t = ev.event_type;
			/* LAST_WQE_REACHED: how a QP on an SRQ says ERR. */
			bool err = t == IBV_EVENT_QP_FATAL ||
				   t == IBV_EVENT_QP_REQ_ERR ||
				   t == IBV_EVENT_QP_ACCESS_ERR ||
				   t == IBV_EVENT_CQ_ERR ||
				   t == IBV_EVENT_SRQ_ERR ||
				   t == IBV_EVENT_QP_LAST_WQE_REACHED;
			bool mine = fp && ((t == IBV_EVENT_CQ_ERR ?
					    ev.element.cq == fp->cq :
					    t == IBV_EVENT_SRQ_ERR ||
					    t == IBV_EVENT_SRQ_LIMIT_REACHED ?
					    ev.element.srq == fp->srq :
					    ev.element.qp == fp->qp));
			bool control = t == IBV_EVENT_CQ_ERR ?
				       ev.element.cq == ctl.cq_a ||
				       ev.element.cq == ctl.cq_b :
				       ev.element.qp == ctl.qp_a ||
				       ev.element.qp == ctl.qp_b;

			if (control && t != IBV_EVENT_COMM_EST)
				fail("control: asynchronous event %s",
				     tool_event_name(t));
			if (mine && err) {
				fp->err_events++;
				fp->last_event = tool_event_name(t);
				fp->qp_fatal += t == IBV_EVENT_QP_FATAL;
				fp->srq_err += t == IBV_EVENT_SRQ_ERR;
				fp->cq_err += t == IBV_EVENT_CQ_ERR;
			}
			ibv_ack_async_event(&ev);
		}
	}
}

/* ------------------------------------------------------------------ */
/* Doorbells, as libsroce rings them (provider.md) */

/* Write one uverbs command; 0 or the errno. */
static int uverbs_write(struct ibv_context *ctx, const void *cmd, size_t len)
{
	ssize_t n = write(ctx->cmd_fd, cmd, len);

	if (n == (ssize_t)len)
		return 0;
	return n < 0 ? errno : EIO;
}

/* POST_SEND with no work request; with @bogus, one that sroce refuses. */
static int db_send(struct ibv_qp *qp, bool bogus)
{
	struct {
		struct ib_uverbs_cmd_hdr hdr;
		struct ib_uverbs_post_send cmd;
		struct ib_uverbs_send_wr wr;
	} c;
	struct ib_uverbs_post_send_resp resp;
	size_t len = bogus ? sizeof(c) : sizeof(c.hdr) + sizeof(c.cmd);

	memset(&c, 0, sizeof(c));
	c.hdr.command = IB_USER_VERBS_CMD_POST_SEND;
	c.hdr.in_words = len / 4;
	c.hdr.out_words = sizeof(resp) / 4;
	c.cmd.response = (uintptr_t)&resp;
	c.cmd.qp_handle = qp->handle;
	c.cmd.wqe_size = sizeof(struct ib_uverbs_send_wr);
	if (bogus) {
		c.cmd.wr_count = 1;
		c.wr.wr_id = TAG_RAW | 0xdb;
		c.wr.opcode = IB_UVERBS_WR_SEND;
		c.wr.send_flags = IBV_SEND_SIGNALED;
	}
	return uverbs_write(qp->context, &c, len);
}

static int db_recv(struct ibv_qp *qp)
{
	struct {
		struct ib_uverbs_cmd_hdr hdr;
		struct ib_uverbs_post_recv cmd;
	} c;
	struct ib_uverbs_post_recv_resp resp;

	memset(&c, 0, sizeof(c));
	c.hdr.command = IB_USER_VERBS_CMD_POST_RECV;
	c.hdr.in_words = sizeof(c) / 4;
	c.hdr.out_words = sizeof(resp) / 4;
	c.cmd.response = (uintptr_t)&resp;
	c.cmd.qp_handle = qp->handle;
	c.cmd.wqe_size = sizeof(struct ib_uverbs_recv_wr);
	return uverbs_write(qp->context, &c, sizeof(c));
}

static int db_srq(struct ibv_srq *srq)
{
	struct {
		struct ib_uverbs_cmd_hdr hdr;
		struct ib_uverbs_post_srq_recv cmd;
	} c;
	struct ib_uverbs_post_srq_recv_resp resp;

	memset(&c, 0, sizeof(c));
	c.hdr.command = IB_USER_VERBS_CMD_POST_SRQ_RECV;
	c.hdr.in_words = sizeof(c) / 4;
	c.hdr.out_words = sizeof(resp) / 4;
	c.cmd.response = (uintptr_t)&resp;
	c.cmd.srq_handle = srq->handle;
	c.cmd.wqe_size = sizeof(struct ib_uverbs_recv_wr);
	return uverbs_write(srq->context, &c, sizeof(c));
}

/* Ring F's send doorbell; a failure is evidence of an error on F. */
static void ring_sq(struct fpair *fp)
{
	int err;

	beat("%s: SQ doorbell of QP %u", cur_case, fp->qp->qp_num);
	err = db_send(fp->qp, false);
	fp->doorbells++;
	if (err) {
		fp->db_errnos++;
		fp->last_errno = err;
	}
	alive();
}

static void ring_rq(struct fpair *fp)
{
	int err;

	beat("%s: %s doorbell of QP %u", cur_case, fp->srq ? "SRQ" : "RQ",
	     fp->qp->qp_num);
	err = fp->srq ? db_srq(fp->srq) : db_recv(fp->qp);
	fp->doorbells++;
	if (err) {
		fp->db_errnos++;
		fp->last_errno = err;
	}
	alive();
}

/* ------------------------------------------------------------------ */
/* Real work requests, through libibverbs and libsroce */

/* After a post that published something: where libsroce's index is. */
static void note_published(struct ring *r)
{
	r->shadow = load_idx(&r->hdr->producer);
}

/* ret and bad_wr of a post: a failed doorbell is evidence. */
static void note_post(struct fpair *fp, struct ring *r, int ret, bool none_bad,
		      bool posted)
{
	if (posted)
		note_published(r);
	if (ret && none_bad) {
		fp->db_errnos++;
		fp->last_errno = ret;
	}
}

static void f_post_recv(struct fpair *fp, uint64_t wr_id)
{
	struct ibv_sge sge = {
		.addr = (uintptr_t)w.buf_f + F_RECV_OFF +
			(fp->f_slot++ % 16) * F_RECV_SLOT,
		.length = F_RECV_SLOT,
		.lkey = w.mr_f->lkey,
	};
	struct ibv_recv_wr wr = { .wr_id = wr_id, .sg_list = &sge, .num_sge = 1 },
			   *bad = NULL;
	int ret;

	beat("%s: post_recv on QP %u", cur_case, fp->qp->qp_num);
	if (fp->srq)
		ret = ibv_post_srq_recv(fp->srq, &wr, &bad);
	else
		ret = ibv_post_recv(fp->qp, &wr, &bad);
	note_post(fp, &fp->rq, ret, !bad, !ret || bad != &wr);
	fp->f_credit += !ret;
}

/* P keeps its receive slots posted. */
static void p_replenish(struct fpair *fp)
{
	unsigned int n, posted = __builtin_popcount(fp->p_posted);

	for (n = 0; n < P_RECV_SLOTS && posted < P_RECV_KEEP; n++) {
		struct ibv_sge sge = {
			.addr = (uintptr_t)w.buf_p + P_TGT_SIZE + n * P_RECV_SLOT,
			.length = P_RECV_SLOT,
			.lkey = w.mr_p->lkey,
		};
		struct ibv_recv_wr wr = { .wr_id = TAG_PRECV | n,
					  .sg_list = &sge, .num_sge = 1 }, *bad;

		if (fp->p_posted & (1U << n))
			continue;
		if (ibv_post_recv(fp->pqp, &wr, &bad))
			return;		/* P in ERR: nothing to do */
		fp->p_posted |= 1U << n;
		posted++;
	}
}

/* A P receive completed: was it the probe, and were its bytes right? */
static void p_recv_done(struct fpair *fp, const struct ibv_wc *wc)
{
	uint32_t n = wc->wr_id & 0xff, hdr = fp->type == IBV_QPT_UD ? GRH_SIZE : 0;
	const uint8_t *buf;
	uint64_t id;

	if (n >= P_RECV_SLOTS)
		return;
	fp->p_posted &= ~(1U << n);
	if (wc->status != IBV_WC_SUCCESS || !fp->probe_id)
		return;
	buf = w.buf_p + P_TGT_SIZE + n * P_RECV_SLOT + hdr;
	if (wc->byte_len < hdr + 8)
		return;
	memcpy(&id, buf, 8);
	if (id != fp->probe_id)
		return;
	if (wc->byte_len != hdr + fp->probe_len) {
		fail("probe %#" PRIx64 ": P received %u bytes, F sent %u",
		     id, wc->byte_len - hdr, fp->probe_len);
	} else if (memcmp(buf, fp->probe, fp->probe_len)) {
		long d = first_diff(buf, fp->probe, fp->probe_len);

		fail("probe %#" PRIx64 ": byte %ld of %u is %#x, F sent %#x",
		     id, d, fp->probe_len, buf[d], fp->probe[d]);
	}
	fp->probe_arrived = true;
}

static void p_poll(struct fpair *fp)
{
	struct ibv_wc wc[16];
	int i, n;

	n = ibv_poll_cq(fp->pcq, 16, wc);
	for (i = 0; i < n; i++)
		if ((wc[i].wr_id & TAG_MASK) == TAG_PRECV)
			p_recv_done(fp, &wc[i]);
	p_replenish(fp);
}

static void f_poll(struct fpair *fp)
{
	struct ibv_wc wc[16];
	int i, n;

	n = ibv_poll_cq(fp->cq, 16, wc);
	if (n > 0)
		fp->cqr.shadow = load_idx(&fp->cqr.hdr->consumer);
	for (i = 0; i < n; i++) {
		if (fp->probe_id && wc[i].wr_id == fp->probe_id) {
			fp->probe_done = true;
			fp->probe_status = wc[i].status;
		}
		if (wc[i].status != IBV_WC_SUCCESS && !inject_evidence) {
			if (!fp->err_cqes++)
				fp->first_err = wc[i].status;
		}
	}
}

static void poll_all(struct fpair *fp)
{
	beat("%s: polling", cur_case);
	f_poll(fp);
	p_poll(fp);
	drain_events(fp);
}

/* Poll for @ms milliseconds. */
static void poll_for(struct fpair *fp, unsigned int ms)
{
	uint64_t end = now_ms() + ms;

	do {
		poll_all(fp);
		sleep_us(1000);
	} while (now_ms() < end);
}

static uint64_t p_tgt(uint32_t off)
{
	return (uintptr_t)w.buf_p + off;
}

/* One to three valid work requests of F's type, through libibverbs. */
static void f_post_send(struct fpair *fp)
{
	static const enum ibv_wr_opcode rc_ops[] = {
		IBV_WR_SEND, IBV_WR_SEND_WITH_IMM, IBV_WR_RDMA_WRITE,
		IBV_WR_RDMA_WRITE_WITH_IMM, IBV_WR_RDMA_READ,
		IBV_WR_ATOMIC_CMP_AND_SWP, IBV_WR_ATOMIC_FETCH_AND_ADD,
		IBV_WR_BIND_MW, IBV_WR_LOCAL_INV,
	};
	struct ibv_send_wr wr[3], *bad = NULL;
	struct ibv_sge sge[3];
	unsigned int i, n = 1 + rnd(3), nops;
	int ret;

	/* Windows change state: hostility 0 leaves them alone. */
	nops = fp->type == IBV_QPT_UC ? 4 : fp->type == IBV_QPT_UD ? 2 :
	       fp->hostility ? ARRAY_SIZE(rc_ops) : ARRAY_SIZE(rc_ops) - 2;
	memset(wr, 0, sizeof(wr));
	for (i = 0; i < n; i++) {
		enum ibv_wr_opcode op = rc_ops[rnd(nops)];
		uint32_t len = chance(20) ? 0 : 1 + rnd(4096);

		if (fp->type == IBV_QPT_UD && len > 1024)
			len = 1 + rnd(1024);
		wr[i].wr_id = TAG_REAL | ++fp->wr_seq;
		wr[i].opcode = op;
		wr[i].next = i + 1 < n ? &wr[i + 1] : NULL;
		wr[i].send_flags = chance(50) ? IBV_SEND_SIGNALED : 0;
		wr[i].imm_data = rng_next(&R);
		sge[i].addr = (uintptr_t)w.buf_f + rnd(F_RECV_OFF - 4096);
		sge[i].length = len;
		sge[i].lkey = w.mr_f->lkey;
		wr[i].sg_list = &sge[i];
		wr[i].num_sge = 1;
		if (len <= F_INLINE && chance(30) &&
		    op != IBV_WR_RDMA_READ && op != IBV_WR_ATOMIC_CMP_AND_SWP &&
		    op != IBV_WR_ATOMIC_FETCH_AND_ADD)
			wr[i].send_flags |= IBV_SEND_INLINE;
		switch (op) {
		case IBV_WR_RDMA_WRITE:
		case IBV_WR_RDMA_WRITE_WITH_IMM:
		case IBV_WR_RDMA_READ:
			wr[i].wr.rdma.remote_addr = p_tgt(rnd(P_TGT_SIZE - len));
			wr[i].wr.rdma.rkey = w.mr_p->rkey;
			break;
		case IBV_WR_ATOMIC_CMP_AND_SWP:
		case IBV_WR_ATOMIC_FETCH_AND_ADD:
			sge[i].length = 8;
			sge[i].addr &= ~7ULL;
			wr[i].wr.atomic.remote_addr = p_tgt(rnd(P_TGT_SIZE / 8) * 8);
			wr[i].wr.atomic.rkey = w.mr_p->rkey;
			wr[i].wr.atomic.compare_add = rng_next(&R);
			wr[i].wr.atomic.swap = rng_next(&R);
			break;
		case IBV_WR_BIND_MW:
			wr[i].num_sge = 0;
			wr[i].bind_mw.mw = w.mw2;
			wr[i].bind_mw.rkey = ibv_inc_rkey(w.mw2->rkey);
			wr[i].bind_mw.bind_info.mr = w.mr_f;
			wr[i].bind_mw.bind_info.addr = (uintptr_t)w.buf_f;
			wr[i].bind_mw.bind_info.length = chance(30) ? 0 : 4096;
			wr[i].bind_mw.bind_info.mw_access_flags =
				IBV_ACCESS_REMOTE_WRITE;
			break;
		case IBV_WR_LOCAL_INV:
			wr[i].num_sge = 0;
			wr[i].invalidate_rkey = w.mw2->rkey;
			break;
		default:
			break;
		}
		if (fp->type == IBV_QPT_UD) {
			wr[i].wr.ud.ah = fp->ah;
			wr[i].wr.ud.remote_qpn = fp->pqp->qp_num;
			wr[i].wr.ud.remote_qkey = QKEY;
		}
	}
	beat("%s: post_send of %u on QP %u", cur_case, n, fp->qp->qp_num);
	ret = ibv_post_send(fp->qp, wr, &bad);
	note_post(fp, &fp->sq, ret, !bad, !ret || bad != wr);
	for (i = 0; i < n; i++)
		if (wr[i].opcode == IBV_WR_BIND_MW && (!bad || &wr[i] < bad))
			w.mw2->rkey = wr[i].bind_mw.rkey;
}

/* P sends to F: SEND, SEND_WITH_IMM, or (RC, UC) WRITE_WITH_IMM. */
static void p_post_send(struct fpair *fp)
{
	struct ibv_sge sge = {
		.addr = (uintptr_t)w.buf_p + P_TGT_SIZE + P_RECV_SLOTS * P_RECV_SLOT,
		.length = rnd(1025),
		.lkey = w.mr_p->lkey,
	};
	struct ibv_send_wr wr = {
		.wr_id = TAG_REAL | ++fp->wr_seq, .sg_list = &sge, .num_sge = 1,
		.send_flags = IBV_SEND_SIGNALED, .imm_data = rng_next(&R),
	}, *bad;

	/* Hostility 0 keeps P from running into RNR and its retry limit. */
	if (!fp->hostility && fp->f_credit <= 0) {
		f_post_recv(fp, TAG_FRECV | ++fp->wr_seq);
		return;
	}
	fp->f_credit--;
	switch (rnd(fp->type == IBV_QPT_UD ? 2 : 3)) {
	case 0:
		wr.opcode = IBV_WR_SEND;
		break;
	case 1:
		wr.opcode = IBV_WR_SEND_WITH_IMM;
		break;
	default:
		wr.opcode = IBV_WR_RDMA_WRITE_WITH_IMM;
		wr.wr.rdma.remote_addr = (uintptr_t)w.buf_f + rnd(F_RECV_OFF - 1024);
		wr.wr.rdma.rkey = w.mr_f->rkey;
		break;
	}
	if (fp->type == IBV_QPT_UD) {
		wr.wr.ud.ah = fp->pah;
		wr.wr.ud.remote_qpn = fp->qp->qp_num;
		wr.wr.ud.remote_qkey = QKEY;
	}
	beat("%s: P posts to QP %u", cur_case, fp->qp->qp_num);
	(void)ibv_post_send(fp->pqp, &wr, &bad);
}

/* ------------------------------------------------------------------ */
/* Building and tearing down a pair, and finding F's rings */

static struct ibv_ah *make_ah(struct ibv_pd *pd, const struct dev *from,
			      const struct dev *to)
{
	struct ibv_ah_attr a;
	struct ibv_ah *ah;

	set_av(&a, from, to);
	ah = ibv_create_ah(pd, &a);
	if (!ah)
		tool_die("ibv_create_ah: %s", strerror(errno));
	return ah;
}

/* Wait until F's CQ has given @want completions; return how many. */
static unsigned int f_wait(struct fpair *fp, struct ibv_wc *wc, unsigned int want)
{
	uint64_t start = now_ms();
	unsigned int got = 0;

	while (got < want && now_ms() - start < WAIT_MS) {
		int n = ibv_poll_cq(fp->cq, want - got, wc + got);

		if (n < 0)
			break;
		got += n;
		p_poll(fp);
		alive();
		if (!n)
			sleep_us(500);
	}
	if (got)
		fp->cqr.shadow = load_idx(&fp->cqr.hdr->consumer);
	return got;
}

/*
 * Find the slot size of F's RQ (or SRQ) and SQ by posting two work
 * requests to each, and check the CQ's slots with their completions.
 */
static void discover(struct fpair *fp, uint32_t sq_num, uint32_t rq_num)
{
	struct ibv_send_wr swr[2], *bad;
	uint32_t i0, c0 = fp->cqr.shadow;
	struct ibv_wc wc[2];
	uint64_t id;
	int k, ret;

	i0 = load_idx(&fp->rq.hdr->producer);
	f_post_recv(fp, TAG_DISC | 0);
	f_post_recv(fp, TAG_DISC | 1);
	ring_set_geometry(&fp->rq, rq_num,
			  find_entry_size(&fp->rq, rq_num, i0, TAG_DISC | 0,
					  TAG_DISC | 1));
	fp->rq.shadow = load_idx(&fp->rq.hdr->producer);

	i0 = load_idx(&fp->sq.hdr->producer);
	memset(swr, 0, sizeof(swr));
	for (k = 0; k < 2; k++) {
		swr[k].wr_id = TAG_DISC | (2 + k);
		swr[k].opcode = IBV_WR_SEND;
		swr[k].send_flags = IBV_SEND_SIGNALED;
		swr[k].next = k ? NULL : &swr[1];
		swr[k].wr.ud.ah = fp->ah;
		swr[k].wr.ud.remote_qpn = fp->pqp->qp_num;
		swr[k].wr.ud.remote_qkey = QKEY;
	}
	ret = ibv_post_send(fp->qp, swr, &bad);
	if (ret)
		tool_die("discovery SENDs: %s", strerror(ret));
	ring_set_geometry(&fp->sq, sq_num,
			  find_entry_size(&fp->sq, sq_num, i0, TAG_DISC | 2,
					  TAG_DISC | 3));
	note_published(&fp->sq);
	if (fp->type == IBV_QPT_UD)
		memcpy(&fp->ah_num, (uint8_t *)slot(&fp->sq, i0) +
		       offsetof(struct sroce_send_wqe, wr.ud.ah_num), 4);

	if (f_wait(fp, wc, 2) != 2)
		tool_die("discovery SENDs did not complete");
	for (k = 0; k < 2; k++) {
		if (wc[k].status != IBV_WC_SUCCESS)
			tool_die("discovery SEND: %s",
				 ibv_wc_status_str(wc[k].status));
		memcpy(&id, slot(&fp->cqr, c0 + k), 8);
		if (id != wc[k].wr_id)
			tool_die("CQ: the completion of wr_id %#" PRIx64
				 " is not in slot %u", wc[k].wr_id, c0 + k);
	}
}

/*
 * A fresh pair: F on DEV with its own CQ (and SRQ), P on PEER_DEV,
 * connected, P's receives posted, F's rings found.
 */
static void pair_up(struct fpair *fp, enum ibv_qp_type type, bool use_srq,
		    const struct qp_params *p)
{
	struct ibv_qp_init_attr init = {
		.qp_type = type,
		.cap = { .max_send_wr = F_SQ_WR, .max_recv_wr = F_RQ_WR,
			 .max_send_sge = F_SGE, .max_recv_sge = 2,
			 .max_inline_data = F_INLINE },
	};
	struct ibv_srq_init_attr sa = {
		.attr = { .max_wr = F_RQ_WR, .max_sge = 2 },
	};
	struct ibv_qp_init_attr got;
	struct ibv_qp_attr attr;
	struct snapshot snap;
	uint32_t rq_num;
	struct umap m[3];
	int n, i;

	memset(fp, 0, sizeof(*fp));
	fp->type = type;
	beat("%s: creating a %s pair", cur_case, type_name(type));

	snap.n = uverbs_maps(&dev_a, snap.m);
	fp->cq = ibv_create_cq(dev_a.ctx, F_CQE, NULL, NULL, 0);
	if (!fp->cq)
		tool_die("ibv_create_cq: %s", strerror(errno));
	if (new_maps(&dev_a, &snap, m, 3) != 1)
		tool_die("CQ: not one new mapping");
	ring_set_map(&fp->cqr, "CQ", m[0]);
	ring_set_geometry(&fp->cqr, fp->cq->cqe, sizeof(struct sroce_cqe));
	fp->cqr.shadow = load_idx(&fp->cqr.hdr->consumer);

	if (use_srq) {
		snap.n = uverbs_maps(&dev_a, snap.m);
		fp->srq = ibv_create_srq(w.pd_f, &sa);
		if (!fp->srq)
			tool_die("ibv_create_srq: %s", strerror(errno));
		if (new_maps(&dev_a, &snap, m, 3) != 1)
			tool_die("SRQ: not one new mapping");
		ring_set_map(&fp->rq, "SRQ", m[0]);
		init.srq = fp->srq;
		init.cap.max_recv_wr = 0;
		init.cap.max_recv_sge = 0;
	}

	init.send_cq = init.recv_cq = fp->cq;
	snap.n = uverbs_maps(&dev_a, snap.m);
	fp->qp = ibv_create_qp(w.pd_f, &init);
	if (!fp->qp)
		tool_die("ibv_create_qp: %s", strerror(errno));
	n = new_maps(&dev_a, &snap, m, 3);
	if (n != (use_srq ? 1 : 2))
		tool_die("QP: %d new mappings", n);
	for (i = 0; i < n; i++) {
		bool sq = ((struct sroce_queue_hdr *)m[i].start)->flags &
			  SROCE_QUEUE_NEED_WAKEUP;

		if (sq && !fp->sq.hdr)
			ring_set_map(&fp->sq, "SQ", m[i]);
		else if (!sq && !use_srq && !fp->rq.hdr)
			ring_set_map(&fp->rq, "RQ", m[i]);
		else
			tool_die("QP: cannot tell its SQ from its RQ");
	}
	if (ibv_query_qp(fp->qp, &attr, IBV_QP_CAP, &got))
		tool_die("ibv_query_qp failed");
	rq_num = use_srq ? sa.attr.max_wr : got.cap.max_recv_wr;

	fp->pcq = ibv_create_cq(dev_b.ctx, P_CQE, NULL, NULL, 0);
	if (!fp->pcq)
		tool_die("ibv_create_cq: %s", strerror(errno));
	memset(&init, 0, sizeof(init));
	init.qp_type = type;
	init.send_cq = init.recv_cq = fp->pcq;
	init.cap.max_send_wr = 32;
	init.cap.max_recv_wr = P_RECV_SLOTS;
	init.cap.max_send_sge = 1;
	init.cap.max_recv_sge = 1;
	fp->pqp = ibv_create_qp(w.pd_p, &init);
	if (!fp->pqp)
		tool_die("ibv_create_qp: %s", strerror(errno));

	qp_connect(fp->qp, &dev_a, &dev_b, fp->pqp->qp_num, p, false);
	qp_connect(fp->pqp, &dev_b, &dev_a, fp->qp->qp_num, p, false);
	if (type == IBV_QPT_UD) {
		fp->ah = make_ah(w.pd_f, &dev_a, &dev_b);
		fp->pah = make_ah(w.pd_p, &dev_b, &dev_a);
	}
	p_replenish(fp);
	discover(fp, got.cap.max_send_wr, rq_num);
}

/* Destroy the pair; every destroy must work. */
static void pair_down(struct fpair *fp, bool leak_cq)
{
	int err;

	beat("%s: destroying QP %u", cur_case, fp->qp->qp_num);
	drain_events(fp);
	err = ibv_destroy_qp(fp->qp);
	if (err)
		fail("destroy QP %u (F): %s", fp->qp->qp_num, strerror(err));
	err = ibv_destroy_qp(fp->pqp);
	if (err)
		fail("destroy QP %u (P): %s", fp->pqp->qp_num, strerror(err));
	if (fp->ah && (err = ibv_destroy_ah(fp->ah)))
		fail("destroy F's AH: %s", strerror(err));
	if (fp->pah && (err = ibv_destroy_ah(fp->pah)))
		fail("destroy P's AH: %s", strerror(err));
	if (fp->srq && (err = ibv_destroy_srq(fp->srq)))
		fail("destroy F's SRQ: %s", strerror(err));
	if (!leak_cq && (err = ibv_destroy_cq(fp->cq)))
		fail("destroy F's CQ: %s", strerror(err));
	if ((err = ibv_destroy_cq(fp->pcq)))
		fail("destroy P's CQ: %s", strerror(err));
	alive();
}

/* ------------------------------------------------------------------ */
/* Ring operations */

static uint32_t pick_opcode(void)
{
	static const uint32_t ops[] = {
		IBV_WR_RDMA_WRITE, IBV_WR_RDMA_WRITE_WITH_IMM, IBV_WR_SEND,
		IBV_WR_SEND_WITH_IMM, IBV_WR_RDMA_READ,
		IBV_WR_ATOMIC_CMP_AND_SWP, IBV_WR_ATOMIC_FETCH_AND_ADD,
		IBV_WR_LOCAL_INV, IBV_WR_BIND_MW, IBV_WR_SEND_WITH_INV,
		IBV_WR_TSO, IBV_WR_DRIVER1, 12, 13, SROCE_WR_FLUSH,
		SROCE_WR_ATOMIC_WRITE, 16, 17, 0x20 /* kernel REG_MR */, 255,
		0xffffffff,
	};

	if (chance(4))
		return rng_next(&R);
	return ops[rnd(ARRAY_SIZE(ops))];
}

/* Every combination of the four flags, now and then any bits at all. */
static uint32_t pick_flags(void)
{
	return chance(10) ? (uint32_t)rng_next(&R) : rnd(16);
}

/* A local key: F's MR, a control MR of another PD, nonsense. */
static uint32_t pick_lkey(void)
{
	switch (rnd(8)) {
	case 0:
		return ctl.mr_a->lkey;
	case 1:
		return rng_next(&R);
	case 2:
		return w.mr_f->lkey ^ (1 + rnd(255));
	default:
		return w.mr_f->lkey;
	}
}

/* A remote key: P's MR, a control MR of another PD, windows, nonsense. */
static uint32_t pick_rkey(void)
{
	switch (rnd(8)) {
	case 0:
		return ctl.mr_b->rkey;
	case 1:
		return rng_next(&R);
	case 2:
		return w.mw1->rkey;
	case 3:
		return w.mw2->rkey;
	default:
		return w.mr_p->rkey;
	}
}

static uint64_t pick_laddr(uint32_t len)
{
	switch (rnd(10)) {
	case 0:
		return rng_next(&R);
	case 1:
		return (uintptr_t)w.buf_f + F_BUF_SIZE - rnd(64);
	case 2:
		return (uintptr_t)ctl.buf_a + rnd(C_BUF_SIZE);
	default:
		return (uintptr_t)w.buf_f + rnd(F_BUF_SIZE - (len < 4096 ? len : 4096));
	}
}

static uint64_t pick_raddr(uint32_t len, bool aligned)
{
	uint64_t a;

	switch (rnd(10)) {
	case 0:
		return rng_next(&R);
	case 1:
		return p_tgt(P_TGT_SIZE - rnd(64));
	case 2:
		return (uintptr_t)ctl.buf_b + rnd(C_BUF_SIZE);
	default:
		a = p_tgt(rnd(P_TGT_SIZE - (len < 4096 ? len : 4096)));
		return aligned ? a & ~7ULL : a;
	}
}

static size_t sge_room(const struct ring *r, size_t hdr)
{
	return (r->es - hdr) / sizeof(struct sroce_sge);
}

/* A send WQE of @op, mostly plausible, in @e (one slot, zeroed here). */
static void build_send(struct fpair *fp, uint8_t *e, uint32_t op)
{
	struct sroce_send_wqe *q = (void *)e;
	uint32_t len = chance(15) ? 0 : rnd(2049), nsge = 1, i;

	memset(e, 0, fp->sq.es);
	if (op > SROCE_WR_ATOMIC_WRITE) {
		fill_random(&R, e, fp->sq.es);
		q->opcode = op;
		q->wr_id = TAG_RAW | ++fp->wr_seq;
		return;
	}
	q->wr_id = TAG_RAW | ++fp->wr_seq;
	q->opcode = op;
	q->send_flags = (chance(70) ? SROCE_SEND_SIGNALED : 0) |
			(chance(10) ? SROCE_SEND_FENCE : 0) |
			(chance(10) ? SROCE_SEND_SOLICITED : 0);
	q->ex = rng_next(&R);
	if (fp->type == IBV_QPT_UD) {
		if (len > 1024)
			len = rnd(1025);
		q->wr.ud.ah_num = chance(90) ? fp->ah_num : rng_next(&R);
		q->wr.ud.remote_qpn = chance(90) ? fp->pqp->qp_num : rnd(1 << 24);
		q->wr.ud.remote_qkey = chance(90) ? QKEY : rng_next(&R);
	}
	switch (op) {
	case IBV_WR_RDMA_WRITE:
	case IBV_WR_RDMA_WRITE_WITH_IMM:
	case IBV_WR_RDMA_READ:
		q->wr.rdma.remote_addr = pick_raddr(len, false);
		q->wr.rdma.rkey = pick_rkey();
		break;
	case IBV_WR_ATOMIC_CMP_AND_SWP:
	case IBV_WR_ATOMIC_FETCH_AND_ADD:
		len = chance(90) ? 8 : rnd(16);
		q->wr.atomic.remote_addr = pick_raddr(8, chance(90));
		q->wr.atomic.rkey = pick_rkey();
		q->wr.atomic.compare_add = rng_next(&R);
		q->wr.atomic.swap = rng_next(&R);
		break;
	case IBV_WR_LOCAL_INV:
	case IBV_WR_SEND_WITH_INV:
		q->ex = pick_rkey();
		break;
	case IBV_WR_BIND_MW:
		q->wr.bind_mw.mw_rkey = chance(50) ? w.mw1->rkey : w.mw2->rkey;
		q->ex = chance(50) ? q->wr.bind_mw.mw_rkey :
			ibv_inc_rkey(q->wr.bind_mw.mw_rkey);
		q->wr.bind_mw.addr = pick_laddr(0);
		q->wr.bind_mw.length = chance(30) ? 0 : chance(80) ? rnd(8192) :
				       rng_next(&R);
		q->wr.bind_mw.mr_lkey = pick_lkey();
		q->wr.bind_mw.access = chance(80) ? rnd(16) : rng_next(&R);
		return;
	case SROCE_WR_FLUSH:
		q->wr.flush.remote_addr = pick_raddr(len, false);
		q->wr.flush.length = chance(90) ? len : rng_next(&R);
		q->wr.flush.rkey = pick_rkey();
		q->wr.flush.type = chance(80) ? 1 + rnd(2) : rnd(256);
		q->wr.flush.level = chance(80) ? rnd(2) : rnd(256);
		return;
	case SROCE_WR_ATOMIC_WRITE:
		q->wr.atomic_write.remote_addr = pick_raddr(8, chance(90));
		q->wr.atomic_write.rkey = pick_rkey();
		fill_random(&R, q->wr.atomic_write.data, 8);
		return;
	default:
		break;
	}
	if (op != IBV_WR_LOCAL_INV && chance(20) && len <= F_INLINE &&
	    op != IBV_WR_RDMA_READ && op != IBV_WR_ATOMIC_CMP_AND_SWP &&
	    op != IBV_WR_ATOMIC_FETCH_AND_ADD) {
		q->send_flags |= SROCE_SEND_INLINE;
		q->inline_len = len;
		fill_random(&R, q->sge, len);
		return;
	}
	if (op == IBV_WR_LOCAL_INV)
		return;
	if (chance(15))
		nsge = 2 + rnd(sge_room(&fp->sq, sizeof(*q)) - 1);
	q->num_sge = nsge;
	for (i = 0; i < nsge; i++) {
		uint32_t l = i ? rnd(512) : len;

		q->sge[i].addr = pick_laddr(l);
		q->sge[i].length = l;
		q->sge[i].lkey = pick_lkey();
		if (op == IBV_WR_ATOMIC_CMP_AND_SWP ||
		    op == IBV_WR_ATOMIC_FETCH_AND_ADD)
			q->sge[i].addr &= ~7ULL;
	}
}

/* Change one field of the send WQE in @e, in place, in the ring. */
static void mutate_send(struct fpair *fp, uint8_t *e)
{
	size_t nsge = sge_room(&fp->sq, sizeof(struct sroce_send_wqe));
	size_t sge = sizeof(struct sroce_send_wqe) +
		     rnd(nsge) * sizeof(struct sroce_sge);
	size_t wr = offsetof(struct sroce_send_wqe, wr);
	uint64_t v64;
	uint32_t v;

	switch (rnd(13)) {
	case 0:
		v = pick_opcode();
		memcpy(e + offsetof(struct sroce_send_wqe, opcode), &v, 4);
		break;
	case 1:
		v = pick_flags();
		memcpy(e + offsetof(struct sroce_send_wqe, send_flags), &v, 4);
		break;
	case 2:
		v = chance(70) ? rnd(nsge + 3) : rng_next(&R);
		memcpy(e + offsetof(struct sroce_send_wqe, num_sge), &v, 4);
		break;
	case 3:
		v = chance(70) ? rnd(2 * F_INLINE + 16) : rng_next(&R);
		memcpy(e + offsetof(struct sroce_send_wqe, inline_len), &v, 4);
		break;
	case 4:
		v64 = pick_laddr(rnd(4096));
		memcpy(e + sge + offsetof(struct sroce_sge, addr), &v64, 8);
		break;
	case 5:
		v = chance(60) ? rnd(8192) : chance(50) ? 0xffffffff : rng_next(&R);
		memcpy(e + sge + offsetof(struct sroce_sge, length), &v, 4);
		break;
	case 6:
		v = pick_lkey();
		memcpy(e + sge + offsetof(struct sroce_sge, lkey), &v, 4);
		break;
	case 7:
		v = chance(50) ? fp->ah_num + rnd(3) - 1 : rng_next(&R);
		memcpy(e + offsetof(struct sroce_send_wqe, wr.ud.ah_num), &v, 4);
		break;
	case 8:
		v = rng_next(&R);
		memcpy(e + wr + 4 * rnd(8), &v, 4);
		break;
	case 9:
		v = pick_rkey();
		memcpy(e + offsetof(struct sroce_send_wqe, wr.rdma.rkey), &v, 4);
		break;
	case 10:
		v = chance(50) ? pick_rkey() : rng_next(&R);
		memcpy(e + offsetof(struct sroce_send_wqe, ex), &v, 4);
		break;
	case 11:
		v = rng_next(&R);
		memcpy(e + offsetof(struct sroce_send_wqe, xrc_remote_srqn), &v, 4);
		break;
	default:
		v64 = rng_next(&R);
		memcpy(e, &v64, 8);
		break;
	}
}

static void mutate_recv(struct fpair *fp, uint8_t *e)
{
	size_t nsge = sge_room(&fp->rq, sizeof(struct sroce_recv_wqe));
	size_t sge = sizeof(struct sroce_recv_wqe) +
		     rnd(nsge) * sizeof(struct sroce_sge);
	uint64_t v64;
	uint32_t v;

	switch (rnd(5)) {
	case 0:
		v = chance(40) ? rnd(nsge + 3) : chance(50) ? 1000 : rng_next(&R);
		memcpy(e + offsetof(struct sroce_recv_wqe, num_sge), &v, 4);
		break;
	case 1:
		v64 = pick_laddr(rnd(4096));
		memcpy(e + sge + offsetof(struct sroce_sge, addr), &v64, 8);
		break;
	case 2:
		v = chance(60) ? rnd(8192) : rng_next(&R);
		memcpy(e + sge + offsetof(struct sroce_sge, length), &v, 4);
		break;
	case 3:
		v = pick_lkey();
		memcpy(e + sge + offsetof(struct sroce_sge, lkey), &v, 4);
		break;
	default:
		v = rng_next(&R);
		memcpy(e + offsetof(struct sroce_recv_wqe, reserved), &v, 4);
		break;
	}
}

static void build_recv(struct fpair *fp, uint8_t *e)
{
	struct sroce_recv_wqe *q = (void *)e;

	memset(e, 0, fp->rq.es);
	q->wr_id = TAG_RAW | ++fp->wr_seq;
	if (chance(10)) {
		fill_random(&R, e + 8, fp->rq.es - 8);
		return;
	}
	q->num_sge = 1;
	q->sge[0].addr = chance(85) ? (uintptr_t)w.buf_f + F_RECV_OFF +
				      (fp->f_slot++ % 16) * F_RECV_SLOT :
				      pick_laddr(F_RECV_SLOT);
	q->sge[0].length = F_RECV_SLOT;
	q->sge[0].lkey = chance(85) ? w.mr_f->lkey : pick_lkey();
}

/* A new value for a producer index (or the CQ's consumer index). */
static uint32_t pick_index(struct ring *r, uint32_t other)
{
	switch (rnd(8)) {
	case 0:
		return r->shadow + 1 + rnd(3);		/* forwards */
	case 1:
		return r->shadow - 1 - rnd(3);		/* backwards */
	case 2:
		return other + r->num + 1 + rnd(4);	/* past the ring */
	case 3:
		return other - 1 - rnd(3);		/* behind the other */
	case 4:
		return rng_next(&R);
	case 5:
		return r->shadow + r->num;		/* a lap ahead */
	case 6:
		return other + r->num;			/* exactly full */
	default:
		return r->shadow;			/* put back */
	}
}

static void op_note(struct fpair *fp, const char *what, struct ring *r)
{
	fp->ring_ops++;
	beat("%s: %s on %s of QP %u (producer %u consumer %u, libsroce's %u)",
	     cur_case, what, r->name, fp->qp->qp_num, load_idx(&r->hdr->producer),
	     load_idx(&r->hdr->consumer), r->shadow);
}

static void sq_move(struct fpair *fp)
{
	uint32_t v = pick_index(&fp->sq, load_idx(&fp->sq.hdr->consumer));

	op_note(fp, "producer move", &fp->sq);
	if (verbose)
		printf("  to %u\n", v);
	store_idx(&fp->sq.hdr->producer, v);
	fp->sq.moved |= v != fp->sq.shadow;
	if (chance(60))
		ring_sq(fp);
}

/* An index near the live part of a work queue: consumer - 1 to producer + 1. */
static uint32_t pick_live(struct ring *r)
{
	uint32_t cons = load_idx(&r->hdr->consumer), d = r->shadow - cons;

	if (d > r->num)
		d = r->num;
	return cons - 1 + rnd(d + 3);
}

static void sq_rewrite(struct fpair *fp)
{
	uint8_t *e = slot(&fp->sq, pick_live(&fp->sq));
	unsigned int i, n = 1 + rnd(3);

	op_note(fp, "WQE rewrite", &fp->sq);
	for (i = 0; i < n; i++)
		mutate_send(fp, e);
	if (chance(50))
		ring_sq(fp);
}

/*
 * A slot the kernel must not read: past the producer, within a ring's
 * length of the consumer. libsroce writes its next entries there.
 */
static bool pick_free(struct ring *r, uint32_t *i)
{
	uint32_t cons = load_idx(&r->hdr->consumer), used = r->shadow - cons;

	if (used >= r->num)
		return false;
	*i = r->shadow + rnd(r->num - used);
	return true;
}

static void sq_rewrite_free(struct fpair *fp)
{
	uint32_t i;

	if (!pick_free(&fp->sq, &i))
		return;
	op_note(fp, "free slot scribble", &fp->sq);
	fill_random(&R, slot(&fp->sq, i), fp->sq.es);
	if (chance(50))
		ring_sq(fp);
}

static void rq_rewrite_free(struct fpair *fp)
{
	uint32_t i;

	if (!pick_free(&fp->rq, &i))
		return;
	op_note(fp, "free slot scribble", &fp->rq);
	fill_random(&R, slot(&fp->rq, i), fp->rq.es);
	if (chance(30))
		ring_rq(fp);
}

/* Write 1 to 3 WQEs into the ring past libsroce, and publish them. */
static void sq_inject(struct fpair *fp)
{
	uint32_t p = chance(70) ? fp->sq.shadow : load_idx(&fp->sq.hdr->producer);
	unsigned int i, n = 1 + rnd(3);
	uint8_t e[4096];

	op_note(fp, "WQE injection", &fp->sq);
	for (i = 0; i < n; i++) {
		build_send(fp, e, pick_opcode());
		memcpy(slot(&fp->sq, p + i), e, fp->sq.es);
	}
	store_idx(&fp->sq.hdr->producer, p + n);
	fp->sq.moved = true;
	if (chance(80))
		ring_sq(fp);
}

static void rq_move(struct fpair *fp)
{
	uint32_t v = pick_index(&fp->rq, load_idx(&fp->rq.hdr->consumer));

	op_note(fp, "producer move", &fp->rq);
	if (verbose)
		printf("  to %u\n", v);
	store_idx(&fp->rq.hdr->producer, v);
	fp->rq.moved |= v != fp->rq.shadow;
	if (chance(40))
		ring_rq(fp);
}

static void rq_rewrite(struct fpair *fp)
{
	uint8_t *e = slot(&fp->rq, pick_live(&fp->rq));

	op_note(fp, "WQE rewrite", &fp->rq);
	mutate_recv(fp, e);
	if (chance(30))
		ring_rq(fp);
}

static void rq_inject(struct fpair *fp)
{
	uint32_t p = chance(70) ? fp->rq.shadow : load_idx(&fp->rq.hdr->producer);
	unsigned int i, n = 1 + rnd(3);
	uint8_t e[4096];

	op_note(fp, "WQE injection", &fp->rq);
	for (i = 0; i < n; i++) {
		build_recv(fp, e);
		memcpy(slot(&fp->rq, p + i), e, fp->rq.es);
	}
	store_idx(&fp->rq.hdr->producer, p + n);
	fp->rq.moved = true;
	if (chance(30))
		ring_rq(fp);
}

static void cq_move(struct fpair *fp)
{
	uint32_t v = pick_index(&fp->cqr, load_idx(&fp->cqr.hdr->producer));

	op_note(fp, "consumer move", &fp->cqr);
	if (verbose)
		printf("  to %u\n", v);
	store_idx(&fp->cqr.hdr->consumer, v);
	fp->cqr.moved |= v != fp->cqr.shadow;
	/* Something to complete into it. */
	if (chance(50))
		p_post_send(fp);
	else if (chance(50))
		f_post_send(fp);
}

/* The CQ's consumer a little behind where libsroce has it. */
static void cq_nudge(struct fpair *fp)
{
	op_note(fp, "consumer nudge", &fp->cqr);
	store_idx(&fp->cqr.hdr->consumer, fp->cqr.shadow - 1 - rnd(3));
	fp->cqr.moved = true;
}

/*
 * Scribble on an index the kernel owns (or a ring's flags), ring a
 * doorbell, and put the old value back unless the kernel wrote a new one.
 */
static void kernel_scribble(struct fpair *fp)
{
	struct ring *rings[] = { &fp->sq, &fp->rq, &fp->cqr };
	unsigned int k = rnd(3);
	struct ring *r = rings[k];
	uint32_t *p = chance(25) ? &r->hdr->flags : kernel_idx(r, k == 2);
	uint32_t old = load_idx(p), v = chance(50) ? old + rnd(2 * r->num) -
					     r->num : (uint32_t)rng_next(&R);

	op_note(fp, p == &r->hdr->flags ? "flags scribble" :
		"kernel index scribble", r);
	store_idx(p, v);
	if (k == 1)
		ring_rq(fp);
	else
		ring_sq(fp);
	__atomic_compare_exchange_n(p, &v, old, false, __ATOMIC_ACQ_REL,
				    __ATOMIC_ACQUIRE);
}

static void doorbell_any(struct fpair *fp)
{
	int err;

	switch (rnd(5)) {
	case 0:
		ring_rq(fp);
		break;
	case 1:
		/* A work request in the doorbell: sroce must refuse it. */
		beat("%s: POST_SEND with a work request on QP %u", cur_case,
		     fp->qp->qp_num);
		err = db_send(fp->qp, true);
		fp->doorbells++;
		if (err != EINVAL)
			fail("POST_SEND of a WR on user QP %u: %s, expected EINVAL",
			     fp->qp->qp_num, tool_errname(err));
		break;
	default:
		ring_sq(fp);
		break;
	}
}

/* ------------------------------------------------------------------ */
/* The end of a round: settle, then ERR with evidence, or usable */

enum outcome {
	OUT_USABLE,
	OUT_ERR,
	OUT_FAILED,
	OUT_SILENT,	/* ERR, and nothing told the process */
};

/* Put back the indices this process owns where libsroce has them. */
static void restore_indices(struct fpair *fp)
{
	if (load_idx(&fp->sq.hdr->producer) != fp->sq.shadow)
		store_idx(&fp->sq.hdr->producer, fp->sq.shadow);
	if (load_idx(&fp->rq.hdr->producer) != fp->rq.shadow)
		store_idx(&fp->rq.hdr->producer, fp->rq.shadow);
	if (load_idx(&fp->cqr.hdr->consumer) != fp->cqr.shadow)
		store_idx(&fp->cqr.hdr->consumer, fp->cqr.shadow);
}

static void settle(struct fpair *fp)
{
	control_finish();
	restore_indices(fp);
	ring_sq(fp);
	ring_rq(fp);
	poll_for(fp, 100);
	/* Until F's CQ is quiet for 100 ms, at most 2 s. */
	{
		uint64_t start = now_ms(), quiet = now_ms();
		uint32_t last = load_idx(&fp->cqr.hdr->producer);

		while (now_ms() - quiet < 100 && now_ms() - start < 2000) {
			poll_all(fp);
			if (load_idx(&fp->cqr.hdr->producer) != last) {
				last = load_idx(&fp->cqr.hdr->producer);
				quiet = now_ms();
			}
			sleep_us(2000);
		}
	}
}

static void evidence(const struct fpair *fp, char *buf, size_t len)
{
	if (fp->err_cqes)
		snprintf(buf, len, "%u error completions, first %s",
			 fp->err_cqes, ibv_wc_status_str(fp->first_err));
	else if (fp->db_errnos)
		snprintf(buf, len, "doorbell %s", tool_errname(fp->last_errno));
	else if (fp->err_events)
		snprintf(buf, len, "event %s", fp->last_event);
	else
		snprintf(buf, len, "no evidence");
}

/* With --inject evidence, nothing counts: every ERR is SILENT. */
static bool has_evidence(const struct fpair *fp)
{
	return !inject_evidence &&
	       (fp->err_cqes || fp->db_errnos || fp->err_events);
}

/* Post one SEND from the probe MR; ENOMEM (SQ full) is retried. */
static bool probe_post(struct fpair *fp, uint64_t id)
{
	struct ibv_sge sge = { .addr = (uintptr_t)w.buf_probe,
			       .lkey = w.mr_probe->lkey };
	struct ibv_send_wr wr = {
		.wr_id = id, .sg_list = &sge, .num_sge = 1,
		.opcode = IBV_WR_SEND, .send_flags = IBV_SEND_SIGNALED,
	}, *bad = NULL;
	uint64_t start = now_ms();
	int ret;

	fp->probe_len = 16 + rnd((fp->type == IBV_QPT_UD ? 1024 : PROBE_MAX) - 15);
	fill_random(&data_rng, fp->probe, fp->probe_len);
	memcpy(fp->probe, &id, 8);
	memcpy(w.buf_probe, fp->probe, fp->probe_len);
	if (inject_probe)
		fp->probe[fp->probe_len - 1] ^= 1;
	sge.length = fp->probe_len;
	wr.wr.ud.ah = fp->ah;
	wr.wr.ud.remote_qpn = fp->pqp->qp_num;
	wr.wr.ud.remote_qkey = QKEY;
	fp->probe_id = id;
	fp->probe_done = fp->probe_arrived = false;
	for (;;) {
		beat("%s: probe SEND on QP %u", cur_case, fp->qp->qp_num);
		bad = NULL;
		ret = ibv_post_send(fp->qp, &wr, &bad);
		note_post(fp, &fp->sq, ret, !bad, !ret || bad != &wr);
		if (ret != ENOMEM || bad != &wr)
			return !ret || !bad;
		if (now_ms() - start > WAIT_MS)
			return false;
		poll_all(fp);
		sleep_us(1000);
	}
}

/*
 * F is in ERR. It must have said so: an error completion, a failed
 * doorbell or an error event; failing those, a SEND posted now must be
 * flushed, which the kernel can do only if its view of the SQ is in step
 * with libsroce's (the consumer index at most a ring behind its producer).
 * If the SQ's producer index was never moved, that view is in step for
 * sure, and the SEND must be flushed whatever else was seen.
 */
static enum outcome judge_err(struct fpair *fp, const char *when)
{
	uint32_t cons = load_idx(&fp->sq.hdr->consumer);
	bool in_step = fp->sq.shadow - cons <= fp->sq.num;
	bool pending = fp->probe_id && !fp->probe_done;
	uint64_t start;

	if (!pending && in_step && (!fp->sq.moved || !has_evidence(fp))) {
		if (!probe_post(fp, TAG_PROBE | ++fp->wr_seq)) {
			fail("QP %u in ERR: posting a SEND failed", fp->qp->qp_num);
			return OUT_FAILED;
		}
		start = now_ms();
		while (!fp->probe_done && now_ms() - start < WAIT_MS) {
			poll_all(fp);
			sleep_us(1000);
		}
		if (!fp->probe_done) {
			fail("QP %u (%s) in ERR %s: a SEND posted then was never "
			     "flushed", fp->qp->qp_num, type_name(fp->type), when);
			return OUT_FAILED;
		}
		if (fp->probe_status == IBV_WC_SUCCESS) {
			fail("QP %u in ERR: a SEND posted then completed successfully",
			     fp->qp->qp_num);
			return OUT_FAILED;
		}
	}
	if (!has_evidence(fp)) {
		info("QP %u (%s) went to ERR %s without an error completion, "
		     "errno or error event, and with its SQ out of step (kernel "
		     "consumer %u, libsroce's producer %u) no SEND can be flushed",
		     fp->qp->qp_num, type_name(fp->type), when, cons,
		     fp->sq.shadow);
		return OUT_SILENT;
	}
	return OUT_ERR;
}

/* After the settle: ERR with evidence, or a probe through F that works. */
static enum outcome judge(struct fpair *fp, unsigned int seq, unsigned int round)
{
	int st = qp_state(fp->qp);
	uint64_t start, id;

	if (st == IBV_QPS_ERR)
		return judge_err(fp, "after the settle");
	if (st != IBV_QPS_RTS) {
		fail("QP %u is in %s after the settle", fp->qp->qp_num,
		     state_name(st));
		return OUT_FAILED;
	}
	id = TAG_PROBE | (uint64_t)seq << 16 | round << 8 | (fp->wr_seq++ & 0xff);
	p_replenish(fp);
	if (!probe_post(fp, id)) {
		if (qp_state(fp->qp) == IBV_QPS_ERR)
			return judge_err(fp, "while the probe was posted");
		fail("QP %u in RTS: the probe SEND could not be posted in %u ms",
		     fp->qp->qp_num, WAIT_MS);
		return OUT_FAILED;
	}
	start = now_ms();
	while (now_ms() - start < WAIT_MS &&
	       !(fp->probe_done && (fp->probe_arrived ||
				    fp->probe_status != IBV_WC_SUCCESS))) {
		poll_all(fp);
		sleep_us(500);
	}
	if (fp->probe_done && fp->probe_status == IBV_WC_SUCCESS &&
	    fp->probe_arrived)
		return OUT_USABLE;
	st = qp_state(fp->qp);
	if (st == IBV_QPS_ERR && (!fp->probe_done ||
				  fp->probe_status != IBV_WC_SUCCESS)) {
		if (!fp->probe_done && !fp->sq.moved) {
			fail("QP %u went to ERR but its probe was never flushed",
			     fp->qp->qp_num);
			return OUT_FAILED;
		}
		return judge_err(fp, "during the probe");
	}
	if (fp->probe_done && fp->probe_status == IBV_WC_SUCCESS)
		fail("QP %u (%s): the probe completed but P (%s) never got it",
		     fp->qp->qp_num, type_name(fp->type),
		     state_name(qp_state(fp->pqp)));
	else if (fp->probe_done)
		fail("QP %u (%s): the probe failed (%s) but F is in %s",
		     fp->qp->qp_num, type_name(fp->type),
		     ibv_wc_status_str(fp->probe_status), state_name(st));
	else
		fail("QP %u (%s) in %s: the probe neither completed nor failed "
		     "in %u ms", fp->qp->qp_num, type_name(fp->type),
		     state_name(st), WAIT_MS);
	return OUT_FAILED;
}

/* ------------------------------------------------------------------ */
/* Resources: what `rdma resource show` says this process holds */

struct counts {
	int n[5];
};

static const char *const res_kinds[] = { "qp", "cq", "mr", "pd", "srq" };
/* A word that starts the object's number on each kind's lines. */
static const char *const res_keys[] = { " lqpn ", " cqn ", " mrn ", " pdn ",
					" srqn " };

/* Count this process's objects on both devices; false if rdma failed. */
static bool count_resources(struct counts *c)
{
	static const char cmds[] = "resource show qp\nresource show cq\n"
				   "resource show mr\nresource show pd\n"
				   "resource show srq\n";
	char *argv[] = { "rdma", "-b", "-", NULL };
	posix_spawn_file_actions_t fa;
	int in[2], out[2], status;
	char pid[32], line[1024];
	FILE *f;
	pid_t child;
	unsigned int k;

	memset(c, 0, sizeof(*c));
	beat("%s: rdma resource show", cur_case);
	if (pipe(in) || pipe(out))
		tool_die("pipe: %s", strerror(errno));
	posix_spawn_file_actions_init(&fa);
	posix_spawn_file_actions_adddup2(&fa, in[0], 0);
	posix_spawn_file_actions_adddup2(&fa, out[1], 1);
	posix_spawn_file_actions_addclose(&fa, in[1]);
	posix_spawn_file_actions_addclose(&fa, out[0]);
	if (posix_spawnp(&child, "rdma", &fa, NULL, argv, environ))
		tool_die("cannot run rdma");
	posix_spawn_file_actions_destroy(&fa);
	close(in[0]);
	close(out[1]);
	if (write(in[1], cmds, sizeof(cmds) - 1) != sizeof(cmds) - 1)
		tool_die("write to rdma: %s", strerror(errno));
	close(in[1]);
	snprintf(pid, sizeof(pid), " pid %d ", (int)getpid());
	f = fdopen(out[0], "r");
	while (fgets(line, sizeof(line), f)) {
		const char *first = NULL, *at;
		int kind = -1;

		if (!strstr(line, pid))
			continue;
		/* An MR's line names its PD too: the first key is the kind. */
		for (k = 0; k < ARRAY_SIZE(res_keys); k++) {
			at = strstr(line, res_keys[k]);
			if (at && (!first || at < first)) {
				first = at;
				kind = k;
			}
		}
		if (kind >= 0)
			c->n[kind]++;
	}
	fclose(f);
	waitpid(child, &status, 0);
	alive();
	return WIFEXITED(status) && !WEXITSTATUS(status);
}

static bool counts_equal(const struct counts *a, const struct counts *b,
			 char *buf, size_t len)
{
	size_t o = 0;
	unsigned int k;
	bool eq = true;

	buf[0] = 0;
	for (k = 0; k < ARRAY_SIZE(res_kinds); k++) {
		eq &= a->n[k] == b->n[k];
		o += snprintf(buf + o, o < len ? len - o : 0, "%s%s %d",
			      k ? " " : "", res_kinds[k], b->n[k]);
	}
	return eq;
}

static struct counts base_counts;

/* After a sequence: nothing of it may be left. */
static void check_resources(const char *after)
{
	struct counts now;
	char want[128], got[128];

	if (!count_resources(&now)) {
		fail("rdma resource show failed");
		return;
	}
	counts_equal(&now, &base_counts, want, sizeof(want));
	if (!counts_equal(&base_counts, &now, got, sizeof(got))) {
		fail("after %s this process holds %s, expected %s", after, got,
		     want);
		base_counts = now;	/* report each leak once */
	}
}

/* ------------------------------------------------------------------ */
/* Random sequences */

static uint64_t run_seed;
static unsigned int n_seq, n_usable, n_err, n_destroyed, first_seq;
static unsigned int n_silent, first_silent;

static uint64_t seq_seed(unsigned int seq)
{
	struct rng r = { run_seed ^ (0x5851f42d4c957f2dULL * (seq + 1)) };

	return rng_next(&r);
}

/*
 * The ring operations of each hostility level, cumulative:
 * 0: what the kernel must not even notice: free slots rewritten, the
 *    indices the kernel owns scribbled on, the CQ's consumer moved back
 *    a little, doorbells; 1: WQEs rewritten after posting and written
 *    past libsroce, the CQ's consumer moved anywhere; 2: producer
 *    indices moved anywhere.
 */
static void ring_step(struct fpair *fp)
{
	static void (*const ops[])(struct fpair *) = {
		sq_rewrite_free, rq_rewrite_free, kernel_scribble, cq_nudge,
		sq_rewrite, sq_rewrite, rq_rewrite, sq_inject, rq_inject, cq_move,
		sq_move, sq_move, rq_move,
	};
	static const unsigned int upto[] = { 4, 10, ARRAY_SIZE(ops) };

	ops[rnd(upto[fp->hostility])](fp);
}

/* One random step on F, P, their rings, the doorbells or the control. */
static void step(struct fpair *fp)
{
	unsigned int r = rnd(100);

	fp->steps++;
	if (r < 14)
		f_post_send(fp);
	else if (r < 22)
		f_post_recv(fp, TAG_FRECV | ++fp->wr_seq);
	else if (r < 30)
		p_post_send(fp);
	else if (r < 37)
		poll_all(fp);
	else if (r < 78)
		ring_step(fp);
	else if (r < 87)
		doorbell_any(fp);
	else if (r < 93)
		sleep_us(rnd(3000));
	else if (ctl.in_flight)
		control_finish();
	else
		control_start();
}

static void reset_round(struct fpair *fp)
{
	fp->probe_id = 0;
	fp->probe_done = fp->probe_arrived = false;
	fp->err_cqes = fp->db_errnos = fp->err_events = 0;
	fp->qp_fatal = fp->srq_err = fp->cq_err = 0;
	fp->sq.moved = fp->rq.moved = fp->cqr.moved = false;
	fp->ring_ops = fp->doorbells = fp->steps = 0;
}

static void run_sequence(unsigned int seq)
{
	struct qp_params p = { .timeout = 14, .retry_cnt = 5, .rnr_retry = 3,
			       .min_rnr_timer = 1 };
	static const char *const outs[] = { "usable", "ERR", "FAILED",
					    "SILENT ERR" };
	uint64_t seed = seq_seed(seq), t0 = now_ms();
	unsigned int round, nrounds, i, nsteps, before = failures;
	enum outcome out = OUT_USABLE;
	bool destroyed = false, use_srq;
	unsigned int hostility;
	enum ibv_qp_type type;
	struct fpair fp;
	char line[1024], ev[96], name[32];
	size_t o;

	snprintf(name, sizeof(name), "seq %u", seq);
	cur_case = name;
	R.s = seed;
	data_rng.s = seed ^ 0xda7a;
	type = rnd(10) < 6 ? IBV_QPT_RC : rnd(2) ? IBV_QPT_UC : IBV_QPT_UD;
	use_srq = chance(40);
	nrounds = 1 + rnd(3);
	hostility = rnd(10) < 3 ? 0 : rnd(2) + 1;
	if (inject_stall && seq == first_seq) {
		beat("%s: --inject stall", cur_case);
		sleep(stall_s + 10);
	}
	pair_up(&fp, type, use_srq, &p);
	fp.hostility = hostility;
	o = snprintf(line, sizeof(line), "seq %u seed %#" PRIx64 " %s %s "
		     "hostility %u:", seq, seed, type_name(type),
		     use_srq ? "srq" : "rq", hostility);
	for (round = 1; round <= nrounds; round++) {
		reset_round(&fp);
		nsteps = 4 + rnd(28);
		for (i = 0; i < nsteps; i++)
			step(&fp);
		total_ring_ops += fp.ring_ops;
		o += snprintf(line + o, sizeof(line) - o,
			      " round %u: %u steps %u ring ops %u doorbells",
			      round, fp.steps, fp.ring_ops, fp.doorbells);
		if (chance(12)) {
			control_finish();
			pair_down(&fp, inject_leak && seq == first_seq);
			destroyed = true;
			o += snprintf(line + o, sizeof(line) - o,
				      " -> destroyed mid-flight");
			total_doorbells += fp.doorbells;
			break;
		}
		settle(&fp);
		out = judge(&fp, seq, round);
		total_doorbells += fp.doorbells;
		evidence(&fp, ev, sizeof(ev));
		o += snprintf(line + o, sizeof(line) - o, " -> %s%s%s%s",
			      outs[out], out == OUT_ERR ? " (" : "",
			      out == OUT_ERR ? ev : "", out == OUT_ERR ? ")" : "");
		if (o >= sizeof(line))
			o = sizeof(line) - 1;
		control_round();
		if (out != OUT_USABLE)
			break;
	}
	if (!destroyed)
		pair_down(&fp, inject_leak && seq == first_seq);
	n_seq++;
	n_destroyed += destroyed;
	n_usable += !destroyed && out == OUT_USABLE;
	n_err += !destroyed && out == OUT_ERR;
	if (!destroyed && out == OUT_SILENT && !n_silent++)
		first_silent = seq;
	check_resources(name);
	printf("%s (%.1f s)%s\n", line, (now_ms() - t0) / 1000.0,
	       failures != before ? " FAIL" : "");
}

/* ------------------------------------------------------------------ */
/* Named cases */

static const struct qp_params case_params = {
	.timeout = 14, .retry_cnt = 5, .rnr_retry = 3, .min_rnr_timer = 1,
};

/* Wait up to @ms for F to be in @state; return the state it is in. */
static int wait_state(struct fpair *fp, int state, unsigned int ms)
{
	uint64_t start = now_ms();
	int st;

	for (;;) {
		st = qp_state(fp->qp);
		if (st == state || now_ms() - start > ms)
			return st;
		poll_all(fp);
		sleep_us(5000);
	}
}

/* F must be in ERR, and must have said so (judge_err()). */
static void expect_err(struct fpair *fp)
{
	int st = wait_state(fp, IBV_QPS_ERR, 5000);
	char ev[96];

	check("F ends in ERR", "ERR", state_name(st));
	if (st != IBV_QPS_ERR)
		return;
	poll_for(fp, 100);
	evidence(fp, ev, sizeof(ev));
	if (!has_evidence(fp))
		info("no error completion, errno or event before a SEND is posted");
	check("F in ERR says so (judge_err)", "ERR",
	      (const char *[]){ "usable", "ERR", "FAILED", "SILENT" }
	      [judge_err(fp, "after the corruption")]);
	evidence(fp, ev, sizeof(ev));
	info("evidence: %s", ev);
}

/* The end of every named case: the control pair, destroy, leaks. */
static void case_end(struct fpair *fp)
{
	unsigned int before = failures;

	control_round();
	check_true("the control pair passes", failures == before, "failed");
	before = failures;
	pair_down(fp, false);
	check_true("destroying F, P and theirs works", failures == before,
		   "failed");
	before = failures;
	check_resources(cur_case);
	check_true("nothing left of them", failures == before, "leaked");
}

/* A BIND_MW that unbinds the type 1 window: it succeeds again and again. */
static void unbind_wqe(struct fpair *fp, uint8_t *e, uint64_t wr_id)
{
	struct sroce_send_wqe *q = (void *)e;

	memset(e, 0, fp->sq.es);
	q->wr_id = wr_id;
	q->opcode = IBV_WR_BIND_MW;
	q->send_flags = SROCE_SEND_SIGNALED;
	q->ex = w.mw1->rkey;
	q->wr.bind_mw.mw_rkey = w.mw1->rkey;
}

/*
 * The known defect: the requester has fetched WQEs up to the ring's end
 * while a SEND holds the consumer index back; the producer then moves
 * back by one. A requester that fetches until it meets the producer
 * never meets it again, and local WQEs cost it no packet budget.
 */
static void case_sq_producer_back(void)
{
	struct qp_params p = { .timeout = 20, .retry_cnt = 7, .rnr_retry = 7,
			       .min_rnr_timer = 1 };
	struct ibv_qp_attr a = { .qp_state = IBV_QPS_ERR };
	struct ibv_sge sge = { .addr = (uintptr_t)w.buf_f, .length = 64,
			       .lkey = w.mr_f->lkey };
	struct ibv_send_wr wr = {
		.wr_id = TAG_REAL | 1, .sg_list = &sge, .num_sge = 1,
		.opcode = IBV_WR_SEND, .send_flags = IBV_SEND_SIGNALED,
	}, *bad;
	struct ibv_wc wc[64];
	uint32_t cons, i;
	uint64_t t0;
	uint8_t e[4096];
	struct fpair fp;
	bool send_ok = false, send_seen = false;
	char got[64];
	int err, n;

	pair_up(&fp, IBV_QPT_RC, false, &p);
	control_round();
	/* P drops whatever comes: F's SEND stays unacknowledged (4 s timer). */
	modify(fp.pqp, &a, IBV_QP_STATE, "ERR");
	err = ibv_post_send(fp.qp, &wr, &bad);
	check("post a SEND through libibverbs", "0", tool_errname(err));
	note_published(&fp.sq);
	cons = load_idx(&fp.sq.hdr->consumer);
	snprintf(got, sizeof(got), "%u", fp.sq.shadow - cons);
	check("the SEND is outstanding (producer - consumer)", "1", got);

	for (i = 0; i < fp.sq.num; i++) {
		unbind_wqe(&fp, e, TAG_RAW | i);
		memcpy(slot(&fp.sq, cons + i), e, fp.sq.es);
	}
	store_idx(&fp.sq.hdr->producer, cons + fp.sq.num);
	beat("%s: doorbell with %u WQEs in the SQ", cur_case, fp.sq.num);
	err = db_send(fp.qp, false);
	check("doorbell with the ring full of unbinds", "0", tool_errname(err));
	store_idx(&fp.sq.hdr->producer, cons + fp.sq.num - 1);
	beat("%s: doorbell after the producer moved back by one (a send engine "
	     "that never returns here is the known defect)", cur_case);
	t0 = now_ms();
	err = db_send(fp.qp, false);
	alive();
	snprintf(got, sizeof(got), "%s after %" PRIu64 " ms", tool_errname(err),
		 now_ms() - t0);
	check_true("the doorbell returns", true, got);
	info("doorbell: %s", got);
	store_idx(&fp.sq.hdr->producer, fp.sq.shadow);

	check("F ends in ERR", "ERR",
	      state_name(wait_state(&fp, IBV_QPS_ERR, 5000)));
	t0 = now_ms();
	while (!send_seen && now_ms() - t0 < 5000) {
		n = ibv_poll_cq(fp.cq, 64, wc);
		for (i = 0; n > 0 && i < (uint32_t)n; i++) {
			if (wc[i].status != IBV_WC_SUCCESS && !fp.err_cqes++)
				fp.first_err = wc[i].status;
			if (wc[i].wr_id == wr.wr_id) {
				send_seen = true;
				send_ok = wc[i].status == IBV_WC_SUCCESS;
			}
		}
		drain_events(&fp);
		sleep_us(2000);
	}
	if (fp.err_cqes)
		snprintf(got, sizeof(got), "%s", ibv_wc_status_str(fp.first_err));
	check_true("an error completion on F's CQ", fp.err_cqes, "none");
	check_true("the SEND completes, not successfully",
		   send_seen && !send_ok, send_seen ? "success" : "never");
	case_end(&fp);
}

/* Producer index where the kernel cannot accept it, nothing outstanding. */
static void sq_producer_bad(bool past)
{
	struct fpair fp;
	uint32_t cons;

	pair_up(&fp, IBV_QPT_RC, false, &case_params);
	cons = load_idx(&fp.sq.hdr->consumer);
	store_idx(&fp.sq.hdr->producer, past ? cons + fp.sq.num + 1 : cons - 1);
	fp.sq.moved = true;
	ring_sq(&fp);
	poll_for(&fp, 200);
	restore_indices(&fp);
	expect_err(&fp);
	case_end(&fp);
}

/* P sends @n SENDs to F, which must receive them. */
static void p_send_wait(struct fpair *fp, unsigned int n)
{
	struct ibv_send_wr wr = { .opcode = IBV_WR_SEND,
				  .send_flags = IBV_SEND_SIGNALED }, *bad;
	struct ibv_wc wc;
	unsigned int got = 0, i;
	uint64_t t0 = now_ms();

	for (i = 0; i < n; i++) {
		wr.wr_id = TAG_REAL | ++fp->wr_seq;
		if (ibv_post_send(fp->pqp, &wr, &bad))
			tool_die("P: post_send failed");
	}
	while (got < n && now_ms() - t0 < WAIT_MS) {
		if (ibv_poll_cq(fp->cq, 1, &wc) == 1) {
			if (wc.status != IBV_WC_SUCCESS)
				tool_die("F: receive: %s",
					 ibv_wc_status_str(wc.status));
			got++;
		}
		p_poll(fp);
		alive();
	}
	if (got < n)
		tool_die("F received %u of %u SENDs from P", got, n);
	fp->cqr.shadow = load_idx(&fp->cqr.hdr->consumer);
}

/*
 * The kernel runs a full lap of unsignaled unbinds past libsroce's
 * producer index, which is then put back: the kernel's consumer is now
 * a ring ahead of it. Nothing of F can complete any more (no SEND posted
 * through libsroce can be flushed), so the kernel must say that F failed.
 */
static void case_sq_producer_lap(void)
{
	struct fpair fp;
	uint8_t e[4096];
	uint32_t i;

	pair_up(&fp, IBV_QPT_RC, false, &case_params);
	/* An empty RQ: nothing to flush there. */
	p_send_wait(&fp, 2);
	for (i = 0; i < fp.sq.num; i++) {
		unbind_wqe(&fp, e, TAG_RAW | i);
		((struct sroce_send_wqe *)e)->send_flags = 0;
		memcpy(slot(&fp.sq, fp.sq.shadow + i), e, fp.sq.es);
	}
	store_idx(&fp.sq.hdr->producer, fp.sq.shadow + fp.sq.num);
	fp.sq.moved = true;
	ring_sq(&fp);
	poll_for(&fp, 100);
	info("after the lap: kernel consumer %u, libsroce's producer %u",
	     load_idx(&fp.sq.hdr->consumer), fp.sq.shadow);
	restore_indices(&fp);
	ring_sq(&fp);
	expect_err(&fp);
	case_end(&fp);
}

static void case_sq_producer_past(void)
{
	sq_producer_bad(true);
}

static void case_sq_producer_behind(void)
{
	sq_producer_bad(false);
}

/* The receive side: a corrupt RQ or SRQ meets a SEND from P. */
static void rq_bad(bool srq, bool sge)
{
	struct fpair fp;
	uint32_t cons, v = 1000;

	pair_up(&fp, IBV_QPT_RC, srq, &case_params);
	cons = load_idx(&fp.rq.hdr->consumer);
	if (sge) {
		f_post_recv(&fp, TAG_FRECV | 7);
		memcpy((uint8_t *)slot(&fp.rq, cons) +
		       offsetof(struct sroce_recv_wqe, num_sge), &v, 4);
	} else {
		store_idx(&fp.rq.hdr->producer, cons + fp.rq.num + 1);
		fp.rq.moved = true;
	}
	p_post_send(&fp);
	poll_for(&fp, 300);
	restore_indices(&fp);
	expect_err(&fp);
	if (!sge) {
		poll_for(&fp, 100);
		check("F raised QP_FATAL", "yes", fp.qp_fatal ? "yes" : "no");
		if (srq)
			check("F's SRQ raised SRQ_ERR", "yes",
			      fp.srq_err ? "yes" : "no");
	}
	case_end(&fp);
}

static void case_rq_producer_past(void)
{
	rq_bad(false, false);
}

static void case_srq_producer_past(void)
{
	rq_bad(true, false);
}

static void case_rq_wqe_sge(void)
{
	rq_bad(false, true);
}

/* The CQ looks full (or impossible) to the kernel when F completes. */
static void cq_bad(bool past)
{
	struct ibv_sge sge = { .addr = (uintptr_t)w.buf_f, .length = 64,
			       .lkey = w.mr_f->lkey };
	struct ibv_send_wr wr = {
		.wr_id = TAG_REAL | 1, .sg_list = &sge, .num_sge = 1,
		.opcode = IBV_WR_SEND, .send_flags = IBV_SEND_SIGNALED,
	}, *bad;
	struct fpair fp;
	uint32_t prod;
	uint64_t t0;
	int err;

	pair_up(&fp, IBV_QPT_RC, false, &case_params);
	prod = load_idx(&fp.cqr.hdr->producer);
	store_idx(&fp.cqr.hdr->consumer,
		  past ? prod + 5 : fp.cqr.shadow - fp.cqr.num);
	err = ibv_post_send(fp.qp, &wr, &bad);
	check("post a SEND through libibverbs", "0", tool_errname(err));
	note_published(&fp.sq);
	/* No polling of F here: that would put the consumer index back. */
	t0 = now_ms();
	while (qp_state(fp.qp) != IBV_QPS_ERR && now_ms() - t0 < 5000) {
		p_poll(&fp);
		drain_events(&fp);
		sleep_us(5000);
	}
	drain_events(&fp);
	check("an error event for F", "CQ_ERR",
	      fp.last_event ? fp.last_event : "none");
	restore_indices(&fp);
	expect_err(&fp);
	case_end(&fp);
}

static void case_cq_consumer_back(void)
{
	cq_bad(false);
}

static void case_cq_consumer_past(void)
{
	cq_bad(true);
}

/*
 * F in ERR, its CQ looking full, a ring of WQEs to flush and one doorbell:
 * the kernel says CQ_ERR once, not once per WQE (the RDMA core queues each
 * event for the process, allocating as it goes), and does not go on by
 * itself flushing a WQE a run into the full CQ (a CPU kept busy for as
 * long as the process keeps the ring full). Once the CQ has room and the
 * doorbell rings again, the rest are flushed.
 */
static void case_cq_full_flush(void)
{
	struct ibv_qp_attr a = { .qp_state = IBV_QPS_ERR };
	uint32_t cons, i, n, flushed = 0;
	struct ibv_wc wc[64];
	uint8_t e[4096];
	struct fpair fp;
	uint64_t t0;
	char got[64], want[16];
	int k;

	pair_up(&fp, IBV_QPT_RC, false, &case_params);
	modify(fp.qp, &a, IBV_QP_STATE, "ERR");
	poll_for(&fp, 300);		/* the RQ's flushes */
	fp.cq_err = 0;
	store_idx(&fp.cqr.hdr->consumer, fp.cqr.shadow - fp.cqr.num);
	cons = load_idx(&fp.sq.hdr->consumer);
	n = fp.sq.num;
	for (i = 0; i < n; i++) {
		unbind_wqe(&fp, e, TAG_RAW | i);
		memcpy(slot(&fp.sq, cons + i), e, fp.sq.es);
	}
	store_idx(&fp.sq.hdr->producer, cons + n);
	fp.sq.shadow = cons + n;	/* libsroce's is behind: F is not reused */
	k = db_send(fp.qp, false);
	check("doorbell with the CQ full", "0", tool_errname(k));
	/* No polling of F here: that would put the consumer index back. */
	t0 = now_ms();
	while (now_ms() - t0 < 500) {
		p_poll(&fp);
		drain_events(&fp);
		sleep_us(5000);
	}
	snprintf(got, sizeof(got), "%u", fp.cq_err);
	check("CQ_ERR events for one overflow", "1", got);
	snprintf(got, sizeof(got), "%u",
		 load_idx(&fp.sq.hdr->consumer) - cons);
	check("WQEs taken into the full CQ without a doorbell", "1", got);
	store_idx(&fp.cqr.hdr->consumer, fp.cqr.shadow);
	k = db_send(fp.qp, false);
	check("doorbell with room in the CQ", "0", tool_errname(k));
	t0 = now_ms();
	while (flushed < n - 1 && now_ms() - t0 < 5000) {
		k = ibv_poll_cq(fp.cq, 64, wc);
		for (i = 0; k > 0 && i < (uint32_t)k; i++)
			flushed += (wc[i].wr_id & TAG_MASK) == TAG_RAW &&
				   wc[i].status == IBV_WC_WR_FLUSH_ERR;
		drain_events(&fp);
		sleep_us(2000);
	}
	fp.cqr.shadow = load_idx(&fp.cqr.hdr->consumer);
	snprintf(got, sizeof(got), "%u", flushed);
	snprintf(want, sizeof(want), "%u", n - 1);
	check("the rest flushed once the CQ has room", want, got);
	case_end(&fp);
}

/* Plausible operands, valid keys only: for the opcodes case. */
static void build_sane(struct fpair *fp, uint8_t *e, uint32_t op, uint64_t id)
{
	struct sroce_send_wqe *q = (void *)e;

	memset(e, 0, fp->sq.es);
	q->wr_id = id;
	q->opcode = op;
	q->send_flags = SROCE_SEND_SIGNALED;
	q->num_sge = 1;
	q->sge[0].addr = (uintptr_t)w.buf_f + 4096;
	q->sge[0].length = 256;
	q->sge[0].lkey = w.mr_f->lkey;
	switch (op) {
	case IBV_WR_RDMA_WRITE:
	case IBV_WR_RDMA_WRITE_WITH_IMM:
	case IBV_WR_RDMA_READ:
		q->wr.rdma.remote_addr = p_tgt(4096);
		q->wr.rdma.rkey = w.mr_p->rkey;
		break;
	case IBV_WR_ATOMIC_CMP_AND_SWP:
	case IBV_WR_ATOMIC_FETCH_AND_ADD:
		q->sge[0].length = 8;
		q->wr.atomic.remote_addr = p_tgt(8192);
		q->wr.atomic.rkey = w.mr_p->rkey;
		q->wr.atomic.compare_add = 1;
		break;
	case IBV_WR_LOCAL_INV:
	case IBV_WR_SEND_WITH_INV:
		q->num_sge = op == IBV_WR_LOCAL_INV ? 0 : 1;
		q->ex = w.mw2->rkey;
		break;
	case IBV_WR_BIND_MW:
		unbind_wqe(fp, e, id);
		break;
	case SROCE_WR_FLUSH:
		q->num_sge = 0;
		q->wr.flush.remote_addr = p_tgt(0);
		q->wr.flush.length = 4096;
		q->wr.flush.rkey = w.mr_p->rkey;
		q->wr.flush.type = 1;
		break;
	case SROCE_WR_ATOMIC_WRITE:
		q->num_sge = 0;
		q->wr.atomic_write.remote_addr = p_tgt(8192);
		q->wr.atomic_write.rkey = w.mr_p->rkey;
		break;
	default:
		break;
	}
}

static void case_opcodes(void)
{
	static const uint32_t ops[] = {
		IBV_WR_RDMA_WRITE, IBV_WR_RDMA_WRITE_WITH_IMM, IBV_WR_SEND,
		IBV_WR_SEND_WITH_IMM, IBV_WR_RDMA_READ,
		IBV_WR_ATOMIC_CMP_AND_SWP, IBV_WR_ATOMIC_FETCH_AND_ADD,
		IBV_WR_LOCAL_INV, IBV_WR_BIND_MW, IBV_WR_SEND_WITH_INV,
		IBV_WR_TSO, IBV_WR_DRIVER1, 12, 13, SROCE_WR_FLUSH,
		SROCE_WR_ATOMIC_WRITE, 16, 17, 0x20 /* kernel REG_MR */, 255,
		0xffffffff,
	};
	struct fpair fp;
	bool up = false;
	unsigned int k;
	uint8_t e[4096];

	for (k = 0; k < ARRAY_SIZE(ops); k++) {
		uint32_t op = ops[k], idx;
		bool valid = op <= IBV_WR_SEND_WITH_INV ||
			     op == SROCE_WR_FLUSH || op == SROCE_WR_ATOMIC_WRITE;
		uint64_t id = TAG_RAW | 0x1000 | k, t0;
		struct ibv_wc wc;
		bool seen = false;
		char what[64], got[64];
		int n;

		if (!up)
			pair_up(&fp, IBV_QPT_RC, false, &case_params);
		up = true;
		/* Past libsroce: post at the kernel's consumer index. */
		idx = load_idx(&fp.sq.hdr->consumer);
		build_sane(&fp, e, op, id);
		memcpy(slot(&fp.sq, idx), e, fp.sq.es);
		store_idx(&fp.sq.hdr->producer, idx + 1);
		fp.sq.moved = true;
		ring_sq(&fp);
		t0 = now_ms();
		while (!seen && now_ms() - t0 < WAIT_MS) {
			n = ibv_poll_cq(fp.cq, 1, &wc);
			if (n > 0 && wc.wr_id == id)
				seen = true;
			else if (!n)
				sleep_us(1000);
			p_poll(&fp);
			alive();
		}
		fp.cqr.shadow = load_idx(&fp.cqr.hdr->consumer);
		fp.sq.shadow = idx + 1;
		snprintf(what, sizeof(what), "opcode %#x completes", op);
		snprintf(got, sizeof(got), "%s",
			 seen ? (wc.status == IBV_WC_SUCCESS ? "success" :
				 ibv_wc_status_str(wc.status)) : "never");
		if (valid) {
			check_true(what, seen, got);
			if (seen)
				info("opcode %#x: %s", op, got);
		} else {
			check(what, ibv_wc_status_str(IBV_WC_LOC_QP_OP_ERR), got);
			check("F ends in ERR", "ERR",
			      state_name(wait_state(&fp, IBV_QPS_ERR, 5000)));
		}
		if (qp_state(fp.qp) == IBV_QPS_ERR || k + 1 == ARRAY_SIZE(ops)) {
			/* libsroce's index is behind: do not post through it. */
			fp.sq.shadow = load_idx(&fp.sq.hdr->producer);
			case_end(&fp);
			up = false;
		}
	}
}

static void case_random(void);

static const struct {
	const char *name;
	void (*run)(void);
} cases[] = {
	{ "sq-producer-past", case_sq_producer_past },
	{ "sq-producer-behind", case_sq_producer_behind },
	{ "sq-producer-lap", case_sq_producer_lap },
	{ "rq-producer-past", case_rq_producer_past },
	{ "srq-producer-past", case_srq_producer_past },
	{ "rq-wqe-sge", case_rq_wqe_sge },
	{ "cq-consumer-back", case_cq_consumer_back },
	{ "cq-consumer-past", case_cq_consumer_past },
	{ "cq-full-flush", case_cq_full_flush },
	{ "opcodes", case_opcodes },
	{ "random", case_random },
	/* Last: before the fix it never returns. */
	{ "sq-producer-back", case_sq_producer_back },
};

static unsigned int iterations = 50;

static void case_random(void)
{
	unsigned int seq;

	for (seq = first_seq; seq < first_seq + iterations; seq++)
		run_sequence(seq);
	cur_case = "random";
	if (n_silent)
		fail("%u of %u sequences left F in ERR without an error completion, "
		     "errno or error event for it (the kernel saw the corruption and "
		     "said nothing), the first: seq %u", n_silent, n_seq,
		     first_silent);
}

/* ------------------------------------------------------------------ */

static const char *wait_file;

static int worker(const bool *chosen, bool any)
{
	uint64_t t0 = now_ms();
	struct counts c;
	unsigned int i;
	char got[128];
	struct stat st;

	beat("opening the devices");
	dev_open(&dev_a);
	dev_open(&dev_b);
	data_rng.s = run_seed;
	world_setup();
	control_setup();
	control_round();
	if (!count_resources(&base_counts))
		tool_die("rdma resource show failed");
	counts_equal(&base_counts, &base_counts, got, sizeof(got));
	printf("sroce-ringfuzz: this process holds %s\n", got);

	for (i = 0; i < ARRAY_SIZE(cases); i++) {
		if (any && !chosen[i])
			continue;
		cur_case = cases[i].name;
		R.s = run_seed ^ (i + 1);
		cases[i].run();
	}

	cur_case = "teardown";
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
		uint64_t start = now_ms();

		while (stat(wait_file, &st)) {
			beat("waiting for %s", wait_file);
			if (now_ms() - start > 120000) {
				fail("%s did not appear in 120 s", wait_file);
				break;
			}
			sleep_us(100000);
		}
	}
	printf("sroce-ringfuzz: seed=%" PRIu64 " sequences=%u usable=%u err=%u "
	       "silent=%u destroyed=%u ring_ops=%u doorbells=%u "
	       "control_rounds=%u checks=%u failures=%u time=%.1fs\n", run_seed,
	       n_seq, n_usable, n_err, n_silent, n_destroyed, total_ring_ops,
	       total_doorbells, ctl.rounds, checks, failures,
	       (now_ms() - t0) / 1000.0);
	return failures ? 1 : 0;
}

static void usage(int status)
{
	unsigned int i;
	FILE *f = status ? stderr : stdout;

	fprintf(f,
		"usage: sroce-ringfuzz -d DEV -g GID_INDEX -D PEER_DEV -G PEER_GID_INDEX\n"
		"                      [-c CASE]... [--seed S] [--iterations N] [--first K]\n"
		"                      [--stall S] [--wait-file FILE] [--inject FAULT]\n"
		"                      [--verbose]\n"
		"Cases:");
	for (i = 0; i < ARRAY_SIZE(cases); i++)
		fprintf(f, " %s", cases[i].name);
	fprintf(f, "\nFaults: control probe leak stall evidence\n"
		"See the comment at the top of sroce-ringfuzz.c.\n");
	exit(status);
}

static void inject(const char *what)
{
	if (!strcmp(what, "control"))
		inject_control = true;
	else if (!strcmp(what, "probe"))
		inject_probe = true;
	else if (!strcmp(what, "leak"))
		inject_leak = true;
	else if (!strcmp(what, "stall"))
		inject_stall = true;
	else if (!strcmp(what, "evidence"))
		inject_evidence = true;
	else
		tool_die("no fault %s", what);
}

int main(int argc, char **argv)
{
	static const struct option opts[] = {
		{ "dev", required_argument, NULL, 'd' },
		{ "gid-index", required_argument, NULL, 'g' },
		{ "peer-dev", required_argument, NULL, 'D' },
		{ "peer-gid-index", required_argument, NULL, 'G' },
		{ "case", required_argument, NULL, 'c' },
		{ "seed", required_argument, NULL, 's' },
		{ "iterations", required_argument, NULL, 'n' },
		{ "first", required_argument, NULL, 'f' },
		{ "stall", required_argument, NULL, 'S' },
		{ "wait-file", required_argument, NULL, 'w' },
		{ "inject", required_argument, NULL, 'I' },
		{ "verbose", no_argument, NULL, 'v' },
		{ "help", no_argument, NULL, 'h' },
		{}
	};
	bool chosen[ARRAY_SIZE(cases)] = {}, any = false;
	const char *env;
	unsigned int i;
	pid_t pid;
	int c;

	run_seed = now_ms() ^ ((uint64_t)getpid() << 32);
	env = getenv("SROCE_RINGFUZZ_SEED");
	if (env && *env)
		run_seed = strtoull(env, NULL, 0);
	env = getenv("SROCE_RINGFUZZ_ITERATIONS");
	if (env && *env)
		iterations = tool_number(env, 1000000);
	dev_a.gid_index = dev_b.gid_index = -1;
	while ((c = getopt_long(argc, argv, "d:g:D:G:c:hv", opts, NULL)) != -1) {
		switch (c) {
		case 'd': dev_a.name = optarg; break;
		case 'g': dev_a.gid_index = tool_number(optarg, 1023); break;
		case 'D': dev_b.name = optarg; break;
		case 'G': dev_b.gid_index = tool_number(optarg, 1023); break;
		case 's': run_seed = strtoull(optarg, NULL, 0); break;
		case 'n': iterations = tool_number(optarg, 1000000); break;
		case 'f': first_seq = tool_number(optarg, 1000000000); break;
		case 'S': stall_s = tool_number(optarg, 3600); break;
		case 'w': wait_file = optarg; break;
		case 'I': inject(optarg); break;
		case 'v': verbose = true; break;
		case 'c':
			for (i = 0; i < ARRAY_SIZE(cases); i++)
				if (!strcmp(optarg, cases[i].name))
					break;
			if (i == ARRAY_SIZE(cases))
				tool_die("no case %s", optarg);
			chosen[i] = any = true;
			break;
		case 'h': usage(0); break;
		default: usage(2);
		}
	}
	if (optind != argc || !dev_a.name || !dev_b.name ||
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
		exit(worker(chosen, any));
	}
	pin(true);
	return watch(pid);
}
