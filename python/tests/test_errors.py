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
