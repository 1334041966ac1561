#!/bin/sh
# The Python package (python/) in tier 1: installed as users install it, with Debian's setuptools
# and no network (pip install --no-build-isolation --no-index into a venv made with
# --system-site-packages), then its pytest suite run against that installed copy, on the
# simulated CUDA driver with lavapipe (the vulkan backend) and the library just built. Each
# pytest case is one result line for tests/run-tests.sh (python/tests/conftest.py writes them).
# The build fills in @SRC@, @LIB@ and @SIM@.
set -u
src=@SRC@
lib=@LIB@
sim=@SIM@
py=/usr/bin/python3

. "$src/tests/harness/harness.sh"
lvp=$(lavapipe_icd "$lib")

[ -x "$py" ] || { echo "no $py (Debian's python3)"; exit 77; }
for module in venv pytest numpy setuptools; do
	"$py" -c "import $module" 2>/dev/null ||
		{ echo "Python module $module is missing: install python3-venv python3-pytest python3-numpy python3-setuptools"; exit 77; }
done
[ -n "$lvp" ] || skip_test "no lavapipe manifest for this architecture (lvp_icd*.json): install mesa-vulkan-drivers"
[ -e "$sim/libcuda.so.1" ] || { echo "the simulated CUDA driver is not built ($sim/libcuda.so.1)"; exit 77; }

test_scratch python
# pip builds in the source tree: build a copy, so the checkout stays clean.
cp -r "$src/python" "$tmp/src"
rm -rf "$tmp/src/build" "$tmp/src"/*.egg-info
if ! "$py" -m venv --system-site-packages "$tmp/venv" >"$tmp/venv.log" 2>&1; then
	result fail install "python3 -m venv: $(tail -n 1 "$tmp/venv.log")"
	exit 1
fi
if ! "$tmp/venv/bin/pip" install --no-build-isolation --no-index --no-cache-dir \
		--disable-pip-version-check -q "$tmp/src" >"$tmp/pip.log" 2>&1; then
	cat "$tmp/pip.log"
	result fail install "pip install --no-build-isolation --no-index: $(tail -n 1 "$tmp/pip.log")"
	exit 1
fi
result pass install
where=$(cd "$tmp" && "$tmp/venv/bin/python" -c 'import gdrcopy; print(gdrcopy.__file__)')
case "$where" in
"$tmp/venv/"*) result pass installed-copy-imported ;;
*) result fail installed-copy-imported "import gdrcopy found $where, not the venv's copy" ;;
esac

export LD_LIBRARY_PATH="$sim${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}"
export VK_DRIVER_FILES="$lvp" VK_ICD_FILENAMES="$lvp"
export GDRCOPY_BACKEND=vulkan GDRCOPY_LIBRARY="$lib" PYTHONDONTWRITEBYTECODE=1
unset GDRCOPY_COPY_IMPL GDRCOPY_USE_DMABUF_MMAP GDRCOPY_ENABLE_LOGGING PYTHONPATH
# From the tests' own directory, so that only the installed gdrcopy is importable.
cd "$tmp/src/tests" && exec "$tmp/venv/bin/python" -m pytest -p no:cacheprovider -q -rs .
