/* SPDX-License-Identifier: MIT */
/* What a test process holds, its stderr, and the children it runs cases in (see harness.h). */
#include <dirent.h>
#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/wait.h>
#include <unistd.h>

#include "harness.h"

static int count_entries(const char *dir)
{
	DIR *d = opendir(dir);
	struct dirent *e;
	int n = 0;

	if (!d)
		return -1;
	while ((e = readdir(d)))
		if (e->d_name[0] != '.')
			n++;
	closedir(d);
	return n;
}

void test_usage(struct test_usage *u)
{
	long size = 0, resident = -1;
	FILE *f;

	u->fds = count_entries("/proc/self/fd") - 1;	/* the directory's own */
	u->threads = count_entries("/proc/self/task");
	f = fopen("/proc/self/statm", "r");
	if (f) {
		if (fscanf(f, "%ld %ld", &size, &resident) != 2)
			resident = -1;
		fclose(f);
	}
	u->rss_kib = resident < 0 ? -1 : resident * (sysconf(_SC_PAGESIZE) / 1024);
}

int test_fd_count(void)
{
	struct test_usage u;

	test_usage(&u);
	return u.fds;
}

/*
 * ASan's quarantine keeps freed memory resident (LeakSanitizer checks for leaks there instead),
 * TSan's shadow and history grow with what a program touches, and an emulator's code cache
 * grows; under an emulator (qemu-user: GDR_TEST_EMULATOR, set by tests/cross) the threads are
 * its own too.
 */
#if defined(__SANITIZE_ADDRESS__) || defined(__SANITIZE_THREAD__)
#define TEST_SANITIZER_MEMORY 1
#elif defined(__has_feature)
#if __has_feature(address_sanitizer) || __has_feature(thread_sanitizer)
#define TEST_SANITIZER_MEMORY 1
#endif
#endif

bool test_rss_meaningful(void)
{
#ifdef TEST_SANITIZER_MEMORY
	return false;
#else
	return !getenv("GDR_TEST_EMULATOR");
#endif
}

bool test_threads_meaningful(void)
{
	return !getenv("GDR_TEST_EMULATOR");
}

static int saved_stderr = -1;
static FILE *capture_file;
static char captured[16384];

void test_capture_begin(void)
{
	fflush(stderr);
	capture_file = tmpfile();
	if (!capture_file)
		return;
	saved_stderr = dup(2);
	dup2(fileno(capture_file), 2);
}

const char *test_capture_end(void)
{
	size_t n;

	captured[0] = '\0';
	if (!capture_file)
		return captured;
	fflush(stderr);
	dup2(saved_stderr, 2);
	close(saved_stderr);
	saved_stderr = -1;
	rewind(capture_file);
	n = fread(captured, 1, sizeof(captured) - 1, capture_file);
	captured[n] = '\0';
	fclose(capture_file);
	capture_file = NULL;
	/* Shown too, so that a failing run's output explains itself. */
	fputs(captured, stderr);
	return captured;
}

pid_t test_fork(void)
{
	fflush(stdout);
	fflush(stderr);
	return fork();
}

int test_wait(pid_t pid)
{
	int status;

	while (waitpid(pid, &status, 0) < 0) {
		if (errno != EINTR)
			return -1;
	}
	if (WIFEXITED(status))
		return WEXITSTATUS(status);
	return 128 + WTERMSIG(status);
}

void test_set_env(const char *const *env)
{
	for (int i = 0; env && env[i]; i += 2) {
		if (env[i + 1])
			setenv(env[i], env[i + 1], 1);
		else
			unsetenv(env[i]);
	}
}

/* The child test_child_run waits for, killed (with its group, isolated) when it times out. */
static volatile pid_t timed_child;
static volatile sig_atomic_t timed_out;

static void on_alarm(int sig)
{
	(void)sig;
	timed_out = 1;
	if (timed_child)
		kill(timed_child, SIGKILL);
}

/* SIGKILL every process whose parent is this one: what a case left behind, reparented here. */
static void kill_children(void)
{
	struct dirent *d;
	DIR *proc;

	proc = opendir("/proc");
	if (!proc)
		return;
	while ((d = readdir(proc))) {
		char path[288], buf[512], *p;
		int pid = atoi(d->d_name), ppid;
		FILE *f;

		if (pid <= 0)
			continue;
		snprintf(path, sizeof(path), "/proc/%s/stat", d->d_name);
		f = fopen(path, "r");
		if (!f)
			continue;
		p = fgets(buf, sizeof(buf), f);
		fclose(f);
		/* "pid (comm) state ppid ...": comm may hold anything but ends at the last ')' */
		if (!p || !(p = strrchr(buf, ')')) || sscanf(p + 1, " %*c %d", &ppid) != 1)
			continue;
		if (ppid == getpid())
			kill(pid, SIGKILL);
	}
	closedir(proc);
}

