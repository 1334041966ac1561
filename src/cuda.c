/* SPDX-License-Identifier: MIT */
#include <dlfcn.h>
#include <errno.h>
#include <pthread.h>
#include <stdbool.h>
#include <stdio.h>
#include <string.h>

#include "cuda_driver.h"
#include "gdr.h"
#include "log.h"

/*
 * Protects everything below. Taken by gdr_cuda_load and gdr_cuda_acquire only, with no other
 * library lock inside; g->lock and the vulkan backend's vk_lock may be held outside it.
 */
static pthread_mutex_t cuda_lock = PTHREAD_MUTEX_INITIALIZER;
/* libcuda, once the table is filled from it; kept until the process exits. */
static void *cuda_lib;
static struct gdr_cuda cuda_table;
/* cuInit(0) succeeded in this process. */
static bool cuda_initialised;
/*
 * This process was forked from one that had initialised CUDA. CUDA does not survive fork:
 * NVIDIA's driver refuses (or worse) every call in the child, cuInit included, which is how
 * gdr_cuda_acquire finds out (the simulated driver accepts it).
 */
static bool cuda_forked;
static pthread_once_t fork_once = PTHREAD_ONCE_INIT;

/*
 * The child runs alone here. Loading CUDA calls into the driver with cuda_lock held, so fork
 * does not wait for it; a lock taken by a thread that is gone is made anew instead.
 */
static void fork_child(void)
{
	pthread_mutex_init(&cuda_lock, NULL);
	if (cuda_initialised) {
		cuda_initialised = false;
		cuda_forked = true;
	}
}

static void fork_register(void)
{
	pthread_atfork(NULL, NULL, fork_child);
}

struct cuda_entry {
	const char *name;
	int version;
	size_t offset;
};

static const struct cuda_entry cuda_entries[] = {
#define GDR_CUDA_ENTRY(name, version) { #name, version, offsetof(struct gdr_cuda, name) },
	GDR_CUDA_ENTRY_POINTS(GDR_CUDA_ENTRY)
#undef GDR_CUDA_ENTRY
};

static void *cuda_open_library(struct gdr_why *why)
{
	static const char *const names[] = { "libcuda.so.1", "libcuda.so" };
	char first_error[160] = "";

	for (size_t i = 0; i < sizeof(names) / sizeof(names[0]); i++) {
		void *lib = dlopen(names[i], RTLD_NOW | RTLD_LOCAL);
		const char *err;

		if (lib)
			return lib;
		err = dlerror();
		if (i == 0)
			snprintf(first_error, sizeof(first_error), "%s", err ? err : "not found");
	}
	gdr_why_set(why, "libcuda.so.1 not found: install the NVIDIA driver (%s)", first_error);
	return NULL;
}

int gdr_cuda_proc(const struct gdr_cuda *cuda, const char *name, int version, void **pfn)
{
	CUdriverProcAddressQueryResult status = CU_GET_PROC_ADDRESS_SYMBOL_NOT_FOUND;
	CUresult res;

	*pfn = NULL;
	res = cuda->cuGetProcAddress(name, pfn, version, CU_GET_PROC_ADDRESS_DEFAULT, &status);
	if (res != CUDA_SUCCESS || status != CU_GET_PROC_ADDRESS_SUCCESS || !*pfn) {
		gdr_dbg("cuGetProcAddress(%s, %d): result %d, status %d", name, version, (int)res,
			(int)status);
		*pfn = NULL;
		return ENOSYS;
	}
	return 0;
}

