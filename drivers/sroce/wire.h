/* SPDX-License-Identifier: GPL-2.0 OR Linux-OpenIB */
/*
 * The RoCEv2 wire format: the InfiniBand transport headers of IBA vol. 1
 * chapter 9.2 and 9.3, carried in UDP (IBA Annex A17). Every field is
 * read and written through the typed accessors here; nothing else in the
 * driver touches header bytes.
 */
#ifndef SROCE_WIRE_H
#define SROCE_WIRE_H

#include <linux/bits.h>
#include <linux/build_bug.h>
#include <linux/types.h>
#include <asm/byteorder.h>
#include <rdma/ib_pack.h>

/* Opcodes of IBA 1.5 that older kernels' ib_pack.h lacks (table 38). */
#define SROCE_OPCODE_RC_FLUSH		0x1c
#define SROCE_OPCODE_RC_ATOMIC_WRITE	0x1d
/*
 * XRC (IBA annex A14): the RC operations, with this transport code in
 * the top three bits; its requests carry an XRCETH after the BTH.
 */
#define SROCE_OPCODE_XRC		0xa0
#define SROCE_OPCODE_OP_MASK		0x1f

#define SROCE_PSN_MASK			0xffffff
#define SROCE_QPN_MASK			0xffffff
#define SROCE_ICRC_SIZE			4

/**
 * struct sroce_bth - Base Transport Header (IBA 9.2)
 * @opcode: transport and operation
 * @flags: SE (bit 7), MigReq (bit 6), PadCnt (bits 5-4), TVer (bits 3-0)
 * @pkey: partition key
 * @qpn: FECN (bit 31), BECN (bit 30), reserved, destination QP (bits 23-0)
 * @apsn: AckReq (bit 31), reserved, PSN (bits 23-0)
 */
struct sroce_bth {
	u8 opcode;
	u8 flags;
	__be16 pkey;
	__be32 qpn;
	__be32 apsn;
};

#define SROCE_BTH_SE		0x80
#define SROCE_BTH_MIG		0x40
#define SROCE_BTH_PAD_SHIFT	4
#define SROCE_BTH_PAD_MASK	0x30
#define SROCE_BTH_TVER_MASK	0x0f
#define SROCE_BTH_ACKREQ	BIT(31)
#define SROCE_BTH_RESV8A_MASK	0xff000000U	/* FECN, BECN, reserved */

/**
 * struct sroce_reth - RDMA Extended Transport Header (IBA 9.3.3)
 * @va: virtual address
 * @rkey: remote key
 * @len: DMA length in bytes
 */
struct sroce_reth {
	__be64 va;
	__be32 rkey;
	__be32 len;
} __packed;

/**
 * struct sroce_aeth - ACK Extended Transport Header (IBA 9.3.5)
 * @smsn: syndrome (bits 31-24) and MSN (bits 23-0)
 */
struct sroce_aeth {
	__be32 smsn;
};

/*
 * AETH syndromes (IBA 9.3.5, table 42): the top two bits select ACK,
 * RNR NAK or NAK; the low five bits are a credit count, an RNR timer code
 * or a NAK code.
 */
#define SROCE_AETH_TYPE_MASK	0x60
#define SROCE_AETH_ACK		0x00
#define SROCE_AETH_RNR_NAK	0x20
#define SROCE_AETH_NAK		0x60
#define SROCE_AETH_VALUE_MASK	0x1f
#define SROCE_AETH_CREDIT_INVALID	0x1f	/* end-to-end credits not used */

/* NAK codes (IBA 9.3.5.1, table 43). */
enum sroce_nak_code {
	SROCE_NAK_PSN_SEQ_ERR = 0,
	SROCE_NAK_INVALID_REQ = 1,
	SROCE_NAK_REM_ACCESS_ERR = 2,
	SROCE_NAK_REM_OP_ERR = 3,
	SROCE_NAK_INVALID_RD_REQ = 4,
};

