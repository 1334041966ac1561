/* SPDX-License-Identifier: MIT */
/*
 * Copies and gdr_unmap when signals interrupt them (src/inflight.h):
 * - a signal handler whose copy is its thread's first: it takes nothing from the heap (malloc is
 *   not async-signal-safe: a handler that interrupted malloc would deadlock in it), and a handler
 *   that interrupts the process's first copy completes its own (the first copy once created the
 *   thread-exit key under a pthread_once that the handler's copy entered again and waited on);
 * - a signal handler that copies, on a thread that has never copied, while that thread waits in
 *   gdr_unmap for another thread's copy: the handler's copy completes and so does the unmap (the
 *   registry once held a lock across the wait that the handler's first copy took again), and a
 *   wait of more than a second says so;
 * - a copy left by siglongjmp, on a thread that then exits: the thread that takes its record next
 *   copies as usual, and later unmaps do not wait for the copy that was left;
 * - a signal handler that copies while its thread's first copy is between claiming its record
 *   and making it the thread's: the thread ends with one record, the other is given back (the
 *   handler's record was once claimed for good, one record lost each time);
 * - a copy from a thread-specific data destructor that runs after the library's thread-exit hook
 *   (a key created later): the copy takes a record of its own, which the thread gives back as it
 *   goes, and not the one the hook has just given back, which another thread may take meanwhile;
 * - a copy left by siglongjmp, on a thread that goes on: its later copies work, and its own
 *   gdr_unmap does not wait for the copy it left;
 * - a held copy whose record is in the first batch, with more threads than a batch holds
 *   copying after it: gdr_unmap still finds it and waits;
 * - a fork while another thread is inside a copy: the child, which has no such thread, has its
 *   record free and out of any copy, and its copies are ordered (membarrier registered again,
 *   or fences).
 *
 * A copy is held open on purpose: its host buffer is a PROT_NONE page, and the SIGSEGV handler of
 * the copying thread waits on a pipe, then makes the page readable and returns (the copy goes
 * on), or jumps out of the copy.
 */
#include <errno.h>
#include <malloc.h>
#include <pthread.h>
#include <setjmp.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <linux/membarrier.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#include "fake_gpu.h"
#include "gdrapi.h"
#include "harness.h"
#include "inflight.h"

#define BUF 65536

static gdr_t g;
static long page;
static uint8_t *held_page;		/* the held copy's host buffer */
static int release_pipe[2];		/* a byte in it lets the held copy go on */
static _Atomic int in_held_copy;
static _Atomic bool jump_out;		/* the SIGSEGV handler leaves the copy by siglongjmp */
static __thread sigjmp_buf copy_jump;

struct pinned {
	void *gpu;
	gdr_mh_t mh;
	uint8_t *va;
};

static void on_segv(int sig, siginfo_t *info, void *uc)
{
	char c;

	(void)sig, (void)uc;
	if ((uint8_t *)info->si_addr < held_page || (uint8_t *)info->si_addr >= held_page + page)
		abort();
	atomic_store(&in_held_copy, 1);
	if (atomic_load(&jump_out))
		siglongjmp(copy_jump, 1);
	while (read(release_pipe[0], &c, 1) < 0 && errno == EINTR)
		;
	mprotect(held_page, page, PROT_READ | PROT_WRITE);
}

static int pin_map(struct pinned *p)
{
	p->gpu = fake_gpu_alloc(BUF);
	if (!p->gpu || gdr_pin_buffer(g, (unsigned long)p->gpu, BUF, 0, 0, &p->mh))
		return -1;
	return gdr_map(g, p->mh, (void **)&p->va, BUF) ? -1 : 0;
}

static void unpin_free(struct pinned *p)
{
	gdr_unpin_buffer(g, p->mh);
	fake_gpu_free(p->gpu);
}

/* Wait until *flag is set, for up to seconds; whether it was. */
static bool wait_flag(_Atomic int *flag, double seconds)
{
	for (int i = 0; i < seconds * 1000 && !atomic_load(flag); i++)
		usleep(1000);
	return atomic_load(flag);
}

/* ---- A handler's copy that is its thread's first ---- */

