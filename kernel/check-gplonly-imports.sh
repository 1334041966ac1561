#!/bin/sh
# SPDX-License-Identifier: MIT
# The build of gdrdrv for the proprietary NVIDIA driver must import no GPL-only kernel symbol:
# Linux (since 5.9) refuses a module that uses GPL-only symbols together with symbols of a
# proprietary module, "module using GPL-only symbols uses symbols ... from proprietary module
# nvidia". modpost checks GPL-only imports only for modules whose MODULE_LICENSE is not
# GPL-compatible, and gdrdrv's ("Dual MIT/GPL", so that it also loads next to the open nvidia.ko,
# whose exports are GPL-only) is. So this checks gdrdrv's undefined symbols against the kernel's
# Module.symvers, and deletes the module when one is GPL-only, so that nobody installs it.
#   check-gplonly-imports.sh MODULE.ko KERNEL_MODULE_SYMVERS
set -eu
if [ $# -ne 2 ]; then
	echo "usage: $0 MODULE.ko KERNEL_MODULE_SYMVERS" >&2
	exit 2
fi
ko=$1
symvers=$2
if [ ! -f "$symvers" ]; then
	echo "gdrdrv: warning: no $symvers: cannot check that the proprietary-flavor build" \
		"imports no GPL-only kernel symbol" >&2
	exit 0
fi
# Module.symvers: CRC, symbol, module, export type, namespace (tab-separated).
gplonly=$(${NM:-nm} -u "$ko" | awk '{ print $NF }' | sort -u |
	awk -F '\t' 'NR == FNR { want[$1] = 1; next }
		$2 in want && $4 == "EXPORT_SYMBOL_GPL" { print $2 }' - "$symvers" | sort -u)
if [ -n "$gplonly" ]; then
	echo "gdrdrv: error: the build for the proprietary NVIDIA driver uses GPL-only kernel" \
		"symbols, so Linux would refuse to load it next to that driver:" $gplonly >&2
	rm -f "$ko"
	exit 1
fi
echo "gdrdrv: no GPL-only kernel symbol imported: loads next to the proprietary nvidia.ko"
