# SPDX-License-Identifier: GPL-2.0
"""Host side: the tables, CSV files and chart of a scripts/bench-wire run.

Usage: report-wire.py DIR

Run by scripts/bench-wire on the host, after the VMs or for --report.
Reads the "@" lines of DIR/console-2.log (VM 2 drives the benchmark and
prints every result) and writes DIR/rounds.csv, results.csv, cpu.csv,
sizes.csv, counters.csv and bw-vs-size.png (if matplotlib is there); prints the tables
as Markdown. With DIR/host.tsv and DIR/marks.txt (the host's samples of
its CPU and of both QEMUs' threads, and when each client started and
ended), also host.csv and a table of the host's CPU during the runs.
Exit status 1 if the console holds no result.
"""
import bisect
import csv
import math
import os
import sys

from reportlib import (BANDWIDTH, LATENCY, cell, chart_axes, chart_save, fmt,
                       med, num, print_counters, pyplot, ratio, results_of,
                       write_counters, write_rounds, write_sizes)

# name, label, unit, column of the @run line, higher is better
FIGURES = BANDWIDTH + [
    ("write_bw_64k_q8", "ib_write_bw 64 KiB, 8 QPs", "MB/s", 0, True),
    ("write_bw_64k_q64", "ib_write_bw 64 KiB, 64 QPs", "MB/s", 0, True),
] + LATENCY
# The figures with a run of their own (not a second column of one).
MAIN_FIGURES = [(f[0], f[1]) for f in FIGURES if not f[3]]
CONFIGS = ("rxe", "sroce", "rxe-lo", "sroce-lo")
PAIRS = (("two hosts", "rxe", "sroce"), ("loopback", "rxe-lo", "sroce-lo"))


def wire_line(kind, w):
    """report-wire's "@" lines beyond reportlib's: @cpu, @ctr, @link,
    @linklat, and --profile's @val, @samples, @prof (for
    bench-profile-report.py: counted)."""
    if kind == "cpu" and len(w) in (12, 18) and w[3] in CONFIGS:
        [int(x) for x in w[4:]]
        return True
    if kind == "ctr" and len(w) == 6 and w[2] in CONFIGS:
        int(w[5])
        return True
    if kind in ("link", "linklat") and len(w) == 4 and w[2] in ("r", "s"):
        return True
    return kind in ("val", "samples", "prof")


def rfmt(r):
    return "n/a" if r is None else f"{r:.2f}"


def link_buffer(out):
    """Sentences on the links (DIR/link.txt): their socket buffers, and
    whether the drivers' NICs were swapped; or None."""
    try:
        with open(os.path.join(out, "link.txt")) as f:
            lines = f.read().splitlines()
    except OSError:
        return None
    text = []
    w = lines[0].split() if lines else []
    if len(w) == 2 and w[0] == "buffer":
        text.append(f"Each link's socket buffers on the host: {w[1]} bytes "
                    "(--link-buffer).")
    elif len(w) == 3 and w[:2] == ["buffer", "default"]:
        text.append("Each link's socket buffers on the host: the host's "
                    f"default (net.core.rmem_default {w[2]} bytes).")
    if any(line.startswith("swapped") for line in lines[1:]):
        text.append("NICs swapped (--swap-links): rdma_rxe on the second "
                    "NIC, sroce on the first.")
    return " ".join(text) or None


def main():
    out = sys.argv[1]
    rows, info = results_of(os.path.join(out, "console-2.log"), CONFIGS,
                            wire_line, "console-2.log", "VM 2 did not finish")
    if not rows:
        return 1
    kernel = info.get("kernel", "?")
    hz = float(info.get("hz", "100"))
    runs = write_rounds(out, kernel, rows, FIGURES)
    cpu, guest, work = write_cpu(out, kernel, hz, rows)
    sweep = write_sizes(out, kernel, rows)
    print_header(out, kernel, info)
    losers = results(out, kernel, runs)
    print("\nratio = sroce/rxe for bandwidth, rxe/sroce for latency: > 1 means "
          "sroce is better.")
    print_links(rows)
    print("sroce below rdma_rxe: " + (", ".join(losers) if losers else "none"))
    cpu_table(cpu)
    print_counters(write_counters(out, kernel, rows, "vm:device"), "VM:device; ")
    guest_usage(guest)
    host_usage(out, kernel, work)
    chart(out, kernel, sweep)
    return 0


