/* SPDX-License-Identifier: MIT */
/*
 * Tier 3: the vulkan backend on a real NVIDIA GPU (the test H200: driver 580, no gdrdrv, no
 * dma-buf mmap). gdr_open is left to choose; data goes both ways between CPU copies through the
 * mapping and the GPU (cuMemcpy and kernels); partial and offset copies; many buffers; threads;
 * refusals; what happens when the application frees memory that is pinned. Skips (77) where
 * there is no driver or GPU. Touches of the mapping that could fault run under a SIGBUS/SIGSEGV
 * guard, so one bad case reports instead of killing the run.
 */
#include <errno.h>
#include <pthread.h>
#include <setjmp.h>
#include <signal.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "gdrapi.h"
#include "gdrapi_ext.h"
#include "gpucommon.h"
#include "harness.h"

#define MiB (1UL << 20)

static gdr_t g;
static sigjmp_buf fault_jmp;
static volatile sig_atomic_t fault_armed;

static void on_fault(int sig)
{
	if (fault_armed)
		siglongjmp(fault_jmp, sig);
	signal(sig, SIG_DFL);
	raise(sig);
}

/* A copy through the mapping under the fault guard: 0, or the signal that stopped it. */
static int guarded_copy(bool to_mapping, gdr_mh_t mh, void *dst, const void *src, size_t n)
{
	int sig;

	fault_armed = 1;
	sig = sigsetjmp(fault_jmp, 1);
	if (!sig) {
		if (to_mapping)
			gdr_copy_to_mapping(mh, dst, src, n);
		else
			gdr_copy_from_mapping(mh, dst, src, n);
	}
	fault_armed = 0;
	return sig;
}

/* Pin and map [addr, addr + size); *map points at addr. */
static int pin_map(unsigned long addr, size_t size, gdr_mh_t *mh, void **base, uint8_t **map)
{
	gdr_info_t info;
	int ret = gdr_pin_buffer_v2(g, addr, size, 0, mh);

	if (ret)
		return test_fail("gdr_pin_buffer_v2(0x%lx, %zu) = %d", addr, size, ret);
	ret = gdr_get_info(g, *mh, &info);
	if (!ret)
		ret = gdr_map(g, *mh, base, info.mapped_size);
	if (ret) {
		gdr_unpin_buffer(g, *mh);
		return test_fail("get_info/map of 0x%lx = %d", addr, ret);
	}
	*map = (uint8_t *)*base + (addr - info.va);
	return 0;
}

static void unmap_unpin(gdr_mh_t mh, void *base)
{
	gdr_info_t info;

	if (!gdr_get_info(g, mh, &info) && info.mapped)
		gdr_unmap(g, mh, base, info.mapped_size);
	gdr_unpin_buffer(g, mh);
}

static void fill_words(uint32_t *w, size_t n, uint32_t seed)
{
	for (size_t i = 0; i < n; i++)
		w[i] = gpu_pattern(seed, i);
}

static size_t count_bad_words(const uint32_t *w, size_t n, uint32_t seed, size_t *first)
{
	size_t bad = 0;

	for (size_t i = 0; i < n; i++) {
		if (w[i] != gpu_pattern(seed, i)) {
			if (!bad)
				*first = i;
			bad++;
		}
	}
	return bad;
}

static int case_open_default(void)
{
	int v = -1, major = 0, minor = 0;

	unsetenv("GDRCOPY_BACKEND");
	g = gdr_open();
	if (!g)
		return test_fail("gdr_open failed (GDRCOPY_ENABLE_LOGGING=1 GDRCOPY_LOG_LEVEL=2 "
				   "says why)");
	CHECK_EQ(gdr_get_attribute(g, GDR_ATTR_EXT_BACKEND, &v), 0);
	if (v != GDR_BACKEND_VULKAN)
		return test_fail("gdr_open chose backend %d, not vulkan (%d): is gdrdrv loaded or "
				   "dma-buf mmap available?", v, GDR_BACKEND_VULKAN);
	CHECK_EQ(gdr_get_attribute(g, GDR_ATTR_USE_PERSISTENT_MAPPING, &v), 0);
	CHECK_EQ(v, 1);
	CHECK_EQ(gdr_get_attribute(g, GDR_ATTR_SUPPORT_PIN_FLAG_FORCE_PCIE, &v), 0);
	CHECK_EQ(v, 0);
	CHECK_EQ(gdr_driver_get_version(g, &major, &minor), 0);
	CHECK_EQ(major, 2);
	CHECK_EQ(minor, 6);
	return 0;
}

