# SPDX-License-Identifier: MIT
"""fork: a child inherits the parent's Gdr, Pin, Mapping and DeviceBuffer objects. Their
explicit calls must raise InvalidArgument without calling the library (never crash), the garbage
collector must call nothing for them, and the parent's objects must keep working."""

import errno
import gc
import json
import os
import signal
import time
import traceback
import warnings
import weakref

import pytest

import gdrcopy
from gdrcopy import _cuda, _library

SKIP = 77


def in_child(fn, timeout=60):
    """fn() in a fork child: its JSON result, or pytest.skip/fail with what the child said."""
    r, w = os.pipe()
    with warnings.catch_warnings():
        # Python 3.12 warns about fork in a process with threads (lavapipe has some); the
        # child only runs fn and leaves with os._exit.
        warnings.simplefilter("ignore", DeprecationWarning)
        pid = os.fork()
    if pid == 0:
        os.close(r)
        code, out = 1, ""
        try:
            out, code = json.dumps(fn()), 0
        except pytest.skip.Exception as e:
            out, code = str(e), SKIP
        except BaseException:
            out = traceback.format_exc()
        finally:
            os.write(w, out.encode())
            os._exit(code)
    os.close(w)
    deadline = time.monotonic() + timeout
    while True:
        done, status = os.waitpid(pid, os.WNOHANG)
        if done:
            break
        if time.monotonic() > deadline:
            os.kill(pid, signal.SIGKILL)
            os.waitpid(pid, 0)
            os.close(r)
            pytest.fail(f"the fork child hung for {timeout} s")
        time.sleep(0.01)
    with os.fdopen(r) as f:
        out = f.read()
    if os.WIFSIGNALED(status):
        pytest.fail(f"the fork child died of signal {os.WTERMSIG(status)}")
    code = os.WEXITSTATUS(status)
    if code == SKIP:
        pytest.skip(out)
    assert code == 0, f"the fork child failed:\n{out}"
    return json.loads(out)


@pytest.fixture
def inherited(gdr):
    """A mapped pin and an unmapped one, with data written, made before the fork."""
    b = gdrcopy.alloc(128 << 10)
    p = gdr.pin(b.ptr, 64 << 10)
    m = p.map()
    m.write(b"parent")
    idle = gdr.pin(b.ptr + (64 << 10), 64 << 10)
    yield gdr, b, p, m, idle
    idle.close()
    p.close()


def check_parent_still_works(m, cuda, b):
    m.write(b"after the child")
    assert m.read(15) == b"after the child"
    assert cuda.dtoh(b.ptr, 15) == b"after the child"


def test_garbage_collection_in_a_child_calls_nothing(cuda):
    # Held only here, so that the child can drop every reference to them.
    objs = {"gdr": gdrcopy.open(), "buf": gdrcopy.alloc(64 << 10)}
    objs["pin"] = objs["gdr"].pin(objs["buf"])
    objs["map"] = objs["pin"].map()
    objs["map"].write(b"parent")

    def child():
        called = []
        lib, cu = _library.library(), _cuda.cuda()
        for owner, names in ((lib, ("gdr_close", "gdr_unpin_buffer", "gdr_unmap")),
                             (cu, ("cuMemUnmap", "cuMemAddressFree", "cuMemRelease"))):
            for name in names:
                setattr(owner, name, lambda *args, name=name: called.append(name) or 0)
        gone = [weakref.ref(o) for o in objs.values()]
        objs.clear()
        gc.collect()
        return {"called": called, "alive": sum(ref() is not None for ref in gone)}

    assert in_child(child) == {"called": [], "alive": 0}
    check_parent_still_works(objs["map"], cuda, objs["buf"])
    objs["gdr"].close()


LIBRARY_CALLS = ("gdr_get_info_v2", "gdr_map", "gdr_unmap", "gdr_unpin_buffer",
                 "gdr_pin_buffer_v2", "gdr_driver_get_version", "gdr_get_attribute", "gdr_close",
                 "gdr_copy_to_mapping", "gdr_copy_from_mapping")


def record_library_calls():
    """In the child: every library call recorded, and refused as a fork-safe library would."""
    called = []
    lib = _library.library()
    for name in LIBRARY_CALLS:
        setattr(lib, name, lambda *args, name=name: called.append(name) or errno.ECHILD)
    return called


