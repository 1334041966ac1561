#!/bin/bash
# SPDX-License-Identifier: MIT
# What the kernel build tests need from Debian's archive, fetched through apt with a sources list
# of our own and kept in a cache outside the tree, so that later runs need no network and no
# rebuild; nothing is installed system-wide. Each command prints shell assignments (for eval),
# or exits 77 with the reason on one line when it needs the network and cannot reach it.
#   cache.sh kernel SERIES [image]    Debian's headers (and image) of kernel SERIES:
#                                     kdir= release= cc= [vmlinuz=]
#       5.10   bullseye's, whose headers name gcc-10; where that is not installed cc= names
#              gcc, this system's (bookworm's gcc-12 builds gdrdrv for them without warnings)
#       6.12   bookworm-backports': built with gcc-12 and bookworm's glibc, so its kbuild
#              tools run here (trixie's need trixie's glibc)
#       newest trixie-backports' kernel, the newest Debian builds, installed with its headers
#              into a Debian trixie chroot (debootstrap), because its tools and compiler need
#              trixie's: kdir= (inside the chroot) release= root= (the chroot) [vmlinuz=],
#              checker= (sid's sparse, in the chroot) or no_checker= (why not); needs root
#       6.1-arm64, 6.1-ppc64el   bookworm's 6.1 headers of that architecture, for a cross
#              build: kdir= release= arch= (kbuild's ARCH) cross= (CROSS_COMPILE); image
#              adds vmlinuz= boot_modules= (arm64's virtio console) busybox= (their VM tiers)
#       6.12-arm64-16k   the same of bookworm-backports' arm64 kernel with 16 KiB pages
#   cache.sh nvidia SUITE PACKAGE     NVIDIA's kernel driver sources: src= version= flavor=
#       bookworm nvidia-kernel-source (535, non-free), trixie nvidia-kernel-source (550,
#       non-free), bookworm|trixie nvidia-open-kernel-source (535, 550, contrib)
#   cache.sh nvidia-module SUITE PACKAGE KDIR [CC]
#                                     nvidia.ko of those sources built for KDIR: symvers=
#                                     (only its Module.symvers and build log are kept)
#   cache.sh dir                      the cache's directory
# Environment: GDR_TEST_CACHE (default /var/cache/gdrcopy-test, where writable, else
# ~/.cache/gdrcopy-test), GDR_DEBIAN_MIRROR (default http://deb.debian.org/debian),
# GDR_TEST_OFFLINE (a reason: what needs the network skips with it at once, so that a run
# without network pays the mirror's timeouts once, not once per item).
set -euo pipefail

