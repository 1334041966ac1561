/* SPDX-License-Identifier: MIT */
/*
 * Selection of the dma-buf backend against the simulated CUDA driver: a driver older than 13.3
 * (R610) makes it decline with the version reason, after which gdr_open goes on to the next
 * backend; forcing it (GDRCOPY_USE_DMABUF_MMAP=1 or GDRCOPY_BACKEND=dmabuf) on such a driver
 * makes gdr_open fail with that reason; a driver with no dma-buf device declines likewise; a
 * 13.3 driver with one is chosen. GDRCOPY_USE_DMABUF_MMAP forces nothing unless it is exactly
 * "1" (as GDRCopy 2.6's), GDRCOPY_BACKEND set wins over it, and GDRCOPY_BACKEND set empty is
 * unset. Each case is a gdr_open in a child with its own environment.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "gdrapi.h"
#include "gdrapi_ext.h"
#include "harness.h"

#define VERSION_REASON "CUDA driver 13.0 < 13.3: dma-buf mmap of discrete GPU memory needs " \
	"driver R610 (CUDA 13.3) or newer"
#define NO_DEVICE_REASON "supports dma-buf export (CU_DEVICE_ATTRIBUTE_DMA_BUF_SUPPORTED is 0)"

/* Exit 2 when gdr_open fails, else 10 + the backend in use (0: attributes disagree). */
static int open_child(void *arg)
{
	int backend = 0, dmabuf = -1;
	gdr_t g;

	(void)arg;
	g = gdr_open();
	if (!g)
		return 2;
	if (gdr_get_attribute(g, GDR_ATTR_EXT_BACKEND, &backend) ||
	    gdr_get_attribute(g, GDR_ATTR_USING_DMA_BUF_MMAP, &dmabuf) ||
	    dmabuf != (backend == GDR_BACKEND_DMABUF))
		backend = 0;
	gdr_close(g);
	return 10 + backend;
}

struct open_case {
	const char *name;
	const char *version;		/* GDRCOPY_SIM_CUDA_VERSION */
	const char *attrs;		/* GDRCOPY_SIM_CUDA_ATTR */
	const char *backend;		/* GDRCOPY_BACKEND */
	const char *use_dmabuf;		/* GDRCOPY_USE_DMABUF_MMAP */
	int want;			/* 2: gdr_open fails; 10 + id: that backend; -1: not dmabuf */
	const char *reason;		/* the dmabuf line must carry it */
	int goes_on;			/* the backends after dmabuf were tried */
};

static const struct open_case cases[] = {
	{ "old_driver_default", "13000", "124=1", NULL, NULL, -1, VERSION_REASON, 1 },
	{ "old_driver_use_dmabuf_mmap", "13000", "124=1", NULL, "1", 2, VERSION_REASON, 0 },
	{ "old_driver_backend_dmabuf", "13000", "124=1", "dmabuf", NULL, 2, VERSION_REASON, 0 },
	{ "old_driver_use_dmabuf_mmap_0", "13000", "124=1", NULL, "0", -1, VERSION_REASON, 1 },
	{ "old_driver_use_dmabuf_mmap_yes", "13000", "124=1", NULL, "yes", -1, VERSION_REASON, 1 },
	{ "old_driver_backend_empty", "13000", "124=1", "", NULL, -1, VERSION_REASON, 1 },
	{ "backend_vulkan_over_use_dmabuf_mmap", "13000", "124=1", "vulkan", "1", -1, NULL, 1 },
	{ "old_driver_sim_default_attrs", "13000", NULL, "dmabuf", NULL, 2, VERSION_REASON, 0 },
	{ "no_dmabuf_device", "13030", "124=0", "dmabuf", NULL, 2, NO_DEVICE_REASON, 0 },
	{ "new_driver_default", "13030", "124=1", NULL, NULL, 10 + GDR_BACKEND_DMABUF, NULL, 0 },
	{ "new_driver_use_dmabuf_mmap", "13030", "124=1", NULL, "1", 10 + GDR_BACKEND_DMABUF,
	  NULL, 0 },
	{ "new_driver_backend_dmabuf", "13030", "124=1", "dmabuf", NULL,
	  10 + GDR_BACKEND_DMABUF, NULL, 0 },
};

/* The log line about dmabuf ("not used: " or "unavailable: ") carries reason. */
static int dmabuf_line_has(const char *log, const char *reason)
{
	const char *p = strstr(log, "backend dmabuf: ");
	const char *eol;

	if (!p)
		return 0;
	eol = strchr(p, '\n');
	p = strstr(p, reason);
	return p && (!eol || p < eol);
}

/* The case the table entry current names, in a child of its own. */
static const struct open_case *current;

static int run_case(void)
{
	const struct open_case *c = current;
	const char *const env[] = {
		"GDRCOPY_ENABLE_LOGGING", "1",
		"GDRCOPY_LOG_LEVEL", "2",
		"GDRCOPY_SIM_CUDA_VERSION", c->version,
		"GDRCOPY_SIM_CUDA_ATTR", c->attrs,
		"GDRCOPY_BACKEND", c->backend,
		"GDRCOPY_USE_DMABUF_MMAP", c->use_dmabuf,
		NULL,
	};
	static char log[16384];
	const struct test_child child = { .env = env, .output = log, .output_len = sizeof(log) };
	int got = test_child_exit(&child, open_child, NULL);

	if (c->want == -1 ? got == 10 + GDR_BACKEND_DMABUF || (got != 2 && got < 10) :
	    got != c->want)
		test_fail("gdr_open gave %d, expected %d (2 = NULL, 10 + backend)", got, c->want);
	else if (c->reason && !dmabuf_line_has(log, c->reason))
		test_fail("no 'backend dmabuf: ...%s' line in the log", c->reason);
	else if (c->goes_on && !strstr(log, "backend vulkan: "))
		test_fail("gdr_open did not go on to the vulkan backend");
	else if (!c->goes_on && c->want == 2 && strstr(log, "backend vulkan: "))
		test_fail("forced dmabuf, yet vulkan was tried");
	else if (c->want == 10 + GDR_BACKEND_DMABUF && !strstr(log, "backend dmabuf: in use"))
		test_fail("no 'backend dmabuf: in use' line");
	else
		return TEST_PASS;
	fprintf(stderr, "--- log of %s ---\n%s---\n", c->name, log);
	return TEST_FAIL;
}

int main(void)
{
	test_use_sim_cuda(SIM_CUDA_DIR);
	if (!access("/dev/gdrdrv", F_OK))
		test_skip_program("/dev/gdrdrv exists: gdrdrv would be chosen before dmabuf");
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		current = &cases[i];
		test_run_case(&(const struct test_case){ .name = cases[i].name, .run = run_case });
	}
	return test_status();
}
