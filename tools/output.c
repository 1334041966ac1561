/* SPDX-License-Identifier: MIT */
/*
 * The tools' errors and output: one line per failure, human lines that --csv and sweeps silence,
 * and exit status 1 when the output could not be written.
 */
#include <errno.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "common.h"

int tool_csv;

/* Set by vexit: the exit status already says the run failed. */
static int failing;

/*
 * What a tool prints is its result: when stdout could not take it all (a full disk), the run
 * failed, whatever main returns; the status of a failure that vexit reports is kept.
 */
static void check_stdout(void)
{
	int err = fflush(stdout) ? errno : 0;

	if (failing || (!err && !ferror(stdout)))
		return;
	fprintf(stderr, "%s: writing standard output failed%s%s\n",
		program_invocation_short_name, err ? ": " : "", err ? strerror(err) : "");
	_exit(1);
}

/* Before main: every exit of every tool, -h included, is checked. */
static void __attribute__((constructor)) check_stdout_at_exit(void)
{
	atexit(check_stdout);
}

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
	failing = 1;
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
