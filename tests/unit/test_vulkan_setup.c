/* SPDX-License-Identifier: MIT */
/*
 * How gdr_open finds (or declines) the vulkan backend, each case in a fresh process with its own
 * environment: this program re-runs itself as "--child CASE" with the simulated CUDA driver on
 * LD_LIBRARY_PATH (or not), and checks the child's verdict and log. It is not linked with
 * libcuda, so the library's own dlopen decides what it gets.
 */
#include <dirent.h>
#include <dlfcn.h>
#include <errno.h>
#include <fcntl.h>
#include <libgen.h>
#include <limits.h>
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <stddef.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cuda.h>
#include <linux/audit.h>
#include <linux/filter.h>
#include <linux/seccomp.h>

#include "gdrapi.h"
#include "gdrapi_ext.h"
#include "harness.h"
#include "testcuda_entry_points.h"
#include "vulkan_hostile.h"

static char sim_dir[PATH_MAX];
static char child_out[16384];

/* ---- Children: print what they saw, exit 0 when it is what the case expects ---- */

/* gdr_open must fail; the reason is on stderr for the parent to check. */
static int child_open_fails(void)
{
	gdr_t g = gdr_open();

	if (g) {
		printf("gdr_open succeeded\n");
		gdr_close(g);
		return 1;
	}
	return 0;
}

/* ---- The hostile loader's counts of the library's Vulkan objects (vulkan_hostile.h) ---- */

static vk_hostile_live_fn vk_live;
static const char *vk_fail_call;

/* Fail only the call GDRCOPY_TEST_VK_FAIL names, with the first error the spec allows it. */
static VkResult fail_named(const char *call, const VkResult *errors, unsigned int n)
{
	return vk_fail_call && n && !strcmp(call, vk_fail_call) ? errors[0] : VK_SUCCESS;
}

/*
 * Have the hostile loader (the libvulkan.so.1 the library will load) count the library's Vulkan
 * objects from here on, and fail the call GDRCOPY_TEST_VK_FAIL names; 0, or 1 said.
 */
static int count_vulkan_objects(void)
{
	void *vk = dlopen("libvulkan.so.1", RTLD_NOW | RTLD_LOCAL);
	vk_hostile_fail_with_fn fail_with =
		vk ? (vk_hostile_fail_with_fn)dlsym(vk, VK_HOSTILE_FAIL_WITH) : NULL;

	vk_live = vk ? (vk_hostile_live_fn)dlsym(vk, VK_HOSTILE_LIVE) : NULL;
	if (!fail_with || !vk_live) {
		printf("libvulkan.so.1 is not the hostile loader\n");
		return 1;
	}
	vk_fail_call = getenv("GDRCOPY_TEST_VK_FAIL");
	fail_with(fail_named);
	return 0;
}

/*
 * Say which of the library's Vulkan objects are alive; 1 if an import, a buffer or a mapping is
 * (none may outlive its pin), or with all, an instance or a device (after a failed gdr_open).
 */
static int vulkan_objects_left(bool all)
{
	struct vk_hostile_live l;

	vk_live(&l);
	printf("left: instances %ld devices %ld memories %ld buffers %ld maps %ld\n", l.instances,
	       l.devices, l.memories, l.buffers, l.maps);
	return l.memories || l.buffers || l.maps || (all && (l.instances || l.devices));
}

/* child_open_fails, and the failed gdr_open leaves no Vulkan object alive. */
static int child_open_fails_counted(void)
{
	int ret;

	if (count_vulkan_objects())
		return 1;
	ret = child_open_fails();
	return vulkan_objects_left(true) || ret;
}

/* A fork child that runs part of a case: _exit, as Mesa's atexit handler would join threads. */
static const struct test_child fork_child = { .quick_exit = true };

/* In a fork child: its own gdr_open must fail. */
static int own_open_fails(void *arg)
{
	gdr_t own = gdr_open();

	(void)arg;
	if (own)
		printf("the fork child's gdr_open succeeded\n");
	return own ? 1 : 0;
}

/*
 * gdr_open, then in a fork child a gdr_open of the child's own, which must fail where CUDA does
 * not survive fork (GDRCOPY_SIM_CUDA_FORK_REFUSES), saying why.
 */
static int child_open_after_fork(void)
{
	gdr_t g = gdr_open();
	int status;

	if (!g) {
		printf("gdr_open failed\n");
		return 1;
	}
	status = test_child_exit(&fork_child, own_open_fails, NULL);
	return gdr_close(g) || status ? 1 : 0;
}

/* gdr_open must pick the vulkan backend. */
static int child_open_vulkan(void)
{
	gdr_t g = gdr_open();
	int v = 0;

	if (!g) {
		printf("gdr_open failed\n");
		return 1;
	}
	if (gdr_get_attribute(g, GDR_ATTR_EXT_BACKEND, &v) || v != GDR_BACKEND_VULKAN) {
		printf("backend %d\n", v);
		return 1;
	}
	return gdr_close(g) ? 1 : 0;
}

/* gdr_open must pick the backend GDRCOPY_BACKEND names. */
static int child_open_forced(void)
{
	const char *want = getenv("GDRCOPY_BACKEND");
	gdr_t g = gdr_open();
	int v = 0;

	if (!g) {
		printf("gdr_open failed\n");
		return 1;
	}
	if (gdr_get_attribute(g, (gdr_attr_t)GDR_ATTR_EXT_BACKEND, &v) ||
	    !gdr_ext_backend_name(v) || !want || strcmp(gdr_ext_backend_name(v), want)) {
		printf("backend %d, not %s\n", v, want ? want : "(GDRCOPY_BACKEND unset)");
		return 1;
	}
	return gdr_close(g) ? 1 : 0;
}

#define SIM_FN(name) ((PFN_##name)dlsym(sim, #name))
typedef CUresult (*PFN_cuInit)(unsigned);
typedef CUresult (*PFN_cuMemCreate)(CUmemGenericAllocationHandle *, size_t,
				    const CUmemAllocationProp *, unsigned long long);
typedef CUresult (*PFN_cuMemAddressReserve)(CUdeviceptr *, size_t, size_t, CUdeviceptr,
					    unsigned long long);
typedef CUresult (*PFN_cuMemMap)(CUdeviceptr, size_t, size_t, CUmemGenericAllocationHandle,
				 unsigned long long);
typedef CUresult (*PFN_cuMemSetAccess)(CUdeviceptr, size_t, const CUmemAccessDesc *, size_t);

