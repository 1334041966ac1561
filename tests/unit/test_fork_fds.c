/* SPDX-License-Identifier: MIT */
/*
 * The descriptors the library holds, closed in fork children (src/fork_fds.h): a child made by
 * fork() has none of the registered ones, and every other descriptor as it was; the parent keeps
 * all of them; a descriptor dropped from the registry stays open in children; a number whose
 * file changed behind the registry (closed and reused while fork() copied the process) is left
 * alone. More descriptors than one block of slots holds, so that blocks are added and searched.
 * Then threads register and drop descriptors while the main thread forks: every registration
 * gets a slot of its own, and no child loses a descriptor the library never held.
 */
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <stdatomic.h>
#include <unistd.h>

#include "fork.h"
#include "fork_fds.h"
#include "harness.h"

#define HELD 150	/* more than the 64 slots of a block */
#define THREADS 4
#define ROUNDS 400	/* per thread: open, register, drop, close */
#define AT_ONCE 8	/* descriptors a thread holds at once */
#define FORKS 40

struct fds {
	int held[HELD];		/* registered: gone in the child */
	int dropped;		/* registered, then dropped: open in the child */
	int plain;		/* never registered: open in the child */
	int reused;		/* registered, then its number given to another file: open there */
};

static bool is_open(int fd)
{
	return fcntl(fd, F_GETFD) >= 0 || errno != EBADF;
}

/* One end of a fresh pipe (each pipe a file of its own), the other closed; -1 on failure. */
static int new_file(void)
{
	int p[2];

	if (pipe(p))
		return -1;
	close(p[1]);
	return p[0];
}

static int child_sees(void *arg)
{
	const struct fds *f = arg;
	int i, left = 0;

	for (i = 0; i < HELD; i++)
		left += is_open(f->held[i]);
	CHECK(!left, "%d of %d registered descriptors are open in the fork child", left, HELD);
	CHECK(is_open(f->dropped), "a descriptor dropped from the registry was closed in the child");
	CHECK(is_open(f->plain), "a descriptor never registered was closed in the child");
	CHECK(is_open(f->reused), "descriptor %d, registered for another file, was closed in the "
	      "child", f->reused);
	return TEST_PASS;
}

static int child_keeps(void *arg)
{
	const struct fds *f = arg;
	int i, gone = 0;

	for (i = 0; i < HELD; i++)
		gone += !is_open(f->held[i]);
	CHECK(!gone, "%d descriptors dropped from the registry were closed in the fork child",
	      gone);
	return TEST_PASS;
}

static atomic_bool stop;
static atomic_int shared_slots;	/* registrations that got a slot another held */

/* Register and drop descriptors in rounds, AT_ONCE at a time; a slot must never be shared. */
static void *churn(void *arg)
{
	static struct gdr_fork_fd *_Atomic owner_of[THREADS * AT_ONCE];
	long id = (long)arg;
	struct gdr_fork_fd *slot[AT_ONCE];
	int fd[AT_ONCE], r, i, j;

	for (r = 0; r < ROUNDS && !atomic_load(&stop); r++) {
		for (i = 0; i < AT_ONCE; i++) {
			fd[i] = new_file();
			slot[i] = fd[i] >= 0 ? gdr_fork_fd_hold(fd[i]) : NULL;
			atomic_store(&owner_of[id * AT_ONCE + i], slot[i]);
		}
		for (i = 0; i < AT_ONCE; i++)
			for (j = 0; j < THREADS * AT_ONCE; j++)
				if (!slot[i] || (j != id * AT_ONCE + i &&
						 atomic_load(&owner_of[j]) == slot[i]))
					atomic_fetch_add(&shared_slots, 1);
		for (i = 0; i < AT_ONCE; i++) {
			atomic_store(&owner_of[id * AT_ONCE + i], NULL);
			gdr_fork_fd_drop(slot[i]);
			if (fd[i] >= 0)
				close(fd[i]);
		}
	}
	return NULL;
}

/* In a child forked amid the churn: the descriptors opened before it are all there. */
static int child_keeps_plain(void *arg)
{
	const int *plain = arg;

	for (int i = 0; i < 4; i++)
		CHECK(is_open(plain[i]), "descriptor %d, never registered, was closed in a child "
		      "forked while other threads registered and dropped descriptors", plain[i]);
	return TEST_PASS;
}

static void fork_amid_churn(void)
{
	/*
	 * _exit: LeakSanitizer's check at exit locks its allocator, which a thread of the parent
	 * (starting, ending or allocating when fork() copied the process) may have held: the child
	 * then waits for ever (5-6% of runs of the sanitizer build hung so).
	 */
	const struct test_child child = { .timeout_s = 30, .quick_exit = true };
	pthread_t t[THREADS];
	int plain[4], i, started = 0;

	for (i = 0; i < 4; i++)
		plain[i] = new_file();
	for (i = 0; i < THREADS; i++)
		started += !pthread_create(&t[i], NULL, churn, (void *)(long)i);
	EXPECT(started == THREADS, "pthread_create failed");
	for (i = 0; i < FORKS; i++)
		EXPECT(test_child_run(&child, child_keeps_plain, plain) == TEST_PASS, "%s",
		       test_reason());
	atomic_store(&stop, true);
	for (i = 0; i < started; i++)
		pthread_join(t[i], NULL);
	EXPECT(!atomic_load(&shared_slots), "%d registrations got no slot or one already held",
	       atomic_load(&shared_slots));
	for (i = 0; i < 4; i++)
		close(plain[i]);
}

int main(void)
{
	const struct test_child child = { .timeout_s = 30 };
	struct gdr_fork_fd *slot[HELD], *dropped, *stale;
	struct fds f;
	int i, open_in_parent = 0;

	gdr_fork_init();
	for (i = 0; i < HELD; i++) {
		f.held[i] = new_file();
		CHECK(f.held[i] >= 0, "pipe: %s", test_strerror(errno));
		slot[i] = gdr_fork_fd_hold(f.held[i]);
		CHECK(slot[i], "gdr_fork_fd_hold(%d) failed", f.held[i]);
	}
	f.dropped = new_file();
	f.plain = new_file();
	CHECK(f.dropped >= 0 && f.plain >= 0, "pipe: %s", test_strerror(errno));
	dropped = gdr_fork_fd_hold(f.dropped);
	CHECK(dropped, "gdr_fork_fd_hold(%d) failed", f.dropped);
	gdr_fork_fd_drop(dropped);
	/* Closed while still registered, and its number taken by another file. */
	f.reused = new_file();
	CHECK(f.reused >= 0, "pipe: %s", test_strerror(errno));
	stale = gdr_fork_fd_hold(f.reused);
	CHECK(stale, "gdr_fork_fd_hold(%d) failed", f.reused);
	close(f.reused);
	CHECK(new_file() == f.reused, "the lowest free number was not reused");

	EXPECT(test_child_run(&child, child_sees, &f) == TEST_PASS, "%s", test_reason());
	for (i = 0; i < HELD; i++)
		open_in_parent += is_open(f.held[i]);
	EXPECT(open_in_parent == HELD, "the fork closed %d of the parent's registered descriptors",
	       HELD - open_in_parent);

	/* Dropped, the same descriptors stay open in the next fork's child. */
	for (i = 0; i < HELD; i++)
		gdr_fork_fd_drop(slot[i]);
	gdr_fork_fd_drop(stale);
	EXPECT(test_child_run(&child, child_keeps, &f) == TEST_PASS, "%s", test_reason());
	for (i = 0; i < HELD; i++)
		close(f.held[i]);
	fork_amid_churn();
	return test_status();
}
