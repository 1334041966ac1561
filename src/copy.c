/* SPDX-License-Identifier: MIT */
/*
 * The copy dispatcher: which routine copies n bytes into or out of a mapping, chosen once per
 * direction and size class from the CPU's features (or GDRCOPY_COPY_IMPL), and the fences.
 * Built for the baseline ISA: it runs before the CPU is known.
 */
#include <errno.h>
#include <stdint.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "arch/generic/copy_generic.h"
#include "copy.h"
#include "copy_impl.h"
#include "cpu.h"
#include "log.h"

#if defined(__AVX__) || defined(__ARM_FEATURE_SVE)
#error "src/copy.c picks routines at run time and must be built for the baseline ISA: drop -march/-mavx from CFLAGS"
#endif

static const struct gdr_copy_impl impl_generic = {
	GDR_COPY_IMPL_GENERIC, "generic", 0, 0, gdr_copy_store_generic, gdr_copy_load_generic, 0
};
static const struct gdr_copy_impl impl_memcpy = {
	GDR_COPY_IMPL_MEMCPY, "memcpy", 0, 0, gdr_copy_store_memcpy, gdr_copy_load_memcpy, 0
};
#if defined(__x86_64__)
static const struct gdr_copy_impl impl_sse = {
	GDR_COPY_IMPL_SSE, "sse", GDR_CPU_SSE2, 0, gdr_copy_store_sse, gdr_copy_load_sse, 0
};
static const struct gdr_copy_impl impl_sse41 = {
	GDR_COPY_IMPL_SSE41, "sse41", GDR_CPU_SSE2 | GDR_CPU_SSE41, 0, gdr_copy_store_sse,
	gdr_copy_load_sse41, 0
};
static const struct gdr_copy_impl impl_sse41_blocks = {
	GDR_COPY_IMPL_SSE41, "sse41_blocks", GDR_CPU_SSE2 | GDR_CPU_SSE41, 0, gdr_copy_store_sse,
	gdr_copy_load_sse41_blocks, 0
};
static const struct gdr_copy_impl impl_avx2 = {
	GDR_COPY_IMPL_AVX2, "avx2", GDR_CPU_AVX2, 0, gdr_copy_store_avx2, gdr_copy_load_avx2, 0
};
/*
 * Its loads are chosen from 128 B, where a read of data the GPU has just written takes one round
 * trip with them and, in most reads, two with 32-byte loads (the rows below).
 */
static const struct gdr_copy_impl impl_avx512 = {
	GDR_COPY_IMPL_AVX512, "avx512", GDR_CPU_AVX512F, 0, gdr_copy_store_avx512,
	gdr_copy_load_avx512, 128
};
static const struct gdr_copy_impl impl_movdir64b = {
	GDR_COPY_IMPL_MOVDIR64B, "movdir64b", GDR_CPU_MOVDIR64B, 0, gdr_copy_store_movdir64b, NULL,
	0
};
/* Any x86-64 runs rep movsb; it is fast only with ERMS. */
static const struct gdr_copy_impl impl_rep_movsb = {
	GDR_COPY_IMPL_REP_MOVSB, "rep_movsb", 0, GDR_CPU_ERMS, gdr_copy_store_rep_movsb, NULL, 0
};
#elif defined(__aarch64__)
static const struct gdr_copy_impl impl_stp = {
	GDR_COPY_IMPL_STP, "stp", 0, 0, gdr_copy_store_stp, gdr_copy_load_stp, 0
};
static const struct gdr_copy_impl impl_neon = {
	GDR_COPY_IMPL_NEON, "neon", GDR_CPU_ASIMD, 0, gdr_copy_store_neon, gdr_copy_load_neon, 0
};
#elif defined(__powerpc64__)
static const struct gdr_copy_impl impl_scalar = {
	GDR_COPY_IMPL_SCALAR, "scalar", 0, 0, gdr_copy_store_scalar, gdr_copy_load_scalar, 0
};
#endif

static const struct gdr_copy_impl *const impls[] = {
	&impl_generic,
	&impl_memcpy,
#if defined(__x86_64__)
	&impl_sse,
	&impl_sse41,
	&impl_sse41_blocks,
	&impl_avx2,
	&impl_avx512,
	&impl_movdir64b,
	&impl_rep_movsb,
#elif defined(__aarch64__)
	&impl_stp,
	&impl_neon,
#elif defined(__powerpc64__)
	&impl_scalar,
#endif
};
#define NIMPLS (sizeof(impls) / sizeof(impls[0]))

