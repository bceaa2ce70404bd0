/* SPDX-License-Identifier: GPL-2.0 OR Linux-OpenIB */
/*
 * Device limits. These are the numbers query_device reports, and each one
 * is enforced where the object is created: a request past a limit fails
 * with an errno, it is never silently clamped.
 */
#ifndef SROCE_PARAMS_H
#define SROCE_PARAMS_H

#include <linux/gfp.h>
#include <rdma/sroce-abi.h>

/*
 * Memory that a process's object makes the kernel allocate (rings,
 * private WQE copies, responder resources, an MR's page index): charged
 * to the process's memory cgroup, and failing with -ENOMEM at the
 * cgroup's limit, quietly, rather than waking the OOM killer: the
 * process asked for more than it may have, nothing else is to blame.
 */
#define SROCE_GFP_USER_OBJ	(GFP_KERNEL_ACCOUNT | __GFP_RETRY_MAYFAIL | \
				 __GFP_NOWARN)

/* Device names start with this: libsroce claims devices by name. */
#define SROCE_NAME_PREFIX		"sroce"

#define SROCE_VENDOR_ID			0xffffff	/* none assigned */
#define SROCE_VENDOR_PART_ID		0x5e0c

#define SROCE_MAX_MR_SIZE		0x10000000000ULL
#define SROCE_PAGE_SIZE_CAP		0xfffff000

#define SROCE_MAX_QP			0x10000
#define SROCE_MAX_QP_WR			0x4000
#define SROCE_MAX_SEND_SGE		SROCE_MAX_SGE
#define SROCE_MAX_RECV_SGE		SROCE_MAX_SGE
#define SROCE_MAX_SGE_RD		SROCE_MAX_SGE
#define SROCE_MAX_CQ			0x4000
/*
 * libfabric's ofi_rxm asks (128 + 128) x 1024 = 262144 entries with its
 * defaults. The largest ring is 16 MiB (user, 64-byte entries) or 32 MiB
 * (kernel); resize_cq copies what waits in it mostly without the CQ's
 * lock (queue.c).
 */
#define SROCE_MAX_CQE			0x40000
#define SROCE_MAX_MR			0x40000
#define SROCE_MAX_MW			0x10000
#define SROCE_MAX_PD			0x8000
#define SROCE_MAX_AH			0x8000
#define SROCE_MAX_SRQ			0x4000
#define SROCE_MAX_XRCD			0x4000
#define SROCE_MAX_SRQN			0xffffff	/* 24 bits, XRCETH */
#define SROCE_MAX_SRQ_WR		0x4000
#define SROCE_MAX_SRQ_SGE		SROCE_MAX_SGE
#define SROCE_MAX_QP_RD_ATOM		128
#define SROCE_MAX_QP_INIT_RD_ATOM	128
#define SROCE_MAX_FAST_REG_PAGES	512
#define SROCE_MAX_PKEYS			1
#define SROCE_GID_TABLE_LEN		1024
#define SROCE_LOCAL_CA_ACK_DELAY	15
#define SROCE_MAX_MSG_SIZE		0x80000000U

#define SROCE_MAX_MCAST_GRP		1024
#define SROCE_MAX_MCAST_QP_ATTACH	56

/* QP numbers 0 and 1 are the special QPs; ordinary QPs start here. */
#define SROCE_FIRST_QPN			16
#define SROCE_MAX_QPN			0xffffff

/*
 * Received packets a QP's engine may have waiting, in each direction, by
 * default (module parameter "backlog"). An RC peer that keeps to its
 * window never comes near (sroce's requester keeps at most
 * SROCE_CWND_MAX packets unacknowledged); a UC sender has no window, but
 * a queue this long only fills while the engine is kept from running. A
 * flood is dropped and counted (rx_drop_backlog); a reliable peer
 * recovers by resending.
 */
#define SROCE_QP_BACKLOG		8192

/* Packet sequence numbers are 24 bits (IBA 9.7.1). */
#define SROCE_PSN_MASK			0xffffff

#endif /* SROCE_PARAMS_H */
