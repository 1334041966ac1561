/* SPDX-License-Identifier: MIT */
/*
 * The dma-buf backend against the simulated CUDA driver (13.3, GDRCOPY_BACKEND=dmabuf): pin, map,
 * copy and unpin at many sizes and offsets with the data checked through the device pointer and
 * cuMemcpyDtoH; unaligned pins mapped from info.va; the mapping-type table on a coherent and a
 * non-coherent device; the EINVAL, ENOTSUP and EMFILE paths; descriptor accounting after every
 * case and over 10k cycles; the mmap refusal of an R580-like driver; attributes, the driver
 * version and the v1 gdr_get_info. Each group of cases runs in a child with its own simulated
 * device (the simulator reads its environment once per process).
 */
#include <dlfcn.h>
#include <pthread.h>
#include <stdint.h>
#include <sys/mman.h>
#include <sys/resource.h>

#include "testcuda.h"
#include "dmabuf_test.h"
#include "fork_check.h"
#include "gdrapi.h"
#include "gdrapi_ext.h"
#include "info_v1.h"
#include "simcuda.h"
#include "simcuda_dmabuf.h"

#define GPU_PAGE 65536UL

/* The state of the group running in this process. */
static struct {
	const char *name;
	bool coherent;
	const struct testcuda *cu;
	gdr_t g;
	void (*dmabuf_counters)(struct simcuda_dmabuf_counters *c);
	void (*counters)(struct simcuda_counters *c);
	int (*get_info_v1)(gdr_t g, gdr_mh_t mh, struct gdr_info_v1 *info);
} t;

static long sim_open_exports(void)
{
	struct simcuda_dmabuf_counters c;

	t.dmabuf_counters(&c);
	return c.open;
}

static CUdeviceptr dev_alloc(size_t size)
{
	CUdeviceptr p = 0;

	return t.cu->cuMemAlloc(&p, size) == CUDA_SUCCESS ? p : 0;
}

static void fill(uint8_t *p, size_t n, unsigned seed)
{
	for (size_t i = 0; i < n; i++)
		p[i] = (uint8_t)(seed + i * 131 + (i >> 8));
}

/* Pin [addr, addr + size), map the whole pin; 0 or the failing call's errno. */
static int pin_map(unsigned long addr, size_t size, uint32_t flags, gdr_mh_t *mh,
		   gdr_info_t *info, uint8_t **map)
{
	void *va;
	int ret = gdr_pin_buffer_v2(t.g, addr, size, flags, mh);

	if (ret)
		return ret;
	ret = gdr_get_info(t.g, *mh, info);
	if (!ret)
		ret = gdr_map(t.g, *mh, &va, info->mapped_size);
	if (ret) {
		gdr_unpin_buffer(t.g, *mh);
		return ret;
	}
	*map = va;
	return gdr_get_info(t.g, *mh, info);
}

static void unmap_unpin(gdr_mh_t mh, uint8_t *map, const gdr_info_t *info)
{
	CHECK_RET(gdr_unmap(t.g, mh, map, info->mapped_size), 0);
	CHECK_RET(gdr_unpin_buffer(t.g, mh), 0);
}

/* stderr into a memfd between capture_begin and capture_end, for the library's log lines. */
static int capture_saved = -1, capture_fd = -1;

static void capture_begin(void)
{
	fflush(stderr);
	capture_fd = memfd_create("log", MFD_CLOEXEC);
	capture_saved = dup(2);
	dup2(capture_fd, 2);
}

static void capture_end(char *buf, size_t len)
{
	ssize_t n;

	fflush(stderr);
	dup2(capture_saved, 2);
	close(capture_saved);
	n = pread(capture_fd, buf, len - 1, 0);
	buf[n > 0 ? n : 0] = '\0';
	close(capture_fd);
	fputs(buf, stderr);
}

static void case_attributes(void)
{
	int v = -1;

	CHECK_RET(gdr_get_attribute(t.g, GDR_ATTR_USING_DMA_BUF_MMAP, &v), 0);
	CHECK(v == 1);
	CHECK_RET(gdr_get_attribute(t.g, GDR_ATTR_USE_PERSISTENT_MAPPING, &v), 0);
	CHECK(v == 1);
	CHECK_RET(gdr_get_attribute(t.g, GDR_ATTR_SUPPORT_PIN_FLAG_FORCE_PCIE, &v), 0);
	CHECK(v == 1);
	CHECK_RET(gdr_get_attribute(t.g, GDR_ATTR_EXT_BACKEND, &v), 0);
	CHECK(v == GDR_BACKEND_DMABUF);
}

