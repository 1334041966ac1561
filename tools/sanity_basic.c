/* SPDX-License-Identifier: MIT */
/* gdrcopy_sanity: the basic_*, data_validation_* and attributes_sanity cases. */
#include <errno.h>
#include <pthread.h>
#include <stdlib.h>

#include "sanity.h"

/* Pin and unpin SANITY_SIZE bytes: v1 (flags < 0) or v2 with flags. */
static void basic(enum sanity_mem mem, int flags)
{
	struct sanity_ctx c;
	struct gpu_buf b;
	gdr_mh_t mh = { 0 };

	need_mem(mem);
	if (flags > 0)
		need_forcepci();
	ctx_init(&c);
	buf_alloc(&c, &b, SANITY_SIZE, mem);
	if (flags < 0)
		SANITY_RET(gdr_pin_buffer(c.g, b.ptr, b.size, 0, 0, &mh), 0);
	else
		SANITY_RET(gdr_pin_buffer_v2(c.g, b.ptr, b.size, (uint32_t)flags, &mh), 0);
	SANITY_CHECK(mh.h != 0);
	if (flags == GDR_PIN_FLAG_FORCE_PCIE) {
		gdr_info_t info;
		void *va;

		SANITY_RET(gdr_map(c.g, mh, &va, b.size), 0);
		SANITY_RET(gdr_get_info(c.g, mh, &info), 0);
		SANITY_CHECK(info.mapping_type == GDR_MAPPING_TYPE_WC);
		SANITY_RET(gdr_unmap(c.g, mh, va, b.size), 0);
	}
	SANITY_RET(gdr_unpin_buffer(c.g, mh), 0);
	buf_free(&b);
	ctx_fini(&c);
}

static void basic_cumemalloc(void) { basic(MEM_CUMEMALLOC, -1); }
static void basic_vmmalloc(void) { basic(MEM_VMM, -1); }
static void basic_v2_cumemalloc(void) { basic(MEM_CUMEMALLOC, GDR_PIN_FLAG_DEFAULT); }
static void basic_v2_vmmalloc(void) { basic(MEM_VMM, GDR_PIN_FLAG_DEFAULT); }
static void basic_v2_forcepci_cumemalloc(void) { basic(MEM_CUMEMALLOC, GDR_PIN_FLAG_FORCE_PCIE); }
static void basic_v2_forcepci_vmmalloc(void) { basic(MEM_VMM, GDR_PIN_FLAG_FORCE_PCIE); }

static void basic_with_tokens(void)
{
	CUDA_POINTER_ATTRIBUTE_P2P_TOKENS tokens;
	struct sanity_ctx c;
	struct gpu_buf b;
	gdr_mh_t mh = { 0 };

	if (sanity_plat->persistent)
		sanity_waive("P2P tokens are not used with persistent mappings");
	need_gdrdrv("P2P tokens are a gdrdrv (nvidia_p2p) interface");
	need_mem(MEM_CUMEMALLOC);
	ctx_init(&c);
	buf_alloc(&c, &b, SANITY_SIZE, MEM_CUMEMALLOC);
	SANITY_CU(cuPointerGetAttribute(&tokens, CU_POINTER_ATTRIBUTE_P2P_TOKENS, b.ptr));
	SANITY_RET(gdr_pin_buffer(c.g, b.ptr, b.size, tokens.p2pToken, tokens.vaSpaceToken, &mh),
		   0);
	SANITY_CHECK(mh.h != 0);
	SANITY_RET(gdr_unpin_buffer(c.g, mh), 0);
	buf_free(&b);
	ctx_fini(&c);
}

/*
 * An address that is not on a GPU page: under backends that pin cuMemAlloc memory, a cuMemAlloc
 * sub-allocation (after a small one, up to 10 tries); under vulkan, 4 bytes into a VMM
 * allocation. size bytes from it stay inside the allocation.
 */
