/* SPDX-License-Identifier: MIT */
/*
 * The slice of the Vulkan API that the vulkan backend uses, declared from the Vulkan
 * specification (1.1 core, VK_KHR_external_memory_fd), so that the library builds where no
 * Vulkan headers are installed (the loader is dlopen'd, never linked). Same names, values and
 * layouts as Khronos' vulkan_core.h, for 64-bit Linux; tests/unit/test_vulkan_api*.c checks each
 * of them against that header where it is installed. To use another part of the API, add it
 * here and to that test's list.
 */
#ifndef GDR_BACKENDS_VULKAN_API_H
#define GDR_BACKENDS_VULKAN_API_H

#include <stddef.h>
#include <stdint.h>

#define VK_NULL_HANDLE NULL
#define VK_UUID_SIZE 16U
#define VK_LUID_SIZE 8U
#define VK_MAX_EXTENSION_NAME_SIZE 256U
#define VK_MAX_PHYSICAL_DEVICE_NAME_SIZE 256U
#define VK_MAX_MEMORY_TYPES 32U
#define VK_MAX_MEMORY_HEAPS 16U

/* Version numbers: variant 3 bits, major 7, minor 10, patch 12. */
#define VK_MAKE_API_VERSION(variant, major, minor, patch) \
	((((uint32_t)(variant)) << 29U) | (((uint32_t)(major)) << 22U) | \
	 (((uint32_t)(minor)) << 12U) | ((uint32_t)(patch)))
#define VK_API_VERSION_MAJOR(version) (((uint32_t)(version) >> 22U) & 0x7FU)
#define VK_API_VERSION_MINOR(version) (((uint32_t)(version) >> 12U) & 0x3FFU)
#define VK_API_VERSION_1_1 VK_MAKE_API_VERSION(0, 1, 1, 0)

#define VK_KHR_EXTERNAL_MEMORY_EXTENSION_NAME "VK_KHR_external_memory"
#define VK_KHR_EXTERNAL_MEMORY_FD_EXTENSION_NAME "VK_KHR_external_memory_fd"
#define VK_KHR_DEDICATED_ALLOCATION_EXTENSION_NAME "VK_KHR_dedicated_allocation"

typedef enum VkResult {
	VK_SUCCESS = 0,
	VK_INCOMPLETE = 5,
	VK_ERROR_OUT_OF_HOST_MEMORY = -1,
	VK_ERROR_OUT_OF_DEVICE_MEMORY = -2,
	VK_ERROR_INITIALIZATION_FAILED = -3,
	VK_ERROR_DEVICE_LOST = -4,
	VK_ERROR_MEMORY_MAP_FAILED = -5,
	VK_ERROR_LAYER_NOT_PRESENT = -6,
	VK_ERROR_EXTENSION_NOT_PRESENT = -7,
	VK_ERROR_FEATURE_NOT_PRESENT = -8,
	VK_ERROR_INCOMPATIBLE_DRIVER = -9,
	VK_ERROR_TOO_MANY_OBJECTS = -10,
	VK_ERROR_INVALID_EXTERNAL_HANDLE = -1000072003,
	VK_RESULT_MAX_ENUM = 0x7FFFFFFF
} VkResult;

typedef enum VkStructureType {
	VK_STRUCTURE_TYPE_APPLICATION_INFO = 0,
	VK_STRUCTURE_TYPE_INSTANCE_CREATE_INFO = 1,
	VK_STRUCTURE_TYPE_DEVICE_QUEUE_CREATE_INFO = 2,
	VK_STRUCTURE_TYPE_DEVICE_CREATE_INFO = 3,
	VK_STRUCTURE_TYPE_MEMORY_ALLOCATE_INFO = 5,
	VK_STRUCTURE_TYPE_BUFFER_CREATE_INFO = 12,
	VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_PROPERTIES_2 = 1000059001,
	VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_EXTERNAL_BUFFER_INFO = 1000071002,
	VK_STRUCTURE_TYPE_EXTERNAL_BUFFER_PROPERTIES = 1000071003,
	VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_ID_PROPERTIES = 1000071004,
	VK_STRUCTURE_TYPE_EXTERNAL_MEMORY_BUFFER_CREATE_INFO = 1000072000,
	VK_STRUCTURE_TYPE_IMPORT_MEMORY_FD_INFO_KHR = 1000074000,
	VK_STRUCTURE_TYPE_MEMORY_DEDICATED_ALLOCATE_INFO = 1000127001,
	VK_STRUCTURE_TYPE_MAX_ENUM = 0x7FFFFFFF
} VkStructureType;

