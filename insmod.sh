#!/bin/sh
# Load gdrdrv built from this tree, as NVIDIA GDRCopy's insmod.sh does ("sudo ./insmod.sh" after
# "make"): check that the NVIDIA driver is loaded, unload a gdrdrv already loaded, insmod
# build/kernel/gdrdrv.ko with GDRCopy's parameters (any PARAM=VALUE given here added or
# overriding), and report /dev/gdrdrv. gdrdrv makes the node itself (mode: dev_mode, 0666 by
# default); where no devtmpfs or udev makes it appear, it is made here from its numbers.
#   sudo ./insmod.sh [PARAM=VALUE...]       e.g. use_persistent_mapping=0 dbg_enabled=1
# Environment: GDRDRV_KO (default build/kernel/gdrdrv.ko beside this script), NVIDIA_MODULE
# (the module that must be loaded first, default nvidia; the VM tier names its stand-in).
set -eu
here=$(cd "$(dirname "$0")" && pwd)
ko=${GDRDRV_KO:-$here/build/kernel/gdrdrv.ko}
provider=${NVIDIA_MODULE:-nvidia}

die() {
	echo "insmod.sh: $*" >&2
	exit 1
}

[ "$(id -u)" = 0 ] || die "loading a module needs root: sudo $0 $*"
[ -f "$ko" ] || die "no $ko: build it first with make modules (KDIR=<kernel build dir> for another kernel)"
if [ ! -d "/sys/module/$provider" ] && { [ "$provider" != nvidia ] || [ ! -d /sys/module/nvidia_current ]; }; then
	die "the $provider module is not loaded: gdrdrv pins GPU memory through it (modprobe $provider)"
fi
if [ -d /sys/module/gdrdrv ]; then
	rmmod gdrdrv || die "gdrdrv is loaded and in use: close the programs using /dev/gdrdrv first"
fi
# shellcheck disable=SC2086
insmod "$ko" dbg_enabled=0 info_enabled=0 use_persistent_mapping=1 "$@" ||
	die "insmod $ko failed: see dmesg"

i=0
while [ ! -c /dev/gdrdrv ] && [ $i -lt 20 ]; do
	sleep 0.1 2>/dev/null || sleep 1
	i=$((i + 1))
done
if [ ! -c /dev/gdrdrv ]; then
	numbers=$(cat /sys/class/misc/gdrdrv/dev 2>/dev/null) ||
		die "gdrdrv loaded, but it has no /sys/class/misc/gdrdrv/dev: see dmesg"
	mode=$(cat /sys/module/gdrdrv/parameters/dev_mode 2>/dev/null || echo 438)
	mknod -m "$(printf '%o' "$mode")" /dev/gdrdrv c "${numbers%%:*}" "${numbers#*:}"
fi
echo "gdrdrv loaded: $(ls -l /dev/gdrdrv)"
for p in /sys/module/gdrdrv/parameters/*; do
	[ -r "$p" ] || continue
	case ${p##*/} in
	dev_mode) printf '  dev_mode=0%o\n' "$(cat "$p")" ;;
	*) printf '  %s=%s\n' "${p##*/}" "$(cat "$p")" ;;
	esac
done
