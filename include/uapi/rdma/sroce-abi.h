/* SPDX-License-Identifier: ((GPL-2.0 WITH Linux-syscall-note) OR Linux-OpenIB) */
/*
 * sroce: the ABI between sroce.ko and its rdma-core provider, libsroce.
 *
 * This is the only header the kernel and the provider share. Everything in
 * it is fixed-width and naturally aligned so that 32- and 64-bit processes
 * see the same layout.
 *
 * Queues (send, receive, shared receive and completion) live in kernel
 * memory that the provider maps with mmap() on the uverbs file, at the
 * offset the create or resize response gives. Each mapping starts with a
 * struct sroce_queue_hdr; the entries follow at SROCE_QUEUE_DATA_OFFSET.
 * Indices are free-running 32-bit counters; entry i lives in slot
 * (i & (num_entries - 1)). The producer index is written only by the
 * producing side and the consumer index only by the consuming side. The
 * kernel treats every index and every entry it reads from a user-mapped
 * queue as untrusted input.
 *
 * Posting (SQ, RQ, SRQ): write the entry, store the new producer index
 * with release semantics, then issue a full memory barrier and read the
 * queue's flags. If SROCE_QUEUE_NEED_WAKEUP is set, ring the doorbell: the
 * uverbs POST_SEND (SQ), POST_RECV (RQ) or POST_SRQ_RECV (SRQ) command
 * with wr_count 0. The kernel clears the flag while it will look at the
 * queue again on its own (a send engine with packets in flight), and sets
 * it, followed by a full barrier and a last look at the producer index,
 * before it goes idle; the two barriers make sure that no post is missed.
 * Receive queues need the doorbell only when the QP is in the error state
 * (so that the new entries are flushed). A send queue starts, and starts
 * again after a reset, with SROCE_QUEUE_NEED_WAKEUP set; a receive queue
 * with it clear. The doorbell command must still carry a wqe_size of at
 * least sizeof(struct ib_uverbs_send_wr) (or ib_uverbs_recv_wr): uverbs
 * rejects smaller ones.
 *
 * The kernel advances a send queue's consumer index when a WQE has
 * completed (with or without a completion entry), and a receive queue's
 * when it takes a WQE. It copies each entry before checking it; an entry
 * it cannot accept (bad opcode, too many SGEs, too much inline data)
 * completes with an error status and moves the QP to the error state. A
 * producer index that claims more entries than slots, or that moves back
 * past entries the kernel already took, moves the QP to the error state
 * with IB_EVENT_QP_FATAL; only the entries really posted are flushed. The
 * kernel applies the QP's sq_sig_all itself.
 *
 * Polling (CQ): read the producer index with acquire semantics, copy the
 * entry, then store the new consumer index with release semantics.
 */
#ifndef SROCE_ABI_USER_H
#define SROCE_ABI_USER_H

#include <linux/types.h>

#define SROCE_UVERBS_ABI_VERSION	1

/* Byte offset of the first entry in every queue mapping. */
#define SROCE_QUEUE_DATA_OFFSET		256

/* Limits of one work request, shared by both sides. */
#define SROCE_MAX_SGE			32
#define SROCE_MAX_INLINE_DATA		512

/**
 * struct sroce_queue_hdr - head of every shared queue mapping
 * @producer: next index the producer will fill
 * @consumer: next index the consumer will take
 * @flags: SROCE_QUEUE_* flags, written by the kernel
 *
 * Each field sits in its own 64-byte line so that the two sides do not
 * share a cache line on the fast path.
 */
struct sroce_queue_hdr {
	__u32 producer;
	__u32 reserved0[15];
	__u32 consumer;
	__u32 reserved1[15];
	__u32 flags;
	__u32 reserved2[15];
};

/* The kernel is not working this queue: the producer must ring the doorbell. */
#define SROCE_QUEUE_NEED_WAKEUP		(1U << 0)

/*
 * Send flags in struct sroce_send_wqe: the values of rdma-core's enum
 * ibv_send_flags and of the kernel's enum ib_send_flags.
 */
#define SROCE_SEND_FENCE		(1U << 0)
#define SROCE_SEND_SIGNALED		(1U << 1)
#define SROCE_SEND_SOLICITED		(1U << 2)
#define SROCE_SEND_INLINE		(1U << 3)

