#!/bin/sh
# gdrdrv's DKMS packages installed before the NVIDIA driver, a common order, must end with a
# gdrdrv that loads next to the driver installed after them, of either flavor, as DKMS sources
# or precompiled: Linux refuses the open flavor's gdrdrv next to the proprietary driver, and
# the proprietary flavor's in an Intel TDX guest (kernel/README.md, "NVIDIA driver flavors").
# The packages' own scriptlets run against stand-ins (tests/pkg/dkms_standin.sh: dkms, modinfo,
# make) with gdrdrv's DKMS files from packaging/dkms in a scratch directory, NVIDIA's sources
# in a scratch NVIDIA_SRC_ROOT: Debian's gdrdrv-dkms postinst ("configure", then "triggered"
# when the driver's files come; gdrdrv-dkms.triggers must name where they go) and the RPM
# gdrcopy-kmod's %posttrans and %transfiletriggerin (as rpmspec reads them from the spec); and
# dpkg, on a database of the test's own, must call that postinst when stand-ins of NVIDIA's
# packages put files in /usr/src and /lib/modules (deb-trigger-fires). Each
# kernel's gdrdrv must be built for the proprietary flavor without a driver, with a note that
# says so and what follows, and for the driver's flavor once it is there; and again for the
# proprietary one when that replaces the open driver. And since the symbol versions of gdrdrv's
# nvidia_p2p imports come from the nv-p2p.h it was built against (modinfo's nv_p2p_h), each
# kernel's gdrdrv must be built again, whatever the flavor, against the NVIDIA sources DKMS
# would build against now: sources that came after gdrdrv, or a newer driver's; and not when
# nothing changed, when the sources went (nothing better to build against), or for a gdrdrv
# that does not say (built before it recorded that) where there are none.
#   test_dkms_flavor.sh SOURCE_TREE
. "$1/tests/harness/harness.sh"
src=$1
test_scratch dkms-flavor
. "$src/tests/pkg/dkms_standin.sh"
version=$(awk '/^#define GDR_API_(MAJOR|MINOR)_VERSION/ {v = v sep $3; sep = "."} END {print v}' \
	"$src/include/gdrapi.h")
kernels=
for b in /lib/modules/*/build; do
	[ -e "$b/include" ] && kernels="$kernels $(basename "$(dirname "$b")")"
done
[ -n "$kernels" ] || skip_test "no kernel headers installed: the scriptlets build for those kernels only"

# gdrdrv's DKMS directory as the packages install it (install-dkms), less the module's sources,
# which the stand-in make does not read.
dkms_dir=$tmp/src/gdrdrv-$version
mkdir -p "$dkms_dir"
for f in dkms-make.sh nvidia-driver.sh dkms-match-flavor.sh; do
	cp "$src/packaging/dkms/$f" "$dkms_dir/" 2>/dev/null
done
sed "s/@VERSION@/$version/" "$src/packaging/dkms/dkms.conf.in" >"$dkms_dir/dkms.conf"

# The scriptlets, with the package's files where the scratch directory has them.
sed -e '/^#DEBHELPER#$/d' -e "s|#GDRDRV_SRCDIR#|$dkms_dir|g" \
	"$src/packaging/deb/debian/gdrdrv-dkms.postinst" >"$tmp/postinst"
sed "s/@VERSION@/$version/" "$src/packaging/rpm/gdrcopy.spec.in" >"$tmp/gdrcopy.spec"
rpm_ok=
if command -v rpmspec >/dev/null; then
	rpmspec -q --define "_usrsrc $tmp/src" --qf '%{NAME}\n%{POSTTRANS}\n' "$tmp/gdrcopy.spec" \
		2>/dev/null | awk '$0 == "gdrcopy-kmod" {f = 1; next} f && /^gdrcopy/ {exit} f' \
		>"$tmp/posttrans"
	rpmspec -P --define "_usrsrc $tmp/src" "$tmp/gdrcopy.spec" 2>/dev/null |
		awk '/^%transfiletriggerin kmod / {f = 1; next} f && /^%[a-z]/ {exit} f' >"$tmp/trigger"
	rpm_paths=$(rpmspec -q --qf '%{NAME} [%{TRANSFILETRIGGERNAME} ]\n' "$tmp/gdrcopy.spec" 2>/dev/null |
		sed -n 's/^gdrcopy-kmod //p')
	rpm_ok=1
fi

# The packages must hear of files where NVIDIA's driver packages put theirs.
deb_paths=$(sed 's/#.*//' "$src/packaging/deb/debian/gdrdrv-dkms.triggers" 2>/dev/null |
	awk '$1 ~ /^interest/ {print $2}' | tr '\n' ' ')
