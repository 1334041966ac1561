/* SPDX-License-Identifier: MIT */
/*
 * Pins never outlive the last reference to the file that made them, whoever drops it and
 * however: the sanity catalogue's leakage_pin_pages_fork (GDRCopy #313), a process killed
 * with its pins and mappings (both orders of closing gdrdrv and the GPU), a forked child that
 * exits, a mapping that outlives its fd, and /proc/driver/gdrdrv/nv_get_pages_refcount. And
 * the one pin that must outlive its file: one NVIDIA refused to release.
 */
#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "vmtest.h"

static int counts(struct nvp2p_sim_counts *c)
{
	return vm_counts(c);
}

/* gdrdrv's own count of the tables it holds; -1 if it has no such file. */
static long long gdrdrv_refcount(void)
{
	long long n;

	return vm_read_number("/proc/driver/gdrdrv/nv_get_pages_refcount", &n) ? -1 : n;
}

static int case_leakage_pin_pages_fork(void)
{
	struct nvp2p_sim_counts before, held, after;
	struct nvp2p_sim_alloc a;
	int go[2], i, fd, shared;
	gdr_mh_t mh;
	pid_t pid;
	char c;
	gdr_t g = vm_gdr_open();

	CHECK(g, "gdr_open");
	CHECK_OK(vm_alloc(4 * GPU_PAGE, 0, &a));
	CHECK_OK(counts(&before));
	CHECK(pipe(go) == 0, "pipe");
	/*
	 * The library closes its own descriptor in fork children (case leakage_fork_child_lives):
	 * a copy of it made behind the library's back is what the child inherits here, as one
	 * passed over a UNIX socket would be.
	 */
	fd = vm_find_gdrdrv_fd();
	CHECK(fd >= 0, "the library's /dev/gdrdrv fd is not in /proc/self/fd");
	shared = dup(fd);
	CHECK(shared >= 0, "dup: %s", strerror(errno));
	pid = test_fork();
	CHECK(pid >= 0, "fork");
	if (pid == 0) {
		/* Holds the other reference to the parent's gdrdrv file; drops it on cue. */
		if (read(go[0], &c, 1) != 1)
			_exit(1);
		gdr_close(g);
		_exit(0);
	}
	close(shared);
	for (i = 0; i < 4; i++)
		CHECK_OK(gdr_pin_buffer(g, a.va + i * GPU_PAGE, GPU_PAGE, 0, 0, &mh));
	CHECK_OK(counts(&held));
	CHECK(held.pins == before.pins + 4, "4 pins counted as %llu",
	      (unsigned long long)(held.pins - before.pins));
	CHECK(gdrdrv_refcount() == 4, "nv_get_pages_refcount says %lld with 4 pins",
	      gdrdrv_refcount());
	/* The parent lets go of its fd behind the library's back. */
	close(fd);
	CHECK_OK(counts(&after));
	CHECK(after.pins == held.pins, "closing one of two references unpinned");
	CHECK(write(go[1], "c", 1) == 1, "pipe");
	CHECK(test_wait(pid) == 0, "the child failed");
	CHECK_OK(counts(&after));
	CHECK(after.foreign_puts == before.foreign_puts,
	      "gdrdrv called put_pages %llu times from the child, which NVIDIA answers with "
	      "success and releases nothing", (unsigned long long)(after.foreign_puts -
								 before.foreign_puts));
	if (!vm_persistent()) {
		/*
		 * Non-persistent pins of the parent's memory can be released in the parent only;
		 * they go when it frees the memory (its free callbacks), as they would at its exit.
		 */
		CHECK(after.pins == held.pins && gdrdrv_refcount() == 4,
		      "after the child's release: %s, nv_get_pages_refcount %lld; want the 4 pins "
		      "waiting for their free callbacks", vm_counts_str(&after), gdrdrv_refcount());
		CHECK_OK(vm_free(a.va));
		CHECK_OK(counts(&after));
		CHECK(after.callbacks == held.callbacks + 4, "%llu free callbacks at the free, not 4",
		      (unsigned long long)(after.callbacks - held.callbacks));
	}
	CHECK(after.pins == before.pins, "%llu pins left after the last reference went",
	      (unsigned long long)(after.pins - before.pins));
	CHECK(gdrdrv_refcount() == 0, "nv_get_pages_refcount says %lld", gdrdrv_refcount());
	/* g's fd is closed; the process ends without gdr_close. */
	return TEST_PASS;
}

