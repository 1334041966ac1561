#!/bin/busybox sh
# /init of the VM tier's initramfs (run-vm.sh boots it). Loads nvp2p_sim, runs the sim's own
# cases, then for each gdrdrv mode (persistent pins, then non-persistent) loads gdrdrv, runs
# every kernel-tier case of that mode, and checks that unloading is refused while a process
# holds pins and works, leaking nothing, once it is killed. Last it unloads nvp2p_sim and
# powers off.
#
# Both modules come in the NVIDIA driver flavor of the kernel command line's gdr_flavor (open or
# proprietary: /gdr/modules/FLAVOR). Between the sim's cases and gdrdrv's, the pairing case
# loads the other flavor's gdrdrv: next to the proprietary sim the open build must be refused by
# the kernel (it uses GPL-only symbols), next to the open sim the proprietary build must load.
#
# Each case is one process (test_x NAME). After it, the kernel log is scanned for splats and
# the sim's counters for pins, allocations or backing left behind, or contract misuses: any
# of them fails the case even if it passed. So does a kernel log that wrapped over records
# nobody read (a splat could be among them); the kernel boots with a log_buf_len no case should
# fill, and harness/kernel_log_overrun checks both.
#
# Verdicts go to the second serial port (a virtio console on arm64, a second hypervisor console
# on POWER), one line each: "plan NAME" for every case up front, then "begin NAME" and "pass
# NAME" / "fail NAME reason" / "skip NAME reason", and "done" at the end. Everything else goes
# to the console, which run-vm.sh keeps.
# Kernel command line: gdr_channel=TTY (the verdicts' device, default ttyS1), gdr_timeout=S per
# case (default 60), gdr_filter=ERE to run only the cases whose full name matches, gdr_seed=N for
# the fuzz cases.
#
# Last in each gdrdrv phase, with gdrdrv unloaded, the fault cases (mode f) load gdrdrv's
# fault-injection build themselves (/gdr/modules/gdrdrv-fault.ko) and
# unload it before they end.
#
# In each gdrdrv phase, after the kernel-tier cases, every case of gdrcopy_sanity (extended
# ones included) runs as one more case, sanity_PHASE:NAME, one process each (gdrcopy_sanity -t
# NAME) so the same kernel log and counter checks apply to it. It runs on the simulated CUDA
# driver in nvp2p mode: its cuMemAlloc memory is nvp2p_sim memory that gdrdrv pins.

/bin/busybox mkdir -p /sbin /usr/bin /usr/sbin
/bin/busybox --install -s
export PATH=/bin:/sbin:/usr/bin:/usr/sbin
mount -t proc proc /proc
mount -t sysfs sysfs /sys
mount -t devtmpfs devtmpfs /dev 2>/dev/null
mount -t tmpfs tmpfs /tmp
export LD_LIBRARY_PATH=/gdr/lib GDRCOPY_BACKEND=gdrdrv HOME=/tmp

arg() { # name: its value on the kernel command line
	tr ' ' '\n' </proc/cmdline | sed -n "s/^$1=//p" | tail -n 1
}
CASE_TIMEOUT=$(arg gdr_timeout)
: "${CASE_TIMEOUT:=60}"
FILTER=$(arg gdr_filter)
export VMTEST_TIMEOUT=$CASE_TIMEOUT
SEED=$(arg gdr_seed)
[ -n "$SEED" ] && export VMTEST_SEED=$SEED

log() { echo "vm-tier: $*"; }

