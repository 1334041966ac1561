/* SPDX-License-Identifier: MIT */
/*
 * Benchmark, not a test: every copy routine this CPU can run, in both directions, against the
 * library's automatic choice (gdr_copy_to/from_mapping) and, at 8 B, a raw store + sfence, all
 * in one process on one mapping, interleaved round by round so that drift between processes or
 * over time cannot favour one routine. Sweeping with GDRCOPY_COPY_IMPL needs a process per
 * routine; this links the library statically to reach the routines themselves.
 *   bench_copy_impls [-r rounds] [-s max size]
 * Prints, per size, the median per-copy time of each routine over rounds (each round times a
 * batch of copies and divides), in microseconds, and the best routine.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "copy_impl.h"
#include "cpu.h"
#include "gdrapi.h"
#include "gpucommon.h"

#define MAX_ROWS 16
#define MAX_ROUNDS 101

struct row {
	const char *name;
	gdr_copy_fn fn;		/* NULL: the library's own dispatch (or the raw store) */
	int raw;
	double t[MAX_ROUNDS];
};

static gdr_mh_t mh;
static unsigned char *map;


/* Time one batch of copies with row r; returns microseconds per copy. */
static double run_batch(const struct row *r, int to_device, unsigned char *host, size_t n,
			int count)
{
	double t0 = gpu_now_ns();

	for (int i = 0; i < count; i++) {
		if (r->raw) {
			*(volatile uint64_t *)map = (uint64_t)i;
			__builtin_ia32_sfence();
		} else if (!r->fn) {
			if (to_device)
				gdr_copy_to_mapping(mh, map, host, n);
			else
				gdr_copy_from_mapping(mh, host, map, n);
		} else {
			/* What the dispatcher adds after a routine on a WC mapping. */
			if (to_device)
				r->fn(map, host, n);
			else
				r->fn(host, map, n);
			__builtin_ia32_sfence();
		}
	}
	return (gpu_now_ns() - t0) / 1e3 / count;
}

static int build_rows(struct row *rows, int to_device, size_t n)
{
	unsigned int cpu = gdr_cpu_features();
	size_t count;
	const struct gdr_copy_impl *const *impls = gdr_copy_impls(&count);
	int nrows = 0;

	rows[nrows++] = (struct row){ .name = "auto" };
	if (to_device && n == 8)
		rows[nrows++] = (struct row){ .name = "raw_store8", .raw = 1 };
	for (size_t i = 0; i < count && nrows < MAX_ROWS; i++) {
		gdr_copy_fn fn = to_device ? impls[i]->store : impls[i]->load;

		if (!fn || gdr_copy_impl_missing(impls[i], cpu))
			continue;
		/* AVX-512 loads below 256 B cost tens of us: skip them, the library never uses them. */
		if (!to_device && n < impls[i]->load_min)
			continue;
		/* Plain loads of WC memory are too slow to time at large sizes. */
		if (!to_device && n > 4096 && (impls[i]->id == GDR_COPY_IMPL_GENERIC ||
					       impls[i]->id == GDR_COPY_IMPL_MEMCPY ||
					       impls[i]->id == GDR_COPY_IMPL_SSE))
			continue;
		rows[nrows++] = (struct row){ .name = impls[i]->name, .fn = fn };
	}
	return nrows;
}

static void bench_size(int to_device, size_t n, int rounds, unsigned char *host)
{
	struct row rows[MAX_ROWS];
	int nrows = build_rows(rows, to_device, n);
	/* About 20 us of copying per batch, at least 4 copies. */
	int count = (int)(20000 / (to_device ? 100 + n / 12 : 1000 + n));
	double best = 1e30;
	const char *best_name = "";
	char auto_name[32] = "";

	if (count < 4)
		count = 4;
	for (int r = 0; r < rounds; r++)
		for (int k = 0; k < nrows; k++) {
			/* Rotate the order each round. */
			struct row *row = &rows[(k + r) % nrows];

			row->t[r] = run_batch(row, to_device, host, n, count);
		}
	{
		const struct gdr_copy_impl *a;
		struct gdr_copy_table t;

		gdr_copy_table_current(&t);
		a = gdr_copy_table_impl(&t, to_device, n);
		snprintf(auto_name, sizeof(auto_name), "%s", a ? a->name : "?");
	}
	printf("%s %7zu B:", to_device ? "to  " : "from", n);
	for (int k = 0; k < nrows; k++) {
		double m = gpu_median(rows[k].t, rounds);

		printf(" %s=%.3f", rows[k].name, m);
		if (k && !rows[k].raw && m < best) {
			best = m;
			best_name = rows[k].name;
		}
	}
	printf("  | auto uses %s, best %s\n", auto_name, best_name);
	fflush(stdout);
}

int main(int argc, char **argv)
{
	static const size_t sizes[] = { 8, 64, 256, 1024, 2048, 4096, 16384, 65536, 262144 };
	size_t max = 262144, pin_size = 2u << 20;
	int rounds = 41, opt;
	unsigned char *host;
	struct gpu_vmm m;
	gdr_t g;
	void *va;

	while ((opt = getopt(argc, argv, "r:s:")) != -1) {
		if (opt == 'r')
			rounds = atoi(optarg);
		else if (opt == 's')
			max = strtoul(optarg, NULL, 0);
		else
			return 2;
	}
	if (rounds < 1 || rounds > MAX_ROUNDS)
		rounds = 41;
	if (gpu_init())
		return 77;
	gpu_describe();
	if (gpu_vmm_alloc(&m, pin_size, CU_MEM_HANDLE_TYPE_POSIX_FILE_DESCRIPTOR)) {
		printf("cuMemCreate failed\n");
		return 1;
	}
	g = gdr_open();
	if (!g || gdr_pin_buffer(g, m.ptr, pin_size, 0, 0, &mh) ||
	    gdr_map(g, mh, &va, pin_size)) {
		printf("gdr_open/pin/map failed: run gdrcopy_info\n");
		return 1;
	}
	map = va;
	host = aligned_alloc(4096, max);
	memset(host, 0x5a, max);
	printf("# median us per copy over %d interleaved rounds, one process, one mapping\n", rounds);
	for (int dir = 1; dir >= 0; dir--)
		for (size_t i = 0; i < sizeof(sizes) / sizeof(sizes[0]); i++)
			if (sizes[i] <= max)
				bench_size(dir, sizes[i], rounds, host);
	gdr_unmap(g, mh, va, pin_size);
	gdr_unpin_buffer(g, mh);
	gdr_close(g);
	gpu_vmm_free(&m);
	free(host);
	return 0;
}
