/* SPDX-License-Identifier: MIT */
/*
 * The vulkan backend's cases about lifetimes: leaks over cycles, the caller's CUDA context,
 * threads, fork, gdr_open/gdr_close cycles, gdr_close with pins left.
 */
#include <errno.h>
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "cuda_vmm.h"
#include "fork_check.h"
#include "gdrapi.h"
#include "gdrapi_ext.h"
#include "harness.h"
#include "simcuda.h"
#include "vulkan_cases.h"

int vulkan_case_cycles_no_leak(void)
{
	struct test_vmm m;
	struct leak_mark lm;
	uint64_t v = 0;

	CHECK_EQ(test_vmm_alloc(&m, 2 * MiB, 0, CU_MEM_HANDLE_TYPE_POSIX_FILE_DESCRIPTOR), CUDA_SUCCESS);
	leak_mark_take(&lm);
	for (int i = 0; i < 10000; i++) {
		gdr_mh_t mh;
		void *va;

		CHECK_EQ(gdr_pin_buffer_v2(vk_gdr, m.ptr + (size_t)(i % 16) * 65536, 8, 0, &mh), 0);
		CHECK_EQ(gdr_map(vk_gdr, mh, &va, 65536), 0);
		v = (uint64_t)i;
		CHECK_EQ(gdr_copy_to_mapping(mh, va, &v, sizeof(v)), 0);
		CHECK_EQ(gdr_unmap(vk_gdr, mh, va, 65536), 0);
		CHECK_EQ(gdr_unpin_buffer(vk_gdr, mh), 0);
		CHECK_EQ(*(volatile uint64_t *)(uintptr_t)(m.ptr + (size_t)(i % 16) * 65536),
			 (uint64_t)i);
	}
	CHECK(check_no_leak(&lm) == 0);
	test_vmm_free(&m);
	return 0;
}

/* The calling thread's CUDA context is left as it was, whether one was current or not. */
static void *no_context_thread(void *arg)
{
	const struct test_vmm *m = arg;
	CUcontext ctx = (CUcontext)1;
	gdr_mh_t mh;
	void *va;
	int ret;

	ret = gdr_pin_buffer_v2(vk_gdr, m->ptr, 65536, 0, &mh);
	if (!ret)
		ret = gdr_map(vk_gdr, mh, &va, 65536);
	if (!ret) {
		gdr_unmap(vk_gdr, mh, va, 65536);
		gdr_unpin_buffer(vk_gdr, mh);
	}
	if (!ret && (cuCtxGetCurrent(&ctx) != CUDA_SUCCESS || ctx != NULL))
		ret = -1;
	return (void *)(intptr_t)ret;
}

/* Unpin from a thread with no CUDA context; that thread is left with none. */
static void *unpin_thread(void *arg)
{
	gdr_mh_t *mh = arg;
	CUcontext ctx = (CUcontext)1;
	int ret = gdr_unpin_buffer(vk_gdr, *mh);

	if (!ret && (cuCtxGetCurrent(&ctx) != CUDA_SUCCESS || ctx != NULL))
		ret = -1;
	return (void *)(intptr_t)ret;
}

/* Run fn(arg) on a new thread (which has no CUDA context): its result, or -2. */
static int on_thread(void *(*fn)(void *), void *arg)
{
	pthread_t t;
	void *ret;

	if (pthread_create(&t, NULL, fn, arg) || pthread_join(t, &ret))
		return -2;
	return (int)(intptr_t)ret;
}

/*
 * Release every reference to device 0's primary context, as where no other code of the process
 * uses it: the next reference makes the context again (the simulator keeps allocations
 * meanwhile). How many there were, for primary_refs_restore.
 */
static int primary_refs_drop(void)
{
	int n = 0;

	while (cuDevicePrimaryCtxRelease(0) == CUDA_SUCCESS)
		n++;
	return n;
}

static void primary_refs_restore(int n)
{
	CUcontext ctx;

	while (n-- > 0)
		cuDevicePrimaryCtxRetain(&ctx, 0);
}

/*
 * A fork child closes a gdr_t that holds the primary context: the reference is the parent's, and
 * the child's close releases none. 0, or what went wrong.
 */
