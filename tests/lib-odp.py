#!/usr/bin/python3
# SPDX-License-Identifier: GPL-2.0
"""
tests/lib-odp.py: memory regions registered on demand (IBV_ACCESS_ON_DEMAND,
nothing pinned) on B, reached by every engine while their pages are
missing, dropped and unmapped; every byte and every completion checked.

    lib-odp.py --dev-a A --gid-a I --dev-b B --gid-b J

The ODP memory is anonymous memory of B's (MADV_NOHUGEPAGE) or a memfd;
A's memory is pinned. The accesses are lib-bigmem.py's (Run): A WRITEs,
READs back and does atomics on B's region (B's responder faults); B as
requester WRITEs and SENDs from it (the requester parks its WQE), READs
into it and receives into it. Phases, each on QPs of its own:

  fresh       a region never touched: the accesses above at offsets in
              untouched pages, A's READ of pages never written (the READ
              response waits for the fault), and B's READ and
              fetch-and-add landing in untouched pages (the completer
              drops the response, faults, and sends again).
  strict      QPs with retry_cnt 0: multi-packet WRITEs and SENDs into
              untouched pages must spend no retry (the RNR NAK's resend
              recovers the packets that were in flight behind it).
  refault     the same region after MADV_DONTNEED: what A WRITEs must be
              what B's memory and A's READ show, not the pages before.
  concurrent  a memfd region whose pages another thread drops every 20 ms
              (MADV_DONTNEED; the data stays in the file) during 40 WRITE
              and READ rounds.
  advise      ibv_advise_mr: after a synchronous PREFETCH_WRITE and
              PREFETCH of untouched ranges, A's WRITE and READ of them
              cause no RNR NAK on B; asynchronous and NO_FAULT advice is
              taken; a key of no MR, a pinned MR, a range past the MR
              (EINVAL), a write advice on a read-only MR (EPERM) and a
              synchronous prefetch of unmapped memory (EFAULT) are
              refused.
  ud          UD: A's datagram to a receive buffer in untouched ODP
              memory is dropped while B faults (rx_drop_odp must grow),
              and sent again until it arrives, byte for byte; B sends
              from untouched ODP memory.
  uc          UC: A's WRITE into untouched ODP memory and A's SEND into an
              ODP receive buffer are sent again until they land
              (rx_drop_odp must grow).
  munmap      the region unmapped under a live MR: A's WRITE and READ
              complete with a remote access error, B's SEND from it and
              B's READ into it with a local protection error.
  implicit    an implicit ODP MR (address 0, length SIZE_MAX) on B: the
              accesses of fresh through its keys into memory mmapped
              after it was registered, across a child's 2 MiB boundary,
              and a flushed PREFETCH_WRITE (no RNR NAK after it); the
              children it made (odp_children) are freed when the memory
              is unmapped (odp_children_freed catches up); a WRITE to the
              unmapped memory, to memory never mapped and past the
              address space fails with a remote access error and leaves
              no child; the children of memory still mapped are freed
              with the MR.

Prints "phase NAME: ok" or its problems, and last "9 phases, N failures".
The caller checks the device counters (odp_faults, rnr_naks_sent,
rx_drop_odp, odp_children, odp_children_freed).
"""
import argparse
import ctypes
import importlib
import mmap
import os
import sys
import threading
import time

import pyverbs.enums as e
from pyverbs.addr import AH
from pyverbs.mr import MR
from pyverbs.pyverbs_error import PyverbsRDMAError
from pyverbs.qp import QPAttr
from pyverbs.wr import RecvWR, SendWR, SGE

# tests/ is on sys.path (this script's folder): its lib-*.py by name.
bigmem = importlib.import_module('lib-bigmem')
connect = importlib.import_module('lib-rcpair').connect
End, Run, Failed, av, poll_one = (bigmem.End, bigmem.Run, bigmem.Failed,
                                  bigmem.av, bigmem.poll_one)

