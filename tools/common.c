/* SPDX-License-Identifier: MIT */
#include <errno.h>
#include <limits.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "common.h"

int tool_csv;
int tool_sweep_fd = -1;

/* ---- Errors ----------------------------------------------------------------------------------- */

static void vline(FILE *f, const char *kind, const char *fmt, va_list ap)
{
	char msg[1024];

	vsnprintf(msg, sizeof(msg), fmt, ap);
	if (tool_sweep_fd >= 0) {
		tool_sweep_line("%s %s", kind, msg);
		return;
	}
	fprintf(f, "%s: %s%s\n", program_invocation_short_name,
		strcmp(kind, "warn") ? "" : "warning: ", msg);
}

void tool_die(const char *fmt, ...)
{
	va_list ap;

	fflush(stdout);
	va_start(ap, fmt);
	vline(stderr, "error", fmt, ap);
	va_end(ap);
	exit(1);
}

void tool_warn(const char *fmt, ...)
{
	va_list ap;

	fflush(stdout);
	va_start(ap, fmt);
	vline(stderr, "warn", fmt, ap);
	va_end(ap);
}

const char *tool_cu_name(CUresult r)
{
	static __thread char buf[32];
	const char *s = NULL;

	if (cuGetErrorName(r, &s) == CUDA_SUCCESS && s)
		return s;
	/* The CUDA stub library names no error; these are the ones a driver-less machine gives. */
	switch (r) {
	case CUDA_ERROR_STUB_LIBRARY:
		return "CUDA_ERROR_STUB_LIBRARY (the CUDA stub library was loaded, not a driver)";
	case CUDA_ERROR_NO_DEVICE: return "CUDA_ERROR_NO_DEVICE";
	case CUDA_ERROR_SYSTEM_DRIVER_MISMATCH: return "CUDA_ERROR_SYSTEM_DRIVER_MISMATCH";
	default: break;
	}
	snprintf(buf, sizeof(buf), "CUresult %d", (int)r);
	return buf;
}

/* ---- Options ---------------------------------------------------------------------------------- */

int tool_common_option(int c, const char *arg, struct tool_common *o)
{
	switch (c) {
	case TOOL_OPT_BACKEND:
		if (strcmp(arg, "gdrdrv") && strcmp(arg, "dmabuf") && strcmp(arg, "vulkan"))
			tool_die("--backend %s: unknown backend (known: gdrdrv, dmabuf, vulkan)", arg);
		o->backend = arg;
		return 1;
	case TOOL_OPT_IMPL:
		if (strcmp(arg, "all") && tool_impl_id(arg) < 0)
			tool_die("--impl %s: unknown copy routine (known: all, generic, memcpy, sse, "
				 "sse41, avx2, avx512, movdir64b, rep_movsb, neon, stp, power)", arg);
		o->impl = arg;
		return 1;
	case TOOL_OPT_CSV:
		tool_csv = 1;
		return 1;
	case TOOL_OPT_SWEEP_FD:
		tool_sweep_fd = (int)tool_parse_long(arg, "--sweep-fd", 0, INT_MAX);
		return 1;
	default:
		return 0;
	}
}

int tool_impl_is_all(const struct tool_common *o)
{
	return o->impl && !strcmp(o->impl, "all");
}

size_t tool_parse_size(const char *arg, const char *opt)
{
	unsigned long long v;
	char *end;

	errno = 0;
	v = strtoull(arg, &end, 0);
	if (errno || end == arg || arg[0] == '-')
		tool_die("%s %s: not a size", opt, arg);
	switch (*end) {
	case 'k': case 'K': v <<= 10; end++; break;
	case 'm': case 'M': v <<= 20; end++; break;
	case 'g': case 'G': v <<= 30; end++; break;
	default: break;
	}
	if (*end || v > SIZE_MAX / 2)
		tool_die("%s %s: not a size", opt, arg);
	return (size_t)v;
}

long tool_parse_long(const char *arg, const char *opt, long min, long max)
{
	long v;
	char *end;

	errno = 0;
	v = strtol(arg, &end, 0);
	if (errno || end == arg || *end || v < min || v > max)
		tool_die("%s %s: expected an integer from %ld to %ld", opt, arg, min, max);
	return v;
}

/* ---- CUDA devices ----------------------------------------------------------------------------- */

