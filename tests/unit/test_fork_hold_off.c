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
 *
 * Then the other side: an export that starts while a fork is held there waits for that fork,
 * goes ahead once it has returned, and leaves no count behind that a later fork would wait on
 * (with logging on, such a fork warns that it waited 1 s).
 *
 * First, one fork at a time: a fork while another thread is inside an export waits for its end
 * and is woken by it, not by the 1 s bound; after a fork from inside an export (its own thread's,
 * as from a signal handler), the export's end in the child leaves the child's count at 0, so
 * that the next export there still holds a fork off; and a fork from a prepare handler leaves
 * no fork counted under way in its child, where the outer fork goes on and returns.
 */
#include <pthread.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>
#include <sys/types.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "fork.h"
#include "harness.h"

/* Longer than the child is given (a child that waits for ever is killed after 2 s). */
#define HOLD_MS 5000

/* How long export_slowly stays inside: ample for the fork it is for to start meanwhile. */
#define EXPORT_MS 50

static __thread bool slow_forker;
static atomic_bool slow_in_prepare, other_forked, hold_gave_up, exported;
static atomic_bool export_inside, export_done, fork_in_prepare;
static pid_t prepare_child;

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

/* Registered with hold_slow_fork: a fork, once, from inside a fork's prepare handlers. */
static void fork_from_prepare(void)
{
	if (atomic_exchange(&fork_in_prepare, false))
		prepare_child = fork();
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

static void *export_now(void *arg)
{
	gdr_fork_hold_off();
	gdr_fork_allow();
	atomic_store(&exported, true);
	return arg;
}

static int fork_and_wait(void *arg)
{
	pid_t pid = fork();

	(void)arg;
	if (pid == 0)
		_exit(0);
	return pid > 0 && waitpid(pid, NULL, 0) == pid ? TEST_PASS : TEST_FAIL;
}

static void *export_slowly(void *arg)
{
	gdr_fork_hold_off();
	atomic_store(&export_inside, true);
	sleep_ms(EXPORT_MS);
	atomic_store(&export_done, true);
	gdr_fork_allow();
	return arg;
}

/*
 * Fork while another thread is inside an export: the child must find the export done, and the
 * fork must not have given up waiting for it (which it would say). Whether the export's end woke
 * the fork or the bound did is a matter of time only (1 s), not checked here.
 */
static int fork_during_export(void *arg)
{
	pthread_t exporter;
	const char *err;
	pid_t pid;

	(void)arg;
	atomic_store(&export_inside, false);
	atomic_store(&export_done, false);
	CHECK(!pthread_create(&exporter, NULL, export_slowly, NULL), "pthread_create failed");
	while (!atomic_load(&export_inside))
		sleep_ms(1);
	test_capture_begin();
	pid = test_fork();
	if (pid == 0)
		_exit(atomic_load(&export_done) ? 0 : 1);
	err = test_capture_end();
	pthread_join(exporter, NULL);
	CHECK(pid > 0, "fork failed");
	EXPECT(test_wait(pid) == 0, "fork() copied the process while another thread was inside "
	       "an export: the child found it unfinished");
	EXPECT(!strstr(err, "fork() waited"), "fork() gave up waiting for an export that ended "
	       "after %d ms", EXPORT_MS);
	return test_status();
}

/* In the child of a fork from inside an export: the export ends, then another one comes. */
static int export_ends_here(void *arg)
{
	(void)arg;
	gdr_fork_allow();
	return fork_during_export(NULL);
}

/*
 * This thread forks from inside its own export, as a signal handler would: fork() waits out its
 * bound and says so. In the child the export then ends; the child's count must stay at 0 (it
 * was reset there), so that a fork during the child's next export still waits for it.
 */
static int export_ends_in_child(void *arg)
{
	const struct test_child child = { .timeout_s = 10, .quick_exit = true };
	const char *err;
	int status;

	(void)arg;
	gdr_fork_hold_off();
	test_capture_begin();
	status = test_child_run(&child, export_ends_here, NULL);
	err = test_capture_end();
	gdr_fork_allow();
	EXPECT(strstr(err, "fork() waited 1 s") != NULL, "a fork from inside its own thread's "
	       "export did not say that it waited out its bound: %s", err);
	EXPECT(status == TEST_PASS, "in the child of a fork from inside an export, after that "
	       "export ended there: %s", test_reason());
	return test_status();
}

/*
 * A fork from a prepare handler (of the outer fork, running after the library's): its child
 * goes on with the outer fork, whose parent handler then finds no fork counted under way
 * there, and must leave it so: the child's next export goes ahead (or waits for ever).
 */
static int fork_inside_fork(void *arg)
{
	pid_t self = getpid(), pid;

	(void)arg;
	atomic_store(&fork_in_prepare, true);
	prepare_child = -1;
	pid = test_fork();
	if (pid == 0)
		_exit(0);	/* the outer fork's child, of this process or of the inner child */
	if (getpid() != self) {
		/* The inner child, where the outer fork went on and has returned. */
		waitpid(pid, NULL, 0);
		gdr_fork_hold_off();
		gdr_fork_allow();
		_exit(0);
	}
	CHECK(pid > 0 && prepare_child > 0, "a fork from a prepare handler failed");
	EXPECT(test_wait(pid) == 0);
	EXPECT(test_wait(prepare_child) == 0, "the child of a fork from a prepare handler: its "
	       "export after the outer fork returned there did not go ahead");
	/* This process's forks have all returned: its exports go ahead too (or this hangs). */
	gdr_fork_hold_off();
	gdr_fork_allow();
	return test_status();
}

/* An export that starts during a fork; in a child process, whose failure is a hang. */
static int export_during_fork(void *arg)
{
	const struct test_child forker = { .timeout_s = 2, .quick_exit = true };
	pthread_t slow, exporter;
	const char *err;

	(void)arg;
	atomic_store(&slow_in_prepare, false);
	atomic_store(&other_forked, false);
	CHECK(!pthread_create(&slow, NULL, fork_slowly, NULL), "pthread_create failed");
	while (!atomic_load(&slow_in_prepare))
		sleep_ms(1);
	CHECK(!pthread_create(&exporter, NULL, export_now, NULL), "pthread_create failed");
	/* Ample for an export that does not wait to be done; one that waits is still held. */
	sleep_ms(50);
	EXPECT(!atomic_load(&exported), "an export went ahead while a fork was under way");
	atomic_store(&other_forked, true);
	pthread_join(slow, NULL);
	pthread_join(exporter, NULL);
	EXPECT(atomic_load(&exported));
	test_capture_begin();
	EXPECT(test_child_run(&forker, fork_and_wait, NULL) == TEST_PASS, "a later fork: %s",
	       test_reason());
	err = test_capture_end();
	EXPECT(!strstr(err, "fork() waited"), "a later fork waited for an export that had ended");
	return test_status();
}

int main(void)
{
	const struct test_child child = { .timeout_s = 2, .quick_exit = true };
	pthread_t slow;
	int status;

	/* Warnings to stderr, read once by the library at its first message. */
	setenv("GDRCOPY_ENABLE_LOGGING", "1", 1);
	setenv("GDRCOPY_LOG_LEVEL", "3", 1);
	pthread_atfork(hold_slow_fork, NULL, NULL);
	pthread_atfork(fork_from_prepare, NULL, NULL);
	/* The library's fork handlers, newer than the one above. */
	gdr_fork_init();
	gdr_fork_hold_off();
	gdr_fork_allow();

	EXPECT(test_child_run(&(struct test_child){ .timeout_s = 10, .quick_exit = true },
			      fork_during_export, NULL) == TEST_PASS,
	       "a fork during an export: %s", test_reason());
	EXPECT(test_child_run(&(struct test_child){ .timeout_s = 10, .quick_exit = true,
						    .isolate = true },
			      export_ends_in_child, NULL) == TEST_PASS,
	       "an export that ends in a fork child: %s", test_reason());
	EXPECT(test_child_run(&(struct test_child){ .timeout_s = 10, .quick_exit = true,
						    .isolate = true },
			      fork_inside_fork, NULL) == TEST_PASS,
	       "a fork from a prepare handler: %s", test_reason());

	CHECK(!pthread_create(&slow, NULL, fork_slowly, NULL), "pthread_create failed");
	while (!atomic_load(&slow_in_prepare))
		sleep_ms(1);
	status = test_child_run(&child, child_exports, NULL);
	atomic_store(&other_forked, true);
	pthread_join(slow, NULL);
	if (atomic_load(&hold_gave_up)) {
		test_report("skip", "fork_beside_fork", "this libc runs one fork's handlers at a "
			    "time");
		return test_status() == TEST_PASS ? TEST_SKIP : test_status();
	}
	EXPECT(status == TEST_PASS, "a child forked while another thread's fork was under way: "
	       "%s", test_reason());
	/* Both forks have returned: the parent's exports go ahead too (or this hangs). */
	child_exports(NULL);
	{
		const struct test_child child2 = { .timeout_s = 10, .quick_exit = true };

		EXPECT(test_child_run(&child2, export_during_fork, NULL) == TEST_PASS,
		       "an export during a fork: %s", test_reason());
	}
	return test_status();
}
