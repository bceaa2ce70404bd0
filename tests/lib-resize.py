#!/usr/bin/python3
# SPDX-License-Identifier: GPL-2.0
"""
tests/lib-resize.py: resize a full CQ and a full SRQ, for
tests/77-resize.sh.

    lib-resize.py DEV QPS

cq: QPS RC QPs on DEV, each with max_qp_wr receive WQEs posted whose
completions go to one CQ of max_cqe entries, are moved to the error
state, which flushes every WQE into the CQ; once the CQ holds them all
(its producer index, `rdma -dd resource show cq`), the CQ is resized
to max_cqe again (a new ring: every completion moves), then polled
empty: each WQE must have completed once, IBV_WC_WR_FLUSH_ERR, and
nothing more.

srq: an SRQ of max_srq_wr WQEs, all posted, is resized to the same
size (a new ring); `rdma -dd resource show srq` must then show them all
still waiting (producer - consumer), where the kernel shows SRQs.

Prints "resize cq N" and "resize srq N" with what moved, or "MISMATCH
..." lines; exits 1 if any.
"""
import json
import subprocess
import sys

import pyverbs.enums as e
from pyverbs.cq import CQ
from pyverbs.device import Context
from pyverbs.mr import MR
from pyverbs.pd import PD
from pyverbs.qp import QP, QPAttr, QPCap, QPInitAttr
from pyverbs.srq import SRQ, SrqAttr, SrqInitAttr
from pyverbs.wr import RecvWR, SGE


def driver_entries(kind, dev, num):
    """pi - ci of one object in `rdma -j -dd resource show KIND`."""
    out = subprocess.run(['rdma', '-j', '-dd', 'resource', 'show', kind],
                         capture_output=True, text=True, check=True).stdout
    for obj in json.loads(out or '[]'):
        if obj.get('ifname', '').split('/')[0] != dev:
            continue
        if obj.get('cqn', obj.get('srqn')) != num:
            continue
        pi, ci = obj.get('drv_pi'), obj.get('drv_ci')
        if pi is None:
            return None
        return (pi - ci) & 0xffffffff
    return None


def post_chain(target, n, sge, base=0):
    """Post n receive WQEs to target (QP or SRQ), wr_id base..base+n-1."""
    wrs = [RecvWR(wr_id=base + i, num_sge=1, sg=[sge]) for i in range(n)]
    for a, b in zip(wrs, wrs[1:]):
        a.next_wr = b
    target.post_recv(wrs[0])


def cq_case(ctx, pd, attr, dev, nqps, sge):
    problems = []
    cq = CQ(ctx, attr.max_cqe)
    want = nqps * attr.max_qp_wr
    qps = []
    for i in range(nqps):
        qp = QP(pd, QPInitAttr(qp_type=e.IBV_QPT_RC, scq=cq, rcq=cq,
                               cap=QPCap(max_send_wr=1,
                                         max_recv_wr=attr.max_qp_wr)))
        a = QPAttr(qp_state=e.IBV_QPS_INIT)
        a.pkey_index = 0
        a.port_num = 1
        a.qp_access_flags = 0
        qp.modify(a, e.IBV_QP_STATE | e.IBV_QP_PKEY_INDEX | e.IBV_QP_PORT |
                  e.IBV_QP_ACCESS_FLAGS)
        post_chain(qp, attr.max_qp_wr, sge, i * attr.max_qp_wr)
        qps.append(qp)
    for qp in qps:
        qp.modify(QPAttr(qp_state=e.IBV_QPS_ERR), e.IBV_QP_STATE)
    cqn = None
    out = subprocess.run(['rdma', '-j', '-dd', 'resource', 'show', 'cq'],
                         capture_output=True, text=True, check=True).stdout
    for obj in json.loads(out or '[]'):
        if obj.get('ifname', '').split('/')[0] == dev and \
                obj.get('cqe') == attr.max_cqe:
            cqn = obj.get('cqn')
    for _ in range(600):
        if cqn is not None and driver_entries('cq', dev, cqn) == want:
            break
        subprocess.run(['sleep', '0.1'], check=True)
    else:
        return ['cq: %s of %d completions flushed into the CQ' %
                (driver_entries('cq', dev, cqn), want)]
    cq.resize(attr.max_cqe)
    seen = bytearray(want)
    got = 0
    while True:
        n, wcs = cq.poll(num_entries=64)
        if n <= 0:
            break
        for wc in wcs[:n]:
            got += 1
            if wc.status != e.IBV_WC_WR_FLUSH_ERR or not 0 <= wc.wr_id < want:
                problems.append('cq: completion wr_id %d status %d' %
                                (wc.wr_id, wc.status))
            elif seen[wc.wr_id]:
                problems.append('cq: wr_id %d completed twice' % wc.wr_id)
            else:
                seen[wc.wr_id] = 1
    if got != want or not all(seen):
        problems.append('cq: %d completions after the resize, %d expected' %
                        (got, want))
    print('resize cq %d' % want)
    for qp in qps:
        qp.close()
    cq.close()
    return problems[:10]


def srq_case(ctx, pd, attr, dev, sge):
    srq = SRQ(pd, SrqInitAttr(SrqAttr(max_wr=attr.max_srq_wr, max_sge=1)))
    want = attr.max_srq_wr
    post_chain(srq, want, sge)
    srq.modify(SrqAttr(max_wr=attr.max_srq_wr), e.IBV_SRQ_MAX_WR)
    left = driver_entries('srq', dev, srq.get_srq_num())
    print('resize srq %d (%s waiting after it)' % (want, left))
    srq.close()
    if left is not None and left != want:
        return ['srq: %d WQEs waiting after the resize, %d posted' %
                (left, want)]
    return []


def main():
    dev, nqps = sys.argv[1], int(sys.argv[2])
    ctx = Context(name=dev)
    attr = ctx.query_device()
    pd = PD(ctx)
    mr = MR(pd, 4096, e.IBV_ACCESS_LOCAL_WRITE)
    sge = SGE(mr.buf, 64, mr.lkey)
    problems = cq_case(ctx, pd, attr, dev, nqps, sge)
    problems += srq_case(ctx, pd, attr, dev, sge)
    for p in problems:
        print('MISMATCH ' + p)
    mr.close()
    pd.close()
    ctx.close()
    return 1 if problems else 0


if __name__ == '__main__':
    sys.exit(main())
