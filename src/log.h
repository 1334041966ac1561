/* SPDX-License-Identifier: MIT */
/* Logging, as GDRCopy: off unless GDRCOPY_ENABLE_LOGGING is set; GDRCOPY_LOG_LEVEL is the threshold. */
#ifndef GDR_LOG_H
#define GDR_LOG_H

enum gdr_log_level {
	GDR_LOG_DEBUG = 1,
	GDR_LOG_INFO = 2,
	GDR_LOG_WARN = 3,
	GDR_LOG_ERROR = 4,
};

void gdr_log(enum gdr_log_level level, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
int gdr_log_enabled(enum gdr_log_level level);

#define gdr_dbg(...)  gdr_log(GDR_LOG_DEBUG, __VA_ARGS__)
#define gdr_info(...) gdr_log(GDR_LOG_INFO, __VA_ARGS__)
#define gdr_warn(...) gdr_log(GDR_LOG_WARN, __VA_ARGS__)
#define gdr_err(...)  gdr_log(GDR_LOG_ERROR, __VA_ARGS__)

/*
 * Why something cannot be used here (a backend, the CUDA driver): one line, which the caller
 * logs or shows (gdrcopy_info prints it per backend).
 */
struct gdr_why {
	char msg[256];
};

void gdr_why_set(struct gdr_why *why, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

#endif
