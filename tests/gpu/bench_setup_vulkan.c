/* SPDX-License-Identifier: MIT */
/*
 * Benchmark, not a test: what setting up the vulkan backend costs, against what the Vulkan driver
 * itself costs for the same work, measured in the same run (issue 15's targets).
 *   bench_setup_vulkan [-r rounds] [-n later calls]
 * Each round runs two fresh processes (this program again, with --phase), alternately:
 *   vulkan: the driver alone: load libvulkan, create the instance and do the library's queries
 *           (devices, UUIDs, memory types, extensions, external-memory properties), create the
 *           VkDevice, then import one CUDA VMM allocation (export its fd, vkAllocateMemory);
 *           and the GPU memory that creating the instance and the device took (cuMemGetInfo).
 *   gdr:    the process's first gdr_open and first pin (64 KiB), the first gdr_close, then n
 *           later gdr_open/gdr_close pairs and n later pins and unpins of 64 KiB and 2 MiB.
 * CUDA is initialised and the buffer allocated, untimed, before either starts. Prints each
 * round and then a markdown table of the medians over rounds. On the simulated driver and
 * lavapipe it runs too, where the numbers mean nothing.
 */
#include <dlfcn.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "gdrapi.h"
#include "gpucommon.h"
#include "vulkan_api.h"

#define MiB (1UL << 20)
#define SLICE 65536

/* What one process measured, in ms (memory in MiB; negative: not measured). */
enum {
	M_LOADER, M_INSTANCE, M_DEVICE, M_IMPORT, M_INSTANCE_MEM, M_DEVICE_MEM,	/* vulkan */
	M_OPEN_FIRST, M_PIN_FIRST, M_CLOSE_FIRST, M_OPEN, M_CLOSE, M_PIN_64K, M_UNPIN_64K,
	M_PIN_2M, M_UNPIN_2M,							/* gdr */
	N_MEASURES
};

static const char *const measure_names[N_MEASURES] = {
	"loader", "instance", "device", "import", "instance_mib", "device_mib",
	"open_first", "pin_first", "close_first", "open", "close", "pin_64k", "unpin_64k",
	"pin_2m", "unpin_2m",
};

static double ms_since(double t0)
{
	return (gpu_now_ns() - t0) / 1e6;
}

/* Free GPU memory in MiB, or -1 when the driver cannot say. */
static double free_mib(void)
{
	CUresult (*get_info)(size_t *, size_t *);
	size_t free = 0, total = 0;
	void *pfn;

	if (gdr_cuda_proc(cu->lib, "cuMemGetInfo", 3020, &pfn))
		return -1;
	get_info = (CUresult (*)(size_t *, size_t *))pfn;
	return get_info(&free, &total) == CUDA_SUCCESS ? (double)free / MiB : -1;
}

struct vk {
	PFN_vkGetInstanceProcAddr gipa;
	VkInstance instance;
	VkPhysicalDevice physical;
	VkDevice device;
	uint32_t memory_type;
	bool dedicated;
};

#define VK_FN(v, name) ((PFN_##name)(void *)(v)->gipa((v)->instance, #name))