#define NEED_G() do { if (!g) return test_fail("no gdr_t (open_default failed)"); } while (0)

/* CPU writes through the mapping: cuMemcpyDtoH and a kernel read them. */
static int case_cpu_write_gpu_read(void)
{
	const size_t size = 4 * MiB, words = size / 4;
	unsigned long long kbad = 0;
	struct gpu_vmm m;
	uint32_t *buf;
	uint8_t *map;
	const char *why;
	gdr_mh_t mh;
	void *base;
	size_t bad, first = 0;
	int ret = 0, sig;

	NEED_G();
	CHECK_EQ(gpu_vmm_alloc(&m, size, CU_MEM_HANDLE_TYPE_POSIX_FILE_DESCRIPTOR), CUDA_SUCCESS);
	buf = malloc(size);
	CHECK(buf != NULL);
	if (pin_map(m.ptr, size, &mh, &base, &map)) {
		ret = 1;
		goto out_free;
	}
	fill_words(buf, words, 0x1234);
	sig = guarded_copy(true, mh, map, buf, size);
	if (sig) {
		ret = test_fail("signal %d writing through the mapping", sig);
		goto out_unpin;
	}
	memset(buf, 0, size);
	CHECK_EQ(cu->cuMemcpyDtoH(buf, m.ptr, size), CUDA_SUCCESS);
	bad = count_bad_words(buf, words, 0x1234, &first);
	if (bad) {
		ret = test_fail("cuMemcpyDtoH sees %zu of %zu words wrong (first at %zu)", bad,
				  words, first);
		goto out_unpin;
	}
	if (!gpu_kernels_available(&why)) {
		/* The case's other half passes; this one is counted as not run. */
		test_report("skip", "cpu_write_gpu_read_kernel", "%s", why);
		goto out_unpin;
	}
	CHECK_EQ(gpu_kernel_check(m.ptr, words, 0x1234, &kbad), CUDA_SUCCESS);
	if (kbad)
		ret = test_fail("a kernel sees %llu of %zu words wrong", kbad, words);
out_unpin:
	unmap_unpin(mh, base);
out_free:
	free(buf);
	gpu_vmm_free(&m);
	return ret;
}

