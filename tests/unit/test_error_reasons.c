/* SPDX-License-Identifier: MIT */
/*
 * gdr_ext_take_errors, through the shipped shared library as a binding uses it: the error-level
 * reasons of the calling thread's failed calls, kept with logging off, one per line, oldest
 * first, truncated to the caller's buffer, forgotten once taken, and never another thread's.
 */
#include <errno.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "gdrapi.h"
#include "gdrapi_ext.h"
#include "harness.h"

/* The reason a gdr_map_v2 with these unknown flags gives, in a static buffer. */
static const char *map_reason(int flags)
{
	static char reason[160];

	snprintf(reason, sizeof(reason), "gdr_map_v2: unknown flags %d; the flags are one value, 0 "
		 "(GDR_MAP_FLAG_DEFAULT) to 3 (GDR_MAP_FLAG_REQ_DEVICE_MAPPING)", flags);
	return reason;
}

/* A call that fails with EINVAL and logs map_reason(flags) at error level. */
static int fail_map(int flags)
{
	void *va = NULL;
	gdr_mh_t none = { 0 };

	return gdr_map_v2(NULL, none, &va, 1, flags);
}

static void *other_thread(void *arg)
{
	char buf[GDR_EXT_ERRORS_MAX];

	(void)arg;
	/* The main thread's reason is not ours to see. */
	if (gdr_ext_take_errors(buf, sizeof(buf)) != 0)
		return "another thread's reason was visible";
	if (fail_map(7) != EINVAL)
		return "gdr_map_v2 with flags 7 did not fail with EINVAL";
	if (gdr_ext_take_errors(buf, sizeof(buf)) == 0 || !strstr(buf, "unknown flags 7"))
		return "this thread's own reason was missing";
	return NULL;
}

int main(void)
{
	char buf[GDR_EXT_ERRORS_MAX], two[GDR_EXT_ERRORS_MAX], small[8];
	const char *thread_err;
	pthread_t t;
	size_t n, total = 0;
	int lines = 0;

	unsetenv("GDRCOPY_ENABLE_LOGGING");

	memset(buf, 'x', sizeof(buf));
	EXPECT(gdr_ext_take_errors(buf, sizeof(buf)) == 0);
	EXPECT(buf[0] == '\0');

	/* Kept with logging off, then forgotten once taken. */
	EXPECT_ERR(fail_map(99), EINVAL);
	n = gdr_ext_take_errors(buf, sizeof(buf));
	EXPECT(n == strlen(buf));
	EXPECT(!strcmp(buf, map_reason(99)), "took '%s'", buf);
	EXPECT(gdr_ext_take_errors(buf, sizeof(buf)) == 0 && buf[0] == '\0');

	/* Two failures: two lines, oldest first. */
	EXPECT_ERR(fail_map(97), EINVAL);
	EXPECT_ERR(fail_map(98), EINVAL);
	gdr_ext_take_errors(buf, sizeof(buf));
	snprintf(two, sizeof(two), "%s\n", map_reason(97));
	strncat(two, map_reason(98), sizeof(two) - strlen(two) - 1);
	EXPECT(!strcmp(buf, two), "took '%s'", buf);

	/* Truncated to the buffer, NUL-terminated, and the rest forgotten too. */
	EXPECT_ERR(fail_map(96), EINVAL);
	EXPECT(gdr_ext_take_errors(small, sizeof(small)) == sizeof(small) - 1);
	EXPECT(!strcmp(small, "gdr_map"));
	EXPECT(gdr_ext_take_errors(buf, sizeof(buf)) == 0);

	/* NULL or size 0 only forgets. */
	EXPECT_ERR(fail_map(95), EINVAL);
	EXPECT(gdr_ext_take_errors(NULL, 0) == 0);
	EXPECT(gdr_ext_take_errors(small, 0) == 0);
	EXPECT(gdr_ext_take_errors(buf, sizeof(buf)) == 0);

	/* Plain argument errors log nothing. */
	EXPECT_ERR(gdr_map_v2(NULL, (gdr_mh_t){ 0 }, NULL, 1, 0), EINVAL);
	EXPECT(gdr_ext_take_errors(buf, sizeof(buf)) == 0);

	/* gdr_open's reasons (here: a backend name that does not exist). */
	setenv("GDRCOPY_BACKEND", "no-such-backend", 1);
	EXPECT(gdr_open() == NULL);
	unsetenv("GDRCOPY_BACKEND");
	gdr_ext_take_errors(buf, sizeof(buf));
	EXPECT(strstr(buf, "GDRCOPY_BACKEND=no-such-backend: no such backend") != NULL);

	/* Bounded: whole messages only, the first ones kept. */
	for (int i = 0; i < 200; i++)
		EXPECT_ERR(fail_map(100 + i), EINVAL);
	n = gdr_ext_take_errors(buf, sizeof(buf));
	EXPECT(n < sizeof(buf) && n == strlen(buf));
	for (char *line = strtok(buf, "\n"); line; line = strtok(NULL, "\n")) {
		EXPECT(!strcmp(line, map_reason(100 + lines)), "line %d: '%s'", lines, line);
		total += strlen(line) + 1;
		lines++;
	}
	EXPECT(lines > 5 && lines < 200 && total - 1 == n, "%d lines, %zu of %zu bytes", lines, total, n);

	/* Per thread. */
	EXPECT_ERR(fail_map(94), EINVAL);
	EXPECT(pthread_create(&t, NULL, other_thread, NULL) == 0);
	EXPECT(pthread_join(t, (void **)&thread_err) == 0);
	EXPECT(!thread_err, "other thread: %s", thread_err);
	gdr_ext_take_errors(buf, sizeof(buf));
	EXPECT(!strcmp(buf, map_reason(94)), "took '%s'", buf);

	return test_status();
}
