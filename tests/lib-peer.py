#!/usr/bin/python3
# SPDX-License-Identifier: GPL-2.0
"""
tests/lib-peer.py: a fake RoCE v2 peer, for tests that must send what no
well-behaved device sends. Imported by other test scripts (see
load_peer() below), or run:

    lib-peer.py gsi-flood --ifname IF --dmac MAC --src IP --dst IP
                          --count N --size BYTES

sends N UD SEND ONLY datagrams of BYTES bytes of payload to QP 1 (the
GSI QP) of the device that owns IP --dst, from --src, through IF. Prints
"sent N". --self-test checks the ICRC against a packet from the IBA's
own example arithmetic (lib-rocecap.py's classifier agrees with it).

The peer builds every header itself, from the IP header on, and sends
through an AF_PACKET datagram socket (the kernel adds only the Ethernet
header), so that it can compute the ICRC (IBA Annex A17.3.3: the IPv4
identification is covered, so a kernel-built IP header would not do).
It receives what the device answers on a UDP socket bound to port 4791:
the namespace it runs in must have no RoCE device of its own.

A Peer works in the network namespace given to it (setns(2) through
ctypes: Python 3.11's os has no setns); its sockets stay there, while the
rest of the process, verbs included, keeps its own namespace.
"""
import argparse
import ctypes
import ipaddress
import os
import select
import socket
import struct
import sys
import time
import zlib

ROCE_PORT = 4791
CLONE_NEWNET = 0x40000000
ETH_P_IP = 0x0800
ETH_P_IPV6 = 0x86dd
DEFAULT_PKEY = 0xffff
GSI_QKEY = 0x80010000
UDP_NO_CHECK6_RX = 102      # <linux/udp.h>

# Transport bases and operations (IBA 9.2.1, table 38; IBA 1.5 for 0x1c, 0x1d).
RC, UC, UD, XRC = 0x00, 0x20, 0x60, 0xa0
SEND_FIRST, SEND_MIDDLE, SEND_LAST, SEND_LAST_IMM = 0x00, 0x01, 0x02, 0x03
SEND_ONLY, SEND_ONLY_IMM = 0x04, 0x05
WRITE_FIRST, WRITE_MIDDLE, WRITE_LAST, WRITE_LAST_IMM = 0x06, 0x07, 0x08, 0x09
WRITE_ONLY, WRITE_ONLY_IMM = 0x0a, 0x0b
READ_REQ = 0x0c
READ_RESP_FIRST, READ_RESP_MIDDLE, READ_RESP_LAST, READ_RESP_ONLY = \
    0x0d, 0x0e, 0x0f, 0x10
ACK, ATOMIC_ACK = 0x11, 0x12
CMP_SWAP, FETCH_ADD = 0x13, 0x14
SEND_LAST_INV, SEND_ONLY_INV = 0x16, 0x17
FLUSH, ATOMIC_WRITE = 0x1c, 0x1d

# AETH syndromes (IBA 9.3.5, tables 44 to 47).
AETH_ACK, AETH_RNR, AETH_NAK = 0x00, 0x20, 0x60
NAK_SEQ, NAK_INV_REQ, NAK_ACCESS, NAK_OP = 0, 1, 2, 3
NAK_NAMES = {NAK_SEQ: 'nak-seq', NAK_INV_REQ: 'nak-inv-req',
             NAK_ACCESS: 'nak-access', NAK_OP: 'nak-op'}


def icrc(ip):
    """The ICRC of an IP packet (bytes, ICRC field included)."""
    m = bytearray(ip[:-4])
    if m[0] >> 4 == 4:
        ihl = (m[0] & 0xf) * 4
        m[1] = 0xff                         # TOS
        m[8] = 0xff                         # TTL
        m[10:12] = b'\xff\xff'              # header checksum
    else:
        ihl = 40
        m[0] |= 0x0f                        # traffic class, high nibble
        m[1:4] = b'\xff\xff\xff'            # traffic class, flow label
        m[7] = 0xff                         # hop limit
    m[ihl + 6:ihl + 8] = b'\xff\xff'        # UDP checksum
    m[ihl + 8 + 4] = 0xff                   # BTH FECN, BECN, reserved
    return zlib.crc32(b'\xff' * 8 + bytes(m))


