/* SPDX-License-Identifier: MIT */
#include <errno.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/wait.h>
#include <unistd.h>

#include "fork_check.h"

#define CHILD_SECONDS 30
#define FILL 0x5a

static int say(char *why, size_t len, const char *fmt, ...) __attribute__((format(printf, 3, 4)));
static int say(char *why, size_t len, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(why, len, fmt, ap);
	va_end(ap);
	return 1;
}

static int untouched(const uint8_t *p, size_t n)
{
	for (size_t i = 0; i < n; i++)
		if (p[i] != FILL)
			return 0;
	return 1;
}

#define EXPECT_EINVAL(call) do { \
	int ret_ = (call); \
	if (ret_ != EINVAL) \
		return say(why, len, "%s returned %d in the child, want EINVAL", #call, ret_); \
} while (0)

/* The child's side; 0 or a reason. */
static int child_checks(const struct fork_check *fc, char *why, size_t len)
{
	uint8_t host[256], *own;
	gdr_info_t info;
	gdr_mh_t mh2 = { 0x77 };
	void *va = (void *)0x1;
	int v = 42, major = -1, minor = -1, flag = 42;

	/* The parent's mapping is not here: the child can put its own memory at that address. */
	own = mmap(fc->map, fc->map_size, PROT_READ | PROT_WRITE,
		   MAP_PRIVATE | MAP_ANONYMOUS | MAP_FIXED_NOREPLACE, -1, 0);
	if (own == MAP_FAILED)
		return say(why, len, "mmap at the parent's mapping address %p: %s (the mapping was "
			   "inherited?)", fc->map, strerror(errno));
	if (own != fc->map)
		return say(why, len, "mmap at %p gave %p", fc->map, (void *)own);
	memset(own, FILL, fc->map_size);
	memset(host, FILL, sizeof(host));

	EXPECT_EINVAL(gdr_get_info(fc->g, fc->mh, &info));
	EXPECT_EINVAL(gdr_copy_to_mapping(fc->mh, own, "parent", 6));
	EXPECT_EINVAL(gdr_copy_from_mapping(fc->mh, host, own, sizeof(host)));
	if (!untouched(own, fc->map_size) || !untouched(host, sizeof(host)))
		return say(why, len, "a refused copy wrote into the child's memory");
	EXPECT_EINVAL(gdr_unmap(fc->g, fc->mh, own, fc->map_size));
	if (!untouched(own, fc->map_size))
		return say(why, len, "gdr_unmap changed the child's memory at the parent's address");
	EXPECT_EINVAL(gdr_map(fc->g, fc->mh, &va, fc->map_size));
	EXPECT_EINVAL(gdr_get_callback_flag(fc->g, fc->mh, &flag));
	EXPECT_EINVAL(gdr_pin_buffer_v2(fc->g, fc->pin_addr, 65536, 0, &mh2));
	EXPECT_EINVAL(gdr_get_attribute(fc->g, GDR_ATTR_USE_PERSISTENT_MAPPING, &v));
	EXPECT_EINVAL(gdr_driver_get_version(fc->g, &major, &minor));
	EXPECT_EINVAL(gdr_unpin_buffer(fc->g, fc->mh));
	if (va != (void *)0x1 || flag != 42 || mh2.h != 0x77 || v != 42 || major != -1 ||
	    minor != -1)
		return say(why, len, "a refused call wrote its output");
	if (gdr_close(fc->g))
		return say(why, len, "gdr_close of the inherited gdr_t failed");
	if (!untouched(own, fc->map_size))
		return say(why, len, "gdr_close changed the child's memory at the parent's address");
	munmap(own, fc->map_size);
	return fc->child_own ? fc->child_own(why, len) : 0;
}

int fork_check_run(const struct fork_check *fc, char *why, size_t len)
{
	int pipefd[2], status;
	ssize_t n;
	pid_t pid;

	why[0] = '\0';
	if (pipe(pipefd))
		return say(why, len, "pipe: %s", strerror(errno));
	fflush(stdout);
	fflush(stderr);
	pid = fork();
	if (pid < 0)
		return say(why, len, "fork: %s", strerror(errno));
	if (pid == 0) {
		char msg[512] = "";
		int rc;

		close(pipefd[0]);
		alarm(CHILD_SECONDS);
		rc = child_checks(fc, msg, sizeof(msg));
		if (rc && write(pipefd[1], msg, strlen(msg)) < 0)
			rc = 2;
		/*
		 * _exit: exit would run the parent's atexit handlers here, and Mesa's joins
		 * threads that exist only in the parent (lavapipe crashes in pthread_join).
		 */
		_exit(rc);
	}
	close(pipefd[1]);
	n = read(pipefd[0], why, len - 1);
	why[n > 0 ? n : 0] = '\0';
	close(pipefd[0]);
	if (waitpid(pid, &status, 0) != pid)
		return say(why, len, "waitpid: %s", strerror(errno));
	if (WIFSIGNALED(status))
		return say(why, len, "the child died of signal %d%s", WTERMSIG(status),
			   WTERMSIG(status) == SIGALRM ? " (hung for 30 s)" : "");
	if (WEXITSTATUS(status))
		return why[0] ? 1 : say(why, len, "the child exited %d", WEXITSTATUS(status));
	return 0;
}
