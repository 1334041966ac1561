/* SPDX-License-Identifier: MIT */
/*
 * bench_window's copy calls (bench_window.h): the reads are copy calls out of the mapping, each
 * of a fresh line (or lines), as a ring of descriptors or messages is read, where
 * bench_copy_impls reads one address again and again. Two tables:
 *   - each call of 16, 32 or 64 B with K nops after it, K 0-256 in steps of 4 (the library's
 *     public call, as chosen and with AVX2 at 32 B, its dispatcher, GDRCopy 2.6's public call and
 *     strategy, tests/gpu/gdrcopy26_copy.c): the reads in flight step from 3 to 2 when a call and
 *     its nops fill half the reorder window and from 2 to 1 when they fill it, which gives the
 *     window and the call's share of it in reorder entries (to within 8);
 *   - each load routine installed as the library's choice, at 8-256 B, K = 0, beside the library
 *     and GDRCopy's call: what the read rows of src/copy.c would be for fresh lines.
 * Every timed loop is followed by a data check of the last read.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "bench_forced.h"
#include "bench_window.h"
#include "copy.h"
#include "copy_impl.h"
#include "cpu.h"
#include "gdrcopy26_copy.h"
#include "gpucommon.h"

#if defined(__x86_64__)

/*
 * The copy calls, each a function of the same shape, so that every call loop makes the same
 * indirect call around them.
 */
typedef void (*copy_fn)(uint8_t *host, const char *dev, size_t n);
static gdr_mh_t library_mh, gdrcopy26_mh;

static void copy_library(uint8_t *host, const char *dev, size_t n)
{
	gdr_copy_from_mapping(library_mh, host, dev, n);
}

static void copy_dispatcher(uint8_t *host, const char *dev, size_t n)
{
	gdr_copy_from_mapping_type(GDR_MAPPING_TYPE_WC, 0, host, dev, n);
}

static void copy_gdrcopy26_call(uint8_t *host, const char *dev, size_t n)
{
	gdrcopy26_copy_from_mapping(gdrcopy26_mh, host, dev, n);
}

static void copy_gdrcopy26(uint8_t *host, const char *dev, size_t n)
{
	gdrcopy26_copy_from_wc(host, dev, n);
}

/*
 * The library's tables: as chosen, and with AVX2 (one 32-byte load a block) for the size class
 * of 32 B, which the automatic choice reads with two 16-byte loads.
 */
static struct gdr_copy_table auto_table, avx2_at_32_table;

static const struct {
	const char *name;
	copy_fn fn;
	const struct gdr_copy_table *table;
} calls[] = {
	{ "library", copy_library, &auto_table },
	{ "library, AVX2 at 32 B", copy_library, &avx2_at_32_table },
	{ "dispatcher", copy_dispatcher, &auto_table },
	{ "GDRCopy 2.6 call", copy_gdrcopy26_call, &auto_table },
	{ "GDRCopy 2.6 strategy", copy_gdrcopy26, &auto_table },
};
#define NCALLS (sizeof(calls) / sizeof(calls[0]))
static const size_t call_sizes[] = { 16, 32, 64 };
#define NSIZES (sizeof(call_sizes) / sizeof(call_sizes[0]))