static void list_device(int i)
{
	int domain = 0, bus = 0, slot = 0;
	char name[256] = "?";
	CUdevice d;

	if (cuDeviceGet(&d, i) != CUDA_SUCCESS)
		return;
	cuDeviceGetName(name, sizeof(name), d);
	cuDeviceGetAttribute(&domain, CU_DEVICE_ATTRIBUTE_PCI_DOMAIN_ID, d);
	cuDeviceGetAttribute(&bus, CU_DEVICE_ATTRIBUTE_PCI_BUS_ID, d);
	cuDeviceGetAttribute(&slot, CU_DEVICE_ATTRIBUTE_PCI_DEVICE_ID, d);
	tool_say("GPU id:%d; name: %s; Bus id: %04x:%02x:%02x\n", i, name, domain, bus, slot);
}

CUresult tool_cuda_try_init(struct tool_cuda *c, int dev_id, char *why, size_t len)
{
	int count = 0;
	CUresult r;

	memset(c, 0, sizeof(*c));
	if (tool_cuda_load(why, len))
		return CUDA_ERROR_NOT_FOUND;
	r = cuInit(0);
	if (r != CUDA_SUCCESS) {
		snprintf(why, len, "cuInit failed: %s", tool_cu_name(r));
		return r;
	}
	r = cuDeviceGetCount(&count);
	if (r != CUDA_SUCCESS || count == 0) {
		snprintf(why, len, "cuDeviceGetCount failed: %s",
			 r ? tool_cu_name(r) : "no CUDA device");
		return r ? r : CUDA_ERROR_NO_DEVICE;
	}
	if (dev_id < 0 || dev_id >= count) {
		snprintf(why, len, "GPU %d does not exist: %d device(s), ids 0 to %d", dev_id, count,
			 count - 1);
		return CUDA_ERROR_INVALID_DEVICE;
	}
	c->dev_id = dev_id;
	r = cuDeviceGet(&c->dev, dev_id);
	if (r == CUDA_SUCCESS)
		r = cuDevicePrimaryCtxRetain(&c->ctx, c->dev);
	if (r != CUDA_SUCCESS) {
		snprintf(why, len, "cuDevicePrimaryCtxRetain failed: %s", tool_cu_name(r));
		return r;
	}
	r = cuCtxSetCurrent(c->ctx);
	if (r != CUDA_SUCCESS) {
		cuDevicePrimaryCtxRelease(c->dev);
		c->ctx = NULL;
		snprintf(why, len, "cuCtxSetCurrent failed: %s", tool_cu_name(r));
	}
	return r;
}

void tool_cuda_init(struct tool_cuda *c, int dev_id)
{
	char why[256];

	if (tool_cuda_try_init(c, dev_id, why, sizeof(why)) != CUDA_SUCCESS)
		tool_die("%s", why);
}

void tool_print_devices(const struct tool_cuda *c)
{
	int count = 0;

	cuDeviceGetCount(&count);
	for (int i = 0; i < count; i++)
		list_device(i);
	tool_say("selecting device %d\n", c->dev_id);
}

void tool_cuda_fini(struct tool_cuda *c)
{
	if (!c->ctx)
		return;
	cuCtxSetCurrent(NULL);
	cuDevicePrimaryCtxRelease(c->dev);
	c->ctx = NULL;
}

/* ---- GPU allocation --------------------------------------------------------------------------- */

void tool_parse_alloc(const char *s, enum tool_alloc_kind *kind)
{
	if (!strcasecmp(s, "cuMemAlloc"))
		*kind = TOOL_ALLOC_CUMEMALLOC;
	else if (!strcasecmp(s, "cuMemCreate"))
		*kind = TOOL_ALLOC_CUMEMCREATE;
	else
		tool_die("-a %s: expected cuMemAlloc or cuMemCreate", s);
}

const char *tool_alloc_name(enum tool_alloc_kind kind)
{
	return kind == TOOL_ALLOC_CUMEMCREATE ? "cuMemCreate" :
	       kind == TOOL_ALLOC_CUMEMALLOC ? "cuMemAlloc" : "auto";
}