/* A 2 MiB POSIX-fd VMM allocation from the simulator (dlopen'd, as the library does); 0 on success. */
static int sim_vmm_alloc(CUdeviceptr *ptr)
{
	void *sim = dlopen("libcuda.so.1", RTLD_NOW);
	CUmemAllocationProp prop = {
		.type = CU_MEM_ALLOCATION_TYPE_PINNED,
		.requestedHandleTypes = CU_MEM_HANDLE_TYPE_POSIX_FILE_DESCRIPTOR,
		.location = { .type = CU_MEM_LOCATION_TYPE_DEVICE, .id = 0 },
	};
	CUmemAccessDesc access = { .location = prop.location,
				   .flags = CU_MEM_ACCESS_FLAGS_PROT_READWRITE };
	CUmemGenericAllocationHandle h;

	if (!sim || SIM_FN(cuInit)(0) ||
	    SIM_FN(cuMemCreate)(&h, 2 << 20, &prop, 0) ||
	    SIM_FN(cuMemAddressReserve)(ptr, 2 << 20, 0, 0, 0) ||
	    SIM_FN(cuMemMap)(*ptr, 2 << 20, 0, h, 0) ||
	    SIM_FN(cuMemSetAccess)(*ptr, 2 << 20, &access, 1)) {
		printf("simulated CUDA set-up failed\n");
		return 1;
	}
	return 0;
}

typedef CUresult (*PFN_cuDevicePrimaryCtxRetain)(CUcontext *, CUdevice);
typedef CUresult (*PFN_cuCtxSetCurrent)(CUcontext);
typedef CUresult (*PFN_cuMemAlloc_v2)(CUdeviceptr *, size_t);

/* 2 MiB of cuMemAlloc memory from the simulator, in device 0's primary context; 0 on success. */
static int sim_cumemalloc(CUdeviceptr *ptr)
{
	void *sim = dlopen("libcuda.so.1", RTLD_NOW);
	CUcontext ctx;

	if (!sim || SIM_FN(cuInit)(0) || SIM_FN(cuDevicePrimaryCtxRetain)(&ctx, 0) ||
	    SIM_FN(cuCtxSetCurrent)(ctx) || SIM_FN(cuMemAlloc_v2)(ptr, 2 << 20)) {
		printf("simulated CUDA set-up failed\n");
		return 1;
	}
	return 0;
}

/* 2 MiB of simulated GPU memory (VMM, or cuMemAlloc's), then a gdr_t; NULL, said, on failure. */
static gdr_t alloc_and_open(CUdeviceptr *ptr, bool cumemalloc)
{
	gdr_t g;

	if (cumemalloc ? sim_cumemalloc(ptr) : sim_vmm_alloc(ptr))
		return NULL;
	g = gdr_open();
	if (!g)
		printf("gdr_open failed\n");
	return g;
}

/*
 * The process's Vulkan state outlives every gdr_t: after the last gdr_close libcuda is still
 * loaded, and later gdr_opens and pins find the instance and the VkDevice already made (the
 * parent counts the debug lines that say each was created).
 */
static int child_process_state(void)
{
	gdr_t a = gdr_open(), b = gdr_open();
	CUdeviceptr ptr;
	gdr_mh_t mh;
	void *h;

	if (!a || !b || sim_vmm_alloc(&ptr)) {
		printf("gdr_open failed\n");
		return 1;
	}
	if (gdr_pin_buffer_v2(a, ptr, 65536, 0, &mh) || gdr_close(a) || gdr_close(b)) {
		printf("pin or close failed\n");
		return 1;
	}
	h = dlopen("libcuda.so.1", RTLD_NOW | RTLD_NOLOAD);
	if (!h) {
		printf("libcuda was unloaded with the last gdr_t\n");
		return 1;
	}
	dlclose(h);
	for (int i = 0; i < 3; i++) {
		a = gdr_open();
		if (!a || gdr_pin_buffer_v2(a, ptr + 65536, 65536, 0, &mh) || gdr_close(a)) {
			printf("a later gdr_open, pin or close failed\n");
			return 1;
		}
	}
	return 0;
}

/* gdr_open builds the instance but no VkDevice: that waits for a pin. */
static int child_open_no_pin(void)
{
	gdr_t g = gdr_open();

	if (!g) {
		printf("gdr_open failed\n");
		return 1;
	}
	return gdr_close(g) ? 1 : 0;
}

#define RACERS 8

struct racer {
	pthread_barrier_t *start;
	CUdeviceptr ptr;
	int ret;
};

static void *racer_main(void *arg)
{
	struct racer *r = arg;
	gdr_mh_t mh;
	gdr_t g;

	pthread_barrier_wait(r->start);
	g = gdr_open();
	r->ret = !g || gdr_pin_buffer_v2(g, r->ptr, 65536, 0, &mh) || gdr_close(g);
	return NULL;
}

/* Threads that open and pin at the same moment build the instance and the VkDevice once. */
static int child_threads_open(void)
{
	struct racer r[RACERS];
	pthread_barrier_t start;
	pthread_t t[RACERS];
	CUdeviceptr ptr;

	if (sim_vmm_alloc(&ptr) || pthread_barrier_init(&start, NULL, RACERS))
		return 1;
	for (int i = 0; i < RACERS; i++) {
		r[i] = (struct racer){ .start = &start, .ptr = ptr + (CUdeviceptr)i * 65536 };
		if (pthread_create(&t[i], NULL, racer_main, &r[i]))
			return 1;
	}
	for (int i = 0; i < RACERS; i++) {
		pthread_join(t[i], NULL);
		if (r[i].ret) {
			printf("thread %d: gdr_open, pin or close failed\n", i);
			return 1;
		}
	}
	pthread_barrier_destroy(&start);
	return 0;
}

struct parent_pin {
	gdr_t g;
	CUdeviceptr ptr;
};

/* In a fork child: close the parent's gdr_t, then open and pin with one of its own. */
static int own_state(void *arg)
{
	const struct parent_pin *p = arg;
	gdr_t own = gdr_open();
	gdr_mh_t mh;

	return gdr_close(p->g) || !own || gdr_pin_buffer_v2(own, p->ptr + 65536, 65536, 0, &mh);
}

/*
 * A fork child never uses its parent's Vulkan objects: after the parent built the instance and a
 * VkDevice, the child's own gdr_open and pin build theirs (so the parent counts two of each), and
 * the child's gdr_close of the parent's gdr_t returns.
 */
static int child_fork_own_state(void)
{
	struct parent_pin p;
	gdr_mh_t mh;

	if (sim_vmm_alloc(&p.ptr))
		return 1;
	p.g = gdr_open();
	if (!p.g || gdr_pin_buffer_v2(p.g, p.ptr, 65536, 0, &mh)) {
		printf("gdr_open or pin failed\n");
		return 1;
	}
	if (test_child_exit(&fork_child, own_state, &p)) {
		printf("the fork child failed\n");
		return 1;
	}
	return gdr_close(p.g) ? 1 : 0;
}

/*
 * Vulkan refuses the allocation's fd (the simulator's plain memfd): ENOTSUP, the fd closed
 * exactly once (Mesa closes it itself on failure), nothing else left open.
 */
