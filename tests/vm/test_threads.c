/* SPDX-License-Identifier: MIT */
/*
 * Threads on one gdr_t: the sanity catalogue's basic_child_thread_pins_buffer (pin and map in
 * one thread, use and tear down in another; concurrent pins of one buffer), many threads
 * pinning at once, the free callback racing unpin, map and touches, an unpin racing the
 * PIN that made the handle, and all of these at once with split and moved mappings and forks.
 */
#include <errno.h>
#include <pthread.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <time.h>
#include <sys/wait.h>

#include "vmtest.h"

#define NTHREADS 4

struct shared {
	gdr_t g;
	struct nvp2p_sim_alloc a;
	pthread_barrier_t barrier;
	gdr_mh_t mh[NTHREADS];
	void *map[NTHREADS];
	atomic_int failed;
	char why[NTHREADS][160];
};

#define T_CHECK(s, i, cond, ...)						\
	do {									\
		if (!(cond)) {							\
			snprintf((s)->why[i], sizeof((s)->why[i]), __VA_ARGS__);	\
			atomic_store(&(s)->failed, 1);				\
			return NULL;						\
		}								\
	} while (0)

static int report(struct shared *s)
{
	int i;

	if (!atomic_load(&s->failed))
		return TEST_PASS;
	for (i = 0; i < NTHREADS; i++) {
		if (s->why[i][0])
			vm_log("thread %d: %s", i, s->why[i]);
	}
	return test_fail("a thread failed");
}

static void *pin_and_map(void *arg)
{
	struct shared *s = arg;

	T_CHECK(s, 0, gdr_pin_buffer(s->g, s->a.va, 2 * GPU_PAGE, 0, 0, &s->mh[0]) == 0, "pin");
	T_CHECK(s, 0, gdr_map(s->g, s->mh[0], &s->map[0], 2 * GPU_PAGE) == 0, "map");
	return NULL;
}

static void *use_and_unpin(void *arg)
{
	struct shared *s = arg;
	uint32_t v = 0x7eadbeef, got = 0;

	T_CHECK(s, 1, gdr_copy_to_mapping(s->mh[0], (char *)s->map[0] + GPU_PAGE, &v,
					  sizeof(v)) == 0, "copy");
	T_CHECK(s, 1, vm_sim_read(s->a.va + GPU_PAGE, &got, sizeof(got)) == 0 && got == v,
		"the other thread's mapping wrote %#x", got);
	T_CHECK(s, 1, gdr_unmap(s->g, s->mh[0], s->map[0], 2 * GPU_PAGE) == 0, "unmap");
	T_CHECK(s, 1, gdr_unpin_buffer(s->g, s->mh[0]) == 0, "unpin");
	return NULL;
}

struct racer {
	struct shared *s;
	int i;
};

/* Pin and map the same buffer as the other racers, at the same moment, then write a word. */
static void *pin_same(void *arg)
{
	struct racer *r = arg;
	struct shared *s = r->s;
	uint32_t v = 0x1000 + r->i;

	pthread_barrier_wait(&s->barrier);
	T_CHECK(s, r->i, gdr_pin_buffer(s->g, s->a.va, 2 * GPU_PAGE, 0, 0, &s->mh[r->i]) == 0,
		"concurrent pin");
	T_CHECK(s, r->i, gdr_map(s->g, s->mh[r->i], &s->map[r->i], 2 * GPU_PAGE) == 0,
		"concurrent map");
	T_CHECK(s, r->i, gdr_copy_to_mapping(s->mh[r->i], (char *)s->map[r->i] + 64 * r->i, &v,
					     sizeof(v)) == 0, "copy");
	return NULL;
}

static void *cleanup_all(void *arg)
{
	struct shared *s = arg;
	int i;

	for (i = 0; i < NTHREADS; i++) {
		T_CHECK(s, 0, gdr_unmap(s->g, s->mh[i], s->map[i], 2 * GPU_PAGE) == 0,
			"unmap of thread %d's mapping", i);
		T_CHECK(s, 0, gdr_unpin_buffer(s->g, s->mh[i]) == 0, "unpin of thread %d's pin", i);
	}
	return NULL;
}

static int run_thread(void *(*fn)(void *), void *arg)
{
	pthread_t t;

	CHECK(pthread_create(&t, NULL, fn, arg) == 0, "pthread_create");
	CHECK(pthread_join(t, NULL) == 0, "pthread_join");
	return TEST_PASS;
}

