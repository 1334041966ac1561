// SPDX-License-Identifier: MIT
/*
 * gdrcopy_pplat: CPU/GPU ping-pong round trip, as GDRCopy 2.6's pplat. A GPU kernel and the CPU
 * take turns: mode 0, the CPU writes data and a flag the GPU waits for, and the GPU answers with
 * a flag the CPU waits for; mode 1, the GPU produces and the CPU consumes and acknowledges. Each
 * flag and the data live in GPU memory (pinned and mapped with gdrcopy) or in host memory
 * (cuMemHostAlloc, mapped for the GPU). -c runs the same exchange with every object in plain
 * device memory reached by cuMemcpyAsync + cuStreamSynchronize, the path gdrcopy replaces; -r
 * runs it again with the GPU's flag written by one raw store + store fence into the same kind
 * of mapping, the round trip with no library code in it, so that one process shows what the
 * library adds to the hardware's.
 */
#include <cuda_runtime.h>
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "common.h"

enum where { GPUMEM, HOSTMEM, CUMEMCPY };

static const char *const where_names[] = { "gpumem", "hostmem", "cumemcpy" };

/* A flag or the data buffer: where it lives, its CPU access and its GPU address. */
struct object {
	enum where where;
	size_t size;
	struct tool_mapping m;	/* GPUMEM */
	struct gpu_buf plain;	/* CUMEMCPY */
	void *cpu;		/* GPUMEM: the mapping; HOSTMEM: the host memory */
	void *staging;		/* CUMEMCPY: pinned host memory for the async copies */
	CUdeviceptr dev;	/* what the kernel uses */
};

struct pp_args {
	volatile uint32_t *gpu_flag;	/* the CPU writes it, the GPU waits on it */
	volatile uint32_t *cpu_flag;	/* the GPU writes it, the CPU waits on it */
	volatile uint32_t *data;
	size_t words;
	unsigned int *arrive;		/* blocks done with each iteration, cumulative */
	unsigned int *errors;		/* words of data the GPU found wrong */
	unsigned long long *gpu_ns;	/* %globaltimer at the first and after the last iteration */
	uint32_t iters;
	int mode;
};

__host__ __device__ static inline uint32_t data_word(uint32_t iter, size_t w)
{
	return iter * 2654435761u + (uint32_t)w;
}

__device__ static inline unsigned long long globaltimer(void)
{
	unsigned long long t;

	asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(t));
	return t;
}

/*
 * Thread 0 of each block waits and signals; all threads move the data. The last block to finish
 * an iteration (counted in arrive) writes the flag the CPU waits for.
 */
/*
 * Flags only, one thread: nothing but the flags to order, so no fences. Each
 * __threadfence_system costs a PCIe round trip, and the general loop below has three per
 * iteration; a volatile store to host memory still reaches the CPU promptly.
 */
__device__ void pp_flags_only(struct pp_args a)
{
	if (a.mode == 1)
		a.gpu_ns[0] = globaltimer();
	for (uint32_t i = 1; i <= a.iters; i++) {
		if (a.mode == 0) {
			while (*a.gpu_flag < i)
				;
			*a.cpu_flag = i;
		} else {
			*a.cpu_flag = i;
			while (*a.gpu_flag < i)
				;
		}
	}
	if (a.mode == 1)
		a.gpu_ns[1] = globaltimer();
}

__global__ void pp_kernel(struct pp_args a)
{
	const size_t tid = (size_t)blockIdx.x * blockDim.x + threadIdx.x;
	const size_t nthreads = (size_t)gridDim.x * blockDim.x;

	if (a.words == 0 && gridDim.x == 1 && blockDim.x == 1) {
		pp_flags_only(a);
		return;
	}
	if (a.mode == 1 && tid == 0)
		a.gpu_ns[0] = globaltimer();
	for (uint32_t i = 1; i <= a.iters; i++) {
		if (a.mode == 0) {
			if (threadIdx.x == 0) {
				while (*a.gpu_flag < i)
					;
				__threadfence_system();	/* the data is read after the flag */
			}
			__syncthreads();
			for (size_t w = tid; w < a.words; w += nthreads)
				if (a.data[w] != data_word(i, w))
					atomicAdd(a.errors, 1u);
		} else {
			for (size_t w = tid; w < a.words; w += nthreads)
				a.data[w] = data_word(i, w);
		}
		__syncthreads();
		if (threadIdx.x == 0) {
			/* Release this block's data; the last block also acquires the others'. */
			__threadfence_system();
			if (atomicAdd(a.arrive, 1u) == gridDim.x * i - 1) {
				__threadfence_system();
				*a.cpu_flag = i;
				__threadfence_system();
			}
			if (a.mode == 1)
				while (*a.gpu_flag < i)
					;
		}
		__syncthreads();
	}
	if (a.mode == 1 && tid == 0)
		a.gpu_ns[1] = globaltimer();
}

