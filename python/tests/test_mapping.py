# SPDX-License-Identifier: MIT
"""Mapping.write and Mapping.read: data, bounds, buffer kinds, and what the GPU side sees."""

import array
import os

import numpy as np
import pytest

import gdrcopy

GUARD = b"\x5a" * 64


@pytest.fixture
def mapped(gdr, buf):
    with gdr.pin(buf) as p, p.map() as m:
        yield m


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
def test_out_of_range_changes_nothing(mapped, cuda, offset, n):
    before = cuda.dtoh(mapped.pin.ptr, 65536)
    with pytest.raises(gdrcopy.InvalidArgument, match="do not fit"):
        mapped.write(b"\xff" * n, offset)
    with pytest.raises(gdrcopy.InvalidArgument):
        mapped.read(n, offset)
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
