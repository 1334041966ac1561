/* SPDX-License-Identifier: MIT */
/*
 * bench_copy_impls's report: markdown tables of its results, the verdicts on the read and
 * tiny-write targets, the size classes the figures suggest for copy.c's table of rows, and every
 * result as CSV.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "bench_copy.h"
#include "bench_copy_report.h"
#include "bench_paths.h"
#include "copy_impl.h"

#define MAX_RESULTS 4096

static struct bench_result results[MAX_RESULTS];
static int nresults;

void bench_report_add(const struct bench_result *r)
{
	if (nresults < MAX_RESULTS)
		results[nresults++] = *r;
}

const struct bench_result *report_find(int latency, int to_device, int unaligned, size_t n,
				       const char *method)
{
	for (int i = 0; i < nresults; i++) {
		const struct bench_result *r = &results[i];

		if (r->latency == latency && r->to_device == to_device &&
		    r->unaligned == unaligned && r->n == n && !strcmp(r->method, method))
			return r;
	}
	return NULL;
}

/* Whether anything was measured there (a run cut short by its time budget leaves gaps). */
int report_measured(int latency, int to_device, int unaligned, size_t n)
{
	for (int i = 0; i < nresults; i++)
		if (results[i].latency == latency && results[i].to_device == to_device &&
		    results[i].unaligned == unaligned && results[i].n == n)
			return 1;
	return 0;
}

const struct bench_result *report_find_routine(int latency, int to_device, int unaligned,
					       size_t n, const char *routine)
{
	char method[64];

	snprintf(method, sizeof(method), "library:%s", routine);
	return report_find(latency, to_device, unaligned, n, method);
}

int report_usable(const struct bench_result *r)
{
	return r && !r->failed[0];
}

/* The faster of a and b that is usable, or NULL. */
static const struct bench_result *faster(const struct bench_result *a,
					 const struct bench_result *b)
{
	if (!report_usable(a))
		return report_usable(b) ? b : NULL;
	if (!report_usable(b))
		return a;
	return b->median < a->median ? b : a;
}

/* The fastest raw access with the fence (reads and writes) or, in latency, without. */
const struct bench_result *report_fastest_raw(int latency, int to_device, size_t n)
{
	static const char *const raws[] = { "raw0", "raw16", "raw32", "raw64" };
	const struct bench_result *best = NULL;

	for (size_t i = 0; i < sizeof(raws) / sizeof(raws[0]); i++)
		best = faster(best, report_find(latency, to_device, 0, n, raws[i]));
	return best;
}

/* The fastest routine as the library's choice; the current one when within TIE of it. */
const char *report_fastest_routine(const struct bench_info *info, int latency, int to_device,
				   int unaligned, size_t n, const struct bench_result **best_r)
{
	const struct bench_result *best = NULL, *now;
	const char *name = NULL;

	for (int i = 0; i < info->nroutines[to_device]; i++) {
		const struct bench_result *r = report_find_routine(latency, to_device, unaligned, n,
							    info->routines[to_device][i]);

		if (faster(best, r) != best) {
			best = r;
			name = info->routines[to_device][i];
		}
	}
	now = report_find_routine(latency, to_device, unaligned, n, info->current(to_device, n));
	if (best && report_usable(now) && now->median <= best->median * TIE) {
		best = now;
		name = info->current(to_device, n);
	}
	if (best_r)
		*best_r = best;
	return name;
}

const char *report_us(double v)
{
	static char bufs[8][32];
	static int next;
	char *b = bufs[next++ % 8];

	snprintf(b, sizeof(bufs[0]), v < 10 ? "%.3f" : v < 100 ? "%.2f" : v < 1000 ? "%.1f" : "%.0f",
		 v);
	return b;
}