/* The variants' names, which no GDR_COPY_IMPL_* value names (gdr_ext_copy_impl_name). */
static const char *const variant_names[] = { "sse41_blocks" };
/*
 * What GDRCOPY_COPY_IMPL took for the scalar routine before it had that name; users may have
 * set it, so it stays an alias.
 */
static const char scalar_old_name[] = "power";

/*
 * The automatic choice. A copy of n bytes into (to_wc) or out of (from_wc) a write-combined
 * mapping uses the first row with n <= max, and in it the first routine this CPU runs (with
 * the features it prefers); generic when none. tests/gpu/bench_copy_impls measures every
 * routine through gdr_copy_*_mapping and prints, per direction, the fastest at each size and
 * the rows that follow from it: each row ends where the fastest routine changes and lists the
 * winner, then the routines for CPUs that lack its features, in descending ISA order.
 *
 * x86, measured on the H200 (tests/gpu/bench_copy_impls, docs/performance.md): into WC, every
 * store flavour is within noise below 1 KiB, so tiny stores stay generic, which the dispatcher
 * inlines; rep movsb (with ERMS) is the fastest from 64 KiB but 3-10% slower than AVX2 from 2
 * to 16 KiB; the stores of AVX2, AVX-512 and MOVDIR64B tie below 64 KiB. Out of WC, plain
 * loads read at 0.06 GB/s and streaming loads at up to about 1 GB/s. Back to back, SSE4.1 loads
 * are the fastest up to 16 B, sse41_blocks at 32 B (0.50 against 0.62-0.74), AVX2 from 64 B to
 * 512 B and AVX-512 from 1 KiB. At 16 B sse41's walk beat sse41_blocks in 10 of 12 processes
 * (by up to 25%) although sse41_blocks, whose whole aligned blocks take a straight path,
 * executes a fifth fewer instructions per call there: the count alone does not decide
 * (docs/performance.md, runs 11-14). But a read of data the GPU has just written, the read that
 * matters (the payload after a flag), takes one round trip at 128-512 B with AVX-512's 64-byte
 * loads (1.07-1.21 us) and mostly two with 32- or 16-byte loads (2.0-2.2 us). So AVX-512 takes
 * over at 128 B, its load_min, as bench_copy_impls' suggestion does (it drops a read routine
 * whose fresh read takes an extra round trip in most samples), although reading one range again
 * and again it costs a round trip per call (about 1 us, against AVX2's 0.5-0.75 at 128 B):
 * 64-byte loads of a line do not overlap from one call to the next. Polling a flag or a record
 * through the mapping the routines tie, and reading fresh lines one after another AVX-512 keeps
 * 1.6-2x as many reads in flight at 64-256 B (bench_poll, bench_window; docs/performance.md,
 * runs 45-50). Up to 64 B the block routines mostly read in one round trip (sse41's walk needs
 * two at 64 B).
 */
#define ROW_PICKS 6

struct class_row {
	size_t max;
	const struct gdr_copy_impl *pick[ROW_PICKS];	/* in order of preference, NULL-ended */
};

#if defined(__x86_64__)
static const struct class_row to_wc_rows[] = {
	{ GDR_COPY_TINY_MAX, { &impl_generic } },
	{ 16384, { &impl_avx2, &impl_sse, &impl_generic } },
	{ SIZE_MAX, { &impl_rep_movsb, &impl_avx2, &impl_sse, &impl_generic } },
};
static const struct class_row from_wc_rows[] = {
	{ 16, { &impl_sse41, &impl_sse, &impl_generic } },
	{ 32, { &impl_sse41_blocks, &impl_sse, &impl_generic } },
	{ 127, { &impl_avx2, &impl_sse41_blocks, &impl_sse, &impl_generic } },
	{ SIZE_MAX, { &impl_avx512, &impl_avx2, &impl_sse41_blocks, &impl_sse, &impl_generic } },
};
#elif defined(__aarch64__)
static const struct class_row to_wc_rows[] = {
	{ GDR_COPY_TINY_MAX, { &impl_generic } },
	{ SIZE_MAX, { &impl_neon, &impl_stp } },
};
static const struct class_row from_wc_rows[] = {
	{ SIZE_MAX, { &impl_neon, &impl_stp } },
};
#elif defined(__powerpc64__)
static const struct class_row to_wc_rows[] = {
	{ GDR_COPY_TINY_MAX, { &impl_generic } },
	{ SIZE_MAX, { &impl_scalar } },
};
static const struct class_row from_wc_rows[] = {
	{ SIZE_MAX, { &impl_scalar } },
};
#else
static const struct class_row to_wc_rows[] = {
	{ SIZE_MAX, { &impl_generic } },
};
static const struct class_row from_wc_rows[] = {
	{ SIZE_MAX, { &impl_generic } },
};
#endif
#define NROWS(rows) ((int)(sizeof(rows) / sizeof(rows[0])))
_Static_assert(NROWS(to_wc_rows) <= GDR_COPY_MAX_CLASSES, "too many classes into WC");
_Static_assert(NROWS(from_wc_rows) <= GDR_COPY_MAX_CLASSES, "too many classes out of WC");