static CUdeviceptr unaligned_buffer(struct sanity_ctx *c, struct gpu_buf *keep, size_t size,
				    CUdeviceptr small[11])
{
	if (sanity_plat->backend == GDR_BACKEND_VULKAN) {
		buf_alloc(c, keep, size + 2 * GPU_PAGE_SIZE, MEM_VMM);
		return keep->ptr + 4;
	}
	memset(keep, 0, sizeof(*keep));
	SANITY_CU(cuMemAlloc(&small[0], 4));
	for (int i = 1; i <= 10; i++) {
		SANITY_CU(cuMemAlloc(&small[i], size + 2 * GPU_PAGE_SIZE));
		if (small[i] % GPU_PAGE_SIZE)
			return small[i];
	}
	sanity_waive("cuMemAlloc gave only 64 KiB-aligned addresses in 10 tries");
}

/*
 * gdrdrv maps only pins that start on a GPU page (a documented GDRCopy restriction); the vulkan and dmabuf
 * backends map any pin from info.va, so there the cases below check that instead.
 */
static int maps_unaligned_pins(void)
{
	return sanity_plat->backend == GDR_BACKEND_VULKAN ||
	       sanity_plat->backend == GDR_BACKEND_DMABUF;
}

/* Map mh, pinned at addr, and check that writes at (addr - info.va) reach addr's bytes. */
static void check_unaligned_map(struct sanity_ctx *c, gdr_mh_t mh, CUdeviceptr addr, size_t size,
				unsigned seed)
{
	gdr_info_t info;
	void *va;

	SANITY_RET(gdr_get_info(c->g, mh, &info), 0);
	SANITY_CHECK(info.va <= addr && addr + size <= info.va + info.mapped_size);
	SANITY_RET(gdr_map(c->g, mh, &va, info.mapped_size), 0);
	write_words((char *)va + (addr - info.va), size, seed);
	check_device(addr, size, seed);
	SANITY_RET(gdr_unmap(c->g, mh, va, info.mapped_size), 0);
}

static void basic_unaligned_mapping(void)
{
	CUdeviceptr small[11] = { 0 }, unaligned, aligned;
	size_t size = GPU_PAGE_SIZE;
	struct sanity_ctx c;
	struct gpu_buf keep, nb;
	gdr_mh_t mh, mh2, nmh;
	void *va, *va2, *nva;
	uint32_t *back;

	ctx_init(&c);
	unaligned = unaligned_buffer(&c, &keep, size, small);
	sanity_log("unaligned address 0x%llx", (unsigned long long)unaligned);
	SANITY_RET(gdr_pin_buffer(c.g, unaligned, size, 0, 0, &mh), 0);
	if (maps_unaligned_pins())
		check_unaligned_map(&c, mh, unaligned, size, 5);
	else
		SANITY_NONZERO(gdr_map(c.g, mh, &va, size));
	SANITY_RET(gdr_unpin_buffer(c.g, mh), 0);

	aligned = TOOL_ROUND_UP(unaligned, GPU_PAGE_SIZE);
	SANITY_RET(gdr_pin_buffer(c.g, aligned, size, 0, 0, &mh2), 0);
	SANITY_RET(gdr_map(c.g, mh2, &va2, size), 0);
	write_words(va2, size, 7);
	check_device(aligned, size, 7);

	/* A neighbour: pinned, mapped (where its address allows), unpinned and freed. */
	buf_alloc(&c, &nb, GPU_PAGE_SIZE, sanity_plat->backend == GDR_BACKEND_VULKAN ?
		  MEM_VMM : MEM_CUMEMALLOC);
	SANITY_RET(gdr_pin_buffer(c.g, nb.ptr, nb.size, 0, 0, &nmh), 0);
	SANITY_RET(gdr_map(c.g, nmh, &nva, nb.size), 0);
	write_words(nva, nb.size, 9);
	SANITY_RET(gdr_unmap(c.g, nmh, nva, nb.size), 0);
	SANITY_RET(gdr_unpin_buffer(c.g, nmh), 0);
	buf_free(&nb);
	for (int i = 0; i <= 10; i++)
		if (small[i] && small[i] != unaligned)
			SANITY_CU(cuMemFree(small[i]));

	back = malloc(size);
	SANITY_CHECK(back != NULL);
	SANITY_RET(gdr_copy_from_mapping(mh2, back, va2, size), 0);
	{
		uint32_t *want = malloc(size);

		SANITY_CHECK(want != NULL);
		tool_fill_pattern(want, size, 7);
		if (tool_compare(back, want, size))
			sanity_fail("the first mapping changed when a neighbour was pinned, mapped "
				    "and freed");
		free(want);
	}
	free(back);
	check_device(aligned, size, 7);
	SANITY_RET(gdr_unmap(c.g, mh2, va2, size), 0);
	SANITY_RET(gdr_unpin_buffer(c.g, mh2), 0);
	if (keep.base)
		buf_free(&keep);
	else
		SANITY_CU(cuMemFree(unaligned));
	ctx_fini(&c);
}

