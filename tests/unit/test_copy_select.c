/* SPDX-License-Identifier: MIT */
/*
 * Selection of the copy routines: the automatic choice, GDRCOPY_COPY_IMPL (honoured; unknown,
 * other-architecture and unsupported names fall back with an error naming what this CPU
 * supports), well-formed tables for every CPU and override, AVX-512 loads never below 128 B,
 * one table for threads racing the first use, the log lines, and the fence rule. Cases that
 * need a process where nothing is chosen yet run in forked children (no exec, so they also work
 * under qemu-user), before the parent chooses.
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
#include "copy_select.h"
#include "harness.h"

#define NTHREADS 16

/*
 * What a child saw, in memory shared with the parent. A forked child has the parent's address
 * space, so its table's pointers compare with the parent's.
 */
struct child_out {
	struct gdr_copy_table table;	/* the table after gdr_copy_init */
	int ids_agree;			/* gdr_copy_impl_for answered from that table */
	int threads_agree;
	char err[8192];			/* the child's stderr */
};

static struct child_out *out;

/* Record the table in use, and whether gdr_copy_impl_for agrees with it at each class. */
static void read_table(void)
{
	const struct gdr_copy_table *t = &out->table;

	gdr_copy_table_current(&out->table);
	out->ids_agree = 1;
	for (int c = 0; c < t->to.nclasses; c++)
		out->ids_agree &= gdr_copy_impl_for(1, gdr_copy_class_min(&t->to, c)) ==
				  t->to.impl[c]->id;
	for (int c = 0; c < t->from.nclasses; c++)
		out->ids_agree &= gdr_copy_impl_for(0, gdr_copy_class_min(&t->from, c)) ==
				  t->from.impl[c]->id;
}

static void child_init(void)
{
	gdr_copy_init();
	read_table();
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

static int dirs_equal(const struct gdr_copy_dir *a, const struct gdr_copy_dir *b)
{
	if (a->nclasses != b->nclasses)
		return 0;
	for (int c = 0; c < a->nclasses; c++)
		if (a->max[c] != b->max[c] || a->impl[c] != b->impl[c] || a->fn[c] != b->fn[c])
			return 0;
	return 1;
}

/* The same size classes. */
static int dirs_equal_shape(const struct gdr_copy_dir *a, const struct gdr_copy_dir *b)
{
	if (a->nclasses != b->nclasses)
		return 0;
	for (int c = 0; c < a->nclasses; c++)
		if (a->max[c] != b->max[c])
			return 0;
	return 1;
}

int tables_equal(const struct gdr_copy_table *a, const struct gdr_copy_table *b)
{
	return dirs_equal(&a->to, &b->to) && dirs_equal(&a->from, &b->from) &&
	       a->tiny_to_max == b->tiny_to_max && a->from_wc_fence == b->from_wc_fence;
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
	read_table();
}

static int child_entry(void *fn)
{
	((void (*)(void))fn)();
	return TEST_PASS;
}

/*
 * Run fn in a fresh child with GDRCOPY_COPY_IMPL=impl (NULL: unset) and logging at INFO; its
 * log in out->err. 0 when it ran to its end.
 */
static int run_child(const char *impl, void (*fn)(void))
{
	const char *const env[] = {
		"GDRCOPY_ENABLE_LOGGING", "1",
		"GDRCOPY_LOG_LEVEL", "2",
		"GDRCOPY_COPY_IMPL", impl,
		NULL,
	};
	const struct test_child child = {
		.env = env,
		.output = out->err,
		.output_len = sizeof(out->err),
		.quick_exit = true,
	};

	memset(out, 0, sizeof(*out));
	return test_child_run(&child, child_entry, (void *)fn);
}

static int count_lines(const char *text, const char *needle)
{
	int n = 0;

	for (const char *p = text; (p = strstr(p, needle)); p += strlen(needle))
		n++;
	return n;
}

struct gdr_copy_table auto_table;
static char supported[256];

/* Each routine this CPU runs, forced through the environment, is what init chooses. */
static void test_env_override(unsigned int cpu)
{
	const struct gdr_copy_impl *const *impls;
	size_t count;

	impls = gdr_copy_impls(&count);
	for (size_t i = 0; i < count; i++) {
		const struct gdr_copy_impl *impl = impls[i];
		const struct gdr_copy_table *t = &out->table;
		char name[64];
		int c, d = 0;

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
		for (c = 0; c < t->to.nclasses; c++)
			if (t->to.impl[c] != (impl->store ? impl : auto_table.to.impl[c]))
				break;
		if (c == t->to.nclasses) {
			d = 1;
			for (c = 0; c < t->from.nclasses; c++)
				if (t->from.impl[c] !=
				    (impl->load && gdr_copy_class_min(&t->from, c) >= impl->load_min ?
					     impl : auto_table.from.impl[c]))
					break;
		}
		if (!dirs_equal_shape(&t->to, &auto_table.to) ||
		    !dirs_equal_shape(&t->from, &auto_table.from))
			test_report("fail", name, "the size classes differ from the automatic ones");
		else if (c < (d ? t->from.nclasses : t->to.nclasses))
			test_report("fail", name, "copies %s WC from %zu B use %s",
				    d ? "out of" : "into",
				    gdr_copy_class_min(d ? &t->from : &t->to, c),
				    (d ? t->from.impl[c] : t->to.impl[c])->name);
		else if (!out->ids_agree)
			test_report("fail", name, "gdr_copy_impl_for disagrees with the table");
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
	if (!tables_equal(&out->table, &auto_table))
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

/* GDRCOPY_COPY_IMPL set but empty is unset: the automatic choice, and no error. */
static void test_env_empty(void)
{
	if (run_child("", child_init))
		test_report("fail", "env_empty", "child failed: %s", out->err);
	else if (!tables_equal(&out->table, &auto_table))
		test_report("fail", "env_empty", "GDRCOPY_COPY_IMPL= changed the choice");
	else if (count_lines(out->err, "ERR"))
		test_report("fail", "env_empty", "logged an error: %s", out->err);
	else if (count_lines(out->err, "INFO: copy to WC: ") != 1)
		test_report("fail", "env_empty", "no single INFO line with the choice: %s",
			    out->err);
	else
		test_report("pass", "env_empty", NULL);
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
	else if (!tables_equal(&out->table, &auto_table))
		test_report("fail", "threads_race",
			    "the table after the race is not the automatic one");
	else if (count_lines(out->err, "INFO: copy to WC: ") != 1)
		test_report("fail", "threads_race", "the choice was not logged exactly once: %s",
			    out->err);
	else
		test_report("pass", "threads_race", NULL);
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
	test_env_empty();
	test_race();

	copy_select_tables();
	copy_select_auto();
	copy_select_forced();
	copy_select_names();
	copy_select_size_names();
	copy_select_impl_mask();
	copy_select_fences();
	copy_select_impl_for();
	munmap(out, sizeof(*out));
	return test_status();
}