for p in /usr/src /lib/modules; do
	case " $deb_paths" in *" $p "*) ;; *) missing="${missing:-} deb:$p" ;; esac
	[ -z "$rpm_ok" ] || case " $rpm_paths" in *" $p "*) ;; *) missing="${missing:-} rpm:$p" ;; esac
done
if [ -z "${missing:-}" ]; then
	result pass triggers "gdrdrv-dkms.triggers: $deb_paths; %transfiletriggerin: ${rpm_paths:-(no rpmspec)}"
else
	result fail triggers "no file trigger on:$missing"
fi

# dpkg itself calls "postinst triggered" when a package puts files there: a package with
# gdrdrv-dkms.triggers and a postinst that notes its arguments, then stand-ins of NVIDIA's
# packages (DKMS sources, a precompiled module), in a dpkg database of the test's own
# (--force-script-chrootless: the scripts run on this machine, writing only the note).
deb_fires() {
	root=$tmp/dpkg
	mkdir -p "$root/var/lib/dpkg/info" "$root/var/lib/dpkg/updates" "$root/var/lib/dpkg/triggers"
	touch "$root/var/lib/dpkg/status" "$root/var/lib/dpkg/available"
	for p in gdrdrv-dkms:/usr/src/gdrdrv-$version nvidia-kernel-dkms:/usr/src/nvidia-580.95.05/nvidia \
		linux-modules-nvidia:/lib/modules/6.1.0-57-amd64/kernel/nvidia-580; do
		name=${p%%:*} dir=$tmp/deb/$name
		mkdir -p "$dir/DEBIAN" "$dir${p#*:}"
		echo stand-in >"$dir${p#*:}/$name"
		printf 'Package: %s\nVersion: 1\nArchitecture: all\nMaintainer: test <nobody@example.org>\nDescription: stand-in\n' \
			"$name" >"$dir/DEBIAN/control"
		printf '#!/bin/sh\necho "%s $*" >>%s\n' "$name" "$tmp/deb/postinst.log" >"$dir/DEBIAN/postinst"
		chmod 0755 "$dir/DEBIAN/postinst"
		[ "$name" != gdrdrv-dkms ] ||
			cp "$src/packaging/deb/debian/gdrdrv-dkms.triggers" "$dir/DEBIAN/triggers" 2>/dev/null
		dpkg-deb --root-owner-group -b "$dir" "$dir.deb" >/dev/null 2>&1 &&
			dpkg --root="$root" --force-script-chrootless --force-not-root --log=/dev/null \
				-i "$dir.deb" >>"$tmp/deb/dpkg.log" 2>&1 ||
			{ result fail deb-trigger-fires "dpkg -i $name: $(tail -n 1 "$tmp/deb/dpkg.log")"; return; }
	done
	fired=$(grep -c '^gdrdrv-dkms triggered' "$tmp/deb/postinst.log")
	if [ "$fired" = 2 ]; then
		result pass deb-trigger-fires "$(grep '^gdrdrv-dkms triggered' "$tmp/deb/postinst.log" | tr '\n' ' ')"
	else
		result fail deb-trigger-fires "gdrdrv-dkms's postinst ran: $(tr '\n' ' ' <"$tmp/deb/postinst.log")"
	fi
}
if command -v dpkg-deb >/dev/null; then
	deb_fires
else
	result skip deb-trigger-fires "dpkg-deb is not installed"
fi

# driver FLAVOR dkms|precompiled: NVIDIA's driver of that flavor is installed for every kernel,
# from DKMS sources (which DKMS built: the module is there too) or precompiled.
driver() {
	rm -rf "$tmp/nvsrc"
	mkdir -p "$tmp/nvsrc"
	license=NVIDIA
	[ "$1" = proprietary ] || license="Dual MIT/GPL"
	if [ "$2" = dkms ]; then
		mkdir -p "$tmp/nvsrc/nvidia-580.95.05/nvidia"
		touch "$tmp/nvsrc/nvidia-580.95.05/nvidia/nv-p2p.h"
		echo "MODULE_LICENSE(\"$license\");" >"$tmp/nvsrc/nvidia-580.95.05/nvidia/nv.c"
	fi
	echo "$license" >"$standin/state/nvidia-license"
	echo 580.95.05 >"$standin/state/nvidia-version"
}