/*
 * Issue #244: two 8-byte buffers in one GPU page; under gdrdrv only the page-aligned one can be
 * mapped, under backends that map unaligned pins both can, each reaching its own bytes.
 */
static void basic_small_buffers_mapping(void)
{
	enum sanity_mem mem = sanity_plat->backend == GDR_BACKEND_VULKAN ? MEM_VMM : MEM_CUMEMALLOC;
	struct sanity_ctx c;
	struct gpu_buf b;
	gdr_mh_t mh1, mh2;
	void *va1, *va2;

	ctx_init(&c);
	buf_alloc(&c, &b, GPU_PAGE_SIZE, mem);
	SANITY_RET(gdr_pin_buffer(c.g, b.ptr, 8, 0, 0, &mh1), 0);
	SANITY_RET(gdr_pin_buffer(c.g, b.ptr + 8, 8, 0, 0, &mh2), 0);
	SANITY_RET(gdr_map(c.g, mh1, &va1, 8), 0);
	if (maps_unaligned_pins())
		check_unaligned_map(&c, mh2, b.ptr + 8, 8, 3);
	else
		SANITY_NONZERO(gdr_map(c.g, mh2, &va2, 8));
	SANITY_RET(gdr_unmap(c.g, mh1, va1, 8), 0);
	SANITY_RET(gdr_unpin_buffer(c.g, mh1), 0);
	SANITY_RET(gdr_unpin_buffer(c.g, mh2), 0);
	buf_free(&b);
	ctx_fini(&c);
}

/*
 * Copy through the mapping at map_off and host_off (bytes), read back both ways, compare. The GPU
 * memory is set to 0xA5 first, as GDRCopy's test does: the checks' patterns differ only by a
 * shift of seed and offset, so what the previous check left would otherwise already match most
 * of what a copy that wrote nothing should have written.
 */
static void check_offsets(gdr_mh_t mh, char *map, const struct gpu_buf *b, size_t map_off,
			  size_t host_off, unsigned seed)
{
	size_t n = b->size - (map_off > host_off ? map_off : host_off) - 64;
	char *src = malloc(b->size), *dst = calloc(1, b->size), *dev = malloc(b->size);

	SANITY_CHECK(src && dst && dev);
	SANITY_CU(cuMemsetD8(b->ptr, 0xA5, b->size));
	SANITY_CU(cuCtxSynchronize());
	tool_fill_pattern(src + host_off, n, seed);
	SANITY_RET(gdr_copy_to_mapping(mh, map + map_off, src + host_off, n), 0);
	SANITY_RET(gdr_copy_from_mapping(mh, dst + host_off, map + map_off, n), 0);
	if (tool_compare(dst + host_off, src + host_off, n))
		sanity_fail("copy_to then copy_from at mapping offset %zu, host offset %zu: data "
			    "differs", map_off, host_off);
	SANITY_CU(cuMemcpyDtoH(dev, b->ptr + map_off, n));
	if (tool_compare(dev, src + host_off, n))
		sanity_fail("copy_to at mapping offset %zu, host offset %zu: cuMemcpyDtoH reads "
			    "other data", map_off, host_off);
	free(src);
	free(dst);
	free(dev);
}

