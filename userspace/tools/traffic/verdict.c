// SPDX-License-Identifier: GPL-2.0 OR Linux-OpenIB
/*
 * The end: when both streams are done, the tallies, the write window,
 * the atomic words and untouched memory, and the verdicts.
 */
#include "traffic.h"

/* The end: tallies, memory checks, verdicts */

static bool tx_done(void)
{
	uint32_t q;

	for (q = 0; q < c.p.qps; q++)
		if (c.qp[q].done < c.qp[q].tx.nops)
			return false;
	return true;
}

static bool rx_done_qp(struct tqp *t)
{
	if (!c.p.allow_loss)
		return t->rx.next == t->rx.nops && t->wdone == t->rx.nrecv;
	if (!c.peer_tx_done)
		return false;
	replay_more(t);
	if (t->rx.next == t->rx.nops && t->distinct == t->rx.nrecv)
		return true;
	/* Whatever is still missing after a quiet while was lost. */
	return tool_now() > (t->last_rx > c.peer_tx_done_at ? t->last_rx : c.peer_tx_done_at) +
		       IDLE_SECS;
}

static bool rx_done(void)
{
	uint32_t q;

	for (q = 0; q < c.p.qps; q++)
		if (!rx_done_qp(&c.qp[q]))
			return false;
	return true;
}

static void send_txdone(void)
{
	uint64_t w[MSG_WORDS];
	uint32_t q, k;

	for (q = 0; q < c.p.qps; q++)
		for (k = 0; k < K_NR; k++)
			w[q * K_NR + k] = c.qp[q].tx_count[k];
	for (k = 0; k < K_NR; k++)
		w[c.p.qps * K_NR + k] = c.tx_bytes[k];
	if (inject(INJ_TALLY))
		w[K_SEND_IMM]++;
	send_msg(M_TXDONE, w, c.p.qps * K_NR + K_NR);
	c.tx_done_sent = true;
}

/* Who wrote byte @off of my window last: replay the peer's stream @q. */
static void find_writer(uint32_t q, uint32_t off, char *buf, size_t len)
{
	struct stream s;
	struct op op;
	bool found = false;
	uint32_t idx = 0, olen = 0, kind = 0;
	uint64_t roff = 0;

	stream_init(&s, !c.side, q);
	while (s.next < s.nops) {
		gen_op(&s, &op);
		if (kind_is_write(op.kind) && off >= op.roff && off < op.roff + op.len) {
			found = true;
			idx = op.idx;
			kind = op.kind;
			olen = op.len;
			roff = op.roff;
		}
	}
	if (!found)
		snprintf(buf, len, "never written by the peer");
	else
		snprintf(buf, len, "last written by the peer's op %u %s len %u at offset %llu, its byte %llu",
			 idx, kind_verbs[kind], olen, (unsigned long long)roff,
			 (unsigned long long)(off - roff));
}

static void check_window(struct tqp *t)
{
	uint8_t *win = c.win + t->idx * c.win_stride;
	size_t i, bad = 0, first = 0, unverified = 0;
	char desc[160];

	if (t->idx == 0 && inject(INJ_WINDOW))
		win[GUARD + c.p.win_size / 2] ^= 0x10;
	if (!memcmp(win, t->model, c.win_stride))
		return;
	for (i = 0; i < c.win_stride; i++) {
		if (win[i] == t->model[i])
			continue;
		if (c.p.allow_loss && t->touched[i]) {
			unverified++;	/* a UC write may be lost or cut short */
			continue;
		}
		if (!bad++)
			first = i;
	}
	if (unverified && opt.verbose)
		say("qp %u: %zu window bytes differ where lost writes may explain it", t->idx,
		    unverified);
	if (!bad)
		return;
	if (first < GUARD || first >= GUARD + c.p.win_size)
		snprintf(desc, sizeof(desc), "a guard byte around the window");
	else
		find_writer(t->idx, first - GUARD, desc, sizeof(desc));
	mismatch("qp %u window (target of the peer's writes): byte %ld expected 0x%02x got 0x%02x (%s), %zu bytes differ",
		 t->idx, (long)first - GUARD, t->model[first], win[first], desc, bad);
}

static void check_atomic(const struct tqp *t)
{
	const uint8_t *a = c.atom + t->idx * ATOM_STRIDE;
	uint64_t got;

	memcpy(&got, a, 8);
	if (got != t->rx.atom)
		mismatch("qp %u atomic word (target of the peer's %u cas, %u fadd): 0x%016llx, expected 0x%016llx",
			 t->idx, t->rx.count[K_CAS], t->rx.count[K_FADD],
			 (unsigned long long)got, (unsigned long long)t->rx.atom);
	if (!is_fill(a + 8, 8))
		mismatch("qp %u: the guard bytes after the atomic word changed", t->idx);
}

static void check_tallies(const struct tqp *t)
{
	unsigned int k;

	for (k = 0; k < K_NR; k++) {
		if (c.peer_count[t->idx][k] != t->rx.count[k])
			mismatch("qp %u tally: the peer says it completed %u %s, its stream has %u",
				 t->idx, c.peer_count[t->idx][k], kind_verbs[k], t->rx.count[k]);
		if (!c.p.allow_loss && kind_consumes_recv(k) && t->rx_count[k] != t->rx.count[k])
			mismatch("qp %u tally: received %u %s, the peer's stream has %u",
				 t->idx, t->rx_count[k], kind_verbs[k], t->rx.count[k]);
	}
}

/* Nothing may have written to my pools, nor outside a check to a slot. */
static void check_untouched(void)
{
	uint32_t i, q, m;
	size_t len, off;

	for (i = 0; i < NUM_POOL; i++) {
		pool_fill(c.tmp_exp, c.p.pool_size, i);
		for (off = 0; off < c.p.pool_size && c.pool[i][off] == c.tmp_exp[off]; off++)
			;
		if (off < c.p.pool_size)
			mismatch("source pool %u (read by the peer) changed at byte %zu", i, off);
	}
	/* With --allow-loss, a late duplicate may still land in a receive. */
	for (q = 0; q < c.p.qps; q++) {
		len = (size_t)(c.p.sq_depth + (c.p.allow_loss ? 0 : c.p.rq_depth)) * c.slot_size;
		for (m = 0; m < NUM_SMR; m++) {
			if (is_fill(c.qp[q].sbuf[m], len))
				continue;
			for (off = 0; c.qp[q].sbuf[m][off] == FILL; off++)
				;
			mismatch("qp %u scatter mr %u: byte %zu (slot %zu offset %zu) changed unseen: 0x%02x",
				 q, m, off, off / c.slot_size, off % c.slot_size, c.qp[q].sbuf[m][off]);
		}
	}
}

static void final_checks(void)
{
	struct op op;
	uint32_t q;

	for (q = 0; q < c.p.qps; q++) {
		struct tqp *t = &c.qp[q];

		while (t->rx.next < t->rx.nops)
			replay_next(t, &op);
		check_window(t);
		check_atomic(t);
		check_tallies(t);
	}
	check_untouched();
}

int advance(void)
{
	uint64_t w[1];

	if (!c.tx_done_sent && tx_done()) {
		send_txdone();
		return 1;
	}
	if (c.tx_done_sent && c.peer_tx_done && !c.verdict_sent && rx_done()) {
		final_checks();
		w[0] = c.mismatches;
		send_msg(M_VERDICT, w, 1);
		c.verdict_sent = true;
		return 1;
	}
	return 0;
}
