#!/usr/bin/python3
# SPDX-License-Identifier: GPL-2.0
"""
tests/lib-resperr.py: the responder's error behaviour, row by row.

    lib-resperr.py --dev DEV --gid-index N --ip IP --peer-ip IP
                   --netns NS --ifname IF --dmac MAC [--only ROW]...
    lib-resperr.py --markdown
    lib-resperr.py --backlog | --stale-nak | --held-ack  --dev DEV ... (as
                   the first)

Each row of ROWS below is one request a hostile or broken peer may send,
on one transport (RC, UC, UD, XRC target; with or without an SRQ), and
what the responder must do about it: the response it sends (ACK, one of
the NAKs of IBA table 47, an RNR NAK, an atomic ACK, or nothing), the
completions of the receive WQEs posted, the QP's state afterwards, whether
a receive WQE was used up, which drop counter counts it, and that no
memory outside what the request may touch changed. The table in
Documentation/responder-errors.md is this list (--markdown prints it; 56-
resp-errors checks that the two agree).

For every row a fresh PD, CQ, QP (and SRQ, XRC domain, MW as needed) is
made on DEV with pyverbs, its path pointing at PEER_IP, and registered on
a buffer of four pages of which the first three are the MR and the
fourth a canary in no MR. The fake peer of lib-peer.py, in network
namespace NS (which must have no RoCE device: the peer listens on UDP
port 4791 there), sends the row's packets through IF to MAC and collects
the answers. Prints one line per row and, last, "N rows, M mismatches";
exits 1 if any row went otherwise.

--backlog floods a held responder (backlog() below); --stale-nak turns to
the requester: a target QP's SENDs are answered by the peer with NAKs and
RNR NAKs older than what it acknowledged, which must change nothing
(stale_nak() below); --held-ack ends a QP (destroy, error, reset) while
its responder holds an ACK, which must go out (held_ack() below).
"""
import argparse
import ctypes
import importlib.util
import ipaddress
import mmap
import os
import stat
import struct
import sys
import tempfile
import time

import pyverbs.enums as e
from pyverbs.addr import AHAttr, GID, GlobalRoute
from pyverbs.cq import CQ
from pyverbs.device import Context
from pyverbs.mr import MR, MW, MWBind, MWBindInfo
from pyverbs.pd import PD
from pyverbs.qp import QP, QPAttr, QPCap, QPInitAttr, QPInitAttrEx
from pyverbs.srq import SRQ, SrqAttr, SrqInitAttr, SrqInitAttrEx
from pyverbs.wr import RecvWR, SendWR, SGE
from pyverbs.xrcd import XRCD, XRCDInitAttr


def _load(name):
    path = os.path.join(os.path.dirname(os.path.abspath(__file__)), name)
    spec = importlib.util.spec_from_file_location(name[:-3], path)
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod


P = _load('lib-peer.py')

PAGE = 4096
MTU = 1024                  # path MTU of every QP: multi-packet messages
PEER_QPN = 0x321
RQ_PSN = 0x100              # the responder's first expected PSN
QKEY = 0x11111111
SPOOF_IP = {4: '192.0.2.99', 6: '2001:db8::99'}
ZERO_BASED = getattr(e, 'IBV_ACCESS_ZERO_BASED', 1 << 5)
REMOTE_ALL = (e.IBV_ACCESS_LOCAL_WRITE | e.IBV_ACCESS_REMOTE_WRITE |
              e.IBV_ACCESS_REMOTE_READ | e.IBV_ACCESS_REMOTE_ATOMIC)
BAD_KEY = 0x00fedc00        # no MR's: sroce's keys are small numbers
WAIT = 1.0                  # seconds an answer may take (under TCG)
# <rdma/ib_user_verbs.h>: the write commands REG_MR and DEREG_MR, and the
# size of REG_MR's response (handle, lkey, rkey).
UVERBS_CMD_REG_MR, UVERBS_CMD_DEREG_MR, UVERBS_REG_MR_RESP = 9, 13, 12

STATUS = {getattr(e, n): n[len('IBV_WC_'):].lower() for n in dir(e)
          if n.startswith('IBV_WC_') and n.endswith('_ERR') or
          n == 'IBV_WC_SUCCESS'}
STATES = {e.IBV_QPS_RESET: 'RESET', e.IBV_QPS_INIT: 'INIT',
          e.IBV_QPS_RTR: 'RTR', e.IBV_QPS_RTS: 'RTS', e.IBV_QPS_SQD: 'SQD',
          e.IBV_QPS_SQE: 'SQE', e.IBV_QPS_ERR: 'ERR'}


def status_name(code):
    return STATUS.get(code, 'status-%d' % code)


class Row:
    """
    One row of the table. sends(t) returns the packets, built with the
    target t's helpers. Expected:
      resp      the kinds of the answers, in order (lib-peer's
                Response.kind(): ack, nak-inv-req, rnr-nak...); [] for none
      wcs       the receive completions before the follow-up, in order:
                (wr_id, status name)
      state     the QP's state afterwards
      counters  drop or other counters that must grow: {name: delta}
      followup  if not None, a valid SEND is sent next (the QP must still
                work) and must complete on this receive WQE: 1 when the
                first WQE was kept, 2 when it was used up
      check     t -> None or a message: a further check (memory)
    Setup: transport (rc, uc, ud, xrc), srq, recvs (sizes of the receive
    WQEs posted; lkey 'bad' for a WQE with a key of no MR), qp_access,
    mr_access, rd_atomic (max_dest_rd_atomic), setup (t -> None: a window
    or a second MR, whose rkey it leaves in t.rkey2), cqe (the CQ's size),
    path_mtu (an IBV_MTU_* value; 1024 bytes unless given), timeout and
    retry_cnt (an RC QP's local ACK timeout and transport retries).
    """

    def __init__(self, name, transport, sends, what, resp, wcs=(),
                 state='RTS', counters=None, followup=None, check=None,
                 srq=False, recvs=(256, 256), bad_lkey=False,
                 qp_access=REMOTE_ALL, mr_access=None, rd_atomic=4,
                 setup=None, rule='', cqe=64, path_mtu=None, timeout=14,
                 retry_cnt=7):
        self.name = name
        self.transport = transport
        self.sends = sends
        self.what = what
        self.resp = list(resp)
        self.wcs = list(wcs)
        self.state = state
        self.counters = counters or {}
        self.followup = followup
        self.check = check
        self.srq = srq or transport == 'xrc'
        self.recvs = recvs
        self.bad_lkey = bad_lkey
        self.qp_access = qp_access
        self.mr_access = REMOTE_ALL | e.IBV_ACCESS_MW_BIND \
            if mr_access is None else mr_access
        self.rd_atomic = rd_atomic
        self.path_mtu = path_mtu or e.IBV_MTU_1024
        self.timeout = timeout
        self.retry_cnt = retry_cnt
        self.setup = setup
        self.rule = rule
        self.cqe = cqe


