/* SPDX-License-Identifier: GPL-2.0 OR Linux-OpenIB */
#ifndef SROCE_BUILD_H
#define SROCE_BUILD_H

#include <rdma/ib_verbs.h>

struct sroce_qp;
struct sroce_swqe;

/**
 * struct sroce_build_sent - what sroce_build_send() sent
 * @sent: a packet went (false: no packet buffer now, try again later;
 *	  or @fault)
 * @fault: nothing went: a page of the payload's on-demand paged memory is
 *	   not mapped, and the requester's fault was queued (odp.c); its end
 *	   runs the engine again
 * @first: it was sent for the first time, not again
 * @psn: its PSN
 * @sample: a round trip may be measured from it: it asked for an
 *	    acknowledgment and carries a SEND or WRITE
 */
struct sroce_build_sent {
	bool sent;
	bool fault;
	bool first;
	u32 psn;
	bool sample;
};

enum ib_wc_status sroce_build_fetch(struct sroce_qp *qp, u32 index,
				    struct sroce_swqe *s);
u32 sroce_build_npkts(struct sroce_qp *qp, const struct sroce_swqe *s);
enum ib_wc_status sroce_build_send(struct sroce_qp *qp, struct sroce_swqe *s,
				   struct sroce_build_sent *out);
void sroce_build_seek(struct sroce_qp *qp, u32 index, u32 offset);
u32 sroce_build_rewind(struct sroce_qp *qp, u32 psn);
bool sroce_build_probe(struct sroce_qp *qp, u32 psn);

#endif /* SROCE_BUILD_H */
