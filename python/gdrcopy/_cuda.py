# SPDX-License-Identifier: MIT
"""The slice of the CUDA driver API (libcuda.so.1, through ctypes) that gdrcopy.alloc needs.

libcuda is the same library libgdrapi dlopens; the names are the versioned ones cuda.h maps the
calls to. CUDA errors become GdrError with the nearest errno and CUDA's own name and text.
"""

import ctypes
import errno

from ._lifetime import Once
from .errors import error

CUDA_SUCCESS = 0
CUDA_ERROR_INVALID_VALUE = 1
CUDA_ERROR_OUT_OF_MEMORY = 2
CUDA_ERROR_NOT_INITIALIZED = 3
CUDA_ERROR_NO_DEVICE = 100
CUDA_ERROR_INVALID_DEVICE = 101
CUDA_ERROR_INVALID_HANDLE = 400
CUDA_ERROR_NOT_FOUND = 500
CUDA_ERROR_NOT_PERMITTED = 800
CUDA_ERROR_NOT_SUPPORTED = 801

CU_DEVICE_ATTRIBUTE_VIRTUAL_MEMORY_MANAGEMENT_SUPPORTED = 102
CU_DEVICE_ATTRIBUTE_HANDLE_TYPE_POSIX_FILE_DESCRIPTOR_SUPPORTED = 103
CU_DEVICE_ATTRIBUTE_GPU_DIRECT_RDMA_WITH_CUDA_VMM_SUPPORTED = 110
CU_MEM_ALLOCATION_TYPE_PINNED = 1
CU_MEM_HANDLE_TYPE_POSIX_FILE_DESCRIPTOR = 1
CU_MEM_LOCATION_TYPE_DEVICE = 1
CU_MEM_ALLOC_GRANULARITY_MINIMUM = 0
CU_MEM_ACCESS_FLAGS_PROT_READWRITE = 3

# The library's translation (gdr_cuda_errno in src/cuda.c), so that one CUDA error has one errno
# whether the library or this package met it; anything else is EIO.
_ERRNO = {
    CUDA_ERROR_INVALID_VALUE: errno.EINVAL,
    CUDA_ERROR_NOT_FOUND: errno.EINVAL,
    CUDA_ERROR_INVALID_HANDLE: errno.EINVAL,
    CUDA_ERROR_OUT_OF_MEMORY: errno.ENOMEM,
    CUDA_ERROR_NO_DEVICE: errno.ENODEV,
    CUDA_ERROR_INVALID_DEVICE: errno.ENODEV,
    CUDA_ERROR_NOT_PERMITTED: errno.EPERM,
    CUDA_ERROR_NOT_SUPPORTED: errno.ENOTSUP,
}


class CUmemLocation(ctypes.Structure):
    _fields_ = [("type", ctypes.c_int), ("id", ctypes.c_int)]


class CUmemAllocationFlags(ctypes.Structure):
    _fields_ = [("compressionType", ctypes.c_ubyte), ("gpuDirectRDMACapable", ctypes.c_ubyte),
                ("usage", ctypes.c_ushort), ("reserved", ctypes.c_ubyte * 4)]


class CUmemAllocationProp(ctypes.Structure):
    _fields_ = [("type", ctypes.c_int), ("requestedHandleTypes", ctypes.c_int),
                ("location", CUmemLocation), ("win32HandleMetaData", ctypes.c_void_p),
                ("allocFlags", CUmemAllocationFlags)]


class CUmemAccessDesc(ctypes.Structure):
    _fields_ = [("location", CUmemLocation), ("flags", ctypes.c_int)]


