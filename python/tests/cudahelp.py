# SPDX-License-Identifier: MIT
"""What the tests need from CUDA besides gdrcopy: plain cuMemAlloc memory and VMM memory without
a POSIX-fd handle (both refused by the vulkan backend), copies to check data independently of
the mapping, and, on the simulated driver, its leak counters. Works on the simulator and on a
real GPU alike (the primary context of device 0 is made current in the calling thread)."""

import ctypes

from gdrcopy import _cuda


class SimCounters(ctypes.Structure):
    _fields_ = [(name, ctypes.c_long) for name in (
        "allocations", "handle_refs", "mappings", "reservations", "primary_ctx_refs",
        "vulkan_backed", "fds_exported", "primary_ctx_creations")]


class TestCuda:
    __test__ = False

    def __init__(self):
        self.dll = ctypes.CDLL("libcuda.so.1")
        u64, p = ctypes.c_uint64, ctypes.POINTER
        for name, argtypes in {
            "cuInit": [ctypes.c_uint],
            "cuDeviceGet": [p(ctypes.c_int), ctypes.c_int],
            "cuDevicePrimaryCtxRetain": [p(ctypes.c_void_p), ctypes.c_int],
            "cuCtxSetCurrent": [ctypes.c_void_p],
            "cuMemAlloc_v2": [p(u64), ctypes.c_size_t],
            "cuMemFree_v2": [u64],
            "cuMemcpyHtoD_v2": [u64, ctypes.c_void_p, ctypes.c_size_t],
            "cuCtxSynchronize": [],
            "cuMemcpyDtoH_v2": [ctypes.c_void_p, u64, ctypes.c_size_t],
            "cuMemGetAllocationGranularity": [p(ctypes.c_size_t), p(_cuda.CUmemAllocationProp),
                                              ctypes.c_int],
            "cuMemCreate": [p(u64), ctypes.c_size_t, p(_cuda.CUmemAllocationProp), u64],
            "cuMemRelease": [u64],
            "cuMemAddressReserve": [p(u64), ctypes.c_size_t, ctypes.c_size_t, u64, u64],
            "cuMemAddressFree": [u64, ctypes.c_size_t],
            "cuMemMap": [u64, ctypes.c_size_t, ctypes.c_size_t, u64, u64],
            "cuMemUnmap": [u64, ctypes.c_size_t],
            "cuMemSetAccess": [u64, ctypes.c_size_t, p(_cuda.CUmemAccessDesc), ctypes.c_size_t],
        }.items():
            fn = getattr(self.dll, name)
            fn.restype = ctypes.c_int
            fn.argtypes = argtypes
        self.check(self.dll.cuInit(0), "cuInit")
        self.primary = ctypes.c_void_p()
        self.check(self.dll.cuDevicePrimaryCtxRetain(ctypes.byref(self.primary), 0),
                   "cuDevicePrimaryCtxRetain")
        self.is_sim = hasattr(self.dll, "simcuda_get_counters")

    @staticmethod
    def check(result, what):
        if result:
            raise RuntimeError(f"{what} failed: CUresult {result}")

    def _ctx(self):
        self.check(self.dll.cuCtxSetCurrent(self.primary), "cuCtxSetCurrent")

    def malloc(self, size):
        """cudaMalloc-style memory (cuMemAlloc): not a VMM allocation."""
        self._ctx()
        ptr = ctypes.c_uint64()
        self.check(self.dll.cuMemAlloc_v2(ctypes.byref(ptr), size), "cuMemAlloc")
        return ptr.value

    def free(self, ptr):
        self._ctx()
        self.check(self.dll.cuMemFree_v2(ptr), "cuMemFree")

    def htod(self, ptr, data):
        self._ctx()
        self.check(self.dll.cuMemcpyHtoD_v2(ptr, data, len(data)), "cuMemcpyHtoD")
        # From pageable memory, cuMemcpyHtoD may return before its DMA has landed: a write
        # through the mapping made next could land first, and be overwritten (seen on the H200).
        self.check(self.dll.cuCtxSynchronize(), "cuCtxSynchronize")

    def dtoh(self, ptr, n):
        self._ctx()
        out = ctypes.create_string_buffer(n)
        self.check(self.dll.cuMemcpyDtoH_v2(out, ptr, n), "cuMemcpyDtoH")
        return out.raw

    def vmm_without_fd(self, size):
        """A VMM allocation with no shareable handle type: (ptr, size, handle)."""
        prop = _cuda.CUmemAllocationProp()
        prop.type = _cuda.CU_MEM_ALLOCATION_TYPE_PINNED
        prop.location = _cuda.CUmemLocation(_cuda.CU_MEM_LOCATION_TYPE_DEVICE, 0)
        gran = ctypes.c_size_t()
        self.check(self.dll.cuMemGetAllocationGranularity(ctypes.byref(gran), ctypes.byref(prop),
                                                          0), "granularity")
        size = (size + gran.value - 1) // gran.value * gran.value
        handle, ptr = ctypes.c_uint64(), ctypes.c_uint64()
        self.check(self.dll.cuMemCreate(ctypes.byref(handle), size, ctypes.byref(prop), 0),
                   "cuMemCreate")
        self.check(self.dll.cuMemAddressReserve(ctypes.byref(ptr), size, gran.value, 0, 0),
                   "cuMemAddressReserve")
        self.check(self.dll.cuMemMap(ptr.value, size, 0, handle.value, 0), "cuMemMap")
        access = _cuda.CUmemAccessDesc(_cuda.CUmemLocation(_cuda.CU_MEM_LOCATION_TYPE_DEVICE, 0),
                                       _cuda.CU_MEM_ACCESS_FLAGS_PROT_READWRITE)
        self.check(self.dll.cuMemSetAccess(ptr.value, size, ctypes.byref(access), 1),
                   "cuMemSetAccess")
        return ptr.value, size, handle.value

    def vmm_free(self, ptr, size, handle):
        self.dll.cuMemUnmap(ptr, size)
        self.dll.cuMemAddressFree(ptr, size)
        self.dll.cuMemRelease(handle)

    def counters(self):
        """The simulator's live-object counters (simulated driver only)."""
        c = SimCounters()
        self.dll.simcuda_get_counters(ctypes.byref(c))
        return {name: getattr(c, name) for name, _ in SimCounters._fields_}
