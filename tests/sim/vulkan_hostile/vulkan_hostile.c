/* SPDX-License-Identifier: MIT */
/*
 * libvulkan.so.1 for tests (never installed): a Vulkan loader that hands every call to the real
 * one (GDRCOPY_TEST_VK_LOADER, a path) and, towards libgdrapi only, answers as a broken driver
 * would, as GDRCOPY_TEST_VK_HOSTILE says:
 *
 *   heap_index       every memory type names a heap far past the table
 *   type_count       memoryTypeCount 0xffffffff (the spec's limit is 32)
 *   no_destroy       no vkDestroyInstance (a NULL entry point after vkCreateInstance succeeded)
 *   extension_count  vkEnumerateDeviceExtensionProperties reports 64 more than it wrote
 *   device_count     vkEnumeratePhysicalDevices reports 64 more than it wrote
 *   map_unaligned    vkMapMemory's pointer is 64 bytes past the one the driver gave (the spec
 *                    only promises minMemoryMapAlignment, which may be 64: not a page)
 *   map_null         vkMapMemory succeeds with a NULL pointer (the mapping is made)
 *
 * and, when a test program asks (vulkan_hostile.h, vulkan_failing.c), fails the library's calls.
 *
 * The simulated CUDA driver loads Vulkan too (for lavapipe-backed memory) and gets the real
 * answers: the hostile ones go to callers in libgdrapi, told by their return address. One mode
 * is the simulator's instead:
 *
 *   sim_no_destroy   no vkDestroyInstance for the simulated driver (the library's is real)
 */
#define VK_NO_PROTOTYPES
#include <dlfcn.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <vulkan/vulkan.h>

#include "vulkan_hostile_priv.h"

#define OVERCOUNT 64

static PFN_vkGetInstanceProcAddr real_gipa;
static PFN_vkGetPhysicalDeviceMemoryProperties real_memory_properties;
static PFN_vkEnumerateDeviceExtensionProperties real_device_extensions;
static PFN_vkEnumeratePhysicalDevices real_physical_devices;
static PFN_vkGetDeviceProcAddr real_device_proc_addr;
static PFN_vkMapMemory real_map_memory;

static bool hostile(const char *mode)
{
	const char *m = getenv("GDRCOPY_TEST_VK_HOSTILE");

	return m && !strcmp(m, mode);
}

static bool called_from_library(const void *return_address)
{
	Dl_info info;

	return dladdr(return_address, &info) && info.dli_fname &&
	       strstr(info.dli_fname, "libgdrapi");
}

static PFN_vkGetInstanceProcAddr real_loader(void)
{
	const char *path = getenv("GDRCOPY_TEST_VK_LOADER");
	void *lib;

	if (real_gipa)
		return real_gipa;
	lib = path ? dlopen(path, RTLD_NOW | RTLD_LOCAL) : NULL;
	if (!lib) {
		fprintf(stderr, "vulkan_hostile: cannot load the real loader GDRCOPY_TEST_VK_LOADER=%s\n",
			path ? path : "(unset)");
		return NULL;
	}
	real_gipa = (PFN_vkGetInstanceProcAddr)dlsym(lib, "vkGetInstanceProcAddr");
	return real_gipa;
}

static void VKAPI_CALL memory_properties(VkPhysicalDevice pd,
					 VkPhysicalDeviceMemoryProperties *mp)
{
	real_memory_properties(pd, mp);
	if (hostile("heap_index"))
		for (uint32_t i = 0; i < mp->memoryTypeCount && i < VK_MAX_MEMORY_TYPES; i++)
			mp->memoryTypes[i].heapIndex = 0x40000000u;
	if (hostile("type_count"))
		mp->memoryTypeCount = 0xffffffffu;
}

static VkResult VKAPI_CALL device_extensions(VkPhysicalDevice pd, const char *layer, uint32_t *n,
					     VkExtensionProperties *props)
{
	VkResult r = real_device_extensions(pd, layer, n, props);

	if (props && r >= 0)
		*n += OVERCOUNT;
	return r;
}

