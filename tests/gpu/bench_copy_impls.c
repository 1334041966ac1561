/* SPDX-License-Identifier: MIT */
/*
 * Benchmark, not a test: the library's copies against GDRCopy 2.6's strategy and public call,
 * the call also with its kernels' checks (gdrcopy26_copy.c), raw accesses (bench_raw.c) and cuMemcpy, and every copy routine of this
 * CPU as the library's choice, all in one process on one mapping. Each size runs in rounds;
 * each round times every method once (a batch of back-to-back calls lasting at least the
 * bucket), in an order rotated and shuffled each round, and checks the data the batch copied.
 * The figure of a method is its median over the rounds, with the spread; against GDRCopy 2.6's
 * call and strategy it also has the median of its per-round ratios to them. Then, for reads, the
 * latency of one read of data the GPU has just written (what a flag poll costs). Up to 4 KiB,
 * the public call's steps and alternatives (bench_paths.c) run beside it. It links the library
 * statically to reach the routines and install tables (copy_impl.h).
 *
 *   bench_copy_impls [-r ROUNDS] [-l LATENCY_ROUNDS] [-s MAX_SIZE] [-b BUCKET_US] [-t SECONDS]
 *                    [-c CSV] [-H BYTES] [-q]
 *
 * Markdown on stdout (bench_copy_report.c); -c FILE writes every figure as CSV; -t: measure
 * no more sizes after that many seconds (the report says what it left out); -H: the host
 * copies that many bytes further into their buffer, so at another page offset against the
 * device copies'; -q: a few sizes and rounds, to check the program, not to measure. See bench_copy.h for the methods.
 */
#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "bench_bar.h"
#include "bench_copy.h"
#include "bench_forced.h"
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

#include "bench_copy_run.h"

struct bench_state bench;

static struct method *add(struct scenario *sc, const char *name, enum kind kind)
{
	struct method *m;

	if (sc->nm == MAX_METHODS) {
		fprintf(stderr, "bench_copy_impls: more than %d methods at %s: raise MAX_METHODS\n",
			MAX_METHODS, name);
		exit(1);
	}
	m = &sc->m[sc->nm++];
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

	if (!bench_raw_ok(sc->to_device, sc->n, sc->dev, width, bench.cpu))
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

	for (int i = 0; i < bench.nroutines[dir]; i++) {
		char name[48];

		if (!dir && sc->n > PLAIN_LOAD_MAX && plain_load(bench.routines[dir][i]))
			continue;
		snprintf(name, sizeof(name), "library:%s", bench.routines[dir][i]->name);
		add(sc, name, K_LIBRARY)->table = &bench.forced[dir][i];
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
		m->table = &bench.auto_t;
	}
	m = add(sc, "library_fenced", K_LIBRARY);
	m->table = &bench.auto_t;
	m->fenced = 1;
}

static void add_gdrcopy26(struct scenario *sc)
{
	if (!bench.have_gdrcopy26)
		return;
	add(sc, "gdrcopy26_call", K_GDRCOPY26_CALL);
	add(sc, "gdrcopy26_call_checked", K_GDRCOPY26_CHECKED_CALL);
	add_call(sc, "gdrcopy26",
		 sc->to_device ? gdrcopy26_copy_to_wc : gdrcopy26_copy_from_wc, 0);
	if (sc->to_device && bench.have_movdir64b)
		add_call(sc, "gdrcopy26_movdir64b", gdrcopy26_copy_to_wc_movdir64b, 0);
}

static void setup(struct scenario *sc, int to_device, int unaligned, int latency, size_t n)
{
	sc->to_device = to_device;
	sc->unaligned = unaligned;
	sc->latency = latency;
	sc->n = n;
	sc->dev = bench.map + DEV_OFF + (unaligned ? UNALIGNED_DEV : 0);
	sc->dev_ptr = bench.dptr + DEV_OFF + (unaligned ? UNALIGNED_DEV : 0);
	sc->host = bench.host_buf + GUARD + bench.host_shift + (unaligned ? UNALIGNED_HOST : 0);
	sc->nm = 0;
}

/*
 * The device guards, which the writes must leave alone. cuMemsetD8 on device memory may return
 * before the GPU has done it (CUDA's API synchronization behavior), and a fill that lands after
 * the first write through the mapping erases it: wait for it.
 */
static int set_device_guards(const struct scenario *sc)
{
	if (cu->cuMemsetD8(sc->dev_ptr - GUARD, DEV_GUARD, sc->n + 2 * GUARD) ||
	    cu->cuCtxSynchronize()) {
		printf("cuMemsetD8 of the device guards (%zu bytes) failed\n", sc->n + 2 * GUARD);
		return -1;
	}
	return 0;
}