/* The instance and the library's queries of the device matching CUDA device 0; 0 or -1. */
static int vk_instance(struct vk *v)
{
	VkApplicationInfo app = { .sType = VK_STRUCTURE_TYPE_APPLICATION_INFO,
				  .apiVersion = VK_API_VERSION_1_1 };
	VkInstanceCreateInfo info = { .sType = VK_STRUCTURE_TYPE_INSTANCE_CREATE_INFO,
				      .pApplicationInfo = &app };
	VkPhysicalDevice pds[16];
	uint32_t n = 16;
	CUuuid uuid;

	if (((PFN_vkCreateInstance)(void *)v->gipa(NULL, "vkCreateInstance"))(&info, NULL,
									   &v->instance) ||
	    VK_FN(v, vkEnumeratePhysicalDevices)(v->instance, &n, pds) < 0 ||
	    cu->cuDeviceGetUuid(&uuid, 0))
		return -1;
	for (uint32_t i = 0; i < n; i++) {
		VkPhysicalDeviceIDProperties id = {
			.sType = VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_ID_PROPERTIES };
		VkPhysicalDeviceProperties2 props = {
			.sType = VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_PROPERTIES_2, .pNext = &id };
		VkPhysicalDeviceExternalBufferInfo ext = {
			.sType = VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_EXTERNAL_BUFFER_INFO,
			.usage = VK_BUFFER_USAGE_TRANSFER_SRC_BIT | VK_BUFFER_USAGE_TRANSFER_DST_BIT,
			.handleType = VK_EXTERNAL_MEMORY_HANDLE_TYPE_OPAQUE_FD_BIT };
		VkExternalBufferProperties ext_props = {
			.sType = VK_STRUCTURE_TYPE_EXTERNAL_BUFFER_PROPERTIES };
		VkPhysicalDeviceMemoryProperties mp;
		VkExtensionProperties exts[512];
		uint32_t next = 512;

		VK_FN(v, vkGetPhysicalDeviceProperties2)(pds[i], &props);
		if (memcmp(id.deviceUUID, uuid.bytes, 16))
			continue;
		v->physical = pds[i];
		VK_FN(v, vkEnumerateDeviceExtensionProperties)(pds[i], NULL, &next, exts);
		VK_FN(v, vkGetPhysicalDeviceExternalBufferProperties)(pds[i], &ext, &ext_props);
		v->dedicated = ext_props.externalMemoryProperties.externalMemoryFeatures &
			       VK_EXTERNAL_MEMORY_FEATURE_DEDICATED_ONLY_BIT;
		VK_FN(v, vkGetPhysicalDeviceMemoryProperties)(pds[i], &mp);
		for (uint32_t t = 0; t < mp.memoryTypeCount; t++) {
			const VkMemoryPropertyFlags want = VK_MEMORY_PROPERTY_DEVICE_LOCAL_BIT |
				VK_MEMORY_PROPERTY_HOST_VISIBLE_BIT |
				VK_MEMORY_PROPERTY_HOST_COHERENT_BIT;

			if ((mp.memoryTypes[t].propertyFlags & want) == want) {
				v->memory_type = t;
				return 0;
			}
		}
		return -1;
	}
	return -1;
}

static int vk_device(struct vk *v)
{
	static const char *const exts[] = { VK_KHR_EXTERNAL_MEMORY_FD_EXTENSION_NAME };
	float priority = 1.0f;
	VkDeviceQueueCreateInfo queue = { .sType = VK_STRUCTURE_TYPE_DEVICE_QUEUE_CREATE_INFO,
					  .queueCount = 1, .pQueuePriorities = &priority };
	VkDeviceCreateInfo info = { .sType = VK_STRUCTURE_TYPE_DEVICE_CREATE_INFO,
				    .queueCreateInfoCount = 1, .pQueueCreateInfos = &queue,
				    .enabledExtensionCount = 1, .ppEnabledExtensionNames = exts };

	return VK_FN(v, vkCreateDevice)(v->physical, &info, NULL, &v->device) ? -1 : 0;
}

/* Export m's allocation as an fd and import it, as a pin does; 0 or -1. */
static int vk_import(struct vk *v, const struct gpu_vmm *m)
{
	PFN_vkGetDeviceProcAddr gdpa = VK_FN(v, vkGetDeviceProcAddr);
	VkExternalMemoryBufferCreateInfo ext = {
		.sType = VK_STRUCTURE_TYPE_EXTERNAL_MEMORY_BUFFER_CREATE_INFO,
		.handleTypes = VK_EXTERNAL_MEMORY_HANDLE_TYPE_OPAQUE_FD_BIT };
	VkBufferCreateInfo binfo = { .sType = VK_STRUCTURE_TYPE_BUFFER_CREATE_INFO, .pNext = &ext,
				     .size = m->size, .sharingMode = VK_SHARING_MODE_EXCLUSIVE,
				     .usage = VK_BUFFER_USAGE_TRANSFER_SRC_BIT };
	VkMemoryDedicatedAllocateInfo dedicated = {
		.sType = VK_STRUCTURE_TYPE_MEMORY_DEDICATED_ALLOCATE_INFO };
	VkImportMemoryFdInfoKHR import = { .sType = VK_STRUCTURE_TYPE_IMPORT_MEMORY_FD_INFO_KHR,
					   .handleType = VK_EXTERNAL_MEMORY_HANDLE_TYPE_OPAQUE_FD_BIT };
	VkMemoryAllocateInfo info = { .sType = VK_STRUCTURE_TYPE_MEMORY_ALLOCATE_INFO,
				      .pNext = &import, .allocationSize = m->size,
				      .memoryTypeIndex = v->memory_type };
	VkDeviceMemory memory;
	int fd = -1;

	if (cu->cuMemExportToShareableHandle(&fd, m->handle,
					     CU_MEM_HANDLE_TYPE_POSIX_FILE_DESCRIPTOR, 0))
		return -1;
	import.fd = fd;
	if (v->dedicated) {
		if (((PFN_vkCreateBuffer)(void *)gdpa(v->device, "vkCreateBuffer"))(
			    v->device, &binfo, NULL, &dedicated.buffer))
			return -1;
		import.pNext = &dedicated;
	}
	return ((PFN_vkAllocateMemory)(void *)gdpa(v->device, "vkAllocateMemory"))(
		       v->device, &info, NULL, &memory) ? -1 : 0;
}

