# SPDX-License-Identifier: MIT
"""Mapping: a pin mapped into this process (gdr_map); writes and reads go through the library's
copy routines (gdr_copy_to_mapping / gdr_copy_from_mapping).

No raw view of the mapping is offered: the mapping is write-combined, and plain CPU loads from it
(a NumPy array or memoryview laid over it) run at about 0.06 GB/s, where read() uses streaming
loads (about 1-2 GB/s on an H200's host).
"""

import enum

from ._lifetime import Closing, Guard, release_when_gone
from ._host import destination, source
from .errors import InvalidArgument


class MappingType(enum.IntEnum):
    """gdr_mapping_type_t."""
    NONE = 0
    WC = 1
    CACHING = 2
    DEVICE = 3


class MappingState:
    """The CPU mapping of a pin. Its lock is held across every copy, so that an unmap (which
    takes it, inside the GdrState's lock) never pulls the memory from under a copy."""

    def __init__(self, pin_state, va, map_size, base, size, mapping_type):
        self.pin_state = pin_state
        self.lib = pin_state.gdr_state.lib
        self.mh = pin_state.mh
        self.va = va
        self.map_size = map_size
        self.base = base
        self.size = size
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
        g = self.pin_state.gdr_state
        with g.guard.lock:
            if self.closed:
                return
            self.pin_state.unmap_locked(self)

    def range_error(self, function, offset, n):
        return InvalidArgument(function, f"{n} bytes at offset {offset} do not fit in the "
                               f"{self.size} bytes mapped")

    def copy(self, copy, function, dst, src, n):
        """One copy, under the lock. Copies do not clear this thread's old reasons first (that
        would cost a call on the fast path); a failed copy changed nothing, so it is repeated
        once on a clean slate to tie the library's reason to it."""
        with self.guard.lock:
            if self.closed:
                raise InvalidArgument(function, "this Mapping is unmapped")
            ret = copy(self.mh, dst, src, n)
            if ret:
                self.lib.forget_errors()
                if copy(self.mh, dst, src, n):
                    raise self.lib.error(ret, function, self.pin_state.gdr_state.hint())


class Mapping(Closing):
    """[pin.ptr, pin.ptr + pin.size) mapped for the CPU; offsets count from pin.ptr. Unmapped by
    close(), at the end of a with block, or when the object goes. Copies through one Mapping
    from several threads are safe and take turns; for parallel copies use one pin per thread."""

    def __init__(self, pin, state):
        self._pin = pin
        self._state = state
        release_when_gone(self, state.guard, state.unmap)

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
        if type(buffer) is bytes:  # the common case, without a call
            src, n = buffer, len(buffer)
        else:
            src, n = source(buffer, "Mapping.write")
        if offset < 0 or n > s.size - offset:
            raise s.range_error("Mapping.write", offset, n)
        s.copy(s.lib.gdr_copy_to_mapping, "gdr_copy_to_mapping", s.base + offset, src, n)
        return n

    def read(self, n_or_out, offset=0):
        """Copy from the GPU memory at offset, through gdr_copy_from_mapping: n bytes into a new
        bytearray, or len(out) bytes into a writable bytes-like object out. Returns it."""
        if isinstance(n_or_out, int):
            if n_or_out < 0:
                raise InvalidArgument("Mapping.read", f"cannot read {n_or_out} bytes")
            out = bytearray(n_or_out)
        else:
            out = n_or_out
        dst, n = destination(out, "Mapping.read")
        s = self._state
        if offset < 0 or n > s.size - offset:
            raise s.range_error("Mapping.read", offset, n)
        s.copy(s.lib.gdr_copy_from_mapping, "gdr_copy_from_mapping", dst, s.base + offset, n)
        return out

    def __repr__(self):
        state = "unmapped" if self.closed else self.mapping_type.name
        return f"<gdrcopy.Mapping of {self._pin.ptr:#x}+{self.size} {state}>"