/* The GPU writes (cuMemcpyHtoD, a kernel): reads through the mapping see it. */
static int case_gpu_write_cpu_read(void)
{
	const size_t size = 4 * MiB, words = size / 4;
	struct gpu_vmm m;
	uint32_t *buf;
	uint8_t *map;
	const char *why;
	gdr_mh_t mh;
	void *base;
	size_t bad, first = 0;
	int ret = 0, sig;

	NEED_G();
	CHECK_EQ(gpu_vmm_alloc(&m, size, CU_MEM_HANDLE_TYPE_POSIX_FILE_DESCRIPTOR), CUDA_SUCCESS);
	buf = malloc(size);
	CHECK(buf != NULL);
	if (pin_map(m.ptr, size, &mh, &base, &map)) {
		ret = 1;
		goto out_free;
	}
	fill_words(buf, words, 0xbeef);
	CHECK_EQ(cu->cuMemcpyHtoD(m.ptr, buf, size), CUDA_SUCCESS);
	/* A pageable HtoD may return before its DMA lands (seen on the H200). */
	CHECK_EQ(cu->cuCtxSynchronize(), CUDA_SUCCESS);
	memset(buf, 0, size);
	sig = guarded_copy(false, mh, buf, map, size);
	if (sig) {
		ret = test_fail("signal %d reading through the mapping", sig);
		goto out_unpin;
	}
	bad = count_bad_words(buf, words, 0xbeef, &first);
	if (bad) {
		ret = test_fail("after cuMemcpyHtoD the mapping shows %zu of %zu words wrong "
				  "(first at %zu)", bad, words, first);
		goto out_unpin;
	}
	if (!gpu_kernels_available(&why)) {
		test_report("skip", "gpu_write_cpu_read_kernel", "%s", why);
		goto out_unpin;
	}
	CHECK_EQ(gpu_kernel_fill(m.ptr, words, 0xcafe), CUDA_SUCCESS);
	sig = guarded_copy(false, mh, buf, map, size);
	if (sig) {
		ret = test_fail("signal %d reading through the mapping", sig);
		goto out_unpin;
	}
	bad = count_bad_words(buf, words, 0xcafe, &first);
	if (bad)
		ret = test_fail("after a kernel wrote, the mapping shows %zu of %zu words wrong "
				  "(first at %zu)", bad, words, first);
out_unpin:
	unmap_unpin(mh, base);
out_free:
	free(buf);
	gpu_vmm_free(&m);
	return ret;
}

/* Pins of sub-ranges at odd places; copies at odd offsets and sizes; bytes around untouched. */
static int case_partial_offsets(void)
{
	static const size_t offsets[] = { 0, 1, 3, 8, 63, 64, 100, 4095, 65536 + 17 };
	static const size_t sizes[] = { 1, 2, 7, 8, 9, 64, 65, 1000, 4096, 70000 };
	const size_t region = 256 * 1024;
	uint8_t *src, *dst, *map;
	struct gpu_vmm m;
	gdr_mh_t mh;
	void *base;
	int ret = 0;

	NEED_G();
	CHECK_EQ(gpu_vmm_alloc(&m, 2 * MiB, CU_MEM_HANDLE_TYPE_POSIX_FILE_DESCRIPTOR), CUDA_SUCCESS);
	src = malloc(region);
	dst = malloc(region);
	CHECK(src && dst);
	/* A pin that starts and ends inside GPU pages. */
	if (pin_map(m.ptr + 65536 + 333, region, &mh, &base, &map)) {
		ret = 1;
		goto out_free;
	}
	for (size_t oi = 0; oi < sizeof(offsets) / sizeof(offsets[0]) && !ret; oi++) {
		for (size_t si = 0; si < sizeof(sizes) / sizeof(sizes[0]) && !ret; si++) {
			size_t off = offsets[oi], n = sizes[si];
			CUdeviceptr dev = m.ptr + 65536 + 333 + off;

			if (off + n + 64 > region)
				continue;
			memset(src, 0xa5, n + 128);
			CHECK_EQ(cu->cuMemcpyHtoD(dev - 64, src, n + 128), CUDA_SUCCESS);
			/* Else the guard fill can land after the CPU's write (seen on the H200). */
			CHECK_EQ(cu->cuCtxSynchronize(), CUDA_SUCCESS);
			for (size_t i = 0; i < n; i++)
				src[i] = (uint8_t)(i * 7 + off + si);
			gdr_copy_to_mapping(mh, map + off, src, n);
			CHECK_EQ(cu->cuMemcpyDtoH(dst, dev - 64, n + 128), CUDA_SUCCESS);
			for (size_t i = 0; i < n + 128 && !ret; i++) {
				uint8_t want = i >= 64 && i < 64 + n ? src[i - 64] : 0xa5;

				if (dst[i] != want)
					ret = test_fail("to_mapping off %zu n %zu: byte %zu is 0x%02x, "
							  "want 0x%02x", off, n, i, dst[i], want);
			}
			memset(dst, 0x5a, n + 128);
			gdr_copy_from_mapping(mh, dst + 64, map + off, n);
			for (size_t i = 0; i < n + 128 && !ret; i++) {
				uint8_t want = i >= 64 && i < 64 + n ? src[i - 64] : 0x5a;

				if (dst[i] != want)
					ret = test_fail("from_mapping off %zu n %zu: byte %zu is 0x%02x, "
							  "want 0x%02x", off, n, i, dst[i], want);
			}
		}
	}
	unmap_unpin(mh, base);
out_free:
	free(src);
	free(dst);
	gpu_vmm_free(&m);
	return ret;
}

