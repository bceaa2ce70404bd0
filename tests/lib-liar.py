#!/usr/bin/python3
# SPDX-License-Identifier: GPL-2.0
"""
tests/lib-liar.py: a lying peer, for tests/75-lying-peer.sh.

    lib-liar.py --dev DEV --gid-index N --ip IP --peer-ip IP --netns NS
                --ifname IF --dmac MAC [--read-flight N]
                [--ipv6 IP PEER_IP GID_INDEX] [--only CASE]...

A real RC QP on DEV (made by pyverbs through libsroce: a user QP, whose
requests of 1 KiB and more send the MR's pages without a copy) is
connected to tests/lib-peer.py's fake peer in network namespace NS,
which answers it with protocol-valid lies. One line per case, "CASE ok"
or "CASE MISMATCH: reasons", then "N cases, N mismatches"; exits 1 on a
mismatch. The cases (each on a fresh QP; their docstrings say more):

  zcopy-linger    NAK, then ACK of everything, while the resends wait in
                  a netem qdisc: no byte written after the completion
                  may reach the peer
  ack-ahead       an ACK of a message's tail before it was sent: dropped
  dup-stale-ack   the same ACK again and an older one: nothing happens
  silence         no answer: IBV_WC_RETRY_EXC_ERR in bounded time
  trickle-read    READ responses one a little before each timeout: the
                  READ completes, and counts one packet in the flight
  read-implied-nak  an ACK past a READ whose responses stopped: the READ
                  asks again for the rest, and completes
  late-engine     every READ response queued, and the transport timer
                  expired, before the send engine runs (req_hold): the
                  responses are progress, no resend, no timeout counted

With --ipv6, zcopy-linger runs again (zcopy-linger-ipv6) between these
IPv6 addresses: the ICRC covers another header.

The verbs objects and packet helpers are lib-target.py's (Target, Row).
"""
import argparse
import ctypes
import importlib
import os
import select
import socket
import struct
import subprocess
import sys
import time

import pyverbs.enums as e
from pyverbs.mr import MR
from pyverbs.wr import SendWR, SGE


# tests/ is on sys.path (this script's folder): its lib-*.py by name.
R = importlib.import_module('lib-target')
P = R.P
MTU = R.MTU
PSN0 = R.SQ_PSN                     # the first PSN a target QP sends
ETH_P_ALL = 0x0003


def capture(netns, ifname):
    """An AF_PACKET socket on ifname in netns: IP packets as received."""
    back = os.open('/proc/self/ns/net', os.O_RDONLY)
    try:
        P._libc_setns('/run/netns/' + netns)
        s = socket.socket(socket.AF_PACKET, socket.SOCK_DGRAM,
                          socket.htons(ETH_P_ALL))
        s.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, 1 << 22)
        s.bind((ifname, 0))
    finally:
        libc = ctypes.CDLL(None, use_errno=True)
        if libc.setns(back, P.CLONE_NEWNET):
            raise OSError(ctypes.get_errno(), 'setns back')
        os.close(back)
    return s


class Frame:
    """A RoCEv2 request the QP sent, as captured: its ICRC checked."""

    def __init__(self, ip):
        self.ip = ip
        ihl = (ip[0] & 0xf) * 4 if ip[0] >> 4 == 4 else 40
        bth = ip[ihl + 8:]
        self.opcode = bth[0]
        self.pad = (bth[1] >> 4) & 3
        self.psn = int.from_bytes(bth[9:12], 'big')
        self.ackreq = bool(bth[8] & 0x80)
        op = self.opcode & 0x1f
        hdr = 12 + (16 if op in (P.WRITE_FIRST, P.WRITE_ONLY,
                                 P.WRITE_ONLY_IMM, P.READ_REQ) else 0)
        body = bth[hdr:-4]
        self.payload = body[:len(body) - self.pad]
        self.icrc_ok = P.icrc(ip) == int.from_bytes(ip[-4:], 'little')


