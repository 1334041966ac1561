/* SPDX-License-Identifier: MIT */
/*
 * The handle table: values are unique and non-zero, retired values stay dead after their slot is
 * reused (also when its generations run out), random values never resolve, and many live handles
 * coexist.
 */
#include <errno.h>
#include <pthread.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "fake_gpu.h"
#include "gdrapi.h"
#include "gdrapi_ext.h"
#include "handle.h"
#include "harness.h"

#define LIVE 3000
#define INDEX_MASK 0xfffffUL

/*
 * One slot pinned and unpinned past the end of its generations (the knob starts them near it): no
 * value is ever issued twice, the slot is retired rather than wrapped, and every stale value
 * stays dead, the slot's very first one included.
 */
static void test_generations_run_out(gdr_t g, uint8_t *gpu)
{
	enum { ROUNDS = 8 };
	gdr_mh_t first, seen[ROUNDS];
	gdr_info_t info;

	EXPECT_ERR(gdr_pin_buffer(g, (unsigned long)gpu, 65536, 0, 0, &first), 0);
	EXPECT_ERR(gdr_unpin_buffer(g, first), 0);
	/* 44 bits of generation; the slot has 3 left. */
	gdr_handle_test_generation_floor = (1ULL << 44) - 4;
	for (int i = 0; i < ROUNDS; i++) {
		EXPECT_ERR(gdr_pin_buffer(g, (unsigned long)gpu, 65536, 0, 0, &seen[i]), 0);
		EXPECT_ERR(gdr_unpin_buffer(g, seen[i]), 0);
		EXPECT(seen[i].h != first.h);
		/* A generation past the last would wrap to 0: a value any small integer forges. */
		EXPECT(seen[i].h >> 20 != 0, "round %d issued 0x%lx, of generation 0", i,
		       seen[i].h);
		for (int j = 0; j < i; j++)
			EXPECT(seen[i].h != seen[j].h);
	}
	/* The slot gave its last value and went out of use: later pins got other slots. */
	EXPECT((seen[0].h & INDEX_MASK) == (first.h & INDEX_MASK));
	EXPECT((seen[ROUNDS - 1].h & INDEX_MASK) != (first.h & INDEX_MASK));
	EXPECT_ERR(gdr_get_info(g, first, &info), EINVAL);
	for (int i = 0; i < ROUNDS; i++)
		EXPECT_ERR(gdr_get_info(g, seen[i], &info), EINVAL);
	gdr_handle_test_generation_floor = 0;
}

/*
 * A full table (the knob lowers its size from a million slots): the pin fails with ENOMEM, as
 * GDRCopy's does when out of memory, and the reason says that the pins, not memory, ran out and
 * what to do; no pin gets a slot past the limit (the table has used one slot when this runs);
 * a pin the backend refuses gives its slot back; unpinning makes room again.
 */
static void test_table_full(gdr_t g, uint8_t *gpu)
{
	enum { MAX_TRIES = 64 };
	gdr_mh_t pins[MAX_TRIES];
	char why[GDR_EXT_ERRORS_MAX];
	int n = 0, ret = 0;

	gdr_ext_take_errors(NULL, 0);
	gdr_handle_test_max_slots = 1;
	while (n < MAX_TRIES && !(ret = gdr_pin_buffer(g, (unsigned long)gpu, 65536, 0, 0, &pins[n])))
		n++;
	EXPECT(ret == ENOMEM);
	gdr_ext_take_errors(why, sizeof(why));
	EXPECT(strstr(why, "gdr_pin_buffer") && strstr(why, "pins") && strstr(why, "unpin"));
	EXPECT(n > 0);
	for (int i = 0; i < n; i++)
		EXPECT((pins[i].h & INDEX_MASK) <= gdr_handle_test_max_slots,
		       "pin %d took slot position %lu, past the limit of %u", i,
		       pins[i].h & INDEX_MASK, gdr_handle_test_max_slots);
	if (n) {
		gdr_mh_t refused;

		EXPECT_ERR(gdr_unpin_buffer(g, pins[--n]), 0);
		/* The test backend refuses the flag after the slot is taken: it comes back. */
		for (int i = 0; i < 3; i++)
			EXPECT_ERR(gdr_pin_buffer_v2(g, (unsigned long)gpu, 65536,
						     GDR_PIN_FLAG_FORCE_PCIE, &refused), EINVAL);
		ret = gdr_pin_buffer(g, (unsigned long)gpu, 65536, 0, 0, &pins[n]);
		EXPECT_ERR(ret, 0);
		n += !ret;
	}
	while (n > 0)
		EXPECT_ERR(gdr_unpin_buffer(g, pins[--n]), 0);
	gdr_handle_test_max_slots = 0;
}

