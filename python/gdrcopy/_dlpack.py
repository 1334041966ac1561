# SPDX-License-Identifier: MIT
"""DLPack in pure Python: export device memory as a capsule, and borrow the memory of a capsule.

The structures and capsule names are DLPack's (dlpack.h, version 1.0). Both directions keep to
the protocol's ownership rule: whoever holds an unconsumed capsule frees it through the capsule
destructor; a consumer renames the capsule to "used_..." and calls the managed tensor's deleter
when it is done with the memory.
"""

import ctypes

from ._integers import as_int, is_bool
from .errors import InvalidArgument

KDL_CPU = 1
KDL_CUDA = 2
KDL_CUDA_HOST = 3
KDL_CUDA_MANAGED = 13
KDL_UINT = 1

LEGACY_NAME = b"dltensor"
LEGACY_USED_NAME = b"used_dltensor"
VERSIONED_NAME = b"dltensor_versioned"
VERSIONED_USED_NAME = b"used_dltensor_versioned"
VERSION = (1, 0)
FLAG_READ_ONLY = 1 << 0  # DLPACK_FLAG_BITMASK_READ_ONLY
# __dlpack__'s stream for CUDA memory, as the array API standard numbers it: -1 asks for no
# synchronisation, 0 is refused (it could mean the legacy or the per-thread default stream),
# 1 is the legacy and 2 the per-thread default stream, larger values a cudaStream_t.
STREAM_NO_SYNC = -1
STREAM_AMBIGUOUS = 0
STREAM_HANDLE_END = 1 << 64


class DLDevice(ctypes.Structure):
    _fields_ = [("device_type", ctypes.c_int32), ("device_id", ctypes.c_int32)]


class DLDataType(ctypes.Structure):
    _fields_ = [("code", ctypes.c_uint8), ("bits", ctypes.c_uint8), ("lanes", ctypes.c_uint16)]


class DLTensor(ctypes.Structure):
    _fields_ = [
        ("data", ctypes.c_void_p),
        ("device", DLDevice),
        ("ndim", ctypes.c_int32),
        ("dtype", DLDataType),
        ("shape", ctypes.POINTER(ctypes.c_int64)),
        ("strides", ctypes.POINTER(ctypes.c_int64)),
        ("byte_offset", ctypes.c_uint64),
    ]


# Both managed-tensor flavours' deleters take a pointer to their own struct.
Deleter = ctypes.CFUNCTYPE(None, ctypes.c_void_p)


class DLManagedTensor(ctypes.Structure):
    _fields_ = [("dl_tensor", DLTensor), ("manager_ctx", ctypes.c_void_p),
                ("deleter", ctypes.c_void_p)]


class DLPackVersion(ctypes.Structure):
    _fields_ = [("major", ctypes.c_uint32), ("minor", ctypes.c_uint32)]


class DLManagedTensorVersioned(ctypes.Structure):
    _fields_ = [("version", DLPackVersion), ("manager_ctx", ctypes.c_void_p),
                ("deleter", ctypes.c_void_p), ("flags", ctypes.c_uint64),
                ("dl_tensor", DLTensor)]


def _capi(name, restype, *argtypes):
    """A Python C API function with its own prototype (never ctypes.pythonapi's shared one,
    whose argtypes other code may set differently)."""
    return ctypes.PYFUNCTYPE(restype, *argtypes)((name, ctypes.pythonapi))


_capsule_new = _capi("PyCapsule_New", ctypes.py_object, ctypes.c_void_p, ctypes.c_char_p,
                     ctypes.c_void_p)
# The destructor gets the dying capsule: it must be passed as a plain pointer, never as a
# py_object (which would take a reference to an object being freed).
_capsule_is_valid = _capi("PyCapsule_IsValid", ctypes.c_int, ctypes.c_void_p, ctypes.c_char_p)
_capsule_get_pointer = _capi("PyCapsule_GetPointer", ctypes.c_void_p, ctypes.c_void_p,
                             ctypes.c_char_p)
_capsule_set_name = _capi("PyCapsule_SetName", ctypes.c_int, ctypes.py_object, ctypes.c_char_p)

# Exported managed tensors still alive, by address: each entry keeps its struct, its shape and
# the memory's owner alive until the deleter (consumer) or the capsule destructor (no consumer)
# removes it. Single dict operations need no lock.
_exported = {}


