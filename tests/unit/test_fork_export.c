/* SPDX-License-Identifier: MIT */
/*
 * A fork() by another thread inside the library's windows, where it has just got something from
 * a driver that fork children must not get, and has not yet made sure they will not:
 * - a pin's CUDA export: the descriptor must reach the child close-on-exec (or not at all),
 *   whatever flags the driver gave it, or a program the child executes holds a reference to the
 *   GPU memory for its lifetime. The simulated driver's export hook (simcuda.h) clears
 *   FD_CLOEXEC, as a driver that does not set it would, and stalls there. dmabuf's, which
 *   the library keeps, must not reach the child at all: it is registered for the fork handler
 *   to close before fork() may go on;
 * - a map, before MADV_DONTFORK: the child must not get the mapping (it would keep the GPU
 *   memory, and reach it). This program's madvise stalls before the library's.
 * Each stall lasts until another thread's fork() has returned, or STALL_MS when fork() waits
 * for the window to close, as it should. Both backends that export: vulkan
 * (cuMemExportToShareableHandle, on lavapipe) and dmabuf (cuMemGetHandleForAddressRange).
 * Then a fork from a signal handler on the exporting thread itself, which must not deadlock.
 */
#include <dlfcn.h>
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "cuda_vmm.h"
#include "fork_check.h"
#include "gdrapi.h"
#include "harness.h"
#include "simcuda.h"

#define MiB (1UL << 20)
/* Longer than fork() takes when nothing holds it up; shorter than the library lets it wait. */
#define STALL_MS 300

enum stage { IDLE, IN_WINDOW, FORK_CALLED, FORKED };

/* The window (main thread, stalled in it) and the forking thread; under lock. */
static struct {
	pthread_mutex_t lock;
	pthread_cond_t cond;
	enum stage stage;
	int fd;			/* the descriptor the export made, or -1 */
	bool fd_kept;		/* the library keeps it (dmabuf): the child must not have it */
	void *map;		/* the mapping being kept out of children, or NULL */
	int child_status;	/* the fork child's exit status */
} race = { .lock = PTHREAD_MUTEX_INITIALIZER, .cond = PTHREAD_COND_INITIALIZER, .fd = -1 };

/* Stall gdr_map's madvise(MADV_DONTFORK) (below). */
static _Atomic bool stall_madvise;
/* Stall the fstat of the export's descriptor that registers it for fork children (below). */
static _Atomic bool stall_fstat;

static void set_stage(enum stage s)
{
	race.stage = s;
	pthread_cond_broadcast(&race.cond);
}

/* The other thread has called fork(): wait until it returns, or STALL_MS while it waits. */
static void stall_until_forked(void)
{
	struct timespec until;

	pthread_mutex_lock(&race.lock);
	clock_gettime(CLOCK_REALTIME, &until);
	until.tv_nsec += STALL_MS * 1000000L;
	until.tv_sec += until.tv_nsec / 1000000000L;
	until.tv_nsec %= 1000000000L;
	while (race.stage < FORKED)
		if (pthread_cond_timedwait(&race.cond, &race.lock, &until) == ETIMEDOUT)
			break;
	pthread_mutex_unlock(&race.lock);
}

/* In the window: let the other thread fork, and wait until its fork() returns, or STALL_MS. */
static void stall_for_fork(void)
{
	pthread_mutex_lock(&race.lock);
	set_stage(IN_WINDOW);
	while (race.stage < FORK_CALLED)
		pthread_cond_wait(&race.cond, &race.lock);
	pthread_mutex_unlock(&race.lock);
	stall_until_forked();
}

static int stall_export(int fd)
{
	fcntl(fd, F_SETFD, 0);
	race.fd = fd;
	stall_for_fork();
	return fd;
}

/*
 * The library's madvise (this program's definition comes first): gdr_map marks its mapping
 * MADV_DONTFORK as soon as it has it; stall just before, while armed.
 */