struct pp {
	struct tool_cuda cu;
	gdr_t g;
	enum tool_alloc_kind kind;
	int map_flags, mode, blocks, threads;
	int raw_flag;		/* the GPU's flag (in GPU memory) written by a raw store + fence */
	uint32_t iters;
	double timeout_s;
	size_t data_size;
	CUstream copy_stream;
	cudaStream_t kernel_stream;
};

static void obj_alloc(struct pp *p, struct object *o, enum where where, size_t size)
{
	memset(o, 0, sizeof(*o));
	o->where = where;
	o->size = size;
	if (where == GPUMEM) {
		tool_map_gpu(&o->m, p->g, &p->cu, size, p->kind, p->map_flags, 1);
		o->cpu = o->m.ptr;
		o->dev = o->m.buf.ptr;
	} else if (where == HOSTMEM) {
		CU_CHECK(cuMemHostAlloc(&o->cpu, size, CU_MEMHOSTALLOC_PORTABLE |
					CU_MEMHOSTALLOC_DEVICEMAP));
		CU_CHECK(cuMemHostGetDevicePointer(&o->dev, o->cpu, 0));
	} else {
		const char *what = "cuMemAlloc";
		CUresult r = gpu_alloc(&o->plain, size, TOOL_ALLOC_CUMEMALLOC, 0, 0, p->cu.dev,
				       &what);

		if (r != CUDA_SUCCESS)
			tool_die("%s of %zu bytes failed: %s", what, size, tool_cu_name(r));
		CU_CHECK(cuMemHostAlloc(&o->staging, size, CU_MEMHOSTALLOC_PORTABLE));
		o->dev = o->plain.ptr;
	}
}

static void obj_free(struct object *o)
{
	if (o->where == GPUMEM) {
		tool_unmap_gpu(&o->m, 1);
	} else if (o->where == HOSTMEM) {
		CU_CHECK(cuMemFreeHost(o->cpu));
	} else {
		CU_CHECK(cuMemFreeHost(o->staging));
		CU_CHECK(gpu_free(&o->plain));
	}
}

static void obj_write(struct pp *p, struct object *o, const void *src, size_t n)
{
	if (o->where == GPUMEM) {
		gdr_copy_to_mapping(o->m.mh, o->cpu, src, n);
	} else if (o->where == HOSTMEM) {
		/* A full fence: a flag stored next through a WC mapping must not pass the data. */
		memcpy(o->cpu, src, n);
		__atomic_thread_fence(__ATOMIC_SEQ_CST);
	} else {
		memcpy(o->staging, src, n);
		CU_CHECK(cuMemcpyHtoDAsync(o->dev, o->staging, n, p->copy_stream));
		CU_CHECK(cuStreamSynchronize(p->copy_stream));
	}
}

static void obj_read(struct pp *p, struct object *o, void *dst, size_t n)
{
	if (o->where == GPUMEM) {
		gdr_copy_from_mapping(o->m.mh, dst, o->cpu, n);
	} else if (o->where == HOSTMEM) {
		__atomic_thread_fence(__ATOMIC_ACQUIRE);
		memcpy(dst, o->cpu, n);
	} else {
		CU_CHECK(cuMemcpyDtoHAsync(o->staging, o->dev, n, p->copy_stream));
		CU_CHECK(cuStreamSynchronize(p->copy_stream));
		memcpy(dst, o->staging, n);
	}
}

static void flag_write(struct pp *p, struct object *o, uint32_t v)
{
	if (o->where == HOSTMEM) {
		__atomic_store_n((uint32_t *)o->cpu, v, __ATOMIC_RELEASE);
	} else if (o->where == GPUMEM && p->raw_flag) {
		*(volatile uint32_t *)o->cpu = v;
		tool_store_fence();
	} else {
		obj_write(p, o, &v, sizeof(v));
	}
}

