/* SPDX-License-Identifier: MIT */
/*
 * bench_copy_impls' measurements: each method's batch of calls timed in rounds, in an order
 * rotated and shuffled each round, the data each batch copied checked against the source.
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "bench_copy_run.h"
#include "bench_raw.h"
#include "copy.h"
#include "gdrcopy26_copy.h"
#include "inflight.h"

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
				gdr_copy_to_mapping(bench.mh, dev, host, n);
		else
			for (i = 0; i < count; i++)
				gdr_copy_from_mapping(bench.mh, host, dev, n);
		break;
	case K_PATH:
		if (sc->to_device)
			for (i = 0; i < count; i++)
				m->path->to(bench.mh, dev, host, n);
		else
			for (i = 0; i < count; i++)
				m->path->from(bench.mh, host, dev, n);
		break;
	case K_DISPATCHER:
		if (sc->to_device)
			for (i = 0; i < count; i++)
				gdr_copy_to_mapping_type(bench.type, 0, dev, host, n);
		else
			for (i = 0; i < count; i++)
				gdr_copy_from_mapping_type(bench.type, 0, host, dev, n);
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
	case K_GDRCOPY26_CALL:
		if (sc->to_device)
			for (i = 0; i < count; i++)
				gdrcopy26_copy_to_mapping(bench.g26_mh, dev, host, n);
		else
			for (i = 0; i < count; i++)
				gdrcopy26_copy_from_mapping(bench.g26_mh, host, dev, n);
		break;
	case K_GDRCOPY26_CHECKED_CALL:
		if (sc->to_device)
			for (i = 0; i < count; i++)
				gdrcopy26_checked_copy_to_mapping(bench.g26_mh, dev, host, n);
		else
			for (i = 0; i < count; i++)
				gdrcopy26_checked_copy_from_mapping(bench.g26_mh, host, dev, n);
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
	atomic_store_explicit(&gdr_inflight_fence, m->fenced ? 1 : bench.inflight_fence,
			      memory_order_relaxed);
	if (sc->to_device)
		fill(sc->host, sc->n, seed);
	else
		memset(sc->host - GUARD, HOST_GUARD, sc->n + 2 * GUARD);
}

/* The GPU writes new data to the range (reads check against it: bench.src_buf). */
static int gpu_writes(const struct scenario *sc, uint64_t seed)
{
	fill(bench.src_buf, sc->n, seed);
	if (cu->cuMemcpyHtoD(sc->dev_ptr, bench.src_buf, sc->n) || cu->cuCtxSynchronize()) {
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
		else if ((i = first_diff(sc->host, bench.src_buf, n)) < n)
			snprintf(m->failed, sizeof(m->failed),
				 "%zu B: host byte %zu is 0x%02x, the GPU wrote 0x%02x", n, i,
				 sc->host[i], bench.src_buf[i]);
		return;
	}
	if (cu->cuMemcpyDtoH(bench.check_buf, sc->dev_ptr - GUARD, n + 2 * GUARD)) {
		snprintf(m->failed, sizeof(m->failed), "%zu B: cuMemcpyDtoH to check failed", n);
		return;
	}
	if (first_not(bench.check_buf, GUARD, DEV_GUARD) < GUARD ||
	    first_not(bench.check_buf + GUARD + n, GUARD, DEV_GUARD) < GUARD)
		snprintf(m->failed, sizeof(m->failed), "%zu B: wrote outside the device range", n);
	else if ((i = first_diff(bench.check_buf + GUARD, sc->host, n)) < n)
		snprintf(m->failed, sizeof(m->failed),
			 "%zu B: device byte %zu is 0x%02x, the host had 0x%02x", n, i,
			 bench.check_buf[GUARD + i], sc->host[i]);
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
		if (t * c >= bench.bucket_us || c >= 1 << 20)
			break;
		c *= 2;
	}
	m->count = c;
}

/* The median over the rounds of m's time over base's (bench_result.per_round_call); 0 if none. */
static double per_round(const struct scenario *sc, const struct method *m, const char *base,
			int rounds)
{
	double v[MAX_ROUNDS];

	for (int k = 0; k < sc->nm; k++) {
		const struct method *b = &sc->m[k];

		if (strcmp(b->name, base) || b->skipped)
			continue;
		for (int r = 0; r < rounds; r++) {
			if (b->t[r] <= 0)
				return 0;
			v[r] = m->t[r] / b->t[r];
		}
		return gpu_median(v, rounds);
	}
	return 0;
}

static void record(const struct scenario *sc, const struct method *m, int rounds)
{
	struct bench_result r = {
		.latency = sc->latency, .to_device = sc->to_device, .unaligned = sc->unaligned,
		.n = sc->n, .rounds = rounds, .count = m->count,
	};
	double v[MAX_ROUNDS];

	memcpy(v, m->t, rounds * sizeof(v[0]));
	r.per_round_call = per_round(sc, m, "gdrcopy26_call", rounds);
	r.per_round_strategy = per_round(sc, m, "gdrcopy26", rounds);
	r.per_round_checked = per_round(sc, m, "gdrcopy26_call_checked", rounds);
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
 * device would otherwise always slow the same neighbour).
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

int run_throughput(struct scenario *sc)
{
	int order[MAX_METHODS];

	if (!sc->to_device && gpu_writes(sc, 1))
		return -1;
	for (int k = 0; k < sc->nm; k++)
		calibrate(sc, &sc->m[k]);
	for (int r = 0; r < bench.rounds; r++) {
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
			record(sc, &sc->m[k], bench.rounds);
	return 0;
}

int run_latency(struct scenario *sc)
{
	int order[MAX_METHODS];

	for (int r = 0; r < bench.lat_rounds; r++) {
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
			record(sc, &sc->m[k], bench.lat_rounds);
	}
	return 0;
}
