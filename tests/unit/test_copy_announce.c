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
#include <linux/membarrier.h>
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <unistd.h>

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

/* The seq of the record a thread's first copy has just claimed (a new one, or one given back). */
static __thread unsigned long claimed_seq;

static void note_claim(struct gdr_inflight *r)
{
	claimed_seq = atomic_load_explicit(&r->seq, memory_order_relaxed);
}

/* A thread that has never copied: its first copy takes a record and leaves it two further on. */
static void *first_copy(void *arg)
{
	uint64_t v = 0x0123456789abcdefull;
	int *ok = arg;

	gdr_inflight_test_claimed = note_claim;
	*ok = !gdr_inflight_self && gdr_copy_to_mapping(mh, map + 64, &v, sizeof(v)) == 0 &&
	      gdr_inflight_self && !(claimed_seq & 1) && seq() == claimed_seq + 2;
	gdr_inflight_test_claimed = NULL;
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

/* A copy before any gdr_open (handle values are checked, so any will do); its thread's record. */
static void *copy_before_open(void *arg)
{
	uint64_t v = 0;

	EXPECT_ERR(gdr_copy_to_mapping((gdr_mh_t){ 0 }, &v, &v, sizeof(v)), EINVAL);
	*(struct gdr_inflight **)arg = gdr_inflight_self;
	return NULL;
}

/*
 * A thread that copied before the process's first gdr_open gives its record back at exit, as
 * any other: the hooks are set at load. (Before, they came with gdr_open: such a record stayed
 * in use for good, and a fork child of that moment kept it odd, so its unmaps waited for ever.)
 */
static void record_before_open(void)
{
	struct gdr_inflight *r = NULL;
	pthread_t t;

	EXPECT(!pthread_create(&t, NULL, copy_before_open, &r) && !pthread_join(t, NULL));
	EXPECT(r && !atomic_load_explicit(&r->in_use, memory_order_acquire),
	       "the record of a thread that copied before gdr_open and exited is still in use");
}

static pthread_barrier_t holding;

/* A thread with a record, alive until released: an unmap must order its copies. */
static void *hold_record(void *arg)
{
	uint64_t v = 0;

	(void)arg;
	gdr_copy_from_mapping(mh, &v, map, sizeof(v));
	pthread_barrier_wait(&holding);
	pthread_barrier_wait(&holding);
	return NULL;
}

/*
 * membarrier(PRIVATE_EXPEDITED), which worked at gdr_open, fails at an unmap while another thread
 * has a record: copies fence themselves from then on, the unmap orders those under way with
 * membarrier(GLOBAL), or a pause where that fails too, and says so. (Before, the unmap fenced
 * only itself, and a copy's announcement could sit in its CPU's store buffer while it read the
 * old mapping.)
 */
static void membarrier_fails(gdr_t g, uint8_t *gpu2, int fails, const char *how)
{
	const char *log;
	gdr_mh_t other;
	pthread_t t;
	void *va2;

	if (pthread_barrier_init(&holding, NULL, 2) ||
	    pthread_create(&t, NULL, hold_record, NULL)) {
		EXPECT(0, "no thread to hold a record");
		return;
	}
	atomic_store_explicit(&gdr_inflight_fence, 0, memory_order_relaxed);
	pthread_barrier_wait(&holding);
	EXPECT_ERR(gdr_pin_buffer(g, (unsigned long)gpu2, BUF, 0, 0, &other), 0);
	EXPECT_ERR(gdr_map(g, other, &va2, BUF), 0);
	gdr_inflight_test_membarrier_fails = fails;
	test_capture_begin();
	EXPECT_ERR(gdr_unmap(g, other, va2, BUF), 0);
	log = test_capture_end();
	gdr_inflight_test_membarrier_fails = 0;
	EXPECT(atomic_load_explicit(&gdr_inflight_fence, memory_order_relaxed) == 1,
	       "copies do not fence after membarrier failed (%s)", how);
	EXPECT(strstr(log, "WARN") && strstr(log, "membarrier(PRIVATE_EXPEDITED) failed") &&
	       strstr(log, how), "the unmap does not warn that it ordered copies with %s: %s",
	       how, log);
	EXPECT_ERR(gdr_unpin_buffer(g, other), 0);
	pthread_barrier_wait(&holding);
	pthread_join(t, NULL);
	pthread_barrier_destroy(&holding);
}

int main(void)
{
	pthread_t t;
	void *va;
	uint8_t *gpu, *gpu2;
	gdr_t g;
	int ok = 0, fence;

	/* Warnings on stderr, for membarrier_fails: the library reads this at its first line. */
	setenv("GDRCOPY_ENABLE_LOGGING", "1", 1);
	setenv("GDRCOPY_LOG_LEVEL", "3", 1);
	record_before_open();
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
	fence = atomic_load_explicit(&gdr_inflight_fence, memory_order_relaxed);
	membarrier_fails(g, gpu2, MEMBARRIER_CMD_PRIVATE_EXPEDITED | MEMBARRIER_CMD_GLOBAL,
			 "a 1 ms pause");
	if (syscall(__NR_membarrier, MEMBARRIER_CMD_QUERY, 0, 0) > 0 &&
	    (syscall(__NR_membarrier, MEMBARRIER_CMD_QUERY, 0, 0) & MEMBARRIER_CMD_GLOBAL))
		membarrier_fails(g, gpu2, MEMBARRIER_CMD_PRIVATE_EXPEDITED, "membarrier(GLOBAL)");
	atomic_store_explicit(&gdr_inflight_fence, fence, memory_order_relaxed);

	EXPECT_ERR(gdr_unmap(g, mh, va, BUF), 0);
	EXPECT_ERR(gdr_unpin_buffer(g, mh), 0);
	EXPECT_ERR(gdr_close(g), 0);
	fake_gpu_free(gpu);
	fake_gpu_free(gpu2);
	return test_status();
}
