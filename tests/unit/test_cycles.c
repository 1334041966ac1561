/* SPDX-License-Identifier: MIT */
/*
 * gdr_open/gdr_close cycles with pins and mappings left for gdr_close to release, and short-lived
 * threads that copy (each registers itself with the library at its first copy): descriptors and
 * threads come back exactly, and resident memory stays flat, over 2000 cycles.
 */
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "fake_gpu.h"
#include "gdrapi.h"
#include "harness.h"

#define WARMUP 200
#define CYCLES 2000
/* Allocator noise; a leak of even 512 bytes a cycle would show as 1000 KiB. */
#define RSS_SLACK_KIB 512

struct copy_job {
	gdr_mh_t mh;
	void *va;
	int ret;
};

static void *copy_thread(void *arg)
{
	struct copy_job *j = arg;
	uint64_t v = 0x0123456789abcdefULL;

	j->ret = gdr_copy_to_mapping(j->mh, j->va, &v, sizeof(v));
	return NULL;
}

/* One cycle; 0 or the first failing call's errno. */
static int cycle(uint8_t *gpu, int i)
{
	gdr_t g = gdr_open();
	struct copy_job job;
	gdr_mh_t a, b;
	void *va;
	pthread_t t;
	int ret;

	if (!g)
		return -1;
	ret = gdr_pin_buffer(g, (unsigned long)gpu, 65536, 0, 0, &a);
	if (!ret)
		ret = gdr_pin_buffer(g, (unsigned long)gpu + 65536, 65536, 0, 0, &b);
	if (!ret)
		ret = gdr_map(g, a, &va, 65536);
	if (!ret && i % 10 == 0) {
		job = (struct copy_job){ .mh = a, .va = va, .ret = -1 };
		ret = pthread_create(&t, NULL, copy_thread, &job);
		if (!ret) {
			pthread_join(t, NULL);
			ret = job.ret;
		}
	}
	if (!ret)
		ret = gdr_unpin_buffer(g, b);
	/* a stays pinned and mapped: gdr_close releases it. */
	if (gdr_close(g) && !ret)
		ret = -2;
	return ret;
}

int main(void)
{
	struct test_usage before, after;
	uint8_t *gpu;
	int ret = 0;

	setenv("GDRCOPY_BACKEND", "test", 1);
	gpu = fake_gpu_alloc(2 * 65536);
	if (!gpu) {
		fprintf(stderr, "setup failed\n");
		return TEST_FAIL;
	}
	for (int i = 0; i < WARMUP && !ret; i++)
		ret = cycle(gpu, i);
	test_usage(&before);
	for (int i = 0; i < CYCLES && !ret; i++)
		ret = cycle(gpu, i);
	test_usage(&after);
	EXPECT_ERR(ret, 0);
	printf("%d cycles: fds %d -> %d, threads %d -> %d, RSS %ld -> %ld KiB\n", CYCLES,
	       before.fds, after.fds, before.threads, after.threads, before.rss_kib,
	       after.rss_kib);
	EXPECT(after.fds == before.fds);
	if (test_threads_meaningful())
		EXPECT(after.threads == before.threads);
	else
		printf("threads not compared: the emulator's own count\n");
	if (test_rss_meaningful())
		EXPECT(before.rss_kib > 0 && after.rss_kib - before.rss_kib <= RSS_SLACK_KIB);
	else
		printf("RSS not compared: a sanitizer or an emulator holds memory of its own\n");
	EXPECT(fake_backend_pins == 0);
	fake_gpu_free(gpu);
	return test_status();
}
