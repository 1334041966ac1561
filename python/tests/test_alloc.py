# SPDX-License-Identifier: MIT
"""gdrcopy.alloc: the memory it gives, how it is described, and when it is freed."""

import errno
import gc
import weakref

import numpy as np
import pytest

import gdrcopy


@pytest.mark.parametrize("nbytes", [1, 4096, 2 << 20, (2 << 20) + 1])
def test_sizes_and_alignment(nbytes):
    b = gdrcopy.alloc(nbytes)
    assert b.nbytes == len(b) == nbytes
    assert b.allocation_size >= nbytes and b.allocation_size % (64 << 10) == 0
    assert b.ptr % (64 << 10) == 0
    assert b.device == 0


def test_every_byte_is_mappable(gdr):
    b = gdrcopy.alloc(3 << 20)
    with gdr.pin(b) as p, p.map() as m:
        m.write(b"end", b.nbytes - 3)
        assert m.read(3, b.nbytes - 3) == b"end"


def test_cuda_array_interface():
    b = gdrcopy.alloc(100)
    cai = b.__cuda_array_interface__
    assert cai["shape"] == (100,) and cai["typestr"] == "|u1"
    assert cai["data"] == (b.ptr, False) and cai["version"] == 3
    assert cai["strides"] is None and cai["stream"] is None


def test_freed_when_the_object_goes(sim):
    before = sim.counters()
    b = gdrcopy.alloc(4096)
    during = sim.counters()
    assert during["allocations"] == before["allocations"] + 1
    assert during["vulkan_backed"] == before["vulkan_backed"] + 1
    gone = weakref.ref(b)
    del b
    gc.collect()
    assert gone() is None
    assert sim.counters()["allocations"] == before["allocations"]


@pytest.mark.parametrize("args, kind", [
    ((0,), gdrcopy.InvalidArgument),
    ((-5,), gdrcopy.InvalidArgument),
    (("4096",), TypeError),
    ((4096, -1), gdrcopy.InvalidArgument),
    ((4096, "cuda:0"), TypeError),
])
def test_bad_arguments(args, kind):
    with pytest.raises(kind):
        gdrcopy.alloc(*args)



def test_numpy_integers():
    # As pin() and the copies take them: a size computed with NumPy (np.prod(shape) * 4).
    b = gdrcopy.alloc(np.int64(4096), device=np.int32(0))
    assert (b.nbytes, b.device) == (4096, 0)
    assert type(b.nbytes) is int and type(b.device) is int


@pytest.mark.parametrize("device", [1 << 31, 1 << 32, (1 << 64) + 1])
def test_device_past_a_c_int_is_refused(cuda, device):
    # CUDA takes the device as a C int: ctypes would keep the low bits and allocate on
    # another device (1 << 32 on device 0) than the buffer then reports.
    before = cuda.counters()["allocations"] if cuda.is_sim else None
    with pytest.raises(gdrcopy.InvalidArgument, match=f"no CUDA device {device}"):
        gdrcopy.alloc(4096, device=device)
    if cuda.is_sim:
        assert cuda.counters()["allocations"] == before

def test_no_such_device():
    with pytest.raises(gdrcopy.GdrError) as e:
        gdrcopy.alloc(4096, device=7)
    assert e.value.errno == errno.ENODEV
    assert "CUDA_ERROR_INVALID_DEVICE" in e.value.reason


@pytest.mark.parametrize("nbytes", [(1 << 64) + 1, 1 << 64, (1 << 64) - 1])
def test_sizes_past_64_bits_are_refused(cuda, nbytes):
    # ctypes would keep only the low 64 bits of the (rounded) size and allocate that little.
    before = cuda.counters()["allocations"] if cuda.is_sim else None
    with pytest.raises(gdrcopy.InvalidArgument, match="64-bit size"):
        gdrcopy.alloc(nbytes)
    if cuda.is_sim:
        assert cuda.counters()["allocations"] == before