def frames(sock, timeout):
    """RoCEv2 frames captured within timeout seconds (UDP port 4791)."""
    out = []
    end = time.monotonic() + timeout
    while True:
        left = end - time.monotonic()
        if left <= 0 or not select.select([sock], [], [], left)[0]:
            return out
        ip = sock.recv(65536)
        v = ip[0] >> 4
        ihl = (ip[0] & 0xf) * 4 if v == 4 else 40
        proto = ip[9] if v == 4 else ip[6]
        if proto == socket.IPPROTO_UDP and len(ip) > ihl + 24 and \
                int.from_bytes(ip[ihl + 2:ihl + 4], 'big') == P.ROCE_PORT:
            out.append(Frame(ip))


def ack(t, psn, msn=1):
    return R.aeth_packet(t, psn & 0xffffff, P.AETH_ACK, msn)


def send_wr(wr_id, opcode, addr, length, lkey, remote=0x10000):
    wr = SendWR(wr_id=100 + wr_id, opcode=opcode, num_sge=1,
                sg=[SGE(addr, length, lkey)], send_flags=e.IBV_SEND_SIGNALED)
    if opcode != e.IBV_WR_SEND:
        wr.set_wr_rdma(0x1234, remote)
    return wr


def post(t, *wr):
    t.qp.post_send(send_wr(*wr))


def sent(args, c0, counter='tx_packets'):
    """How much the device's counter has grown since counters c0."""
    return R.counters(args.dev)[counter] - c0[counter]


def flight(args):
    with open('/sys/kernel/debug/sroce/%s/flight' % args.dev) as f:
        return int(f.read())


def zcopy_linger(args, peer, t):
    """
    An 8 KiB RDMA WRITE (8 packets of 1 KiB, sent from the MR's pages),
    with a 300 ms netem delay on the device's link. As soon as the device
    counts the 8 sent (they wait in the qdisc), the peer sends a PSN
    sequence NAK at the first PSN, a lie (it has received nothing yet):
    the requester queues all 8 again, behind the first ones; and as soon
    as the device counts those sent, an ACK of the last PSN. The NAK
    comes before any packet crossed the veth: one that crossed would
    have been copied into the peer's namespace (skb_orphan_frags_rx()),
    and the QP would copy its resends itself from then on (zcopy.c).
    The moment the WRITE's completion is polled, the buffer is
    overwritten. Every packet of the message the peer captures, first
    sends and resends, must carry the buffer's bytes from before the
    completion, under a right ICRC; the completion is a success. The
    case proves nothing unless resends came and every packet left from
    the MR's pages (tx_zcopy). The local ACK timeout (1 s, longer than
    the qdisc's delay) leaves the NAK the only cause of resends: with
    a shorter one the timer resends first and the NAK, at a PSN already
    being resent, asks for nothing new.
    """
    n = 8
    p1 = R.pattern(n * MTU, 0x31)
    t.mem.map[:n * MTU] = p1
    cap = capture(args.netns, args.ifname)
    subprocess.run(['ip', 'netns', 'exec', 'a', 'tc', 'qdisc', 'replace',
                    'dev', 'veth_a', 'root', 'netem', 'delay', '300ms'],
                   check=True)
    problems, got = [], []
    try:
        c0 = R.counters(args.dev)
        post(t, 1, e.IBV_WR_RDMA_WRITE, t.base, n * MTU, t.mr.lkey)
        end = time.monotonic() + 0.2
        while sent(args, c0) < n and time.monotonic() < end:
            time.sleep(0.002)
        if sent(args, c0) < n:
            return ['the WRITE was not sent within 200 ms']
        peer.send(R.aeth_packet(t, PSN0, P.AETH_NAK | P.NAK_SEQ, 0))
        # An ACK before the resends are built would leave none to linger.
        end = time.monotonic() + 0.5
        while sent(args, c0) < 2 * n and time.monotonic() < end:
            time.sleep(0.002)
        peer.send(ack(t, PSN0 + n - 1))
        t_ack = time.monotonic()
        wc, t_wc = None, None
        end = t_ack + 3
        while time.monotonic() < end and (wc is None or
                                          time.monotonic() < t_wc + 1.0):
            if wc is None:
                k, wcs = t.cq.poll(num_entries=1)
                if k > 0:
                    t.mem.map[:n * MTU] = R.pattern(n * MTU, 0x77)
                    wc, t_wc = wcs[0], time.monotonic()
            got += frames(cap, 0.001 if wc is None else 0.05)
        if wc is None or wc.status != e.IBV_WC_SUCCESS:
            problems.append('completion %s' %
                            (wc and R.status_name(wc.status)))
        data = [f for f in got if f.opcode & 0x1f in
                (P.WRITE_FIRST, P.WRITE_MIDDLE, P.WRITE_LAST, P.WRITE_ONLY)]
        bad = 0
        for f in data:
            off = ((f.psn - PSN0) & 0xffffff) * MTU
            if not f.icrc_ok or f.payload != p1[off:off + len(f.payload)]:
                bad += 1
        resent = len(data) - n
        zcopy = sent(args, c0, 'tx_zcopy')
        print('  zcopy-linger to %s: %d packets captured, %d resent, %d '
              'with bytes not the message\'s or a wrong ICRC, %d sent '
              'zero-copy; completion %.0f ms after the ACK' %
              (args.peer_ip, len(data), resent, bad, zcopy,
               ((t_wc or t_ack) - t_ack) * 1000))
        if bad:
            problems.append('%d of %d packets carried bytes written after '
                            'the completion or a wrong ICRC' %
                            (bad, len(data)))
        if resent <= 0:
            problems.append('no resend came: the case proves nothing')
        if zcopy < len(data):
            problems.append('%d of %d packets sent zero-copy: the case '
                            'proves nothing' % (zcopy, len(data)))
        return problems
    finally:
        subprocess.run(['ip', 'netns', 'exec', 'a', 'tc', 'qdisc', 'del',
                        'dev', 'veth_a', 'root'], check=False)
        cap.close()


