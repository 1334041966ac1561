/* SPDX-License-Identifier: MIT */
/*
 * Hostile threads against honest ones on one gdr_t, for a few seconds (GDR_TEST_STRESS_SECONDS,
 * default 2): workers pin, map, copy and check their own buffers; attackers throw forged, stale
 * and foreign handles at every function and aim copies at the workers' mappings; a racer unmaps a
 * handle that a copier is copying through and at once maps memory of its own at the old address.
 * No wrong result is allowed: every bad handle gets EINVAL and changes nothing, the workers' data
 * is theirs alone, and no copy ever lands in the racer's own memory.
 */
#include <errno.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <time.h>

#include "fake_gpu.h"
#include "gdrapi.h"
#include "harness.h"

#define WORKERS 4
#define ATTACKERS 2
#define BUF (64 * 1024)
#define RACE_BUF (256 * 1024)
#define STALE 64
#define ATTACK_BYTE 0xee

static gdr_t g, foreign_g;
static gdr_mh_t foreign_mh;
static uint8_t *gpu;				/* WORKERS buffers, then the race buffer */
static double deadline;
static _Atomic unsigned long stale[STALE];	/* handles the workers have unpinned */
static _Atomic unsigned long stale_next;
static _Atomic(uint8_t *) worker_map[WORKERS];	/* each worker's current mapping, or NULL */
static _Atomic int wrong;			/* wrong results seen anywhere */
static _Atomic int stop;

static gdr_mh_t race_mh;
static _Atomic(uint8_t *) race_map;
static _Atomic unsigned long race_rounds, race_hits, race_corrupt;

static double now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec + ts.tv_nsec / 1e9;
}

static void wrong_result(const char *what, long detail)
{
	fprintf(stderr, "wrong result: %s (%ld)\n", what, detail);
	atomic_fetch_add(&wrong, 1);
}

static void *worker(void *arg)
{
	long id = (long)arg;
	uint8_t *mine = gpu + id * BUF, out[512], in[512];

	for (unsigned r = 0; !atomic_load(&stop); r++) {
		size_t off = (r * 97) % (BUF - sizeof(out));
		gdr_mh_t mh;
		void *va;
		int ret;

		ret = gdr_pin_buffer(g, (unsigned long)mine, BUF, 0, 0, &mh);
		if (ret) {
			wrong_result("worker pin", ret);
			continue;
		}
		ret = gdr_map(g, mh, &va, BUF);
		if (ret) {
			wrong_result("worker map", ret);
			gdr_unpin_buffer(g, mh);
			continue;
		}
		atomic_store(&worker_map[id], (uint8_t *)va);
		memset(out, (int)(id * 16 + r % 16), sizeof(out));
		if (gdr_copy_to_mapping(mh, (uint8_t *)va + off, out, sizeof(out)) ||
		    gdr_copy_from_mapping(mh, in, (uint8_t *)va + off, sizeof(in)))
			wrong_result("worker copy", id);
		else if (memcmp(in, out, sizeof(in)) || memcmp(mine + off, out, sizeof(out)))
			wrong_result("worker data", id);
		atomic_store(&worker_map[id], NULL);
		ret = r % 2 ? gdr_unmap(g, mh, va, BUF) : 0;
		if (ret || gdr_unpin_buffer(g, mh))
			wrong_result("worker unmap/unpin", ret);
		atomic_store(&stale[atomic_fetch_add(&stale_next, 1) % STALE], mh.h);
	}
	return NULL;
}

/*
 * A value that is not a live handle of g: forged, stale, foreign, or a stale one from an older
 * generation still (a generation bit cleared: never issued again).
 */
static gdr_mh_t bad_handle(unsigned *seed)
{
	unsigned long h;

	switch (rand_r(seed) % 4) {
	case 0:
		h = (unsigned long)rand_r(seed) << 33 ^ (unsigned long)rand_r(seed) << 11 ^
		    (unsigned long)rand_r(seed);
		break;
	case 1:
		h = atomic_load(&stale[rand_r(seed) % STALE]);
		break;
	case 2:
		h = foreign_mh.h;
		break;
	default:
		h = atomic_load(&stale[rand_r(seed) % STALE]) & ~(1UL << (20 + rand_r(seed) % 44));
		break;
	}
	return (gdr_mh_t){ h };
}

static void *attacker(void *arg)
{
	unsigned seed = (unsigned)(uintptr_t)arg;
	uint8_t junk[256], back[256];
	gdr_info_t info;
	int flag;

	memset(junk, ATTACK_BYTE, sizeof(junk));
	while (!atomic_load(&stop)) {
		gdr_mh_t h = bad_handle(&seed);
		uint8_t *target = atomic_load(&worker_map[rand_r(&seed) % WORKERS]);
		void *va = NULL;
		int ret;

		if (!h.h || h.h == race_mh.h)
			continue;
		if ((ret = gdr_get_info(g, h, &info)) != EINVAL)
			wrong_result("get_info of a bad handle", ret);
		if ((ret = gdr_get_callback_flag(g, h, &flag)) != EINVAL)
			wrong_result("callback flag of a bad handle", ret);
		if ((ret = gdr_unpin_buffer(g, h)) != EINVAL)
			wrong_result("unpin of a bad handle", ret);
		if ((ret = gdr_unmap(g, h, target, BUF)) != EINVAL)
			wrong_result("unmap of a bad handle", ret);
		if ((ret = gdr_map(g, h, &va, BUF)) != EINVAL)
			wrong_result("map of a bad handle", ret);
		if (target) {
			if ((ret = gdr_copy_to_mapping(h, target, junk, sizeof(junk))) != EINVAL)
				wrong_result("copy to a worker's mapping with a bad handle", ret);
			memset(back, 0, sizeof(back));
			if ((ret = gdr_copy_from_mapping(h, back, target, sizeof(back))) != EINVAL)
				wrong_result("copy from a worker's mapping with a bad handle", ret);
			for (size_t i = 0; i < sizeof(back); i++)
				if (back[i])
					wrong_result("a refused copy wrote", (long)i);
		}
	}
	return NULL;
}