static int case_basic_child_thread_pins_buffer(void)
{
	static struct shared s;
	struct racer r[NTHREADS];
	pthread_t t[NTHREADS];
	uint32_t words[NTHREADS * 16];
	int i, ret;

	s.g = vm_gdr_open();
	CHECK(s.g, "gdr_open");
	CHECK_OK(vm_alloc(2 * GPU_PAGE, 0, &s.a));
	if ((ret = run_thread(pin_and_map, &s)) || (ret = run_thread(use_and_unpin, &s)))
		return ret;
	if ((ret = report(&s)))
		return ret;

	pthread_barrier_init(&s.barrier, NULL, NTHREADS);
	for (i = 0; i < NTHREADS; i++) {
		r[i] = (struct racer){ .s = &s, .i = i };
		CHECK(pthread_create(&t[i], NULL, pin_same, &r[i]) == 0, "pthread_create");
	}
	for (i = 0; i < NTHREADS; i++)
		pthread_join(t[i], NULL);
	if ((ret = report(&s)))
		return ret;
	CHECK_OK(vm_sim_read(s.a.va, words, sizeof(words)));
	for (i = 0; i < NTHREADS; i++)
		CHECK(words[16 * i] == 0x1000u + i, "thread %d's word is %#x", i, words[16 * i]);
	if ((ret = run_thread(cleanup_all, &s)))
		return ret;
	if ((ret = report(&s)))
		return ret;
	CHECK_OK(gdr_close(s.g));
	return TEST_PASS;
}

/* Each thread pins, maps, writes, checks, unmaps and unpins its own page, over and over. */
static void *pin_loop(void *arg)
{
	struct racer *r = arg;
	struct shared *s = r->s;
	uint64_t va = s->a.va + (uint64_t)r->i * GPU_PAGE;
	int it;

	for (it = 0; it < 60; it++) {
		uint32_t v = (uint32_t)(r->i << 16 | it), got = 0;
		gdr_info_t info;
		gdr_mh_t mh;
		void *p;

		T_CHECK(s, r->i, gdr_pin_buffer(s->g, va, GPU_PAGE, 0, 0, &mh) == 0, "pin %d", it);
		T_CHECK(s, r->i, gdr_get_info(s->g, mh, &info) == 0 && info.va == va, "info");
		T_CHECK(s, r->i, gdr_map(s->g, mh, &p, GPU_PAGE) == 0, "map %d", it);
		T_CHECK(s, r->i, gdr_copy_to_mapping(mh, (char *)p + 4 * it, &v, 4) == 0, "copy");
		T_CHECK(s, r->i, vm_sim_read(va + 4 * it, &got, 4) == 0 && got == v,
			"iteration %d: memory holds %#x, want %#x", it, got, v);
		T_CHECK(s, r->i, gdr_unmap(s->g, mh, p, GPU_PAGE) == 0, "unmap %d", it);
		T_CHECK(s, r->i, gdr_unpin_buffer(s->g, mh) == 0, "unpin %d", it);
		/* The handle is stale now, whatever another thread got since. */
		T_CHECK(s, r->i, gdr_get_info(s->g, mh, &info) == EINVAL, "stale handle accepted");
	}
	return NULL;
}

static int case_threads_concurrent_pins(void)
{
	static struct shared s;
	struct racer r[NTHREADS];
	pthread_t t[NTHREADS];
	int i;

	s.g = vm_gdr_open();
	CHECK(s.g, "gdr_open");
	CHECK_OK(vm_alloc(NTHREADS * GPU_PAGE, 0, &s.a));
	for (i = 0; i < NTHREADS; i++) {
		r[i] = (struct racer){ .s = &s, .i = i };
		CHECK(pthread_create(&t[i], NULL, pin_loop, &r[i]) == 0, "pthread_create");
	}
	for (i = 0; i < NTHREADS; i++)
		pthread_join(t[i], NULL);
	CHECK(report(&s) == TEST_PASS, "see above");
	CHECK_OK(gdr_close(s.g));
	return TEST_PASS;
}

#define SLOTS 4
#define RACE_ITERATIONS 250

static _Atomic uint64_t slot_va[SLOTS];
static atomic_int race_done;

