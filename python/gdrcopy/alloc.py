# SPDX-License-Identifier: MIT
"""gdrcopy.alloc: device memory that every backend can map.

A CUDA VMM allocation (cuMemCreate) that asks for the POSIX-fd handle type (which the vulkan
backend needs to import it), GPUDirect-RDMA capable where the device allows it for VMM memory
(which gdrdrv needs to pin it), reserved at an address aligned to the allocation granularity
(a multiple of the 64 KiB GPU page), mapped and made read-write for its device. The physical
size is nbytes rounded up to the granularity (2 MiB on current GPUs).
"""

import ctypes

from . import _cuda, _dlpack
from ._integers import as_int
from ._lifetime import Guard, NotCopied, inherited_error, release_when_gone
from .errors import InvalidArgument

GPU_PAGE_SIZE = 1 << 16
# CUDA takes sizes as 64-bit C integers and devices as C ints; ctypes would keep only the low
# bits of more, and allocate something else than was asked.
MAX_SIZE = 1 << 64
MAX_DEVICE = (1 << 31) - 1


class _Allocation:
    """What CUDA holds for a DeviceBuffer, freed by release()."""

    def __init__(self, cu, device):
        self.cu = cu
        self.device = device
        self.handle = None
        self.ptr = 0
        self.size = 0
        self.mapped = False
        self.guard = Guard()

    def release(self):
        cu = self.cu
        with _cuda.ContextScope(cu, self.device):
            if self.mapped:
                cu.cuMemUnmap(self.ptr, self.size)
                self.mapped = False
            if self.ptr:
                cu.cuMemAddressFree(self.ptr, self.size)
                self.ptr = 0
            if self.handle is not None:
                cu.cuMemRelease(self.handle)
                self.handle = None


def _allocate(cu, nbytes, device):
    attr = cu.attribute
    if not attr(_cuda.CU_DEVICE_ATTRIBUTE_VIRTUAL_MEMORY_MANAGEMENT_SUPPORTED, device):
        raise InvalidArgument("gdrcopy.alloc", f"CUDA device {device} has no virtual memory "
                              f"management (cuMemCreate)")
    prop = _cuda.CUmemAllocationProp()
    prop.type = _cuda.CU_MEM_ALLOCATION_TYPE_PINNED
    prop.location = _cuda.CUmemLocation(_cuda.CU_MEM_LOCATION_TYPE_DEVICE, device)
    if attr(_cuda.CU_DEVICE_ATTRIBUTE_HANDLE_TYPE_POSIX_FILE_DESCRIPTOR_SUPPORTED, device):
        prop.requestedHandleTypes = _cuda.CU_MEM_HANDLE_TYPE_POSIX_FILE_DESCRIPTOR
    if attr(_cuda.CU_DEVICE_ATTRIBUTE_GPU_DIRECT_RDMA_WITH_CUDA_VMM_SUPPORTED, device):
        prop.allocFlags.gpuDirectRDMACapable = 1
    granularity = ctypes.c_size_t()
    cu.check(cu.cuMemGetAllocationGranularity(ctypes.byref(granularity), ctypes.byref(prop),
                                              _cuda.CU_MEM_ALLOC_GRANULARITY_MINIMUM),
             "cuMemGetAllocationGranularity")
    step = max(granularity.value, GPU_PAGE_SIZE)
    step = (step + GPU_PAGE_SIZE - 1) // GPU_PAGE_SIZE * GPU_PAGE_SIZE
    size = (nbytes + step - 1) // step * step
    if size >= MAX_SIZE:
        raise InvalidArgument("gdrcopy.alloc", f"{nbytes} bytes, rounded up to the allocation "
                              f"granularity ({step} bytes), are {size}: more than a 64-bit "
                              f"size holds")
    a = _Allocation(cu, device)
    a.size = size
    handle, ptr = ctypes.c_uint64(), ctypes.c_uint64()
    access = _cuda.CUmemAccessDesc(_cuda.CUmemLocation(_cuda.CU_MEM_LOCATION_TYPE_DEVICE, device),
                                   _cuda.CU_MEM_ACCESS_FLAGS_PROT_READWRITE)
    with _cuda.ContextScope(cu, device):
        try:
            cu.check(cu.cuMemCreate(ctypes.byref(handle), a.size, ctypes.byref(prop), 0),
                     f"cuMemCreate({a.size} bytes on device {device})")
            a.handle = handle.value
            cu.check(cu.cuMemAddressReserve(ctypes.byref(ptr), a.size, step, 0, 0),
                     "cuMemAddressReserve")
            a.ptr = ptr.value
            cu.check(cu.cuMemMap(a.ptr, a.size, 0, a.handle, 0), "cuMemMap")
            a.mapped = True
            cu.check(cu.cuMemSetAccess(a.ptr, a.size, ctypes.byref(access), 1),
                     "cuMemSetAccess")
        except BaseException:
            a.release()
            raise
    return a


