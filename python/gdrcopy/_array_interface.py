# SPDX-License-Identifier: MIT
"""__cuda_array_interface__ (version 3, the layout of NumPy's __array_interface__) read as the
one contiguous range of device memory a pin takes. Every field is checked before it is used:
the dict comes from any object, and a wrong shape, typestr or data tuple would otherwise pin
some other range, or fail with an error that names none of them."""

import re

from ._dlpack import compact_strides
from ._integers import as_int, is_bool
from .errors import InvalidArgument

_NAME = "__cuda_array_interface__"
# Byte order, kind, size: the size counts bytes, except for the kinds below. A datetime's unit
# ("<M8[ns]") does not change its size.
_TYPESTR = re.compile(r"[<>|=]([a-zA-Z])([0-9]+)(\[[0-9]*[a-zA-Z]+\])?")
_BYTES_PER_UNIT = {"U": 4}  # UCS-4 characters
_NOT_BYTES = {"t": "a bit field (its size counts bits)",
              "O": "Python objects (pointers into this process's heap)"}


def _sequence(value, name, function):
    if not isinstance(value, (tuple, list)):
        raise TypeError(f"{function}: {_NAME} {name} must be a tuple, not "
                        f"{type(value).__name__} ({value!r})")
    return tuple(value)


def _itemsize(typestr, function):
    if not isinstance(typestr, str):
        raise TypeError(f"{function}: {_NAME} typestr must be a str such as '<f4', not "
                        f"{type(typestr).__name__} ({typestr!r})")
    match = _TYPESTR.fullmatch(typestr)
    if not match:
        raise InvalidArgument(function, f"{_NAME} typestr {typestr!r} is not of the form "
                              f"'<f4' (byte order, kind, size in bytes)")
    kind, size = match.group(1), int(match.group(2))
    if kind in _NOT_BYTES:
        raise InvalidArgument(function, f"{_NAME} typestr {typestr!r} describes "
                              f"{_NOT_BYTES[kind]}, not bytes of device memory")
    return size * _BYTES_PER_UNIT.get(kind, 1)


def _field(cai, key, function):
    try:
        return cai[key]
    except KeyError:
        raise InvalidArgument(function, f"{_NAME} has no {key!r}") from None


def device_bytes(cai, function):
    """(ptr, size, readonly) of the memory cai describes, which must be C-contiguous."""
    if not isinstance(cai, dict):
        raise TypeError(f"{function}: {_NAME} must be a dict, not {type(cai).__name__}")
    if cai.get("mask") is not None:
        raise InvalidArgument(function, "masked arrays cannot be pinned")
    shape = _sequence(_field(cai, "shape", function), "shape", function)
    shape = tuple(as_int(v, f"{_NAME} shape[{i}]", function) for i, v in enumerate(shape))
    if any(extent < 0 for extent in shape):
        raise InvalidArgument(function, f"{_NAME} shape {shape} has a negative extent")
    itemsize = _itemsize(_field(cai, "typestr", function), function)
    strides = cai.get("strides")
    if strides is not None:
        strides = _sequence(strides, "strides", function)
        strides = tuple(as_int(v, f"{_NAME} strides[{i}]", function)
                        for i, v in enumerate(strides))
        if len(strides) != len(shape):
            raise InvalidArgument(function, f"{_NAME} strides {strides} do not match shape "
                                  f"{shape} ({len(strides)} and {len(shape)} dimensions)")
        if not compact_strides(shape, strides, itemsize):
            raise InvalidArgument(function, f"the array is not contiguous (shape {shape}, "
                                  f"strides {strides}); pin a contiguous one")
    size = itemsize
    for extent in shape:
        size *= extent
    data = _sequence(_field(cai, "data", function), "data", function)
    if len(data) != 2:
        raise InvalidArgument(function, f"{_NAME} data must be (pointer, read-only flag), "
                              f"not {data!r}")
    # A zero-size array may give None or 0 for its pointer.
    ptr = 0 if data[0] is None else as_int(data[0], f"{_NAME} data[0] (pointer)", function)
    if not is_bool(data[1]):
        raise TypeError(f"{function}: {_NAME} data[1] (read-only flag) must be True or "
                        f"False, not {type(data[1]).__name__} ({data[1]!r})")
    return ptr, size, bool(data[1])