def write_cpu(out, kernel, hz, rows):
    """cpu.csv, every @cpu line; ({(figure, config): [(s/GB, s/Mmsg,
    vm2 s, vm1 s)]}, {(figure, config): [the @cpu line's twelve tick
    counts]}, {(round, figure, config): (messages, bytes)})."""
    cpu, guest, work = {}, {}, {}
    with open(os.path.join(out, "cpu.csv"), "w", newline="") as f:
        w = csv.writer(f)
        w.writerow(["kernel", "round", "figure", "config", "messages", "bytes",
                    *(f"vm{v}_{c}" for v in (2, 1) for c in
                      ("sys", "irq", "softirq", "user", "idle", "elapsed")),
                    "clock_ticks_per_s"])
        for r in rows:
            if r[0] != "@cpu":
                continue
            _, rnd, fig, config = r[:4]
            msgs, nbytes, *t = (int(x) for x in r[4:])
            work[(rnd, fig, config)] = (msgs, nbytes)
            if len(t) == 6:     # before user, idle and elapsed were recorded
                t = t[:3] + [None] * 3 + t[3:] + [None] * 3
            w.writerow([kernel, rnd, fig, config, msgs, nbytes,
                        *("" if x is None else x for x in t), int(hz)])
            vm2, vm1 = kernel_ticks(t[:6]) / hz, kernel_ticks(t[6:]) / hz
            guest.setdefault((fig, config), []).append(t)
            total = vm1 + vm2
            cpu.setdefault((fig, config), []).append(
                (total / (nbytes / 1e9) if nbytes else None,
                 total / (msgs / 1e6) if msgs else None, vm2, vm1))
    return cpu, guest, work


def print_header(out, kernel, info):
    """The report's title and what the boots were."""
    print(f"\n## sroce vs rdma_rxe on {kernel}, two VMs\n")
    print(f"Built from the tree at {info.get('commit', '?')} (with whatever was "
          f"not committed). {info.get('rounds', '?')} rounds in one pair of "
          f"boots, {info.get('smp', '?')} CPUs a VM; medians (min-max over "
          f"rounds). Wire MTU {info.get('mtu', '?')}: active MTU rxe "
          f"{info.get('active_mtu_rxe', '?')}, sroce "
          f"{info.get('active_mtu_sroce', '?')}. rxe's ICRC uses "
          f"{info.get('rxe_crc32', '?')}; sroce's (VM 1, VM 2): "
          f"{info.get('sroce_icrc', '?').replace(',', ', ')}.")
    if "sroce_params" in info:
        print(f"sroce's module parameters set: {info['sroce_params']}.")
    if "clocksource" in info:
        print(f"VM 2's clocksource at the start: {info['clocksource']}.")
    link = link_buffer(out)
    if link:
        print(link)


def results(out, kernel, runs):
    """results.csv and a table per path (two hosts, loopback); the
    figures where sroce loses."""
    losers = []
    with open(os.path.join(out, "results.csv"), "w", newline="") as f:
        w = csv.writer(f)
        w.writerow(["kernel", "path", "figure", "unit", "rxe", "sroce", "ratio",
                    "ratio_is", "rounds"])
        for path, a, b in PAIRS:
            print(f"\n### {path}\n")
            print("| figure | unit | rdma_rxe | sroce | ratio |")
            print("|---|---|---:|---:|---:|")
            for name, label, unit, _, higher in FIGURES:
                va, vb = runs.get((name, a), []), runs.get((name, b), [])
                if not va and not vb:
                    continue
                r = ratio(med(va), med(vb), higher)
                if r is not None and r < 1.0:
                    losers.append(f"{label} {path} ({r:.2f})")
                elif med(vb) is None and med(va) is not None:
                    losers.append(f"{label} {path} (sroce failed, rxe did not)")
                w.writerow([kernel, path, name, unit,
                            "" if med(va) is None else med(va),
                            "" if med(vb) is None else med(vb),
                            "" if r is None else f"{r:.3f}",
                            "sroce/rxe" if higher else "rxe/sroce",
                            min(len(va), len(vb))])
                print(f"| {label} | {unit} | {cell(va)} | {cell(vb)} | {rfmt(r)} |")
    return losers