/* Pin, map and touch whatever the slots hold, while the freer frees it under our feet. */
static void *race_user(void *arg)
{
	struct racer *r = arg;
	struct shared *s = r->s;
	int it, ret;

	for (it = 0; it < RACE_ITERATIONS; it++) {
		uint64_t va = atomic_load(&slot_va[(it + r->i) % SLOTS]);
		gdr_mh_t mh;
		uint32_t v;
		void *p;

		ret = gdr_pin_buffer(s->g, va, GPU_PAGE, 0, 0, &mh);
		if (ret == EINVAL)
			continue;	/* freed before we pinned it */
		T_CHECK(s, r->i, ret == 0, "pin: %s", test_strerror(ret));
		ret = gdr_map(s->g, mh, &p, GPU_PAGE);
		/* Revoked between pin and map: gdrdrv refuses the map. */
		T_CHECK(s, r->i, ret == 0 || ret == EINVAL || ret == EAGAIN, "map: %s",
			test_strerror(ret));
		if (ret == 0) {
			/* A revoked mapping faults, a live one works: never anything else. */
			vm_try_write32((char *)p + 8 * r->i, 1);
			vm_try_read32(p, &v);
			T_CHECK(s, r->i, gdr_unmap(s->g, mh, p, GPU_PAGE) == 0, "unmap");
		}
		T_CHECK(s, r->i, gdr_unpin_buffer(s->g, mh) == 0, "unpin of a revoked pin failed");
	}
	atomic_fetch_add(&race_done, 1);
	return NULL;
}

/*
 * A freer: until *done reaches until, free the slots' memory in turn (the free callbacks of its
 * pins run) and put an allocation of size bytes in its place.
 */
static void *free_until(struct racer *r, atomic_int *done, int until, size_t size)
{
	struct shared *s = r->s;
	int it = 0;

	while (atomic_load(done) < until) {
		_Atomic uint64_t *slot = &slot_va[it++ % SLOTS];
		struct nvp2p_sim_alloc a;

		T_CHECK(s, r->i, vm_free(atomic_load(slot)) == 0, "free");
		T_CHECK(s, r->i, vm_alloc(size, 0, &a) == 0, "alloc");
		atomic_store(slot, a.va);
	}
	return NULL;
}

static void *race_freer(void *arg)
{
	return free_until(arg, &race_done, NTHREADS - 1, GPU_PAGE);
}

static int case_threads_free_race(void)
{
	static struct shared s;
	struct racer r[NTHREADS];
	pthread_t t[NTHREADS];
	int i;

	s.g = vm_gdr_open();
	CHECK(s.g, "gdr_open");
	for (i = 0; i < SLOTS; i++) {
		struct nvp2p_sim_alloc a;

		CHECK_OK(vm_alloc(GPU_PAGE, 0, &a));
		slot_va[i] = a.va;
	}
	for (i = 0; i < NTHREADS; i++) {
		r[i] = (struct racer){ .s = &s, .i = i };
		CHECK(pthread_create(&t[i], NULL, i ? race_user : race_freer, &r[i]) == 0,
		      "pthread_create");
	}
	for (i = 0; i < NTHREADS; i++)
		pthread_join(t[i], NULL);
	CHECK(report(&s) == TEST_PASS, "see above");
	CHECK_OK(gdr_close(s.g));
	return TEST_PASS;
}

/*
 * Handles come in order, so another thread of the owner can unpin a pin's handle before the PIN
 * ioctl that made it returns. The ioctl must not read the region after publishing it: it read
 * the handle it returned from freed memory (slub's poison, 0x6b6b..., once in about 3000 pins
 * here, and in most pins with gdrdrv's info log on, which logs in that window).
 */
#define UNPIN_RACE_PINS 3000
#define UNPIN_RACE_LOGGED_PINS 300

static _Atomic uint64_t unpin_race_next;
static atomic_int unpin_race_stop;
static atomic_long unpin_race_taken;

static void *unpin_racer(void *arg)
{
	int fd = *(int *)arg;

	while (!atomic_load(&unpin_race_stop))
		if (vm_raw_unpin(fd, atomic_load(&unpin_race_next)) == 0)
			atomic_fetch_add(&unpin_race_taken, 1);
	return NULL;
}

/* Write v to a sysfs or procfs file; 0 or an errno. */
static int write_knob(const char *path, const char *v)
{
	FILE *f = fopen(path, "w");
	int ok;

	if (!f)
		return errno;
	ok = fputs(v, f) >= 0;
	return fclose(f) == 0 && ok ? 0 : EIO;
}

/* pins pins of va, each unpinned after (unless the racer was first): how many PINs lied. */
static long unpin_race_round(int fd, uint64_t va, int pins, uint64_t *next)
{
	uint64_t step = GPU_PAGE / CPU_PAGE ? GPU_PAGE / CPU_PAGE : 1;
	long wrong = 0;

	for (int i = 0; i < pins; i++) {
		uint64_t h = ~0ULL;

		atomic_store(&unpin_race_next, *next);
		if (vm_raw_pin(fd, va, GPU_PAGE, 0, &h))
			return -1;
		if (h != *next && !wrong++)
			vm_log("PIN returned handle %#llx, not %#llx",
			       (unsigned long long)h, (unsigned long long)*next);
		vm_raw_unpin(fd, *next);
		*next += step;
	}
	return wrong;
}

