// SPDX-License-Identifier: GPL-2.0 OR Linux-OpenIB
/*
 * sroce-errors: RC error completions, on both ends of a connection.
 *
 * One process opens two devices (sroce_a and sroce_b of tests/lib.sh, or
 * any two RoCE devices that can reach each other), and for each case
 * connects a fresh RC QP pair: the requester on the first device, the
 * responder on the second. It provokes one error and checks what each
 * side sees: the completion statuses (IBA 10.8.3 and table 47), the QP
 * states afterwards, that every later work request is flushed, and, for
 * the RNR cases, the devices' rnr_naks_sent/rnr_naks_rcvd counters. One
 * line per check; exit status 0 only if all held, 1 if one did not, 2 on
 * a usage or setup error.
 *
 * The cases (-c CASE, repeatable; default: all but peer-gone):
 *
 *   ok              WRITE, READ and SEND succeed and move the right bytes
 *                   (the pair works, so the errors below are the cases')
 *   bad-rkey        WRITE with an rkey the responder never issued
 *   read-bounds     READ that runs 32 bytes past the end of the MR
 *   no-remote-write WRITE to an MR registered without REMOTE_WRITE
 *   send-too-long   SEND of 256 bytes into a 64-byte receive
 *   rnr-late        SEND before any receive is posted; the receive comes
 *                   --late ms later; rnr_retry 7 (no limit): it succeeds
 *   rnr-exhausted   the same with rnr_retry 0: IBV_WC_RNR_RETRY_EXC_ERR
 *   rnr-refill      rnr_retry 1 and the longest RNR timer: four SENDs in
 *                   a row each meet one RNR NAK and then their receive,
 *                   and succeed (progress refills the budget); a SEND
 *                   that never finds one ends in RNR_RETRY_EXC_ERR; the
 *                   QPs reset and reconnected start with a full budget
 *   peer-gone       a stream of WRITEs; once it runs the tool prints
 *                   "transferring", and someone deletes the responder's
 *                   device: the requester must end with
 *                   IBV_WC_RETRY_EXC_ERR, then flushes, in bounded time
 *   destroy-race    --iterations times: a WRITE with a bad rkey, and the
 *                   responder's QP destroyed 0 to --race-ms ms later,
 *                   while its receive engine may be in its error path
 *                   (which wakes the send engine). Run it with
 *                   /sys/kernel/debug/sroce/engines_inline N and
 *                   error_delay_us set (drivers/sroce/fault.c) to widen
 *                   the window. Every destroy must succeed; the kernel
 *                   judges the rest (a use after free, a crash)
 *
 * Asynchronous events are printed ("info:" lines), not judged.
 */
#include "errors.h"

struct dev dev_a, dev_b;
struct tool_report rep = {
	.case_w = 16, .what_w = 44, .val_w = 26, .bad = "FAIL",
};
unsigned int late_ms = 200;
unsigned int deadline_s = 60;
unsigned int race_iterations = 50;
unsigned int race_ms = 10;

static const struct tool_case case_list[] = {
	{ "ok", case_ok, true },
	{ "bad-rkey", case_bad_rkey, true },
	{ "read-bounds", case_read_bounds, true },
	{ "no-remote-write", case_no_remote_write, true },
	{ "send-too-long", case_send_too_long, true },
	{ "rnr-late", case_rnr_late, true },
	{ "rnr-exhausted", case_rnr_exhausted, true },
	{ "rnr-refill", case_rnr_refill, true },
	{ "peer-gone", case_peer_gone, false },
	{ "destroy-race", case_destroy_race, false },
};

static bool chosen[ARRAY_SIZE(case_list)];
static struct tool_cases cases = {
	.list = case_list, .n = ARRAY_SIZE(case_list), .chosen = chosen,
};

static void usage(int status)
{
	fprintf(status ? stderr : stdout,
		"usage: sroce-errors -d DEV -g GID_INDEX -D PEER_DEV -G PEER_GID_INDEX\n"
		"                    [-c CASE]... [--late MS] [--deadline S]\n"
		"                    [--iterations N] [--race-ms MS]\n"
		"\n"
		"Provokes RC errors between a requester on DEV and a responder on\n"
		"PEER_DEV and checks both sides' completions and QP states.\n"
		"  -c, --case CASE   run CASE (repeatable; default all but peer-gone)\n"
		"      --late MS     rnr-late: post the receive after MS ms (200)\n"
		"      --deadline S  peer-gone: give up after S s (60)\n"
		"      --iterations N  destroy-race: rounds (50)\n"
		"      --race-ms MS  destroy-race: longest wait before destroy (10)\n"
		"Cases:");
	tool_case_list(&cases, status ? stderr : stdout);
	fprintf(status ? stderr : stdout, "\n");
	exit(status);
}

static void choose_case(const char *name)
{
	tool_case_choose(&cases, name);
}

static void start_case(unsigned int i)
{
	rep.cur = case_list[i].name;
}

int main(int argc, char **argv)
{
	enum { O_LATE = 256, O_DEADLINE, O_ITERATIONS, O_RACE_MS };
	const struct tool_opt opts[] = {
		TOOL_OPTS_DEV_PAIR(&dev_a, &dev_b),
		TOOL_CALL('c', "case", choose_case),
		TOOL_NUM(O_LATE, "late", UINT, &late_ms, 60000),
		TOOL_NUM(O_DEADLINE, "deadline", UINT, &deadline_s, 3600),
		TOOL_NUM(O_ITERATIONS, "iterations", UINT, &race_iterations, 100000),
		TOOL_NUM(O_RACE_MS, "race-ms", UINT, &race_ms, 1000),
		TOOL_HELP('h', "help"),
	};

	dev_a.gid_index = dev_b.gid_index = -1;
	if (tool_getopt(argc, argv, opts, ARRAY_SIZE(opts), usage) != argc ||
	    !dev_a.name || !dev_b.name ||
	    dev_a.gid_index < 0 || dev_b.gid_index < 0)
		usage(2);
	setvbuf(stdout, NULL, _IOLBF, 0);
	dev_open(&dev_a);
	dev_open(&dev_b);
	tool_case_run(&cases, start_case);
	printf("sroce-errors: %u checks, %u failures\n", rep.checks,
	       rep.failures);
	return rep.failures ? 1 : 0;
}
