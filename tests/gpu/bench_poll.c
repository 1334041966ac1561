/* SPDX-License-Identifier: MIT */
/*
 * bench_poll [-r ROUNDS] [-n EXCHANGES] [-t TIMEOUT_MS]: how soon a CPU that polls a word of GPU
 * memory through the mapping sees the GPU change it, for each way of reading it. A flag or
 * completion poll is the read gdrcopy exists for, and back-to-back reads of one address (what
 * bench_copy_impls times) may be served without reaching the GPU: a streaming load can be
 * answered from a buffer the CPU filled for an earlier one. This asks whether such a read still
 * sees the GPU's store, and how soon, with and without the fence that ends the library's read.
 *
 * Each exchange: the CPU stores i to one word (ping) through the mapping with a store fence, a
 * GPU thread that waits for it (kernels.cu: gdr_echo_u32) stores i to another word (pong), and
 * the CPU polls pong with the method under test until it reads i. Where the kernels are not
 * there (the simulated driver) a CPU thread answers instead, so the program can be checked.
 * Methods: the library's read of 4 and 64 bytes (gdr_copy_from_mapping, which ends with
 * GDRCopy 2.6's store fence) and the same read without that fence (the table the benchmarks
 * install, copy_impl.h); GDRCopy 2.6's call (gdrcopy26_copy.c); a plain 4-byte load; 16-, 32-
 * and 64-byte streaming loads (MOVNTDQA) alone, each followed by an sfence, by an lfence (16
 * bytes) or by an mfence (16 and 32 bytes).
 * Then a record polled whole: the library reading 64, 128 and 256 bytes that begin with pong,
 * with its own choice of routine and with each load routine of this CPU installed as its choice
 * (bench_forced.h), which says which routine sees a change soonest at each size.
 *
 * Then the same methods read a word the GPU keeps changing (kernels.cu: gdr_count_u32 stores
 * 1, 2, 3, ... to it back to back), EXCHANGES reads back to back per round: the time per read,
 * and how many reads returned the value the read before returned. A read that reaches the GPU
 * sees a new value (the word changes many times during a round trip); one answered by a request
 * an earlier read made, or by a buffer inside the CPU, repeats. This says which back-to-back
 * figures of bench_copy_impls are fresh reads and which are not.
 *
 * ROUNDS rounds of EXCHANGES each per method, the methods in an order rotated each round; the
 * first exchange of each round (which waits for the partner to start) is not counted. Prints a
 * markdown table: the round trip (median, 99th percentile and maximum over every exchange
 * counted), the polls per exchange, values read that were neither the old nor the new one, and
 * exchanges the poll did not see within TIMEOUT_MS (the poll then gives up and releases the
 * partner). Exit 1 if the library's read or GDRCopy's call read a wrong value or missed an
 * exchange: those are the reads the API promises; the others are what is measured. x86-64 only.
 */
#include <errno.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "bench_bar.h"
#include "bench_forced.h"
#include "copy.h"
#include "copy_impl.h"
#include "cpu.h"
#include "gdrapi.h"
#include "gdrcopy26_copy.h"
#include "gpucommon.h"

#if defined(__x86_64__)

#define POLL_MAX_ROUNDS 101
#define POLL_BYTES (64 * 1024)
#define PING_OFFSET 0
#define PONG_OFFSET 4096	/* its own line, and its own 4 KiB of the BAR */
#define COUNTER_OFFSET 8192	/* the moving word, with RECORD_MAX bytes after it */
#define STOP_OFFSET 12288	/* the moving word's writer stops when this is not 0 */
#define POLLS_PER_CLOCK 64u	/* a look at the clock (for the timeout) every that many polls */
#define RECORD_MAX 256		/* the largest record polled whole */
#define MAX_METHODS 64

enum how { LIBRARY, LIBRARY_NO_FENCE, GDRCOPY26, PLAIN, STREAM16, STREAM32, STREAM64 };
enum fence { NO_FENCE, SFENCE, LFENCE, MFENCE };

struct method {
	char name[64];
	enum how how;
	size_t size;		/* LIBRARY, LIBRARY_NO_FENCE, GDRCOPY26: bytes read */
	enum fence fence;	/* the raw loads: what follows each */
	unsigned int needs;	/* GDR_CPU_* */
	int promised;		/* a wrong value or a missed exchange fails the run */
	const struct gdr_copy_table *table;	/* LIBRARY: the table installed (NULL: its own) */
	int record;		/* in the table of records polled whole */
};