/*
 * pthread_key_create, interposed on the library's calls: armed, it lets a signal in first, as if
 * one arrived there. glibc exports the real one under this name too. Not instrumented by TSan,
 * whose runtime calls it while it starts, before instrumented code can run.
 */
extern int __pthread_key_create(pthread_key_t *key, void (*destructor)(void *));
static _Atomic bool signal_in_key_create;
static struct pinned first;
static _Atomic int first_handler_copied, first_copy_done;

#if __has_attribute(disable_sanitizer_instrumentation)
__attribute__((disable_sanitizer_instrumentation))	/* clang: no entry/exit hooks either */
#else
__attribute__((no_sanitize("thread")))
#endif
int pthread_key_create(pthread_key_t *key, void (*destructor)(void *))
{
	if (atomic_exchange(&signal_in_key_create, false))
		raise(SIGUSR2);
	return __pthread_key_create(key, destructor);
}

static void on_usr2(int sig)
{
	uint8_t b[8] = { 11, 12, 13, 14, 15, 16, 17, 18 };

	(void)sig;
	if (gdr_copy_to_mapping(first.mh, first.va + 64, b, sizeof(b)) == 0)
		atomic_store(&first_handler_copied, 1);
}

static void *first_copier(void *arg)
{
	uint8_t b[8] = { 1, 2, 3, 4, 5, 6, 7, 8 };

	(void)arg;
	atomic_store(&signal_in_key_create, true);
	if (gdr_copy_to_mapping(first.mh, first.va, b, sizeof(b)) == 0)
		atomic_store(&first_copy_done, 1);
	atomic_store(&signal_in_key_create, false);
	return NULL;
}

/* Must be the process's first copy: the first case. */
static int case_handler_interrupts_first_copy(void)
{
	struct sigaction sa = { .sa_handler = on_usr2 };
	pthread_t t;

	CHECK(!pin_map(&first), "pin and map");
	sigemptyset(&sa.sa_mask);
	CHECK(!sigaction(SIGUSR2, &sa, NULL), "sigaction");
	CHECK(!pthread_create(&t, NULL, first_copier, NULL), "start the copier");
	if (!wait_flag(&first_copy_done, 5)) {
		fprintf(stderr, "FAIL: the process's first copy, interrupted by a signal handler "
			"that copies, did not complete in 5 s (handler copied: %d)\n",
			atomic_load(&first_handler_copied));
		_exit(TEST_FAIL);
	}
	pthread_join(t, NULL);
	EXPECT(!memcmp(first.va, (uint8_t[]){ 1, 2, 3, 4, 5, 6, 7, 8 }, 8));
	EXPECT(!atomic_load(&first_handler_copied) || first.va[64] == 11);
	EXPECT_ERR(gdr_unmap(g, first.mh, first.va, BUF), 0);
	unpin_free(&first);
	return 0;
}

static size_t heap_in_use;

/* A thread whose first call is a copy: what the heap holds before and after it. */
static void *heap_copier(void *arg)
{
	uint8_t b[8] = { 21, 22, 23, 24, 25, 26, 27, 28 };
	size_t before = mallinfo2().uordblks;

	(void)arg;
	if (gdr_copy_to_mapping(first.mh, first.va, b, sizeof(b)))
		return (void *)1;
	heap_in_use = mallinfo2().uordblks - before;
	return NULL;
}

static int case_first_copy_takes_no_heap(void)
{
	pthread_t t;
	void *ret;

	CHECK(!pin_map(&first), "pin and map");
	CHECK(!pthread_create(&t, NULL, heap_copier, NULL), "start the copier");
	pthread_join(t, &ret);
	EXPECT(!ret && first.va[0] == 21, "the copy failed");
	EXPECT(heap_in_use == 0,
	       "a thread's first copy took %zu bytes from the heap, which a signal handler may not",
	       heap_in_use);
	EXPECT_ERR(gdr_unmap(g, first.mh, first.va, BUF), 0);
	unpin_free(&first);
	return 0;
}

/* ---- A handler's copy while its thread waits in gdr_unmap ---- */

