/* SPDX-License-Identifier: MIT */
/*
 * What a tool prints is its result: when stdout could not take it all (a full disk, a closed
 * pipe's reader gone with SIGPIPE ignored), the run failed, whatever main returns. Every tool,
 * gdrcopy_info too, links this file.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "stdout_check.h"

/* Set by a tool that exits through its own error line: its status already says it failed. */
static int keep_status;

void tool_stdout_keep_status(void)
{
	keep_status = 1;
}

static void check_stdout(void)
{
	int err = fflush(stdout) ? errno : 0;

	if (keep_status || (!err && !ferror(stdout)))
		return;
	fprintf(stderr, "%s: writing standard output failed%s%s\n",
		program_invocation_short_name, err ? ": " : "", err ? strerror(err) : "");
	_exit(1);
}

/* Before main: every exit, -h included, is checked. Children that _exit skip it. */
static void __attribute__((constructor)) check_stdout_at_exit(void)
{
	atexit(check_stdout);
}
