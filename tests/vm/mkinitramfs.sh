#!/bin/sh
# Pack the VM tier's initramfs (newc cpio, uncompressed: TCG decompresses slowly).
#   mkinitramfs.sh OUT INIT LIBDIR SRC=DEST...
# It holds a static busybox, INIT as /init, and each SRC at DEST. ELF files bring the shared
# libraries ldd finds for them on this host, at the same paths; those under LIBDIR (the
# library being tested) are skipped, the caller places them itself.
set -eu
out=$1 init=$2 libdir=$3
shift 3

busybox=$(command -v busybox || true)
if [ -z "$busybox" ]; then
	echo "mkinitramfs: busybox not found (apt-get install busybox-static)" >&2
	exit 1
fi
if ldd "$busybox" >/dev/null 2>&1; then
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

for spec in "$@"; do
	src=${spec%%=*}
	dest=${spec#*=}
	mkdir -p "$stage$(dirname "$dest")"
	cp -L "$src" "$stage$dest"
	if [ "$(head -c 4 "$src" | od -An -c | tr -d ' ')" = "177ELF" ]; then
		copy_libs "$src"
	fi
done

(cd "$stage" && find . | LC_ALL=C sort | cpio --quiet -o -H newc -R 0:0) >"$out.tmp"
mv "$out.tmp" "$out"
