/* SPDX-License-Identifier: MIT */
#include <errno.h>
#include <limits.h>
#include <linux/futex.h>
#include <pthread.h>
#include <stdbool.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#include "fork.h"
#include "fork_fds.h"
#include "log.h"

/* How long fork() waits for exports under way before it goes on without them (fork.h). */
#define HOLD_OFF_MAX_NS 1000000000L

_Atomic unsigned long gdr_fork_epoch_now;

static pthread_once_t fork_once = PTHREAD_ONCE_INIT;

/*
 * The hold-off's two futex words, each waited on by the other side. exporting: threads between
 * gdr_fork_hold_off and gdr_fork_allow. forking: fork() calls between their prepare handler and
 * their parent's or child's. Several threads' forks may be there at once: glibc 2.36 and later
 * run each fork handler outside their lock, so one thread's fork can copy the process while
 * another's is between its handlers.
 */
static _Atomic int exporting;
static _Atomic int forking;
/*
 * A fork's wait ran out and no parent handler has said so yet. Shared by the forks under way:
 * whichever returns first in the parent warns.
 */
static _Atomic bool hold_off_timed_out;
static pthread_once_t hold_off_once = PTHREAD_ONCE_INIT;

/* The child runs alone here, before fork() returns in it. */
static void fork_child(void)
{
	int saved = errno;	/* the child's fork() returns as if nothing ran */

	atomic_fetch_add_explicit(&gdr_fork_epoch_now, 1, memory_order_relaxed);
	gdr_fork_fds_close_in_child();
	errno = saved;
}

static void fork_register(void)
{
	pthread_atfork(NULL, NULL, fork_child);
}

void gdr_fork_init(void)
{
	pthread_once(&fork_once, fork_register);
}

static void futex_wait(_Atomic int *word, int val, const struct timespec *timeout)
{
	syscall(SYS_futex, word, FUTEX_WAIT_PRIVATE, val, timeout, NULL, 0);
}

static void futex_wake_all(_Atomic int *word)
{
	syscall(SYS_futex, word, FUTEX_WAKE_PRIVATE, INT_MAX, NULL, NULL, 0);
}

/* Time left until end, false when none is. */
static bool time_left(const struct timespec *end, struct timespec *left)
{
	struct timespec now;

	clock_gettime(CLOCK_MONOTONIC, &now);
	left->tv_sec = end->tv_sec - now.tv_sec;
	left->tv_nsec = end->tv_nsec - now.tv_nsec;
	if (left->tv_nsec < 0) {
		left->tv_nsec += 1000000000L;
		left->tv_sec--;
	}
	return left->tv_sec >= 0;
}

/*
 * Announce the fork, then wait for the exports under way; a thread that starts one now sees the
 * announcement and waits for the fork instead (each side stores to its word, then loads the
 * other's, both seq_cst: one of the two sees the other).
 */
static void hold_off_prepare(void)
{
	int saved = errno, n;
	struct timespec end, left;

	atomic_fetch_add(&forking, 1);
	clock_gettime(CLOCK_MONOTONIC, &end);
	end.tv_nsec += HOLD_OFF_MAX_NS;
	end.tv_sec += end.tv_nsec / 1000000000L;
	end.tv_nsec %= 1000000000L;
	while ((n = atomic_load(&exporting)) > 0) {
		if (!time_left(&end, &left)) {
			atomic_store(&hold_off_timed_out, true);
			break;
		}
		futex_wait(&exporting, n, &left);
	}
	errno = saved;
}

static void hold_off_parent(void)
{
	int saved = errno, n = atomic_load(&forking);

	/* Stops at 0: a fork from a fork handler leaves 0 in its child, where the outer goes on. */
	do {
		if (n <= 0)
			break;
	} while (!atomic_compare_exchange_weak(&forking, &n, n - 1));
	if (n == 1)
		futex_wake_all(&forking);
	if (atomic_exchange(&hold_off_timed_out, false))
		gdr_warn("fork() waited 1 s for a CUDA export or GPU mapping under way, and went "
			 "on: the child may hold that descriptor or mapping");
	errno = saved;
}

/*
 * Only this thread is left, and no fork is under way: the counts may hold threads that were
 * between their increment and their decrement when fork() copied the process (exporting, or
 * forking in another thread's fork), and none of them is here to decrement. A fork from a fork
 * handler on this thread goes on in this child and ends in hold_off_parent, which stops at 0.
 */
static void hold_off_child(void)
{
	atomic_store(&exporting, 0);
	atomic_store(&forking, 0);
	atomic_store(&hold_off_timed_out, false);
}

static void hold_off_register(void)
{
	pthread_atfork(hold_off_prepare, hold_off_parent, hold_off_child);
}

void gdr_fork_hold_off(void)
{
	int f;

	pthread_once(&hold_off_once, hold_off_register);
	for (;;) {
		atomic_fetch_add(&exporting, 1);
		f = atomic_load(&forking);
		if (!f)
			return;
		gdr_fork_allow();
		futex_wait(&forking, f, NULL);
	}
}

/* Stops at 0: a child forked from inside does not count its own thread (above). */
void gdr_fork_allow(void)
{
	int n = atomic_load(&exporting);

	do {
		if (n <= 0)
			return;
	} while (!atomic_compare_exchange_weak(&exporting, &n, n - 1));
	if (n == 1 && atomic_load(&forking))
		futex_wake_all(&exporting);
}
