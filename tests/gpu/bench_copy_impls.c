/* SPDX-License-Identifier: MIT */
/*
 * Benchmark, not a test: the library's copies against GDRCopy 2.6's strategy
 * (gdrcopy26_copy.c), raw accesses (bench_raw.c) and cuMemcpy, and every copy routine of this
 * CPU as the library's choice, all in one process on one mapping. Each size runs in rounds;
 * each round times every method once (a batch of back-to-back calls lasting at least the
 * bucket), in an order rotated and shuffled each round, and checks the data the batch copied.
 * The figure of a method is its median over the rounds, with the spread. Then, for reads, the
 * latency of one read of data the GPU has just written (what a flag poll costs). Up to 4 KiB,
 * the public call's steps and alternatives (bench_paths.c) run beside it. It links the library
 * statically to reach the routines and install tables (copy_impl.h).
 *
 *   bench_copy_impls [-r ROUNDS] [-l LATENCY_ROUNDS] [-s MAX_SIZE] [-b BUCKET_US] [-t SECONDS]
 *                    [-c CSV] [-q]
 *
 * Markdown on stdout (bench_copy_report.c); -c FILE writes every figure as CSV; -t: measure
 * no more sizes after that many seconds (the report says what it left out); -q: a few sizes
 * and rounds, to check the program, not to measure. See bench_copy.h for the methods.
 */
#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "bench_copy.h"
#include "bench_paths.h"
#include "bench_raw.h"
#include "copy.h"
#include "copy_impl.h"
#include "cpu.h"
#include "gdrapi.h"
#include "gdrapi_ext.h"
#include "gdrcopy26_copy.h"
#include "gpucommon.h"
#include "inflight.h"

#define MAX_ROUNDS 200
#define MAX_METHODS 48
#define GUARD 64			/* guard bytes on each side of a copy, host and device */
#define HOST_GUARD 0xa5
#define DEV_GUARD 0x5c
#define DEV_OFF (64u << 10)		/* the copies' device offset, as in the figures */
#define UNALIGNED_DEV 13
#define UNALIGNED_HOST 3
#define SLOW_US 10000.0			/* slower per call than this: not timed at that size */
#define PLAIN_LOAD_MAX (64u << 10)	/* plain loads of WC are not timed above this */
#define PATH_MAX_SIZE (4u << 10)	/* the public call's variants are not timed above this */

enum kind {
	K_LIBRARY,	/* gdr_copy_to/from_mapping, table installed */
	K_PATH,		/* a variant of the public call (bench_paths.h), table installed */
	K_DISPATCHER,	/* gdr_copy_to/from_mapping_type, table installed */
	K_CALL,		/* fn, then an sfence if fence */
	K_RAW,
	K_CUMEMCPY,
	K_TIMER,
};

struct method {
	char name[48];
	enum kind kind;
	const struct gdr_copy_table *table;
	int fenced;		/* K_LIBRARY: copies fence themselves, as without membarrier */
	gdr_copy_fn fn;
	const struct bench_path *path;
	unsigned int width;
	int fence;
	long count;
	int skipped;
	char failed[160];
	double t[MAX_ROUNDS];
};

/* One direction, alignment and size: the methods timed together. */
struct scenario {
	int to_device, unaligned, latency;
	size_t n;
	uint8_t *dev, *host;
	CUdeviceptr dev_ptr;
	int nm;
	struct method m[MAX_METHODS];
};

static struct {
	gdr_t g;
	gdr_mh_t mh;
	gdr_mapping_type_t type;
	uint8_t *map;
	CUdeviceptr dptr;
	uint8_t *host_buf, *src_buf, *check_buf;	/* pinned (cuMemAllocHost) */
	unsigned int cpu;
	int rounds, lat_rounds, have_gdrcopy26, have_movdir64b;
	int inflight_fence;	/* the library's own choice: copies fence themselves */
	double bucket_us, deadline_ns;
	struct gdr_copy_table auto_t, nofence_t;
	/* [0]: loads, [1]: stores: the routines, and tables that use each at every size. */
	int nroutines[2];
	const struct gdr_copy_impl *routines[2][BENCH_MAX_ROUTINES];
	struct gdr_copy_table forced[2][BENCH_MAX_ROUTINES];
} B;

