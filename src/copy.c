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
	GDR_COPY_IMPL_GENERIC, "generic", 0, gdr_copy_store_generic, gdr_copy_load_generic, 0
};
static const struct gdr_copy_impl impl_memcpy = {
	GDR_COPY_IMPL_MEMCPY, "memcpy", 0, gdr_copy_store_memcpy, gdr_copy_load_memcpy, 0
};
#if defined(__x86_64__)
static const struct gdr_copy_impl impl_sse = {
	GDR_COPY_IMPL_SSE, "sse", GDR_CPU_SSE2, gdr_copy_store_sse, gdr_copy_load_sse, 0
};
static const struct gdr_copy_impl impl_sse41 = {
	GDR_COPY_IMPL_SSE41, "sse41", GDR_CPU_SSE2 | GDR_CPU_SSE41, gdr_copy_store_sse,
	gdr_copy_load_sse41, 0
};
static const struct gdr_copy_impl impl_avx2 = {
	GDR_COPY_IMPL_AVX2, "avx2", GDR_CPU_AVX2, gdr_copy_store_avx2, gdr_copy_load_avx2, 0
};
/* 65 us for a 64-byte and 129 us for a 128-byte AVX-512 streaming load on the H200's BAR. */
static const struct gdr_copy_impl impl_avx512 = {
	GDR_COPY_IMPL_AVX512, "avx512", GDR_CPU_AVX512F, gdr_copy_store_avx512,
	gdr_copy_load_avx512, 256
};
static const struct gdr_copy_impl impl_movdir64b = {
	GDR_COPY_IMPL_MOVDIR64B, "movdir64b", GDR_CPU_MOVDIR64B, gdr_copy_store_movdir64b, NULL, 0
};
static const struct gdr_copy_impl impl_rep_movsb = {
	GDR_COPY_IMPL_REP_MOVSB, "rep_movsb", 0, gdr_copy_store_rep_movsb, NULL, 0
};
#elif defined(__aarch64__)
static const struct gdr_copy_impl impl_stp = {
	GDR_COPY_IMPL_STP, "stp", 0, gdr_copy_store_stp, gdr_copy_load_stp, 0
};
static const struct gdr_copy_impl impl_neon = {
	GDR_COPY_IMPL_NEON, "neon", GDR_CPU_ASIMD, gdr_copy_store_neon, gdr_copy_load_neon, 0
};
#elif defined(__powerpc64__)
static const struct gdr_copy_impl impl_power = {
	GDR_COPY_IMPL_POWER, "power", 0, gdr_copy_store_power, gdr_copy_load_power, 0
};
#endif

static const struct gdr_copy_impl *const impls[] = {
	&impl_generic,
	&impl_memcpy,
#if defined(__x86_64__)
	&impl_sse,
	&impl_sse41,
	&impl_avx2,
	&impl_avx512,
	&impl_movdir64b,
	&impl_rep_movsb,
#elif defined(__aarch64__)
	&impl_stp,
	&impl_neon,
#elif defined(__powerpc64__)
	&impl_power,
#endif
};
#define NIMPLS (sizeof(impls) / sizeof(impls[0]))

/* Every GDR_COPY_IMPL_* name, so a name of another architecture's routine is recognised. */
static const char *const impl_id_names[] = {
	[GDR_COPY_IMPL_GENERIC] = "generic",
	[GDR_COPY_IMPL_MEMCPY] = "memcpy",
	[GDR_COPY_IMPL_SSE] = "sse",
	[GDR_COPY_IMPL_SSE41] = "sse41",
	[GDR_COPY_IMPL_AVX2] = "avx2",
	[GDR_COPY_IMPL_AVX512] = "avx512",
	[GDR_COPY_IMPL_MOVDIR64B] = "movdir64b",
	[GDR_COPY_IMPL_REP_MOVSB] = "rep_movsb",
	[GDR_COPY_IMPL_NEON] = "neon",
	[GDR_COPY_IMPL_POWER] = "power",
	[GDR_COPY_IMPL_STP] = "stp",
};

static const char *const class_names[GDR_COPY_NCLASSES] = { "tiny", "small", "medium", "large" };
static const size_t class_mins[GDR_COPY_NCLASSES] = {
	0, GDR_COPY_TINY_MAX + 1, GDR_COPY_SMALL_MAX + 1, GDR_COPY_MEDIUM_MAX + 1
};
static const size_t class_maxs[GDR_COPY_NCLASSES] = {
	GDR_COPY_TINY_MAX, GDR_COPY_SMALL_MAX, GDR_COPY_MEDIUM_MAX, SIZE_MAX
};

const struct gdr_copy_impl *const *gdr_copy_impls(size_t *count)
{
	*count = NIMPLS;
	return impls;
}

const struct gdr_copy_impl *gdr_copy_impl_by_name(const char *name)
{
	for (size_t i = 0; i < NIMPLS; i++)
		if (!strcasecmp(impls[i]->name, name))
			return impls[i];
	return NULL;
}