static struct pinned held, other;
static _Atomic int handler_copied, unmap_done;
static int unmap_ret = -1;

static void *held_copier(void *arg)
{
	(void)arg;
	/* Every byte is copied once the handler lets the copy go on. */
	return (void *)(intptr_t)gdr_copy_to_mapping(held.mh, held.va, held_page, 64);
}

static void on_usr1(int sig)
{
	uint8_t b[8] = { 1, 2, 3, 4, 5, 6, 7, 8 };

	(void)sig;
	if (gdr_copy_to_mapping(held.mh, held.va + 128, b, sizeof(b)) == 0)
		atomic_store(&handler_copied, 1);
}

static void *unmapper(void *arg)
{
	(void)arg;
	unmap_ret = gdr_unmap(g, other.mh, other.va, BUF);
	atomic_store(&unmap_done, 1);
	return NULL;
}

static int case_handler_copy_during_unmap_wait(void)
{
	struct sigaction sa = { .sa_handler = on_usr1 };
	pthread_t copier, waiter;
	const char *log;
	void *copy_ret;
	char go = 1;

	CHECK(!pin_map(&held) && !pin_map(&other), "pin and map two buffers");
	mprotect(held_page, page, PROT_NONE);
	atomic_store(&in_held_copy, 0);
	atomic_store(&jump_out, false);
	sigemptyset(&sa.sa_mask);
	CHECK(!sigaction(SIGUSR1, &sa, NULL), "sigaction");
	CHECK(!pthread_create(&copier, NULL, held_copier, NULL), "start the copier");
	CHECK(wait_flag(&in_held_copy, 5), "the copier is inside its copy");
	CHECK(!pthread_create(&waiter, NULL, unmapper, NULL), "start the unmapper");
	/* The unmapper, which has never copied, now waits for the held copy. */
	usleep(200 * 1000);
	CHECK(!atomic_load(&unmap_done), "gdr_unmap waits for a copy in flight");
	pthread_kill(waiter, SIGUSR1);
	if (!wait_flag(&handler_copied, 5)) {
		/* Deadlocked: nothing can be unwound, so say so and end here. */
		fprintf(stderr, "FAIL: a signal handler's first copy on a thread waiting in "
			"gdr_unmap did not complete in 5 s\n");
		_exit(TEST_FAIL);
	}
	CHECK(!atomic_load(&unmap_done), "gdr_unmap still waits for the held copy");
	/* Held past a second, the wait says why it may never end. */
	test_capture_begin();
	usleep(2500 * 1000);
	CHECK(write(release_pipe[1], &go, 1) == 1, "release the held copy");
	pthread_join(copier, &copy_ret);
	pthread_join(waiter, NULL);
	log = test_capture_end();
	EXPECT(strstr(log, "has not finished after 1 s") != NULL, "no slow-wait warning in: %s",
	       log);
	EXPECT_ERR((int)(intptr_t)copy_ret, 0);
	EXPECT_ERR(unmap_ret, 0);
	EXPECT(held.va[128] == 1 && held.va[135] == 8);
	EXPECT(!memcmp(held.va, held_page, 64));
	EXPECT_ERR(gdr_unmap(g, held.mh, held.va, BUF), 0);
	unpin_free(&held);
	unpin_free(&other);
	return 0;
}

/* ---- A copy left by siglongjmp, then the thread exits ---- */

static void *jumping_copier(void *arg)
{
	struct pinned *p = arg;

	if (sigsetjmp(copy_jump, 1) == 0)
		gdr_copy_to_mapping(p->mh, p->va, held_page, 64);
	return NULL;
}