/*
 * A child with pins, mappings and GPU memory is killed. At exit its files close in fd order:
 * gpu_first opens the sim (its "GPU") before gdrdrv, so the memory goes first and the free
 * callbacks (non-persistent) run before gdrdrv's release; otherwise release unpins first.
 */
static int kill9(int gpu_first)
{
	struct nvp2p_sim_counts before, after;
	int ready[2];
	pid_t pid;
	char c;

	CHECK_OK(counts(&before));
	CHECK(pipe(ready) == 0, "pipe");
	pid = test_fork();
	CHECK(pid >= 0, "fork");
	if (pid == 0) {
		struct nvp2p_sim_alloc a;
		gdr_mh_t mh;
		void *map;
		gdr_t g;
		int i;

		vm_sim_close();
		if (gpu_first)
			vm_sim_fd();
		g = vm_gdr_open();
		if (!g || vm_sim_fd() < 0)
			_exit(1);
		for (i = 0; i < 6; i++) {
			if (vm_alloc((i + 1) * GPU_PAGE, 0, &a) ||
			    gdr_pin_buffer(g, a.va, (i + 1) * GPU_PAGE, 0, 0, &mh))
				_exit(2);
			if (i % 2 == 0 && gdr_map(g, mh, &map, (i + 1) * GPU_PAGE))
				_exit(3);
		}
		if (write(ready[1], "r", 1) != 1)
			_exit(4);
		for (;;)
			pause();
	}
	CHECK(read(ready[0], &c, 1) == 1, "the child did not get its pins");
	CHECK_OK(counts(&after));
	CHECK(after.pins == before.pins + 6, "the child holds %llu pins, not 6",
	      (unsigned long long)(after.pins - before.pins));
	kill(pid, SIGKILL);
	CHECK(test_wait(pid) == 128 + SIGKILL, "the child did not die of SIGKILL");
	CHECK_OK(counts(&after));
	CHECK(after.pins == before.pins && after.allocations == before.allocations &&
	      after.backing_bytes == before.backing_bytes,
	      "after kill -9: %s; before: pins %llu, allocations %llu", vm_counts_str(&after),
	      (unsigned long long)before.pins, (unsigned long long)before.allocations);
	CHECK(gdrdrv_refcount() <= 0, "nv_get_pages_refcount says %lld", gdrdrv_refcount());
	return TEST_PASS;
}

static int case_leakage_kill9_gpu_first(void)
{
	return kill9(1);
}

static int case_leakage_kill9_gdrdrv_first(void)
{
	return kill9(0);
}

/* A forked child that closes its copy (and even calls gdr_close) takes none of the pins. */
static int case_leakage_fork_child_exits(void)
{
	struct nvp2p_sim_counts before, after;
	struct nvp2p_sim_alloc a;
	uint32_t v = 0;
	gdr_mh_t mh;
	void *map;
	pid_t pid;
	gdr_t g = vm_gdr_open();

	CHECK(g, "gdr_open");
	CHECK_OK(vm_alloc(2 * GPU_PAGE, 0, &a));
	CHECK_OK(gdr_pin_buffer(g, a.va, 2 * GPU_PAGE, 0, 0, &mh));
	CHECK_OK(gdr_map(g, mh, &map, 2 * GPU_PAGE));
	CHECK_OK(counts(&before));
	pid = test_fork();
	CHECK(pid >= 0, "fork");
	if (pid == 0) {
		/* Its unpins are refused (EACCES): the pins are the parent's. */
		gdr_close(g);
		_exit(0);
	}
	CHECK(test_wait(pid) == 0, "child");
	CHECK_OK(counts(&after));
	CHECK(after.pins == before.pins, "the child's exit changed the pins: %s",
	      vm_counts_str(&after));
	CHECK(vm_try_write32(map, 0xabcd) == 0, "the parent's mapping broke");
	CHECK_OK(vm_sim_read(a.va, &v, sizeof(v)));
	CHECK(v == 0xabcd, "the parent's store did not land");
	CHECK_OK(gdr_close(g));
	CHECK_OK(counts(&after));
	CHECK(after.pins == before.pins - 1, "gdr_close left pins: %s", vm_counts_str(&after));
	return TEST_PASS;
}