class Target:
    """The objects of one row on the device, and packet helpers for it."""

    def __init__(self, args, peer, row, mem):
        self.args = args
        self.peer = peer
        self.row = row
        self.mem = mem
        self.base = mem.addr
        self.ip = args.ip
        self.peer_ip = args.peer_ip
        self.ctx = Context(name=args.dev)
        self.pd = PD(self.ctx)
        self.cq = CQ(self.ctx, row.cqe, None, None, 0)
        self.mr = MR(self.pd, 3 * PAGE, row.mr_access, address=self.base)
        self.srq = None
        self.xrcd = None
        self.xrcd_file = None
        self.srqn = 0
        self.psn = RQ_PSN
        self.ident = 1
        self.rkey2 = None
        self.mr2 = None
        self._make_qp()
        self._post_recvs()

    # --- setup ---------------------------------------------------------

    def _qp_type(self):
        return {'rc': e.IBV_QPT_RC, 'uc': e.IBV_QPT_UC,
                'ud': e.IBV_QPT_UD}[self.row.transport]

    def _make_qp(self):
        row = self.row
        cap = QPCap(max_send_wr=16, max_recv_wr=0 if row.srq else 16,
                    max_send_sge=1, max_recv_sge=2)
        if row.transport == 'xrc':
            self.xrcd_file = tempfile.NamedTemporaryFile()
            fd = os.open(self.xrcd_file.name, os.O_RDONLY | os.O_CREAT,
                         stat.S_IRUSR)
            self.xrcd = XRCD(self.ctx, XRCDInitAttr(
                e.IBV_XRCD_INIT_ATTR_FD | e.IBV_XRCD_INIT_ATTR_OFLAGS,
                os.O_CREAT, fd))
            os.close(fd)
            sa = SrqInitAttrEx(max_wr=16, max_sge=2)
            sa.srq_type = e.IBV_SRQT_XRC
            sa.pd = self.pd
            sa.xrcd = self.xrcd
            sa.cq = self.cq
            sa.comp_mask = e.IBV_SRQ_INIT_ATTR_TYPE | \
                e.IBV_SRQ_INIT_ATTR_PD | e.IBV_SRQ_INIT_ATTR_CQ | \
                e.IBV_SRQ_INIT_ATTR_XRCD
            self.srq = SRQ(self.ctx, sa)
            self.srqn = self.srq.get_srq_num()
            self.qp = QP(self.ctx, QPInitAttrEx(
                qp_type=e.IBV_QPT_XRC_RECV,
                comp_mask=e.IBV_QP_INIT_ATTR_XRCD, xrcd=self.xrcd))
        else:
            if row.srq:
                self.srq = SRQ(self.pd, SrqInitAttr(SrqAttr(max_wr=16,
                                                            max_sge=2)))
            self.qp = QP(self.pd, QPInitAttr(
                qp_type=self._qp_type(), scq=self.cq, rcq=self.cq,
                srq=self.srq, cap=cap, sq_sig_all=0))
        self._connect()

    def _gid(self, ip):
        a = ipaddress.ip_address(ip)
        if a.version == 4:
            a = ipaddress.IPv6Address('::ffff:' + ip)
        return GID(val=a.exploded)

    def _connect(self):
        row = self.row
        a = QPAttr(qp_state=e.IBV_QPS_INIT)
        a.pkey_index = 0
        a.port_num = 1
        mask = e.IBV_QP_STATE | e.IBV_QP_PKEY_INDEX | e.IBV_QP_PORT
        if row.transport == 'ud':
            a.qkey = QKEY
            mask |= e.IBV_QP_QKEY
        else:
            a.qp_access_flags = row.qp_access
            mask |= e.IBV_QP_ACCESS_FLAGS
        self.qp.modify(a, mask)

        a = QPAttr(qp_state=e.IBV_QPS_RTR)
        mask = e.IBV_QP_STATE
        if row.transport != 'ud':
            a.path_mtu = row.path_mtu
            a.dest_qp_num = PEER_QPN
            a.rq_psn = RQ_PSN
            a.ah_attr = AHAttr(gr=GlobalRoute(dgid=self._gid(self.peer_ip),
                                              sgid_index=self.args.gid_index,
                                              hop_limit=64),
                               is_global=1, port_num=1)
            mask |= e.IBV_QP_AV | e.IBV_QP_PATH_MTU | e.IBV_QP_DEST_QPN | \
                e.IBV_QP_RQ_PSN
            if row.transport != 'uc':
                a.max_dest_rd_atomic = row.rd_atomic
                a.min_rnr_timer = 1
                mask |= e.IBV_QP_MAX_DEST_RD_ATOMIC | e.IBV_QP_MIN_RNR_TIMER
        self.qp.modify(a, mask)
        if row.transport == 'xrc':
            return
        a = QPAttr(qp_state=e.IBV_QPS_RTS)
        a.sq_psn = 0x200
        mask = e.IBV_QP_STATE | e.IBV_QP_SQ_PSN
        if row.transport == 'rc':
            a.timeout = row.timeout
            a.retry_cnt = row.retry_cnt
            a.rnr_retry = 7
            a.max_rd_atomic = 1
            mask |= e.IBV_QP_TIMEOUT | e.IBV_QP_RETRY_CNT | \
                e.IBV_QP_RNR_RETRY | e.IBV_QP_MAX_QP_RD_ATOMIC
        self.qp.modify(a, mask)

    def recv_buf(self, i):
        """Receive buffers live in the MR's third page, 2 KiB each."""
        return self.base + 2 * PAGE + i * 2048

    def post_recv(self, wr_id, size, bad=False):
        wr = RecvWR(wr_id=wr_id, num_sge=1,
                    sg=[SGE(self.recv_buf(wr_id - 1), size,
                            BAD_KEY if bad else self.mr.lkey)])
        (self.srq or self.qp).post_recv(wr)

    def _post_recvs(self):
        for i, size in enumerate(self.row.recvs):
            self.post_recv(i + 1, size, self.row.bad_lkey and i == 0)

    def bind_mw(self, mw_type, addr, length, zero_based):
        """Bind a window on the MR through the QP; its rkey is kept."""
        access = e.IBV_ACCESS_REMOTE_ATOMIC | e.IBV_ACCESS_REMOTE_WRITE | \
            e.IBV_ACCESS_REMOTE_READ | (ZERO_BASED if zero_based else 0)
        self.mw = MW(self.pd, mw_type)
        info = MWBindInfo(self.mr, addr, length, access)
        if mw_type == e.IBV_MW_TYPE_1:
            self.qp.bind_mw(self.mw, MWBind(info, e.IBV_SEND_SIGNALED))
            rkey = self.mw.rkey
        else:
            wr = SendWR(opcode=e.IBV_WR_BIND_MW,
                        send_flags=e.IBV_SEND_SIGNALED)
            wr.set_bind_wr(self.mw, info)
            self.qp.post_send(wr)
            rkey = wr.rkey
        wcs = self.poll(1, 2.0)
        if len(wcs) != 1 or wcs[0].status != e.IBV_WC_SUCCESS:
            raise RuntimeError('bind_mw failed: %s' %
                               [status_name(w.status) for w in wcs])
        self.rkey2 = rkey

    def reg_mr_iova(self, at, length, iova):
        """
        A second MR on the buffer from offset at, accessed by iova (as
        ibv_reg_mr_iova() registers it); its rkey is kept. pyverbs has no
        such call, so this is the uverbs write command itself on the
        context's file, with the PD's handle; close() deregisters it.
        """
        resp = ctypes.create_string_buffer(UVERBS_REG_MR_RESP)
        os.write(self.ctx.cmd_fd, struct.pack(
            '<IHHQQQQII', UVERBS_CMD_REG_MR, 12, UVERBS_REG_MR_RESP // 4,
            ctypes.addressof(resp), self.base + at, length, iova,
            self.pd.handle, REMOTE_ALL))
        self.mr2, _, self.rkey2 = struct.unpack('<III', resp.raw)

    # --- packets -------------------------------------------------------

    def base_opcode(self):
        return {'rc': P.RC, 'uc': P.UC, 'ud': P.UD,
                'xrc': P.XRC}[self.row.transport]

    def packet(self, op, ext=b'', payload=b'', psn=None, src=None, dst=None,
               pkey=P.DEFAULT_PKEY, qpn=None, ackreq=True):
        """
        A request to the QP: op without the transport base. RC and XRC
        requests ask for an ACK unless ackreq is False.
        """
        psn = self.psn if psn is None else psn
        opcode = self.base_opcode() | op
        hdr = P.bth(opcode, self.qp.qp_num if qpn is None else qpn, psn,
                    ackreq=ackreq and self.row.transport in ('rc', 'xrc'),
                    pkey=pkey)
        if self.row.transport == 'xrc':
            hdr += P.xrceth(self.srqn)
        if self.row.transport == 'ud':
            hdr += P.deth(QKEY, PEER_QPN)
        self.ident += 1
        return P.Packet(src or self.peer_ip, dst or self.ip,
                        P.with_pad(hdr, payload) + ext + payload,
                        ident=self.ident)

    def send_only(self, size=64, **kw):
        return self.packet(P.SEND_ONLY, payload=pattern(size, 0x40), **kw)

    def next_psn(self, n=1):
        self.psn = (self.psn + n) & 0xffffff

    # --- observation ---------------------------------------------------

    def poll(self, want, timeout):
        got = []
        end = time.monotonic() + timeout
        while len(got) < want and time.monotonic() < end:
            n, wcs = self.cq.poll(num_entries=16)
            got.extend(wcs[:n])
            if len(got) < want:
                time.sleep(0.02)
        return got

    def state(self):
        attr, _ = self.qp.query(e.IBV_QP_STATE)
        return STATES.get(attr.qp_state, str(attr.qp_state))

    def read(self, addr, length):
        return ctypes.string_at(addr, length)

    def close(self):
        if self.mr2 is not None:
            os.write(self.ctx.cmd_fd, struct.pack(
                '<IHHI', UVERBS_CMD_DEREG_MR, 3, 0, self.mr2))
            self.mr2 = None
        for name in ('mw', 'qp', 'srq', 'mr', 'cq', 'xrcd', 'pd', 'ctx'):
            obj = getattr(self, name, None)
            if obj is not None:
                obj.close()
        if self.xrcd_file:
            self.xrcd_file.close()


