/* SPDX-License-Identifier: MIT */
/*
 * Every step of gdrdrv that can fail for want of memory unwinds whole when it does: its load
 * (procfs, the misc device) and an open and a pin (the file, the memory region, the handle
 * table, the last after NVIDIA has handed over the pages), directly and through the library,
 * whose failing call must say why. Each case loads gdrdrv's
 * fault-injection build (kernel/gdrdrv_fault.c) itself, sets fail_nth to 1, 2, ... in turn and
 * runs the same steps each time until one run passes them all: each run's failure must be
 * ENOMEM, leave nothing behind (no procfs entry, device or module after a failed load; no pin
 * in NVIDIA's driver, here nvp2p_sim, after a failed pin), and a later run must work. Last the
 * module must unload: a module reference left by an unwind would keep it. The kernel log must
 * name every step the case meant to reach, so that the case cannot pass without failing them.
 * And, with no fault injected, an unload with a release NVIDIA refused still pending.
 * guest-init.sh runs these with gdrdrv unloaded, after each phase's other cases.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "gdrapi_ext.h"
#include "vmtest.h"

/* More than the steps any case passes: a case that gets this far has a step that never ends. */
#define MAX_RUNS 16
#define FAIL_NTH "/sys/module/gdrdrv/parameters/fail_nth"
#define FAULT_RECORD "fault injected: "

/* Load the fault-injection build with params; 0 or finit_module's errno. */
static int load_fault_build(const char *ko, const char *params)
{
	int fd = open(ko, O_RDONLY | O_CLOEXEC), err;

	if (fd < 0)
		return errno;
	err = syscall(SYS_finit_module, fd, params, 0) ? errno : 0;
	close(fd);
	return err;
}

static int unload(void)
{
	return syscall(SYS_delete_module, "gdrdrv", O_NONBLOCK) ? errno : 0;
}

/* The path of the fault-injection build into *ko: TEST_PASS, or the case skips or fails. */
static int fault_build(const char **ko)
{
	*ko = getenv("GDR_VM_FAULT_KO");
	if (!*ko || access(*ko, R_OK))
		return test_fail("no fault-injection build of gdrdrv (%s) in the initramfs "
				 "(tests/vm/vm.mk builds one per kernel)",
				 *ko ? *ko : "GDR_VM_FAULT_KO unset");
	if (!access("/sys/module/gdrdrv", F_OK))
		return test_fail("gdrdrv is loaded already: the case needs it unloaded");
	return TEST_PASS;
}

/*
 * The kernel log from now on: /dev/kmsg read from its end, so that what the case reads is its
 * own records and not an earlier phase's.
 */
static int kmsg_from_now(void)
{
	int fd = open("/dev/kmsg", O_RDONLY | O_NONBLOCK | O_CLOEXEC);

	if (fd >= 0 && lseek(fd, 0, SEEK_END) < 0) {
		close(fd);
		return -1;
	}
	return fd;
}

/*
 * The step named by the newest "fault injected" record since the last call, into step; empty
 * when there is none.
 */
static void kmsg_fault_step(int fd, char *step, size_t size)
{
	char rec[1024];
	ssize_t n;

	step[0] = '\0';
	for (;;) {
		char *at;

		n = read(fd, rec, sizeof(rec) - 1);
		if (n < 0 && errno == EPIPE)
			continue;
		if (n <= 0)
			break;
		rec[n] = '\0';
		at = strstr(rec, FAULT_RECORD);
		if (at) {
			at += strlen(FAULT_RECORD);
			at[strcspn(at, "\n")] = '\0';
			snprintf(step, size, "%s", at);
		}
	}
}

/* Whether every one of the names (NULL-terminated) is among the steps seen. */
static const char *missing_step(const char *const *want, char seen[][64], int nseen)
{
	for (; *want; want++) {
		int i;

		for (i = 0; i < nseen && strcmp(seen[i], *want); i++)
			;
		if (i == nseen)
			return *want;
	}
	return NULL;
}

static const char *persistent_param(void)
{
	return vm_persistent() ? "use_persistent_mapping=1" : "use_persistent_mapping=0";
}

