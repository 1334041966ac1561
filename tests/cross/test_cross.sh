#!/bin/bash
# Tier 1 on another architecture: cross-build the library, the unit tests and the tools' CPU
# parts for ARCH (arm64 or ppc64le), run the unit tests under qemu-user, with lavapipe and the
# Vulkan loader of ARCH from Debian's archive for the Vulkan cases (without network they skip,
# saying so), and cross-build gdrdrv.ko against Debian's kernel headers for ARCH. One result line
# per step and per test.
#   test_cross.sh SRCDIR BUILD ARCH CUDA
# The valgrind and ASan runs of tier 1 are x86-only here: valgrind does not run under qemu-user,
# and the sanitizer runtimes are not cross-installed.
set -u
src=$1 build=$2 arch=$3 cuda=$4
case $arch in
arm64) triplet=aarch64-linux-gnu qemu=qemu-aarch64-static deb_arch=arm64 kflavour=arm64 ;;
ppc64le) triplet=powerpc64le-linux-gnu qemu=qemu-ppc64le-static deb_arch=ppc64el
	kflavour=powerpc64le ;;
*) echo "unknown architecture $arch"; exit 1 ;;
esac
out=$build/cross/$arch
sysroot=/usr/$triplet
. "$src/tests/harness/harness.sh"
. "$src/tests/cross/apt_private.sh"

missing=
for tool in "$triplet-gcc" "$triplet-g++" "$qemu"; do
	command -v "$tool" >/dev/null || missing="$missing $tool"
done
[ -d "$sysroot/lib" ] || missing="$missing $sysroot"
[ -z "$missing" ] || skip_test "no cross toolchain for $arch:$missing (make deps installs it)"

test_own_make
xmake() {
	make --no-print-directory -C "$src" -j"$(nproc)" CROSS_COMPILE="$triplet-" BUILD="$out" \
		CUDA="$cuda" "$@"
}

log=$out.build.log
mkdir -p "$out"
if ! units=$(xmake -s cross-unit-tests 2>"$log") || ! tools=$(xmake -s cross-tools 2>>"$log") ||
	! sim_cuda=$(xmake -s cross-sim-cuda 2>>"$log"); then
	result fail build "cannot list what to build: $(tail -n 1 "$log")"
	exit 1
fi
# shellcheck disable=SC2086
if xmake lib $sim_cuda >>"$log" 2>&1 && xmake $units $tools >>"$log" 2>&1; then
	result pass build
else
	result fail build "make for $triplet failed: $(grep -m 1 -E 'error|Error' "$log")"
	tail -n 20 "$log"
	exit 1
fi

is_elf() { [ "$(head -c 4 "$1" | tail -c 3)" = ELF ]; }

# The tests that run the tools are scripts, and the kernel cannot execute an $arch program
# (no binfmt_misc here): each tool becomes a script that runs it under qemu-user, with argv[0]
# kept; the program moves to a sibling of bin/, where its RUNPATH ($ORIGIN/../lib) still holds.
# A program that re-executes itself (/proc/self/exe) still fails, with ENOEXEC.
mkdir -p "$out/bin-$arch"
for tool in $tools; do
	is_elf "$tool" || continue
	mv -f "$tool" "$out/bin-$arch/"
	printf '#!/bin/sh\nQEMU_LD_PREFIX=%s exec %s -0 "$0" %s "$@"\n' "$sysroot" "$qemu" \
		"$out/bin-$arch/$(basename "$tool")" >"$tool"
	chmod +x "$tool"
done

