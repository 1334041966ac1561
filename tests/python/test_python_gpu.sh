#!/bin/sh
# Tier 3 (make check-gpu): the package's pytest suite (python/tests) on the GPU machine, from the
# source tree, against this build's library and NVIDIA's driver. The cases that need the
# simulated driver's counters skip there, saying so; every other case runs as in tier 1
# (test_python.sh), one result per case. Skips where there is no CUDA device, or where the
# interpreter (PYTHON=, default python3) lacks pytest or NumPy. The build fills in @SRC@ and @LIB@.
set -u
src=@SRC@
lib=@LIB@
py=${PYTHON:-python3}

. "$src/tests/harness/harness.sh"

for module in pytest numpy; do
	"$py" -c "import $module" 2>/dev/null ||
		skip_test "$py has no $module: install it, or set PYTHON= to an interpreter that has it"
done
devices=$("$py" -c '
import ctypes
try:
    cuda = ctypes.CDLL("libcuda.so.1")
except OSError:
    print("none: no libcuda.so.1 (the NVIDIA driver)")
    raise SystemExit
if hasattr(cuda, "simcuda_get_counters"):
    print("none: libcuda.so.1 is the simulated driver, on which tier 1 runs the suite")
    raise SystemExit
n = ctypes.c_int()
if cuda.cuInit(0) or cuda.cuDeviceGetCount(ctypes.byref(n)) or n.value < 1:
    print("none: cuInit or cuDeviceGetCount failed, or found no device")
else:
    print(n.value)
')
case "$devices" in
none*) skip_test "no CUDA device for the suite: ${devices#none: }" ;;
esac

export GDRCOPY_LIBRARY="$lib" PYTHONPATH="$src/python" PYTHONDONTWRITEBYTECODE=1
unset GDRCOPY_BACKEND GDRCOPY_COPY_IMPL GDRCOPY_USE_DMABUF_MMAP GDRCOPY_ENABLE_LOGGING
cd "$src/python/tests" && exec "$py" -m pytest -p no:cacheprovider -q -rs .