/* A table cell: the median, with the spread if asked; "FAILED" after a failed data check. */
static const char *cell(const struct bench_result *r, int spread)
{
	static char bufs[8][64];
	static int next;
	char *b = bufs[next++ % 8];

	if (!r)
		return "-";
	if (r->failed[0])
		return "**FAILED**";
	if (spread)
		snprintf(b, sizeof(bufs[0]), "%s ±%.0f%%", report_us(r->median),
			 r->median > 0 ? 100 * (r->p75 - r->p25) / r->median : 0);
	else
		snprintf(b, sizeof(bufs[0]), "%s", report_us(r->median));
	return b;
}

static const char *ratio(const struct bench_result *a, const struct bench_result *b)
{
	static char bufs[4][32];
	static int next;
	char *buf = bufs[next++ % 4];

	if (!report_usable(a) || !report_usable(b) || b->median <= 0)
		return "-";
	snprintf(buf, sizeof(bufs[0]), "%.2fx", a->median / b->median);
	return buf;
}

/* a / b, then in brackets the median of a's per-round ratios to b (per_round: 0 when unknown). */
static const char *ratio_per_round(const struct bench_result *a, const struct bench_result *b,
				   double per_round)
{
	static char bufs[4][48];
	static int next;
	char *buf = bufs[next++ % 4];

	if (!report_usable(a) || !report_usable(b) || b->median <= 0)
		return "-";
	if (per_round > 0)
		snprintf(buf, sizeof(bufs[0]), "%.2fx (%.2fx)", a->median / b->median, per_round);
	else
		snprintf(buf, sizeof(bufs[0]), "%.2fx", a->median / b->median);
	return buf;
}

/* A table's header: first, cols, then (when info) the routines of a direction, then tail. */
void report_header(FILE *f, const char *first, const char *const *cols, int ncols,
		   const struct bench_info *info, int to_device, const char *const *tail, int ntail)
{
	int total = ncols + (info ? info->nroutines[to_device] : 0) + ntail;

	fprintf(f, "\n| %s |", first);
	for (int i = 0; i < ncols; i++)
		fprintf(f, " %s |", cols[i]);
	for (int i = 0; info && i < info->nroutines[to_device]; i++)
		fprintf(f, " %s |", info->routines[to_device][i]);
	for (int i = 0; i < ntail; i++)
		fprintf(f, " %s |", tail[i]);
	fprintf(f, "\n| --- |");
	for (int i = 0; i < total; i++)
		fprintf(f, " --- |");
	fprintf(f, "\n");
}