/* gdrdrv's load, failing at each of its steps in turn, then loading. */
static int case_fault_load_each_step(void)
{
	static const char *const want[] = { "procfs directory", "procfs file", "misc device",
					    NULL };
	const char *ko, *missing;
	char seen[MAX_RUNS][64], params[96];
	int kmsg, n, err = -1, nseen = 0;
	long long left = -1;

	CHECK_PASS(fault_build(&ko));
	/* A dev_mode beyond the permission bits (setuid, sticky) is refused, as a bad param. */
	snprintf(params, sizeof(params), "dev_mode=04666 %s", persistent_param());
	err = load_fault_build(ko, params);
	if (!err)
		unload();	/* for the cases after this one */
	CHECK(err == EINVAL, "the load with dev_mode=04666 gave %s, not EINVAL", strerror(err));
	CHECK(access("/sys/module/gdrdrv", F_OK) && errno == ENOENT,
	      "the load with dev_mode=04666 left gdrdrv in /sys/module");
	kmsg = kmsg_from_now();
	CHECK(kmsg >= 0, "cannot read /dev/kmsg: %s", strerror(errno));
	for (n = 1; n <= MAX_RUNS; n++) {
		snprintf(params, sizeof(params), "fail_nth=%d %s", n, persistent_param());
		err = load_fault_build(ko, params);
		if (!err)
			break;
		kmsg_fault_step(kmsg, seen[nseen], sizeof(seen[nseen]));
		vm_log("fail_nth=%d: the load failed (%s) at step '%s'", n, strerror(err),
		       seen[nseen]);
		CHECK(err == ENOMEM, "the load with fail_nth=%d failed with %s, not ENOMEM", n,
		      strerror(err));
		CHECK(seen[nseen][0], "the load with fail_nth=%d failed, but no step says it "
		      "was made to", n);
		CHECK(access("/sys/module/gdrdrv", F_OK) && errno == ENOENT,
		      "the load that failed at '%s' left gdrdrv in /sys/module", seen[nseen]);
		CHECK(access("/proc/driver/gdrdrv", F_OK) && errno == ENOENT,
		      "the load that failed at '%s' left /proc/driver/gdrdrv", seen[nseen]);
		CHECK(access("/dev/gdrdrv", F_OK) && errno == ENOENT,
		      "the load that failed at '%s' left /dev/gdrdrv", seen[nseen]);
		nseen++;
	}
	close(kmsg);
	CHECK(!err, "gdrdrv did not load with fail_nth=%d either: a step fails every time", n - 1);
	EXPECT_ERR(vm_read_number(FAIL_NTH, &left), 0);
	EXPECT(left == 1, "the load with fail_nth=%d passed, but fail_nth reads %lld, not 1: a "
	       "step failed without its load failing", n, left);
	missing = missing_step(want, seen, nseen);
	EXPECT(!missing, "the load's step '%s' was never made to fail", missing);
	EXPECT(!access("/proc/driver/gdrdrv/params", R_OK) && !access("/dev/gdrdrv", F_OK),
	       "gdrdrv loaded after %d failed loads, without its procfs files or device", nseen);
	CHECK_OK(vm_write_number(FAIL_NTH, 0));
	CHECK_OK(unload());
	return test_failures() ? TEST_FAIL : TEST_PASS;
}

/*
 * One run of the steps an application takes: open, pin, map and write through the mapping, then
 * unpin and close. 0 when they all passed, else the errno of the step that failed, with what was
 * said of it in why: nothing, here, where gdrdrv's errno is all there is.
 */
static int raw_run(const struct nvp2p_sim_alloc *a, uint32_t seed, char *why, size_t size)
{
	uint32_t want[64], got[64];
	uint64_t handle;
	void *map;
	int fd, err;

	snprintf(why, size, "%s", "");
	fd = open("/dev/gdrdrv", O_RDWR | O_CLOEXEC);
	if (fd < 0)
		return errno;
	err = vm_raw_pin(fd, a->va, a->size, 0, &handle);
	if (err) {
		close(fd);
		return err;
	}
	map = vm_raw_map(fd, handle, GPU_PAGE, &err);
	if (map) {
		vm_fill(want, sizeof(want), seed);
		memcpy(map, want, sizeof(want));
		munmap(map, GPU_PAGE);
		err = vm_sim_read(a->va, got, sizeof(got));
		if (!err && vm_diff(want, got, sizeof(got)) >= 0)
			err = EIO;
	}
	if (!err)
		err = vm_raw_unpin(fd, handle);
	close(fd);
	return err;
}

