/* SPDX-License-Identifier: MIT */
/*
 * Data through gdrdrv's mappings, checked against the sim's own view of the memory (its READ
 * and WRITE, the cudaMemcpy of this tier): the sanity catalogue's data_validation cases, at
 * many sizes and offsets on both sides, over every physical layout the sim can give a pin.
 */
#include <errno.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/auxv.h>
#include <sys/mman.h>

#include "vmtest.h"

/* Guard bytes on either side of every copied range, host and GPU. */
#define GUARD 64
#define GUARD_BYTE 0xc5

struct mapped {
	gdr_t g;
	struct nvp2p_sim_alloc a;
	gdr_mh_t mh;
	uint64_t pin_va;	/* where the pin starts, a GPU page of a.va */
	size_t size;
	unsigned char *map;
};

/* Allocate alloc_size with flags, pin and map size bytes from GPU page first_page of it. */
static int map_range(struct mapped *m, uint64_t alloc_size, uint32_t flags,
		     unsigned int first_page, size_t size)
{
	gdr_info_t info;
	void *p;

	memset(m, 0, sizeof(*m));
	m->g = vm_gdr_open();
	CHECK(m->g, "gdr_open");
	CHECK_OK(vm_alloc(alloc_size, flags, &m->a));
	m->pin_va = m->a.va + first_page * GPU_PAGE;
	m->size = size;
	CHECK_OK(gdr_pin_buffer(m->g, m->pin_va, size, 0, 0, &m->mh));
	CHECK_OK(gdr_get_info(m->g, m->mh, &info));
	CHECK(!info.mapped && info.mapping_type == GDR_MAPPING_TYPE_NONE, "mapped before gdr_map");
	CHECK_OK(gdr_map(m->g, m->mh, &p, size));
	m->map = p;
	CHECK_OK(gdr_get_info(m->g, m->mh, &info));
	CHECK(info.mapped && info.mapping_type != GDR_MAPPING_TYPE_NONE, "not mapped after gdr_map");
	return TEST_PASS;
}

static int unmap_range(struct mapped *m)
{
	CHECK_OK(gdr_unmap(m->g, m->mh, m->map, m->size));
	CHECK_OK(gdr_unpin_buffer(m->g, m->mh));
	CHECK_OK(gdr_close(m->g));
	return TEST_PASS;
}

/* The whole mapping, three ways: CPU stores, copy_to_mapping, and GPU-side writes read back. */
static int check_whole(struct mapped *m, uint32_t seed)
{
	size_t n = m->size, i;
	unsigned char *want = malloc(n), *got = malloc(n);
	volatile uint32_t *w = (volatile uint32_t *)m->map;

	CHECK(want && got, "out of memory");
	vm_fill(want, n, seed);
	for (i = 0; i < n / 4; i++)
		w[i] = ((const uint32_t *)want)[i];
	CHECK_OK(vm_sim_read(m->pin_va, got, n & ~3UL));
	CHECK(vm_diff(want, got, n & ~3UL) < 0, "CPU stores: byte %ld differs in memory",
	      vm_diff(want, got, n & ~3UL));

	vm_fill(want, n, seed + 1);
	CHECK_OK(gdr_copy_to_mapping(m->mh, m->map, want, n));
	CHECK_OK(vm_sim_read(m->pin_va, got, n));
	CHECK(vm_diff(want, got, n) < 0, "copy_to_mapping: byte %ld differs in memory",
	      vm_diff(want, got, n));
	memset(got, 0, n);
	CHECK_OK(gdr_copy_from_mapping(m->mh, got, m->map, n));
	CHECK(vm_diff(want, got, n) < 0, "copy_from_mapping: byte %ld differs",
	      vm_diff(want, got, n));

	vm_fill(want, n, seed + 2);
	CHECK_OK(vm_sim_write(m->pin_va, want, n));
	memset(got, 0, n);
	CHECK_OK(gdr_copy_from_mapping(m->mh, got, m->map, n));
	CHECK(vm_diff(want, got, n) < 0, "memory written behind the mapping: byte %ld differs",
	      vm_diff(want, got, n));
	for (i = 0; i < n / 4; i += 997)
		CHECK(w[i] == ((const uint32_t *)want)[i], "CPU load of word %zu differs", i);
	free(want);
	free(got);
	return TEST_PASS;
}