# The verdicts' channel, gdr_channel= (run-vm.sh: x86's second serial port, arm64's virtio
# console, POWER's second hypervisor console). The modules a channel needs (arm64's virtio
# console) are in /gdr/boot, numbered in their load order. A missing channel leaves run-vm.sh
# no verdict: it reports "no case started".
CHANNEL=/dev/$(arg gdr_channel)
[ "$CHANNEL" != /dev/ ] || CHANNEL=/dev/ttyS1
for ko in /gdr/boot/*.ko; do
	[ -e "$ko" ] || continue
	insmod "$ko" || log "insmod $ko failed: $CHANNEL may not come"
done
i=0
while [ ! -c "$CHANNEL" ] && [ $i -lt 50 ]; do
	sleep 0.1
	i=$((i + 1))
done
# Open once for the whole run: each open of a serial port resets its FIFO, losing what an
# earlier close had not finished sending. Closing it at the end waits for the last byte.
stty -F "$CHANNEL" raw -echo 2>/dev/null
exec 3>"$CHANNEL"
say() { echo "$*" >&3; }

# Kernel log lines that fail the case they appear in.
SPLAT='(^|[^A-Za-z_])BUG[: ]|WARNING:|memory corruption|Oops|general protection|Call Trace'
SPLAT="$SPLAT|circular locking|inconsistent lock state|refcount_t|KASAN|UBSAN|[Kk]ernel panic"
SPLAT="$SPLAT|soft lockup|blocked for more than|[Bb]ad page|list_(add|del) corruption"
SPLAT="$SPLAT|stack-protector|double fault|nvp2p_sim: misuse"

FLAVOR=$(arg gdr_flavor)
: "${FLAVOR:=open}"
GDRDRV_KO=/gdr/modules/$FLAVOR/gdrdrv.ko
SIM_KO=/gdr/modules/$FLAVOR/nvp2p_sim.ko
# Built in the proprietary flavor, it loads next to either sim.
export GDR_VM_FAULT_KO=/gdr/modules/gdrdrv-fault.ko
# What the flavor looks like from inside: GDRCopy's word for it in gdrdrv's description and
# /proc/driver/gdrdrv/params, and the taint flag that modules of the proprietary one carry.
if [ "$FLAVOR" = proprietary ]; then
	FLAVOR_WORD=proprietary OTHER_FLAVOR=open PAIRING_CASE=pairing/open_gdrdrv_refused
else
	FLAVOR_WORD=opensource OTHER_FLAVOR=proprietary PAIRING_CASE=pairing/proprietary_gdrdrv_loads
fi
SANITY=/gdr/bin/gdrcopy_sanity
# The simulated CUDA driver, its cuMemAlloc memory from nvp2p_sim, for gdrcopy_sanity only.
SANITY_ENV="LD_LIBRARY_PATH=/gdr/simcuda:/gdr/lib GDRCOPY_SIM_CUDA_NVP2P=/dev/nvp2p_sim"

wanted() { # name
	[ -z "$FILTER" ] || echo "$1" | grep -Eq "$FILTER"
}

# "prog case modes" for every case of every program. A program that cannot list its cases
# (a library missing from the initramfs, say) must not make them vanish: it fails as one.
LIST_FAILURES=
for prog in /gdr/tests/test_*; do
	if ! "$prog" --list >/tmp/list.out 2>&1 || [ ! -s /tmp/list.out ]; then
		LIST_FAILURES="$LIST_FAILURES $prog"
		log "$prog --list failed: $(head -n 1 /tmp/list.out)" >&2
		continue
	fi
	while read -r name modes; do
		echo "$prog $name $modes"
	done </tmp/list.out
done >/tmp/cases

cases_of() { # mode letter: "prog case" lines
	awk -v m="$1" 'index($3, m) { print $1, $2 }' /tmp/cases
}

# gdrcopy_sanity's cases, regular and extended (-l indents each name by four spaces).
: >/tmp/sanity_cases
SANITY_LIST_FAILURE=
if [ -x $SANITY ]; then
	if env $SANITY_ENV $SANITY -l >/tmp/list.out 2>&1; then
		sed -n 's/^    \([a-z0-9_]*\)$/\1/p' /tmp/list.out >/tmp/sanity_cases
	fi
	if [ ! -s /tmp/sanity_cases ]; then
		SANITY_LIST_FAILURE="fail list/gdrcopy_sanity cannot list its cases:"
		SANITY_LIST_FAILURE="$SANITY_LIST_FAILURE $(head -n 1 /tmp/list.out | cut -c1-200)"
		log "$SANITY -l failed: $(head -n 1 /tmp/list.out)" >&2
	fi
fi

HARNESS_CASES="kernel_log_overrun"
SIM_PHASE_CASES="module_load"
GDRDRV_PHASE_CASES="module_load flavor_reported"
GDRDRV_TAIL_CASES="module_unload_refused_while_open module_unload_after_kill"

plan() {
	for n in $HARNESS_CASES; do wanted "harness/$n" && say "plan harness/$n"; done
	for n in $SIM_PHASE_CASES; do wanted "sim/$n" && say "plan sim/$n"; done
	cases_of s | while read -r prog name; do wanted "sim/$name" && say "plan sim/$name"; done
	wanted $PAIRING_CASE && say "plan $PAIRING_CASE"
	for phase in persistent nonpersistent; do
		letter=$(echo $phase | cut -c1)
		for n in $GDRDRV_PHASE_CASES; do wanted "$phase/$n" && say "plan $phase/$n"; done
		cases_of "$letter" | while read -r prog name; do
			wanted "$phase/$name" && say "plan $phase/$name"
		done
		while read -r name; do
			wanted "sanity_$phase:$name" && say "plan sanity_$phase:$name"
		done </tmp/sanity_cases
		for n in $GDRDRV_TAIL_CASES; do wanted "$phase/$n" && say "plan $phase/$n"; done
		cases_of f | while read -r prog name; do
			wanted "$phase/$name" && say "plan $phase/$name"
		done
	done
	wanted sim/module_unload && say "plan sim/module_unload"
}

# The sim's counters as of the last check; a case must not leave more behind.
base_pins=0 base_allocs=0 base_backing=0 base_misuses=0
read_counts() {
	eval "$(/gdr/bin/vmctl counts 2>/dev/null)" || sim_pins=unknown
}

# Sets $why to the first reason the case that just ran must fail, if any; $1 = "nocounts"
# skips the counters (a case that hands its pins on to the next one).
check_after() {
	why=
	/gdr/bin/vmctl kmsg /tmp/kmsg.seq >/tmp/kmsg 2>/tmp/kmsg.err
	kmsg_rc=$?
	hit=$(grep -E "$SPLAT" /tmp/kmsg | head -n 1)
	if [ -n "$hit" ]; then
		why="kernel log: $(echo "$hit" | sed 's/^\[[ 0-9.]*\] //' | cut -c1-200)"
		return
	fi
	if [ $kmsg_rc != 0 ]; then
		why="kernel log not scanned whole: $(head -n 1 /tmp/kmsg.err | cut -c1-200)"
		return
	fi
	[ "$1" = nocounts ] && return
	lsmod | grep -q '^nvp2p_sim ' || return
	read_counts
	if [ "$sim_pins" = unknown ]; then
		why="cannot read the sim's counters"
		return
	fi
	if [ "$sim_misuses" -gt "$base_misuses" ]; then
		why="nvidia_p2p contract broken $((sim_misuses - base_misuses)) time(s)"
		why="$why (nvp2p_sim: misuse in the console log)"
	elif [ "$sim_pins" -gt "$base_pins" ]; then
		why="$((sim_pins - base_pins)) pin(s) outstanding after the case ended"
	elif [ "$sim_allocations" -gt "$base_allocs" ]; then
		why="$((sim_allocations - base_allocs)) sim allocation(s) left after the case ended"
	elif [ "$sim_backing" -gt "$base_backing" ]; then
		why="$((sim_backing - base_backing)) bytes of sim backing left after the case ended"
	fi
	base_pins=$sim_pins base_allocs=$sim_allocations base_backing=$sim_backing
	base_misuses=$sim_misuses
}

verdict() { # name rc output-file [nocounts]
	check_after "$4"
	last=$(grep -v '^[[:space:]]*$' "$3" | tail -n 1 | sed -e 's/^FAIL: //' -e 's/^SKIP: //' \
		-e 's/^fail [^ ]* //' -e 's/^skip [^ ]* //' |
		cut -c1-300)
	if [ -n "$why" ]; then
		say "fail $1 $why"
	elif [ "$2" = 0 ]; then
		say "pass $1"
	elif [ "$2" = 77 ]; then
		say "skip $1 ${last:-no reason given}"
	else
		say "fail $1 ${last:-exit $2}"
	fi
}

run_prog_case() { # full-name prog case
	wanted "$1" || return 0
	say "begin $1"
	log "=== $1"
	timeout -s KILL $((CASE_TIMEOUT + 30)) "$2" "$3" >/tmp/case.out 2>&1 3>&-
	rc=$?
	sed 's/^/  | /' /tmp/case.out
	verdict "$1" $rc /tmp/case.out
}

# gdrcopy_sanity's verdict for one case (its --results line) becomes the exit status and last
# output line that verdict wants.
run_sanity_case() { # full-name case
	wanted "$1" || return 0
	say "begin $1"
	log "=== $1"
	rm -f /tmp/sanity.res
	timeout -s KILL $((CASE_TIMEOUT + 30)) env $SANITY_ENV $SANITY -t "$2" \
		--results /tmp/sanity.res >/tmp/case.out 2>&1 3>&-
	rc=$?
	sed 's/^/  | /' /tmp/case.out
	res=$(grep -m 1 " $2\( \|\$\)" /tmp/sanity.res 2>/dev/null)
	word=${res%% *}
	reason=$(echo "$res" | cut -d' ' -f3-)
	case "$word" in
	pass) [ $rc = 0 ] || echo "FAIL: gdrcopy_sanity passed $2 but exited $rc" >>/tmp/case.out ;;
	skip) echo "waived: $reason" >>/tmp/case.out; [ $rc = 0 ] && rc=77 ;;
	fail) echo "$reason" >>/tmp/case.out; [ $rc = 0 ] && rc=1 ;;
	*) echo "gdrcopy_sanity exited $rc without a verdict for $2" >>/tmp/case.out
	   [ $rc = 0 ] && rc=1 ;;
	esac
	verdict "$1" $rc /tmp/case.out
}

# Module cases run even when the filter leaves them out: later cases need what they do.
run_shell_case() { # full-name function [nocounts]
	wanted "$1" && say "begin $1"
	log "=== $1"
	$2 >/tmp/case.out 2>&1
	rc=$?
	sed 's/^/  | /' /tmp/case.out
	if wanted "$1"; then
		verdict "$1" $rc /tmp/case.out "$3"
	else
		check_after "$3"
	fi
}

skip_phase() { # phase reason [loaded]: skip the phase's cases (but its load if "loaded")
	if [ "$3" != loaded ]; then
		for n in $GDRDRV_PHASE_CASES; do wanted "$1/$n" && say "skip $1/$n $2"; done
	else
		wanted "$1/flavor_reported" && say "skip $1/flavor_reported $2"
	fi
	cases_of "$(echo "$1" | cut -c1)" | while read -r prog name; do
		wanted "$1/$name" && say "skip $1/$name $2"
	done
	while read -r name; do
		wanted "sanity_$1:$name" && say "skip sanity_$1:$name $2"
	done </tmp/sanity_cases
	for n in $GDRDRV_TAIL_CASES; do wanted "$1/$n" && say "skip $1/$n $2"; done
	cases_of f | while read -r prog name; do
		wanted "$1/$name" && say "skip $1/$name $2"
	done
}

# --- the harness's own case ---
# A log that wraps under a case must fail it: flood the log past its size and see the check
# say so. The buffer must be as large as run-vm.sh asks (log_buf_len=8M).
LOG_BUF_MIN=8388608
kernel_log_overrun() {
	/gdr/bin/vmctl kmsg /tmp/kmsg.seq >/dev/null ||
		{ echo "FAIL: the log was already overrun, or is unreadable"; return 1; }
	size=$(/gdr/bin/vmctl kmsg-flood) || return 1
	echo "log buffer: $size bytes; logged twice that"
	[ "$size" -ge $LOG_BUF_MIN ] ||
		{ echo "FAIL: a log buffer of $size bytes, less than log_buf_len=8M"; return 1; }
	if /gdr/bin/vmctl kmsg /tmp/kmsg.seq >/dev/null 2>/tmp/overrun.err; then
		echo "FAIL: the overrun went unnoticed"
		return 1
	fi
	echo "noticed: $(cat /tmp/overrun.err)"
	/gdr/bin/vmctl kmsg /tmp/kmsg.seq >/dev/null ||
		{ echo "FAIL: still reported once the log was read: $(cat /tmp/overrun.err)"; return 1; }
}

# --- module cases ---
load_sim() {
	insmod $SIM_KO || return 1
	[ -c /dev/nvp2p_sim ] || { echo "FAIL: no /dev/nvp2p_sim after insmod"; return 1; }
	echo "loaded: $(grep nvp2p_sim /proc/modules)"
}

PERSISTENT=1
load_gdrdrv() {
	# Through the top-level insmod.sh, as a user loads a module built from source.
	GDRDRV_KO=$GDRDRV_KO NVIDIA_MODULE=nvp2p_sim /gdr/bin/insmod.sh \
		use_persistent_mapping=$PERSISTENT || return 1
	echo "loaded: $(grep gdrdrv /proc/modules)"
	# For flavor_reported: the case's log is cleared when it ends.
	dmesg | grep 'gdrdrv.*built for the' | tail -n 1 >/tmp/gdrdrv_load_message
}

# Whether the kernel marked module $1 as tainted by a proprietary module ("P" in its taint).
tainted_proprietary() {
	grep -q P "/sys/module/$1/taint" 2>/dev/null
}

# gdrdrv says which flavor it was built for: /proc/driver/gdrdrv/params, its load message and
# gdrcopy_info. Built for the proprietary driver, it loaded next to the proprietary sim only by
# inheriting the sim's taint, as it would from nvidia.ko; built for the open one it has none.
flavor_reported() {
	want="Built for NVIDIA driver flavor: $FLAVOR_WORD"
	grep -qx "$want" /proc/driver/gdrdrv/params ||
		{ echo "FAIL: /proc/driver/gdrdrv/params lacks '$want':"; cat /proc/driver/gdrdrv/params; return 1; }
	grep -q "built for the $FLAVOR_WORD NVIDIA driver" /tmp/gdrdrv_load_message ||
		{ echo "FAIL: the load message does not name the $FLAVOR_WORD flavor: $(cat /tmp/gdrdrv_load_message)"; return 1; }
	/gdr/bin/gdrcopy_info >/tmp/info.out 2>&1
	grep -q "^gdrdrv .*built for the $FLAVOR_WORD NVIDIA driver" /tmp/info.out ||
		{ echo "FAIL: gdrcopy_info does not report the $FLAVOR_WORD flavor:"; cat /tmp/info.out; return 1; }
	taint=$(cat /sys/module/gdrdrv/taint)
	if [ "$FLAVOR" = proprietary ]; then
		tainted_proprietary gdrdrv ||
			{ echo "FAIL: gdrdrv loaded next to the proprietary sim without its taint ('$taint')"; return 1; }
	elif tainted_proprietary gdrdrv; then
		echo "FAIL: gdrdrv is tainted proprietary ('$taint') next to the open sim"
		return 1
	fi
	echo "gdrdrv reports the $FLAVOR_WORD flavor; its taint: '$taint'"
}

# The other flavor's gdrdrv next to this flavor's sim.
pairing() {
	other=/gdr/modules/$OTHER_FLAVOR/gdrdrv.ko
	if [ "$FLAVOR" = proprietary ]; then
		if insmod $other; then
			rmmod gdrdrv
			echo "FAIL: the open-flavor gdrdrv loaded next to the proprietary sim"
			return 1
		fi
		# Whichever comes first in gdrdrv's symbol table decides the kernel's words
		# (kernel/module/main.c, inherit_taint): a GPL-only symbol, and the sim's symbols are
		# refused; a sim symbol, and gdrdrv inherits the proprietary taint, which then hides
		# the GPL-only symbols.
		refusal=$(dmesg | grep -E "gdrdrv: module using GPL-only symbols uses symbols .*from proprietary module nvp2p_sim|gdrdrv: Unknown symbol " | head -n 1)
		if [ -z "$refusal" ]; then
			echo "FAIL: insmod failed, but not with the kernel's refusal of the pairing:"
			dmesg | tail -n 5
			return 1
		fi
		if echo "$refusal" | grep -q 'Unknown symbol' &&
		   ! dmesg | grep -q "gdrdrv: module uses symbols .*from proprietary module nvp2p_sim, inheriting taint"; then
			echo "FAIL: an unknown symbol, but no inherited taint: $refusal"
			return 1
		fi
		echo "refused, as it must be: $refusal"
	else
		insmod $other || { echo "FAIL: the proprietary-flavor gdrdrv did not load next to the open sim"; return 1; }
		grep -qx "Built for NVIDIA driver flavor: proprietary" /proc/driver/gdrdrv/params ||
			{ echo "FAIL: the loaded gdrdrv does not say proprietary"; rmmod gdrdrv; return 1; }
		tainted_proprietary gdrdrv && { echo "FAIL: tainted proprietary next to the open sim"; rmmod gdrdrv; return 1; }
		rmmod gdrdrv || { echo "FAIL: rmmod of the proprietary-flavor gdrdrv failed"; return 1; }
		echo "the proprietary-flavor gdrdrv loads next to the open sim too"
	fi
}

HOLDER=
unload_refused_while_open() {
	rm -f /tmp/held
	/gdr/bin/vmctl hold /tmp/held 3>&- &
	HOLDER=$!
	i=0
	while [ ! -e /tmp/held ]; do
		i=$((i + 1))
		if [ $i -gt 200 ] || ! kill -0 $HOLDER 2>/dev/null; then
			echo "FAIL: the holder process did not get its pins"
			return 1
		fi
		usleep 100000
	done
	read_counts
	echo "holder $HOLDER holds: $sim_pins pin(s)"
	if rmmod gdrdrv; then
		echo "FAIL: rmmod gdrdrv succeeded while a process had it open with pins"
		return 1
	fi
	grep -q '^gdrdrv ' /proc/modules || { echo "FAIL: gdrdrv is gone"; return 1; }
	echo "rmmod refused, as it must be"
}

unload_after_kill() {
	if [ -n "$HOLDER" ]; then
		kill -9 $HOLDER
		wait $HOLDER 2>/dev/null
		HOLDER=
	fi
	read_counts
	if [ "$sim_pins" != 0 ]; then
		echo "FAIL: $sim_pins pin(s) left after the holder was killed"
		return 1
	fi
	if ! grep -q '^gdrdrv ' /proc/modules; then
		echo "FAIL: gdrdrv was not loaded"
		return 1
	fi
	rmmod gdrdrv || { echo "FAIL: rmmod gdrdrv failed with no process holding it"; return 1; }
	rm -f /dev/gdrdrv
	read_counts
	echo "after unload: $(/gdr/bin/vmctl counts)"
	[ "$sim_pins" = 0 ] && [ "$sim_allocations" = 0 ] && [ "$sim_backing" = 0 ] ||
		{ echo "FAIL: the sim still holds something"; return 1; }
}

unload_sim() {
	if grep -q '^gdrdrv ' /proc/modules; then
		rmmod gdrdrv || echo "note: gdrdrv was still loaded and would not unload"
	fi
	rmmod nvp2p_sim || { echo "FAIL: rmmod nvp2p_sim failed"; return 1; }
}

run_phase() { # phase
	phase=$1
	letter=$(echo $phase | cut -c1)
	if [ ! -e $GDRDRV_KO ]; then
		skip_phase $phase "gdrdrv.ko is not built in this tree"
		return
	fi
	if ! lsmod | grep -q '^nvp2p_sim '; then
		skip_phase $phase "nvp2p_sim is not loaded"
		return
	fi
	[ $phase = persistent ] && PERSISTENT=1 || PERSISTENT=0
	export GDR_VM_PHASE=$phase
	run_shell_case $phase/module_load load_gdrdrv
	if ! grep -q '^gdrdrv ' /proc/modules; then
		skip_phase $phase "gdrdrv did not load (see $phase/module_load)" loaded
		return
	fi
	run_shell_case $phase/flavor_reported flavor_reported
	cases_of "$letter" >/tmp/phase_cases
	while read -r prog name; do
		run_prog_case "$phase/$name" "$prog" "$name"
	done </tmp/phase_cases
	while read -r name; do
		run_sanity_case "sanity_$phase:$name" "$name"
	done </tmp/sanity_cases
	run_shell_case $phase/module_unload_refused_while_open unload_refused_while_open nocounts
	run_shell_case $phase/module_unload_after_kill unload_after_kill
	# Whatever happened, the fault cases and the next phase need gdrdrv unloaded.
	[ -n "$HOLDER" ] && kill -9 $HOLDER 2>/dev/null && wait $HOLDER 2>/dev/null
	HOLDER=
	grep -q '^gdrdrv ' /proc/modules && rmmod gdrdrv
	cases_of f >/tmp/phase_cases
	while read -r prog name; do
		run_prog_case "$phase/$name" "$prog" "$name"
		grep -q '^gdrdrv ' /proc/modules && rmmod gdrdrv
	done </tmp/phase_cases
}

log "kernel $(uname -r), $(nproc) CPU(s), $FLAVOR flavor; case timeout ${CASE_TIMEOUT}s${FILTER:+, filter $FILTER}"
plan
for prog in $LIST_FAILURES; do
	say "fail list/${prog##*/} cannot list its cases: $("$prog" --list 2>&1 | head -n 1 | cut -c1-200)"
