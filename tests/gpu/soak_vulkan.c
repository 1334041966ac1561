/* SPDX-License-Identifier: MIT */
/*
 * Tier 3 soak and fork cases of the vulkan backend on a real NVIDIA GPU (issue: the library
 * survives fork, hostile drivers and handle wrap).
 *   soak: GDR_SOAK_THREADS (16) threads x GDR_SOAK_CYCLES (10000) pin/map/copy/unmap/unpin
 *         cycles on one gdr_t, each thread on its own VMM buffer, every copy checked by a copy
 *         back and, every 100th cycle, by cuMemcpyDtoH; prints the cycle rate.
 *   fork_inherited: a fork child gets EINVAL for every call on the parent's gdr_t and handle,
 *         writes nothing, and gdr_close of it returns at once (tests/harness/fork_check.c); its own
 *         gdr_open either works end to end or fails saying that CUDA does not survive fork.
 *   fork_before_cuda: a child forked before this process used CUDA opens, pins, maps and copies
 *         on its own (what gdr_open(3) tells fork users to do).
 * Skips (77) where there is no driver, GPU or Vulkan loader.
 */
#include <errno.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "fork_check.h"
#include "gdrapi.h"
#include "gdrapi_ext.h"
#include "gpucommon.h"
#include "harness.h"

#define MiB (1UL << 20)
#define SLICE 65536

static gdr_t g;
static CUcontext ctx;
static int fork_before_cuda_status = -1;
static char fork_before_cuda_why[512];

struct soak_worker {
	int id, cycles;
	struct gpu_vmm m;
	int failures;
	char why[256];
};

static void fail(struct soak_worker *w, int cycle, const char *what, int ret)
{
	if (!w->failures++)
		snprintf(w->why, sizeof(w->why), "thread %d cycle %d: %s (%d)", w->id, cycle, what,
			 ret);
}

static void *soak_main(void *arg)
{
	struct soak_worker *w = arg;
	uint32_t out[1024], in[1024], dev[1024];

	if (cu->cuCtxSetCurrent(ctx) != CUDA_SUCCESS) {
		fail(w, 0, "cuCtxSetCurrent", 0);
		return NULL;
	}
	for (int c = 0; c < w->cycles; c++) {
		unsigned long addr = w->m.ptr + (size_t)(c % 32) * SLICE;
		size_t off = (size_t)(c * 64) % (SLICE - sizeof(out));
		uint8_t *map;
		gdr_mh_t mh;
		void *va;
		int ret;

		for (size_t i = 0; i < 1024; i++)
			out[i] = gpu_pattern((uint32_t)(w->id << 24 | c), i);
		ret = gdr_pin_buffer_v2(g, addr, SLICE, 0, &mh);
		if (ret) {
			fail(w, c, "pin", ret);
			continue;
		}
		ret = gdr_map(g, mh, &va, SLICE);
		if (ret) {
			fail(w, c, "map", ret);
			gdr_unpin_buffer(g, mh);
			continue;
		}
		map = va;
		ret = gdr_copy_to_mapping(mh, map + off, out, sizeof(out));
		if (!ret)
			ret = gdr_copy_from_mapping(mh, in, map + off, sizeof(in));
		if (ret)
			fail(w, c, "copy", ret);
		else if (memcmp(in, out, sizeof(in)))
			fail(w, c, "data read back through the mapping differs", 0);
		if (c % 100 == 0 && (cu->cuMemcpyDtoH(dev, addr + off, sizeof(dev)) != CUDA_SUCCESS ||
				     memcmp(dev, out, sizeof(dev))))
			fail(w, c, "cuMemcpyDtoH does not see the data", 0);
		ret = gdr_unmap(g, mh, va, SLICE);
		if (ret)
			fail(w, c, "unmap", ret);
		ret = gdr_unpin_buffer(g, mh);
		if (ret)
			fail(w, c, "unpin", ret);
	}
	return NULL;
}

