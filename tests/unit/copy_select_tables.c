/* SPDX-License-Identifier: MIT */
/*
 * test_copy_select's checks of the tables themselves: well-formed for every CPU and override,
 * the automatic choice for made-up CPUs, forcing through gdr_copy_select, the routines' names,
 * the mask of routines a CPU runs, the fence rule, and the attributes after gdr_copy_init.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "copy.h"
#include "copy_impl.h"
#include "copy_select.h"
#include "cpu.h"
#include "harness.h"

/* What is wrong with one direction of a table for a CPU with cpu, or NULL. */
static const char *dir_problem(const struct gdr_copy_dir *d, int to_device, unsigned int cpu)
{
	if (d->nclasses < 1 || d->nclasses > GDR_COPY_MAX_CLASSES)
		return "no classes, or too many";
	if (d->max[d->nclasses - 1] != SIZE_MAX)
		return "the last class does not end at SIZE_MAX";
	for (int c = 0; c < d->nclasses; c++) {
		const struct gdr_copy_impl *impl = d->impl[c];

		if (c && d->max[c] <= d->max[c - 1])
			return "class bounds not increasing";
		if (!impl || d->fn[c] != (to_device ? impl->store : impl->load) || !d->fn[c])
			return "a class's function is not its routine's";
		if (gdr_copy_impl_missing(impl, cpu))
			return "a routine the CPU cannot run";
		if (!to_device && gdr_copy_class_min(d, c) < impl->load_min)
			return "loads below the routine's load_min";
	}
	return NULL;
}

/* Flag sets to select for: this CPU's, then made-up ones of this architecture. */
static const unsigned int fake_cpus[] = {
	0,
#if defined(__x86_64__)
	GDR_CPU_SSE2,
	GDR_CPU_SSE2 | GDR_CPU_SSE41,
	GDR_CPU_SSE2 | GDR_CPU_SSE41 | GDR_CPU_AVX | GDR_CPU_AVX2,
	GDR_CPU_SSE2 | GDR_CPU_SSE41 | GDR_CPU_AVX | GDR_CPU_AVX2 | GDR_CPU_ERMS,
	GDR_CPU_SSE2 | GDR_CPU_SSE41 | GDR_CPU_AVX512F,
	GDR_CPU_SSE2 | GDR_CPU_SSE41 | GDR_CPU_AVX | GDR_CPU_AVX2 | GDR_CPU_AVX512F |
		GDR_CPU_MOVDIR64B | GDR_CPU_ERMS,
#elif defined(__aarch64__)
	GDR_CPU_ASIMD,
#endif
};
#define NFAKE (sizeof(fake_cpus) / sizeof(fake_cpus[0]))

/*
 * Every table gdr_copy_select makes, for every CPU and every override, is well formed: classes
 * that end at SIZE_MAX, each with a routine the CPU runs, loads never below a routine's
 * load_min (AVX-512's 128 B), the inline tiny store only for generic, a store fence after reads.
 */
void copy_select_tables(void)
{
	const struct gdr_copy_impl *const *impls;
	struct gdr_copy_table t;
	char note[512];
	size_t count;

	impls = gdr_copy_impls(&count);
	for (size_t f = 0; f <= NFAKE; f++) {
		unsigned int cpu = f < NFAKE ? fake_cpus[f] : gdr_cpu_features();

		for (size_t i = 0; i <= count; i++) {
			const char *forced = i < count ? impls[i]->name : NULL;
			const char *bad;

			gdr_copy_select(&t, cpu, forced, note, sizeof(note));
			bad = dir_problem(&t.to, 1, cpu);
			if (!bad)
				bad = dir_problem(&t.from, 0, cpu);
			if (!bad && t.tiny_to_max && (t.to.impl[0] != gdr_copy_impl_by_name("generic") ||
						      t.tiny_to_max > GDR_COPY_TINY_MAX ||
						      t.tiny_to_max > t.to.max[0]))
				bad = "inline tiny stores for a class that is not generic";
			if (!bad && t.from_wc_fence != GDR_COPY_FENCE_STORE)
				bad = "no store fence after reads";
			if (bad) {
				test_report("fail", "tables", "cpu 0x%x, forced %s: %s", cpu,
					    forced ? forced : "nothing", bad);
				return;
			}
		}
	}
#if defined(__x86_64__)
	/* The override still holds where AVX-512 loads are allowed. */
	gdr_copy_select(&t, GDR_CPU_SSE2 | GDR_CPU_AVX512F, "avx512", note, sizeof(note));
	if (gdr_copy_table_impl(&t, 0, 4096)->id != GDR_COPY_IMPL_AVX512 ||
	    gdr_copy_table_impl(&t, 0, 127)->id == GDR_COPY_IMPL_AVX512 ||
	    !strstr(note, "never used below 128 B")) {
		test_report("fail", "tables",
			    "forced avx512 loads not used at 4 KiB, used at 127 B, or no note: %s",
			    note);
		return;
	}
#endif
	test_report("pass", "tables", NULL);
}