typedef enum VkPhysicalDeviceType {
	VK_PHYSICAL_DEVICE_TYPE_OTHER = 0,
	VK_PHYSICAL_DEVICE_TYPE_INTEGRATED_GPU = 1,
	VK_PHYSICAL_DEVICE_TYPE_DISCRETE_GPU = 2,
	VK_PHYSICAL_DEVICE_TYPE_VIRTUAL_GPU = 3,
	VK_PHYSICAL_DEVICE_TYPE_CPU = 4,
	VK_PHYSICAL_DEVICE_TYPE_MAX_ENUM = 0x7FFFFFFF
} VkPhysicalDeviceType;

typedef enum VkSharingMode {
	VK_SHARING_MODE_EXCLUSIVE = 0,
	VK_SHARING_MODE_CONCURRENT = 1,
	VK_SHARING_MODE_MAX_ENUM = 0x7FFFFFFF
} VkSharingMode;

typedef enum VkMemoryPropertyFlagBits {
	VK_MEMORY_PROPERTY_DEVICE_LOCAL_BIT = 0x00000001,
	VK_MEMORY_PROPERTY_HOST_VISIBLE_BIT = 0x00000002,
	VK_MEMORY_PROPERTY_HOST_COHERENT_BIT = 0x00000004,
	VK_MEMORY_PROPERTY_HOST_CACHED_BIT = 0x00000008,
	VK_MEMORY_PROPERTY_FLAG_BITS_MAX_ENUM = 0x7FFFFFFF
} VkMemoryPropertyFlagBits;

typedef enum VkMemoryHeapFlagBits {
	VK_MEMORY_HEAP_DEVICE_LOCAL_BIT = 0x00000001,
	VK_MEMORY_HEAP_FLAG_BITS_MAX_ENUM = 0x7FFFFFFF
} VkMemoryHeapFlagBits;

typedef enum VkBufferUsageFlagBits {
	VK_BUFFER_USAGE_TRANSFER_SRC_BIT = 0x00000001,
	VK_BUFFER_USAGE_TRANSFER_DST_BIT = 0x00000002,
	VK_BUFFER_USAGE_FLAG_BITS_MAX_ENUM = 0x7FFFFFFF
} VkBufferUsageFlagBits;

typedef enum VkExternalMemoryHandleTypeFlagBits {
	VK_EXTERNAL_MEMORY_HANDLE_TYPE_OPAQUE_FD_BIT = 0x00000001,
	VK_EXTERNAL_MEMORY_HANDLE_TYPE_FLAG_BITS_MAX_ENUM = 0x7FFFFFFF
} VkExternalMemoryHandleTypeFlagBits;

typedef enum VkExternalMemoryFeatureFlagBits {
	VK_EXTERNAL_MEMORY_FEATURE_DEDICATED_ONLY_BIT = 0x00000001,
	VK_EXTERNAL_MEMORY_FEATURE_EXPORTABLE_BIT = 0x00000002,
	VK_EXTERNAL_MEMORY_FEATURE_IMPORTABLE_BIT = 0x00000004,
	VK_EXTERNAL_MEMORY_FEATURE_FLAG_BITS_MAX_ENUM = 0x7FFFFFFF
} VkExternalMemoryFeatureFlagBits;

