/* SPDX-License-Identifier: MIT */
/* Minimal assertions for the test programs: report every failed check, exit 1 at the end. */
#ifndef GDR_TEST_CHECK_H
#define GDR_TEST_CHECK_H

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define TEST_PASS 0
#define TEST_FAIL 1
#define TEST_SKIP 77

static int check_failures;

#define CHECK(cond) \
	do { \
		if (!(cond)) { \
			fprintf(stderr, "%s:%d: check failed: %s\n", __FILE__, __LINE__, #cond); \
			check_failures++; \
		} \
	} while (0)

/* expr must return exactly want (0 or a positive errno). */
#define CHECK_RET(expr, want) \
	do { \
		int check_got_ = (expr); \
		if (check_got_ != (want)) { \
			fprintf(stderr, "%s:%d: %s returned %d (%s), expected %d (%s)\n", __FILE__, \
				__LINE__, #expr, check_got_, strerror(check_got_), (want), \
				strerror(want)); \
			check_failures++; \
		} \
	} while (0)

static inline int check_result(const char *name)
{
	if (check_failures) {
		fprintf(stderr, "%s: %d check(s) failed\n", name, check_failures);
		return TEST_FAIL;
	}
	printf("%s: all checks passed\n", name);
	return TEST_PASS;
}

#define SKIP(...) \
	do { \
		printf(__VA_ARGS__); \
		printf("\n"); \
		exit(TEST_SKIP); \
	} while (0)

#endif
