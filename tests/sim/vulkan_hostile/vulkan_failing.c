/* SPDX-License-Identifier: MIT */
/*
 * The hostile loader's failing calls (vulkan_hostile.h): once a test program has set a fail
 * function, the entry points that libgdrapi looks up are wrappers that ask it before each call
 * that can fail, and count the objects the library makes and destroys, so that a test can see
 * a failure leak none. Only the library's calls are wrapped: the simulated CUDA driver's go
 * straight to the real loader.
 */
#define VK_NO_PROTOTYPES
#include <stddef.h>
#include <string.h>

#include "vulkan_hostile.h"
#include "vulkan_hostile_priv.h"

static vk_hostile_fail_fn fail_fn;
/* Updated by the wrappers, read by the test: the library's calls come from its one thread. */
static struct vk_hostile_live live;

__attribute__((visibility("default"))) void vk_hostile_fail_with(vk_hostile_fail_fn fail)
{
	fail_fn = fail;
}

__attribute__((visibility("default"))) void vk_hostile_live(struct vk_hostile_live *out)
{
	*out = live;
}

/* The entry point each wrapper hands on to, as the library's lookup found it. */
#define NEXT_DECLARE(fn) static PFN_vkVoidFunction next_##fn
NEXT_DECLARE(vkCreateInstance);
NEXT_DECLARE(vkDestroyInstance);
NEXT_DECLARE(vkEnumeratePhysicalDevices);
NEXT_DECLARE(vkEnumerateDeviceExtensionProperties);
NEXT_DECLARE(vkCreateDevice);
NEXT_DECLARE(vkDestroyDevice);
NEXT_DECLARE(vkAllocateMemory);
NEXT_DECLARE(vkFreeMemory);
NEXT_DECLARE(vkMapMemory);
NEXT_DECLARE(vkUnmapMemory);
NEXT_DECLARE(vkCreateBuffer);
NEXT_DECLARE(vkDestroyBuffer);
#define NEXT(fn) ((PFN_##fn)next_##fn)

/* Return the test's failure, if it asks for one, instead of making the call. */
#define MAY_FAIL(call, ...) do { \
	static const VkResult errors_[] = { __VA_ARGS__ }; \
	VkResult r_ = fail_fn(call, errors_, sizeof(errors_) / sizeof(errors_[0])); \
	if (r_ != VK_SUCCESS) \
		return r_; \
} while (0)

static VkResult VKAPI_CALL create_instance(const VkInstanceCreateInfo *info,
					   const VkAllocationCallbacks *alloc, VkInstance *out)
{
	VkResult r;

	MAY_FAIL("vkCreateInstance", VK_ERROR_OUT_OF_HOST_MEMORY, VK_ERROR_OUT_OF_DEVICE_MEMORY,
		 VK_ERROR_INITIALIZATION_FAILED, VK_ERROR_INCOMPATIBLE_DRIVER);
	r = NEXT(vkCreateInstance)(info, alloc, out);
	live.instances += r == VK_SUCCESS;
	return r;
}

static void VKAPI_CALL destroy_instance(VkInstance instance, const VkAllocationCallbacks *alloc)
{
	live.instances -= instance != VK_NULL_HANDLE;
	NEXT(vkDestroyInstance)(instance, alloc);
}

static VkResult VKAPI_CALL enumerate_physical_devices(VkInstance instance, uint32_t *n,
						      VkPhysicalDevice *pds)
{
	MAY_FAIL("vkEnumeratePhysicalDevices", VK_ERROR_OUT_OF_HOST_MEMORY,
		 VK_ERROR_OUT_OF_DEVICE_MEMORY, VK_ERROR_INITIALIZATION_FAILED);
	return NEXT(vkEnumeratePhysicalDevices)(instance, n, pds);
}

static VkResult VKAPI_CALL enumerate_device_extensions(VkPhysicalDevice pd, const char *layer,
						       uint32_t *n, VkExtensionProperties *props)
{
	MAY_FAIL("vkEnumerateDeviceExtensionProperties", VK_ERROR_OUT_OF_HOST_MEMORY,
		 VK_ERROR_OUT_OF_DEVICE_MEMORY);
	return NEXT(vkEnumerateDeviceExtensionProperties)(pd, layer, n, props);
}