const char *gdr_copy_impl_id_name(int id)
{
	if (id < 0 || (size_t)id >= sizeof(impl_id_names) / sizeof(impl_id_names[0]))
		return NULL;
	return impl_id_names[id];
}

unsigned int gdr_copy_impl_missing(const struct gdr_copy_impl *impl, unsigned int cpu_flags)
{
	return impl->needs & ~cpu_flags;
}

size_t gdr_copy_class_min(enum gdr_copy_class c)
{
	return class_mins[c];
}

const char *gdr_copy_class_name(enum gdr_copy_class c)
{
	return class_names[c];
}

static void set_to(struct gdr_copy_table *t, int c, const struct gdr_copy_impl *impl)
{
	t->to[c] = impl;
	t->to_fn[c] = impl->store;
}

static void set_from(struct gdr_copy_table *t, int c, const struct gdr_copy_impl *impl)
{
	t->from[c] = impl;
	t->from_fn[c] = impl->load;
}

static void set_to_above_tiny(struct gdr_copy_table *t, const struct gdr_copy_impl *impl)
{
	for (int c = GDR_COPY_SMALL; c < GDR_COPY_NCLASSES; c++)
		set_to(t, c, impl);
}

static void set_from_all(struct gdr_copy_table *t, const struct gdr_copy_impl *impl)
{
	for (int c = 0; c < GDR_COPY_NCLASSES; c++)
		set_from(t, c, impl);
}

static int can_run(const struct gdr_copy_impl *impl, unsigned int cpu)
{
	return !gdr_copy_impl_missing(impl, cpu);
}

/*
 * The automatic choice: generic everywhere, then upgrades in ascending ISA order. Tiny copies
 * into WC stay generic, which copy.c inlines: on the H200 every store flavour is within noise
 * below 1 KiB, so a tiny copy should cost no more than its stores and the fence.
 */
static void select_auto(struct gdr_copy_table *t, unsigned int cpu)
{
	for (int c = 0; c < GDR_COPY_NCLASSES; c++) {
		set_to(t, c, &impl_generic);
		set_from(t, c, &impl_generic);
	}
#if defined(__x86_64__)
	if (can_run(&impl_sse, cpu)) {
		set_to_above_tiny(t, &impl_sse);
		set_from_all(t, &impl_sse);
	}
	/* Plain loads read WC at 0.06 GB/s; streaming loads at 0.7-2.1 GB/s, AVX2's the fastest. */
	if (can_run(&impl_sse41, cpu))
		set_from_all(t, &impl_sse41);
	if (can_run(&impl_avx2, cpu)) {
		set_to_above_tiny(t, &impl_avx2);
		set_from_all(t, &impl_avx2);
	}
	/*
	 * At 4 KiB rep movsb and streaming stores tie (0.38 us, against 0.59 us for memcpy) where
	 * the string microcode is fast (ERMS). AVX-512 and MOVDIR64B are taken only when forced:
	 * AVX-512 stores measured no faster than the others, its loads are pathological when
	 * small, and MOVDIR64B has not been measured.
	 */
	if (cpu & GDR_CPU_ERMS)
		set_to(t, GDR_COPY_MEDIUM, &impl_rep_movsb);
#elif defined(__aarch64__)
	set_to_above_tiny(t, &impl_stp);
	set_from_all(t, &impl_stp);
	if (can_run(&impl_neon, cpu)) {
		set_to_above_tiny(t, &impl_neon);
		set_from_all(t, &impl_neon);
	}
#elif defined(__powerpc64__)
	(void)cpu;
	set_to_above_tiny(t, &impl_power);
	set_from_all(t, &impl_power);
#else
	(void)cpu;
#endif
}