enum tool_alloc_kind tool_alloc_resolve(enum tool_alloc_kind kind, gdr_t g)
{
	if (kind != TOOL_ALLOC_AUTO)
		return kind;
	return tool_backend(g) == GDR_BACKEND_VULKAN ? TOOL_ALLOC_CUMEMCREATE :
						       TOOL_ALLOC_CUMEMALLOC;
}

static CUresult vmm_alloc(struct gpu_buf *b, size_t size, CUdevice dev, const char **what)
{
	CUmemAllocationProp prop;
	CUmemAccessDesc access;
	size_t gran = 0;
	int rdma_vmm = 0;
	CUresult r;

	*what = "cuDeviceGetAttribute(GPU_DIRECT_RDMA_WITH_CUDA_VMM_SUPPORTED)";
	r = cuDeviceGetAttribute(&rdma_vmm,
				 CU_DEVICE_ATTRIBUTE_GPU_DIRECT_RDMA_WITH_CUDA_VMM_SUPPORTED, dev);
	if (r != CUDA_SUCCESS)
		return r;
	if (!rdma_vmm) {
		*what = "GPUDirect RDMA with CUDA VMM (the device says it is not supported)";
		return CUDA_ERROR_NOT_SUPPORTED;
	}
	memset(&prop, 0, sizeof(prop));
	prop.type = CU_MEM_ALLOCATION_TYPE_PINNED;
	prop.location.type = CU_MEM_LOCATION_TYPE_DEVICE;
	prop.location.id = dev;
	prop.requestedHandleTypes = CU_MEM_HANDLE_TYPE_POSIX_FILE_DESCRIPTOR;
	prop.allocFlags.gpuDirectRDMACapable = 1;
	*what = "cuMemGetAllocationGranularity";
	r = cuMemGetAllocationGranularity(&gran, &prop, CU_MEM_ALLOC_GRANULARITY_RECOMMENDED);
	if (r != CUDA_SUCCESS)
		return r;
	gran = TOOL_ROUND_UP(gran ? gran : GPU_PAGE_SIZE, GPU_PAGE_SIZE);
	b->alloc_size = TOOL_ROUND_UP(size, gran);
	*what = "cuMemCreate";
	r = cuMemCreate(&b->handle, b->alloc_size, &prop, 0);
	if (r != CUDA_SUCCESS)
		return r;
	*what = "cuMemAddressReserve";
	r = cuMemAddressReserve(&b->base, b->alloc_size, gran, 0, 0);
	if (r != CUDA_SUCCESS)
		goto err_release;
	*what = "cuMemMap";
	r = cuMemMap(b->base, b->alloc_size, 0, b->handle, 0);
	if (r != CUDA_SUCCESS)
		goto err_free_va;
	memset(&access, 0, sizeof(access));
	access.location.type = CU_MEM_LOCATION_TYPE_DEVICE;
	access.location.id = dev;
	access.flags = CU_MEM_ACCESS_FLAGS_PROT_READWRITE;
	*what = "cuMemSetAccess";
	r = cuMemSetAccess(b->base, b->alloc_size, &access, 1);
	if (r != CUDA_SUCCESS)
		goto err_unmap;
	b->ptr = b->base;
	b->size = b->alloc_size;
	return CUDA_SUCCESS;

err_unmap:
	cuMemUnmap(b->base, b->alloc_size);
err_free_va:
	cuMemAddressFree(b->base, b->alloc_size);
err_release:
	cuMemRelease(b->handle);
	return r;
}

CUresult gpu_alloc(struct gpu_buf *b, size_t size, enum tool_alloc_kind kind, int aligned,
		   int sync_memops, CUdevice dev, const char **what)
{
	unsigned int one = 1;
	CUresult r;

	memset(b, 0, sizeof(*b));
	b->kind = kind;
	if (kind == TOOL_ALLOC_CUMEMCREATE)
		return vmm_alloc(b, size, dev, what);
	b->alloc_size = aligned ? size + GPU_PAGE_SIZE : size;
	*what = "cuMemAlloc";
	r = cuMemAlloc(&b->base, b->alloc_size);
	if (r != CUDA_SUCCESS)
		return r;
	b->ptr = aligned ? TOOL_ROUND_UP(b->base, GPU_PAGE_SIZE) : b->base;
	b->size = size;
	if (sync_memops) {
		*what = "cuPointerSetAttribute(SYNC_MEMOPS)";
		r = cuPointerSetAttribute(&one, CU_POINTER_ATTRIBUTE_SYNC_MEMOPS, b->ptr);
		if (r != CUDA_SUCCESS) {
			cuMemFree(b->base);
			return r;
		}
	}
	return CUDA_SUCCESS;
}

