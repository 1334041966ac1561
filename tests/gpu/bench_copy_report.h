/* SPDX-License-Identifier: MIT */
/*
 * bench_copy_impls' report, inside: the results and what reads them (bench_copy_report.c: the
 * tables, the CSV), and the verdicts on the figures (bench_copy_verdicts.c: the targets, the
 * size classes the figures suggest).
 */
#ifndef GDR_TESTS_BENCH_COPY_REPORT_H
#define GDR_TESTS_BENCH_COPY_REPORT_H

#include <stddef.h>
#include <stdio.h>

#include "bench_copy.h"

/* A routine within this factor of the fastest counts as fastest: the choice stays put in noise. */
#define TIE 1.02
/*
 * A size class keeps one routine while it stays within this factor of the fastest at every size
 * of the class: the medians of small copies move by more than TIE from run to run, and a row
 * per size would follow that noise.
 */
#define CLASS_TIE 1.05
/*
 * A read routine whose read of data the GPU has just written has its median above LATENCY_TIE
 * times the fastest routine's takes an extra round trip in most of those reads: no candidate
 * for the size's class (report_classes).
 */
#define LATENCY_TIE 1.5

/* The result of a method, or NULL. */
const struct bench_result *report_find(int latency, int to_device, int unaligned, size_t n,
				       const char *method);
/* Whether anything was measured there (a run cut short by its time budget leaves gaps). */
int report_measured(int latency, int to_device, int unaligned, size_t n);
/* The result of a routine as the library's choice, or NULL. */
const struct bench_result *report_find_routine(int latency, int to_device, int unaligned,
					       size_t n, const char *routine);
/* Measured, and its data check passed. */
int report_usable(const struct bench_result *r);
/* The fastest raw access with the fence (reads and writes) or, in latency, without. */
const struct bench_result *report_fastest_raw(int latency, int to_device, size_t n);
/* The fastest routine as the library's choice; the current one when within TIE of it. */
const char *report_fastest_routine(const struct bench_info *info, int latency, int to_device,
				   int unaligned, size_t n, const struct bench_result **best_r);
/* Microseconds, as the tables print them (a static buffer per call, a few at once). */
const char *report_us(double v);
/* A table's header: first, cols, then (when info) the routines of a direction, then tail. */
void report_header(FILE *f, const char *first, const char *const *cols, int ncols,
		   const struct bench_info *info, int to_device, const char *const *tail, int ntail);

/* bench_copy_verdicts.c */
/* The size classes the figures suggest for copy.c's table of rows. */
void report_classes(FILE *f, const struct bench_info *info, int to_device);
/* The read and tiny-write targets, judged on this run's medians. */
void report_targets(FILE *f, const struct bench_info *info);

#endif
