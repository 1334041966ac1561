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
 * Then bench_window_calls.c's tables, with copy calls as the reads.
 *
 * Prints markdown tables: microseconds per read (median of ROUNDS rounds of READS reads each,
 * the points interleaved within each round) and the reads in flight that gives (the round trip
 * over the time per read). Exit 1 if a data check failed. x86-64 only.
 */
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

#include "bench_bar.h"
#include "bench_window.h"
#include "gpucommon.h"

#if defined(__x86_64__)


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
					 : [p] "r"(bar + (i % WINDOW_LINES) * 64),              \
					   [l1] "r"(l1)                                         \
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
	double us[WINDOW_MAX_ROUNDS];
};

#define WINDOW_POINT(kind, k) { k, loop_##kind##_##k, { 0 } },
static struct point points[] = {
	WINDOW_KS(WINDOW_POINT, nop) WINDOW_KS(WINDOW_POINT, load) WINDOW_KS(WINDOW_POINT, store)
};
#define NPOINTS (sizeof(points) / sizeof(points[0]))
#define NKS (NPOINTS / 3)

/* Reads that each wait for the one before: the next address adds the value read, times 0. */
static void dependent_reads(const volatile char *bar, long reads)
{
	unsigned long v = 0;

	for (long i = 0; i < reads; i++)
		__asm__ volatile("movq (%[p],%[v]), %[v]\n\t"
				 "andq $0, %[v]"
				 : [v] "+r"(v)
				 : [p] "r"(bar + (i % WINDOW_LINES) * 64)
				 : "memory");
}

static int usage(const char *prog)
{
	fprintf(stderr, "usage: %s [-r ROUNDS (1-%d, default 31)] [-n READS (default 2000)]\n",
		prog, WINDOW_MAX_ROUNDS);
	return 2;
}

int main(int argc, char **argv)
{
	static long l1_word;
	double rtt[WINDOW_MAX_ROUNDS], rtt_us;
	int rounds = 31, opt, failed;
	long reads = 2000;
	struct window_bar bar;
	struct bench_bar bb;
	uint8_t *expect;

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
	if (optind != argc || rounds < 1 || rounds > WINDOW_MAX_ROUNDS || reads < 1 ||
	    reads > 10000000)
		return usage(argv[0]);
	if (gpu_init())
		return 77;
	if (bench_bar_open(&bb, WINDOW_BYTES))
		return 1;
	/* What the copy calls must read back: a pattern the GPU holds. */
	expect = malloc(WINDOW_BYTES);
	if (!expect) {
		printf("out of memory\n");
		return 1;
	}
	for (size_t i = 0; i < WINDOW_BYTES; i++)
		expect[i] = (uint8_t)gpu_pattern(7, i);
	if (cu->cuMemcpyHtoD(bb.vmm.ptr, expect, WINDOW_BYTES) || cu->cuCtxSynchronize()) {
		printf("cuMemcpyHtoD of %d bytes failed\n", WINDOW_BYTES);
		return 1;
	}

	/* Every point once before timing, so that each loop's code is hot. */
	dependent_reads(bb.va, 100);
	for (size_t p = 0; p < NPOINTS; p++)
		points[p].loop(bb.va, &l1_word, 100);
	for (int r = 0; r < rounds; r++) {
		double t0 = gpu_now_ns();

		dependent_reads(bb.va, reads);
		rtt[r] = (gpu_now_ns() - t0) / 1e3 / reads;
		for (size_t i = 0; i < NPOINTS; i++) {
			/* A different point first each round, so none always follows the same one. */
			struct point *pt = &points[(i + (size_t)r * 7) % NPOINTS];

			t0 = gpu_now_ns();
			pt->loop(bb.va, &l1_word, reads);
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
	bar = (struct window_bar){ .g = bb.g, .mh = bb.mh, .va = bb.va, .expect = expect };
	failed = window_calls_tables(&bar, rounds, reads, rtt_us);
	bench_bar_close(&bb);
	free(expect);
	return failed ? 1 : 0;
}

#else

int main(void)
{
	printf("bench_window times x86-64 instructions; this is another architecture\n");
	return 77;
}

#endif
