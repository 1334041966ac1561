#!/bin/sh
# SPDX-License-Identifier: MIT
# gdrdrv.ko builds without a single warning under W=1, and under sparse (C=1) where installed:
# against kernel/nvidia/nv-p2p.h (R580: page table 2.0, persistent API), and against an
# R515-style header (page table 1.2 without flags, persistence through a NULL callback), so every
# branch of the nv-p2p #ifs compiles. Kernel tree: $GDRDRV_TEST_KDIR, else the running kernel's,
# else the newest under /lib/modules.
set -u
src=$(cd "$(dirname "$0")/../.." && pwd)
kdir=${GDRDRV_TEST_KDIR:-}
if [ -z "$kdir" ]; then
	for d in "/lib/modules/$(uname -r)/build" $(ls -d /lib/modules/*/build 2>/dev/null | sort -rV); do
		if [ -f "$d/Makefile" ]; then
			kdir=$d
			break
		fi
	done
fi
if [ -z "$kdir" ] || [ ! -f "$kdir/Makefile" ]; then
	echo "skip: no kernel build tree (install linux-headers or set GDRDRV_TEST_KDIR)"
	exit 77
fi
tmp=$(mktemp -d "${TMPDIR:-/tmp}/gdrdrv-build.XXXXXX")
trap 'rm -rf "$tmp"' EXIT INT TERM
checker=
command -v sparse >/dev/null 2>&1 && checker=C=1
failed=0

build() { # name, make arguments...
	name=$1
	shift
	if ! make -C "$src/kernel" KDIR="$kdir" OUT="$tmp/$name" W=1 $checker "$@" \
		>"$tmp/$name.log" 2>&1; then
		echo "FAIL $name: the build failed:"
		tail -n 30 "$tmp/$name.log"
		failed=1
		return
	fi
	if grep -iE 'warning|error:' "$tmp/$name.log"; then
		echo "FAIL $name: the build warned (W=1 $checker)"
		failed=1
		return
	fi
	echo "ok   $name: W=1 $checker, no warnings"
}

build default
ko=$tmp/default/gdrdrv.ko
if [ -f "$ko" ] && command -v modinfo >/dev/null 2>&1; then
	for want in 'license: *Dual MIT/GPL' 'version: *2\.6$' 'parm: *dbg_enabled' \
		'parm: *info_enabled' 'parm: *use_persistent_mapping' 'parm: *dev_mode' \
		'parm: *max_pins_per_file'; do
		if ! modinfo "$ko" | grep -qE "^$want"; then
			echo "FAIL modinfo: no line matching '$want'"
			failed=1
		fi
	done
fi

# What an R515-R530 driver's kernel-open/nvidia directory offers.
mkdir -p "$tmp/r515"
echo 'MODULE_LICENSE("Dual MIT/GPL");' >"$tmp/r515/nv.c"
cat >"$tmp/r515/nv-p2p.h" <<'HDR'
#ifndef R515_NV_P2P_H
#define R515_NV_P2P_H
#include <linux/types.h>
enum nvidia_p2p_page_size_type {
	NVIDIA_P2P_PAGE_SIZE_4KB = 0,
	NVIDIA_P2P_PAGE_SIZE_64KB,
	NVIDIA_P2P_PAGE_SIZE_128KB,
	NVIDIA_P2P_PAGE_SIZE_COUNT
};
struct nvidia_p2p_page {
	u64 physical_address;
	union {
		struct {
			u32 wreqmb_h;
			u32 rreqmb_h;
			u32 rreqmb_0;
			u32 reserved[3];
		} fermi;
	} registers;
};
#define NVIDIA_P2P_PAGE_TABLE_VERSION 0x00010002
struct nvidia_p2p_page_table {
	u32 version;
	u32 page_size;
	struct nvidia_p2p_page **pages;
	u32 entries;
	u8 *gpu_uuid;
};
#define NVIDIA_P2P_CAP_PERSISTENT_PAGES
extern int nvidia_p2p_cap_persistent_pages;
int nvidia_p2p_get_pages(u64 p2p_token, u32 va_space, u64 virtual_address, u64 length,
			 struct nvidia_p2p_page_table **page_table,
			 void (*free_callback)(void *data), void *data);
int nvidia_p2p_put_pages(u64 p2p_token, u32 va_space, u64 virtual_address,
			 struct nvidia_p2p_page_table *page_table);
int nvidia_p2p_free_page_table(struct nvidia_p2p_page_table *page_table);
#endif
HDR
build r515 NVIDIA_SRC_DIR="$tmp/r515"

if [ "$failed" != 0 ]; then
	exit 1
fi
echo "gdrdrv builds cleanly against $kdir"
