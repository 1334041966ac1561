/* SPDX-License-Identifier: MIT */
/*
 * bench_copy_impls' verdicts: the read and tiny-write targets, the per-call overhead over a raw
 * access, and the size classes the figures suggest for copy.c's table of rows.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "bench_copy_report.h"
#include "copy_impl.h"

/* The worst ratio of impl's dependent-read latency to the fastest routine's over sizes[lo..hi]. */
static double latency_ratio(const struct bench_info *info, const char *impl, size_t lo, size_t hi)
{
	double worst = 0;

	for (int i = 0; i < info->nlatency; i++) {
		size_t n = info->latency_sizes[i];
		const struct bench_result *best, *r = report_find_routine(1, 0, 0, n, impl);

		if (n < lo || n > hi)
			continue;
		report_fastest_routine(info, 1, 0, 0, n, &best);
		if (report_usable(best) && report_usable(r) && r->median / best->median > worst)
			worst = r->median / best->median;
	}
	return worst;
}

/* impl's median over the fastest routine's at n, or 0 when either was not measured. */
static double routine_ratio(const struct bench_info *info, int to_device, size_t n,
			    const char *impl)
{
	const struct bench_result *best, *r = report_find_routine(0, to_device, 0, n, impl);

	report_fastest_routine(info, 0, to_device, 0, n, &best);
	return report_usable(best) && report_usable(r) ? r->median / best->median : 0;
}

/*
 * Whether impl's read of n bytes the GPU has just written takes an extra round trip in most
 * samples (LATENCY_TIE). A payload read after a flag is that read, so such a routine is no
 * candidate at n however fast it reads one range again and again.
 */
static int extra_round_trip(const struct bench_info *info, const char *impl, size_t n)
{
	const struct bench_result *best, *r = report_find_routine(1, 0, 0, n, impl);

	report_fastest_routine(info, 1, 0, 0, n, &best);
	return report_usable(best) && report_usable(r) && r->median > LATENCY_TIE * best->median;
}

/*
 * routine_ratio for the candidates of n's class: for reads, 0 for a routine with an extra round
 * trip, and the others against the fastest of them.
 */
static double candidate_ratio(const struct bench_info *info, int to_device, size_t n,
			      const char *impl)
{
	const struct bench_result *r = report_find_routine(0, to_device, 0, n, impl);
	double best = 0;

	if (to_device)
		return routine_ratio(info, to_device, n, impl);
	if (extra_round_trip(info, impl, n))
		return 0;
	for (int k = 0; k < info->nroutines[0]; k++) {
		const char *name = info->routines[0][k];
		const struct bench_result *c = report_find_routine(0, 0, 0, n, name);

		if (report_usable(c) && !extra_round_trip(info, name, n) &&
		    (!best || c->median < best))
			best = c->median;
	}
	return best > 0 && report_usable(r) ? r->median / best : 0;
}

/*
 * Classes of sizes that one routine serves within CLASS_TIE of the fastest at each of their
 * sizes, grown greedily from the smallest size, and the rows they make for copy.c: the library's
 * current routine where it is within CLASS_TIE, else the routine with the best worst ratio over
 * the longest class. For reads, only routines whose read of fresh data needs no extra round trip
 * where that was measured (candidate_ratio).
 */