/**
 * struct sroce_atmeth - Atomic Extended Transport Header (IBA 9.3.4)
 * @va: virtual address, 8-byte aligned
 * @rkey: remote key
 * @swap_add: swap (compare and swap) or add (fetch and add) operand
 * @compare: compare operand
 */
struct sroce_atmeth {
	__be64 va;
	__be32 rkey;
	__be64 swap_add;
	__be64 compare;
} __packed;

/**
 * struct sroce_atmack - Atomic Acknowledge Extended Transport Header
 * (IBA 9.3.6)
 * @orig: the value at the address before the operation
 */
struct sroce_atmack {
	__be64 orig;
} __packed;

/**
 * struct sroce_immdt - Immediate Data Extended Transport Header (IBA 9.3.7)
 * @imm: immediate data, opaque
 */
struct sroce_immdt {
	__be32 imm;
};

/**
 * struct sroce_ieth - Invalidate Extended Transport Header (IBA 9.3.8)
 * @rkey: the remote key to invalidate
 */
struct sroce_ieth {
	__be32 rkey;
};

/**
 * struct sroce_deth - Datagram Extended Transport Header (IBA 9.3.2)
 * @qkey: queue key
 * @sqp: reserved (bits 31-24) and source QP (bits 23-0)
 */
struct sroce_deth {
	__be32 qkey;
	__be32 sqp;
};

/**
 * struct sroce_feth - FLUSH Extended Transport Header (IBA 1.5, 9.3.9)
 * @flags: reserved (bits 31-6), selectivity level (bits 5-4), placement
 *	   type (bits 3-0)
 */
struct sroce_feth {
	__be32 flags;
};

#define SROCE_FETH_PLT_MASK	0x0f
#define SROCE_FETH_SEL_MASK	0x30
#define SROCE_FETH_SEL_SHIFT	4
/* Placement types (bits) and selectivity levels, as in ib_user_verbs.h. */
#define SROCE_FLUSH_GLOBAL	0x1
#define SROCE_FLUSH_PERSISTENT	0x2
#define SROCE_FLUSH_RANGE	0
#define SROCE_FLUSH_MR		1

static_assert(sizeof(struct sroce_bth) == 12);
/**
 * struct sroce_xrceth - XRC Extended Transport Header (IBA annex A14)
 * @srqn: reserved (bits 31-24), the target's XRC SRQ (bits 23-0)
 */
struct sroce_xrceth {
	__be32 srqn;
};

static_assert(sizeof(struct sroce_xrceth) == 4);
static_assert(sizeof(struct sroce_feth) == 4);
static_assert(sizeof(struct sroce_reth) == 16);
static_assert(sizeof(struct sroce_aeth) == 4);
static_assert(sizeof(struct sroce_atmeth) == 28);
static_assert(sizeof(struct sroce_atmack) == 8);
static_assert(sizeof(struct sroce_deth) == 8);

/* BTH */

static inline u8 sroce_bth_pad(const struct sroce_bth *bth)
{
	return (bth->flags & SROCE_BTH_PAD_MASK) >> SROCE_BTH_PAD_SHIFT;
}

static inline bool sroce_bth_se(const struct sroce_bth *bth)
{
	return bth->flags & SROCE_BTH_SE;
}

static inline u8 sroce_bth_tver(const struct sroce_bth *bth)
{
	return bth->flags & SROCE_BTH_TVER_MASK;
}

static inline u32 sroce_bth_qpn(const struct sroce_bth *bth)
{
	return be32_to_cpu(bth->qpn) & SROCE_QPN_MASK;
}

static inline u32 sroce_bth_psn(const struct sroce_bth *bth)
{
	return be32_to_cpu(bth->apsn) & SROCE_PSN_MASK;
}

static inline bool sroce_bth_ackreq(const struct sroce_bth *bth)
{
	return be32_to_cpu(bth->apsn) & SROCE_BTH_ACKREQ;
}

