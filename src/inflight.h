/* SPDX-License-Identifier: MIT */
/*
 * Copies in flight, so that an unmap never takes a mapping away from a copy that already found
 * it (issue: a copy racing gdr_unmap of its handle wrote into whatever was mapped at that address
 * next, silently).
 *
 * A copy looks up its handle's mapping with no lock (handle.h), then loads or stores through it.
 * Each thread announces its copies in a record of its own: seq is odd while the thread is inside
 * a copy; two plain stores per copy, no read-modify-write, no fence. gdr_unmap, after taking the
 * mapping out of the handle table and before unmapping it, waits until every copy that was under
 * way has left. A copy therefore either completes through the mapping before it goes, or finds
 * the handle unmapped and returns EINVAL; it never reaches memory mapped there later.
 *
 * A reader's announcement must be visible before its table lookup. Instead of a fence in every
 * copy, the waiter forces one on every running thread of the process with
 * membarrier(MEMBARRIER_CMD_PRIVATE_EXPEDITED) (userspace RCU's membarrier flavour); where the
 * kernel lacks it, readers fence themselves (gdr_inflight_fence).
 */
#ifndef GDR_INFLIGHT_H
#define GDR_INFLIGHT_H

#include <stdatomic.h>
#include <stdbool.h>

/*
 * A cache line each: every copy writes its thread's seq, which must not share a line with another
 * thread's. Records are made GDR_INFLIGHT_BATCH bytes at a time (inflight.c).
 */
#define GDR_INFLIGHT_BATCH 4096

struct gdr_inflight {
	_Alignas(64) _Atomic unsigned long seq;	/* odd while its thread is inside a copy; written by it only */
	struct gdr_inflight *next;	/* in the registry; set before it is published, then fixed */
	_Atomic bool in_use;		/* a live thread owns it: claimed by compare-and-swap */
};

extern __thread struct gdr_inflight *gdr_inflight_self __attribute__((tls_model("initial-exec")));
extern _Atomic int gdr_inflight_fence;

/* Decide how readers are ordered (membarrier or fences); once per process. gdr_open calls it. */
void gdr_inflight_init(void);

/*
 * This thread's record, taken at its first copy; NULL when out of memory. Takes no lock and
 * calls neither malloc nor pthread_once, so that a signal handler's copy may be its thread's
 * first, whatever the handler interrupted (malloc, this very call, a gdr_unmap's wait). The one
 * call left that is not async-signal-safe is pthread_setspecific, for the thread-exit hook:
 * glibc's allocates only for the 33rd key of a process and later ones.
 */
struct gdr_inflight *gdr_inflight_register(void);

#ifdef GDR_WITH_TEST_HOOKS
/* Test builds only: when set, gdr_inflight_register calls it with the record it has just claimed. */
extern void (*gdr_inflight_test_claimed)(struct gdr_inflight *r);
/* Test builds only: membarrier commands (MEMBARRIER_CMD_* bits) that fail with ENOMEM. */
extern int gdr_inflight_test_membarrier_fails;
#endif

/* The announcement before the table lookup: a fence only where membarrier cannot supply it. */
static inline __attribute__((always_inline)) void gdr_inflight_order(void)
{
	if (__builtin_expect(atomic_load_explicit(&gdr_inflight_fence, memory_order_relaxed), 0))
		atomic_thread_fence(memory_order_seq_cst);
	else
		atomic_signal_fence(memory_order_seq_cst);
}

/*
 * Announce a copy; *leave is handed back to gdr_inflight_leave. Nests (a copy in a signal handler
 * that interrupted a copy: only the outer one counts). NULL only when the thread's first record
 * cannot be allocated.
 */
static inline struct gdr_inflight *gdr_inflight_enter(unsigned long *leave)
{
	struct gdr_inflight *r = gdr_inflight_self;
	unsigned long s;

	if (__builtin_expect(!r, 0)) {
		r = gdr_inflight_register();
		if (!r)
			return NULL;
	}
	s = atomic_load_explicit(&r->seq, memory_order_relaxed);
	if (__builtin_expect(!(s & 1), 1)) {
		atomic_store_explicit(&r->seq, s + 1, memory_order_relaxed);
		s += 2;
	}
	*leave = s;
	gdr_inflight_order();
	return r;
}

/* The copy is done: its loads and stores through the mapping come before this. */
static inline void gdr_inflight_leave(struct gdr_inflight *r, unsigned long leave)
{
	atomic_store_explicit(&r->seq, leave, memory_order_release);
}

/*
 * gdr_inflight_enter for the common case, a thread that has copied before and is not inside a
 * copy: false, having changed nothing, otherwise (the caller then uses gdr_inflight_enter). It
 * hands nothing back, so a copy keeps no value alive across its routine's call (every
 * instruction around the loads of a read through a BAR costs: docs/performance.md).
 */
static inline __attribute__((always_inline)) bool gdr_inflight_enter_outer(void)
{
	struct gdr_inflight *r = gdr_inflight_self;
	unsigned long s;

	if (__builtin_expect(!r, 0))
		return false;
	s = atomic_load_explicit(&r->seq, memory_order_relaxed);
	if (__builtin_expect(s & 1, 0))
		return false;
	atomic_store_explicit(&r->seq, s + 1, memory_order_relaxed);
	gdr_inflight_order();
	return true;
}

/*
 * Leave a copy that gdr_inflight_enter_outer announced. seq is still the odd value it stored: a
 * copy in a signal handler meanwhile found it odd and left it alone.
 */
static inline __attribute__((always_inline)) void gdr_inflight_leave_outer(void)
{
	struct gdr_inflight *r = gdr_inflight_self;

	atomic_store_explicit(&r->seq, atomic_load_explicit(&r->seq, memory_order_relaxed) + 1,
			      memory_order_release);
}

/*
 * Wait until every other thread's copy that was under way when this was called has left. The
 * caller has already unpublished the mapping (gdr_handle_publish_mapping), so later copies cannot
 * find it. May sleep; takes no lock, so the waiting thread's signal handlers may copy. A copy
 * left by longjmp (out of a signal handler that interrupted it) never leaves: like any function
 * that is not async-signal-safe, a copy must not be jumped out of. The wait then says so, once
 * a second, and goes on waiting.
 */
void gdr_inflight_wait(void);

#endif