static int child_import_refused(void)
{
	CUdeviceptr ptr;
	gdr_mh_t mh;
	gdr_t g;
	int fds, ret, canary;

	g = alloc_and_open(&ptr, false);
	if (!g)
		return 1;
	/*
	 * The process's first pin creates the Vulkan device, which keeps its descriptors for the
	 * process's life (lavapipe's number varies): count from after it.
	 */
	ret = gdr_pin_buffer_v2(g, ptr, 65536, 0, &mh);
	if (ret != ENOTSUP) {
		printf("first pin = %d, want ENOTSUP\n", ret);
		return 1;
	}
	fds = test_fd_count();
	ret = gdr_pin_buffer_v2(g, ptr, 65536, 0, &mh);
	if (ret != ENOTSUP) {
		printf("pin = %d, want ENOTSUP\n", ret);
		return 1;
	}
	if (test_fd_count() != fds) {
		printf("fds %d -> %d\n", fds, test_fd_count());
		return 1;
	}
	/* The number the failed import used is free again, and nothing closed it twice. */
	canary = open("/dev/null", O_RDONLY);
	ret = gdr_pin_buffer_v2(g, ptr, 65536, 0, &mh);
	if (ret != ENOTSUP || fcntl(canary, F_GETFD) < 0) {
		printf("second pin = %d, canary fd %s\n", ret,
		       fcntl(canary, F_GETFD) < 0 ? "closed" : "open");
		return 1;
	}
	close(canary);
	return gdr_close(g) ? 1 : 0;
}

/*
 * Pin 64 KiB of a VMM allocation (cuMemAlloc memory with GDRCOPY_TEST_PIN_CUMEMALLOC=1): the
 * pin must return GDRCOPY_TEST_WANT_PIN (an errno, default 0), and a pin that succeeds must map
 * and carry a write and a read back.
 */
static int child_pin_copy(void)
{
	const char *want_env = getenv("GDRCOPY_TEST_WANT_PIN");
	bool cumemalloc = getenv("GDRCOPY_TEST_PIN_CUMEMALLOC") != NULL;
	int want = want_env ? atoi(want_env) : 0, ret;
	uint8_t out[8] = { 1, 2, 3, 4, 5, 6, 7, 8 }, in[8] = { 0 };
	CUdeviceptr ptr;
	gdr_mh_t mh;
	void *va;
	gdr_t g;

	g = alloc_and_open(&ptr, cumemalloc);
	if (!g)
		return 1;
	ret = gdr_pin_buffer_v2(g, ptr, 65536, 0, &mh);
	if (ret != want) {
		printf("pin = %d, want %d\n", ret, want);
		return 1;
	}
	if (!ret) {
		if (gdr_map(g, mh, &va, 65536) || gdr_copy_to_mapping(mh, va, out, 8) ||
		    gdr_copy_from_mapping(mh, in, va, 8) || memcmp(in, out, 8) ||
		    memcmp((void *)ptr, out, 8) || gdr_unmap(g, mh, va, 65536) ||
		    gdr_unpin_buffer(g, mh)) {
			printf("map, copies or unpin failed\n");
			return 1;
		}
	}
	return gdr_close(g) ? 1 : 0;
}

/*
 * child_pin_copy (GDRCOPY_TEST_VK_FAIL may fail a Vulkan call), and the pin, map, unmap and unpin
 * leave no import, buffer or mapping alive, whether the pin succeeded or not.
 */
static int child_pin_counted(void)
{
	int ret;

	if (count_vulkan_objects())
		return 1;
	ret = child_pin_copy();
	return vulkan_objects_left(false) || ret;
}

/* Open descriptors that name the hostile loader's stand-in file (import_reuse_fd). */
static int stand_ins(void)
{
	DIR *d = opendir("/proc/self/fd");
	struct dirent *e;
	char path[300], target[256];
	int n = 0;
	ssize_t len;

	while (d && (e = readdir(d))) {
		snprintf(path, sizeof(path), "/proc/self/fd/%s", e->d_name);
		len = readlink(path, target, sizeof(target) - 1);
		if (len <= 0)
			continue;
		target[len] = '\0';
		n += strstr(target, "vk_hostile_stand_in") != NULL;
	}
	if (d)
		closedir(d);
	return n;
}

#if defined(__x86_64__)
#define THIS_AUDIT_ARCH AUDIT_ARCH_X86_64
#elif defined(__aarch64__)
#define THIS_AUDIT_ARCH AUDIT_ARCH_AARCH64
#endif

/*
 * Make kcmp fail with ENOSYS, as on a kernel without it (a container's seccomp profile makes it
 * EPERM), for this process and its threads; false, said, where no filter can be set (an
 * emulator). Calls of another architecture's numbering are left alone.
 */
static bool no_kcmp(void)
{
#if defined(THIS_AUDIT_ARCH) && defined(SYS_kcmp)
	struct sock_filter code[] = {
		BPF_STMT(BPF_LD | BPF_W | BPF_ABS, offsetof(struct seccomp_data, arch)),
		BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, THIS_AUDIT_ARCH, 0, 3),
		BPF_STMT(BPF_LD | BPF_W | BPF_ABS, offsetof(struct seccomp_data, nr)),
		BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, SYS_kcmp, 0, 1),
		BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ERRNO | ENOSYS),
		BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ALLOW),
	};
	struct sock_fprog prog = { .len = sizeof(code) / sizeof(code[0]), .filter = code };

	if (prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) ||
	    prctl(PR_SET_SECCOMP, SECCOMP_MODE_FILTER, &prog, 0, 0)) {
		printf("no seccomp filter (%s): kcmp stays\n", strerror(errno));
		return false;
	}
	if (syscall(SYS_kcmp, (long)getpid(), (long)getpid(), 0L, 0L, 0L) != -1 ||
	    errno != ENOSYS) {
		printf("no seccomp filter (kcmp still answers)\n");
		return false;
	}
	printf("kcmp: ENOSYS\n");
	return true;
#else
	printf("no seccomp filter for this architecture: kcmp stays\n");
	return false;
#endif
}

/*
 * The import children's common part: kcmp refused where GDRCOPY_TEST_NO_KCMP asks, a gdr_t, and a
 * pin tried twice, the first also creating the VkDevice, whose descriptors stay: *fds counts
 * from after it, *log is the second's (echoed, for the parent's checks). NULL without a gdr_t.
 */
static gdr_t import_twice(int *ret, int *fds, const char **log)
{
	CUdeviceptr ptr;
	gdr_mh_t mh;
	gdr_t g;

	if (getenv("GDRCOPY_TEST_NO_KCMP"))
		no_kcmp();
	g = alloc_and_open(&ptr, false);
	if (!g)
		return NULL;
	*ret = gdr_pin_buffer_v2(g, ptr, 65536, 0, &mh);
	*fds = test_fd_count();
	test_capture_begin();
	if (*ret == ENOTSUP)
		*ret = gdr_pin_buffer_v2(g, ptr, 65536, 0, &mh);
	*log = test_capture_end();
	fputs(*log, stdout);
	return g;
}

/*
 * The import closes its fd and fails, and the number is another file's before the library
 * looks (GDRCOPY_TEST_VK_HOSTILE=import_reuse_fd): each pin fails with ENOTSUP and leaves that
 * file open, and only it; also where kcmp cannot tell (GDRCOPY_TEST_NO_KCMP=1).
 */