static inline void store_fence(void)
{
#if defined(__x86_64__)
	__builtin_ia32_sfence();
#else
	__atomic_thread_fence(__ATOMIC_SEQ_CST);
#endif
}

/* Nothing after it starts before every load before it has completed. */
static inline void load_fence(void)
{
#if defined(__x86_64__)
	__builtin_ia32_lfence();
#else
	__atomic_thread_fence(__ATOMIC_SEQ_CST);
#endif
}

static void fill(uint8_t *p, size_t n, uint64_t seed)
{
	uint64_t x = seed * 0x9e3779b97f4a7c15ull | 1;
	size_t i = 0;

	for (; i + 8 <= n; i += 8) {
		x ^= x << 13;
		x ^= x >> 7;
		x ^= x << 17;
		memcpy(p + i, &x, 8);
	}
	for (; i < n; i++)
		p[i] = (uint8_t)(x >> (8 * (i & 7)));
}

/* The offset of the first byte of a[0, n) that differs from b, or n. */
static size_t first_diff(const uint8_t *a, const uint8_t *b, size_t n)
{
	size_t i = 0;

	if (!memcmp(a, b, n))
		return n;
	while (a[i] == b[i])
		i++;
	return i;
}

static size_t first_not(const uint8_t *p, size_t n, uint8_t v)
{
	for (size_t i = 0; i < n; i++)
		if (p[i] != v)
			return i;
	return n;
}

static void run_calls(const struct scenario *sc, const struct method *m, long count)
{
	uint8_t *dev = sc->dev, *host = sc->host;
	size_t n = sc->n;
	long i;

	switch (m->kind) {
	case K_LIBRARY:
		if (sc->to_device)
			for (i = 0; i < count; i++)
				gdr_copy_to_mapping(B.mh, dev, host, n);
		else
			for (i = 0; i < count; i++)
				gdr_copy_from_mapping(B.mh, host, dev, n);
		break;
	case K_PATH:
		if (sc->to_device)
			for (i = 0; i < count; i++)
				m->path->to(B.mh, dev, host, n);
		else
			for (i = 0; i < count; i++)
				m->path->from(B.mh, host, dev, n);
		break;
	case K_DISPATCHER:
		if (sc->to_device)
			for (i = 0; i < count; i++)
				gdr_copy_to_mapping_type(B.type, 0, dev, host, n);
		else
			for (i = 0; i < count; i++)
				gdr_copy_from_mapping_type(B.type, 0, host, dev, n);
		break;
	case K_CALL:
		for (i = 0; i < count; i++) {
			if (sc->to_device)
				m->fn(dev, host, n);
			else
				m->fn(host, dev, n);
			if (m->fence)
				store_fence();
		}
		break;
	case K_RAW:
		if (sc->to_device)
			bench_raw_stores(dev, host, n, count, m->width, m->fence);
		else
			bench_raw_loads(host, dev, n, count, m->width, m->fence);
		break;
	case K_CUMEMCPY:
		for (i = 0; i < count; i++)
			if (sc->to_device)
				cu->cuMemcpyHtoD(sc->dev_ptr, host, n);
			else
				cu->cuMemcpyDtoH(host, sc->dev_ptr, n);
		break;
	case K_TIMER:
		break;
	}
}

/* Before a batch: the table, and the source (writes) or the guarded destination (reads). */
static void prepare(const struct scenario *sc, const struct method *m, uint64_t seed)
{
	if (m->table)
		gdr_copy_table_install(m->table);
	atomic_store_explicit(&gdr_inflight_fence, m->fenced ? 1 : B.inflight_fence,
			      memory_order_relaxed);
	if (sc->to_device)
		fill(sc->host, sc->n, seed);
	else
		memset(sc->host - GUARD, HOST_GUARD, sc->n + 2 * GUARD);
}

/* The GPU writes new data to the range (reads check against it: B.src_buf). */
static int gpu_writes(const struct scenario *sc, uint64_t seed)
{
	fill(B.src_buf, sc->n, seed);
	if (cu->cuMemcpyHtoD(sc->dev_ptr, B.src_buf, sc->n) || cu->cuCtxSynchronize()) {
		printf("cuMemcpyHtoD of %zu bytes failed\n", sc->n);
		return -1;
	}
	return 0;
}

