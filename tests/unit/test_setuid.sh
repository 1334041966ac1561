#!/bin/sh
# The environment a setuid or setgid program must not take from whoever runs it: GDRCOPY_BACKEND
# (which backend, so which driver, the library opens) and GDRCOPY_GDRDRV_PATH (which file it
# opens as gdrdrv) are read with secure_getenv, and the library says that it ignores the first.
# Each case runs the same program twice as user nobody with the same environment: as it is
# (where both are honoured: the control) and setuid root. GDRCOPY_COPY_IMPL is read the same way
# but shows only in an open gdr_t, which no backend gives a setuid program here (the loader
# ignores LD_LIBRARY_PATH, so the simulated CUDA driver cannot be found).
# The build fills in @HARNESS@ and @PROGRAM@ (setuid_open.c, linked with the static library).
set -u
. @HARNESS@
program=@PROGRAM@

# The cross tiers build it for another architecture, which runs here only under an emulator.
machine=$(elf_machine "$program")
[ "$machine" = "$(elf_machine /bin/sh)" ] ||
	skip_test "setuid_open is built for another architecture (ELF machine ${machine:-unknown}); only a native program runs setuid"
[ "$(id -u)" = 0 ] || skip_test "needs root, to make a setuid-root program and run it as another user"
command -v setpriv >/dev/null || skip_test "no setpriv (util-linux), to run the program as another user"
uid=$(id -u nobody 2>/dev/null) || skip_test "no user nobody to run the program as"
gid=$(id -g nobody)

test_scratch setuid
chmod 755 "$tmp"
cp "$program" "$tmp/plain" && cp "$program" "$tmp/setuid" || exit 1
chmod 755 "$tmp/plain" && chmod 4755 "$tmp/setuid" || exit 1

# run PROGRAM [NAME=VALUE...]: PROGRAM in $tmp as nobody, with only the environment given.
run() {
	p=$1
	shift
	env -i PATH=/usr/bin:/bin GDRCOPY_ENABLE_LOGGING=1 GDRCOPY_LOG_LEVEL=3 "$@" \
		setpriv --reuid="$uid" --regid="$gid" --clear-groups "$tmp/$p" 2>&1
}

out=$(run setuid)
first=$(printf '%s\n' "$out" | grep "^euid ")
case "$first" in
"euid 0 secure 1 "*) ;;
"") skip_test "the setuid-root copy did not run here: $(printf '%s\n' "$out" | head -n 1 | tr -cd '[:print:]' | cut -c1-200)" ;;
*) skip_test "the setuid-root copy in $tmp did not run as root in secure mode (a nosuid file system?): $first" ;;
esac
case "$(run plain | grep "^euid ")" in
"euid $uid secure 0 "*) ;;
*) echo "the plain copy did not run as nobody outside secure mode: $(run plain | grep "^euid ")"; exit 1 ;;
esac

# expect CASE PROGRAM TEXT HAS ENV...: whether PROGRAM's output with ENV has TEXT (HAS yes or no).
expect() {
	name=$1 p=$2 text=$3 has=$4
	shift 4
	out=$(run "$p" "$@")
	if printf '%s\n' "$out" | grep -qF -- "$text"; then
		found=yes
	else
		found=no
	fi
	if [ "$found" = "$has" ]; then
		result pass "$name"
	else
		result fail "$name" "the $p program run with $* $([ "$has" = yes ] && echo lacks || echo has) '$text':" \
			"$(printf '%s' "$out" | tr '\n' '|' | cut -c1-400)"
	fi
}

expect backend_honoured plain "GDRCOPY_BACKEND=no-such-backend: no such backend" yes \
	GDRCOPY_BACKEND=no-such-backend
expect backend_ignored_setuid setuid "GDRCOPY_BACKEND is ignored in setuid/setgid programs" yes \
	GDRCOPY_BACKEND=no-such-backend
expect backend_not_used_setuid setuid "no such backend" no GDRCOPY_BACKEND=no-such-backend
expect gdrdrv_path_honoured plain "$tmp/not-gdrdrv" yes GDRCOPY_BACKEND=gdrdrv \
	GDRCOPY_GDRDRV_PATH="$tmp/not-gdrdrv"
expect gdrdrv_path_ignored_setuid setuid "$tmp/not-gdrdrv" no GDRCOPY_GDRDRV_PATH="$tmp/not-gdrdrv"
test_exit
