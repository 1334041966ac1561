#!/bin/bash
# make as users run it beyond "make all", each into a scratch directory: "make clean all"
# (serial and -j), which cleans first and builds after; the goals that build nothing (version,
# config, uninstall, clean), which write nothing either, and so work in a read-only tree;
# LDFLAGS=-L naming a directory with another libgdrapi.so and libcuda.so (NVIDIA GDRCopy's,
# CUDA's stubs), which the tools and tests do not link; GDRCopy's "make driver KVER=<release>",
# which builds gdrdrv for that kernel; gdrcopy_pplat's object, rebuilt when PPLAT_GENCODE or
# a header it includes changes; a BUILD= or install directory with a space, refused before
# anything is written into the pieces the shell would cut it into; CC and AR from the
# environment, as for a build with -flto (which needs llvm-ar or gcc-ar for libgdrapi.a).
#   test_invocations.sh SRCDIR
set -u
src=$1
. "$src/tests/harness/harness.sh"
test_own_make
test_scratch invocations
mk() { make -C "$src" --no-print-directory "$@"; }

# make clean lib over a build, serial and -j2: clean's rm -rf comes before any compiler, and the
# library is there afterwards (the build's config.txt went with clean, and the build needs it).
lib=$tmp/clean/lib/libgdrapi.so.2.6
if ! mk -j2 BUILD="$tmp/clean" lib >"$tmp/clean.log" 2>&1; then
	result fail clean-then-build "make lib failed: $(grep -m 1 -E 'error|\*\*\*' "$tmp/clean.log")"
else
	bad=
	for j in -j1 -j2; do
		if ! mk "$j" BUILD="$tmp/clean" clean lib >"$tmp/clean$j.log" 2>&1; then
			bad="$bad make $j clean lib: $(grep -m 1 '\*\*\*' "$tmp/clean$j.log");"
		elif [ ! -f "$lib" ]; then
			bad="$bad make $j clean lib left no $lib;"
		elif [ "$(grep -m 1 -E '^(rm -rf|  CC )' "$tmp/clean$j.log")" != "rm -rf $tmp/clean" ]; then
			bad="$bad make $j clean lib compiled before clean removed the build;"
		fi
	done
	if [ -z "$bad" ]; then result pass clean-then-build; else result fail clean-then-build "$bad"; fi
fi
# A build directory that cannot be made, as in a read-only tree (even for root: /dev/null is no
# directory).
ro=/dev/null/build
if [ "$(mk -s BUILD=$ro version 2>&1)" != "$(mk -s BUILD="$tmp/clean" version 2>&1)" ]; then
	result fail nobuild-goals-write-nothing "make version: $(mk -s BUILD=$ro version 2>&1 | tail -n 1)"
elif ! out=$(mk -s BUILD=$ro config 2>&1) || ! out=$(mk -s BUILD=$ro prefix="$tmp/none" uninstall 2>&1) ||
	! out=$(mk -s BUILD=$ro clean 2>&1); then
	result fail nobuild-goals-write-nothing "$(echo "$out" | tail -n 1)"
else
	result pass nobuild-goals-write-nothing
fi
# Decoys with none of the symbols the tools and the tests take from the library and from the
# simulated CUDA driver.
mkdir -p "$tmp/decoy"
echo 'int gdr_open(void) { return 0; }' >"$tmp/decoy/decoy.c"
if ! cc -shared -fPIC -o "$tmp/decoy/libgdrapi.so" "$tmp/decoy/decoy.c" ||
	! cp "$tmp/decoy/libgdrapi.so" "$tmp/decoy/libcuda.so"; then
	result fail ldflags-other-libraries "cannot build the decoy libraries"
elif mk -j2 BUILD="$tmp/clean" LDFLAGS="-L$tmp/decoy" "$tmp/clean/bin/gdrcopy_info" \
	"$tmp/clean/tests/unit/test_fork_export" >"$tmp/ldflags.log" 2>&1; then
	result pass ldflags-other-libraries
else
	result fail ldflags-other-libraries "$(grep -m 1 -E 'undefined reference|\*\*\*' "$tmp/ldflags.log")"
