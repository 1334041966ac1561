/* SPDX-License-Identifier: MIT */
#include <linux/membarrier.h>
#include <pthread.h>
#include <sched.h>
#include <stdlib.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "inflight.h"
#include "log.h"

__thread struct gdr_inflight *gdr_inflight_self __attribute__((tls_model("initial-exec")));
/* Until gdr_inflight_init knows better, readers fence. */
_Atomic int gdr_inflight_fence = 1;

/*
 * Protects the registry list and every record's in_use and next. Taken by a thread's first copy,
 * by thread exit, by waiters (who hold it while they wait) and by fork; nothing is taken inside it.
 */
static pthread_mutex_t registry_lock = PTHREAD_MUTEX_INITIALIZER;
static struct gdr_inflight *registry;
static pthread_key_t exit_key;
static bool exit_key_made;
static pthread_once_t init_once = PTHREAD_ONCE_INIT;
static pthread_once_t key_once = PTHREAD_ONCE_INIT;

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

/* A thread that copied is exiting: its record goes back for reuse (its seq is even). */
static void thread_exit(void *record)
{
	struct gdr_inflight *r = record;

	pthread_mutex_lock(&registry_lock);
	r->in_use = false;
	pthread_mutex_unlock(&registry_lock);
}

static void key_create(void)
{
	exit_key_made = pthread_key_create(&exit_key, thread_exit) == 0;
}

struct gdr_inflight *gdr_inflight_register(void)
{
	struct gdr_inflight *r;

	pthread_once(&key_once, key_create);
	pthread_mutex_lock(&registry_lock);
	for (r = registry; r && r->in_use; r = r->next)
		;
	if (!r) {
		r = calloc(1, sizeof(*r));
		if (!r) {
			pthread_mutex_unlock(&registry_lock);
			gdr_err("gdr_copy: out of memory for this thread's first copy");
			return NULL;
		}
		r->next = registry;
		registry = r;
	}
	r->in_use = true;
	pthread_mutex_unlock(&registry_lock);
	if (exit_key_made)
		pthread_setspecific(exit_key, r);
	gdr_inflight_self = r;
	return r;
}

void gdr_inflight_wait(void)
{
	struct gdr_inflight *self = gdr_inflight_self, *r;
	bool others = false;

	pthread_mutex_lock(&registry_lock);
	for (r = registry; r && !others; r = r->next)
		others = r != self && r->in_use;
	/*
	 * No other thread has ever copied, or its first copy will register after this: it takes
	 * the lock after we drop it, so it sees the mapping already unpublished.
	 */
	if (!others)
		goto out_unlock;
	if (atomic_load_explicit(&gdr_inflight_fence, memory_order_relaxed) ||
	    membarrier(MEMBARRIER_CMD_PRIVATE_EXPEDITED))
		atomic_thread_fence(memory_order_seq_cst);
	for (r = registry; r; r = r->next) {
		unsigned long s;

		if (r == self || !r->in_use)
			continue;
		s = atomic_load_explicit(&r->seq, memory_order_acquire);
		if (!(s & 1))
			continue;
		while (atomic_load_explicit(&r->seq, memory_order_acquire) == s)
			sched_yield();
	}
out_unlock:
	pthread_mutex_unlock(&registry_lock);
}

static void fork_prepare(void)
{
	pthread_mutex_lock(&registry_lock);
}

static void fork_parent(void)
{
	pthread_mutex_unlock(&registry_lock);
}

/* Only this thread exists in the child: the other records are free, whatever state they were in. */
static void fork_child(void)
{
	for (struct gdr_inflight *r = registry; r; r = r->next) {
		unsigned long s = atomic_load_explicit(&r->seq, memory_order_relaxed);

		if (r == gdr_inflight_self)
			continue;
		r->in_use = false;
		atomic_store_explicit(&r->seq, s + (s & 1), memory_order_relaxed);
	}
	/* The registration is the mm's; the child's is new, so register it again. */
	if (!atomic_load_explicit(&gdr_inflight_fence, memory_order_relaxed) &&
	    !membarrier_register())
		atomic_store_explicit(&gdr_inflight_fence, 1, memory_order_relaxed);
	pthread_mutex_unlock(&registry_lock);
}

static void inflight_init(void)
{
	pthread_atfork(fork_prepare, fork_parent, fork_child);
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