static int env_int(const char *name, int def)
{
	const char *v = getenv(name);

	return v && atoi(v) > 0 ? atoi(v) : def;
}

static int case_soak(void)
{
	int threads = env_int("GDR_SOAK_THREADS", 16), cycles = env_int("GDR_SOAK_CYCLES", 10000);
	struct soak_worker *w = calloc((size_t)threads, sizeof(*w));
	pthread_t *t = calloc((size_t)threads, sizeof(*t));
	int fds, failures = 0, ret = 0;
	const char *first = NULL;
	double t0, secs;
	gdr_mh_t mh;

	CHECK(w && t);
	for (int i = 0; i < threads; i++) {
		w[i].id = i;
		w[i].cycles = cycles;
		CHECK_EQ(gpu_vmm_alloc(&w[i].m, 32 * SLICE, CU_MEM_HANDLE_TYPE_POSIX_FILE_DESCRIPTOR), CUDA_SUCCESS);
	}
	/*
	 * The first pin of the process creates the Vulkan device, whose descriptors are kept for the
	 * process's life: count after it, so that only what the cycles leave behind shows.
	 */
	CHECK_EQ(gdr_pin_buffer_v2(g, w[0].m.ptr, SLICE, 0, &mh), 0);
	CHECK_EQ(gdr_unpin_buffer(g, mh), 0);
	fds = test_fd_count();
	t0 = gpu_now_ns();
	for (int i = 0; i < threads; i++)
		CHECK_EQ(pthread_create(&t[i], NULL, soak_main, &w[i]), 0);
	for (int i = 0; i < threads; i++)
		pthread_join(t[i], NULL);
	secs = (gpu_now_ns() - t0) / 1e9;
	for (int i = 0; i < threads; i++) {
		failures += w[i].failures;
		if (w[i].failures && !first)
			first = w[i].why;
		gpu_vmm_free(&w[i].m);
	}
	printf("# soak: %d threads x %d cycles in %.1f s: %.0f cycles/s, %.1f us per cycle per "
	       "thread, %d failures\n", threads, cycles, secs, threads * (double)cycles / secs,
	       secs * 1e6 / cycles, failures);
	if (failures)
		ret = test_fail("%d failed steps; first: %s", failures, first);
	else if (test_fd_count() != fds)
		ret = test_fail("%d fds before the soak, %d after", fds, test_fd_count());
	free(w);
	free(t);
	return ret;
}

/*
 * In the fork child: CUDA does not survive fork, so with NVIDIA's driver a gdr_t of the child's
 * own is expected to fail, saying so; if it opens, it must work end to end.
 */
static int child_own_gdr(void)
{
	struct gpu_vmm m;
	const char *log;
	gdr_t own;
	void *va;
	gdr_mh_t mh;
	uint64_t v = 0x1122334455667788ULL, back = 0;

	test_capture_begin();
	own = gdr_open();
	log = test_capture_end();
	if (!own) {
		CHECK(strstr(log, "forked from one that had initialised CUDA"),
		      "gdr_open in the child failed without saying why: %s", log);
		return TEST_PASS;
	}
	CHECK(!gpu_vmm_alloc(&m, 2 * MiB, CU_MEM_HANDLE_TYPE_POSIX_FILE_DESCRIPTOR) &&
	      !gdr_pin_buffer_v2(own, m.ptr, SLICE, 0, &mh) && !gdr_map(own, mh, &va, SLICE) &&
	      !gdr_copy_to_mapping(mh, va, &v, 8) && !gdr_copy_from_mapping(mh, &back, va, 8) &&
	      back == v && !gdr_unmap(own, mh, va, SLICE) && !gdr_unpin_buffer(own, mh) &&
	      !gdr_close(own), "the child's gdr_open worked but its gdr_t does not");
	return TEST_PASS;
}

