/* SPDX-License-Identifier: MIT */
/*
 * With GDRCOPY_BACKEND=gdrdrv and no usable gdrdrv device, gdr_open returns NULL, says why in
 * the log, and leaves no file descriptor behind. Runs on any machine: GDRCOPY_GDRDRV_PATH points
 * the backend at a missing node and at /dev/null (a device that is not gdrdrv); the real
 * /dev/gdrdrv case runs where there is none.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "gdrapi.h"
#include "harness.h"

/* gdr_open must fail, say why in its log, and leave no descriptor behind. */
static int expect_refusal(const char *path, const char *reason)
{
	const char *log;
	int before, after;
	gdr_t g;

	if (path)
		setenv("GDRCOPY_GDRDRV_PATH", path, 1);
	else
		unsetenv("GDRCOPY_GDRDRV_PATH");
	before = test_fd_count();
	test_capture_begin();
	g = gdr_open();
	log = test_capture_end();
	after = test_fd_count();
	if (g)
		gdr_close(g);
	CHECK(!g, "gdr_open succeeded");
	CHECK(strstr(log, reason), "the log does not say \"%s\"", reason);
	CHECK(before == after, "%d file descriptors before gdr_open, %d after", before, after);
	return TEST_PASS;
}

static int case_default_path(void)
{
	if (!access("/dev/gdrdrv", F_OK))
		return test_skip("/dev/gdrdrv exists on this machine");
	return expect_refusal(NULL, "no /dev/gdrdrv: load the gdrdrv kernel module (modprobe gdrdrv)");
}

static int case_missing_node(void)
{
	return expect_refusal("/nonexistent/gdrdrv",
			      "no /nonexistent/gdrdrv: load the gdrdrv kernel module");
}

static int case_not_gdrdrv(void)
{
	return expect_refusal("/dev/null", "GET_VERSION on /dev/null failed") ||
	       expect_refusal("/dev/null", "check which module owns /dev/null (lsmod | grep "
			      "gdrdrv) and install gdrdrv 2.6, or use another backend");
}

/*
 * A node that exists but that this user may not open: what to do about it. Root may open a file
 * of mode 0, so as root the open runs in a child that became nobody (65534) first.
 */
static int case_not_permitted(void)
{
	static const char reason[] = "Permission denied: run as a user who may open it, or load "
				     "gdrdrv with dev_mode=0666";
	char path[] = "/tmp/gdrdrv-unreadable-XXXXXX";
	int fd = mkstemp(path), ret, status;
	pid_t pid;

	CHECK(fd >= 0, "mkstemp: %s", strerror(errno));
	close(fd);
	chmod(path, 0);
	if (geteuid() != 0) {
		ret = expect_refusal(path, reason);
		unlink(path);
		return ret;
	}
	pid = fork();
	if (pid == 0) {
		if (setgid(65534) || setuid(65534))
			_exit(99);
		_exit(expect_refusal(path, reason));
	}
	ret = pid > 0 && waitpid(pid, &status, 0) == pid ? status : -1;
	unlink(path);
	CHECK(pid > 0, "fork: %s", strerror(errno));
	if (WIFEXITED(ret) && WEXITSTATUS(ret) == 99)
		return test_skip("root here cannot become nobody (setuid 65534 refused: no "
				 "CAP_SETUID?), and root may open a file of mode 0");
	CHECK(WIFEXITED(ret) && WEXITSTATUS(ret) == TEST_PASS,
	      "the child that opened %s as nobody failed (status %#x; its reason above)", path,
	      ret);
	return TEST_PASS;
}

static int case_says_none_left(void)
{
	return expect_refusal("/nonexistent/gdrdrv", "no backend can map GPU memory");
}

static const struct test_case cases[] = {
	{ "default_path", case_default_path },
	{ "missing_node", case_missing_node },
	{ "not_gdrdrv", case_not_gdrdrv },
	{ "not_permitted", case_not_permitted },
	{ "says_none_left", case_says_none_left },
	{ NULL, NULL },
};

int main(int argc, char **argv)
{
	/* Before the library's first message: it reads these once. */
	setenv("GDRCOPY_ENABLE_LOGGING", "1", 1);
	setenv("GDRCOPY_LOG_LEVEL", "1", 1);
	setenv("GDRCOPY_BACKEND", "gdrdrv", 1);
	return test_run(cases, argc, argv);
}
