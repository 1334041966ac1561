/* SPDX-License-Identifier: MIT */
#include <dlfcn.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "proc_usage.h"
#include "simtest.h"

static char why[1024];

int simtest_why(const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(why, sizeof(why), fmt, ap);
	va_end(ap);
	return 1;
}

static void report(FILE *results, const char *verdict, const char *name, const char *detail)
{
	printf("%s %s%s%s\n", verdict, name, detail ? " " : "", detail ? detail : "");
	fflush(stdout);
	if (results) {
		fprintf(results, "%s %s%s%s\n", verdict, name, detail ? " " : "",
			detail ? detail : "");
		fflush(results);
	}
}

static bool selected(const char *name, int argc, char **argv)
{
	if (argc < 2)
		return true;
	for (int i = 1; i < argc; i++)
		if (!strcmp(argv[i], name))
			return true;
	return false;
}

int simtest_run(const struct simtest_case *cases, int argc, char **argv)
{
	const char *path = getenv("GDR_TEST_RESULTS");
	FILE *results = path && *path ? fopen(path, "a") : NULL;
	int failed = 0;

	for (const struct simtest_case *c = cases; c->name; c++) {
		int rc;

		if (!selected(c->name, argc, argv))
			continue;
		why[0] = '\0';
		rc = c->run();
		if (rc == 0) {
			report(results, "pass", c->name, NULL);
		} else if (rc == 77) {
			report(results, "skip", c->name, why[0] ? why : "skipped");
		} else {
			report(results, "fail", c->name, why[0] ? why : "failed");
			failed++;
		}
	}
	if (results)
		fclose(results);
	return failed ? 1 : 0;
}

const char *simtest_lavapipe_missing(void)
{
	const char *icd = getenv("GDR_TEST_LVP_ICD");
	void *lib;

	if (access(icd ? icd : SIMTEST_LVP_ICD, R_OK))
		return "no lavapipe ICD (" SIMTEST_LVP_ICD "): install mesa-vulkan-drivers";
	lib = dlopen("libvulkan.so.1", RTLD_NOW | RTLD_LOCAL);
	if (!lib)
		return "no Vulkan loader (libvulkan.so.1): install libvulkan1";
	dlclose(lib);
	return NULL;
}

void simtest_use_lavapipe(void)
{
	const char *icd = getenv("GDR_TEST_LVP_ICD");

	setenv("VK_DRIVER_FILES", icd ? icd : SIMTEST_LVP_ICD, 1);
	/* Older loaders read only the old name. */
	setenv("VK_ICD_FILENAMES", icd ? icd : SIMTEST_LVP_ICD, 1);
	setenv("GDRCOPY_BACKEND", "vulkan", 1);
	setenv("GDRCOPY_ENABLE_LOGGING", "1", 1);
	if (!getenv("GDRCOPY_LOG_LEVEL"))
		setenv("GDRCOPY_LOG_LEVEL", "3", 1);
}

int simtest_fd_count(void)
{
	struct proc_usage u;

	proc_usage(&u);
	return u.fds;
}

static int saved_stderr = -1;
static FILE *capture_file;
static char captured[16384];

void simtest_capture_begin(void)
{
	fflush(stderr);
	capture_file = tmpfile();
	if (!capture_file)
		return;
	saved_stderr = dup(2);
	dup2(fileno(capture_file), 2);
}

const char *simtest_capture_end(void)
{
	size_t n = 0;

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
	/* Show it too, so a failing run's output explains itself. */
	fputs(captured, stderr);
	return captured;
}
