/* SPDX-License-Identifier: MIT */
/*
 * bench_copy_impls' insides, shared by the program (bench_copy_impls.c: the methods and sizes,
 * main) and its measurements (bench_copy_measure.c: timing in rounds, checking the data).
 */
#ifndef GDR_TESTS_BENCH_COPY_RUN_H
#define GDR_TESTS_BENCH_COPY_RUN_H

#include <stddef.h>
#include <stdint.h>

#include "bench_copy.h"
#include "bench_paths.h"
#include "copy_impl.h"
#include "gdrapi.h"
#include "gpucommon.h"

#define MAX_ROUNDS 200
#define MAX_METHODS 64
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
	K_GDRCOPY26_CALL,	/* GDRCopy 2.6's public call (gdrcopy26_copy.h) on bench.g26_mh */
	K_GDRCOPY26_CHECKED_CALL,	/* the same with its kernels' checks (gdrcopy26_copy.h) */
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

/* The run's state: the mapping, the buffers, the settings and the tables of routines. */
struct bench_state {
	gdr_t g;
	gdr_mh_t mh;
	gdr_mh_t g26_mh;	/* GDRCopy 2.6's handle of the same mapping, for its public calls */
	gdr_mapping_type_t type;
	uint8_t *map;
	CUdeviceptr dptr;
	uint8_t *host_buf, *src_buf, *check_buf;	/* pinned (cuMemAllocHost) */
	unsigned int cpu;
	int rounds, lat_rounds, have_gdrcopy26, have_movdir64b;
	unsigned int host_shift;	/* -H: added to the host copies' offset in their buffer */
	int inflight_fence;	/* the library's own choice: copies fence themselves */
	double bucket_us, deadline_ns;
	struct gdr_copy_table auto_t, nofence_t;
	/* [0]: loads, [1]: stores: the routines, and tables that use each at every size. */
	int nroutines[2];
	const struct gdr_copy_impl *routines[2][BENCH_MAX_ROUTINES];
	struct gdr_copy_table forced[2][BENCH_MAX_ROUTINES];
};
extern struct bench_state bench;

/* bench_copy_measure.c */
int run_throughput(struct scenario *sc);
int run_latency(struct scenario *sc);

#endif
