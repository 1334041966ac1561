/* SPDX-License-Identifier: MIT */
/*
 * Tier 3: the dma-buf backend against the real NVIDIA driver. On a driver older than R610 (CUDA
 * 13.3; the test H200 runs 580 / CUDA 13.0):
 *   default_open       gdr_open skips dmabuf with the version reason and uses another backend
 *   backend_dmabuf     GDRCOPY_BACKEND=dmabuf: gdr_open fails with that reason
 *   use_dmabuf_mmap    GDRCOPY_USE_DMABUF_MMAP=1: likewise
 *   driver_mmap        the premise: the driver exports a dma-buf fd, but refuses its mmap (524)
 * On R610 or newer, the forced cases instead pin, map and copy through dmabuf, and driver_mmap
 * expects the mmap to work. The library's log lines of each case are printed, to be quoted.
 * Every case runs in a child: CUDA cannot be used across fork, and the library reads its
 * logging settings once per process. Skips (77) without an NVIDIA driver and GPU. default_open
 * needs a backend that works after dmabuf: on the H200, vulkan (tests/gpu/README.md).
 */
#include <dlfcn.h>
#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "gdrapi.h"
#include "gdrapi_ext.h"
#include "gpucommon.h"
#include "harness.h"
#include "testcuda.h"

/* The first CUDA version with dma-buf mmap of discrete GPUs (R610). */
#define DMABUF_MMAP_VERSION 13030
#define VERSION_REASON "< 13.3: dma-buf mmap of discrete GPU memory needs driver R610 " \
	"(CUDA 13.3) or newer"
/* The kernel's internal ENOTSUPP, what R580's nv_dma_buf_mmap returns. */
#define KERNEL_ENOTSUPP 524

static int driver_version;

/* Exit 0 with the driver version on stderr, or 77 with the reason why there is no GPU. */
static int child_probe(void *arg)
{
	struct gdr_why why = { "" };
	const struct testcuda *cu = testcuda_acquire(&why);
	void *lib;
	int count = 0;

	(void)arg;
	if (!cu) {
		fprintf(stderr, "no usable CUDA driver: %s\n", why.msg);
		return TEST_SKIP;
	}
	lib = dlopen("libcuda.so.1", RTLD_NOW | RTLD_NOLOAD);
	if (lib && dlsym(lib, "simcuda_get_counters")) {
		fprintf(stderr, "libcuda.so.1 is the simulated driver; tier 3 needs NVIDIA's\n");
		return TEST_SKIP;
	}
	if (cu->cuDeviceGetCount(&count) != CUDA_SUCCESS || count < 1) {
		fprintf(stderr, "no CUDA device\n");
		return TEST_SKIP;
	}
	fprintf(stderr, "%d\n", cu->driver_version);
	return 0;
}

/* Pin, map and copy 4 KiB at an unaligned address of a cuMemAlloc buffer; 0 or 1. */
static int pin_map_copy(gdr_t g, const struct testcuda *cu)
{
	uint8_t src[4096], back[4096];
	CUdeviceptr buf = 0;
	gdr_info_t info;
	gdr_mh_t mh;
	void *map;
	int ret = 1;

	for (size_t i = 0; i < sizeof(src); i++)
		src[i] = (uint8_t)(i * 7 + 1);
	if (cu->cuMemAlloc(&buf, 1 << 20) != CUDA_SUCCESS)
		return 1;
	if (gdr_pin_buffer_v2(g, buf + 100, sizeof(src), 0, &mh))
		goto out_free;
	if (gdr_get_info(g, mh, &info) || gdr_map(g, mh, &map, info.mapped_size))
		goto out_unpin;
	gdr_copy_to_mapping(mh, (uint8_t *)map + (buf + 100 - info.va), src, sizeof(src));
	if (cu->cuMemcpyDtoH(back, buf + 100, sizeof(back)) == CUDA_SUCCESS &&
	    !memcmp(src, back, sizeof(src))) {
		fprintf(stderr, "pinned, mapped and copied 4 KiB at va 0x%llx + 100 "
			"(page size %u)\n", (unsigned long long)info.va, info.page_size);
		ret = 0;
	}
	gdr_unmap(g, mh, map, info.mapped_size);
out_unpin:
	gdr_unpin_buffer(g, mh);
out_free:
	cu->cuMemFree(buf);
	return ret;
}

/*
 * gdr_open with the case's environment. Exit 2: gdr_open failed; 10 + backend: it worked (and,
 * when the backend is dmabuf, a pin/map/copy worked; 1 if not).
 */
static int child_open(void *arg)
{
	struct gdr_cuda_ctx_scope scope;
	struct gdr_why why = { "" };
	const struct testcuda *cu;
	int backend = 0, ret;
	gdr_t g;

	(void)arg;
	g = gdr_open();
	if (!g)
		return 2;
	gdr_get_attribute(g, GDR_ATTR_EXT_BACKEND, &backend);
	ret = 10 + backend;
	if (backend == GDR_BACKEND_DMABUF) {
		cu = testcuda_acquire(&why);
		if (!cu || gdr_cuda_ctx_enter(cu->lib, 0, &scope) != CUDA_SUCCESS) {
			ret = 1;
		} else {
			if (pin_map_copy(g, cu))
				ret = 1;
			gdr_cuda_ctx_leave(cu->lib, &scope);
		}
	}
	gdr_close(g);
	return ret;
}

