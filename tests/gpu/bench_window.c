/* SPDX-License-Identifier: MIT */
/*
 * bench_window [-r ROUNDS] [-n READS]: how many reads of a BAR one CPU core keeps in flight, and
 * what between two reads shrinks that number. A diagnostic for the small reads of
 * docs/performance.md: back to back, a 16-64 B read settles on a level of a third, a half or a
 * whole round trip per call, and a few loads more between two reads can move it down a level.
 * Where the machine has no performance counters (the H200's guest has none) this measures the
 * window from outside: a loop of independent 16-byte streaming loads from the BAR, one per
 * iteration on a fresh line, with K filler instructions after each, K from 0 to 1024, of
 * three kinds: nops (they take only a reorder-buffer entry), loads that hit L1 (also a load
 * buffer entry), stores to L1 (also a store buffer entry). While the reads are in flight side by
 * side, K costs nothing; once K entries of some buffer fill it before the next read's turn, fewer
 * reads overlap, and the time per read steps up. Where each kind steps says which buffer limits
 * and how big it is. The round trip is timed with reads that each wait for the one before.
 *
 * Then the same for copy calls: each read is one call of 16, 32 or 64 bytes (the library's public
 * call, as chosen and with AVX2 at 32 B, its dispatcher, GDRCopy 2.6's public call and its
 * strategy, tests/gpu/gdrcopy26_copy.c), with K nops after it, K from 0 to 256 in steps of 4.
 * The reads in flight step down from 3 to 2 when a call and its K nops fill half the reorder
 * window, and from 2 to 1 when they fill it: the two steps give the window and the call's share
 * of it, in reorder entries (to within 8), which no instruction count gives.
 *
 * Prints markdown tables: microseconds per read (median of ROUNDS rounds of READS reads each,
 * the points interleaved within each round) and the reads in flight that gives (the round trip
 * over the time per read). x86-64 only.
 */
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

#include "copy.h"
#include "copy_impl.h"
#include "cpu.h"
#include "gdrapi.h"
#include "gdrcopy26_copy.h"
#include "gpucommon.h"

#if defined(__x86_64__)

#define LINES 4096	/* the reads walk 256 KiB of the BAR, one 64-byte line each */
#define MAX_ROUNDS 101

/*
 * One loop per kind and K. The address of each read depends only on the loop counter, never
 * on data read from the BAR, so the reads are independent; the fillers use r11 and the L1
 * word, nothing a read produces.
 */
#define FILLER_nop "nop"
#define FILLER_load "movq (%[l1]), %%r11"
#define FILLER_store "movq %%r11, (%[l1])"

#define WINDOW_LOOP(kind, k)                                                                   \
	static void loop_##kind##_##k(const volatile char *bar, long *l1, long reads)          \
	{                                                                                       \
		for (long i = 0; i < reads; i++)                                                \
			__asm__ volatile("movntdqa (%[p]), %%xmm0\n\t"                          \
					 ".rept " #k "\n\t" FILLER_##kind "\n\t.endr"           \
					 :                                                      \
					 : [p] "r"(bar + (i % LINES) * 64), [l1] "r"(l1)        \
					 : "xmm0", "r11", "memory");                            \
	}

#define WINDOW_KS(X, kind)                                                                     \
	X(kind, 0) X(kind, 16) X(kind, 32) X(kind, 48) X(kind, 64) X(kind, 96) X(kind, 128)    \
	X(kind, 160) X(kind, 192) X(kind, 256) X(kind, 320) X(kind, 384) X(kind, 448)          \
	X(kind, 512) X(kind, 640) X(kind, 768) X(kind, 1024)

WINDOW_KS(WINDOW_LOOP, nop)
WINDOW_KS(WINDOW_LOOP, load)
WINDOW_KS(WINDOW_LOOP, store)

struct point {
	int k;
	void (*loop)(const volatile char *bar, long *l1, long reads);
	double us[MAX_ROUNDS];
};

