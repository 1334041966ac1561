/* SPDX-License-Identifier: MIT */
/*
 * The vulkan backend's place in a library built with VULKAN=0: the registry keeps its name,
 * and asking for it says that it was left out on purpose, never that something is missing.
 */
#include <errno.h>

#include "backend.h"

static int vulkan_omitted_probe(struct gdr_why *why)
{
	gdr_why_set(why, "this libgdrapi was built without it (make VULKAN=0)");
	return EOPNOTSUPP;
}

const struct gdr_backend gdr_backend_vulkan = {
	.name = "vulkan",
	.id = GDR_BACKEND_VULKAN,
	.probe = vulkan_omitted_probe,
};