/* Fill the table from lib; 0, or an errno with why filled. Calls no CUDA function but lookups. */
static int cuda_resolve(void *lib, struct gdr_cuda *t, struct gdr_why *why)
{
	PFN_cuDriverGetVersion_v2020 get_version;
	CUresult res;

	get_version = (PFN_cuDriverGetVersion_v2020)dlsym(lib, "cuDriverGetVersion");
	if (!get_version) {
		gdr_why_set(why, "libcuda has no cuDriverGetVersion: not an NVIDIA driver library");
		return ENOSYS;
	}
	res = get_version(&t->driver_version);
	if (res != CUDA_SUCCESS) {
		gdr_why_set(why, "cuDriverGetVersion failed (CUresult %d): reinstall the NVIDIA driver",
			    (int)res);
		return EIO;
	}
	if (t->driver_version < GDR_CUDA_MIN_DRIVER_VERSION) {
		gdr_why_set(why, "CUDA driver %d.%d is too old: 12.0 or newer is needed",
			    gdr_cuda_version_major(t->driver_version),
			    gdr_cuda_version_minor(t->driver_version));
		return ENOTSUP;
	}
	t->cuGetProcAddress = (PFN_cuGetProcAddress_v12000)dlsym(lib, "cuGetProcAddress_v2");
	if (!t->cuGetProcAddress) {
		gdr_why_set(why, "libcuda has no cuGetProcAddress_v2: driver too old (need CUDA 12.0+)");
		return ENOSYS;
	}
	for (size_t i = 0; i < sizeof(cuda_entries) / sizeof(cuda_entries[0]); i++) {
		const struct cuda_entry *e = &cuda_entries[i];
		void *pfn;

		if (gdr_cuda_proc(t, e->name, e->version, &pfn)) {
			gdr_why_set(why, "cuGetProcAddress(%s) failed: driver too old (CUDA %d.%d)",
				    e->name, gdr_cuda_version_major(t->driver_version),
				    gdr_cuda_version_minor(t->driver_version));
			return ENOSYS;
		}
		memcpy((char *)t + e->offset, &pfn, sizeof(pfn));
	}
	return 0;
}

/* The table, loading libcuda if this is the first call; NULL with why. Caller holds cuda_lock. */
static const struct gdr_cuda *cuda_load_locked(struct gdr_why *why)
{
	struct gdr_cuda t;
	void *lib;

	if (cuda_lib)
		return &cuda_table;
	lib = cuda_open_library(why);
	if (!lib)
		return NULL;
	memset(&t, 0, sizeof(t));
	if (cuda_resolve(lib, &t, why)) {
		/* No CUDA call has been made: nothing of the library's is left to run at unload. */
		dlclose(lib);
		return NULL;
	}
	cuda_table = t;
	cuda_lib = lib;
	gdr_dbg("CUDA driver %d.%d loaded", gdr_cuda_version_major(t.driver_version),
		gdr_cuda_version_minor(t.driver_version));
	return &cuda_table;
}

const struct gdr_cuda *gdr_cuda_load(struct gdr_why *why)
{
	const struct gdr_cuda *cuda;

	pthread_once(&fork_once, fork_register);
	pthread_mutex_lock(&cuda_lock);
	cuda = cuda_load_locked(why);
	pthread_mutex_unlock(&cuda_lock);
	return cuda;
}

/* cuInit(0), once; false with why filled when it fails. Caller holds cuda_lock. */
static bool cuda_init_locked(struct gdr_why *why)
{
	char err[128];
	CUresult res;

	if (cuda_initialised)
		return true;
	res = cuda_table.cuInit(0);
	if (res == CUDA_SUCCESS) {
		cuda_initialised = true;
		cuda_forked = false;
		return true;
	}
	gdr_cuda_strerror(&cuda_table, res, err, sizeof(err));
	if (cuda_forked)
		gdr_why_set(why, "CUDA cannot be used in this process: it was forked from one that "
			    "had initialised CUDA (cuInit(0) here: %s); fork before the first CUDA "
			    "call and gdr_open, or exec (multiprocessing's \"spawn\")", err);
	else
		gdr_why_set(why, "cuInit(0) failed: %s", err);
	return false;
}