CUresult gpu_free(struct gpu_buf *b)
{
	CUresult r, r2;

	if (!b->base)
		return CUDA_SUCCESS;
	if (b->kind != TOOL_ALLOC_CUMEMCREATE) {
		r = cuMemFree(b->base);
	} else {
		r = cuMemUnmap(b->base, b->alloc_size);
		r2 = cuMemAddressFree(b->base, b->alloc_size);
		r = r ? r : r2;
		r2 = cuMemRelease(b->handle);
		r = r ? r : r2;
	}
	b->base = 0;
	b->ptr = 0;
	return r;
}

void gpu_alloc_or_die(struct gpu_buf *b, size_t size, enum tool_alloc_kind kind, CUdevice dev)
{
	const char *what = "allocation";
	CUresult r = gpu_alloc(b, size, kind, 1, 1, dev, &what);

	if (r != CUDA_SUCCESS)
		tool_die("%s of %zu bytes failed: %s", what, size, tool_cu_name(r));
}

/* ---- gdrcopy ---------------------------------------------------------------------------------- */

void tool_set_env(const char *backend, const char *impl)
{
	if (backend)
		setenv("GDRCOPY_BACKEND", backend, 1);
	if (impl && strcmp(impl, "all"))
		setenv("GDRCOPY_COPY_IMPL", impl, 1);
}

gdr_t tool_gdr_open(void)
{
	const char *forced = getenv("GDRCOPY_BACKEND");
	gdr_t g = gdr_open();

	if (g)
		return g;
	if (forced && *forced)
		tool_die("gdr_open failed: backend %s cannot map GPU memory here; run gdrcopy_info",
			 forced);
	tool_die("gdr_open failed: no backend can map GPU memory here; run gdrcopy_info");
}

void tool_gdr_close(gdr_t g)
{
	/* GDRCopy's tools say "closing gdrdrv", the only backend they know: name the one in use. */
	tool_say("closing %s\n", tool_backend_name(tool_backend(g)));
	if (gdr_close(g))
		tool_die("gdr_close failed");
}

int tool_backend(gdr_t g)
{
	int v = 0;

	if (gdr_get_attribute(g, (gdr_attr_t)GDR_ATTR_EXT_BACKEND, &v) != 0)
		return GDR_BACKEND_GDRDRV;
	return v;
}

const char *tool_backend_name(int backend)
{
	switch (backend) {
	case GDR_BACKEND_GDRDRV: return "gdrdrv";
	case GDR_BACKEND_DMABUF: return "dmabuf";
	case GDR_BACKEND_VULKAN: return "vulkan";
	default: return "unknown";
	}
}

static const char *const impl_names[] = {
	[GDR_COPY_IMPL_GENERIC] = "generic", [GDR_COPY_IMPL_MEMCPY] = "memcpy",
	[GDR_COPY_IMPL_SSE] = "sse", [GDR_COPY_IMPL_SSE41] = "sse41",
	[GDR_COPY_IMPL_AVX2] = "avx2", [GDR_COPY_IMPL_AVX512] = "avx512",
	[GDR_COPY_IMPL_MOVDIR64B] = "movdir64b", [GDR_COPY_IMPL_REP_MOVSB] = "rep_movsb",
	[GDR_COPY_IMPL_NEON] = "neon", [GDR_COPY_IMPL_POWER] = "power",
#ifdef GDR_COPY_IMPL_STP
	[GDR_COPY_IMPL_STP] = "stp",
#endif
};
#define N_IMPL_NAMES (int)(sizeof(impl_names) / sizeof(impl_names[0]))

int tool_copy_impl(gdr_t g, int to_device)
{
	int v = -1;

	if (gdr_get_attribute(g, (gdr_attr_t)(to_device ? GDR_ATTR_EXT_COPY_TO_IMPL :
							  GDR_ATTR_EXT_COPY_FROM_IMPL), &v))
		return -1;
	return v;
}