def print_links(rows):
    """The links' own figures (@link, @linklat), for reference."""
    links = {}
    for r in rows:
        if r[0] in ("@link", "@linklat"):
            links.setdefault((r[0], r[2]), []).append(num(r[3]))
    if links:
        print("\nThe links, for reference, in the same boots: TCP (iperf3, "
              "one stream, the kernel's\nown transport) MB/s: link r (rdma_rxe's "
              f"NICs) {cell(links.get(('@link', 'r'), []))}, link s (sroce's) "
              f"{cell(links.get(('@link', 's'), []))}; half an ICMP echo's "
              "round trip\n(ping sleeps for the reply: a process wake-up "
              "included, no bound for perftest) us: link r "
              f"{cell(links.get(('@linklat', 'r'), []))}, link s "
              f"{cell(links.get(('@linklat', 's'), []))}.")


def cpu_table(cpu):
    """Both VMs' kernel time per GB and per million messages."""
    print("\n### kernel CPU time per unit of work, two hosts\n")
    print("Kernel time of both VMs over each run (perftest's setup "
          "included; the time\nthat was neither idle nor user, see below), "
          "per GB moved and per million\nmessages (a latency iteration is "
          "one message each way); medians over rounds.\nratio = rxe/sroce: "
          "> 1 means sroce does less work.\n")
    print("| figure | rxe s/GB | sroce s/GB | ratio | rxe s/M msgs | "
          "sroce s/M msgs | ratio |")
    print("|---|---:|---:|---:|---:|---:|---:|")
    for name, label in MAIN_FIGURES:
        ca, cb = cpu.get((name, "rxe"), []), cpu.get((name, "sroce"), [])
        if not ca and not cb:
            continue
        ga, gb = med([c[0] for c in ca]), med([c[0] for c in cb])
        if name.startswith("write_lat"):
            ga = gb = None      # 2-byte messages: per GB says nothing
        ma, mb = med([c[1] for c in ca]), med([c[1] for c in cb])
        print(f"| {label} | {fmt(ga)} | {fmt(gb)} | {rfmt(ratio(gb, ga, True))} "
              f"| {fmt(ma)} | {fmt(mb)} | {rfmt(ratio(mb, ma, True))} |")


def kernel_ticks(v):
    """One VM's kernel time from its six @cpu fields (sys, irq, softirq,
    user, idle, elapsed x CPUs): the elapsed time that was neither idle
    (measured exactly) nor user; sys + irq + softirq (sampled at ticks,
    which an idle CPU stops) for runs recorded without the rest."""
    if v[5] is None:
        return sum(v[:3])
    return max(v[5] - v[3] - v[4], 0)


def guest_usage(guest):
    """Where each VM's CPUs were during the runs: kernel, user, idle; and
    how much of the kernel's time its tick-sampled columns saw."""
    shares = {}
    for key, ts in guest.items():
        for t in ts:
            for vm, v in (("1", t[6:]), ("2", t[:6])):
                if v[5] is None or v[5] <= 0:
                    continue
                k = kernel_ticks(v)
                seen = 100.0 * sum(v[:3]) / k if k else 100.0
                shares.setdefault(key + (vm,), []).append(
                    [100.0 * x / v[5] for x in (k, v[3], v[4])] + [seen])
    if not shares:
        return
    print("\n### where the guests' CPUs were, two hosts\n")
    print("Each VM's /proc/stat and uptime over each run (both CPUs): "
          "kernel (the time\nthat was neither idle, which is measured "
          "exactly, nor user), user (perftest:\nlibsroce and rdma_rxe's "
          "provider poll in user space) and idle, as shares of\nthe VM's "
          "CPU time; \"ticked\": how much of that kernel time the "
          "tick-sampled\nsystem, irq and softirq columns saw (an idle CPU "
          "stops its tick, and a\nsoftirq run between two ticks is in "
          "none). Medians over rounds. VM 1 runs\nthe servers, VM 2 the "
          "clients.\n")
    print("| figure | config | VM 1 kernel | user | idle | ticked "
          "| VM 2 kernel | user | idle | ticked |")
    print("|---|---|---:|---:|---:|---:|---:|---:|---:|---:|")
    for name, label in MAIN_FIGURES:
        for config in ("rxe", "sroce"):
            a, b = shares.get((name, config, "1")), shares.get((name, config, "2"))
            if not a or not b:
                continue
            cells = [f"{med([x[j] for x in v]):.0f} %" for v in (a, b)
                     for j in range(4)]
            print(f"| {label} | {config} | " + " | ".join(cells) + " |")