def ack_ahead(args, peer, t):
    """
    A 512 KiB RDMA WRITE: 512 packets, of which the requester's window
    lets it send at most 256 before acknowledgments come. At its first
    packet the peer ACKs the message's last PSN, which was never sent: a
    ghost (IBA 9.7.5.2.2), to be dropped and counted (rx_drop_ghost), so
    no completion may come in the next second. Then the peer acknowledges
    honestly what arrived, at each packet that asks; the WRITE must then
    complete with success, after the peer saw all 512 PSNs.
    """
    n = 512
    big = MR(t.pd, n * MTU, e.IBV_ACCESS_LOCAL_WRITE)
    try:
        c0 = R.counters(args.dev)
        peer.drain()
        post(t, 1, e.IBV_WR_RDMA_WRITE, big.buf, n * MTU, big.lkey)
        got = peer.receive(5, until=lambda g: len(g) >= 1)
        if not got:
            return ['the WRITE never reached the peer']
        peer.send(ack(t, PSN0 + n - 1))
        seen = set()
        end = time.monotonic() + 1.0
        wcs = []
        while time.monotonic() < end and not wcs:
            seen.update(r.psn for r in peer.receive(0.05))
            wcs = R.send_wcs(t, 0.01)
        problems = []
        if wcs:
            return ['the ghost ACK completed the WRITE (%s) with %d of its '
                    '%d packets sent' % (wcs, len(seen) + 1, n)]
        ghosts = R.counters(args.dev)['rx_drop_ghost'] - c0['rx_drop_ghost']
        if ghosts < 1:
            problems.append('rx_drop_ghost rose by %d' % ghosts)
        end = time.monotonic() + 30
        contiguous = PSN0 - 1
        while not wcs and time.monotonic() < end:
            for r in peer.receive(0.05):
                seen.add(r.psn)
                while contiguous + 1 in seen:
                    contiguous += 1
                if r.raw[8] & 0x80 and contiguous >= PSN0:
                    peer.send(ack(t, contiguous))
            wcs = R.send_wcs(t, 0.001)
        have = len([p for p in seen if PSN0 <= p < PSN0 + n])
        print('  ack-ahead: %d ghost ACK dropped; %d of %d PSNs seen at '
              'the completion %s' % (ghosts, have, n, wcs))
        if wcs != [(1, 'success')]:
            problems.append('completions %s' % wcs)
        if have != n:
            problems.append('completed with %d of %d PSNs sent' % (have, n))
        return problems
    finally:
        big.close()


