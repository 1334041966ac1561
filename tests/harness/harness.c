/* SPDX-License-Identifier: MIT */
/* Checks, reasons, case tables and result lines (see harness.h). */
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "harness.h"

/* The current case's reason: its first failure, or why it skips. */
static char reason[1024];
/* Failures recorded by checks since the current case began (or the program, outside cases). */
static int recorded;
/* Whether the program has failed: a case reported "fail", or a check failed outside cases. */
static bool program_failed;

static void set_reason(const char *fmt, va_list ap)
{
	vsnprintf(reason, sizeof(reason), fmt, ap);
}

int test_fail(const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	set_reason(fmt, ap);
	va_end(ap);
	return TEST_FAIL;
}

int test_skip(const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	set_reason(fmt, ap);
	va_end(ap);
	return TEST_SKIP;
}

const char *test_reason(void)
{
	return reason;
}

int test_failures(void)
{
	return recorded;
}

void test_skip_program(const char *fmt, ...)
{
	va_list ap;

	fflush(stderr);
	va_start(ap, fmt);
	vprintf(fmt, ap);
	va_end(ap);
	putchar('\n');
	fflush(stdout);
	exit(TEST_SKIP);
}

/* Every failure goes to stderr; the first of a case is also its reason. */
static void record(const char *file, int line, const char *fmt, va_list ap)
{
	char what[768];

	vsnprintf(what, sizeof(what), fmt, ap);
	fprintf(stderr, "%s:%d: %s\n", file, line, what);
	fflush(stderr);
	if (!recorded++)
		snprintf(reason, sizeof(reason), "%s:%d: %s", file, line, what);
}

void test_failed_at(const char *file, int line, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	record(file, line, fmt, ap);
	va_end(ap);
}

static void record_expr(const char *file, int line, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));
static void record_expr(const char *file, int line, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	record(file, line, fmt, ap);
	va_end(ap);
}

void test_check_failed(const char *file, int line, const char *expr, const char *fmt, ...)
{
	va_list ap;

	if (!fmt[1]) {
		record_expr(file, line, "%s", expr);
		return;
	}
	va_start(ap, fmt);
	record(file, line, fmt + 1, ap);
	va_end(ap);
}

const char *test_strerror(int err)
{
	/* The kernel's ENOTSUPP leaks to user space from some drivers: name it. */
	if (err == 524)
		return "ENOTSUPP";
	return strerror(err);
}

static void write_line(FILE *f, const char *verdict, const char *name, const char *detail)
{
	fprintf(f, "%s %s%s%s\n", verdict, name, *detail ? " " : "", detail);
	fflush(f);
}

static void vreport(const char *verdict, const char *name, const char *fmt, va_list ap)
{
	const char *path = getenv("GDR_TEST_RESULTS");
	char detail[1024] = "";

	if (fmt)
		vsnprintf(detail, sizeof(detail), fmt, ap);
	if (!strcmp(verdict, "fail"))
		program_failed = true;
	write_line(stdout, verdict, name, detail);
	if (path && *path) {
		FILE *f = fopen(path, "a");

		if (!f) {
			perror(path);
			exit(TEST_FAIL);
		}
		write_line(f, verdict, name, detail);
		fclose(f);
	}
}

void test_report(const char *verdict, const char *name, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vreport(verdict, name, fmt, ap);
	va_end(ap);
}

static void report_reason(const char *verdict, const char *name, const char *fallback)
{
	test_report(verdict, name, "%s", reason[0] ? reason : fallback);
}

int test_run_case(const struct test_case *c)
{
	int status;

	reason[0] = '\0';
	recorded = 0;
	status = c->run();
	/* A case that goes on after an EXPECT failed has failed all the same. */
	if (recorded && status != TEST_SKIP)
		status = TEST_FAIL;
	if (status == TEST_PASS)
		test_report("pass", c->name, NULL);
	else if (status == TEST_SKIP)
		report_reason("skip", c->name, "skipped");
	else
		report_reason("fail", c->name, "failed");
	/* The reason was the case's. */
	reason[0] = '\0';
	recorded = 0;
	return status == TEST_PASS || status == TEST_SKIP ? status : TEST_FAIL;
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

int test_run(const struct test_case *cases, int argc, char **argv)
{
	setvbuf(stdout, NULL, _IOLBF, 0);
	if (argc == 2 && !strcmp(argv[1], "--list")) {
		for (const struct test_case *c = cases; c->name; c++)
			printf("%s\n", c->name);
		return TEST_PASS;
	}
	for (const struct test_case *c = cases; c->name; c++)
		if (selected(c->name, argc, argv))
			test_run_case(c);
	return test_status();
}

void test_forget(void)
{
	reason[0] = '\0';
	recorded = 0;
	program_failed = false;
}

int test_status(void)
{
	return program_failed || recorded ? TEST_FAIL : TEST_PASS;
}
