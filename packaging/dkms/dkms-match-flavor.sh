#!/bin/sh
# Builds DKMS's gdrdrv again for each kernel where it no longer fits the NVIDIA driver there:
# - the driver is of the other flavor than the one gdrdrv was built for (kernel/README.md,
#   "NVIDIA driver flavors"). gdrdrv-dkms installed before the driver builds the proprietary
#   flavor (dkms-make.sh), which loads next to either flavor but not in an Intel TDX guest,
#   and the open flavor's gdrdrv does not load next to the proprietary driver;
# - the nv-p2p.h it was built against (modinfo's nv_p2p_h: NVIDIA's source directory, or
#   "gdrdrv" for its own) is not the one dkms-make.sh would take now (nvidia-driver.sh's
#   nv_src). Its nvidia_p2p imports carry that header's symbol versions, and on a kernel with
#   CONFIG_MODVERSIONS "modprobe gdrdrv" fails ("disagrees about version of symbol") next to
#   an nvidia.ko of other ones: gdrdrv built before the driver's sources came (against its
#   own, R580's, whose page table differs from 535's and 550's), or against an older driver's.
#   Where there are no NVIDIA sources now (a precompiled driver), there is nothing better to
#   build against, and gdrdrv stays. A gdrdrv that does not say (built before it recorded
#   nv_p2p_h) is built again where there are sources: what it was built against is unknown.
# The packages run this when a package puts files where NVIDIA's driver packages do (DKMS
# sources in /usr/src, precompiled modules in /lib/modules); after installing the driver
# otherwise (NVIDIA's .run installer), run it as root. Where gdrdrv is built again for the
# running kernel, the NVIDIA driver is loaded and gdrdrv is not, it loads gdrdrv.
#   dkms-match-flavor.sh [--note]
# --note: also say, for each kernel without an NVIDIA driver, which flavor gdrdrv has there and
# what to do (the packages' install asks for it).
set -eu
here=$(cd "$(dirname "$0")" && pwd)
. "$here/nvidia-driver.sh"
version=$(sed -n 's/^PACKAGE_VERSION="\(.*\)"$/\1/p' "$here/dkms.conf")
note=
[ "${1:-}" != --note ] || note=1
status=0

# same_dir A B: A and B name one directory. kernel/Makefile records NVIDIA_SRC_DIR as make's
# abspath spells it, which may differ from nvidia-driver.sh's spelling ("//" from a root given
# with a trailing slash); a directory that is gone is no match.
same_dir() {
	[ "$1" = "$2" ] && return 0
	case $1 in /*) ;; *) return 1 ;; esac
	_a=$(cd -P "$1" 2>/dev/null && pwd -P) || return 1
	[ "$_a" = "$(cd -P "$2" 2>/dev/null && pwd -P)" ]
}

for dir in /lib/modules/*/; do
	kver=$(basename "$dir")
	# Only what DKMS installed: a gdrdrv of make drv_install's is the user's own.
	dkms status -m gdrdrv -v "$version" -k "$kver" 2>/dev/null | grep -q ': installed' || continue
	built=$(modinfo -k "$kver" -F description gdrdrv 2>/dev/null) || continue
	case $built in
	*opensource*) built=open ;;
	*proprietary*) built=proprietary ;;
	*) continue ;;
	esac
	built_h=$(modinfo -k "$kver" -F nv_p2p_h gdrdrv 2>/dev/null) || built_h=
	nvidia_driver "$kver"
	if [ -z "$nv_flavor" ]; then
		[ -z "$note" ] ||
			echo "gdrdrv: no NVIDIA driver is installed for $kver yet, so gdrdrv is built there" \
				"for the $built driver flavor$([ "$built" = open ] ||
					echo ", which loads next to either flavor, but not in an Intel TDX guest")." \
				"Installing the NVIDIA driver's package builds gdrdrv again for its flavor and" \
				"against its sources; after installing it otherwise (NVIDIA's .run installer)," \
				"run $here/dkms-match-flavor.sh as root"
		continue
	fi
	why=
	[ "$nv_flavor" = "$built" ] ||
		why="it was built for the $built NVIDIA driver, and the driver there is $nv_flavor"
	[ -z "$why" ] || why="$why ($nv_flavor_why)"
	if [ -n "$nv_src" ] && ! same_dir "$built_h" "$nv_src"; then
		case $built_h in
		'')
			was="it does not say which nv-p2p.h it was built against (a build of before it"
			was="$was said), so maybe not" ;;
		gdrdrv) was="it was built against gdrdrv's own nv-p2p.h, not" ;;
		*) was="it was built against $built_h/nv-p2p.h, not" ;;
		esac
		was="$was the NVIDIA driver's $nv_src/nv-p2p.h, whose symbol versions nvidia.ko has"
		why="${why:+$why; }$was"
	fi
	[ -n "$why" ] || continue
	echo "gdrdrv: building gdrdrv $version for $kver again: $why"
	# "dkms install" keeps a build it has, --force or not: remove it for this kernel (which
	# removes the version from DKMS when no other kernel has it) and add the version again.
	dkms remove -m gdrdrv -v "$version" -k "$kver" >/dev/null 2>&1 || :
	dkms add -m gdrdrv -v "$version" >/dev/null 2>&1 || :
	if ! dkms install -m gdrdrv -v "$version" -k "$kver"; then
		echo "gdrdrv: the build for $kver failed: see 'dkms status gdrdrv'" >&2
		status=1
		continue
	fi
	if [ "$kver" = "$(uname -r)" ] && [ -d /sys/module/nvidia ] && [ ! -d /sys/module/gdrdrv ]; then
		modprobe gdrdrv || echo "gdrdrv: 'modprobe gdrdrv' failed: see dmesg" >&2
	fi
done
exit $status
