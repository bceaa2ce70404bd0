/* SPDX-License-Identifier: GPL-2.0 OR Linux-OpenIB */
#ifndef SROCE_OPCODE_H
#define SROCE_OPCODE_H

#include <linux/bits.h>
#include <linux/types.h>

/**
 * enum sroce_op_flag - what a packet opcode means and carries
 * @SROCE_OP_VALID: the opcode is one we implement
 * @SROCE_OP_REQ: a request, for the responder
 * @SROCE_OP_RESP: a response, for the completer
 * @SROCE_OP_FIRST: first packet of a message
 * @SROCE_OP_MIDDLE: middle packet
 * @SROCE_OP_LAST: last packet; FIRST and LAST together make ONLY
 * @SROCE_OP_PAYLOAD: carries a payload
 * @SROCE_OP_SEND: SEND
 * @SROCE_OP_WRITE: RDMA WRITE
 * @SROCE_OP_READ: RDMA READ request
 * @SROCE_OP_ATOMIC: compare-and-swap or fetch-and-add request
 * @SROCE_OP_READ_RESP: RDMA READ response
 * @SROCE_OP_ACK: ACK (or NAK)
 * @SROCE_OP_ATOMIC_ACK: atomic acknowledge
 * @SROCE_OP_RC: reliable connection
 * @SROCE_OP_UC: unreliable connection
 * @SROCE_OP_UD: unreliable datagram
 * @SROCE_OP_DETH: has a DETH
 * @SROCE_OP_RETH: has a RETH
 * @SROCE_OP_ATMETH: has an AtomicETH
 * @SROCE_OP_AETH: has an AETH
 * @SROCE_OP_ATMACK: has an AtomicAckETH
 * @SROCE_OP_IMMDT: has immediate data
 * @SROCE_OP_IETH: has an IETH (send with invalidate)
 * @SROCE_OP_FLUSH: FLUSH request (IBA 1.5)
 * @SROCE_OP_ATOMIC_WRITE: ATOMIC WRITE request (IBA 1.5)
 * @SROCE_OP_FETH: has a FETH
 * @SROCE_OP_XRC: extended reliable connection (IBA annex A14)
 * @SROCE_OP_XRCETH: has an XRCETH
 */
enum sroce_op_flag {
	SROCE_OP_VALID = BIT(0),
	SROCE_OP_REQ = BIT(1),
	SROCE_OP_RESP = BIT(2),
	SROCE_OP_FIRST = BIT(3),
	SROCE_OP_MIDDLE = BIT(4),
	SROCE_OP_LAST = BIT(5),
	SROCE_OP_PAYLOAD = BIT(6),
	SROCE_OP_SEND = BIT(7),
	SROCE_OP_WRITE = BIT(8),
	SROCE_OP_READ = BIT(9),
	SROCE_OP_ATOMIC = BIT(10),
	SROCE_OP_READ_RESP = BIT(11),
	SROCE_OP_ACK = BIT(12),
	SROCE_OP_ATOMIC_ACK = BIT(13),
	SROCE_OP_RC = BIT(14),
	SROCE_OP_UC = BIT(15),
	SROCE_OP_UD = BIT(16),
	SROCE_OP_DETH = BIT(17),
	SROCE_OP_RETH = BIT(18),
	SROCE_OP_ATMETH = BIT(19),
	SROCE_OP_AETH = BIT(20),
	SROCE_OP_ATMACK = BIT(21),
	SROCE_OP_IMMDT = BIT(22),
	SROCE_OP_IETH = BIT(23),
	SROCE_OP_FLUSH = BIT(24),
	SROCE_OP_ATOMIC_WRITE = BIT(25),
	SROCE_OP_FETH = BIT(26),
	SROCE_OP_XRC = BIT(27),
	SROCE_OP_XRCETH = BIT(28),
};

#define SROCE_OP_ONLY	(SROCE_OP_FIRST | SROCE_OP_LAST)

/**
 * struct sroce_opcode_info - one entry of the opcode table
 * @flags: enum sroce_op_flag bits
 * @hdr_len: bytes of BTH and extended headers
 * @xrceth: offset of the XRCETH from the BTH
 * @deth: offset of the DETH
 * @feth: offset of the FETH
 * @reth: offset of the RETH or AtomicETH
 * @aeth: offset of the AETH
 * @atmack: offset of the AtomicAckETH
 * @immdt: offset of the ImmDt or IETH
 */
struct sroce_opcode_info {
	u32 flags;
	u8 hdr_len;
	u8 xrceth;
	u8 deth;
	u8 feth;
	u8 reth;
	u8 aeth;
	u8 atmack;
	u8 immdt;
};

extern struct sroce_opcode_info sroce_opcodes[256];

void sroce_opcode_init(void);

#endif /* SROCE_OPCODE_H */