/* The automatic choice's routine for n-byte copies on a CPU with cpu (x86: the H200 figures). */
static const char *expected_auto(unsigned int cpu, int to_device, size_t n)
{
#if defined(__x86_64__)
	const char *vec = cpu & GDR_CPU_AVX2 ? "avx2" : cpu & GDR_CPU_SSE2 ? "sse" : "generic";

	const char *sse41 = cpu & GDR_CPU_SSE41 && cpu & GDR_CPU_SSE2 ? "sse41" : NULL;

	if (to_device)
		return n <= 64 ? "generic" : n <= 16384 || !(cpu & GDR_CPU_ERMS) ? vec : "rep_movsb";
	if (!(cpu & GDR_CPU_SSE2))
		return "generic";
	if (n <= 16)
		return sse41 ? sse41 : "sse";
	if (n > 127 && (cpu & GDR_CPU_AVX512F))
		return "avx512";
	if (n > 32 && (cpu & GDR_CPU_AVX2))
		return "avx2";
	return sse41 ? "sse41_blocks" : "sse";
#elif defined(__aarch64__)
	if (to_device && n <= 64)
		return "generic";
	return cpu & GDR_CPU_ASIMD ? "neon" : "stp";
#elif defined(__powerpc64__)
	(void)cpu;
	return to_device && n <= 64 ? "generic" : "scalar";
#else
	(void)cpu;
	(void)to_device;
	(void)n;
	return "generic";
#endif
}

/* The automatic choice for made-up CPUs: inline generic for tiny stores, the best loads. */
void copy_select_auto(void)
{
	static const size_t sizes[] = {
		0, 1, 8, 9, 16, 17, 32, 33, 63, 64, 65, 127, 128, 255, 256, 1024, 1025, 16384, 16385, 1 << 20,
	};
	struct gdr_copy_table t;
	char note[512], desc[512];

	for (size_t f = 0; f < NFAKE; f++) {
		int ret = gdr_copy_select(&t, fake_cpus[f], NULL, note, sizeof(note));

		for (size_t i = 0; i < 2 * sizeof(sizes) / sizeof(sizes[0]); i++) {
			int to_device = i & 1;
			size_t n = sizes[i / 2];
			const char *want = expected_auto(fake_cpus[f], to_device, n);

			if (ret || note[0] || t.tiny_to_max != GDR_COPY_TINY_MAX ||
			    strcmp(gdr_copy_table_impl(&t, to_device, n)->name, want)) {
				gdr_copy_table_describe(&t, desc, sizeof(desc));
				test_report("fail", "auto_choice", "cpu 0x%x, %zu B %s WC: want %s; %s (%s)",
					    fake_cpus[f], n, to_device ? "into" : "out of", want, desc,
					    note);
				return;
			}
		}
	}
	gdr_copy_table_describe(&auto_table, desc, sizeof(desc));
	printf("automatic choice here: %s\n", desc);
	test_report("pass", "auto_choice", NULL);
}