/* Structures, named ahead for the entry points; VkAllocationCallbacks and
 * VkPhysicalDeviceFeatures stay incomplete: the library only ever passes NULL for them. */
typedef struct VkAllocationCallbacks VkAllocationCallbacks;
typedef struct VkPhysicalDeviceFeatures VkPhysicalDeviceFeatures;
typedef struct VkApplicationInfo VkApplicationInfo;
typedef struct VkInstanceCreateInfo VkInstanceCreateInfo;
typedef struct VkExtensionProperties VkExtensionProperties;
typedef struct VkMemoryType VkMemoryType;
typedef struct VkMemoryHeap VkMemoryHeap;
typedef struct VkPhysicalDeviceMemoryProperties VkPhysicalDeviceMemoryProperties;
typedef struct VkPhysicalDeviceLimits VkPhysicalDeviceLimits;
typedef struct VkPhysicalDeviceSparseProperties VkPhysicalDeviceSparseProperties;
typedef struct VkPhysicalDeviceProperties VkPhysicalDeviceProperties;
typedef struct VkPhysicalDeviceProperties2 VkPhysicalDeviceProperties2;
typedef struct VkPhysicalDeviceIDProperties VkPhysicalDeviceIDProperties;
typedef struct VkPhysicalDeviceExternalBufferInfo VkPhysicalDeviceExternalBufferInfo;
typedef struct VkExternalMemoryProperties VkExternalMemoryProperties;
typedef struct VkExternalBufferProperties VkExternalBufferProperties;
typedef struct VkDeviceQueueCreateInfo VkDeviceQueueCreateInfo;
typedef struct VkDeviceCreateInfo VkDeviceCreateInfo;
typedef struct VkMemoryAllocateInfo VkMemoryAllocateInfo;
typedef struct VkImportMemoryFdInfoKHR VkImportMemoryFdInfoKHR;
typedef struct VkMemoryDedicatedAllocateInfo VkMemoryDedicatedAllocateInfo;
typedef struct VkExternalMemoryBufferCreateInfo VkExternalMemoryBufferCreateInfo;
typedef struct VkBufferCreateInfo VkBufferCreateInfo;
typedef struct VkMemoryRequirements VkMemoryRequirements;

#include "vulkan_api_types.h"

struct VkApplicationInfo {
	VkStructureType sType;
	const void *pNext;
	const char *pApplicationName;
	uint32_t applicationVersion;
	const char *pEngineName;
	uint32_t engineVersion;
	uint32_t apiVersion;
};

struct VkInstanceCreateInfo {
	VkStructureType sType;
	const void *pNext;
	VkInstanceCreateFlags flags;
	const VkApplicationInfo *pApplicationInfo;
	uint32_t enabledLayerCount;
	const char *const *ppEnabledLayerNames;
	uint32_t enabledExtensionCount;
	const char *const *ppEnabledExtensionNames;
};

struct VkExtensionProperties {
	char extensionName[VK_MAX_EXTENSION_NAME_SIZE];
	uint32_t specVersion;
};

struct VkMemoryType {
	VkMemoryPropertyFlags propertyFlags;
	uint32_t heapIndex;
};

struct VkMemoryHeap {
	VkDeviceSize size;
	VkMemoryHeapFlags flags;
};

struct VkPhysicalDeviceMemoryProperties {
	uint32_t memoryTypeCount;
	VkMemoryType memoryTypes[VK_MAX_MEMORY_TYPES];
	uint32_t memoryHeapCount;
	VkMemoryHeap memoryHeaps[VK_MAX_MEMORY_HEAPS];
};

/*
 * The spec's 106 limits, which the library never reads: as opaque as their size and alignment
 * allow (504 bytes, 8-byte aligned, on 64-bit Linux), so the driver's writes land where the
 * fields after them expect.
 */
struct VkPhysicalDeviceLimits {
	uint64_t opaque[63];
};

