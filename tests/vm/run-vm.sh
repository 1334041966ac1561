#!/bin/bash
# Tier 2: boot the distribution kernel under QEMU (TCG, never KVM) with the initramfs that
# tests/vm/vm.mk packed, let its /init (guest-init.sh) run every kernel-tier case, and report
# one verdict per case in tests/run-tests.sh's results format to $GDR_TEST_RESULTS (stdout if
# unset). A case the VM never finished fails (the one it was running) or is skipped (the ones
# after it), with the reason; the guest console is kept in DIR/console.log and its tail is
# printed when anything failed. Exits 77 with the reason when this machine cannot run the tier.
#   run-vm.sh --kernel VMLINUZ --initramfs CPIO --dir DIR [--flavor open|proprietary]
#             [--arch x86_64|arm64|ppc64le]
#   run-vm.sh --skip REASON | --skip-from FILE
# --flavor: which NVIDIA driver flavor the guest's modules play (default open). --arch: the
# guest's (default x86_64); arm64 boots QEMU's "virt" board, whose one serial port is the
# console, with the verdicts on a virtio console; ppc64le the "pseries" board with a POWER9,
# console and verdicts on two hypervisor consoles (guest-init.sh). --skip-from: the
# first line of FILE, "SKIP: reason" or "FAIL: reason" (tests/kernel/prepare.sh's items), is the
# verdict: the kernel to boot could not be had.
# Environment: GDR_VM_TIMEOUT (whole run, s, default 270; ppc64le 420), GDR_VM_CASE_TIMEOUT
# (s, default 60), GDR_VM_FILTER (ERE on case names, e.g. 'fork|unix'), GDR_VM_CPU (QEMU -cpu,
# default max; arm64 max,pauth-impdef=on; ppc64le power9), GDR_VM_SMP (default 2), GDR_VM_SEED
# (the fuzz cases' seed), QEMU (default qemu-system-x86_64, qemu-system-aarch64 or
# qemu-system-ppc64).
set -u

kernel= initramfs= dir= skip_reason= skip_from= flavor=open arch=x86_64
while [ $# -gt 0 ]; do
	case "$1" in
	--kernel) kernel=$2; shift 2 ;;
	--initramfs) initramfs=$2; shift 2 ;;
	--dir) dir=$2; shift 2 ;;
	--flavor) flavor=$2; shift 2 ;;
	--arch) arch=$2; shift 2 ;;
	--skip) skip_reason=$2; shift 2 ;;
	--skip-from) skip_from=$2; shift 2 ;;
	*) echo "usage: $0 --kernel VMLINUZ --initramfs CPIO --dir DIR [--flavor open|proprietary]" \
		"[--arch x86_64|arm64|ppc64le] | --skip REASON | --skip-from FILE" >&2
	   exit 2 ;;
	esac
done

skip() {
	echo "SKIP: $*"
	exit 77
}

[ -z "$skip_reason" ] || skip "$skip_reason"
if [ -n "$skip_from" ]; then
	line=$(head -n 1 "$skip_from" 2>/dev/null)
	case $line in
	"SKIP: "*) skip "${line#SKIP: }" ;;
	"FAIL: "*) echo "$line"; exit 1 ;;
	*) echo "FAIL: $skip_from says neither SKIP nor FAIL: $line"; exit 1 ;;
	esac
fi
case $flavor in
open|proprietary) ;;
*) echo "run-vm.sh: --flavor $flavor: open or proprietary" >&2; exit 2 ;;
esac
[ "$(uname -m)" = x86_64 ] ||
	skip "the VM tier's programs are built on an x86_64 host (the other architectures' cross-built); this host is $(uname -m)"
# The guest's machine: its QEMU, board, CPU, the console (the guest's name for it and QEMU's
# device) and the verdicts' channel (the same; guest-init.sh's gdr_channel).
# shellcheck disable=SC2054 # the commas are QEMU's, inside its option values
case $arch in
x86_64)
	qemu=${QEMU:-qemu-system-x86_64} qemu_deb=qemu-system-x86 board=() cpu=max
	default_timeout=270
	console_tty=ttyS0 console_dev=(-serial "file:$dir/console.log")
	channel_tty=ttyS1 channel_dev=(-serial "file:$dir/results.log") ;;