/*
 * copy_to_mapping of len bytes from host offset hoff to mapping offset moff, then back with
 * copy_from_mapping; the bytes around both ranges must stay as they were.
 */
static int check_piece(struct mapped *m, size_t moff, size_t hoff, size_t len, uint32_t seed)
{
	static unsigned char src[GUARD + 64 + 70000 + GUARD], dst[sizeof(src)];
	static unsigned char want[GUARD + 70000 + GUARD], got[sizeof(want)];
	size_t lo = moff >= GUARD ? moff - GUARD : 0;
	size_t hi = moff + len + GUARD <= m->size ? moff + len + GUARD : m->size;
	long d;

	CHECK(hoff + len + 2 * GUARD <= sizeof(src) && hi - lo <= sizeof(want), "piece too big");
	/* Known GPU bytes around the target. */
	memset(want, GUARD_BYTE, hi - lo);
	CHECK_OK(vm_sim_write(m->pin_va + lo, want, hi - lo));
	vm_fill(src + GUARD + hoff, len, seed);
	memcpy(want + (moff - lo), src + GUARD + hoff, len);

	CHECK_OK(gdr_copy_to_mapping(m->mh, m->map + moff, src + GUARD + hoff, len));
	CHECK_OK(vm_sim_read(m->pin_va + lo, got, hi - lo));
	d = vm_diff(want, got, hi - lo);
	CHECK(d < 0, "copy_to_mapping of %zu bytes at mapping offset %zu, host offset %zu: "
	      "byte %ld of [%zu, %zu) is %#x, want %#x", len, moff, hoff, d, lo, hi,
	      got[d < 0 ? 0 : d], want[d < 0 ? 0 : d]);

	memset(dst, GUARD_BYTE, hoff + len + 2 * GUARD);
	CHECK_OK(gdr_copy_from_mapping(m->mh, dst + GUARD + hoff, m->map + moff, len));
	d = vm_diff(dst + GUARD + hoff, src + GUARD + hoff, len);
	CHECK(d < 0, "copy_from_mapping of %zu bytes at mapping offset %zu, host offset %zu: "
	      "byte %ld differs", len, moff, hoff, d);
	for (d = 0; d < (long)(GUARD + hoff); d++)
		CHECK(dst[d] == GUARD_BYTE, "copy_from_mapping wrote %ld bytes before its target",
		      GUARD + (long)hoff - d);
	for (d = 0; d < GUARD; d++)
		CHECK(dst[GUARD + hoff + len + d] == GUARD_BYTE,
		      "copy_from_mapping of %zu bytes wrote past its end", len);
	return TEST_PASS;
}

static int layout_case(uint32_t flags, uint64_t alloc_size, unsigned int first_page,
		       size_t size, uint32_t seed)
{
	struct mapped m;
	int ret;

	ret = map_range(&m, alloc_size, flags, first_page, size);
	if (!ret)
		ret = check_whole(&m, seed);
	if (!ret)
		ret = unmap_range(&m);
	return ret;
}

/* The sanity test's data_validation: the whole buffer, then the offsets it names. */
static int case_data_validation(void)
{
	static const size_t offs[] = { 1, 2, 3, 4, 5, 6, 7, 11, 129, 1023 };
	const char *type_name;
	struct mapped m;
	gdr_info_t info;
	unsigned int i, unit;
	int ret;

	ret = map_range(&m, 1 << 20, 0, 0, 1 << 20);
	if (ret)
		return ret;
	CHECK_OK(gdr_get_info(m.g, m.mh, &info));
	CHECK_OK(gdr_get_mapping_type_string(info.mapping_type, &type_name));
	vm_log("mapping type %d (%s)", info.mapping_type, type_name);
	for (i = 0; i < 3; i++) {
		ret = check_whole(&m, 100 + i);
		if (ret)
			return ret;
	}
	/* Offsets in dwords and in bytes, on the mapping side, the host side, and both. */
	for (unit = 1; unit <= 4; unit += 3) {
		for (i = 0; i < sizeof(offs) / sizeof(offs[0]); i++) {
			size_t o = offs[i] * unit, len = 4096 + 3 * o;

			if ((ret = check_piece(&m, o, 0, len, i)) ||
			    (ret = check_piece(&m, 0, o % 64, len, i + 20)) ||
			    (ret = check_piece(&m, o, o % 64, len, i + 40)))
				return ret;
		}
	}
	return unmap_range(&m);
}