/* A method's results over every round. */
struct result {
	double *rt_us;		/* round trips of the exchanges counted */
	double *polls;
	size_t nrt;
	unsigned long wrong, missed;
	int skipped;		/* the CPU lacks what it needs */
};

/* The single reads; the records polled whole are added at run time (add_records). */
static const struct method singles[] = {
	/* name, how, size, fence, needs, promised */
	{ "library, 4 B", LIBRARY, 4, NO_FENCE, 0, 1, NULL, 0 },
	{ "library without its read fence, 4 B", LIBRARY_NO_FENCE, 4, NO_FENCE, 0, 0, NULL, 0 },
	{ "library, 64 B", LIBRARY, 64, NO_FENCE, 0, 1, NULL, 0 },
	{ "library without its read fence, 64 B", LIBRARY_NO_FENCE, 64, NO_FENCE, 0, 0, NULL, 0 },
	{ "GDRCopy 2.6 call, 4 B", GDRCOPY26, 4, NO_FENCE, 0, 1, NULL, 0 },
	{ "plain 4-byte load", PLAIN, 4, NO_FENCE, 0, 0, NULL, 0 },
	{ "16-byte streaming load", STREAM16, 16, NO_FENCE, GDR_CPU_SSE41, 0, NULL, 0 },
	{ "16-byte streaming load + sfence", STREAM16, 16, SFENCE, GDR_CPU_SSE41, 0, NULL, 0 },
	{ "16-byte streaming load + lfence", STREAM16, 16, LFENCE, GDR_CPU_SSE41, 0, NULL, 0 },
	{ "32-byte streaming load", STREAM32, 32, NO_FENCE, GDR_CPU_AVX2, 0, NULL, 0 },
	{ "16-byte streaming load + mfence", STREAM16, 16, MFENCE, GDR_CPU_SSE41, 0, NULL, 0 },
	{ "32-byte streaming load + sfence", STREAM32, 32, SFENCE, GDR_CPU_AVX2, 0, NULL, 0 },
	{ "32-byte streaming load + mfence", STREAM32, 32, MFENCE, GDR_CPU_AVX2, 0, NULL, 0 },
	{ "64-byte streaming load", STREAM64, 64, NO_FENCE, GDR_CPU_AVX512F, 0, NULL, 0 },
	{ "64-byte streaming load + sfence", STREAM64, 64, SFENCE, GDR_CPU_AVX512F, 0, NULL, 0 },
};
#define NSINGLES (sizeof(singles) / sizeof(singles[0]))
static const size_t record_sizes[] = { 64, 128, 256 };
#define NRECORD_SIZES (sizeof(record_sizes) / sizeof(record_sizes[0]))

/* A method's reads of the moving word, over every round. */
struct moving {
	double *ns_per_read;	/* a round's time over its reads */
	double *repeat_pct;	/* a round's reads that returned the value of the read before, % */
	size_t n;
	unsigned long backwards;	/* reads that returned an older value than the read before */
};

static struct method methods[MAX_METHODS];
static struct result results[MAX_METHODS];
static struct moving moving[MAX_METHODS];
static size_t nmethods;
/* One table per load routine of this CPU, for the records. */
static struct gdr_copy_table routine_tables[MAX_METHODS];

struct bar {
	gdr_mh_t mh, g26_mh;
	char *va;
	CUdeviceptr dev;
	struct gdr_copy_table auto_t, no_fence_t;
	int kernels;		/* the GPU answers; else a CPU thread does */
	const char *no_kernels;	/* why not */
};

static inline void after_load(enum fence f)
{
	if (f == SFENCE)
		__asm__ volatile("sfence" : : : "memory");
	else if (f == LFENCE)
		__asm__ volatile("lfence" : : : "memory");
	else if (f == MFENCE)
		__asm__ volatile("mfence" : : : "memory");
}

