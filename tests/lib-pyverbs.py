#!/usr/bin/python3
# SPDX-License-Identifier: GPL-2.0
"""Run rdma-core's pyverbs tests against one device and tabulate them.

usage: lib-pyverbs.py TESTDIR DEV PORT GID NAME...

TESTDIR is a copy of rdma-core's tests/ directory (the .gz files of
/usr/share/doc/rdma-core/tests unpacked). Each NAME is a module or a
class in it, as unittest names them ("test_device", "test_mr.MWTest").
The tests use device DEV, port PORT and GID index GID, as run_tests.py's
--dev, --port and --gid would set them. Prints one line per test,

    <outcome> <test id> [<reason>]

outcome being pass, skip, fail, error, xfail or xpass, and the reason the
skip's or the exception's one-line message; then one "total" line. With
SROCE_PYVERBS_TRACEBACKS=1 the tracebacks of failures and errors follow.
Exits 0 whatever the tests did: the caller judges.
"""
import importlib
import os
import sys
import traceback
import types
import unittest


class Result(unittest.TestResult):
    def __init__(self):
        super().__init__()
        self.rows = []
        self.tracebacks = []

    def _row(self, outcome, test, reason=''):
        reason = ' '.join(str(reason).split())[:160]
        self.rows.append((outcome, test.id(), reason))
        print(f'{outcome:<5} {test.id()} {reason}'.rstrip(), flush=True)

    def _exc(self, outcome, test, err):
        last = traceback.format_exception_only(err[0], err[1])[-1].strip()
        self._row(outcome, test, last)
        self.tracebacks.append((test.id(),
                                ''.join(traceback.format_exception(*err))))

    def addSuccess(self, test):
        self._row('pass', test)

    def addSkip(self, test, reason):
        self._row('skip', test, reason)

    def addFailure(self, test, err):
        self._exc('fail', test, err)

    def addError(self, test, err):
        self._exc('error', test, err)

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


def main():
    testdir, dev, port, gid, *names = sys.argv[1:]
    testdir = os.path.abspath(testdir)

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
    if not hasattr(base.RDMATestCase, 'create_players'):
        base.RDMATestCase.create_players = create_players

    loader = unittest.TestLoader()
    suite = unittest.TestSuite()
    for name in names:
        suite.addTests(loader.loadTestsFromName('tests.' + name))
    result = Result()
    suite.run(result)

    counts = {}
    for outcome, _, _ in result.rows:
        counts[outcome] = counts.get(outcome, 0) + 1
    print('total ' + ' '.join(f'{k} {counts.get(k, 0)}' for k in
                               ('pass', 'skip', 'fail', 'error', 'xfail',
                                'xpass')))
    if os.environ.get('SROCE_PYVERBS_TRACEBACKS') == '1':
        for test_id, text in result.tracebacks:
            print(f'--- {test_id}\n{text}')
    return 0


if __name__ == '__main__':
    sys.exit(main())