static int child_close_keeps_refs(void)
{
	struct simcuda_counters a, b;
	int status;
	pid_t pid = fork();

	if (pid < 0)
		return -1;
	if (pid == 0) {
		simcuda_get_counters(&a);
		gdr_close(vk_gdr);
		simcuda_get_counters(&b);
		_exit(a.primary_ctx_refs == b.primary_ctx_refs ? 0 : 1);
	}
	if (waitpid(pid, &status, 0) != pid || !WIFEXITED(status))
		return -1;
	return WEXITSTATUS(status);
}

/*
 * Threads with no context: each is left with none, and the gdr_t keeps a reference to the
 * device's primary context until gdr_close, so that it is not made again for every pin and unpin
 * (NVIDIA's driver takes 0.1-0.2 s to). With nothing else holding it, three rounds of pin, map
 * and unpin from three threads make it once; so do two pins made with a context current and
 * unpinned from threads with none. A fork child's gdr_close releases no reference of the
 * parent's. A thread with a context of its own keeps it, and adds no reference.
 */
int vulkan_case_context_restored(void)
{
	struct simcuda_counters c0, c1, c2, c3, c4, c5, c6;
	int held, rounds = 0, unpins = 0, child = -1, closed = -1, closed2 = -1;
	struct test_vmm m;
	CUcontext before, after;
	gdr_t shared = vk_gdr;
	gdr_mh_t mh;

	CHECK_EQ(test_vmm_alloc(&m, 2 * MiB, 0, CU_MEM_HANDLE_TYPE_POSIX_FILE_DESCRIPTOR), CUDA_SUCCESS);
	held = primary_refs_drop();
	simcuda_get_counters(&c0);
	vk_gdr = gdr_open();
	if (vk_gdr) {
		while (rounds < 3 && on_thread(no_context_thread, &m) == 0)
			rounds++;
		simcuda_get_counters(&c1);
		child = child_close_keeps_refs();
		closed = gdr_close(vk_gdr);
	}
	simcuda_get_counters(&c2);
	vk_gdr = gdr_open();
	if (vk_gdr) {
		while (unpins < 2 && gdr_pin_buffer_v2(vk_gdr, m.ptr, 65536, 0, &mh) == 0 &&
		       on_thread(unpin_thread, &mh) == 0)
			unpins++;
		simcuda_get_counters(&c3);
		closed2 = gdr_close(vk_gdr);
	}
	simcuda_get_counters(&c4);
	vk_gdr = shared;
	primary_refs_restore(held);

	CHECK_EQ(rounds, 3);
	CHECK_EQ(closed, 0);
	CHECK_EQ(c0.primary_ctx_refs, 0);
	CHECK_EQ(c1.primary_ctx_refs, 1);
	CHECK_EQ(c1.primary_ctx_creations - c0.primary_ctx_creations, 1);
	CHECK_EQ(child, 0);
	CHECK_EQ(c2.primary_ctx_refs, 0);
	CHECK_EQ(unpins, 2);
	CHECK_EQ(closed2, 0);
	CHECK_EQ(c3.primary_ctx_refs, 1);
	CHECK_EQ(c3.primary_ctx_creations - c2.primary_ctx_creations, 1);
	CHECK_EQ(c4.primary_ctx_refs, 0);

	CHECK_EQ(cuCtxGetCurrent(&before), CUDA_SUCCESS);
	CHECK(before != NULL);
	simcuda_get_counters(&c5);
	CHECK_EQ(gdr_pin_buffer_v2(vk_gdr, m.ptr, 65536, 0, &mh), 0);
	CHECK_EQ(gdr_unpin_buffer(vk_gdr, mh), 0);
	simcuda_get_counters(&c6);
	CHECK_EQ(cuCtxGetCurrent(&after), CUDA_SUCCESS);
	CHECK(after == before);
	CHECK_EQ(c6.primary_ctx_refs, c5.primary_ctx_refs);
	test_vmm_free(&m);
	return 0;
}

struct worker {
	int id;
	struct test_vmm *m;
	int ret;
	char why[256];
};