/*
 * The owner of pins dies (kill -9, GDRCopy #313's case) while a child it forked lives on: the
 * pins go with the owner. The library closes its gdrdrv file in fork children; before, the
 * child's copy kept the file, and so every pin and the GPU memory under it, for the child's
 * whole life (a worker pool forked after the pins), as GDRCopy's library still does.
 */
static int owner_with_worker(int up, int go)
{
	struct nvp2p_sim_alloc a;
	gdr_mh_t mh = { 0 };
	void *map;
	gdr_t g;
	char c;
	int i;

	vm_sim_close();
	g = vm_gdr_open();
	if (!g || vm_sim_fd() < 0)
		return 1;
	for (i = 0; i < 2; i++) {
		if (vm_alloc(GPU_PAGE, 0, &a) || gdr_pin_buffer(g, a.va, GPU_PAGE, 0, 0, &mh))
			return 2;
	}
	if (gdr_map(g, mh, &map, GPU_PAGE))
		return 3;
	switch (test_fork()) {
	case -1:
		return 5;
	case 0:
		/* The worker: says whether it has the library's descriptor, then waits for EOF. */
		c = vm_find_gdrdrv_fd() >= 0 ? 'i' : 'k';
		if (write(up, &c, 1) != 1)
			_exit(1);
		while (read(go, &c, 1) > 0)
			;
		_exit(0);
	default:
		break;
	}
	if (write(up, "r", 1) != 1)
		return 4;
	for (;;)
		pause();
}

static int case_leakage_fork_child_lives(void)
{
	struct nvp2p_sim_counts before, after;
	int up[2], go[2], tries;
	char said[2];
	pid_t owner;

	CHECK_OK(counts(&before));
	CHECK(pipe(up) == 0 && pipe(go) == 0, "pipe");
	owner = test_fork();
	CHECK(owner >= 0, "fork");
	if (owner == 0) {
		close(up[0]);
		close(go[1]);
		_exit(owner_with_worker(up[1], go[0]));
	}
	close(up[1]);
	close(go[0]);
	/* One byte from each, in either order: the worker's verdict and the owner's "ready". */
	CHECK(read(up[0], &said[0], 1) == 1 && read(up[0], &said[1], 1) == 1,
	      "the owner or its worker failed (owner: %d)", test_wait(owner));
	CHECK(memchr(said, 'r', 2) && (memchr(said, 'i', 2) || memchr(said, 'k', 2)),
	      "unexpected bytes from the owner and worker: %.2s", said);
	kill(owner, SIGKILL);
	CHECK(test_wait(owner) == 128 + SIGKILL, "the owner did not die of SIGKILL");
	CHECK_OK(counts(&after));
	CHECK(after.pins == before.pins, "with the worker alive after its owner died: %s, %llu "
	      "pins before: the worker holds the owner's gdrdrv file", vm_counts_str(&after),
	      (unsigned long long)before.pins);
	CHECK(!memchr(said, 'i', 2), "the worker inherited the library's /dev/gdrdrv descriptor");
	/* Let the worker go; its copy of the simulated GPU's file goes with it. */
	close(go[1]);
	CHECK(read(up[0], said, 1) == 0, "the worker wrote more");
	for (tries = 0; tries < 500; tries++) {
		CHECK_OK(counts(&after));
		if (after.allocations == before.allocations)
			break;
		usleep(10000);
	}
	CHECK(after.allocations == before.allocations, "the worker's exit left %s",
	      vm_counts_str(&after));
	close(up[0]);
	return TEST_PASS;
}