static int child_import_fd_reused(void)
{
	const char *log;
	int fds, ret;
	gdr_t g = import_twice(&ret, &fds, &log);

	if (!g)
		return 1;
	if (ret != ENOTSUP || stand_ins() != 2 || test_fd_count() != fds + 1) {
		printf("pin = %d (want ENOTSUP), %d stand-in files open (want 2), fds %d -> %d "
		       "(want one more)\n", ret, stand_ins(), fds, test_fd_count());
		return 1;
	}
	return gdr_close(g) ? 1 : 0;
}

/*
 * The import closes its fd and fails, and the number is another open of the same file before
 * the library looks (GDRCOPY_TEST_VK_HOSTILE=import_reopen_fd): each pin fails with ENOTSUP and
 * leaves that open in place, one descriptor more, whether kcmp tells (it is not the library's)
 * or not (GDRCOPY_TEST_NO_KCMP=1: nothing proves it the library's, so it stays, with a warning).
 */
static int child_import_fd_reopened(void)
{
	const char *log;
	int fds, ret;
	gdr_t g = import_twice(&ret, &fds, &log);

	if (!g)
		return 1;
	if (ret != ENOTSUP || test_fd_count() != fds + 1) {
		printf("pin = %d (want ENOTSUP), fds %d -> %d (want one more)\n", ret, fds,
		       test_fd_count());
		return 1;
	}
	if (!getenv("GDRCOPY_TEST_NO_KCMP") != !strstr(log, "nothing tells")) {
		printf("the warning that the descriptor is left open %s\n",
		       getenv("GDRCOPY_TEST_NO_KCMP") ? "is missing" : "came with kcmp");
		return 1;
	}
	return gdr_close(g) ? 1 : 0;
}

/* Whether no page of [va, va + len) is mapped in a fork child (msync: ENOMEM where none is). */
static bool kept_from_fork(const void *va, size_t len)
{
	uintptr_t page = (uintptr_t)sysconf(_SC_PAGESIZE);
	uintptr_t first = (uintptr_t)va & ~(page - 1);
	pid_t pid = test_fork();

	if (pid == 0) {
		for (uintptr_t p = first; p < (uintptr_t)va + len; p += page)
			if (msync((void *)p, page, MS_ASYNC) == 0 || errno != ENOMEM)
				_exit(1);
		_exit(0);
	}
	return pid > 0 && test_wait(pid) == 0;
}

/* A gdr_t with 64 KiB of fresh memory pinned as *mh; NULL, saying so, when that fails. */
static gdr_t open_and_pin(gdr_mh_t *mh)
{
	CUdeviceptr ptr;
	gdr_t g = alloc_and_open(&ptr, false);

	if (!g || gdr_pin_buffer_v2(g, ptr, 65536, 0, mh)) {
		printf("open or pin failed\n");
		return NULL;
	}
	return g;
}

/*
 * Map 64 KiB wherever the driver puts it (GDRCOPY_TEST_VK_HOSTILE=map_unaligned: not on a page,
 * as the spec allows): the map works without a warning, and a fork child inherits none of the
 * pages the mapping lies in.
 */
static int child_map_kept_from_fork(void)
{
	const char *log;
	gdr_mh_t mh;
	void *va;
	int ret;
	gdr_t g = open_and_pin(&mh);

	if (!g)
		return 1;
	test_capture_begin();
	ret = gdr_map(g, mh, &va, 65536);
	log = test_capture_end();
	if (ret || strstr(log, "WARN")) {
		printf("map = %d, log: %s\n", ret, log);
		return 1;
	}
	if (!kept_from_fork(va, 65536)) {
		printf("a fork child has pages of the mapping at %p\n", va);
		return 1;
	}
	if (gdr_unmap(g, mh, va, 65536) || gdr_unpin_buffer(g, mh))
		return 1;
	return gdr_close(g) ? 1 : 0;
}

/*
 * vkMapMemory succeeds with no pointer (GDRCOPY_TEST_VK_HOSTILE=map_null), or with one under
 * which nothing is mapped (map_elsewhere): gdr_map refuses with EIO, does nothing to the pointer
 * (no madvise, which would warn) and leaves nothing mapped, so a second try is refused the same
 * way, not with EAGAIN, and the driver's mapping is undone (the hostile loader counts none left).
 */
static int child_map_refused(void)
{
	void *va = (void *)0x1;
	const char *log;
	gdr_mh_t mh;
	int ret;
	gdr_t g;

	if (count_vulkan_objects())
		return 1;
	g = open_and_pin(&mh);
	if (!g)
		return 1;
	for (int i = 0; i < 2; i++) {
		test_capture_begin();
		ret = gdr_map(g, mh, &va, 65536);
		log = test_capture_end();
		if (ret != EIO || va != (void *)0x1 || strstr(log, "WARN")) {
			printf("map %d = %d, va %p; want EIO, va untouched and no warning; log: %s\n",
			       i, ret, va, log);
			return 1;
		}
		/* The log is the parent's to check: echo it. */
		fputs(log, stdout);
	}
	if (gdr_unpin_buffer(g, mh) || gdr_close(g))
		return 1;
	return vulkan_objects_left(false);
}

/*
 * vkMapMemory fails with VK_ERROR_MEMORY_MAP_FAILED, having written a pointer to an unmapped
 * page (GDRCOPY_TEST_VK_HOSTILE=map_fails): gdr_map fails with ENOMEM, as mmap would, its va
 * untouched, and nothing is done to the driver's pointer (no madvise of it, which would warn).
 */
static int child_map_fails(void)
{
	void *va = (void *)0x1;
	const char *log;
	gdr_mh_t mh;
	int ret;
	gdr_t g = open_and_pin(&mh);

	if (!g)
		return 1;
	for (int i = 0; i < 2; i++) {
		test_capture_begin();
		ret = gdr_map(g, mh, &va, 65536);
		log = test_capture_end();
		if (ret != ENOMEM || va != (void *)0x1 || strstr(log, "WARN") ||
		    !strstr(log, "VK_ERROR_MEMORY_MAP_FAILED")) {
			printf("map %d = %d, va %p; want ENOMEM, va untouched, the error named and "
			       "no warning; log: %s\n", i, ret, va, log);
			return 1;
		}
	}
	if (gdr_unpin_buffer(g, mh))
		return 1;
	return gdr_close(g) ? 1 : 0;
}

/* cuInit of the simulated CUDA driver must succeed; prints what backs its memory. */
static int child_sim_backing(void)
{
	void *cuda = dlopen("libcuda.so.1", RTLD_NOW | RTLD_LOCAL);
	CUresult (*init)(unsigned int);
	const char *(*backing)(void);
	CUresult r;

	if (!cuda) {
		printf("no simulated CUDA driver: %s\n", dlerror());
		return 1;
	}
	init = (CUresult (*)(unsigned int))dlsym(cuda, "cuInit");
	backing = (const char *(*)(void))dlsym(cuda, "simcuda_backing");
	if (!init || !backing) {
		printf("libcuda.so.1 is not the simulated driver\n");
		return 1;
	}
	r = init(0);
	if (r != CUDA_SUCCESS) {
		printf("cuInit(0) = %d\n", r);
		return 1;
	}
	printf("backing %s\n", backing());
	return 0;
}

