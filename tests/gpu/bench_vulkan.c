/* SPDX-License-Identifier: MIT */
/*
 * Benchmark, not a test: the vulkan backend's small-copy latency beside CUDA's own copies and a
 * raw store, and its pin + map cost, in one run on one buffer. Prints a table of medians.
 *   bench_vulkan [-n batches] [-b ops per batch]
 * Each figure is the median over batches of (batch time / ops per batch), CLOCK_MONOTONIC.
 * Runs on the simulated driver too (LD_LIBRARY_PATH=build/sim/cuda, VK_DRIVER_FILES=lavapipe),
 * where the numbers mean nothing but the program is exercised.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "gdrapi.h"
#include "gdrapi_ext.h"
#include "gpucommon.h"

#define MiB (1UL << 20)

static int batches = 201, per_batch = 100;


static inline void store_fence(void)
{
#if defined(__x86_64__) || defined(__i386__)
	__builtin_ia32_sfence();
#else
	__atomic_thread_fence(__ATOMIC_RELEASE);
#endif
}

enum op { OP_STORE, OP_COPY_TO, OP_COPY_FROM, OP_HTOD, OP_DTOH };

struct ctx {
	gdr_mh_t mh;
	void *map;
	CUdeviceptr dev;
	unsigned char buf[64];
};

/* One op; returns 0 or an error. */
static int run_op(struct ctx *c, enum op op)
{
	switch (op) {
	case OP_STORE:
		*(volatile uint64_t *)c->map = 0x55aa55aa55aa55aaULL;
		store_fence();
		return 0;
	case OP_COPY_TO:
		return gdr_copy_to_mapping(c->mh, c->map, c->buf, 8);
	case OP_COPY_FROM:
		return gdr_copy_from_mapping(c->mh, c->buf, c->map, 64);
	case OP_HTOD:
		return cu->cuMemcpyHtoD(c->dev, c->buf, 8);
	case OP_DTOH:
		return cu->cuMemcpyDtoH(c->buf, c->dev, 64);
	}
	return -1;
}

static double time_op(struct ctx *c, enum op op, double *samples)
{
	for (int b = 0; b < batches; b++) {
		double t0 = gpu_now_ns();

		for (int i = 0; i < per_batch; i++)
			if (run_op(c, op))
				return -1;
		samples[b] = (gpu_now_ns() - t0) / per_batch;
	}
	return gpu_median(samples, batches);
}

/* Median pin + map, and unmap + unpin, of size bytes at ptr. */
static int time_pin_map(gdr_t g, CUdeviceptr ptr, size_t size, int n, double *pin_map,
			double *unpin)
{
	double *a = calloc((size_t)n, sizeof(*a)), *b = calloc((size_t)n, sizeof(*b));

	if (!a || !b)
		return -1;
	for (int i = 0; i < n; i++) {
		gdr_mh_t mh;
		void *va;
		double t0 = gpu_now_ns(), t1;

		if (gdr_pin_buffer_v2(g, ptr, size, 0, &mh) || gdr_map(g, mh, &va, size))
			return -1;
		t1 = gpu_now_ns();
		a[i] = t1 - t0;
		gdr_unmap(g, mh, va, size);
		gdr_unpin_buffer(g, mh);
		b[i] = gpu_now_ns() - t1;
	}
	*pin_map = gpu_median(a, n);
	*unpin = gpu_median(b, n);
	free(a);
	free(b);
	return 0;
}

int main(int argc, char **argv)
{
	static const char *const names[] = {
		[OP_STORE] = "raw 8 B store + sfence",
		[OP_COPY_TO] = "gdr_copy_to_mapping 8 B",
		[OP_COPY_FROM] = "gdr_copy_from_mapping 64 B",
		[OP_HTOD] = "cuMemcpyHtoD 8 B",
		[OP_DTOH] = "cuMemcpyDtoH 64 B",
	};
	double first_pin, pm64, up64, pm2m, up2m, *samples;
	struct gpu_vmm m;
	struct ctx c;
	gdr_t g;
	int opt, v = 0, ret;

	while ((opt = getopt(argc, argv, "n:b:h")) != -1) {
		if (opt == 'n')
			batches = atoi(optarg);
		else if (opt == 'b')
			per_batch = atoi(optarg);
		else {
			fprintf(stderr, "usage: %s [-n batches] [-b ops per batch]\n", argv[0]);
			return opt == 'h' ? 0 : 2;
		}
	}
	if (batches < 1 || per_batch < 1)
		return 2;
	ret = gpu_init();
	if (ret)
		return ret;
	gpu_describe();
	g = gdr_open();
	if (!g || gdr_get_attribute(g, GDR_ATTR_EXT_BACKEND, &v) || v != GDR_BACKEND_VULKAN) {
		fprintf(stderr, "gdr_open did not give the vulkan backend (backend %d); "
			"GDRCOPY_ENABLE_LOGGING=1 GDRCOPY_LOG_LEVEL=2 says why\n", v);
		return 1;
	}
	if (gpu_vmm_alloc(&m, 2 * MiB, CU_MEM_HANDLE_TYPE_POSIX_FILE_DESCRIPTOR)) {
		fprintf(stderr, "cuMemCreate with a POSIX fd handle type failed\n");
		return 1;
	}
	samples = calloc((size_t)batches, sizeof(*samples));
	memset(&c, 0, sizeof(c));
	c.dev = m.ptr;

	/* The first pin also creates the VkDevice. */
	first_pin = gpu_now_ns();
	if (!samples || gdr_pin_buffer_v2(g, m.ptr, 2 * MiB, 0, &c.mh) ||
	    gdr_map(g, c.mh, &c.map, 2 * MiB)) {
		fprintf(stderr, "pin/map failed\n");
		return 1;
	}
	first_pin = gpu_now_ns() - first_pin;

	printf("%-40s %12s\n", "operation (median per op)", "us");
	for (enum op op = OP_STORE; op <= OP_DTOH; op++) {
		double t = time_op(&c, op, samples);

		if (t < 0) {
			fprintf(stderr, "%s failed\n", names[op]);
			return 1;
		}
		printf("%-40s %12.3f\n", names[op], t / 1e3);
	}
	gdr_unmap(g, c.mh, c.map, 2 * MiB);
	gdr_unpin_buffer(g, c.mh);
	if (time_pin_map(g, m.ptr, 65536, 51, &pm64, &up64) ||
	    time_pin_map(g, m.ptr, 2 * MiB, 51, &pm2m, &up2m)) {
		fprintf(stderr, "pin/map timing failed\n");
		return 1;
	}
	printf("%-40s %12.1f\n", "first pin + map (with vkCreateDevice)", first_pin / 1e3);
	printf("%-40s %12.1f\n", "pin + map 64 KiB", pm64 / 1e3);
	printf("%-40s %12.1f\n", "unmap + unpin 64 KiB", up64 / 1e3);
	printf("%-40s %12.1f\n", "pin + map 2 MiB", pm2m / 1e3);
	printf("%-40s %12.1f\n", "unmap + unpin 2 MiB", up2m / 1e3);
	printf("# %d batches of %d ops; copy impl to/from (4 KiB): ", batches, per_batch);
	gdr_get_attribute(g, GDR_ATTR_EXT_COPY_TO_IMPL, &v);
	printf("%d/", v);
	gdr_get_attribute(g, GDR_ATTR_EXT_COPY_FROM_IMPL, &v);
	printf("%d\n", v);
	free(samples);
	gpu_vmm_free(&m);
	gdr_close(g);
	return 0;
}
