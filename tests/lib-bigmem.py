#!/usr/bin/python3
# SPDX-License-Identifier: GPL-2.0
"""
tests/lib-bigmem.py: MRs past 4 GiB and on huge pages, accessed by RDMA
WRITE, READ, SEND and atomics, every byte checked. tests/lib-odp.py
imports its accesses (Run), End, av and poll_one.

    lib-bigmem.py --dev-a A --gid-a I --dev-b B --gid-b J
                  [--huge-dir DIR] [--skip thp,hugetlbfs]

One RC QP on each device (IPv4 GID indexes I and J); A's MR is small,
the memory under test is registered on B:

  big        5 GiB of anonymous memory (small pages). A WRITEs 1 MiB
             across the 4 GiB offset and 64 KiB at the MR's end, READs
             both back, and does fetch-and-add and compare-and-swap at
             offsets on both sides of 4 GiB and at the last 8 bytes; B, as
             requester, WRITEs and SENDs from offsets past 4 GiB (its own
             pages as the payload) and READs and receives into them. The
             first 8 MiB and the MiB below 1 GiB hold random bytes that
             must be untouched at the end: every access past 4 GiB lands
             there if its offset is cut to 32 bits.
  thp        8 MiB of anonymous memory with MADV_HUGEPAGE: /proc/self/smaps
             must show all of it in transparent huge pages.
  hugetlbfs  8 MiB of a file on the hugetlbfs mount DIR (2 MiB pages).

Each huge region gets the same accesses across its 2 MiB page borders.
Every work request must complete successfully, in order, with its
opcode (and a receive with its length), and every byte must be where it
was sent; an atomic's original value must replace a marker. A region
ends at its first failed work request (the QPs are then in error). Prints a line per region ("region NAME: ok", the
problems, or why it was skipped) and last "N regions, M failures, K
skipped".
"""
import argparse
import ctypes
import importlib
import mmap
import os
import sys
import time

import pyverbs.enums as e
from pyverbs.addr import AHAttr, GlobalRoute
from pyverbs.cq import CQ
from pyverbs.device import Context
from pyverbs.mr import MR
from pyverbs.pd import PD
from pyverbs.qp import QP, QPCap, QPInitAttr
from pyverbs.wr import RecvWR, SendWR, SGE

# tests/ is on sys.path (this script's folder): its lib-*.py by name.
connect = importlib.import_module('lib-rcpair').connect

KIB = 1 << 10
MIB = 1 << 20
GIB = 1 << 30
HUGE = 2 * MIB
ACCESS = (e.IBV_ACCESS_LOCAL_WRITE | e.IBV_ACCESS_REMOTE_WRITE |
          e.IBV_ACCESS_REMOTE_READ | e.IBV_ACCESS_REMOTE_ATOMIC)
SMALL = 4 * MIB         # A's MR
WC_OF = {e.IBV_WR_RDMA_WRITE: e.IBV_WC_RDMA_WRITE,
         e.IBV_WR_RDMA_READ: e.IBV_WC_RDMA_READ,
         e.IBV_WR_ATOMIC_FETCH_AND_ADD: e.IBV_WC_FETCH_ADD,
         e.IBV_WR_ATOMIC_CMP_AND_SWP: e.IBV_WC_COMP_SWAP}


def poll_one(cq, timeout=None):
    """The next completion of cq, or None after timeout seconds (None:
    wait as long as it takes; the harness's timeout is the deadline)."""
    end = None if timeout is None else time.monotonic() + timeout
    while True:
        k, wcs = cq.poll(num_entries=1)
        if k:
            return wcs[0]
        if end is not None and time.monotonic() > end:
            return None
        time.sleep(0.001)


class End:
    def __init__(self, name, gid, qp_type=e.IBV_QPT_RC):
        self.ctx = Context(name=name)
        self.gid_index = gid
        self.pd = PD(self.ctx)
        self.cq = CQ(self.ctx, 64, None, None, 0)
        self.qp = QP(self.pd, QPInitAttr(
            qp_type=qp_type, scq=self.cq, rcq=self.cq,
            cap=QPCap(max_send_wr=16, max_recv_wr=16), sq_sig_all=1))

    def close(self):
        for o in (self.qp, self.cq, self.pd, self.ctx):
            o.close()