# install deb|rpm: the package's install, as dpkg or rpm runs it.
install_() {
	if [ "$1" = deb ]; then
		# dh_dkms's part of the postinst (DKMS's common.postinst), then the package's own.
		{
			echo "dkms add -m gdrdrv -v $version"
			for k in $kernels; do echo "dkms install -m gdrdrv -v $version -k $k"; done
			cat "$tmp/postinst"
		} | standin_run postinst configure
	else
		standin_run posttrans 0 <"$tmp/posttrans"
	fi
}

# trigger deb|rpm: what runs once a package has put files in /usr/src or /lib/modules.
trigger() {
	if [ "$1" = deb ]; then
		standin_run postinst-triggered triggered <"$tmp/postinst"
	else
		standin_run transfiletriggerin 0 <"$tmp/trigger"
	fi
}

# flavors: each kernel's installed gdrdrv flavor, "K=FLAVOR ...".
flavors() {
	for k in $kernels; do
		printf '%s=%s ' "$k" "$(sed -n 1p "$standin/state/installed-$k" 2>/dev/null)"
	done
}

# expect WHAT FLAVOR: every kernel's gdrdrv is built for FLAVOR; prints what is wrong.
expect() {
	for k in $kernels; do
		got=$(sed -n 1p "$standin/state/installed-$k" 2>/dev/null)
		[ "$got" = "$2" ] || printf '%s: gdrdrv for %s is %s, not %s; ' "$1" "$k" "${got:-not installed}" "$2"
	done
}