class Memory:
    """Four pages: the MR is the first three, the last is the canary."""

    def __init__(self):
        self.map = mmap.mmap(-1, 4 * PAGE)
        self.addr = ctypes.addressof(ctypes.c_char.from_buffer(self.map))

    def fill(self):
        self.map[:] = pattern(4 * PAGE, 0xa5)

    def unchanged(self):
        want = pattern(4 * PAGE, 0xa5)
        got = self.map[:]
        if got == want:
            return None
        # Receive buffers (third page) are written by the rows' SENDs.
        diff = [i for i in range(len(want)) if got[i] != want[i]]
        return 'memory changed at offsets %#x..%#x' % (diff[0], diff[-1])

    def u64(self, off):
        return int.from_bytes(self.map[off:off + 8], 'little')


def pattern(n, seed):
    return bytes((seed + i * 7) & 0xff for i in range(n))


def counters(dev):
    d = '/sys/class/infiniband/%s/ports/1/hw_counters' % dev
    out = {}
    for name in os.listdir(d):
        with open(os.path.join(d, name)) as f:
            out[name] = int(f.read())
    return out


# --- the table -----------------------------------------------------------
#
# Packet builders take the target t. Offsets are from the buffer's start;
# the MR is [0, 3 * PAGE), the canary [3 * PAGE, 4 * PAGE).

def first_mtu(t):
    """A SEND FIRST that asks for no ACK: the next packet's answer counts."""
    return [t.packet(P.SEND_FIRST, payload=pattern(MTU, 1), ackreq=False)]


def write(t, op, va, rkey, length, payload_len, **kw):
    return t.packet(op, P.reth(va, rkey, length),
                    pattern(payload_len, 9), **kw)


def fetch_add(t, va, rkey, add=1):
    return t.packet(P.FETCH_ADD, P.atmeth(va, rkey, add))


def cmp_swap(t, va, rkey):
    return t.packet(P.CMP_SWAP, P.atmeth(va, rkey, 0x1122334455667788,
                                        0xa5a5a5a5a5a5a5a5))


def atomic_write(t, va, rkey):
    return t.packet(P.ATOMIC_WRITE, P.reth(va, rkey, 8),
                    (0x0102030405060708).to_bytes(8, 'big'))


def read_req(t, va, rkey, length):
    return t.packet(P.READ_REQ, P.reth(va, rkey, length))


def mem_unchanged(t):
    return t.mem.unchanged()


def mw_zero(mw_type, at):
    """Window setup: bind a zero-based window at buffer offset at."""
    return lambda t: t.bind_mw(mw_type, t.base + at, 2 * PAGE, True)


def mw_abs(mw_type, at):
    return lambda t: t.bind_mw(mw_type, t.base + at, 2 * PAGE, False)


def initial_u64(off):
    """The u64 at buffer offset off before a row runs (host order)."""
    return int.from_bytes(pattern(4 * PAGE, 0xa5)[off:off + 8], 'little')


def atomic_landed(off, value):
    want = value & ((1 << 64) - 1)

    def check(t):
        got = t.mem.u64(off)
        return None if got == want else \
            'u64 at %#x is %#x, not %#x' % (off, got, want)
    return check


INV, ACC, OPE, RNR = 'nak-inv-req', 'nak-access', 'nak-op', 'rnr-nak'
T1, T2 = e.IBV_MW_TYPE_1, e.IBV_MW_TYPE_2
REMOTE_NO_WRITE = REMOTE_ALL & ~e.IBV_ACCESS_REMOTE_WRITE
REMOTE_NO_READ = REMOTE_ALL & ~e.IBV_ACCESS_REMOTE_READ
REMOTE_NO_ATOMIC = REMOTE_ALL & ~e.IBV_ACCESS_REMOTE_ATOMIC

