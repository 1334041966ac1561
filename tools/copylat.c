/* SPDX-License-Identifier: MIT */
/*
 * gdrcopy_copylat: latency of gdr_copy_to_mapping / gdr_copy_from_mapping for sizes 1 B up to
 * the buffer size, as GDRCopy 2.6's copylat (median and minimum over up to 100 buckets), with
 * the baselines measured in the same run: cuMemcpyHtoD/DtoH at the same sizes (-c, with a ratio
 * column), and with --baseline a raw 8-byte store + fence and a raw 64-byte load through the
 * same mapping. The raw table is asked for, and comes last, because scripts parse GDRCopy's
 * tables in its order and know no other.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "common.h"

struct lat_ctx {
	struct tool_mapping *m;
	void *host;
	int cold;		/* -C: cuMemsetD8 before each copy */
	int stream_load;	/* the CPU has SSE4.1's MOVNTDQA (the library says so) */
};

typedef void (*lat_fn)(struct lat_ctx *c, size_t size);

static void op_to_mapping(struct lat_ctx *c, size_t size)
{
	gdr_copy_to_mapping(c->m->mh, c->m->ptr, c->host, size);
}

static void op_from_mapping(struct lat_ctx *c, size_t size)
{
	gdr_copy_from_mapping(c->m->mh, c->host, c->m->ptr, size);
}

static void op_htod(struct lat_ctx *c, size_t size)
{
	CU_CHECK(cuMemcpyHtoD(c->m->buf.ptr, c->host, size));
}

static void op_dtoh(struct lat_ctx *c, size_t size)
{
	CU_CHECK(cuMemcpyDtoH(c->host, c->m->buf.ptr, size));
}

static void op_memset(struct lat_ctx *c, size_t size)
{
	CU_CHECK(cuMemsetD8(c->m->buf.ptr, 0x5a, size));
	CU_CHECK(cuCtxSynchronize());
}

/*
 * The floor for the tiny path: one aligned 8-byte store and the store fence a write-combined
 * mapping needs, with no library code around it.
 */
static void op_raw_store8(struct lat_ctx *c, size_t size)
{
	(void)size;
	*(volatile uint64_t *)c->m->ptr = 0x0123456789abcdefULL;
	tool_store_fence();
}

/* One aligned 64-byte read: four MOVNTDQA streaming loads where SSE4.1 exists. */
static void op_raw_load64(struct lat_ctx *c, size_t size)
{
	const volatile uint64_t *p = c->m->ptr;
	uint64_t sink = 0;

	(void)size;
#if defined(__x86_64__)
	if (c->stream_load) {
		typedef long long v2di __attribute__((vector_size(16)));
		v2di a, b, d, e;

		__asm__ volatile("movntdqa (%4), %0\n\tmovntdqa 16(%4), %1\n\t"
				 "movntdqa 32(%4), %2\n\tmovntdqa 48(%4), %3"
				 : "=x"(a), "=x"(b), "=x"(d), "=x"(e) : "r"(p) : "memory");
		sink = (uint64_t)(a[0] ^ b[0] ^ d[0] ^ e[0]);
	} else
#endif
	{
		for (int i = 0; i < 8; i++)
			sink ^= p[i];
	}
	__asm__ volatile("" : : "r"(sink));
}

/* Time iters calls of fn at size in up to 100 buckets; median and minimum per call, in us. */
static void measure(struct lat_ctx *c, lat_fn fn, size_t size, size_t iters,
		    struct tool_stats *st)
{
	size_t nb = tool_buckets(iters), per = iters / nb;
	double *v = calloc(nb, sizeof(*v));

	if (!v)
		tool_die("out of memory");
	for (size_t b = 0; b < nb; b++) {
		double t0, t1, cold = 0;

		if (c->cold > 0) {
			t0 = tool_now_us();
			for (size_t k = 0; k < per; k++)
				op_memset(c, size);
			cold = tool_now_us() - t0;
			t0 = tool_now_us();
			for (size_t k = 0; k < per; k++) {
				op_memset(c, size);
				fn(c, size);
			}
		} else {
			t0 = tool_now_us();
			for (size_t k = 0; k < per; k++)
				fn(c, size);
		}
		t1 = tool_now_us();
		v[b] = (t1 - t0 - cold) / (double)per;
	}
	tool_stats(v, nb, st);
	free(v);
}

