/* SPDX-License-Identifier: MIT */
/* Placeholder: the dmabuf backend is its own issue; until it lands it declines in its probe. */
#include <errno.h>

#include "backend.h"

static int dmabuf_probe(struct gdr_why *why)
{
	gdr_why_set(why, "the dmabuf backend is not implemented in this build yet");
	return EOPNOTSUPP;
}

const struct gdr_backend_ops gdr_backend_dmabuf = {
	.name = "dmabuf",
	.id = GDR_BACKEND_DMABUF,
	.probe = dmabuf_probe,
};
