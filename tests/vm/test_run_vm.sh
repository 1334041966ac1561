#!/bin/bash
# The VM tier's runner (run-vm.sh) against a QEMU of its own: a script that plays one scripted
# boot per call, writing the guest's console and results ports as the real guest would. It
# checks what the runner makes of each ending: a kernel that dies before /init is booted once
# more and said so, and only then; a second death, a death after /init started, a hang and a
# case that never reported are failures with the reason. And that each guest architecture gets
# its board, console and the channel that carries its verdicts.
. @SRC@/tests/harness/harness.sh
runner=@SRC@/tests/vm/run-vm.sh

[ "$(uname -m)" = x86_64 ] || skip_test "run-vm.sh runs only on x86_64 hosts; this is $(uname -m)"
test_scratch run_vm
: >"$tmp/vmlinuz"
: >"$tmp/initramfs.cpio"

# The fake QEMU: boot N (1, 2, ...) plays the N-th word of $FAKE_BOOTS: panic (the kernel dies
# before /init), early (/init says a word, then the kernel dies), ok (one case passes), hang.
cat >"$tmp/qemu" <<'EOF'
#!/bin/bash
ports=()
echo "$*" >"$FAKE_STATE.args"
while [ $# -gt 0 ]; do
	case $1 in
	-serial) ports+=("${2#file:}") ;;
	-chardev) ports+=("${2##*path=}") ;;
	esac
	shift
done
n=$(( $(cat "$FAKE_STATE" 2>/dev/null || echo 0) + 1 ))
echo $n >"$FAKE_STATE"
read -r -a plays <<<"$FAKE_BOOTS"
console=${ports[0]} raw=${ports[1]}
case ${plays[$((n - 1))]:-none} in
panic)
	printf '[    1.7] RIP: 0010:sched_clock_cpu+0x9/0x190\r\n[    1.7] Kernel panic - not syncing: Fatal exception in interrupt\r\n' >"$console"
	: >"$raw" ;;
early)
	printf 'vm-tier: kernel fake, 2 CPU(s)\r\n[    4.0] Kernel panic - not syncing: oops\r\n' >"$console"
	: >"$raw" ;;
ok)
	printf 'vm-tier: kernel fake, 2 CPU(s)\r\nvm-tier: === sim/one\r\nvm-tier: done\r\n' >"$console"
	printf 'plan sim/one\r\nbegin sim/one\r\npass sim/one\r\ndone\r\n' >"$raw" ;;
hang)
	printf 'vm-tier: kernel fake, 2 CPU(s)\r\n' >"$console"
	printf 'plan sim/one\r\nbegin sim/one\r\n' >"$raw"
	exec sleep 30 ;;
*)
	echo "fake qemu: no boot scripted for call $n" >&2
	exit 3 ;;
esac
EOF
chmod +x "$tmp/qemu"

# play NAME BOOTS...: run the runner with the fake QEMU (and $PLAY_ARGS); its output, verdicts,
# the number of boots and the last QEMU command line are left in $tmp/NAME.{out,results,boots,
# boots.args}, its status in $rc.
play() {
	name=$1
	shift
	rm -rf "$tmp/$name"
	# shellcheck disable=SC2086 # PLAY_ARGS: words of the runner's command line
	FAKE_BOOTS="$*" FAKE_STATE="$tmp/$name.boots" QEMU="$tmp/qemu" GDR_VM_TIMEOUT=3 \
		GDR_TEST_RESULTS="$tmp/$name.results" \
		"$runner" --kernel "$tmp/vmlinuz" --initramfs "$tmp/initramfs.cpio" \
		--dir "$tmp/$name" ${PLAY_ARGS:-} >"$tmp/$name.out" 2>&1
	rc=$?
	boots=$(cat "$tmp/$name.boots" 2>/dev/null || echo 0)
}
# check STATUS CASE REASON: pass CASE when STATUS is 0, else fail it with REASON.
check() {
	if [ "$1" = 0 ]; then
		result pass "$2"
	else
		result fail "$2" "$3; runner said: $(tail -n 1 "$tmp/$name.out")"
	fi
}

