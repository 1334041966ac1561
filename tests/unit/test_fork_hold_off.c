/* SPDX-License-Identifier: MIT */
/*
 * fork()'s hold-off (src/fork.h) when two threads fork at once. glibc 2.36 and later run the
 * prepare handlers of several threads' forks side by side (each handler outside glibc's
 * fork-handler lock), so one thread's fork can copy the process while another thread's fork is
 * between its prepare and parent handlers. The child has only the thread that forked it, and
 * no fork is under way there: its first export or mapping must go ahead at once, not wait for
 * the other thread's fork, whose end it will never see. The parent's must go ahead too, once
 * both forks have returned.
 *
 * The slow fork is held, in a prepare handler that runs after the library's, until the other
 * fork has returned. A libc that runs one fork's handlers at a time makes the other fork wait
 * for the slow one instead: the hold gives up after HOLD_MS and the program skips.
 */
#include <pthread.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "fork.h"
#include "harness.h"

/* Longer than the child is given (a child that waits for ever is killed after 2 s). */
#define HOLD_MS 5000

static __thread bool slow_forker;
static atomic_bool slow_in_prepare, other_forked, hold_gave_up;

static void sleep_ms(long ms)
{
	struct timespec t = { .tv_sec = ms / 1000, .tv_nsec = ms % 1000 * 1000000L };

	nanosleep(&t, NULL);
}

/* Registered before the library's handlers, so it runs after their prepare (newest first). */
static void hold_slow_fork(void)
{
	int waited = 0;

	if (!slow_forker)
		return;
	atomic_store(&slow_in_prepare, true);
	while (!atomic_load(&other_forked) && waited < HOLD_MS) {
		sleep_ms(1);
		waited++;
	}
	atomic_store(&hold_gave_up, !atomic_load(&other_forked));
}

static void *fork_slowly(void *arg)
{
	pid_t pid;

	slow_forker = true;
	pid = fork();
	if (pid == 0)
		_exit(0);
	if (pid > 0)
		waitpid(pid, NULL, 0);
	return arg;
}

/* The first export or mapping of the child, as a backend brackets it. */
static int child_exports(void *arg)
{
	(void)arg;
	gdr_fork_hold_off();
	gdr_fork_allow();
	return TEST_PASS;
}

int main(void)
{
	const struct test_child child = { .timeout_s = 2, .quick_exit = true };
	pthread_t slow;
	int status;

	pthread_atfork(hold_slow_fork, NULL, NULL);
	/* The library's fork handlers, newer than the one above. */
	gdr_fork_init();
	gdr_fork_hold_off();
	gdr_fork_allow();

	CHECK(!pthread_create(&slow, NULL, fork_slowly, NULL), "pthread_create failed");
	while (!atomic_load(&slow_in_prepare))
		sleep_ms(1);
	status = test_child_run(&child, child_exports, NULL);
	atomic_store(&other_forked, true);
	pthread_join(slow, NULL);
	if (atomic_load(&hold_gave_up)) {
		test_report("skip", "fork_beside_fork", "this libc runs one fork's handlers at a "
			    "time");
		return TEST_SKIP;
	}
	EXPECT(status == TEST_PASS, "a child forked while another thread's fork was under way: "
	       "%s", test_reason());
	/* Both forks have returned: the parent's exports go ahead too (or this hangs). */
	child_exports(NULL);
	return test_status();
}