arm64)
	# Pointer authentication as QEMU's cheap stand-in: the architected one is slow under TCG.
	qemu=${QEMU:-qemu-system-aarch64} qemu_deb=qemu-system-arm board=(-M virt)
	cpu=max,pauth-impdef=on default_timeout=270
	console_tty=ttyAMA0 console_dev=(-serial "file:$dir/console.log")
	channel_tty=hvc0 channel_dev=(-device virtio-serial-device
		-chardev "file,id=verdicts,path=$dir/results.log" -device virtconsole,chardev=verdicts) ;;
ppc64le)
	qemu=${QEMU:-qemu-system-ppc64} qemu_deb=qemu-system-ppc
	# The board's Spectre workarounds are what TCG does not emulate: off, rather than warned of.
	board=(-M pseries,cap-sbbc=broken,cap-ibs=broken,cap-ccf-assist=off) cpu=power9
	# A broadcast tlbie in QEMU before its fix of March 2024 ("target/ppc: Fix broadcast tlbie
	# synchronisation"; Debian 12 has 7.2) completes before the other vCPUs drop the entry:
	# one could still store through a zapped PTE into a page the kernel had freed. The VM tier
	# saw exactly that (threads_chaos, 3 runs of 16: gdrdrv zapped, the sim freed, the other
	# vCPU's store landed). With tlbie off the kernel flushes other CPUs by IPI, and waits (0 of
	# 20 runs then).
	arch_append=" disable_tlbie"
	# Its whole catalogue takes 165 s on a 2-core machine, x86's 70-110 s.
	default_timeout=420
	console_tty=hvc0 console_dev=(-chardev "file,id=console,path=$dir/console.log"
		-device spapr-vty,chardev=console)
	channel_tty=hvc1 channel_dev=(-chardev "file,id=verdicts,path=$dir/results.log"
		-device spapr-vty,chardev=verdicts) ;;
*) echo "run-vm.sh: --arch $arch: x86_64, arm64 or ppc64le" >&2; exit 2 ;;
esac
command -v "$qemu" >/dev/null 2>&1 || skip "$qemu not found (apt-get install $qemu_deb)"
[ -r "$kernel" ] || skip "no readable kernel image $kernel (x86_64: apt-get install linux-image-amd64; the others: tests/kernel/cache.sh fetches them)"
[ -r "$initramfs" ] || skip "no initramfs $initramfs (make check-build builds it)"

results_file=${GDR_TEST_RESULTS:-/dev/stdout}
vm_timeout=${GDR_VM_TIMEOUT:-$default_timeout}
case_timeout=${GDR_VM_CASE_TIMEOUT:-60}
filter=${GDR_VM_FILTER:-}
mkdir -p "$dir"
console=$dir/console.log
raw=$dir/results.log
rm -f "$dir/console.first-boot.log"

# Make every kernel complaint count: an oops, a soft lockup or a task hung for 30 s panics,
# and the panic ends the VM (-no-reboot), so no later case runs on a damaged kernel. Warnings
# do not panic; the guest scans the log for them after each case. slub_debug and page_poison
# turn some use-after-free bugs into loud ones.
append="console=$console_tty,115200 rdinit=/init panic=-1 oops=panic softlockup_panic=1"
append+=" hung_task_panic=1 sysctl.kernel.hung_task_timeout_secs=30 slub_debug=FZP"
append+=" page_poison=1 mitigations=off loglevel=6 gdr_timeout=$case_timeout gdr_flavor=$flavor"
append+=" gdr_channel=$channel_tty${arch_append:-}"
# Room for every case's log between two scans (the default 128 KiB wrapped during a fuzz that
# logged each refused ioctl); the guest fails a case whose log wrapped all the same.
append+=" log_buf_len=8M"
[ -n "$filter" ] && append+=" gdr_filter=$filter"
[ -n "${GDR_VM_SEED:-}" ] && append+=" gdr_seed=$GDR_VM_SEED"

boot() {
	rm -f "$console" "$raw"
	timeout -k 5 "$vm_timeout" "$qemu" -accel tcg "${board[@]}" -nographic -nodefaults \
		-no-reboot -m 1G -smp "${GDR_VM_SMP:-2}" -cpu "${GDR_VM_CPU:-$cpu}" \
		-kernel "$kernel" -initrd "$initramfs" -append "$append" \
		"${console_dev[@]}" "${channel_dev[@]}" </dev/null >"$dir/qemu.out" 2>&1
	qemu_rc=$?
	# The serial console ends its lines with CR LF.
	if [ -f "$console" ]; then
		tr -d '\r' <"$console" >"$console.tmp" && mv "$console.tmp" "$console"
	fi
}

