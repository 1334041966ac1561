/* SPDX-License-Identifier: MIT */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/auxv.h>
#include <sys/mman.h>

#include "backend.h"
#include "gdr.h"
#include "log.h"

static int stub_probe(struct gdr_why *why)
{
	gdr_why_set(why, "not available in this build");
	return EOPNOTSUPP;
}

static int stub_open(struct gdr *g, struct gdr_why *why)
{
	(void)g;
	gdr_why_set(why, "not available in this build");
	return EOPNOTSUPP;
}

static void stub_close(struct gdr *g)
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

static const struct gdr_backend_ops stub_ops = {
	.name = "stub",
	.probe = stub_probe,
	.open = stub_open,
	.close = stub_close,
	.forget_pin = stub_forget_pin,
	.forget = stub_close,
	.pin = stub_pin,
	.unpin = stub_memh_op,
	.map = stub_map,
	.unmap = stub_memh_op,
	.get_info = stub_get_info,
	.get_callback_flag = stub_get_callback_flag,
	.get_attribute = stub_get_attribute,
	.driver_get_version = stub_driver_get_version,
};

void gdr_backend_resolve(const struct gdr_backend_ops *b, struct gdr_backend_ops *out)
{
	out->name = b->name;
	out->id = b->id;
#define GDR_FILL_OP(op) out->op = b->op ? b->op : stub_ops.op;
	GDR_BACKEND_OPS(GDR_FILL_OP)
#undef GDR_FILL_OP
}

#ifdef GDR_WITH_TEST_BACKEND
/* Test programs only (tests/unit/fake_backend.c): never part of the shipped library. */
extern const struct gdr_backend_ops gdr_backend_test;
#endif

static const struct gdr_backend_ops *const registry[] = {
	&gdr_backend_gdrdrv,
	&gdr_backend_dmabuf,
	&gdr_backend_vulkan,
#ifdef GDR_WITH_TEST_BACKEND
	&gdr_backend_test,
#endif
	NULL,
};

const struct gdr_backend_ops *const *gdr_backend_registry(void)
{
	return registry;
}

int gdr_backend_info_from_memh(struct gdr *g, struct gdr_memh *mh, gdr_info_v2_t *info)
{
	(void)g;
	info->va = mh->va;
	info->mapped_size = mh->mapped_size;
	info->page_size = mh->page_size;
	info->mapping_type = mh->mapping_type;
	info->mapped = mh->mapping_type != GDR_MAPPING_TYPE_NONE;
	info->wc_mapping = mh->mapping_type == GDR_MAPPING_TYPE_WC;
	return 0;
}

void gdr_backend_keep_from_fork(void *va, size_t len)
{
	if (madvise(va, len, MADV_DONTFORK))
		gdr_warn("madvise(MADV_DONTFORK) of the mapping at %p failed (%s): fork children "
			 "will inherit it", va, strerror(errno));
}

void gdr_backend_forget_pin_priv(struct gdr *g, struct gdr_memh *mh)
{
	(void)g;
	free(mh->backend_priv);
	mh->backend_priv = NULL;
}

void gdr_backend_forget_priv(struct gdr *g)
{
	free(g->backend_priv);
	g->backend_priv = NULL;
}

int gdr_backend_no_module_version(struct gdr *g, int *major, int *minor)
{
	(void)g;
	*major = 2;
	*minor = 6;
	return 0;
}

struct backend_attempt {
	const char *name;
	struct gdr_why why;
};

/* Which backends to try: a forced name, GDRCopy's dma-buf switch, or all of them. */
static int backend_candidates(const struct gdr_backend_ops **list, size_t max)
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

	for (const struct gdr_backend_ops *const *b = registry; *b && n < max; b++)
		if (!forced || !strcmp(forced, (*b)->name))
			list[n++] = *b;
	if (forced && !n)
		gdr_err("GDRCOPY_BACKEND=%s: no such backend; use gdrdrv, dmabuf or vulkan", forced);
	return (int)n;
}

int gdr_backend_select(struct gdr *g)
{
	const struct gdr_backend_ops *candidates[8];
	struct backend_attempt tried[8];
	int n = backend_candidates(candidates, 8);

	for (int i = 0; i < n; i++) {
		struct gdr_backend_ops ops;

		gdr_backend_resolve(candidates[i], &ops);
		tried[i].name = ops.name;
		tried[i].why.msg[0] = '\0';
		if (ops.probe(&tried[i].why) == 0 && ops.open(g, &tried[i].why) == 0) {
			g->ops = ops;
			for (int j = 0; j < i; j++)
				gdr_info("backend %s: not used: %s", tried[j].name, tried[j].why.msg);
			gdr_info("backend %s: in use", ops.name);
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