static int case_copy_left_by_longjmp(void)
{
	const uint8_t bytes[8] = { 9, 8, 7, 6, 5, 4, 3, 2 };
	struct pinned p;
	pthread_t t, u;

	CHECK(!pin_map(&p) && !pin_map(&other), "pin and map two buffers");
	mprotect(held_page, page, PROT_NONE);
	atomic_store(&in_held_copy, 0);
	atomic_store(&jump_out, true);
	CHECK(!pthread_create(&t, NULL, jumping_copier, &p), "start the copier");
	pthread_join(t, NULL);
	CHECK(atomic_load(&in_held_copy), "the copy faulted and was jumped out of");
	/* This thread's first copy takes the record the exited thread gave back. */
	EXPECT_ERR(gdr_copy_to_mapping(p.mh, p.va, bytes, sizeof(bytes)), 0);
	EXPECT(!memcmp(p.va, bytes, sizeof(bytes)));
	atomic_store(&unmap_done, 0);
	CHECK(!pthread_create(&u, NULL, unmapper, NULL), "start the unmapper");
	if (!wait_flag(&unmap_done, 5)) {
		fprintf(stderr, "FAIL: gdr_unmap waits for the copy of a thread that left it by "
			"longjmp and exited\n");
		_exit(TEST_FAIL);
	}
	pthread_join(u, NULL);
	EXPECT_ERR(unmap_ret, 0);
	EXPECT_ERR(gdr_unmap(g, p.mh, p.va, BUF), 0);
	unpin_free(&p);
	unpin_free(&other);
	return 0;
}

/* ---- A copy left by siglongjmp, then its own thread unmaps ---- */

static _Atomic int self_unmap_done;
static int self_copy_ret = -1, self_unmap_ret = -1;
static const uint8_t self_bytes[8] = { 41, 42, 43, 44, 45, 46, 47, 48 };

/*
 * Leaves a copy by siglongjmp and goes on: its record says for ever that it is inside that copy,
 * and its later copies nest in it. Its own gdr_unmap must not wait for that copy.
 */
static void *jump_then_unmap(void *arg)
{
	struct pinned *p = arg;

	if (sigsetjmp(copy_jump, 1) == 0)
		gdr_copy_to_mapping(p->mh, p->va, held_page, 64);
	self_copy_ret = gdr_copy_to_mapping(p->mh, p->va + 64, self_bytes, sizeof(self_bytes));
	self_unmap_ret = gdr_unmap(g, other.mh, other.va, BUF);
	atomic_store(&self_unmap_done, 1);
	return NULL;
}

static int case_own_copy_left_by_longjmp(void)
{
	struct pinned p;
	pthread_t t;

	CHECK(!pin_map(&p) && !pin_map(&other), "pin and map two buffers");
	mprotect(held_page, page, PROT_NONE);
	atomic_store(&in_held_copy, 0);
	atomic_store(&jump_out, true);
	atomic_store(&self_unmap_done, 0);
	CHECK(!pthread_create(&t, NULL, jump_then_unmap, &p), "start the copier");
	if (!wait_flag(&self_unmap_done, 5)) {
		fprintf(stderr, "FAIL: gdr_unmap on a thread that left a copy by longjmp waits for "
			"that copy, its own\n");
		_exit(TEST_FAIL);
	}
	pthread_join(t, NULL);
	EXPECT(atomic_load(&in_held_copy), "the copy faulted and was jumped out of");
	EXPECT_ERR(self_copy_ret, 0);
	EXPECT(!memcmp(p.va + 64, self_bytes, sizeof(self_bytes)));
	EXPECT_ERR(self_unmap_ret, 0);
	EXPECT_ERR(gdr_unmap(g, p.mh, p.va, BUF), 0);
	unpin_free(&p);
	return 0;
}

/* ---- More threads than a batch of records ---- */

/* More than the GDR_INFLIGHT_BATCH / 64 records of a batch, newer than the held copier's. */
#define MANY_THREADS 80

static struct pinned many;
static _Atomic int many_copied, many_go;

/* A copy, then stay alive, holding a record, until told. */
static void *copy_and_stay(void *arg)
{
	uint8_t b = (uint8_t)(intptr_t)arg;
	int ret = gdr_copy_to_mapping(many.mh, many.va + b, &b, 1);

	atomic_fetch_add(&many_copied, 1);
	while (!atomic_load(&many_go))
		usleep(1000);
	return (void *)(intptr_t)ret;
}