const struct gdr_copy_impl *const *gdr_copy_impls(size_t *count)
{
	*count = NIMPLS;
	return impls;
}

const struct gdr_copy_impl *gdr_copy_impl_by_name(const char *name)
{
	if (!strcasecmp(name, scalar_old_name))
		name = gdr_ext_copy_impl_name(GDR_COPY_IMPL_SCALAR);
	for (size_t i = 0; i < NIMPLS; i++)
		if (!strcasecmp(impls[i]->name, name))
			return impls[i];
	return NULL;
}

static int impl_name_known(const char *name)
{
	const char *known;

	if (!strcasecmp(name, scalar_old_name))
		return 1;
	/* Every family has a name: the first NULL is GDR_COPY_IMPL_COUNT's. */
	for (int id = 0; (known = gdr_ext_copy_impl_name(id)); id++)
		if (!strcasecmp(known, name))
			return 1;
	for (size_t i = 0; i < sizeof(variant_names) / sizeof(variant_names[0]); i++)
		if (!strcasecmp(variant_names[i], name))
			return 1;
	return 0;
}

unsigned int gdr_copy_impl_missing(const struct gdr_copy_impl *impl, unsigned int cpu_flags)
{
	return impl->needs & ~cpu_flags;
}

int gdr_copy_impl_mask(unsigned int cpu_flags)
{
	int mask = 0;

	for (size_t i = 0; i < NIMPLS; i++)
		if (!gdr_copy_impl_missing(impls[i], cpu_flags))
			mask |= 1 << impls[i]->id;
	return mask;
}

static gdr_copy_fn impl_fn(const struct gdr_copy_impl *impl, int to_device)
{
	return to_device ? impl->store : impl->load;
}

static void set_class(struct gdr_copy_dir *dir, int c, const struct gdr_copy_impl *impl,
		      int to_device)
{
	dir->impl[c] = impl;
	dir->fn[c] = impl_fn(impl, to_device);
}

/* Whether the automatic choice may use impl in class c of dir. */
static int auto_fits(const struct gdr_copy_impl *impl, unsigned int cpu, int to_device,
		     const struct gdr_copy_dir *dir, int c)
{
	if ((impl->needs | impl->prefers) & ~cpu || !impl_fn(impl, to_device))
		return 0;
	return to_device || gdr_copy_class_min(dir, c) >= impl->load_min;
}

static void select_dir(struct gdr_copy_dir *dir, const struct class_row *rows, int nrows,
		       int to_device, unsigned int cpu)
{
	dir->nclasses = nrows;
	for (int c = 0; c < nrows; c++)
		dir->max[c] = rows[c].max;
	for (int c = 0; c < nrows; c++) {
		const struct gdr_copy_impl *impl = &impl_generic;

		for (int p = 0; p < ROW_PICKS && rows[c].pick[p]; p++) {
			if (auto_fits(rows[c].pick[p], cpu, to_device, dir, c)) {
				impl = rows[c].pick[p];
				break;
			}
		}
		set_class(dir, c, impl, to_device);
	}
}

static void select_auto(struct gdr_copy_table *t, unsigned int cpu)
{
	select_dir(&t->to, to_wc_rows, NROWS(to_wc_rows), 1, cpu);
	select_dir(&t->from, from_wc_rows, NROWS(from_wc_rows), 0, cpu);
}

/* Names of the routines cpu can run, space-separated. */
static void supported_names(unsigned int cpu, char *buf, size_t len)
{
	size_t used = 0;

	buf[0] = '\0';
	for (size_t i = 0; i < NIMPLS; i++) {
		int n;

		if (gdr_copy_impl_missing(impls[i], cpu))
			continue;
		n = snprintf(buf + used, len - used, "%s%s", used ? " " : "", impls[i]->name);
		if (n < 0 || (size_t)n >= len - used)
			return;
		used += n;
	}
}