/* The raw loads, in assembly so that this file needs no ISA flags; pong is 64-byte aligned. */
static uint32_t raw_read(const struct method *m, const volatile void *p)
{
	uint32_t v;

	switch (m->how) {
	case PLAIN:
		v = *(const volatile uint32_t *)p;
		break;
	case STREAM16:
		__asm__ volatile("movntdqa (%1), %%xmm0\n\tmovd %%xmm0, %0"
				 : "=r"(v) : "r"(p) : "xmm0", "memory");
		break;
	case STREAM32:
		__asm__ volatile("vmovntdqa (%1), %%ymm0\n\tvmovd %%xmm0, %0\n\tvzeroupper"
				 : "=r"(v) : "r"(p) : "xmm0", "memory");
		break;
	default:
		__asm__ volatile("vmovntdqa (%1), %%zmm0\n\tvmovd %%xmm0, %0\n\tvzeroupper"
				 : "=r"(v) : "r"(p) : "xmm0", "memory");
		break;
	}
	after_load(m->fence);
	return v;
}

static uint32_t poll_read(const struct bar *b, const struct method *m, const void *pong)
{
	uint32_t buf[RECORD_MAX / sizeof(uint32_t)];

	switch (m->how) {
	case LIBRARY:
	case LIBRARY_NO_FENCE:
		gdr_copy_from_mapping(b->mh, buf, pong, m->size);
		return buf[0];
	case GDRCOPY26:
		gdrcopy26_copy_from_mapping(b->g26_mh, buf, pong, m->size);
		return buf[0];
	default:
		return raw_read(m, pong);
	}
}

/* A store of the CPU's to the BAR: a flag as a GDRCopy user writes it. */
static void bar_store(struct bar *b, size_t offset, uint32_t v)
{
	*(volatile uint32_t *)(b->va + offset) = v;
	__asm__ volatile("sfence" : : : "memory");
}

/* The partner where no kernel runs: the same loop as gdr_echo_u32, on a CPU thread. */
struct cpu_echo {
	struct bar *b;
	uint32_t iters;
};

static void *cpu_echo(void *arg)
{
	struct cpu_echo *e = arg;
	const volatile uint32_t *ping = (const volatile uint32_t *)(e->b->va + PING_OFFSET);
	volatile uint32_t *pong = (volatile uint32_t *)(e->b->va + PONG_OFFSET);

	for (uint32_t i = 1; i <= e->iters; i++) {
		while (*ping < i)
			;
		*pong = i;
	}
	return NULL;
}

/* One round of exchanges with method m. Returns -1 if the partner could not be run. */
static int run_round(struct bar *b, const struct method *m, struct result *res,
		     uint32_t exchanges, double timeout_ns)
{
	const struct gdr_copy_table *table = &b->auto_t;
	const void *pong = b->va + PONG_OFFSET;
	struct cpu_echo echo = { b, exchanges };
	pthread_t thread;

	bar_store(b, PING_OFFSET, 0);
	bar_store(b, PONG_OFFSET, 0);
	if (m->how == LIBRARY_NO_FENCE)
		table = &b->no_fence_t;
	else if (m->table)
		table = m->table;
	gdr_copy_table_install(table);
	if (b->kernels) {
		CUresult res = gpu_kernel_echo_start(b->dev + PING_OFFSET, b->dev + PONG_OFFSET,
						     exchanges);

		if (res) {
			printf("launching gdr_echo_u32 failed (CUresult %d): check the GPU with "
			       "build/tests/gpu/test_gpu_vulkan, which launches the same kernels\n",
			       (int)res);
			return -1;
		}
	} else if ((errno = pthread_create(&thread, NULL, cpu_echo, &echo))) {
		printf("pthread_create of the answering thread failed: %s\n", strerror(errno));
		return -1;
	}
	for (uint32_t i = 1; i <= exchanges; i++) {
		double t0 = gpu_now_ns(), t;
		unsigned int n = 0;
		uint32_t v;

		bar_store(b, PING_OFFSET, i);
		for (;;) {
			v = poll_read(b, m, pong);
			n++;
			if (v == i)
				break;
			if (v != i - 1)
				res->wrong++;
			if (n % POLLS_PER_CLOCK == 0 && gpu_now_ns() - t0 > timeout_ns)
				break;
		}
		t = gpu_now_ns();
		if (v != i) {
			/* Missed: count it and every exchange left, and let the partner run out. */
			res->missed += exchanges - i + 1;
			bar_store(b, PING_OFFSET, exchanges);
			break;
		}
		if (i > 1) {
			res->rt_us[res->nrt] = (t - t0) / 1e3;
			res->polls[res->nrt++] = n;
		}
	}
	gdr_copy_table_install(&b->auto_t);
	if (b->kernels && cu->cuCtxSynchronize()) {
		printf("cuCtxSynchronize after gdr_echo_u32 failed: the GPU thread did not end\n");
		return -1;
	}
	if (b->kernels)
		return 0;
	pthread_join(thread, NULL);
	return 0;
}