/*
 * The same run through the library: gdr_open, pin, map, a copy, unmap, unpin, gdr_close. 0 when
 * every call passed, else the errno of the one that failed (ENOMEM for a gdr_open that gave
 * NULL), with what the library said of it in why.
 */
static int library_run(const struct nvp2p_sim_alloc *a, uint32_t seed, char *why, size_t size)
{
	uint32_t want[64], got[64];
	gdr_mh_t mh;
	void *map;
	int err;
	gdr_t g;

	gdr_ext_take_errors(NULL, 0);
	why[0] = '\0';
	g = gdr_open();
	if (!g) {
		gdr_ext_take_errors(why, size);
		return ENOMEM;
	}
	err = gdr_pin_buffer_v2(g, a->va, a->size, 0, &mh);
	if (!err) {
		err = gdr_map(g, mh, &map, GPU_PAGE);
		if (!err) {
			vm_fill(want, sizeof(want), seed);
			err = gdr_copy_to_mapping(mh, map, want, sizeof(want));
			if (!err)
				err = vm_sim_read(a->va, got, sizeof(got));
			if (!err && vm_diff(want, got, sizeof(got)) >= 0)
				err = EIO;
			if (!err)
				err = gdr_unmap(g, mh, map, GPU_PAGE);
		}
		if (!err)
			err = gdr_unpin_buffer(g, mh);
	}
	if (err)
		gdr_ext_take_errors(why, size);
	if (gdr_close(g) && !err)
		err = EIO;
	return err;
}

typedef int (*run_fn)(const struct nvp2p_sim_alloc *a, uint32_t seed, char *why, size_t size);

/*
 * Runs of run, failing at each of the steps of an open and a pin in turn, then passing them all:
 * each failure ENOMEM, said in why when says_why, no pin left, and gdrdrv unloads at the end.
 */
static int fail_each_step(run_fn run, bool says_why)
{
	static const char *const want[] = { "open", "pin: memory region", "pin: handle table",
					    NULL };
	const char *ko, *missing;
	char seen[MAX_RUNS][64], why[GDR_EXT_ERRORS_MAX];
	struct nvp2p_sim_alloc a;
	int kmsg, n, err = -1, nseen = 0;
	long long left;
	uint64_t pins;

	CHECK_PASS(fault_build(&ko));
	CHECK_OK(load_fault_build(ko, persistent_param()));
	CHECK_OK(vm_alloc(2 * GPU_PAGE, 0, &a));
	pins = vm_pins();
	kmsg = kmsg_from_now();
	CHECK(kmsg >= 0, "cannot read /dev/kmsg: %s", strerror(errno));
	for (n = 1; n <= MAX_RUNS; n++) {
		CHECK_OK(vm_write_number(FAIL_NTH, n));
		err = run(&a, (uint32_t)n, why, sizeof(why));
		if (!err) {
			/* Steps still to pass before the failing one: the run ended first. */
			CHECK_OK(vm_read_number(FAIL_NTH, &left));
			if (left > 0)
				break;
		}
		kmsg_fault_step(kmsg, seen[nseen], sizeof(seen[nseen]));
		why[strcspn(why, "\n")] = '\0';
		vm_log("fail_nth=%d: %s at step '%s'%s%s", n, err ? strerror(err) : "no error",
		       seen[nseen], why[0] ? ": " : "", why);
		CHECK(err == ENOMEM, "the run with fail_nth=%d %s%s, not ENOMEM, at step '%s'", n,
		      err ? "failed with " : "passed", err ? strerror(err) : "", seen[nseen]);
		CHECK(seen[nseen][0], "the run with fail_nth=%d failed, but no step says it was "
		      "made to", n);
		CHECK(!says_why || strstr(why, strerror(ENOMEM)),
		      "the library's call that failed at '%s' did not say why (%s): '%s'",
		      seen[nseen], strerror(ENOMEM), why);
		CHECK(vm_pins() == pins, "the pin that failed at '%s' left %llu pin(s) in the "
		      "NVIDIA driver", seen[nseen], (unsigned long long)(vm_pins() - pins));
		nseen++;
	}
	close(kmsg);
	CHECK(!err, "the run with fail_nth=%d failed (%s): a step fails every time", n - 1,
	      strerror(err));
	missing = missing_step(want, seen, nseen);
	EXPECT(!missing, "the step '%s' was never made to fail", missing);
	CHECK_OK(vm_write_number(FAIL_NTH, 0));
	CHECK_OK(vm_free(a.va));
	err = unload();
	CHECK(!err, "gdrdrv does not unload after %d failed runs (%s): an unwind kept a reference",
	      nseen, strerror(err));
	return test_failures() ? TEST_FAIL : TEST_PASS;
}

