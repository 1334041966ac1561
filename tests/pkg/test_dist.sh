#!/bin/bash
# make dist as GDRCopy's (reference gdrcopy-2.6.md, 1.2): three tarballs in BUILD named for this
# machine's architecture, each with one top directory laid out as GDRCopy's: the library with
# its links, the headers and LICENSE; the tools; gdrdrv's sources. A client builds against the
# library's tarball and runs; gdrdrv builds from its tarball where a kernel build tree is.
#   test_dist.sh SRCDIR BUILD CUDA
set -u
src=$1 build=$2 cuda=$3
. "$src/tests/harness/harness.sh"
test_scratch dist
test_own_make
mk() { make --no-print-directory -C "$src" BUILD="$build" CUDA="$cuda" "$@"; }
version=$(mk -s version)
arch=$(uname -m)

if ! mk dist >"$tmp/dist.log" 2>&1; then
	result fail dist "$(grep -m 1 -iE 'error|\*\*\*' "$tmp/dist.log")"
	test_exit
fi
result pass dist

# tarball NAME: its listing ("PATH" for files and directories, "PATH -> TARGET" for links) in
# $tmp/NAME.list, and its files under $tmp/x; a fail and 1 when it is missing.
tarball() {
	local f=$build/$1-linux-$arch-$version.tar.gz
	if [ ! -f "$f" ]; then
		result fail "$1" "no $f"
		return 1
	fi
	tar -tvzf "$f" | awk '{ $1 = $2 = $3 = $4 = $5 = ""; sub(/^ +/, ""); print }' >"$tmp/$1.list"
	mkdir -p "$tmp/x" && tar -C "$tmp/x" -xzf "$f"
}
# check NAME LINE...: the listing has each LINE, and nothing outside NAME's top directory.
check() {
	local name=$1 line miss="" out
	shift
	for line in "$@"; do grep -qxF -- "$line" "$tmp/$name.list" || miss="$miss '$line'"; done
	out=$(grep -v "^$name/" "$tmp/$name.list" | head -n 1)
	if [ -n "$miss" ]; then
		result fail "$name" "missing:$miss"
	elif [ -n "$out" ]; then
		result fail "$name" "outside $name/: $out"
	else
		return 0
	fi
	return 1
}

if tarball libgdrapi && check libgdrapi libgdrapi/LICENSE libgdrapi/include/gdrapi.h \
	libgdrapi/include/gdrapi_ext.h libgdrapi/include/gdrconfig.h \
	"libgdrapi/lib64/libgdrapi.so.$version" \
	"libgdrapi/lib64/libgdrapi.so.2 -> libgdrapi.so.$version" \
	"libgdrapi/lib64/libgdrapi.so -> libgdrapi.so.2"; then
	lib=$tmp/x/libgdrapi
	if ! out=$(${CC:-cc} -Wall -Werror -I"$lib/include" -o "$tmp/client" "$src/tests/pkg/client.c" \
		-L"$lib/lib64" -lgdrapi -Wl,-rpath,"$lib/lib64" 2>&1); then
		result fail libgdrapi "the client does not build against it: $(echo "$out" | head -n 1)"
	elif ! out=$("$tmp/client" 2>&1); then
		result fail libgdrapi "the client built against it fails: $out"
	else
		result pass libgdrapi "$out"
	fi
fi

want=()
for t in "$build"/bin/gdrcopy_*; do [ -x "$t" ] && want+=("gdrcopy-tests/bin/${t##*/}"); done
if tarball gdrcopy-tests && check gdrcopy-tests gdrcopy-tests/bin/gdrcopy_info "${want[@]}"; then
	extra=$(grep -vE '^gdrcopy-tests/(bin/(gdrcopy_[a-z]+)?)?$' "$tmp/gdrcopy-tests.list" | head -n 1)
	if [ -n "$extra" ]; then
		result fail gdrcopy-tests "not a tool: $extra"
	else
		result pass gdrcopy-tests "${#want[@]} tools"
	fi
fi

if tarball gdrdrv && check gdrdrv gdrdrv/src/Makefile gdrdrv/src/Kbuild \
	gdrdrv/src/include/uapi/gdrdrv.h; then
	built=$(grep -E '\.(o|ko|cmd|mod\.c)$|kernel\.mk$' "$tmp/gdrdrv.list" | head -n 1)
	kver=$(kernel_with_headers)
	if [ -n "$built" ]; then
		result fail gdrdrv "not a source: $built"
	elif [ -z "$kver" ]; then
		result pass gdrdrv "not built: no kernel headers installed"
	elif ! make -C "$tmp/x/gdrdrv/src" KDIR="/lib/modules/$kver/build" >"$tmp/kbuild.log" 2>&1; then
		result fail gdrdrv "make in gdrdrv/src for $kver: $(grep -m 1 -iE 'error' "$tmp/kbuild.log")"
	elif [ "$(modinfo -F vermagic "$tmp/x/gdrdrv/src/gdrdrv.ko" | cut -d' ' -f1)" != "$kver" ]; then
		result fail gdrdrv "gdrdrv.ko is not for $kver"
	else
		result pass gdrdrv "make in gdrdrv/src builds gdrdrv.ko for $kver"
	fi
fi
test_exit
