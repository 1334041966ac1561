/* SPDX-License-Identifier: MIT */
/* CUDA for the tools: errors by name, device selection, the primary context. */
#include <string.h>

#include "common.h"

const char *tool_cu_name(CUresult r)
{
	static __thread char buf[32];
	const char *s = NULL;

	if (cuGetErrorName(r, &s) == CUDA_SUCCESS && s)
		return s;
	/* The CUDA stub library names no error; these are the ones a driver-less machine gives. */
	switch (r) {
	case CUDA_ERROR_STUB_LIBRARY:
		return "CUDA_ERROR_STUB_LIBRARY (the CUDA stub library was loaded, not a driver)";
	case CUDA_ERROR_NO_DEVICE: return "CUDA_ERROR_NO_DEVICE";
	case CUDA_ERROR_SYSTEM_DRIVER_MISMATCH: return "CUDA_ERROR_SYSTEM_DRIVER_MISMATCH";
	default: break;
	}
	snprintf(buf, sizeof(buf), "CUresult %d", (int)r);
	return buf;
}

static void list_device(int i)
{
	int domain = 0, bus = 0, slot = 0;
	char name[256] = "?";
	CUdevice d;

	if (cuDeviceGet(&d, i) != CUDA_SUCCESS)
		return;
	cuDeviceGetName(name, sizeof(name), d);
	cuDeviceGetAttribute(&domain, CU_DEVICE_ATTRIBUTE_PCI_DOMAIN_ID, d);
	cuDeviceGetAttribute(&bus, CU_DEVICE_ATTRIBUTE_PCI_BUS_ID, d);
	cuDeviceGetAttribute(&slot, CU_DEVICE_ATTRIBUTE_PCI_DEVICE_ID, d);
	tool_say("GPU id:%d; name: %s; Bus id: %04x:%02x:%02x\n", i, name, domain, bus, slot);
}

CUresult tool_cuda_try_init(struct tool_cuda *c, int dev_id, char *why, size_t len)
{
	int count = 0;
	CUresult r;

	memset(c, 0, sizeof(*c));
	if (tool_cuda_load(why, len))
		return CUDA_ERROR_NOT_FOUND;
	r = cuInit(0);
	if (r != CUDA_SUCCESS) {
		snprintf(why, len, "cuInit failed: %s", tool_cu_name(r));
		return r;
	}
	r = cuDeviceGetCount(&count);
	if (r != CUDA_SUCCESS || count == 0) {
		snprintf(why, len, "cuDeviceGetCount failed: %s",
			 r ? tool_cu_name(r) : "no CUDA device");
		return r ? r : CUDA_ERROR_NO_DEVICE;
	}
	if (dev_id < 0 || dev_id >= count) {
		snprintf(why, len, "GPU %d does not exist: %d device(s), ids 0 to %d", dev_id, count,
			 count - 1);
		return CUDA_ERROR_INVALID_DEVICE;
	}
	c->dev_id = dev_id;
	r = cuDeviceGet(&c->dev, dev_id);
	if (r == CUDA_SUCCESS)
		r = cuDevicePrimaryCtxRetain(&c->ctx, c->dev);
	if (r != CUDA_SUCCESS) {
		snprintf(why, len, "cuDevicePrimaryCtxRetain failed: %s", tool_cu_name(r));
		return r;
	}
	r = cuCtxSetCurrent(c->ctx);
	if (r != CUDA_SUCCESS) {
		cuDevicePrimaryCtxRelease(c->dev);
		c->ctx = NULL;
		snprintf(why, len, "cuCtxSetCurrent failed: %s", tool_cu_name(r));
	}
	return r;
}

void tool_cuda_init(struct tool_cuda *c, int dev_id)
{
	char why[256];

	if (tool_cuda_try_init(c, dev_id, why, sizeof(why)) != CUDA_SUCCESS)
		tool_die("%s", why);
}

void tool_print_devices(const struct tool_cuda *c)
{
	int count = 0;

	cuDeviceGetCount(&count);
	for (int i = 0; i < count; i++)
		list_device(i);
	tool_say("selecting device %d\n", c->dev_id);
}

void tool_cuda_fini(struct tool_cuda *c)
{
	if (!c->ctx)
		return;
	cuCtxSetCurrent(NULL);
	cuDevicePrimaryCtxRelease(c->dev);
	c->ctx = NULL;
}