/* Every small size, and sizes around the copy routines' thresholds, at odd offsets. */
static int case_data_validation_sizes(void)
{
	static const size_t big[] = {
		255, 256, 257, 511, 512, 513, 1023, 1024, 1025, 2047, 2048, 4095, 4096, 4097,
		8191, 8193, 16384, 65535, 65536, 65537,
	};
	static const size_t moffs[] = { 0, 1, 3, 8, 31, 63, GPU_PAGE - 5 };
	static const size_t hoffs[] = { 0, 5, 32 };
	struct mapped m;
	unsigned int i, j, k;
	int ret;

	ret = map_range(&m, 4 * GPU_PAGE, 0, 0, 4 * GPU_PAGE);
	if (ret)
		return ret;
	for (j = 0; j < sizeof(moffs) / sizeof(moffs[0]); j++) {
		for (k = 0; k < sizeof(hoffs) / sizeof(hoffs[0]); k++) {
			for (i = 0; i <= 130; i++) {
				ret = check_piece(&m, moffs[j], hoffs[k], i, i * 7 + j + k);
				if (ret)
					return ret;
			}
			for (i = 0; i < sizeof(big) / sizeof(big[0]); i++) {
				ret = check_piece(&m, moffs[j], hoffs[k], big[i], i + j + k);
				if (ret)
					return ret;
			}
		}
	}
	return unmap_range(&m);
}

/* Chunks in falling physical order: gdrdrv finds no run to merge. */
static int case_data_validation_scattered(void)
{
	int ret = layout_case(NVP2P_SIM_ALLOC_SCATTERED, 16 * GPU_PAGE, 0, 16 * GPU_PAGE, 1);

	/* A pin from the middle of the allocation: its table starts at the right chunk. */
	return ret ? ret : layout_case(NVP2P_SIM_ALLOC_SCATTERED, 16 * GPU_PAGE, 5,
				       7 * GPU_PAGE, 2);
}

/* One physically contiguous block: one run for the whole pin. */
static int case_data_validation_contiguous(void)
{
	int ret = layout_case(NVP2P_SIM_ALLOC_CONTIGUOUS, 2 << 20, 0, 2 << 20, 3);

	return ret ? ret : layout_case(NVP2P_SIM_ALLOC_CONTIGUOUS, 2 << 20, 3, 9 * GPU_PAGE, 4);
}

static int case_data_validation_large(void)
{
	return layout_case(0, 16 << 20, 0, 16 << 20, 5);
}

/* A mapping smaller than the pin, and one that is not a whole number of GPU pages. */
static int case_data_validation_partial_map(void)
{
	struct mapped m;
	unsigned char buf[4096];
	void *p;
	int ret;

	ret = map_range(&m, 8 * GPU_PAGE, 0, 0, 3 * GPU_PAGE);
	if (!ret)
		ret = check_whole(&m, 6);
	if (!ret)
		ret = unmap_range(&m);
	if (ret)
		return ret;

	m.g = vm_gdr_open();
	CHECK(m.g, "gdr_open");
	CHECK_OK(gdr_pin_buffer(m.g, m.a.va, 8 * GPU_PAGE, 0, 0, &m.mh));
	CHECK_OK(gdr_map(m.g, m.mh, &p, 5000));
	vm_fill(buf, sizeof(buf), 9);
	CHECK_OK(gdr_copy_to_mapping(m.mh, (char *)p + 900, buf, sizeof(buf)));
	memset(buf, 0, sizeof(buf));
	CHECK_OK(vm_sim_read(m.a.va + 900, buf, sizeof(buf)));
	{
		unsigned char want[4096];

		vm_fill(want, sizeof(want), 9);
		CHECK(vm_diff(want, buf, sizeof(buf)) < 0, "5000-byte mapping: data differs");
	}
	CHECK_OK(gdr_unmap(m.g, m.mh, p, 5000));
	CHECK_OK(gdr_unpin_buffer(m.g, m.mh));
	return TEST_PASS;
}

