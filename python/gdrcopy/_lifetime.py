# SPDX-License-Identifier: MIT
"""How the package's objects live and end: context managers, finalizers, loaded-once libraries,
and what a fork child inherits.

A finalizer (weakref.finalize) runs wherever the garbage collector runs: at any allocation, in any
thread, also in one that holds the very lock the release needs (its state half updated) or a lock
that the lock's holder waits for. So a finalizer never waits for a lock: it takes the lock if it
is free, else queues the release for the holder, who runs it on letting go (Guard).

A fork child inherits the parent's Python objects, but not what they stand for: its copy of a
gdr_t, a pin or a CUDA allocation belongs to the parent (CUDA contexts do not survive fork, and
the library keeps its mappings out of children). So in a child:
  - explicit calls on inherited objects raise InvalidArgument without calling the library (a
    copy through GDRCopy's own library would touch an address the child does not have);
  - the garbage collector never calls the library or CUDA for inherited objects: whatever it
    released would be the parent's;
  - locks are new, since a thread that held one in the parent does not exist in the child, and
    releases the parent had queued are dropped.
"""

import collections
import functools
import os
import sys
import threading
import traceback
import weakref

from .errors import InvalidArgument

_guards = weakref.WeakSet()


class Guard:
    """A lock that a fork child gets fresh, whether its owner was made before a fork, and the
    releases that found the lock taken. ``with guard:`` holds the lock and, on letting go, runs
    those releases (still under the lock). Code that takes ``guard.lock`` directly must be code
    during which nothing is queued on this guard (a mapping's copies, Once)."""

    __slots__ = ("lock", "inherited", "_queued", "__weakref__")

    def __init__(self):
        self.lock = threading.Lock()
        self.inherited = False  # set in a fork child for the guards made before the fork
        self._queued = collections.deque()
        _guards.add(self)

    def __enter__(self):
        self.lock.acquire()
        return self

    def __exit__(self, *exc):
        self.lock.release()
        if self._queued:
            self._run_queued()

    def release_later(self, release):
        """Call release() with the lock held: now if the lock is free, else when its holder
        lets go. Never waits for the lock."""
        self._queued.append(release)
        self._run_queued()

    def _run_queued(self):
        # Whoever finds the lock free runs the queue. A queuer appends, then tries the lock; a
        # holder lets go, then looks at the queue: whichever comes second sees the release, so
        # none is left behind. Only the lock's holder pops, so each release runs once.
        while self._queued:
            if not self.lock.acquire(blocking=False):
                return
            try:
                while self._queued:
                    _run_as_finalizer(self._queued.popleft())
            finally:
                self.lock.release()


def _run_as_finalizer(release):
    """release(), reported as an exception in a finalizer is and never raised: the thread that
    runs it may be in the middle of a call that has nothing to do with it."""
    try:
        release()
    except Exception:  # pylint: disable=broad-except
        print("Exception ignored in a gdrcopy release left by the garbage collector:",
              file=sys.stderr)
        traceback.print_exc()


def _after_fork_in_child():
    for guard in list(_guards):
        guard.lock = threading.Lock()
        guard.inherited = True
        guard._queued.clear()  # the parent's releases: not the child's to make


os.register_at_fork(after_in_child=_after_fork_in_child)


def inherited_error(function):
    """The refusal of an explicit call on an object made before fork(), in the child."""
    return InvalidArgument(function, "this object was made before fork() and belongs to the "
                           "parent process", "a child process must use a gdrcopy.open() of its "
                           "own")


# The objects that close, outermost first: closing one ends those inside it (a Gdr's close
# unpins its pins, an unpin unmaps), so the closed ones around an object used always run from
# it outward to the outermost closed one. What each is once closed, and how to get one again.
_NESTING = ("Gdr", "Pin", "Mapping")
_CLOSED_STATE = {"Gdr": "closed", "Pin": "unpinned", "Mapping": "unmapped"}
_MAKE_AGAIN = {
    "Gdr": "open a new Gdr with gdrcopy.open()",
    "Pin": "pin the memory again with Gdr.pin(...)",
    "Mapping": "map the Pin again with Pin.map()",
}


def closed_error(function, used, outermost=None):
    """The refusal of a call on a closed object of class used ("Gdr", "Pin" or "Mapping"):
    what is closed, up to the outermost closed object it belongs to (itself by default), and
    the steps that give a usable one again."""
    outermost = outermost or used
    steps = _NESTING[_NESTING.index(outermost):_NESTING.index(used) + 1]
    what = f"this {used} is {_CLOSED_STATE[used]}"
    if outermost != used:
        what += f" and its {outermost} is {_CLOSED_STATE[outermost]}"
    return InvalidArgument(function, what, ", then ".join(_MAKE_AGAIN[s] for s in steps))


def loaded_library():
    """The library once loaded, else None (_library puts its own here): see
    _release_unless_inherited."""
    return None


def _release_unless_inherited(guard, release):
    if guard.inherited:
        return
    # The collector may run this in the middle of another call of this thread, between its
    # failure and the taking of its reasons: the release's own calls must not drop them.
    lib = loaded_library()
    reasons = lib.take_errors() if lib is not None else None
    try:
        release()
    except OSError:
        pass  # a finalizer has nobody to tell; the explicit close() raises
    finally:
        if lib is not None:
            lib.restore_errors(reasons)


def release_when_gone(obj, guard, release):
    """Call release() when obj is garbage-collected, unless obj was inherited through fork.
    Not at interpreter exit: the process's end releases everything anyway. release() takes no
    lock of this package (else use release_locked_when_gone)."""
    weakref.finalize(obj, _release_unless_inherited, guard, release).atexit = False


def release_locked_when_gone(obj, guard, release):
    """As release_when_gone, with release() called under guard's lock and never waiting for
    it: while the lock is taken, perhaps by the very thread the collector interrupted, the
    release waits in guard's queue for the holder to let go."""
    weakref.finalize(obj, guard.release_later,
                     functools.partial(_release_unless_inherited, guard, release)).atexit = False


class NotCopied:
    """An object that stands for something this process holds (CUDA memory, a gdr_t, a pin, a
    CPU mapping): copy, deepcopy and pickle refuse it. A copy would share what it stands for
    without owning it (a DeviceBuffer's copy would point at memory freed when the original
    goes), and another process could not use it."""

    def __reduce_ex__(self, protocol):
        raise TypeError(f"gdrcopy.{type(self).__name__} cannot be copied or pickled: it stands "
                        f"for what this process holds; pass the object itself, or make one in "
                        f"each process (gdrcopy.open(), gdrcopy.alloc())")


class Closing(NotCopied):
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

    def made(self):
        """The value if it has been made, else None; makes nothing."""
        return self._value