static const struct {
	const char *name;
	int (*run)(void);
} children[] = {
	{ "pin_copy", child_pin_copy },
	{ "pin_counted", child_pin_counted },
	{ "open_fails", child_open_fails },
	{ "open_fails_counted", child_open_fails_counted },
	{ "import_fd_reused", child_import_fd_reused },
	{ "import_fd_reopened", child_import_fd_reopened },
	{ "map_fails", child_map_fails },
	{ "open_vulkan", child_open_vulkan },
	{ "open_after_fork", child_open_after_fork },
	{ "open_forced", child_open_forced },
	{ "process_state", child_process_state },
	{ "open_no_pin", child_open_no_pin },
	{ "threads_open", child_threads_open },
	{ "fork_own_state", child_fork_own_state },
	{ "import_refused", child_import_refused },
	{ "map_kept_from_fork", child_map_kept_from_fork },
	{ "map_refused", child_map_refused },
	{ "sim_backing", child_sim_backing },
};

/* ---- The parent: one case per environment ---- */

/*
 * Run "--child name" with env applied ("NAME=value" sets, "NAME" unsets, NULL-terminated) and
 * the simulator on LD_LIBRARY_PATH unless with_sim is false; its stdout and stderr end up in
 * child_out. Returns its exit status, or -1 if it did not exit.
 */
static int spawn(const char *name, bool with_sim, const char *const *env)
{
	int pipefd[2], status;
	size_t len = 0;
	ssize_t n;
	pid_t pid;

	if (pipe(pipefd))
		return -1;
	pid = fork();
	if (pid < 0)
		return -1;
	if (pid == 0) {
		char *argv[] = { "test_vulkan_setup", "--child", (char *)name, NULL };

		dup2(pipefd[1], 1);
		dup2(pipefd[1], 2);
		close(pipefd[0]);
		close(pipefd[1]);
		if (with_sim)
			setenv("LD_LIBRARY_PATH", sim_dir, 1);
		else
			unsetenv("LD_LIBRARY_PATH");
		for (; env && *env; env++) {
			const char *eq = strchr(*env, '=');

			if (eq) {
				char key[128];

				snprintf(key, sizeof(key), "%.*s", (int)(eq - *env), *env);
				setenv(key, eq + 1, 1);
			} else {
				unsetenv(*env);
			}
		}
		execv("/proc/self/exe", argv);
		/* "Exec format error" under qemu-user: tests/cross tells that apart. */
		fprintf(stderr, "exec of /proc/self/exe failed: %s\n", strerror(errno));
		_exit(127);
	}
	close(pipefd[1]);
	while ((n = read(pipefd[0], child_out + len, sizeof(child_out) - 1 - len)) > 0)
		len += (size_t)n;
	child_out[len] = '\0';
	close(pipefd[0]);
	if (waitpid(pid, &status, 0) != pid || !WIFEXITED(status))
		return -1;
	return WEXITSTATUS(status);
}

static int expect(const char *child, bool with_sim, const char *const *env, const char *log)
{
	int rc = spawn(child, with_sim, env);

	if (rc != 0)
		return test_fail("child %s exited %d: %s", child, rc, child_out);
	if (log && !strstr(child_out, log))
		return test_fail("child %s: no \"%s\" in: %s", child, log, child_out);
	return 0;
}

static int case_no_libcuda(void)
{
	void *real = dlopen("libcuda.so.1", RTLD_NOW | RTLD_NOLOAD);

	if (!real)
		real = dlopen("libcuda.so.1", RTLD_NOW);
	if (real) {
		dlclose(real);
		return test_skip("a libcuda.so.1 is installed on this machine");
	}
	return expect("open_fails", false, NULL,
		      "libcuda.so.1 not found: install the NVIDIA driver");
}

static int case_default_picks_vulkan(void)
{
	static const char *const env[] = { "GDRCOPY_BACKEND", "GDRCOPY_LOG_LEVEL=2", NULL };

	if (access("/dev/gdrdrv", F_OK) == 0) {
		return test_skip("/dev/gdrdrv exists: gdrdrv would be chosen first");
	}
	if (expect("open_vulkan", true, env, "backend vulkan: in use"))
		return 1;
	if (!strstr(child_out, "backend gdrdrv: not used") ||
	    !strstr(child_out, "backend dmabuf: not used"))
		return test_fail("the log does not say why gdrdrv and dmabuf were passed over: %s",
				   child_out);
	return 0;
}

static int case_old_driver(void)
{
	static const char *const env[] = { "GDRCOPY_SIM_CUDA_VERSION=11080", NULL };

	return expect("open_fails", true, env, "CUDA driver 11.8 is too old");
}

static int case_missing_entry_point(void)
{
	static const char *const env[] = {
		"GDRCOPY_SIM_CUDA_HIDE=cuMemRetainAllocationHandle", NULL };

	return expect("open_fails", true, env,
		      "cuGetProcAddress(cuMemRetainAllocationHandle) failed: driver too old");
}

/*
 * A driver without the entry points only tests call (testcuda_entry_points.h) still serves the
 * library: both backends that use CUDA open with all of them hidden.
 */
#define HIDE_NAME(name, version) #name ","
static const char hide_test_only[] = "GDRCOPY_SIM_CUDA_HIDE="
	TESTCUDA_ENTRY_POINTS(HIDE_NAME);
#undef HIDE_NAME

static int case_test_entry_points_missing(void)
{
	static const char *const vulkan[] = { hide_test_only, "GDRCOPY_BACKEND=vulkan", NULL };
	static const char *const dmabuf[] = {
		hide_test_only, "GDRCOPY_BACKEND=dmabuf", "GDRCOPY_SIM_CUDA_VERSION=13030",
		"GDRCOPY_SIM_CUDA_ATTR=124=1", NULL };

	return expect("open_forced", true, vulkan, NULL) ||
	       expect("open_forced", true, dmabuf, NULL);
}

static int case_cuinit_fails(void)
{
	static const char *const env[] = { "GDRCOPY_SIM_CUDA_INIT_ERROR=999", NULL };

	return expect("open_fails", true, env, "cuInit(0) failed: CUDA_ERROR_UNKNOWN");
}

/*
 * CUDA does not survive fork (NVIDIA's driver refuses cuInit in the child): a fork child's
 * gdr_open says that this is why, and what to do.
 */
static int case_cuda_after_fork(void)
{
	static const char *const env[] = { "GDRCOPY_SIM_CUDA_FORK_REFUSES=1", NULL };

	return expect("open_after_fork", true, env, "it was forked from one that had initialised "
		      "CUDA (cuInit(0) here: CUDA_ERROR_NOT_INITIALIZED");
}

static int case_no_device(void)
{
	static const char *const env[] = { "GDRCOPY_SIM_CUDA_DEVICES=0", NULL };

	return expect("open_fails", true, env, "cuInit(0) failed: CUDA_ERROR_NO_DEVICE");
}

