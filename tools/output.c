/* SPDX-License-Identifier: MIT */
/*
 * The tools' errors and output: one line per failure, human lines that --csv and sweeps silence.
 * An unwritable stdout is stdout_check.c's.
 */
#include <errno.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>

#include "common.h"
#include "stdout_check.h"

int tool_csv;

static void vline(FILE *f, const char *kind, const char *fmt, va_list ap)
{
	char msg[3 * GDR_EXT_ERRORS_MAX];	/* room for the library's reasons */

	vsnprintf(msg, sizeof(msg), fmt, ap);
	if (tool_sweep_fd >= 0) {
		tool_sweep_line("%s %s", kind, msg);
		return;
	}
	fprintf(f, "%s: %s%s\n", program_invocation_short_name,
		strcmp(kind, "warn") ? "" : "warning: ", msg);
}

/* stdout flushed first, so that the error line comes after what was printed before it. */
static void __attribute__((noreturn)) vexit(int status, const char *fmt, va_list ap)
{
	fflush(stdout);
	vline(stderr, "error", fmt, ap);
	tool_stdout_keep_status();
	exit(status);
}

void tool_die(const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vexit(1, fmt, ap);
}

void tool_exit(int status, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vexit(status, fmt, ap);
}

void tool_usage_error(const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vexit(TOOL_EXIT_USAGE, fmt, ap);
}

void tool_warn(const char *fmt, ...)
{
	va_list ap;

	fflush(stdout);
	va_start(ap, fmt);
	vline(stderr, "warn", fmt, ap);
	va_end(ap);
}

void tool_say(const char *fmt, ...)
{
	va_list ap;

	if (tool_csv || tool_sweep_fd >= 0)
		return;
	va_start(ap, fmt);
	vprintf(fmt, ap);
	va_end(ap);
}
