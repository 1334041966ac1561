/* SPDX-License-Identifier: MIT */
/*
 * Variants of the public copy calls, for bench_copy_impls: the steps between the dispatcher and
 * gdr_copy_to/from_mapping one at a time, the path as it was before it was made flat, and the
 * alternatives to the flat path, each its own function so that one run compares them side by
 * side with the library's own call. Each has the public call's arguments and result; all but
 * the library's assume the common case (a WC mapping, the process's only type) and leave the
 * rest to the public call.
 */
#ifndef GDR_TESTS_BENCH_PATHS_H
#define GDR_TESTS_BENCH_PATHS_H

#include <stddef.h>

#include "gdrapi.h"

typedef int (*bench_path_to_fn)(gdr_mh_t handle, void *map_d_ptr, const void *h_ptr,
				size_t size);
typedef int (*bench_path_from_fn)(gdr_mh_t handle, void *h_ptr, const void *map_d_ptr,
				  size_t size);

struct bench_path {
	const char *method;	/* in the CSV */
	const char *column;	/* in the report's table */
	bench_path_to_fn to;	/* NULL: not a variant of writes */
	bench_path_from_fn from;	/* NULL: not a variant of reads */
};

/* The variants, in the report's order; *count gets their number. */
const struct bench_path *bench_paths(size_t *count);

#endif