static int case_many_buffers(void)
{
	enum { N = 16 };
	struct gpu_vmm m[N];
	gdr_mh_t mh[N];
	void *base[N];
	uint8_t *map[N];
	int fds = test_fd_count(), ret = 0, n = 0;

	NEED_G();
	memset(m, 0, sizeof(m));
	for (n = 0; n < N && !ret; n++) {
		if (gpu_vmm_alloc(&m[n], 2 * MiB, CU_MEM_HANDLE_TYPE_POSIX_FILE_DESCRIPTOR)) {
			ret = test_fail("allocation %d failed", n);
			break;
		}
		if (pin_map(m[n].ptr, 2 * MiB, &mh[n], &base[n], &map[n])) {
			gpu_vmm_free(&m[n]);
			ret = 1;
			break;
		}
		memset(map[n], n + 1, 2 * MiB);
	}
	for (int i = 0; i < n && !ret; i++) {
		uint8_t probe[2];

		if (cu->cuMemcpyDtoH(&probe[0], m[i].ptr, 1) ||
		    cu->cuMemcpyDtoH(&probe[1], m[i].ptr + 2 * MiB - 1, 1) || probe[0] != i + 1 ||
		    probe[1] != i + 1)
			ret = test_fail("buffer %d reads back %d/%d", i, probe[0], probe[1]);
	}
	for (int i = 0; i < n; i++) {
		unmap_unpin(mh[i], base[i]);
		gpu_vmm_free(&m[i]);
	}
	if (!ret && test_fd_count() != fds)
		ret = test_fail("%d fds before, %d after", fds, test_fd_count());
	return ret;
}

struct worker {
	int id;
	CUdeviceptr ptr;
	char why[200];
};

/* A fresh thread has no CUDA context: the library must cope and leave it so. */
static void *worker_main(void *arg)
{
	struct worker *w = arg;
	uint64_t v, back;

	for (int i = 0; i < 200 && !w->why[0]; i++) {
		unsigned long addr = w->ptr + (size_t)w->id * 4 * 65536 + (size_t)(i % 4) * 65536;
		CUcontext ctx = NULL;
		gdr_mh_t mh;
		void *va;

		if (gdr_pin_buffer_v2(g, addr, 8, 0, &mh)) {
			snprintf(w->why, sizeof(w->why), "pin %d failed", i);
			break;
		}
		v = ((uint64_t)w->id << 32) | (uint64_t)i;
		if (gdr_map(g, mh, &va, 65536) || gdr_copy_to_mapping(mh, va, &v, 8) ||
		    gdr_copy_from_mapping(mh, &back, va, 8) || back != v)
			snprintf(w->why, sizeof(w->why), "map/copy %d failed", i);
		gdr_unmap(g, mh, va, 65536);
		gdr_unpin_buffer(g, mh);
		if (cu->cuCtxGetCurrent(&ctx) == CUDA_SUCCESS && ctx)
			snprintf(w->why, sizeof(w->why), "a CUDA context was left current");
	}
	return NULL;
}

