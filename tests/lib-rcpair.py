# SPDX-License-Identifier: GPL-2.0
"""
tests/lib-rcpair.py: two RC QPs of pyverbs, one on each end, connected to
each other (imported by tests/lib-sqd.py and tests/lib-bigmem.py).

connect(a, b, access, av, timeout=14, retry=7) takes a.qp and b.qp
through INIT (the access rights) and RTR (path MTU 1024, PSN 0, 4
READs/atomics each way, an RNR timer of 0.01 ms) to RTS (the local ACK
timeout and retry_cnt given, rnr_retry 7); av(x, y) gives x's address
vector to y.
"""
import pyverbs.enums as e
from pyverbs.qp import QPAttr


def connect(a, b, access, av, timeout=14, retry=7):
    for x in (a, b):
        at = QPAttr(qp_state=e.IBV_QPS_INIT)
        at.pkey_index = 0
        at.port_num = 1
        at.qp_access_flags = access
        x.qp.modify(at, e.IBV_QP_STATE | e.IBV_QP_PKEY_INDEX |
                    e.IBV_QP_PORT | e.IBV_QP_ACCESS_FLAGS)
    for x, y in ((a, b), (b, a)):
        at = QPAttr(qp_state=e.IBV_QPS_RTR)
        at.path_mtu = e.IBV_MTU_1024
        at.dest_qp_num = y.qp.qp_num
        at.rq_psn = 0
        at.max_dest_rd_atomic = 4
        at.min_rnr_timer = 1
        at.ah_attr = av(x, y)
        x.qp.modify(at, e.IBV_QP_STATE | e.IBV_QP_AV | e.IBV_QP_PATH_MTU |
                    e.IBV_QP_DEST_QPN | e.IBV_QP_RQ_PSN |
                    e.IBV_QP_MAX_DEST_RD_ATOMIC | e.IBV_QP_MIN_RNR_TIMER)
    for x in (a, b):
        at = QPAttr(qp_state=e.IBV_QPS_RTS)
        at.sq_psn = 0
        at.timeout = timeout
        at.retry_cnt = retry
        at.rnr_retry = 7
        at.max_rd_atomic = 4
        x.qp.modify(at, e.IBV_QP_STATE | e.IBV_QP_SQ_PSN | e.IBV_QP_TIMEOUT |
                    e.IBV_QP_RETRY_CNT | e.IBV_QP_RNR_RETRY |
                    e.IBV_QP_MAX_QP_RD_ATOMIC)
