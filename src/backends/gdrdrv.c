/* SPDX-License-Identifier: MIT */
/* Placeholder: the gdrdrv backend is its own issue; until it lands it declines in its probe. */
#include <errno.h>

#include "backend.h"

static int gdrdrv_probe(struct gdr_why *why)
{
	gdr_why_set(why, "the gdrdrv backend is not implemented in this build yet");
	return EOPNOTSUPP;
}

const struct gdr_backend_ops gdr_backend_gdrdrv = {
	.name = "gdrdrv",
	.id = GDR_BACKEND_GDRDRV,
	.probe = gdrdrv_probe,
};
