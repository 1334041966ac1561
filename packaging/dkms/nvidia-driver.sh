# shellcheck shell=sh
# The NVIDIA driver of one kernel as DKMS's build of gdrdrv sees it (sourced by dkms-make.sh,
# which builds against it, and by dkms-match-flavor.sh, which builds again when it changed):
#   nvidia_driver KERNEL_RELEASE
# sets nv_version (the version of the nvidia module installed for that kernel, or empty),
# nv_src (the directory of NVIDIA's nv-p2p.h to build against, or empty), nv_src_other (1 when
# nv_src is not of nv_version), nv_flavor (open or proprietary; empty when the kernel has
# neither NVIDIA's sources nor an nvidia module) and nv_flavor_why (what told it).
# NVIDIA_SRC_ROOT (default /usr/src) is where NVIDIA's DKMS sources are looked for; the tests
# point it at stand-ins.

nvidia_driver() {
	# Debian's own NVIDIA packages name the module nvidia-current.
	nv_version=$(modinfo -k "$1" -F version nvidia 2>/dev/null ||
		modinfo -k "$1" -F version nvidia-current 2>/dev/null || true)
	# NVIDIA's DKMS trees are <root>/nvidia-<version> (Debian: nvidia-current-<version>). Prefer
	# the version of the installed module, else the newest tree.
	_root=${NVIDIA_SRC_ROOT:-/usr/src}
	_newest=
	_matching=
	for _dir in $(ls -d "$_root"/nvidia-*/nvidia "$_root"/kernel-modules/nvidia-*/nvidia \
		2>/dev/null | sort -V); do
		[ -f "$_dir/nv-p2p.h" ] || continue
		_newest=$_dir
		case $_dir in
		*-"$nv_version"/nvidia) [ -n "$nv_version" ] && _matching=$_dir ;;
		esac
	done
	nv_src=${_matching:-$_newest}
	nv_src_other=
	[ -z "$nv_src" ] || [ -z "$nv_version" ] || [ -n "$_matching" ] || nv_src_other=1

	# Linux refuses the open flavor's gdrdrv next to the proprietary driver, whose license does
	# not say GPL (kernel/README.md, "NVIDIA driver flavors"). The sources' first MODULE_LICENSE,
	# as kernel/Makefile reads it: "NVIDIA" in the proprietary driver, "Dual MIT/GPL" in the
	# open one, none found: proprietary, which loads next to either. Without sources, the
	# license of the installed module (a precompiled one, or the .run installer's).
	if [ -n "$nv_src" ]; then
		_license=$(grep -rhoE 'MODULE_LICENSE\("[^"]*"\)' "$nv_src" 2>/dev/null | head -n 1)
		nv_flavor_why="${_license:-no MODULE_LICENSE} in $nv_src"
	else
		_license=$(modinfo -k "$1" -F license nvidia 2>/dev/null ||
			modinfo -k "$1" -F license nvidia-current 2>/dev/null || true)
		nv_flavor_why="the nvidia module of $1 is licensed \"$_license\""
		[ -n "$_license" ] || nv_flavor_why=
	fi
	case $nv_src,$_license in
	,) nv_flavor= ;;
	*GPL*) nv_flavor=open ;;
	*) nv_flavor=proprietary ;;
	esac
}