def dup_stale_ack(args, peer, t):
    """
    Two 64-byte WRITEs, posted in one call. The peer ACKs the first:
    its completion comes. Then it sends that ACK 20 times more, and an
    ACK 5 PSNs older than anything sent: none may complete the second
    WRITE, resend or count a NAK (local ACK timeout 4 s, so no timeout
    meanwhile; a tail-loss probe of the unanswered second may come).
    Then it ACKs the second, which completes. (Posted one at a time, the
    second would wait for the first's ACK or the probe: a process that
    posts to a QP with packets in flight rings no doorbell.)
    """
    peer.drain()
    first = send_wr(1, e.IBV_WR_RDMA_WRITE, t.base, 64, t.mr.lkey)
    second = send_wr(2, e.IBV_WR_RDMA_WRITE, t.base, 64, t.mr.lkey)
    first.next_wr = second
    t.qp.post_send(first)
    got = peer.receive(5, until=lambda g: len({r.psn for r in g}) >= 2)
    if len({r.psn for r in got}) < 2:
        return ['the WRITEs never reached the peer']
    peer.send(ack(t, PSN0))
    wcs = R.send_wcs(t, R.WAIT)
    if wcs != [(1, 'success')]:
        return ['the first WRITE ACKed: completions %s' % wcs]
    c0 = R.counters(args.dev)
    for _ in range(20):
        peer.send(ack(t, PSN0))
    peer.send(ack(t, PSN0 - 5))
    wcs = R.send_wcs(t, R.WAIT)
    c1 = R.counters(args.dev)
    problems = []
    if wcs:
        problems.append('duplicate and stale ACKs completed %s' % wcs)
    for c in ('retransmits', 'seq_naks_rcvd', 'timeouts'):
        if c1[c] != c0[c]:
            problems.append('%s rose by %d' % (c, c1[c] - c0[c]))
    if t.state() != 'RTS':
        problems.append('state %s' % t.state())
    peer.send(ack(t, PSN0 + 1))
    if not wcs:
        wcs = R.send_wcs(t, R.WAIT)
        if wcs != [(2, 'success')]:
            problems.append('the second WRITE ACKed: completions %s' % wcs)
    return problems


def silence(args, peer, t):
    """
    No answer at all; local ACK timeout 10 (4 ms), 2 retries: the WRITE
    must end IBV_WC_RETRY_EXC_ERR within 10 s and the QP be in ERR.
    """
    post(t, 1, e.IBV_WR_RDMA_WRITE, t.base, 64, t.mr.lkey)
    t0 = time.monotonic()
    wcs = R.send_wcs(t, 10)
    print('  silence: %s after %.2f s' % (wcs, time.monotonic() - t0))
    if wcs != [(1, 'retry_exc_err')] or t.state() != 'ERR':
        return ['completions %s, state %s' % (wcs, t.state())]
    return []


def read_resp(t, psn, op, data, aeth):
    return t.packet(op, ext=struct.pack('!I', 1) if aeth else b'',
                    payload=data, psn=psn, ackreq=False)


def respond(t, peer, first, index, count, data, gap=0.0):
    """READ responses index..index+count-1 of a READ at first (PSN)."""
    last = len(data) // MTU - 1
    for i in range(index, index + count):
        if last == 0:
            op = P.READ_RESP_ONLY
        elif i == 0:
            op = P.READ_RESP_FIRST
        else:
            op = P.READ_RESP_LAST if i == last else P.READ_RESP_MIDDLE
        peer.send(read_resp(t, first + i, op, data[i * MTU:(i + 1) * MTU],
                            op != P.READ_RESP_MIDDLE))
        if gap:
            time.sleep(gap)


