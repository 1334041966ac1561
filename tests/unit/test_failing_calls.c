/* SPDX-License-Identifier: MIT */
/*
 * Every failing path unwinds, and a failure changes nothing. For each public call and each
 * backend the simulated GPU runs (dmabuf, vulkan), the Nth call the library makes into libc or
 * the CUDA driver fails, for N = 1, 2, ... until the public call makes fewer than N. After each
 * failure: the call returned an error and logged why (gdr_ext_take_errors; a failed CUDA call
 * by the driver's error), nothing leaked (descriptors, shared mappings, the library's calloc'd
 * blocks, the simulator's allocations, handle references, mappings, context references and open
 * dma-buf exports) and nothing else changed; the same call then succeeds, and data written
 * through the mapping reaches the GPU memory and back. gdr_close always frees, so a gdr_close that fails must leave nothing either.
 *
 * The failures come from this program: it defines the libc functions the library calls (they
 * come before libc's for every object) and the CUDA driver's (they come before the simulator's,
 * which this program links, in the simulator's own table of entry points), and fails only calls
 * whose return address is in libgdrapi. Calls that only release (close, cuMemRelease,
 * cuDevicePrimaryCtxRelease, cuCtxSetCurrent(NULL)) and the error-string lookups never fail:
 * an unwind whose undo fails too has nothing left to undo with. Vulkan's calls go through the
 * loader's tables and are not failed here (tests/sim/vulkan_hostile answers as broken drivers).
 */
#include <dlfcn.h>
#include <errno.h>
#include <fcntl.h>
#include <link.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cuda.h>

#include "cuda_vmm.h"
#include "gdrapi.h"
#include "gdrapi_ext.h"
#include "harness.h"
#include "simcuda.h"
#include "simcuda_dmabuf.h"

#define MiB (1024UL * 1024)
#define PIN_SIZE (256 * 1024UL)
#define PIN_OFFSET (128 * 1024UL)	/* the pin starts here in its allocation: not at its base */

/* ASan brings its own calloc and free: the library's blocks are then LeakSanitizer's to count. */
#if defined(__SANITIZE_ADDRESS__)
#define LIBRARY_BLOCKS_UNCOUNTED 1
#elif defined(__has_feature)
#if __has_feature(address_sanitizer)
#define LIBRARY_BLOCKS_UNCOUNTED 1
#endif
#endif

/* ---- failing the library's calls ---- */

/* libgdrapi's code, from its program headers: calls returning there are the library's. */
static uintptr_t library_lo, library_hi;

static int find_library(struct dl_phdr_info *info, size_t size, void *data)
{
	(void)size, (void)data;
	if (!strstr(info->dlpi_name, "libgdrapi"))
		return 0;
	for (int i = 0; i < info->dlpi_phnum; i++) {
		const ElfW(Phdr) *ph = &info->dlpi_phdr[i];
		uintptr_t lo = info->dlpi_addr + ph->p_vaddr, hi = lo + ph->p_memsz;

		if (ph->p_type != PT_LOAD || !(ph->p_flags & PF_X))
			continue;
		if (!library_lo || lo < library_lo)
			library_lo = lo;
		if (hi > library_hi)
			library_hi = hi;
	}
	return 1;
}

static bool from_library(const void *return_address)
{
	uintptr_t a = (uintptr_t)return_address;

	return a >= library_lo && a < library_hi;
}

/* Only the thread calling the library counts and fails its calls. */
static struct {
	bool armed;
	long calls;		/* the library's calls seen since armed */
	long fail_at;		/* the one to fail, counted from 1 */
	const char *failed;	/* its name, once failed */
} inj;

static bool fail_call(const char *name, const void *return_address)
{
	if (!inj.armed || !from_library(return_address))
		return false;
	if (++inj.calls != inj.fail_at)
		return false;
	inj.failed = name;
	return true;
}

#define FAIL_HERE(name) fail_call(name, __builtin_return_address(0))

static void *next_symbol(const char *name)
{
	void *p = dlsym(RTLD_NEXT, name);

	if (!p) {
		fprintf(stderr, "no %s after this program: %s\n", name, dlerror());
		abort();
	}
	return p;
}

/* The next definition of this function; name is expanded first, as cuda.h renames calls. */
#define STRINGIFY_(x) #x
#define STRINGIFY(x) STRINGIFY_(x)
#define REAL(fn) ({ \
	static __typeof__(&fn) real_; \
	if (!real_) \
		real_ = (__typeof__(&fn))next_symbol(STRINGIFY(fn)); \
	real_; \
})

