#!/usr/bin/python3
# SPDX-License-Identifier: GPL-2.0
"""
scripts/bench-profile-report.py DIR: the report of scripts/bench-profile
(and of scripts/bench-wire --profile, whose configurations are CONFIG@VM).

Reads DIR/console.log's "@" lines (@val, @samples, @prof, @callers,
@info, @end) and writes DIR/profile.csv (every symbol reported) and
DIR/profile.txt: for each figure and configuration the result, the
samples sorted into classes (the symbol's module or, in the core kernel,
what the symbol does), the top symbols and, with --callers, the call
chains that the named symbols' samples came through. Prints profile.txt.
"""
import csv
import os
import re
import sys

CONFIGS = ('rxe', 'sroce', 'sroce-veth')
FIGURES = (('write_bw_64k', 'ib_write_bw 64 KiB', 'MB/s'),
           ('write_lat_2b', 'ib_write_lat 2 B typical', 'usec'),
           ('write_bw_4k', 'ib_write_bw 4 KiB', 'MB/s'))
TOP = 15

# Classes of the core kernel's symbols, tried in order; the first match
# names the class. Module symbols are classed by their module.
KERNEL_CLASSES = (
    ('idle', re.compile(r'idle|halt|mwait|cpuidle|poll_idle')),
    # loop_64: the inner loop of crc32-pclmul's assembly on 6.1.
    ('crc', re.compile(r'crc32|crc_|^loop_64$')),
    ('copy', re.compile(r'memcpy|memmove|copy_user|rep_movs|copy_page|'
                        r'copy_to|copy_from|memset|clear_page|csum')),
    ('locks', re.compile(r'spin|lock|mutex|rwsem|preempt_count')),
    ('softirq/sched', re.compile(r'softirq|tasklet|schedule|sched|wake|'
                                 r'finish_task|__switch|irq_|hrtimer|'
                                 r'timer|entry_|syscall|do_sys')),
    ('net stack', re.compile(r'skb|udp|ip_|ip6|inet|sock|dev_|net|veth|'
                             r'neigh|fib|route|dst_|xmit|napi|gro|'
                             r'nf_|eth_|__netif')),
    ('memory', re.compile(r'alloc|free|kmem|slab|slub|page|folio|'
                          r'kmalloc|kfree|vm_|mm_')),
)


def classify(dso, sym):
    if not dso.startswith('['):
        return 'user'
    if dso in ('[kernel.kallsyms]', '[kernel.vmlinux]'):
        for name, pat in KERNEL_CLASSES:
            if pat.search(sym):
                return name
        return 'kernel other'
    return dso.strip('[]')


def count(s):
    """perf's sample count: 812, 25K, 1M."""
    if not s:
        return None
    mult = {'K': 1e3, 'M': 1e6}.get(s[-1], 1)
    try:
        return float(s.rstrip('KM')) * mult
    except ValueError:
        return None


def main():
    out = sys.argv[1]
    vals, samples, prof, info, end, nrows = {}, {}, {}, {}, None, 0
    callers = {}
    with open(os.path.join(out, 'console.log'), errors='replace') as f:
        for line in f:
            w = line.split()
            if not w or not w[0].startswith('@'):
                continue
            kind = w[0][1:]
            if kind == 'end' and len(w) == 2:
                end = int(w[1])
                continue
            nrows += 1
            if kind == 'info' and len(w) >= 3:
                info[w[1]] = ' '.join(w[2:])
            elif kind == 'val' and len(w) == 4:
                vals[(w[1], w[2])] = w[3]
            elif kind == 'samples' and len(w) == 4:
                samples[(w[1], w[2])] = w[3]
            elif kind == 'prof' and len(w) == 6:
                try:
                    pct = float(w[3])
                except ValueError:
                    continue
                prof.setdefault((w[1], w[2]), []).append((pct, w[4], w[5]))
            elif kind == 'callers' and len(w) == 6:
                callers.setdefault((w[1], w[2]), []).append(
                    (w[3], w[4], w[5]))
    if not prof:
        print('bench-profile: no profile in the console', file=sys.stderr)
        return 1
    if end is None:
        print('bench-profile: the VM did not finish: the results are '
              'partial', file=sys.stderr)
    elif end != nrows:
        print('bench-profile: %d result lines lost on the console' %
              (end - nrows), file=sys.stderr)

    with open(os.path.join(out, 'profile.csv'), 'w', newline='') as f:
        w = csv.writer(f)
        w.writerow(['kernel', 'figure', 'config', 'percent', 'class', 'dso',
                    'symbol'])
        for (fig, config), rows in sorted(prof.items()):
            for pct, dso, sym in rows:
                w.writerow([info.get('kernel', '?'), fig, config, pct,
                            classify(dso, sym), dso, sym])

    text = ['bench-profile: %s, %s, commit %s' % (
        info.get('kernel', '?'), info.get('perf', '?'),
        info.get('commit', '?')),
        'cpu-clock samples over both guest CPUs, whole perftest run; '
        'symbols under 0.2 % are in "unlisted"', '']
    # bench-wire --profile's figures and configurations (CONFIG@VM) too,
    # in the order they came.
    figures = list(FIGURES)
    configs = list(CONFIGS)
    for fig, config in prof:
        if fig not in [f[0] for f in figures]:
            figures.append((fig, fig, 'usec' if '_lat' in fig else 'MB/s'))
        if config not in configs:
            configs.append(config)
    for fig, label, unit in figures:
        for config in configs:
            rows = prof.get((fig, config))
            if not rows:
                continue
            text.append('%s, %s: %s %s, %s samples' % (
                label, config, vals.get((fig, config), 'n/a'), unit,
                samples.get((fig, config), '?')))
            classes = {}
            for pct, dso, sym in rows:
                c = classify(dso, sym)
                classes[c] = classes.get(c, 0.0) + pct
            classes['unlisted'] = max(0.0, 100.0 - sum(classes.values()))
            text.append('  classes: ' + ', '.join(
                '%s %.1f%%' % kv for kv in
                sorted(classes.items(), key=lambda kv: -kv[1])))
            busy = 100.0 - classes.get('idle', 0.0)
            n = count(samples.get((fig, config)))
            work = ''
            if n and unit == 'MB/s' and info.get('bytes_' + fig):
                work = ', %.0f busy samples per GB' % (
                    n * busy / 100 / (int(info['bytes_' + fig]) / 1e9))
            elif n and info.get('iters_' + fig):
                work = ', %.1f busy samples per 1000 round trips' % (
                    n * busy / 100 / (int(info['iters_' + fig]) / 1000))
            text.append('  busy (not idle): %.1f%%%s' % (busy, work))
            for pct, dso, sym in sorted(rows, reverse=True)[:TOP]:
                text.append('  %6.2f%%  %-18s %s' % (pct, dso, sym))
            for sym, share, chain in callers.get((fig, config), []):
                text.append('  %s: %5s%% of its samples from %s' % (
                    sym, share, chain.replace('<', ' < ')))
            text.append('')
    with open(os.path.join(out, 'profile.txt'), 'w') as f:
        f.write('\n'.join(text) + '\n')
    print('\n'.join(text))
    return 0


if __name__ == '__main__':
    sys.exit(main())
