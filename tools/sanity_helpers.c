/* SPDX-License-Identifier: MIT */
/* What gdrcopy_sanity's cases share: waiver rules, set-up, buffers, patterns, processes. */
#include <dirent.h>
#include <errno.h>
#include <setjmp.h>
#include <signal.h>
#include <stdlib.h>
#include <sys/wait.h>
#include <unistd.h>

#include "sanity.h"

void need_mem(enum sanity_mem mem)
{
	if (mem == MEM_CUMEMALLOC && sanity_plat->backend == GDR_BACKEND_VULKAN)
		sanity_waive("the vulkan backend pins only cuMemCreate memory with a POSIX-fd "
			     "handle, not cuMemAlloc memory");
	if (mem == MEM_VMM && !sanity_plat->vmm_rdma)
		sanity_waive("the GPU does not support GPUDirect RDMA on CUDA VMM allocations "
			     "(GPU_DIRECT_RDMA_WITH_CUDA_VMM_SUPPORTED is 0)");
}

void need_gdrdrv(const char *what)
{
	if (sanity_plat->backend != GDR_BACKEND_GDRDRV)
		sanity_waive("%s backend: %s", tool_backend_name(sanity_plat->backend), what);
}

void need_forcepci(void)
{
	if (!sanity_plat->forcepci)
		sanity_waive("the %s backend does not support GDR_PIN_FLAG_FORCE_PCIE "
			     "(GDR_ATTR_SUPPORT_PIN_FLAG_FORCE_PCIE is 0)",
			     tool_backend_name(sanity_plat->backend));
	if (!sanity_plat->coherent)
		sanity_waive("FORCE_PCIE applies only to coherent platforms "
			     "(PAGEABLE_MEMORY_ACCESS_USES_HOST_PAGE_TABLES is 0 here)");
	if (sanity_plat->cc_major < 10)
		sanity_waive("FORCE_PCIE needs compute capability 10 or later (this GPU: %d)",
			     sanity_plat->cc_major);
}

void need_shared_device(void)
{
	if (sanity_plat->compute_mode != CU_COMPUTEMODE_DEFAULT)
		sanity_waive("the GPU is not in the default compute mode, so two processes cannot "
			     "both use it");
}

void ctx_init(struct sanity_ctx *c)
{
	char why[256];

	if (tool_cuda_try_init(&c->cu, sanity_plat->dev_id, why, sizeof(why)) != CUDA_SUCCESS)
		sanity_fail("%s", why);
	c->g = gdr_open();
	if (!c->g)
		sanity_fail("gdr_open failed in the test process");
}

void ctx_fini(struct sanity_ctx *c)
{
	SANITY_RET(gdr_close(c->g), 0);
	c->g = NULL;
	tool_cuda_fini(&c->cu);
}

void buf_alloc(struct sanity_ctx *c, struct gpu_buf *b, size_t size, enum sanity_mem mem)
{
	const char *what = "allocation";
	CUresult r;

	r = gpu_alloc(b, size, mem == MEM_VMM ? TOOL_ALLOC_CUMEMCREATE : TOOL_ALLOC_CUMEMALLOC, 1,
		      mem == MEM_CUMEMALLOC, c->cu.dev, &what);
	if (r != CUDA_SUCCESS)
		sanity_fail("%s of %zu bytes failed: %s", what, size, tool_cu_name(r));
	b->size = size;
	sanity_log("allocated %zu bytes with %s at 0x%llx", size, tool_alloc_name(b->kind),
		   (unsigned long long)b->ptr);
}

void buf_free(struct gpu_buf *b)
{
	SANITY_CU(gpu_free(b));
}

void pin_map(struct sanity_ctx *c, const struct gpu_buf *b, int flags, gdr_mh_t *mh,
	     void **ptr)
{
	gdr_info_t info;
	void *map;

	if (flags < 0)
		SANITY_RET(gdr_pin_buffer(c->g, b->ptr, b->size, 0, 0, mh), 0);
	else
		SANITY_RET(gdr_pin_buffer_v2(c->g, b->ptr, b->size, (uint32_t)flags, mh), 0);
	SANITY_RET(gdr_map(c->g, *mh, &map, b->size), 0);
	SANITY_RET(gdr_get_info(c->g, *mh, &info), 0);
	SANITY_CHECK(info.mapped);
	SANITY_CHECK(info.va <= b->ptr && b->ptr - info.va < info.mapped_size);
	*ptr = (char *)map + (b->ptr - info.va);
}

