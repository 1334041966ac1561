#!/bin/sh
# Builds DKMS's gdrdrv again for each kernel whose NVIDIA driver is of the other flavor than the
# one gdrdrv was built for (kernel/README.md, "NVIDIA driver flavors"). gdrdrv-dkms installed
# before the driver builds the proprietary flavor (dkms-make.sh), which loads next to either
# flavor but not in an Intel TDX guest, and the open flavor's gdrdrv does not load next to the
# proprietary driver. The packages run this when a package puts files where NVIDIA's driver
# packages do (DKMS sources in /usr/src, precompiled modules in /lib/modules); after installing
# the driver otherwise (NVIDIA's .run installer), run it as root. Where gdrdrv is built again
# for the running kernel, the NVIDIA driver is loaded and gdrdrv is not, it loads gdrdrv.
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
	nvidia_driver "$kver"
	if [ -z "$nv_flavor" ]; then
		[ -z "$note" ] ||
			echo "gdrdrv: no NVIDIA driver is installed for $kver yet, so gdrdrv is built there" \
				"for the $built driver flavor$([ "$built" = open ] ||
					echo ", which loads next to either flavor, but not in an Intel TDX guest")." \
				"Installing the NVIDIA driver's package builds gdrdrv again for its flavor; after" \
				"installing it otherwise (NVIDIA's .run installer), run $here/dkms-match-flavor.sh as root"
		continue
	fi
	[ "$nv_flavor" != "$built" ] || continue
	echo "gdrdrv: building gdrdrv $version for $kver again: it was built for the $built NVIDIA" \
		"driver, and the driver there is $nv_flavor ($nv_flavor_why)"
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