/* After a batch: the range holds what was copied, the guards around it nothing else. */
static void check(const struct scenario *sc, struct method *m)
{
	size_t n = sc->n, i;

	if (m->kind == K_TIMER || m->failed[0])
		return;
	if (!sc->to_device) {
		if ((i = first_not(sc->host - GUARD, GUARD, HOST_GUARD)) < GUARD ||
		    (i = first_not(sc->host + n, GUARD, HOST_GUARD)) < GUARD)
			snprintf(m->failed, sizeof(m->failed), "%zu B: wrote outside the host range", n);
		else if ((i = first_diff(sc->host, B.src_buf, n)) < n)
			snprintf(m->failed, sizeof(m->failed),
				 "%zu B: host byte %zu is 0x%02x, the GPU wrote 0x%02x", n, i,
				 sc->host[i], B.src_buf[i]);
		return;
	}
	if (cu->cuMemcpyDtoH(B.check_buf, sc->dev_ptr - GUARD, n + 2 * GUARD)) {
		snprintf(m->failed, sizeof(m->failed), "%zu B: cuMemcpyDtoH to check failed", n);
		return;
	}
	if (first_not(B.check_buf, GUARD, DEV_GUARD) < GUARD ||
	    first_not(B.check_buf + GUARD + n, GUARD, DEV_GUARD) < GUARD)
		snprintf(m->failed, sizeof(m->failed), "%zu B: wrote outside the device range", n);
	else if ((i = first_diff(B.check_buf + GUARD, sc->host, n)) < n)
		snprintf(m->failed, sizeof(m->failed),
			 "%zu B: device byte %zu is 0x%02x, the host had 0x%02x", n, i,
			 B.check_buf[GUARD + i], sc->host[i]);
}

static double timed_batch(const struct scenario *sc, const struct method *m, long count)
{
	double t0 = gpu_now_ns();

	run_calls(sc, m, count);
	return (gpu_now_ns() - t0) / 1e3 / count;
}

/* The calls per batch: doubled until a batch lasts the bucket. Checks the data once. */
static void calibrate(const struct scenario *sc, struct method *m)
{
	long c = 1;
	double t;

	prepare(sc, m, 1);
	run_calls(sc, m, 1);
	check(sc, m);
	for (;;) {
		prepare(sc, m, 2);
		t = timed_batch(sc, m, c);
		if (t > SLOW_US) {
			m->skipped = 1;
			return;
		}
		if (t * c >= B.bucket_us || c >= 1 << 20)
			break;
		c *= 2;
	}
	m->count = c;
}

static void record(const struct scenario *sc, const struct method *m, int rounds)
{
	struct bench_result r = {
		.latency = sc->latency, .to_device = sc->to_device, .unaligned = sc->unaligned,
		.n = sc->n, .rounds = rounds, .count = m->count,
	};
	double v[MAX_ROUNDS];

	memcpy(v, m->t, rounds * sizeof(v[0]));
	snprintf(r.method, sizeof(r.method), "%s", m->name);
	snprintf(r.failed, sizeof(r.failed), "%s", m->failed);
	r.median = gpu_median(v, rounds);	/* sorts v */
	r.min = v[0];
	r.p25 = v[rounds / 4];
	r.p75 = v[(3 * rounds) / 4];
	bench_report_add(&r);
}

/*
 * The order of the methods in round r: rotated by r, so that each comes first as often as the
 * others, and shuffled, so that none always follows the same one (a method that upsets the
 * device, like AVX-512 loads below 256 B, would otherwise always slow the same neighbour).
 */
static void round_order(int *order, int nm, int r)
{
	uint64_t x = 0x2545f4914f6cdd1dull ^ (uint64_t)r;

	for (int k = 0; k < nm; k++)
		order[k] = (k + r) % nm;
	for (int k = nm - 1; k > 0; k--) {
		int j, tmp;

		x ^= x << 13;
		x ^= x >> 7;
		x ^= x << 17;
		j = (int)(x % (uint64_t)(k + 1));
		tmp = order[k];
		order[k] = order[j];
		order[j] = tmp;
	}
}

