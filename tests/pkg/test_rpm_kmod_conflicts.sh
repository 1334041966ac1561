#!/bin/sh
# Which gdrdrv packages rpm lets be installed together. Two that each put a gdrdrv.ko for one
# kernel must be refused (depmod would pick one of them); the prebuilt packages of this spec for
# several kernels, and this spec's DKMS package upgrading NVIDIA's, must be accepted. The
# packages are stand-ins built by rpmbuild, without files: this spec's gdrcopy-kmod (DKMS) and
# gdrcopy-kmod-<kver> (prebuilt) with the names, versions, Provides, Conflicts and Obsoletes
# that rpmspec reads from packaging/rpm/gdrcopy.spec.in; NVIDIA GDRCopy 2.6's DKMS gdrcopy-kmod
# 2.6-1dkms and prebuilt gdrcopy-kmod-<kver>-<driver version> 2.6-1 with what its spec gives
# them ("Provides: gdrcopy-kmod = 2.6-1"; unversioned in one, as some of its releases have it).
# rpm installs them into a database of its own (--justdb: no files, no scriptlets).
#   test_rpm_kmod_conflicts.sh SOURCE_TREE
. "$1/tests/harness/harness.sh"
test_scratch rpm-kmod-conflicts
for tool in rpm rpmbuild rpmspec; do
	command -v $tool >/dev/null || skip_test "$tool is not installed (Debian: rpm)"
done
version=$(awk '/^#define GDR_API_(MAJOR|MINOR)_VERSION/ {v = v sep $3; sep = "."} END {print v}' \
	"$1/include/gdrapi.h")
src=$1
kver_a=6.1.0-57-amd64
kver_b=6.12.48+deb12-amd64
mkdir "$tmp/rpms"

# standin NAME VERSION RELEASE: a package without files, with the dependency lines on stdin
# ("Provides: ...", "Conflicts: ...", "Obsoletes: ..."), as $tmp/rpms/NAME-VERSION-RELEASE.rpm.
standin() {
	{
		printf 'Name: %s\nVersion: %s\nRelease: %s\n' "$1" "$2" "$3"
		printf 'Summary: stand-in\nLicense: MIT\nBuildArch: noarch\n'
		cat
		printf '%%description\nstand-in\n%%files\n'
	} >"$tmp/$1.spec"
	rpmbuild -bb --quiet --define "_topdir $tmp/top" --define "_rpmdir $tmp/rpms" \
		--define '_build_name_fmt %%{NAME}-%%{VERSION}-%%{RELEASE}.rpm' "$tmp/$1.spec" \
		>"$tmp/rpmbuild.log" 2>&1 || { cat "$tmp/rpmbuild.log"; return 1; }
}

# ours PACKAGE KVER [BASE_RELEASE]: a stand-in of this spec's PACKAGE (gdrcopy-kmod, or
# gdrcopy-kmod-KVER, built with --with kmod for KVER), with the spec's Release set to
# BASE_RELEASE when given; prints the .rpm's name.
ours() {
	sed -e "s/@VERSION@/$version/" ${3:+-e "s/^\(%global base_release\) .*/\1 $3/"} \
		"$src/packaging/rpm/gdrcopy.spec.in" >"$tmp/gdrcopy.spec"
	rpmspec -q --with kmod --define "kver $2" --qf '[%{=NAME} %{=VERSION} %{=RELEASE} Provides: %{PROVIDENEVRS}\n][%{=NAME} %{=VERSION} %{=RELEASE} Conflicts: %{CONFLICTNEVRS}\n][%{=NAME} %{=VERSION} %{=RELEASE} Obsoletes: %{OBSOLETENEVRS}\n]' \
		"$tmp/gdrcopy.spec" >"$tmp/deps" 2>"$tmp/rpmspec.log" || { cat "$tmp/rpmspec.log" >&2; return 1; }
	evr=$(awk -v p="$1" '$1 == p {print $2 "-" $3; exit}' "$tmp/deps")
	[ -n "$evr" ] || { echo "rpmspec: no package $1" >&2; return 1; }
	awk -v p="$1" '$1 == p {$1 = $2 = $3 = ""; sub(/^ +/, ""); print}' "$tmp/deps" |
		standin "$1" "${evr%-*}" "${evr##*-}" && echo "$1-$evr.rpm"
}

