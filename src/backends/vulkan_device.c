/* SPDX-License-Identifier: MIT */
/*
 * The vulkan backend's discovery: load libvulkan.so.1, create one VkInstance, and for every CUDA
 * device find the Vulkan device whose deviceUUID equals cuDeviceGetUuid and check that it can
 * import a CUDA allocation's POSIX fd (VK_KHR_external_memory_fd, OPAQUE_FD importable) into a
 * DEVICE_LOCAL|HOST_VISIBLE|HOST_COHERENT memory type on a DEVICE_LOCAL heap. Once per process;
 * each GPU's VkDevice at its first pin.
 */
#include <dlfcn.h>
#include <errno.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "log.h"
#include "vulkan_priv.h"

/* For the debug lines that say what building the state cost. */
static double now_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec * 1e3 + ts.tv_nsec / 1e6;
}

const char *gdr_vk_result_name(VkResult r, char buf[GDR_VK_RESULT_LEN])
{
	switch (r) {
#define VK_NAME(x) case x: return #x;
	VK_NAME(VK_SUCCESS)
	VK_NAME(VK_INCOMPLETE)
	VK_NAME(VK_ERROR_OUT_OF_HOST_MEMORY)
	VK_NAME(VK_ERROR_OUT_OF_DEVICE_MEMORY)
	VK_NAME(VK_ERROR_INITIALIZATION_FAILED)
	VK_NAME(VK_ERROR_DEVICE_LOST)
	VK_NAME(VK_ERROR_MEMORY_MAP_FAILED)
	VK_NAME(VK_ERROR_LAYER_NOT_PRESENT)
	VK_NAME(VK_ERROR_EXTENSION_NOT_PRESENT)
	VK_NAME(VK_ERROR_FEATURE_NOT_PRESENT)
	VK_NAME(VK_ERROR_INCOMPATIBLE_DRIVER)
	VK_NAME(VK_ERROR_TOO_MANY_OBJECTS)
	VK_NAME(VK_ERROR_INVALID_EXTERNAL_HANDLE)
#undef VK_NAME
	default:
		/* A code this table lacks (an extension's, a newer version's): its number. */
		snprintf(buf, GDR_VK_RESULT_LEN, "VkResult %d", (int)r);
		return buf;
	}
}

bool gdr_vk_made(VkResult r, const char *call)
{
	if (r > 0)
		gdr_warn("vulkan: %s returned %s, a success code the specification does not give "
			 "it: taken as success", call, GDR_VK_RESULT(r));
	return r >= 0;
}

void gdr_vk_format_uuid(const unsigned char u[16], char buf[48])
{
	snprintf(buf, 48, "GPU-%02x%02x%02x%02x-%02x%02x-%02x%02x-%02x%02x-"
		 "%02x%02x%02x%02x%02x%02x", u[0], u[1], u[2], u[3], u[4], u[5], u[6], u[7],
		 u[8], u[9], u[10], u[11], u[12], u[13], u[14], u[15]);
}

