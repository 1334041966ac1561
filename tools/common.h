/* SPDX-License-Identifier: MIT */
/*
 * Helpers shared by the gdrcopy tools (sanity, copybw, copylat, apiperf, pplat), one concept per
 * file: errors and output (output.c), option parsing (options.c), CUDA devices (cuda_device.c,
 * over cuda_loader.c), GPU allocation (gpu_alloc.c), gdr_open and mappings (gdr_tool.c), timing
 * and statistics (stats.c), the test pattern (pattern.c), and the per-routine sweep (sweep.c).
 * Only the public headers are used (gdrapi.h, gdrapi_ext.h), so the tools also run against
 * NVIDIA's libgdrapi, where the gdrcopy extensions degrade.
 */
#ifndef GDR_TOOLS_COMMON_H
#define GDR_TOOLS_COMMON_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <time.h>

#include <cuda.h>

#include "gdrapi.h"
#include "gdrapi_ext.h"

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
/* The tools' exit statuses besides 0 and tool_die's 1 (77: the tests' convention for a skip). */
#define TOOL_EXIT_USAGE 2	/* the command line is wrong: an option, a value, an argument */
#define TOOL_EXIT_SKIP 77	/* this machine cannot run the measurement at all */
/* As tool_die, exiting with status. */
void tool_exit(int status, const char *fmt, ...) __attribute__((format(printf, 2, 3), noreturn));
/* As tool_die, for what is wrong with the command line: exits TOOL_EXIT_USAGE. */
void tool_usage_error(const char *fmt, ...) __attribute__((format(printf, 1, 2), noreturn));
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
/* 1 when the CUDA driver tool_cuda_load bound has the entry point name, else 0. */
int tool_cuda_has(const char *name);

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

/*
 * Why the gdr_open that just failed did, as one line: "gdr_open failed: REASONS; run
 * gdrcopy_info", with the library's reasons (gdr_ext_take_errors), or without them (NVIDIA's
 * library) "no backend can map GPU memory here" or "backend NAME cannot map GPU memory here".
 */
const char *tool_gdr_open_failure(void);
/* gdr_open, or die with tool_gdr_open_failure's line, or tool_impl_refused's. */
gdr_t tool_gdr_open(void);
/*
 * What copybw, copylat, apiperf and pplat do first: tool_cuda_init of dev_id, tool_gdr_open
 * (taking *open_us microseconds when open_us is not NULL), tool_print_devices, and *kind
 * resolved for the backend in use.
 */
gdr_t tool_start(struct tool_cuda *cu, int dev_id, enum tool_alloc_kind *kind, double *open_us);
/* "closing BACKEND" (GDRCopy's "closing gdrdrv" under gdrdrv), then gdr_close, or die. */
void tool_gdr_close(gdr_t g);
/* GDR_BACKEND_*; GDRCopy's own library answers EINVAL, which means gdrdrv-like. */
int tool_backend(gdr_t g);
/* gdr_ext_backend_name, or "unknown". */
const char *tool_backend_name(int backend);
/* The copy routine (GDR_COPY_IMPL_*) used for 4 KiB copies; -1 when the library does not say. */
int tool_copy_impl(gdr_t g, int to_device);
/* The routines GDRCOPY_COPY_IMPL can choose here (GDR_ATTR_EXT_COPY_IMPLS); 0 when not said. */
int tool_copy_impls(gdr_t g);
/* gdr_ext_copy_impl_name, or "unknown". */
const char *tool_impl_name(int impl);
/* --impl NAME (not all), which tool_options gives the library; NULL without. */
extern const char *tool_impl_forced;
/*
 * After the process's first gdr_open that worked, where the library chose its copy routines:
 * NULL when it took tool_impl_forced's (or none was forced, or it does not say: NVIDIA's
 * library), else the line that says why not, in its words: "--impl NAME: the library does not
 * take it: ..." (a name it does not know, a routine of another architecture or one this CPU
 * lacks). tool_gdr_open exits with it (TOOL_EXIT_USAGE): nothing else would be measured.
 * Either way it takes (forgets) the library's reasons so far.
 */
const char *tool_impl_refused(void);
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

/*
 * Why the library's calls in this thread failed since the last call of this (gdr_ext_take_errors,
 * on one line, "; " between its reasons), as ": REASONS", or "" when it did not say or has no
 * such call (NVIDIA's library).
 */
const char *tool_library_reason(void);

/*
 * The data check around a timed copy of size bytes between host and offset of m's buffer (to_gpu:
 * gdr_copy_to_mapping), so that no figure is of a copy that moved the wrong bytes. begin makes
 * the destination differ from the source (the GPU's bytes, or the host's, set to 0xA5); end reads
 * the GPU's bytes with cuMemcpyDtoH, not through the library, and dies unless they equal host's.
 */
void tool_copy_check_begin(const struct tool_mapping *m, size_t offset, void *host, size_t size,
			   int to_gpu);
void tool_copy_check_end(const struct tool_mapping *m, size_t offset, const void *host,
			 size_t size, int to_gpu);

/*
 * The store fence a write through a write-combined mapping needs to leave the CPU, with no
 * library code around it: the raw baselines' (copylat, pplat -r).
 */