static int case_threads(void)
{
	enum { T = 4 };
	struct worker w[T];
	pthread_t t[T];
	struct gpu_vmm m;

	NEED_G();
	CHECK_EQ(gpu_vmm_alloc(&m, 2 * MiB, CU_MEM_HANDLE_TYPE_POSIX_FILE_DESCRIPTOR), CUDA_SUCCESS);
	for (int i = 0; i < T; i++) {
		w[i] = (struct worker){ .id = i, .ptr = m.ptr };
		pthread_create(&t[i], NULL, worker_main, &w[i]);
	}
	for (int i = 0; i < T; i++)
		pthread_join(t[i], NULL);
	gpu_vmm_free(&m);
	for (int i = 0; i < T; i++)
		if (w[i].why[0])
			return test_fail("thread %d: %s", i, w[i].why);
	return 0;
}

static int expect_refusal(CUdeviceptr p, int want, const char *log_part)
{
	const char *log;
	gdr_mh_t mh;
	int ret;

	test_capture_begin();
	ret = gdr_pin_buffer_v2(g, p, 65536, 0, &mh);
	log = test_capture_end();
	if (ret == 0)
		gdr_unpin_buffer(g, mh);
	if (ret != want)
		return test_fail("pin = %d, want %d", ret, want);
	if (!strstr(log, log_part))
		return test_fail("the log lacks \"%s\": %s", log_part, log);
	return 0;
}

static int case_refuse_cumemalloc(void)
{
	CUdeviceptr p;
	int ret;

	NEED_G();
	CHECK_EQ(cu->cuMemAlloc(&p, 2 * MiB), CUDA_SUCCESS);
	ret = expect_refusal(p, ENOTSUP, "CU_MEM_HANDLE_TYPE_POSIX_FILE_DESCRIPTOR");
	cu->cuMemFree(p);
	return ret;
}

static int case_refuse_vmm_without_fd(void)
{
	struct gpu_vmm m;
	int ret;

	NEED_G();
	CHECK_EQ(gpu_vmm_alloc(&m, 2 * MiB, CU_MEM_HANDLE_TYPE_NONE), CUDA_SUCCESS);
	ret = expect_refusal(m.ptr, ENOTSUP, "without CU_MEM_HANDLE_TYPE_POSIX_FILE_DESCRIPTOR");
	gpu_vmm_free(&m);
	return ret;
}

/*
 * Memory that is not device memory, named by what the real driver's pointer attributes say of
 * it (the unit tier checks the same against the simulated driver's answers, which CUDA's
 * documentation allows but which no test had asked the real driver for): memory CUDA does not
 * know, page-locked host memory, managed memory.
 */
static int case_refuse_not_device_memory(void)
{
	CUdeviceptr managed;
	void *host, *heap;
	int ret;

	NEED_G();
	heap = aligned_alloc(65536, 65536);
	CHECK(heap, "aligned_alloc");
	if (cu->cuMemAllocHost(&host, 65536) != CUDA_SUCCESS) {
		free(heap);
		return test_fail("cuMemAllocHost failed");
	}
	if (cu->cuMemAllocManaged(&managed, 2 * MiB, CU_MEM_ATTACH_GLOBAL) != CUDA_SUCCESS) {
		cu->cuMemFreeHost(host);
		free(heap);
		return test_fail("cuMemAllocManaged failed");
	}
	ret = expect_refusal((CUdeviceptr)(uintptr_t)heap, EINVAL, "not memory CUDA knows");
	if (!ret)
		ret = expect_refusal((CUdeviceptr)(uintptr_t)host, EINVAL, "page-locked host memory");
	if (!ret)
		ret = expect_refusal(managed, EINVAL, "managed (unified) memory");
	cu->cuMemFree(managed);
	cu->cuMemFreeHost(host);
	free(heap);
	return ret;
}

/*
 * The application frees a pinned allocation. The backend keeps a handle on it, so the mapping
 * should keep working on the old memory until unpin (persistent semantics): report what the
 * driver does.
 */