static int run_throughput(struct scenario *sc)
{
	int order[MAX_METHODS];

	if (!sc->to_device && gpu_writes(sc, 1))
		return -1;
	for (int k = 0; k < sc->nm; k++)
		calibrate(sc, &sc->m[k]);
	for (int r = 0; r < B.rounds; r++) {
		if (!sc->to_device && gpu_writes(sc, 1000 + r))
			return -1;
		round_order(order, sc->nm, r);
		for (int k = 0; k < sc->nm; k++) {
			struct method *m = &sc->m[order[k]];

			if (m->skipped)
				continue;
			prepare(sc, m, (uint64_t)r << 8 | (uint64_t)k);
			m->t[r] = timed_batch(sc, m, m->count);
			check(sc, m);
		}
	}
	for (int k = 0; k < sc->nm; k++)
		if (!sc->m[k].skipped)
			record(sc, &sc->m[k], B.rounds);
	return 0;
}

static int run_latency(struct scenario *sc)
{
	int order[MAX_METHODS];

	for (int r = 0; r < B.lat_rounds; r++) {
		round_order(order, sc->nm, r);
		for (int k = 0; k < sc->nm; k++) {
			struct method *m = &sc->m[order[k]];
			double t0;

			if (m->skipped)
				continue;
			if (gpu_writes(sc, (uint64_t)r << 8 | (uint64_t)k))
				return -1;
			prepare(sc, m, 0);
			t0 = gpu_now_ns();
			load_fence();
			run_calls(sc, m, 1);
			load_fence();
			m->t[r] = (gpu_now_ns() - t0) / 1e3;
			check(sc, m);
			if (m->t[r] > SLOW_US)
				m->skipped = 1;
		}
	}
	for (int k = 0; k < sc->nm; k++) {
		sc->m[k].count = 1;
		if (!sc->m[k].skipped)
			record(sc, &sc->m[k], B.lat_rounds);
	}
	return 0;
}

static struct method *add(struct scenario *sc, const char *name, enum kind kind)
{
	struct method *m = &sc->m[sc->nm++];

	memset(m, 0, sizeof(*m));
	snprintf(m->name, sizeof(m->name), "%s", name);
	m->kind = kind;
	return m;
}

static void add_call(struct scenario *sc, const char *name, gdr_copy_fn fn, int fence)
{
	struct method *m = add(sc, name, K_CALL);

	m->fn = fn;
	m->fence = fence;
}

static void add_raw(struct scenario *sc, unsigned int width, int fence, const char *name)
{
	struct method *m;
	char buf[16];

	if (!bench_raw_ok(sc->to_device, sc->n, sc->dev, width, B.cpu))
		return;
	snprintf(buf, sizeof(buf), "raw%u", width);
	m = add(sc, name ? name : buf, K_RAW);
	m->width = width;
	m->fence = fence;
}

static int plain_load(const struct gdr_copy_impl *impl)
{
	return impl->id == GDR_COPY_IMPL_GENERIC || impl->id == GDR_COPY_IMPL_MEMCPY ||
	       impl->id == GDR_COPY_IMPL_SSE;
}

/* The library with each routine at every size. */
static void add_routines(struct scenario *sc)
{
	int dir = sc->to_device;

	for (int i = 0; i < B.nroutines[dir]; i++) {
		char name[48];

		if (!dir && sc->n > PLAIN_LOAD_MAX && plain_load(B.routines[dir][i]))
			continue;
		snprintf(name, sizeof(name), "library:%s", B.routines[dir][i]->name);
		add(sc, name, K_LIBRARY)->table = &B.forced[dir][i];
	}
}

/* The public call's variants, and the library as it runs where copies fence themselves. */
static void add_paths(struct scenario *sc)
{
	const struct bench_path *paths;
	size_t count;
	struct method *m;

	paths = bench_paths(&count);
	for (size_t i = 0; i < count; i++) {
		if (!(sc->to_device ? (void *)paths[i].to : (void *)paths[i].from))
			continue;
		m = add(sc, paths[i].method, K_PATH);
		m->path = &paths[i];
		m->table = &B.auto_t;
	}
	m = add(sc, "library_fenced", K_LIBRARY);
	m->table = &B.auto_t;
	m->fenced = 1;
}