static int case_uuid_mismatch(void)
{
	static const char *const env[] = {
		"GDRCOPY_SIM_CUDA_UUID=00112233445566778899aabbccddeeff", NULL };

	return expect("open_fails", true, env,
		      "no Vulkan device matches CUDA device 0 "
		      "(UUID GPU-00112233-4455-6677-8899-aabbccddeeff)");
}

static int case_no_vulkan_driver(void)
{
	static const char *const env[] = { "VK_DRIVER_FILES=/nonexistent/icd.json",
					   "VK_ICD_FILENAMES=/nonexistent/icd.json", NULL };

	return expect("open_fails", true, env, "backend vulkan: unavailable: ");
}

/* Lines of child_out that contain what. */
static int count_lines(const char *what)
{
	int n = 0;

	for (const char *p = strstr(child_out, what); p; p = strstr(p + 1, what))
		n++;
	return n;
}

static const char *const debug_log[] = { "GDRCOPY_LOG_LEVEL=1", NULL };
static const char instance_line[] = "vulkan: VkInstance created";
static const char device_line[] = "vulkan: VkDevice created for CUDA device 0";

/* Counts of the creation lines in child's log, as wanted; 0, or 1 with the reason. */
static int expect_creations(const char *child, int instances, int devices)
{
	if (expect(child, true, debug_log, NULL))
		return 1;
	if (count_lines(instance_line) != instances || count_lines(device_line) != devices)
		return test_fail("child %s: %d VkInstance and %d VkDevice creations, expected %d "
				   "and %d: %s", child, count_lines(instance_line),
				   count_lines(device_line), instances, devices, child_out);
	return 0;
}

static int case_process_state(void)
{
	return expect_creations("process_state", 1, 1);
}

static int case_open_no_pin(void)
{
	return expect_creations("open_no_pin", 1, 0);
}

static int case_threads_open(void)
{
	return expect_creations("threads_open", 1, 1);
}

static int case_fork_own_state(void)
{
	return expect_creations("fork_own_state", 2, 2);
}

static int case_import_refused(void)
{
	static const char *const env[] = { "GDRCOPY_SIM_CUDA_BACKING=memfd", NULL };

	if (expect("import_refused", true, env, "VK_ERROR_INVALID_EXTERNAL_HANDLE"))
		return 1;
	return 0;
}

/*
 * A CUDA driver whose allocation range does not hold the address (GDRCOPY_SIM_CUDA_BAD_RANGE):
 * the vulkan backend refuses the pin (it imported the allocation and mapped at offsets from that
 * range, wrapped: past the allocation's end); dmabuf exports the pin's host pages instead. A
 * range that holds it but not in whole host pages (=2) is refused too: its offsets would map
 * from the middle of a page. A MAPPING_BASE_ADDR that does not hold it (=3) is not believed:
 * cuMemGetAddressRange's range, which does, is used instead. A driver that fails the lookup
 * itself (=4: out of memory) gives its errno, ENOMEM, not EINVAL's "not CUDA memory".
 */
static int case_bad_address_range(void)
{
	static const char *const vulkan[] = { "GDRCOPY_SIM_CUDA_BAD_RANGE=1",
					      "GDRCOPY_BACKEND=vulkan",
					      "GDRCOPY_TEST_WANT_PIN=5" /* EIO */, NULL };
	static const char *const dmabuf[] = { "GDRCOPY_SIM_CUDA_BAD_RANGE=1",
					      "GDRCOPY_BACKEND=dmabuf", "GDRCOPY_LOG_LEVEL=1",
					      "GDRCOPY_SIM_CUDA_VERSION=13030",
					      "GDRCOPY_SIM_CUDA_ATTR=124=1",
					      "GDRCOPY_TEST_PIN_CUMEMALLOC=1", NULL };

	static const char *const unaligned[] = { "GDRCOPY_SIM_CUDA_BAD_RANGE=2",
						 "GDRCOPY_BACKEND=vulkan",
						 "GDRCOPY_TEST_WANT_PIN=5" /* EIO */, NULL };
	static const char *const bad_mapping_base[] = { "GDRCOPY_SIM_CUDA_BAD_RANGE=3",
							"GDRCOPY_BACKEND=vulkan", NULL };
	static const char *const lookup_fails[] = { "GDRCOPY_SIM_CUDA_BAD_RANGE=4",
						    "GDRCOPY_BACKEND=vulkan",
						    "GDRCOPY_TEST_WANT_PIN=12" /* ENOMEM */, NULL };

	return expect("pin_copy", true, vulkan, "which does not hold it in whole host pages") ||
	       expect("pin_copy", true, dmabuf, "gave a range without it") ||
	       expect("pin_copy", true, unaligned, "which does not hold it in whole host pages") ||
	       expect("pin_copy", true, bad_mapping_base, NULL) ||
	       expect("pin_copy", true, lookup_fails,
		      "cuMemGetAddressRange failed: CUDA_ERROR_OUT_OF_MEMORY");
}

/* A CUDA driver that names a device past the last for the memory: ENODEV, saying so. */
static int case_bad_device_ordinal(void)
{
	static const char *const env[] = { "GDRCOPY_SIM_CUDA_BAD_ORDINAL=1",
					   "GDRCOPY_BACKEND=vulkan",
					   "GDRCOPY_TEST_WANT_PIN=19" /* ENODEV */, NULL };

	return expect("pin_copy", true, env, "CUDA device 1 is not one of the 1 devices seen at "
		      "gdr_open");
}

/*
 * A Vulkan driver that answers out of the spec's bounds (tests/sim/vulkan_hostile): the backend
 * neither crashes nor reads past what it was given; it declines the device, or the open, with a
 * reason, where the answer leaves nothing usable, and otherwise works.
 */
static int hostile_vulkan_env(const char *mode, const char *const *extra, const char *child,
			      const char *log)
{
	static char ld_path[3 * PATH_MAX], loader[PATH_MAX + 32], hostile[128];
	const char *env[8] = { ld_path, loader, hostile, "GDRCOPY_BACKEND=vulkan" };
	const char *real = test_vulkan_loader_path();
	size_t n = 4;

	for (; extra && *extra && n < sizeof(env) / sizeof(env[0]) - 1; extra++)
		env[n++] = *extra;
	env[n] = NULL;
	if (!real)
		return test_skip("no Vulkan loader (libvulkan.so.1) to wrap");
	snprintf(ld_path, sizeof(ld_path), "LD_LIBRARY_PATH=%s/../vulkan-hostile:%s", sim_dir,
		 sim_dir);
	snprintf(loader, sizeof(loader), "GDRCOPY_TEST_VK_LOADER=%s", real);
	snprintf(hostile, sizeof(hostile), "GDRCOPY_TEST_VK_HOSTILE=%s", mode);
	return expect(child, true, env, log);
}

static int hostile_vulkan(const char *mode, const char *extra_env, const char *child,
			  const char *log)
{
	const char *const extra[] = { extra_env, NULL };

	return hostile_vulkan_env(mode, extra, child, log);
}