static uint32_t flag_read(struct pp *p, struct object *o)
{
	uint32_t v;

	if (o->where == HOSTMEM)
		return __atomic_load_n((uint32_t *)o->cpu, __ATOMIC_ACQUIRE);
	obj_read(p, o, &v, sizeof(v));
	return v;
}

static void timeout(struct pp *p)
{
	cudaError_t q = cudaStreamQuery(p->kernel_stream);

	printf("ERROR: TIMEOUT!!!\n");
	printf("cudaStreamQuery: %s\n", cudaGetErrorName(q));
	fflush(stdout);
	tool_die("no answer from the GPU within %g s (-u)", p->timeout_s);
}

/*
 * Polls between two looks at the clock while waiting for a flag: a flag that lands while the CPU
 * reads the clock (clock_gettime: 36 ns on the H200's host) is seen that much later, so the
 * wait reads it rarely and a bucket of mode 0 not at all below 4096 polls.
 */
#define POLLS_PER_CLOCK 4096u

static void wait_flag(struct pp *p, struct object *o, uint32_t i)
{
	double deadline = 0;

	for (unsigned int n = 1; flag_read(p, o) < i; n++) {
		double now;

		if (n % POLLS_PER_CLOCK || p->timeout_s <= 0)
			continue;
		now = tool_now_us();
		if (!deadline)
			deadline = now + p->timeout_s * 1e6;
		else if (now > deadline)
			timeout(p);
	}
}

/* The last iteration (1-based) of bucket b when iters are split into nb buckets. */
static uint32_t bucket_last(size_t b, size_t nb, uint32_t iters)
{
	return (uint32_t)((uint64_t)(b + 1) * iters / nb);
}

struct result {
	struct tool_stats st;
	double gpu_avg_us;	/* mode 1: from %globaltimer */
	unsigned errors;
};

/* One exchange of p->iters round trips; the objects are ready and zeroed. */
static void exchange(struct pp *p, struct object *gflag, struct object *cflag,
		     struct object *data, struct result *res)
{
	size_t words = data ? data->size / 4 : 0;
	uint32_t *buf = (uint32_t *)calloc(words ? words : 1, sizeof(uint32_t));
	/* Mode 0 times buckets of iterations, as GDRCopy's; mode 1 each round trip. */
	size_t nb = p->mode == 0 ? tool_buckets(p->iters) : p->iters, b = 0;
	double *lat = (double *)calloc(nb, sizeof(double));
	unsigned long long gpu_ns[2] = { 0, 0 };
	CUdeviceptr counters;
	struct pp_args a;
	size_t nlat = 0;
	double prev = 0, seg = 0, acc = 0;
	uint32_t in_bucket = 0;
	cudaError_t err;

	if (!buf || !lat)
		tool_die("out of memory");
	CU_CHECK(cuMemAlloc(&counters, 4 * sizeof(unsigned long long)));
	CU_CHECK(cuMemsetD8(counters, 0, 4 * sizeof(unsigned long long)));
	CU_CHECK(cuCtxSynchronize());
	memset(&a, 0, sizeof(a));
	a.gpu_flag = (volatile uint32_t *)gflag->dev;
	a.cpu_flag = (volatile uint32_t *)cflag->dev;
	a.data = data ? (volatile uint32_t *)data->dev : NULL;
	a.words = words;
	a.arrive = (unsigned int *)counters;
	a.errors = (unsigned int *)counters + 1;
	a.gpu_ns = (unsigned long long *)counters + 1;
	a.iters = p->iters;
	a.mode = p->mode;
	flag_write(p, gflag, 0);
	flag_write(p, cflag, 0);

