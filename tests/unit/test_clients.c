/* SPDX-License-Identifier: MIT */
/*
 * Load the library the way each known client does (reference section 10) and resolve exactly the
 * symbols it needs, then make the calls each makes right after loading. Each client is a case.
 * Then a client that unloads the library while a thread that copied lives on: that thread's exit
 * must not call into the library, which is gone by then.
 */
#include <dlfcn.h>
#include <errno.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

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

typedef int (*copy_to_mapping_fn)(gdr_mh_t, void *, const void *, size_t);

static atomic_int copied, may_exit;

/*
 * A copy, on a handle that names nothing: refused, but the thread has announced it, so it now
 * holds an in-flight record and the library's thread-exit hook. Then wait, and exit.
 */
static void *copy_then_wait(void *arg)
{
	copy_to_mapping_fn copy = (copy_to_mapping_fn)(uintptr_t)arg;
	uint8_t src = 1, dst = 0;

	atomic_store(&copied, copy((gdr_mh_t){ 0 }, &dst, &src, 1) == EINVAL ? 1 : -1);
	while (!atomic_load(&may_exit))
		usleep(1000);
	return NULL;
}

static int unload_then_thread_exits(void *arg)
{
	gdr_t (*open_fn)(void);
	int (*close_fn)(gdr_t);
	copy_to_mapping_fn copy;
	pthread_t t;
	void *lib;
	gdr_t g;

	(void)arg;
	lib = dlopen("libgdrapi.so.2", RTLD_NOW | RTLD_LOCAL);
	CHECK(lib, "dlopen failed: %s", dlerror());
	open_fn = (gdr_t (*)(void))dlsym(lib, "gdr_open");
	close_fn = (int (*)(gdr_t))dlsym(lib, "gdr_close");
	copy = (copy_to_mapping_fn)dlsym(lib, "gdr_copy_to_mapping");
	CHECK(open_fn && close_fn && copy, "missing symbols");
	/* Whether a backend is found or not, the library is set up for copies. */
	g = open_fn();
	if (g)
		close_fn(g);
	CHECK(!pthread_create(&t, NULL, copy_then_wait, (void *)(uintptr_t)copy),
	      "pthread_create failed");
	while (!atomic_load(&copied))
		usleep(1000);
	CHECK(atomic_load(&copied) == 1, "a copy on a null handle did not return EINVAL");
	CHECK(!dlclose(lib), "dlclose: %s", dlerror());
	if (dlopen("libgdrapi.so.2", RTLD_NOW | RTLD_NOLOAD))
		return test_skip("the library stays loaded after dlclose: nothing to check");
	atomic_store(&may_exit, 1);
	/* A thread-exit hook left pointing into the unloaded library crashes the thread's exit. */
	pthread_join(t, NULL);
	return TEST_PASS;
}

int main(void)
{
	const struct test_child child = { .timeout_s = 30, .quick_exit = true };
	int ret;

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
	ret = test_child_run(&child, unload_then_thread_exits, NULL);
	if (ret == TEST_SKIP)
		test_report("skip", "unload_then_thread_exits", "%s", test_reason());
	else if (ret)
		test_report("fail", "unload_then_thread_exits", "%s", test_reason());
	else
		test_report("pass", "unload_then_thread_exits", NULL);
	return test_status();
}
