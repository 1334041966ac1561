#!/bin/bash
# Cross-build gdrdrv.ko for ARCH against Debian's kernel headers for that architecture.
#   cross_module.sh SRCDIR OUT ARCH TRIPLET DEB_ARCH FLAVOUR
# Installing linux-headers-<abi>-<flavour>:<arch> through apt is not practical: it pulls in that
# architecture's gcc, which replaces the host's toolchain. But its files are enough: the
# arch-independent half (linux-headers-<abi>-common) and the kbuild scripts (linux-kbuild, a
# Multi-Arch: foreign package) are the host's own, of the same version. So this downloads the one
# package (apt_private.sh), unpacks it under OUT, and points its scripts at the host's kbuild.
# Exit 0 built, 77 not possible here (the last line says why), 1 the build failed.
set -u
src=$1 out=$2 arch=$3 triplet=$4 deb_arch=$5 flavour=$6
case $arch in
arm64) karch=arm64 machine=AArch64 ;;
ppc64le) karch=powerpc machine=PowerPC64 ;;
esac

skip() { echo "$*"; exit 77; }
. "$src/tests/cross/apt_private.sh"

command -v apt-get >/dev/null && command -v dpkg-deb >/dev/null || skip "needs apt-get and dpkg-deb (Debian)"

# The newest Debian kernel ABI whose common headers and kbuild are installed on the host.
read -r common version < <(dpkg-query -W -f '${db:Status-Abbrev} ${Package} ${Version}\n' \
	'linux-headers-*-common' 2>/dev/null | awk '$1 == "ii" {print $2, $3}' | sort -V | tail -n 1)
[ -n "${common:-}" ] || skip "no Debian kernel headers on the host (apt-get install linux-headers-$(dpkg --print-architecture))"
abi=${common#linux-headers-}
abi=${abi%-common}
kbuild=linux-kbuild-$(echo "$abi" | cut -d. -f1-2)
kbuild_version=$(dpkg-query -W -f '${Version}' "$kbuild" 2>/dev/null)
[ "$kbuild_version" = "$version" ] || skip "$kbuild $kbuild_version does not match $common $version"
pkg=linux-headers-$abi-$flavour

cache=$out/kernel-headers
kdir=$cache/root/usr/src/$pkg
if [ "$(cat "$cache/version" 2>/dev/null)" != "$pkg=$version" ]; then
	rm -rf "$cache"
	mkdir -p "$cache/deb"
	if ! (cd "$cache/deb" && apt_private "$cache" "$deb_arch" download "$pkg=$version"); then
		skip "cannot download $pkg=$version for $deb_arch: $(apt_private_why "$cache")"
	fi
	dpkg-deb -x "$cache"/deb/"$pkg"_*.deb "$cache/root" || exit 1
	mkdir -p "$cache/root/usr/lib"
	ln -sfn "/usr/lib/$kbuild" "$cache/root/usr/lib/$kbuild"
	echo "$pkg=$version" >"$cache/version"
fi
[ -f "$kdir/Makefile" ] || { echo "no $kdir/Makefile in $pkg"; exit 1; }

unset MAKEFLAGS MFLAGS MAKELEVEL
rm -rf "$out/kernel"
if ! make -C "$src/kernel" -j"$(nproc)" KDIR="$kdir" OUT="$out/kernel" ARCH="$karch" \
	CROSS_COMPILE="$triplet-"; then
	echo "gdrdrv.ko did not build for $pkg"
	exit 1
fi
ko=$out/kernel/gdrdrv.ko
[ -f "$ko" ] || { echo "the build made no gdrdrv.ko"; exit 1; }
got_machine=$(readelf -h "$ko" | sed -n 's/^ *Machine: *//p')
vermagic=$(modinfo -F vermagic "$ko" 2>/dev/null || strings "$ko" | sed -n 's/^vermagic=//p')
case "$got_machine" in
*"$machine"*) ;;
*) echo "gdrdrv.ko is for '$got_machine', not $machine"; exit 1 ;;
esac
case "$vermagic" in
"$abi-$flavour "*) ;;
*) echo "gdrdrv.ko has vermagic '$vermagic', not $abi-$flavour"; exit 1 ;;
esac
echo "gdrdrv.ko for $abi-$flavour ($got_machine)"
