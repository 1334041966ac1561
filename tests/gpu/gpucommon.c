/* SPDX-License-Identifier: MIT */
#include <dlfcn.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>
#include <string.h>
#include <unistd.h>

#include "gpucommon.h"

const struct testcuda *cu;

#ifdef GDR_TEST_HAVE_KERNELS
/* kernels_fatbin.c, generated from kernels.cu at build time. */
extern const unsigned char gdr_test_kernels_fatbin[];
#endif

/* Where NVIDIA's driver puts its Vulkan ICD manifest (the test H200 has the first). */
static const char *const nvidia_icds[] = {
	"/usr/local/nvidia/share/vulkan/icd.d/nvidia_icd.json",
	"/usr/share/vulkan/icd.d/nvidia_icd.json",
	"/etc/vulkan/icd.d/nvidia_icd.json",
};

void gpu_use_nvidia_icd(void)
{
	if (getenv("VK_DRIVER_FILES") || getenv("VK_ICD_FILENAMES"))
		return;
	for (size_t i = 0; i < sizeof(nvidia_icds) / sizeof(nvidia_icds[0]); i++) {
		if (access(nvidia_icds[i], R_OK) == 0) {
			setenv("VK_DRIVER_FILES", nvidia_icds[i], 1);
			return;
		}
	}
}

int gpu_init(void)
{
	struct gdr_why why = { "" };
	CUcontext ctx;
	CUdevice dev;
	void *vk;

	cu = testcuda_acquire(&why);
	if (!cu) {
		printf("no usable CUDA driver: %s\n", why.msg);
		return 77;
	}
	if (cu->cuDeviceGet(&dev, 0) != CUDA_SUCCESS ||
	    cu->cuDevicePrimaryCtxRetain(&ctx, dev) != CUDA_SUCCESS ||
	    cu->cuCtxSetCurrent(ctx) != CUDA_SUCCESS) {
		printf("no CUDA device 0 to use\n");
		return 77;
	}
	gpu_use_nvidia_icd();
	vk = dlopen("libvulkan.so.1", RTLD_NOW | RTLD_LOCAL);
	if (!vk) {
		printf("no Vulkan loader (libvulkan.so.1): install libvulkan1 (see tests/gpu/README.md)\n");
		return 77;
	}
	dlclose(vk);
	return 0;
}

int gpu_need_nvidia(void)
{
	void *lib = dlopen("libcuda.so.1", RTLD_NOW | RTLD_NOLOAD);
	bool sim = lib && dlsym(lib, "simcuda_get_counters");
	const char *on_sim = getenv("GDR_TEST_ON_SIM");

	if (lib)
		dlclose(lib);
	if (!sim)
		return 0;
	if (on_sim && !strcmp(on_sim, "1")) {
		printf("# GDR_TEST_ON_SIM=1: on the simulated CUDA driver, not a tier-3 result\n");
		return 0;
	}
	printf("libcuda.so.1 is the simulated CUDA driver (tests/sim/cuda); tier 3 needs NVIDIA's "
	       "(GDR_TEST_ON_SIM=1 runs it there anyway)\n");
	return 77;
}

void gpu_describe(void)
{
	char name[128] = "?", bus[32] = "?";
	size_t total = 0;
	CUuuid uuid;

	cu->cuDeviceGetName(name, sizeof(name), 0);
	cu->cuDeviceGetPCIBusId(bus, sizeof(bus), 0);
	cu->cuDeviceTotalMem(&total, 0);
	printf("# CUDA driver %d.%d, device 0: %s, %s, %zu MiB, VK_DRIVER_FILES=%s\n",
	       cu->driver_version / 1000, cu->driver_version % 1000 / 10, name, bus, total >> 20,
	       getenv("VK_DRIVER_FILES") ? getenv("VK_DRIVER_FILES") : "(loader default)");
	if (cu->cuDeviceGetUuid(&uuid, 0) == CUDA_SUCCESS) {
		const unsigned char *u = (const unsigned char *)uuid.bytes;

		printf("# device 0 UUID GPU-%02x%02x%02x%02x-%02x%02x-%02x%02x-%02x%02x-"
		       "%02x%02x%02x%02x%02x%02x\n", u[0], u[1], u[2], u[3], u[4], u[5], u[6], u[7],
		       u[8], u[9], u[10], u[11], u[12], u[13], u[14], u[15]);
	}
}

