#!/bin/bash
# SPDX-License-Identifier: MIT
# gdrdrv against NVIDIA's real driver sources from Debian (bookworm's R535, trixie's R550, each
# proprietary and open), for the kernel of that Debian release (bookworm: the installed 6.1;
# trixie: 6.12). For each source, cases:
#   SOURCE/build    kernel/Makefile tells the flavor from the sources' MODULE_LICENSE, and gdrdrv
#                   compiles against their nv-p2p.h without a warning (W=1, sparse), and
#                   modinfo's nv_p2p_h names their directory (what DKMS's trigger compares);
#   SOURCE/modpost  with the Module.symvers of nvidia.ko built from them (prepare.sh), modpost
#                   resolves every nvidia_p2p import of gdrdrv against NVIDIA's real exports, and
#                   gdrdrv.ko carries NVIDIA's symbol versions for them.
# And once, against bookworm's proprietary sources: the open flavor forced onto them builds with
# the warning that Linux will refuse to load it next to that driver (open_flavor_warns).
#   test_nvidia.sh DIR      DIR: where tests/kernel/prepare.sh wrote its items
set -u
envdir=$1
. "$(dirname "$0")/kbuild_lib.sh"

# Every nvidia_p2p symbol gdrdrv.ko imports has the version NVIDIA's Module.symvers gives it;
# prints what differs.
crc_mismatches() { # ko symvers
	/sbin/modprobe --dump-modversions "$1" | awk '$2 ~ /^nvidia_p2p_/ { print $2, $1 }' |
		sort >"$tmp/ours"
	[ -s "$tmp/ours" ] || { echo "no nvidia_p2p symbol versions in $1"; return; }
	awk -F '\t' '$2 ~ /^nvidia_p2p_/ { print $2, $1 }' "$2" | sort >"$tmp/theirs"
	join -a 1 -e missing -o 0,1.2,2.2 "$tmp/ours" "$tmp/theirs" |
		awk '$2 != $3 { printf "%s: ours %s, NVIDIA %s; ", $1, $2, $3 }'
}

for s in bookworm:nvidia-kernel-source bookworm:nvidia-open-kernel-source \
	trixie:nvidia-kernel-source trixie:nvidia-open-kernel-source; do
	suite=${s%%:*} pkg=${s#*:}
	env=$envdir/nvidia-$suite-$pkg.env
	problem=$(item_problem "$env")
	kernel_env=$envdir/$(item_value "$env" kernel).env
	[ -n "$problem" ] || problem=$(item_problem "$kernel_env")
	if [ -n "$problem" ]; then
		result_problem "$suite/$pkg/build" "$problem"
		result_problem "$suite/$pkg/modpost" "$problem"
		continue
	fi
	nvsrc=$(item_value "$env" src)/nvidia
	version=$(item_value "$env" version)
	flavor=$(item_value "$env" flavor)
	kdir=$(item_value "$kernel_env" kdir)
	cc=$(item_value "$kernel_env" cc)
	name=$suite/$pkg/build
	out=$tmp/$suite-$pkg
	if gdrdrv_build "$name" "$kdir" "$out" NVIDIA_SRC_DIR="$nvsrc" ${cc:+CC=$cc} &&
	   check_modinfo_flavor "$name" "$out/gdrdrv.ko" "$flavor" &&
	   check_modinfo_nv_p2p_h "$name" "$out/gdrdrv.ko" "$nvsrc"; then
		if grep -q "building for the $flavor NVIDIA driver" "$out.log"; then
			result pass "$name" "($version, $flavor, $(item_value "$kernel_env" release))"
		else
			result fail "$name" "the flavor was not told as $flavor: $(grep -m 1 'building for' "$out.log")"
		fi
	fi

	name=$suite/$pkg/modpost
	mod_env=$envdir/nvidia-module-$suite-$pkg.env
	problem=$(item_problem "$mod_env")
	if [ -n "$problem" ]; then
		result_problem "$name" "$problem"
		continue
	fi
	symvers=$(item_value "$mod_env" symvers)
	out=$tmp/$suite-$pkg-symvers
	gdrdrv_build "$name" "$kdir" "$out" NVIDIA_SRC_DIR="$nvsrc" NVIDIA_SYMVERS="$symvers" \
		${cc:+CC=$cc} || continue
	if [ -e "$out/nvp2p_stub.ko" ]; then
		result fail "$name" "nvp2p_stub.ko was built although NVIDIA's Module.symvers was given"
		continue
	fi
	bad=$(crc_mismatches "$out/gdrdrv.ko" "$symvers")
	if [ -n "$bad" ]; then
		result fail "$name" "symbol versions differ from nvidia.ko's: $bad"
	else
		result pass "$name" "(nvidia.ko $version for $(item_value "$kernel_env" release))"
	fi
done

name=open_flavor_warns
env=$envdir/nvidia-bookworm-nvidia-kernel-source.env
problem=$(item_problem "$env")
[ -n "$problem" ] || problem=$(item_problem "$envdir/kernel-host.env")
if [ -n "$problem" ]; then
	result_problem "$name" "$problem"
else
	out=$tmp/open-on-proprietary
	if ! make -C "$src/kernel" KDIR="$(item_value "$envdir/kernel-host.env" kdir)" OUT="$out" \
		NVIDIA_SRC_DIR="$(item_value "$env" src)/nvidia" NVIDIA_FLAVOR=open >"$out.log" 2>&1; then
		result fail "$name" "the build failed: $(grep -m 1 -iE 'error' "$out.log")"
	elif ! grep -q 'Linux refuses to load it next to' "$out.log"; then
		result fail "$name" "no warning about the pairing in the build's output"
	else
		result pass "$name"
	fi
fi
test_exit
