/* SPDX-License-Identifier: MIT */
/*
 * A fork() by another thread while a pin's CUDA export is under way: the descriptor the driver
 * just handed back must reach the child close-on-exec (or not at all), whatever flags the driver
 * gave it, or a program the child executes holds a reference to the GPU memory for its lifetime.
 * The simulated driver's export hook (simcuda.h) clears FD_CLOEXEC, as a driver that does not set
 * it would, and stalls until another thread's fork() has returned, or for STALL_MS when fork()
 * waits for the export to finish, as it should. Each backend that exports: vulkan
 * (cuMemExportToShareableHandle, on lavapipe) and dmabuf (cuMemGetHandleForAddressRange).
 * Then a fork from a signal handler on the exporting thread itself, which must not deadlock.
 */
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "cuda_vmm.h"
#include "gdrapi.h"
#include "harness.h"
#include "simcuda.h"

#define MiB (1UL << 20)
/* Longer than fork() takes when nothing holds it up; shorter than the library lets it wait. */
#define STALL_MS 300

enum stage { IDLE, EXPORTING, FORK_CALLED, FORKED };

/* The export (main thread, in the hook) and the forking thread; under lock. */
static struct {
	pthread_mutex_t lock;
	pthread_cond_t cond;
	enum stage stage;
	int fd;			/* the descriptor the export made */
	int child_status;	/* the fork child's exit status */
} race = { .lock = PTHREAD_MUTEX_INITIALIZER, .cond = PTHREAD_COND_INITIALIZER, .fd = -1 };

static void set_stage(enum stage s)
{
	race.stage = s;
	pthread_cond_broadcast(&race.cond);
}

static int stall_export(int fd)
{
	struct timespec until;

	fcntl(fd, F_SETFD, 0);
	pthread_mutex_lock(&race.lock);
	race.fd = fd;
	set_stage(EXPORTING);
	while (race.stage < FORK_CALLED)
		pthread_cond_wait(&race.cond, &race.lock);
	clock_gettime(CLOCK_REALTIME, &until);
	until.tv_nsec += STALL_MS * 1000000L;
	until.tv_sec += until.tv_nsec / 1000000000L;
	until.tv_nsec %= 1000000000L;
	while (race.stage < FORKED)
		if (pthread_cond_timedwait(&race.cond, &race.lock, &until) == ETIMEDOUT)
			break;
	pthread_mutex_unlock(&race.lock);
	return fd;
}

/* Exit 1 when the export's descriptor is open and would outlive exec. */
static void child_checks_fd(void)
{
	int flags = fcntl(race.fd, F_GETFD);

	_exit(flags >= 0 && !(flags & FD_CLOEXEC) ? 1 : 0);
}

static void *fork_during_export(void *arg)
{
	pid_t pid;

	(void)arg;
	pthread_mutex_lock(&race.lock);
	while (race.stage == IDLE)
		pthread_cond_wait(&race.cond, &race.lock);
	if (race.stage != EXPORTING) {	/* the pin failed before it exported */
		pthread_mutex_unlock(&race.lock);
		return NULL;
	}
	set_stage(FORK_CALLED);
	pthread_mutex_unlock(&race.lock);
	pid = fork();
	if (pid == 0)
		child_checks_fd();
	pthread_mutex_lock(&race.lock);
	set_stage(FORKED);
	pthread_mutex_unlock(&race.lock);
	race.child_status = pid < 0 ? -1 : test_wait(pid);
	return NULL;
}

/* Pin [addr, addr + size) through a gdr_t of backend while another thread forks. */
static int pin_while_forking(const char *backend, unsigned long addr, size_t size)
{
	pthread_t forker;
	gdr_t g;
	gdr_mh_t mh;
	int ret;

	setenv("GDRCOPY_BACKEND", backend, 1);
	g = gdr_open();
	CHECK(g, "gdr_open with GDRCOPY_BACKEND=%s failed", backend);
	race.stage = IDLE;
	race.fd = -1;
	CHECK(!pthread_create(&forker, NULL, fork_during_export, NULL));
	simcuda_set_export_hook(stall_export);
	ret = gdr_pin_buffer_v2(g, addr, size, 0, &mh);
	simcuda_set_export_hook(NULL);
	pthread_mutex_lock(&race.lock);
	if (race.stage == IDLE)
		set_stage(FORKED);	/* no export: the thread ends without a fork */
	pthread_mutex_unlock(&race.lock);
	pthread_join(forker, NULL);
	CHECK_ERR(ret, 0);
	EXPECT(race.stage == FORKED);
	EXPECT(race.child_status == 0, "the descriptor the export made (%d) was open in the fork "
	       "child without FD_CLOEXEC (child status %d): a program the child executes keeps "
	       "the GPU memory", race.fd, race.child_status);
	EXPECT_ERR(gdr_unpin_buffer(g, mh), 0);
	EXPECT_ERR(gdr_close(g), 0);
	return TEST_PASS;
}

static int case_vulkan(void)
{
	struct test_vmm m;
	int ret;

	if (test_lavapipe_missing())
		return test_skip("%s", test_lavapipe_missing());
	CHECK_EQ(test_vmm_alloc(&m, 2 * MiB, 0, CU_MEM_HANDLE_TYPE_POSIX_FILE_DESCRIPTOR),
		 CUDA_SUCCESS);
	ret = pin_while_forking("vulkan", m.ptr, 65536);
	test_vmm_free(&m);
	return ret;
}

static int case_dmabuf(void)
{
	CUdeviceptr buf;
	int ret;

	CHECK_EQ(cuMemAlloc(&buf, 2 * MiB), CUDA_SUCCESS);
	ret = pin_while_forking("dmabuf", buf, 65536);
	cuMemFree(buf);
	return ret;
}

static volatile sig_atomic_t handler_forked;

/* A signal handler that forks, on the thread that is inside the export. */
static void fork_in_handler(int sig)
{
	pid_t pid = fork();

	(void)sig;
	if (pid == 0)
		_exit(0);
	if (pid > 0 && waitpid(pid, NULL, 0) == pid)
		handler_forked = 1;
}

static int signal_during_export(int fd)
{
	raise(SIGUSR1);
	return fd;
}

/*
 * The export's own thread forks, from a signal handler: fork() must not wait for the export it
 * interrupted (it would wait forever), and the pin goes on. It waits out the bound and says so.
 */
static int case_signal_handler_fork(void)
{
	struct sigaction sa = { .sa_handler = fork_in_handler }, old;
	const char *log;
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
	EXPECT(strstr(log, "fork() waited 1 s for a CUDA export") != NULL,
	       "the log does not say that fork() waited: %s", log);
	if (!ret)
		EXPECT_ERR(gdr_unpin_buffer(g, mh), 0);
	cuMemFree(buf);
	EXPECT_ERR(gdr_close(g), 0);
	return TEST_PASS;
}

static const struct test_case cases[] = {
	{ "vulkan", case_vulkan },
	{ "dmabuf", case_dmabuf },
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