ROWS = [
    # RC: each error is a NAK and the QP's end (IBA 9.9.3: classes B, C).
    Row('rc-send', 'rc', lambda t: [t.send_only()], 'valid SEND ONLY',
        ['ack'], [(1, 'success')], rule='ok'),
    Row('rc-psn-ahead', 'rc', lambda t: [t.send_only(psn=RQ_PSN + 5)],
        'SEND ONLY five PSNs ahead', ['nak-seq'], [],
        counters={'seq_errors': 1}, followup=1, rule='B'),
    Row('rc-rnr', 'rc', lambda t: [t.send_only()], 'SEND with no receive WQE',
        [RNR], [], counters={'rnr_naks_sent': 1}, recvs=(), rule='B'),
    Row('rc-missing-first', 'rc',
        lambda t: [t.packet(P.SEND_MIDDLE, payload=pattern(MTU, 1))],
        'SEND MIDDLE with no FIRST', [INV], [(1, 'wr_flush_err'),
                                           (2, 'wr_flush_err')],
        'ERR', {'naks_sent': 1}, rule='C'),
    Row('rc-first-in-msg', 'rc',
        lambda t: first_mtu(t) + [t.packet(P.SEND_FIRST, psn=RQ_PSN + 1,
                                           payload=pattern(MTU, 2))],
        'SEND FIRST inside a message', [INV],
        [(1, 'rem_inv_req_err'), (2, 'wr_flush_err')], 'ERR',
        recvs=(2048, 2048), rule='C'),
    Row('rc-send-size', 'rc',
        lambda t: [t.packet(P.SEND_FIRST, payload=pattern(100, 1))],
        'SEND FIRST shorter than the MTU', [INV],
        [(1, 'rem_inv_req_err'), (2, 'wr_flush_err')], 'ERR', rule='C'),
    Row('rc-send-too-long', 'rc', lambda t: [t.send_only(512)],
        'SEND of 512 bytes into 64', [INV],
        [(1, 'loc_len_err'), (2, 'wr_flush_err')], 'ERR', recvs=(64, 64),
        rule='C'),
    Row('rc-recv-bad-lkey', 'rc', lambda t: [t.send_only()],
        'SEND into a receive WQE with a bad lkey', [OPE],
        [(1, 'loc_prot_err'), (2, 'wr_flush_err')], 'ERR', bad_lkey=True,
        rule='A'),
    Row('rc-write-bad-rkey', 'rc',
        lambda t: [write(t, P.WRITE_ONLY, t.base, BAD_KEY, 64, 64)],
        'WRITE with an unknown rkey', [ACC],
        [(1, 'wr_flush_err'), (2, 'wr_flush_err')], 'ERR',
        check=mem_unchanged, rule='C'),
    Row('rc-write-past-mr', 'rc',
        lambda t: [write(t, P.WRITE_ONLY, t.base + 3 * PAGE - 32,
                         t.mr.rkey, 64, 64)],
        'WRITE running 32 bytes past the MR', [ACC],
        [(1, 'wr_flush_err'), (2, 'wr_flush_err')], 'ERR',
        check=mem_unchanged, rule='C'),
    Row('rc-write-qp-access', 'rc',
        lambda t: [write(t, P.WRITE_ONLY, t.base, t.mr.rkey, 64, 64)],
        'WRITE to a QP without remote write', [INV],
        [(1, 'wr_flush_err'), (2, 'wr_flush_err')], 'ERR',
        qp_access=REMOTE_NO_WRITE, check=mem_unchanged, rule='C'),
    Row('rc-write-mr-access', 'rc',
        lambda t: [write(t, P.WRITE_ONLY, t.base, t.mr.rkey, 64, 64)],
        'WRITE to an MR without remote write', [ACC],
        [(1, 'wr_flush_err'), (2, 'wr_flush_err')], 'ERR',
        mr_access=REMOTE_NO_WRITE, check=mem_unchanged, rule='C'),
    Row('rc-write-first-len0', 'rc',
        lambda t: [write(t, P.WRITE_FIRST, t.base, t.mr.rkey, 0, MTU)],
        'WRITE FIRST with RETH length 0 and a payload', [INV],
        [(1, 'wr_flush_err'), (2, 'wr_flush_err')], 'ERR',
        check=mem_unchanged, rule='C'),
    Row('rc-write-len-mismatch', 'rc',
        lambda t: [write(t, P.WRITE_ONLY, t.base, t.mr.rkey, 100, 64)],
        'WRITE ONLY of 64 bytes, RETH saying 100', [INV],
        [(1, 'wr_flush_err'), (2, 'wr_flush_err')], 'ERR',
        check=mem_unchanged, rule='C'),
    Row('rc-write-imm-rnr', 'rc',
        lambda t: [t.packet(P.WRITE_ONLY_IMM,
                            P.reth(t.base, t.mr.rkey, 64) + P.imm(7),
                            pattern(64, 9))],
        'WRITE with immediate and no receive WQE', [RNR], [],
        recvs=(), check=mem_unchanged, rule='B'),
    Row('rc-read-bad-rkey', 'rc', lambda t: [read_req(t, t.base, BAD_KEY, 64)],
        'READ with an unknown rkey', [ACC],
        [(1, 'wr_flush_err'), (2, 'wr_flush_err')], 'ERR', rule='C'),
    Row('rc-read-qp-access', 'rc',
        lambda t: [read_req(t, t.base, t.mr.rkey, 64)],
        'READ from a QP without remote read', [INV],
        [(1, 'wr_flush_err'), (2, 'wr_flush_err')], 'ERR',
        qp_access=REMOTE_NO_READ, rule='C'),
    Row('rc-read-no-resources', 'rc',
        lambda t: [read_req(t, t.base, t.mr.rkey, 64)],
        'READ to a QP with max_dest_rd_atomic 0', [INV],
        [(1, 'wr_flush_err'), (2, 'wr_flush_err')], 'ERR', rd_atomic=0,
        rule='C'),
    Row('rc-read-past-mr', 'rc',
        lambda t: [read_req(t, t.base + 3 * PAGE - 32, t.mr.rkey, 64)],
        'READ running 32 bytes past the MR', [ACC],
        [(1, 'wr_flush_err'), (2, 'wr_flush_err')], 'ERR', rule='C'),
    Row('rc-atomic', 'rc', lambda t: [fetch_add(t, t.base + 8, t.mr.rkey, 3)],
        'FETCH_ADD, aligned', ['atomic-ack'], [],
        check=atomic_landed(8, initial_u64(8) + 3), rule='ok'),
    Row('rc-atomic-misaligned', 'rc',
        lambda t: [fetch_add(t, t.base + 4, t.mr.rkey)],
        'FETCH_ADD to a misaligned address', [INV],
        [(1, 'wr_flush_err'), (2, 'wr_flush_err')], 'ERR',
        check=mem_unchanged, rule='C'),
    Row('rc-atomic-past-mr', 'rc',
        lambda t: [fetch_add(t, t.base + 3 * PAGE, t.mr.rkey)],
        'FETCH_ADD to the canary page after the MR', [ACC],
        [(1, 'wr_flush_err'), (2, 'wr_flush_err')], 'ERR',
        check=mem_unchanged, rule='C'),
    Row('rc-atomic-bad-rkey', 'rc',
        lambda t: [fetch_add(t, t.base + 8, BAD_KEY)],
        'FETCH_ADD with an unknown rkey', [ACC],
        [(1, 'wr_flush_err'), (2, 'wr_flush_err')], 'ERR',
        check=mem_unchanged, rule='C'),
    Row('rc-atomic-qp-access', 'rc',
        lambda t: [cmp_swap(t, t.base + 8, t.mr.rkey)],
        'CMP_SWAP to a QP without remote atomic', [INV],
        [(1, 'wr_flush_err'), (2, 'wr_flush_err')], 'ERR',
        qp_access=REMOTE_NO_ATOMIC, check=mem_unchanged, rule='C'),
    Row('rc-atomic-mr-access', 'rc',
        lambda t: [cmp_swap(t, t.base + 8, t.mr.rkey)],
        'CMP_SWAP to an MR without remote atomic', [ACC],
        [(1, 'wr_flush_err'), (2, 'wr_flush_err')], 'ERR',
        mr_access=REMOTE_NO_ATOMIC, check=mem_unchanged, rule='C'),
    Row('rc-atomic-write-misaligned', 'rc',
        lambda t: [atomic_write(t, t.base + 4, t.mr.rkey)],
        'ATOMIC WRITE to a misaligned address', [INV],
        [(1, 'wr_flush_err'), (2, 'wr_flush_err')], 'ERR',
        check=mem_unchanged, rule='C'),
    Row('rc-atomic-write-past-mr', 'rc',
        lambda t: [atomic_write(t, t.base + 3 * PAGE, t.mr.rkey)],
        'ATOMIC WRITE to the canary page after the MR', [ACC],
        [(1, 'wr_flush_err'), (2, 'wr_flush_err')], 'ERR',
        check=mem_unchanged, rule='C'),
    Row('rc-send-inv-bad-key', 'rc',
        lambda t: [t.packet(P.SEND_ONLY_INV, P.ieth(t.mr.rkey),
                            pattern(64, 3))],
        'SEND with Invalidate of an MR that cannot be invalidated', [INV],
        [(1, 'rem_inv_req_err'), (2, 'wr_flush_err')], 'ERR', rule='C'),
    Row('rc-flush-bad-placement', 'rc',
        lambda t: [t.packet(P.FLUSH, P.feth(0, 0) +
                            P.reth(t.base, t.mr.rkey, 64))],
        'FLUSH with no placement type', [INV],
        [(1, 'wr_flush_err'), (2, 'wr_flush_err')], 'ERR', rule='C'),
    Row('rc-flush-qp-access', 'rc',
        lambda t: [t.packet(P.FLUSH, P.feth(0, 1) +
                            P.reth(t.base, t.mr.rkey, 64))],
        'FLUSH (global, of a range) to a QP without the flush right', [INV],
        [(1, 'wr_flush_err'), (2, 'wr_flush_err')], 'ERR', rule='C'),
    Row('rc-uc-opcode', 'rc',
        lambda t: [P.Packet(t.peer_ip, t.ip, P.bth(P.UC | P.SEND_ONLY,
                                                    t.qp.qp_num, RQ_PSN) +
                            pattern(64, 1))],
        'a UC SEND ONLY to an RC QP', [], [],
        counters={'rx_drop_qp_state': 1},
        followup=1, rule='drop'),
    Row('rc-spoofed-source', 'rc',
        lambda t: [t.send_only(src=SPOOF_IP[ipaddress.ip_address(
            t.peer_ip).version])],
        'SEND ONLY from an address other than the peer', [], [],
        counters={'rx_drop_addr': 1}, followup=1, rule='drop'),
    Row('rc-bad-icrc', 'rc', lambda t: [(t.send_only(), True)],
        'SEND ONLY with a bad ICRC', [], [], counters={'rx_drop_icrc': 1},
        followup=1, rule='drop'),
    Row('rc-bad-pkey', 'rc', lambda t: [t.send_only(pkey=0x1234)],
        'SEND ONLY with a P_Key not ours', [], [],
        counters={'rx_drop_header': 1}, followup=1, rule='drop'),
    Row('rc-unknown-qp', 'rc', lambda t: [t.send_only(qpn=0xfff0)],
        'SEND ONLY to a QP number in no use', [], [],
        counters={'rx_drop_no_qp': 1}, followup=1, rule='drop'),
    # RC on an SRQ: the same; the SRQ's WQE completes in error.
    Row('rc-srq-too-long', 'rc', lambda t: [t.send_only(512)],
        'SEND of 512 bytes into 64, SRQ', [INV], [(1, 'loc_len_err')],
        'ERR', srq=True, recvs=(64, 64), rule='C'),
    Row('rc-srq-rnr', 'rc', lambda t: [t.send_only()],
        'SEND with an empty SRQ', [RNR], [], srq=True, recvs=(),
        counters={'rnr_naks_sent': 1}, rule='B'),
    # UC: no answer ever; the message is dropped (IBA 9.9.3: class D).
    Row('uc-send', 'uc', lambda t: [t.send_only()], 'valid SEND ONLY', [],
        [(1, 'success')], rule='ok'),
    Row('uc-send-too-long', 'uc', lambda t: [t.send_only(512)],
        'SEND of 512 bytes into 64', [], [],
        counters={'rx_drop_length': 1}, followup=1, recvs=(64, 64),
        rule='D'),
    Row('uc-srq-too-long', 'uc', lambda t: [t.send_only(512)],
        'SEND of 512 bytes into 64, SRQ', [], [(1, 'loc_len_err')],
        counters={'rx_drop_length': 1}, followup=2, srq=True,
        recvs=(64, 64), rule='E'),
    Row('uc-write-bad-rkey', 'uc',
        lambda t: [write(t, P.WRITE_ONLY, t.base, BAD_KEY, 64, 64)],
        'WRITE with an unknown rkey', [], [],
        counters={'rx_drop_invalid': 1}, followup=1, check=mem_unchanged,
        rule='D'),
    Row('uc-write-past-mr', 'uc',
        lambda t: [write(t, P.WRITE_ONLY, t.base + 3 * PAGE - 32,
                         t.mr.rkey, 64, 64)],
        'WRITE running 32 bytes past the MR', [], [],
        counters={'rx_drop_invalid': 1}, followup=1, check=mem_unchanged,
        rule='D'),
    Row('uc-write-imm-no-wqe', 'uc',
        lambda t: [t.packet(P.WRITE_ONLY_IMM,
                            P.reth(t.base, t.mr.rkey, 64) + P.imm(7),
                            pattern(64, 9))],
        'WRITE with immediate and no receive WQE', [], [],
        counters={'rx_drop_no_rwqe': 1}, recvs=(), check=mem_unchanged,
        rule='D'),
    Row('uc-missing-first', 'uc',
        lambda t: [t.packet(P.SEND_MIDDLE, payload=pattern(MTU, 1))],
        'SEND MIDDLE with no FIRST', [], [],
        counters={'rx_drop_invalid': 1}, followup=1, rule='D'),
    Row('uc-psn-gap', 'uc',
        lambda t: first_mtu(t) + [t.packet(P.SEND_LAST, psn=RQ_PSN + 2,
                                           payload=pattern(64, 2))],
        'SEND FIRST, then LAST with a PSN gap', [], [],
        counters={'seq_errors': 1}, followup=1, recvs=(2048, 2048),
        rule='D'),
    Row('uc-no-wqe', 'uc', lambda t: [t.send_only()],
        'SEND with no receive WQE', [], [],
        counters={'rx_drop_no_rwqe': 1}, recvs=(), rule='D'),
    Row('uc-recv-bad-lkey', 'uc', lambda t: [t.send_only()],
        'SEND into a receive WQE with a bad lkey', [],
        [(1, 'loc_prot_err'), (2, 'wr_flush_err')], 'ERR', bad_lkey=True,
        rule='A'),
    # UD: datagrams are dropped, and use up no receive WQE of the QP.
    Row('ud-send', 'ud', lambda t: [t.send_only()], 'valid datagram', [],
        [(1, 'success')], rule='ok'),
    Row('ud-too-long', 'ud', lambda t: [t.send_only(512)],
        'datagram of 512 bytes into 256 (GRH area included)', [], [],
        counters={'rx_drop_length': 1}, followup=1, recvs=(256, 256),
        rule='D'),
    Row('ud-srq-too-long', 'ud', lambda t: [t.send_only(512)],
        'datagram of 512 bytes into 256, SRQ', [], [(1, 'loc_len_err')],
        counters={'rx_drop_length': 1}, followup=2, srq=True,
        recvs=(256, 256), rule='E'),
    Row('ud-over-mtu', 'ud', lambda t: [t.send_only(MTU + 256)],
        'datagram longer than the path MTU', [], [],
        counters={'rx_drop_length': 1}, followup=1, recvs=(2048, 2048),
        rule='D'),
    Row('ud-bad-qkey', 'ud',
        lambda t: [P.Packet(t.peer_ip, t.ip, P.bth(P.UD | P.SEND_ONLY,
                                                    t.qp.qp_num, 1, False) +
                            P.deth(QKEY + 1, PEER_QPN) + pattern(64, 1))],
        'datagram with the wrong Q_Key', [], [],
        counters={'rx_drop_qkey': 1}, followup=1, rule='D'),
    Row('ud-no-wqe', 'ud', lambda t: [t.send_only()],
        'datagram with no receive WQE', [], [],
        counters={'rx_drop_no_rwqe': 1}, recvs=(), rule='D'),
    Row('ud-recv-bad-lkey', 'ud', lambda t: [t.send_only()],
        'datagram into a receive WQE with a bad lkey', [],
        [(1, 'loc_prot_err'), (2, 'wr_flush_err')], 'ERR', bad_lkey=True,
        rule='A'),
    # XRC target: RC's rules; receive WQEs from the XRC SRQ named.
    Row('xrc-send', 'xrc', lambda t: [t.send_only()], 'valid SEND ONLY',
        ['ack'], [(1, 'success')], 'RTR', rule='ok'),
    Row('xrc-unknown-srq', 'xrc',
        lambda t: [P.Packet(t.peer_ip, t.ip, P.bth(P.XRC | P.SEND_ONLY,
                                                    t.qp.qp_num, RQ_PSN) +
                            P.xrceth(t.srqn + 77) + pattern(64, 1))],
        'SEND naming an XRC SRQ not in the domain', [INV], [], 'ERR',
        rule='C'),
    Row('xrc-too-long', 'xrc', lambda t: [t.send_only(512)],
        'SEND of 512 bytes into 64', [INV], [(1, 'loc_len_err')], 'ERR',
        recvs=(64, 64), rule='C'),
    Row('xrc-write-bad-rkey', 'xrc',
        lambda t: [write(t, P.WRITE_ONLY, t.base, BAD_KEY, 64, 64)],
        'WRITE with an unknown rkey', [ACC], [], 'ERR',
        check=mem_unchanged, rule='C'),
    Row('xrc-srq-rnr', 'xrc', lambda t: [t.send_only()],
        'SEND with an empty XRC SRQ', [RNR], [], 'RTR', recvs=(),
        counters={'rnr_naks_sent': 1}, rule='B'),
    Row('xrc-read-bad-rkey', 'xrc',
        lambda t: [read_req(t, t.base, BAD_KEY, 64)],
        'READ with an unknown rkey', [ACC], [], 'ERR', rule='C'),
    Row('xrc-atomic-misaligned', 'xrc',
        lambda t: [fetch_add(t, t.base + 4, t.mr.rkey)],
        'FETCH_ADD to a misaligned address', [INV], [], 'ERR',
        check=mem_unchanged, rule='C'),
]