static int case_free_while_pinned(void)
{
	const uint64_t a = 0x0123456789abcdefULL, b = 0xfedcba9876543210ULL, c = 42;
	uint64_t got[3] = { 0, 0, 0 };
	struct gpu_vmm m;
	uint8_t *map;
	gdr_mh_t mh;
	void *base;
	int ret = 0, sig;

	NEED_G();
	CHECK_EQ(gpu_vmm_alloc(&m, 2 * MiB, CU_MEM_HANDLE_TYPE_POSIX_FILE_DESCRIPTOR), CUDA_SUCCESS);
	if (pin_map(m.ptr, 65536, &mh, &base, &map)) {
		gpu_vmm_free(&m);
		return 1;
	}
	gdr_copy_to_mapping(mh, map, &a, 8);
	gdr_copy_to_mapping(mh, map + 65528, &b, 8);
	gpu_vmm_free(&m);
	sig = guarded_copy(false, mh, &got[0], map, 8);
	if (!sig)
		sig = guarded_copy(false, mh, &got[1], map + 65528, 8);
	if (!sig)
		sig = guarded_copy(true, mh, map + 8, &c, 8);
	if (!sig)
		sig = guarded_copy(false, mh, &got[2], map + 8, 8);
	if (sig)
		ret = test_fail("signal %d touching the mapping after the application freed the "
				  "allocation: the pin does not keep it alive", sig);
	else if (got[0] != a || got[1] != b)
		ret = test_fail("after the free the mapping reads 0x%llx/0x%llx, not the data",
				  (unsigned long long)got[0], (unsigned long long)got[1]);
	else if (got[2] != c)
		ret = test_fail("after the free a store through the mapping is lost");
	unmap_unpin(mh, base);
	if (!ret)
		printf("# free while pinned: the mapping kept the old memory until unpin\n");
	return ret;
}

static int case_cycles(void)
{
	struct gpu_vmm m;
	int fds, ret = 0;

	NEED_G();
	CHECK_EQ(gpu_vmm_alloc(&m, 2 * MiB, CU_MEM_HANDLE_TYPE_POSIX_FILE_DESCRIPTOR), CUDA_SUCCESS);
	fds = test_fd_count();
	for (int i = 0; i < 1000 && !ret; i++) {
		gdr_mh_t mh;
		void *va;

		if (gdr_pin_buffer_v2(g, m.ptr, 65536, 0, &mh) || gdr_map(g, mh, &va, 65536)) {
			ret = test_fail("cycle %d: pin/map failed", i);
			break;
		}
		gdr_unmap(g, mh, va, 65536);
		gdr_unpin_buffer(g, mh);
	}
	if (!ret && test_fd_count() != fds)
		ret = test_fail("%d fds before 1000 cycles, %d after", fds, test_fd_count());
	gpu_vmm_free(&m);
	return ret;
}

static int case_close(void)
{
	NEED_G();
	CHECK_EQ(gdr_close(g), 0);
	g = NULL;
	return 0;
}

static const struct test_case cases[] = {
	{ "open_default", case_open_default },
	{ "cpu_write_gpu_read", case_cpu_write_gpu_read },
	{ "gpu_write_cpu_read", case_gpu_write_cpu_read },
	{ "partial_offsets", case_partial_offsets },
	{ "many_buffers", case_many_buffers },
	{ "threads", case_threads },
	{ "refuse_cumemalloc", case_refuse_cumemalloc },
	{ "refuse_vmm_without_fd", case_refuse_vmm_without_fd },
	{ "refuse_not_device_memory", case_refuse_not_device_memory },
	{ "free_while_pinned", case_free_while_pinned },
	{ "cycles", case_cycles },
	{ "close", case_close },
	{ NULL, NULL },
};

int main(int argc, char **argv)
{
	int ret = gpu_init();

	if (!ret)
		ret = gpu_need_nvidia();
	if (ret)
		return ret;
	gpu_describe();
	signal(SIGBUS, on_fault);
	signal(SIGSEGV, on_fault);
	setenv("GDRCOPY_ENABLE_LOGGING", "1", 0);
	setenv("GDRCOPY_LOG_LEVEL", "3", 0);
	return test_run(cases, argc, argv);
}
