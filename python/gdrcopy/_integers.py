# SPDX-License-Identifier: MIT
"""Integer arguments (sizes, counts, offsets, addresses, device numbers): Python's int, NumPy's
integers, anything with __index__, but never a bool."""

import numbers
import operator
import sys


def is_bool(value):
    """Whether value is a bool, Python's or NumPy's."""
    if isinstance(value, bool):
        return True
    # NumPy's bool_ still has __index__ in NumPy 1.x; NumPy is looked up, never imported: a
    # value can only be one of its bools once NumPy is loaded.
    numpy = sys.modules.get("numpy")
    return numpy is not None and isinstance(value, numpy.bool_)


def is_integral(value):
    """Whether value stands for an integer (for an argument that may also be something else):
    an int of Python's or NumPy's, or a bool, which as_int then refuses."""
    return isinstance(value, numbers.Integral) or is_bool(value)


def as_int(value, name, function):
    """value as an int, else a TypeError that names the argument. A bool is refused although
    Python counts it as an int: True would silently mean 1 (a byte, device 1, offset 1), and a
    flag where a number belongs is a mistake in the call."""
    if is_bool(value):
        raise TypeError(f"{function}: {name} must be an integer, not {type(value).__name__} "
                        f"({value} would mean {int(value)}); pass an int")
    try:
        return operator.index(value)
    except TypeError:
        raise TypeError(f"{function}: {name} must be an integer, not "
                        f"{type(value).__name__}") from None