struct table {
	const char *test;
	const char *dir;	/* "to" or "from": which copy routine the sweep checks */
	lat_fn fn;
	size_t iters;
	double *median;		/* out: one per size, for the ratio column */
	const double *ref;	/* cuMemcpy medians to compare with, or NULL */
	int check;		/* a library copy: its data is checked at every size */
};

static void print_header(int ratio)
{
	if (tool_csv)
		return;
	printf("Test\t\t\tSize(B)\tMedian Time(us)\tMin. Time(us)%s\n",
	       ratio ? "\tcuMemcpy/gdrcopy" : "");
}

static void print_row(const char *test, size_t size, const struct tool_stats *st, double ratio)
{
	if (tool_csv) {
		if (ratio > 0)
			printf("%s,%zu,%.4f,%.4f,%.2f\n", test, size, st->median, st->min, ratio);
		else
			printf("%s,%zu,%.4f,%.4f,\n", test, size, st->median, st->min);
		return;
	}
	if (ratio > 0)
		printf("%-20s\t%zu\t%.4f\t\t%.4f\t\t%.2f\n", test, size, st->median, st->min, ratio);
	else
		printf("%-20s\t%zu\t%.4f\t\t%.4f\n", test, size, st->median, st->min);
}

static void run_table(struct lat_ctx *c, struct table *t, size_t max_size)
{
	struct tool_stats st;
	size_t i = 0;

	print_header(t->ref != NULL);
	for (size_t size = 1; size <= max_size; size <<= 1, i++) {
		if (t->check)
			tool_copy_check_begin(c->m, 0, c->host, size, !strcmp(t->dir, "to"));
		measure(c, t->fn, size, t->iters, &st);
		if (t->check)
			tool_copy_check_end(c->m, 0, c->host, size, !strcmp(t->dir, "to"));
		if (t->median)
			t->median[i] = st.median;
		if (tool_sweep_fd >= 0)
			tool_sweep_line("row %s %s %zu %.6f %.6f", t->test, t->dir, size, st.median,
					st.min);
		else
			print_row(t->test, size, &st,
				  t->ref && st.median > 0 ? t->ref[i] / st.median : 0);
	}
	tool_say("\n");
}

static void run_baseline(struct lat_ctx *c, size_t writes, size_t reads)
{
	struct tool_stats st;
	int saved = c->cold;

	tool_say("Baseline, not a gdrcopy call: raw CPU accesses through the same mapping\n");
	print_header(0);
	c->cold = 0;
	measure(c, op_raw_store8, 8, writes, &st);
	print_row("raw_store8_sfence", 8, &st, 0);
	measure(c, op_raw_load64, 64, reads, &st);
	print_row(c->stream_load ? "raw_load64_movntdqa" : "raw_load64_volatile", 64, &st, 0);
	c->cold = saved;
	tool_say("\n");
}

/*
 * cuMemcpy at every size (with -c, for the ratio column), then the library's copies: copylat's
 * tables, in the order GDRCopy's prints them; then the raw baseline, when asked for.
 */
static void run_tables(struct lat_ctx *c, size_t size, size_t writes, size_t reads,
		       int do_cumemcpy, int baseline)
{
	double *h2d = NULL, *d2h = NULL;
	size_t nsizes = 0;

	for (size_t s = 1; s <= size; s <<= 1)
		nsizes++;
	if (tool_csv && tool_sweep_fd < 0)
		printf("test,size,median_us,min_us,cumemcpy_over_gdrcopy\n");

	if (do_cumemcpy && tool_sweep_fd < 0) {
		struct table th = { "cuMemcpy_H2D", "to", op_htod, writes, NULL, NULL, 0 };
		struct table td = { "cuMemcpy_D2H", "from", op_dtoh, reads, NULL, NULL, 0 };

		h2d = calloc(nsizes, sizeof(*h2d));
		d2h = calloc(nsizes, sizeof(*d2h));
		if (!h2d || !d2h)
			tool_die("out of memory");
		th.median = h2d;
		td.median = d2h;
		tool_say("cuMemcpyHtoD num iters for each size: %zu\n", writes);
		run_table(c, &th, size);
		tool_say("cuMemcpyDtoH num iters for each size: %zu\n", reads);
		run_table(c, &td, size);
	}
	{
		struct table tt = { "gdr_copy_to_mapping", "to", op_to_mapping, writes, NULL, h2d,
				    1 };
		struct table tf = { "gdr_copy_from_mapping", "from", op_from_mapping, reads, NULL,
				    d2h, 1 };

		tool_say("gdr_copy_to_mapping num iters for each size: %zu\n", writes);
		tool_say("WARNING: Measuring the API invocation overhead as observed by the CPU. "
			 "Data might not be ordered all the way to the GPU internal visibility.\n");
		run_table(c, &tt, size);
		tool_say("gdr_copy_from_mapping num iters for each size: %zu\n", reads);
		run_table(c, &tf, size);
	}
	if (baseline && tool_sweep_fd < 0)
		run_baseline(c, writes, reads);

	free(h2d);
	free(d2h);
}