static int case_records_beyond_first_batch(void)
{
	pthread_t copier, waiter, t[MANY_THREADS];
	int i, started = 0, failed = 0;
	void *ret;
	char go = 1;

	CHECK(!pin_map(&held) && !pin_map(&other) && !pin_map(&many), "pin and map three buffers");
	mprotect(held_page, page, PROT_NONE);
	atomic_store(&in_held_copy, 0);
	atomic_store(&jump_out, false);
	atomic_store(&many_copied, 0);
	atomic_store(&many_go, 0);
	CHECK(!pthread_create(&copier, NULL, held_copier, NULL), "start the copier");
	CHECK(wait_flag(&in_held_copy, 5), "the copier is inside its copy");
	for (i = 0; i < MANY_THREADS; i++)
		started += !pthread_create(&t[i], NULL, copy_and_stay, (void *)(intptr_t)i);
	for (i = 0; i < 5000 && atomic_load(&many_copied) < started; i++)
		usleep(1000);
	EXPECT(started == MANY_THREADS && atomic_load(&many_copied) == started,
	       "%d of %d threads started, %d copied", started, MANY_THREADS,
	       atomic_load(&many_copied));
	atomic_store(&unmap_done, 0);
	CHECK(!pthread_create(&waiter, NULL, unmapper, NULL), "start the unmapper");
	usleep(200 * 1000);
	EXPECT(!atomic_load(&unmap_done), "gdr_unmap did not wait for a copy in flight whose "
	       "record is older than %d others", started);
	CHECK(write(release_pipe[1], &go, 1) == 1, "release the held copy");
	pthread_join(copier, &ret);
	EXPECT_ERR((int)(intptr_t)ret, 0);
	pthread_join(waiter, NULL);
	EXPECT_ERR(unmap_ret, 0);
	atomic_store(&many_go, 1);
	for (i = 0; i < started; i++) {
		pthread_join(t[i], &ret);
		failed += ret || many.va[i] != (uint8_t)i;
	}
	EXPECT(!failed, "%d of %d threads' copies failed", failed, started);
	EXPECT(!memcmp(held.va, held_page, 64));
	EXPECT_ERR(gdr_unmap(g, held.mh, held.va, BUF), 0);
	EXPECT_ERR(gdr_unmap(g, many.mh, many.va, BUF), 0);
	unpin_free(&held);
	unpin_free(&other);
	unpin_free(&many);
	return 0;
}

/* ---- A fork while another thread is inside a copy ---- */

static struct gdr_inflight *_Atomic held_record;

/* held_copier, after a first copy that gives it a record to show. */
static void *showing_held_copier(void *arg)
{
	uint8_t b = 0;

	if (gdr_copy_to_mapping(held.mh, held.va + 256, &b, 1) == 0)
		atomic_store(&held_record, gdr_inflight_self);
	return held_copier(arg);
}

/* In the child: the held copier's thread is not here, so its record is neither used nor inside. */
static int child_of_fork_in_copy(void *arg)
{
	struct gdr_inflight *r = arg;
	unsigned long seq = atomic_load(&r->seq);

	EXPECT(!atomic_load(&r->in_use), "the record of a thread the child does not have is still "
	       "in use there");
	EXPECT(!(seq & 1), "the record of a thread the child does not have is still inside a copy "
	       "there (seq %lu): whichever thread takes it next would never leave its copies",
	       seq);
	EXPECT(atomic_load(&gdr_inflight_fence) ||
	       syscall(__NR_membarrier, MEMBARRIER_CMD_PRIVATE_EXPEDITED, 0, 0) == 0,
	       "in the fork child, copies neither fence nor does membarrier order them: %s",
	       test_strerror(errno));
	return test_status();
}

