/* SPDX-License-Identifier: MIT */
#include <pthread.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "gdrapi_ext.h"
#include "log.h"

static pthread_once_t log_once = PTHREAD_ONCE_INIT;
static int log_on;
static int log_threshold = GDR_LOG_ERROR;

/*
 * The error-level messages of a thread not yet taken by gdr_ext_take_errors, one per line, oldest
 * first: bindings (Python) turn them into exception messages, so they are kept whether or not
 * logging is on. When full, later messages are dropped: the first says most. Allocated on a
 * thread's first error and freed when it exits; a pthread key, not __thread: static TLS, which a
 * library that clients dlopen takes from a small spare pool, is kept for the copy path's one
 * pointer (inflight.c), and this is no hot path that would pay for __tls_get_addr.
 */
struct thread_errors {
	size_t len;
	char text[GDR_EXT_ERRORS_MAX];
};

static pthread_once_t errors_once = PTHREAD_ONCE_INIT;
static pthread_key_t errors_key;
static int errors_key_ok;

static void errors_key_create(void)
{
	errors_key_ok = !pthread_key_create(&errors_key, free);
}

/* This thread's messages; NULL when it has none and create is 0, or when out of memory. */
static struct thread_errors *thread_errors(int create)
{
	struct thread_errors *e;

	pthread_once(&errors_once, errors_key_create);
	if (!errors_key_ok)
		return NULL;
	e = pthread_getspecific(errors_key);
	if (!e && create) {
		e = calloc(1, sizeof(*e));
		if (e && pthread_setspecific(errors_key, e)) {
			free(e);
			e = NULL;
		}
	}
	return e;
}

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

static void record_error(const char *msg)
{
	struct thread_errors *e = thread_errors(1);
	size_t room;
	int n;

	if (!e)
		return;
	room = sizeof(e->text) - e->len;
	n = snprintf(e->text + e->len, room, "%s%s", e->len ? "\n" : "", msg);
	if (n > 0 && (size_t)n < room)
		e->len += n;
	else
		e->text[e->len] = '\0';
}

void gdr_log(enum gdr_log_level level, const char *fmt, ...)
{
	static const char *const prefix[] = {
		[GDR_LOG_DEBUG] = "DBG:  ",
		[GDR_LOG_INFO] = "INFO: ",
		[GDR_LOG_WARN] = "WARN: ",
		[GDR_LOG_ERROR] = "ERR:  ",
	};
	int to_stderr = gdr_log_enabled(level);
	char msg[1024];
	va_list ap;

	if (!to_stderr && level < GDR_LOG_ERROR)
		return;
	va_start(ap, fmt);
	vsnprintf(msg, sizeof(msg), fmt, ap);
	va_end(ap);
	if (level >= GDR_LOG_ERROR)
		record_error(msg);
	/* One write per message, so lines from several threads do not interleave. */
	if (to_stderr)
		fprintf(stderr, "%s%s\n", prefix[level], msg);
}

void gdr_why_set(struct gdr_why *why, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(why->msg, sizeof(why->msg), fmt, ap);
	va_end(ap);
}

__attribute__((visibility("default"))) size_t gdr_ext_take_errors(char *buf, size_t size)
{
	struct thread_errors *e = thread_errors(0);
	size_t n = 0;

	if (buf && size) {
		if (e)
			n = e->len < size ? e->len : size - 1;
		memcpy(buf, e ? e->text : "", n);
		buf[n] = '\0';
	}
	if (e) {
		e->len = 0;
		e->text[0] = '\0';
	}
	return n;
}