KIB = 1 << 10
MIB = 1 << 20
ACCESS = bigmem.ACCESS
ODP = ACCESS | e.IBV_ACCESS_ON_DEMAND
QKEY = 0x11111111
MADV_NOHUGEPAGE = 15

libc = ctypes.CDLL(None, use_errno=True)
libc.mmap.restype = ctypes.c_void_p
libc.mmap.argtypes = [ctypes.c_void_p, ctypes.c_size_t, ctypes.c_int,
                      ctypes.c_int, ctypes.c_int, ctypes.c_long]
libc.munmap.argtypes = [ctypes.c_void_p, ctypes.c_size_t]
libc.madvise.argtypes = [ctypes.c_void_p, ctypes.c_size_t, ctypes.c_int]


def counter(dev, name):
    with open('/sys/class/infiniband/%s/ports/1/hw_counters/%s' %
              (dev, name)) as f:
        return int(f.read())


class OdpRegion:
    """size bytes of B's, mapped by libc (so that they can be unmapped
    under the MR) and registered on demand with access."""

    def __init__(self, pd, size, access=ODP, fd=-1, mr=None):
        flags = mmap.MAP_SHARED if fd >= 0 else \
            mmap.MAP_PRIVATE | mmap.MAP_ANONYMOUS
        addr = libc.mmap(None, size, mmap.PROT_READ | mmap.PROT_WRITE,
                         flags, fd, 0)
        if addr is None or addr == ctypes.c_void_p(-1).value:
            raise OSError(ctypes.get_errno(), 'mmap')
        self.addr = addr
        self.size = size
        self.mapped = True
        if fd < 0:
            self.madvise(MADV_NOHUGEPAGE)
        # An implicit MR's keys reach the memory without registering it.
        self.own = mr is None
        self.mr = MR(pd, size, access, address=addr) if self.own else mr

    def put(self, off, data):
        ctypes.memmove(self.addr + off, data, len(data))

    def get(self, off, n):
        return ctypes.string_at(self.addr + off, n)

    def madvise(self, advice):
        if libc.madvise(self.addr, self.size, advice):
            raise OSError(ctypes.get_errno(), 'madvise')

    def unmap(self):
        libc.munmap(self.addr, self.size)
        self.mapped = False

    def close(self):
        if self.own:
            self.mr.close()
        if self.mapped:
            self.unmap()


