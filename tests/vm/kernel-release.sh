#!/bin/sh
# Print the release of the kernel the VM tier boots: the one whose headers the installed
# linux-headers-<arch> metapackage pulls in (Debian), else the newest release with both a
# /lib/modules/<release>/build directory and a /boot/vmlinuz-<release>. Prints nothing when
# there is none. VM_KVER in the environment wins.
set -u
usable() {
	[ -d "/lib/modules/$1/build" ] && [ -e "/boot/vmlinuz-$1" ]
}
if [ -n "${VM_KVER:-}" ]; then
	if usable "$VM_KVER"; then
		echo "$VM_KVER"
	else
		echo "VM_KVER=$VM_KVER: no /lib/modules/$VM_KVER/build or /boot/vmlinuz-$VM_KVER" >&2
	fi
	exit 0
fi
arch=$(dpkg --print-architecture 2>/dev/null || true)
if [ -n "$arch" ]; then
	dep=$(dpkg-query -W -f='${Depends}' "linux-headers-$arch" 2>/dev/null || true)
	# "linux-headers-6.1.0-57-amd64 (= 6.1.192-3)" -> 6.1.0-57-amd64
	rel=$(echo "$dep" | sed -n 's/^linux-headers-\([^ ,]*\).*/\1/p')
	if [ -n "$rel" ] && usable "$rel"; then
		echo "$rel"
		exit 0
	fi
fi
for dir in $(ls -d /lib/modules/*/build 2>/dev/null | sort -rV); do
	rel=${dir#/lib/modules/}
	rel=${rel%/build}
	if usable "$rel"; then
		echo "$rel"
		exit 0
	fi
done
exit 0