	pp_kernel<<<p->blocks, p->threads, 0, p->kernel_stream>>>(a);
	err = cudaGetLastError();
	if (err != cudaSuccess) {
		int major = 0, minor = 0;

		cuDeviceGetAttribute(&major, CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MAJOR, p->cu.dev);
		cuDeviceGetAttribute(&minor, CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MINOR, p->cu.dev);
		tool_die("kernel launch failed: %s (%s); for compute capability %d.%d rebuild with "
			 "PPLAT_GENCODE naming it", cudaGetErrorName(err), cudaGetErrorString(err),
			 major, minor);
	}
	/*
	 * Mode 0: a bucket's time is its iterations' writes and waits, back to back; filling the
	 * data buffer is left out of it. With flags only, nothing but the round trips runs between
	 * a bucket's two looks at the clock.
	 */
	seg = tool_now_us();
	for (uint32_t i = 1; i <= p->iters; i++) {
		double t1;

		if (p->mode == 0) {
			if (data) {
				acc += tool_now_us() - seg;
				for (size_t w = 0; w < words; w++)
					buf[w] = data_word(i, w);
				seg = tool_now_us();
				obj_write(p, data, buf, data->size);
			}
			flag_write(p, gflag, i);
			wait_flag(p, cflag, i);
			in_bucket++;
			if (i == bucket_last(b, nb, p->iters)) {
				t1 = tool_now_us();
				lat[nlat++] = (acc + t1 - seg) / in_bucket;
				b++;
				acc = 0;
				in_bucket = 0;
				seg = t1;
			}
		} else {
			wait_flag(p, cflag, i);
			t1 = tool_now_us();
			/* Streaming loads from WC memory may pass the flag's load: fence them. */
			__atomic_thread_fence(__ATOMIC_SEQ_CST);
			if (data)
				obj_read(p, data, buf, data->size);
			flag_write(p, gflag, i);
			if (i > 1)
				lat[nlat++] = t1 - prev;
			prev = t1;
			for (size_t w = 0; w < words; w++)
				res->errors += buf[w] != data_word(i, w);
		}
	}
	err = cudaStreamSynchronize(p->kernel_stream);
	if (err != cudaSuccess)
		tool_die("the ping-pong kernel failed: %s", cudaGetErrorName(err));
	{
		unsigned int gpu_errors = 0;

		CU_CHECK(cuMemcpyDtoH(&gpu_errors, counters + sizeof(unsigned int),
				      sizeof(gpu_errors)));
		CU_CHECK(cuMemcpyDtoH(gpu_ns, counters + sizeof(unsigned long long),
				      sizeof(gpu_ns)));
		res->errors += gpu_errors;
	}
	tool_stats(lat, nlat, &res->st);	/* nlat > 0: main refuses mode 1's -t 1 */
	res->gpu_avg_us = p->mode == 1 && p->iters ? (double)(gpu_ns[1] - gpu_ns[0]) / 1e3 /
						     p->iters : 0;
	CU_CHECK(cuMemFree(counters));
	free(buf);
	free(lat);
}

static void report(const struct pp *p, const char *test, const char *g, const char *c,
		   const char *d, const struct result *r)
{
	if (tool_csv) {
		printf("%s,%d,%s,%s,%s,%zu,%u,%.4f,%.4f\n", test, p->mode, g, c, d, p->data_size,
		       p->iters, r->st.min, r->st.median);
		return;
	}
	const char *label = !strcmp(test, "cumemcpy") ? "cuMemcpy: " :
			    !strcmp(test, "raw") ? "Raw flag store: " : "";

	printf("%sRound-trip latency per iteration is (min) %.4f, (median) %.4f us\n", label,
	       r->st.min, r->st.median);
	if (p->mode == 1)
		printf("%sGPU-timed (%%globaltimer) average per iteration: %.4f us\n", label,
		       r->gpu_avg_us);
}

/* -G, -C, -D: where a flag or the data lives, indexed by enum where. */
static const char *const where_choices[] = { "gpumem", "hostmem", NULL };

/*
 * One exchange with the flags and the data where given (CUMEMCPY: through cuMemcpy), reported
 * as test; dies when data arrived wrong.
 */
static void run_exchange(struct pp *p, const char *test, enum where gw, enum where cw,
			 enum where dw, size_t flag_size)
{
	struct object gflag, cflag, data;
	struct result res;

	obj_alloc(p, &gflag, gw, flag_size);
	obj_alloc(p, &cflag, cw, flag_size);
	if (p->data_size)
		obj_alloc(p, &data, dw, p->data_size);
	memset(&res, 0, sizeof(res));
	exchange(p, &gflag, &cflag, p->data_size ? &data : NULL, &res);
	report(p, test, where_names[gw], where_names[cw], p->data_size ? where_names[dw] : "none",
	       &res);
	if (res.errors)
		tool_die("%s%u data words arrived wrong", gw == CUMEMCPY ? "cuMemcpy exchange: " : "",
			 res.errors);
	obj_free(&gflag);
	obj_free(&cflag);
	if (p->data_size)
		obj_free(&data);
}