# Mesa's lavapipe and the Vulkan loader of $arch, with what they need (libc6 included), unpacked
# into a root of their own that becomes qemu-user's library prefix in place of the cross
# sysroot: qemu-user looks up an absolute path there first, so the manifest's driver path
# (/usr/lib/$triplet/libvulkan_lvp.so) resolves inside it. Fetched once per build directory.
vulkan=$out/vulkan
prefix=$sysroot
icd=
vulkan_debs="mesa-vulkan-drivers libvulkan1"
if [ "$(cat "$vulkan/fetched" 2>/dev/null)" != "$vulkan_debs" ]; then
	rm -rf "$vulkan"
	if apt_private "$vulkan" "$deb_arch" install -y -d --no-install-recommends $vulkan_debs; then
		for deb in "$vulkan"/archives/*.deb; do dpkg-deb -x "$deb" "$vulkan/root"; done
		# A link to an absolute path (ppc64el's /lib64/ld64.so.2) points into the root.
		find "$vulkan/root" -type l -lname '/*' | while read -r link; do
			ln -sfn "$vulkan/root$(readlink "$link")" "$link"
		done
		echo "$vulkan_debs" >"$vulkan/fetched"
	fi
fi
if [ -s "$vulkan/fetched" ]; then
	prefix=$vulkan/root
	icd=$(ls "$vulkan"/root/usr/share/vulkan/icd.d/lvp_icd.*json 2>/dev/null | head -n 1)
else
	echo "no lavapipe for $arch (its Vulkan cases skip): $(apt_private_why "$vulkan")"
fi

# A test that is a suite writes its own case lines; they are passed on under the test's name.
# A test that fails because it executes an $arch program qemu-user does not see (a re-exec of
# itself) says ENOEXEC ("Exec format error"); it is reported as one skip saying so.
run_one() { # name program
	local name=$1 prog=$2 sub rc last
	sub=$(mktemp)
	if is_elf "$prog"; then
		GDR_TEST_RESULTS=$sub GDR_TEST_EMULATOR=$qemu QEMU_LD_PREFIX=$prefix \
			GDR_TEST_LVP_ICD=$icd timeout -k 5 300 "$qemu" "$prog" >"$out/$name.log" 2>&1 \
			</dev/null
	else
		GDR_TEST_RESULTS=$sub timeout -k 5 300 "$prog" >"$out/$name.log" 2>&1 </dev/null
	fi
	rc=$?
	last=$(grep -v '^[[:space:]]*$' "$out/$name.log" | tail -n 1)
	if [ "$rc" != 0 ] && [ "$rc" != 77 ] && grep -q 'Exec format error' "$out/$name.log" "$sub"; then
		result skip "$name" "it executes $arch programs, which needs binfmt_misc for qemu-user"
	elif [ -s "$sub" ]; then
		while read -r verdict case_name detail; do
			result "$verdict" "$name:$case_name" "$detail"
		done <"$sub"
		if [ "$rc" != 0 ] && [ "$rc" != 77 ] && ! grep -q '^fail ' "$sub"; then
			result fail "$name" "suite exited $rc: $last"
		fi
	else
		case $rc in
		0) result pass "$name" ;;
		77) result skip "$name" "$last" ;;
		*) result fail "$name" "exit $rc under $qemu: $last" ;;
		esac
	fi
	rm -f "$sub"
}

for prog in $units; do
	run_one "$(basename "$prog")" "$prog"
done

# gdrcopy_info needs no GPU and no CUDA.
info=$(timeout 60 "$out/bin/gdrcopy_info" 2>&1)
if [ $? = 0 ] && printf '%s\n' "$info" | grep -q '^gdrcopy 2\.'; then
	result pass gdrcopy_info
else
	result fail gdrcopy_info "$(printf '%s\n' "$info" | tail -n 1)"
fi

"$src/tests/cross/cross_module.sh" "$src" "$out" "$arch" "$triplet" "$deb_arch" "$kflavour" \
	>"$out/module.log" 2>&1
rc=$?
detail=$(tail -n 1 "$out/module.log")
case $rc in
0) result pass gdrdrv.ko "$detail" ;;
77) result skip gdrdrv.ko "$detail" ;;
*) result fail gdrdrv.ko "$detail"; tail -n 20 "$out/module.log" ;;
esac

test_exit
