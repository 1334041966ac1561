/* SPDX-License-Identifier: MIT */
/* One routine at every size of a direction (bench_forced.h). */
#include "bench_forced.h"

static gdr_copy_fn routine_fn(const struct gdr_copy_impl *impl, int to_device)
{
	return to_device ? impl->store : impl->load;
}

int bench_forced_tables(const struct gdr_copy_table *base, int to_device, unsigned int cpu_flags,
			struct gdr_copy_table *tables, const struct gdr_copy_impl **impls, int max)
{
	const struct gdr_copy_impl *const *all;
	size_t count;
	int n = 0;

	all = gdr_copy_impls(&count);
	for (size_t i = 0; i < count && n < max; i++) {
		gdr_copy_fn fn = routine_fn(all[i], to_device);
		struct gdr_copy_dir *d = to_device ? &tables[n].to : &tables[n].from;
		int seen = 0;

		if (!fn || gdr_copy_impl_missing(all[i], cpu_flags))
			continue;
		for (int j = 0; j < n; j++)
			seen |= routine_fn(impls[j], to_device) == fn;
		if (seen)
			continue;
		tables[n] = *base;
		for (int c = 0; c < d->nclasses; c++) {
			d->impl[c] = all[i];
			d->fn[c] = fn;
		}
		if (to_device && all[i]->id != GDR_COPY_IMPL_GENERIC)
			tables[n].tiny_to_max = 0;
		impls[n++] = all[i];
	}
	return n;
}
