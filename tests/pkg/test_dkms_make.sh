#!/bin/sh
# packaging/dkms/dkms-make.sh, DKMS's build of gdrdrv, with make and modinfo stood in for: which
# NVIDIA driver flavor it builds for. NVIDIA's sources (stand-ins in a scratch NVIDIA_SRC_ROOT)
# decide by their MODULE_LICENSE; without them, the installed module's license (a precompiled
# module, the .run installer's), since Linux refuses the open flavor's gdrdrv next to the
# proprietary driver; with no driver at all, the proprietary flavor, which loads next to either
# driver installed later, and the build says so. NVIDIA_FLAVOR given still wins.
#   test_dkms_make.sh SOURCE_TREE
. "$1/tests/harness/harness.sh"
script=$1/packaging/dkms/dkms-make.sh
test_scratch dkms-make

mkdir "$tmp/bin" "$tmp/src" "$tmp/nosrc"
# make: what it was given. modinfo: the license in $FAKE_LICENSE, or no module.
cat >"$tmp/bin/make" <<'END'
#!/bin/sh
echo "make $* NVIDIA_FLAVOR=${NVIDIA_FLAVOR:-}"
END
cat >"$tmp/bin/modinfo" <<'END'
#!/bin/sh
[ -n "${FAKE_LICENSE:-}" ] || exit 1
case "$*" in *"-F license"*) echo "$FAKE_LICENSE" ;; *) exit 1 ;; esac
END
chmod +x "$tmp/bin/make" "$tmp/bin/modinfo"
# Sources of an open driver in $tmp/src: its nv-p2p.h, and its MODULE_LICENSE in nv.c.
nv=$tmp/src/nvidia-580.95.05/nvidia
mkdir -p "$nv"
touch "$nv/nv-p2p.h"
echo 'MODULE_LICENSE("Dual MIT/GPL");' >"$nv/nv.c"

# case NAME LICENSE FORCED SOURCES WANT [MESSAGE]: with the module's LICENSE (empty: none),
# NVIDIA_FLAVOR=FORCED (empty: unset) and NVIDIA's sources in SOURCES, make gets
# NVIDIA_FLAVOR=WANT (and NVIDIA_SRC_DIR with SOURCES' tree), and the output has MESSAGE.
case_() {
	out=$(env -u NVIDIA_FLAVOR -u NVIDIA_IS_OPENSOURCE PATH="$tmp/bin:$PATH" FAKE_LICENSE="$2" \
		NVIDIA_SRC_ROOT="$4" ${3:+NVIDIA_FLAVOR=$3} sh "$script" /kdir 6.1.0-test 2>&1)
	want="make KDIR=/kdir NVIDIA_FLAVOR=$5"
	[ "$4" = "$tmp/nosrc" ] || want="make KDIR=/kdir NVIDIA_SRC_DIR=$nv NVIDIA_FLAVOR=$5"
	if ! printf '%s\n' "$out" | grep -qxF "$want"; then
		result fail "$1" "expected '$want': $(printf '%s' "$out" | tr '\n' '|')"
	elif [ -n "${6:-}" ] && ! printf '%s\n' "$out" | grep -qF "$6"; then
		result fail "$1" "no '$6' in: $(printf '%s' "$out" | tr '\n' '|')"
	else
		result pass "$1"
	fi
}
case_ proprietary_module NVIDIA "" "$tmp/nosrc" proprietary
case_ open_module "Dual MIT/GPL" "" "$tmp/nosrc" open
case_ no_driver "" "" "$tmp/nosrc" proprietary \
	"no NVIDIA driver for 6.1.0-test (no sources in $tmp/nosrc, no nvidia module): the proprietary flavor"
case_ forced_flavor_wins NVIDIA open "$tmp/nosrc" open
# Given as a make argument (the prebuilt RPM's nvidia_flavor), the script decides nothing.
out=$(env -u NVIDIA_FLAVOR -u NVIDIA_IS_OPENSOURCE PATH="$tmp/bin:$PATH" NVIDIA_SRC_ROOT="$tmp/nosrc" \
	sh "$script" /kdir 6.1.0-test NVIDIA_FLAVOR=open 2>&1)
if printf '%s\n' "$out" | grep -qxF "make KDIR=/kdir NVIDIA_FLAVOR=open NVIDIA_FLAVOR="; then
	result pass forced_flavor_argument
else
	result fail forced_flavor_argument "expected make with NVIDIA_FLAVOR=open alone: $(printf '%s' "$out" | tr '\n' '|')"
fi
case_ open_sources "" "" "$tmp/src" open 'MODULE_LICENSE("Dual MIT/GPL") in'
case_ sources_before_module NVIDIA "" "$tmp/src" open
test_exit