static int case_fork_inherited(void)
{
	struct fork_check fc;
	struct gpu_vmm m;
	uint64_t v = 0xabcdef, back = 0;
	gdr_mh_t mh;
	void *va;

	CHECK_EQ(gpu_vmm_alloc(&m, 2 * MiB, CU_MEM_HANDLE_TYPE_POSIX_FILE_DESCRIPTOR), CUDA_SUCCESS);
	CHECK_EQ(gdr_pin_buffer_v2(g, m.ptr, SLICE, 0, &mh), 0);
	CHECK_EQ(gdr_map(g, mh, &va, SLICE), 0);
	CHECK_EQ(gdr_copy_to_mapping(mh, va, &v, 8), 0);
	fc = (struct fork_check){ .g = g, .mh = mh, .map = va, .map_size = SLICE,
				  .pin_addr = m.ptr, .child_own = child_own_gdr };
	CHECK(fork_check_run(&fc) == TEST_PASS, "fork child: %s", test_reason());
	/* The parent's pin and mapping are as they were. */
	CHECK_EQ(gdr_copy_from_mapping(mh, &back, va, 8), 0);
	CHECK_EQ(back, v);
	CHECK_EQ(cu->cuMemcpyDtoH(&back, m.ptr, 8), CUDA_SUCCESS);
	CHECK_EQ(back, v);
	CHECK_EQ(gdr_unmap(g, mh, va, SLICE), 0);
	CHECK_EQ(gdr_unpin_buffer(g, mh), 0);
	gpu_vmm_free(&m);
	return 0;
}

static int case_fork_before_cuda(void)
{
	if (fork_before_cuda_status == TEST_SKIP)
		return test_skip("%s", fork_before_cuda_why);
	if (fork_before_cuda_status)
		return test_fail("%s", fork_before_cuda_why);
	return TEST_PASS;
}

static int fork_before_cuda_child(void *arg)
{
	int rc = gpu_init();

	(void)arg;
	if (rc == TEST_SKIP)
		return test_skip("no GPU");
	g = rc ? NULL : gdr_open();
	if (!g)
		return test_fail("gdr_open failed in a child forked before CUDA was used");
	return child_own_gdr();
}

/* Before this process touches CUDA: a child that does everything itself. */
static void fork_before_cuda(void)
{
	/* quick_exit: Mesa's atexit handler would join the parent's lavapipe threads. */
	const struct test_child child = { .quick_exit = true };

	fork_before_cuda_status = test_child_run(&child, fork_before_cuda_child, NULL);
	snprintf(fork_before_cuda_why, sizeof(fork_before_cuda_why), "%s",
		 test_reason()[0] ? test_reason() : "the child failed");
}

static int case_open(void)
{
	int v = -1;

	g = gdr_open();
	CHECK(g != NULL);
	CHECK_EQ(gdr_get_attribute(g, GDR_ATTR_EXT_BACKEND, &v), 0);
	CHECK_EQ(v, GDR_BACKEND_VULKAN);
	return 0;
}

static int case_close(void)
{
	CHECK_EQ(gdr_close(g), 0);
	g = NULL;
	return 0;
}

static const struct test_case cases[] = {
	{ "fork_before_cuda", case_fork_before_cuda },
	{ "open", case_open },
	{ "soak", case_soak },
	{ "fork_inherited", case_fork_inherited },
	{ "close", case_close },
	{ NULL, NULL },
};

int main(int argc, char **argv)
{
	int ret;

	setenv("GDRCOPY_ENABLE_LOGGING", "1", 0);
	setenv("GDRCOPY_LOG_LEVEL", "3", 0);
	gpu_use_nvidia_icd();
	fork_before_cuda();
	ret = gpu_init();
	if (!ret)
		ret = gpu_need_nvidia();
	if (ret)
		return ret;
	gpu_describe();
	if (cu->cuCtxGetCurrent(&ctx) != CUDA_SUCCESS || !ctx) {
		printf("no CUDA context after gpu_init\n");
		return 1;
	}
	return test_run(cases, argc, argv);
}