def call_everything(g, b, p, m, idle):
    """Each explicit call on inherited objects: {name: [errno or 0, message]}."""
    calls = {
        "Mapping.write": lambda: m.write(b"child"),
        "Mapping.read": lambda: m.read(8),
        "Mapping.read(out)": lambda: m.read(bytearray(8)),
        "Pin.info": lambda: p.info,
        "Pin.map": lambda: idle.map(),
        "Gdr.pin": lambda: g.pin(b.ptr, 4096),
        "Gdr.driver_version": lambda: g.driver_version,
        "Gdr.backend": lambda: g.backend,
        "DeviceBuffer.__cuda_array_interface__": lambda: b.__cuda_array_interface__,
        "DeviceBuffer.__dlpack__": lambda: b.__dlpack__(),
        "Mapping.close": lambda: m.close(),
        "Pin.close": lambda: p.close(),
        "Gdr.close": lambda: g.close(),
    }
    results = {}
    for name, call in calls.items():
        try:
            call()
            results[name] = [0, ""]
        except OSError as e:
            results[name] = [e.errno, str(e)]
    return results


def check_results(results):
    for name, (err, message) in results.items():
        assert err == errno.EINVAL, f"{name}: {message or 'no error'} (expected EINVAL)"
        assert "made before fork()" in message, f"{name}: {message}"


def test_explicit_calls_in_a_child_are_refused(inherited, cuda):
    def child():
        results = call_everything(*inherited)
        g, _, p, m, _ = inherited
        return {"results": results, "closed": [g.closed, p.closed, m.closed]}

    out = in_child(child)
    check_results(out["results"])
    assert out["closed"] == [False, False, False]  # a refused close changes nothing
    check_parent_still_works(inherited[3], cuda, inherited[1])


def test_explicit_calls_in_a_child_never_reach_the_library(inherited, cuda):
    """On GDRCopy's library a child's copy would touch an address that the child does not
    have (mappings are not inherited), so the bindings refuse before calling it."""
    def child():
        called = record_library_calls()
        return {"results": call_everything(*inherited), "called": called}

    out = in_child(child)
    assert out["called"] == []
    check_results(out["results"])
    check_parent_still_works(inherited[3], cuda, inherited[1])


class ReadOnly:
    """Memory its owner marks read-only (__cuda_array_interface__'s data[1])."""

    def __init__(self, b):
        cai = dict(b.__cuda_array_interface__)
        cai["data"] = (cai["data"][0], True)
        self.__cuda_array_interface__ = cai


def test_a_read_only_mapping_in_a_child_is_refused_as_inherited(gdr):
    """The fork refusal comes first: a write to read-only memory is refused as made before
    fork(), as every explicit call in a child is, not as read-only."""
    b = gdrcopy.alloc(64 << 10)
    with gdr.pin(ReadOnly(b)) as p:
        m = p.map()

        def child():
            try:
                m.write(b"x")
            except OSError as e:
                return [e.errno, str(e)]
            return [0, ""]

        err, message = in_child(child)
        assert err == errno.EINVAL and "made before fork()" in message, message
        m.close()


def test_a_release_queued_in_a_child_calls_nothing(gdr, cuda):
    """A finalizer that finds the inherited Gdr's lock taken queues its release; run when the
    lock is let go, it still calls nothing."""
    objs = {"buf": gdrcopy.alloc(64 << 10)}
    objs["pin"] = gdr.pin(objs["buf"])

    def child():
        called = record_library_calls()
        guard = gdr._state.guard
        gone = weakref.ref(objs["pin"])
        with guard:
            del objs["pin"]
            queued = len(guard._queued)
        return {"queued": queued, "left": len(guard._queued), "called": called,
                "alive": gone() is not None}

    assert in_child(child) == {"queued": 1, "left": 0, "called": [], "alive": False}
    objs["pin"].close()


def test_releases_queued_in_the_parent_are_dropped_in_the_child(gdr):
    ran = []
    guard = gdr._state.guard
    with guard:
        guard.release_later(lambda: ran.append(os.getpid()))
        assert ran == []

        def child():
            return {"queued": len(guard._queued), "ran": ran}

        # The child sees the parent's lock as free, and none of its queued releases.
        assert in_child(child) == {"queued": 0, "ran": []}
    assert ran == [os.getpid()]