static void add_gdrcopy26(struct scenario *sc)
{
	if (!B.have_gdrcopy26)
		return;
	add_call(sc, "gdrcopy26",
		 sc->to_device ? gdrcopy26_copy_to_wc : gdrcopy26_copy_from_wc, 0);
	if (sc->to_device && B.have_movdir64b)
		add_call(sc, "gdrcopy26_movdir64b", gdrcopy26_copy_to_wc_movdir64b, 0);
}

static void setup(struct scenario *sc, int to_device, int unaligned, int latency, size_t n)
{
	sc->to_device = to_device;
	sc->unaligned = unaligned;
	sc->latency = latency;
	sc->n = n;
	sc->dev = B.map + DEV_OFF + (unaligned ? UNALIGNED_DEV : 0);
	sc->dev_ptr = B.dptr + DEV_OFF + (unaligned ? UNALIGNED_DEV : 0);
	sc->host = B.host_buf + GUARD + (unaligned ? UNALIGNED_HOST : 0);
	sc->nm = 0;
}

static int scenario_throughput(int to_device, int unaligned, size_t n)
{
	static struct scenario sc;
	const struct gdr_copy_impl *cur = gdr_copy_table_impl(&B.auto_t, to_device, n);

	setup(&sc, to_device, unaligned, 0, n);
	add(&sc, "library", K_LIBRARY)->table = &B.auto_t;
	add_gdrcopy26(&sc);
	if (!unaligned) {
		static const unsigned int widths[] = { 0, 16, 32, 64 };

		if (!to_device)
			add(&sc, "library_nofence", K_LIBRARY)->table = &B.nofence_t;
		add(&sc, "dispatcher", K_DISPATCHER)->table = &B.auto_t;
		if (n <= PATH_MAX_SIZE)
			add_paths(&sc);
		add_call(&sc, "routine", to_device ? cur->store : cur->load, 1);
		if (!to_device)
			add_call(&sc, "routine_nofence", cur->load, 0);
		for (size_t w = 0; w < sizeof(widths) / sizeof(widths[0]); w++)
			add_raw(&sc, widths[w], 1, NULL);
		if (!to_device) {
			int before = sc.nm;

			add_raw(&sc, 32, 0, "raw_nofence");
			if (sc.nm == before)
				add_raw(&sc, 16, 0, "raw_nofence");
			if (sc.nm == before)
				add_raw(&sc, 0, 0, "raw_nofence");
		}
		add(&sc, "cumemcpy", K_CUMEMCPY);
		/* The device guards, which the writes must leave alone. */
		if (to_device && cu->cuMemsetD8(sc.dev_ptr - GUARD, DEV_GUARD, n + 2 * GUARD))
			return -1;
	} else if (to_device && cu->cuMemsetD8(sc.dev_ptr - GUARD, DEV_GUARD, n + 2 * GUARD)) {
		return -1;
	}
	add_routines(&sc);
	return run_throughput(&sc);
}

static int scenario_latency(size_t n)
{
	static struct scenario sc;
	static const unsigned int widths[] = { 0, 16, 32, 64 };

	setup(&sc, 0, 0, 1, n);
	add(&sc, "timer", K_TIMER);
	add(&sc, "library", K_LIBRARY)->table = &B.auto_t;
	add_gdrcopy26(&sc);
	for (size_t w = 0; w < sizeof(widths) / sizeof(widths[0]); w++)
		add_raw(&sc, widths[w], 0, NULL);
	add(&sc, "cumemcpy", K_CUMEMCPY);
	add_routines(&sc);
	return run_latency(&sc);
}

/* Whether a routine already measured in direction dir has fn (the variants share stores). */
static int same_fn_seen(int dir, gdr_copy_fn fn)
{
	for (int i = 0; i < B.nroutines[dir]; i++)
		if ((dir ? B.routines[dir][i]->store : B.routines[dir][i]->load) == fn)
			return 1;
	return 0;
}