def av(x, y):
    return AHAttr(gr=GlobalRoute(dgid=y.ctx.query_gid(1, y.gid_index),
                                 sgid_index=x.gid_index, hop_limit=64),
                  is_global=1, port_num=1)


class Region:
    """Memory of B's under test: the mapping, its address, its MR."""

    def __init__(self, b, name, size, huge_dir):
        self.name = name
        self.size = size
        self.fd = -1
        extra = HUGE if name == 'thp' else 0
        if name == 'hugetlbfs':
            path = os.path.join(huge_dir, 'sroce-bigmem')
            self.fd = os.open(path, os.O_RDWR | os.O_CREAT, 0o600)
            os.unlink(path)
            try:
                os.ftruncate(self.fd, size)
                self.map = mmap.mmap(self.fd, size, mmap.MAP_SHARED)
            except OSError:
                os.close(self.fd)
                raise
        else:
            self.map = mmap.mmap(-1, size + extra, mmap.MAP_PRIVATE |
                                 mmap.MAP_ANONYMOUS | mmap.MAP_POPULATE *
                                 (name == 'big'))
        self.anchor = ctypes.c_char.from_buffer(self.map)
        base = ctypes.addressof(self.anchor)
        # The MR's first byte: a huge page's first byte for THP.
        self.off = (-base) % HUGE if extra else 0
        self.addr = base + self.off
        if name == 'thp':
            self.map.madvise(mmap.MADV_HUGEPAGE)
        # Fault the huge pages in now (MAP_POPULATE did the small ones).
        if name != 'big':
            for o in range(self.off, self.off + size, HUGE):
                self.map[o] = 0
        self.mr = MR(b.pd, size, ACCESS, address=self.addr)

    def put(self, off, data):
        self.map[self.off + off:self.off + off + len(data)] = data

    def get(self, off, n):
        return self.map[self.off + off:self.off + off + n]

    def page_kib(self):
        """KernelPageSize and AnonHugePages of the mapping, in KiB."""
        start = ctypes.addressof(self.anchor)
        size = huge = 0
        inside = False
        with open('/proc/self/smaps') as f:
            for line in f:
                words = line.split()
                if '-' in words[0] and len(words) > 4:
                    lo, hi = (int(x, 16) for x in words[0].split('-'))
                    inside = lo <= start < hi
                elif inside and words[0] == 'KernelPageSize:':
                    size = int(words[1])
                elif inside and words[0] == 'AnonHugePages:':
                    huge = int(words[1])
        return size, huge

    def close(self):
        self.mr.close()
        del self.anchor
        self.map.close()
        if self.fd >= 0:
            os.close(self.fd)


class Failed(Exception):
    """A work request failed: the QPs are in error, the region ends."""