/* The p-quantile (0-1) of v[0..n), n > 0; sorts v. */
static double quantile(double *v, size_t n, double p)
{
	size_t i;

	gpu_median(v, (int)n);	/* sorts */
	i = (size_t)(p * (double)(n - 1) + 0.5);
	return v[i < n ? i : n - 1];
}

/* The moving word's writer where no kernel runs: the same loop as gdr_count_u32. */
static void *cpu_count(void *arg)
{
	struct bar *b = arg;
	volatile uint32_t *counter = (volatile uint32_t *)(b->va + COUNTER_OFFSET);
	const volatile uint32_t *stop = (const volatile uint32_t *)(b->va + STOP_OFFSET);
	uint32_t i = 0;

	do {
		for (int k = 0; k < 256; k++)
			*counter = ++i;
	} while (!*stop);
	return NULL;
}

/* One round of reads of the moving word with method m. */
static void moving_round(struct bar *b, const struct method *m, struct moving *mv,
			 uint32_t reads)
{
	const struct gdr_copy_table *table = &b->auto_t;
	const void *word = b->va + COUNTER_OFFSET;
	unsigned long repeats = 0;
	uint32_t prev, v;
	double t0;

	if (m->how == LIBRARY_NO_FENCE)
		table = &b->no_fence_t;
	else if (m->table)
		table = m->table;
	gdr_copy_table_install(table);
	prev = poll_read(b, m, word);
	t0 = gpu_now_ns();
	for (uint32_t i = 0; i < reads; i++) {
		v = poll_read(b, m, word);
		if (v == prev)
			repeats++;
		else if ((int32_t)(v - prev) < 0)
			mv->backwards++;
		prev = v;
	}
	mv->ns_per_read[mv->n] = (gpu_now_ns() - t0) / reads;
	mv->repeat_pct[mv->n++] = 100.0 * (double)repeats / reads;
	gdr_copy_table_install(&b->auto_t);
}

/*
 * The moving word's table: starts its writer, says how fast it changes the word, runs every
 * method's rounds, stops the writer. -1 if the writer could not be run or stopped.
 */
static int run_moving(struct bar *b, int rounds, uint32_t reads, double *per_us)
{
	const volatile uint32_t *word = (const volatile uint32_t *)(b->va + COUNTER_OFFSET);
	pthread_t thread;
	uint32_t v0, v1;
	double t0, t1;

	bar_store(b, COUNTER_OFFSET, 0);
	bar_store(b, STOP_OFFSET, 0);
	if (b->kernels) {
		CUresult res = gpu_kernel_count_start(b->dev + COUNTER_OFFSET,
						      b->dev + STOP_OFFSET);

		if (res) {
			printf("launching gdr_count_u32 failed (CUresult %d): check the GPU with "
			       "build/tests/gpu/test_gpu_vulkan, which launches the same kernels\n",
			       (int)res);
			return -1;
		}
	} else if ((errno = pthread_create(&thread, NULL, cpu_count, b))) {
		printf("pthread_create of the counting thread failed: %s\n", strerror(errno));
		return -1;
	}
	/* Until the writer has started; then its rate over 10 ms. */
	t0 = gpu_now_ns();
	while (!*word && gpu_now_ns() - t0 < 5e9)
		;
	v0 = *word;
	t0 = gpu_now_ns();
	usleep(10000);
	v1 = *word;
	t1 = gpu_now_ns();
	*per_us = (double)(uint32_t)(v1 - v0) / ((t1 - t0) / 1e3);
	for (int r = 0; r < rounds; r++)
		for (size_t i = 0; i < nmethods; i++) {
			size_t k = (i + (size_t)r * 5) % nmethods;

			if (!results[k].skipped)
				moving_round(b, &methods[k], &moving[k], reads);
		}
	bar_store(b, STOP_OFFSET, 1);
	if (b->kernels && cu->cuCtxSynchronize()) {
		printf("cuCtxSynchronize after gdr_count_u32 failed: the GPU thread did not end\n");
		return -1;
	}
	if (!b->kernels)
		pthread_join(thread, NULL);
	return 0;
}

