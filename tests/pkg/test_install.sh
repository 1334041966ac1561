#!/bin/bash
# make install as packagers and GDRCopy's users run it: "make -j8 prefix=... CUDA=... all install"
# from a clean build installs exactly what a serial install does; GDRCopy's part targets (config,
# version, lib_install, exes_install, driver + drv_install) with prefix=, libdir= and DESTDIR=;
# install-tools and exes_install build no kernel module; gdrdrv's sources where DKMS looks.
# Everything goes into scratch directories.
#   test_install.sh SRCDIR BUILD CUDA
set -u
src=$1 build=$2 cuda=$3
version=$(awk '/^#define GDR_API_(MAJOR|MINOR)_VERSION/ {v = v sep $3; sep = "."} END {print v}' \
	"$src/include/gdrapi.h")
. "$src/tests/harness/harness.sh"
test_scratch install
test_own_make
mk() { make --no-print-directory -C "$src" CUDA="$cuda" "$@"; }
# Files and links under a directory, relative to it, with their kind (f file, l link).
tree() { (cd "$1" && find . \( -type f -o -type l \) -printf '%P %y\n' | sort); }
# missing DIR PATH...: the PATHs that are not under DIR.
missing() {
	local dir=$1 p out=
	shift
	for p in "$@"; do [ -e "$dir$p" ] || [ -L "$dir$p" ] || out="$out $p"; done
	echo "$out"
}

fresh=$tmp/build
if mk -j8 BUILD="$fresh" prefix="$tmp/parallel" all install >"$tmp/parallel.log" 2>&1 &&
	mk BUILD="$build" prefix="$tmp/serial" install >"$tmp/serial.log" 2>&1; then
	tree "$tmp/parallel" >"$tmp/parallel.files"
	tree "$tmp/serial" >"$tmp/serial.files"
	if ! grep -q '^share/man/man1/gdrcopy_copylat.1 f$' "$tmp/serial.files"; then
		result fail parallel-install "the serial install has no gdrcopy_copylat.1"
	elif diff -q "$tmp/parallel.files" "$tmp/serial.files" >/dev/null; then
		result pass parallel-install "$(wc -l <"$tmp/serial.files") files and links"
	else
		result fail parallel-install "make -j8 all install differs from a serial install:" \
			"$(diff "$tmp/serial.files" "$tmp/parallel.files" | grep '^[<>]' | head -n 5 | tr '\n' ' ')"
	fi
else
	result fail parallel-install "$(grep -m 1 -iE 'error|\*\*\*' "$tmp/parallel.log" "$tmp/serial.log")"
fi

arch=$(mk -s BUILD="$fresh" config)
if [[ $arch =~ ^GDRAPI_ARCH=(X86|ARM64|POWER|GENERIC)$ ]] &&
	[ "$(mk -s BUILD="$fresh" version)" = "$version" ]; then
	result pass config-version "$arch"
else
	result fail config-version "config printed '$arch', version '$(mk -s BUILD="$fresh" version)'"
fi

dest=$tmp/gdrcopy
if mk BUILD="$fresh" prefix=/usr libdir=/usr/lib64 DESTDIR="$dest" lib exes lib_install \
	exes_install >"$tmp/parts.log" 2>&1; then
	miss=$(missing "$dest" /usr/lib64/libgdrapi.so.$version /usr/lib64/libgdrapi.so.2 \
		/usr/lib64/libgdrapi.so /usr/include/gdrapi.h /usr/include/gdrapi_ext.h \
		/usr/include/gdrconfig.h \
		/usr/lib64/pkgconfig/gdrapi.pc /usr/share/man/man7/gdrapi_ext.7 \
		/usr/share/man/man3/gdr_open.3 /usr/bin/gdrcopy_sanity /usr/bin/sanity \
		/usr/bin/gdrcopy_copylat /usr/bin/copylat /usr/share/man/man1/gdrcopy_copylat.1)
	if [ -n "$miss" ]; then
		result fail lib_install-exes_install "missing:$miss"
	elif ! grep -q '^libdir=/usr/lib64$' "$dest/usr/lib64/pkgconfig/gdrapi.pc"; then
		result fail lib_install-exes_install "gdrapi.pc: $(grep libdir= "$dest/usr/lib64/pkgconfig/gdrapi.pc")"
	else
		result pass lib_install-exes_install
	fi
else
	result fail lib_install-exes_install "$(grep -m 1 -iE 'error|\*\*\*' "$tmp/parts.log")"
fi

# An installed tool finds the library in libdir with no LD_LIBRARY_PATH: its RUNPATH names libdir
# as seen from bindir ($ORIGIN/../lib64 here, which the build tree's $ORIGIN/../lib misses), so
# the DESTDIR tree resolves within itself. The tools were linked for another prefix above.
info=$dest/usr/bin/gdrcopy_info
if [ ! -x "$info" ]; then
	result fail tools-runpath-libdir "exes_install put no $info"
else
	runpath=$(readelf -d "$info" | sed -n 's/.*(RUNPATH).*\[\(.*\)\]/\1/p')
	got=$(env -u LD_LIBRARY_PATH ldd "$info" | awk '$1 == "libgdrapi.so.2" {print $3}')
	if [ "$(readlink -f "$got")" != "$(readlink -f "$dest/usr/lib64/libgdrapi.so.2")" ]; then
		result fail tools-runpath-libdir "libdir=/usr/lib64: gdrcopy_info (RUNPATH '$runpath')" \
			"loads libgdrapi.so.2 from '${got:-nowhere}', not $dest/usr/lib64"
	elif ! env -u LD_LIBRARY_PATH "$info" --help >/dev/null 2>&1; then
		result fail tools-runpath-libdir "the installed gdrcopy_info --help fails"
	else
		result pass tools-runpath-libdir "RUNPATH $runpath"
	fi
