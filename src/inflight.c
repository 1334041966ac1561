/* SPDX-License-Identifier: MIT */
#include <errno.h>
#include <linux/membarrier.h>
#include <pthread.h>
#include <sched.h>
#include <stdbool.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#include "inflight.h"
#include "log.h"

/*
 * Initial-exec: one load from the thread pointer on every copy. A library that clients dlopen
 * takes its 8 bytes from glibc's spare static TLS (docs/architecture.md, "The data path").
 */
__thread struct gdr_inflight *gdr_inflight_self __attribute__((tls_model("initial-exec")));
/* Until gdr_inflight_init knows better, readers fence. */
_Atomic int gdr_inflight_fence = 1;

/*
 * Every record ever made, newest first. Records are claimed and given back with
 * compare-and-swap on in_use and pushed with compare-and-swap on the head; none is ever freed
 * or unlinked, so a walk from the head needs no lock. No lock at all: a signal handler's copy can
 * interrupt a thread anywhere here, including its own first copy or a gdr_unmap's wait.
 */
static _Atomic(struct gdr_inflight *) registry;
static pthread_key_t exit_key;
static bool exit_key_made;
static pthread_once_t init_once = PTHREAD_ONCE_INIT;

#ifdef GDR_WITH_TEST_HOOKS
int gdr_inflight_test_membarrier_fails;
#endif

static long membarrier(int cmd)
{
#ifdef GDR_WITH_TEST_HOOKS
	if (gdr_inflight_test_membarrier_fails & cmd) {
		errno = ENOMEM;
		return -1;
	}
#endif
	return syscall(__NR_membarrier, cmd, 0, 0);
}

static bool membarrier_register(void)
{
	long cmds = membarrier(MEMBARRIER_CMD_QUERY);

	return cmds > 0 && (cmds & MEMBARRIER_CMD_PRIVATE_EXPEDITED) &&
	       membarrier(MEMBARRIER_CMD_REGISTER_PRIVATE_EXPEDITED) == 0;
}

static struct gdr_inflight *registry_first(void)
{
	return atomic_load_explicit(&registry, memory_order_acquire);
}

/*
 * A thread that copied is exiting: its record goes back for reuse, out of any copy (one left by
 * longjmp would otherwise hold up every unmap, and the record's next owner too), and the thread
 * forgets it, should another exit handler copy (it then takes a record again).
 */
static void thread_exit(void *record)
{
	struct gdr_inflight *r = record;
	unsigned long s = atomic_load_explicit(&r->seq, memory_order_relaxed);

	atomic_store_explicit(&r->seq, s + (s & 1), memory_order_release);
	if (gdr_inflight_self == r)
		gdr_inflight_self = NULL;
	atomic_store_explicit(&r->in_use, false, memory_order_release);
}

static void key_create(void)
{
	exit_key_made = pthread_key_create(&exit_key, thread_exit) == 0;
}

/*
 * A batch of records from mmap, not malloc: a signal handler may make its thread's first copy,
 * and malloc is not async-signal-safe (a handler that interrupted malloc would deadlock in it).
 * The first is this thread's; the rest are pushed free, with it, in one compare-and-swap.
 */
static struct gdr_inflight *new_records(void)
{
	size_t count = GDR_INFLIGHT_BATCH / sizeof(struct gdr_inflight);
	struct gdr_inflight *r;

	r = mmap(NULL, GDR_INFLIGHT_BATCH, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS,
		 -1, 0);
	if (r == MAP_FAILED)
		return NULL;
	atomic_init(&r[0].in_use, true);
	for (size_t i = 0; i + 1 < count; i++)
		r[i].next = &r[i + 1];
	r[count - 1].next = registry_first();
	while (!atomic_compare_exchange_weak_explicit(&registry, &r[count - 1].next, r,
						      memory_order_release, memory_order_acquire))
		;
	return r;
}

/* A record no live thread owns, now this thread's; or a new one; NULL when out of memory. */
static struct gdr_inflight *claim_record(void)
{
	struct gdr_inflight *r;

	for (r = registry_first(); r; r = r->next) {
		bool free_record = false;

		if (atomic_compare_exchange_strong(&r->in_use, &free_record, true))
			return r;
	}
	return new_records();
}

#ifdef GDR_WITH_TEST_HOOKS
void (*gdr_inflight_test_claimed)(struct gdr_inflight *r);
#endif

struct gdr_inflight *gdr_inflight_register(void)
{
	struct gdr_inflight *r = claim_record(), *theirs = NULL;

	if (!r) {
		gdr_err("gdr_copy: out of memory for this thread's first copy");
		return NULL;
	}
#ifdef GDR_WITH_TEST_HOOKS
	if (gdr_inflight_test_claimed)
		gdr_inflight_test_claimed(r);
#endif
	/*
	 * A waiter that looked at the registry before this claim has unpublished its mapping
	 * already: the fence pairs with its own (gdr_inflight_wait), so this thread's lookups see
	 * the unpublishing, or the waiter sees this record.
	 */
	atomic_thread_fence(memory_order_seq_cst);
	/*
	 * A signal handler's copy that interrupted this one after the claim has registered a record
	 * of its own: the thread keeps that one (the exit hook names it) and gives this back, which
	 * nothing else would. Compare-and-swap, because the handler may come between a test and a
	 * store; it is atomic against a handler of this thread.
	 */
	if (!__atomic_compare_exchange_n(&gdr_inflight_self, &theirs, r, false, __ATOMIC_RELAXED,
					 __ATOMIC_RELAXED)) {
		atomic_store_explicit(&r->in_use, false, memory_order_release);
		return theirs;
	}
	if (exit_key_made)
		pthread_setspecific(exit_key, r);
	return r;
}

