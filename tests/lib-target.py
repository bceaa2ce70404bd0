#!/usr/bin/python3
# SPDX-License-Identifier: GPL-2.0
"""
tests/lib-target.py: a sroce QP under test and the memory it exposes, for
the scripts that play a hostile peer against it with lib-peer.py
(lib-resperr.py and lib-resperr-cases.py: the responder; lib-liar.py: the
requester).

Target makes, on a device, a fresh PD, CQ and QP (and SRQ, XRC domain, MW
as a Row asks) on a buffer of four pages of which the first three are the
MR and the fourth a canary in no MR, its path pointing at the peer; it
builds the peer's packets to it (packet() and the builders below), polls
its completions and reports its state. Memory is that buffer. Row is one
row of lib-resperr.py's table. A module, not a script.
"""
import ctypes
import importlib
import ipaddress
import mmap
import os
import stat
import struct
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


# The scripts that import this module run from tests/, which is therefore
# on sys.path (a script's folder is): its lib-*.py are imported by name.
P = importlib.import_module('lib-peer')

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