#ifndef LIBRARY_BLOCKS_UNCOUNTED
extern void *__libc_calloc(size_t n, size_t size);
extern void __libc_free(void *p);

/* The blocks the library calloc'd and has not freed. */
#define MAX_BLOCKS 4096
static void *blocks[MAX_BLOCKS];
static int nblocks;

void *calloc(size_t n, size_t size)
{
	void *p;

	if (FAIL_HERE("calloc")) {
		errno = ENOMEM;
		return NULL;
	}
	p = __libc_calloc(n, size);
	if (p && from_library(__builtin_return_address(0)) && nblocks < MAX_BLOCKS)
		blocks[nblocks++] = p;
	return p;
}

void free(void *p)
{
	if (p && from_library(__builtin_return_address(0))) {
		for (int i = 0; i < nblocks; i++) {
			if (blocks[i] == p) {
				blocks[i] = blocks[--nblocks];
				break;
			}
		}
	}
	__libc_free(p);
}
#endif

int open(const char *path, int flags, ...)
{
	mode_t mode = 0;
	va_list ap;

	if ((flags & O_CREAT) || (flags & O_TMPFILE) == O_TMPFILE) {
		va_start(ap, flags);
		mode = va_arg(ap, mode_t);
		va_end(ap);
	}
	if (FAIL_HERE("open")) {
		errno = EMFILE;
		return -1;
	}
	return REAL(open)(path, flags, mode);
}

int fcntl(int fd, int cmd, ...)
{
	va_list ap;
	long arg;

	va_start(ap, cmd);
	arg = va_arg(ap, long);
	va_end(ap);
	if (FAIL_HERE("fcntl")) {
		errno = cmd == F_DUPFD || cmd == F_DUPFD_CLOEXEC ? EMFILE : EBADF;
		return -1;
	}
	return REAL(fcntl)(fd, cmd, arg);
}

int fstat(int fd, struct stat *st)
{
	if (FAIL_HERE("fstat")) {
		errno = EIO;
		return -1;
	}
	return REAL(fstat)(fd, st);
}

void *mmap(void *addr, size_t len, int prot, int flags, int fd, off_t offset)
{
	if (FAIL_HERE("mmap")) {
		errno = ENOMEM;
		return MAP_FAILED;
	}
	return REAL(mmap)(addr, len, prot, flags, fd, offset);
}

/* What munmap fails with when it would split a mapping past vm.max_map_count. */
int munmap(void *addr, size_t len)
{
	if (FAIL_HERE("munmap")) {
		errno = ENOMEM;
		return -1;
	}
	return REAL(munmap)(addr, len);
}

int madvise(void *addr, size_t len, int advice)
{
	if (FAIL_HERE("madvise")) {
		errno = ENOMEM;
		return -1;
	}
	return REAL(madvise)(addr, len, advice);
}

/* A CUDA call the library makes: fails as a driver out of memory would. */
#define CUDA_FAIL_HERE(name) do { \
	if (FAIL_HERE(name)) \
		return CUDA_ERROR_OUT_OF_MEMORY; \
} while (0)

CUresult CUDAAPI cuInit(unsigned int flags)
{
	CUDA_FAIL_HERE("cuInit");
	return REAL(cuInit)(flags);
}

CUresult CUDAAPI cuDeviceGet(CUdevice *dev, int ordinal)
{
	CUDA_FAIL_HERE("cuDeviceGet");
	return REAL(cuDeviceGet)(dev, ordinal);
}

CUresult CUDAAPI cuDeviceGetCount(int *count)
{
	CUDA_FAIL_HERE("cuDeviceGetCount");
	return REAL(cuDeviceGetCount)(count);
}

CUresult CUDAAPI cuDeviceGetUuid(CUuuid *uuid, CUdevice dev)
{
	CUDA_FAIL_HERE("cuDeviceGetUuid");
	return REAL(cuDeviceGetUuid)(uuid, dev);
}

CUresult CUDAAPI cuDeviceGetAttribute(int *v, CUdevice_attribute attr, CUdevice dev)
{
	CUDA_FAIL_HERE("cuDeviceGetAttribute");
	return REAL(cuDeviceGetAttribute)(v, attr, dev);
}

CUresult CUDAAPI cuDevicePrimaryCtxRetain(CUcontext *ctx, CUdevice dev)
{
	CUDA_FAIL_HERE("cuDevicePrimaryCtxRetain");
	return REAL(cuDevicePrimaryCtxRetain)(ctx, dev);
}

CUresult CUDAAPI cuCtxGetCurrent(CUcontext *ctx)
{
	CUDA_FAIL_HERE("cuCtxGetCurrent");
	return REAL(cuCtxGetCurrent)(ctx);
}

