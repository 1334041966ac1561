# SPDX-License-Identifier: MIT
"""DLPack both ways: gdrcopy.alloc buffers as capsules a consumer can take (checked field by
field, with the protocol's ownership rules), and pins of objects that offer only DLPack or only
__cuda_array_interface__."""

import ctypes
import errno
import gc
import os
import subprocess
import sys
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


# The array API standard's __dlpack__ arguments: copy is None, True or False; max_version a
# (major, minor) tuple of ints; dl_device a (device_type, device_id) tuple of ints; stream, for
# CUDA memory, None or an int of -1 (no synchronisation), 1, 2 or a stream handle (0 is
# ambiguous). Anything else is refused by name, before a capsule is made.
def arguments_id(kwargs):
    # The type too: copy=1 and copy=numpy.int64(1) have the same repr.
    return "-".join(f"{k}={v!r}:{type(v).__name__}" for k, v in kwargs.items())


def bad(kwargs, error, match):
    return pytest.param(kwargs, error, match, id=arguments_id(kwargs))


@pytest.mark.parametrize("kwargs, error, match", [
    bad({"copy": 1}, TypeError, r"copy must be None, True or False, not int \(1\)"),
    bad({"copy": 0}, TypeError, r"copy must be None, True or False, not int \(0\)"),
    bad({"copy": "no"}, TypeError, r"copy must be None, True or False, not str \('no'\)"),
    bad({"copy": ""}, TypeError, r"copy must be None, True or False, not str"),
    bad({"copy": np.int64(1)}, TypeError, r"copy must be None, True or False, not int64"),
    bad({"max_version": True}, TypeError, r"max_version must be None or a \(major, minor\) "
        r"tuple of ints, not bool"),
    bad({"max_version": (1,)}, ValueError, r"max_version must be a \(major, minor\) tuple, not "
        r"\(1,\)"),
    bad({"max_version": (1, 0, 0)}, ValueError, r"max_version must be a \(major, minor\)"),
    bad({"max_version": "1.0"}, TypeError, r"max_version must be None or a \(major, minor\)"),
    bad({"max_version": [1, 0]}, TypeError, r"max_version must be None or a \(major, minor\) "
        r"tuple of ints, not list"),
    bad({"max_version": (1.0, 0)}, TypeError, r"max_version\[0\] must be an integer, not float"),
    bad({"max_version": (1, True)}, TypeError, r"max_version\[1\] must be an integer, not bool"),
    bad({"max_version": (-1, 0)}, ValueError, r"max_version \(-1, 0\) is not a version"),
    bad({"dl_device": True}, TypeError, r"dl_device must be None or a \(device_type, "
        r"device_id\) tuple of ints, not bool"),
    bad({"dl_device": "cuda"}, TypeError, r"dl_device must be None or a \(device_type, "
        r"device_id\)"),
    bad({"dl_device": (2,)}, ValueError, r"dl_device must be a \(device_type, device_id\) "
        r"tuple, not \(2,\)"),
    bad({"dl_device": (2, 0, 0)}, ValueError, r"dl_device must be a \(device_type, device_id\)"),
    bad({"dl_device": (2.0, 0)}, TypeError, r"dl_device\[0\] must be an integer, not float"),
    bad({"dl_device": (2, None)}, TypeError, r"dl_device\[1\] must be an integer, not NoneType"),
    bad({"stream": 0}, ValueError, r"stream 0 is ambiguous"),
    bad({"stream": -2}, ValueError, r"stream -2 is not a CUDA stream"),
    bad({"stream": 1 << 64}, ValueError, r"stream 18446744073709551616 is not a CUDA stream"),
    bad({"stream": True}, TypeError, r"stream must be an integer, not bool"),
    bad({"stream": 1.0}, TypeError, r"stream must be an integer, not float"),
    bad({"stream": "1"}, TypeError, r"stream must be an integer, not str"),
])
def test_bad_export_arguments_are_refused_by_name(buf, kwargs, error, match):
    before = _dlpack.live_exports()
    with pytest.raises(error, match=match) as e:
        buf.__dlpack__(**kwargs)
    assert "DeviceBuffer.__dlpack__" in str(e.value)
    assert _dlpack.live_exports() == before


@pytest.mark.parametrize("kwargs", [
    {"copy": None}, {"copy": False}, {"copy": np.False_},
    {"max_version": None}, {"max_version": (0, 8)}, {"max_version": (np.int64(1), 3)},
    {"dl_device": None}, {"dl_device": (np.int32(_dlpack.KDL_CUDA), np.int64(0))},
    {"stream": None}, {"stream": -1}, {"stream": 1}, {"stream": 2}, {"stream": 0x7f0012345678},
    {"stream": np.int64(3)}, {"stream": (1 << 64) - 1},
    {"copy": False, "dl_device": (_dlpack.KDL_CUDA, 0), "stream": -1, "max_version": (1, 0)},
], ids=arguments_id)
def test_good_export_arguments_are_taken(buf, kwargs):
    capsule = buf.__dlpack__(**kwargs)
    versioned = (kwargs.get("max_version") or (0, 0))[0] >= 1
    struct = _dlpack.DLManagedTensorVersioned if versioned else _dlpack.DLManagedTensor
    name, m = managed(capsule, struct)
    assert name == (_dlpack.VERSIONED_NAME if versioned else _dlpack.LEGACY_NAME)
    check_tensor(m.dl_tensor, buf)


