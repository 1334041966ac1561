#!/bin/sh
# DKMS's build of gdrdrv for one kernel (MAKE[0] in dkms.conf; the prebuilt kmod RPM uses it
# too): kernel/Makefile against NVIDIA's own nv-p2p.h when the NVIDIA driver's sources are
# installed, so that gdrdrv's imports carry the symbol versions of the nvidia.ko it will bind to,
# and for those sources' flavor (open or proprietary: kernel/README.md); otherwise against
# gdrdrv's declarations in nvidia/. NVIDIA_FLAVOR=open|proprietary in the environment forces
# the flavor; kernel/Makefile warns when the open one meets a proprietary driver.
#   dkms-make.sh KERNEL_BUILD_DIR KERNEL_RELEASE [MAKE_ARGUMENTS...]
set -eu
kdir=$1
kver=$2
shift 2

# NVIDIA's DKMS trees are /usr/src/nvidia-<version> (Debian: nvidia-current-<version>). Prefer the
# version of the nvidia module installed for this kernel, else the newest tree.
nv_version=$(modinfo -k "$kver" -F version nvidia 2>/dev/null ||
	modinfo -k "$kver" -F version nvidia-current 2>/dev/null || true)
newest=
matching=
for dir in $(ls -d /usr/src/nvidia-*/nvidia /usr/src/kernel-modules/nvidia-*/nvidia 2>/dev/null |
	sort -V); do
	[ -f "$dir/nv-p2p.h" ] || continue
	newest=$dir
	case $dir in
	*-"$nv_version"/nvidia) [ -n "$nv_version" ] && matching=$dir ;;
	esac
done
nv_src=${matching:-$newest}

if [ -n "$nv_src" ]; then
	if [ -n "$nv_version" ] && [ -z "$matching" ]; then
		echo "gdrdrv: WARNING: the installed nvidia module is $nv_version, but /usr/src has no" \
			"nvidia-$nv_version tree; building against $nv_src, whose symbol versions may not" \
			"match it (then modprobe gdrdrv fails: install that driver's DKMS sources)" >&2
	fi
	echo "gdrdrv: building against $nv_src/nv-p2p.h"
	exec make KDIR="$kdir" NVIDIA_SRC_DIR="$nv_src" "$@"
fi
echo "gdrdrv: no NVIDIA driver sources in /usr/src; building against gdrdrv's own nv-p2p.h"
# Without sources, the flavor of the nvidia module installed for this kernel (a precompiled
# one, or the .run installer's): Linux refuses the open flavor's gdrdrv next to the proprietary
# driver, whose license does not say GPL.
if [ -z "${NVIDIA_FLAVOR:-}" ] && [ -z "${NVIDIA_IS_OPENSOURCE:-}" ]; then
	license=$(modinfo -k "$kver" -F license nvidia 2>/dev/null ||
		modinfo -k "$kver" -F license nvidia-current 2>/dev/null || true)
	case $license in
	'') ;;
	*GPL*) NVIDIA_FLAVOR=open ;;
	*) NVIDIA_FLAVOR=proprietary ;;
	esac
	if [ -n "${NVIDIA_FLAVOR:-}" ]; then
		echo "gdrdrv: the nvidia module of $kver is licensed \"$license\": the $NVIDIA_FLAVOR flavor"
		export NVIDIA_FLAVOR
	fi
fi
exec make KDIR="$kdir" "$@"
