/* SPDX-License-Identifier: MIT */
/*
 * The dmabuf backend's refusals: EINVAL, ENOTSUP, EMFILE, an export without a descriptor, and a
 * thread without a context.
 */
#include <dirent.h>
#include <errno.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>

#include "dmabuf_cases.h"
#include "harness.h"

int dmabuf_case_einval(void)
{
	CUdeviceptr buf = dev_alloc(GPU_PAGE), freed = dev_alloc(GPU_PAGE);
	void *host = aligned_alloc(GPU_PAGE, GPU_PAGE);
	gdr_info_t info;
	uint8_t *map;
	gdr_mh_t mh;

	CHECK(buf && freed && host);
	EXPECT(t.cu->cuMemFree(freed) == CUDA_SUCCESS);
	EXPECT_ERR(gdr_pin_buffer_v2(t.g, (unsigned long)host, GPU_PAGE, 0, &mh), EINVAL);
	EXPECT_ERR(gdr_pin_buffer_v2(t.g, freed, GPU_PAGE, 0, &mh), EINVAL);
	/* Past the end of the allocation: the export is refused. */
	EXPECT_ERR(gdr_pin_buffer_v2(t.g, buf, 2 * GPU_PAGE, 0, &mh), EINVAL);
	/* The legacy call with tokens asks for non-persistent pins, which dma-buf cannot give. */
	EXPECT_ERR(gdr_pin_buffer(t.g, buf, GPU_PAGE, 0x1234, 0, &mh), EINVAL);
	EXPECT_ERR(gdr_pin_buffer(t.g, buf, GPU_PAGE, 0, 1, &mh), EINVAL);
	EXPECT_ERR(gdr_pin_buffer(t.g, buf, GPU_PAGE, 0, 0, &mh), 0);
	EXPECT_ERR(gdr_get_info(t.g, mh, &info), 0);
	EXPECT_ERR(gdr_map(t.g, mh, (void **)&map, info.mapped_size), 0);
	EXPECT_ERR(gdr_map(t.g, mh, (void **)&map, info.mapped_size), EAGAIN);
	unmap_unpin(mh, map, &info);
	free(host);
	t.cu->cuMemFree(buf);
	return TEST_PASS;
}

int dmabuf_case_enotsup(void)
{
	void *host = NULL;
	gdr_mh_t mh;

	/* cuMemAllocHost memory has a device ordinal but is not device memory to export. */
	EXPECT(t.cu->cuMemAllocHost(&host, GPU_PAGE) == CUDA_SUCCESS);
	EXPECT_ERR(gdr_pin_buffer_v2(t.g, (unsigned long)host, GPU_PAGE, 0, &mh), ENOTSUP);
	t.cu->cuMemFreeHost(host);
	return TEST_PASS;
}

/*
 * A pin that runs past the end of its allocation: the CUDA driver refuses the export, and the
 * refusal keeps the driver's errno but names the allocation and what to do; nothing is held.
 */
int dmabuf_case_past_allocation(void)
{
	CUdeviceptr buf = dev_alloc(2 * GPU_PAGE);
	gdr_mh_t mh = { 0x77 };
	gdr_info_t info;
	char want[160];
	const char *log;
	uint8_t *map;
	int ret;

	CHECK(buf);
	test_capture_begin();
	EXPECT_ERR(gdr_pin_buffer_v2(t.g, buf + GPU_PAGE + 16, GPU_PAGE, 0, &mh), EINVAL);
	log = test_capture_end();
	snprintf(want, sizeof(want), "0x%llx/%lu runs %lu bytes past the end of its CUDA "
		 "allocation 0x%llx+%lu", (unsigned long long)buf + GPU_PAGE + 16, GPU_PAGE,
		 16UL, (unsigned long long)buf, 2 * GPU_PAGE);
	EXPECT(strstr(log, want) != NULL, "no \"%s\" in: %s", want, log);
	snprintf(want, sizeof(want), "pin within the allocation: at most %lu bytes from 0x%llx",
		 GPU_PAGE - 16, (unsigned long long)buf + GPU_PAGE + 16);
	EXPECT(strstr(log, want) != NULL, "no \"%s\" in: %s", want, log);
	EXPECT(mh.h == 0x77);
	EXPECT(sim_open_exports() == 0);
	/* The pin the hint asks for works. */
	ret = pin_map(buf + GPU_PAGE + 16, GPU_PAGE - 16, 0, &mh, &info, &map);
	EXPECT_ERR(ret, 0);
	if (!ret)
		unmap_unpin(mh, map, &info);
	t.cu->cuMemFree(buf);
	return TEST_PASS;
}

/* The highest descriptor number open now. */
static int highest_fd(void)
{
	DIR *d = opendir("/proc/self/fd");
	struct dirent *e;
	int max = -1;

	if (!d)
		return -1;
	while ((e = readdir(d)))
		if (e->d_name[0] != '.' && atoi(e->d_name) > max)
			max = atoi(e->d_name);
	closedir(d);
	return max;
}

