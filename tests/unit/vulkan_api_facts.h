/* SPDX-License-Identifier: MIT */
/*
 * Every name src/backends/vulkan_api.h declares, as facts that test_vulkan_api compiles twice:
 * against that header (test_vulkan_api.c) and against Khronos' (vulkan_api_khronos.c).
 *   V(name)          a constant's value
 *   T(type)          a type's size and alignment
 *   F(type, field)   a field's offset and size
 *   S(name)          a string's text
 */
#ifndef GDR_TEST_VULKAN_API_FACTS_H
#define GDR_TEST_VULKAN_API_FACTS_H

#include <stddef.h>

struct vulkan_api_fact {
	const char *name;
	long long value;
	const char *text;
};

#define VULKAN_API_FACTS(V, T, F, S) \
	V(VK_UUID_SIZE) V(VK_LUID_SIZE) V(VK_MAX_EXTENSION_NAME_SIZE) \
	V(VK_MAX_PHYSICAL_DEVICE_NAME_SIZE) V(VK_MAX_MEMORY_TYPES) V(VK_MAX_MEMORY_HEAPS) \
	V((long long)(uintptr_t)VK_NULL_HANDLE) \
	V(VK_API_VERSION_1_1) V(VK_API_VERSION_MAJOR(VK_API_VERSION_1_1)) \
	V(VK_API_VERSION_MINOR(VK_API_VERSION_1_1)) V(VK_MAKE_API_VERSION(7, 127, 1023, 4095)) \
	V(VK_SUCCESS) V(VK_INCOMPLETE) V(VK_ERROR_OUT_OF_HOST_MEMORY) \
	V(VK_ERROR_OUT_OF_DEVICE_MEMORY) V(VK_ERROR_INITIALIZATION_FAILED) V(VK_ERROR_DEVICE_LOST) \
	V(VK_ERROR_MEMORY_MAP_FAILED) V(VK_ERROR_LAYER_NOT_PRESENT) \
	V(VK_ERROR_EXTENSION_NOT_PRESENT) V(VK_ERROR_FEATURE_NOT_PRESENT) \
	V(VK_ERROR_INCOMPATIBLE_DRIVER) V(VK_ERROR_TOO_MANY_OBJECTS) \
	V(VK_ERROR_INVALID_EXTERNAL_HANDLE) V(VK_RESULT_MAX_ENUM) \
	V(VK_STRUCTURE_TYPE_APPLICATION_INFO) V(VK_STRUCTURE_TYPE_INSTANCE_CREATE_INFO) \
	V(VK_STRUCTURE_TYPE_DEVICE_QUEUE_CREATE_INFO) V(VK_STRUCTURE_TYPE_DEVICE_CREATE_INFO) \
	V(VK_STRUCTURE_TYPE_MEMORY_ALLOCATE_INFO) V(VK_STRUCTURE_TYPE_BUFFER_CREATE_INFO) \
	V(VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_PROPERTIES_2) \
	V(VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_EXTERNAL_BUFFER_INFO) \
	V(VK_STRUCTURE_TYPE_EXTERNAL_BUFFER_PROPERTIES) \
	V(VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_ID_PROPERTIES) \
	V(VK_STRUCTURE_TYPE_EXTERNAL_MEMORY_BUFFER_CREATE_INFO) \
	V(VK_STRUCTURE_TYPE_IMPORT_MEMORY_FD_INFO_KHR) \
	V(VK_STRUCTURE_TYPE_MEMORY_DEDICATED_ALLOCATE_INFO) V(VK_STRUCTURE_TYPE_MAX_ENUM) \
	V(VK_PHYSICAL_DEVICE_TYPE_OTHER) V(VK_PHYSICAL_DEVICE_TYPE_INTEGRATED_GPU) \
	V(VK_PHYSICAL_DEVICE_TYPE_DISCRETE_GPU) V(VK_PHYSICAL_DEVICE_TYPE_VIRTUAL_GPU) \
	V(VK_PHYSICAL_DEVICE_TYPE_CPU) V(VK_PHYSICAL_DEVICE_TYPE_MAX_ENUM) \
	V(VK_SHARING_MODE_EXCLUSIVE) V(VK_SHARING_MODE_CONCURRENT) V(VK_SHARING_MODE_MAX_ENUM) \
	V(VK_MEMORY_PROPERTY_DEVICE_LOCAL_BIT) V(VK_MEMORY_PROPERTY_HOST_VISIBLE_BIT) \
	V(VK_MEMORY_PROPERTY_HOST_COHERENT_BIT) V(VK_MEMORY_PROPERTY_HOST_CACHED_BIT) \
	V(VK_MEMORY_PROPERTY_FLAG_BITS_MAX_ENUM) \
	V(VK_MEMORY_HEAP_DEVICE_LOCAL_BIT) V(VK_MEMORY_HEAP_FLAG_BITS_MAX_ENUM) \
	V(VK_BUFFER_USAGE_TRANSFER_SRC_BIT) V(VK_BUFFER_USAGE_TRANSFER_DST_BIT) \
	V(VK_BUFFER_USAGE_FLAG_BITS_MAX_ENUM) \
	V(VK_EXTERNAL_MEMORY_HANDLE_TYPE_OPAQUE_FD_BIT) \
	V(VK_EXTERNAL_MEMORY_HANDLE_TYPE_FLAG_BITS_MAX_ENUM) \
	V(VK_EXTERNAL_MEMORY_FEATURE_DEDICATED_ONLY_BIT) V(VK_EXTERNAL_MEMORY_FEATURE_EXPORTABLE_BIT) \
	V(VK_EXTERNAL_MEMORY_FEATURE_IMPORTABLE_BIT) V(VK_EXTERNAL_MEMORY_FEATURE_FLAG_BITS_MAX_ENUM) \
	S(VK_KHR_EXTERNAL_MEMORY_EXTENSION_NAME) S(VK_KHR_EXTERNAL_MEMORY_FD_EXTENSION_NAME) \
	S(VK_KHR_DEDICATED_ALLOCATION_EXTENSION_NAME) \
	T(VkResult) T(VkStructureType) T(VkPhysicalDeviceType) T(VkSharingMode) \
	T(VkMemoryPropertyFlagBits) T(VkMemoryHeapFlagBits) T(VkBufferUsageFlagBits) \
	T(VkExternalMemoryHandleTypeFlagBits) T(VkExternalMemoryFeatureFlagBits) \
	T(VkApplicationInfo) F(VkApplicationInfo, sType) F(VkApplicationInfo, pNext) \
	F(VkApplicationInfo, pApplicationName) F(VkApplicationInfo, applicationVersion) \
	F(VkApplicationInfo, pEngineName) F(VkApplicationInfo, engineVersion) \
	F(VkApplicationInfo, apiVersion) \
	T(VkInstanceCreateInfo) F(VkInstanceCreateInfo, sType) F(VkInstanceCreateInfo, pNext) \
	F(VkInstanceCreateInfo, flags) F(VkInstanceCreateInfo, pApplicationInfo) \
	F(VkInstanceCreateInfo, enabledLayerCount) F(VkInstanceCreateInfo, ppEnabledLayerNames) \
	F(VkInstanceCreateInfo, enabledExtensionCount) \
	F(VkInstanceCreateInfo, ppEnabledExtensionNames) \
	T(VkExtensionProperties) F(VkExtensionProperties, extensionName) \
	F(VkExtensionProperties, specVersion) \
	T(VkMemoryType) F(VkMemoryType, propertyFlags) F(VkMemoryType, heapIndex) \
	T(VkMemoryHeap) F(VkMemoryHeap, size) F(VkMemoryHeap, flags) \
	T(VkPhysicalDeviceMemoryProperties) F(VkPhysicalDeviceMemoryProperties, memoryTypeCount) \
	F(VkPhysicalDeviceMemoryProperties, memoryTypes) \
	F(VkPhysicalDeviceMemoryProperties, memoryHeapCount) \
	F(VkPhysicalDeviceMemoryProperties, memoryHeaps) \
	T(VkPhysicalDeviceLimits) \
	T(VkPhysicalDeviceSparseProperties) \
	F(VkPhysicalDeviceSparseProperties, residencyStandard2DBlockShape) \
	F(VkPhysicalDeviceSparseProperties, residencyStandard2DMultisampleBlockShape) \
	F(VkPhysicalDeviceSparseProperties, residencyStandard3DBlockShape) \
	F(VkPhysicalDeviceSparseProperties, residencyAlignedMipSize) \
	F(VkPhysicalDeviceSparseProperties, residencyNonResidentStrict) \
	T(VkPhysicalDeviceProperties) F(VkPhysicalDeviceProperties, apiVersion) \
	F(VkPhysicalDeviceProperties, driverVersion) F(VkPhysicalDeviceProperties, vendorID) \
	F(VkPhysicalDeviceProperties, deviceID) F(VkPhysicalDeviceProperties, deviceType) \
	F(VkPhysicalDeviceProperties, deviceName) F(VkPhysicalDeviceProperties, pipelineCacheUUID) \
	F(VkPhysicalDeviceProperties, limits) F(VkPhysicalDeviceProperties, sparseProperties) \
	T(VkPhysicalDeviceProperties2) F(VkPhysicalDeviceProperties2, sType) \
	F(VkPhysicalDeviceProperties2, pNext) F(VkPhysicalDeviceProperties2, properties) \
	T(VkPhysicalDeviceIDProperties) F(VkPhysicalDeviceIDProperties, sType) \
	F(VkPhysicalDeviceIDProperties, pNext) F(VkPhysicalDeviceIDProperties, deviceUUID) \
	F(VkPhysicalDeviceIDProperties, driverUUID) F(VkPhysicalDeviceIDProperties, deviceLUID) \
	F(VkPhysicalDeviceIDProperties, deviceNodeMask) \
	F(VkPhysicalDeviceIDProperties, deviceLUIDValid) \
	T(VkPhysicalDeviceExternalBufferInfo) F(VkPhysicalDeviceExternalBufferInfo, sType) \
	F(VkPhysicalDeviceExternalBufferInfo, pNext) F(VkPhysicalDeviceExternalBufferInfo, flags) \
	F(VkPhysicalDeviceExternalBufferInfo, usage) \
	F(VkPhysicalDeviceExternalBufferInfo, handleType) \
	T(VkExternalMemoryProperties) F(VkExternalMemoryProperties, externalMemoryFeatures) \
	F(VkExternalMemoryProperties, exportFromImportedHandleTypes) \
	F(VkExternalMemoryProperties, compatibleHandleTypes) \
	T(VkExternalBufferProperties) F(VkExternalBufferProperties, sType) \
	F(VkExternalBufferProperties, pNext) F(VkExternalBufferProperties, externalMemoryProperties) \
	T(VkDeviceQueueCreateInfo) F(VkDeviceQueueCreateInfo, sType) \
	F(VkDeviceQueueCreateInfo, pNext) F(VkDeviceQueueCreateInfo, flags) \
	F(VkDeviceQueueCreateInfo, queueFamilyIndex) F(VkDeviceQueueCreateInfo, queueCount) \
	F(VkDeviceQueueCreateInfo, pQueuePriorities) \
	T(VkDeviceCreateInfo) F(VkDeviceCreateInfo, sType) F(VkDeviceCreateInfo, pNext) \
	F(VkDeviceCreateInfo, flags) F(VkDeviceCreateInfo, queueCreateInfoCount) \
	F(VkDeviceCreateInfo, pQueueCreateInfos) F(VkDeviceCreateInfo, enabledLayerCount) \
	F(VkDeviceCreateInfo, ppEnabledLayerNames) F(VkDeviceCreateInfo, enabledExtensionCount) \
	F(VkDeviceCreateInfo, ppEnabledExtensionNames) F(VkDeviceCreateInfo, pEnabledFeatures) \
	T(VkMemoryAllocateInfo) F(VkMemoryAllocateInfo, sType) F(VkMemoryAllocateInfo, pNext) \
	F(VkMemoryAllocateInfo, allocationSize) F(VkMemoryAllocateInfo, memoryTypeIndex) \
	T(VkImportMemoryFdInfoKHR) F(VkImportMemoryFdInfoKHR, sType) \
	F(VkImportMemoryFdInfoKHR, pNext) F(VkImportMemoryFdInfoKHR, handleType) \
	F(VkImportMemoryFdInfoKHR, fd) \
	T(VkMemoryDedicatedAllocateInfo) F(VkMemoryDedicatedAllocateInfo, sType) \
	F(VkMemoryDedicatedAllocateInfo, pNext) F(VkMemoryDedicatedAllocateInfo, image) \
	F(VkMemoryDedicatedAllocateInfo, buffer) \
	T(VkExternalMemoryBufferCreateInfo) F(VkExternalMemoryBufferCreateInfo, sType) \
	F(VkExternalMemoryBufferCreateInfo, pNext) F(VkExternalMemoryBufferCreateInfo, handleTypes) \
	T(VkBufferCreateInfo) F(VkBufferCreateInfo, sType) F(VkBufferCreateInfo, pNext) \
	F(VkBufferCreateInfo, flags) F(VkBufferCreateInfo, size) F(VkBufferCreateInfo, usage) \
	F(VkBufferCreateInfo, sharingMode) F(VkBufferCreateInfo, queueFamilyIndexCount) \
	F(VkBufferCreateInfo, pQueueFamilyIndices) \
	T(VkMemoryRequirements) F(VkMemoryRequirements, size) F(VkMemoryRequirements, alignment) \
	F(VkMemoryRequirements, memoryTypeBits)

/* The table of one translation unit's facts, ending with a NULL name. */
#define VULKAN_API_FACT_V(x) { #x, (long long)(x), NULL },
#define VULKAN_API_FACT_T(t) { "sizeof " #t, (long long)sizeof(t), NULL }, \
	{ "_Alignof " #t, (long long)_Alignof(t), NULL },
#define VULKAN_API_FACT_F(t, f) { "offsetof " #t "." #f, (long long)offsetof(t, f), NULL }, \
	{ "sizeof " #t "." #f, (long long)sizeof(((t *)0)->f), NULL },
#define VULKAN_API_FACT_S(x) { #x, 0, x },
#define VULKAN_API_FACT_TABLE(name) \
	const struct vulkan_api_fact name[] = { \
		VULKAN_API_FACTS(VULKAN_API_FACT_V, VULKAN_API_FACT_T, VULKAN_API_FACT_F, \
				 VULKAN_API_FACT_S) \
		{ NULL, 0, NULL } \
	}

#endif