# The two callbacks below may run at interpreter exit, for a capsule or a consumer that outlives
# this module: after the module's globals are cleared, and after the module itself is gone. So
# they use only what their defaults bind, and are kept alive for good (_keep_forever): freeing
# a ctypes callback that C still points to would crash the exit.
def _delete_exported(address, _exported=_exported):
    _exported.pop(address, None)


def _destroy_capsule(capsule, _names=(LEGACY_NAME, VERSIONED_NAME), _exported=_exported,
                     _is_valid=_capsule_is_valid, _get_pointer=_capsule_get_pointer):
    for name in _names:
        if _is_valid(capsule, name):
            _exported.pop(_get_pointer(capsule, name), None)
            return


_keep_forever = _capi("Py_IncRef", None, ctypes.py_object)
_delete_exported = Deleter(_delete_exported)
_destroy_capsule = ctypes.CFUNCTYPE(None, ctypes.c_void_p)(_destroy_capsule)
_keep_forever(_delete_exported)
_keep_forever(_destroy_capsule)


def int_pair(value, name, shape, function, optional=False):
    """value as a tuple of two ints, the standard's (major, minor) or (device_type, device_id):
    a tuple only, as the standard writes it (a list or a string is a mistake in the caller).
    optional: the argument may also be None (said in the error)."""
    if not isinstance(value, tuple):
        raise TypeError(f"{function}: {name} must be {'None or ' if optional else ''}a {shape} "
                        f"tuple of ints, not {type(value).__name__} ({value!r})")
    if len(value) != 2:
        raise ValueError(f"{function}: {name} must be a {shape} tuple, not {value!r}")
    return tuple(as_int(v, f"{name}[{i}]", function) for i, v in enumerate(value))


def export_arguments(function, device, stream, max_version, dl_device, copy):
    """Check __dlpack__'s arguments for memory on device, a CUDA (device_type, device_id), as
    the array API standard defines them, before anything is exported; returns whether the
    consumer takes a versioned capsule. A value the standard does not allow is a TypeError or
    ValueError; a request this memory cannot meet (a copy, another device) a BufferError.
    NumPy's bools pass as bools for copy (NumPy's own copy arguments take them)."""
    if copy is not None and not is_bool(copy):
        raise TypeError(f"{function}: copy must be None, True or False, not "
                        f"{type(copy).__name__} ({copy!r})")
    if max_version is not None:
        max_version = int_pair(max_version, "max_version", "(major, minor)", function, True)
        if min(max_version) < 0:
            raise ValueError(f"{function}: max_version {max_version} is not a version")
    if dl_device is not None:
        dl_device = int_pair(dl_device, "dl_device", "(device_type, device_id)", function, True)
    if stream is not None:
        stream = as_int(stream, "stream", function)
        if stream == STREAM_AMBIGUOUS:
            raise ValueError(f"{function}: stream 0 is ambiguous for CUDA (the legacy or the "
                             f"per-thread default stream?): pass 1 (legacy), 2 (per-thread), "
                             f"a stream handle, or -1 (no synchronisation)")
        if not STREAM_NO_SYNC <= stream < STREAM_HANDLE_END:
            raise ValueError(f"{function}: stream {stream} is not a CUDA stream: pass None, "
                             f"-1 (no synchronisation), 1 (legacy default), 2 (per-thread "
                             f"default) or a stream handle")
    if copy:
        raise BufferError(f"{function}: the memory is shared, never copied (copy=True)")
    if dl_device is not None and dl_device != tuple(device):
        raise BufferError(f"{function}: the memory lives on {tuple(device)}, not {dl_device}, "
                          f"and is never copied")
    return max_version is not None and max_version[0] >= VERSION[0]


def export(owner, ptr, nbytes, device_type, device_id, versioned):
    """A capsule for nbytes of uint8 at ptr, keeping owner alive while a consumer uses it."""
    shape = (ctypes.c_int64 * 1)(nbytes)
    managed = DLManagedTensorVersioned() if versioned else DLManagedTensor()
    tensor = managed.dl_tensor
    tensor.data = ptr
    tensor.device = DLDevice(device_type, device_id)
    tensor.ndim = 1
    tensor.dtype = DLDataType(KDL_UINT, 8, 1)
    tensor.shape = shape
    managed.deleter = ctypes.cast(_delete_exported, ctypes.c_void_p)
    if versioned:
        managed.version = DLPackVersion(*VERSION)
    address = ctypes.addressof(managed)
    _exported[address] = (managed, shape, owner)
    try:
        return _capsule_new(address, VERSIONED_NAME if versioned else LEGACY_NAME,
                                  ctypes.cast(_destroy_capsule, ctypes.c_void_p))
    except BaseException:
        del _exported[address]
        raise


