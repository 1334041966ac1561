/* SPDX-License-Identifier: MIT */
/*
 * Inside the copy routines: the per-ISA routines, their descriptors and the selection table.
 * For copy.c, src/arch/ and the tests and benchmarks that exercise one routine at a time.
 *
 * A store routine copies into a write-combined mapping (dst is the device side); a load routine
 * copies out of one (src is the device side). Both take any alignment and any n, including 0;
 * neither fences (the dispatcher does). Stores write exactly [dst, dst + n). Loads write exactly
 * [dst, dst + n) of the host buffer but may read the aligned 64-byte lines that contain the
 * ends of [src, src + n): a read changes nothing on the device, a streaming load fetches the
 * whole line anyway, and an aligned line never crosses a page, so it stays inside the mapping.
 */
#ifndef GDR_COPY_IMPL_H
#define GDR_COPY_IMPL_H

#include <stddef.h>

#include "gdrapi.h"
#include "gdrapi_ext.h"

typedef void (*gdr_copy_fn)(void *dst, const void *src, size_t n);

void gdr_copy_store_generic(void *dst, const void *src, size_t n);
void gdr_copy_load_generic(void *dst, const void *src, size_t n);
void gdr_copy_store_memcpy(void *dst, const void *src, size_t n);
void gdr_copy_load_memcpy(void *dst, const void *src, size_t n);

#if defined(__x86_64__)
/* MOVNTDQ is SSE2: gdr_copy_store_sse is also the sse41 routines' store. */
void gdr_copy_store_sse(void *dst, const void *src, size_t n);
void gdr_copy_load_sse(void *dst, const void *src, size_t n);
void gdr_copy_load_sse41(void *dst, const void *src, size_t n);
void gdr_copy_load_sse41_blocks(void *dst, const void *src, size_t n);
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
void gdr_copy_store_scalar(void *dst, const void *src, size_t n);
void gdr_copy_load_scalar(void *dst, const void *src, size_t n);
#endif

struct gdr_copy_impl {
	/*
	 * GDR_COPY_IMPL_*: the routine's family, which gdr_get_attribute reports. A variant of a
	 * family (sse41_blocks) shares the family's id and has a name of its own.
	 */
	int id;
	/* As GDRCOPY_COPY_IMPL takes it: gdr_ext_copy_impl_name(id), or a variant's own name. */
	const char *name;
	unsigned int needs;	/* enum gdr_cpu_feature mask the CPU must have */
	unsigned int prefers;	/* more features the automatic choice waits for (rep movsb: ERMS) */
	gdr_copy_fn store;	/* NULL: no routine for copies into WC */
	gdr_copy_fn load;	/* NULL: no routine for copies out of WC */
	size_t load_min;	/* never chosen for loads of fewer bytes than this */
};

/*
 * One direction's routines by size class: a copy of n bytes uses class c, the first with
 * n <= max[c]; the last class's max is SIZE_MAX. The classes and the automatic choice in each
 * come from one table in copy.c.
 */
#define GDR_COPY_MAX_CLASSES 8

struct gdr_copy_dir {
	int nclasses;
	size_t max[GDR_COPY_MAX_CLASSES];
	gdr_copy_fn fn[GDR_COPY_MAX_CLASSES];
	const struct gdr_copy_impl *impl[GDR_COPY_MAX_CLASSES];
};

/* Tiny WC stores (flags, doorbells) of up to this many bytes may be inlined in the dispatcher. */
#define GDR_COPY_TINY_MAX 64

enum gdr_copy_fence {
	GDR_COPY_FENCE_NONE,
	GDR_COPY_FENCE_STORE,	/* sfence, dmb st, sync */
	GDR_COPY_FENCE_FULL,	/* mfence, dmb sy, sync */
};

struct gdr_copy_table {
	struct gdr_copy_dir to;		/* copies into WC */
	struct gdr_copy_dir from;	/* copies out of WC */
	/* WC stores of up to this many bytes use the inline generic store; 0: none do. */
	size_t tiny_to_max;
	/*
	 * The fence after a copy out of a WC mapping when mappings of one type exist: STORE, as
	 * GDRCopy 2.6. Benchmarks set NONE to measure what the fence costs.
	 */
	enum gdr_copy_fence from_wc_fence;
};

static inline int gdr_copy_class_of(const struct gdr_copy_dir *d, size_t n)
{
	int c = 0;

	while (n > d->max[c])
		c++;
	return c;
}

/* The smallest n of class c. */
static inline size_t gdr_copy_class_min(const struct gdr_copy_dir *d, int c)
{
	return c ? d->max[c - 1] + 1 : 0;
}

/* Every routine this build has, generic first; *count gets their number. */
const struct gdr_copy_impl *const *gdr_copy_impls(size_t *count);
/* The routine of this build named name, or NULL. */
const struct gdr_copy_impl *gdr_copy_impl_by_name(const char *name);
/* The enum gdr_cpu_feature bits of impl->needs that cpu_flags lacks (0: it can run). */
unsigned int gdr_copy_impl_missing(const struct gdr_copy_impl *impl, unsigned int cpu_flags);
/* The routines of this build a CPU with cpu_flags runs: a mask of 1 << GDR_COPY_IMPL_*. */
int gdr_copy_impl_mask(unsigned int cpu_flags);

/*
 * Fill t for a CPU with cpu_flags: the automatic choice, or forced (a GDRCOPY_COPY_IMPL value;
 * NULL for none). Returns 0 when forced is NULL or honoured, EINVAL for a name this build does
 * not know, ENOTSUP for a routine the CPU cannot run; t then holds the automatic choice. note
 * gets a message for the log (the error, or the classes a forced routine does not cover), or ""
 * when there is nothing to say. Pure: reads no environment, logs nothing.
 */
int gdr_copy_select(struct gdr_copy_table *t, unsigned int cpu_flags, const char *forced,
		    char *note, size_t note_len);

/* "64 B", "16 KiB", "1 MiB": a size as the choice's description and the benchmark print it. */
void gdr_copy_size_name(size_t n, char *buf, size_t len);

/* "copy to WC: up to 64 B generic, ..., larger rep_movsb; copy from WC: ..." */
void gdr_copy_table_describe(const struct gdr_copy_table *t, char *buf, size_t len);

/* The routine t uses for n-byte copies into (to_device) or out of WC. */
const struct gdr_copy_impl *gdr_copy_table_impl(const struct gdr_copy_table *t, int to_device,
						 size_t n);

/* The table the copy functions use (the generic routines until gdr_copy_init has run). */
void gdr_copy_table_current(struct gdr_copy_table *t);

/*
 * Make the copy functions use t from now on, after gdr_copy_init. For tests and benchmarks
 * that compare tables in one process; no other thread may copy meanwhile.
 */
void gdr_copy_table_install(const struct gdr_copy_table *t);

/* The fence that ends a copy, in either direction, through a mapping of type (GDRCopy's rule). */
enum gdr_copy_fence gdr_copy_fence_for(gdr_mapping_type_t type, int mixed);

#endif