static void case_driver_version(void)
{
	int major = -1, minor = -1;

	CHECK_RET(gdr_driver_get_version(t.g, &major, &minor), 0);
	CHECK(major == 2 && minor == 6);
}

/* v2 and the exported v1 gdr_get_info, before and after mapping; and the callback flag. */
static void case_info(void)
{
	CUdeviceptr buf = dev_alloc(1 << 20);
	gdr_mapping_type_t type = t.coherent ? GDR_MAPPING_TYPE_CACHING : GDR_MAPPING_TYPE_WC;
	struct gdr_info_v1 v1;
	gdr_info_t info;
	gdr_mh_t mh;
	void *map;
	int flag = -1;

	CHECK(buf);
	CHECK_RET(gdr_pin_buffer_v2(t.g, buf + 2 * 4096 + 3, 50, 0, &mh), 0);
	memset(&info, 0xff, sizeof(info));
	CHECK_RET(gdr_get_info(t.g, mh, &info), 0);
	CHECK(info.va == buf && info.mapped_size == GPU_PAGE && info.page_size == GPU_PAGE);
	CHECK(!info.mapped && !info.wc_mapping && info.mapping_type == GDR_MAPPING_TYPE_NONE);
	CHECK(info.tm_cycles == 0 && info.cycles_per_ms == 0);
	CHECK_RET(gdr_get_callback_flag(t.g, mh, &flag), 0);
	CHECK(flag == 0);
	CHECK_RET(gdr_map(t.g, mh, &map, info.mapped_size), 0);
	CHECK_RET(gdr_get_info(t.g, mh, &info), 0);
	CHECK(info.mapped && info.mapping_type == type);
	CHECK(info.wc_mapping == (type == GDR_MAPPING_TYPE_WC));
	memset(&v1, 0xff, sizeof(v1));
	CHECK_RET(t.get_info_v1(t.g, mh, &v1), 0);
	CHECK(v1.va == buf && v1.mapped_size == GPU_PAGE && v1.page_size == GPU_PAGE);
	CHECK(v1.mapped && v1.wc_mapping == (type == GDR_MAPPING_TYPE_WC));
	CHECK(v1.tm_cycles == 0 && v1.cycles_per_ms == 0);
	CHECK_RET(gdr_unmap(t.g, mh, map, info.mapped_size), 0);
	CHECK_RET(gdr_unpin_buffer(t.g, mh), 0);
	t.cu->cuMemFree(buf);
}

/* One pin of [buf + off, + size): data both ways, bytes around it untouched. */
static void copy_one(CUdeviceptr buf, size_t alloc, size_t off, size_t size, uint8_t *src,
		     uint8_t *dst)
{
	uint8_t *dev = (uint8_t *)buf, *map;
	unsigned long addr = buf + off;
	size_t lo = off > 64 ? off - 64 : 0;
	size_t hi = off + size + 64 < alloc ? off + size + 64 : alloc;
	int failures = check_failures;
	gdr_info_t info;
	gdr_mh_t mh;

	CHECK_RET(pin_map(addr, size, 0, &mh, &info, &map), 0);
	if (check_failures != failures)
		return;
	CHECK(info.va <= addr && addr + size <= info.va + info.mapped_size);
	CHECK(info.va % GPU_PAGE == 0 && info.page_size == GPU_PAGE);
	memset(dev + lo, 0x5a, hi - lo);
	fill(src, size, (unsigned)(off * 3 + size));
	CHECK_RET(gdr_copy_to_mapping(mh, map + (addr - info.va), src, size), 0);
	CHECK(!memcmp(dev + off, src, size));
	for (size_t i = lo; i < hi; i++)
		if (i < off || i >= off + size)
			CHECK(dev[i] == 0x5a);
	memset(dst, 0, size);
	CHECK(t.cu->cuMemcpyDtoH(dst, addr, size) == CUDA_SUCCESS);
	CHECK(!memcmp(dst, src, size));

	fill(src, size, (unsigned)(off + size * 5 + 1));
	CHECK(t.cu->cuMemcpyHtoD(addr, src, size) == CUDA_SUCCESS);
	memset(dst, 0, size);
	CHECK_RET(gdr_copy_from_mapping(mh, dst, map + (addr - info.va), size), 0);
	CHECK(!memcmp(dst, src, size));
	unmap_unpin(mh, map, &info);
	if (check_failures != failures)
		fprintf(stderr, "  (offset %zu, size %zu)\n", off, size);
}

