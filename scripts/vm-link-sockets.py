# SPDX-License-Identifier: GPL-2.0
"""Open a VM's link sockets with a chosen buffer, then run QEMU.

Usage: vm-link-sockets.py BYTES FIRST_FD LOCAL:REMOTE... -- COMMAND...

For each LOCAL:REMOTE pair (UDP ports of 127.0.0.1), in order: a UDP
socket bound to LOCAL and connected to REMOTE, its receive and send
buffers set to BYTES (SO_RCVBUFFORCE and SO_SNDBUFFORCE: root may pass
net.core.rmem_max), left open as file descriptor FIRST_FD, FIRST_FD + 1,
and so on, for COMMAND (scripts/vm-run's QEMU, given each as a "dgram"
netdev's local.type=fd). The receive buffer is what a link holds for a
guest whose QEMU has not read it yet; what overflows it is dropped by
the host (its RcvbufErrors), as a switch drops what its queue cannot
hold.
"""
import os
import socket
import sys

SO_SNDBUFFORCE = getattr(socket, "SO_SNDBUFFORCE", 32)
SO_RCVBUFFORCE = getattr(socket, "SO_RCVBUFFORCE", 33)


def fail(msg):
    print(f"vm-link-sockets: {msg}", file=sys.stderr)
    sys.exit(2)


def main(argv):
    if "--" not in argv or len(argv) < 4:
        fail(__doc__.split("\n\n")[1])
    sep = argv.index("--")
    try:
        size, fd = int(argv[0]), int(argv[1])
    except ValueError:
        fail("BYTES and FIRST_FD want numbers")
    if size <= 0 or fd < 3:
        fail("BYTES must be positive and FIRST_FD at least 3")
    command = argv[sep + 1:]
    if not command:
        fail("no command")
    for pair in argv[2:sep]:
        try:
            local, remote = (int(p) for p in pair.split(":"))
        except ValueError:
            fail(f"LOCAL:REMOTE wanted, not {pair}")
        s = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
        for opt, name in ((SO_RCVBUFFORCE, "receive"), (SO_SNDBUFFORCE, "send")):
            try:
                s.setsockopt(socket.SOL_SOCKET, opt, size)
            except OSError as e:
                fail(f"cannot set the {name} buffer of port {local} to {size} bytes: {e}")
        try:
            s.bind(("127.0.0.1", local))
            s.connect(("127.0.0.1", remote))
        except OSError as e:
            fail(f"port {local} to {remote}: {e}")
        os.dup2(s.fileno(), fd, inheritable=True)
        s.close()
        fd += 1
    try:
        os.execvp(command[0], command)
    except OSError as e:
        fail(f"{command[0]}: {e}")


if __name__ == "__main__":
    main(sys.argv[1:])
