# SPDX-License-Identifier: MIT
"""Gdr: an open instance of the library (a gdr_t), the owner of its pins."""

import ctypes
import errno

from . import _library
from ._lifetime import Closing, Guard, closed_error, inherited_error, release_locked_when_gone
from ._ranges import device_range
from .errors import GdrError
from .pin import Pin, PinState

_VULKAN_PIN_HINT = ("from Python: allocate with gdrcopy.alloc(), or let PyTorch allocate with "
                    "PYTORCH_CUDA_ALLOC_CONF=expandable_segments:True")


class GdrState:
    """The gdr_t and what the library holds in it. Its guard serialises every call that passes
    the gdr_t (the library serialises them anyway) and nests outside each mapping's lock; the
    finalizers of the Gdr, its pins and their mappings queue their releases on it. Error
    messages are built under the guard, before releases queued meanwhile run and take the
    thread's library reasons."""

    def __init__(self, lib, handle):
        self.lib = lib
        self.handle = handle
        self.guard = Guard()
        # Held until unpinned or gdr_close: a pin whose collector's unpin failed is still pinned,
        # and its owner must be let go after gdr_close, not with the Pin.
        self.pins = set()

    def live(self, function):
        """The gdr_t, or InvalidArgument when closed or inherited. Call with the lock held."""
        if self.handle is None:
            raise closed_error(function, "Gdr")
        if self.guard.inherited:
            raise inherited_error(function)
        return self.handle

    def close(self):
        with self.guard:
            if self.handle is None:
                return
            if self.guard.inherited:
                raise inherited_error("gdr_close")
            failure, pins = self.close_locked()
        # As Pin.close: the memory's owners go after the unpin, outside the lock.
        for pin in pins:
            pin.found.release()
        if failure is not None:
            raise failure

    def close_locked(self):
        """gdr_close, with the lock held: (its exception or None, the pins it ended). The
        caller lets the pins' memory go (found.release()), which must wait for gdr_close: an
        owner let go could free memory that is still pinned."""
        if self.handle is None:
            return None, []
        # gdr_close unmaps and unpins what is left; the Python objects only learn of it.
        pins = list(self.pins)
        self.pins.clear()
        for pin in pins:
            pin.forget()
        handle, self.handle = self.handle, None
        self.lib.forget_errors()
        ret = self.lib.gdr_close(handle)
        return (self.lib.error(ret, "gdr_close") if ret else None), pins

    def release_locked(self):
        """The Gdr's finalizer: close_locked, then the memory's owners let go (under the lock:
        a finalizer has no later moment that is safe)."""
        _, pins = self.close_locked()
        for pin in pins:
            pin.found.release()


class Gdr(Closing):
    """An open libgdrapi (gdr_open), closed by close(), at the end of a with block, or when
    the object goes. Thread-safe: pins of one Gdr may be made and used from many threads."""

    def __init__(self):
        lib = _library.library()
        lib.forget_errors()
        handle = lib.gdr_open()
        if not handle:
            raise lib.error(errno.ENODEV, "gdr_open")
        self._state = GdrState(lib, handle)
        release_locked_when_gone(self, self._state.guard, self._state.release_locked)

    def close(self):
        """Unmap and unpin everything still held, and close the library (gdr_close)."""
        self._state.close()

    @property
    def closed(self):
        return self._state.handle is None

    def _query(self, function, call, answer=0):
        """call(lib, handle) under the lock; its failure raised with the library's reason, but
        for the errno answer, which the caller takes as a reply and gets back (else 0)."""
        state = self._state
        with state.guard:
            handle = state.live(function)
            state.lib.forget_errors()
            ret = call(state.lib, handle)
            if ret and ret != answer:
                raise state.lib.error(ret, function)
        return ret

    @property
    def backend(self):
        """The backend in use: "gdrdrv", "dmabuf" or "vulkan" (None from GDRCopy's library,
        which does not say)."""
        value = ctypes.c_int()
        if self._query("gdr_get_attribute", lambda lib, g: lib.gdr_get_attribute(
                g, _library.GDR_ATTR_EXT_BACKEND, ctypes.byref(value)), answer=errno.EINVAL):
            return None  # an attribute GDRCopy's library does not know
        return _library.BACKEND_NAMES.get(value.value)

    @property
    def driver_version(self):
        """(major, minor) of gdrdrv, or of the gdrdrv behaviour a backend without it gives."""
        major, minor = ctypes.c_int(), ctypes.c_int()
        self._query("gdr_driver_get_version", lambda lib, g: lib.gdr_driver_get_version(
            g, ctypes.byref(major), ctypes.byref(minor)))
        return major.value, minor.value

    def pin(self, obj, size=None):
        """Pin GPU memory for CPU mapping: obj is an object with __cuda_array_interface__ or
        DLPack (a CUDA tensor, a CuPy array, a gdrcopy.alloc() buffer), kept alive while
        pinned, or a device pointer with size. Returns a Pin; memory its owner marks read-only
        gives a Pin whose Mapping refuses writes."""
        found = device_range(obj, size)
        state = self._state
        # The library writes mh only when the pin succeeded: an exception after that (a
        # KeyboardInterrupt between two bytecodes, out of memory) leaves a pin the caller never
        # gets a Pin for, which nothing would end before gdr_close: it is ended here, by its
        # PinState where one was registered (which then lets the memory's owner go).
        mh = _library.gdr_mh_t()
        pin_state = None
        try:
            with state.guard:
                handle = state.live("gdr_pin_buffer_v2")
                state.lib.forget_errors()
                ret = state.lib.gdr_pin_buffer_v2(handle, found.ptr, found.size, 0,
                                                  ctypes.byref(mh))
                if ret:
                    raise state.lib.error(ret, "gdr_pin_buffer_v2", self._pin_hint(ret, handle))
                pin_state = PinState(state, mh, found)
                state.pins.add(pin_state)
            return Pin(self, pin_state)
        except BaseException:
            with state.guard:
                if pin_state is not None and pin_state in state.pins:
                    try:
                        pin_state.release_locked()
                    except GdrError:
                        pass    # left to gdr_close, as a finalizer's failed unpin is
                else:
                    if mh.h and state.handle is not None:
                        state.lib.gdr_unpin_buffer(state.handle, mh)
                    found.release()
            raise

    def _pin_hint(self, ret, handle):
        if ret != errno.ENOTSUP:
            return ""
        value = ctypes.c_int()
        if (self._state.lib.gdr_get_attribute(handle, _library.GDR_ATTR_EXT_BACKEND,
                                              ctypes.byref(value)) == 0
                and _library.BACKEND_NAMES.get(value.value) == "vulkan"):
            return _VULKAN_PIN_HINT
        return ""

    def __repr__(self):
        return f"<gdrcopy.Gdr {'closed' if self.closed else 'open'}>"


def open():
    """Open the library: a Gdr (a context manager)."""
    return Gdr()