static int phase_vulkan(struct gpu_vmm *m, double out[N_MEASURES])
{
	struct vk v = { 0 };
	double t0 = gpu_now_ns(), mem0 = free_mib(), mem1;
	void *lib = dlopen("libvulkan.so.1", RTLD_NOW | RTLD_LOCAL);

	v.gipa = lib ? (PFN_vkGetInstanceProcAddr)dlsym(lib, "vkGetInstanceProcAddr") : NULL;
	out[M_LOADER] = ms_since(t0);
	if (!v.gipa)
		return -1;
	t0 = gpu_now_ns();
	if (vk_instance(&v))
		return -1;
	out[M_INSTANCE] = ms_since(t0);
	mem1 = free_mib();
	t0 = gpu_now_ns();
	if (vk_device(&v))
		return -1;
	out[M_DEVICE] = ms_since(t0);
	out[M_INSTANCE_MEM] = mem0 < 0 ? -1 : mem0 - mem1;
	out[M_DEVICE_MEM] = mem1 < 0 ? -1 : mem1 - free_mib();
	t0 = gpu_now_ns();
	if (vk_import(&v, m))
		return -1;
	out[M_IMPORT] = ms_since(t0);
	return 0;
}

/* Median of n later calls of one kind, in ms; fills v. */
static double median_ms(double *v, int n)
{
	return gpu_median(v, n) / 1e6;
}

static int phase_gdr(struct gpu_vmm *m, int later, double out[N_MEASURES])
{
	double *open_t = calloc((size_t)later, sizeof(double));
	double *close_t = calloc((size_t)later, sizeof(double));
	double *pin_t[2] = { calloc((size_t)later, sizeof(double)),
			     calloc((size_t)later, sizeof(double)) };
	double *unpin_t[2] = { calloc((size_t)later, sizeof(double)),
			       calloc((size_t)later, sizeof(double)) };
	double t0 = gpu_now_ns();
	gdr_mh_t mh;
	gdr_t g;

	if (!open_t || !close_t || !pin_t[0] || !pin_t[1] || !unpin_t[0] || !unpin_t[1])
		return -1;
	g = gdr_open();
	out[M_OPEN_FIRST] = ms_since(t0);
	t0 = gpu_now_ns();
	if (!g || gdr_pin_buffer_v2(g, m->ptr, SLICE, 0, &mh))
		return -1;
	out[M_PIN_FIRST] = ms_since(t0);
	for (int i = 0; i < later; i++) {
		for (int k = 0; k < 2; k++) {
			gdr_mh_t h;

			t0 = gpu_now_ns();
			if (gdr_pin_buffer_v2(g, m->ptr, k ? 2 * MiB : SLICE, 0, &h))
				return -1;
			pin_t[k][i] = gpu_now_ns() - t0;
			t0 = gpu_now_ns();
			if (gdr_unpin_buffer(g, h))
				return -1;
			unpin_t[k][i] = gpu_now_ns() - t0;
		}
	}
	t0 = gpu_now_ns();
	if (gdr_close(g))
		return -1;
	out[M_CLOSE_FIRST] = ms_since(t0);
	for (int i = 0; i < later; i++) {
		t0 = gpu_now_ns();
		g = gdr_open();
		open_t[i] = gpu_now_ns() - t0;
		t0 = gpu_now_ns();
		if (!g || gdr_close(g))
			return -1;
		close_t[i] = gpu_now_ns() - t0;
	}
	out[M_OPEN] = median_ms(open_t, later);
	out[M_CLOSE] = median_ms(close_t, later);
	out[M_PIN_64K] = median_ms(pin_t[0], later);
	out[M_UNPIN_64K] = median_ms(unpin_t[0], later);
	out[M_PIN_2M] = median_ms(pin_t[1], later);
	out[M_UNPIN_2M] = median_ms(unpin_t[1], later);
	return 0;
}