start=$(date +%s)
boot
# A guest kernel that dies before its /init says a word has not met this project's code: no
# module is loaded and no test has run. Debian's 6.12 does so now and then under TCG with two
# vCPUs (seen in CI: an oops in an interrupt 1.7 s into the boot, in sched_clock_cpu).
# Such a boot is tried once more, and the summary says so; a second death is a failure.
rebooted=
if [ $qemu_rc = 0 ] && ! grep -q '^plan ' "$raw" 2>/dev/null &&
		! grep -q '^vm-tier: ' "$console" 2>/dev/null; then
	mv "$console" "$dir/console.first-boot.log" 2>/dev/null
	rebooted=" (booted twice: the first kernel died before /init ran; its console: $dir/console.first-boot.log)"
	boot
fi
elapsed=$(( $(date +%s) - start ))

declare -A verdict
plan=()
current= done=0
if [ -f "$raw" ]; then
	while IFS= read -r line; do
		line=${line%$'\r'}
		word=${line%% *}
		rest=${line#* }
		name=${rest%% *}
		case "$word" in
		plan) plan+=("$name"); verdict[$name]= ;;
		begin) current=$name ;;
		pass|fail|skip)
			[ -n "${verdict[$name]+set}" ] || plan+=("$name")
			verdict[$name]=$line
			[ "$current" = "$name" ] && current= ;;
		done) done=1 ;;
		esac
	done <"$raw"
fi

if [ $qemu_rc = 124 ] || [ $qemu_rc = 137 ]; then
	how="the VM ran past GDR_VM_TIMEOUT=${vm_timeout}s"
elif [ $qemu_rc != 0 ]; then
	how="QEMU exited $qemu_rc: $(tail -n 1 "$dir/qemu.out")"
else
	how="the guest kernel died (panic, oops or hang)"
fi

failed=0
: >"$dir/verdicts"
if [ ${#plan[@]} = 0 ]; then
	echo "fail boot no case started: $how; console: $console" >>"$dir/verdicts"
	failed=1
else
	stopped=${current:-}
	for name in "${plan[@]}"; do
		v=${verdict[$name]}
		if [ -z "$v" ]; then
			if [ $done = 1 ]; then
				v="fail $name planned but never reported"
			elif [ -n "$current" ] && [ "$name" = "$current" ]; then
				v="fail $name $how during this case; console: $console"
			elif [ -z "$stopped" ]; then
				stopped=$name
				v="fail $name $how before this case; console: $console"
			else
				v="skip $name not run: the VM stopped during $stopped"
			fi
		fi
		case "$v" in fail*) failed=1 ;; esac
		echo "$v" >>"$dir/verdicts"
	done
	if [ $done != 1 ] && [ $failed = 0 ]; then
		echo "fail vm_finish the guest did not finish: $how; console: $console" >>"$dir/verdicts"
		failed=1
	fi
fi
cat "$dir/verdicts" >>"$results_file"

# The runner shows the last lines of this output when something failed: keep the summary last
# and what precedes it short.
if [ $failed = 1 ]; then
	if grep -q '^\(pass\|skip\)' "$dir/verdicts"; then
		grep '^fail' "$dir/verdicts" | head -n 3 | while read -r _ name _; do
			echo "guest console of $name:"
			awk -v mark="vm-tier: === $name" '
				$0 == mark { f = 1; next }
				/^vm-tier: ===/ { f = 0 }
				f && !/x86\/PAT:/' "$console" | head -n 5 | cut -c1-160 | sed 's/^/  /'
		done
	else
		echo "last lines of the guest console:"
		tail -n 12 "$console" 2>/dev/null | cut -c1-160 | sed 's/^/  /'
	fi
fi
n() { grep -c "^$1" "$dir/verdicts"; }
echo "VM tier ($(basename "$kernel"), $flavor flavor): $(n pass) passed, $(n fail) failed, $(n skip) skipped in ${elapsed}s;" \
	"guest console: $console$rebooted"
[ $failed = 0 ]