int madvise(void *addr, size_t len, int advice)
{
	if (advice == MADV_DONTFORK && atomic_exchange(&stall_madvise, false)) {
		race.map = addr;
		stall_for_fork();
	}
	return (int)syscall(SYS_madvise, addr, len, advice);
}

/*
 * The library's fstat, which registers a descriptor it keeps for closing in fork children
 * (fork_fds.c): while armed, stall before the export's, so that a fork() the library lets go
 * on before the registration happens before it, deterministically.
 */
int fstat(int fd, struct stat *st)
{
	static int (*next)(int, struct stat *);

	if (fd >= 0 && fd == race.fd && atomic_exchange(&stall_fstat, false))
		stall_until_forked();
	if (!next)
		next = (int (*)(int, struct stat *))dlsym(RTLD_NEXT, "fstat");
	return next(fd, st);
}

/*
 * Exit 1 when the child has the export's descriptor open past exec, 3 when it has one the
 * library keeps (the fork handler closes those), 2 when it has the mapping.
 */
static void child_checks(void)
{
	long page = sysconf(_SC_PAGESIZE);
	int flags = race.fd >= 0 ? fcntl(race.fd, F_GETFD) : -1;
	unsigned char vec;

	if (flags >= 0 && !(flags & FD_CLOEXEC))
		_exit(1);
	if (flags >= 0 && race.fd_kept)
		_exit(3);
	if (race.map && !mincore((void *)((uintptr_t)race.map & ~(uintptr_t)(page - 1)), 1,
				 &vec))
		_exit(2);
	_exit(0);
}

static void *fork_in_window(void *arg)
{
	pid_t pid;

	(void)arg;
	pthread_mutex_lock(&race.lock);
	while (race.stage == IDLE)
		pthread_cond_wait(&race.cond, &race.lock);
	if (race.stage != IN_WINDOW) {	/* the call failed before its window */
		pthread_mutex_unlock(&race.lock);
		return NULL;
	}
	set_stage(FORK_CALLED);
	pthread_mutex_unlock(&race.lock);
	pid = fork();
	if (pid == 0)
		child_checks();
	pthread_mutex_lock(&race.lock);
	set_stage(FORKED);
	pthread_mutex_unlock(&race.lock);
	race.child_status = pid < 0 ? -1 : test_wait(pid);
	return NULL;
}

static int start_forker(pthread_t *forker)
{
	race.stage = IDLE;
	race.fd = -1;
	race.fd_kept = false;
	race.map = NULL;
	race.child_status = -1;
	CHECK(!pthread_create(forker, NULL, fork_in_window, NULL));
	return TEST_PASS;
}

/* After the call that ret says how it went: the thread has forked in its window. */
static int join_forker(pthread_t forker, int ret)
{
	pthread_mutex_lock(&race.lock);
	if (race.stage == IDLE)
		set_stage(FORKED);	/* no window: the thread ends without a fork */
	pthread_mutex_unlock(&race.lock);
	pthread_join(forker, NULL);
	CHECK_ERR(ret, 0);
	CHECK(race.stage == FORKED);
	return TEST_PASS;
}

/* Pin [addr, addr + size) through g while another thread forks during the export. */
static int pin_while_forking(gdr_t g, bool fd_kept, unsigned long addr, size_t size,
			     gdr_mh_t *mh)
{
	pthread_t forker;
	int ret;

	CHECK_PASS(start_forker(&forker));
	race.fd_kept = fd_kept;
	atomic_store(&stall_fstat, fd_kept);
	simcuda_set_export_hook(stall_export);
	ret = gdr_pin_buffer_v2(g, addr, size, 0, mh);
	simcuda_set_export_hook(NULL);
	atomic_store(&stall_fstat, false);
	CHECK_PASS(join_forker(forker, ret));
	EXPECT(race.child_status != 1, "the descriptor the export made (%d) was open in the fork "
	       "child without FD_CLOEXEC: a program the child executes keeps the GPU memory",
	       race.fd);
	EXPECT(race.child_status != 3, "the descriptor the export made (%d), which the library "
	       "keeps, was open in the fork child: it was registered for closing in children "
	       "after fork() went on, and the child keeps the pin", race.fd);
	EXPECT(race.child_status == 0 || race.child_status == 1 || race.child_status == 3,
	       "the fork child ended with status %d", race.child_status);
	return TEST_PASS;
}

