#!/usr/bin/python3
# SPDX-License-Identifier: GPL-2.0
"""Run rdma-core's pyverbs tests against one device; compare two runs.

usage: lib-pyverbs.py run [OPTIONS] TESTDIR DEV PORT GID [NAME...]
       lib-pyverbs.py compare LABEL=FILE LABEL=FILE

run: TESTDIR is a copy of rdma-core's tests/ directory (the .gz files of
/usr/share/doc/rdma-core/tests unpacked). Each NAME is a module of it
("test_mr"); without NAME, every test_*.py module of TESTDIR runs. The
tests use device DEV, port PORT and GID index GID, as run_tests.py's
--dev, --port and --gid would set them. The address of that GID and its
netdev's MAC are what the tests see as the device's IP address (rdma_cm
tests bind to it); rdma-core 44.0 looks for them only under
/sys/class/infiniband/DEV/device/net/, which software devices lack.

Each module runs in a child process (forked, the pyverbs modules already
imported), each test with an alarm of --test-timeout seconds (default
90): a test that outlives it errors, and the module goes on. A module
that outlives --module-timeout seconds (default 300) is killed: the test
then running errors, the tests not yet run are skipped. A module that
cannot be imported is one skip, "module import failed: <reason>". The
output of each test (its processes' too) is captured, and kept with its
failure or error.

Prints one line per test, as it ends,

    <outcome> <test id> [<reason>]

outcome being pass, skip, fail, error, xfail or xpass, the reason the
skip's or the exception's one-line message; then one "module" line per
module (its counts and seconds) and one "total" line. With --json FILE,
also writes every test and module there, one JSON object a line, with
the tracebacks and captured output of failures and errors. Exits 0
whatever the tests did: the caller judges.

compare: reads two such JSON files (the first is the device under test,
the second the reference) and prints, side by side, the counts per
module, the totals, the skip reasons grouped with their counts, and the
tests whose outcome differs; then the details (traceback, captured
output) of every failure and error of the first. PYVERBS_DEV_A and
PYVERBS_DEV_B name the two devices, replaced by <dev> in the skip reasons
so that alike reasons group. Exits 1 if the first has a fail or an error
(or no test at all), 0 otherwise.
"""
import argparse
import importlib
import json
import os
import select
import signal
import sys
import tempfile
import time
import traceback
import types
import unittest

OUTCOMES = ('pass', 'skip', 'fail', 'error', 'xfail', 'xpass')


class TestTimeout(Exception):
    pass


def test_id(test):
    """unittest's id, with the class/module fixtures' made dotted too."""
    tid = test.id()
    # _ErrorHolder: "setUpClass (tests.test_x.Cls)"
    if ' (' in tid and tid.endswith(')'):
        what, _, where = tid[:-1].partition(' (')
        tid = f'{where}.{what}'
    return tid.replace(' ', '_')


def one_line(text, limit=200):
    return ' '.join(str(text).split())[:limit]


class Result(unittest.TestResult):
    """Sends one record a test to emit(); captures each test's output."""

    def __init__(self, emit, test_timeout):
        super().__init__()
        self.emit = emit
        self.test_timeout = test_timeout
        self.capture = None
        self.saved = None
        self.started = None
        self.current = None

    def startTest(self, test):
        super().startTest(test)
        self.current = test_id(test)
        self.emit({'type': 'start', 'id': self.current})
        sys.stdout.flush()
        sys.stderr.flush()
        self.capture = tempfile.TemporaryFile()
        self.saved = (os.dup(1), os.dup(2))
        os.dup2(self.capture.fileno(), 1)
        os.dup2(self.capture.fileno(), 2)
        self.started = time.monotonic()
        signal.alarm(self.test_timeout)

    def _captured(self):
        if self.capture is None:
            return ''
        sys.stdout.flush()
        sys.stderr.flush()
        self.capture.seek(0)
        text = self.capture.read().decode(errors='replace')
        return text[-4000:]

    def stopTest(self, test):
        signal.alarm(0)
        if self.saved is not None:
            sys.stdout.flush()
            sys.stderr.flush()
            os.dup2(self.saved[0], 1)
            os.dup2(self.saved[1], 2)
            os.close(self.saved[0])
            os.close(self.saved[1])
            self.saved = None
        if self.capture is not None:
            self.capture.close()
            self.capture = None
        self.current = None
        super().stopTest(test)

    def _row(self, outcome, test, reason='', detail=None):
        signal.alarm(0)
        row = {'type': 'test', 'outcome': outcome, 'id': test_id(test),
               'reason': one_line(reason)}
        if self.started is not None:
            row['secs'] = round(time.monotonic() - self.started, 2)
        if detail is not None:
            row['traceback'] = detail
            row['output'] = self._captured()
        self.emit(row)

    def _exc(self, outcome, test, err):
        signal.alarm(0)
        last = traceback.format_exception_only(err[0], err[1])[-1].strip()
        self._row(outcome, test, last,
                  ''.join(traceback.format_exception(*err)))

    def addSuccess(self, test):
        self._row('pass', test)

    def addSkip(self, test, reason):
        self._row('skip', test, reason)

    def addFailure(self, test, err):
        self._exc('fail', test, err)

    def addError(self, test, err):
        self._exc('error', test, err)

    def addSubTest(self, test, subtest, err):
        if err is not None:
            failure = issubclass(err[0], test.failureException)
            self._exc('fail' if failure else 'error', subtest, err)

    def addExpectedFailure(self, test, err):
        self._row('xfail', test)

    def addUnexpectedSuccess(self, test):
        self._row('xpass', test)