const char *tool_impl_name(int impl)
{
	return impl >= 0 && impl < N_IMPL_NAMES && impl_names[impl] ? impl_names[impl] : "unknown";
}

int tool_impl_id(const char *name)
{
	for (int i = 0; i < N_IMPL_NAMES; i++)
		if (impl_names[i] && !strcmp(impl_names[i], name))
			return i;
	return -1;
}

void tool_parse_map_flags(const char *s, int *flags)
{
	static const char *const names[] = { "default", "wc", "cache", "device" };

	for (int i = 0; i < 4; i++) {
		if (!strcasecmp(s, names[i])) {
			*flags = i;	/* GDR_MAP_FLAG_DEFAULT .. GDR_MAP_FLAG_REQ_DEVICE_MAPPING */
			return;
		}
	}
	tool_die("-M %s: expected default, wc, cache or device", s);
}

const char *tool_pin_hint(gdr_t g, enum tool_alloc_kind kind)
{
	if (tool_backend(g) == GDR_BACKEND_VULKAN && kind != TOOL_ALLOC_CUMEMCREATE)
		return " (the vulkan backend pins only cuMemCreate memory with a POSIX-fd handle: "
		       "use -a cuMemCreate)";
	return "";
}

const char *tool_mapping_name(gdr_mapping_type_t type)
{
	const char *s = "unknown";

	gdr_get_mapping_type_string(type, &s);
	return s;
}

void tool_map_gpu(struct tool_mapping *m, gdr_t g, const struct tool_cuda *cu, size_t size,
		  enum tool_alloc_kind kind, int map_flags, int quiet)
{
	size_t rounded = TOOL_ROUND_UP(size, GPU_PAGE_SIZE);
	int saved_csv = tool_csv;
	int r;

	memset(m, 0, sizeof(*m));
	m->g = g;
	if (quiet)
		tool_csv = 1;
	tool_say("rounded size: %zu\n", rounded);
	tool_say("gpu alloc fn: %s\n", tool_alloc_name(kind));
	gpu_alloc_or_die(&m->buf, rounded, kind, cu->dev);
	tool_say("device ptr: 0x%llx\n", (unsigned long long)m->buf.ptr);
	r = gdr_pin_buffer(g, m->buf.ptr, rounded, 0, 0, &m->mh);
	if (r)
		tool_die("gdr_pin_buffer of %zu bytes of %s memory failed: %s%s", rounded,
			 tool_alloc_name(kind), strerror(r), tool_pin_hint(g, kind));
	r = gdr_map_v2(g, m->mh, &m->map, rounded, map_flags);
	if (r)
		tool_die("gdr_map_v2 failed: %s", strerror(r));
	tool_say("map_d_ptr: %p\n", m->map);
	r = gdr_get_info(g, m->mh, &m->info);
	if (r)
		tool_die("gdr_get_info failed: %s", strerror(r));
	tool_say("info.va: %llx\n", (unsigned long long)m->info.va);
	tool_say("info.mapped_size: %llu\n", (unsigned long long)m->info.mapped_size);
	tool_say("info.page_size: %u\n", m->info.page_size);
	tool_say("info.mapped: %u\n", m->info.mapped);
	tool_say("info.wc_mapping: %u\n", m->info.wc_mapping);
	tool_say("info.mapping_type: %s\n", tool_mapping_name(m->info.mapping_type));
	if (m->buf.ptr < m->info.va || m->buf.ptr - m->info.va >= m->info.mapped_size)
		tool_die("gdr_get_info: va 0x%llx does not cover the pinned address 0x%llx",
			 (unsigned long long)m->info.va, (unsigned long long)m->buf.ptr);
	tool_say("page offset: %llu\n", (unsigned long long)(m->buf.ptr - m->info.va));
	m->ptr = (char *)m->map + (m->buf.ptr - m->info.va);
	m->size = rounded;
	tool_say("user-space pointer:%p\n", m->ptr);
	tool_csv = saved_csv;
}

void tool_unmap_gpu(struct tool_mapping *m, int quiet)
{
	int r;

	if (!quiet)
		tool_say("unmapping buffer\n");
	r = gdr_unmap(m->g, m->mh, m->map, m->size);
	if (r)
		tool_die("gdr_unmap failed: %s", strerror(r));
	if (!quiet)
		tool_say("unpinning buffer\n");
	r = gdr_unpin_buffer(m->g, m->mh);
	if (r)
		tool_die("gdr_unpin_buffer failed: %s", strerror(r));
	if (gpu_free(&m->buf) != CUDA_SUCCESS)
		tool_die("freeing the GPU buffer failed");
}

