/* SPDX-License-Identifier: MIT */
/*
 * The places in the registry of backends a build left out (src/lib.mk: VULKAN=0, or no CUDA
 * headers for dmabuf and vulkan): the registry keeps their names, and asking for one says that
 * it was left out on purpose, never that something is missing here.
 */
#include <errno.h>

#include "backend.h"

/* Only a build without CUDA's headers leaves dmabuf out, and vulkan with it. */
#if defined(GDR_OMIT_dmabuf)
#define GDR_OMITTED_BECAUSE "no CUDA headers: make CUDA=<toolkit>"
#else
#define GDR_OMITTED_BECAUSE "make VULKAN=0"
#endif

static int omitted_probe(struct gdr_why *why)
{
	gdr_why_set(why, "this libgdrapi was built without it (%s)", GDR_OMITTED_BECAUSE);
	return EOPNOTSUPP;
}

#ifdef GDR_OMIT_dmabuf
const struct gdr_backend gdr_backend_dmabuf = {
	.name = "dmabuf",
	.id = GDR_BACKEND_DMABUF,
	.probe = omitted_probe,
};
#endif

#ifdef GDR_OMIT_vulkan
const struct gdr_backend gdr_backend_vulkan = {
	.name = "vulkan",
	.id = GDR_BACKEND_VULKAN,
	.probe = omitted_probe,
};
#endif
