/* SPDX-License-Identifier: MIT */
/*
 * On a machine with no GPU, the shipped library's gdr_open returns NULL and, with logging on, says
 * for each backend why it cannot work; forced and unknown backends behave as documented. Each
 * case runs in a child, since the library reads its logging variables once per process.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "gdrapi.h"
#include "harness.h"

/* Run gdr_open in a child with the given environment; return its stderr and whether it was NULL. */
static int open_in_child(const char *const env[], char *log, size_t len, int *got_null)
{
	int pipefd[2], status;
	size_t used = 0;
	ssize_t n;
	pid_t pid;

	if (pipe(pipefd))
		return errno;
	pid = fork();
	if (pid < 0)
		return errno;
	if (pid == 0) {
		gdr_t g;

		dup2(pipefd[1], 2);
		close(pipefd[0]);
		unsetenv("GDRCOPY_BACKEND");
		unsetenv("GDRCOPY_USE_DMABUF_MMAP");
		setenv("GDRCOPY_ENABLE_LOGGING", "1", 1);
		setenv("GDRCOPY_LOG_LEVEL", "2", 1);
		for (int i = 0; env[i]; i += 2)
			setenv(env[i], env[i + 1], 1);
		g = gdr_open();
		if (g) {
			gdr_close(g);
			_exit(3);
		}
		_exit(2);
	}
	close(pipefd[1]);
	while (used < len - 1 && (n = read(pipefd[0], log + used, len - 1 - used)) > 0)
		used += (size_t)n;
	log[used] = '\0';
	close(pipefd[0]);
	waitpid(pid, &status, 0);
	*got_null = WIFEXITED(status) && WEXITSTATUS(status) == 2;
	return 0;
}

/* The log has "backend NAME: unavailable: <reason>" with a non-empty reason. */
static int says_why(const char *log, const char *name)
{
	char key[64];
	const char *p;

	snprintf(key, sizeof(key), "backend %s: unavailable: ", name);
	p = strstr(log, key);
	return p && p[strlen(key)] && p[strlen(key)] != '\n';
}

int main(void)
{
	static const char *const none[] = { NULL };
	static const char *const forced_bogus[] = { "GDRCOPY_BACKEND", "bogus", NULL };
	static const char *const forced_gdrdrv[] = { "GDRCOPY_BACKEND", "gdrdrv", NULL };
	static const char *const dmabuf_only[] = { "GDRCOPY_USE_DMABUF_MMAP", "1", NULL };
	char log[8192];
	int null;

	if (!access("/dev/gdrdrv", F_OK) || !access("/dev/nvidia0", F_OK))
		test_skip_program("a GPU or /dev/gdrdrv is present: this test is for machines without one");

	EXPECT_ERR(open_in_child(none, log, sizeof(log), &null), 0);
	EXPECT(null);
	EXPECT(says_why(log, "gdrdrv"));
	EXPECT(says_why(log, "dmabuf"));
	EXPECT(says_why(log, "vulkan"));
	EXPECT(strstr(log, "ERR:  gdr_open: no backend") != NULL);
	/* Why the first name the library tries, the driver's SONAME, was not found. */
	EXPECT(strstr(log, "libcuda.so.1 not found: install the NVIDIA driver (libcuda.so.1: ") !=
	       NULL, "the reason does not quote dlopen's error for libcuda.so.1");
	printf("default:\n%s", log);

	EXPECT_ERR(open_in_child(forced_gdrdrv, log, sizeof(log), &null), 0);
	EXPECT(null);
	EXPECT(says_why(log, "gdrdrv"));
	EXPECT(!strstr(log, "backend vulkan") && !strstr(log, "backend dmabuf"));

	EXPECT_ERR(open_in_child(dmabuf_only, log, sizeof(log), &null), 0);
	EXPECT(null);
	EXPECT(says_why(log, "dmabuf"));
	EXPECT(!strstr(log, "backend gdrdrv") && !strstr(log, "backend vulkan"));

	EXPECT_ERR(open_in_child(forced_bogus, log, sizeof(log), &null), 0);
	EXPECT(null);
	EXPECT(strstr(log, "GDRCOPY_BACKEND=bogus: no such backend") != NULL);

	/* Nothing aborts on a NULL gdr_t. */
	EXPECT_ERR(gdr_close(NULL), EINVAL);
	{
		int major, minor;

		EXPECT_ERR(gdr_driver_get_version(NULL, &major, &minor), EINVAL);
	}
	return test_status();
}
