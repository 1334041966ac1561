# SPDX-License-Identifier: MIT
"""Mapping: a pin mapped into this process (gdr_map); writes and reads go through the library's
copy routines (gdr_copy_to_mapping / gdr_copy_from_mapping).

No raw view of the mapping is offered: the mapping is write-combined, and plain CPU loads from it
(a NumPy array or memoryview laid over it) run at about 0.06 GB/s, where read() uses streaming
loads (0.7-1.0 GB/s on the test H200's host, docs/performance.md).
"""

import enum
import errno

from ._integers import as_int, is_integral
from ._lifetime import Closing, Guard, inherited_error, release_locked_when_gone
from ._host import destination, source
from .errors import GdrError, InvalidArgument, error


class MappingType(enum.IntEnum):
    """gdr_mapping_type_t."""
    NONE = 0
    WC = 1
    CACHING = 2
    DEVICE = 3


class MappingState:
    """The CPU mapping of a pin. Its lock is held across every copy, so that an unmap (which
    takes it, inside the GdrState's lock) never pulls the memory from under a copy. Nothing is
    queued on its guard: the finalizers queue on the GdrState's."""

    def __init__(self, pin_state, va, map_size, base, size, mapping_type):
        self.pin_state = pin_state
        self.lib = pin_state.gdr_state.lib
        self.mh = pin_state.mh
        self.va = va
        self.map_size = map_size
        self.base = base
        self.size = size
        self.readonly = pin_state.readonly
        self.mapping_type = mapping_type
        self.guard = Guard()
        self.closed = False

    def close(self):
        with self.guard.lock:
            self.closed = True

    def reopen(self):
        with self.guard.lock:
            self.closed = False

    def unmap(self):
        with self.pin_state.gdr_state.guard:
            if not self.closed:
                self.pin_state.unmap_locked(self)

    def release_locked(self):
        """The Mapping's finalizer, with the GdrState's lock held."""
        if not self.closed:
            self.pin_state.unmap_locked(self)

    def range_error(self, function, offset, n):
        return InvalidArgument(function, f"{n} bytes at offset {offset} do not fit in the "
                               f"{self.size} bytes mapped")

    def readonly_error(self):
        return GdrError(errno.EACCES, "Mapping.write", "the pinned memory is read-only (its "
                        "owner marked it so through DLPack or __cuda_array_interface__)",
                        "pin a writable tensor or array to write to it")

    def copy(self, copy, function, dst, src, n, offset):
        """One copy, under the lock, of n bytes at offset."""
        with self.guard.lock:
            if self.closed:
                raise self.pin_state.closed_error(function, "Mapping")
            if self.guard.inherited:
                # GDRCopy's library would copy through an address the child does not have.
                raise inherited_error(function)
            ret = copy(self.mh, dst, src, n)
        if ret:
            # The library records no reason for a failed copy (that would cost every copy):
            # say what was asked of which mapping.
            ptr = self.pin_state.found.ptr
            raise error(ret, function, f"{n} bytes at offset {offset} of the Mapping of "
                        f"[{ptr:#x}, {ptr + self.size:#x}) ({self.map_size} bytes mapped at "
                        f"{self.va:#x}) were refused",
                        "the library keeps no reason for copies: GDRCOPY_ENABLE_LOGGING=1 "
                        "shows its log")


class Mapping(Closing):
    """[pin.ptr, pin.ptr + pin.size) mapped for the CPU; offsets count from pin.ptr. Unmapped by
    close(), at the end of a with block, or when the object goes. Copies through one Mapping
    from several threads are safe and take turns; for parallel copies use one pin per thread.
    A Mapping of read-only memory (Pin.readonly) reads and refuses writes."""

    def __init__(self, pin, state):
        self._pin = pin
        self._state = state
        release_locked_when_gone(self, state.pin_state.gdr_state.guard, state.release_locked)

    @property
    def pin(self):
        return self._pin

    @property
    def size(self):
        return self._state.size

    @property
    def mapping_type(self):
        """MappingType.WC (write-combined) on every backend on x86."""
        return self._state.mapping_type

    @property
    def closed(self):
        return self._state.closed

    def close(self):
        """Unmap (gdr_unmap); the pin stays."""
        self._state.unmap()

    unmap = close

    def write(self, buffer, offset=0):
        """Copy a bytes-like object (bytes, bytearray, memoryview, a NumPy array) to the GPU
        memory at offset, through gdr_copy_to_mapping. Returns the number of bytes written."""
        s = self._state
        # A closed mapping is refused as closed, and one made before fork() as such (in
        # copy()), whatever its memory.
        if s.readonly and not s.closed and not s.guard.inherited:
            raise s.readonly_error()
        if type(buffer) is bytes:  # the common case, without a call
            src, n = buffer, len(buffer)
        else:
            src, n = source(buffer, "Mapping.write")
        if type(offset) is not int:
            offset = as_int(offset, "offset", "Mapping.write")
        if offset < 0 or n > s.size - offset:
            raise s.range_error("Mapping.write", offset, n)
        s.copy(s.lib.gdr_copy_to_mapping, "gdr_copy_to_mapping", s.base + offset, src, n,
               offset)
        return n

    def read(self, n_or_out, offset=0):
        """Copy from the GPU memory at offset, through gdr_copy_from_mapping: n bytes into a new
        bytearray, or len(out) bytes into a writable bytes-like object out. Returns it."""
        s = self._state
        if type(offset) is not int:
            offset = as_int(offset, "offset", "Mapping.read")
        if type(n_or_out) is int or is_integral(n_or_out):
            n = n_or_out
            if type(n) is not int:
                n = as_int(n, "n_or_out", "Mapping.read")
            if n < 0:
                raise InvalidArgument("Mapping.read", f"cannot read {n} bytes")
            if offset < 0 or n > s.size - offset:  # before allocating n bytes
                raise s.range_error("Mapping.read", offset, n)
            out = bytearray(n)
            dst, _ = destination(out, "Mapping.read")
        else:
            out = n_or_out
            dst, n = destination(out, "Mapping.read", "n_or_out must be a byte count (an "
                                 "integer) or a writable bytes-like object")
            if offset < 0 or n > s.size - offset:
                raise s.range_error("Mapping.read", offset, n)
        s.copy(s.lib.gdr_copy_from_mapping, "gdr_copy_from_mapping", dst, s.base + offset, n,
               offset)
        return out

    def __repr__(self):
        state = "unmapped" if self.closed else self.mapping_type.name
        return f"<gdrcopy.Mapping of {self._pin.ptr:#x}+{self.size} {state}>"