static int case_hostile_vulkan_heap_index(void)
{
	return hostile_vulkan("heap_index", NULL, "open_fails",
			      "has no DEVICE_LOCAL|HOST_VISIBLE|HOST_COHERENT memory type");
}

static int case_hostile_vulkan_type_count(void)
{
	return hostile_vulkan("type_count", NULL, "pin_copy", NULL);
}

static int case_hostile_vulkan_no_destroy(void)
{
	return hostile_vulkan("no_destroy", NULL, "open_fails",
			      "the Vulkan loader lacks Vulkan 1.1 entry points");
}

static int case_hostile_vulkan_extension_count(void)
{
	return hostile_vulkan("extension_count", NULL, "pin_copy", NULL);
}

/* With no device that matches, the search walks every device the driver said it wrote. */
static int case_hostile_vulkan_device_count(void)
{
	CHECK_PASS(hostile_vulkan("device_count", NULL, "pin_copy", NULL));
	return hostile_vulkan("device_count", "GDRCOPY_SIM_CUDA_UUID=00112233445566778899aabbccddeeff",
			      "open_fails", "no Vulkan device matches CUDA device 0");
}

/*
 * Counts of 0xffffffff devices and extensions: the library asks for a bounded number, says so,
 * and works (it asked for memory for them all, and failed as "out of memory, try again").
 */
static int case_hostile_vulkan_huge_counts(void)
{
	CHECK_PASS(hostile_vulkan("huge_counts", NULL, "pin_copy",
				  "vkEnumeratePhysicalDevices reports 4294967295 physical devices, "
				  "more than any driver has"));
	return hostile_vulkan("huge_counts", NULL, "pin_copy",
			      "vkEnumerateDeviceExtensionProperties reports 4294967295 extensions");
}

/* A device slot the driver counted but left VK_NULL_HANDLE is passed over, not asked about. */
static int case_hostile_vulkan_null_device_entry(void)
{
	return hostile_vulkan("null_device_entry", NULL, "pin_copy", NULL);
}

/* A pointer on no page boundary is the driver's right; the mapping stays out of fork children. */
static int case_hostile_vulkan_map_unaligned(void)
{
	return hostile_vulkan("map_unaligned", NULL, "map_kept_from_fork", NULL);
}

static int case_hostile_vulkan_map_null(void)
{
	return hostile_vulkan("map_null", NULL, "map_refused", "returned VK_SUCCESS but no pointer");
}

/*
 * vkAllocateMemory and vkMapMemory answer VK_INCOMPLETE, and vkCreateDevice 123456, success
 * codes none of them is given, having made what they make: taken as success, with a warning
 * that names the code, by its number where it has no name (failures, before, leaked a device
 * per pin, an import per pin and a mapping).
 */
static int case_hostile_vulkan_positive_results(void)
{
	return hostile_vulkan("positive_results", NULL, "pin_copy",
			      "vkAllocateMemory returned VK_INCOMPLETE, a success code the "
			      "specification does not give it: taken as success") ||
	       hostile_vulkan("positive_results", NULL, "pin_copy",
			      "vkCreateDevice returned VkResult 123456, a success code");
}

/* vkAllocateMemory succeeds with no handle: the pin fails with EIO, saying why. */
static int case_hostile_vulkan_null_memory(void)
{
	return hostile_vulkan("null_memory", "GDRCOPY_TEST_WANT_PIN=5", "pin_copy",
			      "returned VK_SUCCESS but no memory");
}

static int case_hostile_vulkan_map_elsewhere(void)
{
	return hostile_vulkan("map_elsewhere", NULL, "map_refused",
			      "where this process has no mapping of that length");
}

static int case_hostile_vulkan_map_fails(void)
{
	return hostile_vulkan("map_fails", NULL, "map_fails", NULL);
}

/* Of eight memory types, the import goes to the one that is right (vulkan_hostile.c says why). */
static int case_hostile_vulkan_memory_types(void)
{
	return hostile_vulkan("memory_types", NULL, "pin_copy", NULL);
}

/* A heap index the table's count does not reach names nothing, whatever lies in that slot. */
static int case_hostile_vulkan_heap_past_count(void)
{
	return hostile_vulkan("heap_past_count", NULL, "open_fails",
			      "has no DEVICE_LOCAL|HOST_VISIBLE|HOST_COHERENT memory type");
}

/* Nor does one past the spec's 16 heaps, however many the driver says it has. */
static int case_hostile_vulkan_heap_count(void)
{
	return hostile_vulkan("heap_count", NULL, "open_fails",
			      "has no DEVICE_LOCAL|HOST_VISIBLE|HOST_COHERENT memory type");
}

/*
 * A device whose OPAQUE_FD imports must be dedicated: each pin imports into a buffer of its own,
 * which its unpin destroys, and every failure on the way (the buffer's creation, a memory type
 * the buffer does not allow, the import) leaves neither buffer nor import behind.
 */
static int case_hostile_vulkan_dedicated_only(void)
{
	static const char *const no_buffer[] = { "GDRCOPY_TEST_VK_FAIL=vkCreateBuffer",
						 "GDRCOPY_TEST_WANT_PIN=12" /* ENOMEM */, NULL };
	static const char *const no_import[] = { "GDRCOPY_TEST_VK_FAIL=vkAllocateMemory",
						 "GDRCOPY_TEST_WANT_PIN=12" /* ENOMEM */, NULL };
	static const char *const refused[] = { "GDRCOPY_TEST_WANT_PIN=95" /* ENOTSUP */, NULL };

	CHECK_PASS(hostile_vulkan("dedicated_only", NULL, "pin_counted", "buffers 0"));
	CHECK_PASS(hostile_vulkan_env("dedicated_only", no_buffer, "pin_counted",
				      "vkCreateBuffer(2097152 bytes) for a dedicated import failed"));
	CHECK_PASS(hostile_vulkan_env("dedicated_only", no_import, "pin_counted",
				      "VK_ERROR_OUT_OF_HOST_MEMORY"));
	return hostile_vulkan_env("dedicated_only,buffer_types", refused, "pin_counted",
				  "does not allow memory type");
}

static int case_hostile_vulkan_not_importable(void)
{
	return hostile_vulkan("not_importable", NULL, "open_fails",
			      "cannot import OPAQUE_FD memory");
}

static int case_hostile_vulkan_no_fd_extension(void)
{
	return hostile_vulkan("no_fd_extension", NULL, "open_fails",
			      "lacks VK_KHR_external_memory_fd");
}

/* VK_INCOMPLETE is a success: what was written is used. */
static int case_hostile_vulkan_incomplete(void)
{
	return hostile_vulkan("incomplete", NULL, "pin_copy", NULL);
}

static int case_hostile_vulkan_no_devices(void)
{
	return hostile_vulkan("no_devices", NULL, "open_fails", "no Vulkan device: install");
}

static int case_hostile_vulkan_api_1_0(void)
{
	return hostile_vulkan("api_1_0", NULL, "open_fails",
			      "only supports Vulkan 1.0; 1.1 is needed");
}

