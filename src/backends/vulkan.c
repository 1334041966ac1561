/* SPDX-License-Identifier: MIT */
/* Placeholder: the vulkan backend is its own issue; until it lands it declines in its probe. */
#include <errno.h>

#include "backend.h"

static int vulkan_probe(struct gdr_why *why)
{
	gdr_why_set(why, "the vulkan backend is not implemented in this build yet");
	return EOPNOTSUPP;
}

const struct gdr_backend_ops gdr_backend_vulkan = {
	.name = "vulkan",
	.id = GDR_BACKEND_VULKAN,
	.probe = vulkan_probe,
};