static void *worker_main(void *arg)
{
	struct worker *w = arg;
	uint8_t buf[4096], back[4096];

	for (int i = 0; i < 300 && !w->ret; i++) {
		unsigned long addr = w->m->ptr + (size_t)w->id * 262144 + (size_t)(i % 4) * 65536;
		gdr_mh_t mh;
		void *va;
		size_t n = 1 + (size_t)(i * 37 + w->id) % sizeof(buf);

		fill_pattern(buf, n, (unsigned)(i + w->id * 1000));
		if (gdr_pin_buffer_v2(vk_gdr, addr, n, 0, &mh)) {
			w->ret = 1;
			snprintf(w->why, sizeof(w->why), "pin %d failed", i);
			break;
		}
		if (gdr_map(vk_gdr, mh, &va, 65536) || gdr_copy_to_mapping(mh, va, buf, n) ||
		    gdr_copy_from_mapping(mh, back, va, n) || memcmp(buf, back, n) ||
		    memcmp((const void *)(uintptr_t)addr, buf, n)) {
			w->ret = 1;
			snprintf(w->why, sizeof(w->why), "map/copy %d failed", i);
		}
		gdr_unmap(vk_gdr, mh, va, 65536);
		if (gdr_unpin_buffer(vk_gdr, mh)) {
			w->ret = 1;
			snprintf(w->why, sizeof(w->why), "unpin %d failed", i);
		}
	}
	return NULL;
}

int vulkan_case_threads(void)
{
	enum { T = 4 };
	struct worker w[T];
	pthread_t t[T];
	struct test_vmm m;
	struct leak_mark lm;
	gdr_t shared;

	CHECK_EQ(test_vmm_alloc(&m, 2 * MiB, 0, CU_MEM_HANDLE_TYPE_POSIX_FILE_DESCRIPTOR), CUDA_SUCCESS);
	leak_mark_take(&lm);
	/* A gdr_t of the case's own: it keeps the primary context its threads' pins made. */
	shared = vk_gdr;
	vk_gdr = gdr_open();
	CHECK(vk_gdr != NULL);
	for (int i = 0; i < T; i++) {
		w[i] = (struct worker){ .id = i, .m = &m };
		CHECK_EQ(pthread_create(&t[i], NULL, worker_main, &w[i]), 0);
	}
	for (int i = 0; i < T; i++)
		pthread_join(t[i], NULL);
	CHECK_EQ(gdr_close(vk_gdr), 0);
	vk_gdr = shared;
	for (int i = 0; i < T; i++)
		if (w[i].ret)
			return test_fail("thread %d: %s", i, w[i].why);
	CHECK(check_no_leak(&lm) == 0);
	test_vmm_free(&m);
	return 0;
}

/* In the fork child: a gdr_t of its own pins, maps and copies. */
static int child_own_gdr(void)
{
	struct test_vmm m;
	gdr_mh_t mh;
	void *base;
	uint8_t *map;
	gdr_t own;

	CHECK(!test_vmm_alloc(&m, 2 * MiB, 0, CU_MEM_HANDLE_TYPE_POSIX_FILE_DESCRIPTOR),
	      "the child's cuMemCreate failed");
	own = gdr_open();
	CHECK(own, "gdr_open in the child failed");
	vk_gdr = own;
	CHECK(!pin_map(m.ptr + 65536, 100, &mh, &base, &map) &&
	      !gdr_copy_to_mapping(mh, map, "child", 5) &&
	      !memcmp((const void *)(uintptr_t)(m.ptr + 65536), "child", 5) &&
	      !unmap_unpin(mh, base) && !gdr_close(own), "the child's own gdr_t does not work");
	test_vmm_free(&m);
	return TEST_PASS;
}

/* A fork child can use nothing of the parent's gdr_t, touches nothing of it, and opens its own. */
int vulkan_case_fork(void)
{
	struct test_vmm m;
	struct fork_check fc;
	uint8_t *dev, *map, fill[4096];
	gdr_mh_t mh;
	void *base;

	CHECK_PASS(fork_check_possible());
	CHECK_EQ(test_vmm_alloc(&m, 2 * MiB, 0, CU_MEM_HANDLE_TYPE_POSIX_FILE_DESCRIPTOR),
		 CUDA_SUCCESS);
	dev = (uint8_t *)(uintptr_t)m.ptr;
	CHECK(pin_map(m.ptr, 65536, &mh, &base, &map) == 0);
	memset(fill, 0x11, sizeof(fill));
	CHECK_EQ(gdr_copy_to_mapping(mh, map, fill, sizeof(fill)), 0);
	fc = (struct fork_check){ .g = vk_gdr, .mh = mh, .map = base, .map_size = 65536,
				  .pin_addr = m.ptr, .child_own = child_own_gdr };
	CHECK(fork_check_run(&fc) == TEST_PASS, "fork child: %s", test_reason());
	/* The parent's pin, mapping and data are as they were. */
	CHECK(!memcmp(dev, fill, sizeof(fill)));
	CHECK_EQ(gdr_copy_to_mapping(mh, map, "parent", 6), 0);
	CHECK(!memcmp(dev, "parent", 6));
	CHECK(unmap_unpin(mh, base) == 0);
	test_vmm_free(&m);
	return 0;
}