static int select_forced(struct gdr_copy_table *t, unsigned int cpu, const char *name,
			 char *note, size_t note_len)
{
	const struct gdr_copy_impl *impl = gdr_copy_impl_by_name(name);
	char names[256], lacks[64];
	size_t kept_max = 0;
	unsigned int missing;

	supported_names(cpu, names, sizeof(names));
	if (!impl) {
		snprintf(note, note_len,
			 "GDRCOPY_COPY_IMPL=%s: %s; this CPU supports: %s; keeping the automatic choice",
			 name, impl_name_known(name) ? "a routine of another architecture" :
						       "no such copy routine", names);
		return EINVAL;
	}
	missing = gdr_copy_impl_missing(impl, cpu);
	if (missing) {
		gdr_cpu_describe(missing, lacks, sizeof(lacks));
		snprintf(note, note_len,
			 "GDRCOPY_COPY_IMPL=%s: this CPU lacks %s; it supports: %s; keeping the automatic choice",
			 impl->name, lacks, names);
		return ENOTSUP;
	}

	for (int c = 0; impl->store && c < t->to.nclasses; c++)
		set_class(&t->to, c, impl, 1);
	for (int c = 0; impl->load && c < t->from.nclasses; c++) {
		if (gdr_copy_class_min(&t->from, c) >= impl->load_min)
			set_class(&t->from, c, impl, 0);
		else
			kept_max = t->from.max[c];
	}
	if (!impl->load)
		snprintf(note, note_len,
			 "GDRCOPY_COPY_IMPL=%s: it has no routine for copies from WC; they keep the automatic choice",
			 impl->name);
	else if (kept_max)
		snprintf(note, note_len,
			 "GDRCOPY_COPY_IMPL=%s: its loads are never used below %zu B; copies from WC of up to %zu B keep the automatic choice",
			 impl->name, impl->load_min, kept_max);
	return 0;
}

int gdr_copy_select(struct gdr_copy_table *t, unsigned int cpu_flags, const char *forced,
		    char *note, size_t note_len)
{
	int ret = 0;

	if (note_len)
		note[0] = '\0';
	select_auto(t, cpu_flags);
	if (forced) {
		ret = select_forced(t, cpu_flags, forced, note, note_len);
		if (ret)
			select_auto(t, cpu_flags);
	}
	t->tiny_to_max = 0;
	if (t->to.impl[0] == &impl_generic)
		t->tiny_to_max = t->to.max[0] < GDR_COPY_TINY_MAX ? t->to.max[0] : GDR_COPY_TINY_MAX;
	t->from_wc_fence = GDR_COPY_FENCE_STORE;
	return ret;
}

void gdr_copy_size_name(size_t n, char *buf, size_t len)
{
	if (n >= 1u << 20 && !(n & ((1u << 20) - 1)))
		snprintf(buf, len, "%zu MiB", n >> 20);
	else if (n >= 1u << 10 && !(n & ((1u << 10) - 1)))
		snprintf(buf, len, "%zu KiB", n >> 10);
	else
		snprintf(buf, len, "%zu B", n);
}

void gdr_copy_table_describe(const struct gdr_copy_table *t, char *buf, size_t len)
{
	size_t used = 0;

	if (len)
		buf[0] = '\0';
	for (int dir = 0; dir < 2; dir++) {
		const struct gdr_copy_dir *d = dir ? &t->from : &t->to;

		for (int c = 0; c < d->nclasses && used < len; c++) {
			char size[32] = "";
			int n;

			if (d->max[c] != SIZE_MAX)
				gdr_copy_size_name(d->max[c], size, sizeof(size));
			n = snprintf(buf + used, len - used, "%s%s%s %s",
				     c ? ", " : dir ? "; copy from WC: " : "copy to WC: ",
				     d->max[c] == SIZE_MAX ? (c ? "larger" : "all") : "up to ",
				     size, d->impl[c]->name);
			if (n < 0)
				return;
			used += n;
		}
	}
}

const struct gdr_copy_impl *gdr_copy_table_impl(const struct gdr_copy_table *t, int to_device,
						 size_t n)
{
	const struct gdr_copy_dir *d = to_device ? &t->to : &t->from;

	return d->impl[gdr_copy_class_of(d, n)];
}

/*
 * Written once, by copy_init_once under copy_once (tests and benchmarks also install tables of
 * their own, with no copy running); read without a lock afterwards, since every copy through
 * the public API follows the gdr_open that ran gdr_copy_init. Until then it holds the generic
 * routines, which are always correct.
 */