def live_exports():
    """How many exported managed tensors are not yet released (for tests)."""
    return len(_exported)


def compact_strides(shape, strides, unit=1):
    """Whether strides (None: the producer's "compact") lay shape out C-contiguously, counted
    in units of unit: DLPack's in elements, __cuda_array_interface__'s in bytes (the item size).
    An extent of 1 may have any stride."""
    if not strides:
        return True
    expected = unit
    for extent, stride in zip(reversed(shape), reversed(strides)):
        if extent > 1 and stride != expected:
            return False
        expected *= extent
    return True


class Borrowed:
    """Memory described by a consumed capsule: ptr, nbytes, whether the producer marked it
    read-only, and release() for the deleter."""

    def __init__(self, ptr, nbytes, readonly, device_type, device_id, address, deleter):
        self.ptr = ptr
        self.nbytes = nbytes
        self.readonly = readonly
        self.device_type = device_type
        self.device_id = device_id
        self._address = address
        self._deleter = deleter

    def release(self):
        deleter, self._deleter = self._deleter, None
        if deleter:
            Deleter(deleter)(self._address)


def borrow(obj, function):
    """Consume obj.__dlpack__()'s capsule: the memory it describes, as one contiguous range."""
    try:
        # A versioned capsule, where the producer can make it one: only that one says
        # whether the memory is read-only.
        capsule = obj.__dlpack__(max_version=VERSION)
    except TypeError:
        capsule = obj.__dlpack__()  # a producer older than DLPack 1.0 takes no max_version
    readonly = False
    if _capsule_is_valid(id(capsule), LEGACY_NAME):
        name, used = LEGACY_NAME, LEGACY_USED_NAME
        address = _capsule_get_pointer(id(capsule), name)
        managed = DLManagedTensor.from_address(address)
    elif _capsule_is_valid(id(capsule), VERSIONED_NAME):
        name, used = VERSIONED_NAME, VERSIONED_USED_NAME
        address = _capsule_get_pointer(id(capsule), name)
        managed = DLManagedTensorVersioned.from_address(address)
        if managed.version.major != VERSION[0]:
            raise InvalidArgument(function, f"DLPack version {managed.version.major}."
                                  f"{managed.version.minor} is not supported (1.x is)")
        readonly = bool(managed.flags & FLAG_READ_ONLY)
    else:
        raise TypeError(f"{function}: {type(obj).__name__}.__dlpack__() returned "
                        f"{type(capsule).__name__}, not a DLPack capsule")
    tensor = managed.dl_tensor
    # The producer's struct is read as it is: a count or a shape that no tensor has would
    # otherwise describe other memory (negative extents multiply to a positive size).
    if tensor.ndim < 0:
        raise InvalidArgument(function, f"the DLPack tensor has {tensor.ndim} dimensions")
    if tensor.ndim and not tensor.shape:
        raise InvalidArgument(function, f"the DLPack tensor has {tensor.ndim} dimension"
                              f"{'s' if tensor.ndim > 1 else ''} but no shape")
    shape = [tensor.shape[i] for i in range(tensor.ndim)]
    if any(extent < 0 for extent in shape):
        raise InvalidArgument(function, f"the DLPack tensor's shape {shape} has a negative "
                              f"extent")
    strides = [tensor.strides[i] for i in range(tensor.ndim)] if tensor.strides else None
    bits = tensor.dtype.bits * tensor.dtype.lanes
    if bits % 8:
        raise InvalidArgument(function, f"DLPack elements of {bits} bits are not whole bytes")
    if not compact_strides(shape, strides):
        raise InvalidArgument(function, f"the DLPack tensor is not contiguous (shape {shape}, "
                              f"strides {strides}); pin a contiguous tensor")
    nbytes = bits // 8
    for extent in shape:
        nbytes *= extent
    borrowed = Borrowed((tensor.data or 0) + tensor.byte_offset, nbytes, readonly,
                        tensor.device.device_type, tensor.device.device_id, address,
                        managed.deleter)
    if _capsule_set_name(capsule, used):
        raise RuntimeError(f"{function}: renaming the DLPack capsule failed")
    return borrowed
