#!/bin/sh
# The shared library's contract with other people's binaries: SONAME, the dev symlink chain, and
# exactly GDRCopy 2.6's public functions (the v1 gdr_get_info among them) and the one gdrcopy
# extension function, gdr_ext_take_errors, exported, nothing else; the static library's globals
# all gdr_*.
# LIB_DIR is substituted at build time.
set -u
lib_dir=@LIB_DIR@
lib="$lib_dir/libgdrapi.so.2.6"
fail=0
say() { echo "$*" >&2; fail=1; }

command -v nm >/dev/null || { echo "nm (binutils) is not installed"; exit 77; }
[ -f "$lib" ] || { echo "no $lib"; exit 1; }
[ "$(readlink "$lib_dir/libgdrapi.so.2")" = libgdrapi.so.2.6 ] || say "libgdrapi.so.2 does not link to libgdrapi.so.2.6"
[ "$(readlink "$lib_dir/libgdrapi.so")" = libgdrapi.so.2 ] || say "libgdrapi.so does not link to libgdrapi.so.2"
[ -f "$lib_dir/libgdrapi.a" ] || say "no static libgdrapi.a"

soname=$(readelf -d "$lib" | sed -n 's/.*(SONAME).*\[\(.*\)\]/\1/p')
[ "$soname" = libgdrapi.so.2 ] || say "SONAME is '$soname', want libgdrapi.so.2"
needed=$(readelf -d "$lib" | sed -n 's/.*(NEEDED).*\[\(.*\)\]/\1/p' | grep -v -E '^(libc|libdl|libpthread)\.so' || true)
[ -z "$needed" ] || say "unexpected NEEDED libraries: $needed (libcuda and libvulkan must be dlopened)"

want="gdr_close
gdr_copy_from_mapping
gdr_copy_to_mapping
gdr_driver_get_version
gdr_ext_take_errors
gdr_get_attribute
gdr_get_callback_flag
gdr_get_info
gdr_get_info_v2
gdr_get_mapping_type_string
gdr_map
gdr_map_v2
gdr_open
gdr_pin_buffer
gdr_pin_buffer_v2
gdr_runtime_get_version
gdr_unmap
gdr_unpin_buffer"
got=$(nm -D --defined-only "$lib" | awk '{print $3}' | sort)
if [ "$got" != "$want" ]; then
	say "exported symbols differ from GDRCopy 2.6's public set plus gdr_ext_take_errors:"
	printf '%s\n' "$want" >"${TMPDIR:-/tmp}/exports.want.$$"
	printf '%s\n' "$got" | diff "${TMPDIR:-/tmp}/exports.want.$$" - >&2
	rm -f "${TMPDIR:-/tmp}/exports.want.$$"
fi
# Every export is a function (GDRCopy's data exports were incidental).
objects=$(nm -D --defined-only "$lib" | awk '$2 != "T" {print $3}')
[ -z "$objects" ] || say "exported non-functions: $objects"
# The static library cannot hide its internal functions: each is named gdr_*, so that a program
# linked with it statically meets no name of ours but where it chose to.
if [ -f "$lib_dir/libgdrapi.a" ]; then
	foreign=$(nm -g --defined-only "$lib_dir/libgdrapi.a" | awk 'NF == 3 && $3 !~ /^gdr_/ {print $3}')
	[ -z "$foreign" ] || say "libgdrapi.a defines global symbols outside gdr_*: $(echo $foreign)"
fi
# No symbol versions: binaries linked against GDRCopy's unversioned library must bind.
if readelf -V "$lib" | grep -q 'Version definition'; then say "library defines symbol versions"; fi

[ "$fail" = 0 ] && echo "exports, SONAME and symlinks as GDRCopy 2.6"
exit "$fail"