class Phases:
    def __init__(self, args):
        self.args = args
        self.problems = []

    def pair(self, qp_type=e.IBV_QPT_RC, retry=7):
        a = End(self.args.dev_a, self.args.gid_a, qp_type)
        b = End(self.args.dev_b, self.args.gid_b, qp_type)
        if qp_type == e.IBV_QPT_RC:
            connect(a, b, ACCESS, av, retry=retry)
        elif qp_type == e.IBV_QPT_UC:
            connect_uc(a, b)
        else:
            for x in (a, b):
                ready_ud(x)
        self.ends = (a, b)
        return a, b

    def expect(self, end, what, status):
        w = poll_one(end.cq)
        if w.status != status:
            self.problems.append('%s: status %d, not %d' %
                                 (what, w.status, status))
        return w

    def b_reads_into(self, run, reg, off, n):
        """B READs A's bytes into untouched ODP memory."""
        data = os.urandom(n)
        run.amr.write(data, n, 0)
        run.rdma(run.b, e.IBV_WR_RDMA_READ, reg.addr + off, reg.mr.lkey, n,
                 run.amr.buf, run.amr.rkey, 'READ into untouched %#x' % off)
        run.check(reg.get(off, n), data, 'READ into untouched %#x' % off)

    def b_atomic_into(self, run, reg, off):
        """B's fetch-and-add on A's memory, its result landing in
        untouched ODP memory."""
        run.amr.write((41).to_bytes(8, 'little'), 8, 0)
        wr = SendWR(wr_id=7, opcode=e.IBV_WR_ATOMIC_FETCH_AND_ADD,
                    num_sge=1, sg=[SGE(reg.addr + off, 8, reg.mr.lkey)])
        wr.set_wr_atomic(run.amr.rkey, run.amr.buf, 1, 0)
        run.b.qp.post_send(wr)
        run.wait(run.b, 'fetch-and-add into %#x' % off, 7,
                 e.IBV_WC_FETCH_ADD)
        got = int.from_bytes(reg.get(off, 8), 'little')
        mem = int.from_bytes(run.amr.read(8, 0), 'little')
        if (got, mem) != (41, 42):
            self.problems.append('fetch-and-add into %#x: result %d, '
                                 'memory %d' % (off, got, mem))

    def fresh(self):
        a, b = self.pair()
        run = Run(a, b)
        reg = self.reg = OdpRegion(b.pd, 8 * MIB)
        self.run = run
        run.problems = self.problems
        run.a_writes(reg, 4 * KIB - 100, 256 * KIB)
        run.a_writes(reg, 3 * MIB + 5, 5000)
        run.a_atomics(reg, 2 * MIB + 64)
        run.b_sends(reg, 5 * MIB - 300, 64 * KIB)
        self.b_reads_into(run, reg, 6 * MIB + 8, 20 * KIB)
        self.b_atomic_into(run, reg, 7 * MIB)
        # A READs pages never written: the zero page, faulted for reading.
        n = 64 * KIB
        run.amr.write(b'\xa5' * n, n, 0)
        run.rdma(a, e.IBV_WR_RDMA_READ, run.amr.buf, run.amr.lkey, n,
                 reg.addr + 6 * MIB + 512 * KIB, reg.mr.rkey,
                 'READ of untouched pages')
        run.check(run.amr.read(n, 0), bytes(n), 'READ of untouched pages')

    def strict(self):
        a, b = self.pair(retry=0)
        run = Run(a, b)
        run.problems = self.problems
        reg = self.reg = OdpRegion(b.pd, 4 * MIB)
        self.run = run
        for i in range(3):
            run.a_writes(reg, i * MIB + 100, 256 * KIB)
        run.b_sends(reg, 3 * MIB + 7, 128 * KIB)

    def refault(self):
        """On fresh's region and QPs."""
        run, reg = self.run, self.reg
        run.problems = self.problems
        reg.madvise(mmap.MADV_DONTNEED)
        run.a_writes(reg, 4 * KIB - 100, 256 * KIB)
        reg.madvise(mmap.MADV_DONTNEED)
        run.b_sends(reg, 5 * MIB - 300, 64 * KIB)
        reg.madvise(mmap.MADV_DONTNEED)
        run.a_atomics(reg, 2 * MIB + 64)

    def concurrent(self):
        a, b = self.pair()
        run = Run(a, b)
        run.problems = self.problems
        fd = os.memfd_create('sroce-odp')
        size = 4 * MIB
        os.ftruncate(fd, size)
        reg = self.reg = OdpRegion(b.pd, size, fd=fd)
        os.close(fd)
        stop = threading.Event()
        drops = [0]

        def dropper():
            while not stop.is_set():
                reg.madvise(mmap.MADV_DONTNEED)
                drops[0] += 1
                time.sleep(0.02)

        t = threading.Thread(target=dropper)
        t.start()
        try:
            for i in range(40):
                run.a_writes(reg, (i * 97 * KIB + i) % (size - 64 * KIB),
                             64 * KIB)
            run.b_sends(reg, MIB + 3, 64 * KIB)
        finally:
            stop.set()
            t.join()
        if drops[0] < 2:
            self.problems.append('the pages were dropped %d times only' %
                                 drops[0])

    def advise_errno(self, pd, advice, flags, sges, want, what):
        try:
            pd.advise_mr(advice, flags, sges)
            got = 0
        except PyverbsRDMAError as err:
            got = err.error_code
        if got != want:
            self.problems.append('advise %s: error %d, not %d' %
                                 (what, got, want))

    def advise(self):
        a, b = self.pair()
        run = Run(a, b)
        run.problems = self.problems
        reg = self.reg = OdpRegion(b.pd, 4 * MIB)
        flush = e._IBV_ADVISE_MR_FLAG_FLUSH
        lkey = reg.mr.lkey
        self.advise_errno(b.pd, e._IBV_ADVISE_MR_ADVICE_PREFETCH_WRITE,
                          flush, [SGE(reg.addr, MIB, lkey)], 0,
                          'PREFETCH_WRITE, flushed')
        self.advise_errno(b.pd, e._IBV_ADVISE_MR_ADVICE_PREFETCH, flush,
                          [SGE(reg.addr + MIB, MIB, lkey)], 0,
                          'PREFETCH, flushed')
        # The first MiB was prefetched for writing, the second for
        # reading (untouched, so the zero page): WRITE the first, READ
        # the second.
        before = counter(self.args.dev_b, 'rnr_naks_sent')
        run.a_writes(reg, 100, MIB - 200)
        run.amr.write(b'\xa5' * (64 * KIB), 64 * KIB, 0)
        run.rdma(a, e.IBV_WR_RDMA_READ, run.amr.buf, run.amr.lkey, 64 * KIB,
                 reg.addr + MIB + 4096, reg.mr.rkey, 'READ of a prefetch')
        run.check(run.amr.read(64 * KIB, 0), bytes(64 * KIB),
                  'READ of a prefetch')
        after = counter(self.args.dev_b, 'rnr_naks_sent')
        if after != before:
            self.problems.append('%d RNR NAKs after a flushed prefetch' %
                                 (after - before))
        self.advise_errno(b.pd, e._IBV_ADVISE_MR_ADVICE_PREFETCH_WRITE, 0,
                          [SGE(reg.addr + 2 * MIB, MIB, lkey)], 0,
                          'PREFETCH_WRITE, queued')
        self.advise_errno(b.pd, e._IBV_ADVISE_MR_ADVICE_PREFETCH_NO_FAULT,
                          flush, [SGE(reg.addr + 3 * MIB, MIB, lkey)], 0,
                          'PREFETCH_NO_FAULT, flushed')
        self.advise_errno(b.pd, e._IBV_ADVISE_MR_ADVICE_PREFETCH_NO_FAULT,
                          0, [SGE(reg.addr + 3 * MIB, MIB, lkey)], 0,
                          'PREFETCH_NO_FAULT, queued')
        run.a_writes(reg, 2 * MIB + 10, 2 * MIB - 20)
        # What is refused.
        pinned = MR(b.pd, 64 * KIB, ACCESS)
        ro = OdpRegion(b.pd, 64 * KIB, e.IBV_ACCESS_ON_DEMAND)
        gone = OdpRegion(b.pd, 64 * KIB)
        gone.unmap()
        try:
            for advice, flags, sge, want, what in (
                    (e._IBV_ADVISE_MR_ADVICE_PREFETCH, flush,
                     SGE(reg.addr, 4096, lkey ^ 0x1000000), 22,
                     'with a key of no MR'),
                    (e._IBV_ADVISE_MR_ADVICE_PREFETCH, flush,
                     SGE(pinned.buf, 4096, pinned.lkey), 22, 'on a pinned MR'),
                    (e._IBV_ADVISE_MR_ADVICE_PREFETCH, flush,
                     SGE(reg.addr + 4 * MIB - 4096, 8192, lkey), 22,
                     'past the MR'),
                    (e._IBV_ADVISE_MR_ADVICE_PREFETCH_WRITE, flush,
                     SGE(ro.addr, 4096, ro.mr.lkey), 1,
                     'to write a read-only MR'),
                    (e._IBV_ADVISE_MR_ADVICE_PREFETCH, flush,
                     SGE(gone.addr, 4096, gone.mr.lkey), 14,
                     'of unmapped memory')):
                self.advise_errno(b.pd, advice, flags, [sge], want, what)
        finally:
            for x in (pinned, ro, gone):
                x.close()

    def dropped(self, before, what):
        d = counter(self.args.dev_b, 'rx_drop_odp') - before
        if d < 1:
            self.problems.append('%s: rx_drop_odp grew by %d' % (what, d))

    def ud(self):
        drops = counter(self.args.dev_b, 'rx_drop_odp')
        a, b = self.pair(e.IBV_QPT_UD)
        reg = self.reg = OdpRegion(b.pd, MIB)
        amr = self.amr = MR(a.pd, 64 * KIB, ACCESS)
        n = 1000
        data = os.urandom(n)
        amr.write(data, n, 0)
        b.qp.post_recv(RecvWR(wr_id=1, num_sge=1, sg=[
            SGE(reg.addr + 8 * KIB - 20, 40 + n, reg.mr.lkey)]))
        ah = AH(a.pd, attr=av(a, b))
        sends = 0
        while True:
            wr = SendWR(wr_id=2, opcode=e.IBV_WR_SEND, num_sge=1,
                        sg=[SGE(amr.buf, n, amr.lkey)])
            wr.set_wr_ud(ah, b.qp.qp_num, QKEY)
            a.qp.post_send(wr)
            sends += 1
            self.expect(a, 'UD send', e.IBV_WC_SUCCESS)
            w = poll_one(b.cq, 0.2)
            if w or sends == 50:
                break
        if not w:
            self.problems.append('UD: nothing received in 50 sends')
            return
        if w.status != e.IBV_WC_SUCCESS or w.byte_len != 40 + n:
            self.problems.append('UD receive: status %d, %d bytes' %
                                 (w.status, w.byte_len))
        if reg.get(8 * KIB - 20 + 40, n) != data:
            self.problems.append('UD receive: the bytes differ')
        self.dropped(drops, 'UD receive into untouched memory')
        # B sends from untouched ODP memory.
        data = os.urandom(n)
        reg.put(64 * KIB, data)
        a.qp.post_recv(RecvWR(wr_id=3, num_sge=1, sg=[
            SGE(amr.buf, 40 + n, amr.lkey)]))
        bah = AH(b.pd, attr=av(b, a))
        wr = SendWR(wr_id=4, opcode=e.IBV_WR_SEND, num_sge=1,
                    sg=[SGE(reg.addr + 64 * KIB, n, reg.mr.lkey)])
        wr.set_wr_ud(bah, a.qp.qp_num, QKEY)
        b.qp.post_send(wr)
        w = self.expect(b, 'UD send from ODP memory', e.IBV_WC_SUCCESS)
        if w.status == e.IBV_WC_SUCCESS:
            self.expect(a, 'UD receive from ODP memory', e.IBV_WC_SUCCESS)
        if amr.read(n, 40) != data:
            self.problems.append('UD send from ODP memory: the bytes differ')
        ah.close()
        bah.close()

    def uc(self):
        drops = counter(self.args.dev_b, 'rx_drop_odp')
        a, b = self.pair(e.IBV_QPT_UC)
        reg = self.reg = OdpRegion(b.pd, MIB)
        amr = self.amr = MR(a.pd, 64 * KIB, ACCESS)
        n = 20 * KIB
        data = os.urandom(n)
        amr.write(data, n, 0)
        for tries in range(1, 51):
            wr = SendWR(wr_id=1, opcode=e.IBV_WR_RDMA_WRITE, num_sge=1,
                        sg=[SGE(amr.buf, n, amr.lkey)])
            wr.set_wr_rdma(reg.mr.rkey, reg.addr + 100)
            a.qp.post_send(wr)
            self.expect(a, 'UC WRITE', e.IBV_WC_SUCCESS)
            time.sleep(0.05)
            if reg.get(100, n) == data:
                break
        else:
            self.problems.append('UC WRITE: not placed in 50 sends')
        self.dropped(drops, 'UC WRITE into untouched memory')
        data = os.urandom(n)
        amr.write(data, n, 0)
        b.qp.post_recv(RecvWR(wr_id=2, num_sge=1, sg=[
            SGE(reg.addr + 512 * KIB + 7, n, reg.mr.lkey)]))
        for tries in range(1, 51):
            a.qp.post_send(SendWR(wr_id=3, opcode=e.IBV_WR_SEND, num_sge=1,
                                  sg=[SGE(amr.buf, n, amr.lkey)]))
            self.expect(a, 'UC SEND', e.IBV_WC_SUCCESS)
            w = poll_one(b.cq, 0.2)
            if w:
                break
        if not w:
            self.problems.append('UC SEND: nothing received in 50 sends')
        elif w.status != e.IBV_WC_SUCCESS or w.byte_len != n or \
                reg.get(512 * KIB + 7, n) != data:
            self.problems.append('UC receive: status %d, %d bytes, or the '
                                 'bytes differ' % (w.status, w.byte_len))

    def munmap(self):
        a, b = self.pair()
        run = Run(a, b)
        run.problems = self.problems
        reg = self.reg = OdpRegion(b.pd, MIB)
        run.a_writes(reg, 0, 64 * KIB)
        reg.unmap()
        wr = SendWR(wr_id=1, opcode=e.IBV_WR_RDMA_WRITE, num_sge=1,
                    sg=[SGE(run.amr.buf, 4096, run.amr.lkey)])
        wr.set_wr_rdma(reg.mr.rkey, reg.addr)
        a.qp.post_send(wr)
        self.expect(a, 'WRITE to unmapped ODP memory',
                    e.IBV_WC_REM_ACCESS_ERR)
        run.amr.close()
        # One error a pair of QPs: each leaves its QPs in error.
        for who, opcode, what, status in (
                ('a', e.IBV_WR_RDMA_READ, 'READ of unmapped ODP memory',
                 e.IBV_WC_REM_ACCESS_ERR),
                ('b', e.IBV_WR_SEND, 'SEND from unmapped ODP memory',
                 e.IBV_WC_LOC_PROT_ERR),
                ('b', e.IBV_WR_RDMA_READ, 'READ into unmapped ODP memory',
                 e.IBV_WC_LOC_PROT_ERR)):
            self.close_ends()
            reg.close()
            a, b = self.pair()
            amr = MR(a.pd, 64 * KIB, ACCESS)
            reg = self.reg = OdpRegion(b.pd, MIB)
            reg.unmap()
            if who == 'a':
                sge, rkey, raddr = SGE(amr.buf, 4096, amr.lkey), \
                    reg.mr.rkey, reg.addr + 8192
            else:
                sge, rkey, raddr = SGE(reg.addr + 5, 4096, reg.mr.lkey), \
                    amr.rkey, amr.buf
            wr = SendWR(wr_id=2, opcode=opcode, num_sge=1, sg=[sge])
            if opcode != e.IBV_WR_SEND:
                wr.set_wr_rdma(rkey, raddr)
            else:
                a.qp.post_recv(RecvWR(wr_id=3, num_sge=1, sg=[
                    SGE(amr.buf, 64 * KIB, amr.lkey)]))
            (a if who == 'a' else b).qp.post_send(wr)
            self.expect(a if who == 'a' else b, what, status)
            amr.close()

    def children(self):
        """B's implicit ODP children made and freed, so far."""
        return (counter(self.args.dev_b, 'odp_children'),
                counter(self.args.dev_b, 'odp_children_freed'))

    def children_settle(self, what, made0, freed0, want_left=0):
        """Wait (the notifier's work frees them) until want_left of the
        children made since (made0, freed0) are left."""
        for _ in range(100):
            made, freed = self.children()
            left = (made - made0) - (freed - freed0)
            if left == want_left:
                return made - made0
            time.sleep(0.05)
        self.problems.append('%s: %d children left, not %d' %
                             (what, left, want_left))
        return made - made0

    def a_write_fails(self, a, amr, rkey, raddr, what):
        wr = SendWR(wr_id=9, opcode=e.IBV_WR_RDMA_WRITE, num_sge=1,
                    sg=[SGE(amr.buf, 4096, amr.lkey)])
        wr.set_wr_rdma(rkey, raddr)
        a.qp.post_send(wr)
        self.expect(a, what, e.IBV_WC_REM_ACCESS_ERR)

    def implicit(self):
        made0, freed0 = self.children()
        a, b = self.pair()
        run = Run(a, b)
        run.problems = self.problems
        self.run = run
        imr = MR(b.pd, 4096, ODP, implicit=True)
        try:
            self.implicit_traffic(a, b, run, imr, made0, freed0)
        finally:
            imr.close()
        self.children_settle('after deregistration', made0, freed0)

    def implicit_traffic(self, a, b, run, imr, made0, freed0):
        # Memory that did not exist when the MR was registered.
        reg = self.reg = OdpRegion(b.pd, 8 * MIB, mr=imr)
        edge = 2 * MIB - (reg.addr % (2 * MIB))   # a child's boundary
        run.a_writes(reg, edge - 100 * KIB, 256 * KIB)
        run.a_writes(reg, 5 * MIB + 3, 5000)
        run.a_atomics(reg, 4 * MIB + 64)
        run.b_sends(reg, 6 * MIB - 300, 64 * KIB)
        self.b_reads_into(run, reg, 7 * MIB + 8, 20 * KIB)
        self.b_atomic_into(run, reg, 7 * MIB + 512 * KIB)
        n = 64 * KIB
        run.amr.write(b'\xa5' * n, n, 0)
        run.rdma(a, e.IBV_WR_RDMA_READ, run.amr.buf, run.amr.lkey, n,
                 reg.addr + 3 * MIB, imr.rkey, 'READ of untouched pages')
        run.check(run.amr.read(n, 0), bytes(n), 'READ of untouched pages')
        # A flushed prefetch maps a range: WRITE it without an RNR NAK.
        self.advise_errno(b.pd, e._IBV_ADVISE_MR_ADVICE_PREFETCH_WRITE,
                          e._IBV_ADVISE_MR_FLAG_FLUSH,
                          [SGE(reg.addr + MIB, 512 * KIB, imr.lkey)], 0,
                          'PREFETCH_WRITE of an implicit MR, flushed')
        before = counter(self.args.dev_b, 'rnr_naks_sent')
        run.a_writes(reg, MIB + 10, 512 * KIB - 20)
        if counter(self.args.dev_b, 'rnr_naks_sent') != before:
            self.problems.append('RNR NAKs after a flushed prefetch of an '
                                 'implicit MR')
        made = self.children()[0] - made0
        # 8 MiB touched all over, not 2 MiB aligned: 4 or 5 children.
        if not 4 <= made <= 5:
            self.problems.append('%d children made for 8 MiB, not 4 or 5' %
                                 made)
        addr = reg.addr
        reg.close()
        self.reg = None
        self.children_settle('after munmap', made0, freed0)
        # Each error leaves the QPs in error: reconnected for the next.
        for raddr, what in ((addr + 4096, 'WRITE to unmapped memory'),
                            (1 << 45, 'WRITE to memory never mapped'),
                            ((1 << 64) - 8192, 'WRITE past the address '
                             'space')):
            self.a_write_fails(a, run.amr, imr.rkey, raddr, what)
            self.children_settle(what, made0, freed0)
            reconnect(a, b)
        # Memory still mapped: its children go with the MR (implicit()).
        reg = self.reg = OdpRegion(b.pd, 4 * MIB, mr=imr)
        run.a_writes(reg, 100, 3 * MIB)

    def close_ends(self):
        for end in getattr(self, 'ends', ()):
            end.close()
        self.ends = ()


