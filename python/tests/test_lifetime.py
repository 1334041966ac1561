# SPDX-License-Identifier: MIT
"""Finalizers against the package's locks: a Pin, Mapping or Gdr that the garbage collector
ends while its Gdr's lock is taken (by the very thread the collector interrupted, or by one that
waits for a lock the interrupted thread holds) must not deadlock; its release waits for the
lock's holder, runs once, and is never lost. Each case runs in a fresh interpreter, so that a
deadlock is a timeout, not a hung suite."""

import json
import os
import subprocess
import sys

import pytest

TIMEOUT = 60

PRELUDE = """
import gc, json, threading, time
import gdrcopy
from gdrcopy import _library
lib = _library.library()
calls = {"gdr_unpin_buffer": 0, "gdr_unmap": 0, "gdr_close": 0}
for name in calls:
    def counted(*args, real=getattr(lib, name), name=name):
        calls[name] += 1
        return real(*args)
    setattr(lib, name, counted)

def collect_inside(name):
    # The next call of lib.<name>, made inside a locked section, collects garbage first.
    real = getattr(lib, name)
    def collecting(*args):
        setattr(lib, name, real)
        gc.collect()
        return real(*args)
    setattr(lib, name, collecting)

def garbage_pin(g, ptr, mapped=False):
    # A Pin (and Mapping) in a reference cycle: only the collector ends it. Its state.
    p = g.pin(ptr, 65536)
    p.cycle = p
    if mapped:
        m = p.map()
        m.cycle = m
    return p._state

b = gdrcopy.alloc(1 << 20)
g = gdrcopy.open()
"""


def run(code):
    """PRELUDE + code in a fresh interpreter: the JSON it prints last."""
    try:
        r = subprocess.run([sys.executable, "-c", PRELUDE + code], capture_output=True,
                           text=True, timeout=TIMEOUT, env=os.environ.copy())
    except subprocess.TimeoutExpired:
        pytest.fail(f"deadlock: the script did not end in {TIMEOUT} s")
    assert r.returncode == 0 and r.stdout, r.stdout + r.stderr
    return json.loads(r.stdout.splitlines()[-1])


@pytest.mark.parametrize("mapped", [False, True])
def test_release_inside_the_same_threads_locked_call(mapped):
    out = run(f"""
state = garbage_pin(g, b.ptr + 65536, mapped={mapped})
gc.disable()  # only the collection inside gdr_pin_buffer_v2's locked section
seen = {{}}
real_pin = lib.gdr_pin_buffer_v2
def pin_then_look(*args):
    ret = real_pin(*args)
    gc.collect()  # the cycled Pin's finalizer runs here, under this thread's Gdr lock
    seen["during"] = state.closed
    return ret
lib.gdr_pin_buffer_v2 = pin_then_look
q = g.pin(b.ptr, 4096)
lib.gdr_pin_buffer_v2 = real_pin
print(json.dumps({{"during": seen["during"], "after": state.closed, "calls": dict(calls),
                   "pins": len(g._state.pins)}}))
""")
    # Queued while the lock was held, done as the holder let go: exactly once.
    assert out == {"during": False, "after": True, "pins": 1,
                   "calls": {"gdr_unpin_buffer": 1, "gdr_unmap": int(mapped), "gdr_close": 0}}


def test_release_queued_during_close_is_done_by_gdr_close():
    out = run("""
state = garbage_pin(g, b.ptr + 65536, mapped=True)
gc.disable()
collect_inside("gdr_close")
g.close()
print(json.dumps({"closed": state.closed, "calls": dict(calls)}))
""")
    # gdr_close released the pin; the queued release found nothing left to do.
    assert out == {"closed": True,
                   "calls": {"gdr_unpin_buffer": 0, "gdr_unmap": 0, "gdr_close": 1}}


def test_release_inside_a_copy_while_another_thread_closes():
    # The copying thread holds the mapping's lock; the closing thread holds the Gdr's and waits
    # for the mapping's; the collector, inside the copy, ends another pin of that Gdr.
    out = run("""
p1 = g.pin(b.ptr, 65536)
m1 = p1.map()
state = garbage_pin(g, b.ptr + 65536)
gc.disable()
closer = threading.Thread(target=g.close)
real_copy = lib.gdr_copy_to_mapping
def copy(*args):
    closer.start()
    while not g._state.guard.lock.locked():
        time.sleep(0.001)
    time.sleep(0.1)  # the closer is now waiting for this mapping's lock
    gc.collect()
    return real_copy(*args)
lib.gdr_copy_to_mapping = copy
wrote = m1.write(b"x")
closer.join()
print(json.dumps({"wrote": wrote, "closed": g.closed, "pin": state.closed, "m1": m1.closed,
                  "calls": dict(calls)}))
""")
    assert out == {"wrote": 1, "closed": True, "pin": True, "m1": True,
                   "calls": {"gdr_unpin_buffer": 0, "gdr_unmap": 0, "gdr_close": 1}}


def test_many_releases_from_the_collector(cuda):
    # No tuning: pins left in cycles by caught exceptions, while other pins come and go. On a
    # GPU a pin is the driver's work (on the H200, 0.18 s each while the library let the
    # primary context go after every call: the run timed out): fewer there.
    cycles = 3000 if cuda.is_sim else 300
    out = run(f"cycles = {cycles}" + """
def failing_step():
    p = g.pin(b.ptr + 65536, 65536)
    try:
        raise RuntimeError("step failed")
    except RuntimeError as e:
        err = e  # err -> traceback -> this frame -> err, p: a cycle
for i in range(cycles):
    failing_step()
    with g.pin(b.ptr, 4096) as q:
        q.info
gc.collect()
pins = len(g._state.pins)
g.close()
print(json.dumps({"pins": pins, "unpins": calls["gdr_unpin_buffer"]}))
""")
    assert out == {"pins": 0, "unpins": 2 * cycles}


def test_a_failing_release_is_reported_not_raised_into_the_holders_call():
    # A release queued while the lock was taken runs in whichever thread lets go: if it fails
    # (a bug), the failure is printed as a finalizer's would be, and the holder's own call,
    # which has nothing to do with it, still succeeds.
    out = run("""
import contextlib, io
state = garbage_pin(g, b.ptr + 65536)
def broken():
    raise RuntimeError("a release that fails")
state.unpin_locked = broken  # what the finalizer (bound at pin time) calls
gc.disable()
real_pin = lib.gdr_pin_buffer_v2
def pin_then_collect(*args):
    ret = real_pin(*args)
    gc.collect()
    return ret
lib.gdr_pin_buffer_v2 = pin_then_collect
err = io.StringIO()
with contextlib.redirect_stderr(err):
    q = g.pin(b.ptr, 4096)
lib.gdr_pin_buffer_v2 = real_pin
print(json.dumps({"pinned": not q.closed, "reported": "a release that fails" in err.getvalue()}))
""")
    assert out == {"pinned": True, "reported": True}
