#!/bin/sh
# DKMS's build of gdrdrv for one kernel (MAKE[0] in dkms.conf; the prebuilt kmod RPM uses it
# too): kernel/Makefile against NVIDIA's own nv-p2p.h when the NVIDIA driver's sources are
# installed, so that gdrdrv's imports carry the symbol versions of the nvidia.ko it will bind to,
# and for the flavor of the kernel's NVIDIA driver (open or proprietary: kernel/README.md), which
# nvidia-driver.sh finds; otherwise against gdrdrv's declarations in nvidia/ (R580's symbol
# versions). modinfo's nv_p2p_h says which, and dkms-match-flavor.sh builds gdrdrv again when
# NVIDIA's sources come or change. With no NVIDIA driver at all, the proprietary flavor, which
# loads next to either. NVIDIA_FLAVOR=open|proprietary (or GDRCopy's NVIDIA_IS_OPENSOURCE=y|n)
# in the environment or among the make arguments forces the flavor; kernel/Makefile warns when
# the open one meets a proprietary driver.
#   dkms-make.sh KERNEL_BUILD_DIR KERNEL_RELEASE [MAKE_ARGUMENTS...]
set -eu
kdir=$1
kver=$2
shift 2
. "$(dirname "$0")/nvidia-driver.sh"
nvidia_driver "$kver"

# A flavor given, in the environment or on the command line (the prebuilt RPM's nvidia_flavor).
forced=${NVIDIA_FLAVOR:-}${NVIDIA_IS_OPENSOURCE:-}
for arg; do
	case $arg in NVIDIA_FLAVOR=* | NVIDIA_IS_OPENSOURCE=*) forced=${arg#*=} ;; esac
done
if [ -z "$forced" ]; then
	if [ -n "$nv_flavor" ]; then
		NVIDIA_FLAVOR=$nv_flavor
		echo "gdrdrv: the $NVIDIA_FLAVOR flavor: $nv_flavor_why"
	else
		# gdrdrv-dkms installed before the driver (a common order). The open build would not
		# load next to a proprietary driver installed later; the proprietary one loads next to
		# either, except in an Intel TDX guest (gdrdrv(4)). The packages build gdrdrv again for
		# the driver's flavor, and against its sources, when the driver's package comes
		# (dkms-match-flavor.sh).
		NVIDIA_FLAVOR=proprietary
		echo "gdrdrv: no NVIDIA driver for $kver (no sources in ${NVIDIA_SRC_ROOT:-/usr/src}," \
			"no nvidia module): the proprietary flavor, which loads next to either flavor" \
			"of a driver installed later (not in an Intel TDX guest); dkms-match-flavor.sh" \
			"builds gdrdrv again for the driver's flavor and sources once it is installed"
	fi
	export NVIDIA_FLAVOR
fi
if [ -n "$nv_src" ]; then
	if [ -n "$nv_src_other" ]; then
		echo "gdrdrv: WARNING: the installed nvidia module is $nv_version, but there is no" \
			"nvidia-$nv_version source tree; building against $nv_src, whose symbol versions" \
			"may not match it (then modprobe gdrdrv fails: install that driver's DKMS sources)" >&2
	fi
	echo "gdrdrv: building against $nv_src/nv-p2p.h"
	exec make KDIR="$kdir" NVIDIA_SRC_DIR="$nv_src" "$@"
fi
echo "gdrdrv: no NVIDIA driver sources in ${NVIDIA_SRC_ROOT:-/usr/src}; building against gdrdrv's own nv-p2p.h"
exec make KDIR="$kdir" "$@"