done
[ -n "$SANITY_LIST_FAILURE" ] && say "$SANITY_LIST_FAILURE"
# The boot's own messages are not any case's fault, but a splat there is worth seeing.
/gdr/bin/vmctl kmsg /tmp/kmsg.seq 2>&1 | grep -E "$SPLAT|overwritten" |
	sed 's/^/vm-tier: boot log: /'

wanted harness/kernel_log_overrun && run_shell_case harness/kernel_log_overrun kernel_log_overrun

export GDR_VM_PHASE=sim
run_shell_case sim/module_load load_sim
if lsmod | grep -q '^nvp2p_sim '; then
	cases_of s >/tmp/phase_cases
	while read -r prog name; do
		run_prog_case "sim/$name" "$prog" "$name"
	done </tmp/phase_cases
else
	cases_of s | while read -r prog name; do
		wanted "sim/$name" && say "skip sim/$name nvp2p_sim did not load"
	done
fi

if lsmod | grep -q '^nvp2p_sim '; then
	run_shell_case $PAIRING_CASE pairing
else
	wanted $PAIRING_CASE && say "skip $PAIRING_CASE nvp2p_sim is not loaded"
fi
run_phase persistent
run_phase nonpersistent

run_shell_case sim/module_unload unload_sim
say "done"
exec 3>&-
log "done"
sync
poweroff -f
