/* SPDX-License-Identifier: MIT */
/*
 * Backing memory that a Vulkan driver will import. Mesa's lavapipe exports OPAQUE_FD memory as
 * a memfd that starts with its own header (the data follows, at 4096 in Mesa 22) and imports
 * only fds it exported itself; so POSIX-fd VMM allocations take their memory from a lavapipe
 * export: the simulator allocates exportable memory, keeps the exported fd, finds where the data
 * starts in it, and frees its own VkDeviceMemory at once (the memfd lives on in the fd). Device 0 reports this Vulkan device's UUID, so a
 * backend that matches CUDA and Vulkan devices by UUID finds it.
 *
 * Vulkan is loaded with dlopen, so the simulator works (with plain memfds) where there is none.
 * Nothing here is torn down: at exit the Vulkan loader may already be finalised.
 */
#define VK_NO_PROTOTYPES
#include <dlfcn.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <vulkan/vulkan.h>

#include "internal.h"

/* Set once by sim_vulkan_init, under sim_lock, then read under it. */
static struct {
	void *lib;
	VkInstance instance;
	VkDevice device;
	uint32_t memory_type;
	PFN_vkGetInstanceProcAddr gipa;
	PFN_vkDestroyInstance vkDestroyInstance;
	PFN_vkAllocateMemory vkAllocateMemory;
	PFN_vkFreeMemory vkFreeMemory;
	PFN_vkMapMemory vkMapMemory;
	PFN_vkUnmapMemory vkUnmapMemory;
	PFN_vkGetMemoryFdKHR vkGetMemoryFdKHR;
} vk;

static bool has_extension(PFN_vkEnumerateDeviceExtensionProperties enumerate,
			  VkPhysicalDevice pd, const char *name)
{
	VkExtensionProperties props[256];
	uint32_t n = 256;

	if (enumerate(pd, NULL, &n, props) < 0)
		return false;
	for (uint32_t i = 0; i < n; i++)
		if (!strcmp(props[i].extensionName, name))
			return true;
	return false;
}

static bool pick_memory_type(PFN_vkGetPhysicalDeviceMemoryProperties get, VkPhysicalDevice pd)
{
	const VkMemoryPropertyFlags want = VK_MEMORY_PROPERTY_HOST_VISIBLE_BIT |
					   VK_MEMORY_PROPERTY_HOST_COHERENT_BIT;
	VkPhysicalDeviceMemoryProperties mp;

	get(pd, &mp);
	for (uint32_t i = 0; i < mp.memoryTypeCount; i++) {
		if ((mp.memoryTypes[i].propertyFlags & want) == want) {
			vk.memory_type = i;
			return true;
		}
	}
	return false;
}

static bool open_device(VkPhysicalDevice pd)
{
	PFN_vkCreateDevice create = (PFN_vkCreateDevice)(void *)
		vk.gipa(vk.instance, "vkCreateDevice");
	PFN_vkGetDeviceProcAddr gdpa = (PFN_vkGetDeviceProcAddr)(void *)
		vk.gipa(vk.instance, "vkGetDeviceProcAddr");
	const char *ext = VK_KHR_EXTERNAL_MEMORY_FD_EXTENSION_NAME;
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
		.enabledExtensionCount = 1,
		.ppEnabledExtensionNames = &ext,
	};

	if (!create || !gdpa || create(pd, &info, NULL, &vk.device) != VK_SUCCESS)
		return false;
	vk.vkAllocateMemory = (PFN_vkAllocateMemory)(void *)gdpa(vk.device, "vkAllocateMemory");
	vk.vkFreeMemory = (PFN_vkFreeMemory)(void *)gdpa(vk.device, "vkFreeMemory");
	vk.vkMapMemory = (PFN_vkMapMemory)(void *)gdpa(vk.device, "vkMapMemory");
	vk.vkUnmapMemory = (PFN_vkUnmapMemory)(void *)gdpa(vk.device, "vkUnmapMemory");
	vk.vkGetMemoryFdKHR = (PFN_vkGetMemoryFdKHR)(void *)gdpa(vk.device, "vkGetMemoryFdKHR");
	/* The device is kept for the process's life; a failure here only leaves it unused. */
	return vk.vkAllocateMemory && vk.vkFreeMemory && vk.vkMapMemory && vk.vkUnmapMemory &&
	       vk.vkGetMemoryFdKHR;
}