static pthread_once_t copy_once = PTHREAD_ONCE_INIT;
struct gdr_copy_table gdr_copy_active = {
	.to = { 1, { SIZE_MAX }, { gdr_copy_store_generic }, { &impl_generic } },
	.from = { 1, { SIZE_MAX }, { gdr_copy_load_generic }, { &impl_generic } },
	.tiny_to_max = GDR_COPY_TINY_MAX,
	.from_wc_fence = GDR_COPY_FENCE_STORE,
};

static void copy_init_once(void)
{
	unsigned int cpu = gdr_cpu_features();
	const char *forced = secure_getenv("GDRCOPY_COPY_IMPL");
	struct gdr_copy_table t;
	char note[640], line[512], features[128];

	if (forced && !*forced)
		forced = NULL;
	if (gdr_copy_select(&t, cpu, forced, note, sizeof(note)))
		gdr_err("%s", note);
	else if (note[0])
		gdr_info("%s", note);
	gdr_cpu_describe(cpu, features, sizeof(features));
	gdr_dbg("CPU features for the copy routines: %s", features);
	gdr_copy_table_describe(&t, line, sizeof(line));
	gdr_info("%s", line);
	gdr_copy_active = t;
}

void gdr_copy_init(void)
{
	pthread_once(&copy_once, copy_init_once);
}

void gdr_copy_table_current(struct gdr_copy_table *t)
{
	*t = gdr_copy_active;
}

void gdr_copy_table_install(const struct gdr_copy_table *t)
{
	gdr_copy_active = *t;
}

int gdr_copy_impl_for(int to_device, size_t n)
{
	return gdr_copy_table_impl(&gdr_copy_active, to_device, n)->id;
}

/* GDRCopy 2.6's rule, for both directions. */
static inline enum gdr_copy_fence fence_for(gdr_mapping_type_t type, int mixed)
{
	if (mixed)
		return GDR_COPY_FENCE_FULL;
	if (type == GDR_MAPPING_TYPE_CACHING || type == GDR_MAPPING_TYPE_DEVICE)
		return GDR_COPY_FENCE_NONE;
	return GDR_COPY_FENCE_STORE;
}

enum gdr_copy_fence gdr_copy_fence_for(gdr_mapping_type_t type, int mixed)
{
	return fence_for(type, mixed);
}

/*
 * DEVICE mappings (BlueField-3, GDRCopy's rule): memcpy when both pointers and the size are
 * 8-aligned, else accesses as wide as the device pointer's alignment allows.
 */
static inline int device_aligned(const void *a, const void *b, size_t n)
{
	return !(((uintptr_t)a | (uintptr_t)b | n) & 7);
}

static __attribute__((noinline)) void copy_to_other(gdr_mapping_type_t type, int mixed,
						    void *dst, const void *src, size_t n)
{
	if (type == GDR_MAPPING_TYPE_DEVICE && !device_aligned(dst, src, n))
		gdr_generic_store(dst, src, n);
	else
		memcpy(dst, src, n);
	gdr_copy_fence(fence_for(type, mixed));
}

/* Mapping types other than CACHING and DEVICE are write-combined (GDRCopy's default). */
void gdr_copy_to_mapping_type(gdr_mapping_type_t type, int mixed, void *dst, const void *src,
			      size_t n)
{
	const struct gdr_copy_dir *d = &gdr_copy_active.to;

	if (type == GDR_MAPPING_TYPE_CACHING || type == GDR_MAPPING_TYPE_DEVICE) {
		copy_to_other(type, mixed, dst, src, n);
	} else if (!mixed) {
		gdr_copy_to_wc(dst, src, n);
	} else {
		if (n <= gdr_copy_active.tiny_to_max)
			gdr_copy_tiny_store(dst, src, n);
		else
			d->fn[gdr_copy_class_of(d, n)](dst, src, n);
		gdr_copy_fence(GDR_COPY_FENCE_FULL);
	}
}

void gdr_copy_from_mapping_type(gdr_mapping_type_t type, int mixed, void *dst, const void *src,
				size_t n)
{
	const struct gdr_copy_dir *d = &gdr_copy_active.from;

	if (type != GDR_MAPPING_TYPE_CACHING && type != GDR_MAPPING_TYPE_DEVICE) {
		if (!mixed) {
			gdr_copy_from_wc(dst, src, n);
		} else {
			d->fn[gdr_copy_class_of(d, n)](dst, src, n);
			gdr_copy_fence(GDR_COPY_FENCE_FULL);
		}
		return;
	}
	if (type == GDR_MAPPING_TYPE_DEVICE && !device_aligned(dst, src, n))
		gdr_generic_load(dst, src, n);
	else
		memcpy(dst, src, n);
	gdr_copy_fence(fence_for(type, mixed));
}
