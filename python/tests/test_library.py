# SPDX-License-Identifier: MIT
"""Loading libgdrapi, the layouts the package declares, and Gdr's life."""

import ctypes
import errno
import os
import subprocess
import sys

import pytest

import gdrcopy
from gdrcopy import _library


def run_python(code, **env):
    """Run code in a fresh interpreter (the library is loaded once per process)."""
    return subprocess.run([sys.executable, "-c", code], env={**os.environ, **env},
                          capture_output=True, text=True, timeout=120)


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
    r = run_python("import gdrcopy\n"
                   "try:\n    gdrcopy.open()\n"
                   "except OSError as e:\n    print(e.errno, e)\n",
                   GDRCOPY_LIBRARY="/nonexistent/libgdrapi.so.2")
    assert r.returncode == 0, r.stderr
    assert r.stdout.startswith(f"{errno.ENOENT} "), r.stdout
    assert "/nonexistent/libgdrapi.so.2" in r.stdout and "GDRCOPY_LIBRARY" in r.stdout


def test_open_failure_carries_each_backends_reason():
    r = run_python("import gdrcopy\n"
                   "try:\n    gdrcopy.open()\n"
                   "except gdrcopy.GdrError as e:\n    print(e.errno); print(e.reason)\n",
                   GDRCOPY_BACKEND="no-such-backend")
    assert r.returncode == 0, r.stderr
    err, reason = r.stdout.splitlines()
    assert int(err) == errno.ENODEV
    assert "GDRCOPY_BACKEND=no-such-backend: no such backend" in reason


def test_open_failure_without_a_device():
    r = run_python("import gdrcopy\n"
                   "try:\n    gdrcopy.open()\n"
                   "except gdrcopy.GdrError as e:\n    print(e.reason)\n",
                   GDRCOPY_SIM_CUDA_DEVICES="0", GDRCOPY_BACKEND="vulkan")
    assert r.returncode == 0, r.stderr
    assert "backend vulkan: unavailable:" in r.stdout, r.stdout


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