bool sim_vulkan_init(unsigned char uuid[16])
{
	PFN_vkGetInstanceProcAddr gipa;
	PFN_vkCreateInstance create_instance;
	PFN_vkEnumeratePhysicalDevices enumerate;
	PFN_vkEnumerateDeviceExtensionProperties enumerate_ext;
	PFN_vkGetPhysicalDeviceProperties2 get_props2;
	PFN_vkGetPhysicalDeviceMemoryProperties get_memory;
	VkApplicationInfo app = {
		.sType = VK_STRUCTURE_TYPE_APPLICATION_INFO,
		.pApplicationName = "simcuda",
		.apiVersion = VK_API_VERSION_1_1,
	};
	VkInstanceCreateInfo info = {
		.sType = VK_STRUCTURE_TYPE_INSTANCE_CREATE_INFO,
		.pApplicationInfo = &app,
	};
	VkPhysicalDeviceIDProperties id = { .sType = VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_ID_PROPERTIES };
	VkPhysicalDeviceProperties2 props = {
		.sType = VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_PROPERTIES_2,
		.pNext = &id,
	};
	VkPhysicalDevice pd;
	uint32_t n = 1;

	vk.lib = dlopen("libvulkan.so.1", RTLD_NOW | RTLD_LOCAL);
	if (!vk.lib)
		return false;
	gipa = (PFN_vkGetInstanceProcAddr)dlsym(vk.lib, "vkGetInstanceProcAddr");
	vk.gipa = gipa;
	create_instance = gipa ? (PFN_vkCreateInstance)(void *)gipa(NULL, "vkCreateInstance") : NULL;
	if (!create_instance || create_instance(&info, NULL, &vk.instance) != VK_SUCCESS)
		goto err_close;
	vk.vkDestroyInstance = (PFN_vkDestroyInstance)(void *)gipa(vk.instance, "vkDestroyInstance");
	enumerate = (PFN_vkEnumeratePhysicalDevices)(void *)
		gipa(vk.instance, "vkEnumeratePhysicalDevices");
	enumerate_ext = (PFN_vkEnumerateDeviceExtensionProperties)(void *)
		gipa(vk.instance, "vkEnumerateDeviceExtensionProperties");
	get_props2 = (PFN_vkGetPhysicalDeviceProperties2)(void *)
		gipa(vk.instance, "vkGetPhysicalDeviceProperties2");
	get_memory = (PFN_vkGetPhysicalDeviceMemoryProperties)(void *)
		gipa(vk.instance, "vkGetPhysicalDeviceMemoryProperties");
	if (!enumerate || !enumerate_ext || !get_props2 || !get_memory || !vk.vkDestroyInstance)
		goto err_instance;
	/* VK_INCOMPLETE is fine: the first device is the one the simulator stands in for. */
	if (enumerate(vk.instance, &n, &pd) < 0 || n == 0)
		goto err_instance;
	if (!has_extension(enumerate_ext, pd, VK_KHR_EXTERNAL_MEMORY_FD_EXTENSION_NAME) ||
	    !pick_memory_type(get_memory, pd) || !open_device(pd))
		goto err_instance;
	get_props2(pd, &props);
	memcpy(uuid, id.deviceUUID, 16);
	return true;

err_instance:
	/* Without vkDestroyInstance (one of the failures that lead here) the instance stays. */
	if (vk.vkDestroyInstance)
		vk.vkDestroyInstance(vk.instance, NULL);
	vk.instance = VK_NULL_HANDLE;
err_close:
	dlclose(vk.lib);
	vk.lib = NULL;
	return false;
}

/*
 * Where the data of mem starts in its exported file: write a marker through a mapping and look
 * for it page by page (4096 with Mesa 22-25), rather than trusting Mesa's layout.
 */
static bool find_data_offset(VkDeviceMemory mem, int fd, size_t file_size, off_t *offset)
{
	static const char marker[16] = "simcuda:data@0\n";
	char buf[sizeof(marker)];
	void *p;
	bool found = false;

	if (vk.vkMapMemory(vk.device, mem, 0, VK_WHOLE_SIZE, 0, &p) != VK_SUCCESS)
		return false;
	memcpy(p, marker, sizeof(marker));
	for (off_t o = 0; o + (off_t)sizeof(marker) <= (off_t)file_size && o <= 65536; o += 4096) {
		if (pread(fd, buf, sizeof(buf), o) == (ssize_t)sizeof(buf) &&
		    !memcmp(buf, marker, sizeof(marker))) {
			*offset = o;
			found = true;
			break;
		}
	}
	memset(p, 0, sizeof(marker));
	vk.vkUnmapMemory(vk.device, mem);
	return found;
}

int sim_vulkan_memfd(size_t size, off_t *data_offset)
{
	VkExportMemoryAllocateInfo export = {
		.sType = VK_STRUCTURE_TYPE_EXPORT_MEMORY_ALLOCATE_INFO,
		.handleTypes = VK_EXTERNAL_MEMORY_HANDLE_TYPE_OPAQUE_FD_BIT,
	};
	VkMemoryAllocateInfo info = {
		.sType = VK_STRUCTURE_TYPE_MEMORY_ALLOCATE_INFO,
		.pNext = &export,
		.allocationSize = size,
		.memoryTypeIndex = vk.memory_type,
	};
	VkMemoryGetFdInfoKHR get = {
		.sType = VK_STRUCTURE_TYPE_MEMORY_GET_FD_INFO_KHR,
		.handleType = VK_EXTERNAL_MEMORY_HANDLE_TYPE_OPAQUE_FD_BIT,
	};
	VkDeviceMemory mem;
	struct stat st;
	int fd = -1;

	if (vk.vkAllocateMemory(vk.device, &info, NULL, &mem) != VK_SUCCESS)
		return -1;
	get.memory = mem;
	if (vk.vkGetMemoryFdKHR(vk.device, &get, &fd) != VK_SUCCESS)
		fd = -1;
	if (fd >= 0 && (fstat(fd, &st) || !find_data_offset(mem, fd, (size_t)st.st_size, data_offset) ||
			(size_t)st.st_size < (size_t)*data_offset + size)) {
		close(fd);
		fd = -1;
	}
	vk.vkFreeMemory(vk.device, mem, NULL);
	return fd;
}