fi

# GDRCopy's exec_prefix= reaches gdrapi.pc, whose libdir follows it.
if ! mk BUILD="$fresh" prefix=/opt/gdr exec_prefix=/opt/gdr-x86 DESTDIR="$tmp/pc" lib_install \
	>"$tmp/pc.log" 2>&1; then
	result fail pc-exec-prefix "$(grep -m 1 -iE 'error|\*\*\*' "$tmp/pc.log")"
else
	pc=$tmp/pc/opt/gdr-x86/lib/pkgconfig/gdrapi.pc
	got=$(grep -E '^(prefix|exec_prefix|libdir)=' "$pc" 2>/dev/null | tr '\n' ' ')
	if [ "$got" = "prefix=/opt/gdr exec_prefix=/opt/gdr-x86 libdir=/opt/gdr-x86/lib " ]; then
		result pass pc-exec-prefix "$got"
	else
		result fail pc-exec-prefix "${pc#$tmp/}: '$got'"
	fi
fi

# gdrconfig.h, installed as GDRCopy installs it: it compiles in C and C++ beside gdrapi.h and
# defines the one GDRAPI_<arch> that make config names (an #error where GDRCopy knows none).
inc=$dest/usr/include
printf '#include <gdrconfig.h>\n#include <gdrapi.h>\nint main(void) { return 0; }\n' >"$tmp/config.c"
want=${arch#GDRAPI_ARCH=}
bad=
for lang in c c++; do
	[ "$lang" = c ] && compiler=${CC:-cc} || compiler=${CXX:-c++}
	if [ "$want" = GENERIC ]; then
		$compiler -x "$lang" -fsyntax-only -I"$inc" "$tmp/config.c" >/dev/null 2>&1 &&
			bad="$bad $lang: no #error for an architecture GDRCopy does not know;"
		continue
	fi
	if ! out=$($compiler -x "$lang" -Wall -Wextra -Werror -fsyntax-only -I"$inc" "$tmp/config.c" 2>&1); then
		bad="$bad $lang: $(echo "$out" | head -n 1);"
		continue
	fi
	got=$(echo '#include <gdrconfig.h>' | $compiler -x "$lang" -E -dM -I"$inc" - |
		sed -n 's/^#define \(GDRAPI_[A-Z0-9_]*\).*/\1/p' | sort | tr '\n' ' ')
	[ "$got" = "GDRAPI_$want " ] || bad="$bad $lang defines '$got', not GDRAPI_$want;"
done
if [ ! -f "$inc/gdrconfig.h" ]; then
	result fail gdrconfig-h "lib_install did not install gdrconfig.h"
elif [ -n "$bad" ]; then
	result fail gdrconfig-h "$bad"
else
	result pass gdrconfig-h "GDRAPI_$want, C and C++"
fi

# The tools' install builds the tools, never the module, even where a kernel tree is there.
kdir=$(ls -d /lib/modules/*/build 2>/dev/null | head -n 1)
if [ -z "$kdir" ]; then
	result skip tools-install-no-module "no kernel build tree (linux-headers) to leave alone"
elif ! mk -n BUILD="$tmp/tools-only" KDIR="$kdir" DESTDIR="$tmp/tools-only-dest" install-tools \
	exes_install >"$tmp/tools-only.log" 2>&1; then
	result fail tools-install-no-module "make -n install-tools: $(tail -n 1 "$tmp/tools-only.log")"
elif grep -v '^  CONFIG  ' "$tmp/tools-only.log" | grep -qE -- '-C kernel|gdrdrv\.ko'; then
	result fail tools-install-no-module "install-tools builds gdrdrv.ko: $(grep -v '^  CONFIG  ' \
		"$tmp/tools-only.log" | grep -m 1 -E -- '-C kernel|gdrdrv\.ko')"
else
	result pass tools-install-no-module "against $kdir"
fi

if mk BUILD="$fresh" DESTDIR="$tmp/dkms" install-dkms >"$tmp/dkms.log" 2>&1 &&
	[ -f "$tmp/dkms/usr/src/gdrdrv-$version/dkms.conf" ] &&
	mk BUILD="$fresh" prefix="$tmp/user" install-dkms >>"$tmp/dkms.log" 2>&1 &&
	[ -f "$tmp/user/src/gdrdrv-$version/dkms.conf" ]; then
	result pass dkms-sources "/usr/src/gdrdrv-$version; \$(prefix)/src for other prefixes"
else
	result fail dkms-sources "no dkms.conf in /usr/src/gdrdrv-$version or \$(prefix)/src: $(tail -n 1 "$tmp/dkms.log")"
fi

kver=$(kernel_with_headers)
if [ -z "$kver" ]; then
	result skip drv_install "no kernel headers installed (linux-headers-$(dpkg --print-architecture 2>/dev/null))"
elif mk BUILD="$fresh" KDIR="/lib/modules/$kver/build" DESTDIR="$tmp/drv" driver drv_install \
	>"$tmp/drv.log" 2>&1; then
	ko=$tmp/drv/lib/modules/$kver/kernel/drivers/misc/gdrdrv.ko
	if [ ! -f "$ko" ]; then
		result fail drv_install "no $ko"
	elif [ "$(modinfo -F vermagic "$ko" | cut -d' ' -f1)" != "$kver" ]; then
		result fail drv_install "$ko is for $(modinfo -F vermagic "$ko"), not $kver"
	else
		result pass drv_install "$kver"
	fi
else
	result fail drv_install "$(grep -m 1 -iE 'error|\*\*\*' "$tmp/drv.log")"
fi
test_exit
