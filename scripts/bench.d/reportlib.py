# SPDX-License-Identifier: GPL-2.0
"""Host side: what report-loopback.py and report-wire.py share.

Imported by both (never run in a VM): reading the "@" lines of a
console, the CSV files both write (rounds.csv, sizes.csv, counters.csv),
the figures both have, medians and their formatting, and the chart's
common axes.
"""
import csv
import os
import re
import statistics
import sys

# The figures of both benchmarks: name, label, unit, column of the @run
# line, higher is better.
BANDWIDTH = [
    ("write_bw_64k", "ib_write_bw 64 KiB", "MB/s", 0, True),
    ("write_bw_4k", "ib_write_bw 4 KiB", "MB/s", 0, True),
    ("send_bw_64k", "ib_send_bw 64 KiB", "MB/s", 0, True),
    ("read_bw_64k", "ib_read_bw 64 KiB", "MB/s", 0, True),
]
LATENCY = [
    ("write_lat_2b", "ib_write_lat 2 B typical", "usec", 0, False),
    ("write_lat_2b_p99", "ib_write_lat 2 B 99th pct", "usec", 1, False),
]


def num(s):
    try:
        return float(s)
    except ValueError:
        return None


def read_console(path, configs, more=None):
    """The well-formed "@" lines of the console at path, the info dict
    and the @end count (None if there is none): @info, @run and @size
    lines of the given configurations, and the lines more(kind, words)
    accepts (it may raise ValueError to refuse one). A kernel message
    may, rarely, land in the middle of a line: then the count on the
    "@end" line does not match."""
    rows, info, end = [], {}, None
    with open(path, errors="replace") as f:
        for line in f:
            w = line.split()
            if not w or not w[0].startswith("@"):
                continue
            kind = w[0][1:]
            try:
                if kind == "end":
                    end = int(w[1])
                elif kind == "info" and len(w) == 3:
                    info[w[1]] = w[2]
                    rows.append(w)
                elif kind == "run" and len(w) >= 5 and w[3] in configs:
                    rows.append(w)
                elif kind == "size" and len(w) == 4 and w[1] in configs:
                    int(w[2])
                    rows.append(w)
                elif more and more(kind, w):
                    rows.append(w)
            except ValueError:
                pass
    return rows, info, end


def results_of(path, configs, more, where, unfinished):
    """read_console's rows and info; (None, None), saying that WHERE has
    no results, if there are none. Warns on stderr of a run that did not
    finish (UNFINISHED: what to say) or lost lines."""
    rows, info, end = read_console(path, configs, more)
    if not rows:
        print(f"bench: no results in {where}", file=sys.stderr)
        return None, None
    if end is None:
        print(f"bench: {unfinished}: the results are partial", file=sys.stderr)
    elif end != len(rows):
        print(f"bench: {end - len(rows)} result lines lost on the console",
              file=sys.stderr)
    return rows, info


def write_rounds(out, kernel, rows, figures):
    """rounds.csv, every @run's value; {(figure, config): [value per
    round]}. figures: (name, label, unit, column of the @run line,
    higher is better)."""
    runs = {}
    with open(os.path.join(out, "rounds.csv"), "w", newline="") as f:
        w = csv.writer(f)
        w.writerow(["kernel", "round", "figure", "config", "value", "unit"])
        for r in rows:
            if r[0] != "@run":
                continue
            _, rnd, fig, config, *vals = r
            for name, _, unit, col, _ in figures:
                if name not in (fig, fig + "_p99"):
                    continue
                if col >= len(vals) and vals != ["NA"]:
                    continue
                v = num(vals[col]) if col < len(vals) else None
                runs.setdefault((name, config), []).append(v)
                w.writerow([kernel, rnd, name, config, "" if v is None else v, unit])
    return runs


def write_sizes(out, kernel, rows):
    """sizes.csv, the size sweep; {config: {size: MB/s}}."""
    sweep = {}
    with open(os.path.join(out, "sizes.csv"), "w", newline="") as f:
        w = csv.writer(f)
        w.writerow(["kernel", "config", "bytes", "MB/s"])
        for r in rows:
            if r[0] == "@size":
                v = num(r[3])
                sweep.setdefault(r[1], {})[int(r[2])] = v
                w.writerow([kernel, r[1], r[2], "" if v is None else v])
    return sweep