class DeviceBuffer(NotCopied):
    """nbytes of device memory from gdrcopy.alloc, freed when the last reference goes.
    torch.as_tensor(buf, device="cuda"), cupy.asarray(buf) and DLPack consumers
    (torch.from_dlpack) use it without a copy, as uint8, and keep it alive while they do."""

    def __init__(self, nbytes, device=0):
        # Python's integers or NumPy's, as pin() takes them.
        nbytes = as_int(nbytes, "nbytes", "gdrcopy.alloc")
        device = as_int(device, "device", "gdrcopy.alloc")
        if nbytes <= 0:
            raise InvalidArgument("gdrcopy.alloc", f"cannot allocate {nbytes} bytes")
        if nbytes >= MAX_SIZE:
            raise InvalidArgument("gdrcopy.alloc", f"cannot allocate {nbytes} bytes: more "
                                  f"than a 64-bit size holds")
        if not 0 <= device <= MAX_DEVICE:
            raise InvalidArgument("gdrcopy.alloc", f"no CUDA device {device}")
        self._alloc = _allocate(_cuda.cuda(), nbytes, device)
        self._nbytes = nbytes
        release_when_gone(self, self._alloc.guard, self._alloc.release)

    @property
    def ptr(self):
        """The device address (aligned to the allocation granularity, a multiple of 64 KiB)."""
        return self._alloc.ptr

    @property
    def nbytes(self):
        return self._nbytes

    @property
    def device(self):
        return self._alloc.device

    @property
    def allocation_size(self):
        """The physical allocation: nbytes rounded up to the granularity."""
        return self._alloc.size

    def __len__(self):
        return self._nbytes

    def _own(self, function):
        """Refuse to hand the memory out in a fork child: it is the parent's allocation,
        which CUDA does not carry into children, and the child's consumer would reach an address
        it has no memory at."""
        if self._alloc.guard.inherited:
            raise inherited_error(function)

    @property
    def __cuda_array_interface__(self):
        self._own("DeviceBuffer.__cuda_array_interface__")
        # No stream: nothing was queued on this memory, a consumer need not wait for anything.
        return {"shape": (self._nbytes,), "typestr": "|u1", "data": (self.ptr, False),
                "version": 3, "strides": None, "stream": None}

    def __dlpack_device__(self):
        return (_dlpack.KDL_CUDA, self.device)

    def __dlpack__(self, *, stream=None, max_version=None, dl_device=None, copy=None):
        """A DLPack capsule of the buffer as nbytes of uint8, with the array API standard's
        arguments (checked: _dlpack.export_arguments). stream needs no wait: no work was
        queued on the memory. Copies are never made (copy=True is a BufferError)."""
        self._own("DeviceBuffer.__dlpack__")
        versioned = _dlpack.export_arguments("DeviceBuffer.__dlpack__", self.__dlpack_device__(),
                                             stream, max_version, dl_device, copy)
        return _dlpack.export(self, self.ptr, self._nbytes, _dlpack.KDL_CUDA, self.device,
                              versioned)

    def __repr__(self):
        return f"<gdrcopy.DeviceBuffer {self._nbytes} bytes at {self.ptr:#x} on device " \
               f"{self.device}>"


def alloc(nbytes, device=0):
    """nbytes of device memory on a CUDA device that every backend can map: a DeviceBuffer."""
    return DeviceBuffer(nbytes, device)
