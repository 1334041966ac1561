/* SPDX-License-Identifier: MIT */
/*
 * Load the library the way each known client does (reference section 10) and resolve exactly the
 * symbols it needs, then make the calls each makes right after loading. Each client is a case.
 */
#include <dlfcn.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "gdrapi.h"
#include "harness.h"

struct client {
	const char *name;
	const char *libs[3];		/* tried in order, as the client does */
	int mode;
	const char *syms[16];
};

static const struct client clients[] = {
	{ "libfabric", { "libgdrapi.so", "libgdrapi.so.2" }, RTLD_NOW,
	  { "gdr_open", "gdr_close", "gdr_pin_buffer", "gdr_unpin_buffer", "gdr_map",
	    "gdr_unmap", "gdr_copy_to_mapping", "gdr_copy_from_mapping" } },
	{ "nvshmem", { "libgdrapi.so.2" }, RTLD_LAZY,
	  { "gdr_runtime_get_version", "gdr_driver_get_version", "gdr_open", "gdr_close",
	    "gdr_pin_buffer", "gdr_unpin_buffer", "gdr_map", "gdr_unmap", "gdr_get_info",
	    "gdr_copy_from_mapping", "gdr_copy_to_mapping" } },
	{ "dpdk", { "libgdrapi.so" }, RTLD_LAZY,
	  { "gdr_open", "gdr_pin_buffer", "gdr_unpin_buffer", "gdr_map", "gdr_unmap" } },
	{ "nccl", { "libgdrapi.so" }, RTLD_NOW,
	  { "gdr_open", "gdr_close", "gdr_pin_buffer", "gdr_unpin_buffer", "gdr_get_info",
	    "gdr_map", "gdr_unmap", "gdr_runtime_get_version", "gdr_driver_get_version",
	    "gdr_copy_to_mapping", "gdr_copy_from_mapping", "gdr_pin_buffer_v2" } },
	{ "doca-gpunetio", { "libgdrapi.so.2" }, RTLD_NOW,
	  { "gdr_open", "gdr_close", "gdr_pin_buffer", "gdr_unpin_buffer", "gdr_map",
	    "gdr_unmap", "gdr_copy_from_mapping", "gdr_copy_to_mapping",
	    "gdr_runtime_get_version", "gdr_driver_get_version" } },
	/* UCX, aws-ofi-nccl and mscclpp link directly: the symbols they bind at link time. */
	{ "linked-ucx-aws-ofi-nccl-mscclpp", { "libgdrapi.so.2" }, RTLD_NOW,
	  { "gdr_open", "gdr_close", "gdr_pin_buffer", "gdr_pin_buffer_v2", "gdr_unpin_buffer",
	    "gdr_map", "gdr_unmap", "gdr_get_info_v2", "gdr_runtime_get_version",
	    "gdr_copy_to_mapping", "gdr_copy_from_mapping" } },
};

/* A TEST_* status; *opened is the name that dlopen took. */
static int run_client(const struct client *c, const char **opened)
{
	typedef void (*runtime_version_fn)(int *, int *);
	typedef int (*driver_version_fn)(gdr_t, int *, int *);
	runtime_version_fn rv;
	driver_version_fn dv;
	int major = 0, minor = 0, ret = TEST_PASS;
	void *lib = NULL;

	for (int i = 0; i < 3 && c->libs[i] && !lib; i++) {
		lib = dlopen(c->libs[i], c->mode);
		*opened = c->libs[i];
	}
	if (!lib)
		return test_fail("dlopen failed: %s", dlerror());
	for (int i = 0; i < 16 && c->syms[i]; i++) {
		if (!dlsym(lib, c->syms[i])) {
			ret = test_fail("%s: no symbol %s", *opened, c->syms[i]);
			goto out_close;
		}
	}
	rv = (runtime_version_fn)dlsym(lib, "gdr_runtime_get_version");
	dv = (driver_version_fn)dlsym(lib, "gdr_driver_get_version");
	rv(&major, &minor);
	/* NVSHMEM: same major, minor >= its header's; NCCL: >= 2.1, v2 pins from 2.5; UCX: >= 2.4. */
	if (major != 2 || minor < 6) {
		ret = test_fail("runtime version %d.%d, clients need 2.x with x >= 6", major, minor);
		goto out_close;
	}
	/* NCCL and NVSHMEM call this right after gdr_open; it must answer, never abort. */
	if (dv(NULL, &major, &minor) != EINVAL)
		ret = test_fail("gdr_driver_get_version(NULL) did not return EINVAL");
out_close:
	dlclose(lib);
	return ret;
}

int main(void)
{
	for (size_t i = 0; i < sizeof(clients) / sizeof(clients[0]); i++) {
		const char *opened = NULL;
		char name[64];
		size_t j;

		/* Result names are one word. */
		j = (size_t)snprintf(name, sizeof(name), "client_");
		for (const char *c = clients[i].name; *c && j < sizeof(name) - 1; c++)
			name[j++] = (*c == ' ' || *c == '(' || *c == ')') ? '_' : *c;
		name[j] = '\0';
		if (run_client(&clients[i], &opened))
			test_report("fail", name, "%s", test_reason());
		else
			test_report("pass", name, "via %s", opened);
	}
	return test_status();
}
