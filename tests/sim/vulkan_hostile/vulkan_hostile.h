/* SPDX-License-Identifier: MIT */
/*
 * What a test program asks of the hostile Vulkan loader (vulkan_hostile.c) beyond its
 * GDRCOPY_TEST_VK_HOSTILE modes: to fail libgdrapi's Vulkan calls when the program says so, and
 * how many of libgdrapi's Vulkan objects are alive. The program loads the loader itself
 * (test_use_vulkan_hostile) and finds these by dlsym, by the names below.
 */
#ifndef GDR_TEST_VULKAN_HOSTILE_H
#define GDR_TEST_VULKAN_HOSTILE_H

#include <vulkan/vulkan.h>

/*
 * Asked before each of libgdrapi's Vulkan calls that can fail, named call: VK_SUCCESS makes the
 * call, anything else is returned instead of making it. errors are the n failures the
 * specification lets the call return (of those that the library's arguments can meet).
 */
typedef VkResult (*vk_hostile_fail_fn)(const char *call, const VkResult *errors, unsigned int n);

/* Ask fail before each call, from the next vkGetInstanceProcAddr the library makes on. */
#define VK_HOSTILE_FAIL_WITH "vk_hostile_fail_with"
typedef void (*vk_hostile_fail_with_fn)(vk_hostile_fail_fn fail);

/* libgdrapi's Vulkan objects alive now (those it made while a fail function was set). */
struct vk_hostile_live {
	long instances, devices, memories, buffers, maps;
};
#define VK_HOSTILE_LIVE "vk_hostile_live"
typedef void (*vk_hostile_live_fn)(struct vk_hostile_live *live);

#endif
