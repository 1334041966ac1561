/* SPDX-License-Identifier: MIT */
/*
 * gdr_close of a mapped pin whose unmap fails: the mapping stays (logged), the pin is released
 * all the same. The failed unmap gives the mapping back to copies, as a failed gdr_unmap must;
 * gdr_close then takes it away again before the unpin, and must wait, as every unmap does, for
 * the copies that found it meanwhile: they would otherwise go on through a mapping of memory
 * that is no longer pinned (src/inflight.h).
 *
 * The copy is made right when the mapping comes back (a test hook in the handle table, run on
 * the closing thread) and held open: its host buffer is a PROT_NONE page, and the copier's
 * SIGSEGV handler stays there, watching the fake backend's pin count, until the pin is released
 * or HOLD_MS have passed.
 */
#include <errno.h>
#include <pthread.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdlib.h>
#include <sys/mman.h>
#include <time.h>
#include <unistd.h>

#include "fake_gpu.h"
#include "gdrapi.h"
#include "handle.h"
#include "harness.h"

#define BUF 65536
/* Far longer than gdr_close takes to unpin when it does not wait. */
#define HOLD_MS 300

static long page;
static uint8_t *held_page;		/* the held copy's host buffer */
static gdr_mh_t mh;
static uint8_t *map;
static int pins_before_close;
static atomic_int go, in_copy, unpinned_under_copy;

static void sleep_ms(long ms)
{
	struct timespec t = { .tv_sec = ms / 1000, .tv_nsec = ms % 1000 * 1000000L };

	nanosleep(&t, NULL);
}

static void on_segv(int sig, siginfo_t *info, void *uc)
{
	(void)sig, (void)uc;
	if ((uint8_t *)info->si_addr < held_page || (uint8_t *)info->si_addr >= held_page + page)
		abort();
	atomic_store(&in_copy, 1);
	for (int ms = 0; ms < HOLD_MS; ms++) {
		if (__atomic_load_n(&fake_backend_pins, __ATOMIC_RELAXED) < pins_before_close) {
			atomic_store(&unpinned_under_copy, 1);
			break;
		}
		sleep_ms(1);
	}
	mprotect(held_page, page, PROT_READ | PROT_WRITE);
}

static void *copier(void *arg)
{
	(void)arg;
	while (!atomic_load(&go))
		sleep_ms(1);
	return (void *)(intptr_t)gdr_copy_to_mapping(mh, map, held_page, 64);
}

/* On the closing thread, as the failed unmap gives the mapping back: a copy finds it now. */
static void copy_when_restored(const struct gdr_memh *m)
{
	if (m->mapping_type == GDR_MAPPING_TYPE_NONE)
		return;
	gdr_handle_test_published = NULL;
	atomic_store(&go, 1);
	for (int ms = 0; ms < 2000 && !atomic_load(&in_copy); ms++)
		sleep_ms(1);
}

int main(void)
{
	struct sigaction sa = { .sa_sigaction = on_segv, .sa_flags = SA_SIGINFO };
	pthread_t t;
	void *copy_ret;
	uint8_t *gpu;
	gdr_t g;

	page = sysconf(_SC_PAGESIZE);
	/* Readable first, then not: valgrind takes a page mapped PROT_NONE for no memory at all. */
	held_page = mmap(NULL, (size_t)page, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS,
			 -1, 0);
	sigemptyset(&sa.sa_mask);
	CHECK(held_page != MAP_FAILED && !mprotect(held_page, page, PROT_NONE) &&
	      !sigaction(SIGSEGV, &sa, NULL), "set up the held page");
	setenv("GDRCOPY_BACKEND", "test", 1);
	gpu = fake_gpu_alloc(BUF);
	g = gdr_open();
	CHECK(gpu && g, "open the test backend");
	CHECK_OK(gdr_pin_buffer(g, (unsigned long)gpu, BUF, 0, 0, &mh));
	CHECK_OK(gdr_map(g, mh, (void **)&map, BUF));
	CHECK(!pthread_create(&t, NULL, copier, NULL), "pthread_create failed");

	pins_before_close = __atomic_load_n(&fake_backend_pins, __ATOMIC_RELAXED);
	fake_backend_fail_unmap = EIO;
	gdr_handle_test_published = copy_when_restored;
	EXPECT_ERR(gdr_close(g), EIO);
	gdr_handle_test_published = NULL;
	fake_backend_fail_unmap = 0;
	pthread_join(t, &copy_ret);
	EXPECT(atomic_load(&in_copy), "no copy found the mapping the failed unmap gave back");
	EXPECT(!atomic_load(&unpinned_under_copy), "gdr_close released the pin while a copy that "
	       "found its mapping was still copying through it");
	EXPECT_ERR((int)(intptr_t)copy_ret, 0);
	EXPECT(__atomic_load_n(&fake_backend_pins, __ATOMIC_RELAXED) == pins_before_close - 1,
	       "the pin was not released");
	munmap(map, BUF);
	fake_gpu_free(gpu);
	return test_status();
}