/*
 * The table out of memory as it grows (the knob fails its next chunk): the pin fails with ENOMEM,
 * says which memory ran out, and holds nothing; once memory is back, the table grows.
 */
static void test_table_no_memory(gdr_t g, uint8_t *gpu)
{
	enum { MAX_TRIES = 2 * GDR_HANDLE_SLOTS_PER_CHUNK };
	static gdr_mh_t pins[MAX_TRIES];
	char why[GDR_EXT_ERRORS_MAX];
	int n = 0, ret = 0;

	gdr_ext_take_errors(NULL, 0);
	gdr_handle_test_no_memory = true;
	while (n < MAX_TRIES && !(ret = gdr_pin_buffer(g, (unsigned long)gpu, 65536, 0, 0, &pins[n])))
		n++;
	gdr_handle_test_no_memory = false;
	EXPECT(ret == ENOMEM, "the pin past the first chunk gave %d", ret);
	EXPECT(n > 0 && n < MAX_TRIES);
	gdr_ext_take_errors(why, sizeof(why));
	EXPECT(strstr(why, "gdr_pin_buffer: out of memory") && strstr(why, "handle table"),
	       "the reason: %s", why);
	ret = gdr_pin_buffer(g, (unsigned long)gpu, 65536, 0, 0, &pins[n]);
	EXPECT_ERR(ret, 0);
	n += !ret;
	while (n > 0)
		EXPECT_ERR(gdr_unpin_buffer(g, pins[--n]), 0);
}

static void fork_in_handler(int sig)
{
	pid_t pid = fork();

	(void)sig;
	if (pid == 0)
		_exit(0);
	if (pid > 0)
		waitpid(pid, NULL, 0);
}

static void raise_fork_signal(void)
{
	raise(SIGUSR1);
}

static int register_amid_signal_fork(void *arg)
{
	struct gdr_memh mh = { 0 };

	(void)arg;
	signal(SIGUSR1, fork_in_handler);
	gdr_handle_test_locked = raise_fork_signal;
	CHECK_ERR(gdr_handle_register(&mh), 0);
	gdr_handle_test_locked = NULL;
	gdr_handle_unregister(&mh);
	return TEST_PASS;
}

/*
 * A signal handler forks while its thread holds the table's lock (POSIX lists fork as
 * async-signal-safe, and the library's other fork handlers allow for it: fork.h). The table's
 * prepare handler takes that lock: the fork must not wait for its own thread. In a child
 * process, whose failure is a hang.
 */
static void test_signal_fork_while_locked(void)
{
	const struct test_child child = { .timeout_s = 2, .quick_exit = true };

	EXPECT(test_child_run(&child, register_amid_signal_fork, NULL) == TEST_PASS,
	       "a fork from a signal handler while the handle table was locked: %s", test_reason());
}

/* Set while a fork's prepare handler (registered first, so run last) is to raise SIGUSR1. */
static volatile sig_atomic_t raise_in_prepare;

static void prepare_raising(void)
{
	if (raise_in_prepare) {
		raise_in_prepare = 0;
		raise(SIGUSR1);
	}
}

static int fork_raising_in_prepare(void *arg)
{
	pid_t pid;

	(void)arg;
	signal(SIGUSR1, fork_in_handler);
	raise_in_prepare = 1;
	pid = fork();
	if (pid == 0)
		_exit(0);
	CHECK(pid > 0, "fork: %s", strerror(errno));
	waitpid(pid, NULL, 0);
	return TEST_PASS;
}

