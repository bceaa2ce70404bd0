// SPDX-License-Identifier: GPL-2.0 OR Linux-OpenIB
/*
 * DOC: Opcode table
 *
 * Every packet opcode of IBA vol. 1 table 38 that sroce implements, as
 * data: what the opcode means and which extended headers follow its BTH.
 * Header offsets are derived at module load from the headers present, in
 * the order of IBA 9.2: BTH, XRCETH, DETH, FETH, RETH or AtomicETH, AETH,
 * AtomicAckETH, ImmDt or IETH, payload.
 *
 * The XRC opcodes (IBA annex A14) are those of RC with the XRC transport
 * code: they are made from the RC entries at load, and their requests
 * gain an XRCETH.
 */
#include <linux/cache.h>

#include "opcode.h"
#include "wire.h"

#define V	SROCE_OP_VALID
#define RC	SROCE_OP_RC
#define UC	SROCE_OP_UC
#define UD	SROCE_OP_UD
#define FIRST	SROCE_OP_FIRST
#define MIDDLE	SROCE_OP_MIDDLE
#define LAST	SROCE_OP_LAST
#define ONLY	SROCE_OP_ONLY
#define IMM	SROCE_OP_IMMDT
#define RETH	SROCE_OP_RETH
#define AETH	SROCE_OP_AETH
/* Requests with payload, and READ responses. */
#define SEND	(V | SROCE_OP_REQ | SROCE_OP_SEND | SROCE_OP_PAYLOAD)
#define WR	(V | SROCE_OP_REQ | SROCE_OP_WRITE | SROCE_OP_PAYLOAD)
#define RRESP	(V | SROCE_OP_RESP | SROCE_OP_READ_RESP | SROCE_OP_PAYLOAD)
#define ATOMIC	(V | SROCE_OP_REQ | SROCE_OP_ATOMIC | ONLY | SROCE_OP_ATMETH)

struct sroce_opcode_info sroce_opcodes[256] __ro_after_init = {
	[IB_OPCODE_RC_SEND_FIRST].flags = RC | SEND | FIRST,
	[IB_OPCODE_RC_SEND_MIDDLE].flags = RC | SEND | MIDDLE,
	[IB_OPCODE_RC_SEND_LAST].flags = RC | SEND | LAST,
	[IB_OPCODE_RC_SEND_LAST_WITH_IMMEDIATE].flags = RC | SEND | LAST | IMM,
	[IB_OPCODE_RC_SEND_ONLY].flags = RC | SEND | ONLY,
	[IB_OPCODE_RC_SEND_ONLY_WITH_IMMEDIATE].flags = RC | SEND | ONLY | IMM,
	[IB_OPCODE_RC_RDMA_WRITE_FIRST].flags = RC | WR | FIRST | RETH,
	[IB_OPCODE_RC_RDMA_WRITE_MIDDLE].flags = RC | WR | MIDDLE,
	[IB_OPCODE_RC_RDMA_WRITE_LAST].flags = RC | WR | LAST,
	[IB_OPCODE_RC_RDMA_WRITE_LAST_WITH_IMMEDIATE].flags =
		RC | WR | LAST | IMM,
	[IB_OPCODE_RC_RDMA_WRITE_ONLY].flags = RC | WR | ONLY | RETH,
	[IB_OPCODE_RC_RDMA_WRITE_ONLY_WITH_IMMEDIATE].flags =
		RC | WR | ONLY | RETH | IMM,
	[IB_OPCODE_RC_RDMA_READ_REQUEST].flags =
		RC | V | SROCE_OP_REQ | SROCE_OP_READ | ONLY | RETH,
	[IB_OPCODE_RC_RDMA_READ_RESPONSE_FIRST].flags = RC | RRESP | FIRST | AETH,
	[IB_OPCODE_RC_RDMA_READ_RESPONSE_MIDDLE].flags = RC | RRESP | MIDDLE,
	[IB_OPCODE_RC_RDMA_READ_RESPONSE_LAST].flags = RC | RRESP | LAST | AETH,
	[IB_OPCODE_RC_RDMA_READ_RESPONSE_ONLY].flags = RC | RRESP | ONLY | AETH,
	[IB_OPCODE_RC_ACKNOWLEDGE].flags =
		RC | V | SROCE_OP_RESP | SROCE_OP_ACK | ONLY | AETH,
	[IB_OPCODE_RC_ATOMIC_ACKNOWLEDGE].flags =
		RC | V | SROCE_OP_RESP | SROCE_OP_ATOMIC_ACK | ONLY | AETH |
		SROCE_OP_ATMACK,
	[IB_OPCODE_RC_COMPARE_SWAP].flags = RC | ATOMIC,
	[IB_OPCODE_RC_FETCH_ADD].flags = RC | ATOMIC,
	[IB_OPCODE_RC_SEND_LAST_WITH_INVALIDATE].flags =
		RC | SEND | LAST | SROCE_OP_IETH,
	[IB_OPCODE_RC_SEND_ONLY_WITH_INVALIDATE].flags =
		RC | SEND | ONLY | SROCE_OP_IETH,
	/* IBA 1.5 table 38: answered by a RDMA READ RESPONSE ONLY. */
	[SROCE_OPCODE_RC_FLUSH].flags =
		RC | V | SROCE_OP_REQ | SROCE_OP_FLUSH | ONLY | SROCE_OP_FETH |
		RETH,
	[SROCE_OPCODE_RC_ATOMIC_WRITE].flags =
		RC | V | SROCE_OP_REQ | SROCE_OP_ATOMIC_WRITE |
		SROCE_OP_PAYLOAD | ONLY | RETH,

