/* SPDX-License-Identifier: MIT */
/*
 * Shared by the dma-buf backend's tests (tier 1 and tier 3): running against the simulated CUDA
 * driver (SIM_CUDA_DIR, set by the build, tier 1 only), cases in forked children that each set
 * their own environment (the library's logging and the simulator read theirs once per process,
 * and CUDA cannot be used across fork), one result line per case for the runner, descriptor
 * counting.
 */
#ifndef GDR_TEST_DMABUF_H
#define GDR_TEST_DMABUF_H

#include <errno.h>
#include <fcntl.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "check.h"
#include "proc_usage.h"

/*
 * Skip when the simulator is not built; otherwise make sure it is first on LD_LIBRARY_PATH,
 * which the dynamic loader reads only at exec, by exec'ing this program again.
 */
#ifdef SIM_CUDA_DIR
static inline void sim_setup(char **argv)
{
	const char *dir = SIM_CUDA_DIR;
	const char *old = getenv("LD_LIBRARY_PATH");
	char lib[4096], path[8192];

	snprintf(lib, sizeof(lib), "%s/libcuda.so.1", dir);
	if (access(lib, R_OK))
		SKIP("simulated CUDA driver not built: %s is missing (make sim-cuda)", lib);
	if (old && !strncmp(old, dir, strlen(dir)) &&
	    (old[strlen(dir)] == ':' || old[strlen(dir)] == '\0'))
		return;
	snprintf(path, sizeof(path), "%s%s%s", dir, old && *old ? ":" : "", old ? old : "");
	setenv("LD_LIBRARY_PATH", path, 1);
	execv("/proc/self/exe", argv);
	fprintf(stderr, "exec of /proc/self/exe failed: %s\n", strerror(errno));
	exit(TEST_FAIL);
}
#endif

/* "fail" lines reported by this process. */
static int report_failures;

/* One result line: "pass NAME" etc. to $GDR_TEST_RESULTS (and stdout, for people). */
static inline void report(const char *verdict, const char *name, const char *fmt, ...)
{
	const char *file = getenv("GDR_TEST_RESULTS");
	char detail[512] = "";
	va_list ap;

	if (fmt) {
		va_start(ap, fmt);
		vsnprintf(detail, sizeof(detail), fmt, ap);
		va_end(ap);
	}
	if (!strcmp(verdict, "fail"))
		report_failures++;
	printf("%s %s%s%s\n", verdict, name, *detail ? " " : "", detail);
	fflush(stdout);
	if (file && *file) {
		FILE *f = fopen(file, "a");

		if (f) {
			fprintf(f, "%s %s%s%s\n", verdict, name, *detail ? " " : "", detail);
			fclose(f);
		}
	}
}

/* Descriptors open in this process, not counting the one used to count them. */
static inline int fd_count(void)
{
	struct proc_usage u;

	proc_usage(&u);
	return u.fds;
}

/* env: NULL-terminated name/value pairs; a NULL value unsets the name. */
static inline void set_env(const char *const *env)
{
	for (int i = 0; env && env[i]; i += 2) {
		if (env[i + 1])
			setenv(env[i], env[i + 1], 1);
		else
			unsetenv(env[i]);
	}
}

/*
 * Run fn in a child with env set and its stderr in log (NUL-terminated, truncated to len).
 * Returns fn's exit status, or -signal if the child died of one.
 */
static inline int run_child(const char *const *env, int (*fn)(void *), void *arg, char *log,
			    size_t len)
{
	int pipefd[2], status;
	char chunk[4096];
	size_t used = 0;
	ssize_t n;
	pid_t pid;

	if (pipe(pipefd))
		return -1000;
	fflush(stdout);
	pid = fork();
	if (pid < 0)
		return -1000;
	if (pid == 0) {
		close(pipefd[0]);
		if (log)
			dup2(pipefd[1], 2);
		close(pipefd[1]);
		set_env(env);
		/* exit, not _exit: LeakSanitizer checks the child at exit. */
		exit(fn(arg));
	}
	close(pipefd[1]);
	/* Read to the end even when log is full, so the child never blocks on a full pipe. */
	while ((n = read(pipefd[0], chunk, sizeof(chunk))) > 0) {
		size_t take = log && used + (size_t)n < len ? (size_t)n : log ? len - 1 - used : 0;

		if (take)
			memcpy(log + used, chunk, take);
		used += take;
	}
	if (log)
		log[used] = '\0';
	close(pipefd[0]);
	if (waitpid(pid, &status, 0) < 0)
		return -1000;
	return WIFEXITED(status) ? WEXITSTATUS(status) : -WTERMSIG(status);
}

#endif