/*
 * A signal arrives during a fork, after the table's prepare handler took its lock (raised by a
 * prepare handler registered before the library's, which runs after it), and its handler forks:
 * the lock is held with signals blocked, so the handler runs once the fork has let go of it, and
 * its fork goes through. (Before, it waited for its own thread: a hang.)
 */
static void test_signal_in_fork_prepare(void)
{
	const struct test_child child = { .timeout_s = 2, .quick_exit = true };

	EXPECT(test_child_run(&child, fork_raising_in_prepare, NULL) == TEST_PASS,
	       "a fork from a signal handler during a fork: %s", test_reason());
}

int main(void)
{
	static gdr_mh_t live[LIVE];
	gdr_mh_t first, reused;
	gdr_info_t info;
	uint8_t *gpu;
	gdr_t g;

	/* Before any of the library's: prepare handlers run newest first. */
	pthread_atfork(prepare_raising, NULL, NULL);
	setenv("GDRCOPY_BACKEND", "test", 1);
	gpu = fake_gpu_alloc(65536);
	g = gdr_open();
	if (!gpu || !g) {
		fprintf(stderr, "setup failed\n");
		return TEST_FAIL;
	}

	/* A retired handle stays dead even when its slot is taken again. */
	EXPECT_ERR(gdr_pin_buffer(g, (unsigned long)gpu, 65536, 0, 0, &first), 0);
	EXPECT_ERR(gdr_unpin_buffer(g, first), 0);
	EXPECT_ERR(gdr_pin_buffer(g, (unsigned long)gpu, 65536, 0, 0, &reused), 0);
	EXPECT(reused.h != first.h);
	EXPECT(reused.h != 0);
	EXPECT_ERR(gdr_get_info(g, first, &info), EINVAL);
	EXPECT_ERR(gdr_get_info(g, reused, &info), 0);
	EXPECT_ERR(gdr_unpin_buffer(g, reused), 0);

	test_table_full(g, gpu);
	test_generations_run_out(g, gpu);
	/* Before the many live handles below have grown the table. */
	test_table_no_memory(g, gpu);
	test_signal_fork_while_locked();
	test_signal_in_fork_prepare();

	/* Many live handles: all distinct, all resolvable. */
	for (int i = 0; i < LIVE; i++)
		EXPECT_ERR(gdr_pin_buffer(g, (unsigned long)gpu, 65536, 0, 0, &live[i]), 0);
	for (int i = 1; i < LIVE; i++)
		EXPECT(live[i].h != live[i - 1].h);
	for (int i = 0; i < LIVE; i++)
		EXPECT_ERR(gdr_get_info(g, live[i], &info), 0);

	/* Random values resolve to nothing (and never crash). */
	srand(12345);
	for (int i = 0; i < 100000; i++) {
		gdr_mh_t h = { ((unsigned long)rand() << 33) ^ ((unsigned long)rand() << 11) ^
			       (unsigned long)rand() };
		int live_hit = 0;

		for (int j = 0; j < 4 && !live_hit; j++)
			live_hit = h.h == live[j].h;
		if (!live_hit)
			EXPECT(gdr_get_info(g, h, &info) == EINVAL);
		EXPECT(gdr_copy_to_mapping(h, gpu, &info, 1) == EINVAL);
	}
	for (int i = 0; i < LIVE; i += 2)
		EXPECT_ERR(gdr_unpin_buffer(g, live[i]), 0);
	for (int i = 0; i < LIVE; i += 2)
		EXPECT_ERR(gdr_get_info(g, live[i], &info), EINVAL);
	EXPECT_ERR(gdr_close(g), 0);
	for (int i = 1; i < LIVE; i += 2)
		EXPECT(gdr_copy_to_mapping(live[i], gpu, &info, 1) == EINVAL);
	EXPECT(fake_backend_pins == 0);
	fake_gpu_free(gpu);
	return test_status();
}