/*
 * A piece of a mapping that starts inside a GPU page, moved by mremap to an address lower than
 * its offset in that GPU page (root may map there; so may anyone where vm.mmap_min_addr is
 * 4096, RHEL's default), shows the memory it mapped before. The fault handler computed where
 * the GPU page would begin in the piece's new place, below address 0: the value wrapped, no
 * page table entry was made, and a read of pinned memory raised SIGBUS.
 */
static int case_data_validation_moved_low(void)
{
	const uintptr_t low = 0x4000;
	const size_t piece = 0x8000;	/* where the piece starts in the GPU page, above low */
	uint32_t want = 0x10e4a11, got = 0;
	struct nvp2p_sim_alloc a;
	uint64_t h;
	char *map;
	void *q;
	int fd, err, sig;

	if (CPU_PAGE > low)
		return test_skip("%zu-byte CPU pages: no piece of a mapping starts at 0x%zx",
				 CPU_PAGE, piece);
	fd = vm_gdrdrv_open();
	CHECK(fd >= 0, "open");
	CHECK_OK(vm_alloc(GPU_PAGE, 0, &a));
	CHECK_OK(vm_sim_write(a.va + piece, &want, sizeof(want)));
	CHECK_OK(vm_raw_pin(fd, a.va, GPU_PAGE, 0, &h));
	map = vm_raw_map(fd, h, GPU_PAGE, &err);
	CHECK(map, "mmap: %s", strerror(err));
	/* Untouched, the piece moves without page table entries and faults where it lands. */
	q = mremap(map + piece, CPU_PAGE, CPU_PAGE, MREMAP_MAYMOVE | MREMAP_FIXED, (void *)low);
	if (q == MAP_FAILED && (errno == EPERM || errno == EACCES))
		return test_skip("this process may not map at %#lx: %s", (unsigned long)low,
				 strerror(errno));
	CHECK(q == (void *)low, "mremap to %#lx: %s", (unsigned long)low, strerror(errno));
	sig = vm_try_read32(q, &got);
	CHECK(sig == 0, "a read of the moved piece raised signal %d", sig);
	CHECK(got == want, "the moved piece shows %#x, the memory holds %#x", got, want);
	CHECK(vm_try_write32((char *)q + 4, ~want) == 0, "a store through the moved piece faulted");
	CHECK_OK(vm_sim_read(a.va + piece + 4, &got, sizeof(got)));
	CHECK(got == ~want, "the store through the moved piece left %#x", got);
	/* The rest of the GPU page, where it stayed. */
	CHECK(vm_try_read32(map + piece + CPU_PAGE, &got) == 0, "a read next to the hole faulted");
	CHECK(munmap(q, CPU_PAGE) == 0 && munmap(map, GPU_PAGE) == 0, "munmap");
	CHECK_OK(vm_raw_unpin(fd, h));
	CHECK_OK(vm_free(a.va));
	return TEST_PASS;
}

/*
 * Whether gdrdrv maps coherent GPU memory cached on this CPU (gdrdrv_detect_platform): arm64
 * (Grace) on a board without BlueField-3, as QEMU's virt, and POWER9; not POWER8, never x86.
 */
static bool cpu_maps_coherent_cached(void)
{
#if defined(__aarch64__)
	return true;
#elif defined(__powerpc64__)
	const char *platform = (const char *)getauxval(AT_PLATFORM);

	return platform && strcmp(platform, "power9") == 0;
#else
	return false;
#endif
}

/*
 * Memory the provider calls CPU-cacheable (a coherent GPU). Where the CPU may cache it, gdrdrv
 * maps it cached, by default and when asked; elsewhere (x86, POWER8) it maps it WC and refuses
 * a cached mapping.
 */