/* A mapping holds the file: closing the fd first, the pins go at munmap. */
static int case_leakage_release_at_munmap(void)
{
	struct nvp2p_sim_counts before, after;
	struct nvp2p_sim_alloc a;
	uint32_t v = 0;
	uint64_t h, h2;
	void *map;
	int fd = vm_gdrdrv_open(), err;

	CHECK(fd >= 0, "open");
	CHECK_OK(vm_alloc(3 * GPU_PAGE, 0, &a));
	CHECK_OK(counts(&before));
	CHECK_OK(vm_raw_pin(fd, a.va, 2 * GPU_PAGE, 0, &h));
	CHECK_OK(vm_raw_pin(fd, a.va + 2 * GPU_PAGE, GPU_PAGE, 0, &h2));
	map = vm_raw_map(fd, h, 2 * GPU_PAGE, &err);
	CHECK(map, "mmap: %s", strerror(err));
	close(fd);
	CHECK_OK(counts(&after));
	CHECK(after.pins == before.pins + 2, "closing the fd with a mapping left unpinned");
	CHECK(vm_try_write32((char *)map + GPU_PAGE, 0x5a5a) == 0, "the mapping broke at close");
	CHECK_OK(vm_sim_read(a.va + GPU_PAGE, &v, sizeof(v)));
	CHECK(v == 0x5a5a, "a store after close did not land");
	/* Split the VMA: the release waits for both halves. */
	CHECK(munmap(map, CPU_PAGE) == 0, "munmap of the first page");
	CHECK_OK(counts(&after));
	CHECK(after.pins == before.pins + 2, "a partial munmap released the file");
	CHECK(munmap((char *)map + CPU_PAGE, 2 * GPU_PAGE - CPU_PAGE) == 0, "munmap of the rest");
	CHECK_OK(counts(&after));
	CHECK(after.pins == before.pins, "%llu pins left after the last munmap",
	      (unsigned long long)(after.pins - before.pins));
	return TEST_PASS;
}

/* Many pins, never unpinned, go with gdr_close. */
static int case_leakage_close_with_pins(void)
{
	struct nvp2p_sim_counts before, after;
	struct nvp2p_sim_alloc a;
	gdr_mh_t mh;
	void *map;
	gdr_t g = vm_gdr_open();
	int i;

	CHECK(g, "gdr_open");
	CHECK_OK(vm_alloc(32 * GPU_PAGE, NVP2P_SIM_ALLOC_SCATTERED, &a));
	CHECK_OK(counts(&before));
	for (i = 0; i < 200; i++) {
		CHECK_OK(gdr_pin_buffer(g, a.va + (i % 32) * GPU_PAGE + (i / 32) * 8, 8, 0, 0, &mh));
		if (i < 32)
			CHECK_OK(gdr_map(g, mh, &map, 8));
	}
	CHECK_OK(counts(&after));
	CHECK(after.pins == before.pins + 200, "200 pins counted as %llu",
	      (unsigned long long)(after.pins - before.pins));
	CHECK_OK(gdr_close(g));
	CHECK_OK(counts(&after));
	CHECK(after.pins == before.pins, "gdr_close left %llu pins",
	      (unsigned long long)(after.pins - before.pins));
	return TEST_PASS;
}

/* gdrdrv's module reference count; -1 if unreadable. */
static long module_refcnt(void)
{
	long long n;

	return vm_read_number("/sys/module/gdrdrv/refcnt", &n) ? -1 : (long)n;
}

/* The sim holds `pins` pins, gdrdrv counts as many tables, and gdrdrv's module `refcnt` references. */
static int expect_pinned(unsigned long long pins, long refcnt, const char *when)
{
	struct nvp2p_sim_counts c;

	CHECK_OK(vm_counts(&c));
	CHECK(c.pins == pins, "%llu pins %s, not %llu", (unsigned long long)c.pins, when, pins);
	CHECK(gdrdrv_refcount() == (long long)pins, "gdrdrv counts %lld tables %s, not %llu",
	      gdrdrv_refcount(), when, pins);
	CHECK(module_refcnt() == refcnt, "module refcnt %ld %s, not %ld", module_refcnt(), when,
	      refcnt);
	return TEST_PASS;
}

/* The kernel log has gdrdrv's line "va VA: what". */
static int expect_logged(const char *what, uint64_t va)
{
	char needle[128];

	snprintf(needle, sizeof(needle), "va 0x%llx: %s", (unsigned long long)va, what);
	CHECK(vm_kmsg_contains(needle) == 1, "no kernel log line \"%s\"", needle);
	return TEST_PASS;
}

/*
 * Pin and map two GPU pages of a new allocation *a through a new file *fd, then unpin them with
 * NVIDIA's next `refusals` put_pages failing. The unpin succeeds all the same (the caller can do
 * nothing about NVIDIA's refusal), and the mapping goes with it. *fd is left open.
 */