# Atomics where the address the packet carries is aligned but the memory
# it comes to is not: a zero-based window bound 4 bytes into the MR, the
# operation at window offset 4088 = buffer offset 4092, 4 bytes before a
# page boundary. Each must be refused with nothing written, through either
# window type; an aligned one through the same window works.
for _tn, _t in (('t1', T1), ('t2', T2)):
    for _on, _op in (('fetch-add', fetch_add), ('cmp-swap', cmp_swap),
                     ('atomic-write', atomic_write)):
        ROWS.append(Row(
            'mw-%s-zb-%s' % (_tn, _on), 'rc',
            (lambda op: lambda t: [op(t, PAGE - 8, t.rkey2)])(_op),
            '%s at zero-based %s window offset 4088, window at MR+4' %
            (_on.upper().replace('-', '_'), _tn.upper()), [INV],
            [(1, 'wr_flush_err'), (2, 'wr_flush_err')], 'ERR',
            check=mem_unchanged, setup=mw_zero(_t, 4), rule='C'))
    ROWS.append(Row(
        'mw-%s-abs-fetch-add' % _tn, 'rc',
        lambda t: [fetch_add(t, t.base + PAGE - 4, t.rkey2)],
        'FETCH_ADD at the same spot through a %s window not zero-based' %
        _tn.upper(), [INV], [(1, 'wr_flush_err'), (2, 'wr_flush_err')],
        'ERR', check=mem_unchanged, setup=mw_abs(_t, 4), rule='C'))
    ROWS.append(Row(
        'mw-%s-zb-aligned' % _tn, 'rc',
        lambda t: [fetch_add(t, PAGE - 8, t.rkey2, 5)],
        'FETCH_ADD at zero-based %s window offset 4088, window at MR+8' %
        _tn.upper(), ['atomic-ack'], [],
        check=atomic_landed(PAGE, initial_u64(PAGE) + 5),
        setup=mw_zero(_t, 8), rule='ok'))


