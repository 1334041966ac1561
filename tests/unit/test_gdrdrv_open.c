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
	return expect_refusal("/dev/null", "GET_VERSION on /dev/null failed");
}

static int case_says_none_left(void)
{
	return expect_refusal("/nonexistent/gdrdrv", "no backend can map GPU memory");
}

static const struct test_case cases[] = {
	{ "default_path", case_default_path },
	{ "missing_node", case_missing_node },
	{ "not_gdrdrv", case_not_gdrdrv },
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
