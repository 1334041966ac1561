/* SPDX-License-Identifier: MIT */
/*
 * The copies' announcements (src/inflight.h), through the public copy calls on the test
 * backend: a thread's first copy makes its record; every later copy, whatever it returns
 * (copied, stale handle, range outside the mapping, no host buffer, nothing to copy), leaves the
 * record's seq even and two further on, so gdr_unmap never waits for a copy that has returned;
 * and a copy made while the thread is inside one (a signal handler's: seq odd) still copies and
 * checks, and leaves seq alone for the copy it interrupted. The flat path's gate
 * (gdr_handle_fast_type) is open only while every mapping is write-combined; copies are right on
 * either side of it, and where copies fence themselves.
 */
#include <errno.h>
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "fake_gpu.h"
#include "gdrapi.h"
#include "handle.h"
#include "harness.h"
#include "inflight.h"

#define BUF 65536

static gdr_mh_t mh, stale;
static uint8_t *map;

static unsigned long seq(void)
{
	return atomic_load_explicit(&gdr_inflight_self->seq, memory_order_relaxed);
}

/* One copy in each direction of n bytes at off; both must return want, and copy when 0. */
static void copies(size_t off, size_t n, int want)
{
	uint8_t out[256], in[256];

	for (size_t i = 0; i < sizeof(out); i++)
		out[i] = (uint8_t)(i * 7 + off + n);
	memset(in, 0, sizeof(in));
	EXPECT_ERR(gdr_copy_to_mapping(mh, map + off, out, n), want);
	EXPECT_ERR(gdr_copy_from_mapping(mh, in, map + off, n), want);
	if (!want)
		EXPECT(!memcmp(in, out, n));
}

/* Each outcome of a copy, and how it leaves the record: even and advanced, or untouched. */
static void outcomes(int nested)
{
	uint8_t host[8] = { 0 };
	unsigned long before = seq();
	/* Two calls per outcome, each two further on unless nested. */
	unsigned long step = nested ? 0 : 2;

	copies(0, 8, 0);
	EXPECT(seq() == before + 2 * step);
	copies(13, 200, 0);
	EXPECT(seq() == before + 4 * step);
	copies(BUF - 4, 8, EINVAL);		/* ends outside the mapping */
	EXPECT(seq() == before + 6 * step);
	copies(0, 0, 0);			/* nothing to copy */
	EXPECT(seq() == before + 8 * step);
	EXPECT_ERR(gdr_copy_to_mapping(stale, map, host, 8), EINVAL);
	EXPECT_ERR(gdr_copy_from_mapping(stale, host, map, 8), EINVAL);
	EXPECT_ERR(gdr_copy_to_mapping(mh, map, NULL, 8), EINVAL);
	EXPECT_ERR(gdr_copy_from_mapping(mh, NULL, map, 8), EINVAL);
	EXPECT(seq() == before + 12 * step);
	EXPECT((seq() & 1) == (unsigned long)nested);
}

/* A thread that has never copied: its first copy makes its record and leaves it. */
static void *first_copy(void *arg)
{
	uint64_t v = 0x0123456789abcdefull;
	int *ok = arg;

	*ok = !gdr_inflight_self && gdr_copy_to_mapping(mh, map + 64, &v, sizeof(v)) == 0 &&
	      gdr_inflight_self && seq() == 2;
	return NULL;
}

static int gate_open(void)
{
	return atomic_load_explicit(&gdr_handle_fast_type, memory_order_relaxed) ==
	       GDR_MAPPING_TYPE_WC;
}

/*
 * The gate follows the process's mappings: open with WC mappings only, closed while a caching
 * mapping exists too. Copies and their announcements are the same either way, and where the
 * kernel has no membarrier and copies fence themselves.
 */
static void flat_path_gate(gdr_t g, uint8_t *gpu2)
{
	int fence = atomic_load_explicit(&gdr_inflight_fence, memory_order_relaxed);
	gdr_mh_t other;
	void *va2;

	EXPECT(gate_open());
	EXPECT_ERR(gdr_pin_buffer(g, (unsigned long)gpu2, BUF, 0, 0, &other), 0);
	EXPECT_ERR(gdr_map_v2(g, other, &va2, BUF, GDR_MAP_FLAG_REQ_CACHE_MAPPING), 0);
	EXPECT(!gate_open());
	outcomes(0);
	EXPECT_ERR(gdr_unmap(g, other, va2, BUF), 0);
	EXPECT(gate_open());
	EXPECT_ERR(gdr_unpin_buffer(g, other), 0);

	atomic_store_explicit(&gdr_inflight_fence, 1, memory_order_relaxed);
	outcomes(0);
	atomic_store_explicit(&gdr_inflight_fence, fence, memory_order_relaxed);
}

int main(void)
{
	pthread_t t;
	void *va;
	uint8_t *gpu, *gpu2;
	gdr_t g;
	int ok = 0;

	setenv("GDRCOPY_BACKEND", "test", 1);
	gpu = fake_gpu_alloc(BUF);
	gpu2 = fake_gpu_alloc(BUF);
	g = gdr_open();
	if (!gpu || !gpu2 || !g) {
		fprintf(stderr, "setup failed\n");
		return TEST_FAIL;
	}
	EXPECT_ERR(gdr_pin_buffer(g, (unsigned long)gpu, BUF, 0, 0, &stale), 0);
	EXPECT_ERR(gdr_unpin_buffer(g, stale), 0);
	EXPECT_ERR(gdr_pin_buffer(g, (unsigned long)gpu, BUF, 0, 0, &mh), 0);
	EXPECT_ERR(gdr_map(g, mh, &va, BUF), 0);
	map = va;

	EXPECT(pthread_create(&t, NULL, first_copy, &ok) == 0 && pthread_join(t, NULL) == 0);
	EXPECT(ok);

	copies(0, 8, 0);
	EXPECT(gdr_inflight_self && !(seq() & 1));
	outcomes(0);
	/* Inside a copy, as a signal handler that interrupted one would be. */
	atomic_store_explicit(&gdr_inflight_self->seq, seq() + 1, memory_order_relaxed);
	outcomes(1);
	atomic_store_explicit(&gdr_inflight_self->seq, seq() + 1, memory_order_relaxed);
	outcomes(0);
	flat_path_gate(g, gpu2);

	EXPECT_ERR(gdr_unmap(g, mh, va, BUF), 0);
	EXPECT_ERR(gdr_unpin_buffer(g, mh), 0);
	EXPECT_ERR(gdr_close(g), 0);
	fake_gpu_free(gpu);
	fake_gpu_free(gpu2);
	return test_status();
}