def create_players(self, resource, sync_attrs=True, **resource_arg):
    """RDMATestCase.create_players() of newer suites (for test_srq.py)."""
    self.client = resource(**self.dev_info, **resource_arg)
    self.server = resource(**self.dev_info, **resource_arg)
    if sync_attrs:
        self.client.pre_run(self.server.psns, self.server.qps_num)
        self.server.pre_run(self.client.psns, self.client.qps_num)
    self.traffic_args = {'client': self.client, 'server': self.server,
                         'iters': self.iters, 'gid_idx': self.gid_index,
                         'port': self.ib_port}


def gid_address(dev, port, gid):
    """(IP address, netdev, MAC) of GID index gid of dev's port."""
    top = f'/sys/class/infiniband/{dev}/ports/{port}'
    with open(f'{top}/gids/{gid}') as f:
        groups = f.read().strip().split(':')
    with open(f'{top}/gid_attrs/ndevs/{gid}') as f:
        ndev = f.read().strip()
    with open(f'/sys/class/net/{ndev}/address') as f:
        mac = f.read().strip()
    raw = bytes.fromhex(''.join(groups))
    if raw[:12] == bytes(10) + b'\xff\xff':
        ip = '.'.join(str(b) for b in raw[12:])
    else:
        import ipaddress
        ip = str(ipaddress.IPv6Address(raw))
        if ip.startswith('fe80:'):
            ip += '%' + ndev
    return ip, ndev, mac


def setup_suite(testdir, dev, port, gid):
    # base.py imports args_parser as a top-level module; set what
    # run_tests.py's command line would have set.
    sys.path.insert(0, testdir)
    import args_parser
    args_parser.parser.args = {
        'dev': dev, 'pci_dev': None, 'port': int(port), 'gid': int(gid),
        'gpu': 0, 'gtt': False, 'verbosity': None, 'list_tests': False,
    }
    # The package, without its __init__.py, which imports every module.
    pkg = types.ModuleType('tests')
    pkg.__path__ = [testdir]
    sys.modules['tests'] = pkg
    base = importlib.import_module('tests.base')
    importlib.import_module('tests.utils')
    if not hasattr(base.RDMATestCase, 'create_players'):
        base.RDMATestCase.create_players = create_players

    # The device's address, as rdma-core 56's get_net_name() finds it
    # (from the port's netdev, not from DEV/device/net/). Without it the
    # rdma_cm tests skip: "Device ... doesn't have net interface".
    try:
        address = gid_address(dev, port, gid)
    except OSError as ex:
        print(f'no address for {dev} port {port} GID {gid}: {ex}',
              file=sys.stderr)
        address = None
    if address:
        ip, ndev, mac = address
        orig = base.RDMATestCase._get_ip_mac

        def _get_ip_mac(self, d, p, idx):
            if (d, p, idx) == (dev, int(port), int(gid)):
                self.args.append([d, p, idx, ip, mac])
            else:
                orig(self, d, p, idx)
        base.RDMATestCase._get_ip_mac = _get_ip_mac
        base.RDMATestCase.get_net_name = staticmethod(lambda d, p=None: ndev)
    return address