static double now_seconds(void)
{
	struct timespec t;

	clock_gettime(CLOCK_MONOTONIC, &t);
	return (double)t.tv_sec + (double)t.tv_nsec * 1e-9;
}

/*
 * Wait for r's copy, begun as s, to leave; say so once if it takes more than a second. Yields at
 * first (a copy takes microseconds), then sleeps: sched_yield gives way only to threads of the
 * waiter's priority, and a real-time waiter on the copying thread's CPU would spin for ever.
 */
static void wait_for_copy(struct gdr_inflight *r, unsigned long s)
{
	const struct timespec nap = { .tv_nsec = 20000 };
	double start = now_seconds();
	bool warned = false;

	for (unsigned int tries = 0; atomic_load_explicit(&r->seq, memory_order_acquire) == s;
	     tries++) {
		if (tries < 100)
			sched_yield();
		else
			nanosleep(&nap, NULL);
		if (!warned && now_seconds() - start > 1.0) {
			gdr_warn("unmapping: a copy under way on another thread has not finished "
				 "after 1 s; still waiting (a copy left by longjmp, out of a signal "
				 "handler, never finishes)");
			warned = true;
		}
	}
}

/*
 * membarrier(PRIVATE_EXPEDITED) worked at init and fails now (ENOMEM under memory pressure, a
 * seccomp filter installed since): a fence of this thread's alone would leave a copy's
 * announcement in its CPU's store buffer while it reads the old mapping. From now on copies
 * fence themselves; for those already announced without a fence, MEMBARRIER_CMD_GLOBAL orders
 * every thread of the system (it needs no registration, and takes an RCU grace period), and
 * where that fails too, a pause lets their announcements leave their store buffers, which they
 * do within microseconds (the one place ordering rests on time). Logged: once, as later waits
 * find copies fencing.
 */
static void order_without_private_membarrier(void)
{
	struct timespec pause = { .tv_nsec = 1000000 };
	int err = errno;
	bool global;

	atomic_store_explicit(&gdr_inflight_fence, 1, memory_order_seq_cst);
	global = !membarrier(MEMBARRIER_CMD_GLOBAL);
	if (!global)
		nanosleep(&pause, NULL);
	/* A warning: the unmap itself succeeds, and leaves no reason for a later failure. */
	gdr_warn("membarrier(PRIVATE_EXPEDITED) failed while unmapping (%s): copies fence "
		 "themselves from now on, and this unmap ordered those under way with %s",
		 strerror(err), global ? "membarrier(GLOBAL)" :
		 "a 1 ms pause (membarrier(GLOBAL) failed too)");
}

void gdr_inflight_wait(void)
{
	struct gdr_inflight *self = gdr_inflight_self, *r;
	bool others = false;

	/* Pairs with gdr_inflight_register's: see there. */
	atomic_thread_fence(memory_order_seq_cst);
	for (r = registry_first(); r && !others; r = r->next)
		others = r != self && atomic_load_explicit(&r->in_use, memory_order_acquire);
	/* No other thread has a record; one that takes one now finds the mapping unpublished. */
	if (!others)
		return;
	if (!atomic_load_explicit(&gdr_inflight_fence, memory_order_relaxed) &&
	    membarrier(MEMBARRIER_CMD_PRIVATE_EXPEDITED))
		order_without_private_membarrier();
	atomic_thread_fence(memory_order_seq_cst);
	for (r = registry_first(); r; r = r->next) {
		unsigned long s;

		if (r == self || !atomic_load_explicit(&r->in_use, memory_order_acquire))
			continue;
		s = atomic_load_explicit(&r->seq, memory_order_acquire);
		if (s & 1)
			wait_for_copy(r, s);
	}
}

/* Only this thread exists in the child: the other records are free, whatever state they were in. */
static void fork_child(void)
{
	for (struct gdr_inflight *r = registry_first(); r; r = r->next) {
		unsigned long s = atomic_load_explicit(&r->seq, memory_order_relaxed);

		if (r == gdr_inflight_self)
			continue;
		atomic_store_explicit(&r->seq, s + (s & 1), memory_order_relaxed);
		atomic_store_explicit(&r->in_use, false, memory_order_relaxed);
	}
	/*
	 * The registration is the mm's. Linux copies it into the child's (only exec clears it),
	 * so this is a no-op there; a kernel that did not would otherwise leave the child's
	 * copies unordered, as they do not fence.
	 */
	if (!atomic_load_explicit(&gdr_inflight_fence, memory_order_relaxed) &&
	    !membarrier_register())
		atomic_store_explicit(&gdr_inflight_fence, 1, memory_order_relaxed);
}

/*
 * At load, before any thread can copy (a copy may come before any gdr_open: handle values are
 * validated): the thread-exit hook and the fork child handler then cover every record, and
 * exit_key is never written while a copy reads it. Not at a thread's first copy: neither
 * pthread_once nor these calls are async-signal-safe.
 */
__attribute__((constructor)) static void inflight_load(void)
{
	key_create();
	pthread_atfork(NULL, NULL, fork_child);
}

static void inflight_init(void)
{
	if (membarrier_register())
		atomic_store_explicit(&gdr_inflight_fence, 0, memory_order_relaxed);
	else
		gdr_dbg("membarrier(PRIVATE_EXPEDITED) is not available: copies fence themselves");
}

void gdr_inflight_init(void)
{
	pthread_once(&init_once, inflight_init);
}

/* Unloading the library must not leave a thread-exit hook pointing into it. */
__attribute__((destructor)) static void inflight_unload(void)
{
	if (exit_key_made)
		pthread_key_delete(exit_key);
}
