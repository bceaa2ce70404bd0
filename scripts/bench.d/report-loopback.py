# SPDX-License-Identifier: GPL-2.0
"""Host side: the tables, CSV files and chart of a scripts/bench run.

Usage: report-loopback.py DIR

Run by scripts/bench on the host, after the VM or for --report. Reads
the "@" lines of DIR/console.log (guest-loopback.sh's) and writes
DIR/rounds.csv, sizes.csv, counters.csv, results.csv and bw-vs-size.png
(matplotlib's, else gnuplot's); prints the table as Markdown. Exit
status 1 if the console holds no result.
"""
import csv
import os
import subprocess
import sys

from reportlib import (BANDWIDTH, LATENCY, cell, chart_axes, chart_save, med,
                       print_counters, pyplot, ratio, results_of,
                       write_counters, write_rounds, write_sizes)

FIGURES = BANDWIDTH + LATENCY
CONFIGS = ("rxe", "sroce", "sroce-veth")
STYLE = {"rxe": ("rdma_rxe loopback", "-", "o"),
         "sroce": ("sroce loopback", "-", "s"),
         "sroce-veth": ("sroce over veth", "--", "^")}


def counter_line(kind, w):
    """report-loopback's "@" lines beyond reportlib's: @ctr."""
    if kind == "ctr" and len(w) == 6:
        int(w[5])
        return True
    return False


def rfmt(r, mark):
    if r is None:
        return "n/a"
    return f"**{r:.2f}**" if mark and r < 1.0 else f"{r:.2f}"


def results(out, kernel, runs):
    """results.csv, the medians and ratios; (the table's rows, the
    labels where sroce loses, those with no ratio)."""
    table, losers, missing = [], [], []
    with open(os.path.join(out, "results.csv"), "w", newline="") as f:
        w = csv.writer(f)
        w.writerow(["kernel", "figure", "unit", "rxe", "sroce", "sroce_veth",
                    "ratio", "ratio_veth", "ratio_is", "rounds"])
        for name, label, unit, _, higher in FIGURES:
            vals = {c: runs.get((name, c), []) for c in CONFIGS}
            m = {c: med(vals[c]) for c in CONFIGS}
            r = ratio(m["rxe"], m["sroce"], higher)
            rv = ratio(m["rxe"], m["sroce-veth"], higher)
            if r is None:
                missing.append(label)
            elif r < 1.0:
                losers.append(f"{label} ({r:.2f})")
            w.writerow([kernel, name, unit] +
                       ["" if m[c] is None else m[c] for c in CONFIGS] +
                       ["" if r is None else f"{r:.3f}",
                        "" if rv is None else f"{rv:.3f}",
                        "sroce/rxe" if higher else "rxe/sroce",
                        min(len(v) for v in vals.values())])
            table.append([label, unit, cell(vals["rxe"]), cell(vals["sroce"]),
                          rfmt(r, True), cell(vals["sroce-veth"]), rfmt(rv, False)])
    return table, losers, missing


def print_table(kernel, info, table, losers, missing):
    print(f"\n## sroce vs rdma_rxe on {kernel}\n")
    print(f"Built from the tree at {info.get('commit', '?')} (with whatever was "
          f"not committed), sha256 {info.get('build', '?')}.")
    print(f"{info.get('rounds', '?')} rounds in one boot; medians (min-max over "
          f"rounds). veth MTU {info.get('mtu', '?')}: active MTU "
          f"rxe {info.get('active_mtu_rxe', '?')}, "
          f"sroce {info.get('active_mtu_sroce', '?')}. "
          f"rxe's ICRC uses {info.get('rxe_crc32', '?')}.\n")
    print("| figure | unit | rdma_rxe loopback | sroce loopback | ratio | "
          "sroce over veth (info) | ratio veth |")
    print("|---|---|---:|---:|---:|---:|---:|")
    for row in table:
        print("| " + " | ".join(row) + " |")
    print("\nratio = sroce/rxe for bandwidth, rxe/sroce for latency (medians of one "
          "boot):\n> 1 means sroce is better. \"ratio\" compares the two "
          "loopbacks (the bar).\n\"ratio veth\" sets sroce between two devices "
          "over a veth (ICRC and IP stack\nincluded) against rxe's loopback, "
          "for information only.")
    print("\nsroce below rdma_rxe (ratio < 1.0): " +
          (", ".join(losers) if losers else "none"))
    if missing:
        print("No ratio (every run failed on one side): " + ", ".join(missing))


def chart(out, kernel, sweep, plt):
    """MB/s against message size, and the ratios to rxe."""
    ref = sweep.get("rxe", {})
    fig, (ax, ax2) = chart_axes(plt)
    for i, c in enumerate(CONFIGS):
        label, ls, mk = STYLE[c]
        pts = sorted((s, v) for s, v in sweep.get(c, {}).items() if v)
        if pts:
            ax.plot([p[0] for p in pts], [p[1] for p in pts], ls, marker=mk,
                    color=f"C{i}", label=label)
        rpts = sorted((s, v / ref[s]) for s, v in sweep.get(c, {}).items()
                      if c != "rxe" and v and ref.get(s))
        if rpts:
            ax2.plot([p[0] for p in rpts], [p[1] for p in rpts], ls, marker=mk,
                     color=f"C{i}", label=f"{label} / rdma_rxe")
    chart_save(fig, ax, ax2, sweep,
               f"ib_write_bw against message size, one boot of {kernel}\n"
               "under QEMU/TCG: compare the lines, not the absolute values", out)


GNUPLOT = """set datafile separator ","
set terminal png size 800,500
set output "{d}/bw-vs-size.png"
set logscale xy
set xlabel "message size (bytes)"
set ylabel "ib_write_bw average (MB/s)"
set title "ib_write_bw, one boot under QEMU/TCG: compare the lines"
set key left top
plot "< grep ',rxe,' {d}/sizes.csv" using 3:4 with linespoints title "rdma_rxe loopback", \\
     "< grep ',sroce,' {d}/sizes.csv" using 3:4 with linespoints title "sroce loopback", \\
     "< grep ',sroce-veth,' {d}/sizes.csv" using 3:4 with linespoints title "sroce over veth"
"""


def chart_gnuplot(out):
    """The chart by gnuplot, if matplotlib is missing."""
    print("\nbench: no python3-matplotlib: trying gnuplot", file=sys.stderr)
    sys.stdout.flush()
    try:
        subprocess.run(["gnuplot"], input=GNUPLOT.format(d=out), text=True)
    except OSError:
        print("bench: no chart: install python3-matplotlib (or gnuplot)",
              file=sys.stderr)
        return
    print(f"chart: {out}/bw-vs-size.png (gnuplot)")


def main():
    out = sys.argv[1]
    rows, info = results_of(os.path.join(out, "console.log"), CONFIGS,
                            counter_line, "the console", "the VM did not finish")
    if not rows:
        return 1
    kernel = info.get("kernel", "?")
    runs = write_rounds(out, kernel, rows, FIGURES)
    sweep = write_sizes(out, kernel, rows)
    ctrs = write_counters(out, kernel, rows, "device")
    print_table(kernel, info, *results(out, kernel, runs))
    print_counters(ctrs, "")
    if not sweep:
        return 0
    plt = pyplot()
    if plt:
        chart(out, kernel, sweep, plt)
    else:
        chart_gnuplot(out)
    return 0


if __name__ == "__main__":
    sys.exit(main())