def ip_checksum(hdr):
    s = sum(struct.unpack('!%dH' % (len(hdr) // 2), hdr))
    while s >> 16:
        s = (s & 0xffff) + (s >> 16)
    return ~s & 0xffff


def bth(opcode, qpn, psn, ackreq=True, se=False, pad=0, pkey=DEFAULT_PKEY,
        tver=0):
    """Base Transport Header (IBA 9.2)."""
    flags = (0x80 if se else 0) | (pad & 3) << 4 | (tver & 0xf)
    return struct.pack('!BBHII', opcode, flags, pkey, qpn & 0xffffff,
                       (0x80000000 if ackreq else 0) | (psn & 0xffffff))


def reth(va, rkey, length):
    return struct.pack('!QII', va, rkey, length)


def atmeth(va, rkey, swap_add, compare=0):
    return struct.pack('!QIQQ', va, rkey, swap_add, compare)


def deth(qkey, src_qp):
    return struct.pack('!II', qkey, src_qp & 0xffffff)


def xrceth(srqn):
    return struct.pack('!I', srqn & 0xffffff)


def feth(selectivity, placement):
    return struct.pack('!I', (selectivity & 3) << 4 | (placement & 0xf))


def imm(value):
    return struct.pack('!I', value)


def ieth(rkey):
    return struct.pack('!I', rkey)


class Packet:
    """A RoCE v2 packet as sent: IP and UDP headers built here."""

    def __init__(self, src, dst, transport, sport=0xc000, ident=1, ttl=64):
        self.src = ipaddress.ip_address(src)
        self.dst = ipaddress.ip_address(dst)
        self.transport = transport
        self.sport = sport
        self.ident = ident
        self.ttl = ttl

    def build(self, bad_icrc=False):
        pad = -len(self.transport) % 4
        body = self.transport + b'\0' * pad
        udp_len = 8 + len(body) + 4
        udp = struct.pack('!HHHH', self.sport, ROCE_PORT, udp_len, 0)
        if self.src.version == 4:
            hdr = struct.pack('!BBHHHBBH4s4s', 0x45, 0, 20 + udp_len,
                              self.ident & 0xffff, 0x4000, self.ttl,
                              socket.IPPROTO_UDP, 0, self.src.packed,
                              self.dst.packed)
            hdr = hdr[:10] + struct.pack('!H', ip_checksum(hdr)) + hdr[12:]
        else:
            hdr = struct.pack('!IHBB16s16s', 6 << 28, udp_len,
                              socket.IPPROTO_UDP, self.ttl, self.src.packed,
                              self.dst.packed)
        pkt = hdr + udp + body + b'\0\0\0\0'
        crc = icrc(pkt) ^ (1 if bad_icrc else 0)
        return pkt[:-4] + crc.to_bytes(4, 'little')


def with_pad(bth_bytes, payload):
    """Set the pad count of a BTH for a payload (IBA 9.2: to 4 bytes)."""
    b = bytearray(bth_bytes)
    b[1] = (b[1] & ~0x30) | ((-len(payload) % 4) << 4)
    return bytes(b)


class Response:
    """A packet the device sent to the peer, decoded."""

    def __init__(self, data):
        self.raw = data
        self.opcode = data[0]
        self.qpn = int.from_bytes(data[5:8], 'big')
        self.psn = int.from_bytes(data[9:12], 'big')
        self.syndrome = None
        self.msn = None
        self.orig = None
        self.payload = b''
        op = self.opcode & 0x1f
        body = data[12:-4]     # responses carry no XRCETH (IBA A14)
        if op in (ACK, ATOMIC_ACK, READ_RESP_FIRST, READ_RESP_LAST,
                  READ_RESP_ONLY):
            self.syndrome = body[0]
            self.msn = int.from_bytes(body[1:4], 'big')
            body = body[4:]
        if op == ATOMIC_ACK:
            self.orig = int.from_bytes(body[0:8], 'big')
            body = body[8:]
        pad = (data[1] >> 4) & 3
        self.payload = body[:len(body) - pad] if pad else body

    def kind(self):
        """ack, atomic-ack, read-resp, rnr-nak, nak-* or op-0x.."""
        op = self.opcode & 0x1f
        if op == ATOMIC_ACK:
            return 'atomic-ack'
        if op in (READ_RESP_FIRST, READ_RESP_MIDDLE, READ_RESP_LAST,
                  READ_RESP_ONLY):
            return 'read-resp'
        if op != ACK:
            return 'op-0x%02x' % self.opcode
        t = self.syndrome & 0x60
        if t == AETH_ACK:
            return 'ack'
        if t == AETH_RNR:
            return 'rnr-nak'
        if t == AETH_NAK:
            return NAK_NAMES.get(self.syndrome & 0x1f, 'nak-other')
        return 'ack-reserved'

    def __repr__(self):
        return '%s(psn=%#x)' % (self.kind(), self.psn)


def _libc_setns(path):
    libc = ctypes.CDLL(None, use_errno=True)
    fd = os.open(path, os.O_RDONLY)
    try:
        if libc.setns(fd, CLONE_NEWNET):
            err = ctypes.get_errno()
            raise OSError(err, 'setns %s: %s' % (path, os.strerror(err)))
    finally:
        os.close(fd)


class Peer:
    """
    The fake peer: sends through ifname in network namespace netns (a name
    of ip-netns(8), or None for the current one) to dmac, and listens on
    UDP port 4791 there unless listen is False.
    """

    def __init__(self, ifname, dmac, netns=None, listen=True):
        self.dmac = bytes.fromhex(dmac.replace(':', ''))
        self.ifname = ifname
        back = os.open('/proc/self/ns/net', os.O_RDONLY)
        try:
            if netns:
                _libc_setns('/run/netns/' + netns)
            self.tx = socket.socket(socket.AF_PACKET, socket.SOCK_DGRAM)
            self.rx = None
            if listen:
                self.rx = socket.socket(socket.AF_INET6, socket.SOCK_DGRAM)
                self.rx.setsockopt(socket.IPPROTO_IPV6, socket.IPV6_V6ONLY,
                                   0)
                self.rx.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF,
                                   1 << 22)
                # RoCE v2 sends no UDP checksum (IBA A17.3.2), which IPv6
                # refuses unless told (RFC 6935).
                self.rx.setsockopt(socket.IPPROTO_UDP, UDP_NO_CHECK6_RX, 1)
                self.rx.bind(('::', ROCE_PORT))
        finally:
            if netns:
                libc = ctypes.CDLL(None, use_errno=True)
                if libc.setns(back, CLONE_NEWNET):
                    raise OSError(ctypes.get_errno(), 'setns back')
            os.close(back)
        self.sent = 0

    def send(self, pkt, bad_icrc=False):
        data = pkt.build(bad_icrc) if isinstance(pkt, Packet) else pkt
        proto = ETH_P_IP if data[0] >> 4 == 4 else ETH_P_IPV6
        self.tx.sendto(data, (self.ifname, proto, 0, 0, self.dmac))
        self.sent += 1

    def drain(self):
        """Forget every response received so far."""
        while self.rx and select.select([self.rx], [], [], 0)[0]:
            self.rx.recv(65536)

    def receive(self, timeout, until=None):
        """
        Responses received within timeout seconds; stop early once
        until(list of responses so far) is true.
        """
        got = []
        end = time.monotonic() + timeout
        while True:
            left = end - time.monotonic()
            if left <= 0 or (until and until(got)):
                return got
            if not select.select([self.rx], [], [], left)[0]:
                return got
            data = self.rx.recv(65536)
            if len(data) >= 16:
                got.append(Response(data))

    def close(self):
        self.tx.close()
        if self.rx:
            self.rx.close()


def gsi_flood(args):
    peer = Peer(args.ifname, args.dmac, listen=False)
    payload = bytes(i & 0xff for i in range(args.size))
    for i in range(args.count):
        t = with_pad(bth(UD | SEND_ONLY, 1, i, ackreq=False), payload) + \
            deth(GSI_QKEY, 0x123) + payload
        peer.send(Packet(args.src, args.dst, t, ident=i + 1))
        if i % 64 == 63:
            time.sleep(0.01)    # let the receiver keep up: count drops
    peer.close()
    print('sent %d' % args.count)


def self_test():
    # An ACK from 192.0.2.1 to 192.0.2.2: the ICRC ignores TOS, TTL, the
    # IP and UDP checksums and the BTH's reserved byte, nothing else.
    a = Packet('192.0.2.1', '192.0.2.2', bth(RC | ACK, 0x11, 5)).build()
    b = bytearray(a)
    b[1], b[8], b[10], b[26], b[32] = 0x20, 3, 0x55, 0x77, 0xc0
    assert icrc(bytes(b)) == icrc(a)
    b[4] ^= 1                               # identification: covered
    assert icrc(bytes(b)) != icrc(a)
    c = Packet('2001:db8::1', '2001:db8::2', bth(RC | ACK, 0x11, 5)).build()
    d = bytearray(c)
    d[0:4] = b'\x6f\xff\xff\xff'
    d[7] = 1
    assert icrc(bytes(d)) == icrc(c)
    d[8] ^= 1                               # source address: covered
    assert icrc(bytes(d)) != icrc(c)
    r = Response(bth(RC | ACK, 0x11, 7) + bytes([0x61, 0, 0, 3]) + b'\0' * 4)
    assert r.kind() == 'nak-inv-req' and r.psn == 7, r
    print('self-test ok')


def main():
    p = argparse.ArgumentParser()
    sub = p.add_subparsers(dest='cmd', required=True)
    sub.add_parser('self-test')
    f = sub.add_parser('gsi-flood')
    f.add_argument('--ifname', required=True)
    f.add_argument('--dmac', required=True)
    f.add_argument('--src', required=True)
    f.add_argument('--dst', required=True)
    f.add_argument('--count', type=int, default=600)
    f.add_argument('--size', type=int, default=512)
    args = p.parse_args()
    if args.cmd == 'self-test':
        self_test()
    else:
        gsi_flood(args)


if __name__ == '__main__':
    sys.exit(main())
