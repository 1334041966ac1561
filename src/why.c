/* SPDX-License-Identifier: MIT */
/*
 * struct gdr_why, on its own so that helpers that report why (cuda.c) link into test and tool
 * programs without the backend registry.
 */
#include <stdarg.h>
#include <stdio.h>

#include "backend.h"

void gdr_why_set(struct gdr_why *why, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(why->msg, sizeof(why->msg), fmt, ap);
	va_end(ap);
}
