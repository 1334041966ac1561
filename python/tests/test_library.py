# SPDX-License-Identifier: MIT
"""Loading libgdrapi, the layouts the package declares, and Gdr's life."""

import ctypes
import ctypes.util
import errno
import json
import os
import subprocess
import sys

import pytest

import gdrcopy
from gdrcopy import _library


def open_in_a_new_process(**env):
    """gdrcopy.open() in a fresh interpreter (the library is loaded once per process) with env
    added: (errno, message, reason) of its OSError."""
    code = ("import json, gdrcopy\n"
            "try:\n    gdrcopy.open()\n"
            "except OSError as e:\n"
            "    print(json.dumps([e.errno, str(e), getattr(e, 'reason', '')]))\n")
    r = subprocess.run([sys.executable, "-c", code], env={**os.environ, **env},
                       capture_output=True, text=True, timeout=120)
    assert r.returncode == 0 and r.stdout, r.stdout + r.stderr
    return json.loads(r.stdout)


def test_runtime_version():
    assert gdrcopy.runtime_version() == (2, 6)


def test_info_layout_is_gdrapi_h():
    # gdrapi.h's gdr_info_v2_t: 48 bytes, mapping_type at 40 after the two bit-fields.
    assert ctypes.sizeof(_library.gdr_info_v2_t) == 48
    assert _library.gdr_info_v2_t.mapping_type.offset == 40
    assert ctypes.sizeof(_library.gdr_mh_t) == ctypes.sizeof(ctypes.c_ulong)


def test_library_gives_reasons():
    assert _library.library().gives_reasons


def test_missing_library_says_what_to_do():
    err, message, _ = open_in_a_new_process(GDRCOPY_LIBRARY="/nonexistent/libgdrapi.so.2")
    assert err == errno.ENOENT
    assert "/nonexistent/libgdrapi.so.2" in message and "GDRCOPY_LIBRARY" in message


def test_open_failure_carries_each_backends_reason():
    err, _, reason = open_in_a_new_process(GDRCOPY_BACKEND="no-such-backend")
    assert err == errno.ENODEV
    assert "GDRCOPY_BACKEND=no-such-backend: no such backend" in reason


def test_open_failure_without_a_device(cuda):
    if not cuda.is_sim:
        pytest.skip("GDRCOPY_SIM_CUDA_DEVICES=0 hides the devices of the simulated CUDA driver "
                    "only")
    err, _, reason = open_in_a_new_process(GDRCOPY_SIM_CUDA_DEVICES="0",
                                           GDRCOPY_BACKEND="vulkan")
    assert err == errno.ENODEV
    assert "backend vulkan: unavailable:" in reason


def test_backend_of_a_library_that_does_not_say(gdr, monkeypatch):
    # GDRCopy's library answers the extension attribute with EINVAL: no backend to name, not an
    # error; any other failure is one.
    lib = _library.library()
    monkeypatch.setattr(lib, "gdr_get_attribute", lambda *args: errno.EINVAL)
    assert gdr.backend is None
    monkeypatch.setattr(lib, "gdr_get_attribute", lambda *args: errno.EIO)
    with pytest.raises(gdrcopy.GdrError) as e:
        gdr.backend
    assert e.value.errno == errno.EIO


def test_open_close(gdr):
    assert not gdr.closed
    assert gdr.backend in ("gdrdrv", "dmabuf", "vulkan")
    assert gdr.driver_version >= (2, 1)
    gdr.close()
    assert gdr.closed
    gdr.close()


def test_closed_gdr_refuses(gdr, buf):
    gdr.close()
    with pytest.raises(gdrcopy.InvalidArgument, match="closed"):
        gdr.pin(buf)
    with pytest.raises(gdrcopy.InvalidArgument, match="closed"):
        gdr.driver_version


def test_context_manager_closes():
    with gdrcopy.open() as g:
        pass
    assert g.closed


class OlderLibrary:
    """A libgdrapi of GDRCopy 2.4: the real one without the functions 2.5 added, saying 2.4."""

    ADDED_IN_2_5 = ("gdr_pin_buffer_v2", "gdr_get_attribute")

    def __init__(self, path, real=ctypes.CDLL):
        self._dll = real(path)

        @ctypes.CFUNCTYPE(None, ctypes.POINTER(ctypes.c_int), ctypes.POINTER(ctypes.c_int))
        def version(major, minor):
            major[0], minor[0] = 2, 4
        self.gdr_runtime_get_version = version

    def __getattr__(self, name):
        if name in self.ADDED_IN_2_5:
            raise AttributeError(f"undefined symbol: {name}")
        return getattr(self._dll, name)


def test_an_older_library_says_what_to_do(monkeypatch):
    path = _library.library().path
    monkeypatch.setattr(_library.ctypes, "CDLL", OlderLibrary)
    with pytest.raises(gdrcopy.GdrError) as e:
        _library.Library(path)
    assert e.value.errno == errno.ENOSYS
    assert e.value.function == f"loading {path}"
    assert "gdr_pin_buffer_v2, gdr_get_attribute" in e.value.reason
    assert "older than GDRCopy 2.5 (it says 2.4)" in e.value.reason
    assert "2.5 or later" in str(e.value) and "GDRCOPY_LIBRARY" in str(e.value)


def test_a_library_that_is_not_libgdrapi_is_refused():
    libc = ctypes.util.find_library("c")
    if not libc:
        pytest.skip("no libc found to stand in for a library that is not libgdrapi")
    err, message, reason = open_in_a_new_process(GDRCOPY_LIBRARY=libc)
    assert err == errno.ENOSYS
    assert "not a libgdrapi" in reason and "GDRCOPY_LIBRARY" in message