CUresult CUDAAPI cuCtxSetCurrent(CUcontext ctx)
{
	if (ctx)
		CUDA_FAIL_HERE("cuCtxSetCurrent");
	return REAL(cuCtxSetCurrent)(ctx);
}

CUresult CUDAAPI cuPointerGetAttribute(void *data, CUpointer_attribute attr, CUdeviceptr p)
{
	CUDA_FAIL_HERE("cuPointerGetAttribute");
	return REAL(cuPointerGetAttribute)(data, attr, p);
}

CUresult CUDAAPI cuMemGetAddressRange(CUdeviceptr *base, size_t *size, CUdeviceptr p)
{
	CUDA_FAIL_HERE("cuMemGetAddressRange");
	return REAL(cuMemGetAddressRange)(base, size, p);
}

CUresult CUDAAPI cuMemRetainAllocationHandle(CUmemGenericAllocationHandle *h, void *addr)
{
	CUDA_FAIL_HERE("cuMemRetainAllocationHandle");
	return REAL(cuMemRetainAllocationHandle)(h, addr);
}

CUresult CUDAAPI cuMemExportToShareableHandle(void *shareable, CUmemGenericAllocationHandle h,
					      CUmemAllocationHandleType type,
					      unsigned long long flags)
{
	CUDA_FAIL_HERE("cuMemExportToShareableHandle");
	return REAL(cuMemExportToShareableHandle)(shareable, h, type, flags);
}

CUresult CUDAAPI cuMemGetAllocationPropertiesFromHandle(CUmemAllocationProp *prop,
							 CUmemGenericAllocationHandle h)
{
	CUDA_FAIL_HERE("cuMemGetAllocationPropertiesFromHandle");
	return REAL(cuMemGetAllocationPropertiesFromHandle)(prop, h);
}

CUresult CUDAAPI cuMemGetHandleForAddressRange(void *handle, CUdeviceptr p, size_t size,
					       CUmemRangeHandleType type,
					       unsigned long long flags)
{
	CUDA_FAIL_HERE("cuMemGetHandleForAddressRange");
	return REAL(cuMemGetHandleForAddressRange)(handle, p, size, type, flags);
}

/* ---- what a failure must leave as it was ---- */

/* Shared mappings: GPU memory, the simulator's and the library's mappings of it. */
static int shared_mapping_count(void)
{
	FILE *f = fopen("/proc/self/maps", "r");
	char line[512], perms[8];
	int n = 0;

	if (!f)
		return -1;
	while (fgets(line, sizeof(line), f))
		if (sscanf(line, "%*s %7s", perms) == 1 && perms[3] == 's')
			n++;
	fclose(f);
	return n;
}

struct mark {
	int fds, shared_maps, blocks;
	struct simcuda_counters c;
	long exports_open;
};

static void mark_take(struct mark *m)
{
	struct simcuda_dmabuf_counters d;

	m->fds = test_fd_count();
	m->shared_maps = shared_mapping_count();
#ifndef LIBRARY_BLOCKS_UNCOUNTED
	m->blocks = nblocks;
#else
	m->blocks = 0;
#endif
	simcuda_get_counters(&m->c);
	simcuda_dmabuf_get_counters(&d);
	m->exports_open = d.open;
}

/* Whether now is as before; says what differs. */
static bool mark_same(const struct mark *before, const char *what)
{
	struct mark now;

	mark_take(&now);
#define SAME(field) do { \
	if (now.field != before->field) { \
		test_fail("%s: %s was %ld, is %ld", what, #field, (long)before->field, \
			  (long)now.field); \
		return false; \
	} \
} while (0)
	SAME(fds);
	SAME(shared_maps);
	SAME(blocks);
	SAME(c.allocations);
	SAME(c.handle_refs);
	SAME(c.mappings);
	SAME(c.primary_ctx_refs);
	SAME(exports_open);
#undef SAME
	return true;
}

/* ---- the calls under test ---- */

/* The buffer's device pointer and how far the library has got with it. */
static struct {
	CUdeviceptr dptr;	/* the pin's first byte, host-addressable in the simulator */
	gdr_t g;
	gdr_mh_t mh;
	void *map;		/* the mapping, from info.va */
	uint64_t va;		/* info.va */
	bool pinned, mapped;
} s;

enum stage { CLOSED, OPENED, PINNED, MAPPED };

static int do_open(void)
{
	s.g = gdr_open();
	return s.g ? 0 : ENODEV;
}

