"""The unit tier: pure tests (parsers, plans, filters, modules' logic with fakes) that start no process.

Every test runs under an audit hook (PEP 578) that refuses the start of a process (subprocess, os.system, exec,
spawn, fork): a test that needs one belongs to tests/integration. What ansible-core starts once at import time
(``ctypes.util.find_library`` runs ldconfig for its display width table) is imported here, before the hook counts.
"""
import contextlib
import sys

import pytest

# the shared set-up: sys.path, ROOT, FIXTURES, REAL_WORLD, the in-process module fixtures
from testenv import (COLLECTIONS, FIXTURES, REAL_WORLD, ROOT,  # noqa: F401 pylint: disable=unused-import
                     _fresh_module_warnings, warned)

# its import runs ldconfig (ctypes.util.find_library), once, before the guard counts
import ansible.utils.display  # noqa: E402,F401 pylint: disable=unused-import

# The audit events of a process start (https://docs.python.org/3/library/audit_events.html).
PROCESS_EVENTS = frozenset(("subprocess.Popen", "os.system", "os.exec", "os.posix_spawn", "os.spawn", "os.fork",
                            "os.forkpty", "pty.spawn"))
_guard = {"on": False}


class ProcessStarted(AssertionError):
    """A unit test started a process."""


def _audit(event, args):
    if _guard["on"] and event in PROCESS_EVENTS:
        _guard["on"] = False  # one failure per test: what pytest does after this may start processes
        raise ProcessStarted("a unit test started a process (%s %r): tests that start processes belong to "
                             "tests/integration" % (event, args[:2]))


sys.addaudithook(_audit)


@contextlib.contextmanager
def _guarded():
    _guard["on"] = True
    try:
        yield
    finally:
        _guard["on"] = False


# Guarded: collecting a test file (its imports), and each test's protocol: set-up (fixtures of every scope), call,
# teardown.
@pytest.hookimpl(hookwrapper=True)
def pytest_make_collect_report(collector):  # pylint: disable=unused-argument
    with _guarded():
        yield


@pytest.hookimpl(hookwrapper=True)
def pytest_runtest_protocol(item, nextitem):  # pylint: disable=unused-argument
    with _guarded():
        yield
