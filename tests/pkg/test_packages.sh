#!/bin/bash
# The packages, end to end, built as GDRCopy's instructions build them (cd packages &&
# CUDA=... ./build-deb-packages.sh, ./build-rpm-packages.sh -m) in a scratch copy of the tree,
# each running its own tests (make test) inside the package build: the profiles -t -k, lintian,
# install the .debs into this machine with dpkg, a client built with pkg-config, the installed
# tools and man pages, gdrdrv built by DKMS against the installed kernel headers, removal; then
# the RPMs' file lists. One result line per step.
#   test_packages.sh SRCDIR BUILD CUDA [builds|install]
# Installing changes this machine (CI's is a throwaway one), so it happens only as root and only
# when none of these packages, nor NVIDIA GDRCopy's, is installed already; GDR_TEST_NO_INSTALL=1
# leaves it out. "builds" does all but that, "install" only that, with the .debs "builds" left:
# make check runs them as two tests, the second alone (another test could find what it
# installs), the first beside others.
set -u
src=$1 build=$2 cuda=$3 part=${4:-all}
case $part in all | builds | install) ;; *) echo "test_packages.sh: no part '$part'" >&2; exit 2 ;; esac
version=$(awk '/^#define GDR_API_(MAJOR|MINOR)_VERSION/ {v = v sep $3; sep = "."} END {print v}' \
	"$src/include/gdrapi.h")
logs=$build/tests/pkg
. "$src/tests/harness/harness.sh"
mkdir -p "$logs"

test_own_make
mk() { make --no-print-directory -C "$src" BUILD="$build" CUDA="$cuda" "$@"; }

exports="gdr_close gdr_copy_from_mapping gdr_copy_to_mapping gdr_driver_get_version
gdr_ext_take_errors gdr_get_attribute gdr_get_callback_flag gdr_get_info gdr_get_info_v2 gdr_get_mapping_type_string
gdr_map gdr_map_v2 gdr_open gdr_pin_buffer gdr_pin_buffer_v2 gdr_runtime_get_version gdr_unmap
gdr_unpin_buffer"

# The newest kernel whose build tree (headers) is installed, for DKMS and the prebuilt kmod.
kver=$(kernel_with_headers)

# want LIST_FILE PATH...: each PATH (a grep -E pattern, anchored) is in the list.
want() {
	local list=$1 p miss=
	shift
	for p in "$@"; do
		grep -qE "^$p\$" "$list" || miss="$miss $p"
	done
	[ -z "$miss" ] || { echo "missing:$miss"; return 1; }
}

