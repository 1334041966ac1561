/* SPDX-License-Identifier: MIT */
/* Case reporting for the copy and CPU tests: "pass|fail|skip NAME [reason]" lines. */
#ifndef GDR_TEST_COPY_UTIL_H
#define GDR_TEST_COPY_UTIL_H

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>

static int test_failures;

static void __attribute__((format(printf, 3, 4)))
test_report(const char *verdict, const char *name, const char *fmt, ...)
{
	const char *path = getenv("GDR_TEST_RESULTS");
	char reason[512] = "";
	FILE *f;

	if (fmt) {
		va_list ap;

		va_start(ap, fmt);
		vsnprintf(reason, sizeof(reason), fmt, ap);
		va_end(ap);
	}
	if (verdict[0] == 'f')
		test_failures++;
	printf("%s %s%s%s\n", verdict, name, reason[0] ? " " : "", reason);
	fflush(stdout);
	if (!path || !*path)
		return;
	f = fopen(path, "a");
	if (!f) {
		perror(path);
		exit(1);
	}
	fprintf(f, "%s %s%s%s\n", verdict, name, reason[0] ? " " : "", reason);
	fclose(f);
}

#endif