def run_module(name, emit, test_timeout):
    """In the child: import module name and run its tests."""
    def alarm(signum, frame):
        raise TestTimeout(f'test timed out after {test_timeout} s')
    signal.signal(signal.SIGALRM, alarm)
    try:
        module = importlib.import_module('tests.' + name)
    except unittest.SkipTest as ex:
        emit({'type': 'test', 'outcome': 'skip', 'id': 'tests.' + name,
              'reason': one_line(f'module skipped: {ex}')})
        return
    except BaseException as ex:
        reason = traceback.format_exception_only(type(ex), ex)[-1].strip()
        emit({'type': 'test', 'outcome': 'skip', 'id': 'tests.' + name,
              'reason': one_line(f'module import failed: {reason}')})
        return
    suite = unittest.TestLoader().loadTestsFromModule(module)
    emit({'type': 'plan', 'ids': [test_id(t) for t in iter_tests(suite)]})
    suite.run(Result(emit, test_timeout))


def iter_tests(suite):
    for t in suite:
        if isinstance(t, unittest.TestSuite):
            yield from iter_tests(t)
        else:
            yield t


FIXTURES = ('setUpClass', 'tearDownClass', 'setUpModule', 'tearDownModule')

# The module now running, whose process group goes if we are told to go.
CHILD = [None]


def terminated(signum, frame):
    if CHILD[0]:
        try:
            os.killpg(CHILD[0], signal.SIGKILL)
        except ProcessLookupError:
            pass
    os._exit(128 + signum)


def fork_module(name, test_timeout, module_timeout):
    """Run module name in a child; yield its records, then a module end."""
    rfd, wfd = os.pipe()
    sys.stdout.flush()
    sys.stderr.flush()
    pid = os.fork()
    if pid == 0:
        # A process group of its own, to be killed whole.
        os.setpgid(0, 0)
        for sig in (signal.SIGTERM, signal.SIGINT, signal.SIGHUP):
            signal.signal(sig, signal.SIG_DFL)
        os.close(rfd)
        out = os.fdopen(wfd, 'w', buffering=1)
        # The tests' own prints go to the capture, or, outside a test, to
        # standard error: standard output is the table's.
        os.dup2(2, 1)

        def emit(record):
            out.write(json.dumps(record) + '\n')
            out.flush()
        status = 0
        try:
            run_module(name, emit, test_timeout)
            emit({'type': 'done'})
        except BaseException:
            traceback.print_exc()
            status = 1
        try:
            out.flush()
            sys.stdout.flush()
            sys.stderr.flush()
        finally:
            os._exit(status)
    CHILD[0] = pid
    os.close(wfd)
    start = time.monotonic()
    deadline = start + module_timeout
    buf = b''
    planned = []
    seen = set()
    current = None
    killed = False
    status = None
    with os.fdopen(rfd, 'rb', buffering=0) as pipe:
        done = False
        while not done:
            left = deadline - time.monotonic()
            if left <= 0:
                killed = True
                break
            ready, _, _ = select.select([pipe], [], [], min(left, 1))
            if not ready:
                # EOF never comes while a process the tests forked
                # holds the pipe: watch the child itself too.
                wpid, wstatus = os.waitpid(pid, os.WNOHANG)
                if wpid:
                    status = wstatus
                    break
                continue
            chunk = pipe.read(65536)
            if not chunk:
                break
            buf += chunk
            while b'\n' in buf:
                line, buf = buf.split(b'\n', 1)
                record = json.loads(line)
                if record['type'] == 'plan':
                    planned = record['ids']
                elif record['type'] == 'start':
                    current = record['id']
                elif record['type'] == 'done':
                    done = True
                elif record['type'] == 'test':
                    tid = record['id']
                    seen.add(tid)
                    # A class or module fixture stands for its tests.
                    fixture, _, what = tid.rpartition('.')
                    if what in FIXTURES:
                        seen.update(t for t in planned
                                    if t.startswith(fixture + '.'))
                    current = None
                    yield record
    # Whatever the module left running (rdma_cm tests fork) goes too.
    try:
        os.killpg(pid, signal.SIGKILL)
    except ProcessLookupError:
        pass
    if status is None:
        _, status = os.waitpid(pid, 0)
    CHILD[0] = None
    secs = time.monotonic() - start
    if killed:
        why = f'the module ran out of its {module_timeout} s'
        if current:
            seen.add(current)
            yield {'type': 'test', 'outcome': 'error', 'id': current,
                   'reason': f'killed: {why}'}
        for tid in planned:
            if tid not in seen:
                seen.add(tid)
                yield {'type': 'test', 'outcome': 'skip', 'id': tid,
                       'reason': f'not run: {why}'}
    elif not done:
        if os.WIFSIGNALED(status) and os.WTERMSIG(status) != signal.SIGKILL:
            why = f'the runner died of signal {os.WTERMSIG(status)}'
        elif os.WIFEXITED(status) and os.WEXITSTATUS(status):
            why = f'the runner exited with status {os.WEXITSTATUS(status)}'
        else:
            why = 'the runner ended early'
        if current:
            seen.add(current)
            yield {'type': 'test', 'outcome': 'error', 'id': current,
                   'reason': why}
        for tid in planned:
            if tid not in seen:
                seen.add(tid)
                yield {'type': 'test', 'outcome': 'error', 'id': tid,
                       'reason': f'not run: {why}'}
        if not seen:
            yield {'type': 'test', 'outcome': 'error', 'id': 'tests.' + name,
                   'reason': why}
    yield {'type': 'module', 'module': name, 'secs': round(secs, 1),
           'killed': killed}