/* Copies through race_mh, wherever it is mapped now: each copy succeeds or is refused. */
static void *copier(void *arg)
{
	static uint8_t ones[RACE_BUF];

	(void)arg;
	memset(ones, 0xff, sizeof(ones));
	while (!atomic_load(&stop)) {
		uint8_t *map = atomic_load(&race_map);
		int ret;

		if (!map)
			continue;
		ret = gdr_copy_to_mapping(race_mh, map, ones, sizeof(ones));
		if (ret == 0)
			atomic_fetch_add(&race_hits, 1);
		else if (ret != EINVAL)
			wrong_result("racing copy", ret);
	}
	return NULL;
}

/*
 * Map race_mh, let the copier at it, unmap, and put memory of our own at the old address at
 * once: nothing may ever write into it.
 */
static void *racer(void *arg)
{
	(void)arg;
	while (!atomic_load(&stop)) {
		uint8_t *own;
		void *va;
		int ret = gdr_map(g, race_mh, &va, RACE_BUF);

		if (ret) {
			wrong_result("racer map", ret);
			break;
		}
		atomic_store(&race_map, (uint8_t *)va);
		for (volatile int spin = 0; spin < 2000; spin++)
			;
		ret = gdr_unmap(g, race_mh, va, RACE_BUF);
		if (ret) {
			wrong_result("racer unmap", ret);
			break;
		}
		own = mmap(va, RACE_BUF, PROT_READ | PROT_WRITE,
			   MAP_PRIVATE | MAP_ANONYMOUS | MAP_FIXED_NOREPLACE, -1, 0);
		if (own == MAP_FAILED)
			continue;
		for (volatile int spin = 0; spin < 20000; spin++)
			;
		for (size_t i = 0; i < RACE_BUF; i += 64)
			if (own[i]) {
				atomic_fetch_add(&race_corrupt, 1);
				break;
			}
		atomic_fetch_add(&race_rounds, 1);
		munmap(own, RACE_BUF);
	}
	return NULL;
}

int main(void)
{
	const char *secs = getenv("GDR_TEST_STRESS_SECONDS");
	pthread_t t[WORKERS + ATTACKERS + 2];
	int n = 0;

	setenv("GDRCOPY_BACKEND", "test", 1);
	gpu = fake_gpu_alloc(WORKERS * BUF + RACE_BUF);
	g = gdr_open();
	foreign_g = gdr_open();
	if (!gpu || !g || !foreign_g) {
		fprintf(stderr, "setup failed\n");
		return TEST_FAIL;
	}
	EXPECT_ERR(gdr_pin_buffer(foreign_g, (unsigned long)gpu, BUF, 0, 0, &foreign_mh), 0);
	EXPECT_ERR(gdr_pin_buffer(g, (unsigned long)(gpu + WORKERS * BUF), RACE_BUF, 0, 0,
				 &race_mh), 0);
	deadline = now() + (secs ? atof(secs) : 2.0);
	for (long i = 0; i < WORKERS; i++)
		EXPECT(pthread_create(&t[n++], NULL, worker, (void *)i) == 0);
	for (long i = 0; i < ATTACKERS; i++)
		EXPECT(pthread_create(&t[n++], NULL, attacker, (void *)(i + 1)) == 0);
	EXPECT(pthread_create(&t[n++], NULL, copier, NULL) == 0);
	EXPECT(pthread_create(&t[n++], NULL, racer, NULL) == 0);
	while (now() < deadline)
		nanosleep(&(struct timespec){ .tv_nsec = 10000000 }, NULL);
	atomic_store(&stop, 1);
	for (int i = 0; i < n; i++)
		pthread_join(t[i], NULL);

	printf("%lu racing rounds, %lu copies landed, %lu rounds with a copy in the racer's memory\n",
	       atomic_load(&race_rounds), atomic_load(&race_hits), atomic_load(&race_corrupt));
	EXPECT(atomic_load(&wrong) == 0);
	EXPECT(atomic_load(&race_corrupt) == 0);
	EXPECT(atomic_load(&race_rounds) > 0);
	EXPECT(fake_backend_pins == 2);
	EXPECT_ERR(gdr_unpin_buffer(g, race_mh), 0);
	EXPECT_ERR(gdr_close(g), 0);
	EXPECT_ERR(gdr_close(foreign_g), 0);
	EXPECT(fake_backend_pins == 0);
	fake_gpu_free(gpu);
	return test_status();
}
