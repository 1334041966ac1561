/* SPDX-License-Identifier: MIT */
/*
 * Copy tables that use one routine at every size of a direction, for the benchmarks that time
 * each routine as the library's choice (bench_copy_impls, bench_window). They link the static
 * library, whose table internals (copy_impl.h) the shared one does not export.
 */
#ifndef GDR_TESTS_BENCH_FORCED_H
#define GDR_TESTS_BENCH_FORCED_H

#include "copy_impl.h"

/*
 * One table per routine of a direction (to_device: stores, else loads) that a CPU with
 * cpu_flags runs: base, with that routine in every size class of the direction (and, for
 * stores, tiny stores inlined only by the generic routine). Routines that share their function
 * (the variants share stores) count once. Unlike GDRCOPY_COPY_IMPL, also below a routine's
 * load_min: the point is to see why. Fills at most max of tables[] and impls[]; returns how many.
 */
int bench_forced_tables(const struct gdr_copy_table *base, int to_device, unsigned int cpu_flags,
			struct gdr_copy_table *tables, const struct gdr_copy_impl **impls, int max);

#endif