#define CALL_LOOP(k)                                                                           \
	static void call_loop_##k(copy_fn fn, uint8_t *host, const char *bar, size_t n,        \
				  long reads)                                                  \
	{                                                                                       \
		for (long i = 0; i < reads; i++) {                                              \
			fn(host, bar + (i % WINDOW_LINES) * 64, n);                             \
			__asm__ volatile(".rept " #k "\n\tnop\n\t.endr" : : : "memory");          \
		}                                                                               \
	}
#define CALL_KS(X) \
	X(0) X(4) X(8) X(12) X(16) X(20) X(24) X(28) X(32) X(36) X(40) X(44) X(48) X(52) X(56) \
	X(60) X(64) X(68) X(72) X(76) X(80) X(84) X(88) X(92) X(96) X(100) X(104) X(108) \
	X(112) X(116) X(120) X(124) X(128) X(132) X(136) X(140) X(144) X(148) X(152) X(156) \
	X(160) X(164) X(168) X(172) X(176) X(180) X(184) X(188) X(192) X(196) X(200) X(204) \
	X(208) X(212) X(216) X(220) X(224) X(228) X(232) X(236) X(240) X(244) X(248) X(252) \
	X(256)
CALL_KS(CALL_LOOP)

typedef void (*call_loop_fn)(copy_fn fn, uint8_t *host, const char *bar, size_t n, long reads);
#define CALL_ENTRY(k) { k, call_loop_##k },
static const struct {
	int k;
	call_loop_fn loop;
} call_loops[] = { CALL_KS(CALL_ENTRY) };
#define NCALL_KS (sizeof(call_loops) / sizeof(call_loops[0]))

/* us per call, [call][size][K][round] */
static double call_us[NCALLS][NSIZES][NCALL_KS][WINDOW_MAX_ROUNDS];

/* The first K at which a call's reads in flight fall below level, or -1. */
static int first_k_below(const double *in_flight, double level)
{
	for (size_t i = 0; i < NCALL_KS; i++)
		if (in_flight[i] < level)
			return call_loops[i].k;
	return -1;
}

/* The library's load routines, each installed at every size class. */
#define MAX_ROUTINES 16
static struct gdr_copy_table routine_tables[MAX_ROUTINES];
static const struct gdr_copy_impl *routines[MAX_ROUTINES];
static int nroutines;

/* n-byte reads at a stride of whole lines, each of fresh lines, through fn. */
static void fresh_reads(copy_fn fn, uint8_t *host, const char *bar, size_t n, size_t stride,
			long reads)
{
	size_t mask = WINDOW_BYTES / stride - 1;	/* stride: a power of two */

	for (long i = 0; i < reads; i++)
		fn(host, bar + (i & mask) * stride, n);
}

/* After reads at stride: host holds the last read's bytes. Prints and returns 1 if not. */
static int check_last(const struct window_bar *bar, const uint8_t *host, size_t n, size_t stride,
		      long reads, const char *what)
{
	size_t at = (size_t)(reads - 1) % (WINDOW_BYTES / stride) * stride;

	if (!memcmp(host, bar->expect + at, n))
		return 0;
	printf("data check failed: %s, %zu B at BAR offset %zu\n", what, n, at);
	return 1;
}

/*
 * The copy calls with K nops after each, and what their steps say: the window W and the call's
 * share F, from in flight = ceil(W / (F + K)): 3 -> 2 at F + K = W / 2, 2 -> 1 at F + K = W.
 */
static int calls_table(const struct window_bar *bar, uint8_t *host, int rounds, long reads,
		       double rtt_us)
{
	static double in_flight[NCALLS][NSIZES][NCALL_KS];
	size_t total = NCALLS * NSIZES * NCALL_KS;
	int failed = 0;

	for (size_t c = 0; c < NCALLS; c++) {
		gdr_copy_table_install(calls[c].table);
		for (size_t z = 0; z < NSIZES; z++)
			for (size_t k = 0; k < NCALL_KS; k++)
				call_loops[k].loop(calls[c].fn, host, bar->va, call_sizes[z], 100);
	}
	for (int r = 0; r < rounds; r++)
		for (size_t i = 0; i < total; i++) {
			size_t p = (i + (size_t)r * 11) % total, c = p / (NSIZES * NCALL_KS);
			size_t z = p / NCALL_KS % NSIZES, k = p % NCALL_KS;
			double t0;

			gdr_copy_table_install(calls[c].table);
			t0 = gpu_now_ns();
			call_loops[k].loop(calls[c].fn, host, bar->va, call_sizes[z], reads);
			call_us[c][z][k][r] = (gpu_now_ns() - t0) / 1e3 / reads;
			failed += check_last(bar, host, call_sizes[z], 64, reads, calls[c].name);
		}
	for (size_t c = 0; c < NCALLS; c++)
		for (size_t z = 0; z < NSIZES; z++)
			for (size_t k = 0; k < NCALL_KS; k++)
				in_flight[c][z][k] = rtt_us / gpu_median(call_us[c][z][k], rounds);

	printf("\nCopy calls out of the mapping, one a read of a fresh line, with K nops after each: "
	       "reads in flight (round trip / median us per call).\n\n| K |");
	for (size_t z = 0; z < NSIZES; z++)
		for (size_t c = 0; c < NCALLS; c++)
			printf(" %zu B: %s |", call_sizes[z], calls[c].name);
	printf("\n| --- |");
	for (size_t i = 0; i < NSIZES * NCALLS; i++)
		printf(" --- |");
	printf("\n");
	for (size_t k = 0; k < NCALL_KS; k++) {
		printf("| %d |", call_loops[k].k);
		for (size_t z = 0; z < NSIZES; z++)
			for (size_t c = 0; c < NCALLS; c++)
				printf(" %.2f |", in_flight[c][z][k]);
		printf("\n");
	}
	printf("\nThe steps: K where the reads in flight first fall below 2.5 (K1) and 1.5 (K2); "
	       "window = 2 (K2 - K1), the call's share = K2 - 2 K1, reorder entries to within 8 "
	       "(\"-\": no such step).\n\n| size | call | in flight at K=0 | K1 | K2 | window | "
	       "call's share |\n| --- | --- | --- | --- | --- | --- | --- |\n");
	for (size_t z = 0; z < NSIZES; z++)
		for (size_t c = 0; c < NCALLS; c++) {
			int k1 = first_k_below(in_flight[c][z], 2.5);
			int k2 = first_k_below(in_flight[c][z], 1.5);
			char t1[16] = "-", t2[16] = "-";

			if (k1 >= 0)
				snprintf(t1, sizeof(t1), "%d", k1);
			if (k2 >= 0)
				snprintf(t2, sizeof(t2), "%d", k2);
			printf("| %zu B | %s | %.2f | %s | %s |", call_sizes[z], calls[c].name,
			       in_flight[c][z][0], t1, t2);
			if (k1 > 0 && k2 > k1)
				printf(" %d | %d |\n", 2 * (k2 - k1), k2 - 2 * k1);
			else
				printf(" - | - |\n");
		}
	return failed;
}

/*
 * Each load routine as the library's choice, beside the library and GDRCopy's call, reading
 * fresh lines back to back: columns 0 and 1 are those two, then one per routine, at every
 * size, also below the size the library starts using it from (its load_min).
 */
static const size_t routine_sizes[] = { 8, 16, 32, 64, 128, 256 };
#define NRSIZES (sizeof(routine_sizes) / sizeof(routine_sizes[0]))
static double routine_us[2 + MAX_ROUTINES][NRSIZES][WINDOW_MAX_ROUNDS];

static int routines_table(const struct window_bar *bar, uint8_t *host, int rounds, long reads,
			  double rtt_us)
{
	int methods = 2 + nroutines, total = methods * (int)NRSIZES, failed = 0;

	for (int r = 0; r < rounds; r++)
		for (int i = 0; i < total; i++) {
			int p = (i + r * 5) % total, m = p / (int)NRSIZES;
			size_t n = routine_sizes[p % NRSIZES], stride = n < 64 ? 64 : n;
			copy_fn fn = m == 1 ? copy_gdrcopy26_call : copy_library;
			double t0;

			gdr_copy_table_install(m < 2 ? &auto_table : &routine_tables[m - 2]);
			if (!r)
				fresh_reads(fn, host, bar->va, n, stride, 100);
			t0 = gpu_now_ns();
			fresh_reads(fn, host, bar->va, n, stride, reads);
			routine_us[m][p % NRSIZES][r] = (gpu_now_ns() - t0) / 1e3 / reads;
			failed += check_last(bar, host, n, stride, reads,
					     m == 1 ? "GDRCopy 2.6 call" :
					     m ? routines[m - 2]->name : "library");
		}

	printf("\nEach load routine as the library's choice, reading fresh lines back to back "
	       "(the next read's lines follow the last one's): reads in flight (round trip / median "
	       "us per call).\n\n"
	       "| size | library | GDRCopy 2.6 call |");
	for (int i = 0; i < nroutines; i++)
		printf(" library:%s |", routines[i]->name);
	printf(" fastest routine |\n| --- | --- | --- |");
	for (int i = 0; i <= nroutines; i++)
		printf(" --- |");
	printf("\n");
	for (size_t z = 0; z < NRSIZES; z++) {
		double best = 0;
		int best_m = -1;

		printf("| %zu B |", routine_sizes[z]);
		for (int m = 0; m < methods; m++) {
			double f;

			f = rtt_us / gpu_median(routine_us[m][z], rounds);
			printf(" %.2f |", f);
			if (m >= 2 && f > best) {
				best = f;
				best_m = m;
			}
		}
		printf(" %s |\n", best_m < 0 ? "-" : routines[best_m - 2]->name);
	}
	return failed;
}

int window_calls_tables(const struct window_bar *bar, int rounds, long reads, double rtt_us)
{
	const struct gdr_copy_impl *avx2;
	unsigned int cpu = gdr_cpu_features();
	gdr_info_v2_t info;
	uint8_t *host;
	int movdir64b, failed;

	if (gdr_get_info_v2(bar->g, bar->mh, &info) || info.mapping_type != GDR_MAPPING_TYPE_WC) {
		printf("\nThe mapping is not write-combined: no table of copy calls.\n");
		return 0;
	}
	if (gdrcopy26_init(cpu, &movdir64b)) {
		printf("\nGDRCopy 2.6's strategy needs SSE4.1 and AVX2, which this CPU lacks: no "
		       "table of copy calls.\n");
		return 0;
	}
	library_mh = bar->mh;
	gdr_copy_table_current(&auto_table);
	avx2_at_32_table = auto_table;
	avx2 = gdr_copy_impl_by_name("avx2");
	if (avx2) {	/* gdrcopy26_init checked AVX2 */
		int c = gdr_copy_class_of(&avx2_at_32_table.from, 32);

		avx2_at_32_table.from.impl[c] = avx2;
		avx2_at_32_table.from.fn[c] = avx2->load;
	}
	nroutines = bench_forced_tables(&auto_table, 0, cpu, routine_tables, routines,
					MAX_ROUTINES);
	gdrcopy26_mh = gdrcopy26_map(GDR_MAPPING_TYPE_WC);
	host = aligned_alloc(64, 256);
	if (!host || !gdrcopy26_mh.h) {
		printf("\nout of memory: no table of copy calls\n");
		free(host);
		return 1;
	}
	failed = calls_table(bar, host, rounds, reads, rtt_us);
	failed += routines_table(bar, host, rounds, reads, rtt_us);
	gdr_copy_table_install(&auto_table);
	gdrcopy26_unmap(gdrcopy26_mh);
	free(host);
	return failed;
}

#endif
