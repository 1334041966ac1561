#!/bin/sh
# make deb's check of the Build-Depends (packaging/deb-build-deps.sh), with dpkg-checkbuilddeps
# and dpkg-buildpackage stood in for: CUDA's dependencies unmet (a toolkit from NVIDIA's
# installer) build with -d; any other unmet one (debhelper, dh-dkms) stops make deb with the
# apt-get line before dpkg-buildpackage starts, unless DEB_FLAGS has -d, and so does another
# error of its (unmet build conflicts), but not a warning; all met builds as is.
#   test_deb_build_deps.sh SOURCE_TREE
set -u
. "$1/tests/harness/harness.sh"
src=$1
test_scratch deb-build-deps
test_own_make
command -v dpkg-parsechangelog >/dev/null || skip_test "no dpkg-parsechangelog (apt-get install dpkg-dev)"

mkdir "$tmp/bin"
# dpkg-checkbuilddeps: $FAKE_UNMET unmet, as dpkg-dev 1.21 words it, after the line
# $FAKE_EXTRA (an error fails it too). dpkg-buildpackage: its arguments in $tmp/called, and a
# package for make deb to list.
cat >"$tmp/bin/dpkg-checkbuilddeps" <<'END'
#!/bin/sh
rc=0
if [ -n "$FAKE_EXTRA" ]; then
	echo "$FAKE_EXTRA" >&2
	case $FAKE_EXTRA in *" error: "*) rc=1 ;; esac
fi
if [ -n "$FAKE_UNMET" ]; then
	echo "dpkg-checkbuilddeps: error: Unmet build dependencies: $FAKE_UNMET" >&2
	rc=1
fi
exit $rc
END
cat >"$tmp/bin/dpkg-buildpackage" <<END
#!/bin/sh
echo "\$*" >"$tmp/called"
touch ../gdrcopy_test.deb
END
chmod +x "$tmp/bin/dpkg-checkbuilddeps" "$tmp/bin/dpkg-buildpackage"

cuda_deps='nvidia-cuda-dev (>= 12.0) | cuda-cudart-dev-13-0 | cuda-cudart-dev-12-9 nvidia-cuda-toolkit | cuda-nvcc-13-0'
dh_deps='debhelper-compat (= 13) dh-sequence-dkms'

# case NAME UNMET DEB_FLAGS WANT [MESSAGE]: with UNMET unmet (and dpkg-checkbuilddeps saying
# $extra first), make deb runs dpkg-buildpackage with the arguments WANT ("none": it does not
# run it, and fails), and says MESSAGE.
extra=
case_() {
	rm -f "$tmp/called"
	out=$(PATH="$tmp/bin:$PATH" FAKE_UNMET="$2" FAKE_EXTRA="$extra" make --no-print-directory -C "$src" \
		BUILD="$tmp/build" DEB_FLAGS="$3" deb 2>&1)
	rc=$?
	called=$(cat "$tmp/called" 2>/dev/null || echo none)
	if [ "$4" = none ] && [ "$rc" = 0 ]; then
		result fail "$1" "make deb succeeded: $(printf '%s' "$out" | tr '\n' '|')"
	elif [ "$4" != none ] && [ "$rc" != 0 ]; then
		result fail "$1" "make deb failed: $(printf '%s' "$out" | tail -n 3 | tr '\n' '|')"
	elif [ "$called" != "$4" ]; then
		result fail "$1" "dpkg-buildpackage: expected '$4', got '$called'"
	elif [ -n "${5:-}" ] && ! printf '%s\n' "$out" | grep -qF -- "$5"; then
		result fail "$1" "no '$5' in: $(printf '%s' "$out" | tail -n 3 | tr '\n' '|')"
	else
		result pass "$1"
	fi
}
case_ all_met "" "" "-us -uc -b"
case_ cuda_unmet "$cuda_deps" "" "-us -uc -b -d" "building with -d"
case_ debhelper_unmet "$dh_deps $cuda_deps" "" none \
	"make deb: missing build dependencies: debhelper-compat dh-sequence-dkms: apt-get install debhelper-compat dh-sequence-dkms"
case_ debhelper_unmet_flag_d "$dh_deps" "-d" "-us -uc -b -d"
extra="dpkg-checkbuilddeps: warning: a warning of its own"
case_ warning_ignored "$cuda_deps" "" "-us -uc -b -d" "building with -d"
extra="dpkg-checkbuilddeps: error: Unmet build conflicts: nvidia-gdrcopy"
case_ build_conflicts "" "" none "make deb: $extra"
test_exit
