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

--backlog floods a held responder (backlog()); --stale-nak turns to the
requester: a target QP's SENDs are answered by the peer with NAKs and RNR
NAKs older than what it acknowledged, which must change nothing
(stale_nak()); --held-ack ends a QP (destroy, error, reset) while its
responder holds an ACK, which must go out (held_ack()). Those three are in
lib-resperr-cases.py, with --read-abort and --psn-window; the QP under
test is lib-target.py's Target.
"""
import argparse
import importlib
import ipaddress
import sys

import pyverbs.enums as e

# tests/ is on sys.path (this script's folder): its lib-*.py by name.
T = importlib.import_module('lib-target')
C = importlib.import_module('lib-resperr-cases')
P = T.P
# What the table names on nearly every line.
Row, PAGE, MTU, BAD_KEY = T.Row, T.PAGE, T.MTU, T.BAD_KEY
pattern, read_req, write = T.pattern, T.read_req, T.write


# --- the table -----------------------------------------------------------
#
# Packet builders (lib-target.py) take the target t.

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
REMOTE_NO_WRITE = T.REMOTE_ALL & ~e.IBV_ACCESS_REMOTE_WRITE
REMOTE_NO_READ = T.REMOTE_ALL & ~e.IBV_ACCESS_REMOTE_READ
REMOTE_NO_ATOMIC = T.REMOTE_ALL & ~e.IBV_ACCESS_REMOTE_ATOMIC

ROWS = [
    # RC: each error is a NAK and the QP's end (IBA 9.9.3: classes B, C).
    Row('rc-send', 'rc', lambda t: [t.send_only()], 'valid SEND ONLY',
        ['ack'], [(1, 'success')], rule='ok'),
    Row('rc-psn-ahead', 'rc', lambda t: [t.send_only(psn=T.RQ_PSN + 5)],
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
        lambda t: T.first_mtu(t) + [t.packet(P.SEND_FIRST, psn=T.RQ_PSN + 1,
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
    Row('rc-atomic', 'rc',
        lambda t: [T.fetch_add(t, t.base + 8, t.mr.rkey, 3)],
        'FETCH_ADD, aligned', ['atomic-ack'], [],
        check=atomic_landed(8, initial_u64(8) + 3), rule='ok'),
    Row('rc-atomic-misaligned', 'rc',
        lambda t: [T.fetch_add(t, t.base + 4, t.mr.rkey)],
        'FETCH_ADD to a misaligned address', [INV],
        [(1, 'wr_flush_err'), (2, 'wr_flush_err')], 'ERR',
        check=mem_unchanged, rule='C'),
    Row('rc-atomic-past-mr', 'rc',
        lambda t: [T.fetch_add(t, t.base + 3 * PAGE, t.mr.rkey)],
        'FETCH_ADD to the canary page after the MR', [ACC],
        [(1, 'wr_flush_err'), (2, 'wr_flush_err')], 'ERR',
        check=mem_unchanged, rule='C'),
    Row('rc-atomic-bad-rkey', 'rc',
        lambda t: [T.fetch_add(t, t.base + 8, BAD_KEY)],
        'FETCH_ADD with an unknown rkey', [ACC],
        [(1, 'wr_flush_err'), (2, 'wr_flush_err')], 'ERR',
        check=mem_unchanged, rule='C'),
    Row('rc-atomic-qp-access', 'rc',
        lambda t: [T.cmp_swap(t, t.base + 8, t.mr.rkey)],
        'CMP_SWAP to a QP without remote atomic', [INV],
        [(1, 'wr_flush_err'), (2, 'wr_flush_err')], 'ERR',
        qp_access=REMOTE_NO_ATOMIC, check=mem_unchanged, rule='C'),
    Row('rc-atomic-mr-access', 'rc',
        lambda t: [T.cmp_swap(t, t.base + 8, t.mr.rkey)],
        'CMP_SWAP to an MR without remote atomic', [ACC],
        [(1, 'wr_flush_err'), (2, 'wr_flush_err')], 'ERR',
        mr_access=REMOTE_NO_ATOMIC, check=mem_unchanged, rule='C'),
    Row('rc-atomic-write-misaligned', 'rc',
        lambda t: [T.atomic_write(t, t.base + 4, t.mr.rkey)],
        'ATOMIC WRITE to a misaligned address', [INV],
        [(1, 'wr_flush_err'), (2, 'wr_flush_err')], 'ERR',
        check=mem_unchanged, rule='C'),
    Row('rc-atomic-write-past-mr', 'rc',
        lambda t: [T.atomic_write(t, t.base + 3 * PAGE, t.mr.rkey)],
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
                                                    t.qp.qp_num, T.RQ_PSN) +
                            pattern(64, 1))],
        'a UC SEND ONLY to an RC QP', [], [],
        counters={'rx_drop_qp_state': 1},
        followup=1, rule='drop'),
    Row('rc-spoofed-source', 'rc',
        lambda t: [t.send_only(src=T.SPOOF_IP[ipaddress.ip_address(
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
        lambda t: T.first_mtu(t) + [t.packet(P.SEND_LAST, psn=T.RQ_PSN + 2,
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
                            P.deth(T.QKEY + 1, T.PEER_QPN) + pattern(64, 1))],
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
                                                    t.qp.qp_num, T.RQ_PSN) +
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
        lambda t: [T.fetch_add(t, t.base + 4, t.mr.rkey)],
        'FETCH_ADD to a misaligned address', [INV], [], 'ERR',
        check=mem_unchanged, rule='C'),
]

# Atomics where the address the packet carries is aligned but the memory
# it comes to is not: a zero-based window bound 4 bytes into the MR, the
# operation at window offset 4088 = buffer offset 4092, 4 bytes before a
# page boundary. Each must be refused with nothing written, through either
# window type; an aligned one through the same window works.
for _tn, _t in (('t1', T1), ('t2', T2)):
    for _on, _op in (('fetch-add', T.fetch_add), ('cmp-swap', T.cmp_swap),
                     ('atomic-write', T.atomic_write)):
        ROWS.append(Row(
            'mw-%s-zb-%s' % (_tn, _on), 'rc',
            (lambda op: lambda t: [op(t, PAGE - 8, t.rkey2)])(_op),
            '%s at zero-based %s window offset 4088, window at MR+4' %
            (_on.upper().replace('-', '_'), _tn.upper()), [INV],
            [(1, 'wr_flush_err'), (2, 'wr_flush_err')], 'ERR',
            check=mem_unchanged, setup=mw_zero(_t, 4), rule='C'))
    ROWS.append(Row(
        'mw-%s-abs-fetch-add' % _tn, 'rc',
        lambda t: [T.fetch_add(t, t.base + PAGE - 4, t.rkey2)],
        'FETCH_ADD at the same spot through a %s window not zero-based' %
        _tn.upper(), [INV], [(1, 'wr_flush_err'), (2, 'wr_flush_err')],
        'ERR', check=mem_unchanged, setup=mw_abs(_t, 4), rule='C'))
    ROWS.append(Row(
        'mw-%s-zb-aligned' % _tn, 'rc',
        lambda t: [T.fetch_add(t, PAGE - 8, t.rkey2, 5)],
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
    lambda t: [T.fetch_add(t, 0x10000 + PAGE - 4, t.rkey2)],
    'FETCH_ADD at iova 0x10ffc of an MR at buffer+4, iova 0x10004',
    [INV], [(1, 'wr_flush_err'), (2, 'wr_flush_err')], 'ERR',
    check=mem_unchanged, setup=mr_at(4, 0x10004), rule='C'))
ROWS.append(Row(
    'mr-iova-aligned', 'rc',
    lambda t: [T.fetch_add(t, 0x10000 + PAGE, t.rkey2, 5)],
    'FETCH_ADD at iova 0x11000 of the same MR', ['atomic-ack'], [],
    check=atomic_landed(PAGE, initial_u64(PAGE) + 5),
    setup=mr_at(4, 0x10004), rule='ok'))

def run_row(args, peer, mem, row):
    mem.fill()
    t = T.Target(args, peer, row, mem)
    try:
        if row.setup:
            row.setup(t)
            mem.fill()      # the setup touched nothing, but be exact
        peer.drain()
        c0 = T.counters(args.dev)
        for p in row.sends(t):
            bad = False
            if isinstance(p, tuple):
                p, bad = p
            peer.send(p, bad_icrc=bad)
        want = len(row.resp)
        got = peer.receive(T.WAIT if want else T.WAIT / 2,
                           until=lambda g: len(g) >= want and want)
        wcs = t.poll(len(row.wcs), T.WAIT if row.wcs else 0.2)
        # Anything more that comes late is as wrong as anything else.
        wcs += t.poll(16, 0.1)
        state = t.state()
        c1 = T.counters(args.dev)
        problems = []
        kinds = [r.kind() for r in got]
        if kinds != row.resp:
            problems.append('answers %s, not %s' % (kinds, row.resp))
        have = [(w.wr_id, T.status_name(w.status)) for w in wcs]
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
        t.psn = T.RQ_PSN
    else:
        t.psn = (T.RQ_PSN + 100) & 0xffffff
    t.peer.drain()
    t.peer.send(t.send_only(32))
    t.peer.receive(T.WAIT if row.transport in ('rc', 'xrc') else 0.1,
                   until=lambda g: len(g) >= 1)
    wcs = t.poll(1, T.WAIT)
    have = [(w.wr_id, T.status_name(w.status)) for w in wcs]
    if have != [(row.followup, 'success')]:
        return ['follow-up SEND completed %s, not %s' %
                (have, [(row.followup, 'success')])]
    return []


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
    mem = T.Memory()
    if args.backlog:
        problems, dropped = C.backlog(args, peer, mem)
        print('backlog: %d SENDs dropped of %d: %s' % (
            dropped, C.BACKLOG_FLOOD, '; '.join(problems) or 'ok'))
        return 1 if problems else 0
    if args.psn_window:
        problems = C.psn_window(args, peer, mem)
        print('PSN window: %s' % ('; '.join(problems) or 'ok'))
        return 1 if problems else 0
    if args.read_abort:
        problems = C.read_abort(args, peer, mem)
        print('read abort: %s' % ('; '.join(problems) or 'ok'))
        return 1 if problems else 0
    if args.held_ack:
        bad = C.held_ack(args, peer, mem)
        print('held ACKs: %d mismatches' % bad)
        return 1 if bad else 0
    if args.stale_nak:
        bad = C.stale_nak(args, peer, mem)
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