void tool_report_impl(gdr_t g, const char *forced)
{
	int to = tool_copy_impl(g, 1), from = tool_copy_impl(g, 0);

	if (tool_sweep_fd >= 0) {
		tool_sweep_line("impl %s %s", to < 0 ? "?" : tool_impl_name(to),
				from < 0 ? "?" : tool_impl_name(from));
		return;
	}
	if (to < 0) {
		if (forced)
			tool_warn("this libgdrapi does not report its copy routines; --impl %s may "
				  "have been ignored", forced);
		return;
	}
	tool_say("copy routines for 4 KiB: to GPU %s, from GPU %s\n", tool_impl_name(to),
		 tool_impl_name(from));
	if (forced && strcmp(tool_impl_name(to), forced) && strcmp(tool_impl_name(from), forced))
		tool_warn("the library did not use --impl %s in either direction", forced);
}

/* ---- Statistics ------------------------------------------------------------------------------- */

static int cmp_double(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;

	return x < y ? -1 : x > y;
}

void tool_stats(double *v, size_t n, struct tool_stats *out)
{
	double sum = 0;

	qsort(v, n, sizeof(*v), cmp_double);
	for (size_t i = 0; i < n; i++)
		sum += v[i];
	out->min = v[0];
	out->median = n % 2 ? v[n / 2] : (v[n / 2 - 1] + v[n / 2]) / 2;
	out->avg = sum / (double)n;
}

size_t tool_round_iters(size_t iters, const char *what)
{
	size_t r;

	if (iters <= 100 || iters % 100 == 0)
		return iters;
	r = TOOL_ROUND_UP(iters, 100);
	tool_say("WARNING: %s iterations %zu rounded up to %zu, a multiple of 100 buckets\n", what,
		 iters, r);
	return r;
}

size_t tool_buckets(size_t iters)
{
	return iters < 100 ? iters : 100;
}

/* ---- Output ----------------------------------------------------------------------------------- */

void tool_say(const char *fmt, ...)
{
	va_list ap;

	if (tool_csv || tool_sweep_fd >= 0)
		return;
	va_start(ap, fmt);
	vprintf(fmt, ap);
	va_end(ap);
}

void tool_sweep_line(const char *fmt, ...)
{
	char line[1200];
	va_list ap;
	int n;

	va_start(ap, fmt);
	n = vsnprintf(line, sizeof(line) - 1, fmt, ap);
	va_end(ap);
	if (n < 0)
		return;
	if ((size_t)n > sizeof(line) - 2)
		n = (int)sizeof(line) - 2;
	line[n++] = '\n';
	if (write(tool_sweep_fd, line, (size_t)n) != n)
		_exit(3);	/* the parent is gone: nobody is left to report to */
}

/* ---- Test pattern ----------------------------------------------------------------------------- */

static uint32_t pattern_word(size_t w, unsigned seed)
{
	return 0x3F4C5E6Au ^ (1u << ((w + seed) % 32));
}

void tool_fill_pattern(void *buf, size_t bytes, unsigned seed)
{
	unsigned char *p = buf;
	size_t w = 0;

	for (; bytes >= 4; bytes -= 4, p += 4, w++) {
		uint32_t v = pattern_word(w, seed);

		memcpy(p, &v, 4);
	}
	if (bytes) {
		uint32_t v = pattern_word(w, seed);

		memcpy(p, &v, bytes);
	}
}

size_t tool_compare(const void *got, const void *want, size_t bytes)
{
	const unsigned char *g = got, *w = want;
	size_t bad = 0;

	for (size_t off = 0; off < bytes; off += 4) {
		uint32_t a = 0, b = 0;
		size_t n = bytes - off < 4 ? bytes - off : 4;

		memcpy(&a, g + off, n);
		memcpy(&b, w + off, n);
		if (a == b)
			continue;
		if (bad < 10)
			printf("word %zu content 0x%08x expected 0x%08x\n", off / 4, a, b);
		bad++;
	}
	return bad;
}