/*
 * gdr_open/gdr_close cycles, each with a pin and mapping left for gdr_close: the process's Vulkan
 * state serves them all, and descriptors, threads and resident memory stay as they were.
 */
int vulkan_case_open_close_cycles(void)
{
	enum { WARMUP = 50, CYCLES = 2000, RSS_SLACK_KIB = 1024 };
	struct test_usage before = { 0 }, after;
	struct test_vmm m;
	gdr_t saved = vk_gdr;
	int ret = 0;

	CHECK_EQ(test_vmm_alloc(&m, 2 * MiB, 0, CU_MEM_HANDLE_TYPE_POSIX_FILE_DESCRIPTOR), CUDA_SUCCESS);
	for (int i = 0; i < WARMUP + CYCLES && !ret; i++) {
		gdr_mh_t mh;
		void *va;

		if (i == WARMUP)
			test_usage(&before);
		vk_gdr = gdr_open();
		if (!vk_gdr || gdr_pin_buffer_v2(vk_gdr, m.ptr, 65536, 0, &mh) || gdr_map(vk_gdr, mh, &va, 65536))
			ret = test_fail("cycle %d: open, pin or map failed", i);
		if (vk_gdr && gdr_close(vk_gdr))
			ret = test_fail("cycle %d: gdr_close failed", i);
	}
	test_usage(&after);
	vk_gdr = saved;
	test_vmm_free(&m);
	if (ret)
		return ret;
	printf("%d cycles: fds %d -> %d, threads %d -> %d, RSS %ld -> %ld KiB\n", CYCLES,
	       before.fds, after.fds, before.threads, after.threads, before.rss_kib,
	       after.rss_kib);
	CHECK_EQ(after.fds, before.fds);
	if (test_threads_meaningful())
		CHECK_EQ(after.threads, before.threads);
	if (test_rss_meaningful())
		CHECK(after.rss_kib - before.rss_kib <= RSS_SLACK_KIB);
	return 0;
}

/* gdr_close with buffers still pinned and mapped releases everything. */
int vulkan_case_close_live(void)
{
	struct test_vmm m;
	struct leak_mark lm;
	gdr_mh_t mh[3];
	void *va[3];

	CHECK_EQ(test_vmm_alloc(&m, 2 * MiB, 0, CU_MEM_HANDLE_TYPE_POSIX_FILE_DESCRIPTOR), CUDA_SUCCESS);
	leak_mark_take(&lm);
	for (int i = 0; i < 3; i++)
		CHECK_EQ(gdr_pin_buffer_v2(vk_gdr, m.ptr + (size_t)i * 65536, 65536, 0, &mh[i]), 0);
	CHECK_EQ(gdr_map(vk_gdr, mh[0], &va[0], 65536), 0);
	CHECK_EQ(gdr_map(vk_gdr, mh[2], &va[2], 65536), 0);
	CHECK_EQ(gdr_close(vk_gdr), 0);
	vk_gdr = NULL;
	/* Every pin's import and CUDA reference is gone; the process's VkDevice stays. */
	CHECK(check_no_leak(&lm) == 0);
	vk_gdr = gdr_open();
	CHECK(vk_gdr != NULL);
	CHECK_EQ(gdr_pin_buffer_v2(vk_gdr, m.ptr, 65536, 0, &mh[0]), 0);
	CHECK_EQ(gdr_unpin_buffer(vk_gdr, mh[0]), 0);
	test_vmm_free(&m);
	return 0;
}

int vulkan_case_close(void)
{
	CHECK_EQ(gdr_close(vk_gdr), 0);
	vk_gdr = NULL;
	return 0;
}