/* Tables that use one routine at every size of a direction (dir 0: loads, 1: stores). */
static void make_forced(void)
{
	const struct gdr_copy_impl *const *impls;
	size_t count;

	impls = gdr_copy_impls(&count);
	for (size_t i = 0; i < count; i++) {
		for (int dir = 0; dir < 2; dir++) {
			const struct gdr_copy_impl *impl = impls[i];
			gdr_copy_fn fn = dir ? impl->store : impl->load;
			struct gdr_copy_table *t = &B.forced[dir][B.nroutines[dir]];
			struct gdr_copy_dir *d = dir ? &t->to : &t->from;

			if (!fn || gdr_copy_impl_missing(impl, B.cpu) ||
			    B.nroutines[dir] == BENCH_MAX_ROUTINES || same_fn_seen(dir, fn))
				continue;
			/* Unlike GDRCOPY_COPY_IMPL, also below load_min: the point is to see why. */
			*t = B.auto_t;
			for (int c = 0; c < d->nclasses; c++) {
				d->impl[c] = impl;
				d->fn[c] = fn;
			}
			if (dir && impl->id != GDR_COPY_IMPL_GENERIC)
				t->tiny_to_max = 0;
			B.routines[dir][B.nroutines[dir]++] = impl;
		}
	}
}

/* Past the time budget: say where it stopped, for the report. */
static int over_budget(struct bench_info *info, const char *what, size_t n)
{
	char size[32];

	if (gpu_now_ns() < B.deadline_ns)
		return 0;
	gdr_copy_size_name(n, size, sizeof(size));
	snprintf(info->stopped, sizeof(info->stopped),
		 "The time budget (-t) ran out: nothing was measured from the %s of %s on.", what,
		 size);
	return 1;
}

static const char *current_routine(int to_device, size_t n)
{
	return gdr_copy_table_impl(&B.auto_t, to_device, n)->name;
}

static size_t parse_size(const char *s)
{
	char *end;
	size_t v = strtoull(s, &end, 0);

	if (*end == 'k' || *end == 'K')
		v <<= 10;
	else if (*end == 'm' || *end == 'M')
		v <<= 20;
	return v;
}

static void cpu_model(char *buf, size_t len)
{
	FILE *f = fopen("/proc/cpuinfo", "r");
	char line[256];

	snprintf(buf, len, "unknown CPU");
	while (f && fgets(line, sizeof(line), f)) {
		char *colon = strchr(line, ':');

		if (!strncmp(line, "model name", 10) && colon) {
			line[strcspn(line, "\n")] = '\0';
			snprintf(buf, len, "%s", colon + 2);
			break;
		}
	}
	if (f)
		fclose(f);
}

static int usage(const char *prog)
{
	fprintf(stderr,
		"usage: %s [-r ROUNDS] [-l LATENCY_ROUNDS] [-s MAX_SIZE] [-b BUCKET_US] [-t SECONDS]\n"
		"       [-c CSV] [-q]\n"
		"  -r rounds per size (default 50, at most %d); -l latency rounds (default 100)\n"
		"  -s largest size, with K/M suffixes (default 4M); -b shortest batch in us (default 20)\n"
		"  -t start no size after this many seconds (default 200); -c write every figure to\n"
		"  this CSV file; -q quick: a few sizes, to check the program\n",
		prog, MAX_ROUNDS);
	return 2;
}

