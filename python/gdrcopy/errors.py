# SPDX-License-Identifier: MIT
"""The exceptions: every failure of the library, of CUDA or of an argument is an OSError."""

import errno as _errno
import os


class GdrError(OSError):
    """A failed operation. ``errno`` is the library's (or CUDA's, translated), ``reason`` the
    library's own one-line explanation where it gave one, ``function`` what failed, ``hint``
    what to do about it."""

    def __init__(self, err, function, reason="", hint=""):
        message = f"{function}: {os.strerror(err)}"
        if reason:
            message += f": {reason}"
        if hint:
            message += f" ({hint})"
        super().__init__(err, message)
        self.function = function
        self.reason = reason
        self.hint = hint

    def __reduce__(self):
        # OSError's own would call the class with (errno, message): a subclass's constructor
        # takes other arguments, so it would mistake the message for the function.
        return (_rebuild, (type(self), self.errno, self.function, self.reason, self.hint),
                self.__dict__)


def _rebuild(cls, err, function, reason, hint):
    e = cls.__new__(cls, err)
    GdrError.__init__(e, err, function, reason, hint)
    return e


class InvalidArgument(GdrError, ValueError):
    """EINVAL: a bad argument, a stale object, or memory that cannot be pinned. Also a
    ValueError, so code that expects Python's convention for bad values catches it."""

    def __init__(self, function, reason="", hint=""):
        super().__init__(_errno.EINVAL, function, reason, hint)


def error(err, function, reason="", hint=""):
    """The exception for errno err: InvalidArgument for EINVAL, else GdrError."""
    if err == _errno.EINVAL:
        return InvalidArgument(function, reason, hint)
    return GdrError(err, function, reason, hint)
