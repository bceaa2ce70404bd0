// SPDX-License-Identifier: GPL-2.0 OR Linux-OpenIB
/*
 * The cases where the responder goes away: peer-gone (its device is
 * deleted mid-stream) and destroy-race (its QP destroyed in its error path).
 */
#include "errors.h"

/*
 * The responder's device goes away mid-stream: nothing answers any more,
 * the transport timer fires retry_cnt + 1 times (with back-off), and the
 * requester completes the oldest WR with IBV_WC_RETRY_EXC_ERR and flushes
 * the others. The responder side no longer exists; its calls fail.
 */
void case_peer_gone(void)
{
	struct qp_params p = default_params;
	unsigned int outstanding = 0, done = 0, flushed = 0, other = 0;
	double start, last_ok, err_at = 0;
	enum ibv_wc_status first = IBV_WC_SUCCESS;
	uint64_t next = 0;
	struct ibv_wc wc;
	struct end a, b;
	char got[64];

	pair_up(&a, &b, &p);
	start = tool_now();
	last_ok = start;
	while (first == IBV_WC_SUCCESS || outstanding) {
		if (first == IBV_WC_SUCCESS && outstanding < PEER_GONE_DEPTH) {
			post_send(&a, next, IBV_WR_RDMA_WRITE,
				  (next % 4) * PEER_GONE_SIZE, PEER_GONE_SIZE,
				  (uintptr_t)b.buf + (next % 4) * PEER_GONE_SIZE,
				  b.mr->rkey);
			next++;
			outstanding++;
			continue;
		}
		if (!poll_one(&a, &wc, 100)) {
			if (tool_now() - start > deadline_s)
				break;
			continue;
		}
		outstanding--;
		if (wc.status == IBV_WC_SUCCESS) {
			last_ok = tool_now();
			if (++done == 16) {
				printf("transferring\n");
				fflush(stdout);
			}
		} else if (first == IBV_WC_SUCCESS) {
			first = wc.status;
			err_at = tool_now();
		} else if (wc.status == IBV_WC_WR_FLUSH_ERR) {
			flushed++;
		} else {
			other++;
		}
	}
	dev_b.gone = true;
	snprintf(got, sizeof(got), "%u WRs after %.0f s", outstanding,
		 tool_now() - start);
	tool_check(&rep, "requester: every WR completed", "0 WRs", outstanding ? got : "0 WRs");
	tool_check(&rep, "requester: first error", ibv_wc_status_str(IBV_WC_RETRY_EXC_ERR),
	      first == IBV_WC_SUCCESS ? "none" : ibv_wc_status_str(first));
	snprintf(got, sizeof(got), "%u", other);
	tool_check(&rep, "requester: the rest flushed, nothing else", "0", got);
	tool_check_true(&rep, "requester: WRs completed before the error", done >= 16,
		   "fewer than 16");
	expect_state(&a, "requester: QP state", IBV_QPS_ERR, 1000);
	if (err_at)
		info("%u WRITEs done, error %.1f s after the last success, "
		     "%u flushed", done, err_at - last_ok, flushed);
	dev_events(&dev_a);
	end_destroy(&a);
	end_destroy(&b);
}

void case_destroy_race(void)
{
	struct qp_params p = default_params;
	unsigned int i, failed = 0;
	struct end a, b;
	char got[16];

	for (i = 0; i < race_iterations; i++) {
		pair_up(&a, &b, &p);
		post_send(&a, 1, IBV_WR_RDMA_WRITE, 0, 64, (uintptr_t)b.buf,
			  b.mr->rkey ^ 0x00ffff5a);
		tool_sleep_ms(i % (race_ms + 1));
		if (ibv_destroy_qp(b.qp))
			failed++;
		b.qp = NULL;
		pair_down(&a, &b);
	}
	snprintf(got, sizeof(got), "%u", failed);
	tool_check(&rep, "responder: destroys that failed", "0", got);
	info("%u QPs destroyed while their error path ran", race_iterations);
}