static void data_validation(enum sanity_mem mem, int flags)
{
	static const size_t offsets[] = { 1, 2, 3, 4, 5, 6, 7, 11, 129, 1023 };
	static const size_t units[] = { 4, 1 };	/* dwords, then bytes */
	struct sanity_ctx c;
	struct gpu_buf b;
	gdr_info_t info;
	gdr_mh_t mh;
	const char *type;
	char *host;
	void *map;

	need_mem(mem);
	if (flags > 0)
		need_forcepci();
	ctx_init(&c);
	buf_alloc(&c, &b, SANITY_SIZE, mem);
	if (flags < 0)
		SANITY_RET(gdr_pin_buffer(c.g, b.ptr, b.size, 0, 0, &mh), 0);
	else
		SANITY_RET(gdr_pin_buffer_v2(c.g, b.ptr, b.size, (uint32_t)flags, &mh), 0);
	SANITY_RET(gdr_get_info(c.g, mh, &info), 0);
	SANITY_CHECK(!info.mapped);
	SANITY_RET(gdr_map(c.g, mh, &map, b.size), 0);
	SANITY_RET(gdr_get_info(c.g, mh, &info), 0);
	SANITY_CHECK(info.mapped);
	SANITY_CHECK(info.va == b.ptr);
	SANITY_RET(gdr_get_mapping_type_string(info.mapping_type, &type), 0);
	sanity_log("mapping type: %s", type);

	/* (1) plain CPU stores through the mapping, seen by cuMemcpyDtoH. */
	for (unsigned rep = 0; rep < 1000; rep++) {
		size_t n = rep % 100 ? 4096 : b.size;	/* every 100th repeat covers it all */

		write_words(map, n, rep);
		check_device(b.ptr, n, rep);
	}
	/* (2) gdr_copy_to_mapping, seen by cuMemcpyDtoH; (3) then gdr_copy_from_mapping. */
	host = malloc(b.size);
	SANITY_CHECK(host != NULL);
	tool_fill_pattern(host, b.size, 1000);
	SANITY_RET(gdr_copy_to_mapping(mh, map, host, b.size), 0);
	check_device(b.ptr, b.size, 1000);
	memset(host, 0, b.size);
	SANITY_RET(gdr_copy_from_mapping(mh, host, map, b.size), 0);
	{
		char *want = malloc(b.size);

		SANITY_CHECK(want != NULL);
		tool_fill_pattern(want, b.size, 1000);
		if (tool_compare(host, want, b.size))
			sanity_fail("gdr_copy_from_mapping read other data than was written");
		free(want);
	}
	free(host);
	/* (4-9) odd offsets, in dwords and in bytes, on either side and on both. */
	for (size_t i = 0; i < sizeof(offsets) / sizeof(offsets[0]); i++) {
		for (size_t u = 0; u < 2; u++) {
			size_t o = offsets[i] * units[u];

			check_offsets(mh, map, &b, o, 0, (unsigned)i);
			check_offsets(mh, map, &b, 0, o, (unsigned)i + 1);
			check_offsets(mh, map, &b, o, o, (unsigned)i + 2);
		}
	}
	SANITY_RET(gdr_unmap(c.g, mh, map, b.size), 0);
	SANITY_RET(gdr_unpin_buffer(c.g, mh), 0);
	buf_free(&b);
	ctx_fini(&c);
}

static void data_validation_cumemalloc(void) { data_validation(MEM_CUMEMALLOC, -1); }
static void data_validation_vmmalloc(void) { data_validation(MEM_VMM, -1); }
static void data_validation_v2_cumemalloc(void) { data_validation(MEM_CUMEMALLOC, 0); }
static void data_validation_v2_forcepci_cumemalloc(void)
{
	data_validation(MEM_CUMEMALLOC, GDR_PIN_FLAG_FORCE_PCIE);
}

/* One buffer pinned twice, mapped write-combined and cached: each mapping sees the other's. */
static void data_validation_mix_mappings_cumemalloc(void)
{
	struct sanity_ctx c;
	struct gpu_buf b;
	gdr_mh_t wc, cached;
	void *wva, *cva;
	char *want, *got;

	if (sanity_plat->backend == GDR_BACKEND_DMABUF)
		sanity_waive("the dmabuf backend fixes one mapping type per pin");
	if (!sanity_plat->coherent)
		sanity_waive("a cached mapping of GPU memory needs a coherent platform "
			     "(PAGEABLE_MEMORY_ACCESS_USES_HOST_PAGE_TABLES is 0 here)");
	need_mem(MEM_CUMEMALLOC);
	ctx_init(&c);
	buf_alloc(&c, &b, SANITY_SIZE, MEM_CUMEMALLOC);
	SANITY_RET(gdr_pin_buffer(c.g, b.ptr, b.size, 0, 0, &wc), 0);
	SANITY_RET(gdr_pin_buffer(c.g, b.ptr, b.size, 0, 0, &cached), 0);
	SANITY_RET(gdr_map_v2(c.g, wc, &wva, b.size, GDR_MAP_FLAG_REQ_WC_MAPPING), 0);
	SANITY_RET(gdr_map_v2(c.g, cached, &cva, b.size, GDR_MAP_FLAG_REQ_CACHE_MAPPING), 0);
	want = malloc(b.size);
	got = malloc(b.size);
	SANITY_CHECK(want && got);
	for (int dir = 0; dir < 2; dir++) {
		tool_fill_pattern(want, b.size, 20u + (unsigned)dir);
		SANITY_RET(gdr_copy_to_mapping(dir ? cached : wc, dir ? cva : wva, want, b.size), 0);
		SANITY_RET(gdr_copy_from_mapping(dir ? wc : cached, got, dir ? wva : cva, b.size),
			   0);
		if (tool_compare(got, want, b.size))
			sanity_fail("data written through the %s mapping differs when read through "
				    "the %s one", dir ? "cached" : "WC", dir ? "WC" : "cached");
	}
	free(want);
	free(got);
	unmap_unpin(&c, wc, wva, b.size);
	unmap_unpin(&c, cached, cva, b.size);
	buf_free(&b);
	ctx_fini(&c);
}

