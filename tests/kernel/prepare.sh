#!/bin/bash
# SPDX-License-Identifier: MIT
# Before the kernel build tests run (make check-build): fetch what they build against and build
# NVIDIA's nvidia.ko, all through cache.sh, so that the downloads and the long builds happen once
# per machine and outside the tests' time limits. For each item it writes DIR/NAME.env: cache.sh's
# assignments, or its "SKIP: reason" line, or "FAIL: reason"; the tests read them.
#   prepare.sh DIR
# Items: kernel-5.10 (headers), kernel-6.12 (headers and image, for the VM tier), kernel-newest
# (trixie-backports' headers in a trixie chroot, and image), kernel-6.1-arm64 and
# kernel-6.1-ppc64el (bookworm's headers of those architectures, for cross builds),
# kernel-6.12-arm64-16k (bookworm-backports' arm64 kernel with 16 KiB pages, the same),
# kernel-6.1-arm64-vm, kernel-6.1-ppc64el-vm and kernel-6.12-arm64-16k-vm (the same headers with
# the image, for those VM tiers), kernel-host (the installed Debian kernel the VM tier boots, 6.1 on bookworm),
# nvidia-SUITE-PACKAGE (NVIDIA's sources) and nvidia-module-SUITE-PACKAGE (their nvidia.ko,
# built for the kernel of that Debian release: bookworm's on kernel-host, trixie's on
# kernel-6.12).
# GDR_TEST_NVIDIA_MODULES=0 leaves nvidia.ko unbuilt (each build takes 1.5-2 min of CPU the first
# time), and the modpost checks against it skip with that reason. bookworm's open R535 is not
# built: its nv-pci.c calls pci_resize_resource() with three arguments, and Debian's 6.1.192
# (a 6.1.y backport) takes four, which NVIDIA's conftest does not know.
set -u
dir=$1
here=$(cd "$(dirname "$0")" && pwd)
mkdir -p "$dir"

# The suites and packages of NVIDIA's driver sources: bookworm's R535 and trixie's R550, each in
# the proprietary (non-free) and open (contrib) flavor.
NVIDIA_SOURCES="bookworm:nvidia-kernel-source bookworm:nvidia-open-kernel-source
trixie:nvidia-kernel-source trixie:nvidia-open-kernel-source"

# Why nvidia.ko of these sources is not built, where it is not.
no_module_reason() { # suite package
	case $1:$2 in
	bookworm:nvidia-open-kernel-source)
		echo "nvidia.ko of the open R535 does not build for Debian's 6.1.192 (pci_resize_resource() gained an argument in 6.1.y; NVIDIA's conftest misses it)" ;;
	esac
}

item() { # name cache.sh-arguments...
	local name=$1 out rc
	shift
	out=$("$here/cache.sh" "$@" 2>"$dir/$name.log")
	rc=$?
	case $rc in
	0) echo "$out" >"$dir/$name.env" ;;
	77) echo "$out" | tail -n 1 >"$dir/$name.env"
	    # No network: the items after this one skip at once.
	    case $out in
	    *"cannot update the package lists"*) export GDR_TEST_OFFLINE="${out#SKIP: }" ;;
	    esac ;;
	*) echo "FAIL: cache.sh $* exited $rc: $(tail -n 1 "$dir/$name.log")" >"$dir/$name.env" ;;
	esac
	printf '  %-48s %s\n' "$name" "$(head -n 1 "$dir/$name.env" | cut -c1-100)"
}

# Writes DIR/NAME.env without cache.sh: what the tests need to know when an item cannot be had.
item_says() { # name line
	echo "$2" >"$dir/$1.env"
	printf '  %-48s %s\n' "$1" "$2"
}

env_of() { # name variable: its value in NAME.env, empty if that item is a skip or a failure
	sed -n "s/^$2=//p" "$dir/$1.env" 2>/dev/null
}

echo "kernel build tests: fetching and building into $("$here/cache.sh" dir) (cache.sh)"
item kernel-5.10 kernel 5.10
item kernel-6.12 kernel 6.12 image
item kernel-newest kernel newest image
item kernel-6.1-arm64 kernel 6.1-arm64
item kernel-6.1-arm64-vm kernel 6.1-arm64 image
item kernel-6.1-ppc64el kernel 6.1-ppc64el
item kernel-6.1-ppc64el-vm kernel 6.1-ppc64el image
item kernel-6.12-arm64-16k kernel 6.12-arm64-16k
item kernel-6.12-arm64-16k-vm kernel 6.12-arm64-16k image
host=$("$here/../vm/kernel-release.sh")
if [ -n "$host" ]; then
	item_says kernel-host "kdir=/lib/modules/$host/build"
	echo "release=$host" >>"$dir/kernel-host.env"
else
	item_says kernel-host "SKIP: no Debian kernel with headers installed (apt-get install linux-headers-amd64 linux-image-amd64)"
fi

for s in $NVIDIA_SOURCES; do
	suite=${s%%:*} pkg=${s#*:}
	item "nvidia-$suite-$pkg" nvidia "$suite" "$pkg"
	case $suite in
	bookworm) kernel="kernel-host" ;;
	*) kernel="kernel-6.12" ;;
	esac
	kdir=$(env_of "$kernel" kdir)
	no_module=$(no_module_reason "$suite" "$pkg")
	if [ -n "$no_module" ]; then
		item_says "nvidia-module-$suite-$pkg" "SKIP: $no_module"
	elif [ "${GDR_TEST_NVIDIA_MODULES:-1}" = 0 ]; then
		item_says "nvidia-module-$suite-$pkg" \
			"SKIP: nvidia.ko builds are off (GDR_TEST_NVIDIA_MODULES=0; each takes 1.5-2 min of CPU once per machine)"
	elif [ -z "$(env_of "nvidia-$suite-$pkg" src)" ]; then
		item_says "nvidia-module-$suite-$pkg" "$(head -n 1 "$dir/nvidia-$suite-$pkg.env")"
	elif [ -z "$kdir" ]; then
		item_says "nvidia-module-$suite-$pkg" "$(head -n 1 "$dir/$kernel.env")"
	else
		item "nvidia-module-$suite-$pkg" nvidia-module "$suite" "$pkg" "$kdir" \
			"$(env_of "$kernel" cc)"
	fi
	echo "kernel=$kernel" >>"$dir/nvidia-$suite-$pkg.env"
done
exit 0
