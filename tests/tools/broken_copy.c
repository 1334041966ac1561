/* SPDX-License-Identifier: MIT */
/*
 * A copy routine gone wrong, for the tools' tests (LD_PRELOAD; never installed): the tools must
 * notice that a copy they timed moved the wrong bytes. GDRCOPY_TEST_BROKEN_COPY says how:
 *   to          gdr_copy_to_mapping copies nothing
 *   from        gdr_copy_from_mapping copies nothing
 *   to_at_4     gdr_copy_to_mapping of more than 4 KiB copies only its last 64 bytes when the
 *               destination is 4 bytes into a page and the source 4 bytes into 16: a bug that
 *               only one alignment shows, which gdrcopy_sanity's offset checks must catch
 *   to_forced   gdr_copy_to_mapping copies nothing when GDRCOPY_COPY_IMPL forces a routine: one
 *               routine gone wrong, where the library's own choice works, as --impl all sees it
 * Anything else (or unset): the library's copy.
 */
#include <dlfcn.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "gdrapi.h"

typedef int (*copy_fn)(gdr_mh_t handle, void *dst, const void *src, size_t size);

static int broken(const char *how)
{
	const char *v = getenv("GDRCOPY_TEST_BROKEN_COPY");

	return v && !strcmp(v, how);
}

static copy_fn next(const char *name)
{
	copy_fn fn = (copy_fn)dlsym(RTLD_NEXT, name);

	if (!fn)
		abort();	/* no libgdrapi behind the preload: the test is set up wrongly */
	return fn;
}

int gdr_copy_to_mapping(gdr_mh_t handle, void *map_d_ptr, const void *h_ptr, size_t size)
{
	if (broken("to") || (broken("to_forced") && getenv("GDRCOPY_COPY_IMPL")))
		return 0;
	if (broken("to_at_4") && ((uintptr_t)map_d_ptr & 4095) == 4 && ((uintptr_t)h_ptr & 15) == 4 &&
	    size > 4096)
		return next("gdr_copy_to_mapping")(handle, (char *)map_d_ptr + size - 64,
						   (const char *)h_ptr + size - 64, 64);
	return next("gdr_copy_to_mapping")(handle, map_d_ptr, h_ptr, size);
}

int gdr_copy_from_mapping(gdr_mh_t handle, void *h_ptr, const void *map_d_ptr, size_t size)
{
	if (broken("from"))
		return 0;
	return next("gdr_copy_from_mapping")(handle, h_ptr, map_d_ptr, size);
}
