# SPDX-License-Identifier: MIT
"""What the objects of this package need to know about fork.

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