/* An open and a pin on /dev/gdrdrv itself. */
static int case_fault_pin_each_step(void)
{
	return fail_each_step(raw_run, false);
}

/* The library's calls: each failure also said (gdr_ext_take_errors). */
static int case_fault_library_each_step(void)
{
	setenv("GDRCOPY_BACKEND", "gdrdrv", 1);
	return fail_each_step(library_run, true);
}

/*
 * A release NVIDIA refused, still pending when gdrdrv unloads: no fault injected, but a load and
 * an unload of gdrdrv's own, which only this phase has. Persistent: no file is left to close, so
 * the unload is gdrdrv's last chance to ask again; NVIDIA takes the table then, and gets its pages
 * back, and gdrdrv's count of tables is right, so the unload does not warn. Non-persistent: the
 * pin's region and a module reference wait for NVIDIA's free callback, so the unload is refused
 * until the memory is freed.
 */
static int case_unload_with_refused_put(void)
{
	struct nvp2p_sim_alloc a;
	const char *ko;
	uint64_t h;
	int fd, err;

	CHECK_PASS(fault_build(&ko));
	CHECK_OK(load_fault_build(ko, persistent_param()));
	fd = open("/dev/gdrdrv", O_RDWR | O_CLOEXEC);
	CHECK(fd >= 0, "open /dev/gdrdrv: %s", strerror(errno));
	CHECK_OK(vm_alloc(GPU_PAGE, 0, &a));
	CHECK_OK(vm_raw_pin(fd, a.va, GPU_PAGE, 0, &h));
	/* Refused at the unpin and, persistent, again when the file closes. */
	CHECK_OK(vm_inject_put(vm_persistent() ? 2 : 1, EIO));
	CHECK_OK(vm_raw_unpin(fd, h));
	CHECK(close(fd) == 0, "close");
	CHECK(vm_pins() == 1, "%llu pins after the refused release, not 1",
	      (unsigned long long)vm_pins());
	if (!vm_persistent()) {
		err = unload();
		CHECK(err, "gdrdrv unloaded while NVIDIA may still call its free callback");
		CHECK_OK(vm_free(a.va));
		CHECK(vm_pins() == 0, "the free callback left %llu pins",
		      (unsigned long long)vm_pins());
	}
	err = unload();
	CHECK(!err, "gdrdrv does not unload: %s", strerror(err));
	CHECK(vm_pins() == 0, "gdrdrv unloaded, and NVIDIA still holds %llu of its pins",
	      (unsigned long long)vm_pins());
	return TEST_PASS;
}

const struct vm_case vm_cases[] = {
	{ "fault_load_each_step", case_fault_load_each_step, "f" },
	{ "fault_pin_each_step", case_fault_pin_each_step, "f" },
	{ "fault_library_each_step", case_fault_library_each_step, "f" },
	{ "unload_with_refused_put", case_unload_with_refused_put, "f" },
	{ NULL, NULL, NULL },
};