/* With RLIMIT_NOFILE low, pins fail with EMFILE and a log line that explains it. */
int dmabuf_case_emfile(void)
{
	CUdeviceptr buf = dev_alloc(GPU_PAGE);
	struct rlimit saved, low;
	char want[128];
	const char *log;
	int n = 0, ret = 0, free_fds;
	gdr_mh_t *mh;

	CHECK(buf);
	CHECK(!getrlimit(RLIMIT_NOFILE, &saved));
	test_capture_begin();
	/* Descriptors fill the lowest free numbers: every hole below the limit is a free one. */
	low = saved;
	low.rlim_cur = (rlim_t)highest_fd() + 1 + 16;
	free_fds = (int)low.rlim_cur - test_fd_count();
	mh = calloc((size_t)free_fds + 1, sizeof(*mh));
	EXPECT(mh && !setrlimit(RLIMIT_NOFILE, &low));
	while (mh && n <= free_fds && !(ret = gdr_pin_buffer_v2(t.g, buf, GPU_PAGE, 0, &mh[n])))
		n++;
	EXPECT(!setrlimit(RLIMIT_NOFILE, &saved));
	log = test_capture_end();
	EXPECT_ERR(ret, EMFILE);
	EXPECT(n == free_fds);
	snprintf(want, sizeof(want), "RLIMIT_NOFILE %llu", (unsigned long long)low.rlim_cur);
	EXPECT(strstr(log, want) != NULL);
	snprintf(want, sizeof(want), "holds %d pins", n);
	EXPECT(strstr(log, want) != NULL);
	if (n > 0) {
		void *map;

		EXPECT_ERR(gdr_map(t.g, mh[0], &map, GPU_PAGE), 0);
		EXPECT_ERR(gdr_unmap(t.g, mh[0], map, GPU_PAGE), 0);
	}
	for (int i = 0; i < n; i++)
		EXPECT_ERR(gdr_unpin_buffer(t.g, mh[i]), 0);
	free(mh);
	t.cu->cuMemFree(buf);
	return TEST_PASS;
}

/* A driver whose export succeeds with no descriptor: the pin is refused, saying why. */
int dmabuf_case_no_fd(void)
{
	CUdeviceptr buf = dev_alloc(GPU_PAGE);
	gdr_mh_t mh = { 0x77 };
	const char *log;

	CHECK(buf);
	test_capture_begin();
	EXPECT_ERR(gdr_pin_buffer_v2(t.g, buf, GPU_PAGE, 0, &mh), EIO);
	log = test_capture_end();
	EXPECT(strstr(log, "gave no file descriptor") != NULL);
	EXPECT(mh.h == 0x77);
	t.cu->cuMemFree(buf);
	return TEST_PASS;
}

static void *no_context_thread(void *arg)
{
	CUdeviceptr buf = *(CUdeviceptr *)arg;
	CUcontext ctx = (CUcontext)1;
	uint32_t v = 0xfeedf00d;
	gdr_info_t info;
	uint8_t *map;
	gdr_mh_t mh;

	EXPECT(t.cu->cuCtxGetCurrent(&ctx) == CUDA_SUCCESS && ctx == NULL);
	EXPECT_ERR(pin_map(buf + 4, 4, 0, &mh, &info, &map), 0);
	if (!test_failures()) {
		EXPECT_ERR(gdr_copy_to_mapping(mh, map + 4, &v, sizeof(v)), 0);
		EXPECT(!memcmp((void *)(buf + 4), &v, sizeof(v)));
		unmap_unpin(mh, map, &info);
	}
	EXPECT(t.cu->cuCtxGetCurrent(&ctx) == CUDA_SUCCESS && ctx == NULL);
	return NULL;
}

/*
 * Threads with no CUDA context current: the backend makes the device's primary context current
 * for each pin and leaves none. The gdr_t keeps a reference to that context until gdr_close, so
 * that it is not made again for every pin (NVIDIA's driver takes 0.1-0.2 s to). With nothing
 * else holding it (the case releases the process's references first, and takes them again
 * after; the simulator keeps allocations meanwhile), three rounds from three threads make it
 * exactly once, on a gdr_t of the case's own.
 */
int dmabuf_case_no_context(void)
{
	CUdeviceptr buf = dev_alloc(GPU_PAGE);
	struct simcuda_counters before, during = { 0 }, after;
	gdr_t shared = t.g;
	pthread_t th;
	CUcontext ctx;
	int held = 0;

	CHECK(buf);
	while (t.cu->cuDevicePrimaryCtxRelease(0) == CUDA_SUCCESS)
		held++;
	t.counters(&before);
	t.g = gdr_open();
	if (t.g) {
		for (int i = 0; i < 3; i++) {
			EXPECT(!pthread_create(&th, NULL, no_context_thread, &buf));
			pthread_join(th, NULL);
		}
		t.counters(&during);
		EXPECT_ERR(gdr_close(t.g), 0);
	}
	EXPECT(t.g, "gdr_open failed");
	t.g = shared;
	t.counters(&after);
	while (held-- > 0)
		t.cu->cuDevicePrimaryCtxRetain(&ctx, 0);
	t.cu->cuMemFree(buf);
	CHECK(!test_failures());
	CHECK(before.primary_ctx_refs == 0, "%ld references to primary contexts left after "
	      "releasing the process's", before.primary_ctx_refs);
	CHECK(during.primary_ctx_refs == 1, "the gdr_t holds %ld references to primary contexts, "
	      "not 1", during.primary_ctx_refs);
	CHECK(during.primary_ctx_creations - before.primary_ctx_creations == 1,
	      "three rounds made the primary context %ld times, not once",
	      during.primary_ctx_creations - before.primary_ctx_creations);
	CHECK(after.primary_ctx_refs == 0, "gdr_close left %ld references to primary contexts",
	      after.primary_ctx_refs);
	return TEST_PASS;
}