struct VkPhysicalDeviceSparseProperties {
	VkBool32 residencyStandard2DBlockShape;
	VkBool32 residencyStandard2DMultisampleBlockShape;
	VkBool32 residencyStandard3DBlockShape;
	VkBool32 residencyAlignedMipSize;
	VkBool32 residencyNonResidentStrict;
};

struct VkPhysicalDeviceProperties {
	uint32_t apiVersion;
	uint32_t driverVersion;
	uint32_t vendorID;
	uint32_t deviceID;
	VkPhysicalDeviceType deviceType;
	char deviceName[VK_MAX_PHYSICAL_DEVICE_NAME_SIZE];
	uint8_t pipelineCacheUUID[VK_UUID_SIZE];
	VkPhysicalDeviceLimits limits;
	VkPhysicalDeviceSparseProperties sparseProperties;
};

struct VkPhysicalDeviceProperties2 {
	VkStructureType sType;
	void *pNext;
	VkPhysicalDeviceProperties properties;
};

struct VkPhysicalDeviceIDProperties {
	VkStructureType sType;
	void *pNext;
	uint8_t deviceUUID[VK_UUID_SIZE];
	uint8_t driverUUID[VK_UUID_SIZE];
	uint8_t deviceLUID[VK_LUID_SIZE];
	uint32_t deviceNodeMask;
	VkBool32 deviceLUIDValid;
};

struct VkPhysicalDeviceExternalBufferInfo {
	VkStructureType sType;
	const void *pNext;
	VkBufferCreateFlags flags;
	VkBufferUsageFlags usage;
	VkExternalMemoryHandleTypeFlagBits handleType;
};

struct VkExternalMemoryProperties {
	VkExternalMemoryFeatureFlags externalMemoryFeatures;
	VkExternalMemoryHandleTypeFlags exportFromImportedHandleTypes;
	VkExternalMemoryHandleTypeFlags compatibleHandleTypes;
};

struct VkExternalBufferProperties {
	VkStructureType sType;
	void *pNext;
	VkExternalMemoryProperties externalMemoryProperties;
};

struct VkDeviceQueueCreateInfo {
	VkStructureType sType;
	const void *pNext;
	VkDeviceQueueCreateFlags flags;
	uint32_t queueFamilyIndex;
	uint32_t queueCount;
	const float *pQueuePriorities;
};

struct VkDeviceCreateInfo {
	VkStructureType sType;
	const void *pNext;
	VkDeviceCreateFlags flags;
	uint32_t queueCreateInfoCount;
	const VkDeviceQueueCreateInfo *pQueueCreateInfos;
	uint32_t enabledLayerCount;
	const char *const *ppEnabledLayerNames;
	uint32_t enabledExtensionCount;
	const char *const *ppEnabledExtensionNames;
	const VkPhysicalDeviceFeatures *pEnabledFeatures;
};

struct VkMemoryAllocateInfo {
	VkStructureType sType;
	const void *pNext;
	VkDeviceSize allocationSize;
	uint32_t memoryTypeIndex;
};

struct VkImportMemoryFdInfoKHR {
	VkStructureType sType;
	const void *pNext;
	VkExternalMemoryHandleTypeFlagBits handleType;
	int fd;
};

struct VkMemoryDedicatedAllocateInfo {
	VkStructureType sType;
	const void *pNext;
	VkImage image;
	VkBuffer buffer;
};

struct VkExternalMemoryBufferCreateInfo {
	VkStructureType sType;
	const void *pNext;
	VkExternalMemoryHandleTypeFlags handleTypes;
};

struct VkBufferCreateInfo {
	VkStructureType sType;
	const void *pNext;
	VkBufferCreateFlags flags;
	VkDeviceSize size;
	VkBufferUsageFlags usage;
	VkSharingMode sharingMode;
	uint32_t queueFamilyIndexCount;
	const uint32_t *pQueueFamilyIndices;
};

struct VkMemoryRequirements {
	VkDeviceSize size;
	VkDeviceSize alignment;
	uint32_t memoryTypeBits;
};

#endif