/* Forcing through gdr_copy_select: any case, unknown, unsupported, missing directions. */
void copy_select_forced(void)
{
	unsigned int cpu = gdr_cpu_features();
	struct gdr_copy_table t;
	const char *bad = NULL;
	char note[512];

	if (gdr_copy_select(&t, cpu, "GENERIC", note, sizeof(note)) ||
	    t.to.impl[t.to.nclasses - 1]->id != GDR_COPY_IMPL_GENERIC ||
	    t.tiny_to_max != GDR_COPY_TINY_MAX)
		bad = "GENERIC not honoured (names are case-insensitive)";
	else if (gdr_copy_select(&t, cpu, "nonsense", note, sizeof(note)) != EINVAL ||
		 !tables_equal(&t, &auto_table))
		bad = "an unknown name did not give EINVAL and the automatic choice";
	else if (gdr_copy_select(&t, cpu, "memcpy", note, sizeof(note)) || t.tiny_to_max ||
		 t.to.fn[0] != gdr_copy_store_memcpy || t.from.fn[0] != gdr_copy_load_memcpy)
		bad = "forced memcpy not used for tiny copies";
#if defined(__powerpc64__)
	else if (gdr_copy_select(&t, cpu, "power", note, sizeof(note)) ||
		 t.from.impl[0]->id != GDR_COPY_IMPL_SCALAR)
		bad = "power, the scalar routine's old name, not honoured";
#else
	else if (gdr_copy_select(&t, cpu, "power", note, sizeof(note)) != EINVAL ||
		 !strstr(note, "another architecture"))
		bad = "power, the scalar routine's old name, not known as another architecture's";
#endif
#if defined(__x86_64__)
	else if (gdr_copy_select(&t, GDR_CPU_SSE2, "avx2", note, sizeof(note)) != ENOTSUP ||
		 !strstr(note, "lacks AVX2") || !strstr(note, "supports: generic memcpy sse rep_movsb;"))
		bad = "avx2 on an SSE2-only CPU not refused with what that CPU supports";
	else if (gdr_copy_select(&t, GDR_CPU_SSE2, "sse41_blocks", note, sizeof(note)) != ENOTSUP ||
		 !strstr(note, "lacks SSE4.1"))
		bad = "sse41_blocks on an SSE2-only CPU not refused";
	else if (gdr_copy_select(&t, cpu, "rep_movsb", note, sizeof(note)) ||
		 t.to.impl[0]->id != GDR_COPY_IMPL_REP_MOVSB ||
		 t.from.impl[0] != auto_table.from.impl[0] ||
		 !strstr(note, "no routine for copies from WC"))
		bad = "forced rep_movsb: stores not forced, or loads not left automatic";
#elif defined(__aarch64__)
	else if (gdr_copy_select(&t, 0, "neon", note, sizeof(note)) != ENOTSUP ||
		 !strstr(note, "lacks ASIMD"))
		bad = "neon without ASIMD not refused";
	else if (gdr_copy_select(&t, cpu, "sse41_blocks", note, sizeof(note)) != EINVAL ||
		 !strstr(note, "another architecture"))
		bad = "sse41_blocks not known as a routine of another architecture";
#endif
	if (bad)
		test_report("fail", "forced_choice", "%s: %s", bad, note);
	else
		test_report("pass", "forced_choice", NULL);
}

/* Each routine answers to its name; a variant's id is its family's, whose name it extends. */
void copy_select_names(void)
{
	const struct gdr_copy_impl *const *impls;
	size_t count;

	impls = gdr_copy_impls(&count);
	for (size_t i = 0; i < count; i++) {
		const char *id_name = gdr_ext_copy_impl_name(impls[i]->id);
		size_t len = id_name ? strlen(id_name) : 0;

		if (gdr_copy_impl_by_name(impls[i]->name) != impls[i] || !id_name ||
		    strncmp(impls[i]->name, id_name, len) ||
		    (impls[i]->name[len] && impls[i]->name[len] != '_')) {
			test_report("fail", "impl_names", "%s does not name itself or its family",
				    impls[i]->name);
			return;
		}
	}
#if defined(__powerpc64__)
	/* What GDRCOPY_COPY_IMPL took for scalar before it had that name stays an alias. */
	if (gdr_copy_impl_by_name("power") != gdr_copy_impl_by_name("scalar")) {
		test_report("fail", "impl_names", "the old name \"power\" does not select scalar");
		return;
	}
#endif
	test_report("pass", "impl_names", NULL);
}