_u64 = ctypes.c_uint64
_p = ctypes.POINTER
_PROTOTYPES = {
    "cuInit": [ctypes.c_uint],
    "cuGetErrorName": [ctypes.c_int, _p(ctypes.c_char_p)],
    "cuGetErrorString": [ctypes.c_int, _p(ctypes.c_char_p)],
    "cuDeviceGet": [_p(ctypes.c_int), ctypes.c_int],
    "cuDeviceGetAttribute": [_p(ctypes.c_int), ctypes.c_int, ctypes.c_int],
    "cuDevicePrimaryCtxRetain": [_p(ctypes.c_void_p), ctypes.c_int],
    "cuDevicePrimaryCtxRelease_v2": [ctypes.c_int],
    "cuCtxGetCurrent": [_p(ctypes.c_void_p)],
    "cuCtxSetCurrent": [ctypes.c_void_p],
    "cuMemGetAllocationGranularity": [_p(ctypes.c_size_t), _p(CUmemAllocationProp),
                                      ctypes.c_int],
    "cuMemCreate": [_p(_u64), ctypes.c_size_t, _p(CUmemAllocationProp), _u64],
    "cuMemRelease": [_u64],
    "cuMemAddressReserve": [_p(_u64), ctypes.c_size_t, ctypes.c_size_t, _u64, _u64],
    "cuMemAddressFree": [_u64, ctypes.c_size_t],
    "cuMemMap": [_u64, ctypes.c_size_t, ctypes.c_size_t, _u64, _u64],
    "cuMemUnmap": [_u64, ctypes.c_size_t],
    "cuMemSetAccess": [_u64, ctypes.c_size_t, _p(CUmemAccessDesc), ctypes.c_size_t],
}


class Cuda:
    """libcuda.so.1, initialised."""

    def __init__(self):
        try:
            dll = ctypes.CDLL("libcuda.so.1")
        except OSError as e:
            raise error(errno.ENOENT, "loading libcuda.so.1", str(e),
                        "gdrcopy.alloc needs the NVIDIA driver") from None
        for name, argtypes in _PROTOTYPES.items():
            fn = getattr(dll, name)
            fn.restype = ctypes.c_int
            fn.argtypes = argtypes
            setattr(self, name.replace("_v2", ""), fn)
        self.check(self.cuInit(0), "cuInit")

    def describe(self, result):
        name, text = ctypes.c_char_p(), ctypes.c_char_p()
        self.cuGetErrorName(result, ctypes.byref(name))
        self.cuGetErrorString(result, ctypes.byref(text))
        if name.value is None:
            return f"CUDA error {result}"
        return f"{name.value.decode()} ({(text.value or b'').decode()})"

    def check(self, result, function):
        if result != CUDA_SUCCESS:
            raise error(_ERRNO.get(result, errno.EIO), function, self.describe(result))

    def attribute(self, attr, device):
        value = ctypes.c_int()
        self.check(self.cuDeviceGetAttribute(ctypes.byref(value), attr, device),
                   f"cuDeviceGetAttribute({attr})")
        return value.value


# The CUDA driver, loaded and initialised at the first call.
cuda = Once(Cuda)


class ContextScope:
    """The device's primary context current in this thread for a few calls, as the library does
    for its own: a current context is left alone, else the primary one is retained and set, and
    afterwards released and the thread left with none."""

    def __init__(self, cu, device):
        self.cu = cu
        self.device = device
        self.retained = False

    def __enter__(self):
        current = ctypes.c_void_p()
        self.cu.check(self.cu.cuCtxGetCurrent(ctypes.byref(current)), "cuCtxGetCurrent")
        if current.value:
            return self
        primary = ctypes.c_void_p()
        self.cu.check(self.cu.cuDevicePrimaryCtxRetain(ctypes.byref(primary), self.device),
                      "cuDevicePrimaryCtxRetain")
        result = self.cu.cuCtxSetCurrent(primary)
        if result != CUDA_SUCCESS:
            self.cu.cuDevicePrimaryCtxRelease(self.device)
            self.cu.check(result, "cuCtxSetCurrent")
        self.retained = True
        return self

    def __exit__(self, *exc):
        if self.retained:
            self.cu.cuCtxSetCurrent(None)
            self.cu.cuDevicePrimaryCtxRelease(self.device)