@pytest.mark.parametrize("kwargs, match", [
    ({"copy": True}, r"never copied \(copy=True\)"),
    ({"copy": np.True_}, r"never copied \(copy=True\)"),
    ({"dl_device": (_dlpack.KDL_CPU, 0)}, r"lives on \(2, 0\), not \(1, 0\)"),
    ({"dl_device": (_dlpack.KDL_CUDA, 1)}, r"lives on \(2, 0\), not \(2, 1\)"),
], ids=lambda v: arguments_id(v) if isinstance(v, dict) else "match")
def test_requests_the_memory_cannot_meet_are_buffer_errors(buf, kwargs, match):
    before = _dlpack.live_exports()
    with pytest.raises(BufferError, match=match):
        buf.__dlpack__(**kwargs)
    assert _dlpack.live_exports() == before


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


class LyingDLPack(DLPackOnly):
    """A producer whose capsule, or whose __dlpack_device__, says something else than buf's:
    edit(dl_tensor) changes the capsule's tensor, device replaces __dlpack_device__'s answer."""

    def __init__(self, buf, edit=None, device=None):
        super().__init__(buf)
        self.edit = edit
        self.device = device
        self.kept = []  # arrays the edited tensors point to

    def __dlpack__(self, **kwargs):
        capsule = self.buf.__dlpack__(**kwargs)
        name = capsule_name(capsule)
        struct = (_dlpack.DLManagedTensorVersioned if name == _dlpack.VERSIONED_NAME
                  else _dlpack.DLManagedTensor)
        self.edit(managed(capsule, struct)[1].dl_tensor, self.kept)
        return capsule

    def __dlpack_device__(self):
        return self.device if self.device is not None else self.buf.__dlpack_device__()


class FutureDLPack(DLPackOnly):
    """A producer of a versioned capsule of DLPack 2.0, whose layout this package cannot know."""

    def __dlpack__(self, **kwargs):
        capsule = self.buf.__dlpack__(**kwargs)
        managed(capsule, _dlpack.DLManagedTensorVersioned)[1].version.major = 2
        return capsule


def with_shape(*extents):
    def edit(tensor, kept):
        shape = (ctypes.c_int64 * len(extents))(*extents)
        kept.append(shape)
        tensor.ndim, tensor.shape = len(extents), shape
    return edit


def with_field(name, value):
    return lambda tensor, kept: setattr(tensor, name, value)


def on_device(device_type, device_id):
    return with_field("device", _dlpack.DLDevice(device_type, device_id))


@pytest.mark.parametrize("producer, error, match", [
    (lambda b: LyingDLPack(b, with_shape(-2, -2048)), gdrcopy.InvalidArgument,
     r"shape \[-2, -2048\] has a negative extent"),
    (lambda b: LyingDLPack(b, with_field("ndim", -1)), gdrcopy.InvalidArgument,
     r"tensor has -1 dimensions"),
    (lambda b: LyingDLPack(b, with_field("shape", None)), gdrcopy.InvalidArgument,
     r"tensor has 1 dimension but no shape"),
    (lambda b: LyingDLPack(b, on_device(_dlpack.KDL_CPU, 0)), gdrcopy.InvalidArgument,
     r"the capsule's tensor is on DLPack device type 1, not CUDA device memory"),
    (lambda b: LyingDLPack(b, device=(2,)), ValueError,
     r"__dlpack_device__\(\) must be a \(device_type, device_id\) tuple, not \(2,\)"),
    (lambda b: LyingDLPack(b, device=(True, 0)), TypeError,
     r"__dlpack_device__\(\)\[0\] must be an integer, not bool"),
    (lambda b: LyingDLPack(b, device="cuda:0"), TypeError,
     r"__dlpack_device__\(\) must be a \(device_type, device_id\) tuple of ints, not str"),
    (lambda b: LyingDLPack(b, with_field("dtype", _dlpack.DLDataType(_dlpack.KDL_UINT, 4, 1))),
     gdrcopy.InvalidArgument, r"DLPack elements of 4 bits are not whole bytes"),
    (lambda b: LyingDLPack(b, with_shape(0)), gdrcopy.InvalidArgument,
     r"nothing to pin: address 0x[0-9a-f]+, 0 bytes"),
    (lambda b: LyingDLPack(b, with_field("data", (1 << 64) - 4096)), gdrcopy.InvalidArgument,
     r"65536 bytes at 0xfffffffffffff000 run past the end of the 64-bit address space"),
    (lambda b: FutureDLPack(b), gdrcopy.InvalidArgument,
     r"DLPack version 2\.0 is not supported \(1\.x is\)"),
], ids=["negative-extents", "negative-ndim", "no-shape", "capsule-on-cpu", "device-1-tuple",
        "device-bool", "device-str", "half-bytes", "empty", "past-64-bits", "version-2"])