static int case_threads_unpin_racing_pin(void)
{
	const char *info = "/sys/module/gdrdrv/parameters/info_enabled";
	struct nvp2p_sim_alloc a;
	uint64_t next = 0;
	long wrong, wrong_logged = 0;
	pthread_t t;
	int fd;

	CHECK_OK(vm_alloc(GPU_PAGE, 0, &a));
	fd = vm_gdrdrv_open();
	CHECK(fd >= 0, "open");
	atomic_store(&unpin_race_stop, 0);
	CHECK(pthread_create(&t, NULL, unpin_racer, &fd) == 0, "pthread_create");
	wrong = unpin_race_round(fd, a.va, UNPIN_RACE_PINS, &next);
	if (wrong >= 0 && write_knob(info, "1\n") == 0) {
		write_knob("/proc/sys/kernel/printk", "8\n");
		wrong_logged = unpin_race_round(fd, a.va, UNPIN_RACE_LOGGED_PINS, &next);
		write_knob("/proc/sys/kernel/printk", "6\n");
		write_knob(info, "0\n");
	}
	atomic_store(&unpin_race_stop, 1);
	pthread_join(t, NULL);
	close(fd);
	CHECK_OK(vm_free(a.va));
	vm_log("the racer unpinned %ld pins first", atomic_load(&unpin_race_taken));
	CHECK(wrong >= 0 && wrong_logged >= 0, "a PIN failed");
	CHECK(!wrong && !wrong_logged, "PIN returned %ld wrong handles (%ld with the info log on)",
	      wrong + wrong_logged, wrong_logged);
	return TEST_PASS;
}

/*
 * Everything at once on one file: pins mapped, split by munmap of a middle page, moved by
 * mremap, touched and torn down in either order, while another thread frees the memory (the
 * free callback, non-persistent), another unpins and queries handles it guesses, and another
 * forks children that close the inherited fd. Only the kernel's log and the sim's counters
 * judge: a touch may work or fault, an ioctl may succeed or say EINVAL, but a store that lands
 * in memory after its free is a misuse the sim's quarantine reports with the bytes stored,
 * which say who stored them (0xca: a mapper's first page, 0xcb: its moved piece; then the
 * mapper and the iteration). Non-persistent pins
 * only: the race it was written for (an unpin's put_pages meeting a pin made after the callback
 * freed its table) has no callback with persistent ones, and each run adds a minute or more to
 * a VM of the loaded CI machine, whose limit is 270 s.
 *
 * The mappers stop after CHAOS_ITERATIONS or CHAOS_SECONDS, whichever comes first: about 5 s
 * of an idle machine's VM, but three VMs on two loaded CPUs took 40-50 s, and once a CI run's
 * went past the case's 60 s limit. The case says how many iterations it ran.
 */
#define CHAOS_MAPPERS 2
#define CHAOS_ITERATIONS 1500
#define CHAOS_SECONDS 25

static _Atomic uint64_t chaos_next_handle;
static atomic_int chaos_done;
static atomic_int chaos_iterations;
static time_t chaos_deadline;

static bool chaos_time_left(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec < chaos_deadline;
}