fi
# KVER picks the kernel: a release with no build tree is named as such (not the running
# kernel's), and one with headers is what the summary says the module is built against.
kver=$(kernel_with_headers)
out=$(mk BUILD="$tmp/kver" KVER=0.0-gdrcopy-test driver 2>&1)
if ! printf '%s\n' "$out" | grep -q '^make modules: no kernel build tree for 0.0-gdrcopy-test;'; then
	result fail kver-selects-kernel "make driver KVER=0.0-gdrcopy-test: $(printf '%s\n' "$out" | tail -n 2 | head -n 1)"
elif [ -n "$kver" ] && ! mk -n BUILD="$tmp/kver" KVER="$kver" all 2>&1 |
	grep -qx "  CONFIG  gdrdrv.ko: against /lib/modules/$kver/build"; then
	result fail kver-selects-kernel "make KVER=$kver: $(mk -n BUILD="$tmp/kver" KVER="$kver" all 2>&1 | grep 'CONFIG  gdrdrv')"
else
	result pass kver-selects-kernel "${kver:-no kernel headers installed: the refusal only}"
fi
# make -q: would make rebuild it? (-W: as if the header had just changed, touching nothing.)
pplat=$tmp/pplat/obj/tools/pplat.o
if [ ! -x "$(mk -s BUILD="$tmp/pplat" --eval 'nvcc: ; @echo $(NVCC)' nvcc)" ]; then
	result skip pplat-rebuilds "no nvcc (give CUDA= or NVCC=)"
elif ! mk BUILD="$tmp/pplat" "$pplat" >"$tmp/pplat.log" 2>&1; then
	result fail pplat-rebuilds "make $pplat: $(grep -m 1 -E 'error|\*\*\*' "$tmp/pplat.log")"
else
	bad=
	for h in tools/common.h include/gdrapi.h include/gdrapi_ext.h; do
		mk -q BUILD="$tmp/pplat" -W "$h" "$pplat" && bad="$bad not rebuilt after a change of $h;"
	done
	mk -q BUILD="$tmp/pplat" PPLAT_GENCODE='-gencode arch=compute_80,code=sm_80' "$pplat" &&
		bad="$bad not rebuilt for another PPLAT_GENCODE;"
	if [ -z "$bad" ]; then result pass pplat-rebuilds; else result fail pplat-rebuilds "$bad"; fi
fi
bad=
if mk BUILD="$tmp/a $tmp/b" lib >"$tmp/space-build.log" 2>&1; then
	bad="$bad make BUILD='$tmp/a $tmp/b' lib went on;"
elif ! grep -q "BUILD='$tmp/a $tmp/b' has a space" "$tmp/space-build.log"; then
	bad="$bad BUILD with a space: $(grep -m 1 '\*\*\*' "$tmp/space-build.log");"
fi
for v in prefix DESTDIR; do
	if mk BUILD="$tmp/clean" $v="$tmp/sp $tmp/ace" install >"$tmp/space-$v.log" 2>&1; then
		bad="$bad make $v='$tmp/sp $tmp/ace' install went on;"
	elif ! grep -q "='$tmp/sp $tmp/ace' has a space" "$tmp/space-$v.log"; then
		bad="$bad $v with a space: $(grep -m 1 -E 'No such|\*\*\*' "$tmp/space-$v.log");"
	fi
done
for p in "$tmp/a" "$tmp/b" "$tmp/sp" "$tmp/ace"; do
	[ ! -e "$p" ] || bad="$bad $p was made;"
done
if [ -z "$bad" ]; then result pass space-in-paths; else result fail space-in-paths "$bad"; fi
# Stand-ins that log their use and run the real tools.
for t in cc ar; do
	printf '#!/bin/sh\necho "$0" >>%s\nexec %s "$@"\n' "$tmp/tools.log" "$t" >"$tmp/my-$t"
	chmod +x "$tmp/my-$t"
done
if ! CC=$tmp/my-cc AR=$tmp/my-ar mk BUILD="$tmp/envtools" "$tmp/envtools/lib/libgdrapi.a" \
	>"$tmp/envtools.log" 2>&1; then
	result fail cc-ar-from-environment "$(grep -m 1 -E 'error|\*\*\*' "$tmp/envtools.log")"
else
	bad=
	for t in cc ar; do grep -qx "$tmp/my-$t" "$tmp/tools.log" || bad="$bad ${t^^} from the environment was not used;"; done
	if [ -z "$bad" ]; then result pass cc-ar-from-environment; else result fail cc-ar-from-environment "$bad"; fi
fi
test_exit