static int do_pin(void)
{
	gdr_info_v2_t info;
	int ret = gdr_pin_buffer_v2(s.g, s.dptr, PIN_SIZE, 0, &s.mh);

	if (ret)
		return ret;
	s.pinned = true;
	ret = gdr_get_info_v2(s.g, s.mh, &info);
	s.va = info.va;
	return ret;
}

static int do_map(void)
{
	int ret = gdr_map(s.g, s.mh, &s.map, PIN_SIZE);

	s.mapped = !ret;
	return ret;
}

static int do_unmap(void)
{
	int ret = gdr_unmap(s.g, s.mh, s.map, PIN_SIZE);

	s.mapped = ret != 0;
	return ret;
}

static int do_unpin(void)
{
	int ret = gdr_unpin_buffer(s.g, s.mh);

	if (!ret)
		s.pinned = s.mapped = false;
	return ret;
}

/* gdr_close always frees, whatever it returns. */
static int do_close(void)
{
	int ret = gdr_close(s.g);

	s.g = NULL;
	s.pinned = s.mapped = false;
	return ret;
}

static int do_info(void)
{
	gdr_info_v2_t v2;
	gdr_info_t v1;
	int ret = gdr_get_info_v2(s.g, s.mh, &v2);

	return ret ? ret : gdr_get_info(s.g, s.mh, &v1);
}

static int do_stage(enum stage to)
{
	int ret = 0;

	if (to >= OPENED && !s.g)
		ret = do_open();
	if (!ret && to >= PINNED && !s.pinned)
		ret = do_pin();
	if (!ret && to >= MAPPED && !s.mapped)
		ret = do_map();
	return ret;
}

static void teardown(void)
{
	if (s.g)
		do_close();
}

/* Through the mapping both ways, checked against the GPU memory. */
static int check_data(unsigned seed)
{
	uint8_t out[4096], back[4096];
	uint8_t *gpu = (uint8_t *)(uintptr_t)s.dptr;
	uint8_t *at = (uint8_t *)s.map + (s.dptr - s.va) + 100;

	for (size_t i = 0; i < sizeof(out); i++)
		out[i] = (uint8_t)(seed * 37 + i * 11);
	CHECK_OK(gdr_copy_to_mapping(s.mh, at, out, sizeof(out)));
	CHECK(!memcmp(gpu + 100, out, sizeof(out)), "the copy did not reach the GPU memory");
	memset(back, 0, sizeof(back));
	CHECK_OK(gdr_copy_from_mapping(s.mh, back, at, sizeof(back)));
	CHECK(!memcmp(back, out, sizeof(back)), "the copy back differs");
	return TEST_PASS;
}

struct op {
	const char *name;
	enum stage from;	/* where the call starts */
	int (*call)(void);
};

static const struct op ops[] = {
	{ "gdr_open", CLOSED, do_open },
	{ "gdr_pin_buffer_v2", OPENED, do_pin },
	{ "gdr_get_info", PINNED, do_info },
	{ "gdr_map", PINNED, do_map },
	{ "gdr_unmap", MAPPED, do_unmap },
	{ "gdr_unpin_buffer", PINNED, do_unpin },
	{ "gdr_unpin_buffer of a mapped pin", MAPPED, do_unpin },
	{ "gdr_close", MAPPED, do_close },
};

/* Fail the library's nth call in op; *made says whether it made that many. */
static int fail_nth(const struct op *op, long n, bool *made)
{
	struct mark before, start;
	char errors[GDR_EXT_ERRORS_MAX], what[160];
	int ret;

	mark_take(&start);
	CHECK_OK(do_stage(op->from));
	gdr_ext_take_errors(NULL, 0);
	mark_take(&before);
	inj = (__typeof__(inj)){ .armed = true, .fail_at = n };
	ret = op->call();
	inj.armed = false;
	*made = inj.failed != NULL;
	snprintf(what, sizeof(what), "%s with its call %ld (%s) failing", op->name, n,
		 inj.failed ? inj.failed : "none");
	if (*made && ret) {
		CHECK(gdr_ext_take_errors(errors, sizeof(errors)) > 0,
		      "%s: returned %d and logged no error", what, ret);
		/* A driver's refusal is told as the driver's, not as something else. */
		CHECK(strncmp(inj.failed, "cu", 2) || strstr(errors, "CUDA_ERROR_OUT_OF_MEMORY"),
		      "%s: the reason does not name the driver's error: %s", what, errors);
		/* ... and returned as the driver's (gdr_open's is ENODEV: no backend here). */
		CHECK(strncmp(inj.failed, "cu", 2) || op->call == do_open || ret == ENOMEM,
		      "%s: returned %s for the driver's CUDA_ERROR_OUT_OF_MEMORY: %s", what,
		      strerror(ret), errors);
		/* gdr_close frees even when it fails: it is checked against the start below. */
		if (op->call != do_close) {
			if (!mark_same(&before, what))
				return TEST_FAIL;
			CHECK(op->call() == 0, "%s, then again: failed", what);
		}
	} else {
		CHECK(ret == 0, "%s: returned %d", what, ret);
	}
	/* A mapping gdr_close could not undo is the caller's to munmap (it logged so). */
	if (op->call == do_close && inj.failed && !strcmp(inj.failed, "munmap"))
		CHECK(!REAL(munmap)(s.map, PIN_SIZE + (s.dptr - s.va)), "munmap: %s",
		      strerror(errno));
	CHECK_OK(do_stage(MAPPED));
	CHECK_PASS(check_data((unsigned)n));
	teardown();
	if (!mark_same(&start, what))
		return TEST_FAIL;
	return TEST_PASS;
}