static VkResult VKAPI_CALL physical_devices(VkInstance instance, uint32_t *n,
					    VkPhysicalDevice *pds)
{
	VkResult r = real_physical_devices(instance, n, pds);

	if (pds && r >= 0)
		*n += OVERCOUNT;
	return r;
}

/*
 * map_unaligned moves the pointer, not the mapping: the data is 64 bytes off, but lavapipe maps
 * the whole import, so every byte the library may touch is still mapped.
 */
static VkResult VKAPI_CALL map_memory(VkDevice device, VkDeviceMemory memory, VkDeviceSize offset,
				      VkDeviceSize size, VkMemoryMapFlags flags, void **data)
{
	VkResult r = real_map_memory(device, memory, offset, size, flags, data);

	if (r == VK_SUCCESS && hostile("map_unaligned"))
		*data = (char *)*data + 64;
	if (r == VK_SUCCESS && hostile("map_null"))
		*data = NULL;
	return r;
}

static PFN_vkVoidFunction towards_library(const char *name, PFN_vkVoidFunction next);

static PFN_vkVoidFunction VKAPI_CALL device_proc_addr(VkDevice device, const char *name)
{
	return towards_library(name, real_device_proc_addr(device, name));
}

/* A hostile wrapper over next, the entry point name, where the mode asks for one; else next. */
static PFN_vkVoidFunction hostile_wrap(const char *name, PFN_vkVoidFunction next)
{
	if (!strcmp(name, "vkDestroyInstance") && hostile("no_destroy"))
		return NULL;
	if (!next)
		return NULL;
	if (!strcmp(name, "vkGetPhysicalDeviceMemoryProperties") &&
	    (hostile("heap_index") || hostile("type_count"))) {
		real_memory_properties = (PFN_vkGetPhysicalDeviceMemoryProperties)next;
		return (PFN_vkVoidFunction)memory_properties;
	}
	if (!strcmp(name, "vkEnumerateDeviceExtensionProperties") && hostile("extension_count")) {
		real_device_extensions = (PFN_vkEnumerateDeviceExtensionProperties)next;
		return (PFN_vkVoidFunction)device_extensions;
	}
	if (!strcmp(name, "vkEnumeratePhysicalDevices") && hostile("device_count")) {
		real_physical_devices = (PFN_vkEnumeratePhysicalDevices)next;
		return (PFN_vkVoidFunction)physical_devices;
	}
	if (!strcmp(name, "vkMapMemory") && (hostile("map_unaligned") || hostile("map_null"))) {
		real_map_memory = (PFN_vkMapMemory)next;
		return (PFN_vkVoidFunction)map_memory;
	}
	return next;
}

/*
 * What the library gets for the entry point name, whose real definition is next: the failing
 * wrapper over it (vulkan_failing.c), and a hostile answer over that; the device's entry points
 * the same way, through our vkGetDeviceProcAddr.
 */
static PFN_vkVoidFunction towards_library(const char *name, PFN_vkVoidFunction next)
{
	if (!strcmp(name, "vkGetDeviceProcAddr")) {
		real_device_proc_addr = (PFN_vkGetDeviceProcAddr)next;
		return next ? (PFN_vkVoidFunction)device_proc_addr : NULL;
	}
	return hostile_wrap(name, vk_failing_wrap(name, next));
}

__attribute__((visibility("default"))) PFN_vkVoidFunction VKAPI_CALL
vkGetInstanceProcAddr(VkInstance instance, const char *name)
{
	if (!real_loader())
		return NULL;
	if (called_from_library(__builtin_return_address(0)))
		return towards_library(name, real_gipa(instance, name));
	if (!strcmp(name, "vkDestroyInstance") && hostile("sim_no_destroy"))
		return NULL;
	return real_gipa(instance, name);
}