void report_classes(FILE *f, const struct bench_info *info, int to_device)
{
	static const char *const cols[] = {
		"routine", "its worst / fastest", "library uses", "library uses / fastest (worst)",
		"dependent read: routine / fastest (worst)",
	};
	size_t sizes[BENCH_MAX_SIZES], used = 0;
	int nsizes = 0, nr = info->nroutines[to_device];
	char rows[1024] = "";

	for (int i = 0; i < info->nsizes; i++)
		if (report_measured(0, to_device, 0, info->sizes[i]))
			sizes[nsizes++] = info->sizes[i];
	fprintf(f, "\n### Copies %s WC\n", to_device ? "into" : "out of");
	report_header(f, "sizes", cols, to_device ? 4 : 5, NULL, to_device, NULL, 0);
	for (int start = 0, end; start < nsizes; start = end + 1) {
		double worst[BENCH_MAX_ROUTINES], w, lib_worst = 0, lat;
		const char *pick = NULL, *cur = info->current(to_device, sizes[start]);
		char lo[32], hi[32], now[256] = "";
		int alive = 0, keep;

		/*
		 * Every routine within CLASS_TIE at sizes[start], then as far as one stays so;
		 * only the library's current routine while it is within CLASS_TIE, so that the
		 * suggestion changes only what the run shows to be slower.
		 */
		w = candidate_ratio(info, to_device, sizes[start], cur);
		keep = w > 0 && w <= CLASS_TIE;
		for (int k = 0; k < nr; k++) {
			const char *name = info->routines[to_device][k];

			w = candidate_ratio(info, to_device, sizes[start], name);
			worst[k] = w > 0 && w <= CLASS_TIE && (!keep || !strcmp(name, cur)) ? w : 0;
			alive += worst[k] > 0;
		}
		for (end = start; alive && end + 1 < nsizes; end++) {
			int next = 0;

			if (keep && strcmp(info->current(to_device, sizes[end + 1]), cur))
				break;

			for (int k = 0; k < nr; k++) {
				w = candidate_ratio(info, to_device, sizes[end + 1],
						    info->routines[to_device][k]);
				next += worst[k] > 0 && w > 0 && w <= CLASS_TIE;
			}
			if (!next)
				break;
			for (int k = 0; k < nr; k++) {
				w = candidate_ratio(info, to_device, sizes[end + 1],
						    info->routines[to_device][k]);
				worst[k] = worst[k] > 0 && w > 0 && w <= CLASS_TIE ?
					   (w > worst[k] ? w : worst[k]) : 0;
			}
		}
		w = 0;
		for (int k = 0; k < nr; k++) {
			if (worst[k] > 0 && (!pick || worst[k] < w)) {
				pick = info->routines[to_device][k];
				w = worst[k];
			}
		}
		for (int k = 0; k < nr; k++) {
			if (worst[k] > 0 && worst[k] <= w * TIE &&
			    !strcmp(info->routines[to_device][k], cur)) {
				pick = cur;
				w = worst[k];
			}
		}
		for (int k = start; k <= end; k++) {
			const char *c = info->current(to_device, sizes[k]);
			double r = routine_ratio(info, to_device, sizes[k], c);

			if (r > lib_worst)
				lib_worst = r;
			if (!strstr(now, c))
				snprintf(now + strlen(now), sizeof(now) - strlen(now), "%s%s",
					 now[0] ? ", " : "", c);
		}
		gdr_copy_size_name(sizes[start], lo, sizeof(lo));
		gdr_copy_size_name(sizes[end], hi, sizeof(hi));
		fprintf(f, "| %s - %s | %s |", lo, hi, pick ? pick : "-");
		fprintf(f, pick ? " %.2fx |" : " - |", pick ? w : 0);
		fprintf(f, " %s |", now);
		fprintf(f, lib_worst > 0 ? " %.2fx |" : " - |", lib_worst);
		if (!to_device) {
			lat = pick ? latency_ratio(info, pick, sizes[start], sizes[end]) : 0;
			fprintf(f, lat > 0 ? " %.2fx |" : " - |", lat);
		}
		fprintf(f, "\n");
		if (end + 1 < nsizes)
			used += snprintf(rows + used, sizeof(rows) - used, "{ %zu, %s }, ",
					 sizes[end], pick ? pick : "?");
		else
			used += snprintf(rows + used, sizeof(rows) - used, "{ SIZE_MAX, %s }",
					 pick ? pick : "?");
		if (used >= sizeof(rows))
			used = sizeof(rows) - 1;
	}
	fprintf(f, "\nRows for `%s` in src/copy.c: `%s`\n", to_device ? "to_wc_rows" : "from_wc_rows",
		rows);
}

/*
 * What the public call adds to the dispatcher over [lo, hi], now and as it was before it became
 * one flat function (path_before): the range of the differences of the medians.
 */
static void overhead(FILE *f, const struct bench_info *info, int to_device, size_t lo, size_t hi)
{
	double now[2] = { 1e9, -1e9 }, before[2] = { 1e9, -1e9 };
	char a[32], b[32];

	for (int i = 0; i < info->nsizes; i++) {
		size_t n = info->sizes[i];
		const struct bench_result *disp = report_find(0, to_device, 0, n, "dispatcher");
		const struct bench_result *lib = report_find(0, to_device, 0, n, "library");
		const struct bench_result *old = report_find(0, to_device, 0, n, "path_before");

		if (n < lo || n > hi || !report_usable(disp) || !report_usable(lib) || !report_usable(old))
			continue;
		now[0] = lib->median - disp->median < now[0] ? lib->median - disp->median : now[0];
		now[1] = lib->median - disp->median > now[1] ? lib->median - disp->median : now[1];
		before[0] = old->median - disp->median < before[0] ? old->median - disp->median :
								     before[0];
		before[1] = old->median - disp->median > before[1] ? old->median - disp->median :
								     before[1];
	}
	gdr_copy_size_name(lo, a, sizeof(a));
	gdr_copy_size_name(hi, b, sizeof(b));
	if (now[0] > now[1])
		fprintf(f, "- The public %s call over the dispatcher, %s - %s: not measured\n",
			to_device ? "write" : "read", a, b);
	else
		fprintf(f, "- The public %s call over the dispatcher, %s - %s: %+.3f to %+.3f us "
			   "(the call before it was made flat: %+.3f to %+.3f us)\n",
			to_device ? "write" : "read", a, b, now[0], now[1], before[0], before[1]);
}

/*
 * Where the library's reads are slower than base (a method of GDRCopy 2.6's): the sizes, with
 * the figures, in list; how many sizes were compared. per_round: judged on the median of the
 * per-round ratios instead of the medians.
 */