def write_counters(out, kernel, rows, device):
    """counters.csv, each @ctr's delta summed over rounds (device: the
    name of its device column); {(figure, config, device, counter):
    total}."""
    ctrs = {}
    for r in rows:
        if r[0] == "@ctr":
            key = tuple(r[1:5])
            ctrs[key] = ctrs.get(key, 0) + int(r[5])
    with open(os.path.join(out, "counters.csv"), "w", newline="") as f:
        w = csv.writer(f)
        w.writerow(["kernel", "figure", "config", device, "counter", "delta"])
        for key, v in sorted(ctrs.items()):
            w.writerow([kernel, *key, v])
    return ctrs


BORING = re.compile(r"(tx|rx)_(packets|bytes)$|(sent|rcvd)_pkts$|rdma_(sends|recvs)$")


def print_counters(ctrs, devices):
    """The hw_counters that say something went wrong (devices: how the
    heading names their devices)."""
    moved = {}
    for (fig, config, dev, name), v in ctrs.items():
        if not BORING.match(name):
            moved.setdefault((config, dev, name), []).append((fig, v))
    if moved:
        print(f"\nhw_counters that moved, summed over rounds ({devices}all of "
              "them: counters.csv):")
        for (config, dev, name), figs in sorted(moved.items()):
            figs.sort(key=lambda f: -f[1])
            print(f"  {config} {dev} {name} {sum(v for _, v in figs)}: " +
                  ", ".join(f"{fig} {v}" for fig, v in figs))


def med(vals):
    vals = [v for v in vals if v is not None]
    return statistics.median(vals) if vals else None


def fmt(v):
    if v is None:
        return "n/a"
    return f"{v:.0f}" if v >= 1000 else f"{v:.3g}" if v < 10 else f"{v:.1f}"


def cell(vals):
    good = [v for v in vals if v is not None]
    s = fmt(med(vals))
    if len(good) > 1:
        s += f" ({fmt(min(good))}-{fmt(max(good))})"
    if len(good) < len(vals):
        s += f" [{len(vals) - len(good)} failed]"
    return s


def ratio(ref, x, higher):
    if not ref or not x:
        return None
    return x / ref if higher else ref / x


def human(n):
    for unit in ("", "K", "M"):
        if n < 1024:
            return f"{n}{unit}"
        n //= 1024
    return f"{n}G"


def pyplot():
    """matplotlib's pyplot, drawing to files; None without matplotlib."""
    try:
        import matplotlib
        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
    except ImportError:
        return None
    return plt


def chart_axes(plt):
    """The chart's figure and its two axes: MB/s above the ratios to
    rdma_rxe."""
    return plt.subplots(2, 1, figsize=(8, 7), sharex=True,
                        gridspec_kw={"height_ratios": [2, 1]})


def chart_save(fig, ax, ax2, sweep, title, out):
    """Label the chart's axes (title above), and save it as
    out/bw-vs-size.png."""
    from matplotlib.ticker import FixedFormatter, FixedLocator, NullLocator

    sizes = sorted({s for c in sweep.values() for s in c})
    ax.set_xscale("log", base=2)
    ax.set_yscale("log")
    ax.set_ylabel("ib_write_bw average (MB/s)")
    ax.set_title(title)
    ax.grid(True, which="both", alpha=0.3)
    ax.legend()
    ax2.axhline(1.0, color="grey", lw=1)
    ax2.set_ylim(bottom=0)
    ax2.set_ylabel("ratio to rdma_rxe")
    ax2.set_xlabel("message size (bytes)")
    ax2.grid(True, alpha=0.3)
    ax2.legend()
    ax2.xaxis.set_major_locator(FixedLocator(sizes))
    ax2.xaxis.set_major_formatter(FixedFormatter([human(s) for s in sizes]))
    ax2.xaxis.set_minor_locator(NullLocator())
    fig.tight_layout()
    png = os.path.join(out, "bw-vs-size.png")
    fig.savefig(png, dpi=100)
    print(f"\nchart: {png}")