def read_samples(path):
    """host.tsv (host-sample.py): (ncpu, hz, [sample rows])."""
    ncpu, hz, samples = 1, 100, []
    with open(path) as f:
        for line in f:
            w = line.split()
            if line.startswith("# ncpu") and len(w) == 5:
                ncpu, hz = int(w[2]), int(w[4])
            elif len(w) in (9, 11):
                if len(w) == 9:     # a sampler without the UDP columns
                    w += ["nan", "nan"]
                try:
                    samples.append([float(x) for x in w])
                except ValueError:
                    pass
    return ncpu, hz, samples


def at(samples, times, t):
    """The sampled counters at time t, interpolated; None outside. times:
    the samples' times, in order."""
    i = bisect.bisect_left(times, t)
    if i == 0 or i >= len(samples):
        return None
    a, b = samples[i - 1], samples[i]
    f = (t - a[0]) / (b[0] - a[0]) if b[0] > a[0] else 0.0
    return [x + f * (y - x) for x, y in zip(a[1:], b[1:])]


def drops(u):
    """The median link drop share of runs u, as text ("-" if unknown)."""
    v = [x[6] for x in u if not math.isnan(x[6])]
    return f"{med(v):.2f} %" if v else "-"


def read_marks(path):
    """marks.txt: {(round, figure, config): [start, end]}, each run's
    client's, the last try's (end None if it never ended)."""
    spans = {}
    with open(path) as f:
        for line in f:
            w = line.split()
            if len(w) != 5 or w[1] not in ("start", "end"):
                continue
            key = tuple(w[2:5])
            t = num(w[0])
            if t is None:
                continue
            if w[1] == "start":
                spans[key] = [t, None]
            elif key in spans:
                spans[key][1] = t
    return spans


def host_usage(out, kernel, work):
    """host.csv and a table: the host's CPU, and each QEMU's threads,
    between each run's client start and end (marks.txt); work: each run's
    (messages, bytes), by (round, figure, config)."""
    spath, mpath = os.path.join(out, "host.tsv"), os.path.join(out, "marks.txt")
    if not (os.path.exists(spath) and os.path.exists(mpath)):
        return
    ncpu, hz, samples = read_samples(spath)
    use = write_host(out, kernel, work, read_marks(mpath), ncpu, hz, samples)
    if use:
        host_table(ncpu, use)


