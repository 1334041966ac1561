/* SPDX-License-Identifier: MIT */
/*
 * Selection of the copy routines: the automatic choice, GDRCOPY_COPY_IMPL (honoured; unknown,
 * other-architecture and unsupported names fall back with an error naming what this CPU
 * supports), AVX-512 loads never below 256 B, one table for threads racing the first use, the
 * log lines, and the fence rule. Cases that need a process where nothing is chosen yet run in
 * forked children (no exec, so they also work under qemu-user), before the parent chooses.
 */
#include <errno.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/wait.h>
#include <unistd.h>

#include "copy.h"
#include "copy_impl.h"
#include "cpu.h"
#include "test_copy_util.h"

#define NTHREADS 16

/* What a child saw, in memory shared with the parent. */
struct child_out {
	int to[GDR_COPY_NCLASSES], from[GDR_COPY_NCLASSES];
	int threads_agree;
	char err[8192];			/* the child's stderr */
};

static struct child_out *out;

static void read_ids(int *to, int *from)
{
	for (int c = 0; c < GDR_COPY_NCLASSES; c++) {
		to[c] = gdr_copy_impl_for(1, gdr_copy_class_min(c));
		from[c] = gdr_copy_impl_for(0, gdr_copy_class_min(c));
	}
}

static void child_init(void)
{
	gdr_copy_init();
	read_ids(out->to, out->from);
}

static pthread_barrier_t barrier;

struct racer {
	pthread_t thread;
	struct gdr_copy_table table;
};

static void *race(void *arg)
{
	struct racer *r = arg;

	pthread_barrier_wait(&barrier);
	gdr_copy_init();
	gdr_copy_table_current(&r->table);
	return NULL;
}

static int tables_equal(const struct gdr_copy_table *a, const struct gdr_copy_table *b)
{
	for (int c = 0; c < GDR_COPY_NCLASSES; c++)
		if (a->to[c] != b->to[c] || a->from[c] != b->from[c] ||
		    a->to_fn[c] != b->to_fn[c] || a->from_fn[c] != b->from_fn[c])
			return 0;
	return a->tiny_to_inline == b->tiny_to_inline;
}

static void child_race(void)
{
	struct racer r[NTHREADS];
	struct gdr_copy_table want;
	char note[512];

	gdr_copy_select(&want, gdr_cpu_features(), getenv("GDRCOPY_COPY_IMPL"), note,
			sizeof(note));
	pthread_barrier_init(&barrier, NULL, NTHREADS);
	for (int i = 0; i < NTHREADS; i++)
		pthread_create(&r[i].thread, NULL, race, &r[i]);
	out->threads_agree = 1;
	for (int i = 0; i < NTHREADS; i++) {
		pthread_join(r[i].thread, NULL);
		out->threads_agree &= tables_equal(&r[i].table, &want);
	}
	read_ids(out->to, out->from);
}

/* Run fn in a fresh child with GDRCOPY_COPY_IMPL=impl (NULL: unset) and logging at INFO. */
static int run_child(const char *impl, void (*fn)(void))
{
	int pipefd[2], status;
	size_t got = 0;
	ssize_t n;
	pid_t pid;

	memset(out, 0, sizeof(*out));
	if (pipe(pipefd))
		return -1;
	fflush(stdout);
	pid = fork();
	if (pid < 0)
		return -1;
	if (!pid) {
		close(pipefd[0]);
		dup2(pipefd[1], 2);
		setenv("GDRCOPY_ENABLE_LOGGING", "1", 1);
		setenv("GDRCOPY_LOG_LEVEL", "2", 1);
		if (impl)
			setenv("GDRCOPY_COPY_IMPL", impl, 1);
		else
			unsetenv("GDRCOPY_COPY_IMPL");
		fn();
		fflush(stderr);
		_exit(0);
	}
	close(pipefd[1]);
	while (got < sizeof(out->err) - 1 &&
	       (n = read(pipefd[0], out->err + got, sizeof(out->err) - 1 - got)) > 0)
		got += n;
	out->err[got] = '\0';
	close(pipefd[0]);
	if (waitpid(pid, &status, 0) != pid || !WIFEXITED(status) || WEXITSTATUS(status))
		return -1;
	return 0;
}

static int count_lines(const char *text, const char *needle)
{
	int n = 0;

	for (const char *p = text; (p = strstr(p, needle)); p += strlen(needle))
		n++;
	return n;
}

static int same_ids(const struct gdr_copy_table *t)
{
	for (int c = 0; c < GDR_COPY_NCLASSES; c++)
		if (out->to[c] != t->to[c]->id || out->from[c] != t->from[c]->id)
			return 0;
	return 1;
}

