# SPDX-License-Identifier: MIT
"""Every failure is an OSError with the library's errno and reason."""

import copy
import ctypes
import errno
import pickle

import pytest

import gdrcopy
from gdrcopy import _library


def test_classes():
    e = gdrcopy.GdrError(errno.ENOTSUP, "gdr_pin_buffer_v2", "the reason", "a hint")
    assert isinstance(e, OSError) and not isinstance(e, ValueError)
    assert e.errno == errno.ENOTSUP and e.reason == "the reason"
    assert e.function == "gdr_pin_buffer_v2"
    assert str(e) == (f"[Errno {errno.ENOTSUP}] gdr_pin_buffer_v2: Operation not supported: "
                      f"the reason (a hint)")
    v = gdrcopy.InvalidArgument("pin", "bad")
    assert isinstance(v, gdrcopy.GdrError) and isinstance(v, ValueError)
    assert v.errno == errno.EINVAL


def test_host_memory_is_refused_with_the_reason(gdr):
    host = ctypes.create_string_buffer(1 << 16)
    with pytest.raises(gdrcopy.InvalidArgument) as e:
        gdr.pin(ctypes.addressof(host), len(host))
    assert e.value.errno == errno.EINVAL
    assert e.value.reason.startswith("vulkan: pin ") or gdr.backend != "vulkan"
    assert e.value.reason


def test_reasons_belong_to_their_call(gdr, buf):
    host = ctypes.create_string_buffer(1 << 16)
    with pytest.raises(OSError) as first:
        gdr.pin(ctypes.addressof(host), len(host))
    with pytest.raises(OSError) as second:
        gdr.pin(buf.ptr, buf.allocation_size + 1)
    assert first.value.reason and second.value.reason
    assert first.value.reason not in second.value.reason
    assert "past the end" in second.value.reason or gdr.backend != "vulkan"


def test_a_reason_left_by_an_earlier_call_is_not_reported_again(gdr, buf):
    # A call made straight through ctypes leaves its reason behind, untaken: the next failure
    # of the package starts clean (forget_errors) and reports only its own.
    lib, mh = gdr._state.lib, _library.gdr_mh_t()
    host = ctypes.create_string_buffer(1 << 16)
    assert lib.gdr_pin_buffer_v2(gdr._state.handle, ctypes.addressof(host), len(host), 0,
                                 ctypes.byref(mh)) != 0
    left = lib.take_errors()
    assert left
    assert lib.gdr_pin_buffer_v2(gdr._state.handle, ctypes.addressof(host), len(host), 0,
                                 ctypes.byref(mh)) != 0
    with pytest.raises(gdrcopy.InvalidArgument) as e:
        gdr.pin(buf.ptr, buf.allocation_size + 1)
    assert e.value.reason and left not in e.value.reason


def test_a_release_by_the_collector_keeps_the_reasons_of_the_call_it_interrupts(gdr, buf,
                                                                               monkeypatch):
    # Another Gdr's pin goes between a failure and the taking of its reasons, as the collector
    # may make it go at any allocation: its release (an unpin, which starts clean) must leave
    # the failed call's reasons to it.
    other = gdrcopy.open()
    doomed = [other.pin(buf.ptr, 4096)]
    host = ctypes.create_string_buffer(1 << 16)
    real_buffer = ctypes.create_string_buffer

    def buffer(*args):
        if doomed:
            doomed.pop()  # the last reference: the Pin's release runs here, in this thread
        return real_buffer(*args)

    monkeypatch.setattr(_library.ctypes, "create_string_buffer", buffer)
    with pytest.raises(gdrcopy.InvalidArgument) as e:
        gdr.pin(ctypes.addressof(host), len(host))
    monkeypatch.undo()
    assert not doomed and other._state.pins == set()
    assert e.value.reason
    other.close()


def test_a_failure_the_library_gave_no_reason_for_has_none(gdr, buf, monkeypatch):
    with gdr.pin(buf) as p:
        monkeypatch.setattr(gdr._state.lib, "gdr_get_info_v2", lambda *a: errno.EIO)
        with pytest.raises(gdrcopy.GdrError) as e:
            p.info
        monkeypatch.undo()
    assert e.value.errno == errno.EIO and e.value.reason == ""