def write_host(out, kernel, work, spans, ncpu, hz, samples):
    """host.csv, a line a run of spans (read_marks) that the samples
    cover; {(figure, config): [(busy %, s/GB, s/M, vcpu %, main %,
    other %, drops %)]}."""
    times = [s[0] for s in samples]
    use = {}
    with open(os.path.join(out, "host.csv"), "w", newline="") as f:
        w = csv.writer(f)
        w.writerow(["kernel", "round", "figure", "config", "seconds",
                    "host_busy_pct", "host_cpus",
                    "vm1_vcpu_s", "vm1_main_s", "vm1_other_s",
                    "vm2_vcpu_s", "vm2_main_s", "vm2_other_s",
                    "messages", "bytes", "host_udp_in", "host_udp_drops"])
        for key, (t0, t1) in sorted(spans.items()):
            if t1 is None or key not in work or t1 <= t0:
                continue
            a, b = at(samples, times, t0), at(samples, times, t1)
            if a is None or b is None:
                continue
            d = [y - x for x, y in zip(a, b)]
            busy = 100.0 * d[0] / d[1] if d[1] > 0 else 0.0
            vm = [x / hz for x in d[2:8]]
            udp = ["" if math.isnan(x) else round(x) for x in d[8:10]]
            msgs, nbytes = work[key]
            w.writerow([kernel, *key, f"{t1 - t0:.3f}", f"{busy:.1f}", ncpu,
                        *(f"{x:.3f}" for x in vm), msgs, nbytes, *udp])
            qemu = sum(vm)
            if qemu <= 0:
                continue
            use.setdefault(key[1:], []).append(
                (busy, qemu / (nbytes / 1e9) if nbytes else None,
                 qemu / (msgs / 1e6) if msgs else None,
                 100 * (vm[0] + vm[3]) / qemu, 100 * (vm[1] + vm[4]) / qemu,
                 100 * (vm[2] + vm[5]) / qemu,
                 100 * d[9] / (d[8] + d[9]) if d[8] + d[9] > 0 else math.nan))
    return use


def host_table(ncpu, use):
    """The host's CPU during the runs (write_host's use), medians."""
    print(f"\n### the host's CPU during each run ({ncpu} CPUs)\n")
    print("From each client's start to its end: how busy the host was (all "
          "its CPUs,\nanything running), and the two QEMU processes' CPU "
          "time per GB (per million\nmessages for latency), split into their "
          "vCPU threads (the guests, and TCG\ntranslating them; a halted "
          "vCPU costs nothing), their main threads (the main\nloop: it "
          "receives the links' datagrams into the guests' virtio rings) and "
          "the\nrest; medians over rounds (host.csv: every run). Link drops: "
          "the host's UDP\ndatagrams dropped because a QEMU had not read its "
          "link's socket in time, in\n% of those sent (the whole host: "
          "the control link's too).\n")
    print("| figure | config | host busy | QEMU s/GB | QEMU s/M msgs | vCPUs "
          "| main loops | other | link drops |")
    print("|---|---|---:|---:|---:|---:|---:|---:|---:|")
    for name, label in MAIN_FIGURES:
        for config in CONFIGS:
            u = use.get((name, config))
            if not u:
                continue
            gb = None if name.startswith("write_lat") else med([x[1] for x in u])
            print(f"| {label} | {config} | {med([x[0] for x in u]):.0f} % "
                  f"| {fmt(gb)} | {fmt(med([x[2] for x in u]))} "
                  f"| {med([x[3] for x in u]):.0f} % | {med([x[4] for x in u]):.0f} % "
                  f"| {med([x[5] for x in u]):.0f} % "
                  f"| {drops(u)} |")


def chart(out, kernel, sweep):
    """MB/s against message size for both drivers, and sroce/rxe."""
    if not sweep:
        return
    plt = pyplot()
    if not plt:
        print("\nbench: no chart: install python3-matplotlib", file=sys.stderr)
        return
    fig, (ax, ax2) = chart_axes(plt)
    for i, (c, label) in enumerate((("rxe", "rdma_rxe"), ("sroce", "sroce"))):
        pts = sorted((s, v) for s, v in sweep.get(c, {}).items() if v)
        if pts:
            ax.plot([p[0] for p in pts], [p[1] for p in pts], "-",
                    marker="os"[i], color=f"C{i}", label=f"{label}, two VMs")
    ref = sweep.get("rxe", {})
    rpts = sorted((s, v / ref[s]) for s, v in sweep.get("sroce", {}).items()
                  if v and ref.get(s))
    if rpts:
        ax2.plot([p[0] for p in rpts], [p[1] for p in rpts], "-", marker="s",
                 color="C1", label="sroce / rdma_rxe")
    chart_save(fig, ax, ax2, sweep,
               f"ib_write_bw across a QEMU link between two VMs of {kernel}\n"
               "under TCG: compare the lines, not the absolute values", out)


if __name__ == "__main__":
    sys.exit(main())