/* Map mh while another thread forks before the mapping is kept from children. */
static int map_while_forking(gdr_t g, gdr_mh_t mh, size_t size)
{
	pthread_t forker;
	void *va;
	int ret;

	CHECK_PASS(start_forker(&forker));
	atomic_store(&stall_madvise, true);
	ret = gdr_map(g, mh, &va, size);
	atomic_store(&stall_madvise, false);
	CHECK_PASS(join_forker(forker, ret));
	EXPECT(race.child_status == 0, "the mapping at %p was in the fork child (child status "
	       "%d): the child keeps the GPU memory and reaches it", race.map, race.child_status);
	EXPECT_ERR(gdr_unmap(g, mh, va, size), 0);
	return TEST_PASS;
}

/*
 * Pin [addr, addr + size) through a gdr_t of backend while another thread forks during the
 * export; with map, then map it while another thread forks before the mapping is kept from
 * children (not under an emulator, which ignores MADV_DONTFORK: fork_check.h).
 */
static int pin_while_forking_in(const char *backend, bool fd_kept, unsigned long addr,
				size_t size, bool map)
{
	gdr_t g;
	gdr_mh_t mh;

	if (map)
		CHECK_PASS(fork_check_possible());
	setenv("GDRCOPY_BACKEND", backend, 1);
	g = gdr_open();
	CHECK(g, "gdr_open with GDRCOPY_BACKEND=%s failed", backend);
	CHECK_PASS(pin_while_forking(g, fd_kept, addr, size, &mh));
	if (map)
		CHECK_PASS(map_while_forking(g, mh, size));
	EXPECT_ERR(gdr_unpin_buffer(g, mh), 0);
	EXPECT_ERR(gdr_close(g), 0);
	return TEST_PASS;
}

static int vulkan_forking(bool map)
{
	struct test_vmm m;
	int ret;

	if (test_lavapipe_missing())
		return test_skip("%s", test_lavapipe_missing());
	CHECK_EQ(test_vmm_alloc(&m, 2 * MiB, 0, CU_MEM_HANDLE_TYPE_POSIX_FILE_DESCRIPTOR),
		 CUDA_SUCCESS);
	/* Its import takes the descriptor over: it is never registered (fork_fds.h). */
	ret = pin_while_forking_in("vulkan", false, m.ptr, 65536, map);
	test_vmm_free(&m);
	return ret;
}

static int dmabuf_forking(bool map)
{
	CUdeviceptr buf;
	int ret;

	CHECK_EQ(cuMemAlloc(&buf, 2 * MiB), CUDA_SUCCESS);
	ret = pin_while_forking_in("dmabuf", true, buf, 65536, map);
	cuMemFree(buf);
	return ret;
}

static int case_vulkan(void)
{
	return vulkan_forking(false);
}

static int case_vulkan_map(void)
{
	return vulkan_forking(true);
}

static int case_dmabuf(void)
{
	return dmabuf_forking(false);
}

static int case_dmabuf_map(void)
{
	return dmabuf_forking(true);
}

static volatile sig_atomic_t handler_forked, handler_errno;

/*
 * The child of the handler's fork forks again: no export is under way there, so that fork must
 * neither wait nor warn. Its exit status: 0, or 2 when its first fork() changed errno.
 */
static void fork_again_and_exit(int err)
{
	pid_t pid;

	if (err != EDOM)
		_exit(2);
	pid = fork();
	if (pid == 0)
		_exit(0);
	_exit(pid > 0 && waitpid(pid, NULL, 0) == pid ? 0 : 1);
}

/*
 * A signal handler that forks, on the thread that is inside the export; fork() must leave errno
 * as it was, though its wait timed out.
 */
