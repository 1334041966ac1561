# shellcheck shell=sh
# Stand-ins for DKMS and the module tools, for running the packages' scriptlets on this machine
# without changing it (sourced by the package tests):
#   standin_setup DIR     makes DIR/bin (dkms, modinfo, make, modprobe, service, chkconfig) and
#                         DIR/state, where the stand-in dkms keeps what it added, built and
#                         installed, as DKMS 3.0 does
#   standin_run NAME ARG  runs the scriptlet on stdin as "sh NAME ARG" with the stand-ins first
#                         in PATH; its output goes to DIR/log
# The state, per kernel K: built-K and installed-K hold what the build came from. A build is
# the contents of state/sources, or, with DKMS_SOURCE set (a directory laid out as the DKMS
# package's gdrdrv-<version>), two lines: the NVIDIA driver flavor its dkms-make.sh passed to
# make, and the nv-p2p.h it built against, as kernel/Kbuild records it in modinfo's nv_p2p_h
# (NVIDIA's source directory, or "gdrdrv"; tests/kernel/test_gdrdrv_build.sh checks the real
# module's). state/dkms-commands lists the dkms commands run ("install K", ...). The stand-in
# modinfo answers for gdrdrv from installed-K (description: its flavor; nv_p2p_h: its second
# line), and for nvidia from state/nvidia-license and state/nvidia-version (a module installed
# for every kernel); for nothing else.

standin_setup() { # dir
	standin=$1
	mkdir -p "$standin/bin" "$standin/state"
	cat >"$standin/bin/dkms" <<'END'
#!/bin/sh
# dkms ACTION [-m M] [-v V] [-k KVER] [--all] [--force] [--rpm_safe_upgrade] [-q]
st=$DKMS_STATE action=$1 k= safe=
shift
while [ $# -gt 0 ]; do
	case $1 in -k) k=$2; shift ;; --rpm_safe_upgrade) safe=1 ;; esac
	shift
done
echo "$action${k:+ $k}" >>"$st/dkms-commands"
built() { # the kernels with a build
	for f in "$st"/built-*; do [ -e "$f" ] && echo "${f#"$st"/built-}"; done
}
build() {
	if [ -z "${DKMS_SOURCE:-}" ]; then
		cat "$st/sources" >"$st/built-$k"
		return
	fi
	# The stand-in make says "made NVIDIA_FLAVOR=..." and "made NV_P2P_H=...".
	(cd "$DKMS_SOURCE" && sh dkms-make.sh "/lib/modules/$k/build" "$k") >"$st/make-$k.log" 2>&1 ||
		{ echo "Error! Bad return status for module build on kernel: $k" >&2; exit 10; }
	sed -n -e 's/^made NVIDIA_FLAVOR=//p' -e 's/^made NV_P2P_H=//p' "$st/make-$k.log" \
		>"$st/built-$k"
}
case $action in
add)
	[ -z "$safe" ] || touch "$st/lock"
	[ ! -e "$st/added" ] || { echo "Error! DKMS tree already contains: gdrdrv-2.6" >&2; exit 3; }
	touch "$st/added" ;;
build)
	[ -e "$st/added" ] || { echo "Error! gdrdrv-2.6 is not added" >&2; exit 3; }
	[ -e "$st/built-$k" ] || build ;;
install)
	[ -e "$st/added" ] || { echo "Error! gdrdrv-2.6 is not added" >&2; exit 3; }
	[ ! -e "$st/installed-$k" ] || { echo "Error! already installed for kernel $k" >&2; exit 5; }
	[ -e "$st/built-$k" ] || build
	cp "$st/built-$k" "$st/installed-$k" ;;
uninstall) rm -f "$st"/installed-${k:-*} ;;
remove)
	if [ -n "$safe" ] && [ -e "$st/lock" ]; then rm -f "$st/lock"; exit 0; fi
	rm -f "$st"/built-${k:-*} "$st"/installed-${k:-*}
	# Without a kernel left, DKMS removes the version altogether.
	[ -n "$(built)" ] || rm -f "$st/added" ;;
status)
	for kv in $(built); do
		[ -z "$k" ] || [ "$k" = "$kv" ] || continue
		state=built
		[ ! -e "$st/installed-$kv" ] || state=installed
		echo "gdrdrv/2.6, $kv, x86_64: $state"
	done ;;
esac
END
	cat >"$standin/bin/modinfo" <<'END'
#!/bin/sh
# modinfo [-k KVER] [-F FIELD] MODULE
st=$DKMS_STATE k= field=
while [ $# -gt 1 ]; do
	case $1 in -k) k=$2; shift ;; -F) field=$2; shift ;; esac
	shift
done
case $1,$field in
gdrdrv,description)
	[ -s "$st/installed-$k" ] || exit 1
	echo "GDRCopy-compatible kernel-mode driver built for $(sed -n '1{s/^open$/opensource/;p;}' \
		"$st/installed-$k") NVIDIA driver" ;;
gdrdrv,nv_p2p_h)
	# As the real modinfo: nothing, and success, for a module without the field.
	[ -s "$st/installed-$k" ] || exit 1
	sed -n 2p "$st/installed-$k" ;;
nvidia,license | nvidia,version) cat "$st/nvidia-$field" 2>/dev/null ;;
*) exit 1 ;;
esac
END
	cat >"$standin/bin/make" <<'END'
#!/bin/sh
# make ARGS...: the flavor gdrdrv would be built for, as kernel/Makefile takes it: NVIDIA_FLAVOR,
# else that of NVIDIA_SRC_DIR's MODULE_LICENSE, else (no sources) open; and the nv-p2p.h, as
# kernel/Kbuild records it: NVIDIA_SRC_DIR as make's abspath spells it ("//" as "/", no
# trailing "/"; the tests' paths are absolute), else gdrdrv's own.
flavor=${NVIDIA_FLAVOR:-} nv_src=
for a; do
	case $a in NVIDIA_FLAVOR=*) flavor=${a#*=} ;; NVIDIA_SRC_DIR=*) nv_src=${a#*=} ;; esac
done
if [ -z "$flavor" ] && [ -n "$nv_src" ]; then
	flavor=proprietary
	grep -rqE 'MODULE_LICENSE\("[^"]*GPL' "$nv_src" && flavor=open
fi
echo "made NVIDIA_FLAVOR=${flavor:-open}"
echo "made NV_P2P_H=$(printf '%s\n' "${nv_src:-gdrdrv}" | sed -e 's|//*|/|g' -e 's|\(.\)/$|\1|')"
END
	printf '#!/bin/sh\necho "$(basename "$0") $*" >>"$DKMS_STATE/commands"\n' >"$standin/bin/modprobe"
	cp "$standin/bin/modprobe" "$standin/bin/service"
	cp "$standin/bin/modprobe" "$standin/bin/chkconfig"
	chmod +x "$standin/bin"/*
}

standin_run() { # name arg
	cat >"$standin/$1.sh"
	env -u NVIDIA_FLAVOR -u NVIDIA_IS_OPENSOURCE PATH="$standin/bin:$PATH" \
		DKMS_STATE="$standin/state" sh "$standin/$1.sh" "$2" \
		>>"$standin/log" 2>&1
}
