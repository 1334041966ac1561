# SPDX-License-Identifier: MIT
"""Host memory of bytes-like objects, as pointers for the library's copy functions."""

import ctypes

from .errors import InvalidArgument


def source(buffer, function):
    """(pointer argument, nbytes) of a C-contiguous bytes-like object to copy from. bytes pass
    as they are; other read-only buffers are copied once (ctypes exposes only writable ones)."""
    if type(buffer) is bytes:
        return buffer, len(buffer)
    view = _view(buffer, function, hint="pass a contiguous copy: numpy.ascontiguousarray(x), "
                 "or bytes(x)")
    if view.readonly:
        data = view.tobytes()
        return data, len(data)
    return _pointer(view), view.nbytes


def destination(buffer, function, expected=None):
    """(pointer argument, nbytes) of a writable C-contiguous bytes-like object to copy into.
    expected, when given, is the TypeError's text for an argument that is no buffer at all
    (for an argument that may also be something else)."""
    # A contiguous copy to read into would not be this buffer: the data must come in another way.
    view = _view(buffer, function, expected, "read into a contiguous buffer (read(n) returns "
                 "one) and copy from it into this one")
    if view.readonly:
        raise TypeError(f"{function}: the output buffer is read-only")
    return _pointer(view), view.nbytes


def _view(buffer, function, expected=None, hint=""):
    try:
        view = memoryview(buffer)
    except TypeError:
        if expected:
            raise TypeError(f"{function}: {expected}, not {type(buffer).__name__}") from None
        raise TypeError(f"{function}: {type(buffer).__name__} is not a bytes-like object "
                        f"(bytes, bytearray, memoryview, array, a NumPy array)") from None
    if not view.c_contiguous:
        raise InvalidArgument(function, "the host buffer is not C-contiguous", hint)
    return view


def _pointer(view):
    # The c_char laid over the buffer holds it (and its exporter), and byref holds the c_char,
    # for as long as the argument lives.
    return ctypes.byref(ctypes.c_char.from_buffer(view)) if view.nbytes else None