static int case_data_validation_cacheable(void)
{
	struct mapped m;
	gdr_info_t info;
	gdr_mh_t mh2;
	void *p;
	int ret;

	ret = map_range(&m, 4 * GPU_PAGE, NVP2P_SIM_ALLOC_CPU_CACHEABLE, 0, 4 * GPU_PAGE);
	if (ret)
		return ret;
	CHECK_OK(gdr_get_info(m.g, m.mh, &info));
	vm_log("default mapping type of cacheable memory: %d", info.mapping_type);
	if (cpu_maps_coherent_cached())
		CHECK(info.mapping_type == GDR_MAPPING_TYPE_CACHING,
		      "this CPU may cache it, but it was mapped as type %d by default",
		      info.mapping_type);
	else
		CHECK(info.mapping_type == GDR_MAPPING_TYPE_WC,
		      "this CPU may not cache it, but it was mapped as type %d by default",
		      info.mapping_type);
	ret = check_whole(&m, 11);
	if (ret)
		return ret;

	CHECK_OK(gdr_pin_buffer(m.g, m.a.va, 4 * GPU_PAGE, 0, 0, &mh2));
	ret = gdr_map_v2(m.g, mh2, &p, 4 * GPU_PAGE, GDR_MAP_FLAG_REQ_CACHE_MAPPING);
	if (cpu_maps_coherent_cached())
		CHECK(ret == 0, "this CPU may cache it, but a cached mapping was refused: %s",
		      test_strerror(ret));
	else
		CHECK(ret == EOPNOTSUPP, "this CPU may not cache it, but a cached mapping gave %s",
		      test_strerror(ret));
	if (ret == 0) {
		CHECK_OK(gdr_get_info(m.g, mh2, &info));
		CHECK(info.mapping_type == GDR_MAPPING_TYPE_CACHING, "asked for a cached mapping, "
		      "got type %d", info.mapping_type);
		CHECK_OK(gdr_unmap(m.g, mh2, p, 4 * GPU_PAGE));
	}
	CHECK_OK(gdr_unpin_buffer(m.g, mh2));
	return unmap_range(&m);
}

/* The same memory pinned twice, mapped WC and cached; writes through one seen by the other. */
static int case_data_validation_mix_mappings(void)
{
	struct mapped m;
	gdr_mh_t mh2;
	uint32_t v;
	void *cached;
	int ret;

	ret = map_range(&m, GPU_PAGE, NVP2P_SIM_ALLOC_CPU_CACHEABLE, 0, GPU_PAGE);
	if (ret)
		return ret;
	CHECK_OK(gdr_pin_buffer(m.g, m.a.va, GPU_PAGE, 0, 0, &mh2));
	ret = gdr_map_v2(m.g, mh2, &cached, GPU_PAGE, GDR_MAP_FLAG_REQ_CACHE_MAPPING);
	if (ret == EOPNOTSUPP)
		return test_skip("gdrdrv offers no CPU-cached mappings on this platform (as GDRCopy, "
			       "which waives this case on non-coherent platforms)");
	CHECK_OK(ret);
	v = 0x12345678;
	CHECK_OK(gdr_copy_to_mapping(m.mh, m.map, &v, sizeof(v)));
	v = 0;
	CHECK_OK(gdr_copy_from_mapping(mh2, &v, cached, sizeof(v)));
	CHECK(v == 0x12345678, "WC write not seen through the cached mapping: %#x", v);
	v = 0x9abcdef0;
	CHECK_OK(gdr_copy_to_mapping(mh2, cached, &v, sizeof(v)));
	v = 0;
	CHECK_OK(gdr_copy_from_mapping(m.mh, &v, m.map, sizeof(v)));
	CHECK(v == 0x9abcdef0, "cached write not seen through the WC mapping: %#x", v);
	CHECK_OK(gdr_unmap(m.g, mh2, cached, GPU_PAGE));
	CHECK_OK(gdr_unpin_buffer(m.g, mh2));
	return unmap_range(&m);
}

const struct vm_case vm_cases[] = {
	{ "data_validation", case_data_validation, "pn" },
	{ "data_validation_sizes", case_data_validation_sizes, "pn" },
	{ "data_validation_scattered", case_data_validation_scattered, "pn" },
	{ "data_validation_contiguous", case_data_validation_contiguous, "pn" },
	{ "data_validation_large", case_data_validation_large, "pn" },
	{ "data_validation_partial_map", case_data_validation_partial_map, "pn" },
	{ "data_validation_moved_low", case_data_validation_moved_low, "pn" },
	{ "data_validation_cacheable", case_data_validation_cacheable, "pn" },
	{ "data_validation_mix_mappings", case_data_validation_mix_mappings, "pn" },
	{ NULL, NULL, NULL },
};