/* Kill the case's group and its orphans, and reap them all; false if some will not die. */
static bool reap_group(pid_t pid)
{
	bool gone = true;

	kill(-pid, SIGKILL);
	kill_children();
	alarm(10);
	for (;;) {
		if (waitpid(-1, NULL, 0) > 0)
			continue;
		gone = errno != EINTR;
		break;
	}
	alarm(0);
	return gone;
}

static void child_main(const struct test_child *opts, int (*fn)(void *), void *arg, int out_fd,
		       int reason_fd)
{
	int status;

	if (opts->isolate)
		setpgid(0, 0);
	if (out_fd >= 0) {
		dup2(out_fd, 1);
		dup2(out_fd, 2);
		close(out_fd);
	}
	test_set_env(opts->env);
	test_forget();
	status = fn(arg);
	if (test_status() != TEST_PASS && status == TEST_PASS)
		status = TEST_FAIL;
	if (test_reason()[0] && write(reason_fd, test_reason(), strlen(test_reason())) < 0)
		status = TEST_FAIL;
	close(reason_fd);
	fflush(stdout);
	fflush(stderr);
	if (opts->quick_exit)
		_exit(status);
	exit(status);
}

/* What the last child recorded as its reason. */
static char child_reason[1024];

/* Read fd to its end into buf (NUL-terminated, truncated to len), so the writer never blocks. */
static void drain(int fd, char *buf, size_t len)
{
	char chunk[4096];
	size_t used = 0;
	ssize_t n;

	while ((n = read(fd, chunk, sizeof(chunk))) != 0) {
		size_t take = 0;

		if (n < 0) {
			if (errno == EINTR)
				continue;
			break;
		}
		if (buf && used + 1 < len)
			take = (size_t)n < len - 1 - used ? (size_t)n : len - 1 - used;
		if (take)
			memcpy(buf + used, chunk, take);
		used += take;
	}
	if (buf && len)
		buf[used] = '\0';
}

int test_child_exit(const struct test_child *opts, int (*fn)(void *), void *arg)
{
	struct sigaction sa = { .sa_handler = on_alarm }, old_sa;
	int out[2] = { -1, -1 }, why[2] = { -1, -1 }, status = 0, ret;
	pid_t pid;

	child_reason[0] = '\0';
	if (pipe(why) || (opts->output && pipe(out))) {
		test_fail("pipe: %s", strerror(errno));
		goto err_close;
	}
	if (opts->isolate)
		prctl(PR_SET_CHILD_SUBREAPER, 1);
	pid = test_fork();
	if (pid < 0) {
		test_fail("fork: %s", strerror(errno));
		goto err_close;
	}
	if (pid == 0) {
		close(why[0]);
		if (out[0] >= 0)
			close(out[0]);
		child_main(opts, fn, arg, out[1], why[1]);
	}
	if (opts->isolate)
		setpgid(pid, pid);
	close(why[1]);
	if (out[1] >= 0)
		close(out[1]);

	timed_child = opts->isolate ? -pid : pid;
	timed_out = 0;
	sigemptyset(&sa.sa_mask);
	sigaction(SIGALRM, &sa, &old_sa);
	alarm(opts->timeout_s);
	/* The output pipe ends when the child's last copy of it closes (or it is killed). */
	if (out[0] >= 0) {
		drain(out[0], opts->output, opts->output_len);
		close(out[0]);
	}
	while (waitpid(pid, &status, 0) < 0 && errno == EINTR)
		;
	alarm(0);
	timed_child = 0;
	drain(why[0], child_reason, sizeof(child_reason));
	close(why[0]);

	ret = WIFSIGNALED(status) ? 128 + WTERMSIG(status) : WEXITSTATUS(status);
	if (timed_out) {
		test_fail("timed out after %u s", opts->timeout_s);
		ret = -1;
	}
	/* Still under on_alarm, which only interrupts the reaping when it hangs. */
	if (opts->isolate && !reap_group(pid)) {
		test_fail("the case left processes that do not die");
		ret = -1;
	}
	sigaction(SIGALRM, &old_sa, NULL);
	return ret;

err_close:
	for (int i = 0; i < 2; i++) {
		if (why[i] >= 0)
			close(why[i]);
		if (out[i] >= 0)
			close(out[i]);
	}
	return -1;
}

int test_child_run(const struct test_child *opts, int (*fn)(void *), void *arg)
{
	int status = test_child_exit(opts, fn, arg);

	if (status < 0)
		return TEST_FAIL;
	if (status == TEST_PASS)
		return TEST_PASS;
	if (status == TEST_SKIP)
		return test_skip("%s", child_reason[0] ? child_reason : "skipped");
	if (status == TEST_FAIL)
		return test_fail("%s", child_reason);
	if (status > 128)
		return test_fail("killed by signal %d (%s)%s%s", status - 128,
				 strsignal(status - 128), child_reason[0] ? " after: " : "",
				 child_reason);
	return test_fail("exited %d%s%s", status, child_reason[0] ? ": " : "", child_reason);
}
