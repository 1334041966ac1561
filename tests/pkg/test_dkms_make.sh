#!/bin/sh
# packaging/dkms/dkms-make.sh, DKMS's build of gdrdrv, with make and modinfo stood in for: which
# NVIDIA driver flavor it builds for when /usr/src has no NVIDIA sources (a precompiled nvidia
# module, the .run installer's): the installed module's license decides, since Linux refuses the
# open flavor's gdrdrv next to the proprietary driver; NVIDIA_FLAVOR given still wins.
#   test_dkms_make.sh SOURCE_TREE
. "$1/tests/harness/harness.sh"
script=$1/packaging/dkms/dkms-make.sh
test_scratch dkms-make
if ls -d /usr/src/nvidia-*/nvidia /usr/src/kernel-modules/nvidia-*/nvidia >/dev/null 2>&1; then
	skip_test "this machine has NVIDIA driver sources in /usr/src: the script builds against them"
fi

mkdir "$tmp/bin"
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

# case NAME LICENSE FORCED WANT: with the module's LICENSE (empty: none) and NVIDIA_FLAVOR=FORCED
# (empty: unset), make gets NVIDIA_FLAVOR=WANT.
case_() {
	out=$(env -u NVIDIA_FLAVOR -u NVIDIA_IS_OPENSOURCE PATH="$tmp/bin:$PATH" FAKE_LICENSE="$2" \
		${3:+NVIDIA_FLAVOR=$3} sh "$script" /kdir 6.1.0-test 2>&1)
	if printf '%s\n' "$out" | grep -qx "make KDIR=/kdir NVIDIA_FLAVOR=$4"; then
		result pass "$1"
	else
		result fail "$1" "expected make with NVIDIA_FLAVOR=$4: $(printf '%s' "$out" | tr '\n' '|')"
	fi
}
case_ proprietary_module NVIDIA "" proprietary
case_ open_module "Dual MIT/GPL" "" open
case_ no_module "" "" ""
case_ forced_flavor_wins NVIDIA open open
test_exit