#define WINDOW_POINT(kind, k) { k, loop_##kind##_##k, { 0 } },
static struct point points[] = {
	WINDOW_KS(WINDOW_POINT, nop) WINDOW_KS(WINDOW_POINT, load) WINDOW_KS(WINDOW_POINT, store)
};
#define NPOINTS (sizeof(points) / sizeof(points[0]))
#define NKS (NPOINTS / 3)

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
			fn(host, bar + (i % LINES) * 64, n);                                    \
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
static double call_us[NCALLS][NSIZES][NCALL_KS][MAX_ROUNDS];

/* Reads that each wait for the one before: the next address adds the value read, times 0. */
static void dependent_reads(const volatile char *bar, long reads)
{
	unsigned long v = 0;

	for (long i = 0; i < reads; i++)
		__asm__ volatile("movq (%[p],%[v]), %[v]\n\t"
				 "andq $0, %[v]"
				 : [v] "+r"(v)
				 : [p] "r"(bar + (i % LINES) * 64)
				 : "memory");
}

/* The first K at which a call's reads in flight fall below level, or -1. */
static int first_k_below(const double *in_flight, double level)
{
	for (size_t i = 0; i < NCALL_KS; i++)
		if (in_flight[i] < level)
			return call_loops[i].k;
	return -1;
}

/*
 * The copy calls with K nops after each, and what their steps say: the window W and the call's
 * share F, from in flight = ceil(W / (F + K)): 3 -> 2 at F + K = W / 2, 2 -> 1 at F + K = W.
 */