static void case_copy_sizes_offsets(void)
{
	static const size_t sizes[] = { 1, 7, 64, 4095, 4096, 4097, 65535, 65536, 65537, 200000,
					1 << 20 };
	static const size_t offsets[] = { 0, 1, 63, 4096, 4097, 65535, 65536 + 8, 3 * 65536 - 1 };
	const size_t alloc = 3 << 20;
	CUdeviceptr buf = dev_alloc(alloc);
	uint8_t *src = malloc(1 << 20), *dst = malloc(1 << 20);

	CHECK(buf && src && dst);
	for (size_t i = 0; buf && src && dst && i < sizeof(offsets) / sizeof(offsets[0]); i++)
		for (size_t j = 0; j < sizeof(sizes) / sizeof(sizes[0]); j++)
			copy_one(buf, alloc, offsets[i], sizes[j], src, dst);
	free(src);
	free(dst);
	t.cu->cuMemFree(buf);
}

/* Pins at unaligned addresses report a GPU-page va inside the allocation and map from it. */
static void case_unaligned_pins(void)
{
	static const struct {
		size_t alloc, off, size;
		size_t va_off, mapped;
	} cases[] = {
		{ 1 << 20, 100, 10, 0, GPU_PAGE },
		{ 1 << 20, GPU_PAGE + 4000, 200, GPU_PAGE, GPU_PAGE },
		{ 1 << 20, GPU_PAGE - 10, 20, 0, 2 * GPU_PAGE },
		/* The allocation ends inside the GPU page: the pin ends at its last host page. */
		{ 3 * 4096 + 5, 3 * 4096 + 1, 3, 0, 4 * 4096 },
		{ 100, 1, 50, 0, 4096 },
	};

	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		CUdeviceptr buf = dev_alloc(cases[i].alloc);
		unsigned long addr = buf + cases[i].off;
		const uint8_t v[3] = { 0x11, 0x22, (uint8_t)i };
		size_t n = sizeof(v) < cases[i].size ? sizeof(v) : cases[i].size;
		gdr_info_t info;
		uint8_t *map;
		gdr_mh_t mh;
		int failures = check_failures;

		CHECK(buf);
		CHECK_RET(pin_map(addr, cases[i].size, 0, &mh, &info, &map), 0);
		if (check_failures != failures)
			continue;
		CHECK(info.va == buf + cases[i].va_off && info.mapped_size == cases[i].mapped);
		CHECK(info.page_size == GPU_PAGE);
		CHECK_RET(gdr_copy_to_mapping(mh, map + (addr - info.va), v, n), 0);
		CHECK(!memcmp((void *)addr, v, n));
		unmap_unpin(mh, map, &info);
		if (check_failures != failures)
			fprintf(stderr, "  (unaligned case %zu)\n", i);
		t.cu->cuMemFree(buf);
	}
}