/* Every op with each of its calls failing in turn; in the backend's child process. */
static int run_ops(void)
{
	struct mark warm;
	gdr_mh_t bad;

	/* What a process makes once (CUDA, the Vulkan state, a thread's error buffer) is made. */
	CHECK_OK(do_stage(MAPPED));
	CHECK_PASS(check_data(0));
	EXPECT(gdr_pin_buffer_v2(s.g, s.dptr, PIN_SIZE, 0x80, &bad) == EINVAL, "bad flags");
	teardown();
	mark_take(&warm);
	for (size_t i = 0; i < sizeof(ops) / sizeof(ops[0]); i++) {
		bool made = true;
		long n;

		for (n = 1; made && n < 200; n++)
			CHECK_PASS(fail_nth(&ops[i], n, &made));
		/* Every backend's pin calls the driver: none failing means none was seen. */
		CHECK(n > 2 || ops[i].call != do_pin, "%s made no call that could fail",
		      ops[i].name);
	}
	CHECK(mark_same(&warm, "after every op"));
	return TEST_PASS;
}

static int backend_dmabuf(void *arg)
{
	CUdeviceptr base = 0;
	int status;

	(void)arg;
	CHECK_PASS(test_cuda_init());
	CHECK_EQ(cuMemAlloc(&base, 2 * MiB), CUDA_SUCCESS);
	s.dptr = base + PIN_OFFSET;
	/* No context current: the library makes one current for each pin, and undoes that. */
	CHECK_EQ(cuCtxSetCurrent(NULL), CUDA_SUCCESS);
	status = run_ops();
	teardown();
	return status;
}

static int backend_vulkan(void *arg)
{
	struct test_vmm m;
	int status;

	(void)arg;
	CHECK_PASS(test_cuda_init());
	CHECK_EQ(test_vmm_alloc(&m, 2 * MiB, 0, CU_MEM_HANDLE_TYPE_POSIX_FILE_DESCRIPTOR),
		 CUDA_SUCCESS);
	s.dptr = m.ptr + PIN_OFFSET;
	CHECK_EQ(cuCtxSetCurrent(NULL), CUDA_SUCCESS);
	status = run_ops();
	teardown();
	test_vmm_free(&m);
	return status;
}

static int case_dmabuf(void)
{
	static const char *const env[] = {
		"GDRCOPY_BACKEND", "dmabuf",
		"GDRCOPY_SIM_CUDA_VERSION", "13030",
		"GDRCOPY_SIM_CUDA_BACKING", "memfd",
		"GDRCOPY_SIM_CUDA_ATTR", "124=1",
		NULL,
	};
	const struct test_child child = { .env = env, .timeout_s = 60 };

	return test_child_run(&child, backend_dmabuf, NULL);
}

static int case_vulkan(void)
{
	const char *missing = test_lavapipe_missing();
	const struct test_child child = { .timeout_s = 60, .quick_exit = true };

	if (missing)
		return test_skip("%s", missing);
	test_use_lavapipe();
	unsetenv("GDRCOPY_ENABLE_LOGGING");
	return test_child_run(&child, backend_vulkan, NULL);
}

static const struct test_case cases[] = {
	{ "dmabuf", case_dmabuf },
	{ "vulkan", case_vulkan },
	{ NULL, NULL },
};

int main(int argc, char **argv)
{
	dl_iterate_phdr(find_library, NULL);
	if (!library_hi) {
		printf("libgdrapi is not loaded in this program\n");
		return TEST_FAIL;
	}
	/* The log's lines are the reasons; the run's output stays short without them on stderr. */
	unsetenv("GDRCOPY_ENABLE_LOGGING");
	return test_run(cases, argc, argv);
}