def mr_at(at, iova):
    """Setup: a second MR from buffer offset at to the MR's end, at iova."""
    return lambda t: t.reg_mr_iova(at, 3 * PAGE - at, iova)


# Through an MR's own translation: an MR that starts 4 bytes into the
# buffer, accessed from iova 0x10004. The kernel refuses a user MR whose
# iova lies at another offset into its page than its address, so an MR
# alone cannot misalign an aligned address: here the packet's address is
# misaligned too, at the page boundary. An aligned one works.
ROWS.append(Row(
    'mr-iova-fetch-add', 'rc',
    lambda t: [fetch_add(t, 0x10000 + PAGE - 4, t.rkey2)],
    'FETCH_ADD at iova 0x10ffc of an MR at buffer+4, iova 0x10004',
    [INV], [(1, 'wr_flush_err'), (2, 'wr_flush_err')], 'ERR',
    check=mem_unchanged, setup=mr_at(4, 0x10004), rule='C'))
ROWS.append(Row(
    'mr-iova-aligned', 'rc',
    lambda t: [fetch_add(t, 0x10000 + PAGE, t.rkey2, 5)],
    'FETCH_ADD at iova 0x11000 of the same MR', ['atomic-ack'], [],
    check=atomic_landed(PAGE, initial_u64(PAGE) + 5),
    setup=mr_at(4, 0x10004), rule='ok'))

def run_row(args, peer, mem, row):
    mem.fill()
    t = Target(args, peer, row, mem)
    try:
        if row.setup:
            row.setup(t)
            mem.fill()      # the setup touched nothing, but be exact
        peer.drain()
        c0 = counters(args.dev)
        for p in row.sends(t):
            bad = False
            if isinstance(p, tuple):
                p, bad = p
            peer.send(p, bad_icrc=bad)
        want = len(row.resp)
        got = peer.receive(WAIT if want else WAIT / 2,
                           until=lambda g: len(g) >= want and want)
        wcs = t.poll(len(row.wcs), WAIT if row.wcs else 0.2)
        # Anything more that comes late is as wrong as anything else.
        wcs += t.poll(16, 0.1)
        state = t.state()
        c1 = counters(args.dev)
        problems = []
        kinds = [r.kind() for r in got]
        if kinds != row.resp:
            problems.append('answers %s, not %s' % (kinds, row.resp))
        have = [(w.wr_id, status_name(w.status)) for w in wcs]
        if have != row.wcs:
            problems.append('completions %s, not %s' % (have, row.wcs))
        if state != row.state:
            problems.append('state %s, not %s' % (state, row.state))
        for name, delta in row.counters.items():
            if c1.get(name, 0) - c0.get(name, 0) != delta:
                problems.append('%s grew by %d, not %d' %
                                (name, c1.get(name, 0) - c0.get(name, 0),
                                 delta))
        if row.check:
            msg = row.check(t)
            if msg:
                problems.append(msg)
        if row.followup and not problems:
            problems += followup(t, row)
        return problems
    finally:
        t.close()


def followup(t, row):
    """A valid SEND at the PSN the responder expects, after the row."""
    if row.transport in ('rc', 'xrc'):
        t.psn = RQ_PSN
    else:
        t.psn = (RQ_PSN + 100) & 0xffffff
    t.peer.drain()
    t.peer.send(t.send_only(32))
    t.peer.receive(WAIT if row.transport in ('rc', 'xrc') else 0.1,
                   until=lambda g: len(g) >= 1)
    wcs = t.poll(1, WAIT)
    have = [(w.wr_id, status_name(w.status)) for w in wcs]
    if have != [(row.followup, 'success')]:
        return ['follow-up SEND completed %s, not %s' %
                (have, [(row.followup, 'success')])]
    return []


BACKLOG_MAX = 1024          # the test sets sroce's "backlog" parameter
BACKLOG_SLACK = 8           # racing receivers may pass the bound by a few
BACKLOG_READ = 64 << 20
BACKLOG_FLOOD = 3000


def hold(dev, knob, on):
    """Set the device's debugfs knob resp_hold or ack_hold (fault.c)."""
    with open('/sys/kernel/debug/sroce/%s/%s' % (dev, knob), 'w') as f:
        f.write('Y' if on else 'N')