int main(int argc, char **argv)
{
	static const size_t all_sizes[] = {
		1, 2, 4, 8, 16, 32, 64, 128, 256, 512, 1 << 10, 2 << 10, 4 << 10, 8 << 10,
		16 << 10, 32 << 10, 64 << 10, 256 << 10, 1 << 20, 4 << 20,
	};
	static const size_t quick_sizes[] = { 1, 8, 64, 1 << 10, 64 << 10 };
	const size_t *sizes = all_sizes;
	size_t nsizes = sizeof(all_sizes) / sizeof(all_sizes[0]);
	static const size_t unaligned_sizes[] = { 8, 16, 64, 256, 1 << 10, 4 << 10, 64 << 10 };
	static const size_t latency_sizes[] = {
		1, 4, 8, 16, 32, 64, 128, 256, 512, 1 << 10, 2 << 10, 4 << 10,
	};
	struct bench_info info = { .current = current_routine };
	char command[512] = "", setup_text[1536], choice[512], model[128], features[128], date[64];
	const char *csv_path = NULL, *backends[] = { "?", "gdrdrv", "dmabuf", "vulkan" };
	size_t max = 4 << 20, pin_size, bufsize;
	int quick = 0, opt, backend = 0, ret = 1;
	double budget_s = 200;
	struct gpu_vmm vmm;
	gdr_info_v2_t ginfo;
	FILE *csv = NULL;
	time_t now = time(NULL);
	void *va;

	B.rounds = 50;
	B.lat_rounds = 100;
	B.bucket_us = 20;
	while ((opt = getopt(argc, argv, "r:l:s:b:t:c:q")) != -1) {
		switch (opt) {
		case 'r':
			B.rounds = atoi(optarg);
			break;
		case 'l':
			B.lat_rounds = atoi(optarg);
			break;
		case 's':
			max = parse_size(optarg);
			break;
		case 'b':
			B.bucket_us = atof(optarg);
			break;
		case 't':
			budget_s = atof(optarg);
			break;
		case 'c':
			csv_path = optarg;
			break;
		case 'q':
			quick = 1;
			break;
		default:
			return usage(argv[0]);
		}
	}
	if (quick) {
		B.rounds = B.rounds < 3 ? B.rounds : 3;
		B.lat_rounds = B.lat_rounds < 3 ? B.lat_rounds : 3;
		B.bucket_us = 2;
		sizes = quick_sizes;
		nsizes = sizeof(quick_sizes) / sizeof(quick_sizes[0]);
	}
	if (optind != argc || B.rounds < 1 || B.rounds > MAX_ROUNDS || B.lat_rounds < 1 ||
	    B.lat_rounds > MAX_ROUNDS || B.bucket_us <= 0 || budget_s <= 0 || max < 1 ||
	    max > (256u << 20))
		return usage(argv[0]);
	for (int i = 0; i < argc; i++)
		snprintf(command + strlen(command), sizeof(command) - strlen(command), "%s%s",
			 i ? " " : "", i ? argv[i] : "bench_copy_impls");
	if (csv_path && !(csv = fopen(csv_path, "w"))) {
		fprintf(stderr, "%s: %s\n", csv_path, strerror(errno));
		return 1;
	}

	if (gpu_init())
		return 77;
	pin_size = DEV_OFF + max + 64 + GUARD + (64u << 10);
	if (gpu_vmm_alloc(&vmm, pin_size, CU_MEM_HANDLE_TYPE_POSIX_FILE_DESCRIPTOR)) {
		printf("cuMemCreate of %zu bytes failed\n", pin_size);
		return 1;
	}
	B.dptr = vmm.ptr;
	B.g = gdr_open();
	if (!B.g || gdr_pin_buffer(B.g, vmm.ptr, vmm.size, 0, 0, &B.mh) ||
	    gdr_map(B.g, B.mh, &va, vmm.size) || gdr_get_info_v2(B.g, B.mh, &ginfo)) {
		printf("gdr_open/pin/map failed: run gdrcopy_info\n");
		return 1;
	}
	B.map = va;
	B.type = ginfo.mapping_type;
	bufsize = max + 2 * GUARD + 64;
	if (cu->cuMemAllocHost((void **)&B.host_buf, bufsize) ||
	    cu->cuMemAllocHost((void **)&B.src_buf, bufsize) ||
	    cu->cuMemAllocHost((void **)&B.check_buf, bufsize)) {
		printf("cuMemAllocHost of %zu bytes failed\n", bufsize);
		return 1;
	}
	B.cpu = gdr_cpu_features();
	B.inflight_fence = atomic_load_explicit(&gdr_inflight_fence, memory_order_relaxed);
	gdr_copy_table_current(&B.auto_t);
	B.nofence_t = B.auto_t;
	B.nofence_t.from_wc_fence = GDR_COPY_FENCE_NONE;
	B.have_gdrcopy26 = !gdrcopy26_init(B.cpu, &B.have_movdir64b);
	make_forced();

	gdr_get_attribute(B.g, (gdr_attr_t)GDR_ATTR_EXT_BACKEND, &backend);
	cpu_model(model, sizeof(model));
	gdr_cpu_describe(B.cpu, features, sizeof(features));
	gdr_copy_table_describe(&B.auto_t, choice, sizeof(choice));
	strftime(date, sizeof(date), "%Y-%m-%d %H:%M UTC", gmtime(&now));
	snprintf(setup_text, sizeof(setup_text),
		 "%s; %s (%s); CUDA driver %d.%d; backend %s, mapping type %d (1: write-combined); "
		 "a %zu MiB pin, copies at device offset %u KiB (unaligned: +%d, host +%d), host "
		 "buffers from cuMemAllocHost; %d rounds (latency: %d), each timing every method once in "
		 "an order rotated and shuffled each round, in batches of at least %.0f us. %s%s",
		 date, model, features, cu->driver_version / 1000, cu->driver_version % 1000 / 10,
		 backend > 0 && backend < 4 ? backends[backend] : "?", (int)B.type,
		 vmm.size >> 20, DEV_OFF >> 10, UNALIGNED_DEV, UNALIGNED_HOST, B.rounds,
		 B.lat_rounds, B.bucket_us,
		 B.inflight_fence ? "**Copies fence themselves here** (membarrier(PRIVATE_EXPEDITED) "
				    "is not available), as in the library_fenced column." :
				    "Copies do not fence themselves here (membarrier(PRIVATE_EXPEDITED) "
				    "orders them for gdr_unmap).",
		 B.have_gdrcopy26 ? "" : " This CPU cannot run GDRCopy 2.6's strategy (SSE4.1 and AVX2).");
	info.title = "Copies through a mapping of GPU memory: the library against GDRCopy 2.6's "
		     "strategy, raw accesses and cuMemcpy";
	info.command = command;
	info.setup = setup_text;
	info.choice = choice;
	for (int dir = 0; dir < 2; dir++) {
		info.nroutines[dir] = B.nroutines[dir];
		for (int i = 0; i < B.nroutines[dir]; i++)
			info.routines[dir][i] = B.routines[dir][i]->name;
	}
	for (size_t i = 0; i < nsizes; i++)
		if (sizes[i] <= max)
			info.sizes[info.nsizes++] = sizes[i];
	for (size_t i = 0; i < sizeof(unaligned_sizes) / sizeof(unaligned_sizes[0]); i++)
		if (unaligned_sizes[i] <= max && (!quick || i % 2 == 0))
			info.unaligned_sizes[info.nunaligned++] = unaligned_sizes[i];
	for (size_t i = 0; i < sizeof(latency_sizes) / sizeof(latency_sizes[0]); i++)
		if (latency_sizes[i] <= max && (!quick || i % 2 == 0))
			info.latency_sizes[info.nlatency++] = latency_sizes[i];

	B.deadline_ns = gpu_now_ns() + budget_s * 1e9;
	for (int dir = 0; dir < 2; dir++) {
		for (int i = 0; i < info.nsizes; i++)
			if (over_budget(&info, dir ? "writes" : "reads", info.sizes[i]) ||
			    scenario_throughput(dir, 0, info.sizes[i]))
				goto out;
		for (int i = 0; i < info.nunaligned; i++)
			if (over_budget(&info, "unaligned", info.unaligned_sizes[i]) ||
			    scenario_throughput(dir, 1, info.unaligned_sizes[i]))
				goto out;
		fprintf(stderr, "%s done\n", dir ? "writes" : "reads");
	}
	for (int i = 0; i < info.nlatency; i++)
		if (over_budget(&info, "latency", info.latency_sizes[i]) ||
		    scenario_latency(info.latency_sizes[i]))
			goto out;
	ret = 0;
out:
	if (!ret || info.stopped[0]) {
		gdr_copy_table_install(&B.auto_t);
		bench_report_print(&info, stdout, csv);
		ret = 0;
	}
	gdr_copy_table_install(&B.auto_t);
	atomic_store_explicit(&gdr_inflight_fence, B.inflight_fence, memory_order_relaxed);
	if (csv)
		fclose(csv);
	cu->cuMemFreeHost(B.check_buf);
	cu->cuMemFreeHost(B.src_buf);
	cu->cuMemFreeHost(B.host_buf);
	gdr_unmap(B.g, B.mh, va, vmm.size);
	gdr_unpin_buffer(B.g, B.mh);
	gdr_close(B.g);
	gpu_vmm_free(&vmm);
	return ret;
}