play panic_then_ok panic ok
ok=1
[ $rc = 0 ] && [ "$boots" = 2 ] || ok=0
grep -q '^pass sim/one' "$tmp/panic_then_ok.results" || ok=0
grep -q 'booted twice: the first kernel died before /init ran' "$tmp/panic_then_ok.out" || ok=0
grep -q 'sched_clock_cpu' "$tmp/panic_then_ok/console.first-boot.log" 2>/dev/null || ok=0
check $((1 - ok)) reboot_after_death_before_init \
	"expected exit 0 after 2 boots, the case passed, the note and the first console kept (exit $rc, $boots boots)"

play panic_twice panic panic
ok=1
[ $rc = 1 ] && [ "$boots" = 2 ] || ok=0
grep -q '^fail boot no case started' "$tmp/panic_twice.results" || ok=0
check $((1 - ok)) second_death_fails "expected exit 1 after 2 boots and a boot failure (exit $rc, $boots boots)"

play early_death early ok
ok=1
[ $rc = 1 ] && [ "$boots" = 1 ] || ok=0
grep -q '^fail boot no case started' "$tmp/early_death.results" || ok=0
grep -q 'booted twice' "$tmp/early_death.out" && ok=0
check $((1 - ok)) no_reboot_after_init_started "expected exit 1 after 1 boot (exit $rc, $boots boots)"

play ok_once ok
ok=1
[ $rc = 0 ] && [ "$boots" = 1 ] || ok=0
[ -e "$tmp/ok_once/console.first-boot.log" ] && ok=0
grep -q 'booted twice' "$tmp/ok_once.out" && ok=0
check $((1 - ok)) clean_boot_once "expected exit 0 after 1 boot, no note (exit $rc, $boots boots)"

play hang hang ok
ok=1
[ $rc = 1 ] && [ "$boots" = 1 ] || ok=0
grep -q '^fail sim/one the VM ran past GDR_VM_TIMEOUT=3s during this case' "$tmp/hang.results" || ok=0
check $((1 - ok)) hang_fails_without_reboot "expected exit 1 after 1 boot naming the case (exit $rc, $boots boots)"

# board_and_channel NAME ARGS WANTED...: a guest booted with the runner's ARGS boots once, its
# verdict is read from the channel run-vm.sh gave it, and QEMU's command line holds every WANTED
# string.
board_and_channel() {
	local name=$1 args=$2 want qemu_args ok=1
	shift 2
	PLAY_ARGS=$args play "$name" ok
	[ $rc = 0 ] && [ "$boots" = 1 ] || ok=0
	grep -q '^pass sim/one' "$tmp/$name.results" || ok=0
	qemu_args=$(cat "$tmp/$name.boots.args" 2>/dev/null)
	for want in "$@"; do
		case $qemu_args in *"$want"*) ;; *) ok=0 ;; esac
	done
	check $((1 - ok)) "${name}_board_and_channel" \
		"expected exit 0 and the case's verdict from its channel, QEMU given: $* (exit $rc; QEMU got: $qemu_args)"
}
board_and_channel x86_64 "" '-cpu max' 'console=ttyS0' 'gdr_channel=ttyS1' \
	"-serial file:$tmp/x86_64/results.log"
board_and_channel arm64 "--arch arm64" '-M virt' 'console=ttyAMA0' 'gdr_channel=hvc0' \
	"path=$tmp/arm64/results.log -device virtconsole,chardev=verdicts"
board_and_channel ppc64le "--arch ppc64le" '-M pseries' '-cpu power9' 'console=hvc0' \
	'gdr_channel=hvc1' "path=$tmp/ppc64le/results.log -device spapr-vty,chardev=verdicts"

test_exit