/* Map with every REQ flag a pin made with pin_flags; EINVAL where it differs from the pin. */
static void mapping_table_row(CUdeviceptr buf, uint32_t pin_flags)
{
	static const int map_flags[] = { GDR_MAP_FLAG_DEFAULT, GDR_MAP_FLAG_REQ_WC_MAPPING,
					 GDR_MAP_FLAG_REQ_CACHE_MAPPING,
					 GDR_MAP_FLAG_REQ_DEVICE_MAPPING };
	gdr_mapping_type_t want = t.coherent && !(pin_flags & GDR_PIN_FLAG_FORCE_PCIE) ?
				  GDR_MAPPING_TYPE_CACHING : GDR_MAPPING_TYPE_WC;
	gdr_mh_t mh;

	CHECK_RET(gdr_pin_buffer_v2(t.g, buf, GPU_PAGE, pin_flags, &mh), 0);
	for (size_t i = 0; i < sizeof(map_flags) / sizeof(map_flags[0]); i++) {
		int f = map_flags[i];
		bool ok = f == GDR_MAP_FLAG_DEFAULT ||
			  (f == GDR_MAP_FLAG_REQ_WC_MAPPING && want == GDR_MAPPING_TYPE_WC) ||
			  (f == GDR_MAP_FLAG_REQ_CACHE_MAPPING && want == GDR_MAPPING_TYPE_CACHING);
		uint32_t word = 0xc0ffee00u + (uint32_t)i, back = 0;
		gdr_info_t info;
		void *map = NULL;

		CHECK_RET(gdr_map_v2(t.g, mh, &map, GPU_PAGE, f), ok ? 0 : EINVAL);
		CHECK_RET(gdr_get_info(t.g, mh, &info), 0);
		if (!ok) {
			CHECK(!info.mapped && info.mapping_type == GDR_MAPPING_TYPE_NONE);
			continue;
		}
		CHECK(info.mapped && info.mapping_type == want);
		CHECK(info.wc_mapping == (want == GDR_MAPPING_TYPE_WC));
		CHECK_RET(gdr_copy_to_mapping(mh, map, &word, sizeof(word)), 0);
		CHECK(!memcmp((void *)buf, &word, sizeof(word)));
		CHECK_RET(gdr_copy_from_mapping(mh, &back, map, sizeof(back)), 0);
		CHECK(back == word);
		CHECK_RET(gdr_unmap(t.g, mh, map, GPU_PAGE), 0);
		if (check_failures)
			fprintf(stderr, "  (pin flags %u, map flag %d)\n", pin_flags, f);
	}
	CHECK_RET(gdr_unpin_buffer(t.g, mh), 0);
}

static void case_mapping_table(void)
{
	CUdeviceptr buf = dev_alloc(GPU_PAGE);

	CHECK(buf);
	mapping_table_row(buf, GDR_PIN_FLAG_DEFAULT);
	mapping_table_row(buf, GDR_PIN_FLAG_FORCE_PCIE);
	t.cu->cuMemFree(buf);
}

/*
 * The simulated driver refuses the PCIE flag off a coherent platform, as the real one (which is
 * why the backend passes it only where the device is coherent).
 */
static void case_sim_pcie_flag(void)
{
	CUdeviceptr buf = dev_alloc(GPU_PAGE);
	CUresult res;
	int fd = -1;

	CHECK(buf);
	res = t.cu->cuMemGetHandleForAddressRange(&fd, buf, GPU_PAGE,
						  CU_MEM_RANGE_HANDLE_TYPE_DMA_BUF_FD,
						  CU_MEM_RANGE_FLAG_DMA_BUF_MAPPING_TYPE_PCIE);
	CHECK(res == (t.coherent ? CUDA_SUCCESS : CUDA_ERROR_NOT_SUPPORTED));
	if (res == CUDA_SUCCESS)
		close(fd);
	t.cu->cuMemFree(buf);
}

static void case_einval(void)
{
	CUdeviceptr buf = dev_alloc(GPU_PAGE), freed = dev_alloc(GPU_PAGE);
	void *host = aligned_alloc(GPU_PAGE, GPU_PAGE);
	gdr_info_t info;
	uint8_t *map;
	gdr_mh_t mh;

	CHECK(buf && freed && host);
	CHECK(t.cu->cuMemFree(freed) == CUDA_SUCCESS);
	CHECK_RET(gdr_pin_buffer_v2(t.g, (unsigned long)host, GPU_PAGE, 0, &mh), EINVAL);
	CHECK_RET(gdr_pin_buffer_v2(t.g, freed, GPU_PAGE, 0, &mh), EINVAL);
	/* Past the end of the allocation: the export is refused. */
	CHECK_RET(gdr_pin_buffer_v2(t.g, buf, 2 * GPU_PAGE, 0, &mh), EINVAL);
	/* The legacy call with tokens asks for non-persistent pins, which dma-buf cannot give. */
	CHECK_RET(gdr_pin_buffer(t.g, buf, GPU_PAGE, 0x1234, 0, &mh), EINVAL);
	CHECK_RET(gdr_pin_buffer(t.g, buf, GPU_PAGE, 0, 1, &mh), EINVAL);
	CHECK_RET(gdr_pin_buffer(t.g, buf, GPU_PAGE, 0, 0, &mh), 0);
	CHECK_RET(gdr_get_info(t.g, mh, &info), 0);
	CHECK_RET(gdr_map(t.g, mh, (void **)&map, info.mapped_size), 0);
	CHECK_RET(gdr_map(t.g, mh, (void **)&map, info.mapped_size), EAGAIN);
	unmap_unpin(mh, map, &info);
	free(host);
	t.cu->cuMemFree(buf);
}

