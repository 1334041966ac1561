/* SPDX-License-Identifier: MIT */
/*
 * The Khronos side of test_vulkan_api: the facts of vulkan_api_facts.h as <vulkan/vulkan.h>
 * gives them. Including vulkan_api_types.h after it repeats each of the library's typedefs
 * (handles, scalars, entry points): C accepts a repeated typedef only with the same type, so one
 * that differs from Khronos' fails this file's compilation.
 */
#include <stdint.h>
#include <vulkan/vulkan.h>

#include "vulkan_api_types.h"
#include "vulkan_api_facts.h"

extern const struct vulkan_api_fact vulkan_api_khronos_facts[];
VULKAN_API_FACT_TABLE(vulkan_api_khronos_facts);
