# SPDX-License-Identifier: MIT
"""libgdrapi.so.2 through ctypes: loading, the prototypes, and errors with the library's reasons.

The library is found as the dynamic loader finds it (the installed libgdrapi.so.2), or at the
path in GDRCOPY_LIBRARY. It is loaded at the first call that needs it, so ``import gdrcopy``
works where it is missing and the first call says what to install.
"""

import ctypes
import errno
import os
import threading

from . import _lifetime
from ._lifetime import Once
from .errors import error

LIBRARY_ENV = "GDRCOPY_LIBRARY"
LIBRARY_NAME = "libgdrapi.so.2"

# gdrapi.h
GDR_ATTR_USE_PERSISTENT_MAPPING = 1
# gdrapi_ext.h (GDR_BACKEND_* and gdr_ext_backend_name for BACKEND_NAMES)
GDR_ATTR_EXT_BACKEND = 0x10001
BACKEND_NAMES = {1: "gdrdrv", 2: "dmabuf", 3: "vulkan"}
GDR_EXT_ERRORS_MAX = 1024


class gdr_mh_t(ctypes.Structure):
    _fields_ = [("h", ctypes.c_ulong)]


class gdr_info_v2_t(ctypes.Structure):
    _fields_ = [
        ("va", ctypes.c_uint64),
        ("mapped_size", ctypes.c_uint64),
        ("page_size", ctypes.c_uint32),
        ("tm_cycles", ctypes.c_uint64),
        ("cycles_per_ms", ctypes.c_uint32),
        ("mapped", ctypes.c_uint, 1),
        ("wc_mapping", ctypes.c_uint, 1),
        ("mapping_type", ctypes.c_int),
    ]


_c_int_p = ctypes.POINTER(ctypes.c_int)
_PROTOTYPES = {
    "gdr_open": (ctypes.c_void_p, []),
    "gdr_close": (ctypes.c_int, [ctypes.c_void_p]),
    "gdr_pin_buffer_v2": (ctypes.c_int, [ctypes.c_void_p, ctypes.c_ulong, ctypes.c_size_t,
                                         ctypes.c_uint32, ctypes.POINTER(gdr_mh_t)]),
    "gdr_unpin_buffer": (ctypes.c_int, [ctypes.c_void_p, gdr_mh_t]),
    "gdr_get_info_v2": (ctypes.c_int, [ctypes.c_void_p, gdr_mh_t,
                                       ctypes.POINTER(gdr_info_v2_t)]),
    "gdr_map": (ctypes.c_int, [ctypes.c_void_p, gdr_mh_t, ctypes.POINTER(ctypes.c_void_p),
                               ctypes.c_size_t]),
    "gdr_unmap": (ctypes.c_int, [ctypes.c_void_p, gdr_mh_t, ctypes.c_void_p, ctypes.c_size_t]),
    "gdr_copy_to_mapping": (ctypes.c_int, [gdr_mh_t, ctypes.c_void_p, ctypes.c_void_p,
                                           ctypes.c_size_t]),
    "gdr_copy_from_mapping": (ctypes.c_int, [gdr_mh_t, ctypes.c_void_p, ctypes.c_void_p,
                                             ctypes.c_size_t]),
    "gdr_runtime_get_version": (None, [_c_int_p, _c_int_p]),
    "gdr_driver_get_version": (ctypes.c_int, [ctypes.c_void_p, _c_int_p, _c_int_p]),
    "gdr_get_attribute": (ctypes.c_int, [ctypes.c_void_p, ctypes.c_int, _c_int_p]),
}
# A gdrcopy extension; a library without it (GDRCopy's own) still works, without reasons.
_TAKE_ERRORS = ("gdr_ext_take_errors", ctypes.c_size_t, [ctypes.c_char_p, ctypes.c_size_t])