static struct gdr_copy_table auto_table;
static char supported[256];

/* Each routine this CPU runs, forced through the environment, is what init chooses. */
static void test_env_override(unsigned int cpu)
{
	const struct gdr_copy_impl *const *impls;
	size_t count;

	impls = gdr_copy_impls(&count);
	for (size_t i = 0; i < count; i++) {
		const struct gdr_copy_impl *impl = impls[i];
		char name[64];
		int c;

		snprintf(name, sizeof(name), "env_%s", impl->name);
		if (gdr_copy_impl_missing(impl, cpu)) {
			char lacks[64];

			gdr_cpu_describe(gdr_copy_impl_missing(impl, cpu), lacks, sizeof(lacks));
			test_report("skip", name, "CPU lacks %s", lacks);
			continue;
		}
		if (run_child(impl->name, child_init)) {
			test_report("fail", name, "child failed: %s", out->err);
			continue;
		}
		for (c = 0; c < GDR_COPY_NCLASSES; c++) {
			int want_to = impl->store ? impl->id : auto_table.to[c]->id;
			int want_from = impl->load && gdr_copy_class_min(c) >= impl->load_min ?
					impl->id : auto_table.from[c]->id;

			if (out->to[c] != want_to || out->from[c] != want_from)
				break;
		}
		if (c < GDR_COPY_NCLASSES)
			test_report("fail", name, "%s copies use %s into WC and %s out of it",
				    gdr_copy_class_name(c), gdr_copy_impl_id_name(out->to[c]),
				    gdr_copy_impl_id_name(out->from[c]));
		else if (count_lines(out->err, "INFO: copy to WC: ") != 1)
			test_report("fail", name, "not one INFO line with the choice: %s",
				    out->err);
		else if (count_lines(out->err, "ERR"))
			test_report("fail", name, "logged an error: %s", out->err);
		else
			test_report("pass", name, NULL);
	}
}

/* A rejected GDRCOPY_COPY_IMPL keeps the automatic choice and says why, and what would work. */
static void expect_rejected(const char *name, const char *value, const char *why)
{
	char want[512];

	if (run_child(value, child_init)) {
		test_report("fail", name, "child failed: %s", out->err);
		return;
	}
	snprintf(want, sizeof(want), "supports: %s; keeping the automatic choice", supported);
	if (!same_ids(&auto_table))
		test_report("fail", name, "GDRCOPY_COPY_IMPL=%s changed the choice", value);
	else if (!strstr(out->err, "ERR:") || !strstr(out->err, why) || !strstr(out->err, want))
		test_report("fail", name, "expected an error with \"%s\" and \"%s\", got: %s", why,
			    want, out->err);
	else if (count_lines(out->err, "INFO: copy to WC: ") != 1)
		test_report("fail", name, "no single INFO line with the choice: %s", out->err);
	else
		test_report("pass", name, NULL);
}

static void test_env_rejected(unsigned int cpu)
{
	const struct gdr_copy_impl *const *impls;
	size_t count;
	char why[128];

	expect_rejected("env_unknown", "bogus", "no such copy routine");
#if defined(__x86_64__)
	expect_rejected("env_other_arch", "neon", "a routine of another architecture");
#else
	expect_rejected("env_other_arch", "avx2", "a routine of another architecture");
#endif
	impls = gdr_copy_impls(&count);
	for (size_t i = 0; i < count; i++) {
		unsigned int missing = gdr_copy_impl_missing(impls[i], cpu);
		char lacks[64];

		if (!missing)
			continue;
		gdr_cpu_describe(missing, lacks, sizeof(lacks));
		snprintf(why, sizeof(why), "this CPU lacks %s", lacks);
		expect_rejected("env_unsupported", impls[i]->name, why);
		return;
	}
	test_report("skip", "env_unsupported", "this CPU runs every routine of this build");
}

