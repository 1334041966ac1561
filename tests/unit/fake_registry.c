/* SPDX-License-Identifier: MIT */
/*
 * The registry of test programs, linked in place of src/registry.c: the shipped backends, then
 * the test backend (fake_backend.c), which gdr_open reaches where the others decline here (or
 * with GDRCOPY_BACKEND=test).
 */
#include <stddef.h>

#include "backend.h"

extern const struct gdr_backend gdr_backend_test;

const struct gdr_backend *const gdr_backend_registry[] = {
	&gdr_backend_gdrdrv,
	&gdr_backend_dmabuf,
	&gdr_backend_vulkan,
	&gdr_backend_test,
	NULL,
};