static void comparison(FILE *f, const struct bench_info *info, int to_device)
{
	static const char *const read_cols[] = {
		"library", "GDRCopy 2.6 call", "library / GDRCopy call (per round)",
		"GDRCopy 2.6 call, kernels' checks", "library / it (per round)",
		"GDRCopy 2.6 strategy", "library / GDRCopy strategy (per round)", "fastest raw loads",
		"library / raw", "cuMemcpyDtoH",
	};
	static const char *const write_cols[] = {
		"library", "GDRCopy 2.6 call", "library / GDRCopy call (per round)",
		"GDRCopy 2.6 call, kernels' checks", "library / it (per round)",
		"GDRCopy 2.6 strategy", "library / GDRCopy strategy (per round)",
		"GDRCopy 2.6 with MOVDIR64B", "fastest raw stores", "library / raw", "cuMemcpyHtoD",
	};

	fprintf(f, "\n### The library against GDRCopy 2.6, raw %s and cuMemcpy\n\n"
		   "Back-to-back calls: median microseconds per call, ± the interquartile range "
		   "in %% of the median; the raw column names its width (0: one plain access). "
		   "GDRCopy 2.6 call: its public call as documented (the handle's memh, its "
		   "checks, the type and mixing tests, the strategy, the fence); with its kernels' "
		   "checks: the same call with the asserts GDRCopy's kernels make (its default build "
		   "keeps them) and their separate loops for an aligned host side; strategy: the copy "
		   "and its sfence alone. A ratio is of the medians, then in brackets the median of "
		   "the ratios within each round, which moves less when the machine's speed drifts "
		   "during the run.\n",
		to_device ? "stores" : "loads");
	if (to_device)
		report_header(f, "size", write_cols, 11, NULL, 1, NULL, 0);
	else
		report_header(f, "size", read_cols, 10, NULL, 0, NULL, 0);
	for (int i = 0; i < info->nsizes; i++) {
		size_t n = info->sizes[i];
		const struct bench_result *lib = report_find(0, to_device, 0, n, "library");
		const struct bench_result *call = report_find(0, to_device, 0, n, "gdrcopy26_call");
		const struct bench_result *checked =
			report_find(0, to_device, 0, n, "gdrcopy26_call_checked");
		const struct bench_result *g26 = report_find(0, to_device, 0, n, "gdrcopy26");
		const struct bench_result *raw = report_fastest_raw(0, to_device, n);
		char size[32], rawcell[96] = "-";

		if (!report_measured(0, to_device, 0, n))
			continue;
		gdr_copy_size_name(n, size, sizeof(size));
		if (raw)
			snprintf(rawcell, sizeof(rawcell), "%s (%s)", cell(raw, 0), raw->method);
		fprintf(f, "| %s | %s | %s | %s |", size, cell(lib, 1), cell(call, 1),
			ratio_per_round(lib, call, lib ? lib->per_round_call : 0));
		fprintf(f, " %s | %s |", cell(checked, 1),
			ratio_per_round(lib, checked, lib ? lib->per_round_checked : 0));
		fprintf(f, " %s | %s |", cell(g26, 1),
			ratio_per_round(lib, g26, lib ? lib->per_round_strategy : 0));
		if (to_device)
			fprintf(f, " %s |", cell(report_find(0, 1, 0, n, "gdrcopy26_movdir64b"), 1));
		fprintf(f, " %s | %s | %s |\n", rawcell, ratio(lib, raw),
			cell(report_find(0, to_device, 0, n, "cumemcpy"), 0));
	}
}

/* One row per size of one routine per column, as the library's choice. */
static void routines(FILE *f, const struct bench_info *info, int latency, int to_device,
		     int unaligned, const size_t *sizes, int nsizes)
{
	static const char *const lat_cols[] = {
		"library", "GDRCopy 2.6 call", "GDRCopy 2.6 strategy", "fastest raw", "cuMemcpyDtoH"
	};
	static const char *const unaligned_cols[] = {
		"library", "GDRCopy 2.6 strategy", "library / GDRCopy"
	};
	static const char *const tail[] = { "fastest routine", "library uses" };

	if (latency)
		report_header(f, "size", lat_cols, 5, info, to_device, tail, 1);
	else if (unaligned)
		report_header(f, "size", unaligned_cols, 3, info, to_device, tail, 1);
	else
		report_header(f, "size", NULL, 0, info, to_device, tail, 2);
	for (int i = 0; i < nsizes; i++) {
		size_t n = sizes[i];
		const char *best = report_fastest_routine(info, latency, to_device, unaligned, n, NULL);
		char size[32];

		if (!report_measured(latency, to_device, unaligned, n))
			continue;
		gdr_copy_size_name(n, size, sizeof(size));
		fprintf(f, "| %s |", size);
		if (latency || unaligned) {
			const struct bench_result *lib = report_find(latency, to_device, unaligned, n, "library");
			const struct bench_result *g26 = report_find(latency, to_device, unaligned, n, "gdrcopy26");

			fprintf(f, " %s |", cell(lib, 1));
			if (latency)
				fprintf(f, " %s |",
					cell(report_find(1, 0, 0, n, "gdrcopy26_call"), 1));
			fprintf(f, " %s |", cell(g26, 1));
			if (latency)
				fprintf(f, " %s | %s |", cell(report_fastest_raw(1, 0, n), 0),
					cell(report_find(1, 0, 0, n, "cumemcpy"), 0));
			else
				fprintf(f, " %s |", ratio(lib, g26));
		}
		for (int k = 0; k < info->nroutines[to_device]; k++) {
			const char *name = info->routines[to_device][k];
			const struct bench_result *r = report_find_routine(latency, to_device, unaligned, n, name);

			fprintf(f, best && !strcmp(best, name) && report_usable(r) ? " **%s** |" : " %s |",
				cell(r, 0));
		}
		fprintf(f, " %s |", best ? best : "-");
		if (!latency && !unaligned)
			fprintf(f, " %s |", info->current(to_device, n));
		fprintf(f, "\n");
	}
}

