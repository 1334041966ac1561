/* SPDX-License-Identifier: MIT */
/*
 * Selection of the dma-buf backend against the simulated CUDA driver: a driver older than 13.3
 * (R610) makes it decline with the version reason, after which gdr_open goes on to the next
 * backend; forcing it (GDRCOPY_USE_DMABUF_MMAP=1 or GDRCOPY_BACKEND=dmabuf) on such a driver
 * makes gdr_open fail with that reason; a driver with no dma-buf device declines likewise; a
 * 13.3 driver with one is chosen. Each case is a gdr_open in a child with its own environment.
 */
#include "dmabuf_test.h"
#include "gdrapi.h"
#include "gdrapi_ext.h"

#define VERSION_REASON "CUDA driver 13.0 < 13.3: dma-buf mmap of discrete GPU memory needs " \
	"driver R610 (CUDA 13.3) or newer"
#define NO_DEVICE_REASON "supports dma-buf export (CU_DEVICE_ATTRIBUTE_DMA_BUF_SUPPORTED is 0)"

/* Exit 2 when gdr_open fails, else 10 + the backend in use. */
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

static void run_case(const struct open_case *c)
{
	const char *const env[] = {
		"GDRCOPY_ENABLE_LOGGING", "1",
		"GDRCOPY_LOG_LEVEL", "2",
		"GDRCOPY_SIM_CUDA_VERSION", c->version,
		"GDRCOPY_SIM_CUDA_ATTR", c->attrs,
		"GDRCOPY_BACKEND", c->backend,
		"GDRCOPY_USE_DMABUF_MMAP", c->use_dmabuf,
		NULL,
	};
	char log[16384], why[256] = "";
	int got = run_child(env, open_child, NULL, log, sizeof(log));

	if (c->want == -1 ? got == 10 + GDR_BACKEND_DMABUF || (got != 2 && got < 10) :
	    got != c->want)
		snprintf(why, sizeof(why), "gdr_open gave %d, expected %d (2 = NULL, 10 + backend)",
			 got, c->want);
	else if (c->reason && !dmabuf_line_has(log, c->reason))
		snprintf(why, sizeof(why), "no 'backend dmabuf: ...%s' line in the log", c->reason);
	else if (c->goes_on && !strstr(log, "backend vulkan: "))
		snprintf(why, sizeof(why), "gdr_open did not go on to the vulkan backend");
	else if (!c->goes_on && c->want == 2 && strstr(log, "backend vulkan: "))
		snprintf(why, sizeof(why), "forced dmabuf, yet vulkan was tried");
	else if (c->want == 10 + GDR_BACKEND_DMABUF && !strstr(log, "backend dmabuf: in use"))
		snprintf(why, sizeof(why), "no 'backend dmabuf: in use' line");
	if (*why) {
		report("fail", c->name, "%s", why);
		fprintf(stderr, "--- log of %s ---\n%s---\n", c->name, log);
	} else {
		report("pass", c->name, NULL);
	}
}

int main(int argc, char **argv)
{
	(void)argc;
	sim_setup(argv);
	if (!access("/dev/gdrdrv", F_OK))
		SKIP("/dev/gdrdrv exists: gdrdrv would be chosen before dmabuf");
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++)
		run_case(&cases[i]);
	return report_failures ? TEST_FAIL : TEST_PASS;
}