def cmd_run(argv):
    ap = argparse.ArgumentParser(prog='lib-pyverbs.py run')
    ap.add_argument('--test-timeout', type=int, default=90)
    ap.add_argument('--module-timeout', type=int, default=300)
    ap.add_argument('--json')
    ap.add_argument('testdir')
    ap.add_argument('dev')
    ap.add_argument('port')
    ap.add_argument('gid')
    ap.add_argument('names', nargs='*')
    args = ap.parse_args(argv)
    testdir = os.path.abspath(args.testdir)
    names = args.names or sorted(
        f[:-3] for f in os.listdir(testdir)
        if f.startswith('test_') and f.endswith('.py'))
    address = setup_suite(testdir, args.dev, args.port, args.gid)
    print(f'# {args.dev} port {args.port} GID {args.gid}: ' +
          (f'{address[0]} on {address[1]} ({address[2]})' if address
           else 'no address'), flush=True)
    for sig in (signal.SIGTERM, signal.SIGINT, signal.SIGHUP):
        signal.signal(sig, terminated)
    out = open(args.json, 'w') if args.json else None
    total = dict.fromkeys(OUTCOMES, 0)
    for name in names:
        counts = dict.fromkeys(OUTCOMES, 0)
        for record in fork_module(name, args.test_timeout,
                                  args.module_timeout):
            record['module'] = name
            if out:
                out.write(json.dumps(record) + '\n')
                out.flush()
            if record['type'] == 'test':
                counts[record['outcome']] += 1
                total[record['outcome']] += 1
                print(f"{record['outcome']:<5} {record['id']} "
                      f"{record['reason']}".rstrip(), flush=True)
            else:
                print(f'module {name} ' +
                      ' '.join(f'{k} {counts[k]}' for k in OUTCOMES[:4]) +
                      f" secs {record['secs']}" +
                      (' KILLED' if record['killed'] else ''), flush=True)
    print('total ' + ' '.join(f'{k} {total[k]}' for k in OUTCOMES),
          flush=True)
    return 0


def load(path):
    tests, modules = {}, {}
    with open(path) as f:
        for line in f:
            record = json.loads(line)
            if record['type'] == 'test':
                tests[record['id']] = record
            elif record['type'] == 'module':
                modules[record['module']] = record
    return tests, modules


