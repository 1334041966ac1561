/* SPDX-License-Identifier: MIT */
/*
 * How far outside its range a copy out of a write-combined mapping reads, as
 * gdr_copy_from_mapping(3) and copy_impl.h say: at most the rest of the aligned 64-byte lines
 * that hold the range's ends, never a byte before the first of them or after the last. Hardware
 * watchpoints (perf_event_open breakpoints) on the 8 bytes just outside those lines count every
 * access, for each load routine this CPU runs and for the dispatcher's automatic choice, with
 * the range's start, then its end, at each of the 64 positions in a line. Skips where the kernel
 * gives a process no breakpoints (qemu-user, perf_event_paranoid 3).
 */
#include <errno.h>
#include <linux/hw_breakpoint.h>
#include <linux/perf_event.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "copy.h"
#include "copy_impl.h"
#include "cpu.h"
#include "harness.h"

#define LINE      64
#define WATCH     8	/* bytes a watchpoint covers */
#define PAGE      4096
/* Every size up to SMALL_MAX, then the edges of the larger loops. */
#define SMALL_MAX 300
static const size_t large_sizes[] = { 511, 512, 513, 1023, 1024, 1025, 4095, 4096, 4097 };
#define SIZE_MAX_TESTED 4097
/* The lines the ranges start (first pass) and end (second pass) at, and room around them. */
/* Whole pages: aligned_alloc takes only sizes that are multiples of the alignment. */
#define BUF_LEN   ((PAGE + 2 * (SIZE_MAX_TESTED + 2 * LINE) + PAGE + PAGE - 1) / PAGE * PAGE)

static uint8_t *src_buf, *dst_buf;

/* A watchpoint on the WATCH bytes at addr, counting this thread's accesses; -1 and errno. */
static int watch_open(const void *addr)
{
	struct perf_event_attr a;

	memset(&a, 0, sizeof(a));
	a.type = PERF_TYPE_BREAKPOINT;
	a.size = sizeof(a);
	a.bp_type = HW_BREAKPOINT_RW;
	a.bp_addr = (uintptr_t)addr;
	a.bp_len = HW_BREAKPOINT_LEN_8;
	a.sample_period = 1;
	a.exclude_kernel = 1;
	a.exclude_hv = 1;
	return (int)syscall(SYS_perf_event_open, &a, 0, -1, -1, 0);
}

/* Accesses to the watched bytes while load copies [src, src + n); UINT64_MAX if unreadable. */
static uint64_t touches(int fd, gdr_copy_fn load, const uint8_t *src, size_t n)
{
	uint64_t count = 0;

	if (ioctl(fd, PERF_EVENT_IOC_RESET, 0))
		return UINT64_MAX;
	load(dst_buf, src, n);
	if (read(fd, &count, sizeof(count)) != (ssize_t)sizeof(count))
		return UINT64_MAX;
	return count;
}

/*
 * Ranges of n bytes starting at each position of the line at first (watching the bytes before
 * it), then ending at each position of the line that ends at last (watching the bytes after
 * it). 0, or 1 with why filled.
 */
static int check_size(gdr_copy_fn load, size_t n, int before, int after, const uint8_t *first,
		      const uint8_t *last, char *why, size_t why_len)
{
	uint64_t got;

	for (size_t pos = 0; pos < LINE; pos++) {
		got = touches(before, load, first + pos, n);
		if (got) {
			snprintf(why, why_len, "n=%zu starting %zu bytes into a line: %llu accesses "
				 "to the line before", n, pos, (unsigned long long)got);
			return 1;
		}
		got = touches(after, load, last - LINE + 1 + pos - n, n);
		if (got) {
			snprintf(why, why_len, "n=%zu ending %zu bytes into a line: %llu accesses to "
				 "the line after", n, pos + 1, (unsigned long long)got);
			return 1;
		}
	}
	return 0;
}

static void check_load(const char *name, gdr_copy_fn load)
{
	const uint8_t *first = src_buf + PAGE;
	const uint8_t *last = first + (SIZE_MAX_TESTED + LINE - 1) / LINE * LINE + 2 * LINE;
	int before = watch_open(first - WATCH), after = watch_open(last);
	char why[160];
	int failed = 0;

	if (before < 0 || after < 0) {
		test_report("fail", name, "perf_event_open: %s", strerror(errno));
		goto out_close;
	}
	for (size_t n = 1; n <= SMALL_MAX && !failed; n++)
		failed = check_size(load, n, before, after, first, last, why, sizeof(why));
	for (size_t i = 0; i < sizeof(large_sizes) / sizeof(large_sizes[0]) && !failed; i++)
		failed = check_size(load, large_sizes[i], before, after, first, last, why,
				    sizeof(why));
	if (failed)
		test_report("fail", name, "%s", why);
	else
		test_report("pass", name, NULL);
out_close:
	if (before >= 0)
		close(before);
	if (after >= 0)
		close(after);
}

static void load_dispatched(void *dst, const void *src, size_t n)
{
	gdr_copy_from_mapping_type(GDR_MAPPING_TYPE_WC, 0, dst, src, n);
}

int main(void)
{
	unsigned int cpu = gdr_cpu_features();
	const struct gdr_copy_impl *const *impls;
	char name[64];
	size_t count;
	int probe;

	src_buf = aligned_alloc(PAGE, BUF_LEN);
	dst_buf = aligned_alloc(PAGE, BUF_LEN);
	if (!src_buf || !dst_buf) {
		printf("out of memory\n");
		return TEST_FAIL;
	}
	memset(src_buf, 0x5a, BUF_LEN);
	probe = watch_open(src_buf);
	if (probe < 0)
		test_skip_program("no hardware watchpoints for this process (perf_event_open: %s)",
				  strerror(errno));
	close(probe);

	impls = gdr_copy_impls(&count);
	for (size_t i = 0; i < count; i++) {
		if (!impls[i]->load)
			continue;
		snprintf(name, sizeof(name), "load_%s", impls[i]->name);
		if (gdr_copy_impl_missing(impls[i], cpu))
			test_report("skip", name, "CPU lacks it");
		else
			check_load(name, impls[i]->load);
	}
	gdr_copy_init();
	check_load("dispatch_wc", load_dispatched);

	free(dst_buf);
	free(src_buf);
	return test_status();
}
