#!/usr/bin/python3
# SPDX-License-Identifier: GPL-2.0
"""
tests/lib-stall.py: a greedy local user of the device's flight bound,
for tests/74-flight.sh.

    lib-stall.py DEV GID_INDEX PEER_IP QPS BYTES

Makes QPS RC QPs on DEV (from GID GID_INDEX) connected to a QP number
that does not exist at PEER_IP, local ACK timeout 31 (2.4 hours) and 7
retries, and posts on each one RDMA READ of BYTES: a request that will
never be answered, and whose whole response the device counts in its
flight (Documentation/datapath.md, "Device bound"). Prints "ready QPS",
then holds everything until standard input closes or it is killed.
"""
import ipaddress
import sys

import pyverbs.enums as e
from pyverbs.addr import AHAttr, GID, GlobalRoute
from pyverbs.cq import CQ
from pyverbs.device import Context
from pyverbs.mr import MR
from pyverbs.pd import PD
from pyverbs.qp import QP, QPAttr, QPCap, QPInitAttr
from pyverbs.wr import SGE, SendWR

NO_SUCH_QPN = 0xfffff0


def gid(ip):
    a = ipaddress.ip_address(ip)
    if a.version == 4:
        a = ipaddress.IPv6Address('::ffff:' + ip)
    return GID(val=a.exploded)


def connect(qp, gid_index, peer_ip):
    a = QPAttr(qp_state=e.IBV_QPS_INIT)
    a.pkey_index = 0
    a.port_num = 1
    a.qp_access_flags = 0
    qp.modify(a, e.IBV_QP_STATE | e.IBV_QP_PKEY_INDEX | e.IBV_QP_PORT |
              e.IBV_QP_ACCESS_FLAGS)
    a = QPAttr(qp_state=e.IBV_QPS_RTR)
    a.path_mtu = e.IBV_MTU_1024
    a.dest_qp_num = NO_SUCH_QPN
    a.rq_psn = 0
    a.max_dest_rd_atomic = 1
    a.min_rnr_timer = 1
    a.ah_attr = AHAttr(gr=GlobalRoute(dgid=gid(peer_ip), sgid_index=gid_index,
                                      hop_limit=64), is_global=1, port_num=1)
    qp.modify(a, e.IBV_QP_STATE | e.IBV_QP_AV | e.IBV_QP_PATH_MTU |
              e.IBV_QP_DEST_QPN | e.IBV_QP_RQ_PSN |
              e.IBV_QP_MAX_DEST_RD_ATOMIC | e.IBV_QP_MIN_RNR_TIMER)
    a = QPAttr(qp_state=e.IBV_QPS_RTS)
    a.sq_psn = 0
    a.timeout = 31
    a.retry_cnt = 7
    a.rnr_retry = 7
    a.max_rd_atomic = 1
    qp.modify(a, e.IBV_QP_STATE | e.IBV_QP_SQ_PSN | e.IBV_QP_TIMEOUT |
              e.IBV_QP_RETRY_CNT | e.IBV_QP_RNR_RETRY |
              e.IBV_QP_MAX_QP_RD_ATOMIC)


def main():
    if len(sys.argv) != 6:
        print(__doc__.strip().splitlines()[4].strip(), file=sys.stderr)
        return 2
    dev, gid_index, peer_ip = sys.argv[1], int(sys.argv[2]), sys.argv[3]
    nqps, size = int(sys.argv[4]), int(sys.argv[5])
    ctx = Context(name=dev)
    pd = PD(ctx)
    cq = CQ(ctx, 16)
    mr = MR(pd, size, e.IBV_ACCESS_LOCAL_WRITE)
    qps = []
    for i in range(nqps):
        qp = QP(pd, QPInitAttr(qp_type=e.IBV_QPT_RC, scq=cq, rcq=cq,
                               cap=QPCap(max_send_wr=4, max_recv_wr=1)))
        connect(qp, gid_index, peer_ip)
        wr = SendWR(wr_id=i, opcode=e.IBV_WR_RDMA_READ, num_sge=1,
                    sg=[SGE(mr.buf, size, mr.lkey)],
                    send_flags=e.IBV_SEND_SIGNALED)
        wr.set_wr_rdma(0x1234, 0x10000)
        qp.post_send(wr)
        qps.append(qp)
    print('ready %d' % nqps, flush=True)
    sys.stdin.read()
    for qp in qps:
        qp.close()
    for obj in (mr, cq, pd, ctx):
        obj.close()
    return 0


if __name__ == '__main__':
    sys.exit(main())
