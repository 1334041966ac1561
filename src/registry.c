/* SPDX-License-Identifier: MIT */
/*
 * The backends gdr_open may use, most preferred first. On its own so that test programs link
 * a registry of their own (tests/unit/fake_registry.c) in its place, with a test backend that
 * the shipped library never contains.
 */
#include <stddef.h>

#include "backend.h"

const struct gdr_backend *const gdr_backend_registry[] = {
	&gdr_backend_gdrdrv,
	&gdr_backend_dmabuf,
	&gdr_backend_vulkan,
	NULL,
};
