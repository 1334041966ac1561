/* SPDX-License-Identifier: MIT */
/*
 * gdrcopy_apiperf: the cost of each API call (pin, map, get_info, unmap, unpin) for buffer sizes
 * from 64 KiB doubling up to the maximum, as GDRCopy 2.6's apiperf: a row of averages and a
 * histogram of pin times per size, ending with GDRCopy's "closing" line. --csv adds the median
 * and minimum of each call. With --setup, after that, the set-up calls, the process's first
 * apart from later ones: gdr_open, the first pin (which may build driver state, e.g. the vulkan
 * backend's VkDevice) and gdr_close; asked for, since scripts parse GDRCopy's output to its end.
 */
#include <stdlib.h>
#include <string.h>

#include "common.h"

enum { OP_PIN, OP_MAP, OP_INFO, OP_UNMAP, OP_UNPIN, N_OPS };

static const char *const op_names[N_OPS] = { "pin", "map", "get_info", "unmap", "unpin" };

/* One pin-map-info-unmap-unpin cycle; times in us, or not recorded when t is NULL. */
static void cycle(gdr_t g, const struct gpu_buf *b, size_t size, int map_flags,
		  enum tool_alloc_kind kind, double t[N_OPS])
{
	double t0, t1;
	gdr_info_t info;
	gdr_mh_t mh;
	void *va;
	int r;

	t0 = tool_now_us();
	r = gdr_pin_buffer(g, b->ptr, size, 0, 0, &mh);
	t1 = tool_now_us();
	if (r)
		tool_die("gdr_pin_buffer of %zu bytes failed: %s%s", size, strerror(r),
			 tool_pin_hint(g, kind));
	t[OP_PIN] = t1 - t0;
	t0 = tool_now_us();
	r = gdr_map_v2(g, mh, &va, size, map_flags);
	t1 = tool_now_us();
	if (r)
		tool_die("gdr_map_v2 of %zu bytes with -M %s failed: %s%s (-M default lets the "
			 "backend choose; gdrcopy_info names the backend)", size,
			 tool_map_flag_name(map_flags), strerror(r), tool_library_reason());
	t[OP_MAP] = t1 - t0;
	t0 = tool_now_us();
	r = gdr_get_info(g, mh, &info);
	t1 = tool_now_us();
	if (r)
		tool_die("gdr_get_info failed: %s", strerror(r));
	t[OP_INFO] = t1 - t0;
	t0 = tool_now_us();
	r = gdr_unmap(g, mh, va, size);
	t1 = tool_now_us();
	if (r)
		tool_die("gdr_unmap failed: %s", strerror(r));
	t[OP_UNMAP] = t1 - t0;
	t0 = tool_now_us();
	r = gdr_unpin_buffer(g, mh);
	t1 = tool_now_us();
	if (r)
		tool_die("gdr_unpin_buffer failed: %s", strerror(r));
	t[OP_UNPIN] = t1 - t0;
}

/* Ten equal bins from the fastest to the slowest pin. */
static void histogram(const double *sorted, size_t n, size_t size)
{
	double lo = sorted[0], width = (sorted[n - 1] - lo) / 10;
	size_t count[10] = { 0 };

	for (size_t i = 0; i < n; i++) {
		size_t bin = width > 0 ? (size_t)((sorted[i] - lo) / width) : 0;

		count[bin > 9 ? 9 : bin]++;
	}
	printf("Histogram of gdr_pin_buffer latency for %zu bytes\n", size);
	for (int j = 0; j < 10; j++)
		printf("[%.2f\t-\t%.2f]\t%zu\n", lo + width * j, lo + width * (j + 1), count[j]);
	printf("\n");
}

/* The row of one size: each call's average (--csv: also median and minimum), pins' histogram. */
static void report_size(size_t size, double *t[N_OPS], size_t iters)
{
	struct tool_stats st[N_OPS];

	for (int k = 0; k < N_OPS; k++)
		tool_stats(t[k], iters, &st[k]);
	if (tool_csv) {
		for (int k = 0; k < N_OPS; k++)
			printf("%zu,%s,%.3f,%.3f,%.3f\n", size, op_names[k], st[k].avg,
			       st[k].median, st[k].min);
		return;
	}
	printf("Size(B)\tpin.Time(us)\tmap.Time(us)\tget_info.Time(us)\t"
	       "unmap.Time(us)\tunpin.Time(us)\n");
	printf("%zu\t%f\t%f\t%f\t%f\t%f\n", size, st[OP_PIN].avg, st[OP_MAP].avg,
	       st[OP_INFO].avg, st[OP_UNMAP].avg, st[OP_UNPIN].avg);
	histogram(t[OP_PIN], iters, size);	/* tool_stats sorted it */
}

/*
 * gdr_open and gdr_close, the process's first (timed in main) against n later ones, and the
 * first pin. In --csv, rows of size 0 (pin_first: the first size).
 */
