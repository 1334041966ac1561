# SPDX-License-Identifier: MIT
"""DLPack both ways: gdrcopy.alloc buffers as capsules a consumer can take (checked field by
field, with the protocol's ownership rules), and pins of objects that offer only DLPack or only
__cuda_array_interface__."""

import ctypes
import gc
import weakref

import numpy as np
import pytest

import gdrcopy
from gdrcopy import _dlpack

capsule_name = ctypes.PYFUNCTYPE(ctypes.c_char_p, ctypes.py_object)(
    ("PyCapsule_GetName", ctypes.pythonapi))
capsule_pointer = ctypes.PYFUNCTYPE(ctypes.c_void_p, ctypes.py_object, ctypes.c_char_p)(
    ("PyCapsule_GetPointer", ctypes.pythonapi))


def managed(capsule, struct):
    name = capsule_name(capsule)
    return name, struct.from_address(capsule_pointer(capsule, name))


def check_tensor(t, buf):
    assert t.data == buf.ptr and t.byte_offset == 0
    assert (t.device.device_type, t.device.device_id) == (_dlpack.KDL_CUDA, 0)
    assert t.ndim == 1 and t.shape[0] == buf.nbytes and not t.strides
    assert (t.dtype.code, t.dtype.bits, t.dtype.lanes) == (_dlpack.KDL_UINT, 8, 1)


def test_legacy_capsule(buf):
    assert buf.__dlpack_device__() == (_dlpack.KDL_CUDA, 0)
    for kwargs in ({}, {"max_version": (0, 8)}, {"stream": -1}):
        capsule = buf.__dlpack__(**kwargs)
        name, m = managed(capsule, _dlpack.DLManagedTensor)
        assert name == b"dltensor"
        check_tensor(m.dl_tensor, buf)


def test_versioned_capsule(buf):
    capsule = buf.__dlpack__(max_version=(1, 2))
    name, m = managed(capsule, _dlpack.DLManagedTensorVersioned)
    assert name == b"dltensor_versioned"
    assert (m.version.major, m.version.minor) == (1, 0) and m.flags == 0
    check_tensor(m.dl_tensor, buf)


def test_refusals(buf):
    with pytest.raises(BufferError):
        buf.__dlpack__(copy=True)
    with pytest.raises(BufferError):
        buf.__dlpack__(dl_device=(_dlpack.KDL_CPU, 0))
    buf.__dlpack__(copy=False, dl_device=(_dlpack.KDL_CUDA, 0))


@pytest.mark.parametrize("versioned", [False, True])
def test_unconsumed_capsule_releases_the_buffer(versioned):
    b = gdrcopy.alloc(4096)
    alive = weakref.ref(b)
    capsule = b.__dlpack__(max_version=(1, 0) if versioned else None)
    del b
    gc.collect()
    assert alive() is not None and _dlpack.live_exports() == 1
    del capsule
    gc.collect()
    assert alive() is None and _dlpack.live_exports() == 0


class DLPackOnly:
    """An object that describes its memory only through DLPack."""

    def __init__(self, buf):
        self.buf = buf

    def __dlpack__(self, **kwargs):
        return self.buf.__dlpack__(**kwargs)

    def __dlpack_device__(self):
        return self.buf.__dlpack_device__()


def test_pin_through_dlpack_and_the_deleter(gdr, buf, cuda):
    with gdr.pin(DLPackOnly(buf)) as p, p.map() as m:
        assert (p.ptr, p.size) == (buf.ptr, buf.nbytes)
        # The pin consumed the capsule: the export lives until the pin releases it.
        assert _dlpack.live_exports() == 1
        m.write(b"via dlpack", 10)
        assert cuda.dtoh(buf.ptr + 10, 10) == b"via dlpack"
    assert _dlpack.live_exports() == 0


def test_pin_of_host_dlpack_is_refused(gdr):
    with pytest.raises(gdrcopy.InvalidArgument, match="not CUDA device memory"):
        gdr.pin(np.zeros(1024, dtype=np.uint8))


class ArrayInterface:
    def __init__(self, ptr, shape, typestr, strides=None, mask=None):
        self.__cuda_array_interface__ = {"shape": shape, "typestr": typestr,
                                         "data": (ptr, False), "version": 3,
                                         "strides": strides, "mask": mask}


def test_pin_through_cuda_array_interface(gdr, buf, cuda):
    view = ArrayInterface(buf.ptr + 256, (16, 4), "<f4", strides=(16, 4))
    with gdr.pin(view) as p, p.map() as m:
        assert (p.ptr, p.size) == (buf.ptr + 256, 256)
        values = np.arange(64, dtype=np.float32)
        m.write(values)
        assert cuda.dtoh(buf.ptr + 256, 256) == values.tobytes()


@pytest.mark.parametrize("kwargs, match", [
    ({"strides": (32, 4)}, "not contiguous"),
    ({"mask": object()}, "masked"),
    ({"typestr": "f4"}, "typestr"),
])
def test_cuda_array_interface_refusals(gdr, buf, kwargs, match):
    args = {"ptr": buf.ptr, "shape": (16, 4), "typestr": "<f4", **kwargs}
    with pytest.raises(gdrcopy.InvalidArgument, match=match):
        gdr.pin(ArrayInterface(**args))