static int case_fork_during_copy(void)
{
	const struct test_child child = { .timeout_s = 10, .quick_exit = true };
	struct gdr_inflight *r;
	pthread_t copier;
	void *ret;
	char go = 1;

	CHECK(!pin_map(&held), "pin and map");
	mprotect(held_page, page, PROT_NONE);
	atomic_store(&in_held_copy, 0);
	atomic_store(&jump_out, false);
	atomic_store(&held_record, NULL);
	CHECK(!pthread_create(&copier, NULL, showing_held_copier, NULL), "start the copier");
	CHECK(wait_flag(&in_held_copy, 5), "the copier is inside its copy");
	r = atomic_load(&held_record);
	CHECK(r, "the copier's first copy failed");
	CHECK(atomic_load(&r->in_use) && (atomic_load(&r->seq) & 1),
	      "the held copier's record is in use and inside a copy");
	EXPECT(test_child_run(&child, child_of_fork_in_copy, r) == TEST_PASS, "%s",
	       test_reason());
	CHECK(write(release_pipe[1], &go, 1) == 1, "release the held copy");
	pthread_join(copier, &ret);
	EXPECT_ERR((int)(intptr_t)ret, 0);
	EXPECT(!memcmp(held.va, held_page, 64));
	EXPECT_ERR(gdr_unmap(g, held.mh, held.va, BUF), 0);
	unpin_free(&held);
	return 0;
}

/* ---- A handler's copy inside its thread's registration ---- */

static struct pinned reg;
static struct gdr_inflight *claimed_first, *handler_record;
static _Atomic int reg_handler_copied;

static void on_usr2_registering(int sig)
{
	uint8_t b[8] = { 31, 32, 33, 34, 35, 36, 37, 38 };

	(void)sig;
	if (gdr_copy_to_mapping(reg.mh, reg.va + 64, b, sizeof(b)) == 0)
		atomic_store(&reg_handler_copied, 1);
	handler_record = gdr_inflight_self;
}

/* The thread's first claim: a signal now, whose handler copies (and so claims one of its own). */
static void claimed(struct gdr_inflight *r)
{
	if (claimed_first)
		return;
	claimed_first = r;
	raise(SIGUSR2);
}

static void *registering_copier(void *arg)
{
	uint8_t b[8] = { 41, 42, 43, 44, 45, 46, 47, 48 };
	struct gdr_inflight **kept = arg;

	gdr_inflight_test_claimed = claimed;
	if (gdr_copy_to_mapping(reg.mh, reg.va, b, sizeof(b)))
		return (void *)1;
	gdr_inflight_test_claimed = NULL;
	*kept = gdr_inflight_self;
	return NULL;
}

static int case_handler_interrupts_registration(void)
{
	struct sigaction sa = { .sa_handler = on_usr2_registering };
	struct gdr_inflight *kept = NULL;
	pthread_t t;
	void *ret;

	CHECK(!pin_map(&reg), "pin and map");
	sigemptyset(&sa.sa_mask);
	CHECK(!sigaction(SIGUSR2, &sa, NULL), "sigaction");
	CHECK(!pthread_create(&t, NULL, registering_copier, &kept), "start the copier");
	pthread_join(t, &ret);
	gdr_inflight_test_claimed = NULL;
	EXPECT(!ret && !memcmp(reg.va, (uint8_t[]){ 41, 42, 43, 44, 45, 46, 47, 48 }, 8),
	       "the interrupted first copy failed");
	CHECK(claimed_first && atomic_load(&reg_handler_copied) && handler_record,
	      "the signal came inside the registration and its handler copied");
	EXPECT(reg.va[64] == 31 && reg.va[71] == 38);
	EXPECT(kept == handler_record,
	       "the thread kept record %p, its handler's copy registered %p: one stays claimed "
	       "with no thread to give it back", (void *)kept, (void *)handler_record);
	/* The thread has exited: whichever record it claimed, none is still in use. */
	EXPECT(!atomic_load(&claimed_first->in_use), "the record claimed first is still in use");
	EXPECT(!atomic_load(&handler_record->in_use), "the handler's record is still in use");
	EXPECT_ERR(gdr_unmap(g, reg.mh, reg.va, BUF), 0);
	unpin_free(&reg);
	return 0;
}

/* ---- A copy from a thread-exit destructor that runs after the library's ---- */

static pthread_key_t late_key;
static struct pinned late;
static struct gdr_inflight *late_first, *late_record;
static bool late_first_given_back, late_record_owned;
static int late_copy_ret = -1;