/*
 * The IBA 1.5 work requests, by their values in enum ibv_wr_opcode (older
 * kernel headers do not name them).
 */
#define SROCE_WR_FLUSH			14
#define SROCE_WR_ATOMIC_WRITE		15

/**
 * struct sroce_queue_info - where and how to map one queue
 * @mmap_offset: offset to pass to mmap() on the uverbs file
 * @mmap_size: length of the mapping in bytes
 * @num_entries: slots in the ring, a power of two
 * @entry_size: bytes per slot, a multiple of 64
 */
struct sroce_queue_info {
	__aligned_u64 mmap_offset;
	__aligned_u64 mmap_size;
	__u32 num_entries;
	__u32 entry_size;
};

/**
 * struct sroce_sge - one scatter/gather element in a work queue entry
 * @addr: virtual address
 * @length: bytes
 * @lkey: local key of the memory region
 */
struct sroce_sge {
	__aligned_u64 addr;
	__u32 length;
	__u32 lkey;
};

/**
 * struct sroce_send_wqe - one send queue entry
 * @wr_id: returned in the completion
 * @opcode: an IB_UVERBS_WR_* value (the values of enum ibv_wr_opcode)
 * @send_flags: SROCE_SEND_* flags
 * @ex: immediate data (network byte order) or the rkey to invalidate
 * @num_sge: entries used in @sge (0 when the data is inline)
 * @inline_len: bytes of inline data stored in place of @sge
 * @xrc_remote_srqn: XRC send (INI) QP: the XRC SRQ the message is for, in
 *                   the target's XRC domain; 0 on other QPs
 * @wr: opcode-specific fields; for UD, @wr.ud.ah_num is the number the
 *      create_ah response gave. SROCE_WR_ATOMIC_WRITE carries its 8 bytes
 *      in @wr.atomic_write.data, as they are to appear in the remote
 *      memory; SROCE_WR_FLUSH its placement type (IB_FLUSH_GLOBAL or
 *      IB_FLUSH_PERSISTENT) and selectivity level (IB_FLUSH_RANGE or
 *      IB_FLUSH_MR) in @wr.flush.
 * @sge: scatter/gather list, or inline data when IBV_SEND_INLINE
 *       (SROCE_SEND_INLINE; as many bytes as the entry holds past the
 *       header, at most
 *       max_inline_data)
 */
struct sroce_send_wqe {
	__aligned_u64 wr_id;
	__u32 opcode;
	__u32 send_flags;
	__u32 ex;
	__u32 num_sge;
	__u32 inline_len;
	__u32 xrc_remote_srqn;
	union {
		struct {
			__aligned_u64 remote_addr;
			__u32 rkey;
			__u32 reserved;
		} rdma;
		struct {
			__aligned_u64 remote_addr;
			__aligned_u64 compare_add;
			__aligned_u64 swap;
			__u32 rkey;
			__u32 reserved;
		} atomic;
		struct {
			__u32 ah_num;
			__u32 remote_qpn;
			__u32 remote_qkey;
			__u32 reserved;
		} ud;
		struct {
			__aligned_u64 addr;
			__aligned_u64 length;
			__u32 mw_rkey;
			__u32 mr_lkey;
			__u32 access;
			__u32 reserved;
		} bind_mw;
		struct {
			__aligned_u64 remote_addr;
			__u32 rkey;
			__u32 reserved;
			__u8 data[8];
		} atomic_write;
		struct {
			__aligned_u64 remote_addr;
			__aligned_u64 length;
			__u32 rkey;
			__u8 type;
			__u8 level;
			__u16 reserved;
		} flush;
	} wr;
	struct sroce_sge sge[];
};

/**
 * struct sroce_recv_wqe - one receive or shared receive queue entry
 * @wr_id: returned in the completion
 * @num_sge: entries used in @sge
 * @reserved: must be zero
 * @sge: scatter list
 */
struct sroce_recv_wqe {
	__aligned_u64 wr_id;
	__u32 num_sge;
	__u32 reserved;
	struct sroce_sge sge[];
};