/* The child's side: prints "name value" lines for the parent. */
static int run_phase(const char *phase, int later)
{
	double out[N_MEASURES];
	struct gpu_vmm m;
	int ret = gpu_init();

	if (ret)
		return ret;
	for (int i = 0; i < N_MEASURES; i++)
		out[i] = -1;
	if (gpu_vmm_alloc(&m, 2 * MiB, CU_MEM_HANDLE_TYPE_POSIX_FILE_DESCRIPTOR)) {
		printf("error cuMemCreate of 2 MiB with a POSIX-fd handle failed\n");
		return 1;
	}
	ret = !strcmp(phase, "vulkan") ? phase_vulkan(&m, out) : phase_gdr(&m, later, out);
	if (ret) {
		printf("error the %s phase failed\n", phase);
		return 1;
	}
	for (int i = 0; i < N_MEASURES; i++)
		if (out[i] >= 0)
			printf("%s %.6f\n", measure_names[i], out[i]);
	return 0;
}

/* Run "--phase name" in a fresh process; its measures go into out. 0, 77 (skip) or 1. */
static int spawn_phase(const char *phase, int later, double out[N_MEASURES])
{
	char later_arg[16], line[256];
	int pipefd[2], status;
	FILE *f;
	pid_t pid;

	for (int i = 0; i < N_MEASURES; i++)
		out[i] = -1;
	snprintf(later_arg, sizeof(later_arg), "%d", later);
	if (pipe(pipefd))
		return 1;
	fflush(stdout);
	pid = fork();
	if (pid < 0)
		return 1;
	if (pid == 0) {
		char *argv[] = { "bench_setup_vulkan", "--phase", (char *)phase, later_arg, NULL };

		dup2(pipefd[1], 1);
		close(pipefd[0]);
		close(pipefd[1]);
		execv("/proc/self/exe", argv);
		_exit(127);
	}
	close(pipefd[1]);
	f = fdopen(pipefd[0], "r");
	while (f && fgets(line, sizeof(line), f)) {
		char name[64];
		double v;
		int known = -1;

		if (sscanf(line, "%63s %lf", name, &v) == 2)
			for (int i = 0; i < N_MEASURES; i++)
				if (!strcmp(name, measure_names[i]))
					known = i;
		if (known >= 0)
			out[known] = v;
		else
			printf("# %s phase: %s", phase, line);
	}
	if (f)
		fclose(f);
	if (waitpid(pid, &status, 0) != pid || !WIFEXITED(status))
		return 1;
	return WEXITSTATUS(status);
}

/* The median over rounds of one measure (or of a sum of measures), -1 if any is missing. */
static double over_rounds(double (*r)[N_MEASURES], int rounds, const int *which, int n)
{
	double *v = calloc((size_t)rounds, sizeof(double)), med;

	if (!v)
		return -1;
	for (int i = 0; i < rounds; i++) {
		for (int k = 0; k < n; k++) {
			if (r[i][which[k]] < 0) {
				free(v);
				return -1;
			}
			v[i] += r[i][which[k]];
		}
	}
	med = gpu_median(v, rounds);
	free(v);
	return med;
}

static double med1(double (*r)[N_MEASURES], int rounds, int which)
{
	return over_rounds(r, rounds, &which, 1);
}

static void cell(double v, int decimals)
{
	if (v < 0)
		printf(" - |");
	else
		printf(" %.*f |", decimals, v);
}

static void row(const char *step, double vulkan, double gdr, int decimals)
{
	printf("| %s |", step);
	cell(vulkan, decimals);
	cell(gdr, decimals);
	printf("\n");
}

static void usage(FILE *f)
{
	fprintf(f, "usage: bench_setup_vulkan [-r rounds (5)] [-n later calls (100)]\n");
}