static void setup_calls(double open_first, double pin_first, size_t pin_size, double close_first,
			size_t n)
{
	double *open_t = calloc(n, sizeof(double)), *close_t = calloc(n, sizeof(double));
	struct tool_stats so, sc;

	if (!open_t || !close_t)
		tool_die("out of memory");
	for (size_t i = 0; i < n; i++) {
		double t0 = tool_now_us(), t1, t2;
		gdr_t g = tool_gdr_open();

		t1 = tool_now_us();
		if (gdr_close(g))
			tool_die("gdr_close failed");
		t2 = tool_now_us();
		open_t[i] = t1 - t0;
		close_t[i] = t2 - t1;
	}
	tool_stats(open_t, n, &so);
	tool_stats(close_t, n, &sc);
	if (tool_csv) {
		printf("0,open_first,%.3f,%.3f,%.3f\n", open_first, open_first, open_first);
		printf("0,open,%.3f,%.3f,%.3f\n", so.avg, so.median, so.min);
		printf("%zu,pin_first,%.3f,%.3f,%.3f\n", pin_size, pin_first, pin_first, pin_first);
		printf("0,close_first,%.3f,%.3f,%.3f\n", close_first, close_first, close_first);
		printf("0,close,%.3f,%.3f,%.3f\n", sc.avg, sc.median, sc.min);
	} else {
		printf("Set-up calls: the process's first, then %zu later ones\n", n);
		printf("Call\tfirst.Time(us)\tlater.avg(us)\tlater.median(us)\tlater.min(us)\n");
		printf("gdr_open\t%f\t%f\t%f\t%f\n", open_first, so.avg, so.median, so.min);
		printf("gdr_close\t%f\t%f\t%f\t%f\n", close_first, sc.avg, sc.median, sc.min);
		printf("first pin of %zu bytes: %f us (later pins: the table above)\n", pin_size,
		       pin_first);
	}
	free(open_t);
	free(close_t);
}

int main(int argc, char **argv)
{
	size_t max_size = 16 << 20, iters = 100, warmup = 10;
	enum tool_alloc_kind kind = TOOL_ALLOC_AUTO;
	int dev_id = 0, map_flags = GDR_MAP_FLAG_DEFAULT, setup = 0;
	const struct tool_option options[] = {
		{ 's', NULL, TOOL_ARG_SIZE, &max_size, 0, 0, NULL,
		  "  -s SIZE   largest buffer size, rounded up to 64 KiB (default 16M); sizes start at "
		  "64 KiB\n" },
		{ 'd', NULL, TOOL_ARG_INT, &dev_id, 0, 1024, NULL, TOOL_DEVICE_USAGE },
		{ 'n', NULL, TOOL_ARG_COUNT, &iters, 1, 1L << 30, NULL,
		  "  -n N      timed iterations per size (default 100)\n" },
		{ 'w', NULL, TOOL_ARG_COUNT, &warmup, 0, 1L << 30, NULL,
		  "  -w N      warm-up iterations per size (default 10)\n" },
		{ 'a', NULL, TOOL_ARG_ALLOC, &kind, 0, 0, NULL, TOOL_ALLOC_USAGE },
		{ 'M', NULL, TOOL_ARG_MAP, &map_flags, 0, 0, NULL, TOOL_MAP_USAGE },
		{ 0, "setup", TOOL_ARG_FLAG, &setup, 0, 0, NULL,
		  "  --setup         then time the set-up calls: the process's first gdr_open, pin "
		  "and gdr_close, and later ones\n" },
		{ 0, NULL, TOOL_ARG_FLAG, NULL, 0, 0, NULL, NULL },
	};
	const struct tool_cli cli = {
		"gdrcopy_apiperf", options,
		"--impl all: apiperf does no copies; use it with copylat or copybw",
	};
	struct tool_common common;
	double open_first, pin_first = -1, close_first, t0;
	struct tool_cuda cu;
	double *t[N_OPS];
	gdr_t g;

	tool_options(&cli, argc, argv, &common);
	if (max_size == 0)
		tool_usage_error("-s 0: the largest buffer must hold at least one byte");
	/* GDRCopy's apiperf rounds -s up to a GPU page: -s 100K pins 64 KiB and 128 KiB. */
	max_size = TOOL_ROUND_UP(max_size, GPU_PAGE_SIZE);
	g = tool_start(&cu, dev_id, &kind, &open_first);
	tool_say("gpu alloc fn: %s\n", tool_alloc_name(kind));
	for (int k = 0; k < N_OPS; k++) {
		t[k] = calloc(iters, sizeof(double));
		if (!t[k])
			tool_die("out of memory");
	}
	if (tool_csv)
		printf("size,op,avg_us,median_us,min_us\n");
	for (size_t size = GPU_PAGE_SIZE; size <= max_size; size <<= 1) {
		struct gpu_buf b;
		double scratch[N_OPS];

		gpu_alloc_or_die(&b, size, kind, cu.dev);
		for (size_t i = 0; i < warmup; i++) {
			cycle(g, &b, size, map_flags, kind, scratch);
			if (pin_first < 0)
				pin_first = scratch[OP_PIN];
		}
		for (size_t i = 0; i < iters; i++) {
			cycle(g, &b, size, map_flags, kind, scratch);
			if (pin_first < 0)
				pin_first = scratch[OP_PIN];
			for (int k = 0; k < N_OPS; k++)
				t[k][i] = scratch[k];
		}
		report_size(size, t, iters);
		if (gpu_free(&b) != CUDA_SUCCESS)
			tool_die("freeing the %zu-byte GPU buffer failed", size);
	}
	for (int k = 0; k < N_OPS; k++)
		free(t[k]);
	t0 = tool_now_us();
	tool_gdr_close(g);
	close_first = tool_now_us() - t0;
	if (setup)
		setup_calls(open_first, pin_first, GPU_PAGE_SIZE, close_first, iters);
	tool_cuda_fini(&cu);
	return 0;
}