/* Names of the routines cpu can run, space-separated. */
static void supported_names(unsigned int cpu, char *buf, size_t len)
{
	size_t used = 0;

	buf[0] = '\0';
	for (size_t i = 0; i < NIMPLS; i++) {
		int n;

		if (!can_run(impls[i], cpu))
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
	char names[128], lacks[64];
	size_t kept_max = 0;
	unsigned int missing;
	int known = 0;

	supported_names(cpu, names, sizeof(names));
	if (!impl) {
		for (int id = 0; gdr_copy_impl_id_name(id); id++)
			known |= !strcasecmp(gdr_copy_impl_id_name(id), name);
		snprintf(note, note_len,
			 "GDRCOPY_COPY_IMPL=%s: %s; this CPU supports: %s; keeping the automatic choice",
			 name, known ? "a routine of another architecture" : "no such copy routine",
			 names);
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

	for (int c = 0; c < GDR_COPY_NCLASSES; c++) {
		if (impl->store)
			set_to(t, c, impl);
		if (impl->load && class_mins[c] >= impl->load_min)
			set_from(t, c, impl);
		else if (impl->load)
			kept_max = class_maxs[c];
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
	t->tiny_to_inline = t->to[GDR_COPY_TINY] == &impl_generic;
	return ret;
}

void gdr_copy_table_describe(const struct gdr_copy_table *t, char *buf, size_t len)
{
	size_t used = 0;

	for (int dir = 0; dir < 2; dir++) {
		const struct gdr_copy_impl *const *row = dir ? t->from : t->to;

		for (int c = 0; c < GDR_COPY_NCLASSES && used < len; c++) {
			int n = snprintf(buf + used, len - used, "%s%s %s",
					 c ? ", " : dir ? "; copy from WC: " : "copy to WC: ",
					 class_names[c], row[c]->name);

			if (n < 0)
				return;
			used += n;
		}
	}
}

const struct gdr_copy_impl *gdr_copy_table_impl(const struct gdr_copy_table *t, int to_device,
						 size_t n)
{
	enum gdr_copy_class c = gdr_copy_class_of(n);

	return to_device ? t->to[c] : t->from[c];
}

/*
 * The table the copies use. Written once, by copy_init_once under copy_once; read without a
 * lock afterwards, since every copy through the public API follows the gdr_open that ran
 * gdr_copy_init. Until then it holds the generic routines, which are always correct.
 */
static pthread_once_t copy_once = PTHREAD_ONCE_INIT;
static struct gdr_copy_table copy_table = {
	.to_fn = { gdr_copy_store_generic, gdr_copy_store_generic, gdr_copy_store_generic,
		   gdr_copy_store_generic },
	.from_fn = { gdr_copy_load_generic, gdr_copy_load_generic, gdr_copy_load_generic,
		     gdr_copy_load_generic },
	.to = { &impl_generic, &impl_generic, &impl_generic, &impl_generic },
	.from = { &impl_generic, &impl_generic, &impl_generic, &impl_generic },
	.tiny_to_inline = 1,
};

static void copy_init_once(void)
{
	unsigned int cpu = gdr_cpu_features();
	const char *forced = secure_getenv("GDRCOPY_COPY_IMPL");
	struct gdr_copy_table t;
	char note[512], line[256], features[128];

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
	copy_table = t;
}

void gdr_copy_init(void)
{
	pthread_once(&copy_once, copy_init_once);
}

void gdr_copy_table_current(struct gdr_copy_table *t)
{
	*t = copy_table;
}

int gdr_copy_impl_for(int to_device, size_t n)
{
	return gdr_copy_table_impl(&copy_table, to_device, n)->id;
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

static inline __attribute__((always_inline)) void copy_fence(enum gdr_copy_fence f)
{
	if (f == GDR_COPY_FENCE_NONE)
		return;
#if defined(__x86_64__)
	if (f == GDR_COPY_FENCE_FULL)
		__asm__ volatile("mfence" : : : "memory");
	else
		__asm__ volatile("sfence" : : : "memory");
#elif defined(__aarch64__)
	if (f == GDR_COPY_FENCE_FULL)
		__asm__ volatile("dmb sy" : : : "memory");
	else
		__asm__ volatile("dmb st" : : : "memory");
#elif defined(__powerpc64__)
	__asm__ volatile("sync" : : : "memory");
#else
	__atomic_thread_fence(__ATOMIC_SEQ_CST);
#endif
}

/*
 * DEVICE mappings (BlueField-3, GDRCopy's rule): memcpy when both pointers and the size are
 * 8-aligned, else accesses as wide as the device pointer's alignment allows.
 */
static inline int device_aligned(const void *a, const void *b, size_t n)
{
	return !(((uintptr_t)a | (uintptr_t)b | n) & 7);
}

/* Mapping types other than CACHING and DEVICE are write-combined (GDRCopy's default). */
void gdr_copy_to_mapping_type(gdr_mapping_type_t type, int mixed, void *dst, const void *src,
			      size_t n)
{
	/* Tiny WC stores first: the latency-critical case (flags, doorbells). */
	if (__builtin_expect(type == GDR_MAPPING_TYPE_WC && n <= GDR_COPY_TINY_MAX &&
			     copy_table.tiny_to_inline, 1)) {
		gdr_generic_store(dst, src, n);
	} else if (type == GDR_MAPPING_TYPE_CACHING) {
		memcpy(dst, src, n);
	} else if (type == GDR_MAPPING_TYPE_DEVICE) {
		if (device_aligned(dst, src, n))
			memcpy(dst, src, n);
		else
			gdr_generic_store(dst, src, n);
	} else {
		copy_table.to_fn[gdr_copy_class_of(n)](dst, src, n);
	}
	copy_fence(fence_for(type, mixed));
}

void gdr_copy_from_mapping_type(gdr_mapping_type_t type, int mixed, void *dst, const void *src,
				size_t n)
{
	if (type == GDR_MAPPING_TYPE_CACHING) {
		memcpy(dst, src, n);
	} else if (type == GDR_MAPPING_TYPE_DEVICE) {
		if (device_aligned(dst, src, n))
			memcpy(dst, src, n);
		else
			gdr_generic_load(dst, src, n);
	} else {
		copy_table.from_fn[gdr_copy_class_of(n)](dst, src, n);
	}
	copy_fence(fence_for(type, mixed));
}
