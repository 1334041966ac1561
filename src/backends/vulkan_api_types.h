/* SPDX-License-Identifier: MIT */
/*
 * Part of vulkan_api.h: its typedefs of handles, scalars and entry points, apart from the enums
 * and structures, because C allows a typedef to be repeated with the same type. The test that
 * checks vulkan_api.h against the Khronos headers (tests/unit/test_vulkan_api*.c) includes this
 * file after <vulkan/vulkan.h>: every typedef here that differs from Khronos' breaks its build.
 * Needs the enum and structure names declared first.
 */
#ifndef GDR_BACKENDS_VULKAN_API_TYPES_H
#define GDR_BACKENDS_VULKAN_API_TYPES_H

#include <stddef.h>
#include <stdint.h>

/* Scalars and flags (Vulkan spec, "Fundamental Types" and each flags type). */
typedef uint32_t VkFlags;
typedef uint32_t VkBool32;
typedef uint64_t VkDeviceSize;
typedef VkFlags VkInstanceCreateFlags;
typedef VkFlags VkDeviceCreateFlags;
typedef VkFlags VkDeviceQueueCreateFlags;
typedef VkFlags VkMemoryMapFlags;
typedef VkFlags VkMemoryPropertyFlags;
typedef VkFlags VkMemoryHeapFlags;
typedef VkFlags VkBufferCreateFlags;
typedef VkFlags VkBufferUsageFlags;
typedef VkFlags VkExternalMemoryHandleTypeFlags;
typedef VkFlags VkExternalMemoryFeatureFlags;

/*
 * Handles. Dispatchable ones are pointers everywhere; non-dispatchable ones are pointers on
 * 64-bit platforms, the only ones this library builds for (handle.c asserts LP64).
 */
typedef struct VkInstance_T *VkInstance;
typedef struct VkPhysicalDevice_T *VkPhysicalDevice;
typedef struct VkDevice_T *VkDevice;
typedef struct VkDeviceMemory_T *VkDeviceMemory;
typedef struct VkBuffer_T *VkBuffer;
typedef struct VkImage_T *VkImage;

/* Entry points, with Linux's empty VKAPI_ATTR/VKAPI_CALL. */
typedef void (*PFN_vkVoidFunction)(void);
typedef PFN_vkVoidFunction (*PFN_vkGetInstanceProcAddr)(VkInstance instance, const char *pName);
typedef PFN_vkVoidFunction (*PFN_vkGetDeviceProcAddr)(VkDevice device, const char *pName);
typedef VkResult (*PFN_vkCreateInstance)(const VkInstanceCreateInfo *pCreateInfo,
					 const VkAllocationCallbacks *pAllocator,
					 VkInstance *pInstance);
typedef void (*PFN_vkDestroyInstance)(VkInstance instance,
				      const VkAllocationCallbacks *pAllocator);
typedef VkResult (*PFN_vkEnumeratePhysicalDevices)(VkInstance instance,
						   uint32_t *pPhysicalDeviceCount,
						   VkPhysicalDevice *pPhysicalDevices);
typedef void (*PFN_vkGetPhysicalDeviceProperties2)(VkPhysicalDevice physicalDevice,
						   VkPhysicalDeviceProperties2 *pProperties);
typedef void (*PFN_vkGetPhysicalDeviceMemoryProperties)(
	VkPhysicalDevice physicalDevice, VkPhysicalDeviceMemoryProperties *pMemoryProperties);
typedef VkResult (*PFN_vkEnumerateDeviceExtensionProperties)(
	VkPhysicalDevice physicalDevice, const char *pLayerName, uint32_t *pPropertyCount,
	VkExtensionProperties *pProperties);
typedef void (*PFN_vkGetPhysicalDeviceExternalBufferProperties)(
	VkPhysicalDevice physicalDevice, const VkPhysicalDeviceExternalBufferInfo *pExternalBufferInfo,
	VkExternalBufferProperties *pExternalBufferProperties);
typedef VkResult (*PFN_vkCreateDevice)(VkPhysicalDevice physicalDevice,
				       const VkDeviceCreateInfo *pCreateInfo,
				       const VkAllocationCallbacks *pAllocator, VkDevice *pDevice);
typedef void (*PFN_vkDestroyDevice)(VkDevice device, const VkAllocationCallbacks *pAllocator);
typedef VkResult (*PFN_vkAllocateMemory)(VkDevice device, const VkMemoryAllocateInfo *pAllocateInfo,
					 const VkAllocationCallbacks *pAllocator,
					 VkDeviceMemory *pMemory);
typedef void (*PFN_vkFreeMemory)(VkDevice device, VkDeviceMemory memory,
				 const VkAllocationCallbacks *pAllocator);
typedef VkResult (*PFN_vkMapMemory)(VkDevice device, VkDeviceMemory memory, VkDeviceSize offset,
				    VkDeviceSize size, VkMemoryMapFlags flags, void **ppData);
typedef void (*PFN_vkUnmapMemory)(VkDevice device, VkDeviceMemory memory);
typedef VkResult (*PFN_vkCreateBuffer)(VkDevice device, const VkBufferCreateInfo *pCreateInfo,
				       const VkAllocationCallbacks *pAllocator, VkBuffer *pBuffer);
typedef void (*PFN_vkDestroyBuffer)(VkDevice device, VkBuffer buffer,
				    const VkAllocationCallbacks *pAllocator);
typedef void (*PFN_vkGetBufferMemoryRequirements)(VkDevice device, VkBuffer buffer,
						  VkMemoryRequirements *pMemoryRequirements);

#endif