#define VK_INSTANCE_FN(s, name) \
	((s)->name = (PFN_##name)(void *)(s)->vkGetInstanceProcAddr((s)->instance, #name))

/* Create the instance through the Vulkan loader lib; 0 or an errno with why. */
static int load_instance(struct vk_state *s, void *lib, struct gdr_why *why)
{
	PFN_vkCreateInstance create;
	VkApplicationInfo app = {
		.sType = VK_STRUCTURE_TYPE_APPLICATION_INFO,
		.pApplicationName = "libgdrapi",
		.pEngineName = "gdrcopy",
		.apiVersion = VK_API_VERSION_1_1,
	};
	VkInstanceCreateInfo info = {
		.sType = VK_STRUCTURE_TYPE_INSTANCE_CREATE_INFO,
		.pApplicationInfo = &app,
	};
	VkResult r;

	s->vkGetInstanceProcAddr = (PFN_vkGetInstanceProcAddr)dlsym(lib, "vkGetInstanceProcAddr");
	create = s->vkGetInstanceProcAddr ? (PFN_vkCreateInstance)(void *)
		s->vkGetInstanceProcAddr(NULL, "vkCreateInstance") : NULL;
	if (!create) {
		gdr_why_set(why, "libvulkan.so.1 has no vkGetInstanceProcAddr/vkCreateInstance: "
			    "reinstall libvulkan1");
		return ENOSYS;
	}
	r = create(&info, NULL, &s->instance);
	if (!gdr_vk_made(r, "vkCreateInstance") || !s->instance) {
		gdr_why_set(why, "vkCreateInstance failed (%s%s): no usable Vulkan driver; install "
			    "the NVIDIA driver's Vulkan ICD (nvidia_icd.json, needs libglvnd) or "
			    "point VK_DRIVER_FILES at it", GDR_VK_RESULT(r),
			    r >= 0 ? ", but no instance" : "");
		s->instance = VK_NULL_HANDLE;
		return ENODEV;
	}
	VK_INSTANCE_FN(s, vkDestroyInstance);
	VK_INSTANCE_FN(s, vkEnumeratePhysicalDevices);
	VK_INSTANCE_FN(s, vkGetPhysicalDeviceProperties2);
	VK_INSTANCE_FN(s, vkGetPhysicalDeviceMemoryProperties);
	VK_INSTANCE_FN(s, vkEnumerateDeviceExtensionProperties);
	VK_INSTANCE_FN(s, vkGetPhysicalDeviceExternalBufferProperties);
	VK_INSTANCE_FN(s, vkCreateDevice);
	VK_INSTANCE_FN(s, vkGetDeviceProcAddr);
	if (!s->vkDestroyInstance || !s->vkEnumeratePhysicalDevices ||
	    !s->vkGetPhysicalDeviceProperties2 || !s->vkGetPhysicalDeviceMemoryProperties ||
	    !s->vkEnumerateDeviceExtensionProperties ||
	    !s->vkGetPhysicalDeviceExternalBufferProperties || !s->vkCreateDevice ||
	    !s->vkGetDeviceProcAddr) {
		gdr_why_set(why, "the Vulkan loader lacks Vulkan 1.1 entry points: update libvulkan1");
		return ENOSYS;
	}
	return 0;
}

/*
 * More than any driver lists (NVIDIA's: about 200 device extensions, a device per GPU): a
 * count above these is made up, and asking for memory for it would fail as "out of memory".
 */
#define VK_MAX_DEVICE_EXTENSIONS 4096u
#define VK_MAX_PHYSICAL_DEVICES 1024u

/*
 * The room to ask an enumeration to fill, for the count n it reported: n, or max (with a
 * warning) where n is beyond any driver's. The fill then answers VK_INCOMPLETE, a success.
 */
static uint32_t enumeration_room(uint32_t n, uint32_t max, const char *call, const char *what)
{
	if (n <= max)
		return n;
	gdr_warn("vulkan: %s reports %u %s, more than any driver has: the Vulkan driver is not "
		 "answering sanely; reading at most %u (reinstall or update the NVIDIA driver if "
		 "this fails)", call, n, what, max);
	return max;
}

/* Which extensions the device lists; VK_SUCCESS, or the driver's failure to say. */
static VkResult device_extensions(struct vk_state *s, struct vk_gpu *gpu, bool *has_fd)
{
	VkExtensionProperties *props;
	uint32_t n = 0, cap;
	VkResult r;

	*has_fd = false;
	r = s->vkEnumerateDeviceExtensionProperties(gpu->physical, NULL, &n, NULL);
	if (r != VK_SUCCESS)
		return r;
	cap = enumeration_room(n, VK_MAX_DEVICE_EXTENSIONS, "vkEnumerateDeviceExtensionProperties",
			       "extensions");
	props = calloc(cap ? cap : 1, sizeof(*props));
	if (!props)
		return VK_ERROR_OUT_OF_HOST_MEMORY;
	n = cap;
	r = s->vkEnumerateDeviceExtensionProperties(gpu->physical, NULL, &n, props);
	if (r >= 0) {
		/* A driver that reports more than it was given room for is not believed. */
		for (uint32_t i = 0; i < n && i < cap; i++) {
			const char *e = props[i].extensionName;

			*has_fd |= !strcmp(e, VK_KHR_EXTERNAL_MEMORY_FD_EXTENSION_NAME);
			gpu->has_ext_memory |= !strcmp(e, VK_KHR_EXTERNAL_MEMORY_EXTENSION_NAME);
			gpu->has_dedicated |= !strcmp(e, VK_KHR_DEDICATED_ALLOCATION_EXTENSION_NAME);
		}
	}
	free(props);
	return r < 0 ? r : VK_SUCCESS;
}

/*
 * The memory type to import into: DEVICE_LOCAL|HOST_VISIBLE|HOST_COHERENT (CPU stores must reach
 * the GPU with no flush call) on a DEVICE_LOCAL heap; the largest heap wins, then uncached (the
 * write-combined BAR type of NVIDIA's driver).
 */
static bool pick_memory_type(struct vk_state *s, struct vk_gpu *gpu)
{
	const VkMemoryPropertyFlags want = VK_MEMORY_PROPERTY_DEVICE_LOCAL_BIT |
					   VK_MEMORY_PROPERTY_HOST_VISIBLE_BIT |
					   VK_MEMORY_PROPERTY_HOST_COHERENT_BIT;
	VkPhysicalDeviceMemoryProperties mp;
	VkDeviceSize best_size = 0;
	bool best_cached = true, found = false;

	memset(&mp, 0, sizeof(mp));
	s->vkGetPhysicalDeviceMemoryProperties(gpu->physical, &mp);
	/* Counts and heap indices past the spec's limits (a broken driver) name nothing. */
	for (uint32_t i = 0; i < mp.memoryTypeCount && i < VK_MAX_MEMORY_TYPES; i++) {
		const VkMemoryType *t = &mp.memoryTypes[i];
		const VkMemoryHeap *h;
		bool cached = t->propertyFlags & VK_MEMORY_PROPERTY_HOST_CACHED_BIT;

		if (t->heapIndex >= mp.memoryHeapCount || t->heapIndex >= VK_MAX_MEMORY_HEAPS)
			continue;
		h = &mp.memoryHeaps[t->heapIndex];
		if ((t->propertyFlags & want) != want || !(h->flags & VK_MEMORY_HEAP_DEVICE_LOCAL_BIT))
			continue;
		if (found && (h->size < best_size || (h->size == best_size && cached >= best_cached)))
			continue;
		gpu->memory_type = i;
		best_size = h->size;
		best_cached = cached;
		found = true;
	}
	return found;
}

/* Can this device import OPAQUE_FD memory, and must the import be dedicated? */
static bool opaque_fd_importable(struct vk_state *s, struct vk_gpu *gpu)
{
	VkPhysicalDeviceExternalBufferInfo info = {
		.sType = VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_EXTERNAL_BUFFER_INFO,
		.usage = VK_BUFFER_USAGE_TRANSFER_SRC_BIT | VK_BUFFER_USAGE_TRANSFER_DST_BIT,
		.handleType = VK_EXTERNAL_MEMORY_HANDLE_TYPE_OPAQUE_FD_BIT,
	};
	VkExternalBufferProperties props = {
		.sType = VK_STRUCTURE_TYPE_EXTERNAL_BUFFER_PROPERTIES,
	};
	VkExternalMemoryFeatureFlags f;

	s->vkGetPhysicalDeviceExternalBufferProperties(gpu->physical, &info, &props);
	f = props.externalMemoryProperties.externalMemoryFeatures;
	gpu->dedicated_only = f & VK_EXTERNAL_MEMORY_FEATURE_DEDICATED_ONLY_BIT;
	return f & VK_EXTERNAL_MEMORY_FEATURE_IMPORTABLE_BIT;
}

/* Check the Vulkan device found for a CUDA device; on failure the reason is in gpu->why. */
static void check_gpu(struct vk_state *s, struct vk_gpu *gpu, int ordinal, const char *name)
{
	bool has_fd;
	VkResult r = device_extensions(s, gpu, &has_fd);

	if (r != VK_SUCCESS) {
		gdr_why_set(&gpu->why, "Vulkan device %s (CUDA device %d): "
			    "vkEnumerateDeviceExtensionProperties failed (%s)%s", name, ordinal,
			    GDR_VK_RESULT(r),
			    gdr_vk_out_of_memory(r) ? ": out of memory, try again" : "");
		return;
	}
	if (!has_fd) {
		gdr_why_set(&gpu->why, "Vulkan device %s (CUDA device %d) lacks "
			    VK_KHR_EXTERNAL_MEMORY_FD_EXTENSION_NAME ": update the NVIDIA driver",
			    name, ordinal);
		return;
	}
	if (!opaque_fd_importable(s, gpu)) {
		gdr_why_set(&gpu->why, "Vulkan device %s (CUDA device %d) cannot import OPAQUE_FD "
			    "memory: update the NVIDIA driver", name, ordinal);
		return;
	}
	if (!pick_memory_type(s, gpu)) {
		gdr_why_set(&gpu->why, "Vulkan device %s (CUDA device %d) has no DEVICE_LOCAL|"
			    "HOST_VISIBLE|HOST_COHERENT memory type on a DEVICE_LOCAL heap (BAR1 too "
			    "small to map VRAM; enable Resizable BAR)", name, ordinal);
		return;
	}
	gpu->usable = true;
}

/* Match every CUDA device to a Vulkan physical device by UUID. */
static void match_gpus(struct vk_state *s, VkPhysicalDevice *pds, uint32_t npd)
{
	const struct gdr_cuda *cuda = s->cuda;

	for (int d = 0; d < s->gpu_count; d++) {
		struct vk_gpu *gpu = &s->gpus[d];
		char uuid[48], err[128];
		CUdevice dev;
		CUuuid cu_uuid;
		CUresult res;

		res = cuda->cuDeviceGet(&dev, d);
		if (res == CUDA_SUCCESS)
			res = cuda->cuDeviceGetUuid(&cu_uuid, dev);
		if (res != CUDA_SUCCESS) {
			gdr_why_set(&gpu->why, "cuDeviceGetUuid(%d) failed: %s", d,
				    gdr_cuda_strerror(cuda, res, err, sizeof(err)));
			continue;
		}
		memcpy(gpu->uuid, cu_uuid.bytes, 16);
		gdr_vk_format_uuid(gpu->uuid, uuid);
		gdr_why_set(&gpu->why, "no Vulkan device matches CUDA device %d (UUID %s): install "
			    "the NVIDIA driver's Vulkan ICD, or check VK_DRIVER_FILES", d, uuid);
		for (uint32_t i = 0; i < npd; i++) {
			VkPhysicalDeviceIDProperties id = {
				.sType = VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_ID_PROPERTIES,
			};
			VkPhysicalDeviceProperties2 props = {
				.sType = VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_PROPERTIES_2,
				.pNext = &id,
			};

			/* A slot the driver counted and did not fill: nothing to ask about. */
			if (!pds[i])
				continue;
			s->vkGetPhysicalDeviceProperties2(pds[i], &props);
			if (memcmp(id.deviceUUID, gpu->uuid, 16))
				continue;
			gpu->physical = pds[i];
			if (props.properties.apiVersion < VK_API_VERSION_1_1) {
				gdr_why_set(&gpu->why, "Vulkan device %s (CUDA device %d) only supports "
					    "Vulkan %u.%u; 1.1 is needed", props.properties.deviceName,
					    d, VK_API_VERSION_MAJOR(props.properties.apiVersion),
					    VK_API_VERSION_MINOR(props.properties.apiVersion));
				break;
			}
			check_gpu(s, gpu, d, props.properties.deviceName);
			if (gpu->usable)
				gdr_dbg("vulkan: CUDA device %d is Vulkan device %s, memory type %u%s",
					d, props.properties.deviceName, gpu->memory_type,
					gpu->dedicated_only ? ", dedicated imports" : "");
			break;
		}
	}
}

static int survey(struct vk_state *s, struct gdr_why *why)
{
	const struct gdr_cuda *cuda = s->cuda;
	VkPhysicalDevice *pds = NULL;
	uint32_t npd = 0, cap;
	char err[128];
	CUresult res;
	VkResult r;

	res = cuda->cuDeviceGetCount(&s->gpu_count);
	if (res != CUDA_SUCCESS || s->gpu_count <= 0) {
		gdr_why_set(why, "no CUDA device (cuDeviceGetCount: %s)", res != CUDA_SUCCESS ?
			    gdr_cuda_strerror(cuda, res, err, sizeof(err)) : "0 devices");
		return ENODEV;
	}
	s->gpus = calloc((size_t)s->gpu_count, sizeof(*s->gpus));
	if (!s->gpus) {
		gdr_why_set(why, "out of memory");
		return ENOMEM;
	}
	r = s->vkEnumeratePhysicalDevices(s->instance, &npd, NULL);
	if (r != VK_SUCCESS)
		goto err_enumerate;
	if (npd == 0) {
		gdr_why_set(why, "no Vulkan device: install the NVIDIA driver's Vulkan ICD "
			    "(nvidia_icd.json), or check VK_DRIVER_FILES");
		return ENODEV;
	}
	cap = enumeration_room(npd, VK_MAX_PHYSICAL_DEVICES, "vkEnumeratePhysicalDevices",
			       "physical devices");
	npd = cap;
	pds = calloc(cap, sizeof(*pds));
	if (!pds) {
		gdr_why_set(why, "out of memory");
		return ENOMEM;
	}
	r = s->vkEnumeratePhysicalDevices(s->instance, &npd, pds);
	if (r < 0) {
		free(pds);
		goto err_enumerate;
	}
	match_gpus(s, pds, npd < cap ? npd : cap);
	free(pds);
	for (int d = 0; d < s->gpu_count; d++)
		if (s->gpus[d].usable)
			return 0;
	/* None usable: the first device's reason stands for all. */
	gdr_why_set(why, "%s", s->gpus[0].why.msg);
	return ENODEV;

err_enumerate:
	gdr_why_set(why, "vkEnumeratePhysicalDevices failed (%s)%s", GDR_VK_RESULT(r),
		    gdr_vk_out_of_memory(r) ?
		    ": out of memory, try again" : ": the Vulkan driver cannot list its devices; "
		    "check the NVIDIA driver's Vulkan ICD");
	return gdr_vk_out_of_memory(r) ? ENOMEM : ENODEV;
}

/*
 * The process's state: vk_process once built, NULL before (or after a failed try, or in a fork
 * child until it builds its own). Kept until the process exits, as CUDA keeps a device's primary
 * context, rather than reference-counted: a reference count would tear the VkInstance and
 * VkDevices down at the last gdr_close and make the next gdr_open pay for them again (about
 * 150 ms on the H200), and a process that opens and closes a gdr_t per job would pay it every
 * time. It holds NVIDIA's ICD loaded, one VkInstance, and per GPU that has been pinned one
 * VkDevice with one queue (which reserves GPU memory: docs/performance.md gives the figure). It
 * is not torn down at exit either: the Vulkan loader and the ICD may have run their own
 * destructors by then, and the kernel releases it all.
 *
 * vk_lib is the Vulkan loader, loaded at the first probe and kept, as libcuda is: the state
 * built from it keeps using it, and a probe that unloaded it would make open load it again.
 *
 * vk_lock serialises loading the Vulkan loader, building the state and creating each GPU's
 * VkDevice; pins take it inside g->lock, and nothing is taken inside it. A fork child abandons the parent's state (its objects
 * belong to the parent's driver connection: lavapipe hangs destroying them) and builds its own;
 * the abandoned ones stay reachable, for leak checkers, and untouched.
 */
static pthread_mutex_t vk_lock = PTHREAD_MUTEX_INITIALIZER;
static void *vk_lib;
static _Atomic(struct vk_state *) vk_process;
static struct vk_state *vk_abandoned;
static pthread_once_t fork_once = PTHREAD_ONCE_INIT;

/* The child runs alone here; vk_lock may have been held by a thread that does not exist in it. */
static void fork_child(void)
{
	struct vk_state *s = atomic_load_explicit(&vk_process, memory_order_relaxed);

	pthread_mutex_init(&vk_lock, NULL);
	if (!s)
		return;
	s->abandoned_next = vk_abandoned;
	vk_abandoned = s;
	atomic_store_explicit(&vk_process, NULL, memory_order_relaxed);
}

static void fork_register(void)
{
	pthread_atfork(NULL, NULL, fork_child);
}

/* The Vulkan loader, loading it if this is the first call; NULL with why. Caller holds vk_lock. */
static void *vk_library(struct gdr_why *why)
{
	if (!vk_lib)
		vk_lib = dlopen("libvulkan.so.1", RTLD_NOW | RTLD_LOCAL);
	if (!vk_lib)
		gdr_why_set(why, "no Vulkan loader (libvulkan.so.1): install libvulkan1");
	return vk_lib;
}

int gdr_vk_probe(struct gdr_why *why)
{
	void *lib;

	if (atomic_load_explicit(&vk_process, memory_order_acquire))
		return 0;
	if (!gdr_cuda_load(why))
		return ENODEV;
	pthread_once(&fork_once, fork_register);
	pthread_mutex_lock(&vk_lock);
	lib = vk_library(why);
	pthread_mutex_unlock(&vk_lock);
	return lib ? 0 : ENOENT;
}

/* A state that failed to build: undo what was made. */
static void vk_state_free(struct vk_state *s)
{
	free(s->gpus);
	/* A loader without vkDestroyInstance failed the build: the instance is left to exit. */
	if (s->instance && s->vkDestroyInstance)
		s->vkDestroyInstance(s->instance, NULL);
	free(s);
}

static int vk_state_create(struct vk_state **out, struct gdr_why *why)
{
	struct vk_state *s = calloc(1, sizeof(*s));
	double t0 = now_ms();
	void *lib;
	int ret;

	if (!s) {
		gdr_why_set(why, "out of memory");
		return ENOMEM;
	}
	s->cuda = gdr_cuda_acquire(why);
	if (!s->cuda) {
		free(s);
		return ENODEV;
	}
	lib = vk_library(why);
	ret = lib ? load_instance(s, lib, why) : ENOENT;
	if (!ret)
		ret = survey(s, why);
	if (ret) {
		vk_state_free(s);
		return ret;
	}
	gdr_dbg("vulkan: VkInstance created and %d CUDA device(s) matched in %.1f ms", s->gpu_count,
		now_ms() - t0);
	*out = s;
	return 0;
}

int gdr_vk_state_get(struct vk_state **out, struct gdr_why *why)
{
	struct vk_state *s = atomic_load_explicit(&vk_process, memory_order_acquire);
	int ret = 0;

	if (s) {
		*out = s;
		return 0;
	}
	pthread_once(&fork_once, fork_register);
	pthread_mutex_lock(&vk_lock);
	s = atomic_load_explicit(&vk_process, memory_order_relaxed);
	if (!s) {
		ret = vk_state_create(&s, why);
		if (!ret)
			atomic_store_explicit(&vk_process, s, memory_order_release);
	}
	pthread_mutex_unlock(&vk_lock);
	if (!ret)
		*out = s;
	return ret;
}

#define VK_DEVICE_FN(s, gpu, name) \
	((gpu)->name = (PFN_##name)(void *)(s)->vkGetDeviceProcAddr((gpu)->device, #name))

/* Create gpu's VkDevice and resolve its entry points; 0 or an errno (logged). Under vk_lock. */
static int vk_gpu_create(struct vk_state *s, struct vk_gpu *gpu, int ordinal)
{
	const char *exts[3];
	uint32_t next = 0;
	float priority = 1.0f;
	VkDeviceQueueCreateInfo queue = {
		.sType = VK_STRUCTURE_TYPE_DEVICE_QUEUE_CREATE_INFO,
		.queueFamilyIndex = 0,
		.queueCount = 1,
		.pQueuePriorities = &priority,
	};
	VkDeviceCreateInfo info = {
		.sType = VK_STRUCTURE_TYPE_DEVICE_CREATE_INFO,
		.queueCreateInfoCount = 1,
		.pQueueCreateInfos = &queue,
		.ppEnabledExtensionNames = exts,
	};
	double t0 = now_ms();
	VkResult r;

	exts[next++] = VK_KHR_EXTERNAL_MEMORY_FD_EXTENSION_NAME;
	if (gpu->has_ext_memory)
		exts[next++] = VK_KHR_EXTERNAL_MEMORY_EXTENSION_NAME;
	if (gpu->has_dedicated)
		exts[next++] = VK_KHR_DEDICATED_ALLOCATION_EXTENSION_NAME;
	info.enabledExtensionCount = next;
	r = s->vkCreateDevice(gpu->physical, &info, NULL, &gpu->device);
	if (!gdr_vk_made(r, "vkCreateDevice") || !gpu->device) {
		gpu->device = VK_NULL_HANDLE;
		gdr_err("vulkan: vkCreateDevice for CUDA device %d failed (%s%s)", ordinal,
			GDR_VK_RESULT(r), r >= 0 ? ", but no device: the Vulkan driver is not "
			"answering sanely; update the NVIDIA driver, or use another backend "
			"(GDRCOPY_BACKEND=gdrdrv)" : "");
		return r >= 0 ? EIO : gdr_vk_out_of_memory(r) ? ENOMEM : ENODEV;
	}
	VK_DEVICE_FN(s, gpu, vkDestroyDevice);
	VK_DEVICE_FN(s, gpu, vkAllocateMemory);
	VK_DEVICE_FN(s, gpu, vkFreeMemory);
	VK_DEVICE_FN(s, gpu, vkMapMemory);
	VK_DEVICE_FN(s, gpu, vkUnmapMemory);
	VK_DEVICE_FN(s, gpu, vkCreateBuffer);
	VK_DEVICE_FN(s, gpu, vkDestroyBuffer);
	VK_DEVICE_FN(s, gpu, vkGetBufferMemoryRequirements);
	if (!gpu->vkDestroyDevice || !gpu->vkAllocateMemory || !gpu->vkFreeMemory ||
	    !gpu->vkMapMemory || !gpu->vkUnmapMemory || !gpu->vkCreateBuffer ||
	    !gpu->vkDestroyBuffer || !gpu->vkGetBufferMemoryRequirements) {
		if (gpu->vkDestroyDevice)
			gpu->vkDestroyDevice(gpu->device, NULL);
		gpu->device = VK_NULL_HANDLE;
		gdr_err("vulkan: the Vulkan driver of CUDA device %d lacks core entry points", ordinal);
		return ENOSYS;
	}
	gdr_dbg("vulkan: VkDevice created for CUDA device %d in %.1f ms", ordinal,
		now_ms() - t0);
	return 0;
}

int gdr_vk_gpu_open(struct vk_state *s, struct vk_gpu *gpu, int ordinal)
{
	int ret = 0;

	if (atomic_load_explicit(&gpu->ready, memory_order_acquire))
		return 0;
	pthread_mutex_lock(&vk_lock);
	if (!atomic_load_explicit(&gpu->ready, memory_order_relaxed)) {
		ret = vk_gpu_create(s, gpu, ordinal);
		if (!ret)
			atomic_store_explicit(&gpu->ready, true, memory_order_release);
	}
	pthread_mutex_unlock(&vk_lock);
	return ret;
}
