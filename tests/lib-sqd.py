#!/usr/bin/python3
# SPDX-License-Identifier: GPL-2.0
"""
tests/lib-sqd.py: RC QPs given a new path while in SQD (IBA 11.2.4.2
allows SQD to SQD with a new address vector and new timeout, retry and
RDMA READ/atomic limits), during traffic.

    lib-sqd.py --dev-a A --gid-a V4,V6 --dev-b B --gid-b V4,V6
               --rounds N

One RC QP on each device, connected over IPv4 (the first GID indexes and
their addresses, given as A's and B's GID table entries). Each round:
both QPs post a batch of RDMA WRITEs and a SEND with immediate (with
verified bytes), move to SQD at once, while packets are in flight; then
SQD to SQD with the address vector of the other IP version and new
timeout, retry_cnt, rnr_retry, max_rd_atomic and max_dest_rd_atomic
(read back with query_qp); then to RTS. Every work request must then
complete successfully, every byte must have landed, and an RDMA READ
over the new path must return the peer's bytes. Prints one line per
round and "N rounds, M failures" last.
"""
import argparse
import importlib
import sys
import time

import pyverbs.enums as e
from pyverbs.addr import AHAttr, GlobalRoute
from pyverbs.cq import CQ
from pyverbs.device import Context
from pyverbs.mr import MR
from pyverbs.pd import PD
from pyverbs.qp import QP, QPAttr, QPCap, QPInitAttr
from pyverbs.wr import RecvWR, SendWR, SGE

# tests/ is on sys.path (this script's folder): its lib-*.py by name.
connect = importlib.import_module('lib-rcpair').connect

BUF = 1 << 16
BATCH = 8
CHUNK = 2048
ACCESS = (e.IBV_ACCESS_LOCAL_WRITE | e.IBV_ACCESS_REMOTE_WRITE |
          e.IBV_ACCESS_REMOTE_READ | e.IBV_ACCESS_REMOTE_ATOMIC)


class End:
    def __init__(self, name, gids):
        self.ctx = Context(name=name)
        self.gids = gids            # [IPv4 index, IPv6 index]
        self.pd = PD(self.ctx)
        self.cq = CQ(self.ctx, 256, None, None, 0)
        self.mr = MR(self.pd, BUF, ACCESS)
        self.qp = QP(self.pd, QPInitAttr(
            qp_type=e.IBV_QPT_RC, scq=self.cq, rcq=self.cq,
            cap=QPCap(max_send_wr=64, max_recv_wr=64), sq_sig_all=1))

    def gid(self, family):
        return self.ctx.query_gid(1, self.gids[family])

    def close(self):
        for o in (self.qp, self.mr, self.cq, self.pd, self.ctx):
            o.close()


def av(local, peer, family):
    return AHAttr(gr=GlobalRoute(dgid=peer.gid(family),
                                 sgid_index=local.gids[family],
                                 hop_limit=64),
                  is_global=1, port_num=1)