static int scenario_throughput(int to_device, int unaligned, size_t n)
{
	static struct scenario sc;
	const struct gdr_copy_impl *cur = gdr_copy_table_impl(&bench.auto_t, to_device, n);

	setup(&sc, to_device, unaligned, 0, n);
	add(&sc, "library", K_LIBRARY)->table = &bench.auto_t;
	add_gdrcopy26(&sc);
	if (!unaligned) {
		static const unsigned int widths[] = { 0, 16, 32, 64 };

		if (!to_device)
			add(&sc, "library_nofence", K_LIBRARY)->table = &bench.nofence_t;
		add(&sc, "dispatcher", K_DISPATCHER)->table = &bench.auto_t;
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
	}
	if (to_device && set_device_guards(&sc))
		return -1;
	add_routines(&sc);
	return run_throughput(&sc);
}

static int scenario_latency(size_t n)
{
	static struct scenario sc;
	static const unsigned int widths[] = { 0, 16, 32, 64 };

	setup(&sc, 0, 0, 1, n);
	add(&sc, "timer", K_TIMER);
	add(&sc, "library", K_LIBRARY)->table = &bench.auto_t;
	add_gdrcopy26(&sc);
	for (size_t w = 0; w < sizeof(widths) / sizeof(widths[0]); w++)
		add_raw(&sc, widths[w], 0, NULL);
	add(&sc, "cumemcpy", K_CUMEMCPY);
	add_routines(&sc);
	return run_latency(&sc);
}

/* Tables that use one routine at every size of a direction (dir 0: loads, 1: stores). */
static void make_forced(void)
{
	for (int dir = 0; dir < 2; dir++)
		bench.nroutines[dir] = bench_forced_tables(&bench.auto_t, dir, bench.cpu,
							   bench.forced[dir], bench.routines[dir],
							   BENCH_MAX_ROUTINES);
}

/* Past the time budget: say where it stopped, for the report. */
static int over_budget(struct bench_info *info, const char *what, size_t n)
{
	char size[32];

	if (gpu_now_ns() < bench.deadline_ns)
		return 0;
	gdr_copy_size_name(n, size, sizeof(size));
	snprintf(info->stopped, sizeof(info->stopped),
		 "The time budget (-t) ran out: nothing was measured from the %s of %s on.", what,
		 size);
	return 1;
}