/* Export a cuMemAlloc buffer as a dma-buf and mmap it, as the backend would. */
static int child_driver_mmap(void *arg)
{
	struct gdr_cuda_ctx_scope scope;
	struct gdr_why why = { "" };
	const struct testcuda *cu = testcuda_acquire(&why);
	CUdeviceptr buf = 0;
	char err[128];
	CUresult res;
	void *p;
	int fd = -1, ret;

	(void)arg;
	if (!cu || gdr_cuda_ctx_enter(cu->lib, 0, &scope) != CUDA_SUCCESS ||
	    cu->cuMemAlloc(&buf, 1 << 20) != CUDA_SUCCESS) {
		fprintf(stderr, "CUDA set-up failed: %s\n", why.msg);
		return 1;
	}
	res = cu->cuMemGetHandleForAddressRange(&fd, buf, 1 << 20,
						CU_MEM_RANGE_HANDLE_TYPE_DMA_BUF_FD, 0);
	if (res != CUDA_SUCCESS) {
		fprintf(stderr, "cuMemGetHandleForAddressRange: %s\n",
		       gdr_cuda_strerror(cu->lib, res, err, sizeof(err)));
		ret = 1;
		goto out;
	}
	p = mmap(NULL, 1 << 20, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
	ret = p == MAP_FAILED ? errno : 0;
	fprintf(stderr, "dma-buf export: fd %d; mmap: %s (errno %d)\n", fd,
		p == MAP_FAILED ? strerror(ret) : "works", ret);
	if (p != MAP_FAILED)
		munmap(p, 1 << 20);
	close(fd);
out:
	cu->cuMemFree(buf);
	gdr_cuda_ctx_leave(cu->lib, &scope);
	return ret == KERNEL_ENOTSUPP ? 100 : ret ? 101 : 0;
}

/* fn in a child with env, its output in out; its exit status (test_child_exit). */
static int run_child(const char *const *env, int (*fn)(void *), char *out, size_t len)
{
	const struct test_child child = { .env = env, .output = out, .output_len = len };

	return test_child_exit(&child, fn, NULL);
}

/* Print the child's output, indented, so the log lines can be quoted. */
static void show(const char *name, const char *out)
{
	printf("--- %s ---\n", name);
	for (const char *p = out; *p;) {
		const char *eol = strchr(p, '\n');
		int len = eol ? (int)(eol - p) : (int)strlen(p);

		printf("    %.*s\n", len, p);
		p += len + (eol != NULL);
	}
}

struct open_case {
	const char *name;
	const char *backend;
	const char *use_dmabuf;
};

static void run_open_case(const struct open_case *c)
{
	const char *const env[] = {
		"GDRCOPY_ENABLE_LOGGING", "1",
		"GDRCOPY_LOG_LEVEL", "2",
		"GDRCOPY_BACKEND", c->backend,
		"GDRCOPY_USE_DMABUF_MMAP", c->use_dmabuf,
		NULL,
	};
	bool forced = c->backend || c->use_dmabuf;
	bool new_driver = driver_version >= DMABUF_MMAP_VERSION;
	char log[16384];
	int got = run_child(env, child_open, log, sizeof(log));
	const char *line = strstr(log, "backend dmabuf: ");

	show(c->name, log);
	printf("    => %s\n", got == 2 ? "gdr_open failed" : got >= 10 ? "gdr_open worked" :
	       "dmabuf pin/map/copy failed");
	if (new_driver) {
		/* R610: dmabuf works, and is chosen unless gdrdrv is there first. */
		if (forced ? got != 10 + GDR_BACKEND_DMABUF : got < 10)
			test_report("fail", c->name, "driver %d should allow dmabuf, gdr_open gave %d",
			       driver_version, got);
		else
			test_report("pass", c->name, NULL);
		return;
	}
	if (!line || !strstr(line, VERSION_REASON))
		test_report("fail", c->name, "no 'backend dmabuf: ... %s' line", VERSION_REASON);
	else if (forced && got != 2)
		test_report("fail", c->name, "forced dmabuf on driver %d, yet gdr_open gave %d",
		       driver_version, got);
	else if (!forced && (got < 10 || got == 10 + GDR_BACKEND_DMABUF))
		test_report("fail", c->name, "gdr_open did not go on to a working backend (%d)", got);
	else
		test_report("pass", c->name, NULL);
}

int main(void)
{
	static const struct open_case cases[] = {
		{ "default_open", NULL, NULL },
		{ "backend_dmabuf", "dmabuf", NULL },
		{ "use_dmabuf_mmap", NULL, "1" },
	};
	static const char *const clean[] = {
		"GDRCOPY_BACKEND", NULL, "GDRCOPY_USE_DMABUF_MMAP", NULL, NULL,
	};
	char out[16384];
	int rc;

	gpu_use_nvidia_icd();
	rc = run_child(clean, child_probe, out, sizeof(out));
	if (rc == TEST_SKIP)
		test_skip_program("%s", strtok(out, "\n") ? out : "no NVIDIA GPU");
	if (rc) {
		fprintf(stderr, "probing the CUDA driver failed (%d): %s\n", rc, out);
		return TEST_FAIL;
	}
	driver_version = atoi(out);
	printf("CUDA driver %d.%d\n", driver_version / 1000, driver_version % 1000 / 10);

	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++)
		run_open_case(&cases[i]);

	rc = run_child(clean, child_driver_mmap, out, sizeof(out));
	show("driver_mmap", out);
	if (driver_version >= DMABUF_MMAP_VERSION ? rc == 0 : rc == 100)
		test_report("pass", "driver_mmap", NULL);
	else
		test_report("fail", "driver_mmap", "exit %d (0: mmap worked, 100: errno 524, 101: other "
		       "errno, 1: export failed)", rc);
	return test_status();
}
