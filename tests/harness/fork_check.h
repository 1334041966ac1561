/* SPDX-License-Identifier: MIT */
/*
 * What a fork child may do with its parent's gdr_t and handles, checked the same way on every
 * backend: the child puts memory of its own where the parent's mapping was (the mapping itself is
 * kept out of children), then every call on the inherited gdr_t and handle must fail with EINVAL
 * and touch nothing, gdr_close of the inherited gdr_t must return at once, and a gdr_open of its
 * own must work. The parent then checks that its pin and mapping are as they were.
 */
#ifndef GDR_TEST_FORK_CHECK_H
#define GDR_TEST_FORK_CHECK_H

#include <stddef.h>
#include <stdint.h>

#include "gdrapi.h"

struct fork_check {
	gdr_t g;			/* the parent's, with mh pinned and mapped */
	gdr_mh_t mh;
	void *map;			/* mh's mapping, map_size bytes */
	size_t map_size;
	unsigned long pin_addr;		/* a GPU address the child tries to pin through g */
	/* In the child: open, pin, map and copy through a gdr_t of its own; a TEST_* status. */
	int (*child_own)(void);
};

/*
 * TEST_PASS where the checks can run; TEST_SKIP, saying why, under an emulator (qemu-user, set
 * by tests/cross), which ignores MADV_DONTFORK and so lets children inherit the mappings. A
 * case calls it first, before it pins anything: CHECK_PASS(fork_check_possible()).
 */
int fork_check_possible(void);

/*
 * Fork, run the child's checks, wait for it (a child that hangs is killed after 30 s): a
 * TEST_* status, the child's reason recorded (harness.h). The parent's own checks are the
 * caller's.
 */
int fork_check_run(const struct fork_check *fc);

#endif
