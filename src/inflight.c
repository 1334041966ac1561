/* SPDX-License-Identifier: MIT */
#include <linux/membarrier.h>
#include <pthread.h>
#include <sched.h>
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

static long membarrier(int cmd)
{
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

/* Wait for r's copy, begun as s, to leave; say so once if it takes more than a second. */
static void wait_for_copy(struct gdr_inflight *r, unsigned long s)
{
	double start = now_seconds();
	bool warned = false;

	while (atomic_load_explicit(&r->seq, memory_order_acquire) == s) {
		sched_yield();
		if (!warned && now_seconds() - start > 1.0) {
			gdr_warn("unmapping: a copy under way on another thread has not finished "
				 "after 1 s; still waiting (a copy left by longjmp, out of a signal "
				 "handler, never finishes)");
			warned = true;
		}
	}
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
	if (atomic_load_explicit(&gdr_inflight_fence, memory_order_relaxed) ||
	    membarrier(MEMBARRIER_CMD_PRIVATE_EXPEDITED))
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

static void inflight_init(void)
{
	/* Here, not at a thread's first copy: pthread_once is not async-signal-safe either. */
	key_create();
	pthread_atfork(NULL, NULL, fork_child);
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
