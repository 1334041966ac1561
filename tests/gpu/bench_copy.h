/* SPDX-License-Identifier: MIT */
/*
 * bench_copy_impls: what its runner (bench_copy_impls.c) measures and its report
 * (bench_copy_report.c) prints.
 *
 * Method names, as the CSV has them:
 *   library            gdr_copy_to/from_mapping with the automatic choice
 *   library:ROUTINE    the same with ROUTINE at every size (the library's choice if it were it)
 *   library_nofence    reads through gdr_copy_from_mapping with no fence after them
 *   library_fenced     the library where membarrier is missing: each copy fences itself
 *   path_*             variants of the public call (bench_paths.h), up to 4 KiB
 *   dispatcher         gdr_copy_to/from_mapping_type: the dispatcher, without the handle lookup
 *   routine            the automatic choice's routine called directly, then an sfence
 *   routine_nofence    the same without the sfence
 *   gdrcopy26_call     GDRCopy 2.6's public call (gdrcopy26_copy.h): its checks, the type and
 *                      mixing tests, then its strategy and fence; what a GDRCopy user calls
 *   gdrcopy26          GDRCopy 2.6's strategy alone (gdrcopy26_copy.c), then its sfence;
 *                      gdrcopy26_movdir64b with its MOVDIR64B stores
 *   raw0 raw16 raw32 raw64   raw accesses of that width (bench_raw.h; 0: one plain access),
 *                      each copy followed by an sfence; raw_nofence: raw32 (else raw16, else
 *                      raw0) without it
 *   cumemcpy           cuMemcpyDtoH / cuMemcpyHtoD
 *   timer              (latency) the timing around nothing
 */
#ifndef GDR_TESTS_BENCH_COPY_H
#define GDR_TESTS_BENCH_COPY_H

#include <stddef.h>
#include <stdio.h>

#define BENCH_MAX_ROUTINES 16
#define BENCH_MAX_SIZES 32

struct bench_result {
	int latency;		/* 0: back-to-back calls; 1: one read of data the GPU just wrote */
	int to_device;
	int unaligned;		/* device offset +13, host offset +3 */
	size_t n;
	char method[48];
	double median, p25, p75, min;	/* microseconds per call */
	/*
	 * Round by round: the median over the rounds of this method's time over GDRCopy 2.6's
	 * public call's (per_round_call), its strategy's (per_round_strategy) and its public call
	 * with its kernels' checks' (per_round_checked) in the same round, which a machine whose
	 * speed drifts during the run moves less than a ratio of medians; 0 where either was not
	 * measured.
	 */
	double per_round_call, per_round_strategy, per_round_checked;
	int rounds;
	long count;		/* calls per round */
	char failed[160];	/* the first data check that failed, or "" */
};

/* What the report needs to know besides the results. */
struct bench_info {
	const char *title;		/* the first line */
	const char *command;		/* the command line */
	const char *setup;		/* a paragraph: machine, mapping, method */
	const char *choice;		/* the automatic choice, as the library logs it */
	/* Per direction (0: reads, 1: writes): the routines measured, and the automatic choice's. */
	int nroutines[2];
	const char *routines[2][BENCH_MAX_ROUTINES];
	size_t sizes[BENCH_MAX_SIZES], unaligned_sizes[BENCH_MAX_SIZES], latency_sizes[BENCH_MAX_SIZES];
	int nsizes, nunaligned, nlatency;
	const char *(*current)(int to_device, size_t n);	/* the automatic choice's routine */
	char stopped[160];		/* why the run stopped early, or "" */
};

/* Record one result (copied). */
void bench_report_add(const struct bench_result *r);

/* Print every table as markdown to md and, when csv is not NULL, every result to csv. */
void bench_report_print(const struct bench_info *info, FILE *md, FILE *csv);

#endif
