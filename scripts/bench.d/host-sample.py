# SPDX-License-Identifier: GPL-2.0
"""Host side: samples of the host's CPU and of two QEMU processes' threads.

Usage: host-sample.py OUT MATCH1 MATCH2

Run by scripts/bench-wire on the host while its two VMs run. MATCHn is a string in the command line of VM n's QEMU (bench-wire passes
the "wireN-PORT," of its "-name wireN-PORT,debug-threads=on"). Every
quarter of a second, appends to OUT one line:

    TIME HOST_BUSY HOST_TOTAL V1_VCPU V1_MAIN V1_OTHER V2_VCPU V2_MAIN V2_OTHER
    UDP_IN UDP_DROPS

TIME in seconds since the epoch (the clock of bash's EPOCHREALTIME);
HOST_* from /proc/stat's "cpu" line (busy: everything but idle and
iowait), all CPUs together; Vn_* the QEMU process's user + system time
split by thread: its vCPU threads (named "CPU n/TCG": QEMU runs with
"-name ...,debug-threads=on"), its main thread (the main loop, which
receives the links' datagrams), and the rest (exited threads included).
UDP_IN and UDP_DROPS from /proc/net/snmp (the host's network namespace,
whatever else uses it): datagrams received, and those dropped because
the receiving socket's buffer was full (RcvbufErrors: a link's datagrams
that its receiving QEMU had not read in time). Times in clock ticks. A
VM not started yet, or gone, reads as its last values. The first line is
"# ncpu N hz HZ". Ends when both QEMUs have come and gone, or after 6
hours.
"""
import os
import sys
import time


def host_cpu():
    with open("/proc/stat") as f:
        v = [int(x) for x in f.readline().split()[1:]]
    idle = v[3] + v[4]
    return sum(v[:8]) - idle, sum(v[:8])


def udp_counts():
    """(InDatagrams, RcvbufErrors) of /proc/net/snmp's Udp lines."""
    with open("/proc/net/snmp") as f:
        rows = [line.split() for line in f if line.startswith("Udp:")]
    if len(rows) < 2:
        return 0, 0
    v = dict(zip(rows[0][1:], rows[1][1:]))
    return int(v.get("InDatagrams", 0)), int(v.get("RcvbufErrors", 0))


def find_pid(match):
    """The QEMU process whose command line holds match (not the timeout
    command that starts it, nor this sampler)."""
    want = match.encode()
    for d in os.listdir("/proc"):
        if not d.isdigit():
            continue
        try:
            with open(f"/proc/{d}/comm") as f:
                if not f.read().startswith("qemu-system"):
                    continue
            with open(f"/proc/{d}/cmdline", "rb") as f:
                if want in f.read():
                    return int(d)
        except OSError:
            pass
    return None


def stat_ticks(path):
    """(comm, utime + stime) of one /proc stat file."""
    with open(path) as f:
        s = f.read()
    comm = s[s.index("(") + 1:s.rindex(")")]
    rest = s[s.rindex(")") + 2:].split()
    return comm, int(rest[11]) + int(rest[12])


def qemu_ticks(pid):
    """(vcpu, main, other) ticks of QEMU process pid; None if it is gone."""
    try:
        _, total = stat_ticks(f"/proc/{pid}/stat")
        vcpu = main = 0
        for tid in os.listdir(f"/proc/{pid}/task"):
            try:
                comm, t = stat_ticks(f"/proc/{pid}/task/{tid}/stat")
            except OSError:
                continue
            if int(tid) == pid:
                main = t
            elif comm.startswith("CPU "):
                vcpu += t
    except OSError:
        return None
    return vcpu, main, max(total - vcpu - main, 0)


def main():
    out, matches = sys.argv[1], sys.argv[2:4]
    pids = [None, None]
    last = [(0, 0, 0), (0, 0, 0)]
    seen = [False, False]
    ncpu = os.cpu_count()
    start = time.time()
    with open(out, "w") as f:
        f.write(f"# ncpu {ncpu} hz {os.sysconf('SC_CLK_TCK')}\n")
        while time.time() - start < 6 * 3600:
            for i in (0, 1):
                if pids[i] is None and not seen[i]:
                    pids[i] = find_pid(matches[i])
                if pids[i] is not None:
                    t = qemu_ticks(pids[i])
                    if t is None:
                        pids[i] = None
                    else:
                        last[i] = t
                        seen[i] = True
            if all(seen) and pids == [None, None]:
                break
            busy, total = host_cpu()
            udp_in, udp_drops = udp_counts()
            f.write(f"{time.time():.3f} {busy} {total} "
                    f"{' '.join(str(x) for x in last[0] + last[1])} "
                    f"{udp_in} {udp_drops}\n")
            f.flush()
            time.sleep(0.25)
    return 0


if __name__ == "__main__":
    sys.exit(main())