# The stand-ins.
if ! { ours_dkms=$(ours gdrcopy-kmod "$kver_a") &&
	ours_a=$(ours "gdrcopy-kmod-$kver_a" "$kver_a") &&
	ours_b=$(ours "gdrcopy-kmod-$kver_b" "$kver_b") &&
	ours_b_later=$(ours "gdrcopy-kmod-$kver_b" "$kver_b" 3) &&
	echo 'Provides: gdrcopy-kmod = 2.6-1' | standin gdrcopy-kmod 2.6 1dkms &&
	echo 'Provides: gdrcopy-kmod = 2.6-1' | standin "gdrcopy-kmod-$kver_a-580.95.05" 2.6 1 &&
	echo 'Provides: gdrcopy-kmod' | standin "gdrcopy-kmod-$kver_a-575.57.08" 2.6 1; }; then
	result fail stand-ins "rpmspec or rpmbuild failed"
	test_exit
fi
nv_dkms=gdrcopy-kmod-2.6-1dkms.rpm
nv_a=gdrcopy-kmod-$kver_a-580.95.05-2.6-1.rpm
nv_a_unversioned=gdrcopy-kmod-$kver_a-575.57.08-2.6-1.rpm

# rpm_ DB ARGS...: rpm on the scratch database DB; its messages in $tmp/rpm.log, less the note
# that Debian's rpm adds to every install.
rpm_() {
	db=$1
	shift
	rpm --dbpath "$db" --justdb --noscripts --notriggers "$@" >"$tmp/rpm.log" 2>&1
	rc=$?
	grep -v -e 'should not be used directly' -e 'assuming you know what you are doing' \
		"$tmp/rpm.log" >"$tmp/rpm.msg"
	return $rc
}

# case_ NAME accept|refuse FIRST... -- LAST: on an empty database, rpm -U each FIRST package
# (each must install), then rpm -U LAST (one package or several, in one transaction); LAST
# must be accepted or refused with a conflict. Accepted, the database then has LAST's packages.
case_() {
	name=$1 want=$2
	shift 2
	db=$tmp/db-$name
	mkdir "$db"
	while [ "$1" != -- ]; do
		if ! rpm_ "$db" -U "$tmp/rpms/$1"; then
			result fail "$name" "setting up, rpm -U $1: $(tr '\n' ' ' <"$tmp/rpm.msg")"
			return
		fi
		shift
	done
	shift
	last=
	for p in "$@"; do last="$last $tmp/rpms/$p"; done
	# shellcheck disable=SC2086
	rpm_ "$db" -U $last
	rc=$?
	got=$(rpm --dbpath "$db" -qa --qf '%{NAME}-%{VERSION}-%{RELEASE}.rpm\n' 2>/dev/null | sort | tr '\n' ' ')
	msg=$(tr '\n' ' ' <"$tmp/rpm.msg")
	case $want,$rc in
	accept,0)
		missing=
		for p in "$@"; do
			case " $got" in *" $p "*) ;; *) missing="$missing $p" ;; esac
		done
		if [ -z "$missing" ]; then
			result pass "$name" "installed: $got"
		else
			result fail "$name" "accepted, but installed is: $got"
		fi
		;;
	accept,*) result fail "$name" "refused: $msg" ;;
	refuse,0) result fail "$name" "accepted (two gdrdrv.ko for one kernel); installed: $got" ;;
	refuse,*)
		if printf '%s' "$msg" | grep -q 'conflicts with'; then
			result pass "$name" "$msg"
		else
			result fail "$name" "refused, but not for a conflict: $msg"
		fi
		;;
	esac
}

case_ prebuilt_two_kernels accept "$ours_a" -- "$ours_b"
case_ prebuilt_two_kernels_two_releases accept "$ours_a" -- "$ours_b_later"
case_ prebuilt_upgrade accept "$ours_a" "$ours_b" -- "$ours_b_later"
case_ prebuilt_then_dkms refuse "$ours_a" -- "$ours_dkms"
case_ prebuilt_then_nvidia_dkms refuse "$ours_a" -- "$nv_dkms"
case_ nvidia_dkms_then_prebuilt refuse "$nv_dkms" -- "$ours_a"
case_ prebuilt_then_nvidia_prebuilt refuse "$ours_a" -- "$nv_a"
case_ nvidia_prebuilt_unversioned_then_prebuilt refuse "$nv_a_unversioned" -- "$ours_a"
case_ dkms_upgrades_nvidia_dkms accept "$nv_dkms" -- "$ours_dkms"
case_ dkms_then_nvidia_prebuilt refuse "$ours_dkms" -- "$nv_a"
case_ nvidia_prebuilt_then_dkms refuse "$nv_a_unversioned" -- "$ours_dkms"
test_exit
