#!/bin/sh
# Pack the VM tier's initramfs (newc cpio, uncompressed: TCG decompresses slowly).
#   mkinitramfs.sh OUT INIT LIBDIR SRC=DEST...
# It holds a static busybox, INIT as /init, and each SRC at DEST. ELF files bring the shared
# libraries ldd finds for them on this host, at the same paths; those under LIBDIR (the
# library being tested) are skipped, the caller places them itself.
# For a guest of another architecture: GDR_VM_SYSROOT (the cross toolchain's, e.g.
# /usr/aarch64-linux-gnu), where the libraries the ELF files name are found instead, by their
# DT_NEEDED entries (ldd cannot run them), and placed in the guest's /lib/TRIPLET with the
# program interpreter at its own path; GDR_VM_BUSYBOX, a static busybox of that architecture.
set -eu
out=$1 init=$2 libdir=$3
shift 3
sysroot=${GDR_VM_SYSROOT:-}

busybox=${GDR_VM_BUSYBOX:-$(command -v busybox || true)}
if [ -z "$busybox" ]; then
	echo "mkinitramfs: busybox not found (apt-get install busybox-static)" >&2
	exit 1
fi
if readelf -lW "$busybox" | grep -q 'program interpreter'; then
	echo "mkinitramfs: $busybox is dynamically linked; install busybox-static" >&2
	exit 1
fi

stage=$(mktemp -d "${TMPDIR:-/tmp}/gdr-initramfs.XXXXXX")
trap 'rm -rf "$stage"' EXIT
mkdir -p "$stage/bin" "$stage/dev" "$stage/proc" "$stage/sys" "$stage/tmp"
cp "$busybox" "$stage/bin/busybox"
cp "$init" "$stage/init"
chmod 755 "$stage/init"

libdir_abs=$(cd "$libdir" && pwd)
copy_libs() { # elf
	ldd "$1" 2>/dev/null | awk '{ for (i = 1; i <= NF; i++) if ($i ~ /^\//) print $i }' |
	while read -r lib; do
		case "$(cd "$(dirname "$lib")" && pwd)" in
		"$libdir_abs") continue ;;
		esac
		if [ ! -e "$stage$lib" ]; then
			mkdir -p "$stage$(dirname "$lib")"
			cp -L "$lib" "$stage$lib"
		fi
	done
}

# The cross case: the libraries ELF names (and theirs, in turn), from the sysroot, unless a
# file of that name is in the initramfs already (the library under test, the simulated CUDA).
triplet=$(basename "$sysroot")
copy_libs_cross() { # elf
	interp=$(readelf -lW "$1" | sed -n 's/.*program interpreter: \(.*\)]$/\1/p')
	if [ -n "$interp" ] && [ ! -e "$stage$interp" ]; then
		mkdir -p "$stage$(dirname "$interp")"
		cp -L "$sysroot/lib/$(basename "$interp")" "$stage$interp"
	fi
	for needed in $(readelf -dW "$1" | sed -n 's/.*(NEEDED).*\[\(.*\)\]$/\1/p'); do
		[ -z "$(find "$stage" -name "$needed" -print -quit)" ] || continue
		if [ ! -e "$sysroot/lib/$needed" ]; then
			echo "mkinitramfs: $1 needs $needed, which $sysroot/lib does not have" >&2
			exit 1
		fi
		mkdir -p "$stage/lib/$triplet"
		cp -L "$sysroot/lib/$needed" "$stage/lib/$triplet/$needed"
		copy_libs_cross "$stage/lib/$triplet/$needed"
	done
}

is_elf() { [ "$(head -c 4 "$1" | od -An -c | tr -d ' ')" = "177ELF" ]; }

for spec in "$@"; do
	src=${spec%%=*}
	dest=${spec#*=}
	mkdir -p "$stage$(dirname "$dest")"
	cp -L "$src" "$stage$dest"
	if [ -z "$sysroot" ] && is_elf "$src"; then
		copy_libs "$src"
	fi
done
# Once everything is placed, so that what the caller placed is not fetched again.
if [ -n "$sysroot" ]; then
	for spec in "$@"; do
		dest=${spec#*=}
		case $dest in *.ko) continue ;; esac
		! is_elf "$stage$dest" || copy_libs_cross "$stage$dest"
	done
fi

(cd "$stage" && find . | LC_ALL=C sort | cpio --quiet -o -H newc -R 0:0) >"$out.tmp"
mv "$out.tmp" "$out"