struct thread_arg {
	struct sanity_ctx *c;
	const struct gpu_buf *b;
	gdr_mh_t mh;
	void *va;
	pthread_barrier_t *barrier;
	unsigned seed;
	char why[256];
};

/* Threads report failures through arg->why: sanity_fail would end the whole process early. */
static void *thread_pin_map(void *p)
{
	struct thread_arg *a = p;
	int r;

	cuCtxSetCurrent(a->c->cu.ctx);
	if (a->barrier)
		pthread_barrier_wait(a->barrier);
	r = gdr_pin_buffer(a->c->g, a->b->ptr, a->b->size, 0, 0, &a->mh);
	if (!r)
		r = gdr_map(a->c->g, a->mh, &a->va, a->b->size);
	if (r)
		snprintf(a->why, sizeof(a->why), "pin or map in a thread failed: %s", strerror(r));
	return NULL;
}

static void *thread_unmap_unpin(void *p)
{
	struct thread_arg *a = p;
	int r;

	cuCtxSetCurrent(a->c->cu.ctx);
	r = gdr_unmap(a->c->g, a->mh, a->va, a->b->size);
	if (!r)
		r = gdr_unpin_buffer(a->c->g, a->mh);
	if (r)
		snprintf(a->why, sizeof(a->why), "unmap or unpin in another thread failed: %s",
			 strerror(r));
	return NULL;
}

static void run_thread(void *(*fn)(void *), struct thread_arg *a)
{
	pthread_t t;

	SANITY_RET(pthread_create(&t, NULL, fn, a), 0);
	SANITY_RET(pthread_join(t, NULL), 0);
	if (a->why[0])
		sanity_fail("%s", a->why);
}

static void basic_child_thread_pins_buffer(enum sanity_mem mem)
{
	struct thread_arg a[2];
	char bytes[64];
	pthread_barrier_t barrier;
	pthread_t t[2];
	struct sanity_ctx c;
	struct gpu_buf b;

	need_mem(mem);
	ctx_init(&c);
	buf_alloc(&c, &b, SANITY_SIZE, mem);
	memset(a, 0, sizeof(a));
	for (int i = 0; i < 2; i++) {
		a[i].c = &c;
		a[i].b = &b;
	}
	/* Pin and map in one thread; the data is checked here, the cleanup is another thread's. */
	run_thread(thread_pin_map, &a[0]);
	memset(bytes, 0x5c, sizeof(bytes));
	SANITY_RET(gdr_copy_to_mapping(a[0].mh, a[0].va, bytes, sizeof(bytes)), 0);
	run_thread(thread_unmap_unpin, &a[0]);

	/* Two threads pin and map the same buffer at once on one gdr_t. */
	SANITY_RET(pthread_barrier_init(&barrier, NULL, 2), 0);
	for (int i = 0; i < 2; i++) {
		a[i].barrier = &barrier;
		a[i].why[0] = '\0';
		SANITY_RET(pthread_create(&t[i], NULL, thread_pin_map, &a[i]), 0);
	}
	for (int i = 0; i < 2; i++) {
		SANITY_RET(pthread_join(t[i], NULL), 0);
		if (a[i].why[0])
			sanity_fail("%s", a[i].why);
	}
	pthread_barrier_destroy(&barrier);
	SANITY_CHECK(a[0].mh.h != a[1].mh.h);
	write_words(a[0].va, b.size, 31);
	{
		char *got = malloc(b.size), *want = malloc(b.size);

		SANITY_CHECK(got && want);
		tool_fill_pattern(want, b.size, 31);
		SANITY_RET(gdr_copy_from_mapping(a[1].mh, got, a[1].va, b.size), 0);
		if (tool_compare(got, want, b.size))
			sanity_fail("two handles of one buffer see different data");
		free(got);
		free(want);
	}
	for (int i = 0; i < 2; i++)
		run_thread(thread_unmap_unpin, &a[i]);
	buf_free(&b);
	ctx_fini(&c);
}

