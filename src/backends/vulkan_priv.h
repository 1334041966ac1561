/* SPDX-License-Identifier: MIT */
/*
 * The vulkan backend's state, shared by vulkan.c (the backend ops) and vulkan_device.c (the
 * Vulkan loader, the instance, and matching CUDA devices to Vulkan devices). libvulkan is
 * dlopen'd: the library never links it, and every Vulkan function is resolved through
 * vkGetInstanceProcAddr / vkGetDeviceProcAddr. No Vulkan headers are needed either: vulkan_api.h
 * declares what the backend uses.
 *
 * The state is the process's, shared by every gdr_t and kept until the process exits, as CUDA
 * keeps a device's primary context: see gdr_vk_state_get.
 */
#ifndef GDR_BACKENDS_VULKAN_PRIV_H
#define GDR_BACKENDS_VULKAN_PRIV_H

#include <stdatomic.h>
#include <stdbool.h>
#include <stdint.h>

#include "backend.h"
#include "cuda_driver.h"
#include "vulkan_api.h"

/* One CUDA device, and the Vulkan device with its UUID if there is one. */
struct vk_gpu {
	bool usable;			/* a matching Vulkan device with what pin needs */
	struct gdr_why why;		/* why not, when !usable */
	unsigned char uuid[16];
	VkPhysicalDevice physical;
	uint32_t memory_type;		/* DEVICE_LOCAL|HOST_VISIBLE|HOST_COHERENT */
	bool dedicated_only;		/* OPAQUE_FD imports need VkMemoryDedicatedAllocateInfo */
	bool has_ext_memory;		/* the device lists VK_KHR_external_memory */
	bool has_dedicated;		/* the device lists VK_KHR_dedicated_allocation */

	/*
	 * Created at the first pin on this device (vkCreateDevice costs ~75 ms on the H200), under
	 * vk_lock, then kept; ready (release) publishes it and the entry points below.
	 */
	_Atomic bool ready;
	VkDevice device;
	PFN_vkDestroyDevice vkDestroyDevice;
	PFN_vkAllocateMemory vkAllocateMemory;
	PFN_vkFreeMemory vkFreeMemory;
	PFN_vkMapMemory vkMapMemory;
	PFN_vkUnmapMemory vkUnmapMemory;
	PFN_vkCreateBuffer vkCreateBuffer;
	PFN_vkDestroyBuffer vkDestroyBuffer;
	PFN_vkGetBufferMemoryRequirements vkGetBufferMemoryRequirements;
};

/* g->backend_priv of every gdr_t: set before it is published, then only read (but see vk_gpu). */
struct vk_state {
	const struct gdr_cuda *cuda;
	VkInstance instance;
	PFN_vkGetInstanceProcAddr vkGetInstanceProcAddr;
	PFN_vkDestroyInstance vkDestroyInstance;
	PFN_vkEnumeratePhysicalDevices vkEnumeratePhysicalDevices;
	PFN_vkGetPhysicalDeviceProperties2 vkGetPhysicalDeviceProperties2;
	PFN_vkGetPhysicalDeviceMemoryProperties vkGetPhysicalDeviceMemoryProperties;
	PFN_vkEnumerateDeviceExtensionProperties vkEnumerateDeviceExtensionProperties;
	PFN_vkGetPhysicalDeviceExternalBufferProperties vkGetPhysicalDeviceExternalBufferProperties;
	PFN_vkCreateDevice vkCreateDevice;
	PFN_vkGetDeviceProcAddr vkGetDeviceProcAddr;
	int gpu_count;			/* cuDeviceGetCount */
	struct vk_gpu *gpus;		/* indexed by CUDA device ordinal */
	struct vk_state *abandoned_next;	/* see gdr_vk_state_get, on fork */
};

/*
 * The backend's probe: libcuda and the Vulkan loader load (each once per process, kept), or the
 * process's state exists already. No cuInit and no VkInstance: open makes those. 0, or an errno
 * with why filled.
 */
int gdr_vk_probe(struct gdr_why *why);

/*
 * The process's state: the first call initialises CUDA, creates the instance and matches every
 * CUDA device (no VkDevice yet); later calls return it at once. Thread-safe: callers that race
 * build it once. 0 with *out set when at least one device is usable, else an errno with why
 * filled (and the next call tries again).
 */
int gdr_vk_state_get(struct vk_state **out, struct gdr_why *why);

/* gpu's VkDevice, created at the first call (thread-safe); 0 or an errno (logged). */
int gdr_vk_gpu_open(struct vk_state *s, struct vk_gpu *gpu, int ordinal);

/*
 * "VK_ERROR_OUT_OF_DEVICE_MEMORY" and the like, for log lines; "VkResult N", written to buf, for
 * a code without a name here. GDR_VK_RESULT(r) gives it a buffer of the enclosing block's (the
 * library keeps no thread-local storage: it would make it need the dynamic loader's TLS calls).
 */
#define GDR_VK_RESULT_LEN 32
const char *gdr_vk_result_name(VkResult r, char buf[GDR_VK_RESULT_LEN]);
#define GDR_VK_RESULT(r) gdr_vk_result_name((r), (char[GDR_VK_RESULT_LEN]){ 0 })

/*
 * Whether a call that makes something (vkCreate*, vkAllocateMemory, vkMapMemory) made it: every
 * non-negative VkResult is a success code, so the object exists and is the caller's to keep or
 * destroy. A positive one the specification does not give such a call is a driver's slip:
 * logged, naming call, and taken as success. Logs nothing for a failure.
 */
bool gdr_vk_made(VkResult r, const char *call);

/* The driver ran out of host or device memory: worth trying again, unlike its other failures. */
static inline bool gdr_vk_out_of_memory(VkResult r)
{
	return r == VK_ERROR_OUT_OF_HOST_MEMORY || r == VK_ERROR_OUT_OF_DEVICE_MEMORY;
}

/* "GPU-xxxxxxxx-xxxx-xxxx-xxxx-xxxxxxxxxxxx", as nvidia-smi prints UUIDs. */
void gdr_vk_format_uuid(const unsigned char uuid[16], char buf[48]);

#endif