static void where_time_goes(FILE *f, const struct bench_info *info, int to_device)
{
	static const char *const read_cols[] = {
		"routine", "raw plain", "raw 16", "raw 32", "raw 64", "raw, no fence",
		"routine, no fence", "routine + sfence", "dispatcher", "library",
		"library, no read fence",
	};
	static const char *const write_cols[] = {
		"routine", "raw plain", "raw 16", "raw 32", "raw 64", "routine + sfence",
		"dispatcher", "library",
	};
	static const char *const read_methods[] = {
		"raw0", "raw16", "raw32", "raw64", "raw_nofence", "routine_nofence", "routine",
		"dispatcher", "library", "library_nofence",
	};
	static const char *const write_methods[] = {
		"raw0", "raw16", "raw32", "raw64", "routine", "dispatcher", "library",
	};
	const char *const *methods = to_device ? write_methods : read_methods;
	int nmethods = to_device ? 7 : 10;

	fprintf(f, "\n### Where the time goes\n\n"
		   "The routine the library uses at each size, from raw %s (each followed by an "
		   "sfence, unless marked) through the routine called directly and the dispatcher "
		   "(gdr_copy_%s_mapping_type, no handle lookup) to the public call; median "
		   "microseconds per call.\n", to_device ? "stores" : "loads",
		to_device ? "to" : "from");
	report_header(f, "size", to_device ? write_cols : read_cols, nmethods + 1, NULL, to_device, NULL, 0);
	for (int i = 0; i < info->nsizes; i++) {
		size_t n = info->sizes[i];
		char size[32];

		if (!report_measured(0, to_device, 0, n))
			continue;
		gdr_copy_size_name(n, size, sizeof(size));
		fprintf(f, "| %s | %s |", size, info->current(to_device, n));
		for (int k = 0; k < nmethods; k++)
			fprintf(f, " %s |", cell(report_find(0, to_device, 0, n, methods[k]), 0));
		fprintf(f, "\n");
	}
}