def _older_than_2_5(dll, missing):
    """Why a library without some of the functions this package calls is refused."""
    if "gdr_open" in missing:
        return f"it lacks {', '.join(missing)}: it is not a libgdrapi"
    said = ""
    if hasattr(dll, "gdr_runtime_get_version"):
        major, minor = ctypes.c_int(), ctypes.c_int()
        get_version = dll.gdr_runtime_get_version
        get_version.restype = None
        get_version.argtypes = [_c_int_p, _c_int_p]
        get_version(ctypes.byref(major), ctypes.byref(minor))
        said = f" (it says {major.value}.{minor.value})"
    return (f"it lacks {', '.join(missing)}: it is older than GDRCopy 2.5{said}, the first "
            f"with the functions these bindings call")


class Library:
    """The loaded library: its functions as attributes, and error helpers."""

    def __init__(self, path):
        try:
            self._dll = ctypes.CDLL(path)
        except OSError as e:
            raise error(errno.ENOENT, f"loading {path}", str(e),
                        f"install libgdrapi2, or build the library (make) and set {LIBRARY_ENV} "
                        f"to its libgdrapi.so.2") from None
        self.path = path
        missing = [name for name in _PROTOTYPES if not hasattr(self._dll, name)]
        if missing:
            raise error(errno.ENOSYS, f"loading {path}", _older_than_2_5(self._dll, missing),
                        f"install libgdrapi2 2.5 or later, or set {LIBRARY_ENV} to a newer "
                        f"libgdrapi.so.2, e.g. this repository's build/lib/libgdrapi.so.2 "
                        f"after make")
        for name, (restype, argtypes) in _PROTOTYPES.items():
            fn = getattr(self._dll, name)
            fn.restype = restype
            fn.argtypes = argtypes
            setattr(self, name, fn)
        name, restype, argtypes = _TAKE_ERRORS
        self._take_errors = getattr(self._dll, name, None)
        if self._take_errors is not None:
            self._take_errors.restype = restype
            self._take_errors.argtypes = argtypes

    @property
    def gives_reasons(self):
        """Whether failures carry the library's reasons (gdr_ext_take_errors is there)."""
        return self._take_errors is not None

    def forget_errors(self):
        """Start a call clean: drop the reasons this thread's earlier failures left."""
        _set_aside.reasons = ""
        if self._take_errors is not None:
            self._take_errors(None, 0)

    def take_errors(self):
        """The library's reasons for this thread's failures since forget_errors, on one line."""
        taken = b""
        if self._take_errors is not None:
            # A release the collector runs at this allocation sets this call's reasons aside:
            # they are read after it.
            buf = ctypes.create_string_buffer(GDR_EXT_ERRORS_MAX)
            n = self._take_errors(buf, len(buf))
            taken = buf.raw[:n]
        reasons = [getattr(_set_aside, "reasons", "")]
        _set_aside.reasons = ""
        reasons += taken.decode(errors="replace").splitlines()
        return "; ".join(r for r in reasons if r)

    def restore_errors(self, reasons):
        """After a release the collector ran in this thread, which took the reasons pending
        for the call it interrupted first (take_errors): its own dropped, those given back."""
        self.forget_errors()
        _set_aside.reasons = reasons

    def error(self, err, function, hint=""):
        """The exception for a call that returned err, with the library's reason."""
        reason = self.take_errors()
        if not reason and not self.gives_reasons:
            reason = ("this libgdrapi gives no reasons; GDRCOPY_ENABLE_LOGGING=1 prints them "
                      "on stderr")
        return error(err, function, reason, hint)


# Reasons given back to an interrupted call (restore_errors), per thread, until taken.
_set_aside = threading.local()

# The library, loaded at the first call.
library = Once(lambda: Library(os.environ.get(LIBRARY_ENV) or LIBRARY_NAME))
_lifetime.loaded_library = library.made


def runtime_version():
    """(major, minor) of the library's API, as gdr_runtime_get_version reports it."""
    major, minor = ctypes.c_int(), ctypes.c_int()
    library().gdr_runtime_get_version(ctypes.byref(major), ctypes.byref(minor))
    return major.value, minor.value