static void case_enotsup(void)
{
	void *host = NULL;
	gdr_mh_t mh;

	/* cuMemAllocHost memory has a device ordinal but is not device memory to export. */
	CHECK(t.cu->cuMemAllocHost(&host, GPU_PAGE) == CUDA_SUCCESS);
	CHECK_RET(gdr_pin_buffer_v2(t.g, (unsigned long)host, GPU_PAGE, 0, &mh), ENOTSUP);
	t.cu->cuMemFreeHost(host);
}

/* Two pins of one buffer (GDRCopy's mix-mappings pattern) see each other's writes. */
static void case_two_pins_one_buffer(void)
{
	CUdeviceptr buf = dev_alloc(GPU_PAGE);
	uint64_t w = 0x0123456789abcdefULL, r = 0;
	gdr_info_t i1, i2;
	uint8_t *m1, *m2;
	gdr_mh_t h1, h2;

	CHECK(buf);
	CHECK_RET(pin_map(buf + 8, 64, 0, &h1, &i1, &m1), 0);
	CHECK_RET(pin_map(buf + 8, 64, 0, &h2, &i2, &m2), 0);
	if (!check_failures) {
		CHECK_RET(gdr_copy_to_mapping(h1, m1 + 8, &w, sizeof(w)), 0);
		CHECK_RET(gdr_copy_from_mapping(h2, &r, m2 + 8, sizeof(r)), 0);
		CHECK(r == w && !memcmp((void *)(buf + 8), &w, sizeof(w)));
		unmap_unpin(h1, m1, &i1);
		unmap_unpin(h2, m2, &i2);
	}
	t.cu->cuMemFree(buf);
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
static void case_emfile(void)
{
	CUdeviceptr buf = dev_alloc(GPU_PAGE);
	struct rlimit saved, low;
	char log[8192], want[128];
	int n = 0, ret = 0, free_fds;
	gdr_mh_t *mh;

	CHECK(buf);
	if (getrlimit(RLIMIT_NOFILE, &saved)) {
		CHECK(!"getrlimit");
		return;
	}
	capture_begin();
	/* Descriptors fill the lowest free numbers: every hole below the limit is a free one. */
	low = saved;
	low.rlim_cur = (rlim_t)highest_fd() + 1 + 16;
	free_fds = (int)low.rlim_cur - fd_count();
	mh = calloc((size_t)free_fds + 1, sizeof(*mh));
	CHECK(mh && !setrlimit(RLIMIT_NOFILE, &low));
	while (mh && n <= free_fds && !(ret = gdr_pin_buffer_v2(t.g, buf, GPU_PAGE, 0, &mh[n])))
		n++;
	CHECK(!setrlimit(RLIMIT_NOFILE, &saved));
	capture_end(log, sizeof(log));
	CHECK_RET(ret, EMFILE);
	CHECK(n == free_fds);
	snprintf(want, sizeof(want), "RLIMIT_NOFILE %llu", (unsigned long long)low.rlim_cur);
	CHECK(strstr(log, want) != NULL);
	snprintf(want, sizeof(want), "holds %d pins", n);
	CHECK(strstr(log, want) != NULL);
	if (n > 0) {
		void *map;

		CHECK_RET(gdr_map(t.g, mh[0], &map, GPU_PAGE), 0);
		CHECK_RET(gdr_unmap(t.g, mh[0], map, GPU_PAGE), 0);
	}
	for (int i = 0; i < n; i++)
		CHECK_RET(gdr_unpin_buffer(t.g, mh[i]), 0);
	free(mh);
	t.cu->cuMemFree(buf);
}

static void case_cycles(void)
{
	enum { CYCLES = 10000 };
	CUdeviceptr buf = dev_alloc(GPU_PAGE);
	struct simcuda_dmabuf_counters before, after;
	int fds = fd_count();

	CHECK(buf);
	t.dmabuf_counters(&before);
	for (int i = 0; i < CYCLES; i++) {
		uint64_t v = (uint64_t)i;
		gdr_mh_t mh;
		void *map;

		if (gdr_pin_buffer_v2(t.g, buf + (unsigned)i % 4096, 8, 0, &mh)) {
			CHECK(!"pin");
			break;
		}
		if (gdr_map(t.g, mh, &map, 8192) ||
		    gdr_copy_to_mapping(mh, (uint8_t *)map + (unsigned)i % 4096, &v, sizeof(v)) ||
		    gdr_unmap(t.g, mh, map, 8192)) {
			CHECK(!"map, copy or unmap");
			gdr_unpin_buffer(t.g, mh);
			break;
		}
		if (gdr_unpin_buffer(t.g, mh) || memcmp((void *)(buf + (unsigned)i % 4096), &v, 8)) {
			CHECK(!"unpin or data");
			break;
		}
	}
	t.dmabuf_counters(&after);
	CHECK(after.exported - before.exported == CYCLES);
	CHECK(after.open == 0);
	CHECK(fd_count() == fds);
	t.cu->cuMemFree(buf);
}

static void *no_context_thread(void *arg)
{
	CUdeviceptr buf = *(CUdeviceptr *)arg;
	CUcontext ctx = (CUcontext)1;
	uint32_t v = 0xfeedf00d;
	gdr_info_t info;
	uint8_t *map;
	gdr_mh_t mh;

	CHECK(t.cu->cuCtxGetCurrent(&ctx) == CUDA_SUCCESS && ctx == NULL);
	CHECK_RET(pin_map(buf + 4, 4, 0, &mh, &info, &map), 0);
	if (!check_failures) {
		CHECK_RET(gdr_copy_to_mapping(mh, map + 4, &v, sizeof(v)), 0);
		CHECK(!memcmp((void *)(buf + 4), &v, sizeof(v)));
		unmap_unpin(mh, map, &info);
	}
	CHECK(t.cu->cuCtxGetCurrent(&ctx) == CUDA_SUCCESS && ctx == NULL);
	return NULL;
}

/* A thread with no CUDA context current: the backend makes one current and leaves none. */
static void case_no_context(void)
{
	CUdeviceptr buf = dev_alloc(GPU_PAGE);
	struct simcuda_counters before, after;
	pthread_t th;

	CHECK(buf);
	t.counters(&before);
	CHECK(!pthread_create(&th, NULL, no_context_thread, &buf));
	pthread_join(th, NULL);
	t.counters(&after);
	CHECK(after.primary_ctx_refs == before.primary_ctx_refs);
	t.cu->cuMemFree(buf);
}

/* gdr_close with pins and mappings left closes their fds (the harness counts them). */
static void case_close_releases(void)
{
	CUdeviceptr buf = dev_alloc(4 * GPU_PAGE);
	gdr_t g2 = gdr_open();
	gdr_mh_t mh[3];
	void *map;

	CHECK(buf && g2);
	if (!g2)
		return;
	for (int i = 0; i < 3; i++)
		CHECK_RET(gdr_pin_buffer_v2(g2, buf + (unsigned long)i * GPU_PAGE, GPU_PAGE, 0,
					    &mh[i]), 0);
	CHECK_RET(gdr_map(g2, mh[0], &map, GPU_PAGE), 0);
	CHECK_RET(gdr_map(g2, mh[2], &map, GPU_PAGE), 0);
	CHECK(sim_open_exports() == 3);
	CHECK_RET(gdr_close(g2), 0);
	t.cu->cuMemFree(buf);
}

/* An R580-like driver: the export works, its mmap is refused, gdr_map says why. */
static void case_mmap_refused(void)
{
	CUdeviceptr buf = dev_alloc(GPU_PAGE);
	gdr_info_t info;
	char log[4096];
	gdr_mh_t mh;
	void *map = NULL;

	CHECK(buf);
	CHECK_RET(gdr_pin_buffer_v2(t.g, buf, GPU_PAGE, 0, &mh), 0);
	capture_begin();
	CHECK_RET(gdr_map(t.g, mh, &map, GPU_PAGE), EOPNOTSUPP);
	capture_end(log, sizeof(log));
	CHECK(strstr(log, "does not allow mmap of dma-buf memory") != NULL);
	CHECK(strstr(log, "R610 (CUDA 13.3) or newer") != NULL);
	CHECK_RET(gdr_get_info(t.g, mh, &info), 0);
	CHECK(!info.mapped && info.mapping_type == GDR_MAPPING_TYPE_NONE);
	CHECK_RET(gdr_map_v2(t.g, mh, &map, GPU_PAGE, GDR_MAP_FLAG_REQ_CACHE_MAPPING), EINVAL);
	CHECK_RET(gdr_unpin_buffer(t.g, mh), 0);
	t.cu->cuMemFree(buf);
}

/* In the fork child: a gdr_t of its own pins, maps and copies. */
static int child_own_gdr(char *why, size_t len)
{
	CUdeviceptr buf = dev_alloc(GPU_PAGE);
	gdr_info_t info;
	uint8_t *map;
	gdr_mh_t mh;
	gdr_t own = gdr_open();
	int ret = 0;

	if (!buf || !own) {
		snprintf(why, len, "the child's %s failed", buf ? "gdr_open" : "cuMemAlloc");
		return 1;
	}
	t.g = own;
	if (pin_map(buf, GPU_PAGE, 0, &mh, &info, &map) ||
	    gdr_copy_to_mapping(mh, map, "child", 5) || memcmp((void *)buf, "child", 5) ||
	    gdr_unmap(own, mh, map, info.mapped_size) || gdr_unpin_buffer(own, mh) ||
	    gdr_close(own)) {
		snprintf(why, len, "the child's own gdr_t does not work");
		ret = 1;
	}
	t.cu->cuMemFree(buf);
	return ret;
}

/* A fork child can use nothing of the parent's gdr_t, touches nothing of it, and opens its own. */
static void case_fork(void)
{
	CUdeviceptr buf = dev_alloc(GPU_PAGE);
	uint8_t fill[4096], *map;
	struct fork_check fc;
	gdr_info_t info;
	char why[512];
	gdr_mh_t mh;

	CHECK(buf);
	CHECK_RET(pin_map(buf, GPU_PAGE, 0, &mh, &info, &map), 0);
	if (check_failures)
		return;
	memset(fill, 0x11, sizeof(fill));
	CHECK_RET(gdr_copy_to_mapping(mh, map, fill, sizeof(fill)), 0);
	fc = (struct fork_check){ .g = t.g, .mh = mh, .map = map, .map_size = info.mapped_size,
				  .pin_addr = buf, .child_own = child_own_gdr };
	if (fork_check_run(&fc, why, sizeof(why))) {
		fprintf(stderr, "fork child: %s\n", why);
		check_failures++;
	}
	CHECK(!memcmp((void *)buf, fill, sizeof(fill)));
	CHECK_RET(gdr_copy_to_mapping(mh, map, "parent", 6), 0);
	CHECK(!memcmp((void *)buf, "parent", 6));
	unmap_unpin(mh, map, &info);
	t.cu->cuMemFree(buf);
}

struct test_case {
	const char *name;
	void (*fn)(void);
};

static const struct test_case common_cases[] = {
	{ "attributes", case_attributes },
	{ "driver_version", case_driver_version },
	{ "info", case_info },
	{ "copy_sizes_offsets", case_copy_sizes_offsets },
	{ "unaligned_pins", case_unaligned_pins },
	{ "mapping_table", case_mapping_table },
	{ "sim_pcie_flag", case_sim_pcie_flag },
	{ "einval", case_einval },
	{ "enotsup", case_enotsup },
	{ "two_pins_one_buffer", case_two_pins_one_buffer },
	{ "no_context", case_no_context },
	{ "close_releases", case_close_releases },
	{ "fork", case_fork },
	{ NULL, NULL },
};

static const struct test_case noncoherent_extra[] = {
	{ "emfile", case_emfile },
	{ "cycles_10k", case_cycles },
	{ NULL, NULL },
};

static const struct test_case nommap_cases[] = {
	{ "mmap_refused", case_mmap_refused },
	{ "attributes", case_attributes },
	{ NULL, NULL },
};

/* Run each case, then check that it left no descriptor and no export open. */
static void run_cases(const struct test_case *cases)
{
	for (const struct test_case *c = cases; c->name; c++) {
		char name[128];
		int fds = fd_count();

		snprintf(name, sizeof(name), "%s/%s", t.name, c->name);
		check_failures = 0;
		c->fn();
		if (check_failures) {
			report("fail", name, "%d check(s) failed (see the output)", check_failures);
			continue;
		}
		if (fd_count() != fds || sim_open_exports() != 0) {
			report("fail", name, "descriptors: %d before, %d after; %ld exports open",
			       fds, fd_count(), sim_open_exports());
			continue;
		}
		report("pass", name, NULL);
	}
}

struct group {
	const char *name;
	const char *attrs;		/* GDRCOPY_SIM_CUDA_ATTR */
	const char *nommap;		/* GDRCOPY_SIM_CUDA_DMABUF_NOMMAP */
	bool coherent;
	const struct test_case *cases[3];
};

static const struct group groups[] = {
	{ "noncoherent", "124=1", NULL, false, { common_cases, noncoherent_extra } },
	{ "coherent", "124=1,100=1", NULL, true, { common_cases } },
	{ "nommap", "124=1", "1", false, { nommap_cases } },
};

static int group_child(void *arg)
{
	const struct group *gr = arg;
	struct gdr_cuda_ctx_scope scope;
	struct gdr_why why = { "" };
	void *lib;

	t.name = gr->name;
	t.coherent = gr->coherent;
	t.cu = testcuda_acquire(&why);
	if (!t.cu) {
		report("fail", gr->name, "the simulated libcuda does not load: %s", why.msg);
		return 1;
	}
	lib = dlopen("libcuda.so.1", RTLD_NOW | RTLD_NOLOAD);
	t.dmabuf_counters = lib ? dlsym(lib, "simcuda_dmabuf_get_counters") : NULL;
	t.counters = lib ? dlsym(lib, "simcuda_get_counters") : NULL;
	t.get_info_v1 = dlsym(RTLD_DEFAULT, "gdr_get_info");
	if (!t.dmabuf_counters || !t.counters || !t.get_info_v1) {
		report("fail", gr->name, "libcuda.so.1 is not the simulator, or no v1 gdr_get_info");
		return 1;
	}
	if (gdr_cuda_ctx_enter(t.cu->lib, 0, &scope) != CUDA_SUCCESS) {
		report("fail", gr->name, "no context on simulated device 0");
		return 1;
	}
	t.g = gdr_open();
	if (!t.g) {
		report("fail", gr->name, "gdr_open failed with GDRCOPY_BACKEND=dmabuf");
		return 1;
	}
	for (int i = 0; gr->cases[i]; i++)
		run_cases(gr->cases[i]);
	CHECK_RET(gdr_close(t.g), 0);
	gdr_cuda_ctx_leave(t.cu->lib, &scope);
	if (dlclose(lib))
		check_failures++;
	return report_failures || check_failures ? 1 : 0;
}

int main(int argc, char **argv)
{
	int failed = 0;

	(void)argc;
	sim_setup(argv);
	for (size_t i = 0; i < sizeof(groups) / sizeof(groups[0]); i++) {
		const char *const env[] = {
			"GDRCOPY_BACKEND", "dmabuf",
			"GDRCOPY_USE_DMABUF_MMAP", NULL,
			"GDRCOPY_ENABLE_LOGGING", "1",
			"GDRCOPY_LOG_LEVEL", "4",
			"GDRCOPY_SIM_CUDA_VERSION", "13030",
			"GDRCOPY_SIM_CUDA_BACKING", "memfd",
			"GDRCOPY_SIM_CUDA_ATTR", groups[i].attrs,
			"GDRCOPY_SIM_CUDA_DMABUF_NOMMAP", groups[i].nommap,
			NULL,
		};
		int rc = run_child(env, group_child, (void *)&groups[i], NULL, 0);

		if (rc < 0) {
			report("fail", groups[i].name, "the group died of signal %d", -rc);
			failed = 1;
		} else if (rc == 1) {
			failed = 1;
		} else if (rc) {
			/* Its cases passed, then it failed on exit: a sanitizer found something. */
			report("fail", groups[i].name, "the group exited %d (see its output)", rc);
			failed = 1;
		}
	}
	return failed ? TEST_FAIL : TEST_PASS;
}