static int unpin_refused(uint32_t refusals, struct nvp2p_sim_alloc *a, int *fd)
{
	uint64_t h;
	void *map;
	int err;

	*fd = vm_gdrdrv_open();
	CHECK(*fd >= 0, "open");
	CHECK_OK(vm_alloc(2 * GPU_PAGE, 0, a));
	CHECK_OK(vm_raw_pin(*fd, a->va, 2 * GPU_PAGE, 0, &h));
	map = vm_raw_map(*fd, h, 2 * GPU_PAGE, &err);
	CHECK(map, "mmap: %s", strerror(err));
	CHECK_OK(vm_inject_put(refusals, EIO));
	CHECK_OK(vm_raw_unpin(*fd, h));
	CHECK(vm_try_write32(map, 1) != 0, "the mapping survived its unpin");
	CHECK(munmap(map, 2 * GPU_PAGE) == 0, "munmap");
	return TEST_PASS;
}

/*
 * NVIDIA refuses to release a non-persistent pin (put_pages fails): the pages stay pinned, and
 * NVIDIA may still call gdrdrv's free callback with the pin's region when the memory is freed.
 * gdrdrv must keep that region and its own code until then, and say so in the kernel log. It
 * freed the region, and the callback then wrote to freed memory.
 */
static int case_leakage_put_pages_refused(void)
{
	struct nvp2p_sim_alloc a;
	long refcnt;
	int fd;

	refcnt = module_refcnt();
	CHECK(refcnt >= 0, "cannot read /sys/module/gdrdrv/refcnt");
	CHECK_OK(unpin_refused(1, &a, &fd));
	CHECK(close(fd) == 0, "close");
	CHECK_OK(expect_pinned(1, refcnt + 1, "after a refused put_pages, the file closed"));
	CHECK_OK(expect_logged("put_pages failed", a.va));

	/* cudaFree: NVIDIA revokes the pages and calls gdrdrv back, which ends the pin. */
	CHECK_OK(vm_free(a.va));
	CHECK_OK(expect_pinned(0, refcnt, "after the free callback"));
	return TEST_PASS;
}

/*
 * NVIDIA refuses to release a persistent pin (put_pages_persistent fails). A persistent pin has
 * no free callback: NVIDIA keeps the pages pinned until it is asked again, and only gdrdrv can
 * ask. gdrdrv asks again whenever a /dev/gdrdrv file is closed. It forgot the table, which
 * stayed pinned until NVIDIA's driver unloaded, and its count then warned at rmmod.
 */
static int case_leakage_put_pages_persistent_refused(void)
{
	struct nvp2p_sim_alloc a;
	long refcnt;
	int fd, other;

	refcnt = module_refcnt();
	CHECK(refcnt >= 0, "cannot read /sys/module/gdrdrv/refcnt");
	/* Refused at the unpin, and again at the first retry. */
	CHECK_OK(unpin_refused(2, &a, &fd));
	/* No callback can come: gdrdrv holds no module reference for the table, only the file. */
	CHECK_OK(expect_pinned(1, refcnt + 1, "after a refused put_pages_persistent"));
	CHECK_OK(expect_logged("put_pages_persistent failed", a.va));

	/* Another file's close asks again: refused. */
	other = vm_gdrdrv_open();
	CHECK(other >= 0, "open");
	CHECK(close(other) == 0, "close");
	CHECK_OK(expect_pinned(1, refcnt + 1, "after a refused retry"));

	/* The owner's close asks again, and NVIDIA releases the pages. */
	CHECK(close(fd) == 0, "close");
	CHECK_OK(expect_pinned(0, refcnt, "after the retry NVIDIA accepted"));
	CHECK_OK(expect_logged("put_pages_persistent succeeded on a retry", a.va));
	CHECK_OK(vm_free(a.va));
	return TEST_PASS;
}

const struct vm_case vm_cases[] = {
	{ "leakage_pin_pages_fork", case_leakage_pin_pages_fork, "pn" },
	{ "leakage_kill9_gpu_first", case_leakage_kill9_gpu_first, "pn" },
	{ "leakage_kill9_gdrdrv_first", case_leakage_kill9_gdrdrv_first, "pn" },
	{ "leakage_fork_child_exits", case_leakage_fork_child_exits, "pn" },
	{ "leakage_fork_child_lives", case_leakage_fork_child_lives, "pn" },
	{ "leakage_release_at_munmap", case_leakage_release_at_munmap, "pn" },
	{ "leakage_close_with_pins", case_leakage_close_with_pins, "pn" },
	{ "leakage_put_pages_refused", case_leakage_put_pages_refused, "n" },
	{ "leakage_put_pages_persistent_refused", case_leakage_put_pages_persistent_refused, "p" },
	{ NULL, NULL, NULL },
};
