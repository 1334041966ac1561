#!/bin/sh
# The Python package on the GPU machine, in one command: the torch/CuPy checks, then the
# update benchmark (a markdown table for docs/python.md). Run from anywhere after building the
# library (make -j16) and setting up the Vulkan loader as tests/gpu/README.md says.
#   PYTHON=  the interpreter with torch (default python3)
cd "$(dirname "$0")/../../.." || exit 1
py=${PYTHON:-python3}
"$py" python/tests/gpu/check_torch.py
rc=$?
echo
"$py" python/tests/gpu/bench_update.py
exit "$rc"