static VkResult VKAPI_CALL create_device(VkPhysicalDevice pd, const VkDeviceCreateInfo *info,
					 const VkAllocationCallbacks *alloc, VkDevice *out)
{
	VkResult r;

	MAY_FAIL("vkCreateDevice", VK_ERROR_OUT_OF_HOST_MEMORY, VK_ERROR_OUT_OF_DEVICE_MEMORY,
		 VK_ERROR_INITIALIZATION_FAILED, VK_ERROR_TOO_MANY_OBJECTS, VK_ERROR_DEVICE_LOST);
	r = NEXT(vkCreateDevice)(pd, info, alloc, out);
	live.devices += r == VK_SUCCESS;
	return r;
}

static void VKAPI_CALL destroy_device(VkDevice device, const VkAllocationCallbacks *alloc)
{
	live.devices -= device != VK_NULL_HANDLE;
	NEXT(vkDestroyDevice)(device, alloc);
}

static VkResult VKAPI_CALL map_memory(VkDevice device, VkDeviceMemory memory, VkDeviceSize offset,
				      VkDeviceSize size, VkMemoryMapFlags flags, void **data)
{
	VkResult r;

	MAY_FAIL("vkMapMemory", VK_ERROR_OUT_OF_HOST_MEMORY, VK_ERROR_OUT_OF_DEVICE_MEMORY,
		 VK_ERROR_MEMORY_MAP_FAILED);
	r = NEXT(vkMapMemory)(device, memory, offset, size, flags, data);
	live.maps += r == VK_SUCCESS;
	return r;
}

static void VKAPI_CALL unmap_memory(VkDevice device, VkDeviceMemory memory)
{
	live.maps--;
	NEXT(vkUnmapMemory)(device, memory);
}

/*
 * The wrappers of a device's objects of one kind: make may fail with the errors given, and what
 * it made is counted live until destroy.
 */
#define DEVICE_OBJECTS(make, destroy, Info, Object, counter, ...) \
static VkResult VKAPI_CALL make##_counted(VkDevice device, const Info *info, \
					 const VkAllocationCallbacks *alloc, Object *out) \
{ \
	VkResult r; \
\
	MAY_FAIL(#make, __VA_ARGS__); \
	r = NEXT(make)(device, info, alloc, out); \
	live.counter += r == VK_SUCCESS; \
	return r; \
} \
\
static void VKAPI_CALL destroy##_counted(VkDevice device, Object object, \
					 const VkAllocationCallbacks *alloc) \
{ \
	live.counter -= object != VK_NULL_HANDLE; \
	NEXT(destroy)(device, object, alloc); \
}

/* The library's one allocation is an import: the handle may be refused too. */
DEVICE_OBJECTS(vkAllocateMemory, vkFreeMemory, VkMemoryAllocateInfo, VkDeviceMemory, memories,
	       VK_ERROR_OUT_OF_HOST_MEMORY, VK_ERROR_OUT_OF_DEVICE_MEMORY,
	       VK_ERROR_INVALID_EXTERNAL_HANDLE, VK_ERROR_TOO_MANY_OBJECTS)
DEVICE_OBJECTS(vkCreateBuffer, vkDestroyBuffer, VkBufferCreateInfo, VkBuffer, buffers,
	       VK_ERROR_OUT_OF_HOST_MEMORY, VK_ERROR_OUT_OF_DEVICE_MEMORY)

static const struct {
	const char *name;
	PFN_vkVoidFunction *next;
	PFN_vkVoidFunction wrapper;
} wrappers[] = {
#define WRAP(fn, wrapper) { #fn, &next_##fn, (PFN_vkVoidFunction)wrapper }
	WRAP(vkCreateInstance, create_instance),
	WRAP(vkDestroyInstance, destroy_instance),
	WRAP(vkEnumeratePhysicalDevices, enumerate_physical_devices),
	WRAP(vkEnumerateDeviceExtensionProperties, enumerate_device_extensions),
	WRAP(vkCreateDevice, create_device),
	WRAP(vkDestroyDevice, destroy_device),
	WRAP(vkAllocateMemory, vkAllocateMemory_counted),
	WRAP(vkFreeMemory, vkFreeMemory_counted),
	WRAP(vkMapMemory, map_memory),
	WRAP(vkUnmapMemory, unmap_memory),
	WRAP(vkCreateBuffer, vkCreateBuffer_counted),
	WRAP(vkDestroyBuffer, vkDestroyBuffer_counted),
#undef WRAP
};

PFN_vkVoidFunction vk_failing_wrap(const char *name, PFN_vkVoidFunction next)
{
	if (!fail_fn || !next)
		return next;
	for (size_t i = 0; i < sizeof(wrappers) / sizeof(wrappers[0]); i++) {
		if (!strcmp(name, wrappers[i].name)) {
			*wrappers[i].next = next;
			return wrappers[i].wrapper;
		}
	}
	return next;
}