static void test_race(void)
{
	if (run_child(NULL, child_race)) {
		test_report("fail", "threads_race", "child failed: %s", out->err);
		return;
	}
	if (!out->threads_agree)
		test_report("fail", "threads_race",
			    "%d threads racing gdr_copy_init saw different tables", NTHREADS);
	else if (!same_ids(&auto_table))
		test_report("fail", "threads_race",
			    "the table after the race is not the automatic one");
	else if (count_lines(out->err, "INFO: copy to WC: ") != 1)
		test_report("fail", "threads_race", "the choice was not logged exactly once: %s",
			    out->err);
	else
		test_report("pass", "threads_race", NULL);
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

/* Whatever is forced, on whatever CPU, no load of fewer than 256 bytes uses AVX-512. */
#if defined(__x86_64__)
static void test_avx512_loads(void)
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

			gdr_copy_select(&t, cpu, forced, note, sizeof(note));
			for (size_t n = 0; n < 256; n++) {
				if (gdr_copy_table_impl(&t, 0, n)->id == GDR_COPY_IMPL_AVX512) {
					test_report("fail", "avx512_loads",
						    "cpu 0x%x, forced %s: %zu-byte loads use avx512",
						    cpu, forced ? forced : "nothing", n);
					return;
				}
			}
		}
	}
	/* The override still holds where AVX-512 loads are allowed. */
	gdr_copy_select(&t, GDR_CPU_SSE2 | GDR_CPU_AVX512F, "avx512", note, sizeof(note));
	if (gdr_copy_table_impl(&t, 0, GDR_COPY_SMALL_MAX + 1)->id != GDR_COPY_IMPL_AVX512 ||
	    !strstr(note, "never used below 256 B")) {
		test_report("fail", "avx512_loads",
			    "forced avx512 not used above 1 KiB, or no note: %s", note);
		return;
	}
	test_report("pass", "avx512_loads", NULL);
}
#else
static void test_avx512_loads(void)
{
	test_report("skip", "avx512_loads", "this build has no AVX-512 routine (not x86-64)");
}
#endif

/* What the automatic choice must be on a CPU with flags cpu (x86: see the H200 figures). */
static void expected_auto(unsigned int cpu, int *medium_to, int *large_to, int *from)
{
#if defined(__x86_64__)
	int store = cpu & GDR_CPU_AVX2 ? GDR_COPY_IMPL_AVX2 :
		    cpu & GDR_CPU_SSE2 ? GDR_COPY_IMPL_SSE : GDR_COPY_IMPL_GENERIC;

	*from = cpu & GDR_CPU_AVX2 ? GDR_COPY_IMPL_AVX2 :
		cpu & GDR_CPU_SSE41 ? GDR_COPY_IMPL_SSE41 : store;
	*medium_to = cpu & GDR_CPU_ERMS ? GDR_COPY_IMPL_REP_MOVSB : store;
	*large_to = store;
#elif defined(__aarch64__)
	*from = *medium_to = *large_to = cpu & GDR_CPU_ASIMD ? GDR_COPY_IMPL_NEON :
							     GDR_COPY_IMPL_STP;
#elif defined(__powerpc64__)
	(void)cpu;
	*from = *medium_to = *large_to = GDR_COPY_IMPL_POWER;
#else
	(void)cpu;
	*from = *medium_to = *large_to = GDR_COPY_IMPL_GENERIC;
#endif
}

/* The automatic choice for made-up CPUs: inline generic for tiny stores, the best loads. */
static void test_auto(void)
{
	struct gdr_copy_table t;
	char note[512], desc[256];

	for (size_t f = 0; f < NFAKE; f++) {
		int medium_to, large_to, from, ret, c;

		expected_auto(fake_cpus[f], &medium_to, &large_to, &from);
		ret = gdr_copy_select(&t, fake_cpus[f], NULL, note, sizeof(note));
		for (c = 0; c < GDR_COPY_NCLASSES; c++)
			if (t.from[c]->id != from)
				break;
		if (ret || note[0] || !t.tiny_to_inline ||
		    t.to[GDR_COPY_TINY]->id != GDR_COPY_IMPL_GENERIC ||
		    t.to[GDR_COPY_MEDIUM]->id != medium_to || t.to[GDR_COPY_LARGE]->id != large_to ||
		    c < GDR_COPY_NCLASSES) {
			gdr_copy_table_describe(&t, desc, sizeof(desc));
			test_report("fail", "auto_choice", "cpu 0x%x: %s (%s)", fake_cpus[f], desc,
				    note);
			return;
		}
	}
	gdr_copy_table_describe(&auto_table, desc, sizeof(desc));
	printf("automatic choice here: %s\n", desc);
	test_report("pass", "auto_choice", NULL);
}

