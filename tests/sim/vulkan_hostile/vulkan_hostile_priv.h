/* SPDX-License-Identifier: MIT */
/* Between the hostile loader's parts: its answers (vulkan_hostile.c) and its failures. */
#ifndef GDR_TEST_VULKAN_HOSTILE_PRIV_H
#define GDR_TEST_VULKAN_HOSTILE_PRIV_H

#include <vulkan/vulkan.h>

/*
 * What the library gets for the entry point name, whose next definition is next: a wrapper
 * that may fail it and counts what it makes, once a test has asked for failures; else next.
 */
PFN_vkVoidFunction vk_failing_wrap(const char *name, PFN_vkVoidFunction next);

#endif
