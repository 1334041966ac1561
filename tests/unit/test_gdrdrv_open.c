/* SPDX-License-Identifier: MIT */
/*
 * With GDRCOPY_BACKEND=gdrdrv and no usable gdrdrv device, gdr_open returns NULL, says why in
 * the log, and leaves no file descriptor behind. Runs on any machine: GDRCOPY_GDRDRV_PATH points
 * the backend at a missing node and at /dev/null (a device that is not gdrdrv); the real
 * /dev/gdrdrv case runs where there is none.
 */
#include <dirent.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "gdrapi.h"

static FILE *results;
static int failed;

static void verdict(const char *kind, const char *name, const char *why)
{
	printf("%s %s%s%s\n", kind, name, why ? " " : "", why ? why : "");
	if (results)
		fprintf(results, "%s %s%s%s\n", kind, name, why ? " " : "", why ? why : "");
	if (!strcmp(kind, "fail"))
		failed = 1;
}

static int count_fds(void)
{
	DIR *d = opendir("/proc/self/fd");
	struct dirent *e;
	int n = 0;

	if (!d)
		return -1;
	while ((e = readdir(d)))
		n += e->d_name[0] != '.';
	closedir(d);
	return n;
}

/* gdr_open with the log of that call captured into log (NUL-terminated). */
static gdr_t open_capturing(char *log, size_t len)
{
	FILE *tmp = tmpfile();
	int saved = dup(STDERR_FILENO);
	size_t n = 0;
	gdr_t g;

	if (!tmp || saved < 0) {
		perror("test setup");
		exit(1);
	}
	fflush(stderr);
	dup2(fileno(tmp), STDERR_FILENO);
	g = gdr_open();
	fflush(stderr);
	dup2(saved, STDERR_FILENO);
	close(saved);
	rewind(tmp);
	n = fread(log, 1, len - 1, tmp);
	log[n] = '\0';
	fclose(tmp);
	fputs(log, stdout);
	return g;
}

/* gdr_open must fail, and its log must name the cause. */
static void expect_refusal(const char *name, const char *path, const char *reason)
{
	char log[8192], why[256];
	int before, after;
	gdr_t g;

	if (path)
		setenv("GDRCOPY_GDRDRV_PATH", path, 1);
	else
		unsetenv("GDRCOPY_GDRDRV_PATH");
	before = count_fds();
	g = open_capturing(log, sizeof(log));
	after = count_fds();
	if (g) {
		gdr_close(g);
		verdict("fail", name, "gdr_open succeeded");
	} else if (!strstr(log, reason)) {
		snprintf(why, sizeof(why), "the log does not say \"%s\"", reason);
		verdict("fail", name, why);
	} else if (before != after) {
		snprintf(why, sizeof(why), "%d file descriptors before gdr_open, %d after", before,
			 after);
		verdict("fail", name, why);
	} else {
		verdict("pass", name, NULL);
	}
}

int main(void)
{
	const char *results_path = getenv("GDR_TEST_RESULTS");

	if (results_path && *results_path)
		results = fopen(results_path, "a");
	/* Before the library's first message: it reads these once. */
	setenv("GDRCOPY_ENABLE_LOGGING", "1", 1);
	setenv("GDRCOPY_LOG_LEVEL", "1", 1);
	setenv("GDRCOPY_BACKEND", "gdrdrv", 1);

	if (access("/dev/gdrdrv", F_OK) == 0)
		verdict("skip", "default_path", "/dev/gdrdrv exists on this machine");
	else
		expect_refusal("default_path", NULL,
			       "no /dev/gdrdrv: load the gdrdrv kernel module (modprobe gdrdrv)");
	expect_refusal("missing_node", "/nonexistent/gdrdrv", "no /nonexistent/gdrdrv: load the "
		       "gdrdrv kernel module");
	expect_refusal("not_gdrdrv", "/dev/null", "GET_VERSION on /dev/null failed");
	expect_refusal("says_none_left", "/nonexistent/gdrdrv", "no backend can map GPU memory");

	if (results)
		fclose(results);
	return failed;
}
