# SPDX-License-Identifier: MIT
"""Mapping.write and Mapping.read: data, bounds, buffer kinds, and what the GPU side sees."""

import array
import errno
import os

import numpy as np
import pytest

import gdrcopy

GUARD = b"\x5a" * 64


@pytest.mark.parametrize("size", [1, 7, 8, 63, 64, 65, 4095, 4096, 4097, 65536 - 128])
@pytest.mark.parametrize("offset", [0, 1, 63])
def test_write_lands_exactly_there(mapped, cuda, size, offset):
    base = mapped.pin.ptr
    offset += 64
    cuda.htod(base + offset - 64, GUARD + b"\0" * size + GUARD)
    data = os.urandom(size)
    assert mapped.write(data, offset) == size
    assert cuda.dtoh(base + offset - 64, size + 128) == GUARD + data + GUARD


@pytest.mark.parametrize("size", [1, 8, 64, 100, 4096, 65536 - 64])
def test_read_sees_what_the_gpu_side_wrote(mapped, cuda, size):
    data = os.urandom(size)
    cuda.htod(mapped.pin.ptr + 64, data)
    assert mapped.read(size, 64) == data


def test_buffer_kinds(mapped, cuda):
    ptr = mapped.pin.ptr
    mapped.write(bytearray(b"bytearray"))
    assert cuda.dtoh(ptr, 9) == b"bytearray"
    mapped.write(memoryview(b"--memoryview--")[2:-2], 100)
    assert cuda.dtoh(ptr + 100, 10) == b"memoryview"
    mapped.write(array.array("I", [1, 2, 3]), 200)
    assert cuda.dtoh(ptr + 200, 12) == array.array("I", [1, 2, 3]).tobytes()
    values = np.arange(12, dtype=np.float32).reshape(3, 4)
    mapped.write(values, 300)
    assert cuda.dtoh(ptr + 300, 48) == values.tobytes()
    frozen = np.arange(4, dtype=np.int64)
    frozen.flags.writeable = False
    mapped.write(frozen, 400)
    assert cuda.dtoh(ptr + 400, 32) == frozen.tobytes()
    mapped.write(b"", 500)


def test_read_into(mapped):
    values = np.arange(16, dtype=np.uint32)
    mapped.write(values)
    out = np.zeros(16, dtype=np.uint32)
    assert mapped.read(out) is out
    assert (out == values).all()
    view = memoryview(bytearray(8))
    mapped.read(view, 4)
    assert view.tobytes() == values.tobytes()[4:12]
    assert mapped.read(0) == bytearray()


@pytest.mark.parametrize("offset, n", [(-1, 1), (0, 65537), (65536, 1), (65535, 2)])
def test_out_of_range_changes_nothing(mapped, cuda, monkeypatch, recorded, offset, n):
    before = cuda.dtoh(mapped.pin.ptr, 65536)
    with pytest.raises(gdrcopy.InvalidArgument, match="do not fit"):
        mapped.write(b"\xff" * n, offset)
    # Refused before the library, whose own check would be against the whole mapping.
    called = recorded(mapped.pin.gdr._state.lib, "gdr_copy_from_mapping")
    out = bytearray(b"\x5a" * n)
    with pytest.raises(gdrcopy.InvalidArgument, match=f"{n} bytes at offset {offset} do not fit"):
        mapped.read(n, offset)
    with pytest.raises(gdrcopy.InvalidArgument, match=f"{n} bytes at offset {offset} do not fit"):
        mapped.read(out, offset)
    assert called == [] and out == b"\x5a" * n
    monkeypatch.undo()
    assert cuda.dtoh(mapped.pin.ptr, 65536) == before


def test_bad_buffers(mapped):
    with pytest.raises(TypeError):
        mapped.write("text is not bytes")
    with pytest.raises(TypeError):
        mapped.write(12345)
    with pytest.raises(gdrcopy.InvalidArgument, match="C-contiguous"):
        mapped.write(np.zeros(16)[::2])
    with pytest.raises(TypeError, match="read-only"):
        mapped.read(b"12345678")
    with pytest.raises(gdrcopy.InvalidArgument):
        mapped.read(-1)



def test_a_strided_buffer_is_refused_saying_what_to_pass(mapped):
    # A column or a strided slice is the common case: the refusal names the way out, which
    # differs by direction (a contiguous copy reaches the GPU; one read into is lost).
    with pytest.raises(gdrcopy.InvalidArgument) as e:
        mapped.write(np.zeros((4, 4))[:, 0])
    assert "numpy.ascontiguousarray" in e.value.hint and e.value.hint in str(e.value)
    out = np.zeros((4, 4))
    with pytest.raises(gdrcopy.InvalidArgument) as e:
        mapped.read(out[:, 0])
    assert "contiguous buffer" in e.value.hint and "ascontiguousarray" not in e.value.hint

def test_unmapped_mapping_refuses(gdr, buf):
    with gdr.pin(buf) as p:
        m = p.map()
        m.close()
        m.close()
        with pytest.raises(gdrcopy.InvalidArgument, match="unmapped"):
            m.write(b"x")
        with pytest.raises(gdrcopy.InvalidArgument, match="unmapped"):
            m.read(1)


def test_properties(mapped, buf):
    assert mapped.size == buf.nbytes
    assert mapped.mapping_type == gdrcopy.MappingType.WC
    assert not mapped.closed
    assert "WC" in repr(mapped)


def test_numpy_integers_as_offsets_and_counts(mapped, cuda):
    mapped.write(b"numpy", np.int64(3))
    assert cuda.dtoh(mapped.pin.ptr + 3, 5) == b"numpy"
    assert mapped.read(np.int64(5), np.uint32(3)) == b"numpy"
    out = bytearray(5)
    assert mapped.read(out, np.int16(3)) == b"numpy"


@pytest.mark.parametrize("call, name", [
    (lambda m: m.write(b"x", 1.5), "offset"),
    (lambda m: m.write(b"x", np.float64(2.0)), "offset"),
    (lambda m: m.read(4, 2.0), "offset"),
    (lambda m: m.read(4.0), "n_or_out"),
])
def test_floats_are_type_errors_naming_the_argument(mapped, call, name):
    with pytest.raises(TypeError, match=f"{name} must be"):
        call(mapped)


@pytest.mark.parametrize("offset", [0, -1, 65536])
def test_a_huge_read_is_refused_before_allocating(mapped, offset):
    with pytest.raises(gdrcopy.InvalidArgument, match="do not fit"):
        mapped.read(1 << 62, offset)


@pytest.mark.parametrize("direction", ["write", "read"])
def test_a_failed_copy_says_what_was_asked_of_which_mapping(mapped, recorded, direction):
    name = "gdr_copy_to_mapping" if direction == "write" else "gdr_copy_from_mapping"
    calls = recorded(mapped.pin.gdr._state.lib, name, errno.EINVAL)
    with pytest.raises(gdrcopy.InvalidArgument) as e:
        mapped.write(b"abc", 8) if direction == "write" else mapped.read(3, 8)
    assert len(calls) == 1  # the library keeps no reason for copies: asking again gains nothing
    p = mapped.pin
    assert e.value.function == name
    assert "3 bytes at offset 8" in e.value.reason
    assert f"[{p.ptr:#x}, {p.ptr + p.size:#x})" in e.value.reason


def test_read_rate_quoted_is_the_measured_one():
    # docs/performance.md measured 0.7-1.0 GB/s; docs/python.md quotes it too.
    assert "0.7-1.0 GB/s" in " ".join(gdrcopy.mapping.__doc__.split())