int main(int argc, char **argv)
{
	size_t size = 16 << 20, writes = 10000, reads = 100;
	enum tool_alloc_kind kind = TOOL_ALLOC_AUTO;
	int dev_id = 0, map_flags = GDR_MAP_FLAG_DEFAULT, do_cumemcpy = 0, cold = 0, baseline = 0;
	const struct tool_option options[] = {
		{ 's', NULL, TOOL_ARG_SIZE, &size, 0, 0, NULL,
		  "  -s SIZE   buffer size, the largest copy (default 16M)\n" },
		{ 'd', NULL, TOOL_ARG_INT, &dev_id, 0, 1024, NULL, TOOL_DEVICE_USAGE },
		{ 'w', NULL, TOOL_ARG_COUNT, &writes, 1, 1L << 40, NULL,
		  "  -w N      iterations of each write size (default 10000)\n" },
		{ 'r', NULL, TOOL_ARG_COUNT, &reads, 1, 1L << 40, NULL,
		  "  -r N      iterations of each read size (default 100)\n" },
		{ 'a', NULL, TOOL_ARG_ALLOC, &kind, 0, 0, NULL, TOOL_ALLOC_USAGE },
		{ 'M', NULL, TOOL_ARG_MAP, &map_flags, 0, 0, NULL, TOOL_MAP_USAGE },
		{ 'c', NULL, TOOL_ARG_FLAG, &do_cumemcpy, 0, 0, NULL,
		  "  -c        also time cuMemcpyHtoD/DtoH at the same sizes (ratio column)\n" },
		{ 'C', NULL, TOOL_ARG_FLAG, &cold, 0, 0, NULL,
		  "  -C        cold cache: cuMemsetD8 before each copy, its time subtracted (caching "
		  "mappings only)\n" },
		{ 0, "baseline", TOOL_ARG_FLAG, &baseline, 0, 0, NULL,
		  "  --baseline      also time a raw 8-byte store + fence and a raw 64-byte load "
		  "through the mapping\n" },
		{ 0, NULL, TOOL_ARG_FLAG, NULL, 0, 0, NULL, NULL },
	};
	const struct tool_cli cli = { "gdrcopy_copylat", options, NULL };
	struct tool_common common;
	struct tool_mapping m;
	struct tool_cuda cu;
	struct lat_ctx c;
	gdr_t g;

	tool_options(&cli, argc, argv, &common);
	if (size == 0)
		tool_usage_error("-s 0: the buffer must hold at least one byte");
	writes = tool_round_iters(writes, "write");
	reads = tool_round_iters(reads, "read");
	if (tool_impl_is_all(&common))
		return tool_sweep(&common, "median time (us)", 0, "impl,test,size,median_us,min_us");

	g = tool_start(&cu, dev_id, &kind, NULL);
	tool_say("testing size: %zu\n", size);
	tool_map_gpu(&m, g, &cu, size, kind, map_flags, 0);
	tool_report_impl(g, common.impl);
	if (cold && m.info.mapping_type != GDR_MAPPING_TYPE_CACHING)
		tool_die("-C (cold cache) needs a caching mapping; this one is %s (try -M cache)",
			 tool_mapping_name(m.info.mapping_type));
	tool_say("use cold cache: %s\n", cold ? "yes" : "no");

	c.m = &m;
	c.cold = cold;
	c.stream_load = !!(tool_copy_impls(g) & 1 << GDR_COPY_IMPL_SSE41);
	c.host = malloc(size);
	if (!c.host)
		tool_die("cannot allocate %zu bytes of host memory", size);
	tool_fill_pattern(c.host, size, 0);
	run_tables(&c, size, writes, reads, do_cumemcpy, baseline);
	free(c.host);
	tool_unmap_gpu(&m, 0);
	tool_gdr_close(g);
	tool_cuda_fini(&cu);
	return 0;
}
