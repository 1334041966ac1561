/* SPDX-License-Identifier: MIT */
/* Backend selection, and the stub table under every backend's ops. */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/auxv.h>

#include "backend.h"
#include "gdr.h"
#include "log.h"

static int stub_close(struct gdr *g)
{
	(void)g;
	return 0;
}

static void stub_forget(struct gdr *g)
{
	(void)g;
}

static void stub_forget_pin(struct gdr *g, struct gdr_memh *mh)
{
	(void)g, (void)mh;
}

static int stub_pin(struct gdr *g, struct gdr_memh *mh, const struct gdr_pin_request *req)
{
	(void)g, (void)mh, (void)req;
	return EOPNOTSUPP;
}

static int stub_memh_op(struct gdr *g, struct gdr_memh *mh)
{
	(void)g, (void)mh;
	return EOPNOTSUPP;
}

static int stub_map(struct gdr *g, struct gdr_memh *mh, size_t size, int flags, void **va,
		    gdr_mapping_type_t *type)
{
	(void)g, (void)mh, (void)size, (void)flags, (void)va, (void)type;
	return EOPNOTSUPP;
}

static int stub_get_info(struct gdr *g, struct gdr_memh *mh, gdr_info_v2_t *info)
{
	(void)g, (void)mh, (void)info;
	return EOPNOTSUPP;
}

static int stub_get_callback_flag(struct gdr *g, struct gdr_memh *mh, int *flag)
{
	(void)g, (void)mh, (void)flag;
	return EOPNOTSUPP;
}

static int stub_get_attribute(struct gdr *g, int attr, int *value)
{
	(void)g, (void)attr, (void)value;
	return EOPNOTSUPP;
}

static int stub_driver_get_version(struct gdr *g, int *major, int *minor)
{
	(void)g, (void)major, (void)minor;
	return EOPNOTSUPP;
}

/*
 * What each op a backend lacks does, in the order of struct gdr_backend_ops and positional on
 * purpose: an op added to the struct without a stub here leaves an initializer missing
 * (-Wmissing-field-initializers, part of -Wextra, an error with -Werror), and a stub in the
 * wrong slot has the wrong type.
 */
static const struct gdr_backend_ops stub_ops = {
	stub_close,			/* close */
	stub_forget_pin,		/* forget_pin */
	stub_forget,			/* forget */
	stub_pin,			/* pin */
	stub_memh_op,			/* unpin */
	stub_map,			/* map */
	stub_memh_op,			/* unmap */
	stub_get_info,			/* get_info */
	stub_get_callback_flag,		/* get_callback_flag */
	stub_get_attribute,		/* get_attribute */
	stub_driver_get_version,	/* driver_get_version */
};

/* The ops table read as an array of its ops, which is all it holds. */
typedef void (*backend_op)(void);
_Static_assert(sizeof(struct gdr_backend_ops) == GDR_BACKEND_OP_COUNT * sizeof(backend_op),
	       "struct gdr_backend_ops must hold GDR_BACKEND_OP_COUNT function pointers only");

/* Copy ops into out, with every op it lacks (all of them when ops is NULL) a stub. */
static void resolve_ops(const struct gdr_backend_ops *ops, struct gdr_backend_ops *out)
{
	backend_op have[GDR_BACKEND_OP_COUNT], stub[GDR_BACKEND_OP_COUNT];

	memcpy(stub, &stub_ops, sizeof(stub));
	if (ops)
		memcpy(have, ops, sizeof(have));
	else
		memset(have, 0, sizeof(have));
	for (size_t i = 0; i < GDR_BACKEND_OP_COUNT; i++)
		if (!have[i])
			have[i] = stub[i];
	memcpy(out, have, sizeof(have));
}

struct backend_attempt {
	const char *name;
	struct gdr_why why;
};

/* Which backends to try: a forced name, GDRCopy's dma-buf switch, or all of them. */
static int backend_candidates(const struct gdr_backend **list, size_t max)
{
	const char *forced = secure_getenv("GDRCOPY_BACKEND");
	const char *dmabuf = getenv("GDRCOPY_USE_DMABUF_MMAP");
	size_t n = 0;

	if (!forced && getenv("GDRCOPY_BACKEND") && getauxval(AT_SECURE))
		gdr_warn("GDRCOPY_BACKEND is ignored in setuid/setgid programs");
	if (forced && !*forced)
		forced = NULL;
	if (!forced && dmabuf && !strcmp(dmabuf, "1"))
		forced = "dmabuf";

	for (const struct gdr_backend *const *b = gdr_backend_registry; *b && n < max; b++)
		if (!forced || !strcmp(forced, (*b)->name))
			list[n++] = *b;
	if (forced && !n)
		gdr_err("GDRCOPY_BACKEND=%s: no such backend; use gdrdrv, dmabuf or vulkan", forced);
	return (int)n;
}

int gdr_backend_select(struct gdr *g)
{
	const struct gdr_backend *candidates[8];
	struct backend_attempt tried[8];
	int n = backend_candidates(candidates, 8);

	for (int i = 0; i < n; i++) {
		const struct gdr_backend *b = candidates[i];

		tried[i].name = b->name;
		tried[i].why.msg[0] = '\0';
		if (b->probe(&tried[i].why) == 0 && b->open(g, &tried[i].why) == 0) {
			g->backend = b;
			resolve_ops(b->ops, &g->ops);
			for (int j = 0; j < i; j++)
				gdr_info("backend %s: not used: %s", tried[j].name, tried[j].why.msg);
			gdr_info("backend %s: in use", b->name);
			return 0;
		}
	}
	for (int i = 0; i < n; i++)
		gdr_err("backend %s: unavailable: %s", tried[i].name, tried[i].why.msg);
	if (n)
		gdr_err("gdr_open: no backend can map GPU memory here (see the lines above; "
			"GDRCOPY_ENABLE_LOGGING=1 GDRCOPY_LOG_LEVEL=2 shows more)");
	return ENODEV;
}