# case_ PACKAGING FLAVOR dkms|precompiled: installed before the driver, then the driver.
case_() {
	name=$1/$2-$3
	[ "$1" = deb ] || [ -n "$rpm_ok" ] || { result skip "$name" "rpmspec is not installed (Debian: rpm)"; return; }
	rm -rf "$tmp/standin"
	standin_setup "$tmp/standin"
	export DKMS_SOURCE="$dkms_dir" NVIDIA_SRC_ROOT="$tmp/nvsrc"
	mkdir -p "$tmp/nvsrc"
	rm -rf "$tmp/nvsrc"/*
	install_ "$1"
	bad=$(expect "without a driver" proprietary)
	grep -q "no NVIDIA driver is installed for .* yet, so gdrdrv is built there for the proprietary" \
		"$standin/log" || bad="$bad no note that gdrdrv was built without a driver;"
	driver "$2" "$3"
	trigger "$1"
	bad="$bad$(expect "with the $2 driver" "$2")"
	if [ "$2" = open ] && ! grep -q "building gdrdrv $version for .* again" "$standin/log"; then
		bad="$bad no word that gdrdrv was built again;"
	fi
	if [ -z "$bad" ]; then
		result pass "$name" "$(flavors)"
	else
		result fail "$name" "$bad log: $(tr '\n' ' ' <"$standin/log")"
	fi
}

# switch_ PACKAGING: installed with the open driver there (DKMS sources), which the proprietary
# one then replaces.
switch_() {
	name=$1/open-replaced-by-proprietary
	[ "$1" = deb ] || [ -n "$rpm_ok" ] || { result skip "$name" "rpmspec is not installed (Debian: rpm)"; return; }
	rm -rf "$tmp/standin"
	standin_setup "$tmp/standin"
	export DKMS_SOURCE="$dkms_dir" NVIDIA_SRC_ROOT="$tmp/nvsrc"
	driver open dkms
	install_ "$1"
	bad=$(expect "with the open driver" open)
	driver proprietary dkms
	trigger "$1"
	bad="$bad$(expect "once the proprietary driver replaced it" proprietary)"
	if [ -z "$bad" ]; then
		result pass "$name" "$(flavors)"
	else
		result fail "$name" "$bad log: $(tr '\n' ' ' <"$standin/log")"
	fi
}

# sources VERSION: NVIDIA's proprietary DKMS sources of VERSION are in NVIDIA_SRC_ROOT too.
sources() {
	mkdir -p "$tmp/nvsrc/nvidia-$1/nvidia"
	touch "$tmp/nvsrc/nvidia-$1/nvidia/nv-p2p.h"
	echo 'MODULE_LICENSE("NVIDIA");' >"$tmp/nvsrc/nvidia-$1/nvidia/nv.c"
}

# module VERSION: the proprietary nvidia module of VERSION is installed for every kernel.
module() {
	echo NVIDIA >"$standin/state/nvidia-license"
	echo "$1" >"$standin/state/nvidia-version"
}

# untag: each kernel's gdrdrv is one built before nv_p2p_h was recorded.
untag() {
	for k in $kernels; do
		f=$standin/state/installed-$k
		head -n 1 "$f" >"$f.old" && mv "$f.old" "$f"
	done
}

# expect_h WHAT HEADER: every kernel's gdrdrv was built against HEADER (modinfo's nv_p2p_h:
# NVIDIA's source directory, or gdrdrv; empty: not recorded), for the proprietary driver;
# prints what is wrong.
expect_h() {
	for k in $kernels; do
		got=$(sed -n 2p "$standin/state/installed-$k" 2>/dev/null)
		[ "$got" = "$2" ] ||
			printf '%s: gdrdrv for %s was built against %s, not %s; ' "$1" "$k" \
				"${got:-nothing recorded}" "${2:-nothing recorded}"
	done
	expect "$1" proprietary
}

# installs: each kernel's "dkms install" runs so far, "K=N ...".
installs() {
	for k in $kernels; do
		printf '%s=%s ' "$k" "$(grep -cx "install $k" "$standin/state/dkms-commands")"
	done
}

# header_ PACKAGING CASE: the proprietary driver throughout, so that the nv-p2p.h alone decides.
#   own-then-sources     installed before the driver (against gdrdrv's own nv-p2p.h), then the
#                        driver's DKMS sources come: built again against them
#   550-then-580         installed with 550's sources and module, then 580's sources come
#                        (550's stay) and its module is installed: built again against 580's
#   unchanged            the trigger with the sources gdrdrv was built against: no build, though
#                        NVIDIA_SRC_ROOT ends in "/", so that dkms-make.sh passes make a path
#                        with "//", which make's abspath (modinfo's nv_p2p_h) spells with "/"
#   sources-removed      the sources go, the module stays: nothing better to build against
#   untagged             a gdrdrv built before nv_p2p_h was recorded, NVIDIA's sources there:
#                        what it was built against is unknown, so it is built again
#   untagged-no-sources  the same with a precompiled driver, no sources: no build
header_() {
	name=$1/nv-p2p-$2
	if [ "$1" = rpm ] && [ -z "$rpm_ok" ]; then
		result skip "$name" "rpmspec is not installed (Debian: rpm)"
		return
	fi
	rm -rf "$tmp/standin" "$tmp/nvsrc"
	standin_setup "$tmp/standin"
	export DKMS_SOURCE="$dkms_dir" NVIDIA_SRC_ROOT="$tmp/nvsrc"
	[ "$2" != unchanged ] || NVIDIA_SRC_ROOT=$tmp/nvsrc/
	mkdir -p "$tmp/nvsrc"
	nv550=$tmp/nvsrc/nvidia-550.163.01/nvidia nv580=$tmp/nvsrc/nvidia-580.95.05/nvidia
	want=$nv580 rebuilt=
	case $2 in
	own-then-sources)
		install_ "$1"
		bad=$(expect_h "without a driver" gdrdrv)
		sources 580.95.05
		module 580.95.05
		rebuilt=1 ;;
	550-then-580)
		sources 550.163.01
		module 550.163.01
		install_ "$1"
		bad=$(expect_h "with 550" "$nv550")
		sources 580.95.05
		module 580.95.05
		rebuilt=1 ;;
	untagged-no-sources)
		module 580.95.05
		install_ "$1"
		bad=$(expect_h "with a precompiled 580" gdrdrv)
		untag
		want= ;;
	*)
		sources 580.95.05
		module 580.95.05
		install_ "$1"
		bad=$(expect_h "with 580" "$nv580")
		case $2 in
		sources-removed) rm -rf "$tmp/nvsrc/nvidia-580.95.05" ;;
		untagged) untag && rebuilt=1 ;;
		esac ;;
	esac
	before=$(installs)
	: >"$standin/log"
	trigger "$1"
	after=$(installs)
	bad="$bad$(expect_h "after the trigger" "$want")"
	if [ -n "$rebuilt" ]; then
		[ "$after" != "$before" ] || bad="$bad not built again (dkms install runs: $after);"
		grep -q "building gdrdrv $version for .* again: .*nv-p2p\.h" "$standin/log" ||
			bad="$bad no word that gdrdrv was built again for its nv-p2p.h;"
	elif [ "$after" != "$before" ]; then
		bad="$bad built again (dkms install runs before the trigger: $before, after: $after);"
	fi
	if [ -z "$bad" ]; then
		result pass "$name" "dkms install runs: $after"
	else
		result fail "$name" "$bad log: $(tr '\n' ' ' <"$standin/log")"
	fi
}

for packaging in deb rpm; do
	case_ $packaging open dkms
	case_ $packaging proprietary dkms
	case_ $packaging open precompiled
	case_ $packaging proprietary precompiled
	switch_ $packaging
	for c in own-then-sources 550-then-580 unchanged sources-removed untagged \
		untagged-no-sources; do
		header_ $packaging $c
	done
done
test_exit