# ---- Debian packages -------------------------------------------------------------------------
# What make deb builds: the four packages and the metapackage gdrcopy.
our_debs="libgdrapi2 libgdrapi-dev gdrcopy-tools gdrdrv-dkms gdrcopy"
tree=$logs/tree
deb_dir=$tree/packages
debs=()
if [ "$part" = install ]; then
	for p in $our_debs; do
		f=$(ls "$deb_dir/${p}_$version"-*.deb 2>/dev/null | head -n 1)
		[ -n "$f" ] && debs+=("$f")
	done
	[ ${#debs[@]} = "$(echo $our_debs | wc -w)" ] || debs=()
elif ! { rm -rf "$tree" && (cd "$src" && packaging/copy-source.sh "$tree" "$build"); }; then
	result fail deb-build "cannot copy the source tree to $tree"
elif ! command -v dpkg-buildpackage >/dev/null; then
	result skip deb-build-t-k "dpkg-buildpackage is not installed (make deps)"
	result skip deb-build "dpkg-buildpackage is not installed (make deps)"
else
	# -t -k: the library's two packages alone (its tests run in the full build below).
	if (cd "$deb_dir" && DEB_BUILD_OPTIONS=nocheck CUDA=$cuda ./build-deb-packages.sh -t -k) \
		>"$logs/deb-build-t-k.log" 2>&1; then
		made=$(cd "$deb_dir" && ls ./*.deb | grep -v -- -dbgsym_ | sed 's|^\./||; s|_.*||' | sort | tr '\n' ' ')
		if [ "$made" = "libgdrapi-dev libgdrapi2 " ]; then
			result pass deb-build-t-k "$made"
		else
			result fail deb-build-t-k "made: $made"
		fi
	else
		result fail deb-build-t-k "$(grep -m 1 -iE 'error|\*\*\*' "$logs/deb-build-t-k.log")"
	fi
	rm -f "$deb_dir"/*.deb
	if (cd "$deb_dir" && CUDA=$cuda ./build-deb-packages.sh) >"$logs/deb-build.log" 2>&1; then
		for p in $our_debs; do
			f=$(ls "$deb_dir/${p}_$version"-*.deb 2>/dev/null | head -n 1)
			[ -n "$f" ] && debs+=("$f")
		done
		expect=$(echo $our_debs | wc -w)
		tests_line=$(grep -E '^[0-9]+ passed, [0-9]+ failed, [0-9]+ skipped$' "$logs/deb-build.log")
		if [ ${#debs[@]} != "$expect" ]; then
			result fail deb-build "made ${#debs[@]} of the $expect packages: ${debs[*]##*/}"
		elif [ -z "$tests_line" ]; then
			result fail deb-build "the package build ran no tests (dh_auto_test: make test)"
		else
			result pass deb-build "${debs[*]##*/}; make test: $tests_line"
		fi
	else
		result fail deb-build "$(grep -m 1 -iE 'error|\*\*\*|FAIL' "$logs/deb-build.log")"
		tail -n 20 "$logs/deb-build.log"
	fi
fi

deb_of() { # package name: its .deb
	local f
	for f in "${debs[@]}"; do
		case ${f##*/} in "$1"_*) echo "$f"; return 0 ;; esac
	done
	return 1
}

ma=$(dpkg-architecture -qDEB_HOST_MULTIARCH)
[ ${#debs[@]} = 0 ] || full=$(dpkg-deb -f "$(deb_of gdrcopy)" Version)
if [ ${#debs[@]} -gt 0 ] && [ "$part" != install ]; then
	bad=
	for f in "${debs[@]}"; do
		dpkg-deb -c "$f" | awk '{print $6}' | sed 's|^\./|/|; s|/$||' >"$logs/${f##*/}.files"
	done
	l=$logs/$(basename "$(deb_of libgdrapi2)").files
	why=$(want "$l" "/usr/lib/$ma/libgdrapi.so.2.6" "/usr/lib/$ma/libgdrapi.so.2") || bad="$bad libgdrapi2 $why;"
	grep -q 'libgdrapi.so$' "$l" && bad="$bad libgdrapi2 has the libgdrapi.so link;"
	l=$logs/$(basename "$(deb_of libgdrapi-dev)").files
	why=$(want "$l" /usr/include/gdrapi.h /usr/include/gdrapi_ext.h /usr/include/gdrconfig.h \
		"/usr/lib/$ma/libgdrapi.so" \
		"/usr/lib/$ma/libgdrapi.a" "/usr/lib/$ma/pkgconfig/gdrapi.pc" \
		/usr/share/man/man7/gdrapi.7.gz /usr/share/man/man7/gdrapi_ext.7.gz \
		$(for s in $exports; do echo "/usr/share/man/man3/$s.3.gz"; done)) || bad="$bad libgdrapi-dev $why;"
	l=$logs/$(basename "$(deb_of gdrcopy-tools)").files
	why=$(want "$l" /usr/bin/gdrcopy_info /usr/share/man/man1/gdrcopy_info.1.gz) || bad="$bad gdrcopy-tools $why;"
	for t in sanity copybw copylat apiperf; do
		if grep -q "^/usr/bin/gdrcopy_$t$" "$l"; then
			why=$(want "$l" "/usr/bin/$t" "/usr/share/man/man1/gdrcopy_$t.1.gz") || bad="$bad gdrcopy-tools $why;"
		fi
	done
	l=$logs/$(basename "$(deb_of gdrdrv-dkms)").files
	why=$(want "$l" "/usr/src/gdrdrv-$version/dkms.conf" "/usr/src/gdrdrv-$version/Makefile" \
		"/usr/src/gdrdrv-$version/dkms-make.sh" "/usr/src/gdrdrv-$version/nvidia-driver.sh" \
		"/usr/src/gdrdrv-$version/dkms-match-flavor.sh" \
		"/usr/src/gdrdrv-$version/Kbuild" "/usr/src/gdrdrv-$version/include/uapi/gdrdrv.h" \
		"/usr/src/gdrdrv-$version/nvidia/nv-p2p.h" /lib/modprobe.d/gdrdrv.conf \
		/usr/share/man/man4/gdrdrv.4.gz) || bad="$bad gdrdrv-dkms $why;"
	grep -qE '\.(o|ko|cmd)$|kernel\.mk$' "$l" && bad="$bad gdrdrv-dkms has build outputs;"
	depends=$(dpkg-deb -f "$(deb_of gdrdrv-dkms)" Depends)
	case $depends in *dkms*) ;; *) bad="$bad gdrdrv-dkms does not depend on dkms;" ;; esac
	# modprobe -r also unloads the modules gdrdrv depends on when nothing else uses them: nvidia.
	dpkg-deb -I "$(deb_of gdrdrv-dkms)" prerm | grep -v '^ *#' | grep -q 'modprobe -r' &&
		bad="$bad gdrdrv-dkms's prerm runs modprobe -r (unloads an unused nvidia too);"
	symbols=$(dpkg-deb -I "$(deb_of libgdrapi2)" symbols | awk '/@Base/ {sub(/@Base/, "", $1); print $1}' | sort)
	[ "$symbols" = "$(printf '%s\n' $exports)" ] || bad="$bad libgdrapi2's symbols file differs from the exports;"
	depends=$(dpkg-deb -f "$(deb_of gdrcopy-tools)" Depends)
	case $depends in *libcuda*|*nvidia*) bad="$bad gdrcopy-tools depends on '$depends';" ;; esac
	# The metapackage, as NVIDIA's: the others at exactly its version, and no files of its own.
	depends=$(dpkg-deb -f "$(deb_of gdrcopy)" Depends | tr ',' '\n' | sed 's/^ *//' | sort | tr '\n' ' ')
	[ "$depends" = "gdrcopy-tools (= $full) gdrdrv-dkms (= $full) libgdrapi-dev (= $full) libgdrapi2 (= $full) " ] ||
		bad="$bad gdrcopy depends on '$depends';"
	grep -vqE '^/usr/share/doc(/|$)|^/?\.?$|^/usr(/share)?$' "$logs/$(basename "$(deb_of gdrcopy)").files" &&
		bad="$bad gdrcopy has files beyond its docs;"
	if [ -z "$bad" ]; then result pass deb-contents; else result fail deb-contents "$bad"; fi

	if command -v lintian >/dev/null; then
		lintian --no-tag-display-limit "${debs[@]}" >"$logs/lintian.log" 2>&1
		errors=$(grep -c '^E:' "$logs/lintian.log")
		tags=$(grep -E '^[EW]:' "$logs/lintian.log" | awk '{print $3}' | sort -u | tr '\n' ' ')
		if [ "$errors" = 0 ]; then
			result pass lintian "${tags:+warnings: $tags}"
		else
			result fail lintian "$errors errors: $tags"
		fi
	else
		result skip lintian "lintian is not installed"
	fi
fi

# ---- Installed on this machine ---------------------------------------------------------------
installed() { dpkg-query -W -f '${db:Status-Abbrev}' "$1" 2>/dev/null | grep -q '^ii'; }
no_install=
if [ ${#debs[@]} = 0 ] && [ "$part" = install ]; then
	no_install="no packages in $deb_dir: build them first (test_packages, which make check runs before this; it failed, skipped or did not run)"
elif [ ${#debs[@]} = 0 ]; then
	no_install="no packages were built"
elif [ "${GDR_TEST_NO_INSTALL:-0}" = 1 ]; then
	no_install="GDR_TEST_NO_INSTALL=1"
elif [ "$(id -u)" != 0 ]; then
	no_install="installing with dpkg needs root"
else
	for p in libgdrapi2 libgdrapi-dev gdrcopy-tools gdrdrv-dkms libgdrapi gdrcopy-tests gdrcopy; do
		installed "$p" && no_install="$p is installed on this machine already; it is left alone"
	done
	command -v dkms >/dev/null || no_install="dkms is not installed"
fi

install_cases="deb-install client client-static installed-tools modprobe-config dkms-build deb-remove
deb-over-nvidia"
if [ "$part" = builds ]; then
	: # the other part's
elif [ -n "$no_install" ]; then
	for c in $install_cases; do result skip "$c" "$no_install"; done
else
	pkgs=()
	for f in "${debs[@]}"; do pkgs+=("$(dpkg-deb -f "$f" Package)"); done
	trap 'dpkg --purge "${pkgs[@]}" >/dev/null 2>&1' EXIT
	if dpkg -i "${debs[@]}" >"$logs/deb-install.log" 2>&1; then
		result pass deb-install
	else
		result fail deb-install "$(grep -m 1 -E 'error|dpkg:' "$logs/deb-install.log")"
	fi

	cc=${CC:-cc}
	tmp=$(mktemp -d)
	# shellcheck disable=SC2046
	if ! flags=$(pkg-config --cflags --libs gdrapi 2>&1); then
		result fail client "pkg-config --cflags --libs gdrapi: $flags"
	elif ! $cc -Wall -Werror -o "$tmp/client" "$src/tests/pkg/client.c" $flags >"$tmp/cc.log" 2>&1; then
		result fail client "$(head -n 1 "$tmp/cc.log")"
	elif ! out=$("$tmp/client" 2>&1); then
		result fail client "$out"
	elif ! ldd "$tmp/client" | grep -qE "libgdrapi.so.2 => /(usr/)?lib/"; then
		result fail client "not bound to the installed library: $(ldd "$tmp/client" | grep gdrapi)"
	else
		result pass client "$out"
	fi
	# The static library with what gdrapi.pc says it needs.
	if ! out=$($cc -Wall -Werror -o "$tmp/client-static" "$src/tests/pkg/client.c" \
		$(pkg-config --cflags gdrapi) -Wl,-Bstatic -lgdrapi -Wl,-Bdynamic \
		$(pkg-config --static --libs gdrapi | sed 's/-lgdrapi//; s/-L[^ ]*//g') 2>&1); then
		result fail client-static "$out"
	elif readelf -d "$tmp/client-static" | grep -q 'NEEDED.*libgdrapi'; then
		result fail client-static "linked the shared library"
	elif ! out=$("$tmp/client-static" 2>&1); then
		result fail client-static "$out"
	else
		result pass client-static
	fi
	rm -rf "$tmp"

	bad=
	/usr/bin/gdrcopy_info >"$logs/gdrcopy_info.log" 2>&1 || bad="$bad gdrcopy_info exited $?;"
	for t in /usr/bin/gdrcopy_*; do
		runpath=$(readelf -d "$t" | grep -E 'RUNPATH|RPATH')
		[ -z "$runpath" ] || bad="$bad $t has $runpath;"
	done
	for page in gdr_open gdr_map_v2 gdrapi gdrcopy_info gdrdrv; do
		man -w "$page" >/dev/null 2>&1 || bad="$bad man $page not found;"
	done
	if [ -z "$bad" ]; then result pass installed-tools; else result fail installed-tools "$bad"; fi

	if modprobe -c 2>/dev/null | grep -q '^softdep nvidia post: gdrdrv'; then
		result pass modprobe-config "softdep nvidia post: gdrdrv"
	else
		result fail modprobe-config "modprobe -c shows no 'softdep nvidia post: gdrdrv'"
	fi
	if [ -z "$kver" ]; then
		result skip dkms-build "no kernel headers installed (linux-headers-$(dpkg --print-architecture))"
	else
		dkms build -m gdrdrv -v "$version" -k "$kver" >"$logs/dkms-build.log" 2>&1
		ko=$(find "/var/lib/dkms/gdrdrv/$version/$kver" -name 'gdrdrv.ko*' 2>/dev/null | head -n 1)
		if [ -z "$ko" ]; then
			result fail dkms-build "dkms build for $kver: $(grep -m 1 -iE 'error' "$logs/dkms-build.log")"
			tail -n 20 "$logs/dkms-build.log"
			find /var/lib/dkms/gdrdrv -name make.log -exec tail -n 20 {} \;
		elif [ "$(modinfo -F vermagic "$ko" | cut -d' ' -f1)" != "$kver" ]; then
			result fail dkms-build "$ko is not for $kver: $(modinfo -F vermagic "$ko")"
		else
			result pass dkms-build "$kver"
		fi
	fi

	if ! dpkg --purge "${pkgs[@]}" >"$logs/deb-remove.log" 2>&1; then
		result fail deb-remove "$(grep -m 1 -E 'error|dpkg:' "$logs/deb-remove.log")"
	else
		trap - EXIT
		left=
		for p in "${pkgs[@]}"; do installed "$p" && left="$left $p"; done
		[ -e "/usr/lib/$ma/libgdrapi.so.2" ] && left="$left /usr/lib/$ma/libgdrapi.so.2"
		[ -e "/usr/src/gdrdrv-$version" ] && left="$left /usr/src/gdrdrv-$version"
		command -v dkms >/dev/null && [ -n "$(dkms status gdrdrv 2>/dev/null)" ] && left="$left dkms:gdrdrv"
		if [ -z "$left" ]; then result pass deb-remove; else result fail deb-remove "left:$left"; fi
	fi

	# In place of NVIDIA's 2.6-1 packages, which stand-ins of their names play: libgdrapi,
	# gdrcopy-tests, gdrdrv-dkms, each with a file where the real one has it, and the
	# metapackage gdrcopy, which depends on the three at exactly 2.6-1 (reference
	# gdrcopy-2.6.md, 7.2). apt, as NVIDIA's instructions install them, must put ours in their
	# place and keep gdrcopy installed: ours, whose dependencies ours meet.
	fake=$logs/nvidia-2.6-1
	rm -rf "$fake"
	nv_debs=()
	for spec in "libgdrapi:/usr/lib/$ma/libgdrapi.so.2:" \
		"gdrcopy-tests:/usr/bin/gdrcopy_sanity:libgdrapi (>= 2.6)" \
		"gdrdrv-dkms:/usr/src/gdrdrv-$version/dkms.conf:" \
		"gdrcopy::libgdrapi (= 2.6-1), gdrcopy-tests (= 2.6-1), gdrdrv-dkms (= 2.6-1)"; do
		IFS=: read -r name file deps <<<"$spec"
		mkdir -p "$fake/$name/DEBIAN"
		if [ -n "$file" ]; then
			mkdir -p "$fake/$name$(dirname "$file")"
			echo "stand-in for NVIDIA's $name" >"$fake/$name$file"
		fi
		{
			echo "Package: $name"
			echo "Version: 2.6-1"
			echo "Architecture: $([ "$name" = gdrdrv-dkms ] && echo all || dpkg --print-architecture)"
			echo "Maintainer: test_packages.sh <nobody@example.org>"
			[ -z "$deps" ] || echo "Depends: $deps"
			echo "Description: stand-in for NVIDIA GDRCopy's $name 2.6-1"
		} >"$fake/$name/DEBIAN/control"
		dpkg-deb --root-owner-group -b "$fake/$name" "$fake/$name.deb" >/dev/null
		nv_debs+=("$fake/$name.deb")
	done
	trap 'dpkg --purge "${pkgs[@]}" libgdrapi gdrcopy-tests >/dev/null 2>&1' EXIT
	if ! dpkg -i "${nv_debs[@]}" >"$logs/deb-nvidia.log" 2>&1; then
		result fail deb-over-nvidia "the stand-ins would not install: $(grep -m 1 -E 'error|dpkg:' "$logs/deb-nvidia.log")"
	elif ! DEBIAN_FRONTEND=noninteractive apt-get install -y -q --no-install-recommends \
		"${debs[@]}" >"$logs/deb-over-nvidia.log" 2>&1; then
		result fail deb-over-nvidia "apt-get install of ours over them: $(grep -m 1 -E '^E:|error' "$logs/deb-over-nvidia.log")"
	else
		bad=
		for p in $our_debs; do
			v=$(dpkg-query -W -f '${db:Status-Abbrev} ${Version}' "$p" 2>/dev/null)
			[ "$v" = "ii  $full" ] || bad="$bad $p is '${v:-not installed}';"
		done
		for p in libgdrapi gdrcopy-tests; do
			installed "$p" && bad="$bad NVIDIA's $p is still installed;"
		done
		audit=$(dpkg --audit 2>&1)
		[ -z "$audit" ] || bad="$bad dpkg --audit: $(echo "$audit" | head -n 1);"
		if [ -z "$bad" ]; then
			result pass deb-over-nvidia "gdrcopy, libgdrapi, gdrcopy-tests, gdrdrv-dkms 2.6-1 -> ours $full"
		else
			result fail deb-over-nvidia "$bad"
		fi
	fi
	dpkg --purge "${pkgs[@]}" libgdrapi gdrcopy-tests >"$logs/deb-over-nvidia-remove.log" 2>&1
	trap - EXIT
fi

# ---- RPMs --------------------------------------------------------------------------------------
if [ "$part" = install ]; then
	: # the other part's
elif ! command -v rpmbuild >/dev/null; then
	result skip rpm-build "rpmbuild is not installed (Debian: rpm)"
	result skip rpm-files "rpmbuild is not installed"
else
	kmod_args=()
	kmod_note="without the prebuilt kmod: "
	if [ -z "$kver" ]; then
		kmod_note+="no kernel headers"
	else
		kmod_args=("KVER=$kver")
		kmod_note="with gdrcopy-kmod-$kver"
	fi
	if (cd "$tree/packages" && env "${kmod_args[@]}" CUDA="$cuda" ./build-rpm-packages.sh \
		${kmod_args:+-m}) >"$logs/rpm-build.log" 2>&1; then
		result pass rpm-build "$kmod_note"
		rpm_dir=$tree/packages
		libdir=$(rpm --eval '%{_libdir}')
		bad=
		list() { # package file name pattern: its file list in $logs
			local f
			f=$(ls $rpm_dir/$1 2>/dev/null | head -n 1)
			[ -n "$f" ] || { echo "no $1"; return 1; }
			rpm -qlp "$f" >"$logs/$1.files" 2>/dev/null
			echo "$logs/$1.files"
		}
		if l=$(list "gdrcopy-$version-*.rpm"); then
			why=$(want "$l" /usr/bin/gdrcopy_info "$libdir/libgdrapi.so.2.6" "$libdir/libgdrapi.so.2" \
				"$libdir/libgdrapi.so" "/usr/share/man/man1/gdrcopy_info.1(.gz)?") || bad="$bad gdrcopy $why;"
		else bad="$bad $l;"; fi
		if l=$(list "gdrcopy-devel-$version-*.rpm"); then
			why=$(want "$l" /usr/include/gdrapi.h /usr/include/gdrapi_ext.h \
				/usr/include/gdrconfig.h "$libdir/libgdrapi.a" \
				"$libdir/pkgconfig/gdrapi.pc" "/usr/share/man/man7/gdrapi.7(.gz)?" \
				"/usr/share/man/man7/gdrapi_ext.7(.gz)?" \
				$(for s in $exports; do echo "/usr/share/man/man3/$s.3(.gz)?"; done)) || bad="$bad gdrcopy-devel $why;"
		else bad="$bad $l;"; fi
		if l=$(list "gdrcopy-kmod-$version-*dkms*.noarch.rpm"); then
			why=$(want "$l" "/usr/src/gdrdrv-$version/dkms.conf" "/usr/src/gdrdrv-$version/Makefile" \
				"/usr/src/gdrdrv-$version/dkms-make.sh" "/usr/src/gdrdrv-$version/nvidia-driver.sh" \
				"/usr/src/gdrdrv-$version/dkms-match-flavor.sh" \
				"/usr/src/gdrdrv-$version/Kbuild" "/usr/lib/modprobe.d/gdrdrv.conf" \
				"/usr/share/man/man4/gdrdrv.4(.gz)?") || bad="$bad gdrcopy-kmod $why;"
			grep -qE '\.(o|ko|cmd)$|kernel\.mk$' "$l" && bad="$bad gdrcopy-kmod has build outputs;"
		else bad="$bad $l;"; fi
		if [ ${#kmod_args[@]} -gt 0 ]; then
			if l=$(list "gdrcopy-kmod-$kver-$version-*.rpm"); then
				why=$(want "$l" "/lib/modules/$kver/extra/gdrdrv.ko") || bad="$bad gdrcopy-kmod-$kver $why;"
			else bad="$bad $l;"; fi
		fi
		for f in $rpm_dir/gdrcopy-kmod-*.rpm; do
			rpm -qp --qf '%{PREUN}' "$f" 2>/dev/null | grep -v '^ *#' | grep -q 'modprobe -r' &&
				bad="$bad ${f##*/}'s %preun runs modprobe -r (unloads an unused nvidia too);"
		done
		if [ -z "$bad" ]; then
			result pass rpm-files "$(cd "$rpm_dir" && ls ./*.rpm | sed 's|^\./||' | tr '\n' ' ')"
		else
			result fail rpm-files "$bad"
		fi
	else
		result fail rpm-build "$(grep -m 1 -iE 'error' "$logs/rpm-build.log")"
		tail -n 20 "$logs/rpm-build.log"
		result skip rpm-files "no RPMs"
	fi
	# gdrcopy-kmod in place of NVIDIA's gdrcopy-kmod 2.6-1dkms: rpm runs our %post, then NVIDIA's
	# %preun, which unloads gdrdrv and runs "dkms uninstall" and "dkms remove --rpm_safe_upgrade"
	# of gdrdrv 2.6 (its gdrcopy.spec), then our %posttrans. A stand-in dkms
	# (tests/pkg/dkms_standin.sh) keeps the state: which sources each kernel's build came from,
	# and, as DKMS 3.0 does, refuses to install a version installed already (--force or not) and
	# cancels a remove that an add with --rpm_safe_upgrade in the same transaction asked for.
	# gdrdrv must end installed for every kernel with headers, built from our sources.
	if [ -z "$kver" ]; then
		result skip rpm-kmod-over-nvidia "no kernel headers installed"
	elif ! f=$(ls "$tree"/packages/gdrcopy-kmod-"$version"-*dkms*.noarch.rpm 2>/dev/null | head -n 1) ||
		[ -z "$f" ]; then
		result skip rpm-kmod-over-nvidia "no gdrcopy-kmod"
	else
		sim=$(mktemp -d)
		. "$src/tests/pkg/dkms_standin.sh"
		standin_setup "$sim"
		# NVIDIA's, installed: built and installed for every kernel from its sources.
		touch "$sim/state/added"
		for b in /lib/modules/*/build; do
			[ -e "$b/include" ] || continue
			k=$(basename "$(dirname "$b")")
			echo nvidia >"$sim/state/built-$k"
			echo nvidia >"$sim/state/installed-$k"
		done
		echo ours >"$sim/state/sources"
		nvidia_preun='service gdrcopy stop || :; modprobe -rq gdrdrv || :
dkms uninstall -m gdrdrv -v 2.6 -q --all || :
dkms remove -m gdrdrv -v 2.6 -q --all --rpm_safe_upgrade || :'
		scriptlet() { # tag arg
			local body
			body=$(rpm -qp --qf "%{$1}" "$f" 2>/dev/null)
			[ "$body" = "(none)" ] && return 0
			printf '%s\n' "$body" | standin_run "$1" "$2"
		}
		scriptlet POSTIN 2
		printf '%s\n' "$nvidia_preun" | standin_run nvidia-preun 1
		scriptlet POSTTRANS 0
		bad=
		for b in /lib/modules/*/build; do
			[ -e "$b/include" ] || continue
			k=$(basename "$(dirname "$b")")
			got=$(cat "$sim/state/installed-$k" 2>/dev/null)
			[ "$got" = ours ] || bad="$bad $k: ${got:-not installed}${got:+ (built from the $got sources)};"
		done
		if [ -z "$bad" ]; then
			result pass rpm-kmod-over-nvidia "gdrdrv installed from our sources for every kernel"
		else
			result fail rpm-kmod-over-nvidia "$bad $(tr '\n' ' ' <"$sim/log")"
		fi
		rm -rf "$sim"
	fi
	# The spec's "--without dkms": no gdrcopy-kmod, and nothing make install wrote left unowned
	# (rpmbuild stops on "Installed (but unpackaged) file(s)"). Its tests ran in the build above.
	nodkms=$build/rpm-nodkms
	if make --no-print-directory -C "$src" BUILD="$nodkms" CUDA="$cuda" rpm \
		RPMBUILD_FLAGS="--nodeps --nocheck --define 'debug_package %{nil}' --without dkms" \
		>"$logs/rpm-nodkms.log" 2>&1; then
		if ls "$nodkms"/rpm/RPMS/*/gdrcopy-kmod-* >/dev/null 2>&1; then
			result fail rpm-without-dkms "a gdrcopy-kmod was built: $(ls "$nodkms"/rpm/RPMS/*/)"
		else
			result pass rpm-without-dkms
		fi
	else
		result fail rpm-without-dkms "$(grep -m 1 -A 2 -E 'error' "$logs/rpm-nodkms.log" | tr '\n' ' ')"
	fi
	rm -rf "$nodkms"
fi
test_exit