static void calls_table(gdr_t g, gdr_mh_t mh, void *va, int rounds, long reads, double rtt_us)
{
	static double in_flight[NCALLS][NSIZES][NCALL_KS];
	const struct gdr_copy_impl *avx2;
	gdr_info_v2_t info;
	uint8_t *host;
	int movdir64b;
	size_t total = NCALLS * NSIZES * NCALL_KS;

	if (gdr_get_info_v2(g, mh, &info) || info.mapping_type != GDR_MAPPING_TYPE_WC) {
		printf("\nThe mapping is not write-combined: no table of copy calls.\n");
		return;
	}
	if (gdrcopy26_init(gdr_cpu_features(), &movdir64b)) {
		printf("\nGDRCopy 2.6's strategy needs SSE4.1 and AVX2, which this CPU lacks: no "
		       "table of copy calls.\n");
		return;
	}
	library_mh = mh;
	gdr_copy_table_current(&auto_table);
	avx2_at_32_table = auto_table;
	avx2 = gdr_copy_impl_by_name("avx2");
	if (avx2 && !gdr_copy_impl_missing(avx2, gdr_cpu_features())) {
		int c = gdr_copy_class_of(&avx2_at_32_table.from, 32);

		avx2_at_32_table.from.impl[c] = avx2;
		avx2_at_32_table.from.fn[c] = avx2->load;
	}
	gdrcopy26_mh = gdrcopy26_map(GDR_MAPPING_TYPE_WC);
	host = aligned_alloc(64, 64);
	if (!host || !gdrcopy26_mh.h) {
		printf("\nout of memory: no table of copy calls\n");
		free(host);
		return;
	}
	for (size_t c = 0; c < NCALLS; c++) {
		gdr_copy_table_install(calls[c].table);
		for (size_t z = 0; z < NSIZES; z++)
			for (size_t k = 0; k < NCALL_KS; k++)
				call_loops[k].loop(calls[c].fn, host, va, call_sizes[z], 100);
	}
	for (int r = 0; r < rounds; r++)
		for (size_t i = 0; i < total; i++) {
			size_t p = (i + (size_t)r * 11) % total, c = p / (NSIZES * NCALL_KS);
			size_t z = p / NCALL_KS % NSIZES, k = p % NCALL_KS;
			double t0;

			gdr_copy_table_install(calls[c].table);
			t0 = gpu_now_ns();
			call_loops[k].loop(calls[c].fn, host, va, call_sizes[z], reads);
			call_us[c][z][k][r] = (gpu_now_ns() - t0) / 1e3 / reads;
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
	gdr_copy_table_install(&auto_table);
	gdrcopy26_unmap(gdrcopy26_mh);
	free(host);
}

static int usage(const char *prog)
{
	fprintf(stderr, "usage: %s [-r ROUNDS (1-%d, default 31)] [-n READS (default 2000)]\n",
		prog, MAX_ROUNDS);
	return 2;
}

int main(int argc, char **argv)
{
	static long l1_word;
	double rtt[MAX_ROUNDS], rtt_us;
	int rounds = 31, opt;
	long reads = 2000;
	struct gpu_vmm vmm;
	gdr_mh_t mh;
	void *va;
	gdr_t g;

	while ((opt = getopt(argc, argv, "r:n:")) != -1) {
		switch (opt) {
		case 'r':
			rounds = atoi(optarg);
			break;
		case 'n':
			reads = atol(optarg);
			break;
		default:
			return usage(argv[0]);
		}
	}
	if (optind != argc || rounds < 1 || rounds > MAX_ROUNDS || reads < 1 || reads > 10000000)
		return usage(argv[0]);
	if (gpu_init())
		return 77;
	if (gpu_vmm_alloc(&vmm, LINES * 64, CU_MEM_HANDLE_TYPE_POSIX_FILE_DESCRIPTOR)) {
		printf("cuMemCreate of %d bytes failed\n", LINES * 64);
		return 1;
	}
	g = gdr_open();
	if (!g || gdr_pin_buffer(g, vmm.ptr, vmm.size, 0, 0, &mh) ||
	    gdr_map(g, mh, &va, vmm.size)) {
		printf("gdr_open/pin/map failed: run gdrcopy_info\n");
		return 1;
	}

	/* Every point once before timing, so that each loop's code is hot. */
	dependent_reads(va, 100);
	for (size_t p = 0; p < NPOINTS; p++)
		points[p].loop(va, &l1_word, 100);
	for (int r = 0; r < rounds; r++) {
		double t0 = gpu_now_ns();

		dependent_reads(va, reads);
		rtt[r] = (gpu_now_ns() - t0) / 1e3 / reads;
		for (size_t i = 0; i < NPOINTS; i++) {
			/* A different point first each round, so none always follows the same one. */
			struct point *pt = &points[(i + (size_t)r * 7) % NPOINTS];

			t0 = gpu_now_ns();
			pt->loop(va, &l1_word, reads);
			pt->us[r] = (gpu_now_ns() - t0) / 1e3 / reads;
		}
	}
	rtt_us = gpu_median(rtt, rounds);

	printf("One core's reads of a BAR in flight (`bench_window -r %d -n %ld`): a 16-byte "
	       "streaming load per read, a fresh line each, then K fillers; us per read, median of "
	       "%d rounds, and the reads in flight it gives (round trip / us per read). Round trip "
	       "(each read waits for the one before): %.3f us.\n\n",
	       rounds, reads, rounds, rtt_us);
	printf("| K | nop: us | in flight | L1 load: us | in flight | L1 store: us | in flight |\n");
	printf("| --- | --- | --- | --- | --- | --- | --- |\n");
	for (size_t i = 0; i < NKS; i++) {
		printf("| %d", points[i].k);
		for (size_t kind = 0; kind < 3; kind++) {
			struct point *pt = &points[kind * NKS + i];
			double us = gpu_median(pt->us, rounds);

			printf(" | %.3f | %.2f", us, rtt_us / us);
		}
		printf(" |\n");
	}
	calls_table(g, mh, va, rounds, reads, rtt_us);
	gdr_unmap(g, mh, va, vmm.size);
	gdr_unpin_buffer(g, mh);
	gdr_close(g);
	gpu_vmm_free(&vmm);
	return 0;
}

#else

int main(void)
{
	printf("bench_window times x86-64 instructions; this is another architecture\n");
	return 77;
}

#endif