static inline void tool_store_fence(void)
{
#if defined(__x86_64__) || defined(__i386__)
	__asm__ volatile("sfence" ::: "memory");
#elif defined(__aarch64__)
	__asm__ volatile("dmb st" ::: "memory");
#elif defined(__powerpc64__)
	__asm__ volatile("sync" ::: "memory");
#else
	__atomic_thread_fence(__ATOMIC_SEQ_CST);
#endif
}

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
 * copylat's iteration rule: counts above 100 round up to a multiple of 100 (with a warning on
 * stderr naming what), and the iterations split into at most 100 buckets.
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

/* ---- Options ---------------------------------------------------------------------------------- */

enum tool_arg {
	TOOL_ARG_FLAG,		/* no argument: *(int *)dest = 1 */
	TOOL_ARG_SIZE,		/* *(size_t *)dest: bytes, with an optional K, M or G (of 1024) */
	TOOL_ARG_COUNT,		/* *(size_t *)dest: an integer from min to max */
	TOOL_ARG_INT,		/* *(int *)dest: an integer from min to max */
	TOOL_ARG_ALLOC,		/* *(enum tool_alloc_kind *)dest: cuMemAlloc or cuMemCreate */
	TOOL_ARG_MAP,		/* *(int *)dest: a gdr_map_flags_t: default, wc, cache or device */
	TOOL_ARG_CHOICE,	/* *(int *)dest: the index of the argument in choices */
	TOOL_ARG_STRING,	/* *(const char **)dest */
	TOOL_ARG_LIST,		/* struct tool_list *dest: each use appends its argument */
};

struct tool_list {
	const char **v;
	size_t n;
};

/* One option of a tool; a tool's table ends with an entry whose key and name are both 0. */
struct tool_option {
	int key;			/* the short option's letter; 0 for a long option only */
	const char *name;		/* the long option, without "--"; NULL for a short one only */
	enum tool_arg arg;
	void *dest;
	long min, max;			/* TOOL_ARG_COUNT, TOOL_ARG_INT */
	const char *const *choices;	/* TOOL_ARG_CHOICE: the names, NULL-terminated */
	const char *usage;		/* its lines of -h ("  -s SIZE   buffer size\n") */
};

struct tool_cli {
	const char *name;		/* "gdrcopy_copybw" */
	const struct tool_option *options;
	/* --impl all: NULL when the tool sweeps (tool_sweep; -h says so), else why it does not */
	const char *no_sweep;
};

/* What every tool takes: --backend, --impl, --csv (tool_csv), --sweep-fd (tool_sweep_fd). */
struct tool_common {
	const char *backend;
	const char *impl;
	int argc;
	char **argv;			/* the arguments as given (getopt reorders argv) */
};

/* The -h lines of the options several tools take alike. */
#define TOOL_DEVICE_USAGE "  -d GPU    GPU id (default 0)\n"
#define TOOL_ALLOC_USAGE \
	"  -a FN     GPU allocator: cuMemAlloc or cuMemCreate (default: cuMemCreate under the " \
	"vulkan backend, else cuMemAlloc)\n"
#define TOOL_MAP_USAGE "  -M TYPE   mapping type: default, wc, cache, device\n"
/* The -M name of a gdr_map_flags_t value ("wc"), or "unknown". */
const char *tool_map_flag_name(int flags);
/*
 * Parse the command line: the tool's options into their dests, the common ones into common
 * (which the library then reads from the environment: GDRCOPY_BACKEND, GDRCOPY_COPY_IMPL).
 * Does not return for -h / --help (usage on stdout, exit 0), an unknown option (getopt's line
 * naming it, then the usage, on stderr), a bad value, a stray argument or --impl all in a tool
 * that does not sweep (one line naming it): each of those exits TOOL_EXIT_USAGE.
 */
void tool_options(const struct tool_cli *cli, int argc, char **argv, struct tool_common *common);
/* 1 when --impl all asks for the per-routine sweep. */
int tool_impl_is_all(const struct tool_common *o);

/* ---- Copy-routine sweep (--impl all) ---------------------------------------------------------- */

/*
 * In a sweep child (--sweep-fd N, added by the parent) the tool writes its results as lines to
 * that fd instead of printing: "impl TO FROM MASK" after gdr_open (MASK: tool_copy_impls), then
 * "row TEST SIZE V1 V2".
 */
extern int tool_sweep_fd;
void tool_sweep_line(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
/*
 * Report which routines the library uses (sweep child: the "impl" line), or warn that a library
 * that does not say (NVIDIA's) may have ignored forced.
 */
void tool_report_impl(gdr_t g, const char *forced);

/*
 * --impl all: run the tool once per routine, and print the results side by side. Each run
 * re-executes /proc/self/exe with the arguments as given (common->argv) minus "--impl all",
 * plus "--impl NAME --sweep-fd N": the library chooses its routines once per process, hence one
 * process per routine. The library's own choice ("auto") runs first and says which routines
 * this CPU runs (GDR_ATTR_EXT_COPY_IMPLS); each of those runs next. Then for each test, one
 * table of v1 (the column named value) by size and routine, with the best routine and the
 * automatic choice's ratio to it (higher_better for bandwidths); --csv prints
 * "impl,test,size,v1,v2" rows under csv_header. Returns 0; after printing, dies (exit 1)
 * when a routine's run failed (its copies moved the wrong data, it crashed), where a routine
 * the library did not run is only said to be skipped.
 */
int tool_sweep(const struct tool_common *common, const char *value, int higher_better,
	       const char *csv_header);

#ifdef __cplusplus
}
#endif

#endif