static void report_moving(int rounds, uint32_t reads, double per_us, const struct bar *b)
{
	printf("\nReading a word %s keeps changing (%.0f changes per us; bench_poll's kernel "
	       "gdr_count_u32), back to back: %d rounds of %u reads per method. Median over the "
	       "rounds of the time per read, and of the reads that returned the same value as the "
	       "read before (a read that reaches the GPU sees a new value; one answered by an "
	       "earlier read's request or inside the CPU repeats it); \"backwards\": reads that "
	       "returned an older value than the read before, over every round.\n\n",
	       b->kernels ? "a GPU thread" : "a CPU thread", per_us, rounds, reads);
	printf("| method | us per read, back to back | repeated the read before, %% | "
	       "backwards |\n");
	printf("| --- | --- | --- | --- |\n");
	for (size_t k = 0; k < nmethods; k++) {
		struct moving *mv = &moving[k];

		if (results[k].skipped || !mv->n) {
			printf("| %s | - | - | - |\n", methods[k].name);
			continue;
		}
		printf("| %s | %.3f | %.1f | %lu |\n", methods[k].name,
		       quantile(mv->ns_per_read, mv->n, 0.5) / 1e3,
		       quantile(mv->repeat_pct, mv->n, 0.5), mv->backwards);
	}
}

static int usage(const char *prog)
{
	fprintf(stderr,
		"usage: %s [-r ROUNDS (1-%d, default 21)] [-n EXCHANGES (2-100000, default 2000)] "
		"[-t TIMEOUT_MS (1-10000, default 50)]\n",
		prog, POLL_MAX_ROUNDS);
	return 2;
}

static void report_rows(int record)
{
	printf("| method | round trip: median | 99th percentile | maximum | polls per exchange "
	       "(median) | wrong | missed |\n");
	printf("| --- | --- | --- | --- | --- | --- | --- |\n");
	for (size_t k = 0; k < nmethods; k++) {
		struct result *res = &results[k];
		const char *name = methods[k].name;

		if (methods[k].record != record)
			continue;
		if (res->skipped) {
			printf("| %s | - | - | - | - | - | - |\n", name);
			continue;
		}
		if (!res->nrt) {
			printf("| %s | - | - | - | - | %lu | %lu |\n", name, res->wrong, res->missed);
			continue;
		}
		printf("| %s | %.3f | %.3f | %.3f | %.0f | %lu | %lu |\n", name,
		       quantile(res->rt_us, res->nrt, 0.5), quantile(res->rt_us, res->nrt, 0.99),
		       quantile(res->rt_us, res->nrt, 1.0), quantile(res->polls, res->nrt, 0.5),
		       res->wrong, res->missed);
	}
}

static void report(int rounds, uint32_t exchanges, int timeout_ms, const struct bar *b)
{
	printf("Polling a word the GPU changes (`bench_poll -r %d -n %u -t %d`): the CPU stores i "
	       "to one word through the mapping, %s stores i to another when it sees it, and the "
	       "CPU polls that one with each method until it reads i. Microseconds per exchange "
	       "over %d rounds of %u (the first of each round not counted); \"wrong\": values "
	       "read that were neither i - 1 nor i; \"missed\": exchanges not seen within %d ms.\n\n",
	       rounds, exchanges, timeout_ms,
	       b->kernels ? "a GPU thread (gdr_echo_u32)" : "a CPU thread", rounds, exchanges,
	       timeout_ms);
	if (!b->kernels)
		printf("No GPU thread: %s. A CPU thread answers, which checks the program, not the "
		       "GPU.\n\n", b->no_kernels);
	report_rows(0);
	printf("\nA record polled whole: the library's read of 64, 128 or 256 bytes that begin with "
	       "the word the GPU stores, with its own choice of routine (\"library\") and with each "
	       "load routine installed as its choice; the same exchanges.\n\n");
	report_rows(1);
	printf("\n\"-\": this CPU lacks the instructions, or no exchange was seen.\n");
}

/* The single reads, then the records: the library's own choice, then each routine's. */
static void add_methods(const struct gdr_copy_table *auto_t, unsigned int cpu)
{
	const struct gdr_copy_impl *impls[MAX_METHODS];
	int nroutines;

	for (size_t k = 0; k < NSINGLES; k++)
		methods[nmethods++] = singles[k];
	nroutines = bench_forced_tables(auto_t, 0, cpu, routine_tables, impls, MAX_METHODS);
	for (size_t s = 0; s < NRECORD_SIZES; s++) {
		for (int r = -1; r < nroutines && nmethods < MAX_METHODS; r++) {
			struct method *m = &methods[nmethods++];

			*m = (struct method){ .how = LIBRARY, .size = record_sizes[s], .promised = 1,
					      .table = r < 0 ? NULL : &routine_tables[r],
					      .record = 1 };
			snprintf(m->name, sizeof(m->name), "%s, %zu B",
				 r < 0 ? "library" : impls[r]->name, record_sizes[s]);
		}
	}
}