/* Forcing through gdr_copy_select: any case, unknown, unsupported, missing directions. */
static void test_forced(void)
{
	unsigned int cpu = gdr_cpu_features();
	struct gdr_copy_table t;
	const char *bad = NULL;
	char note[512];

	if (gdr_copy_select(&t, cpu, "GENERIC", note, sizeof(note)) ||
	    t.to[GDR_COPY_LARGE]->id != GDR_COPY_IMPL_GENERIC || !t.tiny_to_inline)
		bad = "GENERIC not honoured (names are case-insensitive)";
	else if (gdr_copy_select(&t, cpu, "nonsense", note, sizeof(note)) != EINVAL ||
		 !tables_equal(&t, &auto_table))
		bad = "an unknown name did not give EINVAL and the automatic choice";
	else if (gdr_copy_select(&t, cpu, "memcpy", note, sizeof(note)) || t.tiny_to_inline ||
		 t.to_fn[GDR_COPY_TINY] != gdr_copy_store_memcpy ||
		 t.from_fn[GDR_COPY_TINY] != gdr_copy_load_memcpy)
		bad = "forced memcpy not used for tiny copies";
#if defined(__x86_64__)
	else if (gdr_copy_select(&t, GDR_CPU_SSE2, "avx2", note, sizeof(note)) != ENOTSUP ||
		 !strstr(note, "lacks AVX2") || !strstr(note, "supports: generic memcpy sse rep_movsb;"))
		bad = "avx2 on an SSE2-only CPU not refused with what that CPU supports";
	else if (gdr_copy_select(&t, cpu, "rep_movsb", note, sizeof(note)) ||
		 t.to[GDR_COPY_TINY]->id != GDR_COPY_IMPL_REP_MOVSB ||
		 t.from[GDR_COPY_TINY] != auto_table.from[GDR_COPY_TINY] ||
		 !strstr(note, "no routine for copies from WC"))
		bad = "forced rep_movsb: stores not forced, or loads not left automatic";
#elif defined(__aarch64__)
	else if (gdr_copy_select(&t, 0, "neon", note, sizeof(note)) != ENOTSUP ||
		 !strstr(note, "lacks ASIMD"))
		bad = "neon without ASIMD not refused";
#endif
	if (bad)
		test_report("fail", "forced_choice", "%s: %s", bad, note);
	else
		test_report("pass", "forced_choice", NULL);
}

static void test_names(void)
{
	const struct gdr_copy_impl *const *impls;
	size_t count;

	impls = gdr_copy_impls(&count);
	for (size_t i = 0; i < count; i++) {
		const char *id_name = gdr_copy_impl_id_name(impls[i]->id);

		if (gdr_copy_impl_by_name(impls[i]->name) != impls[i] || !id_name ||
		    strcmp(id_name, impls[i]->name)) {
			test_report("fail", "impl_names", "%s does not name itself",
				    impls[i]->name);
			return;
		}
	}
	test_report("pass", "impl_names", NULL);
}

static void test_fences(void)
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

/* After gdr_copy_init, the attribute answers are the table's. */
static void test_impl_for(void)
{
	struct gdr_copy_table t;

	gdr_copy_init();
	gdr_copy_table_current(&t);
	for (size_t n = 0; n <= 2 * GDR_COPY_MEDIUM_MAX; n += 61) {
		if (gdr_copy_impl_for(1, n) != gdr_copy_table_impl(&t, 1, n)->id ||
		    gdr_copy_impl_for(0, n) != gdr_copy_table_impl(&t, 0, n)->id ||
		    !tables_equal(&t, &auto_table)) {
			test_report("fail", "impl_for", "n=%zu: the answer is not the table's", n);
			return;
		}
	}
	test_report("pass", "impl_for", NULL);
}

int main(void)
{
	unsigned int cpu = gdr_cpu_features();
	const struct gdr_copy_impl *const *impls;
	char note[512];
	size_t count, used = 0;

	if (getenv("GDRCOPY_COPY_IMPL")) {
		printf("GDRCOPY_COPY_IMPL is set; this test sets it itself\n");
		unsetenv("GDRCOPY_COPY_IMPL");
	}
	out = mmap(NULL, sizeof(*out), PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS, -1, 0);
	if (out == MAP_FAILED) {
		perror("mmap");
		return 1;
	}
	gdr_copy_select(&auto_table, cpu, NULL, note, sizeof(note));
	impls = gdr_copy_impls(&count);
	for (size_t i = 0; i < count; i++)
		if (!gdr_copy_impl_missing(impls[i], cpu))
			used += snprintf(supported + used, sizeof(supported) - used, "%s%s",
					 used ? " " : "", impls[i]->name);

	test_env_override(cpu);
	test_env_rejected(cpu);
	test_race();

	test_auto();
	test_forced();
	test_avx512_loads();
	test_names();
	test_fences();
	test_impl_for();
	munmap(out, sizeof(*out));
	return test_failures ? 1 : 0;
}