static void basic_child_thread_pins_buffer_cumemalloc(void)
{
	basic_child_thread_pins_buffer(MEM_CUMEMALLOC);
}

static void basic_child_thread_pins_buffer_vmmalloc(void)
{
	basic_child_thread_pins_buffer(MEM_VMM);
}

static void attributes_sanity(void)
{
	struct sanity_ctx c;
	int v = -1, ext = 0;

	ctx_init(&c);
	SANITY_RET(gdr_get_attribute(c.g, GDR_ATTR_USE_PERSISTENT_MAPPING, &v), 0);
	SANITY_CHECK(v == 0 || v == 1);
	v = -1;
	SANITY_RET(gdr_get_attribute(c.g, GDR_ATTR_SUPPORT_PIN_FLAG_FORCE_PCIE, &v), 0);
	SANITY_CHECK(v == 0 || v == 1);
	v = -1;
	SANITY_RET(gdr_get_attribute(c.g, GDR_ATTR_USING_DMA_BUF_MMAP, &v), 0);
	SANITY_CHECK(v == (sanity_plat->backend == GDR_BACKEND_DMABUF));
	SANITY_RET(gdr_get_attribute(c.g, GDR_ATTR_MAX, &v), EINVAL);
	SANITY_RET(gdr_get_attribute(c.g, (gdr_attr_t)0, &v), EINVAL);
	/* The gdrcopy extension: a backend id from gdrcopy's library, EINVAL from GDRCopy's. */
	if (gdr_get_attribute(c.g, (gdr_attr_t)GDR_ATTR_EXT_BACKEND, &ext) == 0)
		SANITY_CHECK(ext >= GDR_BACKEND_GDRDRV && ext <= GDR_BACKEND_VULKAN);
	ctx_fini(&c);
}

const struct sanity_case sanity_cases_basic[] = {
	{ "basic_cumemalloc", basic_cumemalloc, 0 },
	{ "basic_vmmalloc", basic_vmmalloc, 0 },
	{ "basic_v2_cumemalloc", basic_v2_cumemalloc, 0 },
	{ "basic_v2_vmmalloc", basic_v2_vmmalloc, 0 },
	{ "basic_v2_forcepci_cumemalloc", basic_v2_forcepci_cumemalloc, 0 },
	{ "basic_v2_forcepci_vmmalloc", basic_v2_forcepci_vmmalloc, 0 },
	{ "basic_with_tokens", basic_with_tokens, 0 },
	{ "basic_unaligned_mapping", basic_unaligned_mapping, 0 },
	{ "basic_small_buffers_mapping", basic_small_buffers_mapping, 0 },
	{ "basic_child_thread_pins_buffer_cumemalloc", basic_child_thread_pins_buffer_cumemalloc, 0 },
	{ "basic_child_thread_pins_buffer_vmmalloc", basic_child_thread_pins_buffer_vmmalloc, 0 },
	{ "data_validation_cumemalloc", data_validation_cumemalloc, 0 },
	{ "data_validation_vmmalloc", data_validation_vmmalloc, 0 },
	{ "data_validation_v2_cumemalloc", data_validation_v2_cumemalloc, 0 },
	{ "data_validation_v2_forcepci_cumemalloc", data_validation_v2_forcepci_cumemalloc, 0 },
	{ "data_validation_mix_mappings_cumemalloc", data_validation_mix_mappings_cumemalloc, 0 },
	{ "attributes_sanity", attributes_sanity, 0 },
	{ NULL, NULL, 0 },
};
