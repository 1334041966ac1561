# SPDX-License-Identifier: MIT
"""The GPU machine's scripts (tests/gpu/) and the docs' example: where torch or a GPU is missing
they say so and exit 77; where they are there, they pass."""

import os
import py_compile
import subprocess
import sys

import pytest

HERE = os.path.dirname(os.path.abspath(__file__))
PYTHON_DIR = os.path.dirname(HERE)


@pytest.mark.parametrize("script", ["check_torch.py", "bench_update.py", "bench_pin.py"])
def test_runs_or_says_why_not(script, tmp_path):
    results = tmp_path / "results"
    env = {**os.environ, "GDR_TEST_RESULTS": str(results)}
    r = subprocess.run([sys.executable, os.path.join(HERE, "gpu", script)], env=env,
                       capture_output=True, text=True, timeout=1200)
    assert r.returncode in (0, 77), r.stdout + r.stderr
    if r.returncode == 77:
        assert r.stdout.strip(), "exit 77 without a reason"
    if script == "check_torch.py":
        lines = results.read_text().splitlines()
        assert len(lines) == 10
        # "pass NAME [detail]" or "skip NAME reason": a skip says why.
        assert all(line.split(" ")[0] == "pass" and len(line.split(" ")) >= 2 or
                   line.split(" ")[0] == "skip" and len(line.split(" ")) > 2
                   for line in lines), lines


def test_example_compiles(tmp_path):
    py_compile.compile(os.path.join(PYTHON_DIR, "examples", "gpu_polls_cpu_value.py"),
                       cfile=str(tmp_path / "example.pyc"), doraise=True)
