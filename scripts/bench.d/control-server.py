# SPDX-License-Identifier: GPL-2.0
"""Guest side of scripts/bench-wire: VM 1's control server.

Usage: control-server.py GUEST_WIRE ADDRESS PORT IDLE

Run in VM 1 by guest-wire.sh (GUEST_WIRE: its path). Serves VM 2's
requests on ADDRESS:PORT (the control link), one connection each: a line
"OP ARGS...", which it runs as "GUEST_WIRE op OP ARGS..."
(guest-wire-op.sh), answering with its output and a last line "EXIT
STATUS"; "quit" ends it (status 0), so does IDLE seconds without a
request (status 1).
"""
import socket
import subprocess
import sys

wire, addr, port, idle = sys.argv[1], sys.argv[2], int(sys.argv[3]), int(sys.argv[4])
srv = socket.create_server((addr, port))
srv.settimeout(idle)
while True:
    try:
        conn, _ = srv.accept()
    except socket.timeout:
        print("bench: VM 2 silent for", idle, "s: giving up", flush=True)
        sys.exit(1)
    try:
        with conn, conn.makefile("rw") as f:
            args = f.readline().split()
            if not args or args[0] == "quit":
                f.write("EXIT 0\n")
                break
            p = subprocess.run([wire, "op"] + args, stdout=subprocess.PIPE,
                               stderr=subprocess.STDOUT, text=True)
            f.write(p.stdout)
            f.write(f"EXIT {p.returncode}\n")
    except OSError as e:
        # VM 2 gave up on this op (its read timed out): serve the next.
        print("bench: control connection lost:", e, flush=True)