def cmd_compare(argv):
    (a, apath), (b, bpath) = (arg.split('=', 1) for arg in argv)
    atests, amods = load(apath)
    btests, bmods = load(bpath)
    modules = sorted(set(amods) | set(bmods) |
                     {t['module'] for t in atests.values()} |
                     {t['module'] for t in btests.values()})
    keys = ('pass', 'skip', 'fail', 'error')
    short = {'pass': 'pass', 'skip': 'skip', 'fail': 'fail', 'error': 'err'}

    def counts(tests, module=None):
        c = dict.fromkeys(OUTCOMES, 0)
        for t in tests.values():
            if module is None or t['module'] == module:
                c[t['outcome']] += 1
        return c

    width = max([len(m) for m in modules] + [len('module')])
    head = ' '.join(f'{short[k]:>4}' for k in keys)
    print(f"{'':<{width}}  {a:^24}  {b:^24}")
    print(f"{'module':<{width}}  {head}  {'s':>4}  {head}  {'s':>4}")

    def cells(c, mods, m):
        text = ' '.join(f'{c[k]:>4}' for k in keys)
        secs = mods.get(m, {}).get('secs') if m else \
            sum(x.get('secs', 0) for x in mods.values())
        mark = '!' if m and mods.get(m, {}).get('killed') else ' '
        return f"{text}  {'-' if secs is None else round(secs):>4}{mark}"

    for m in modules:
        ca, cb = counts(atests, m), counts(btests, m)
        flag = ' <' if ca['fail'] + ca['error'] else ''
        print(f'{m:<{width}}  {cells(ca, amods, m)} {cells(cb, bmods, m)}'
              f'{flag}')
    ta, tb = counts(atests), counts(btests)
    print(f"{'total':<{width}}  {cells(ta, amods, None)} "
          f"{cells(tb, bmods, None)}")
    for name, c in ((a, ta), (b, tb)):
        extra = ''.join(f', {c[k]} {k}' for k in ('xfail', 'xpass') if c[k])
        print(f"{name}: {sum(c.values())} tests: {c['pass']} passed, "
              f"{c['skip']} skipped, {c['fail']} failed, "
              f"{c['error']} errors{extra}")

    # Skip reasons, grouped: the device names made alike.
    def norm(reason):
        for dev in (a_dev, b_dev):
            if dev:
                reason = reason.replace(dev, '<dev>')
        return reason
    a_dev = os.environ.get('PYVERBS_DEV_A', '')
    b_dev = os.environ.get('PYVERBS_DEV_B', '')
    reasons = {}
    for col, tests in ((0, atests), (1, btests)):
        for t in tests.values():
            if t['outcome'] == 'skip':
                r = norm(t['reason']) or '(no reason)'
                reasons.setdefault(r, [0, 0])[col] += 1
    print(f'\nskip reasons ({a}, {b}):')
    for r, (na, nb) in sorted(reasons.items(),
                              key=lambda kv: (-kv[1][0] - kv[1][1], kv[0])):
        print(f'{na:>4} {nb:>4}  {r}')

    print(f'\noutcomes that differ ({a} / {b}, then {a}\'s reason):')
    ndiff = 0
    for tid in sorted(set(atests) | set(btests)):
        oa = atests.get(tid, {}).get('outcome', '-')
        ob = btests.get(tid, {}).get('outcome', '-')
        if oa != ob:
            ndiff += 1
            reason = atests.get(tid, {}).get('reason', '')
            if oa == 'pass':
                reason = btests.get(tid, {}).get('reason', '')
                reason = f'({b}: {reason})' if reason else ''
            print(f'{oa:<5} {ob:<5} {tid} {reason}'.rstrip())
    kinds = {}
    for tid in set(atests) | set(btests):
        oa = atests.get(tid, {}).get('outcome', '-')
        ob = btests.get(tid, {}).get('outcome', '-')
        if oa != ob:
            kinds[f'{oa}/{ob}'] = kinds.get(f'{oa}/{ob}', 0) + 1
    print(f'{ndiff} differ' + (': ' if kinds else '') +
          ', '.join(f'{n} {k}' for k, n in sorted(kinds.items())))

    for name, tests in ((a, atests), (b, btests)):
        slow = sorted((t for t in tests.values() if 'secs' in t),
                      key=lambda t: -t['secs'])[:5]
        print(f'\nslowest on {name}: ' +
              ', '.join(f"{t['id'].replace('tests.', '', 1)} {t['secs']:.1f} s"
                        for t in slow))

    bad = [t for t in atests.values() if t['outcome'] in ('fail', 'error')]
    if bad:
        print(f'\nfailures and errors on {a}:')
    for t in bad:
        print(f"--- {t['outcome']} {t['id']}: {t['reason']}")
        if t.get('traceback'):
            print(t['traceback'].rstrip())
        if t.get('output', '').strip():
            print('captured output:')
            print(t['output'].rstrip())
    return 1 if bad or not atests else 0


def main():
    if len(sys.argv) > 1 and sys.argv[1] == 'run':
        return cmd_run(sys.argv[2:])
    if len(sys.argv) == 4 and sys.argv[1] == 'compare':
        return cmd_compare(sys.argv[2:])
    print(__doc__.split('\n\n')[1], file=sys.stderr)
    return 2


if __name__ == '__main__':
    sys.exit(main())
