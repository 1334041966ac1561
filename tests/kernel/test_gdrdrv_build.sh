#!/bin/bash
# SPDX-License-Identifier: MIT
# gdrdrv.ko builds without a single warning under W=1, and under sparse (C=1) where installed,
# against the installed kernel: for each NVIDIA driver flavor against kernel/nvidia/nv-p2p.h (R580:
# page table 2.0, persistent API), where modinfo must name the flavor and that header ("gdrdrv"
# in nv_p2p_h) and the proprietary one must pass the GPL-only import check; and against an
# R515-style header (page table 1.2 without flags, persistence through a NULL callback), so
# every branch of the nv-p2p #ifs compiles, where nv_p2p_h must name its directory; and the VM
# tier's fault-injection build (GDRDRV_FAULT_INJECT=y), whose fail_nth no other build has. Other
# kernels and NVIDIA's real sources: test_kernels.sh, test_nvidia.sh. Kernel tree: $GDRDRV_TEST_KDIR, else the
# running kernel's, else the newest under /lib/modules.
set -u
. "$(dirname "$0")/kbuild_lib.sh"
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

for flavor in open proprietary; do
	out=$tmp/$flavor
	gdrdrv_build "$flavor" "$kdir" "$out" NVIDIA_FLAVOR=$flavor || continue
	check_modinfo_flavor "$flavor" "$out/gdrdrv.ko" $flavor || continue
	check_modinfo_nv_p2p_h "$flavor" "$out/gdrdrv.ko" gdrdrv || continue
	missing=
	for want in 'license: *Dual MIT/GPL' 'version: *2\.6$' 'parm: *dbg_enabled' \
		'parm: *info_enabled' 'parm: *use_persistent_mapping' 'parm: *dev_mode' \
		'parm: *max_pins_per_file'; do
		modinfo "$out/gdrdrv.ko" | grep -qE "^$want" || missing="$missing '$want'"
	done
	if [ -n "$missing" ]; then
		result fail "$flavor" "modinfo has no line matching$missing"
	elif modinfo "$out/gdrdrv.ko" | grep -qE '^parm: *fail_nth'; then
		result fail "$flavor" "fail_nth, the fault-injection knob, is in a build without GDRDRV_FAULT_INJECT=y"
	elif [ $flavor = proprietary ] && ! grep -q 'no GPL-only kernel symbol imported' "$out.log"; then
		result fail "$flavor" "the GPL-only import check did not run"
	else
		result pass "$flavor" "(W=1 $checker, $kdir)"
	fi
done

# The VM tier's fault-injection build (kernel/gdrdrv_fault.c), in the proprietary flavor, whose
# GPL-only import check covers the knob's code too.
out=$tmp/fault_injection
if gdrdrv_build fault_injection "$kdir" "$out" NVIDIA_FLAVOR=proprietary GDRDRV_FAULT_INJECT=y; then
	if ! modinfo "$out/gdrdrv.ko" | grep -qE '^parm: *fail_nth'; then
		result fail fault_injection "no fail_nth parameter in the GDRDRV_FAULT_INJECT=y build"
	elif ! grep -q 'no GPL-only kernel symbol imported' "$out.log"; then
		result fail fault_injection "the GPL-only import check did not run"
	else
		result pass fault_injection "(W=1 $checker, $kdir)"
	fi
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
gdrdrv_build r515 "$kdir" "$tmp/r515-build" NVIDIA_SRC_DIR="$tmp/r515" &&
	check_modinfo_nv_p2p_h r515 "$tmp/r515-build/gdrdrv.ko" "$tmp/r515" &&
	result pass r515 "(W=1 $checker)"
test_exit