void unmap_unpin(struct sanity_ctx *c, gdr_mh_t mh, void *ptr, size_t size)
{
	SANITY_RET(gdr_unmap(c->g, mh, ptr, size), 0);
	SANITY_RET(gdr_unpin_buffer(c->g, mh), 0);
}

void write_words(void *ptr, size_t bytes, unsigned seed)
{
	volatile uint32_t *p = ptr;
	uint32_t *want = malloc(bytes + 4);

	if (!want)
		sanity_fail("out of memory");
	tool_fill_pattern(want, bytes, seed);
	for (size_t i = 0; i < bytes / 4; i++)
		p[i] = want[i];
	__sync_synchronize();
	free(want);
}

static sigjmp_buf fault_jmp;

static void on_fault(int sig)
{
	siglongjmp(fault_jmp, sig);
}

int read_faults(const void *ptr, void *out, size_t bytes)
{
	struct sigaction sa, old_bus, old_segv;
	const volatile uint32_t *p = ptr;
	uint32_t *o = out;
	volatile int faulted = 0;

	memset(&sa, 0, sizeof(sa));
	sa.sa_handler = on_fault;
	sigemptyset(&sa.sa_mask);
	sigaction(SIGBUS, &sa, &old_bus);
	sigaction(SIGSEGV, &sa, &old_segv);
	if (sigsetjmp(fault_jmp, 1) == 0) {
		for (size_t i = 0; i < bytes / 4; i++)
			o[i] = p[i];
	} else {
		faulted = 1;
	}
	sigaction(SIGBUS, &old_bus, NULL);
	sigaction(SIGSEGV, &old_segv, NULL);
	return faulted;
}

void check_device(CUdeviceptr d, size_t bytes, unsigned seed)
{
	void *got = malloc(bytes), *want = malloc(bytes);
	size_t bad;

	if (!got || !want)
		sanity_fail("out of memory");
	SANITY_CU(cuMemcpyDtoH(got, d, bytes));
	tool_fill_pattern(want, bytes, seed);
	bad = tool_compare(got, want, bytes);
	free(got);
	free(want);
	if (bad)
		sanity_fail("%zu of %zu words read back with cuMemcpyDtoH differ from what was "
			    "written", bad, bytes / 4);
}

pid_t sanity_fork(void)
{
	pid_t pid;

	fflush(NULL);
	pid = fork();
	if (pid < 0)
		sanity_fail("fork failed: %s", strerror(errno));
	return pid;
}

void wait_child_ok(pid_t pid, const char *what)
{
	int status;

	while (waitpid(pid, &status, 0) < 0)
		if (errno != EINTR)
			sanity_fail("waitpid failed: %s", strerror(errno));
	if (WIFEXITED(status) && WEXITSTATUS(status) == 0)
		return;
	if (WIFSIGNALED(status))
		sanity_fail("%s: the child was killed by signal %d", what, WTERMSIG(status));
	sanity_fail("%s: the child exited with status %d", what, WEXITSTATUS(status));
}

void msg_send(int fd, char c)
{
	if (write(fd, &c, 1) != 1)
		sanity_fail("pipe write failed: %s", strerror(errno));
}

char msg_recv(int fd)
{
	ssize_t n;
	char c;

	while ((n = read(fd, &c, 1)) < 0 && errno == EINTR)
		;
	if (n != 1)
		sanity_fail("the other process exited before it answered");
	return c;
}

int find_gdrdrv_fd(void)
{
	DIR *d = opendir("/proc/self/fd");
	struct dirent *e;
	int found = -1;

	if (!d)
		return -1;
	while (found < 0 && (e = readdir(d)) != NULL) {
		char target[64];
		ssize_t n;

		if (e->d_name[0] == '.')
			continue;
		n = readlinkat(dirfd(d), e->d_name, target, sizeof(target) - 1);
		if (n <= 0)
			continue;
		target[n] = '\0';
		if (!strcmp(target, "/dev/gdrdrv"))
			found = atoi(e->d_name);
	}
	closedir(d);
	return found;
}
