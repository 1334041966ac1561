# SPDX-License-Identifier: MIT
"""gdrcopy.alloc: the memory it gives, how it is described, and when it is freed."""

import ctypes
import errno
import gc
import threading
import weakref

import numpy as np
import pytest

import gdrcopy
from gdrcopy import _cuda


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



def test_zero_bytes_are_refused_before_cuda():
    with pytest.raises(gdrcopy.InvalidArgument, match="cannot allocate 0 bytes"):
        gdrcopy.alloc(0)


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


def leak_counts(cuda):
    if not cuda.is_sim:
        return None
    counters = cuda.counters()
    return {key: counters[key] for key in ("allocations", "handle_refs", "mappings",
                                           "reservations", "primary_ctx_refs")}


def test_the_allocation_asks_for_what_every_backend_needs(monkeypatch):
    # The POSIX-fd handle type for the vulkan backend, GPUDirect RDMA for gdrdrv: each where
    # the device offers it.
    cu = _cuda.cuda()
    real, asked = cu.cuMemCreate, []

    def create(handle, size, prop, flags):
        p = prop._obj
        asked.append((p.type, p.location.type, p.location.id, p.requestedHandleTypes,
                      p.allocFlags.gpuDirectRDMACapable))
        return real(handle, size, prop, flags)

    monkeypatch.setattr(cu, "cuMemCreate", create)
    gdrcopy.alloc(4096)
    posix = cu.attribute(_cuda.CU_DEVICE_ATTRIBUTE_HANDLE_TYPE_POSIX_FILE_DESCRIPTOR_SUPPORTED, 0)
    rdma = cu.attribute(_cuda.CU_DEVICE_ATTRIBUTE_GPU_DIRECT_RDMA_WITH_CUDA_VMM_SUPPORTED, 0)
    assert asked == [(_cuda.CU_MEM_ALLOCATION_TYPE_PINNED, _cuda.CU_MEM_LOCATION_TYPE_DEVICE, 0,
                      _cuda.CU_MEM_HANDLE_TYPE_POSIX_FILE_DESCRIPTOR if posix else 0,
                      1 if rdma else 0)]


def test_a_granularity_off_the_gpu_page_is_rounded_up_to_it(monkeypatch):
    cu = _cuda.cuda()
    asked = []

    def granularity(out, prop, option):
        out._obj.value = 96 << 10
        return _cuda.CUDA_SUCCESS

    def create(handle, size, prop, flags):
        asked.append(size)
        return _cuda.CUDA_ERROR_OUT_OF_MEMORY  # allocate nothing: only the size is checked

    monkeypatch.setattr(cu, "cuMemGetAllocationGranularity", granularity)
    monkeypatch.setattr(cu, "cuMemCreate", create)
    with pytest.raises(gdrcopy.GdrError) as e:
        gdrcopy.alloc(4096)
    assert e.value.errno == errno.ENOMEM
    assert asked == [128 << 10]


@pytest.mark.parametrize("failing", ["cuMemCreate", "cuMemAddressReserve", "cuMemMap",
                                     "cuMemSetAccess"])
def test_a_failed_step_frees_what_the_steps_before_it_made(cuda, monkeypatch, failing):
    cu = _cuda.cuda()
    before = leak_counts(cuda)
    monkeypatch.setattr(cu, failing, lambda *a: _cuda.CUDA_ERROR_OUT_OF_MEMORY)
    with pytest.raises(gdrcopy.GdrError) as e:
        gdrcopy.alloc(4096)
    monkeypatch.undo()
    assert e.value.errno == errno.ENOMEM and e.value.function.startswith(failing)
    assert "CUDA_ERROR_OUT_OF_MEMORY" in e.value.reason
    assert leak_counts(cuda) == before


@pytest.mark.parametrize("result, err", [
    (_cuda.CUDA_ERROR_INVALID_VALUE, errno.EINVAL), (_cuda.CUDA_ERROR_NOT_FOUND, errno.EINVAL),
    (_cuda.CUDA_ERROR_INVALID_HANDLE, errno.EINVAL), (_cuda.CUDA_ERROR_OUT_OF_MEMORY, errno.ENOMEM),
    (_cuda.CUDA_ERROR_NO_DEVICE, errno.ENODEV), (_cuda.CUDA_ERROR_INVALID_DEVICE, errno.ENODEV),
    (_cuda.CUDA_ERROR_NOT_PERMITTED, errno.EPERM), (_cuda.CUDA_ERROR_NOT_SUPPORTED, errno.ENOTSUP),
    (_cuda.CUDA_ERROR_NOT_INITIALIZED, errno.EIO), (999, errno.EIO),
])
def test_cuda_errors_take_the_librarys_errno(monkeypatch, result, err):
    # As gdr_cuda_errno (src/cuda.c) translates them for the library's own calls.
    monkeypatch.setattr(_cuda.cuda(), "cuMemCreate", lambda *a: result)
    with pytest.raises(gdrcopy.GdrError) as e:
        gdrcopy.alloc(4096)
    assert e.value.errno == err
    assert isinstance(e.value, gdrcopy.InvalidArgument) == (err == errno.EINVAL)


def test_an_unknown_cuda_error_is_described_by_its_number():
    assert _cuda.cuda().describe(12345) == "CUDA error 12345"


def in_a_new_thread(fn):
    """fn() in a thread of its own (one without a current CUDA context); its result, or its
    exception raised here."""
    out = []

    def run():
        try:
            out.append((True, fn()))
        except BaseException as e:  # handed to the caller below
            out.append((False, e))

    t = threading.Thread(target=run)
    t.start()
    t.join()
    ok, value = out[0]
    if not ok:
        raise value
    return value


def current_context():
    ctx = ctypes.c_void_p()
    _cuda.cuda().check(_cuda.cuda().cuCtxGetCurrent(ctypes.byref(ctx)), "cuCtxGetCurrent")
    return ctx.value


def test_a_thread_without_a_context_is_left_without_one():
    def alloc_then_look():
        b = gdrcopy.alloc(4096)
        ctx = current_context()
        del b
        return ctx

    assert in_a_new_thread(alloc_then_look) is None


def test_a_current_context_is_left_current(cuda):
    def alloc_then_look():
        cuda._ctx()  # the primary context of device 0, current in this thread
        b = gdrcopy.alloc(4096)
        ctx = current_context()
        del b
        _cuda.cuda().cuCtxSetCurrent(None)
        return ctx

    assert in_a_new_thread(alloc_then_look) == cuda.primary.value


def test_a_context_that_cannot_be_made_current_is_released(cuda, monkeypatch):
    cu = _cuda.cuda()
    real = cu.cuCtxSetCurrent
    before = leak_counts(cuda)
    monkeypatch.setattr(cu, "cuCtxSetCurrent", lambda ctx: 201 if ctx else real(ctx))
    with pytest.raises(gdrcopy.GdrError) as e:
        in_a_new_thread(lambda: gdrcopy.alloc(4096))
    monkeypatch.undo()
    assert e.value.function == "cuCtxSetCurrent" and "CUDA_ERROR_INVALID_CONTEXT" in e.value.reason
    assert leak_counts(cuda) == before