const struct gdr_cuda *gdr_cuda_acquire(struct gdr_why *why)
{
	const struct gdr_cuda *cuda;

	pthread_once(&fork_once, fork_register);
	pthread_mutex_lock(&cuda_lock);
	cuda = cuda_load_locked(why);
	if (cuda && !cuda_init_locked(why))
		cuda = NULL;
	pthread_mutex_unlock(&cuda_lock);
	return cuda;
}

const char *gdr_cuda_strerror(const struct gdr_cuda *cuda, CUresult res, char *buf, size_t len)
{
	const char *name = NULL, *str = NULL;

	if (cuda->cuGetErrorName(res, &name) != CUDA_SUCCESS || !name)
		name = NULL;
	if (cuda->cuGetErrorString(res, &str) != CUDA_SUCCESS || !str)
		str = NULL;
	if (name)
		snprintf(buf, len, "%s (%s)", name, str ? str : "no description");
	else
		snprintf(buf, len, "CUresult %d", (int)res);
	return buf;
}

int gdr_cuda_errno(CUresult res)
{
	switch (res) {
	case CUDA_SUCCESS:
		return 0;
	case CUDA_ERROR_INVALID_VALUE:
	case CUDA_ERROR_NOT_FOUND:
	case CUDA_ERROR_INVALID_HANDLE:
		return EINVAL;
	case CUDA_ERROR_NOT_SUPPORTED:
		return ENOTSUP;
	case CUDA_ERROR_OUT_OF_MEMORY:
		return ENOMEM;
	case CUDA_ERROR_NOT_PERMITTED:
		return EPERM;
	case CUDA_ERROR_INVALID_DEVICE:
	case CUDA_ERROR_NO_DEVICE:
		return ENODEV;
	default:
		return EIO;
	}
}

CUresult gdr_cuda_ctx_enter(const struct gdr_cuda *cuda, int ordinal,
			    struct gdr_cuda_ctx_scope *scope)
{
	CUcontext current = NULL, primary;
	CUresult res;

	scope->retained = false;
	res = cuda->cuCtxGetCurrent(&current);
	if (res != CUDA_SUCCESS)
		return res;
	if (current)
		return CUDA_SUCCESS;
	res = cuda->cuDeviceGet(&scope->device, ordinal);
	if (res != CUDA_SUCCESS)
		return res;
	res = cuda->cuDevicePrimaryCtxRetain(&primary, scope->device);
	if (res != CUDA_SUCCESS)
		return res;
	res = cuda->cuCtxSetCurrent(primary);
	if (res != CUDA_SUCCESS) {
		cuda->cuDevicePrimaryCtxRelease(scope->device);
		return res;
	}
	scope->retained = true;
	return CUDA_SUCCESS;
}

void gdr_cuda_ctx_leave(const struct gdr_cuda *cuda, struct gdr_cuda_ctx_scope *scope)
{
	if (!scope->retained)
		return;
	cuda->cuCtxSetCurrent(NULL);
	cuda->cuDevicePrimaryCtxRelease(scope->device);
	scope->retained = false;
}

void gdr_cuda_ctx_hold(const struct gdr_cuda *cuda, const struct gdr_cuda_ctx_scope *scope,
		       int ordinal, struct gdr_cuda_held *held)
{
	CUcontext primary;

	if (!scope->retained || ordinal < 0 || ordinal >= 64 ||
	    (held->ordinals & (1ULL << ordinal)))
		return;
	/* A failure keeps nothing: the calls go on paying for the context, as before. */
	if (cuda->cuDevicePrimaryCtxRetain(&primary, scope->device) != CUDA_SUCCESS)
		return;
	held->device[ordinal] = scope->device;
	held->ordinals |= 1ULL << ordinal;
}

void gdr_cuda_ctx_release_held(const struct gdr_cuda *cuda, struct gdr_cuda_held *held)
{
	for (int i = 0; i < 64; i++)
		if (held->ordinals & (1ULL << i))
			cuda->cuDevicePrimaryCtxRelease(held->device[i]);
	held->ordinals = 0;
}
