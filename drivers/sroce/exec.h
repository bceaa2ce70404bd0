/* SPDX-License-Identifier: GPL-2.0 OR Linux-OpenIB */
#ifndef SROCE_EXEC_H
#define SROCE_EXEC_H

#include <linux/skbuff.h>
#include <rdma/ib_verbs.h>

struct sroce_qp;

/**
 * enum resp_result - what the execution of one request packet came to. What follows an error
 * depends on it and on the transport: see resp_error() (resp.c) and the
 * table in Documentation/responder-errors.md.
 *
 * @RESP_OK: executed
 * @RESP_RNR: no receive WQE
 * @RESP_INV_REQ: invalid request: opcode, sequence, size, rights
 * @RESP_LENGTH: a message longer than its receive WQE's buffers
 * @RESP_ACCESS: R_Key violation (IBA 9.4.1.1, 10.6.3)
 * @RESP_WQE_PROT: the receive WQE names memory the QP may not write
 * @RESP_WQE_BAD: the receive WQE is malformed
 * @RESP_RING_BAD: the receive ring's indices are corrupt
 * @RESP_CQ_FULL: executed, but its completion overflowed the CQ
 */
enum resp_result {
	RESP_OK,
	RESP_RNR,	/* no receive WQE */
	RESP_INV_REQ,	/* invalid request: opcode, sequence, size, rights */
	RESP_LENGTH,	/* a message longer than its receive WQE's buffers */
	RESP_ACCESS,	/* R_Key violation (IBA 9.4.1.1, 10.6.3) */
	RESP_WQE_PROT,	/* the receive WQE names memory the QP may not write */
	RESP_WQE_BAD,	/* the receive WQE is malformed */
	RESP_RING_BAD,	/* the receive ring's indices are corrupt */
	RESP_CQ_FULL,	/* executed, but its completion overflowed the CQ */
};

enum resp_result sroce_exec_request(struct sroce_qp *qp, struct sk_buff *skb);
enum resp_result sroce_exec_need_rwqe(struct sroce_qp *qp);
bool sroce_exec_complete_rwqe(struct sroce_qp *qp, struct ib_wc *wc, bool se);
void sroce_exec_fail_rwqe(struct sroce_qp *qp, enum ib_wc_status status);
int sroce_exec_read_resp(struct sroce_qp *qp, int budget);

#endif /* SROCE_EXEC_H */