int main(int argc, char **argv)
{
	int rounds = 21, timeout_ms = 50, opt, failed = 0, movdir64b, have_g26;
	double per_us = 0;
	uint32_t exchanges = 2000;
	struct bench_bar bb;
	unsigned int cpu;
	struct bar b;

	while ((opt = getopt(argc, argv, "r:n:t:")) != -1) {
		switch (opt) {
		case 'r':
			rounds = atoi(optarg);
			break;
		case 'n':
			exchanges = (uint32_t)strtoul(optarg, NULL, 10);
			break;
		case 't':
			timeout_ms = atoi(optarg);
			break;
		default:
			return usage(argv[0]);
		}
	}
	if (optind != argc || rounds < 1 || rounds > POLL_MAX_ROUNDS || exchanges < 2 ||
	    exchanges > 100000 || timeout_ms < 1 || timeout_ms > 10000)
		return usage(argv[0]);
	if (gpu_init())
		return 77;
	memset(&b, 0, sizeof(b));
	b.kernels = gpu_kernels_available(&b.no_kernels);
	if (bench_bar_open(&bb, POLL_BYTES))
		return 1;
	b.mh = bb.mh;
	b.va = bb.va;
	b.dev = bb.vmm.ptr;
	gdr_copy_table_current(&b.auto_t);
	b.no_fence_t = b.auto_t;
	b.no_fence_t.from_wc_fence = GDR_COPY_FENCE_NONE;
	cpu = gdr_cpu_features();
	have_g26 = !gdrcopy26_init(cpu, &movdir64b);
	if (have_g26 && !(b.g26_mh = gdrcopy26_map(bb.type)).h) {
		printf("out of memory for GDRCopy 2.6's handle of the mapping\n");
		return 1;
	}
	add_methods(&b.auto_t, cpu);
	for (size_t k = 0; k < nmethods; k++) {
		const struct method *m = &methods[k];
		struct result *res = &results[k];

		/* GDRCopy's strategy needs SSE4.1 and AVX2 (gdrcopy26_init). */
		res->skipped = (m->needs & cpu) != m->needs || (m->how == GDRCOPY26 && !have_g26);
		res->rt_us = calloc((size_t)rounds * exchanges, sizeof(double));
		res->polls = calloc((size_t)rounds * exchanges, sizeof(double));
		moving[k].ns_per_read = calloc((size_t)rounds, sizeof(double));
		moving[k].repeat_pct = calloc((size_t)rounds, sizeof(double));
		if (!res->rt_us || !res->polls || !moving[k].ns_per_read || !moving[k].repeat_pct) {
			printf("out of memory\n");
			return 1;
		}
	}

	for (int r = 0; r < rounds; r++) {
		for (size_t i = 0; i < nmethods; i++) {
			/* A different method first each round, so none always follows the same one. */
			size_t k = (i + (size_t)r * 5) % nmethods;

			if (!results[k].skipped &&
			    run_round(&b, &methods[k], &results[k], exchanges, timeout_ms * 1e6)) {
				printf("the partner could not run: stopping\n");
				return 1;
			}
		}
	}
	if (run_moving(&b, rounds, exchanges, &per_us)) {
		printf("the moving word's writer could not run: stopping\n");
		return 1;
	}
	report(rounds, exchanges, timeout_ms, &b);
	report_moving(rounds, exchanges, per_us, &b);
	for (size_t k = 0; k < nmethods; k++) {
		struct result *res = &results[k];

		if (methods[k].promised && (res->wrong || res->missed)) {
			printf("poll failed: %s read %lu wrong values and missed %lu exchanges\n",
			       methods[k].name, res->wrong, res->missed);
			failed = 1;
		}
		free(res->rt_us);
		free(res->polls);
		free(moving[k].ns_per_read);
		free(moving[k].repeat_pct);
	}
	if (have_g26)
		gdrcopy26_unmap(b.g26_mh);
	bench_bar_close(&bb);
	return failed;
}

#else

int main(void)
{
	printf("bench_poll times x86-64 loads; this is another architecture\n");
	return 77;
}

#endif
