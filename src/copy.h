/* SPDX-License-Identifier: MIT */
/*
 * CPU copies to and from mappings of GPU memory. The routines are chosen once, per direction and
 * size class, from the CPU's features (cpu.h), or forced with GDRCOPY_COPY_IMPL.
 */
#ifndef GDR_COPY_H
#define GDR_COPY_H

#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include "arch/generic/copy_generic.h"
#include "copy_impl.h"
#include "gdrapi.h"

/* Choose the routines; once per process, thread-safe. gdr_open calls it. */
void gdr_copy_init(void);

/*
 * Copy n bytes into (to) or out of (from) a mapping of the given type. Writes no byte outside
 * [dst, dst + n); reads no byte outside [src, src + n) except, out of a WC mapping, the rest of
 * the aligned 64-byte lines that hold its ends (never another page). Ends with the fence the
 * type needs, a full fence when mixed. Before gdr_copy_init they use the generic routines.
 */
void gdr_copy_to_mapping_type(gdr_mapping_type_t type, int mixed, void *dst, const void *src,
			      size_t n);
void gdr_copy_from_mapping_type(gdr_mapping_type_t type, int mixed, void *dst, const void *src,
				size_t n);

/* The GDR_COPY_IMPL_* routine used for n-byte copies into (to_device) or out of a WC mapping. */
int gdr_copy_impl_for(int to_device, size_t n);

/*
 * The table the copies use: the generic routines until gdr_copy_init has chosen (copy.c).
 * Written once by gdr_copy_init, or by gdr_copy_table_install with no copy running.
 */
extern struct gdr_copy_table gdr_copy_active;

static inline __attribute__((always_inline)) void gdr_copy_fence(enum gdr_copy_fence f)
{
	/* The store fence first: the common case, one test. */
#if defined(__x86_64__)
	if (__builtin_expect(f == GDR_COPY_FENCE_STORE, 1))
		__asm__ volatile("sfence" : : : "memory");
	else if (f == GDR_COPY_FENCE_FULL)
		__asm__ volatile("mfence" : : : "memory");
#elif defined(__aarch64__)
	if (__builtin_expect(f == GDR_COPY_FENCE_STORE, 1))
		__asm__ volatile("dmb st" : : : "memory");
	else if (f == GDR_COPY_FENCE_FULL)
		__asm__ volatile("dmb sy" : : : "memory");
#elif defined(__powerpc64__)
	if (f != GDR_COPY_FENCE_NONE)
		__asm__ volatile("sync" : : : "memory");
#else
	if (f != GDR_COPY_FENCE_NONE)
		__atomic_thread_fence(__ATOMIC_SEQ_CST);
#endif
}

/*
 * A tiny store into WC, inline: a flag or doorbell of whole aligned 8-byte words is that many
 * stores and nothing else; any other range takes the generic walk. Every access is one aligned
 * store of at most 8 bytes, so an aligned 4- or 8-byte flag is written atomically, as GDRCopy
 * writes it.
 */
static inline __attribute__((always_inline)) void gdr_copy_tiny_store(void *dst, const void *src,
								       size_t n)
{
	if (!(((uintptr_t)dst | n) & 7)) {
		for (size_t i = 0; i < n; i += 8) {
			uint64_t v;

			memcpy(&v, (const uint8_t *)src + i, 8);
			*(volatile gdr_u64_alias *)((uint8_t *)dst + i) = v;
		}
	} else {
		gdr_generic_store(dst, src, n);
	}
}

/*
 * The copies through a WC mapping when mappings of one type exist: what the public calls
 * inline. Nothing is kept across the routine's call (the fence is read from the table after
 * it), so a caller that keeps nothing either needs no saved registers: on a BAR, every
 * instruction between one read's loads and the next read's delays the next (docs/performance.md).
 */
static inline __attribute__((always_inline)) void gdr_copy_to_wc(void *dst, const void *src,
								  size_t n)
{
	const struct gdr_copy_dir *d = &gdr_copy_active.to;

	if (n <= gdr_copy_active.tiny_to_max)
		gdr_copy_tiny_store(dst, src, n);
	else
		d->fn[gdr_copy_class_of(d, n)](dst, src, n);
	gdr_copy_fence(GDR_COPY_FENCE_STORE);
}

static inline __attribute__((always_inline)) void gdr_copy_from_wc(void *dst, const void *src,
								    size_t n)
{
	const struct gdr_copy_dir *d = &gdr_copy_active.from;

	d->fn[gdr_copy_class_of(d, n)](dst, src, n);
	gdr_copy_fence(gdr_copy_active.from_wc_fence);
}

#endif
