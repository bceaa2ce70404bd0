#!/usr/bin/python3
# SPDX-License-Identifier: GPL-2.0
"""
tests/lib-resperr-cases.py: the responder cases of lib-resperr.py that
are more than one request and its answer (its --backlog, --read-abort,
--psn-window, --stale-nak and --held-ack): a flood of a held responder,
a READ the requester abandons, the PSN window's edges, stale NAKs and
RNR NAKs to a target's requester, and an ACK held while its QP ends. A
module, not a script: each function returns what went wrong.
"""
import importlib
import struct
import time

import pyverbs.enums as e
from pyverbs.mr import MR
from pyverbs.qp import QPAttr
from pyverbs.wr import RecvWR, SendWR, SGE

T = importlib.import_module('lib-target')
P = T.P


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
    row = T.Row('backlog', 'rc', None, '', [])
    t = T.Target(args, peer, row, mem)
    big = MR(t.pd, BACKLOG_READ, T.REMOTE_ALL)
    problems = []
    try:
        read = T.read_req(t, big.buf, big.rkey, BACKLOG_READ).build()
        t.next_psn(BACKLOG_READ // T.MTU)
        flood = [t.send_only(16, psn=t.psn + i).build()
                 for i in range(BACKLOG_FLOOD)]
        c0 = T.counters(args.dev)
        hold(args.dev, 'resp_hold', True)
        try:
            for data in [read] + flood:
                peer.send(data)
            time.sleep(T.WAIT)
            c1 = T.counters(args.dev)
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
        got = peer.receive(T.WAIT, until=lambda g: len(g) >= 1)
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
    row = T.Row('read-abort', 'rc', None, '', [])
    t = T.Target(args, peer, row, mem)
    big = MR(t.pd, BACKLOG_READ, T.REMOTE_ALL)
    problems = []
    try:
        read = T.read_req(t, big.buf, big.rkey, BACKLOG_READ)
        t.next_psn(BACKLOG_READ // T.MTU)
        wpsn = t.psn
        peer.drain()
        peer.send(read)
        peer.send(T.write(t, P.WRITE_ONLY, t.base, t.mr.rkey, 64, 64))
        got = peer.receive(T.WAIT, until=lambda g: len(g) >= 4)
        if not any(r.kind() == 'read-resp' for r in got):
            return ['no READ response came: %s' % [r.kind() for r in got][:4]]
        c0 = T.counters(args.dev)
        big.close()
        big = None
        # The responses flood the peer's socket, which may drop the NAK:
        # the QP's state and the device's counter tell.
        end = time.monotonic() + T.WAIT
        while t.state() != 'ERR' and time.monotonic() < end:
            got += peer.receive(0.05)
        got += peer.receive(0.2)
        naks = [r.kind() for r in got if r.kind().startswith('nak')]
        if naks[:1] not in ([], ['nak-access']):
            problems.append('NAKs %s, not nak-access' % naks[:3])
        if T.counters(args.dev)['naks_sent'] == c0['naks_sent']:
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
                sg=[SGE(t.base, 3 * T.MTU, t.mr.lkey)],
                send_flags=e.IBV_SEND_SIGNALED)
    wr.set_wr_rdma(0x1234, 0x10000)
    t.qp.post_send(wr)
    got = peer.receive(T.WAIT, until=lambda g: any(
        r.psn == T.SQ_PSN for r in g))
    if not any(r.psn == T.SQ_PSN for r in got):
        return ['the READ request never reached the peer']
    peer.send(t.packet(P.READ_RESP_FIRST, ext=struct.pack('!I', 0),
                       payload=T.pattern(T.MTU, 1), psn=T.SQ_PSN,
                       ackreq=False))
    peer.send(t.packet(P.READ_RESP_MIDDLE, payload=T.pattern(T.MTU, 2),
                       psn=T.SQ_PSN + 1, ackreq=False))
    peer.send(T.aeth_packet(t, T.SQ_PSN, syndrome, 1))
    wcs = T.send_wcs(t, T.WAIT)
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
        psn = T.SQ_PSN + wr_id - 1
        T.post_send(t, 100 + wr_id)
        got = peer.receive(T.WAIT, until=lambda g, p=psn: any(
            r.psn == p for r in g))
        if not any(r.psn == psn for r in got):
            return ['SEND %d never reached the peer' % wr_id]
        if wr_id == 1:
            peer.send(T.aeth_packet(t, psn, P.AETH_ACK, 1))
            wcs = T.send_wcs(t, T.WAIT)
            if wcs != [(1, 'success')]:
                return ['SEND 1 ACKed: completions %s' % wcs]
    c0 = T.counters(args.dev)
    psn = T.SQ_PSN if stale else T.SQ_PSN + 1
    peer.send(T.aeth_packet(t, psn, syndrome, 1))
    wcs = T.send_wcs(t, 3 * T.WAIT / 4)
    c1 = T.counters(args.dev)
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
    peer.send(T.aeth_packet(t, T.SQ_PSN + 1, P.AETH_ACK, 2))
    if not wcs:
        wcs = T.send_wcs(t, T.WAIT)
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
    row = T.Row('psn-window', 'rc', None, '', [], path_mtu=e.IBV_MTU_256)
    t = T.Target(args, peer, row, mem)
    problems = []
    try:
        peer.drain()
        wr = SendWR(wr_id=101, opcode=e.IBV_WR_RDMA_READ, num_sge=1,
                    sg=[SGE(t.base, 1 << 31, t.mr.lkey)],
                    send_flags=e.IBV_SEND_SIGNALED)
        wr.set_wr_rdma(0x1234, 0x10000)
        t.qp.post_send(wr)
        wcs = T.send_wcs(t, T.WAIT)
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
        t = T.Target(args, peer, T.Row(name, 'rc', None, '', [], **row), mem)
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
        wcs = [(w.wr_id, T.status_name(w.status))
               for w in t.poll(1, 5 * T.WAIT)]
        if wcs != [(1, 'success')]:
            return ['the SEND: receive completions %s' % wcs]
        early = peer.receive(T.WAIT)
        if early:
            return ['the ACK was not held: %s' % early]
        if end == 'destroy':
            t.qp.close()
            t.qp = None
        else:
            t.qp.modify(QPAttr(qp_state=e.IBV_QPS_ERR if end == 'error'
                               else e.IBV_QPS_RESET), e.IBV_QP_STATE)
        got = peer.receive(T.WAIT, until=lambda g: len(g) >= 1)
        got += peer.receive(T.WAIT / 4)
    finally:
        hold(args.dev, 'ack_hold', False)
    seen = [(r.kind(), r.psn, r.msn, r.qpn) for r in got]
    if seen != [('ack', psn, 1, T.PEER_QPN)]:
        return ['after the %s: %s, not one ACK of PSN %#x, MSN 1, to QP %#x'
                % (end, seen, psn, T.PEER_QPN)]
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
        got = peer.receive(T.WAIT, until=lambda g: len(g) >= 1)
        got += peer.receive(T.WAIT / 4)
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