/**
 * struct sroce_cqe - one completion queue entry
 * @wr_id: from the work request
 * @status: an IB_UVERBS_WC_* status (enum ibv_wc_status)
 * @opcode: an IB_UVERBS_WC_* opcode (enum ibv_wc_opcode)
 * @vendor_err: driver-specific detail for error completions
 * @byte_len: bytes transferred
 * @ex: immediate data (network byte order) or invalidated rkey
 * @qp_num: local QP number
 * @src_qp: remote QP number (UD)
 * @wc_flags: SROCE_WC_* flags (the values of enum ibv_wc_flags)
 * @pkey_index: P_Key index
 * @slid: always zero on RoCE
 * @sl: service level
 * @dlid_path_bits: always zero on RoCE
 * @port_num: port the completion came from
 * @network_hdr_type: SROCE_NETWORK_IPV4 or SROCE_NETWORK_IPV6 on a UD or GSI
 *                    receive (the header in the GRH area), else 0
 * @smac: source MAC address (UD)
 * @vlan_id: VLAN id (UD)
 */
struct sroce_cqe {
	__aligned_u64 wr_id;
	__u32 status;
	__u32 opcode;
	__u32 vendor_err;
	__u32 byte_len;
	__u32 ex;
	__u32 qp_num;
	__u32 src_qp;
	__u32 wc_flags;
	__u16 pkey_index;
	__u16 slid;
	__u8 sl;
	__u8 dlid_path_bits;
	__u8 port_num;
	__u8 network_hdr_type;
	__u8 smac[6];
	__u16 vlan_id;
	__u32 reserved[2];
};

/*
 * The L3 header of a UD or GSI receive (struct sroce_cqe's network_hdr_type):
 * the values of the kernel's enum rdma_network_type.
 */
#define SROCE_NETWORK_IPV4		2
#define SROCE_NETWORK_IPV6		3

/*
 * Completion flags in struct sroce_cqe. They have the values of rdma-core's
 * enum ibv_wc_flags, which differ from the kernel's enum ib_wc_flags.
 */
#define SROCE_WC_GRH			(1U << 0)
#define SROCE_WC_WITH_IMM		(1U << 1)
#define SROCE_WC_IP_CSUM_OK		(1U << 2)
#define SROCE_WC_WITH_INV		(1U << 3)

/* Driver data returned by the verbs commands. */

struct sroce_alloc_ucontext_resp {
	__u32 queue_data_offset;	/* SROCE_QUEUE_DATA_OFFSET */
	__u32 max_inline_data;		/* SROCE_MAX_INLINE_DATA */
};

struct sroce_alloc_pd_resp {
	__u32 pdn;
	__u32 reserved;
};

struct sroce_create_ah_resp {
	__u32 ah_num;
	__u32 reserved;
};

struct sroce_create_cq_resp {
	struct sroce_queue_info cq;
};

struct sroce_resize_cq_resp {
	struct sroce_queue_info cq;
};

/*
 * An absent queue has mmap_size 0: a QP on an SRQ, and an XRC send (INI)
 * QP, have no RQ. An XRC receive (TGT) QP is created without driver data
 * and has no queue of its own.
 */
struct sroce_create_qp_resp {
	struct sroce_queue_info sq;
	struct sroce_queue_info rq;
};

struct sroce_create_srq_resp {
	struct sroce_queue_info rq;
	__u32 srq_num;
	__u32 reserved;
};

/**
 * struct sroce_modify_srq_cmd - driver data of modify_srq
 * @queue_info_addr: with IBV_SRQ_MAX_WR, the user address of a struct
 *                   sroce_queue_info that the kernel fills in with the
 *                   resized ring to map (modify_srq has no response); the
 *                   WQEs not yet taken move to the new ring, in order, at
 *                   indices 0, 1, ... (its header's producer index counts
 *                   them, its consumer index is 0: go on posting from the
 *                   new header's producer index), and the old mapping must
 *                   be unmapped. Otherwise ignored.
 *
 * The process must not post to the SRQ while the resize is under way.
 */
struct sroce_modify_srq_cmd {
	__aligned_u64 queue_info_addr;
};

#endif /* SROCE_ABI_USER_H */
