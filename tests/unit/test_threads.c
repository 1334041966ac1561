/* SPDX-License-Identifier: MIT */
/*
 * Thread stress on one gdr_t: threads pin, map, copy, unmap and unpin their own buffers while
 * others hammer shared handles and copy through one shared mapping. Checks data and that every
 * pin is released; ASan/TSan-style bugs show up in the sanitizer build.
 */
#include <errno.h>
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "fake_gpu.h"
#include "gdrapi.h"
#include "harness.h"

#define THREADS 8
#define ROUNDS 300
#define BUF (64 * 1024)

static gdr_t g;
static uint8_t *gpu;		/* THREADS private buffers, then one shared */
static gdr_mh_t shared_mh;
static uint8_t *shared_map;
static int errors;

static void fail(const char *what, int ret)
{
	fprintf(stderr, "%s: %s\n", what, strerror(ret));
	__atomic_add_fetch(&errors, 1, __ATOMIC_RELAXED);
}

static void *worker(void *arg)
{
	long id = (long)arg;
	uint8_t *mine = gpu + id * BUF;
	uint8_t out[256], in[256];

	for (int r = 0; r < ROUNDS; r++) {
		gdr_mh_t mh;
		void *va;
		int ret;

		ret = gdr_pin_buffer(g, (unsigned long)mine, BUF, 0, 0, &mh);
		if (ret) {
			fail("pin", ret);
			continue;
		}
		ret = gdr_map(g, mh, &va, BUF);
		if (ret) {
			fail("map", ret);
			gdr_unpin_buffer(g, mh);
			continue;
		}
		memset(out, (int)(id * 31 + r), sizeof(out));
		if ((ret = gdr_copy_to_mapping(mh, (uint8_t *)va + r, out, sizeof(out))))
			fail("copy_to", ret);
		if ((ret = gdr_copy_from_mapping(mh, in, (uint8_t *)va + r, sizeof(in))))
			fail("copy_from", ret);
		if (memcmp(in, out, sizeof(in)) || memcmp(mine + r, out, sizeof(out)))
			fail("data", EIO);
		/* The shared mapping is used concurrently by every thread; disjoint slots. */
		if ((ret = gdr_copy_to_mapping(shared_mh, shared_map + id * 8, &r, sizeof(r))))
			fail("shared copy_to", ret);
		if (r % 3 == 0) {
			ret = gdr_unpin_buffer(g, mh);	/* unpin while mapped */
		} else {
			ret = gdr_unmap(g, mh, va, BUF);
			if (!ret)
				ret = gdr_unpin_buffer(g, mh);
		}
		if (ret)
			fail("unmap/unpin", ret);
		/* The retired handle is dead for everyone. */
		if (gdr_unpin_buffer(g, mh) != EINVAL)
			fail("stale unpin", EINVAL);
	}
	return NULL;
}

int main(void)
{
	pthread_t t[THREADS];
	gdr_info_t info;
	void *va;

	setenv("GDRCOPY_BACKEND", "test", 1);
	gpu = fake_gpu_alloc((THREADS + 1) * BUF);
	g = gdr_open();
	if (!gpu || !g) {
		fprintf(stderr, "setup failed\n");
		return TEST_FAIL;
	}
	EXPECT_ERR(gdr_pin_buffer(g, (unsigned long)(gpu + THREADS * BUF), BUF, 0, 0, &shared_mh), 0);
	EXPECT_ERR(gdr_map(g, shared_mh, &va, BUF), 0);
	shared_map = va;
	for (long i = 0; i < THREADS; i++)
		EXPECT(pthread_create(&t[i], NULL, worker, (void *)i) == 0);
	for (int i = 0; i < THREADS; i++)
		pthread_join(t[i], NULL);
	EXPECT(errors == 0);
	for (int i = 0; i < THREADS; i++) {
		int last;

		memcpy(&last, gpu + THREADS * BUF + i * 8, sizeof(last));
		EXPECT(last == ROUNDS - 1);
	}
	EXPECT_ERR(gdr_get_info(g, shared_mh, &info), 0);
	EXPECT(info.mapped);
	EXPECT(fake_backend_pins == 1);
	EXPECT_ERR(gdr_close(g), 0);
	EXPECT(fake_backend_pins == 0);
	fake_gpu_free(gpu);
	return test_status();
}
