# SPDX-License-Identifier: MIT
"""Which device memory a pin covers: (device_ptr, size), or an object that describes its memory
through __cuda_array_interface__ (CuPy, PyTorch, Numba, gdrcopy.alloc) or DLPack."""

from . import _dlpack
from ._array_interface import device_bytes
from ._integers import as_int, is_integral
from .errors import InvalidArgument

_FUNCTION = "pin"
# The library takes addresses and sizes as 64-bit C integers; ctypes would keep only the low 64
# bits of a larger Python int, and pin something else than was asked.
_ADDRESS_END = 1 << 64


class DeviceRange:
    """ptr and size of the memory, whether its owner marked it read-only; owner and borrowed
    are kept until the pin is released."""

    def __init__(self, ptr, size, owner=None, borrowed=None, readonly=False):
        self.ptr = ptr
        self.size = size
        self.owner = owner
        self.borrowed = borrowed
        self.readonly = readonly

    def release(self):
        if self.borrowed is not None:
            self.borrowed.release()
            self.borrowed = None
        self.owner = None


def _from_array_interface(obj, cai):
    ptr, size, readonly = device_bytes(cai, _FUNCTION)
    return DeviceRange(ptr, size, owner=obj, readonly=readonly)


_PINNABLE = (_dlpack.KDL_CUDA, _dlpack.KDL_CUDA_MANAGED)


def _from_dlpack(obj):
    device_type, _ = _dlpack.int_pair(obj.__dlpack_device__(), "__dlpack_device__()",
                                      "(device_type, device_id)", _FUNCTION)
    if device_type not in _PINNABLE:
        raise InvalidArgument(_FUNCTION, f"DLPack device type {device_type} is not CUDA device "
                              f"memory; only GPU memory can be pinned")
    borrowed = _dlpack.borrow(obj, _FUNCTION)
    # What the capsule says counts: __dlpack_device__ only announced it.
    if borrowed.device_type not in _PINNABLE:
        borrowed.release()
        raise InvalidArgument(_FUNCTION, f"{type(obj).__name__}.__dlpack_device__() said "
                              f"{device_type}, but the capsule's tensor is on DLPack device "
                              f"type {borrowed.device_type}, not CUDA device memory")
    return DeviceRange(borrowed.ptr, borrowed.nbytes, owner=obj, borrowed=borrowed,
                       readonly=borrowed.readonly)


def device_range(obj, size=None):
    """The DeviceRange of pin(obj) or pin(device_ptr, size)."""
    if is_integral(obj):
        ptr = as_int(obj, "device_ptr", _FUNCTION)
        if size is None:
            raise TypeError("pin(device_ptr, size): give the size of the range at device_ptr")
        found = DeviceRange(ptr, as_int(size, "size", _FUNCTION))
    elif size is not None:
        raise TypeError("pin(obj) takes its size from obj; pass a size only with a device "
                        "pointer")
    elif hasattr(obj, "__cuda_array_interface__"):
        found = _from_array_interface(obj, obj.__cuda_array_interface__)
    elif hasattr(obj, "__dlpack__") and hasattr(obj, "__dlpack_device__"):
        found = _from_dlpack(obj)
    else:
        raise TypeError(f"pin: {type(obj).__name__} is not GPU memory: pass an object with "
                        f"__cuda_array_interface__ or DLPack (a CUDA tensor, a CuPy array, "
                        f"gdrcopy.alloc()), or (device_ptr, size)")
    if found.ptr <= 0 or found.size <= 0:
        found.release()
        raise InvalidArgument(_FUNCTION, f"nothing to pin: address {found.ptr:#x}, "
                              f"{found.size} bytes")
    if found.ptr + found.size > _ADDRESS_END:
        found.release()
        raise InvalidArgument(_FUNCTION, f"{found.size} bytes at {found.ptr:#x} run past the "
                              f"end of the 64-bit address space")
    return found
