/* SPDX-License-Identifier: MIT */
/* Exit status 1 when a tool's standard output could not be written (stdout_check.c). */
#ifndef GDR_TOOLS_STDOUT_CHECK_H
#define GDR_TOOLS_STDOUT_CHECK_H

#ifdef __cplusplus
extern "C" {
#endif

/* The exit under way reports its own failure: keep its status, add no line. */
void tool_stdout_keep_status(void);

#ifdef __cplusplus
}
#endif

#endif