# The reason goes to the caller's stdout even from inside a command substitution.
exec 8>&1
skip() {
	echo "SKIP: $*" >&8
	exit 77
}
usage() {
	echo "usage: $0 kernel SERIES [image] | nvidia SUITE PACKAGE | nvidia-module SUITE PACKAGE KDIR [CC] | dir" >&2
	exit 2
}
[ $# -ge 1 ] || usage

if [ -n "${GDR_TEST_CACHE:-}" ]; then
	cache=$GDR_TEST_CACHE
elif mkdir -p /var/cache/gdrcopy-test 2>/dev/null && [ -w /var/cache/gdrcopy-test ]; then
	cache=/var/cache/gdrcopy-test
else
	cache=${XDG_CACHE_HOME:-$HOME/.cache}/gdrcopy-test
fi
mkdir -p "$cache"
if [ "$1" = dir ]; then
	echo "$cache"
	exit 0
fi
[ $# -ge 2 ] || usage
mirror=${GDR_DEBIAN_MIRROR:-http://deb.debian.org/debian}
here=$(cd "$(dirname "$0")" && pwd)
[ "$(dpkg --print-architecture 2>/dev/null)" = amd64 ] ||
	skip "Debian's amd64 packages are what these builds use; this is not an amd64 Debian system"
command -v apt-get >/dev/null 2>&1 || skip "no apt-get: Debian's packages cannot be fetched here"

# One run at a time per cache: several checkouts on one machine share it.
exec 9>"$cache/lock"
flock 9

aptdir=$cache/apt
apt_opts=(-o "Dir::Etc::SourceList=$aptdir/sources.list" -o "Dir::Etc::SourceParts=$aptdir/parts"
	-o "Dir::State::Lists=$aptdir/lists" -o "Dir::Cache=$aptdir/cache"
	-o "Dir::Cache::archives=$aptdir/archives" -o APT::Sandbox::User=root -q
	-o Acquire::Retries=1 -o Acquire::http::Timeout=30)

apt_setup() {
	mkdir -p "$aptdir/parts" "$aptdir/lists/partial" "$aptdir/cache" "$aptdir/archives/partial" \
		"$aptdir/debs"
	local keyring=/usr/share/keyrings/debian-archive-keyring.gpg
	[ -r "$keyring" ] || skip "no $keyring (apt-get install debian-archive-keyring)"
	local suite
	for suite in bullseye bookworm bookworm-backports trixie; do
		echo "deb [signed-by=$keyring] $mirror $suite main contrib non-free"
	done >"$aptdir/sources.list.new"
	if ! cmp -s "$aptdir/sources.list.new" "$aptdir/sources.list"; then
		mv "$aptdir/sources.list.new" "$aptdir/sources.list"
		rm -f "$aptdir/updated"
	fi
	rm -f "$aptdir/sources.list.new"
}

apt_update() {
	local log=$aptdir/update.log
	[ -z "${GDR_TEST_OFFLINE:-}" ] || skip "$GDR_TEST_OFFLINE"
	if ! timeout 600 apt-get "${apt_opts[@]}" update >"$log" 2>&1 ||
	   grep -qE '^(W|E): Failed to fetch' "$log"; then
		skip "cannot update the package lists from $mirror (no network?): $(grep -E '^(W|E):' "$log" | head -n 1)"
	fi
	touch "$aptdir/updated"
}

# Download PACKAGE (name/suite or name=version) into the debs directory; print the file. The
# lists are updated first when they are missing, and once more when the download fails (the
# archive moved on since they were fetched).
apt_download() {
	local spec=$1 log=$aptdir/download.log tmp=$aptdir/debs/new attempt
	[ -f "$aptdir/updated" ] || apt_update
	for attempt in 1 2; do
		rm -rf "$tmp"
		mkdir -p "$tmp"
		if (cd "$tmp" && timeout 900 apt-get "${apt_opts[@]}" download "$spec") >"$log" 2>&1 &&
		   [ -n "$(find "$tmp" -name '*.deb')" ]; then
			local deb
			deb=$(find "$tmp" -name '*.deb' -printf '%f\n' | head -n 1)
			mv "$tmp/$deb" "$aptdir/debs/$deb"
			echo "$aptdir/debs/$deb"
			return 0
		fi
		[ $attempt = 1 ] && apt_update
	done
	skip "cannot download $spec from $mirror: $(grep -E '^(W|E):' "$log" | head -n 1)"
}

# Dependency NAME's "(= VERSION)" in a .deb's Depends, as name=version, else the bare name.
dep_of() { # deb name-regex
	dpkg-deb -f "$1" Depends | tr ',' '\n' | sed 's/|.*//; s/^ *//' |
		sed -nE "s/^($2) \(= ([^)]*)\).*/\1=\2/p; t; s/^($2)( .*)?$/\1/p" | head -n 1
}

# Download PACKAGE of Debian architecture ARCH from bookworm (or bookworm-backports, as
# PACKAGE/bookworm-backports) into the debs directory; print the file. A state of its own
# (lists-ARCH), so that the host's lists stay amd64's alone.
apt_download_foreign() { # arch package
	local arch=$1 spec=$2 log=$aptdir/download.log tmp=$aptdir/debs/new
	local keyring=/usr/share/keyrings/debian-archive-keyring.gpg
	local opts=(-o "Dir::Etc::SourceList=$aptdir/sources-$arch.list"
		-o "Dir::Etc::SourceParts=$aptdir/parts" -o "Dir::State::Lists=$aptdir/lists-$arch"
		-o "Dir::Cache=$aptdir/cache-$arch" -o "Dir::Cache::archives=$aptdir/archives"
		-o "APT::Architecture=$arch" -o "APT::Architectures::=$arch" -o Dir::State::status=/dev/null
		-o APT::Sandbox::User=root -q -o Acquire::Retries=1 -o Acquire::http::Timeout=30)
	[ -z "${GDR_TEST_OFFLINE:-}" ] || skip "$GDR_TEST_OFFLINE"
	mkdir -p "$aptdir/lists-$arch/partial" "$aptdir/cache-$arch" "$aptdir/debs"
	printf 'deb [signed-by=%s] %s %s main\n' "$keyring" "$mirror" bookworm \
		"$keyring" "$mirror" bookworm-backports >"$aptdir/sources-$arch.list.new"
	if ! cmp -s "$aptdir/sources-$arch.list.new" "$aptdir/sources-$arch.list"; then
		mv "$aptdir/sources-$arch.list.new" "$aptdir/sources-$arch.list"
		rm -f "$aptdir/lists-$arch/updated"
	fi
	rm -f "$aptdir/sources-$arch.list.new"
	if [ ! -f "$aptdir/lists-$arch/updated" ]; then
		if ! timeout 600 apt-get "${opts[@]}" update >"$log" 2>&1 ||
		   grep -qE '^(W|E): Failed to fetch' "$log"; then
			skip "cannot update bookworm's $arch package lists from $mirror (no network?): $(grep -E '^(W|E):' "$log" | head -n 1)"
		fi
		touch "$aptdir/lists-$arch/updated"
	fi
	rm -rf "$tmp"
	mkdir -p "$tmp"
	if ! (cd "$tmp" && timeout 900 apt-get "${opts[@]}" download "$spec") >"$log" 2>&1; then
		# The archive moved on since the lists were fetched: once more after an update.
		rm -f "$aptdir/lists-$arch/updated"
		skip "cannot download $spec ($arch) from $mirror: $(grep -E '^(W|E):' "$log" | head -n 1)"
	fi
	local deb
	deb=$(find "$tmp" -name '*.deb' -printf '%f\n' | head -n 1)
	mv "$tmp/$deb" "$aptdir/debs/$deb"
	echo "$aptdir/debs/$deb"
}

# Unpack DEB, a kernel's headers, into DIR/root with the common part and the kbuild tools (the
# host's architecture's, from SUITE) of its release, and mark DIR ready for release REL.
unpack_headers() { # dir deb rel suite
	local dir=$1 deb=$2 rel=$3 suite=$4 common kbuild
	common=$(dep_of "$deb" 'linux-headers-[^ ]*-common')
	kbuild=$(dep_of "$deb" 'linux-kbuild-[^ ]*')
	dpkg -x "$deb" "$dir/root"
	deb=$(apt_download "$common")
	dpkg -x "$deb" "$dir/root"
	deb=$(apt_download "${kbuild%%=*}/$suite")
	dpkg -x "$deb" "$dir/root"
	# The headers' Makefile includes the common part by its installed path.
	sed -i "s|^include /usr/src/|include $dir/root/usr/src/|" \
		"$dir/root/usr/src/linux-headers-$rel/Makefile"
	echo "$rel" >"$dir/release"
	touch "$dir/ready"
	rm -f "$aptdir"/debs/*.deb
}

# Another architecture's headers, with the common part and the (amd64) kbuild tools of the same
# version, for a cross build of gdrdrv (its arm64 and POWER code): bookworm's 6.1 (series
# 6.1-arm64, 6.1-ppc64el), or bookworm-backports' 6.12 arm64 kernel with 16 KiB pages
# (6.12-arm64-16k; built with bookworm's gcc 12, as the cross compiler here). With "image", what
# that architecture's VM tier boots besides: the kernel, busybox of that architecture and, for
# arm64, the modules that give its guest a virtio console (the verdicts' channel: QEMU's arm64
# "virt" board has one serial port; 6.12 has the console built in, and compresses its modules,
# which are unpacked here for busybox's insmod).
cmd_kernel_cross() { # series: 6.1-arm64 | 6.1-ppc64el | 6.12-arm64-16k, [image]
	local series=$1 want_image=$2 arch flavour karch cross suite dir rel deb headers image kernel
	local modules f
	case $series in
	6.1-arm64) arch=arm64 flavour=arm64 karch=arm64 cross=aarch64-linux-gnu- suite=bookworm
		modules="modules/virtio_mmio.ko modules/virtio_console.ko" ;;
	6.12-arm64-16k) arch=arm64 flavour=arm64-16k karch=arm64 cross=aarch64-linux-gnu-
		suite=bookworm-backports modules=modules/virtio_mmio.ko ;;
	6.1-ppc64el) arch=ppc64el flavour=powerpc64le karch=powerpc cross=powerpc64le-linux-gnu-
		suite=bookworm modules= ;;
	*) usage ;;
	esac
	command -v "${cross}gcc" >/dev/null 2>&1 ||
		skip "no ${cross}gcc for the $arch build (apt-get install gcc-${cross%-})"
	dir=$cache/kernels/$series
	if [ ! -f "$dir/ready" ]; then
		apt_setup
		deb=$(apt_download_foreign "$arch" "linux-headers-$flavour/$suite")
		headers=$(dep_of "$deb" "linux-headers-[^ ]*-$flavour")
		rel=${headers#linux-headers-}
		rel=${rel%%=*}
		[ -n "$rel" ] || skip "cannot tell the kernel release of $suite's linux-headers-$flavour"
		rm -rf "$dir"
		mkdir -p "$dir/root"
		deb=$(apt_download_foreign "$arch" "${headers%%=*}")
		unpack_headers "$dir" "$deb" "$rel" "$suite"
	fi
	rel=$(cat "$dir/release")
	# arm64's unsigned image is the same kernel without the signed package's EFI wrapping;
	# POWER's is an ELF vmlinux, as QEMU's pseries board loads it.
	case $arch in
	arm64) image=linux-image-$rel-unsigned kernel=boot/vmlinuz-$rel ;;
	ppc64el) image=linux-image-$rel kernel=boot/vmlinux-$rel ;;
	esac
	if [ -n "$want_image" ] && [ ! -f "$dir/image-ready" ]; then
		apt_setup
		rm -rf "$dir/image"
		mkdir -p "$dir/image/modules"
		deb=$(apt_download_foreign "$arch" "$image")
		# shellcheck disable=SC2046 # one pattern per module
		dpkg-deb --fsys-tarfile "$deb" | tar -xf - -C "$dir/image" --wildcards "./$kernel" \
			$(for f in $modules; do echo "*/${f#modules/}*"; done)
		deb=$(apt_download_foreign "$arch" busybox-static)
		dpkg-deb --fsys-tarfile "$deb" | tar -xf - -C "$dir/image" ./bin/busybox
		rm -f "$aptdir"/debs/*.deb
		[ ! -d "$dir/image/lib" ] ||
			find "$dir/image/lib" -name '*.ko*' -exec mv {} "$dir/image/modules/" \;
		rm -rf "$dir/image/lib"
		for f in "$dir"/image/modules/*.ko.xz; do
			[ ! -e "$f" ] || xz -d "$f" || exit 1
		done
		for f in $kernel $modules bin/busybox; do
			[ -f "$dir/image/$f" ] ||
				{ echo "cache.sh: no $f in Debian's $arch packages of $rel" >&2; exit 1; }
		done
		touch "$dir/image-ready"
	fi
	echo "kdir=$dir/root/usr/src/linux-headers-$rel"
	echo "release=$rel"
	echo "arch=$karch"
	echo "cross=$cross"
	if [ -n "$want_image" ]; then
		echo "vmlinuz=$dir/image/$kernel"
		echo "boot_modules='$(for f in $modules; do printf '%s ' "$dir/image/$f"; done)'"
		echo "busybox=$dir/image/bin/busybox"
	fi
}

# sparse for builds against the newest kernel, into its chroot: trixie's 0.6.4 cannot parse the
# __typeof_unqual__ those headers use, sid's 0.6.5 can, and its binary needs no more than
# trixie's libc. It is fetched with an apt state of its own (inside the chroot, which stays
# trixie's; sid's Release may be past its Valid-Until on a mirror that lags) and copied to
# /usr/local/bin. kbuild runs a checker only when its
# scripts/checker-valid.sh prints 1, a script Debian's headers lack: one of ours goes there.
# Prints checker= (the path in the chroot) or no_checker= (why not); never skips the item.
newest_sparse() { # dir rel
	local dir=$1 rel=$2 sid=$1/root/tmp/sid log=$1/sparse.log
	local valid=$1/root/usr/src/linux-headers-${2%-amd64}-common/scripts/checker-valid.sh
	if [ ! -f "$dir/sparse-ready" ] && [ -z "${GDR_TEST_OFFLINE:-}" ]; then
		rm -rf "$sid"
		mkdir -p "$sid/lists/partial" "$sid/archives/partial" "$sid/x"
		echo "deb $mirror sid main" >"$sid/sources.list"
		# shellcheck disable=SC2016 # the chroot's shell expands them
		if timeout 900 chroot "$dir/root" sh -c 'o="-q -o Dir::Etc::SourceList=/tmp/sid/sources.list
			-o Dir::Etc::SourceParts=/tmp/sid -o Dir::State::Lists=/tmp/sid/lists
			-o Dir::Cache=/tmp/sid -o APT::Sandbox::User=root
			-o Acquire::Check-Valid-Until=false"
			apt-get $o update && cd /tmp/sid && apt-get $o download sparse' >"$log" 2>&1 &&
		   dpkg-deb --fsys-tarfile "$sid"/sparse_*.deb | tar -xf - -C "$sid/x" ./usr/bin/sparse
		then
			install -m 755 "$sid/x/usr/bin/sparse" "$dir/root/usr/local/bin/sparse"
			cat >"$valid" <<-'EOF'
			#!/bin/sh
			# Written by gdrcopy's tests/kernel/cache.sh (Debian's headers lack kbuild's own):
			# prints 1 when the checker given, with its flags, parses what these headers use.
			t=$(mktemp) || { echo 0; exit 0; }
			printf 'static inline int f(const int *p)\n{\n\t__typeof_unqual__(*p) x = *p;\n\treturn x;\n}\n' >"$t.c"
			if out=$("$@" "$t.c" 2>&1) && ! printf '%s\n' "$out" | grep -q error; then echo 1; else echo 0; fi
			rm -f "$t" "$t.c"
			EOF
			chmod 755 "$valid"
			touch "$dir/sparse-ready"
		fi
		rm -rf "$sid"
	fi
	if [ ! -f "$dir/sparse-ready" ]; then
		echo "no_checker='cannot fetch the sparse of Debian sid into the chroot (log: $log)'"
	elif [ "$(chroot "$dir/root" "${valid#"$dir/root"}" /usr/local/bin/sparse)" != 1 ]; then
		echo "no_checker='the sparse of Debian sid in the chroot does not parse __typeof_unqual__'"
	else
		echo "checker=/usr/local/bin/sparse"
	fi
}

# A Debian trixie chroot holding trixie-backports' newest kernel headers, with the compiler
# (gcc-14) and tools they were made for; W=1 builds run inside it (tests/kernel/kbuild_lib.sh).
cmd_kernel_newest() { # [image]
	local want_image=$1 dir=$cache/kernels/newest rel log
	if [ ! -f "$dir/ready" ]; then
		[ -z "${GDR_TEST_OFFLINE:-}" ] || skip "$GDR_TEST_OFFLINE"
		[ "$(id -u)" = 0 ] || skip "the newest kernel's build runs in a Debian trixie chroot, which needs root"
		command -v debootstrap >/dev/null 2>&1 ||
			skip "no debootstrap, which makes the newest kernel's trixie chroot (apt-get install debootstrap)"
		rm -rf "$dir"
		mkdir -p "$dir"
		log=$dir/debootstrap.log
		# A failure here is the network's or the mirror's: what is fetched is Debian's own.
		timeout 1200 debootstrap --variant=minbase --include=gcc-14,make,kmod,dwarves,libelf1t64 \
			trixie "$dir/root" "$mirror" >"$log" 2>&1 ||
			skip "debootstrap of Debian trixie from $mirror failed (no network?): $(grep -E '^[EW]:' "$log" | tail -n 1)"
		echo "deb $mirror trixie-backports main" >"$dir/root/etc/apt/sources.list.d/backports.list"
		log=$dir/headers.log
		if ! { timeout 600 chroot "$dir/root" apt-get -q update &&
		       DEBIAN_FRONTEND=noninteractive timeout 900 chroot "$dir/root" apt-get install -y -q \
				--no-install-recommends -t trixie-backports linux-headers-amd64; } >"$log" 2>&1; then
			skip "cannot install trixie-backports' linux-headers-amd64 in the chroot (no network?): $(grep -E '^[EW]:' "$log" | tail -n 1)"
		fi
		rel=$(find "$dir/root/usr/src" -mindepth 1 -maxdepth 1 -name 'linux-headers-*-amd64' \
			-printf '%f\n' | sed 's/^linux-headers-//' | sort -V | tail -n 1)
		[ -n "$rel" ] || { echo "cache.sh: no linux-headers-*-amd64 in $dir/root/usr/src" >&2; exit 1; }
		echo "$rel" >"$dir/release"
		chroot "$dir/root" apt-get clean
		touch "$dir/ready"
	fi
	rel=$(cat "$dir/release")
	# Builds enter it through in-root.sh, which needs a mount namespace: say so here if that
	# cannot be had (a container without CAP_SYS_ADMIN), rather than fail every build.
	log=$(cd "${TMPDIR:-/tmp}" && "$here/in-root.sh" "$dir/root" true 2>&1) ||
		skip "cannot enter the newest kernel's chroot (in-root.sh: unshare, mount): $(echo "$log" | tail -n 1)"
	if [ -n "$want_image" ] && [ ! -f "$dir/image-ready" ]; then
		[ -z "${GDR_TEST_OFFLINE:-}" ] || skip "$GDR_TEST_OFFLINE"
		log=$dir/image.log
		# Debian's newer kernels keep vmlinuz in linux-binary-REL (under /usr/lib/modules),
		# which linux-image-REL depends on; older ones in linux-image-REL's /boot.
		rm -rf "$dir/root/tmp/image" "$dir/vmlinuz"
		mkdir -p "$dir/root/tmp/image" "$dir/vmlinuz"
		# shellcheck disable=SC2016 # the chroot's shell expands them
		timeout 900 chroot "$dir/root" sh -c 'cd /tmp/image &&
			{ apt-get -q -o APT::Sandbox::User=root download "linux-binary-$1" ||
			  apt-get -q -o APT::Sandbox::User=root download "linux-image-$1"; }' \
			sh "$rel" >"$log" 2>&1 ||
			skip "cannot download linux-image-$rel in the chroot (no network?): $(grep -E '^[EW]:' "$log" | tail -n 1)"
		# Only the kernel itself, as for 6.12: the VM tier brings its own modules.
		dpkg-deb --fsys-tarfile "$dir"/root/tmp/image/*.deb |
			tar -xf - -C "$dir/vmlinuz" --wildcards '*vmlinuz*'
		rm -rf "$dir/root/tmp/image"
		find "$dir/vmlinuz" -type f -name 'vmlinuz*' -exec mv {} "$dir/vmlinuz-$rel" \;
		rm -rf "$dir/vmlinuz"
		[ -f "$dir/vmlinuz-$rel" ] ||
			{ echo "cache.sh: no vmlinuz in the image package of $rel (log: $log)" >&2; exit 1; }
		touch "$dir/image-ready"
	fi
	echo "kdir=/usr/src/linux-headers-$rel"
	echo "release=$rel"
	echo "root=$dir/root"
	[ -z "$want_image" ] || echo "vmlinuz=$dir/vmlinuz-$rel"
	newest_sparse "$dir" "$rel"
}

cmd_kernel() { # series [image]
	local series=$1 want_image=${2:-} suite
	case $series in
	newest) cmd_kernel_newest "$want_image"; return ;;
	6.1-arm64 | 6.1-ppc64el | 6.12-arm64-16k) cmd_kernel_cross "$series" "$want_image"; return ;;
	5.10) suite=bullseye ;;
	6.12) suite=bookworm-backports ;;
	*) echo "cache.sh: unknown kernel series $series (5.10, 6.12, newest, 6.1-arm64, 6.1-ppc64el or 6.12-arm64-16k)" >&2; exit 2 ;;
	esac
	local dir=$cache/kernels/$series rel deb
	if [ ! -f "$dir/ready" ]; then
		apt_setup
		local headers
		deb=$(apt_download "linux-headers-amd64/$suite")
		headers=$(dep_of "$deb" 'linux-headers-[^ ]*-amd64')
		rel=${headers#linux-headers-}
		rel=${rel%%=*}
		[ -n "$rel" ] || skip "cannot tell the kernel release of linux-headers-amd64 in $suite"
		rm -rf "$dir"
		mkdir -p "$dir/root"
		deb=$(apt_download "${headers%%=*}/$suite")
		unpack_headers "$dir" "$deb" "$rel" "$suite"
	fi
	rel=$(cat "$dir/release")
	if [ -n "$want_image" ] && [ ! -f "$dir/image-ready" ]; then
		apt_setup
		deb=$(apt_download "linux-image-$rel/$suite")
		# Only the kernel itself: the VM tier brings its own modules.
		dpkg-deb --fsys-tarfile "$deb" | tar -xf - -C "$dir/root" "./boot/vmlinuz-$rel"
		touch "$dir/image-ready"
		rm -f "$aptdir"/debs/*.deb
	fi
	local release kdir cc
	release=$(cat "$dir/release")
	kdir=$dir/root/usr/src/linux-headers-$release
	cc=$(sed -n 's/^CC = .*)\(gcc[-0-9]*\)$/\1/p' "$kdir/.kernelvariables" | head -n 1)
	command -v "${cc:-gcc}" >/dev/null 2>&1 || cc=gcc
	echo "kdir=$kdir"
	echo "release=$release"
	echo "cc=${cc:-gcc}"
	[ -z "$want_image" ] || echo "vmlinuz=$dir/root/boot/vmlinuz-$release"
}

nvidia_dir() { # suite package
	echo "$cache/nvidia/$2-$1"
}

cmd_nvidia() { # suite package
	local suite=$1 pkg=$2 dir
	dir=$(nvidia_dir "$suite" "$pkg")
	if [ ! -f "$dir/ready" ]; then
		apt_setup
		local deb
		deb=$(apt_download "$pkg/$suite")
		rm -rf "$dir"
		mkdir -p "$dir/root"
		dpkg -x "$deb" "$dir/root"
		dpkg-deb -f "$deb" Version >"$dir/version"
		tar -xf "$dir"/root/usr/src/nvidia*.tar.xz -C "$dir/root/usr/src"
		rm -f "$dir"/root/usr/src/nvidia*.tar.xz
		touch "$dir/ready"
		rm -f "$aptdir"/debs/*.deb
	fi
	local src
	src=$(find "$dir/root/usr/src/modules" -mindepth 1 -maxdepth 1 -name 'nvidia*kernel' | head -n 1)
	[ -f "$src/nvidia/nv-p2p.h" ] || { echo "cache.sh: no nvidia/nv-p2p.h under $dir" >&2; exit 1; }
	echo "src=$src"
	echo "version=$(cat "$dir/version")"
	case $pkg in
	*open*) echo "flavor=open" ;;
	*) echo "flavor=proprietary" ;;
	esac
}

# NVIDIA's Makefile wants the kernel's source tree and its output tree: Debian splits them into
# the -common headers (which the output tree's Makefile includes) and the flavour's.
cmd_nvidia_module() { # suite package kdir [cc]
	local suite=$1 pkg=$2 kdir=$3 cc=${4:-}
	# shellcheck disable=SC2034 # cmd_nvidia's output sets all three
	local src version flavor
	local release out sysroot
	eval "$(cmd_nvidia "$suite" "$pkg")"
	release=$(sed -n 's/.*UTS_RELEASE "\(.*\)"/\1/p' "$kdir/include/generated/utsrelease.h")
	out=$(nvidia_dir "$suite" "$pkg")/build-$release
	if [ ! -f "$out/ready" ]; then
		sysroot=$(sed -n 's|^include \(.*\)/Makefile$|\1|p' "$kdir/Makefile" | head -n 1)
		[ -d "$sysroot" ] || sysroot=$kdir
		rm -rf "$out"
		cp -a "$src" "$out"
		if ! make -C "$out" -j"$(nproc)" SYSSRC="$sysroot" SYSOUT="$kdir" \
			NV_KERNEL_MODULES=nvidia ${cc:+CC=$cc} modules >"$out.log" 2>&1; then
			echo "cache.sh: building nvidia.ko of $pkg $version for $release failed; log: $out.log" >&2
			tail -n 20 "$out.log" >&2
			exit 1
		fi
		mv "$out.log" "$out/build.log"
		# The tests need NVIDIA's exports, not the 100+ MB of objects.
		find "$out" -mindepth 1 -maxdepth 1 ! -name Module.symvers ! -name build.log \
			-exec rm -rf {} +
		touch "$out/ready"
	fi
	echo "symvers=$out/Module.symvers"
}

case $1 in
kernel) cmd_kernel "$2" "${3:-}" ;;
nvidia) [ $# = 3 ] || usage; cmd_nvidia "$2" "$3" ;;
nvidia-module) [ $# -ge 4 ] || usage; cmd_nvidia_module "$2" "$3" "$4" "${5:-}" ;;
*) usage ;;
esac
