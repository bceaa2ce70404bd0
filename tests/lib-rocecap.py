#!/usr/bin/python3
# SPDX-License-Identifier: GPL-2.0
"""
tests/lib-rocecap.py IFACE: print every RoCE v2 (UDP port 4791, IPv4)
frame that crosses IFACE, one line each, with its ICRC checked, until
killed. Prints "ready" once it listens. Used by 54-iba15-interop.

A line:

    src=198.51.100.2 op=0x1c psn=2 qpn=0x000011 icrc=iba feth=0x00000001
        va=0x555555566100 rkey=0x3c0 len=512

(one line; feth, va, rkey and len for FLUSH and ATOMIC_WRITE requests).
icrc is "iba" when the ICRC is that of IBA 1.4 annex A17 (CRC-32 of 8
bytes of ones, the IP header with TOS, TTL and checksum set to ones, the
UDP header with its checksum set to ones, the BTH with its reserved byte
4 set to ones, everything after the BTH up to the ICRC; sent least
significant byte first), "headers-twice" when it is instead that CRC
continued over the packet's BTH (unmasked) and extended headers once
more, which is what rdma_rxe computes for FLUSH (its opcode table gives
RC FLUSH no payload offset, so rxe takes the headers for the payload),
and "bad" otherwise.

"python3 tests/lib-rocecap.py --self-test" checks the classifier on
packets built here.
"""
import socket
import struct
import sys
import zlib

ROCE_PORT = 4791
OP_FLUSH = 0x1c
OP_ATOMIC_WRITE = 0x1d
BTH = 12
FETH = 4
RETH = 16


def ext_headers(op):
    """Length of the extended headers after the BTH that we decode."""
    if op == OP_FLUSH:
        return FETH + RETH
    if op == OP_ATOMIC_WRITE:
        return RETH
    return None


def icrc_iba(ip):
    """The IBA ICRC of the IPv4 packet ip (bytes, ICRC included)."""
    ihl = (ip[0] & 0xf) * 4
    m = bytearray(ip[:-4])
    m[1] = 0xff                     # TOS
    m[8] = 0xff                     # TTL
    m[10:12] = b'\xff\xff'          # header checksum
    m[ihl + 6:ihl + 8] = b'\xff\xff'  # UDP checksum
    m[ihl + 8 + 4] = 0xff           # BTH reserved byte
    return zlib.crc32(b'\xff' * 8 + bytes(m))


def classify(ip):
    """A dict describing the IPv4 RoCE v2 packet ip, or None."""
    if len(ip) < 20 or ip[0] >> 4 != 4 or ip[9] != socket.IPPROTO_UDP:
        return None
    ihl = (ip[0] & 0xf) * 4
    total = struct.unpack('!H', ip[2:4])[0]
    ip = ip[:total]
    udp = ip[ihl:]
    if len(udp) < 8 + BTH + 4:
        return None
    if struct.unpack('!H', udp[2:4])[0] != ROCE_PORT:
        return None
    bth = udp[8:]
    op = bth[0]
    got = int.from_bytes(ip[-4:], 'little')
    iba = icrc_iba(ip)
    d = {
        'src': socket.inet_ntoa(ip[12:16]),
        'op': op,
        'psn': int.from_bytes(bth[9:12], 'big'),
        'qpn': int.from_bytes(bth[5:8], 'big'),
    }
    ext = ext_headers(op)
    if got == iba:
        d['icrc'] = 'iba'
    elif ext is not None and len(bth) >= BTH + ext + 4 and \
            got == zlib.crc32(bytes(bth[:BTH + ext]), iba):
        d['icrc'] = 'headers-twice'
    else:
        d['icrc'] = 'bad'
    if ext is not None and len(bth) >= BTH + ext + 4:
        reth = bth[BTH:]
        if op == OP_FLUSH:
            d['feth'] = int.from_bytes(bth[BTH:BTH + FETH], 'big')
            reth = bth[BTH + FETH:]
        d['va'] = int.from_bytes(reth[0:8], 'big')
        d['rkey'] = int.from_bytes(reth[8:12], 'big')
        d['len'] = int.from_bytes(reth[12:16], 'big')
    return d


def line(d):
    s = 'src=%s op=0x%02x psn=%d qpn=0x%06x icrc=%s' % (
        d['src'], d['op'], d['psn'], d['qpn'], d['icrc'])
    if 'feth' in d:
        s += ' feth=0x%08x' % d['feth']
    if 'va' in d:
        s += ' va=0x%x rkey=0x%x len=%d' % (d['va'], d['rkey'], d['len'])
    return s


def capture(iface):
    s = socket.socket(socket.AF_PACKET, socket.SOCK_RAW,
                      socket.htons(0x0003))
    s.bind((iface, 0))
    print('ready', flush=True)
    while True:
        frame = s.recv(65535)
        if len(frame) < 14 or frame[12:14] != b'\x08\x00':
            continue
        d = classify(frame[14:])
        if d:
            print(line(d), flush=True)


def build(op, ext, payload=b'', rxe_style=False, ident=0x1234):
    """An IPv4 RoCE v2 packet, for the self-test."""
    bth = bytes([op, 0, 0xff, 0xff, 0, 0, 0, 0x11, 0x80, 0, 0, 2])
    body = bth + ext + payload
    udp_len = 8 + len(body) + 4
    ip = struct.pack('!BBHHHBBH4s4s', 0x45, 0, 20 + udp_len, ident, 0x4000,
                     64, socket.IPPROTO_UDP, 0, socket.inet_aton('198.51.100.1'),
                     socket.inet_aton('198.51.100.2'))
    udp = struct.pack('!HHHH', 50000, ROCE_PORT, udp_len, 0)
    pkt = ip + udp + body + b'\0\0\0\0'
    crc = icrc_iba(pkt)
    if rxe_style:
        crc = zlib.crc32(bth + ext, crc)
    return pkt[:-4] + crc.to_bytes(4, 'little')


def self_test():
    feth = (1).to_bytes(4, 'big')
    reth = (0x555555566100).to_bytes(8, 'big') + (0x3c0).to_bytes(4, 'big') \
        + (512).to_bytes(4, 'big')
    d = classify(build(OP_FLUSH, feth + reth))
    assert d['icrc'] == 'iba' and d['feth'] == 1 and d['len'] == 512, d
    assert d['va'] == 0x555555566100 and d['rkey'] == 0x3c0, d
    d = classify(build(OP_FLUSH, feth + reth, rxe_style=True))
    assert d['icrc'] == 'headers-twice', d
    bad = bytearray(build(OP_FLUSH, feth + reth))
    bad[-1] ^= 1
    assert classify(bytes(bad))['icrc'] == 'bad'
    d = classify(build(OP_ATOMIC_WRITE, reth[:12] + (8).to_bytes(4, 'big'),
                       bytes(range(8))))
    assert d['icrc'] == 'iba' and d['len'] == 8, d
    # The masked fields may change on the way: the ICRC does not.
    pkt = bytearray(build(OP_FLUSH, feth + reth))
    pkt[8] = 63
    pkt[10:12] = b'\x12\x34'
    assert classify(bytes(pkt))['icrc'] == 'iba'
    print(line(classify(build(OP_FLUSH, feth + reth))))
    print('self-test ok')


if __name__ == '__main__':
    if len(sys.argv) == 2 and sys.argv[1] == '--self-test':
        self_test()
    elif len(sys.argv) == 2:
        try:
            capture(sys.argv[1])
        except KeyboardInterrupt:
            pass
    else:
        sys.exit('usage: lib-rocecap.py IFACE | --self-test')
