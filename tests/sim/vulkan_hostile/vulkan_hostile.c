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
 *   huge_counts      both enumerations' counts (asked with no array) are 0xffffffff; filling
 *                    works as the real driver's
 *   map_unaligned    vkMapMemory's pointer is 64 bytes past the one the driver gave (the spec
 *                    only promises minMemoryMapAlignment, which may be 64: not a page)
 *   map_null         vkMapMemory succeeds with a NULL pointer (the mapping is made)
 *   map_fails        vkMapMemory fails with VK_ERROR_MEMORY_MAP_FAILED, having written a pointer
 *                    to a page nothing is mapped at
 *   heap_past_count  every memory type names the heap just past memoryHeapCount, and that
 *                    slot of the table holds a DEVICE_LOCAL heap (past the count: none)
 *   heap_count       memoryHeapCount 0xffffffff (the spec's limit is 16), every memory type's
 *                    heap far past the table
 *   memory_types     a table of eight memory types on three heaps, of which one is right for
 *                    an import (DEVICE_LOCAL|HOST_VISIBLE|HOST_COHERENT, uncached, the first such
 *                    on the largest DEVICE_LOCAL heap): vkAllocateMemory refuses every other
 *                    index, and imports into the real type for that one
 *   dedicated_only   OPAQUE_FD buffers are DEDICATED_ONLY: vkAllocateMemory refuses an import
 *                    without a VkMemoryDedicatedAllocateInfo that names a buffer
 *   buffer_types     vkGetBufferMemoryRequirements allows no memory type (memoryTypeBits 0)
 *   not_importable   OPAQUE_FD memory is exportable only, not importable
 *   no_fd_extension  the device lists no VK_KHR_external_memory_fd
 *   incomplete       both enumerations return VK_INCOMPLETE with what they wrote (the list grew
 *                    between the count and the fill): a success
 *   no_devices       vkEnumeratePhysicalDevices succeeds with no device
 *   api_1_0          the device reports Vulkan 1.0
 *   uuid_last_byte   the device's UUID differs from CUDA's in its last byte only
 *   import_reuse_fd  vkAllocateMemory closes the fd it was given, as Mesa does, and fails; the
 *                    number is reused at once (as another thread's open would) by a memfd
 *                    named vk_hostile_stand_in, which must stay open
 *   import_reopen_fd vkAllocateMemory closes the fd it was given, its number reopened on the
 *                    same file (as any open of /dev/nvidiactl is), and fails
 *   map_elsewhere    vkMapMemory succeeds with a pointer to the page at 4096, where nothing is
 *                    mapped
 *   positive_results vkAllocateMemory and vkMapMemory answer VK_INCOMPLETE, vkCreateDevice
 *                    123456: success codes none of them is given, having made what they make
 *   null_memory      vkAllocateMemory succeeds with no handle (the import made and freed again)
 *   null_device_entry vkEnumeratePhysicalDevices counts one device more, its first slot
 *                    VK_NULL_HANDLE
 *   hide=NAME        vkGetInstanceProcAddr and vkGetDeviceProcAddr give no NAME
 *
 * GDRCOPY_TEST_VK_HOSTILE may name several, separated by commas.
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
#include <fcntl.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include <vulkan/vulkan.h>

#include "vulkan_hostile_priv.h"

#define OVERCOUNT 64

static PFN_vkGetInstanceProcAddr real_gipa;
static PFN_vkGetPhysicalDeviceMemoryProperties real_memory_properties;
static PFN_vkEnumerateDeviceExtensionProperties real_device_extensions;
static PFN_vkEnumeratePhysicalDevices real_physical_devices;
static PFN_vkGetDeviceProcAddr real_device_proc_addr;
static PFN_vkMapMemory real_map_memory;
static PFN_vkAllocateMemory real_allocate_memory;
static PFN_vkGetBufferMemoryRequirements real_buffer_requirements;
static PFN_vkGetPhysicalDeviceExternalBufferProperties real_external_buffer_properties;
static PFN_vkGetPhysicalDeviceProperties2 real_properties2;
static PFN_vkCreateDevice real_create_device;

/* Whether GDRCOPY_TEST_VK_HOSTILE, a comma-separated list, names mode. */
static bool hostile(const char *mode)
{
	const char *m = getenv("GDRCOPY_TEST_VK_HOSTILE");
	size_t len = strlen(mode);

	for (const char *p = m; p && *p; p = strchr(p, ',') ? strchr(p, ',') + 1 : NULL)
		if (!strncmp(p, mode, len) && (p[len] == ',' || p[len] == '\0'))
			return true;
	return false;
}

/* Whether the modes hide the entry point name (hide=NAME). */
static bool hidden(const char *name)
{
	char mode[128];

	snprintf(mode, sizeof(mode), "hide=%s", name);
	return hostile(mode);
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

#define DL VK_MEMORY_PROPERTY_DEVICE_LOCAL_BIT
#define HV VK_MEMORY_PROPERTY_HOST_VISIBLE_BIT
#define HC VK_MEMORY_PROPERTY_HOST_COHERENT_BIT
#define CACHED VK_MEMORY_PROPERTY_HOST_CACHED_BIT
/* memory_types: the one index an import may use, and the real type it stands for. */
#define RIGHT_TYPE 4
static uint32_t real_type;

/*
 * memory_types: every way of being wrong that a type can have, around the right one: not
 * coherent, on a host heap larger than VRAM, on a smaller DEVICE_LOCAL heap, cached; and the
 * right one's twin after it (the first of equals wins).
 */
static void memory_types(VkPhysicalDeviceMemoryProperties *mp)
{
	VkMemoryHeap vram = mp->memoryHeaps[0];
	const VkMemoryType types[] = {
		{ DL | HV, 0 },			/* not HOST_COHERENT */
		{ DL | HV | HC | CACHED, 1 },	/* the largest heap, but host memory */
		{ DL | HV | HC | CACHED, 2 },	/* a smaller DEVICE_LOCAL heap */
		{ DL | HV | HC | CACHED, 0 },	/* cached */
		{ DL | HV | HC, 0 },		/* RIGHT_TYPE */
		{ DL | HV | HC | CACHED, 0 },	/* cached, after the right one */
		{ DL | HV | HC, 0 },		/* the right one's twin */
		{ DL | HV | HC, 2 },		/* uncached, on the smaller heap */
	};

	for (uint32_t i = 0; i < mp->memoryTypeCount && i < VK_MAX_MEMORY_TYPES; i++) {
		if ((mp->memoryTypes[i].propertyFlags & (DL | HV | HC)) == (DL | HV | HC)) {
			real_type = i;
			break;
		}
	}
	memset(mp, 0, sizeof(*mp));
	mp->memoryHeaps[0] = vram;
	mp->memoryHeaps[1] = (VkMemoryHeap){ .size = vram.size * 2, .flags = 0 };
	mp->memoryHeaps[2] = (VkMemoryHeap){ .size = vram.size / 2,
					     .flags = VK_MEMORY_HEAP_DEVICE_LOCAL_BIT };
	mp->memoryHeapCount = 3;
	memcpy(mp->memoryTypes, types, sizeof(types));
	mp->memoryTypeCount = sizeof(types) / sizeof(types[0]);
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
	if (hostile("heap_past_count") && mp->memoryHeapCount < VK_MAX_MEMORY_HEAPS) {
		for (uint32_t i = 0; i < mp->memoryTypeCount && i < VK_MAX_MEMORY_TYPES; i++)
			mp->memoryTypes[i].heapIndex = mp->memoryHeapCount;
		mp->memoryHeaps[mp->memoryHeapCount] = (VkMemoryHeap){
			.size = 1ull << 40, .flags = VK_MEMORY_HEAP_DEVICE_LOCAL_BIT };
	}
	if (hostile("heap_count")) {
		for (uint32_t i = 0; i < mp->memoryTypeCount && i < VK_MAX_MEMORY_TYPES; i++)
			mp->memoryTypes[i].heapIndex = 0x40000000u;
		mp->memoryHeapCount = 0xffffffffu;
	}
	if (hostile("memory_types"))
		memory_types(mp);
}

static VkResult VKAPI_CALL device_extensions(VkPhysicalDevice pd, const char *layer, uint32_t *n,
					     VkExtensionProperties *props)
{
	VkResult r = real_device_extensions(pd, layer, n, props);

	if (props && r >= 0 && hostile("no_fd_extension"))
		for (uint32_t i = 0; i < *n; i++)
			if (!strcmp(props[i].extensionName,
				    VK_KHR_EXTERNAL_MEMORY_FD_EXTENSION_NAME))
				props[i].extensionName[0] = 'X';
	if (props && r >= 0 && hostile("extension_count"))
		*n += OVERCOUNT;
	if (!props && r == VK_SUCCESS && hostile("huge_counts"))
		*n = 0xffffffffu;
	if (props && r == VK_SUCCESS && hostile("incomplete"))
		r = VK_INCOMPLETE;
	return r;
}

static VkResult VKAPI_CALL physical_devices(VkInstance instance, uint32_t *n,
					    VkPhysicalDevice *pds)
{
	VkResult r;

	if (hostile("no_devices")) {
		*n = 0;
		return VK_SUCCESS;
	}
	/* null_device_entry: one more device counted, its slot (the first) left VK_NULL_HANDLE. */
	if (hostile("null_device_entry")) {
		uint32_t cap = *n;

		if (!pds) {
			r = real_physical_devices(instance, n, NULL);
			*n += 1;
			return r;
		}
		if (cap == 0)
			return VK_INCOMPLETE;
		*n = cap - 1;
		r = real_physical_devices(instance, n, pds + 1);
		pds[0] = VK_NULL_HANDLE;
		*n += 1;
		return r;
	}
	r = real_physical_devices(instance, n, pds);
	if (!pds && r == VK_SUCCESS && hostile("huge_counts"))
		*n = 0xffffffffu;
	if (pds && r >= 0 && hostile("device_count"))
		*n += OVERCOUNT;
	if (pds && r == VK_SUCCESS && hostile("incomplete"))
		r = VK_INCOMPLETE;
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
	/* map_elsewhere: success, and a pointer to the page at 4096, where nothing is mapped. */
	if (r == VK_SUCCESS && hostile("map_elsewhere"))
		*data = (void *)(uintptr_t)4096;
	if (r == VK_SUCCESS && hostile("positive_results"))
		r = VK_INCOMPLETE;
	return r;
}

/* map_fails: no mapping, and a pointer to the page at 4096, where nothing is ever mapped. */
static VkResult VKAPI_CALL map_fails(VkDevice device, VkDeviceMemory memory, VkDeviceSize offset,
				     VkDeviceSize size, VkMemoryMapFlags flags, void **data)
{
	(void)device;
	(void)memory;
	(void)offset;
	(void)size;
	(void)flags;
	*data = (void *)(uintptr_t)4096;
	return VK_ERROR_MEMORY_MAP_FAILED;
}

/* The first structure of type in chain, or NULL. */
static const VkBaseInStructure *find_in_chain(const void *chain, VkStructureType type)
{
	for (const VkBaseInStructure *p = chain; p; p = p->pNext)
		if (p->sType == type)
			return p;
	return NULL;
}

/* import_reuse_fd: the import's fd closed, its number another file's; the import refused. */
static VkResult reuse_fd(const VkMemoryAllocateInfo *info)
{
	const VkImportMemoryFdInfoKHR *import = (const VkImportMemoryFdInfoKHR *)
		find_in_chain(info->pNext, VK_STRUCTURE_TYPE_IMPORT_MEMORY_FD_INFO_KHR);
	int other;

	if (!import)
		return VK_ERROR_INVALID_EXTERNAL_HANDLE;
	close(import->fd);
	other = memfd_create("vk_hostile_stand_in", MFD_CLOEXEC);
	if (other >= 0 && other != import->fd) {
		dup2(other, import->fd);
		close(other);
	}
	return VK_ERROR_INVALID_EXTERNAL_HANDLE;
}

/*
 * import_reopen_fd: the import's fd closed, and its number another open of the same file (as any
 * open of /dev/nvidiactl is, where NVIDIA's exports live); the import refused.
 */
static VkResult reopen_fd(const VkMemoryAllocateInfo *info)
{
	const VkImportMemoryFdInfoKHR *import = (const VkImportMemoryFdInfoKHR *)
		find_in_chain(info->pNext, VK_STRUCTURE_TYPE_IMPORT_MEMORY_FD_INFO_KHR);
	char path[64];
	int other;

	if (!import)
		return VK_ERROR_INVALID_EXTERNAL_HANDLE;
	snprintf(path, sizeof(path), "/proc/self/fd/%d", import->fd);
	other = open(path, O_RDWR | O_CLOEXEC);
	close(import->fd);
	if (other >= 0 && other != import->fd) {
		dup2(other, import->fd);
		close(other);
	}
	return VK_ERROR_INVALID_EXTERNAL_HANDLE;
}

static VkResult VKAPI_CALL allocate_memory(VkDevice device, const VkMemoryAllocateInfo *info,
					   const VkAllocationCallbacks *alloc, VkDeviceMemory *out)
{
	VkMemoryAllocateInfo real = *info;
	VkResult r;

	if (hostile("import_reuse_fd"))
		return reuse_fd(info);
	if (hostile("import_reopen_fd"))
		return reopen_fd(info);
	if (hostile("dedicated_only")) {
		const VkMemoryDedicatedAllocateInfo *d = (const VkMemoryDedicatedAllocateInfo *)
			find_in_chain(info->pNext,
				      VK_STRUCTURE_TYPE_MEMORY_DEDICATED_ALLOCATE_INFO);

		if (!d || d->buffer == VK_NULL_HANDLE)
			return VK_ERROR_INVALID_EXTERNAL_HANDLE;
	}
	if (hostile("memory_types")) {
		if (info->memoryTypeIndex != RIGHT_TYPE)
			return VK_ERROR_INVALID_EXTERNAL_HANDLE;
		real.memoryTypeIndex = real_type;
	}
	r = real_allocate_memory(device, &real, alloc, out);
	/* positive_results: made, and a success code vkAllocateMemory is not given. */
	if (r == VK_SUCCESS && hostile("positive_results"))
		r = VK_INCOMPLETE;
	/* null_memory: the import made (the fd taken over) and freed again, no handle given. */
	if (r == VK_SUCCESS && hostile("null_memory")) {
		PFN_vkFreeMemory free_memory =
			(PFN_vkFreeMemory)real_device_proc_addr(device, "vkFreeMemory");

		free_memory(device, *out, alloc);
		*out = VK_NULL_HANDLE;
	}
	return r;
}

/*
 * positive_results: the device made, and a success code vkCreateDevice is not given, one no
 * version of the specification defines.
 */
#define HOSTILE_UNNAMED_SUCCESS ((VkResult)123456)
static VkResult VKAPI_CALL create_device(VkPhysicalDevice pd, const VkDeviceCreateInfo *info,
					 const VkAllocationCallbacks *alloc, VkDevice *out)
{
	VkResult r = real_create_device(pd, info, alloc, out);

	return r == VK_SUCCESS ? HOSTILE_UNNAMED_SUCCESS : r;
}

static void VKAPI_CALL buffer_requirements(VkDevice device, VkBuffer buffer,
					   VkMemoryRequirements *req)
{
	real_buffer_requirements(device, buffer, req);
	req->memoryTypeBits = 0;
}

static void VKAPI_CALL external_buffer_properties(VkPhysicalDevice pd,
						  const VkPhysicalDeviceExternalBufferInfo *info,
						  VkExternalBufferProperties *props)
{
	VkExternalMemoryFeatureFlags *f = &props->externalMemoryProperties.externalMemoryFeatures;

	real_external_buffer_properties(pd, info, props);
	if (hostile("dedicated_only"))
		*f |= VK_EXTERNAL_MEMORY_FEATURE_DEDICATED_ONLY_BIT;
	if (hostile("not_importable"))
		*f &= ~(VkExternalMemoryFeatureFlags)VK_EXTERNAL_MEMORY_FEATURE_IMPORTABLE_BIT;
}

static void VKAPI_CALL properties2(VkPhysicalDevice pd, VkPhysicalDeviceProperties2 *props)
{
	VkPhysicalDeviceIDProperties *id = (VkPhysicalDeviceIDProperties *)(uintptr_t)
		find_in_chain(props->pNext, VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_ID_PROPERTIES);

	real_properties2(pd, props);
	if (hostile("api_1_0"))
		props->properties.apiVersion = VK_API_VERSION_1_0;
	if (hostile("uuid_last_byte") && id)
		id->deviceUUID[VK_UUID_SIZE - 1] ^= 1;
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
	if (!next || hidden(name))
		return NULL;
	if (!strcmp(name, "vkGetPhysicalDeviceMemoryProperties") &&
	    (hostile("heap_index") || hostile("type_count") || hostile("heap_past_count") ||
	     hostile("heap_count") || hostile("memory_types"))) {
		real_memory_properties = (PFN_vkGetPhysicalDeviceMemoryProperties)next;
		return (PFN_vkVoidFunction)memory_properties;
	}
	if (!strcmp(name, "vkEnumerateDeviceExtensionProperties") &&
	    (hostile("extension_count") || hostile("no_fd_extension") || hostile("incomplete") ||
	     hostile("huge_counts"))) {
		real_device_extensions = (PFN_vkEnumerateDeviceExtensionProperties)next;
		return (PFN_vkVoidFunction)device_extensions;
	}
	if (!strcmp(name, "vkEnumeratePhysicalDevices") &&
	    (hostile("device_count") || hostile("incomplete") || hostile("no_devices") ||
	     hostile("null_device_entry") || hostile("huge_counts"))) {
		real_physical_devices = (PFN_vkEnumeratePhysicalDevices)next;
		return (PFN_vkVoidFunction)physical_devices;
	}
	if (!strcmp(name, "vkMapMemory") &&
	    (hostile("map_unaligned") || hostile("map_null") || hostile("map_elsewhere") ||
	     hostile("positive_results"))) {
		real_map_memory = (PFN_vkMapMemory)next;
		return (PFN_vkVoidFunction)map_memory;
	}
	if (!strcmp(name, "vkMapMemory") && hostile("map_fails"))
		return (PFN_vkVoidFunction)map_fails;
	if (!strcmp(name, "vkAllocateMemory") &&
	    (hostile("import_reuse_fd") || hostile("import_reopen_fd") ||
	     hostile("dedicated_only") || hostile("memory_types") ||
	     hostile("positive_results") || hostile("null_memory"))) {
		real_allocate_memory = (PFN_vkAllocateMemory)next;
		return (PFN_vkVoidFunction)allocate_memory;
	}
	if (!strcmp(name, "vkCreateDevice") && hostile("positive_results")) {
		real_create_device = (PFN_vkCreateDevice)next;
		return (PFN_vkVoidFunction)create_device;
	}
	if (!strcmp(name, "vkGetBufferMemoryRequirements") && hostile("buffer_types")) {
		real_buffer_requirements = (PFN_vkGetBufferMemoryRequirements)next;
		return (PFN_vkVoidFunction)buffer_requirements;
	}
	if (!strcmp(name, "vkGetPhysicalDeviceExternalBufferProperties") &&
	    (hostile("dedicated_only") || hostile("not_importable"))) {
		real_external_buffer_properties =
			(PFN_vkGetPhysicalDeviceExternalBufferProperties)next;
		return (PFN_vkVoidFunction)external_buffer_properties;
	}
	if (!strcmp(name, "vkGetPhysicalDeviceProperties2") &&
	    (hostile("api_1_0") || hostile("uuid_last_byte"))) {
		real_properties2 = (PFN_vkGetPhysicalDeviceProperties2)next;
		return (PFN_vkVoidFunction)properties2;
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
		return next && !hidden(name) ? (PFN_vkVoidFunction)device_proc_addr : NULL;
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