int main(int argc, char **argv)
{
	static const int vk_first[] = { M_LOADER, M_INSTANCE, M_DEVICE, M_IMPORT };
	static const int gdr_first[] = { M_OPEN_FIRST, M_PIN_FIRST };
	double (*vk)[N_MEASURES], (*gdr)[N_MEASURES], driver, ours;
	int rounds = 5, later = 100, opt;

	if (argc == 4 && !strcmp(argv[1], "--phase"))
		return run_phase(argv[2], atoi(argv[3]));
	while ((opt = getopt(argc, argv, "r:n:h")) != -1) {
		switch (opt) {
		case 'r': rounds = atoi(optarg); break;
		case 'n': later = atoi(optarg); break;
		case 'h': usage(stdout); return 0;
		default: usage(stderr); return 2;
		}
	}
	if (rounds < 1 || later < 1) {
		usage(stderr);
		return 2;
	}
	vk = calloc((size_t)rounds, sizeof(*vk));
	gdr = calloc((size_t)rounds, sizeof(*gdr));
	if (!vk || !gdr)
		return 1;
	for (int i = 0; i < rounds; i++) {
		int ret = spawn_phase("vulkan", later, vk[i]);

		if (!ret)
			ret = spawn_phase("gdr", later, gdr[i]);
		if (ret)
			return ret == 77 ? 77 : 1;
		printf("# round %d: driver alone: loader %.2f, instance %.2f, device %.2f, import %.3f "
		       "ms; gdr_open %.2f, first pin %.2f, later gdr_open %.6f, later gdr_close "
		       "%.6f ms\n", i, vk[i][M_LOADER], vk[i][M_INSTANCE], vk[i][M_DEVICE],
		       vk[i][M_IMPORT], gdr[i][M_OPEN_FIRST], gdr[i][M_PIN_FIRST], gdr[i][M_OPEN],
		       gdr[i][M_CLOSE]);
	}
	driver = over_rounds(vk, rounds, vk_first, 4);
	ours = over_rounds(gdr, rounds, gdr_first, 2);
	printf("\nMedians of %d rounds, each step in a fresh process; later calls: the median of %d.\n\n",
	       rounds, later);
	printf("| step | Vulkan driver alone (ms) | libgdrapi (ms) |\n| --- | --- | --- |\n");
	row("load libvulkan.so.1", med1(vk, rounds, M_LOADER), -1, 2);
	row("vkCreateInstance and the library's device queries", med1(vk, rounds, M_INSTANCE), -1, 2);
	row("vkCreateDevice", med1(vk, rounds, M_DEVICE), -1, 2);
	row("one import (CUDA fd export + vkAllocateMemory)", med1(vk, rounds, M_IMPORT), -1, 3);
	row("first gdr_open", -1, med1(gdr, rounds, M_OPEN_FIRST), 2);
	row("first pin, 64 KiB", -1, med1(gdr, rounds, M_PIN_FIRST), 2);
	row("**first gdr_open + first pin, against loader + instance + device + import**", driver,
	    ours, 2);
	printf("| ratio (target <= 1.1) | | %.2fx |\n", driver > 0 && ours >= 0 ? ours / driver : -1);
	row("first gdr_close", -1, med1(gdr, rounds, M_CLOSE_FIRST), 3);
	row("later gdr_open (target <= 1 ms)", -1, med1(gdr, rounds, M_OPEN), 6);
	row("later gdr_close (target <= 1 ms)", -1, med1(gdr, rounds, M_CLOSE), 6);
	row("later pin, 64 KiB", -1, med1(gdr, rounds, M_PIN_64K), 3);
	row("later unpin, 64 KiB", -1, med1(gdr, rounds, M_UNPIN_64K), 3);
	row("later pin, 2 MiB", -1, med1(gdr, rounds, M_PIN_2M), 3);
	row("later unpin, 2 MiB", -1, med1(gdr, rounds, M_UNPIN_2M), 3);
	printf("| GPU memory vkCreateInstance took (MiB) |");
	cell(med1(vk, rounds, M_INSTANCE_MEM), 1);
	printf(" |\n| GPU memory vkCreateDevice took (MiB) |");
	cell(med1(vk, rounds, M_DEVICE_MEM), 1);
	printf(" |\n");
	free(vk);
	free(gdr);
	return 0;
}