def post_read(t, peer, dst, n):
    """A READ of n responses into dst: True once the peer has its request."""
    peer.drain()
    post(t, 1, e.IBV_WR_RDMA_READ, dst.buf, n * MTU, dst.lkey)
    return bool(peer.receive(5, until=lambda g: len(g) >= 1))


def trickle_read(args, peer, t):
    """
    A 64 KiB READ (64 responses), local ACK timeout 14 (67 ms). The peer
    answers correctly but one response every 45 ms: each is progress, so
    the READ must complete with success and the right bytes, the QP in
    RTS; and meanwhile the READ counts one packet in the device's flight
    (debugfs sroce/DEV/flight), not its whole response (the old count,
    64, held other QPs back for as long as the peer liked).
    """
    n = 64
    data = R.pattern(n * MTU, 0x5c)
    dst = MR(t.pd, n * MTU, e.IBV_ACCESS_LOCAL_WRITE)
    try:
        if not post_read(t, peer, dst, n):
            return ['the READ request never reached the peer']
        respond(t, peer, PSN0, 0, n // 2, data, gap=0.045)
        counted = flight(args)
        respond(t, peer, PSN0, n // 2, n - n // 2, data, gap=0.045)
        wcs = R.send_wcs(t, R.WAIT)
        print('  trickle-read: %s; %d in the device\'s flight half-way' %
              (wcs, counted))
        problems = []
        if wcs != [(1, 'success')] or t.state() != 'RTS':
            problems.append('completions %s, state %s' % (wcs, t.state()))
        elif dst.read(n * MTU, 0) != data:
            problems.append('the READ\'s bytes differ')
        if counted > args.read_flight:
            problems.append('the READ counts %d packets in the device\'s '
                            'flight, more than %d' %
                            (counted, args.read_flight))
        return problems
    finally:
        dst.close()


def read_implied_nak(args, peer, t):
    """
    A READ of 4 responses. The peer sends the first two, then an ACK of
    the READ's last PSN: an implied NAK for the rest (IBA 9.7.5.2.1).
    The requester must ask again from the third response (a READ request
    at its PSN); answered, the READ completes with the right bytes.
    """
    n = 4
    data = R.pattern(n * MTU, 0x6d)
    dst = MR(t.pd, n * MTU, e.IBV_ACCESS_LOCAL_WRITE)
    try:
        if not post_read(t, peer, dst, n):
            return ['the READ request never reached the peer']
        respond(t, peer, PSN0, 0, 2, data)
        peer.send(ack(t, PSN0 + n - 1))
        again = peer.receive(5, until=lambda g: any(
            r.psn == PSN0 + 2 for r in g))
        if not any(r.psn == PSN0 + 2 for r in again):
            return ['no READ request again from PSN %#x: %s' %
                    (PSN0 + 2, again[:4])]
        respond(t, peer, PSN0, 2, 2, data)
        wcs = R.send_wcs(t, R.WAIT)
        if wcs != [(1, 'success')]:
            return ['completions %s' % wcs]
        if dst.read(n * MTU, 0) != data:
            return ['the READ\'s bytes differ']
        return []
    finally:
        dst.close()


def late_engine(args, peer, t):
    """
    A READ of 8 responses, local ACK timeout 14 (67 ms). Once the peer has
    the request, the device's send engines are held (debugfs req_hold):
    the peer sends all 8 responses, which wait in the QP's queue, and the
    transport timer expires (0.4 s). Released, the engine is run by one
    more packet (the last response again, a duplicate). It must take the
    queued responses first: they are the progress the timer waited for.
    The READ completes with the right bytes, the peer sees no READ request
    again, and the device counts no timeout. (Before 2026-12-02 the engine
    handled the timer first: it went back, dropped every queued response
    and asked for them again, a retry each time: on a host slow enough,
    IBV_WC_RETRY_EXC_ERR.)
    """
    n = 8
    data = R.pattern(n * MTU, 0x7e)
    dst = MR(t.pd, n * MTU, e.IBV_ACCESS_LOCAL_WRITE)
    hold = '/sys/kernel/debug/sroce/%s/req_hold' % args.dev
    try:
        if not post_read(t, peer, dst, n):
            return ['the READ request never reached the peer']
        c0 = R.counters(args.dev)
        with open(hold, 'w') as f:
            f.write('Y')
        try:
            respond(t, peer, PSN0, 0, n, data)
            time.sleep(0.4)
        finally:
            with open(hold, 'w') as f:
                f.write('N')
        peer.drain()
        respond(t, peer, PSN0, n - 1, 1, data)
        wcs = R.send_wcs(t, R.WAIT)
        again = [r for r in peer.receive(0.5) if r.psn == PSN0]
        timeouts = sent(args, c0, 'timeouts')
        print('  late-engine: %s; %d READ requests again, %d timeouts' %
              (wcs, len(again), timeouts))
        problems = []
        if wcs != [(1, 'success')] or t.state() != 'RTS':
            problems.append('completions %s, state %s' % (wcs, t.state()))
        elif dst.read(n * MTU, 0) != data:
            problems.append('the READ\'s bytes differ')
        if again:
            problems.append('the READ was requested again %d times' %
                            len(again))
        if timeouts:
            problems.append('%d transport timeouts counted' % timeouts)
        return problems
    finally:
        dst.close()


CASES = (
    ('zcopy-linger', zcopy_linger, {'timeout': 18}),
    ('ack-ahead', ack_ahead, {}),
    ('dup-stale-ack', dup_stale_ack, {'timeout': 20}),
    ('silence', silence, {'timeout': 10, 'retry_cnt': 2}),
    ('trickle-read', trickle_read, {}),
    ('read-implied-nak', read_implied_nak, {}),
    ('late-engine', late_engine, {}),
)
IPV6_CASES = ('zcopy-linger',)      # run again over IPv6 with --ipv6


def main():
    p = argparse.ArgumentParser()
    for opt in ('--dev', '--ip', '--peer-ip', '--netns', '--ifname',
                '--dmac'):
        p.add_argument(opt, required=True)
    p.add_argument('--gid-index', type=int, required=True)
    p.add_argument('--read-flight', type=int, default=1,
                   help='packets a READ may count in the flight')
    p.add_argument('--ipv6', nargs=3, metavar=('IP', 'PEER_IP', 'GID_INDEX'),
                   help='run %s again over IPv6' % ', '.join(IPV6_CASES))
    p.add_argument('--only', action='append', default=[])
    args = p.parse_args()
    peer = P.Peer(args.ifname, args.dmac, netns=args.netns)
    mem = R.Memory()
    bad = 0
    cases = [(name, fn, row, args) for name, fn, row in CASES
             if not args.only or name in args.only]
    if args.ipv6:
        v6 = argparse.Namespace(**vars(args))
        v6.ip, v6.peer_ip, v6.gid_index = args.ipv6[0], args.ipv6[1], \
            int(args.ipv6[2])
        cases += [(name + '-ipv6', fn, row, v6)
                  for name, fn, row, _ in cases if name in IPV6_CASES]
    for name, fn, row, a in cases:
        mem.fill()
        t = None
        try:
            t = R.Target(a, peer, R.Row(name, 'rc', None, '', [], **row),
                         mem)
            problems = fn(a, peer, t)
        except Exception as ex:         # a case that cannot run fails
            problems = ['%s: %s' % (type(ex).__name__, ex)]
        finally:
            if t:
                t.close()
        bad += bool(problems)
        print('%-18s %s' % (name, 'ok' if not problems else
                            'MISMATCH: ' + '; '.join(problems)), flush=True)
    print('%d cases, %d mismatches' % (len(cases), bad))
    return 1 if bad else 0


if __name__ == '__main__':
    sys.exit(main())