def test_a_lying_dlpack_producer_is_refused_and_its_capsule_released(gdr, buf, producer, error,
                                                                     match):
    with pytest.raises(error, match=match):
        gdr.pin(producer(buf))
    gc.collect()  # the capsule refused unconsumed is freed by its destructor
    assert _dlpack.live_exports() == 0
    with gdr.pin(buf) as p:  # nothing was pinned
        assert p.size == buf.nbytes


class CPUDLPack(DLPackOnly):
    """A producer whose memory is on the CPU by __dlpack_device__: no capsule needs asking for."""

    def __init__(self, buf):
        super().__init__(buf)
        self.asked = 0

    def __dlpack__(self, **kwargs):
        self.asked += 1
        return super().__dlpack__(**kwargs)

    def __dlpack_device__(self):
        return (_dlpack.KDL_CPU, 0)


def test_host_memory_by_its_device_is_refused_before_its_capsule(gdr, buf):
    producer = CPUDLPack(buf)
    with pytest.raises(gdrcopy.InvalidArgument, match="DLPack device type 1 is not CUDA device "
                       "memory"):
        gdr.pin(producer)
    assert producer.asked == 0


def test_a_tensor_at_a_byte_offset_is_pinned_from_there(gdr, buf, cuda):
    def edit(tensor, kept):
        with_shape(4096)(tensor, kept)
        tensor.byte_offset = 8192

    with gdr.pin(LyingDLPack(buf, edit)) as p, p.map() as m:
        assert (p.ptr, p.size) == (buf.ptr + 8192, 4096)
        m.write(b"at the offset")
        assert cuda.dtoh(buf.ptr + 8192, 13) == b"at the offset"
    assert _dlpack.live_exports() == 0


def test_a_failed_pin_gives_the_capsule_back(gdr, buf, monkeypatch):
    monkeypatch.setattr(gdr._state.lib, "gdr_pin_buffer_v2", lambda *a: errno.ENOMEM)
    with pytest.raises(gdrcopy.GdrError) as e:
        gdr.pin(DLPackOnly(buf))
    assert e.value.errno == errno.ENOMEM
    assert _dlpack.live_exports() == 0  # the deleter ran: the producer's memory is let go


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


class ReadOnlyDLPack(DLPackOnly):
    """A DLPack 1.0 producer that marks its tensor read-only (a versioned capsule only)."""

    def __init__(self, buf):
        super().__init__(buf)
        self.asked = []

    def __dlpack__(self, **kwargs):
        self.asked.append(kwargs)
        capsule = self.buf.__dlpack__(**kwargs)
        if capsule_name(capsule) == _dlpack.VERSIONED_NAME:
            managed(capsule, _dlpack.DLManagedTensorVersioned)[1].flags |= \
                _dlpack.FLAG_READ_ONLY
        return capsule


class LegacyDLPack(DLPackOnly):
    """A producer older than DLPack 1.0: __dlpack__ takes only stream."""

    def __dlpack__(self, stream=None):
        return self.buf.__dlpack__()


def check_read_only(gdr, obj, buf, cuda):
    cuda.htod(buf.ptr, b"original")
    with gdr.pin(obj) as p, p.map() as m:
        with pytest.raises(gdrcopy.GdrError) as e:
            m.write(b"changed!")
        assert e.value.errno == errno.EACCES and "read-only" in e.value.reason
        assert m.read(8) == b"original"
        assert p.readonly
    assert cuda.dtoh(buf.ptr, 8) == b"original"


def test_read_only_dlpack_memory_is_mapped_for_reading_only(gdr, buf, cuda):
    producer = ReadOnlyDLPack(buf)
    check_read_only(gdr, producer, buf, cuda)
    assert producer.asked == [{"max_version": (1, 0)}]
    assert _dlpack.live_exports() == 0


def test_read_only_cuda_array_interface_memory_is_mapped_for_reading_only(gdr, buf, cuda):
    view = ArrayInterface(buf.ptr, (buf.nbytes,), "|u1")
    view.__cuda_array_interface__["data"] = (buf.ptr, True)
    check_read_only(gdr, view, buf, cuda)


def test_writable_memory_stays_writable(gdr, buf):
    for obj in (buf, DLPackOnly(buf), LegacyDLPack(buf)):
        with gdr.pin(obj) as p, p.map() as m:
            assert not p.readonly
            assert m.write(b"ok") == 2


def test_capsules_alive_at_exit_end_quietly():
    # Capsules that outlive the package's modules are destroyed at the interpreter's very end,
    # after the modules' globals are gone (sys's names with a leading underscore go last).
    code = ("import sys, gdrcopy\n"
            "b = gdrcopy.alloc(4096)\n"
            "sys._kept_capsules = [b.__dlpack__(), b.__dlpack__(max_version=(1, 0))]\n"
            "print('exiting')\n")
    r = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                       timeout=120, env=os.environ.copy())
    assert (r.returncode, r.stdout, r.stderr) == (0, "exiting\n", "")
