/* SPDX-License-Identifier: MIT */
#include <errno.h>
#include <pthread.h>
#include <string.h>

#include "testcuda.h"

/* Filled once under lock, then only read. */
static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
static struct testcuda table;
static int filled;

/* Look name up at version into *pfn; 0, or ENOSYS with why filled. */
static int lookup(const struct gdr_cuda *lib, const char *name, int version, void *pfn,
		  struct gdr_why *why)
{
	void *p;

	if (gdr_cuda_proc(lib, name, version, &p)) {
		gdr_why_set(why, "cuGetProcAddress(%s) failed: the test needs it", name);
		return ENOSYS;
	}
	memcpy(pfn, &p, sizeof(p));
	return 0;
}

const struct testcuda *testcuda_acquire(struct gdr_why *why)
{
	const struct gdr_cuda *lib = gdr_cuda_acquire(why);
	struct testcuda t = { .lib = lib };
	const struct testcuda *ret = NULL;

	if (!lib)
		return NULL;
	pthread_mutex_lock(&lock);
	if (filled) {
		ret = &table;
		goto out_unlock;
	}
	t.driver_version = lib->driver_version;
#define TESTCUDA_LIB(name, version) t.name = lib->name;
	GDR_CUDA_ENTRY_POINTS(TESTCUDA_LIB)
#undef TESTCUDA_LIB
#define TESTCUDA_LOOKUP(name, version) \
	if (lookup(lib, #name, version, &t.name, why)) \
		goto out_unlock;
	TESTCUDA_ENTRY_POINTS(TESTCUDA_LOOKUP)
#undef TESTCUDA_LOOKUP
	table = t;
	filled = 1;
	ret = &table;
out_unlock:
	pthread_mutex_unlock(&lock);
	return ret;
}