class Run:
    def __init__(self, a, b):
        self.a = a
        self.b = b
        self.amr = MR(a.pd, SMALL, ACCESS)
        self.problems = []

    def wait(self, end, what, wr_id, opcode, length=None):
        """The next completion of end's CQ must be wr_id's, successful.

        No deadline: a completion that never comes is the harness's
        timeout, not a guess of how slow a kernel may be.
        """
        w = poll_one(end.cq)
        if w.status != e.IBV_WC_SUCCESS or w.wr_id != wr_id or \
                w.opcode != opcode or \
                (length is not None and w.byte_len != length):
            self.problems.append('%s: completion of wr %d, opcode %d, '
                                 'status %d, %d bytes' %
                                 (what, w.wr_id, w.opcode, w.status,
                                  w.byte_len))
            raise Failed()

    def rdma(self, end, opcode, laddr, lkey, n, raddr, rkey, what):
        wr = SendWR(wr_id=1, opcode=opcode, num_sge=1,
                    sg=[SGE(laddr, n, lkey)])
        wr.set_wr_rdma(rkey, raddr)
        end.qp.post_send(wr)
        self.wait(end, what, 1, WC_OF[opcode])

    def atomic(self, reg, off, cmp_swap, compare, value):
        """An atomic from A on reg at off; returns the original value."""
        opcode = e.IBV_WR_ATOMIC_CMP_AND_SWP if cmp_swap else \
            e.IBV_WR_ATOMIC_FETCH_AND_ADD
        wr = SendWR(wr_id=2, opcode=opcode, num_sge=1,
                    sg=[SGE(self.amr.buf + SMALL - 8, 8, self.amr.lkey)])
        # The add operand travels where the compare operand would.
        wr.set_wr_atomic(reg.mr.rkey, reg.addr + off,
                         compare if cmp_swap else value, value)
        # A marker where the original value lands: it must be replaced.
        self.amr.write(b'\xa5' * 8, 8, SMALL - 8)
        self.a.qp.post_send(wr)
        self.wait(self.a, 'atomic at %#x' % off, 2, WC_OF[opcode])
        return int.from_bytes(self.amr.read(8, SMALL - 8), 'little')

    def check(self, got, want, what):
        if got != want:
            self.problems.append('%s: the bytes differ' % what)

    def a_writes(self, reg, off, n):
        """A WRITEs n random bytes to reg at off, then READs them back."""
        data = os.urandom(n)
        self.amr.write(data, n, 0)
        self.rdma(self.a, e.IBV_WR_RDMA_WRITE, self.amr.buf, self.amr.lkey,
                  n, reg.addr + off, reg.mr.rkey, 'WRITE to %#x' % off)
        self.check(reg.get(off, n), data, 'WRITE to %#x' % off)
        self.amr.write(bytes(n), n, 0)
        self.rdma(self.a, e.IBV_WR_RDMA_READ, self.amr.buf, self.amr.lkey,
                  n, reg.addr + off, reg.mr.rkey, 'READ of %#x' % off)
        self.check(self.amr.read(n, 0), data, 'READ of %#x' % off)

    def a_atomics(self, reg, off):
        """Fetch-and-add twice at off, compare-and-swap at off + 8: one
        whose compare fails, then one whose compare holds."""
        reg.put(off, bytes(16))
        first = self.atomic(reg, off, False, 0, 7)
        second = self.atomic(reg, off, False, 0, 7)
        swap = 0x1122334455667788
        missed = self.atomic(reg, off + 8, True, 5, 0x99)
        orig = self.atomic(reg, off + 8, True, 0, swap)
        mem = reg.get(off, 16)
        if (first, second, missed, orig) != (0, 7, 0, 0) or \
                mem != (14).to_bytes(8, 'little') + swap.to_bytes(8, 'little'):
            self.problems.append('atomics at %#x: returned %s, memory %s' %
                                 (off, (first, second, missed, orig),
                                  mem.hex()))

    def b_sends(self, reg, off, n):
        """B, the requester, sends from and receives into reg at off."""
        data = os.urandom(n)
        reg.put(off, data)
        # B WRITEs its pages at off to A.
        self.rdma(self.b, e.IBV_WR_RDMA_WRITE, reg.addr + off, reg.mr.lkey,
                  n, self.amr.buf, self.amr.rkey, 'WRITE from %#x' % off)
        self.check(self.amr.read(n, 0), data, 'WRITE from %#x' % off)
        # B SENDs them.
        self.amr.write(bytes(n), n, 0)
        self.a.qp.post_recv(RecvWR(wr_id=3, num_sge=1, sg=[
            SGE(self.amr.buf, n, self.amr.lkey)]))
        self.b.qp.post_send(SendWR(wr_id=4, opcode=e.IBV_WR_SEND, num_sge=1,
                                   sg=[SGE(reg.addr + off, n, reg.mr.lkey)]))
        self.wait(self.b, 'SEND from %#x' % off, 4, e.IBV_WC_SEND)
        self.wait(self.a, 'receive of SEND from %#x' % off, 3,
                  e.IBV_WC_RECV, n)
        self.check(self.amr.read(n, 0), data, 'SEND from %#x' % off)
        # B READs other bytes of A's into off.
        data = os.urandom(n)
        self.amr.write(data, n, 0)
        reg.put(off, bytes(n))
        self.rdma(self.b, e.IBV_WR_RDMA_READ, reg.addr + off, reg.mr.lkey,
                  n, self.amr.buf, self.amr.rkey, 'READ into %#x' % off)
        self.check(reg.get(off, n), data, 'READ into %#x' % off)
        # A SENDs others, received at off.
        data = os.urandom(n)
        self.amr.write(data, n, 0)
        self.b.qp.post_recv(RecvWR(wr_id=5, num_sge=1, sg=[
            SGE(reg.addr + off, n, reg.mr.lkey)]))
        self.a.qp.post_send(SendWR(wr_id=6, opcode=e.IBV_WR_SEND, num_sge=1,
                                   sg=[SGE(self.amr.buf, n, self.amr.lkey)]))
        self.wait(self.a, 'SEND to %#x' % off, 6, e.IBV_WC_SEND)
        self.wait(self.b, 'receive at %#x' % off, 5, e.IBV_WC_RECV, n)
        self.check(reg.get(off, n), data, 'receive at %#x' % off)

    def big(self, reg):
        edge = 4 * GIB
        # Where every access past 4 GiB would land with its offset cut
        # to 32 bits: the first 8 MiB, and the MiB below 1 GiB (the MR's
        # end, 5 GiB).
        guard = os.urandom(8 * MIB)
        guard_end = os.urandom(MIB)
        reg.put(0, guard)
        reg.put(GIB - MIB, guard_end)
        self.a_writes(reg, edge - 512 * KIB, MIB)
        self.a_writes(reg, reg.size - 64 * KIB, 64 * KIB)
        self.a_writes(reg, 16 * MIB, 64 * KIB)
        for off in (edge - 16, edge + MIB, reg.size - 16, 12 * MIB):
            self.a_atomics(reg, off)
        self.b_sends(reg, edge + 2 * MIB + 100, 256 * KIB)
        self.b_sends(reg, edge - 100, 64 * KIB)
        self.check(reg.get(0, 8 * MIB), guard,
                   'the first 8 MiB (an offset cut to 32 bits)')
        self.check(reg.get(GIB - MIB, MIB), guard_end,
                   'the MiB below 1 GiB (an offset cut to 32 bits)')

    def huge(self, reg):
        kib, anon_huge = reg.page_kib()
        if reg.name == 'hugetlbfs' and kib != HUGE // KIB:
            self.problems.append('hugetlbfs mapping in %d KiB pages' % kib)
        if reg.name == 'thp' and anon_huge < reg.size // KIB:
            self.problems.append('not all of it in transparent huge pages '
                                 '(AnonHugePages %d of %d kB)' %
                                 (anon_huge, reg.size // KIB))
        self.a_writes(reg, HUGE - 512 * KIB, MIB)
        self.a_writes(reg, 2 * HUGE - 1000, 3000)
        self.a_atomics(reg, HUGE - 8)
        self.b_sends(reg, 3 * HUGE - 32 * KIB - 100, 64 * KIB)


def main():
    p = argparse.ArgumentParser()
    p.add_argument('--dev-a', required=True)
    p.add_argument('--gid-a', type=int, required=True)
    p.add_argument('--dev-b', required=True)
    p.add_argument('--gid-b', type=int, required=True)
    p.add_argument('--huge-dir', default='')
    p.add_argument('--skip', default='',
                   help='regions not to test, with the reason printed')
    args = p.parse_args()
    skip = {s for s in args.skip.split(',') if s}
    a = End(args.dev_a, args.gid_a)
    b = End(args.dev_b, args.gid_b)
    connect(a, b, ACCESS, av)
    run = Run(a, b)
    failures = skipped = 0
    regions = (('big', 5 * GIB), ('thp', 8 * MIB), ('hugetlbfs', 8 * MIB))
    for name, size in regions:
        if name in skip:
            skipped += 1
            print('region %s: skipped, the kernel has no %s' % (name, name),
                  flush=True)
            continue
        run.problems = []
        start = time.monotonic()
        try:
            reg = Region(b, name, size, args.huge_dir)
        except Exception as err:  # registration or mapping refused
            run.problems.append('could not register: %s' % err)
            reg = None
        if reg:
            try:
                (run.big if name == 'big' else run.huge)(reg)
            except Failed:
                pass    # the QPs are in error: the next regions fail too
            reg.close()
        failures += bool(run.problems)
        print('region %s (%d MiB, %.1f s): %s' %
              (name, size // MIB, time.monotonic() - start,
               '; '.join(run.problems) or 'ok'), flush=True)
    run.amr.close()
    a.close()
    b.close()
    print('%d regions, %d failures, %d skipped' %
          (len(regions), failures, skipped))
    return 1 if failures else 0


if __name__ == '__main__':
    sys.exit(main())
