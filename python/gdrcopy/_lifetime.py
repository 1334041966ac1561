# SPDX-License-Identifier: MIT
"""How the package's objects live and end: context managers, finalizers, loaded-once libraries,
and what a fork child inherits.

A fork child inherits the parent's Python objects, but not what they stand for: its copy of a
gdr_t, a pin or a CUDA allocation belongs to the parent (CUDA contexts do not survive fork, and
the library keeps its mappings out of children). So in a child:
  - explicit calls on inherited objects still go to the library, which refuses them with its
    own documented error, raised as an OSError;
  - the garbage collector never calls the library or CUDA for inherited objects: whatever it
    released would be the parent's;
  - locks are new, since a thread that held one in the parent does not exist in the child.
"""

import os
import threading
import weakref

_generation = 0
_guards = weakref.WeakSet()


class Guard:
    """A lock that a fork child gets fresh, and whether its owner was made before a fork."""

    __slots__ = ("lock", "_generation", "__weakref__")

    def __init__(self):
        self.lock = threading.Lock()
        self._generation = _generation
        _guards.add(self)

    @property
    def inherited(self):
        """True in a fork child for objects made before the fork."""
        return self._generation != _generation


def _after_fork_in_child():
    global _generation
    _generation += 1
    for guard in list(_guards):
        guard.lock = threading.Lock()


os.register_at_fork(after_in_child=_after_fork_in_child)


def _release_unless_inherited(guard, release):
    if guard.inherited:
        return
    try:
        release()
    except OSError:
        pass  # a finalizer has nobody to tell; the explicit close() raises


def release_when_gone(obj, guard, release):
    """Call release() when obj is garbage-collected, unless obj was inherited through fork.
    Not at interpreter exit: the process's end releases everything anyway."""
    weakref.finalize(obj, _release_unless_inherited, guard, release).atexit = False


class Closing:
    """A context manager whose exit calls close()."""

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.close()


class Once:
    """A value made by make() at the first call, once, whatever the threads."""

    def __init__(self, make):
        self._make = make
        self._guard = Guard()
        self._value = None

    def __call__(self):
        with self._guard.lock:
            if self._value is None:
                self._value = self._make()
            return self._value
