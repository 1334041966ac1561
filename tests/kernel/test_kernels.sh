#!/bin/bash
# SPDX-License-Identifier: MIT
# gdrdrv builds for Debian's 5.10 (bullseye) and 6.12 (bookworm-backports) kernels, the newest
# Debian has (trixie-backports', built in a trixie chroot: cache.sh), bookworm's 6.1 for arm64
# and ppc64el and bookworm-backports' 6.12 for arm64 with 16 KiB pages (cross builds: the Grace
# and POWER code), in both NVIDIA driver flavors, without a warning under W=1 and sparse (for
# the newest, sid's sparse in its chroot); modinfo names the flavor; the proprietary flavor
# imports no GPL-only kernel symbol (kernel/check-gplonly-imports.sh, which must refuse the open
# flavor's module). The installed 6.1 is tests/kernel/test_gdrdrv_build.sh's.
#   test_kernels.sh DIR      DIR: where tests/kernel/prepare.sh wrote its items
set -u
envdir=$1
. "$(dirname "$0")/kbuild_lib.sh"

for series in 5.10 6.12 newest 6.1-arm64 6.1-ppc64el 6.12-arm64-16k; do
	env=$envdir/kernel-$series.env
	problem=$(item_problem "$env")
	if [ -n "$problem" ]; then
		for flavor in open proprietary; do
			result_problem "$series/$flavor" "$problem"
		done
		result_problem "$series/gplonly_check_refuses_open_flavor" "$problem"
		continue
	fi
	kdir=$(item_value "$env" kdir)
	cc=$(item_value "$env" cc)
	arch=$(item_value "$env" arch)
	cross=$(item_value "$env" cross)
	# The newest kernel's tree is in its chroot: its paths from here start with root.
	root=$(item_value "$env" root)
	open_ko=
	for flavor in open proprietary; do
		out=$tmp/$series-$flavor
		if [ -n "$root" ]; then
			root_checker=$(item_value "$env" checker)
			gdrdrv_build_in_root "$series/$flavor" "$root" "$kdir" "$out" "$root_checker" \
				NVIDIA_FLAVOR=$flavor || continue
			sparse_note="with sparse"
			[ -n "$root_checker" ] || sparse_note="without sparse: $(item_value "$env" \
				no_checker | tr -d "'")"
			how="(Linux $(item_value "$env" release), in its trixie chroot, $sparse_note)"
			if [ -n "$root_checker" ] && ! grep -q '^  CHECK ' "$out.log"; then
				result fail "$series/$flavor" "sparse was asked for and did not run"
				continue
			fi
		else
			gdrdrv_build "$series/$flavor" "$kdir" "$out" NVIDIA_FLAVOR=$flavor \
				${cc:+CC="$cc"} ${arch:+ARCH="$arch" CROSS_COMPILE="$cross"} || continue
			how="(${cc:+CC=$cc}${arch:+ARCH=$arch CROSS_COMPILE=$cross})"
		fi
		check_modinfo_flavor "$series/$flavor" "$out/gdrdrv.ko" $flavor || continue
		if [ $flavor = proprietary ] &&
		   ! grep -q 'no GPL-only kernel symbol imported' "$out.log"; then
			result fail "$series/$flavor" "the GPL-only import check did not run"
			continue
		fi
		result pass "$series/$flavor" "$how"
		[ $flavor = open ] && open_ko=$out/gdrdrv.ko
	done

	# The check must be able to fail: the open flavor's module uses GPL-only exports (x86's
	# pgprot_writecombine is a function, arm64's and POWER's a macro; page_is_ram everywhere).
	name=$series/gplonly_check_refuses_open_flavor
	gplonly=pgprot_writecombine
	[ -z "$arch" ] || gplonly=page_is_ram
	if [ ! -f "$open_ko" ]; then
		result fail "$name" "no open-flavor gdrdrv.ko to check"
		continue
	fi
	cp "$open_ko" "$tmp/open.ko"
	if "$src/kernel/check-gplonly-imports.sh" "$tmp/open.ko" "$root$kdir/Module.symvers" \
		>"$tmp/check.log" 2>&1; then
		result fail "$name" "the check passed a module that uses GPL-only symbols"
	elif ! grep -q "$gplonly" "$tmp/check.log"; then
		result fail "$name" "the refusal does not name $gplonly: $(head -n 1 "$tmp/check.log")"
	elif [ -e "$tmp/open.ko" ]; then
		result fail "$name" "the refused module was not deleted"
	else
		result pass "$name"
	fi
done
test_exit