/* glibc runs destructors in key order, so this one after the library's hook (its key is older). */
static void late_destructor(void *arg)
{
	uint8_t b[8] = { 51, 52, 53, 54, 55, 56, 57, 58 };

	(void)arg;
	late_first_given_back = !atomic_load(&late_first->in_use);
	late_copy_ret = gdr_copy_to_mapping(late.mh, late.va + 128, b, sizeof(b));
	late_record = gdr_inflight_self;
	late_record_owned = late_record && atomic_load(&late_record->in_use);
}

static void *late_copier(void *arg)
{
	uint8_t b[8] = { 61, 62, 63, 64, 65, 66, 67, 68 };

	(void)arg;
	if (gdr_copy_to_mapping(late.mh, late.va, b, sizeof(b)))
		return (void *)1;
	late_first = gdr_inflight_self;
	pthread_setspecific(late_key, late_copier);	/* any value but NULL runs the destructor */
	return NULL;
}

static int case_copy_in_later_exit_destructor(void)
{
	pthread_t t;
	void *ret;

	CHECK(!pin_map(&late), "pin and map");
	CHECK(!pthread_key_create(&late_key, late_destructor), "pthread_key_create");
	CHECK(!pthread_create(&t, NULL, late_copier, NULL), "start the copier");
	pthread_join(t, &ret);
	pthread_key_delete(late_key);
	CHECK(!ret && late_first, "the thread's copy failed");
	CHECK(late_first_given_back,
	      "the library's exit hook had not run when the later key's destructor did: the case "
	      "tests nothing (destructor order)");
	EXPECT_ERR(late_copy_ret, 0);
	EXPECT(!memcmp(late.va + 128, (uint8_t[]){ 51, 52, 53, 54, 55, 56, 57, 58 }, 8),
	       "the destructor's copy did not arrive");
	EXPECT(late_record_owned,
	       "the destructor's copy went through record %p, which the exit hook had given back: "
	       "another thread could take it and announce its copies in the same record",
	       (void *)late_record);
	EXPECT(late_record && !atomic_load(&late_record->in_use),
	       "the record the destructor's copy took is still in use after its thread exited");
	EXPECT_ERR(gdr_unmap(g, late.mh, late.va, BUF), 0);
	unpin_free(&late);
	return 0;
}

static const struct test_case cases[] = {
	{ "handler_interrupts_first_copy", case_handler_interrupts_first_copy },
	{ "first_copy_takes_no_heap", case_first_copy_takes_no_heap },
	{ "handler_copy_during_unmap_wait", case_handler_copy_during_unmap_wait },
	{ "copy_left_by_longjmp", case_copy_left_by_longjmp },
	{ "handler_interrupts_registration", case_handler_interrupts_registration },
	{ "copy_in_later_exit_destructor", case_copy_in_later_exit_destructor },
	{ "own_copy_left_by_longjmp", case_own_copy_left_by_longjmp },
	{ "records_beyond_first_batch", case_records_beyond_first_batch },
	{ "fork_during_copy", case_fork_during_copy },
	{ NULL, NULL },
};

int main(int argc, char **argv)
{
	struct sigaction sa = { .sa_sigaction = on_segv, .sa_flags = SA_SIGINFO };
	int ret;

	page = sysconf(_SC_PAGESIZE);
	held_page = mmap(NULL, (size_t)page, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS,
			 -1, 0);
	if (held_page == MAP_FAILED || pipe(release_pipe))
		return TEST_FAIL;
	for (long i = 0; i < page; i++)
		held_page[i] = (uint8_t)(i * 13 + 5);
	sigemptyset(&sa.sa_mask);
	if (sigaction(SIGSEGV, &sa, NULL))
		return TEST_FAIL;
	/* The test backend, even where a real one would be picked (tests/unit/fake_registry.c). */
	setenv("GDRCOPY_BACKEND", "test", 1);
	setenv("GDRCOPY_ENABLE_LOGGING", "1", 1);
	setenv("GDRCOPY_LOG_LEVEL", "3", 1);	/* warnings: the slow wait's */
	g = gdr_open();
	if (!g) {
		printf("gdr_open failed\n");
		return TEST_FAIL;
	}
	ret = test_run(cases, argc, argv);
	gdr_close(g);
	return ret;
}