def reconnect(a, b):
    """An RC pair in error (or not) connected again, its CQs drained."""
    for x in (a, b):
        x.qp.modify(QPAttr(qp_state=e.IBV_QPS_RESET), e.IBV_QP_STATE)
        while poll_one(x.cq, 0):
            pass
    connect(a, b, ACCESS, av)


def ready_ud(x):
    at = QPAttr(qp_state=e.IBV_QPS_INIT)
    at.pkey_index = 0
    at.port_num = 1
    at.qkey = QKEY
    x.qp.modify(at, e.IBV_QP_STATE | e.IBV_QP_PKEY_INDEX | e.IBV_QP_PORT |
                e.IBV_QP_QKEY)
    x.qp.modify(QPAttr(qp_state=e.IBV_QPS_RTR), e.IBV_QP_STATE)
    at = QPAttr(qp_state=e.IBV_QPS_RTS)
    at.sq_psn = 0
    x.qp.modify(at, e.IBV_QP_STATE | e.IBV_QP_SQ_PSN)


def connect_uc(a, b):
    for x in (a, b):
        at = QPAttr(qp_state=e.IBV_QPS_INIT)
        at.pkey_index = 0
        at.port_num = 1
        at.qp_access_flags = e.IBV_ACCESS_REMOTE_WRITE
        x.qp.modify(at, e.IBV_QP_STATE | e.IBV_QP_PKEY_INDEX |
                    e.IBV_QP_PORT | e.IBV_QP_ACCESS_FLAGS)
    for x, y in ((a, b), (b, a)):
        at = QPAttr(qp_state=e.IBV_QPS_RTR)
        at.path_mtu = e.IBV_MTU_1024
        at.dest_qp_num = y.qp.qp_num
        at.rq_psn = 0
        at.ah_attr = av(x, y)
        x.qp.modify(at, e.IBV_QP_STATE | e.IBV_QP_AV | e.IBV_QP_PATH_MTU |
                    e.IBV_QP_DEST_QPN | e.IBV_QP_RQ_PSN)
    for x in (a, b):
        at = QPAttr(qp_state=e.IBV_QPS_RTS)
        at.sq_psn = 0
        x.qp.modify(at, e.IBV_QP_STATE | e.IBV_QP_SQ_PSN)