static int slower_than(const struct bench_info *info, const char *base, int per_round,
		       char *list, size_t len)
{
	int compared = 0;

	list[0] = 0;
	for (int i = 0; i < info->nsizes; i++) {
		size_t n = info->sizes[i];
		const struct bench_result *lib = report_find(0, 0, 0, n, "library");
		const struct bench_result *g26 = report_find(0, 0, 0, n, base);
		char size[32];

		double pr;

		if (!report_usable(lib) || !report_usable(g26))
			continue;
		pr = !strcmp(base, "gdrcopy26")		     ? lib->per_round_strategy :
		     !strcmp(base, "gdrcopy26_call_checked") ? lib->per_round_checked :
							       lib->per_round_call;
		if (per_round && pr <= 0)
			continue;
		compared++;
		gdr_copy_size_name(n, size, sizeof(size));
		if (per_round && pr > 1)
			snprintf(list + strlen(list), len - strlen(list), "%s%s (%.2fx)",
				 list[0] ? ", " : "", size, pr);
		else if (!per_round && lib->median > g26->median)
			snprintf(list + strlen(list), len - strlen(list), "%s%s (%s against %s)",
				 list[0] ? ", " : "", size, report_us(lib->median),
				 report_us(g26->median));
	}
	return compared;
}

/* The read and tiny-write targets, judged on this run's medians. */
void report_targets(FILE *f, const struct bench_info *info)
{
	static const struct {
		size_t n;
		double max_us;
	} bounds[] = { { 64, 0.39 }, { 1024, 1.25 } };
	static const struct {
		const char *method, *what;
	} bases[] = {
		{ "gdrcopy26_call", "GDRCopy 2.6's public call" },
		{ "gdrcopy26_call_checked",
		  "GDRCopy 2.6's public call with its kernels' checks (its default build)" },
		{ "gdrcopy26", "GDRCopy 2.6's strategy alone (no public call around it)" },
	};
	char slower[1024], far[1024] = "";
	const struct bench_result *lib8 = report_find(0, 1, 0, 8, "library");
	const struct bench_result *raw8 = report_find(0, 1, 0, 8, "raw0");
	int raw_compared = 0;

	for (int i = 0; i < info->nsizes; i++) {
		size_t n = info->sizes[i];
		const struct bench_result *lib = report_find(0, 0, 0, n, "library");
		const struct bench_result *raw = report_fastest_raw(0, 0, n);
		char size[32];

		gdr_copy_size_name(n, size, sizeof(size));
		if (n >= 64 && report_usable(lib) && report_usable(raw)) {
			raw_compared++;
			if (lib->median > 1.5 * raw->median)
				snprintf(far + strlen(far), sizeof(far) - strlen(far),
					 "%s%s (%s against %s)", far[0] ? ", " : "", size,
					 report_us(lib->median), report_us(raw->median));
		}
	}
	fprintf(f, "\n## Against the targets (this run)\n\n");
	for (size_t i = 0; i < sizeof(bases) / sizeof(bases[0]); i++) {
		for (int per_round = 0; per_round < 2; per_round++) {
			int compared = slower_than(info, bases[i].method, per_round, slower,
						   sizeof(slower));

			fprintf(f, "- Reads at or below %s at every size%s: %s%s\n", bases[i].what,
				per_round ? ", round by round (the median of the per-round ratios)" :
					    "",
				!compared ? "not measured" : slower[0] ? "**missed** at " : "met",
				compared ? slower : "");
		}
	}
	fprintf(f, "- Reads within 1.5x of the fastest raw loads (with their sfence) from 64 B up: "
		   "%s%s\n", !raw_compared ? "not measured" : far[0] ? "**missed** at " : "met",
		raw_compared ? far : "");
	for (size_t i = 0; i < sizeof(bounds) / sizeof(bounds[0]); i++) {
		const struct bench_result *lib = report_find(0, 0, 0, bounds[i].n, "library");
		char size[32];

		gdr_copy_size_name(bounds[i].n, size, sizeof(size));
		if (report_usable(lib))
			fprintf(f, "- A %s read at most %.2f us (1.5x the raw loads' first figure): "
				   "%s: %s\n", size, bounds[i].max_us, report_us(lib->median),
				lib->median <= bounds[i].max_us ? "met" : "**missed**");
	}
	overhead(f, info, 0, 16, 1024);
	overhead(f, info, 1, 1, 64);
	if (report_usable(lib8) && report_usable(raw8))
		fprintf(f, "- An 8-byte write within 1.03x of a raw 8-byte store + sfence: %s against "
			   "%s (%.3fx): %s\n", report_us(lib8->median), report_us(raw8->median),
			lib8->median / raw8->median,
			lib8->median <= 1.03 * raw8->median ? "met" : "**missed**");
	else
		fprintf(f, "- An 8-byte write within 1.03x of a raw 8-byte store + sfence: not measured\n");
}
