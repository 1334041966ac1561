/* SPDX-License-Identifier: MIT */
#include <errno.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>

#include "fork_check.h"
#include "harness.h"

#define CHILD_SECONDS 30
#define FILL 0x5a

/*
 * Memory of the child's own at addr, which must be free in the child: MAP_FIXED_NOREPLACE, and
 * where that is only a hint (an emulator: qemu-user), MAP_FIXED once msync says that nothing is
 * mapped there. MAP_FAILED, errno set, when something is.
 */
static void *map_own_at(void *addr, size_t size)
{
	const int prot = PROT_READ | PROT_WRITE, flags = MAP_PRIVATE | MAP_ANONYMOUS;
	void *p = mmap(addr, size, prot, flags | MAP_FIXED_NOREPLACE, -1, 0);

	if (p == MAP_FAILED || p == addr)
		return p;
	munmap(p, size);
	if (!msync(addr, size, MS_ASYNC) || errno != ENOMEM) {
		errno = EEXIST;
		return MAP_FAILED;
	}
	return mmap(addr, size, prot, flags | MAP_FIXED, -1, 0);
}

static bool untouched(const uint8_t *p, size_t n)
{
	for (size_t i = 0; i < n; i++)
		if (p[i] != FILL)
			return false;
	return true;
}

/* The child's side. */
static int child_checks(void *arg)
{
	const struct fork_check *fc = arg;
	uint8_t host[256], *own;
	gdr_info_t info;
	gdr_mh_t mh2 = { 0x77 };
	void *va = (void *)0x1;
	int v = 42, major = -1, minor = -1, flag = 42;

	/* The parent's mapping is not here: the child can put its own memory at that address. */
	own = map_own_at(fc->map, fc->map_size);
	CHECK(own != MAP_FAILED, "mmap at the parent's mapping address %p: %s (the mapping was "
	      "inherited?)", fc->map, strerror(errno));
	memset(own, FILL, fc->map_size);
	memset(host, FILL, sizeof(host));

	CHECK_ERR(gdr_get_info(fc->g, fc->mh, &info), EINVAL);
	CHECK_ERR(gdr_copy_to_mapping(fc->mh, own, "parent", 6), EINVAL);
	CHECK_ERR(gdr_copy_from_mapping(fc->mh, host, own, sizeof(host)), EINVAL);
	CHECK(untouched(own, fc->map_size) && untouched(host, sizeof(host)),
	      "a refused copy wrote into the child's memory");
	CHECK_ERR(gdr_unmap(fc->g, fc->mh, own, fc->map_size), EINVAL);
	CHECK(untouched(own, fc->map_size),
	      "gdr_unmap changed the child's memory at the parent's address");
	CHECK_ERR(gdr_map(fc->g, fc->mh, &va, fc->map_size), EINVAL);
	CHECK_ERR(gdr_get_callback_flag(fc->g, fc->mh, &flag), EINVAL);
	CHECK_ERR(gdr_pin_buffer_v2(fc->g, fc->pin_addr, 65536, 0, &mh2), EINVAL);
	CHECK_ERR(gdr_get_attribute(fc->g, GDR_ATTR_USE_PERSISTENT_MAPPING, &v), EINVAL);
	CHECK_ERR(gdr_driver_get_version(fc->g, &major, &minor), EINVAL);
	CHECK_ERR(gdr_unpin_buffer(fc->g, fc->mh), EINVAL);
	CHECK(va == (void *)0x1 && flag == 42 && mh2.h == 0x77 && v == 42 && major == -1 &&
	      minor == -1, "a refused call wrote its output");
	CHECK(!gdr_close(fc->g), "gdr_close of the inherited gdr_t failed");
	CHECK(untouched(own, fc->map_size),
	      "gdr_close changed the child's memory at the parent's address");
	munmap(own, fc->map_size);
	return fc->child_own ? fc->child_own() : TEST_PASS;
}

int fork_check_possible(void)
{
	const char *emulator = getenv("GDR_TEST_EMULATOR");

	if (emulator)
		return test_skip("%s ignores MADV_DONTFORK, so fork children inherit mappings: the "
				 "fork cases need a kernel", emulator);
	return TEST_PASS;
}

int fork_check_run(const struct fork_check *fc)
{
	/*
	 * quick_exit: exit would run the parent's atexit handlers in the child, and Mesa's joins
	 * threads that exist only in the parent (lavapipe crashes in pthread_join).
	 */
	const struct test_child child = { .timeout_s = CHILD_SECONDS, .quick_exit = true };

	return test_child_run(&child, child_checks, (void *)fc);
}
