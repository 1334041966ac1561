/* SPDX-License-Identifier: MIT */
/*
 * Helpers shared by the gdrcopy tools (sanity, copybw, copylat, apiperf, pplat): error exits,
 * CUDA device selection, GPU allocation, the gdr_open wrapper and backend queries, timing and
 * statistics, output, the test pattern, and the per-routine sweep. Only the public gdrapi.h is
 * used, so the tools also run against NVIDIA's libgdrapi (the gdrcopy extensions degrade).
 */
#ifndef GDR_TOOLS_COMMON_H
#define GDR_TOOLS_COMMON_H

#include <stddef.h>
#include <stdint.h>
#include <getopt.h>
#include <stdio.h>
#include <time.h>

#include <cuda.h>

#include "gdrapi.h"

#ifdef __cplusplus
extern "C" {
#endif

#define TOOL_ROUND_UP(x, a) ((((x) + (a) - 1) / (a)) * (a))

/* ---- Errors ----------------------------------------------------------------------------------- */

/*
 * Print "program: message" as one line on stderr and exit 1. In a sweep child the line also
 * goes to the sweep pipe, so the parent can say why a routine was skipped.
 */
void tool_die(const char *fmt, ...) __attribute__((format(printf, 1, 2), noreturn));
void tool_warn(const char *fmt, ...) __attribute__((format(printf, 1, 2)));

/* "CUDA_ERROR_NO_DEVICE", or the number when the driver has no name for it. */
const char *tool_cu_name(CUresult r);

/* Die with "what failed: CUDA_ERROR_X" unless r is CUDA_SUCCESS. */
#define CU_CHECK(call) \
	do { \
		CUresult cu_check_r_ = (call); \
		if (cu_check_r_ != CUDA_SUCCESS) \
			tool_die("%s failed: %s", #call, tool_cu_name(cu_check_r_)); \
	} while (0)

/* ---- CUDA devices ----------------------------------------------------------------------------- */

/*
 * Bind the tools' CUDA calls to libcuda.so.1 (cuda_loader.c). tool_cuda_try_init does it first;
 * 0, or -1 with one line in why ("libcuda.so.1 not found: ...").
 */
int tool_cuda_load(char *why, size_t len);

struct tool_cuda {
	CUdevice dev;
	CUcontext ctx;
	int dev_id;
};

/*
 * cuInit, select dev_id, retain its primary context and make it current. Dies with one line
 * (e.g. "cuInit failed: CUDA_ERROR_NO_DEVICE") when there is no usable device.
 */
void tool_cuda_init(struct tool_cuda *c, int dev_id);
/*
 * Print "GPU id:N; name: ...; Bus id: dddd:bb:dd" for every device and "selecting device N".
 * Tools print these after gdr_open, so that a failure is the only line they print.
 */
void tool_print_devices(const struct tool_cuda *c);
/* As tool_cuda_init, returning the CUresult and a message instead of dying. */
CUresult tool_cuda_try_init(struct tool_cuda *c, int dev_id, char *why, size_t len);
void tool_cuda_fini(struct tool_cuda *c);

/* ---- GPU allocation --------------------------------------------------------------------------- */

enum tool_alloc_kind {
	TOOL_ALLOC_AUTO,	/* cuMemCreate under the vulkan backend, else cuMemAlloc */
	TOOL_ALLOC_CUMEMALLOC,
	TOOL_ALLOC_CUMEMCREATE,
};

struct gpu_buf {
	CUdeviceptr ptr;	/* what the tool uses: GPU-page aligned when asked */
	size_t size;		/* bytes usable at ptr */
	enum tool_alloc_kind kind;
	CUdeviceptr base;	/* what the allocator returned */
	size_t alloc_size;
	CUmemGenericAllocationHandle handle;	/* cuMemCreate */
};

/* -a "cuMemAlloc" / "cuMemCreate" -> kind; dies naming the option for anything else. */
void tool_parse_alloc(const char *s, enum tool_alloc_kind *kind);
const char *tool_alloc_name(enum tool_alloc_kind kind);
/* Resolve TOOL_ALLOC_AUTO for the backend g uses. */
enum tool_alloc_kind tool_alloc_resolve(enum tool_alloc_kind kind, gdr_t g);

/*
 * cuMemAlloc: size bytes; aligned moves ptr to the next GPU page (64 KiB) inside an allocation
 * one GPU page larger, as GDRCopy's gpu_mem_alloc does; sync_memops sets
 * CU_POINTER_ATTRIBUTE_SYNC_MEMOPS.
 * cuMemCreate: pinned device memory with gpuDirectRDMACapable = 1 and the POSIX-fd handle type
 * (so the vulkan backend can pin it), size rounded up to the recommended granularity (itself
 * rounded to 64 KiB), reserved, mapped and made read-write for dev.
 * Returns CUDA_SUCCESS or the failing call's result, naming the call in *what.
 */
CUresult gpu_alloc(struct gpu_buf *b, size_t size, enum tool_alloc_kind kind, int aligned,
		   int sync_memops, CUdevice dev, const char **what);
CUresult gpu_free(struct gpu_buf *b);
/* gpu_alloc or die with one line. */
void gpu_alloc_or_die(struct gpu_buf *b, size_t size, enum tool_alloc_kind kind, CUdevice dev);

/* ---- gdrcopy ---------------------------------------------------------------------------------- */

/* Apply --backend / --impl (either may be NULL) to the environment the library reads. */
void tool_set_env(const char *backend, const char *impl);
/* gdr_open, or die: "gdr_open failed: no backend can map GPU memory here; run gdrcopy_info". */
gdr_t tool_gdr_open(void);
/* "closing BACKEND" (GDRCopy's "closing gdrdrv" under gdrdrv), then gdr_close, or die. */
void tool_gdr_close(gdr_t g);
/* GDR_BACKEND_*; GDRCopy's own library answers EINVAL, which means gdrdrv-like. */
int tool_backend(gdr_t g);
const char *tool_backend_name(int backend);
/* The copy routine (GDR_COPY_IMPL_*) used for 4 KiB copies; -1 when the library does not say. */
int tool_copy_impl(gdr_t g, int to_device);
const char *tool_impl_name(int impl);
/* GDR_COPY_IMPL_* for a name, or -1. */
int tool_impl_id(const char *name);
/* -M default|wc|cache|device -> a gdr_map_flags_t value; dies naming the option otherwise. */
void tool_parse_map_flags(const char *s, int *flags);
/* A hint for a failed pin: what the backend can pin ("" when nothing useful to say). */
const char *tool_pin_hint(gdr_t g, enum tool_alloc_kind kind);
const char *tool_mapping_name(gdr_mapping_type_t type);

/* A GPU buffer pinned and mapped for the CPU, as copybw, copylat and pplat set one up. */
struct tool_mapping {
	gdr_t g;
	struct gpu_buf buf;
	gdr_mh_t mh;
	void *map;		/* what gdr_map returned: the CPU address of info.va */
	void *ptr;		/* the CPU address of buf.ptr */
	gdr_info_t info;
	size_t size;		/* bytes usable at ptr */
};

/*
 * Allocate size bytes (rounded up to a GPU page) with kind, pin, map with map_flags and query
 * the info, printing GDRCopy's lines ("rounded size", "gpu alloc fn", "device ptr",
 * "map_d_ptr", "info.*", "page offset", "user-space pointer") unless quiet. Dies on failure.
 */
void tool_map_gpu(struct tool_mapping *m, gdr_t g, const struct tool_cuda *cu, size_t size,
		  enum tool_alloc_kind kind, int map_flags, int quiet);
/* Unmap, unpin ("unmapping buffer", "unpinning buffer" unless quiet) and free. */
void tool_unmap_gpu(struct tool_mapping *m, int quiet);

/* ---- Time and statistics ---------------------------------------------------------------------- */

static inline double tool_now_us(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec * 1e6 + (double)ts.tv_nsec / 1e3;
}

struct tool_stats {
	double median;
	double min;
	double avg;
};

/* Sort v[0..n) and fill median (P50), minimum (P0) and mean. n > 0. */
void tool_stats(double *v, size_t n, struct tool_stats *out);

/*
 * copylat's iteration rule: counts above 100 round up to a multiple of 100 (with a warning
 * naming what), and the iterations split into at most 100 buckets.
 */
size_t tool_round_iters(size_t iters, const char *what);
size_t tool_buckets(size_t iters);

/* ---- Output ----------------------------------------------------------------------------------- */

/* --csv: rows for scripts instead of the human table; the human header lines are not printed. */
extern int tool_csv;
/* Print a human line (suppressed by --csv and in sweep children). */
void tool_say(const char *fmt, ...) __attribute__((format(printf, 1, 2)));

/* ---- Test pattern ----------------------------------------------------------------------------- */

/* GDRCopy's walking bit: word w is 0x3F4C5E6A ^ (1 << (w % 32)); seed shifts the walk. */
void tool_fill_pattern(void *buf, size_t bytes, unsigned seed);
/* 0 if equal; else print the first 10 mismatching words ("word content expected") and count. */
size_t tool_compare(const void *got, const void *want, size_t bytes);

/* ---- Copy-routine sweep (--impl all) ---------------------------------------------------------- */

/*
 * The routine names this architecture may have, in the order the sweep runs them; "auto" (the
 * library's own choice) comes first and is not in this list.
 */
extern const char *const tool_impl_candidates[];
/* 0 and a reason in why if this CPU cannot run the routine. */
int tool_cpu_can_run(const char *impl, char *why, size_t len);

/*
 * In a sweep child (--sweep-fd N, added by the parent) the tool writes its results as lines to
 * that fd instead of printing: "impl TO FROM" after gdr_open, then "row TEST SIZE V1 V2".
 */
extern int tool_sweep_fd;
void tool_sweep_line(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
/* Report which routines the library uses (sweep child) and check a forced one was honoured. */
void tool_report_impl(gdr_t g, const char *forced);

struct sweep_row {
	char test[48];
	size_t size;
	double v1, v2;
};

struct sweep_run {
	const char *impl;	/* "auto" or a routine name */
	int ran;		/* rows are valid */
	char why[256];		/* why not */
	char to_impl[24], from_impl[24];	/* what the library reported */
	struct sweep_row *rows;
	size_t nrows;
};

/*
 * Run the tool once per routine: re-exec /proc/self/exe with argv minus "--impl all", plus
 * "--impl NAME --sweep-fd N" and GDRCOPY_COPY_IMPL set, collecting each child's lines. The
 * library chooses its routines once per process, hence one process per routine. Returns the
 * runs (runs[0] is "auto"), *n their count; free with tool_sweep_free.
 */
struct sweep_run *tool_sweep(int argc, char **argv, size_t *n);
void tool_sweep_free(struct sweep_run *runs, size_t n);
/*
 * Print the sweep: for each test, one table of v1 (the column named value) by size and routine,
 * with the best routine and the automatic choice's ratio to it; higher_better for bandwidths.
 * --csv prints "impl,test,size,v1,v2" rows (header given by csv_header).
 */
void tool_sweep_print(const struct sweep_run *runs, size_t n, const char *value,
		      int higher_better, const char *csv_header);

/* ---- Options every tool takes ------------------------------------------------------------- */

enum {
	TOOL_OPT_BACKEND = 0x100,
	TOOL_OPT_IMPL,
	TOOL_OPT_CSV,
	TOOL_OPT_SWEEP_FD,
	TOOL_OPT_HELP,
	TOOL_OPT_FIRST_TOOL,	/* a tool's own long options start here */
};

#define TOOL_LONG_OPTIONS \
	{ "backend", required_argument, NULL, TOOL_OPT_BACKEND }, \
	{ "impl", required_argument, NULL, TOOL_OPT_IMPL }, \
	{ "csv", no_argument, NULL, TOOL_OPT_CSV }, \
	{ "sweep-fd", required_argument, NULL, TOOL_OPT_SWEEP_FD }, \
	{ "help", no_argument, NULL, TOOL_OPT_HELP }

#define TOOL_COMMON_USAGE \
	"  --backend NAME  use only this gdrcopy backend (gdrdrv, dmabuf, vulkan): GDRCOPY_BACKEND\n" \
	"  --impl NAME     force one CPU copy routine: GDRCOPY_COPY_IMPL\n" \
	"  --csv           print comma-separated rows instead of the human output\n"

struct tool_common {
	const char *backend;
	const char *impl;
};

/*
 * Handle one of TOOL_LONG_OPTIONS: 1 if c was one (TOOL_OPT_HELP is left to the tool, which
 * knows its usage), 0 if not.
 */
int tool_common_option(int c, const char *arg, struct tool_common *o);
/* 1 when --impl all asks for the per-routine sweep. */
int tool_impl_is_all(const struct tool_common *o);
/* Parse a size (bytes, with an optional K, M or G suffix of powers of 1024) or die naming opt. */
size_t tool_parse_size(const char *arg, const char *opt);
/* Parse a non-negative integer or die naming opt. */
long tool_parse_long(const char *arg, const char *opt, long min, long max);

#ifdef __cplusplus
}
#endif

#endif
