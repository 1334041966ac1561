# SPDX-License-Identifier: MIT
"""Fixtures of the package's tests, and their report to the project's test runner.

The tests run wherever a backend works: in CI on the simulated CUDA driver with lavapipe (the
vulkan backend; tests/python/python.mk sets that up), and on a GPU machine. Checks that need the
simulator's introspection (its leak counters) skip elsewhere, saying so.

With GDR_TEST_RESULTS set (tests/run-tests.sh does), each case is written there as "pass NAME",
"fail NAME reason" or "skip NAME reason", so every pytest case is counted by the runner.
"""

import gc
import os

import pytest

import gdrcopy
from cudahelp import TestCuda

_RESULTS = os.environ.get("GDR_TEST_RESULTS")


def _record(verdict, name, detail=""):
    detail = " ".join(str(detail).split())[:300]
    with open(_RESULTS, "a") as f:
        f.write(f"{verdict} {name.replace(' ', '_')}{' ' + detail if detail else ''}\n")


def _skip_reason(report):
    if isinstance(report.longrepr, tuple):
        return report.longrepr[2].removeprefix("Skipped: ")
    return str(report.longrepr)


def _failure(report):
    crash = getattr(report.longrepr, "reprcrash", None)
    return crash.message if crash is not None else str(report.longrepr).splitlines()[-1]


def pytest_runtest_logreport(report):
    if not _RESULTS:
        return
    if report.when == "call" or (report.when == "setup" and not report.passed):
        if report.passed:
            _record("pass", report.nodeid)
        elif report.skipped:
            _record("skip", report.nodeid, _skip_reason(report))
        else:
            _record("fail", report.nodeid, _failure(report))
    elif report.when == "teardown" and report.failed:
        name = report.nodeid if report.nodeid.endswith(":leaks") else report.nodeid + ":teardown"
        _record("fail", name, _failure(report))


def pytest_collectreport(report):
    if _RESULTS and report.failed:
        _record("fail", "collect:" + (report.nodeid or "session"), _failure(report))


@pytest.fixture(scope="session")
def cuda():
    if not _cuda:
        _cuda.append(TestCuda())
    return _cuda[0]


@pytest.fixture
def sim(cuda):
    if not cuda.is_sim:
        pytest.skip("needs the simulated CUDA driver's counters")
    return cuda


_LEAK_COUNTERS = ("allocations", "handle_refs", "mappings", "reservations", "primary_ctx_refs")


@pytest.hookimpl(hookwrapper=True)
def pytest_runtest_protocol(item, nextitem):
    """On the simulator, no test leaves more CUDA objects alive than it found. Checked
    after the whole protocol, when pytest has dropped the test's fixture values too."""
    cuda = _session_cuda(item)
    if cuda is None:
        yield
        return
    before = cuda.counters()
    yield
    after = cuda.counters()
    if any(after[key] > before[key] for key in _LEAK_COUNTERS):
        gc.collect()  # only when needed: a full collection costs tens of milliseconds
        after = cuda.counters()
    leaks = [f"{key}: {before[key]} before, {after[key]} after" for key in _LEAK_COUNTERS
             if after[key] > before[key]]
    if leaks:
        report = pytest.TestReport(item.nodeid + ":leaks", item.location, {}, "failed",
                                   "CUDA objects leaked: " + "; ".join(leaks), "teardown")
        item.ihook.pytest_runtest_logreport(report=report)


_cuda = []


def _session_cuda(item):
    """The simulator's TestCuda, made before the first snapshot; None on a real GPU."""
    if not _cuda:
        _cuda.append(TestCuda())
    return _cuda[0] if _cuda[0].is_sim else None


@pytest.fixture
def recorded(monkeypatch):
    """recorded(lib, name, ret=0): lib.name replaced, for the test, by a stand-in that answers
    ret and records each call's arguments in the list it returns (undone with monkeypatch's)."""
    def record(lib, name, ret=0):
        calls = []
        monkeypatch.setattr(lib, name, lambda *args: calls.append(args) or ret)
        return calls
    return record


@pytest.fixture
def gdr():
    with gdrcopy.open() as g:
        yield g


@pytest.fixture
def buf():
    return gdrcopy.alloc(64 * 1024)


@pytest.fixture
def mapped(gdr, buf):
    """buf pinned and mapped: the Mapping."""
    with gdr.pin(buf) as p, p.map() as m:
        yield m