def main():
    p = argparse.ArgumentParser()
    p.add_argument('--dev-a', required=True)
    p.add_argument('--gid-a', type=int, required=True)
    p.add_argument('--dev-b', required=True)
    p.add_argument('--gid-b', type=int, required=True)
    args = p.parse_args()
    ph = Phases(args)
    names = ('fresh', 'refault', 'strict', 'concurrent', 'advise', 'ud',
             'uc', 'munmap', 'implicit')
    failures = 0
    for name in names:
        ph.problems = []
        start = time.monotonic()
        try:
            getattr(ph, name)()
        except Failed:
            pass    # a work request failed: Run said which
        except Exception as err:  # pylint: disable=broad-except
            ph.problems.append('%s: %s' % (type(err).__name__, err))
        # refault goes on with fresh's QPs and region.
        if name != 'fresh':
            for o in ('run', 'amr', 'reg'):
                x = ph.__dict__.pop(o, None)
                if x is not None:
                    (x.amr if o == 'run' else x).close()
            ph.close_ends()
        failures += bool(ph.problems)
        print('phase %s (%.1f s): %s' % (name, time.monotonic() - start,
                                         '; '.join(ph.problems) or 'ok'),
              flush=True)
    print('%d phases, %d failures' % (len(names), failures))
    return 1 if failures else 0


if __name__ == '__main__':
    sys.exit(main())