/* What the run measures, for people. */
static void describe(const struct pp *p, enum where gw, enum where cw, enum where dw)
{
	tool_say("Benchmark mode: %d: %s\n", p->mode, p->mode ? "GPU produces, CPU consumes" :
							       "CPU produces, GPU consumes");
	tool_say("gpu alloc fn: %s\n", tool_alloc_name(p->kind));
	tool_say("GPU flag: %s; CPU flag: %s; data: %s, %zu bytes; %d block(s) x %d thread(s); "
		 "%u iterations\n", where_names[gw], where_names[cw],
		 p->data_size ? where_names[dw] : "none", p->data_size, p->blocks, p->threads,
		 p->iters);
	tool_say("%s\n", p->mode ?
		 "The GPU writes the data and then the CPU's flag; the CPU waits for the flag, "
		 "reads the data and answers through the GPU's flag. A round trip is the time "
		 "between two flags seen by the CPU." :
		 "The CPU writes the data and then the GPU's flag; the GPU waits for the flag, "
		 "reads the data and answers through the CPU's flag. A round trip is the time from "
		 "the CPU's first write to the answer.");
}

/*
 * pp_kernel's blocks wait on each other each iteration (the last to arrive answers the CPU, which
 * only then lets every block go on), so they must all be resident at once: a grid larger than
 * the GPU runs together would wait for ever, and end in a timeout that says nothing of why.
 */
static void check_resident(const struct pp *p)
{
	int per_sm = 0, sms = 0;

	if (cudaOccupancyMaxActiveBlocksPerMultiprocessor(&per_sm, pp_kernel, p->threads, 0) !=
	    cudaSuccess) {
		cudaGetLastError();	/* cannot tell: the launch will say what is wrong */
		return;
	}
	CU_CHECK(cuDeviceGetAttribute(&sms, CU_DEVICE_ATTRIBUTE_MULTIPROCESSOR_COUNT, p->cu.dev));
	if ((long long)per_sm * sms < p->blocks)
		tool_die("-B %d -T %d: this GPU runs at most %lld such blocks at once (%d per SM, %d "
			 "SMs), and pplat's blocks wait on each other every round trip: use fewer "
			 "blocks or threads", p->blocks, p->threads, (long long)per_sm * sms, per_sm,
			 sms);
}

