/* SPDX-License-Identifier: MIT */
/* What a process holds, from /proc/self: open descriptors, threads, resident memory. */
#ifndef GDR_TEST_PROC_USAGE_H
#define GDR_TEST_PROC_USAGE_H

#include <dirent.h>
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

struct proc_usage {
	int fds;
	int threads;
	long rss_kib;
};

/*
 * Whether resident memory says anything about leaks here: ASan's quarantine keeps freed memory
 * resident (there LeakSanitizer checks for leaks instead), and an emulator's code cache grows.
 */
#if defined(__SANITIZE_ADDRESS__)
#define PROC_ASAN 1
#elif defined(__has_feature)
#if __has_feature(address_sanitizer)
#define PROC_ASAN 1
#endif
#endif

static inline int proc_rss_meaningful(void)
{
#ifdef PROC_ASAN
	return 0;
#else
	return !getenv("GDR_TEST_EMULATOR");
#endif
}

/* Under an emulator (qemu-user: GDR_TEST_EMULATOR, set by tests/cross), the threads are its own. */
static inline int proc_threads_meaningful(void)
{
	return !getenv("GDR_TEST_EMULATOR");
}

static inline int proc_count_entries(const char *dir)
{
	DIR *d = opendir(dir);
	struct dirent *e;
	int n = 0;

	if (!d)
		return -1;
	while ((e = readdir(d)))
		if (e->d_name[0] != '.')
			n++;
	closedir(d);
	return n;
}

static inline void proc_usage(struct proc_usage *u)
{
	long size = 0, resident = -1;
	FILE *f;

	u->fds = proc_count_entries("/proc/self/fd") - 1;	/* the directory's own */
	u->threads = proc_count_entries("/proc/self/task");
	f = fopen("/proc/self/statm", "r");
	if (f) {
		if (fscanf(f, "%ld %ld", &size, &resident) != 2)
			resident = -1;
		fclose(f);
	}
	u->rss_kib = resident < 0 ? -1 : resident * (sysconf(_SC_PAGESIZE) / 1024);
}

#endif