/**
 * sroce_bth_init() - fill a BTH
 * @bth: the header
 * @opcode: transport and operation
 * @se: solicited event
 * @pad: pad bytes after the payload, 0 to 3
 * @pkey: partition key
 * @qpn: destination QP
 * @ackreq: ask for an acknowledgment
 * @psn: packet sequence number
 */
static inline void sroce_bth_init(struct sroce_bth *bth, u8 opcode, bool se,
				  u8 pad, u16 pkey, u32 qpn, bool ackreq,
				  u32 psn)
{
	bth->opcode = opcode;
	bth->flags = (se ? SROCE_BTH_SE : 0) | pad << SROCE_BTH_PAD_SHIFT;
	bth->pkey = cpu_to_be16(pkey);
	bth->qpn = cpu_to_be32(qpn & SROCE_QPN_MASK);
	bth->apsn = cpu_to_be32((ackreq ? SROCE_BTH_ACKREQ : 0) |
				(psn & SROCE_PSN_MASK));
}

/* AETH */

static inline u8 sroce_aeth_syndrome(const struct sroce_aeth *aeth)
{
	return be32_to_cpu(aeth->smsn) >> 24;
}

static inline u32 sroce_aeth_msn(const struct sroce_aeth *aeth)
{
	return be32_to_cpu(aeth->smsn) & SROCE_PSN_MASK;
}

static inline void sroce_aeth_set(struct sroce_aeth *aeth, u8 syndrome,
				  u32 msn)
{
	aeth->smsn = cpu_to_be32((u32)syndrome << 24 | (msn & SROCE_PSN_MASK));
}

/* DETH */

static inline u8 sroce_feth_plt(const struct sroce_feth *feth)
{
	return be32_to_cpu(feth->flags) & SROCE_FETH_PLT_MASK;
}

static inline u8 sroce_feth_sel(const struct sroce_feth *feth)
{
	return (be32_to_cpu(feth->flags) & SROCE_FETH_SEL_MASK) >>
	       SROCE_FETH_SEL_SHIFT;
}

static inline void sroce_feth_set(struct sroce_feth *feth, u8 plt, u8 sel)
{
	feth->flags = cpu_to_be32((plt & SROCE_FETH_PLT_MASK) |
				  ((sel << SROCE_FETH_SEL_SHIFT) &
				   SROCE_FETH_SEL_MASK));
}

static inline u32 sroce_xrceth_srqn(const struct sroce_xrceth *x)
{
	return be32_to_cpu(x->srqn) & SROCE_QPN_MASK;
}

static inline void sroce_xrceth_set(struct sroce_xrceth *x, u32 srqn)
{
	x->srqn = cpu_to_be32(srqn & SROCE_QPN_MASK);
}

static inline u32 sroce_deth_sqp(const struct sroce_deth *deth)
{
	return be32_to_cpu(deth->sqp) & SROCE_QPN_MASK;
}

static inline void sroce_deth_set(struct sroce_deth *deth, u32 qkey, u32 sqp)
{
	deth->qkey = cpu_to_be32(qkey);
	deth->sqp = cpu_to_be32(sqp & SROCE_QPN_MASK);
}

/* PSN arithmetic (IBA 9.7.1): 24-bit sequence numbers that wrap. */

/**
 * sroce_psn_diff() - signed distance from @b to @a
 * @a: a PSN
 * @b: a PSN
 *
 * Return: a - b as a number in [-2^23, 2^23): positive when @a is after @b.
 */
static inline s32 sroce_psn_diff(u32 a, u32 b)
{
	return (s32)((a - b) << 8) >> 8;
}

/*
 * PSNs a requester may have outstanding at most: past half the space,
 * sroce_psn_diff() could not tell a PSN after another from one before it
 * (IBA 9.7.1: the valid PSN window is 2^23).
 */
#define SROCE_PSN_MAX_OUTSTANDING	(BIT(23) - 1)

static inline u32 sroce_psn_add(u32 psn, u32 n)
{
	return (psn + n) & SROCE_PSN_MASK;
}

#endif /* SROCE_WIRE_H */