/* All 16 bytes of the UUID are compared. */
static int case_hostile_vulkan_uuid_last_byte(void)
{
	return hostile_vulkan("uuid_last_byte", NULL, "open_fails",
			      "no Vulkan device matches CUDA device 0");
}

/*
 * Entry points the loader or the driver does not give: gdr_open, or the pin that would create
 * the VkDevice, fails saying so, and what was made on the way (the instance, the device) is
 * destroyed.
 */
static int case_hostile_vulkan_hidden(void)
{
	static const char *const no_core[] = { "GDRCOPY_TEST_WANT_PIN=38" /* ENOSYS */, NULL };

	if (hostile_vulkan("hide=vkCreateInstance", NULL, "open_fails",
			   "has no vkGetInstanceProcAddr/vkCreateInstance") ||
	    hostile_vulkan("hide=vkGetDeviceProcAddr", NULL, "open_fails_counted",
			   "lacks Vulkan 1.1 entry points"))
		return 1;
	if (!strstr(child_out, "left: instances 0 devices 0"))
		return test_fail("a failed gdr_open left Vulkan objects: %s", child_out);
	if (hostile_vulkan_env("hide=vkGetBufferMemoryRequirements", no_core, "pin_counted",
			       "lacks core entry points"))
		return 1;
	if (!strstr(child_out, "devices 0"))
		return test_fail("a VkDevice that lacked entry points is alive: %s", child_out);
	return 0;
}

static int case_hostile_vulkan_import_reuse_fd(void)
{
	return hostile_vulkan("import_reuse_fd", NULL, "import_fd_reused",
			      "VK_ERROR_INVALID_EXTERNAL_HANDLE") ||
	       hostile_vulkan("import_reuse_fd", "GDRCOPY_TEST_NO_KCMP=1", "import_fd_reused",
			      "VK_ERROR_INVALID_EXTERNAL_HANDLE");
}

static int case_hostile_vulkan_import_reopen_fd(void)
{
	return hostile_vulkan("import_reopen_fd", NULL, "import_fd_reopened", NULL) ||
	       hostile_vulkan("import_reopen_fd", "GDRCOPY_TEST_NO_KCMP=1", "import_fd_reopened",
			      NULL);
}

/*
 * The same loader that gives the simulated CUDA driver no vkDestroyInstance: the simulator, which
 * tests for it, goes without Vulkan (its memory on memfds) instead of calling the NULL.
 */
static int case_hostile_vulkan_sim_no_destroy(void)
{
	return hostile_vulkan("sim_no_destroy", NULL, "sim_backing", "backing memfd");
}

static const struct test_case cases[] = {
	{ "bad_address_range", case_bad_address_range },
	{ "bad_device_ordinal", case_bad_device_ordinal },
	{ "hostile_vulkan_heap_index", case_hostile_vulkan_heap_index },
	{ "hostile_vulkan_type_count", case_hostile_vulkan_type_count },
	{ "hostile_vulkan_no_destroy", case_hostile_vulkan_no_destroy },
	{ "hostile_vulkan_extension_count", case_hostile_vulkan_extension_count },
	{ "hostile_vulkan_device_count", case_hostile_vulkan_device_count },
	{ "hostile_vulkan_huge_counts", case_hostile_vulkan_huge_counts },
	{ "hostile_vulkan_map_unaligned", case_hostile_vulkan_map_unaligned },
	{ "hostile_vulkan_map_null", case_hostile_vulkan_map_null },
	{ "hostile_vulkan_map_elsewhere", case_hostile_vulkan_map_elsewhere },
	{ "hostile_vulkan_null_device_entry", case_hostile_vulkan_null_device_entry },
	{ "hostile_vulkan_positive_results", case_hostile_vulkan_positive_results },
	{ "hostile_vulkan_null_memory", case_hostile_vulkan_null_memory },
	{ "hostile_vulkan_map_fails", case_hostile_vulkan_map_fails },
	{ "hostile_vulkan_memory_types", case_hostile_vulkan_memory_types },
	{ "hostile_vulkan_heap_past_count", case_hostile_vulkan_heap_past_count },
	{ "hostile_vulkan_heap_count", case_hostile_vulkan_heap_count },
	{ "hostile_vulkan_dedicated_only", case_hostile_vulkan_dedicated_only },
	{ "hostile_vulkan_not_importable", case_hostile_vulkan_not_importable },
	{ "hostile_vulkan_no_fd_extension", case_hostile_vulkan_no_fd_extension },
	{ "hostile_vulkan_incomplete", case_hostile_vulkan_incomplete },
	{ "hostile_vulkan_no_devices", case_hostile_vulkan_no_devices },
	{ "hostile_vulkan_api_1_0", case_hostile_vulkan_api_1_0 },
	{ "hostile_vulkan_uuid_last_byte", case_hostile_vulkan_uuid_last_byte },
	{ "hostile_vulkan_hidden", case_hostile_vulkan_hidden },
	{ "hostile_vulkan_import_reuse_fd", case_hostile_vulkan_import_reuse_fd },
	{ "hostile_vulkan_import_reopen_fd", case_hostile_vulkan_import_reopen_fd },
	{ "hostile_vulkan_sim_no_destroy", case_hostile_vulkan_sim_no_destroy },
	{ "no_libcuda", case_no_libcuda },
	{ "default_picks_vulkan", case_default_picks_vulkan },
	{ "old_driver", case_old_driver },
	{ "missing_entry_point", case_missing_entry_point },
	{ "test_entry_points_missing", case_test_entry_points_missing },
	{ "cuinit_fails", case_cuinit_fails },
	{ "cuda_after_fork", case_cuda_after_fork },
	{ "no_device", case_no_device },
	{ "uuid_mismatch", case_uuid_mismatch },
	{ "no_vulkan_driver", case_no_vulkan_driver },
	{ "process_state", case_process_state },
	{ "open_no_pin", case_open_no_pin },
	{ "threads_open", case_threads_open },
	{ "fork_own_state", case_fork_own_state },
	{ "import_refused", case_import_refused },
	{ NULL, NULL },
};

int main(int argc, char **argv)
{
	const char *missing;
	char exe[PATH_MAX];
	ssize_t n;

	if (argc == 3 && !strcmp(argv[1], "--child")) {
		for (size_t i = 0; i < sizeof(children) / sizeof(children[0]); i++)
			if (!strcmp(children[i].name, argv[2]))
				return children[i].run();
		return 2;
	}
	missing = test_lavapipe_missing();
	if (missing) {
		printf("%s\n", missing);
		return TEST_SKIP;
	}
	n = readlink("/proc/self/exe", exe, sizeof(exe) - 1);
	if (n <= 0) {
		printf("cannot find this program's path\n");
		return 1;
	}
	exe[n] = '\0';
	snprintf(sim_dir, sizeof(sim_dir), "%s/../../sim/cuda", dirname(exe));
	test_use_lavapipe();
	return test_run(cases, argc, argv);
}