	[IB_OPCODE_UC_SEND_FIRST].flags = UC | SEND | FIRST,
	[IB_OPCODE_UC_SEND_MIDDLE].flags = UC | SEND | MIDDLE,
	[IB_OPCODE_UC_SEND_LAST].flags = UC | SEND | LAST,
	[IB_OPCODE_UC_SEND_LAST_WITH_IMMEDIATE].flags = UC | SEND | LAST | IMM,
	[IB_OPCODE_UC_SEND_ONLY].flags = UC | SEND | ONLY,
	[IB_OPCODE_UC_SEND_ONLY_WITH_IMMEDIATE].flags = UC | SEND | ONLY | IMM,
	[IB_OPCODE_UC_RDMA_WRITE_FIRST].flags = UC | WR | FIRST | RETH,
	[IB_OPCODE_UC_RDMA_WRITE_MIDDLE].flags = UC | WR | MIDDLE,
	[IB_OPCODE_UC_RDMA_WRITE_LAST].flags = UC | WR | LAST,
	[IB_OPCODE_UC_RDMA_WRITE_LAST_WITH_IMMEDIATE].flags =
		UC | WR | LAST | IMM,
	[IB_OPCODE_UC_RDMA_WRITE_ONLY].flags = UC | WR | ONLY | RETH,
	[IB_OPCODE_UC_RDMA_WRITE_ONLY_WITH_IMMEDIATE].flags =
		UC | WR | ONLY | RETH | IMM,

	[IB_OPCODE_UD_SEND_ONLY].flags = UD | SEND | ONLY | SROCE_OP_DETH,
	[IB_OPCODE_UD_SEND_ONLY_WITH_IMMEDIATE].flags =
		UD | SEND | ONLY | SROCE_OP_DETH | IMM,
};

/* Lay out one opcode's headers in IBA 9.2 order. */
static void layout(struct sroce_opcode_info *op)
{
	u8 off = sizeof(struct sroce_bth);

	op->xrceth = off;
	if (op->flags & SROCE_OP_XRCETH)
		off += sizeof(struct sroce_xrceth);
	op->deth = off;
	if (op->flags & SROCE_OP_DETH)
		off += sizeof(struct sroce_deth);
	op->feth = off;
	if (op->flags & SROCE_OP_FETH)
		off += sizeof(struct sroce_feth);
	op->reth = off;
	if (op->flags & SROCE_OP_RETH)
		off += sizeof(struct sroce_reth);
	else if (op->flags & SROCE_OP_ATMETH)
		off += sizeof(struct sroce_atmeth);
	op->aeth = off;
	if (op->flags & SROCE_OP_AETH)
		off += sizeof(struct sroce_aeth);
	op->atmack = off;
	if (op->flags & SROCE_OP_ATMACK)
		off += sizeof(struct sroce_atmack);
	op->immdt = off;
	if (op->flags & SROCE_OP_IMMDT)
		off += sizeof(struct sroce_immdt);
	else if (op->flags & SROCE_OP_IETH)
		off += sizeof(struct sroce_ieth);
	op->hdr_len = off;
}

/**
 * sroce_opcode_init() - compute the header layout of every opcode
 */
void __init sroce_opcode_init(void)
{
	u32 f;
	int i;

	for (i = 0; i <= SROCE_OPCODE_OP_MASK; i++) {
		f = sroce_opcodes[IB_OPCODE_RC | i].flags;
		if (!(f & SROCE_OP_VALID))
			continue;
		f = (f & ~SROCE_OP_RC) | SROCE_OP_XRC;
		if (f & SROCE_OP_REQ)
			f |= SROCE_OP_XRCETH;
		sroce_opcodes[SROCE_OPCODE_XRC | i].flags = f;
	}
	for (i = 0; i < ARRAY_SIZE(sroce_opcodes); i++)
		if (sroce_opcodes[i].flags & SROCE_OP_VALID)
			layout(&sroce_opcodes[i]);
}
