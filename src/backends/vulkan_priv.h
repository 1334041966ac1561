/* SPDX-License-Identifier: MIT */
/*
 * The vulkan backend's state, shared by vulkan.c (the backend ops) and vulkan_device.c (the
 * Vulkan loader, the instance, and matching CUDA devices to Vulkan devices). libvulkan is
 * dlopen'd: the library never links it, and every Vulkan function is resolved through
 * vkGetInstanceProcAddr / vkGetDeviceProcAddr.
 */
#ifndef GDR_BACKENDS_VULKAN_PRIV_H
#define GDR_BACKENDS_VULKAN_PRIV_H

#define VK_NO_PROTOTYPES
#include <stdbool.h>
#include <stdint.h>

#include <vulkan/vulkan.h>

#include "backend.h"
#include "cuda_driver.h"

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

	/* Created at the first pin on this device (vkCreateDevice costs ~84 ms), then kept. */
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

/* g->backend_priv; every field is used under g->lock. */
struct vk_state {
	const struct gdr_cuda *cuda;
	void *lib;			/* libvulkan.so.1 */
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
};

/*
 * Load CUDA and Vulkan, create the instance and match every CUDA device; 0 with *out set when
 * at least one device is usable, else an errno with why filled.
 */
int vk_state_create(struct vk_state **out, struct gdr_why *why);
void vk_state_destroy(struct vk_state *s);
/* In a fork child: free s's memory without touching the parent's Vulkan objects or CUDA. */
void vk_state_forget(struct vk_state *s);

/* Create gpu's VkDevice unless it exists; 0 or an errno (logged). */
int vk_gpu_open(struct vk_state *s, struct vk_gpu *gpu, int ordinal);

/* "VK_ERROR_OUT_OF_DEVICE_MEMORY" and the like, for log lines. */
const char *vk_result_name(VkResult r);

/* "GPU-xxxxxxxx-xxxx-xxxx-xxxx-xxxxxxxxxxxx", as nvidia-smi prints UUIDs. */
void vk_format_uuid(const unsigned char uuid[16], char buf[48]);

#endif
