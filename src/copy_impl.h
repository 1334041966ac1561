/* SPDX-License-Identifier: MIT */
/*
 * Inside the copy routines: the per-ISA routines, their descriptors and the selection table.
 * For copy.c, src/arch/ and the tests and tools that exercise one routine at a time.
 *
 * A store routine copies into a write-combined mapping (dst is the device side); a load routine
 * copies out of one (src is the device side). Both take any alignment and any n, including 0;
 * neither fences (the dispatcher does). Stores write exactly [dst, dst + n). Loads write exactly
 * [dst, dst + n) of the host buffer but may read the aligned 16-byte blocks that contain the
 * ends of [src, src + n): a read changes nothing on the device, and an aligned block never
 * crosses a page, so it stays inside the mapping.
 */
#ifndef GDR_COPY_IMPL_H
#define GDR_COPY_IMPL_H

#include <stddef.h>

#include "gdrapi.h"

typedef void (*gdr_copy_fn)(void *dst, const void *src, size_t n);

void gdr_copy_store_generic(void *dst, const void *src, size_t n);
void gdr_copy_load_generic(void *dst, const void *src, size_t n);
void gdr_copy_store_memcpy(void *dst, const void *src, size_t n);
void gdr_copy_load_memcpy(void *dst, const void *src, size_t n);

#if defined(__x86_64__)
/* MOVNTDQ is SSE2: gdr_copy_store_sse is also the sse41 routine's store. */
void gdr_copy_store_sse(void *dst, const void *src, size_t n);
void gdr_copy_load_sse(void *dst, const void *src, size_t n);
void gdr_copy_load_sse41(void *dst, const void *src, size_t n);
void gdr_copy_store_avx2(void *dst, const void *src, size_t n);
void gdr_copy_load_avx2(void *dst, const void *src, size_t n);
void gdr_copy_store_avx512(void *dst, const void *src, size_t n);
void gdr_copy_load_avx512(void *dst, const void *src, size_t n);
void gdr_copy_store_movdir64b(void *dst, const void *src, size_t n);
void gdr_copy_store_rep_movsb(void *dst, const void *src, size_t n);
#elif defined(__aarch64__)
void gdr_copy_store_neon(void *dst, const void *src, size_t n);
void gdr_copy_load_neon(void *dst, const void *src, size_t n);
void gdr_copy_store_stp(void *dst, const void *src, size_t n);
void gdr_copy_load_stp(void *dst, const void *src, size_t n);
#elif defined(__powerpc64__)
void gdr_copy_store_power(void *dst, const void *src, size_t n);
void gdr_copy_load_power(void *dst, const void *src, size_t n);
#endif

struct gdr_copy_impl {
	int id;			/* GDR_COPY_IMPL_* */
	const char *name;	/* as GDRCOPY_COPY_IMPL takes it */
	unsigned int needs;	/* enum gdr_cpu_feature mask the CPU must have */
	gdr_copy_fn store;	/* NULL: no routine for copies into WC */
	gdr_copy_fn load;	/* NULL: no routine for copies out of WC */
	size_t load_min;	/* never chosen for loads of fewer bytes than this */
};

/* Size classes: a copy of n bytes uses the routine of the first class with n <= max. */
enum gdr_copy_class {
	GDR_COPY_TINY,		/* <= 64 B */
	GDR_COPY_SMALL,		/* <= 1 KiB */
	GDR_COPY_MEDIUM,	/* <= 16 KiB */
	GDR_COPY_LARGE,
	GDR_COPY_NCLASSES
};
#define GDR_COPY_TINY_MAX   64
#define GDR_COPY_SMALL_MAX  1024
#define GDR_COPY_MEDIUM_MAX 16384

static inline enum gdr_copy_class gdr_copy_class_of(size_t n)
{
	if (n <= GDR_COPY_TINY_MAX)
		return GDR_COPY_TINY;
	if (n <= GDR_COPY_SMALL_MAX)
		return GDR_COPY_SMALL;
	if (n <= GDR_COPY_MEDIUM_MAX)
		return GDR_COPY_MEDIUM;
	return GDR_COPY_LARGE;
}

/* The smallest n of a class. */
size_t gdr_copy_class_min(enum gdr_copy_class c);
const char *gdr_copy_class_name(enum gdr_copy_class c);

struct gdr_copy_table {
	gdr_copy_fn to_fn[GDR_COPY_NCLASSES];
	gdr_copy_fn from_fn[GDR_COPY_NCLASSES];
	const struct gdr_copy_impl *to[GDR_COPY_NCLASSES];
	const struct gdr_copy_impl *from[GDR_COPY_NCLASSES];
	int tiny_to_inline;	/* to[GDR_COPY_TINY] is generic, which copy.c inlines */
};

/* Every routine this build has, generic first; *count gets their number. */
const struct gdr_copy_impl *const *gdr_copy_impls(size_t *count);
/* The routine of this build named name, or NULL. */
const struct gdr_copy_impl *gdr_copy_impl_by_name(const char *name);
/* The name of a GDR_COPY_IMPL_* id, also for routines of other architectures; NULL if unknown. */
const char *gdr_copy_impl_id_name(int id);
/* The enum gdr_cpu_feature bits of impl->needs that cpu_flags lacks (0: it can run). */
unsigned int gdr_copy_impl_missing(const struct gdr_copy_impl *impl, unsigned int cpu_flags);

/*
 * Fill t for a CPU with cpu_flags: the automatic choice, or forced (a GDRCOPY_COPY_IMPL value;
 * NULL for none). Returns 0 when forced is NULL or honoured, EINVAL for a name this build does
 * not know, ENOTSUP for a routine the CPU cannot run; t then holds the automatic choice. note
 * gets a message for the log (the error, or the classes a forced routine does not cover), or ""
 * when there is nothing to say. Pure: reads no environment, logs nothing.
 */
int gdr_copy_select(struct gdr_copy_table *t, unsigned int cpu_flags, const char *forced,
		    char *note, size_t note_len);

/* "copy to WC: tiny generic, small avx2, ...; copy from WC: ..." */
void gdr_copy_table_describe(const struct gdr_copy_table *t, char *buf, size_t len);

/* The routine t uses for n-byte copies into (to_device) or out of WC. */
const struct gdr_copy_impl *gdr_copy_table_impl(const struct gdr_copy_table *t, int to_device,
						 size_t n);

/* The table the copy functions use (the generic routines until gdr_copy_init has run). */
void gdr_copy_table_current(struct gdr_copy_table *t);

enum gdr_copy_fence {
	GDR_COPY_FENCE_NONE,
	GDR_COPY_FENCE_STORE,	/* sfence, dmb st, sync */
	GDR_COPY_FENCE_FULL,	/* mfence, dmb sy, sync */
};

/* The fence that ends a copy, in either direction, through a mapping of type; what copies use. */
enum gdr_copy_fence gdr_copy_fence_for(gdr_mapping_type_t type, int mixed);

#endif