CUresult gpu_vmm_alloc(struct gpu_vmm *m, size_t size, CUmemAllocationHandleType types)
{
	CUmemAllocationProp prop = {
		.type = CU_MEM_ALLOCATION_TYPE_PINNED,
		.requestedHandleTypes = types,
		.location = { .type = CU_MEM_LOCATION_TYPE_DEVICE, .id = 0 },
	};
	CUmemAccessDesc access = {
		.location = prop.location,
		.flags = CU_MEM_ACCESS_FLAGS_PROT_READWRITE,
	};
	size_t gran = 0;
	CUresult res;

	prop.allocFlags.gpuDirectRDMACapable = 1;
	memset(m, 0, sizeof(*m));
	res = cu->cuMemGetAllocationGranularity(&gran, &prop, CU_MEM_ALLOC_GRANULARITY_RECOMMENDED);
	if (res)
		return res;
	size = (size + gran - 1) / gran * gran;
	res = cu->cuMemCreate(&m->handle, size, &prop, 0);
	if (res)
		return res;
	res = cu->cuMemAddressReserve(&m->ptr, size, 0, 0, 0);
	if (res)
		goto err_release;
	res = cu->cuMemMap(m->ptr, size, 0, m->handle, 0);
	if (res)
		goto err_free;
	res = cu->cuMemSetAccess(m->ptr, size, &access, 1);
	if (res)
		goto err_unmap;
	m->size = size;
	return CUDA_SUCCESS;

err_unmap:
	cu->cuMemUnmap(m->ptr, size);
err_free:
	cu->cuMemAddressFree(m->ptr, size);
err_release:
	cu->cuMemRelease(m->handle);
	memset(m, 0, sizeof(*m));
	return res;
}

void gpu_vmm_free(struct gpu_vmm *m)
{
	if (!m->size)
		return;
	cu->cuMemUnmap(m->ptr, m->size);
	cu->cuMemAddressFree(m->ptr, m->size);
	cu->cuMemRelease(m->handle);
	memset(m, 0, sizeof(*m));
}

static struct {
	bool tried, ok;
	const char *why;
	CUfunction fill, check, echo, count;
	PFN_cuLaunchKernel_v4000 launch;
} k;

bool gpu_kernels_available(const char **why)
{
#ifdef GDR_TEST_HAVE_KERNELS
	PFN_cuModuleLoadData_v2000 load;
	PFN_cuModuleGetFunction_v2000 get;
	CUmodule mod;

	if (k.tried)
		goto out;
	k.tried = true;
	k.why = "cuModuleLoadData/cuModuleGetFunction/cuLaunchKernel not found";
	if (gdr_cuda_proc(cu->lib, "cuModuleLoadData", 2000, (void **)&load) ||
	    gdr_cuda_proc(cu->lib, "cuModuleGetFunction", 2000, (void **)&get) ||
	    gdr_cuda_proc(cu->lib, "cuLaunchKernel", 4000, (void **)&k.launch))
		goto out;
	k.why = "cuModuleLoadData failed: the embedded kernels (sm_90 + compute_90 PTX) do not "
		"run on this GPU";
	if (load(&mod, gdr_test_kernels_fatbin) != CUDA_SUCCESS)
		goto out;
	k.why = "cuModuleGetFunction failed";
	if (get(&k.fill, mod, "gdr_fill_u32") != CUDA_SUCCESS ||
	    get(&k.check, mod, "gdr_check_u32") != CUDA_SUCCESS ||
	    get(&k.echo, mod, "gdr_echo_u32") != CUDA_SUCCESS ||
	    get(&k.count, mod, "gdr_count_u32") != CUDA_SUCCESS)
		goto out;
	k.ok = true;
	k.why = NULL;
out:
	*why = k.why;
	return k.ok;
#else
	*why = "built without nvcc: no kernels";
	return false;
#endif
}

CUresult gpu_kernel_fill(CUdeviceptr p, size_t n, uint32_t seed)
{
	unsigned long long count = n;
	void *args[] = { &p, &count, &seed };
	CUresult res;

	res = k.launch(k.fill, 264, 1, 1, 256, 1, 1, 0, NULL, args, NULL);
	return res ? res : cu->cuCtxSynchronize();
}

CUresult gpu_kernel_check(CUdeviceptr p, size_t n, uint32_t seed, unsigned long long *bad)
{
	unsigned long long count = n, zero = 0;
	CUdeviceptr counter;
	void *args[] = { &p, &count, &seed, &counter };
	CUresult res;

	res = cu->cuMemAlloc(&counter, sizeof(zero));
	if (res)
		return res;
	res = cu->cuMemcpyHtoD(counter, &zero, sizeof(zero));
	if (!res)
		res = k.launch(k.check, 264, 1, 1, 256, 1, 1, 0, NULL, args, NULL);
	if (!res)
		res = cu->cuCtxSynchronize();
	if (!res)
		res = cu->cuMemcpyDtoH(bad, counter, sizeof(*bad));
	cu->cuMemFree(counter);
	return res;
}

CUresult gpu_kernel_echo_start(CUdeviceptr ping, CUdeviceptr pong, uint32_t iters)
{
	void *args[] = { &ping, &pong, &iters };

	return k.launch(k.echo, 1, 1, 1, 1, 1, 1, 0, NULL, args, NULL);
}

CUresult gpu_kernel_count_start(CUdeviceptr counter, CUdeviceptr stop)
{
	void *args[] = { &counter, &stop };

	return k.launch(k.count, 1, 1, 1, 1, 1, 1, 0, NULL, args, NULL);
}

double gpu_now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec * 1e9 + ts.tv_nsec;
}

static int cmp_double(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;

	return x < y ? -1 : x > y;
}

double gpu_median(double *v, int n)
{
	qsort(v, (size_t)n, sizeof(*v), cmp_double);
	return n % 2 ? v[n / 2] : (v[n / 2 - 1] + v[n / 2]) / 2;
}
