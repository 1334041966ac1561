# SPDX-License-Identifier: MIT
"""Loading libgdrapi, the layouts the package declares, and Gdr's life."""

import ctypes
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


def test_open_failure_without_a_device():
    err, _, reason = open_in_a_new_process(GDRCOPY_SIM_CUDA_DEVICES="0",
                                           GDRCOPY_BACKEND="vulkan")
    assert err == errno.ENODEV
    assert "backend vulkan: unavailable:" in reason


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
