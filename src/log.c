/* SPDX-License-Identifier: MIT */
#include <pthread.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>

#include "log.h"

static pthread_once_t log_once = PTHREAD_ONCE_INIT;
static int log_on;
static int log_threshold = GDR_LOG_ERROR;

/* GDRCopy reads the environment once, on the first message; so do we. */
static void log_read_env(void)
{
	const char *level = getenv("GDRCOPY_LOG_LEVEL");

	log_on = getenv("GDRCOPY_ENABLE_LOGGING") != NULL;
	if (level)
		log_threshold = atoi(level);
}

int gdr_log_enabled(enum gdr_log_level level)
{
	pthread_once(&log_once, log_read_env);
	return log_on && (int)level >= log_threshold;
}

void gdr_log(enum gdr_log_level level, const char *fmt, ...)
{
	static const char *const prefix[] = {
		[GDR_LOG_DEBUG] = "DBG:  ",
		[GDR_LOG_INFO] = "INFO: ",
		[GDR_LOG_WARN] = "WARN: ",
		[GDR_LOG_ERROR] = "ERR:  ",
	};
	char line[1024];
	va_list ap;
	int n;

	if (!gdr_log_enabled(level))
		return;
	/* One write per message, so lines from several threads do not interleave. */
	n = snprintf(line, sizeof(line), "%s", prefix[level]);
	va_start(ap, fmt);
	vsnprintf(line + n, sizeof(line) - n, fmt, ap);
	va_end(ap);
	fprintf(stderr, "%s\n", line);
}