/* The public call's steps and its alternatives (bench_paths.c), where they were timed. */
static void public_call(FILE *f, const struct bench_info *info, int to_device)
{
	const char *methods[48], *cols[48];
	const struct bench_path *paths;
	int ncols = 0, rows = 0;
	size_t count;

	methods[ncols] = "routine";
	cols[ncols++] = "routine + sfence";
	methods[ncols] = "dispatcher";
	cols[ncols++] = "dispatcher";
	paths = bench_paths(&count);
	/* The paths, then the library's two columns and the difference. */
	if (count + 5 > sizeof(cols) / sizeof(cols[0])) {
		fprintf(f, "\n(%zu variants of the public call are more than this report's table holds)\n",
			count);
		return;
	}
	for (size_t i = 0; i < count; i++) {
		if (!(to_device ? (void *)paths[i].to : (void *)paths[i].from))
			continue;
		methods[ncols] = paths[i].method;
		cols[ncols++] = paths[i].column;
	}
	methods[ncols] = "library";
	cols[ncols++] = "library";
	methods[ncols] = "library_fenced";
	cols[ncols++] = "library, copies fenced";
	cols[ncols] = "library - dispatcher";
	for (int i = 0; i < info->nsizes; i++)
		rows += report_find(0, to_device, 0, info->sizes[i], "path_before") != NULL;
	if (!rows)
		return;
	fprintf(f, "\n### The public call, step by step\n\n"
		   "From the routine through the dispatcher to gdr_copy_%s_mapping, median "
		   "microseconds per call: the public call as it was before it became one flat "
		   "function; the dispatcher after the copy's announcement (the unmap guard) or "
		   "after the handle lookup, each step alone; the dispatcher after 88 nops, as many "
		   "instructions as the call before added to a 16-byte read, doing nothing (equal "
		   "to the call before: the count of instructions is the cost; equal to the "
		   "dispatcher: what they do is); the flat call without the announcement or without "
		   "the lookup%s; the flat call as it was before it was made leaner (commit "
		   "2f83a1c, with today's routines: bench_paths.c)%s; the library's call; and the "
		   "library as it runs where membarrier is missing and each copy fences itself.\n",
		to_device ? "to" : "from",
		to_device ? "" : ", and with the announcement ended before the store fence "
				 "(nothing but the return after the fence)",
		to_device ? "" : "; the flat call announced in a record of the bench's own, "
				 "with both of the announcement's stores (as the library), only "
				 "the one before the lookup, only the one after the fence, or "
				 "neither (its loads alone), then with no store through a global "
				 "pointer to the record, and only the thread-local pointer read; "
				 "the same guards made leaner (a counter in thread-local storage, "
				 "one flat slot array, a byte table of size classes), then with "
				 "three branches; the flat call without the lookup plus one piece "
				 "of it (the slot's tag loaded and branched on, loaded only, a "
				 "global branched on, a branch on the handle); "
				 "the flat call reshaped, then with 12 or 48 nops before the "
				 "routine's call, before the fence or after it, 4 or 12 never-taken "
				 "branches or 12 or 48 loads "
				 "of one cached word before the routine's call; and aligned reads "
				 "of up to 64 B made in the call itself with inline 16-byte or "
				 "32-byte streaming loads");
	report_header(f, "size", cols, ncols + 1, NULL, to_device, NULL, 0);
	for (int i = 0; i < info->nsizes; i++) {
		size_t n = info->sizes[i];
		const struct bench_result *lib = report_find(0, to_device, 0, n, "library");
		const struct bench_result *disp = report_find(0, to_device, 0, n, "dispatcher");
		char size[32];

		if (!report_find(0, to_device, 0, n, "path_before"))
			continue;
		gdr_copy_size_name(n, size, sizeof(size));
		fprintf(f, "| %s |", size);
		for (int k = 0; k < ncols; k++)
			fprintf(f, " %s |", cell(report_find(0, to_device, 0, n, methods[k]), 0));
		if (report_usable(lib) && report_usable(disp))
			fprintf(f, " %+.3f |\n", lib->median - disp->median);
		else
			fprintf(f, " - |\n");
	}
}

static void csv_out(FILE *csv)
{
	fprintf(csv, "table,direction,ends,size,method,median_us,p25_us,p75_us,min_us,rounds,"
		     "calls_per_round,data_check,per_round_vs_gdrcopy26_call,"
		     "per_round_vs_gdrcopy26,per_round_vs_gdrcopy26_call_checked\n");
	for (int i = 0; i < nresults; i++) {
		const struct bench_result *r = &results[i];

		fprintf(csv, "%s,%s,%s,%zu,%s,%.4f,%.4f,%.4f,%.4f,%d,%ld,%s,%.4f,%.4f,%.4f\n",
			r->latency ? "latency" : "throughput", r->to_device ? "h2d" : "d2h",
			r->unaligned ? "unaligned" : "aligned", r->n, r->method, r->median, r->p25,
			r->p75, r->min, r->rounds, r->count, r->failed[0] ? "failed" : "ok",
			r->per_round_call, r->per_round_strategy, r->per_round_checked);
	}
}