def backlog(args, peer, mem):
    """
    A QP's queue of requests waiting for its responder is bounded. The
    device's responders are held (the resp_hold knob, so that the result
    does not depend on the host's speed) while the peer sends a 64 MiB
    READ and floods 3000 SENDs: of the packets that reached the QP, at
    most BACKLOG_MAX (and a few) may wait; the others are dropped and
    counted in rx_drop_backlog. Released, the responder works through the
    queue: the READ response comes, and the QP is destroyed in the middle
    of it, its queue still full.
    """
    mem.fill()
    row = Row('backlog', 'rc', None, '', [])
    t = Target(args, peer, row, mem)
    big = MR(t.pd, BACKLOG_READ, REMOTE_ALL)
    problems = []
    try:
        read = read_req(t, big.buf, big.rkey, BACKLOG_READ).build()
        t.next_psn(BACKLOG_READ // MTU)
        flood = [t.send_only(16, psn=t.psn + i).build()
                 for i in range(BACKLOG_FLOOD)]
        c0 = counters(args.dev)
        hold(args.dev, 'resp_hold', True)
        try:
            for data in [read] + flood:
                peer.send(data)
            time.sleep(WAIT)
            c1 = counters(args.dev)
        finally:
            hold(args.dev, 'resp_hold', False)
        arrived = c1['rx_packets'] - c0['rx_packets']
        dropped = c1['rx_drop_backlog'] - c0['rx_drop_backlog']
        waiting = arrived - dropped
        if arrived < BACKLOG_MAX + BACKLOG_FLOOD // 4:
            problems.append('only %d of %d packets reached the QP: the '
                            'flood did not test the bound' %
                            (arrived, BACKLOG_FLOOD + 1))
        if not BACKLOG_MAX <= waiting <= BACKLOG_MAX + BACKLOG_SLACK:
            problems.append('%d packets waited (%d arrived, %d dropped in '
                            'rx_drop_backlog), not %d' %
                            (waiting, arrived, dropped, BACKLOG_MAX))
        held = peer.receive(0)
        if held:
            problems.append('the held responder answered: %s' %
                            [r.kind() for r in held][:4])
        # The next packet runs the responder again: the READ first.
        peer.send(t.send_only(16, psn=t.psn + BACKLOG_FLOOD))
        got = peer.receive(WAIT, until=lambda g: len(g) >= 1)
        if not got or got[0].kind() != 'read-resp':
            problems.append('no READ response after the release: %s' %
                            [r.kind() for r in got][:4])
        state = t.state()
        if state != 'RTS':
            problems.append('state %s, not RTS' % state)
        return problems, dropped
    finally:
        t.qp.close()
        big.close()
        t.close()


def read_abort(args, peer, mem):
    """
    Nothing executes after a request that failed (IBA 9.9.3), also when
    it fails part-way through a READ response: the peer sends a 64 MiB
    READ and, right behind it, a WRITE ONLY into the MR's first page;
    once the first READ responses come, the READ's MR is deregistered, so
    that the responder's next response packet fails (remote access NAK,
    QP to ERR). The WRITE must not land, nor be acknowledged. (The old
    responder went on, in the same run, to the request queued behind the
    READ, on a QP already in ERR.)
    """
    mem.fill()
    row = Row('read-abort', 'rc', None, '', [])
    t = Target(args, peer, row, mem)
    big = MR(t.pd, BACKLOG_READ, REMOTE_ALL)
    problems = []
    try:
        read = read_req(t, big.buf, big.rkey, BACKLOG_READ)
        t.next_psn(BACKLOG_READ // MTU)
        wpsn = t.psn
        peer.drain()
        peer.send(read)
        peer.send(write(t, P.WRITE_ONLY, t.base, t.mr.rkey, 64, 64))
        got = peer.receive(WAIT, until=lambda g: len(g) >= 4)
        if not any(r.kind() == 'read-resp' for r in got):
            return ['no READ response came: %s' % [r.kind() for r in got][:4]]
        c0 = counters(args.dev)
        big.close()
        big = None
        # The responses flood the peer's socket, which may drop the NAK:
        # the QP's state and the device's counter tell.
        end = time.monotonic() + WAIT
        while t.state() != 'ERR' and time.monotonic() < end:
            got += peer.receive(0.05)
        got += peer.receive(0.2)
        naks = [r.kind() for r in got if r.kind().startswith('nak')]
        if naks[:1] not in ([], ['nak-access']):
            problems.append('NAKs %s, not nak-access' % naks[:3])
        if counters(args.dev)['naks_sent'] == c0['naks_sent']:
            problems.append('no NAK sent for the READ that failed')
        if any(r.kind() == 'ack' and r.psn == wpsn for r in got):
            problems.append('the WRITE behind the READ was acknowledged')
        changed = mem.unchanged()
        if changed:
            problems.append('the WRITE behind the READ landed: %s' % changed)
        if t.state() != 'ERR':
            problems.append('state %s, not ERR' % t.state())
        return problems
    finally:
        t.qp.close()
        if big:
            big.close()
        t.close()


SQ_PSN = 0x200              # the first PSN a target QP sends


def aeth_packet(t, psn, syndrome, msn):
    """An ACKNOWLEDGE (ACK, RNR NAK or NAK) to the target's requester."""
    return t.packet(P.ACK, ext=struct.pack('!I', syndrome << 24 | msn),
                    psn=psn, ackreq=False)


def post_send(t, wr_id):
    t.qp.post_send(SendWR(wr_id=wr_id, opcode=e.IBV_WR_SEND, num_sge=1,
                          sg=[SGE(t.base, 64, t.mr.lkey)],
                          send_flags=e.IBV_SEND_SIGNALED))


def send_wcs(t, timeout):
    """
    The first completions of work requests with wr_id above 100 (the
    send queue's here; the receive WQEs' flushes when the QP fails are
    skipped) within timeout seconds: [(wr_id - 100, status name)].
    """
    out = []
    end = time.monotonic() + timeout
    while not out and time.monotonic() < end:
        out = [(w.wr_id - 100, status_name(w.status))
               for w in t.poll(1, end - time.monotonic())
               if w.wr_id > 100]
    return out


def read_nak_one(args, peer, t, syndrome, stale):
    """
    rdma_rxe's way of failing a READ part-way: a READ of three packets is
    answered with FIRST and MIDDLE, then a remote access NAK at the READ
    request's own PSN, before what those responses acknowledged. It is
    no stale NAK: the READ must complete rem_access_err at once (not
    after the transport timer's retries) and the QP be in ERR.
    """
    peer.drain()
    wr = SendWR(wr_id=103, opcode=e.IBV_WR_RDMA_READ, num_sge=1,
                sg=[SGE(t.base, 3 * MTU, t.mr.lkey)],
                send_flags=e.IBV_SEND_SIGNALED)
    wr.set_wr_rdma(0x1234, 0x10000)
    t.qp.post_send(wr)
    got = peer.receive(WAIT, until=lambda g: any(
        r.psn == SQ_PSN for r in g))
    if not any(r.psn == SQ_PSN for r in got):
        return ['the READ request never reached the peer']
    peer.send(t.packet(P.READ_RESP_FIRST, ext=struct.pack('!I', 0),
                       payload=pattern(MTU, 1), psn=SQ_PSN, ackreq=False))
    peer.send(t.packet(P.READ_RESP_MIDDLE, payload=pattern(MTU, 2),
                       psn=SQ_PSN + 1, ackreq=False))
    peer.send(aeth_packet(t, SQ_PSN, syndrome, 1))
    wcs = send_wcs(t, WAIT)
    if wcs != [(3, 'rem_access_err')] or t.state() != 'ERR':
        return ['the READ: completions %s, state %s' % (wcs, t.state())]
    return []


def stale_one(args, peer, t, syndrome, stale):
    """
    SEND 1 is sent and ACKed; SEND 2 is sent, then the peer answers with
    syndrome at SEND 1's PSN (stale: older than what it acknowledged) or
    at SEND 2's (not stale: the control). A stale one must change
    nothing (no completion, no NAK counted, SEND 2 completes once ACKed);
    the control must fail SEND 2 with its status.
    """
    problems = []
    peer.drain()
    for wr_id in (1, 2):
        psn = SQ_PSN + wr_id - 1
        post_send(t, 100 + wr_id)
        got = peer.receive(WAIT, until=lambda g, p=psn: any(
            r.psn == p for r in g))
        if not any(r.psn == psn for r in got):
            return ['SEND %d never reached the peer' % wr_id]
        if wr_id == 1:
            peer.send(aeth_packet(t, psn, P.AETH_ACK, 1))
            wcs = send_wcs(t, WAIT)
            if wcs != [(1, 'success')]:
                return ['SEND 1 ACKed: completions %s' % wcs]
    c0 = counters(args.dev)
    peer.send(aeth_packet(t, SQ_PSN if stale else SQ_PSN + 1, syndrome, 1))
    wcs = send_wcs(t, 3 * WAIT / 4)
    c1 = counters(args.dev)
    if not stale:
        if wcs != [(2, 'rem_inv_req_err')] or t.state() != 'ERR':
            problems.append('a NAK of SEND 2: completions %s, state %s' %
                            (wcs, t.state()))
        return problems
    if wcs:
        problems.append('the stale answer completed %s' % wcs)
    for c in ('seq_naks_rcvd', 'rnr_naks_rcvd'):
        if c1[c] != c0[c]:
            problems.append('the stale answer was counted in %s' % c)
    peer.send(aeth_packet(t, SQ_PSN + 1, P.AETH_ACK, 2))
    if not wcs:
        wcs = send_wcs(t, WAIT)
        if wcs != [(2, 'success')]:
            problems.append('SEND 2 ACKed: completions %s' % wcs)
    if t.state() != 'RTS':
        problems.append('state %s, not RTS' % t.state())
    return problems


def psn_window(args, peer, mem):
    """
    A requester keeps its outstanding PSNs within 2^23 - 1 (IBA 9.7.1):
    a READ of 2 GiB at a 256-byte path MTU would take 2^23 of them, and
    its responses' PSNs could not be told from old ones. It must
    complete with IBV_WC_LOC_LEN_ERR at once, and its request must never
    reach the peer (the old requester sent it).
    """
    row = Row('psn-window', 'rc', None, '', [], path_mtu=e.IBV_MTU_256)
    t = Target(args, peer, row, mem)
    problems = []
    try:
        peer.drain()
        wr = SendWR(wr_id=101, opcode=e.IBV_WR_RDMA_READ, num_sge=1,
                    sg=[SGE(t.base, 1 << 31, t.mr.lkey)],
                    send_flags=e.IBV_SEND_SIGNALED)
        wr.set_wr_rdma(0x1234, 0x10000)
        t.qp.post_send(wr)
        wcs = send_wcs(t, WAIT)
        if wcs != [(1, 'loc_len_err')]:
            problems.append('the 2 GiB READ: completions %s' % wcs)
        reads = [r for r in peer.receive(0.5)
                 if r.opcode & 0x1f == P.READ_REQ]
        if reads:
            problems.append('%d READ requests reached the peer' % len(reads))
        return problems
    finally:
        t.close()


def stale_nak(args, peer, mem):
    """
    The requester drops a NAK or RNR NAK older than what it had
    acknowledged: a duplicated or late one asks for nothing (IBA
    9.7.5.2.2); but not one inside a READ whose responses came part-way
    (read_nak_one()). The old code resent for a stale sequence NAK, waited
    for a stale RNR NAK and failed the next SEND with a stale invalid
    request NAK's status. One line per case; returns the mismatches.
    """
    cases = (('nak-inv-req', stale_one, P.AETH_NAK | P.NAK_INV_REQ, True),
             ('nak-seq', stale_one, P.AETH_NAK | P.NAK_SEQ, True),
             ('rnr-nak', stale_one, P.AETH_RNR | 1, True),
             ('control: nak-inv-req of SEND 2', stale_one,
              P.AETH_NAK | P.NAK_INV_REQ, False),
             ('nak-access mid-READ (rdma_rxe)', read_nak_one,
              P.AETH_NAK | P.NAK_ACCESS, False))
    bad = 0
    for name, run, syndrome, stale in cases:
        bad += run_case('stale %-30s' % name, args, peer, mem, 'stale',
                        lambda t: run(args, peer, t, syndrome, stale))
    return bad


def run_case(label, args, peer, mem, name, fn, **row):
    """
    One case on an RC target made afresh (Row keywords in row): fn(t)
    returns its problems. Prints label and ok or MISMATCH; returns 1 if
    the case went otherwise (or could not run), else 0.
    """
    mem.fill()
    try:
        t = Target(args, peer, Row(name, 'rc', None, '', [], **row), mem)
        try:
            problems = fn(t)
        finally:
            t.close()
    except Exception as ex:             # a case that cannot run fails
        problems = ['%s: %s' % (type(ex).__name__, ex)]
    print('%s %s' % (label, 'ok' if not problems else
                     'MISMATCH: ' + '; '.join(problems)), flush=True)
    return 1 if problems else 0


def held_ack_one(args, peer, t, end):
    """
    The peer's SEND completes at the target while the device's responders
    keep their ACKs (the ack_hold knob: what an inline run does until its
    tasklet comes, made to last), then the user ends the QP: the ACK must
    go out then, exactly one for the SEND's PSN. The old code dropped it,
    and ibv_rc_pingpong's server, whose last SEND it was, failed with a
    retry error once the client had destroyed its QP.
    """
    peer.drain()
    psn = t.psn
    hold(args.dev, 'ack_hold', True)
    try:
        peer.send(t.send_only(64))
        wcs = [(w.wr_id, status_name(w.status)) for w in t.poll(1, 5 * WAIT)]
        if wcs != [(1, 'success')]:
            return ['the SEND: receive completions %s' % wcs]
        early = peer.receive(WAIT)
        if early:
            return ['the ACK was not held: %s' % early]
        if end == 'destroy':
            t.qp.close()
            t.qp = None
        else:
            t.qp.modify(QPAttr(qp_state=e.IBV_QPS_ERR if end == 'error'
                               else e.IBV_QPS_RESET), e.IBV_QP_STATE)
        got = peer.receive(WAIT, until=lambda g: len(g) >= 1)
        got += peer.receive(WAIT / 4)
    finally:
        hold(args.dev, 'ack_hold', False)
    seen = [(r.kind(), r.psn, r.msn, r.qpn) for r in got]
    if seen != [('ack', psn, 1, PEER_QPN)]:
        return ['after the %s: %s, not one ACK of PSN %#x, MSN 1, to QP %#x'
                % (end, seen, psn, PEER_QPN)]
    return []


def cq_full(peer, t):
    """
    SENDs into a receive CQ that is never polled: each is acknowledged
    until the one whose completion finds the CQ full, which fails the QP
    and must not be: its message never reached the user. (Before the
    error state sent a held ACK, nothing was; the check keeps it so.)
    """
    problems = []
    room = t.cq.cqe
    if room > 8:
        return ['a CQ of %d entries asked for one' % room]
    for i in range(room):
        t.qp.post_recv(RecvWR(wr_id=10 + i, num_sge=1,
                              sg=[SGE(t.recv_buf(0), 64, t.mr.lkey)]))
    for i in range(room + 1):
        peer.drain()
        psn = t.psn
        peer.send(t.send_only(16))
        t.next_psn()
        got = peer.receive(WAIT, until=lambda g: len(g) >= 1)
        got += peer.receive(WAIT / 4)
        seen = [(r.kind(), r.psn) for r in got]
        if i < room and seen != [('ack', psn)]:
            problems.append('SEND %d of %d: %s, not its ACK' %
                            (i + 1, room, seen))
        elif i == room and seen:
            problems.append('the SEND that overflowed the CQ was '
                            'answered: %s' % seen)
    state = t.state()
    if state != 'ERR':
        problems.append('state %s after %d SENDs into a CQ of %d, not '
                        'ERR' % (state, room + 1, room))
    return problems


def held_ack(args, peer, mem):
    """
    An ACK the responder held is sent when the QP ends: destroyed, moved
    to the error state, reset; but none for a SEND whose completion
    overflowed the CQ. One line per case; returns the mismatches.
    """
    bad = run_case('held ACK, CQ full   ', args, peer, mem, 'cq-full',
                   lambda t: cq_full(peer, t), recvs=(64,), cqe=1)
    for end in ('destroy', 'error', 'reset'):
        bad += run_case('held ACK, then %-8s' % end, args, peer, mem, 'held',
                        lambda t: held_ack_one(args, peer, t, end))
    return bad


def markdown():
    out = ['| row | transport | the peer sends | answer | receive '
           'completions | QP after | counted in | IBA class |',
           '|---|---|---|---|---|---|---|---|']
    for r in ROWS:
        tr = r.transport.upper() + (' + SRQ' if r.srq and
                                     r.transport != 'xrc' else '')
        wcs = ', '.join('%d: %s' % w for w in r.wcs) or 'none'
        kept = {1: '; WQE kept', 2: '; WQE used up'}.get(r.followup, '')
        cnt = ', '.join('%s +%d' % kv for kv in r.counters.items()) or '-'
        out.append('| %s | %s | %s | %s | %s%s | %s | %s | %s |' % (
            r.name, tr, r.what, ', '.join(r.resp) or 'none', wcs, kept,
            r.state, cnt, r.rule))
    return '\n'.join(out)


def main():
    p = argparse.ArgumentParser()
    p.add_argument('--dev')
    p.add_argument('--gid-index', type=int)
    p.add_argument('--ip')
    p.add_argument('--peer-ip')
    p.add_argument('--netns')
    p.add_argument('--ifname')
    p.add_argument('--dmac')
    p.add_argument('--only', action='append', default=[])
    p.add_argument('--markdown', action='store_true')
    p.add_argument('--backlog', action='store_true')
    p.add_argument('--stale-nak', action='store_true')
    p.add_argument('--held-ack', action='store_true')
    p.add_argument('--read-abort', action='store_true')
    p.add_argument('--psn-window', action='store_true')
    args = p.parse_args()
    if args.markdown:
        print(markdown())
        return 0
    peer = P.Peer(args.ifname, args.dmac, netns=args.netns)
    mem = Memory()
    if args.backlog:
        problems, dropped = backlog(args, peer, mem)
        print('backlog: %d SENDs dropped of %d: %s' % (
            dropped, BACKLOG_FLOOD, '; '.join(problems) or 'ok'))
        return 1 if problems else 0
    if args.psn_window:
        problems = psn_window(args, peer, mem)
        print('PSN window: %s' % ('; '.join(problems) or 'ok'))
        return 1 if problems else 0
    if args.read_abort:
        problems = read_abort(args, peer, mem)
        print('read abort: %s' % ('; '.join(problems) or 'ok'))
        return 1 if problems else 0
    if args.held_ack:
        bad = held_ack(args, peer, mem)
        print('held ACKs: %d mismatches' % bad)
        return 1 if bad else 0
    if args.stale_nak:
        bad = stale_nak(args, peer, mem)
        print('stale answers: %d mismatches' % bad)
        return 1 if bad else 0
    rows = [r for r in ROWS if not args.only or r.name in args.only]
    bad = 0
    for row in rows:
        try:
            problems = run_row(args, peer, mem, row)
        except Exception as ex:         # a row that cannot run fails
            problems = ['%s: %s' % (type(ex).__name__, ex)]
        bad += bool(problems)
        print('%-28s %s' % (row.name, 'ok' if not problems else
                            'MISMATCH: ' + '; '.join(problems)), flush=True)
    print('%d rows, %d mismatches' % (len(rows), bad))
    return 1 if bad else 0


if __name__ == '__main__':
    sys.exit(main())