/* Sizes as the benchmarks' tables and the choice's log line print them: whole units only. */
void copy_select_size_names(void)
{
	static const struct {
		size_t n;
		const char *want;
	} cases[] = {
		{ 0, "0 B" },
		{ 127, "127 B" },
		{ 1536, "1536 B" },
		{ 16384, "16 KiB" },
		{ (1u << 20) + 1024, "1025 KiB" },
		{ (1u << 20) + 1, "1048577 B" },
		{ 3u << 20, "3 MiB" },
	};
	char buf[32];

	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		gdr_copy_size_name(cases[i].n, buf, sizeof(buf));
		if (strcmp(buf, cases[i].want)) {
			test_report("fail", "size_names", "%zu bytes named \"%s\", not \"%s\"",
				    cases[i].n, buf, cases[i].want);
			return;
		}
	}
	test_report("pass", "size_names", NULL);
}

void copy_select_fences(void)
{
	static const struct {
		gdr_mapping_type_t type;
		int mixed;
		enum gdr_copy_fence want;
	} cases[] = {
		{ GDR_MAPPING_TYPE_WC, 0, GDR_COPY_FENCE_STORE },
		{ GDR_MAPPING_TYPE_WC, 1, GDR_COPY_FENCE_FULL },
		{ GDR_MAPPING_TYPE_CACHING, 0, GDR_COPY_FENCE_NONE },
		{ GDR_MAPPING_TYPE_CACHING, 1, GDR_COPY_FENCE_FULL },
		{ GDR_MAPPING_TYPE_DEVICE, 0, GDR_COPY_FENCE_NONE },
		{ GDR_MAPPING_TYPE_DEVICE, 1, GDR_COPY_FENCE_FULL },
	};

	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		enum gdr_copy_fence got = gdr_copy_fence_for(cases[i].type, cases[i].mixed);

		if (got != cases[i].want) {
			test_report("fail", "fences", "type %d mixed %d: fence %d, expected %d",
				    cases[i].type, cases[i].mixed, got, cases[i].want);
			return;
		}
	}
	test_report("pass", "fences", NULL);
}

/* The mask of routines a CPU runs: exactly the families with a routine it does not lack. */
void copy_select_impl_mask(void)
{
	static const unsigned int fake_cpus[] = {
		0, GDR_CPU_SSE2, GDR_CPU_SSE2 | GDR_CPU_SSE41 | GDR_CPU_AVX | GDR_CPU_AVX2,
		GDR_CPU_ASIMD, ~0u,
	};
	const struct gdr_copy_impl *const *impls;
	size_t count;

	impls = gdr_copy_impls(&count);
	for (size_t f = 0; f < sizeof(fake_cpus) / sizeof(fake_cpus[0]); f++) {
		int mask = gdr_copy_impl_mask(fake_cpus[f]), want = 0;

		for (size_t i = 0; i < count; i++)
			if (!gdr_copy_impl_missing(impls[i], fake_cpus[f]))
				want |= 1 << impls[i]->id;
		if (mask != want || !(mask & 1 << GDR_COPY_IMPL_GENERIC) ||
		    !(mask & 1 << GDR_COPY_IMPL_MEMCPY) || mask >> GDR_COPY_IMPL_COUNT) {
			test_report("fail", "impl_mask", "cpu 0x%x: mask 0x%x, want 0x%x",
				    fake_cpus[f], mask, want);
			return;
		}
	}
#if defined(__x86_64__)
	if (gdr_copy_impl_mask(GDR_CPU_SSE2) != (1 << GDR_COPY_IMPL_GENERIC |
		1 << GDR_COPY_IMPL_MEMCPY | 1 << GDR_COPY_IMPL_SSE | 1 << GDR_COPY_IMPL_REP_MOVSB)) {
		test_report("fail", "impl_mask", "an SSE2-only CPU: mask 0x%x",
			    gdr_copy_impl_mask(GDR_CPU_SSE2));
		return;
	}
#endif
	test_report("pass", "impl_mask", NULL);
}

/* After gdr_copy_init, the attribute answers are the table's. */
void copy_select_impl_for(void)
{
	struct gdr_copy_table t;

	gdr_copy_init();
	gdr_copy_table_current(&t);
	for (size_t n = 0; n <= 1 << 16; n += 61) {
		if (gdr_copy_impl_for(1, n) != gdr_copy_table_impl(&t, 1, n)->id ||
		    gdr_copy_impl_for(0, n) != gdr_copy_table_impl(&t, 0, n)->id ||
		    !tables_equal(&t, &auto_table)) {
			test_report("fail", "impl_for", "n=%zu: the answer is not the table's", n);
			return;
		}
	}
	test_report("pass", "impl_for", NULL);
}
