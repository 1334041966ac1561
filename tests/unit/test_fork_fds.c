/* SPDX-License-Identifier: MIT */
/*
 * The descriptors the library holds, closed in fork children (src/fork_fds.h): a child made by
 * fork() has none of the registered ones, and every other descriptor as it was; the parent keeps
 * all of them; a descriptor dropped from the registry stays open in children; a number whose
 * file changed behind the registry (closed and reused while fork() copied the process) is left
 * alone. More descriptors than one block of slots holds, so that blocks are added and searched.
 * Then threads register and drop descriptors while the main thread forks: every registration
 * gets a slot of its own, and no child loses a descriptor the library never held. A child's
 * registry starts empty: the same file opened again there, under the number the parent's
 * library held, stays open in the child's own children. Last, fork() leaves errno as it was in
 * the child too, though the child's handler met a registered descriptor that had been closed.
 */
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdint.h>
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

static int grandchild_keeps(void *arg)
{
	int fd = (int)(intptr_t)arg;

	CHECK(is_open(fd), "descriptor %d, the child's own, was closed in the child's fork child: "
	      "the parent's registration of that number and file outlived the first fork", fd);
	return TEST_PASS;
}

/* The parent's library held fd, on /dev/null; the child opens /dev/null again as its own. */
static int child_reopens(void *arg)
{
	const struct test_child child = { .timeout_s = 30 };
	int fd = (int)(intptr_t)arg;

	CHECK(!is_open(fd), "the parent's registered descriptor %d is open in the child", fd);
	CHECK(open("/dev/null", O_RDONLY | O_CLOEXEC) == fd, "the lowest free number was not "
	      "reused");
	CHECK(test_child_run(&child, grandchild_keeps, (void *)(intptr_t)fd) == TEST_PASS, "%s",
	      test_reason());
	return TEST_PASS;
}

static void registry_empty_in_child(void)
{
	const struct test_child child = { .timeout_s = 30 };
	struct gdr_fork_fd *slot;
	int fd = open("/dev/null", O_RDONLY | O_CLOEXEC);

	EXPECT(fd >= 0, "open /dev/null: %s", test_strerror(errno));
	slot = gdr_fork_fd_hold(fd);
	EXPECT(slot, "gdr_fork_fd_hold(%d) failed", fd);
	EXPECT(test_child_run(&child, child_reopens, (void *)(intptr_t)fd) == TEST_PASS, "%s",
	       test_reason());
	gdr_fork_fd_drop(slot);
	close(fd);
}

/*
 * The child handler's fstat of a registered descriptor that the caller has closed fails
 * (EBADF); fork() must still return in the child with errno as it was before the call.
 */
static void errno_kept_over_fork(void)
{
	struct gdr_fork_fd *slot;
	int fd = new_file(), err;
	pid_t pid;

	EXPECT(fd >= 0, "pipe: %s", test_strerror(errno));
	slot = gdr_fork_fd_hold(fd);
	EXPECT(slot, "gdr_fork_fd_hold(%d) failed", fd);
	close(fd);
	errno = EDOM;
	pid = test_fork();
	err = errno;
	if (pid == 0)
		_exit(err == EDOM ? 0 : 1);
	EXPECT(pid > 0, "fork: %s", test_strerror(err));
	EXPECT(err == EDOM, "errno after fork() in the parent: %s", test_strerror(err));
	EXPECT(pid <= 0 || test_wait(pid) == 0, "errno after fork() in the child was not the one "
	       "before it: the child handler's failed fstat of closed descriptor %d leaked", fd);
	gdr_fork_fd_drop(slot);
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
	registry_empty_in_child();
	errno_kept_over_fork();
	return test_status();
}
