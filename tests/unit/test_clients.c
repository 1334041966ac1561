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

#include "check.h"
#include "gdrapi.h"

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

static void report(const char *verdict, const char *name, const char *detail)
{
	const char *path = getenv("GDR_TEST_RESULTS");
	FILE *f = path ? fopen(path, "a") : NULL;
	char id[64];
	size_t j = 0;

	/* Result names are one word. */
	for (const char *c = name; *c && j < sizeof(id) - 1; c++)
		id[j++] = (*c == ' ' || *c == '(' || *c == ')') ? '_' : *c;
	id[j] = '\0';
	printf("%s %s %s\n", verdict, id, detail);
	if (f) {
		fprintf(f, "%s client_%s %s\n", verdict, id, detail);
		fclose(f);
	}
}

static int run_client(const struct client *c, char *why, size_t len)
{
	typedef void (*runtime_version_fn)(int *, int *);
	typedef int (*driver_version_fn)(gdr_t, int *, int *);
	void *lib = NULL;
	const char *opened = NULL;

	for (int i = 0; i < 3 && c->libs[i] && !lib; i++) {
		lib = dlopen(c->libs[i], c->mode);
		opened = c->libs[i];
	}
	if (!lib) {
		snprintf(why, len, "dlopen failed: %s", dlerror());
		return 1;
	}
	for (int i = 0; i < 16 && c->syms[i]; i++) {
		if (!dlsym(lib, c->syms[i])) {
			snprintf(why, len, "%s: no symbol %s", opened, c->syms[i]);
			dlclose(lib);
			return 1;
		}
	}
	{
		runtime_version_fn rv = (runtime_version_fn)dlsym(lib, "gdr_runtime_get_version");
		driver_version_fn dv = (driver_version_fn)dlsym(lib, "gdr_driver_get_version");
		int major = 0, minor = 0;

		rv(&major, &minor);
		/* NVSHMEM: same major, minor >= its header's; NCCL: >= 2.1, v2 pins from 2.5; UCX: >= 2.4. */
		if (major != 2 || minor < 6) {
			snprintf(why, len, "runtime version %d.%d, clients need 2.x with x >= 6", major,
				 minor);
			dlclose(lib);
			return 1;
		}
		/* NCCL and NVSHMEM call this right after gdr_open; it must answer, never abort. */
		if (dv(NULL, &major, &minor) != EINVAL) {
			snprintf(why, len, "gdr_driver_get_version(NULL) did not return EINVAL");
			dlclose(lib);
			return 1;
		}
	}
	snprintf(why, len, "via %s", opened);
	dlclose(lib);
	return 0;
}

int main(void)
{
	int failed = 0;

	for (size_t i = 0; i < sizeof(clients) / sizeof(clients[0]); i++) {
		char why[256];
		int ret = run_client(&clients[i], why, sizeof(why));

		report(ret ? "fail" : "pass", clients[i].name, why);
		failed |= ret;
	}
	return failed ? TEST_FAIL : TEST_PASS;
}
