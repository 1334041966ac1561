# SPDX-License-Identifier: MIT
"""Every integer argument (alloc's nbytes and device, pin's device_ptr and size, the copies'
offsets and counts) takes Python's and NumPy's integers and refuses a bool, Python's or NumPy's,
by name, before anything is allocated, pinned or copied."""

import numpy as np
import pytest

import gdrcopy

# Python counts True as 1: each of these would otherwise allocate a byte, allocate on device 1,
# pin address 1, pin 1 byte, copy at offset 1 or read 1 byte.
BOOLS = pytest.mark.parametrize("flag", [True, False, np.True_],
                                ids=["True", "False", "numpy.True_"])


def _refused(call, name, flag):
    with pytest.raises(TypeError) as e:
        call()
    message = str(e.value)
    assert f"{name} must be an integer, not {type(flag).__name__}" in message
    assert "pass an int" in message


@BOOLS
@pytest.mark.parametrize("call, name", [
    (lambda flag: gdrcopy.alloc(flag), "nbytes"),
    (lambda flag: gdrcopy.alloc(4096, flag), "device"),
    (lambda flag: gdrcopy.alloc(4096, device=flag), "device"),
], ids=["alloc(flag)", "alloc(4096,flag)", "alloc(4096,device=flag)"])
def test_alloc_refuses_bools(cuda, call, name, flag):
    before = cuda.counters()["allocations"] if cuda.is_sim else None
    _refused(lambda: call(flag), name, flag)
    if cuda.is_sim:
        assert cuda.counters()["allocations"] == before


@BOOLS
@pytest.mark.parametrize("call, name", [
    (lambda g, buf, flag: g.pin(flag, 4096), "device_ptr"),
    (lambda g, buf, flag: g.pin(flag), "device_ptr"),
    (lambda g, buf, flag: g.pin(buf.ptr, flag), "size"),
    (lambda g, buf, flag: g.pin(buf.ptr, size=flag), "size"),
], ids=["pin(flag,4096)", "pin(flag)", "pin(ptr,flag)", "pin(ptr,size=flag)"])
def test_pin_refuses_bools(gdr, buf, recorded, call, name, flag):
    called = recorded(gdr._state.lib, "gdr_pin_buffer_v2")
    _refused(lambda: call(gdr, buf, flag), name, flag)
    assert called == []


@BOOLS
@pytest.mark.parametrize("call, name", [
    (lambda m, flag: m.write(b"\xff", flag), "offset"),
    (lambda m, flag: m.write(b"\xff", offset=flag), "offset"),
    (lambda m, flag: m.read(flag), "n_or_out"),
    (lambda m, flag: m.read(4, flag), "offset"),
    (lambda m, flag: m.read(bytearray(4), offset=flag), "offset"),
], ids=["write(data,flag)", "write(data,offset=flag)", "read(flag)", "read(4,flag)",
        "read(out,offset=flag)"])
def test_copies_refuse_bools(mapped, cuda, recorded, call, name, flag):
    before = cuda.dtoh(mapped.pin.ptr, 64)
    lib = mapped.pin.gdr._state.lib
    called = [recorded(lib, copy) for copy in ("gdr_copy_to_mapping", "gdr_copy_from_mapping")]
    _refused(lambda: call(mapped, flag), name, flag)
    assert called == [[], []]
    assert cuda.dtoh(mapped.pin.ptr, 64) == before


def test_numpy_integers_stay_accepted(gdr, cuda):
    b = gdrcopy.alloc(np.int64(4096), device=np.int32(0))
    with gdr.pin(np.uint64(b.ptr), np.int64(4096)) as p, p.map() as m:
        assert m.write(b"numpy", np.int16(1)) == 5
        assert m.read(np.uint8(5), np.int64(1)) == b"numpy"
    assert cuda.dtoh(b.ptr + 1, 5) == b"numpy"
