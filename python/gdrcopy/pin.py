# SPDX-License-Identifier: MIT
"""Pin: a range of GPU memory pinned for CPU mapping (gdr_pin_buffer_v2), and its info."""

import ctypes
import errno
from typing import NamedTuple

from . import _library
from ._lifetime import Closing, closed_error, release_locked_when_gone
from .errors import GdrError
from .mapping import Mapping, MappingState, MappingType


class PinInfo(NamedTuple):
    """gdr_get_info_v2: the pinned range is [va, va + mapped_size), GPU-page aligned, and may
    start before the pin's ptr and end after ptr + size."""
    va: int
    mapped_size: int
    page_size: int
    mapped: bool
    wc_mapping: bool
    mapping_type: MappingType


class PinState:
    """The library's handle and the memory it pins. Guarded by its GdrState's guard."""

    def __init__(self, gdr_state, mh, found):
        self.gdr_state = gdr_state
        self.mh = mh
        self.found = found
        self.mapping = None
        self.closed = False

    def live(self, function):
        """The gdr_t, or InvalidArgument when this pin or its Gdr is gone. Lock held."""
        if self.closed:
            raise self.closed_error(function, "Pin")
        return self.gdr_state.live(function)

    def closed_error(self, function, used):
        """The refusal of a call on this pin (used "Pin") or its mapping (used "Mapping"),
        closed: it names the outermost of them and its Gdr that is closed."""
        if self.gdr_state.handle is None:
            return closed_error(function, used, "Gdr")
        return closed_error(function, used, "Pin" if self.closed else used)

    def info(self):
        g = self.gdr_state
        raw = _library.gdr_info_v2_t()
        with g.guard:
            handle = self.live("gdr_get_info_v2")
            g.lib.forget_errors()
            ret = g.lib.gdr_get_info_v2(handle, self.mh, ctypes.byref(raw))
            if ret:
                raise g.lib.error(ret, "gdr_get_info_v2")
        return PinInfo(raw.va, raw.mapped_size, raw.page_size, bool(raw.mapped),
                       bool(raw.wc_mapping), MappingType(raw.mapping_type))

    def map(self):
        g = self.gdr_state
        raw = _library.gdr_info_v2_t()
        va = ctypes.c_void_p()
        with g.guard:
            handle = self.live("gdr_map")
            if self.mapping is not None:
                raise GdrError(errno.EAGAIN, "gdr_map", "this Pin is already mapped",
                               "use its Mapping, or close that first")
            g.lib.forget_errors()
            ret = g.lib.gdr_get_info_v2(handle, self.mh, ctypes.byref(raw))
            if ret:
                raise g.lib.error(ret, "gdr_get_info_v2")
            map_size = raw.mapped_size
            # The library writes va only when it mapped: whatever fails or lands (a
            # KeyboardInterrupt) after that, before the MappingState exists, unmaps.
            try:
                ret = g.lib.gdr_map(handle, self.mh, ctypes.byref(va), map_size)
                if ret:
                    raise g.lib.error(ret, "gdr_map")
                ret = g.lib.gdr_get_info_v2(handle, self.mh, ctypes.byref(raw))
                if ret:
                    raise g.lib.error(ret, "gdr_get_info_v2")
                # The mapping starts at info.va, the GPU page holding the pinned address;
                # copies are checked against the pin's size, which must lie within the mapping.
                offset = self.found.ptr - raw.va
                if offset < 0 or offset + self.found.size > min(map_size, raw.mapped_size):
                    raise GdrError(errno.EIO, "gdr_map", f"the library mapped {map_size} "
                                   f"bytes from {raw.va:#x} ({raw.mapped_size} after mapping), "
                                   f"which do not hold the pin's {self.found.size} bytes at "
                                   f"{self.found.ptr:#x}", "report this library's behaviour")
                self.mapping = MappingState(self, va.value, map_size, va.value + offset,
                                            self.found.size, MappingType(raw.mapping_type))
            except BaseException:
                if va.value and self.mapping is None:
                    g.lib.gdr_unmap(handle, self.mh, va, map_size)
                raise
            return self.mapping

    def unmap_locked(self, mapping):
        """gdr_unmap, with the GdrState's lock held."""
        g = self.gdr_state
        handle = self.live("gdr_unmap")
        mapping.close()
        g.lib.forget_errors()
        ret = g.lib.gdr_unmap(handle, self.mh, mapping.va, mapping.map_size)
        if ret:
            mapping.reopen()
            raise g.lib.error(ret, "gdr_unmap")
        self.mapping = None

    def unpin(self):
        with self.gdr_state.guard:
            unpinned = self.unpin_locked()
        if unpinned:
            self.found.release()

    def unpin_locked(self):
        """Unmap if mapped, then gdr_unpin_buffer, with the GdrState's lock held: True when it
        unpinned, False when the pin or its Gdr was closed already."""
        g = self.gdr_state
        if self.closed or g.handle is None:
            return False
        if self.mapping is not None:
            self.unmap_locked(self.mapping)
        handle = self.live("gdr_unpin_buffer")
        g.lib.forget_errors()
        ret = g.lib.gdr_unpin_buffer(handle, self.mh)
        if ret:
            raise g.lib.error(ret, "gdr_unpin_buffer")
        self.closed = True
        g.pins.discard(self)
        return True

    def release_locked(self):
        """The Pin's finalizer: unpin_locked, and the memory's owner let go (under the lock:
        a finalizer has no later moment that is safe)."""
        if self.unpin_locked():
            self.found.release()

    def forget(self):
        """gdr_close is about to release this pin: only the Python side is left to end. The
        memory's owner is let go by the caller, once gdr_close has unpinned it."""
        if self.mapping is not None:
            self.mapping.close()
            self.mapping = None
        self.closed = True

    @property
    def readonly(self):
        return self.found.readonly


class Pin(Closing):
    """Pinned GPU memory: [ptr, ptr + size) of the object or device pointer given to
    Gdr.pin. Unpinned by close(), at the end of a with block, or when the object goes."""

    def __init__(self, gdr, state):
        self._gdr = gdr
        self._state = state
        release_locked_when_gone(self, state.gdr_state.guard, state.release_locked)

    @property
    def gdr(self):
        return self._gdr

    @property
    def ptr(self):
        """The device address pinned."""
        return self._state.found.ptr

    @property
    def size(self):
        return self._state.found.size

    @property
    def closed(self):
        return self._state.closed

    @property
    def readonly(self):
        """True when the memory's owner marked it read-only (DLPack's read-only flag,
        __cuda_array_interface__'s data[1]): its Mapping reads, and refuses writes."""
        return self._state.readonly

    @property
    def info(self):
        """PinInfo (gdr_get_info_v2)."""
        return self._state.info()

    def map(self):
        """Map the pin into this process (gdr_map): a Mapping of [ptr, ptr + size)."""
        state = self._state.map()
        try:
            return Mapping(self, state)
        except BaseException:
            # No Mapping was returned for it (a KeyboardInterrupt landed): unmapped, not left
            # for a map() that would answer "already mapped".
            state.unmap()
            raise

    def close(self):
        """Unmap if mapped, then unpin (gdr_unpin_buffer). On failure the pin stays."""
        self._state.unpin()

    unpin = close

    def __repr__(self):
        state = "unpinned" if self.closed else "pinned"
        return f"<gdrcopy.Pin {self.ptr:#x}+{self.size} {state}>"