static const char *current_routine(int to_device, size_t n)
{
	return gdr_copy_table_impl(&bench.auto_t, to_device, n)->name;
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
		"       [-c CSV] [-H BYTES] [-q]\n"
		"  -r rounds per size (default 50, at most %d); -l latency rounds (default 100)\n"
		"  -s largest size, with K/M suffixes (default 4M); -b shortest batch in us (default 20)\n"
		"  -t start no size after this many seconds (default 200); -c write every figure to\n"
		"  this CSV file; -H move the host copies this many bytes further into their buffer\n"
		"  (0 to 4095, default 0), to see whether where they sit in a page, against the device\n"
		"  copies' page offset, matters; -q quick: a few sizes, to check the program\n",
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
	long host_shift = 0;
	char *end;
	double budget_s = 200;
	struct bench_bar bb;
	FILE *csv = NULL;
	time_t now = time(NULL);

	bench.rounds = 50;
	bench.lat_rounds = 100;
	bench.bucket_us = 20;
	while ((opt = getopt(argc, argv, "r:l:s:b:t:c:H:q")) != -1) {
		switch (opt) {
		case 'r':
			bench.rounds = atoi(optarg);
			break;
		case 'l':
			bench.lat_rounds = atoi(optarg);
			break;
		case 's':
			max = parse_size(optarg);
			break;
		case 'b':
			bench.bucket_us = atof(optarg);
			break;
		case 't':
			budget_s = atof(optarg);
			break;
		case 'c':
			csv_path = optarg;
			break;
		case 'H':
			host_shift = strtol(optarg, &end, 10);
			if (end == optarg || *end)
				host_shift = -1;	/* refused below */
			break;
		case 'q':
			quick = 1;
			break;
		default:
			return usage(argv[0]);
		}
	}
	if (quick) {
		bench.rounds = bench.rounds < 3 ? bench.rounds : 3;
		bench.lat_rounds = bench.lat_rounds < 3 ? bench.lat_rounds : 3;
		bench.bucket_us = 2;
		sizes = quick_sizes;
		nsizes = sizeof(quick_sizes) / sizeof(quick_sizes[0]);
	}
	if (optind != argc || bench.rounds < 1 || bench.rounds > MAX_ROUNDS || bench.lat_rounds < 1 ||
	    bench.lat_rounds > MAX_ROUNDS || bench.bucket_us <= 0 || budget_s <= 0 || max < 1 ||
	    max > (256u << 20) || host_shift < 0 || host_shift > 4095)
		return usage(argv[0]);
	bench.host_shift = (unsigned int)host_shift;
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
	if (bench_bar_open(&bb, pin_size))
		return 1;
	bench.dptr = bb.vmm.ptr;
	bench.g = bb.g;
	bench.mh = bb.mh;
	bench.map = bb.va;
	bench.type = bb.type;
	bufsize = max + 2 * GUARD + 64 + bench.host_shift;
	if (cu->cuMemAllocHost((void **)&bench.host_buf, bufsize) ||
	    cu->cuMemAllocHost((void **)&bench.src_buf, bufsize) ||
	    cu->cuMemAllocHost((void **)&bench.check_buf, bufsize)) {
		printf("cuMemAllocHost of %zu bytes failed\n", bufsize);
		return 1;
	}
	bench.cpu = gdr_cpu_features();
	bench.inflight_fence = atomic_load_explicit(&gdr_inflight_fence, memory_order_relaxed);
	gdr_copy_table_current(&bench.auto_t);
	bench.nofence_t = bench.auto_t;
	bench.nofence_t.from_wc_fence = GDR_COPY_FENCE_NONE;
	bench.have_gdrcopy26 = !gdrcopy26_init(bench.cpu, &bench.have_movdir64b);
	if (bench.have_gdrcopy26) {
		bench.g26_mh = gdrcopy26_map(bench.type);
		if (!bench.g26_mh.h) {
			printf("out of memory for GDRCopy 2.6's handle of the mapping\n");
			return 1;
		}
	}
	make_forced();

	gdr_get_attribute(bench.g, (gdr_attr_t)GDR_ATTR_EXT_BACKEND, &backend);
	cpu_model(model, sizeof(model));
	gdr_cpu_describe(bench.cpu, features, sizeof(features));
	gdr_copy_table_describe(&bench.auto_t, choice, sizeof(choice));
	strftime(date, sizeof(date), "%Y-%m-%d %H:%M UTC", gmtime(&now));
	snprintf(setup_text, sizeof(setup_text),
		 "%s; %s (%s); CUDA driver %d.%d; backend %s, mapping type %d (1: write-combined); "
		 "a %zu MiB pin, copies at device offset %u KiB (unaligned: +%d, host +%d), host "
		 "buffers from cuMemAllocHost, the host copies at page offset 0x%03x (device: 0x%03x); "
		 "%d rounds (latency: %d), each timing every method once in "
		 "an order rotated and shuffled each round, in batches of at least %.0f us. %s%s",
		 date, model, features, cu->driver_version / 1000, cu->driver_version % 1000 / 10,
		 backend > 0 && backend < 4 ? backends[backend] : "?", (int)bench.type,
		 bb.vmm.size >> 20, DEV_OFF >> 10, UNALIGNED_DEV, UNALIGNED_HOST,
		 (unsigned int)((uintptr_t)(bench.host_buf + GUARD + bench.host_shift) & 4095),
		 (unsigned int)((uintptr_t)(bench.map + DEV_OFF) & 4095), bench.rounds,
		 bench.lat_rounds, bench.bucket_us,
		 bench.inflight_fence ? "**Copies fence themselves here** (membarrier(PRIVATE_EXPEDITED) "
				    "is not available), as in the library_fenced column." :
				    "Copies do not fence themselves here (membarrier(PRIVATE_EXPEDITED) "
				    "orders them for gdr_unmap).",
		 bench.have_gdrcopy26 ? "" : " This CPU cannot run GDRCopy 2.6's strategy (SSE4.1 and AVX2).");
	info.title = "Copies through a mapping of GPU memory: the library against GDRCopy 2.6's "
		     "strategy, raw accesses and cuMemcpy";
	info.command = command;
	info.setup = setup_text;
	info.choice = choice;
	for (int dir = 0; dir < 2; dir++) {
		info.nroutines[dir] = bench.nroutines[dir];
		for (int i = 0; i < bench.nroutines[dir]; i++)
			info.routines[dir][i] = bench.routines[dir][i]->name;
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

	bench.deadline_ns = gpu_now_ns() + budget_s * 1e9;
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
		gdr_copy_table_install(&bench.auto_t);
		bench_report_print(&info, stdout, csv);
		ret = 0;
	}
	gdr_copy_table_install(&bench.auto_t);
	atomic_store_explicit(&gdr_inflight_fence, bench.inflight_fence, memory_order_relaxed);
	if (csv)
		fclose(csv);
	cu->cuMemFreeHost(bench.check_buf);
	cu->cuMemFreeHost(bench.src_buf);
	cu->cuMemFreeHost(bench.host_buf);
	gdrcopy26_unmap(bench.g26_mh);
	bench_bar_close(&bb);
	return ret;
}