def fill(end, rnd):
    data = bytes((rnd * 31 + i * 7 + (end.qp.qp_num & 0xff)) & 0xff
                 for i in range(BUF // 2))
    end.mr.write(data, len(data), 0)
    return data


def poll(end, n, timeout=30.0):
    got = []
    stop = time.monotonic() + timeout
    while len(got) < n and time.monotonic() < stop:
        k, wcs = end.cq.poll(num_entries=32)
        got.extend(wcs[:k])
        if len(got) < n:
            time.sleep(0.005)
    return got


def post_batch(src, dst):
    """WRITEs of src's first half into dst's second half, then a SEND."""
    for i in range(BATCH):
        wr = SendWR(wr_id=i, opcode=e.IBV_WR_RDMA_WRITE, num_sge=1,
                    sg=[SGE(src.mr.buf + i * CHUNK, CHUNK, src.mr.lkey)])
        wr.set_wr_rdma(dst.mr.rkey, dst.mr.buf + BUF // 2 + i * CHUNK)
        src.qp.post_send(wr)
    wr = SendWR(wr_id=100, opcode=e.IBV_WR_SEND_WITH_IMM, num_sge=1,
                sg=[SGE(src.mr.buf, 64, src.mr.lkey)], imm_data=0x1234)
    src.qp.post_send(wr)


def modify_sqd(x, y, family, rnd):
    x.qp.modify(QPAttr(qp_state=e.IBV_QPS_SQD), e.IBV_QP_STATE)
    at = QPAttr(qp_state=e.IBV_QPS_SQD)
    at.ah_attr = av(x, y, family)
    at.timeout = 10 + rnd % 4
    at.retry_cnt = 6
    at.rnr_retry = 7
    at.max_rd_atomic = 2
    at.max_dest_rd_atomic = 8 if rnd % 2 else 2
    x.qp.modify(at, e.IBV_QP_STATE | e.IBV_QP_AV | e.IBV_QP_TIMEOUT |
                e.IBV_QP_RETRY_CNT | e.IBV_QP_RNR_RETRY |
                e.IBV_QP_MAX_QP_RD_ATOMIC | e.IBV_QP_MAX_DEST_RD_ATOMIC)
    q, _ = x.qp.query(e.IBV_QP_AV | e.IBV_QP_TIMEOUT |
                      e.IBV_QP_MAX_DEST_RD_ATOMIC)
    problems = []
    if q.ah_attr.dgid != str(y.gid(family)):
        problems.append('query_qp: path to %s, not %s' %
                        (q.ah_attr.dgid, y.gid(family)))
    if q.timeout != at.timeout or q.max_dest_rd_atomic != \
            at.max_dest_rd_atomic:
        problems.append('query_qp: timeout %d, max_dest_rd_atomic %d' %
                        (q.timeout, q.max_dest_rd_atomic))
    return problems


def round_(a, b, rnd):
    family = (rnd + 1) % 2
    data = {a: fill(a, rnd), b: fill(b, rnd + 7)}
    for x in (a, b):
        x.qp.post_recv(RecvWR(wr_id=200, num_sge=1,
                              sg=[SGE(x.mr.buf + BUF - 128, 128,
                                      x.mr.lkey)]))
    post_batch(a, b)
    post_batch(b, a)
    problems = []
    for x, y in ((a, b), (b, a)):
        problems += modify_sqd(x, y, family, rnd)
    for x in (a, b):
        x.qp.modify(QPAttr(qp_state=e.IBV_QPS_RTS), e.IBV_QP_STATE)
    for x in (a, b):
        wcs = poll(x, BATCH + 2)
        bad = [(w.wr_id, w.status) for w in wcs
               if w.status != e.IBV_WC_SUCCESS]
        if len(wcs) != BATCH + 2 or bad:
            problems.append('%d completions of %d, errors %s' %
                            (len(wcs), BATCH + 2, bad))
    for x, y in ((a, b), (b, a)):
        got = y.mr.read(BATCH * CHUNK, BUF // 2)
        if got != data[x][:BATCH * CHUNK]:
            problems.append('WRITE data wrong')
    # A READ over the new path.
    wr = SendWR(wr_id=300, opcode=e.IBV_WR_RDMA_READ, num_sge=1,
                sg=[SGE(a.mr.buf + BUF // 2, 4096, a.mr.lkey)])
    wr.set_wr_rdma(b.mr.rkey, b.mr.buf)
    a.qp.post_send(wr)
    wcs = poll(a, 1)
    if len(wcs) != 1 or wcs[0].status != e.IBV_WC_SUCCESS or \
            a.mr.read(4096, BUF // 2) != data[b][:4096]:
        problems.append('READ over the new path failed')
    return family, problems


def main():
    p = argparse.ArgumentParser()
    p.add_argument('--dev-a', required=True)
    p.add_argument('--gid-a', required=True)
    p.add_argument('--dev-b', required=True)
    p.add_argument('--gid-b', required=True)
    p.add_argument('--rounds', type=int, default=10)
    args = p.parse_args()
    a = End(args.dev_a, [int(x) for x in args.gid_a.split(',')])
    b = End(args.dev_b, [int(x) for x in args.gid_b.split(',')])
    connect(a, b, ACCESS, lambda x, y: av(x, y, 0), timeout=12)
    failures = 0
    for rnd in range(args.rounds):
        family, problems = round_(a, b, rnd)
        failures += bool(problems)
        print('round %d: SQD to SQD onto IPv%d: %s' %
              (rnd, 6 if family else 4,
               'ok' if not problems else '; '.join(problems)), flush=True)
        if problems:
            break
    a.close()
    b.close()
    print('%d rounds, %d failures' % (args.rounds, failures))
    return 1 if failures else 0


if __name__ == '__main__':
    sys.exit(main())