static void fork_in_handler(int sig)
{
	int saved = errno, status;
	pid_t pid;

	(void)sig;
	errno = EDOM;
	pid = fork();
	if (pid == 0)
		fork_again_and_exit(errno);
	handler_errno = errno;
	if (pid > 0 && waitpid(pid, &status, 0) == pid)
		handler_forked = WIFEXITED(status) ? 1 + WEXITSTATUS(status) : 1 + 128;
	errno = saved;
}

/* A fork of this process's, which has nothing under way: it must neither wait nor warn. */
static int fork_quietly(void *arg)
{
	(void)arg;
	return TEST_PASS;
}

static int signal_during_export(int fd)
{
	raise(SIGUSR1);
	return fd;
}

/*
 * The export's own thread forks, from a signal handler: fork() must not wait for the export it
 * interrupted (it would wait forever), and the pin goes on. It waits out the bound and says so,
 * once: neither the child's next fork nor the parent's next one waits or warns again.
 */
static int case_signal_handler_fork(void)
{
	const struct test_child quick = { .timeout_s = 10, .quick_exit = true };
	struct sigaction sa = { .sa_handler = fork_in_handler }, old;
	const char *log, *later;
	CUdeviceptr buf;
	gdr_mh_t mh;
	gdr_t g;
	int ret;

	setenv("GDRCOPY_BACKEND", "dmabuf", 1);
	g = gdr_open();
	CHECK(g, "gdr_open with GDRCOPY_BACKEND=dmabuf failed");
	CHECK_EQ(cuMemAlloc(&buf, 2 * MiB), CUDA_SUCCESS);
	CHECK(!sigaction(SIGUSR1, &sa, &old));
	handler_forked = 0;
	simcuda_set_export_hook(signal_during_export);
	test_capture_begin();
	ret = gdr_pin_buffer_v2(g, buf, 65536, 0, &mh);
	log = test_capture_end();
	simcuda_set_export_hook(NULL);
	sigaction(SIGUSR1, &old, NULL);
	EXPECT_ERR(ret, 0);
	EXPECT(handler_forked, "the signal handler's fork did not return");
	EXPECT(handler_forked != 1 + 2, "errno after fork() in its child was not the one before");
	EXPECT(handler_forked == 1, "the child of the handler's fork: its own fork failed (status "
	       "%d)", handler_forked - 1);
	EXPECT(handler_errno == EDOM, "errno after the handler's fork(): %s",
	       test_strerror(handler_errno));
	log = strstr(log, "fork() waited 1 s for a CUDA export");
	EXPECT(log != NULL, "the log does not say that fork() waited");
	EXPECT(!log || !strstr(log + 1, "fork() waited"), "fork() said twice that it waited: the "
	       "handler's fork's child, which had nothing under way, waited too or said so");
	test_capture_begin();
	EXPECT(test_child_run(&quick, fork_quietly, NULL) == TEST_PASS, "%s", test_reason());
	later = test_capture_end();
	EXPECT(!strstr(later, "fork() waited"), "a later fork, with nothing under way, said that "
	       "it waited");
	if (!ret)
		EXPECT_ERR(gdr_unpin_buffer(g, mh), 0);
	cuMemFree(buf);
	EXPECT_ERR(gdr_close(g), 0);
	return TEST_PASS;
}

static const struct test_case cases[] = {
	{ "vulkan", case_vulkan },
	{ "vulkan_map", case_vulkan_map },
	{ "dmabuf", case_dmabuf },
	{ "dmabuf_map", case_dmabuf_map },
	{ "signal_handler_fork", case_signal_handler_fork },
	{ NULL, NULL },
};

int main(int argc, char **argv)
{
	/* Read once, at the first CUDA call: a driver new enough for dmabuf, which it supports. */
	setenv("GDRCOPY_SIM_CUDA_VERSION", "13030", 1);
	setenv("GDRCOPY_SIM_CUDA_ATTR", "124=1", 1);
	if (!test_lavapipe_missing())
		test_use_lavapipe();
	if (test_cuda_init()) {
		printf("simulated CUDA driver failed to start\n");
		return TEST_FAIL;
	}
	return test_run(cases, argc, argv);
}