static void *chaos_mapper(void *arg)
{
	struct racer *r = arg;
	int fd = vm_find_gdrdrv_fd();
	size_t len = 2 * GPU_PAGE, cpu = CPU_PAGE;
	int it;

	for (it = 0; it < CHAOS_ITERATIONS && chaos_time_left(); it++) {
		uint64_t va = atomic_load(&slot_va[(it + r->i) % SLOTS]), h;
		char *p, *q = NULL, *dst;
		uint32_t v;
		int err;

		if (vm_raw_pin(fd, va, len, 0, &h))
			continue;
		atomic_store(&chaos_next_handle, h + len / cpu);
		p = vm_raw_map(fd, h, len, &err);
		if (!p) {
			vm_raw_unpin(fd, h);
			continue;
		}
		vm_try_write32(p + 8 * r->i, 0xca000000u | (uint32_t)r->i << 16 | (uint32_t)it);
		vm_try_read32(p + len - cpu, &v);
		if (len / cpu >= 4) {
			/* Split: drop a middle page; move the tail piece elsewhere. */
			munmap(p + cpu, cpu);
			dst = mmap(NULL, len, PROT_NONE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
			if (dst != MAP_FAILED) {
				q = mremap(p + len / 2, len / 2, len / 2,
					   MREMAP_MAYMOVE | MREMAP_FIXED, dst + cpu);
				if (q == MAP_FAILED)
					q = NULL;
				munmap(dst, cpu);
				munmap(dst + cpu + len / 2, len / 2 - cpu);
				if (!q)
					munmap(dst + cpu, len / 2);
			}
			if (q) {
				vm_try_write32(q, 0xcb000000u | (uint32_t)r->i << 16 | (uint32_t)it);
				vm_try_read32(q + len / 2 - 4, &v);
			}
			vm_try_read32(p, &v);
		}
		if (it & 1) {
			vm_raw_unpin(fd, h);
			vm_try_read32(p, &v);
			if (q)
				vm_try_read32(q, &v);
		}
		munmap(p, q ? len / 2 : len);
		if (q)
			munmap(q, len / 2);
		vm_raw_unpin(fd, h);
	}
	atomic_fetch_add(&chaos_iterations, it);
	atomic_fetch_add(&chaos_done, 1);
	return NULL;
}

static void *chaos_meddler(void *arg)
{
	struct racer *r = arg;
	int fd = vm_find_gdrdrv_fd();
	unsigned int n = 0;

	(void)r;
	while (atomic_load(&chaos_done) < CHAOS_MAPPERS) {
		uint64_t h = atomic_load(&chaos_next_handle) - 2 * GPU_PAGE / CPU_PAGE;
		struct gdrdrv_get_info_v2_params info;
		uint32_t flag;

		vm_raw_info(fd, h, &info);
		vm_raw_cb_flag(fd, h, &flag);
		if (!(++n % 7))
			vm_raw_unpin(fd, h);
		if (!(n % 50)) {
			pid_t pid = fork();

			if (pid == 0) {
				int err;

				vm_raw_map(fd, h, GPU_PAGE, &err);
				close(fd);
				_exit(0);
			}
			if (pid > 0)
				waitpid(pid, NULL, 0);
		}
	}
	return NULL;
}

static void *chaos_freer(void *arg)
{
	return free_until(arg, &chaos_done, CHAOS_MAPPERS, 2 * GPU_PAGE);
}

static int case_threads_chaos(void)
{
	static struct shared s;
	struct racer r[NTHREADS];
	pthread_t t[NTHREADS];
	struct timespec start;
	int i;

	s.g = vm_gdr_open();
	CHECK(s.g, "gdr_open");
	CHECK(vm_find_gdrdrv_fd() >= 0, "no /dev/gdrdrv fd");
	atomic_store(&chaos_done, 0);
	atomic_store(&chaos_iterations, 0);
	clock_gettime(CLOCK_MONOTONIC, &start);
	chaos_deadline = start.tv_sec + CHAOS_SECONDS;
	for (i = 0; i < SLOTS; i++) {
		struct nvp2p_sim_alloc a;

		CHECK_OK(vm_alloc(2 * GPU_PAGE, 0, &a));
		slot_va[i] = a.va;
	}
	for (i = 0; i < NTHREADS; i++) {
		r[i] = (struct racer){ .s = &s, .i = i };
		CHECK(pthread_create(&t[i], NULL, i < CHAOS_MAPPERS ? chaos_mapper :
				     i == CHAOS_MAPPERS ? chaos_meddler : chaos_freer, &r[i]) == 0,
		      "pthread_create");
	}
	for (i = 0; i < NTHREADS; i++)
		pthread_join(t[i], NULL);
	printf("the mappers ran %d of %d iterations\n", atomic_load(&chaos_iterations),
	       CHAOS_MAPPERS * CHAOS_ITERATIONS);
	CHECK(report(&s) == TEST_PASS, "see above");
	CHECK_OK(gdr_close(s.g));
	for (i = 0; i < SLOTS; i++)
		CHECK_OK(vm_free(slot_va[i]));
	return TEST_PASS;
}

const struct vm_case vm_cases[] = {
	{ "basic_child_thread_pins_buffer", case_basic_child_thread_pins_buffer, "pn" },
	{ "threads_concurrent_pins", case_threads_concurrent_pins, "pn" },
	{ "threads_free_race", case_threads_free_race, "pn" },
	{ "threads_unpin_racing_pin", case_threads_unpin_racing_pin, "pn" },
	{ "threads_chaos", case_threads_chaos, "n" },
	{ NULL, NULL, NULL },
};