/* Every failed data check, which makes its figures meaningless. */
static int failures(FILE *f)
{
	int count = 0;

	for (int i = 0; i < nresults; i++) {
		const struct bench_result *r = &results[i];

		if (!r->failed[0])
			continue;
		if (!count++)
			fprintf(f, "\n## Data checks that failed\n\n");
		fprintf(f, "- %s %s, %s: %s\n", r->to_device ? "write" : "read",
			r->unaligned ? "unaligned" : r->latency ? "latency" : "aligned", r->method,
			r->failed);
	}
	return count;
}

void bench_report_print(const struct bench_info *info, FILE *md, FILE *csv)
{
	const struct bench_result *timer = report_find(1, 0, 0, info->nlatency ? info->latency_sizes[0] : 0,
						"timer");

	fprintf(md, "# %s\n\n`%s`: %s\n\nThe library's automatic choice: %s.\n", info->title,
		info->command, info->setup, info->choice);
	if (info->stopped[0])
		fprintf(md, "\n**%s**\n", info->stopped);
	for (int dir = 0; dir < 2; dir++) {
		fprintf(md, "\n## %s\n", dir ? "Writes (CPU to GPU memory)" : "Reads (GPU memory to CPU)");
		comparison(md, info, dir);
		fprintf(md, "\n### Each routine as the library's choice\n\n"
			    "gdr_copy_%s_mapping with one routine at every size (the routines of this "
			    "CPU; AVX-512 loads also below the 128 B under which the library never uses "
			    "them), median microseconds per call; **bold**: the fastest (the one in use "
			    "when within %.0f%% of it).\n", dir ? "to" : "from", 100 * (TIE - 1));
		routines(md, info, 0, dir, 0, info->sizes, info->nsizes);
		where_time_goes(md, info, dir);
		public_call(md, info, dir);
		fprintf(md, "\n### Unaligned ends\n\nDevice offset +13 B, host +3 B; median "
			    "microseconds per call.\n");
		routines(md, info, 0, dir, 1, info->unaligned_sizes, info->nunaligned);
	}
	fprintf(md, "\n## One read of data the GPU just wrote (latency)\n\n"
		    "Each sample: the GPU writes new data to the range (cuMemcpyHtoD, then "
		    "cuCtxSynchronize), then one read, timed between two lfences (so it includes "
		    "the whole read: what a flag poll costs), and its data checked; medians of the "
		    "samples, microseconds. The timing alone takes %s us, included in every figure. "
		    "Raw reads here have no fence.\n", timer ? report_us(timer->median) : "?");
	routines(md, info, 1, 0, 0, info->latency_sizes, info->nlatency);
	report_targets(md, info);
	fprintf(md, "\n## Size classes this run suggests\n\n"
		    "From the tables of each routine as the library's choice: where the library's "
		    "routine is within %.0f%% of the fastest, it keeps it; elsewhere a class grows from "
		    "its smallest size for as long as one routine stays within that of the fastest "
		    "at every size of it, and takes the routine of those with the best worst ratio. "
		    "src/copy.c's `to_wc_rows` and `from_wc_rows` take "
		    "one row per class: its max is the class's largest measured size (the true "
		    "boundary lies between it and the next size), then the routine, then the "
		    "routines for CPUs that lack its features. For reads, a routine is no candidate at a "
		    "size where its read of data the GPU just wrote (a payload after a flag) takes an "
		    "extra round trip in most samples (its median above %.1fx the fastest routine's), "
		    "and the ratios are to the fastest candidate. Check the unaligned tables before "
		    "adopting a row.\n",
		100 * (CLASS_TIE - 1), LATENCY_TIE);
	report_classes(md, info, 0);
	report_classes(md, info, 1);
	if (!failures(md))
		fprintf(md, "\nEvery data check passed.\n");
	if (csv)
		csv_out(csv);
}
