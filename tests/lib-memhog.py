#!/usr/bin/python3
# SPDX-License-Identifier: GPL-2.0
"""
tests/lib-memhog.py: a greedy local user, for tests/76-memcg.sh.

    lib-memhog.py DEV KIND

KIND is cq or qp. In the memory cgroup it runs in (cgroup v2, with a
memory.max), it creates on DEV objects of the largest size the device
allows (CQs of max_cqe entries; RC QPs of max_qp_wr WRs and max_sge
SGEs each way), one after the other, until creation fails or until the
objects made would, at 16 MiB each, add up to three times the cgroup's
limit. It prints one line per object, then, while it holds them all:

    stopped N ERRNO            creation failed after N objects, with ERRNO
    cap N                      the cap came first (nothing was refused)
    charged BYTES              the cgroup's memory.current
    available-drop BYTES       how far MemAvailable fell since the start
    limit BYTES                the cgroup's memory.max

and exits 0; 2 if it cannot run at all (no cgroup limit, no device).
The test judges the numbers. Everything is freed when it exits.
"""
import errno
import sys

import pyverbs.enums as e
from pyverbs.cq import CQ
from pyverbs.device import Context
from pyverbs.pd import PD
from pyverbs.pyverbs_error import PyverbsRDMAError
from pyverbs.qp import QP, QPCap, QPInitAttr

MIB = 1 << 20
NOMINAL = 16 * MIB      # a CQ of max_cqe 64-byte entries; a QP is more


def cgroup_dir():
    with open('/proc/self/cgroup') as f:
        for line in f:
            if line.startswith('0::'):
                return '/sys/fs/cgroup' + line.strip()[3:]
    return None


def read_int(path):
    with open(path) as f:
        v = f.read().strip()
    return None if v == 'max' else int(v)


def mem_available():
    with open('/proc/meminfo') as f:
        for line in f:
            if line.startswith('MemAvailable:'):
                return int(line.split()[1]) * 1024
    raise RuntimeError('no MemAvailable in /proc/meminfo')


def make(ctx, pd, kind, attr):
    if kind == 'cq':
        return [CQ(ctx, attr.max_cqe)]
    cq = CQ(ctx, 16)
    cap = QPCap(max_send_wr=attr.max_qp_wr, max_recv_wr=attr.max_qp_wr,
                max_send_sge=attr.max_sge, max_recv_sge=attr.max_sge)
    return [QP(pd, QPInitAttr(qp_type=e.IBV_QPT_RC, scq=cq, rcq=cq,
                              cap=cap)), cq]


def main():
    if len(sys.argv) != 3 or sys.argv[2] not in ('cq', 'qp'):
        print(__doc__.strip().splitlines()[2].strip(), file=sys.stderr)
        return 2
    dev, kind = sys.argv[1:]
    cg = cgroup_dir()
    limit = read_int(cg + '/memory.max') if cg else None
    if not limit:
        print('no memory.max on this process\'s cgroup (%s)' % cg)
        return 2
    before = mem_available()
    ctx = Context(name=dev)
    attr = ctx.query_device()
    pd = PD(ctx)
    held = []
    stopped = None
    while len(held) * NOMINAL <= 3 * limit:
        try:
            held.append(make(ctx, pd, kind, attr))
        except PyverbsRDMAError as err:
            stopped = errno.errorcode.get(err.error_code, str(err.error_code))
            break
        print('made %s %d' % (kind, len(held)), flush=True)
    if stopped:
        print('stopped %d %s' % (len(held), stopped))
    else:
        print('cap %d' % len(held))
    print('charged %d' % read_int(cg + '/memory.current'))
    print('available-drop %d' % (before - mem_available()))
    print('limit %d' % limit, flush=True)
    for objs in reversed(held):
        for obj in objs:
            obj.close()
    pd.close()
    ctx.close()
    return 0


if __name__ == '__main__':
    sys.exit(main())