int main(int argc, char **argv)
{
	int gw = GPUMEM, cw = HOSTMEM, dw = GPUMEM, dev_id = 0, baseline = 0, raw = 0, timeout_s = 10;
	size_t iters = 1000;
	struct pp p;

	memset(&p, 0, sizeof(p));
	p.kind = TOOL_ALLOC_AUTO;
	p.blocks = 8;
	p.threads = 1024;
	/* Positional: C++17 has no designated initializers. */
	const struct tool_option options[] = {
		{ 'd', NULL, TOOL_ARG_INT, &dev_id, 0, 1024, NULL, TOOL_DEVICE_USAGE },
		{ 't', NULL, TOOL_ARG_COUNT, &iters, 1, 1L << 30, NULL,
		  "  -t N      iterations (default 1000)\n" },
		{ 'u', NULL, TOOL_ARG_INT, &timeout_s, 0, 86400, NULL,
		  "  -u SEC    timeout in seconds, 0 for none (default 10)\n" },
		{ 'a', NULL, TOOL_ARG_ALLOC, &p.kind, 0, 0, NULL, TOOL_ALLOC_USAGE },
		{ 's', NULL, TOOL_ARG_SIZE, &p.data_size, 0, 0, NULL,
		  "  -s SIZE   data bytes per iteration; 0 = flags only, on 1 block x 1 thread "
		  "(default 0)\n" },
		{ 'B', NULL, TOOL_ARG_INT, &p.blocks, 1, 65535, NULL,
		  "  -B N      blocks (default 8)\n" },
		{ 'T', NULL, TOOL_ARG_INT, &p.threads, 1, 1024, NULL,
		  "  -T N      threads per block (default 1024)\n" },
		{ 'm', NULL, TOOL_ARG_INT, &p.mode, 0, 1, NULL,
		  "  -m 0|1    0: CPU produces, GPU consumes; 1: GPU produces, CPU consumes "
		  "(default 0)\n" },
		{ 'G', NULL, TOOL_ARG_CHOICE, &gw, 0, 0, where_choices,
		  "  -G WHERE  the GPU's flag (written by the CPU): gpumem or hostmem (default "
		  "gpumem)\n" },
		{ 'C', NULL, TOOL_ARG_CHOICE, &cw, 0, 0, where_choices,
		  "  -C WHERE  the CPU's flag (written by the GPU): gpumem or hostmem (default "
		  "hostmem)\n" },
		{ 'D', NULL, TOOL_ARG_CHOICE, &dw, 0, 0, where_choices,
		  "  -D WHERE  the data: gpumem or hostmem (default gpumem)\n" },
		{ 'M', NULL, TOOL_ARG_MAP, &p.map_flags, 0, 0, NULL, TOOL_MAP_USAGE },
		{ 'c', NULL, TOOL_ARG_FLAG, &baseline, 0, 0, NULL,
		  "  -c        also run the exchange through cuMemcpyAsync + cuStreamSynchronize\n" },
		{ 'r', NULL, TOOL_ARG_FLAG, &raw, 0, 0, NULL,
		  "  -r        also run it with the GPU's flag written by a raw store + store fence "
		  "(needs -G gpumem)\n" },
		{ 0, NULL, TOOL_ARG_FLAG, NULL, 0, 0, NULL, NULL },
	};
	const struct tool_cli cli = {
		"gdrcopy_pplat", options,
		"--impl all is for copylat and copybw; give pplat one routine",
	};
	struct tool_common common;
	char why[256];

	tool_options(&cli, argc, argv, &common);
	p.iters = (uint32_t)iters;
	p.timeout_s = timeout_s;
	if (p.data_size % 4)
		tool_usage_error("-s %zu: the data size must be a multiple of 4", p.data_size);
	/* Mode 1 times from one flag the CPU sees to the next. */
	if (p.mode == 1 && iters < 2)
		tool_usage_error("-t %zu in mode 1 gives no round trip to time; use -t 2 or more",
				 iters);
	if (raw && gw != GPUMEM)
		tool_usage_error("-r writes the GPU's flag with a raw store through its mapping: it "
				 "needs -G gpumem");
	if (!p.data_size)
		p.blocks = p.threads = 1;
	/*
	 * The simulated CUDA driver (tests/sim/cuda, what make run uses without a GPU) launches no
	 * kernels: the CUDA runtime would fail on its first call with an error that does not say
	 * so (cudaErrorCallRequiresNewerDriver). Nothing can be measured: a skip, not a failure.
	 * Without any driver tool_start says that.
	 */
	if (!tool_cuda_load(why, sizeof(why)) && !tool_cuda_has("cuLaunchKernel"))
		tool_exit(TOOL_EXIT_SKIP, "the simulated GPU runs no kernels (its CUDA driver has no "
			  "cuLaunchKernel): gdrcopy_pplat needs a real GPU");
	p.g = tool_start(&p.cu, dev_id, &p.kind, NULL);
	check_resident(&p);
	tool_report_impl(p.g, common.impl);
	describe(&p, (enum where)gw, (enum where)cw, (enum where)dw);
	if (cudaStreamCreateWithFlags(&p.kernel_stream, cudaStreamNonBlocking) != cudaSuccess)
		tool_die("cudaStreamCreateWithFlags failed: %s",
			 cudaGetErrorName(cudaGetLastError()));
	CU_CHECK(cuStreamCreate(&p.copy_stream, CU_STREAM_NON_BLOCKING));
	if (tool_csv)
		printf("test,mode,gpu_flag,cpu_flag,data,size,iters,min_us,median_us\n");
	run_exchange(&p, "gdrcopy", (enum where)gw, (enum where)cw, (enum where)dw, GPU_PAGE_SIZE);
	if (raw) {
		p.raw_flag = 1;
		run_exchange(&p, "raw", (enum where)gw, (enum where)cw, (enum where)dw,
			     GPU_PAGE_SIZE);
		p.raw_flag = 0;
	}
	if (baseline)
		run_exchange(&p, "cumemcpy", CUMEMCPY, CUMEMCPY, CUMEMCPY, sizeof(uint32_t));
	CU_CHECK(cuStreamDestroy(p.copy_stream));
	cudaStreamDestroy(p.kernel_stream);
	tool_gdr_close(p.g);
	tool_cuda_fini(&p.cu);
	return 0;
}