def test_reasons_of_several_lines_are_one(monkeypatch):
    lib = _library.library()

    def take(out, size):
        text = b"first reason\nsecond reason\n"
        ctypes.memmove(out, text, len(text))
        return len(text)

    monkeypatch.setattr(lib, "_take_errors", take)
    assert lib.take_errors() == "first reason; second reason"


def test_a_library_without_reasons_says_how_to_see_them(monkeypatch):
    lib = _library.library()
    monkeypatch.setattr(lib, "_take_errors", None)
    e = lib.error(errno.EIO, "gdr_map")
    assert isinstance(e, gdrcopy.GdrError) and e.errno == errno.EIO
    assert "GDRCOPY_ENABLE_LOGGING=1" in str(e)


@pytest.mark.parametrize("e", [
    gdrcopy.GdrError(errno.ENOTSUP, "gdr_pin_buffer_v2", "the reason", "a hint"),
    gdrcopy.GdrError(errno.EIO, "gdr_map"),
    gdrcopy.InvalidArgument("pin", "bad", "do this"),
], ids=["GdrError", "no-reason", "InvalidArgument"])
def test_pickle_round_trip(e):
    # multiprocessing and concurrent.futures send exceptions between processes this way.
    e.note = "kept"
    back = pickle.loads(pickle.dumps(e))
    assert type(back) is type(e)
    assert (str(back), back.args, back.errno, back.function, back.reason) == \
        (str(e), e.args, e.errno, e.function, e.reason)
    assert back.hint == e.hint
    assert back.note == "kept"
    assert str(copy.copy(e)) == str(e)


def _close_gdr(g, p, m):
    g.close()


def _close_pin(g, p, m):
    p.close()


def _close_mapping(g, p, m):
    m.close()


# (what is closed, the call on a closed object, what the refusal says, the steps it gives)
CLOSED = [
    (_close_gdr, lambda g, p, m: g.pin(p.ptr, p.size), "this Gdr is closed",
     "open a new Gdr with gdrcopy.open()"),
    (_close_gdr, lambda g, p, m: g.backend, "this Gdr is closed",
     "open a new Gdr with gdrcopy.open()"),
    (_close_pin, lambda g, p, m: p.map(), "this Pin is unpinned",
     "pin the memory again with Gdr.pin(...)"),
    (_close_gdr, lambda g, p, m: p.info, "this Pin is unpinned and its Gdr is closed",
     "open a new Gdr with gdrcopy.open(), then pin the memory again with Gdr.pin(...)"),
    (_close_mapping, lambda g, p, m: m.write(b"x"), "this Mapping is unmapped",
     "map the Pin again with Pin.map()"),
    (_close_pin, lambda g, p, m: m.read(1), "this Mapping is unmapped and its Pin is unpinned",
     "pin the memory again with Gdr.pin(...), then map the Pin again with Pin.map()"),
    (_close_gdr, lambda g, p, m: m.read(1), "this Mapping is unmapped and its Gdr is closed",
     "open a new Gdr with gdrcopy.open(), then pin the memory again with Gdr.pin(...), then "
     "map the Pin again with Pin.map()"),
]


@pytest.mark.parametrize("close, call, what, steps", CLOSED, ids=[
    "gdr.pin-after-gdr.close", "gdr.backend-after-gdr.close", "pin.map-after-pin.close",
    "pin.info-after-gdr.close", "write-after-mapping.close", "read-after-pin.close",
    "read-after-gdr.close"])
def test_a_closed_object_says_what_is_closed_and_what_to_do(buf, close, call, what, steps):
    g = gdrcopy.open()
    p = g.pin(buf)
    m = p.map()
    close(g, p, m)
    with pytest.raises(gdrcopy.InvalidArgument) as e:
        call(g, p, m)
    assert e.value.reason == what
    assert e.value.hint == steps and f"({steps})" in str(e.value)
    g.close()


class ReadOnlyArray:
    def __init__(self, buf):
        self.__cuda_array_interface__ = {"shape": (buf.nbytes,), "typestr": "|u1",
                                         "data": (buf.ptr, True), "version": 3}


def test_a_closed_read_only_mapping_says_it_is_unmapped(buf):
    # Being closed is what the caller must fix first: a read-only refusal would suggest the
    # mapping is still there to read.
    with gdrcopy.open() as g, g.pin(ReadOnlyArray(buf)) as p:
        m = p.map()
        m.close()
        with pytest.raises(gdrcopy.InvalidArgument) as e:
            m.write(b"x")
        assert e.value.reason == "this Mapping is unmapped"
