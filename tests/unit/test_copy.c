/* SPDX-License-Identifier: MIT */
/*
 * Every copy routine this CPU can run, in both directions, held to what the generic reference
 * routine does (and is itself checked to do): the range gets exactly the source's bytes, nothing
 * outside [dst, dst + n) changes (guard bytes on both sides), the source stays unchanged, and
 * loads read nothing outside the pages of their range (inaccessible pages around it).
 *   sizes:   every n in 0..4160 at 8 offset pairs (dst, src) mod 64;
 *   offsets: all 64 x 64 offset pairs at every n in 0..136 and at 64k-1, 64k, 64k+1 for
 *            k = 3..10, which covers each head length, a single block, the unrolled loops and
 *            each tail length.
 * The guard byte never occurs in the source, so a stray write of source data is always seen.
 * Then the dispatcher (gdr_copy_{to,from}_mapping_type) for each mapping type at the size
 * classes' edges, with the automatic table and with each routine forced through it (the
 * inline tiny store included). Routines the CPU lacks are one skip line each.
 */
#include <errno.h>
#include <setjmp.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "copy.h"
#include "copy_impl.h"
#include "cpu.h"
#include "harness.h"

#define GUARD     0xa5
#define SLACK     128		/* bytes on each side of the largest range */
#define SWEEP_MAX 4160
#define BUF_MAX   (20 * 1024)
#define BUF_LEN   (SLACK + 64 + BUF_MAX + SLACK)
#define BUF_ALLOC ((BUF_LEN + 4095) / 4096 * 4096)

static uint8_t *src_buf, *src_ref, *dst_buf;

/* Offsets in dst_buf / src_buf of the start of a range at offset off (0..63). */
#define AT(off) (SLACK + (off))

static const struct {
	size_t dst, src;
} sweep_pairs[] = { { 0, 0 }, { 0, 1 }, { 1, 0 }, { 7, 9 }, { 15, 33 }, { 31, 63 },
		    { 63, 1 }, { 48, 16 } };

static uint8_t *guards;	/* BUF_LEN guard bytes, to compare with */

/* The offset of the first byte of p[0, len) that is not a guard byte, or len. */
static size_t first_not_guard(const uint8_t *p, size_t len)
{
	size_t i = 0;

	if (!memcmp(p, guards, len))
		return len;
	while (p[i] == GUARD)
		i++;
	return i;
}

/*
 * One copy of n bytes from src_buf + AT(soff) to dst_buf + AT(doff), both sides checked.
 * Returns 0, or 1 with why filled in.
 */
static int check_one(gdr_copy_fn fn, size_t n, size_t doff, size_t soff, char *why,
		     size_t why_len)
{
	uint8_t *dst = dst_buf + AT(doff);
	const uint8_t *src = src_buf + AT(soff);
	size_t win = AT(64) + n + SLACK, i;

	memset(dst_buf, GUARD, win);
	fn(dst, src, n);

	i = first_not_guard(dst_buf, AT(doff));
	if (i < AT(doff)) {
		snprintf(why, why_len, "wrote %zu bytes before dst", AT(doff) - i);
		return 1;
	}
	if (memcmp(dst, src, n)) {
		for (i = 0; dst[i] == src[i]; i++)
			;
		snprintf(why, why_len, "byte %zu of the range is 0x%02x, not 0x%02x", i, dst[i],
			 src[i]);
		return 1;
	}
	i = first_not_guard(dst + n, win - AT(doff) - n);
	if (i < win - AT(doff) - n) {
		snprintf(why, why_len, "wrote byte %zu after the end of dst", i);
		return 1;
	}
	if (memcmp(src_buf, src_ref, win)) {
		snprintf(why, why_len, "changed the source");
		return 1;
	}
	return 0;
}

static int run_case(gdr_copy_fn fn, size_t n, size_t doff, size_t soff, char *why,
		    size_t why_len)
{
	char detail[160];

	if (!check_one(fn, n, doff, soff, detail, sizeof(detail)))
		return 0;
	snprintf(why, why_len, "n=%zu dst+%zu src+%zu: %s", n, doff, soff, detail);
	return 1;
}

static int sweep(gdr_copy_fn fn, char *why, size_t why_len)
{
	for (size_t p = 0; p < sizeof(sweep_pairs) / sizeof(sweep_pairs[0]); p++)
		for (size_t n = 0; n <= SWEEP_MAX; n++)
			if (run_case(fn, n, sweep_pairs[p].dst, sweep_pairs[p].src, why, why_len))
				return 1;
	for (size_t n = 0; n <= 10 * 64 + 1; n++) {
		if (n > 136 && n % 64 != 63 && n % 64 != 0 && n % 64 != 1)
			continue;
		for (size_t doff = 0; doff < 64; doff++)
			for (size_t soff = 0; soff < 64; soff++)
				if (run_case(fn, n, doff, soff, why, why_len))
					return 1;
	}
	return 0;
}

static sigjmp_buf fault_jmp;

static void on_fault(int sig)
{
	siglongjmp(fault_jmp, sig);
}

/*
 * A load whose range starts a page, or ends one, next to an inaccessible page: the aligned
 * blocks a load may read around its ends never cross a page, so it must not fault.
 */
static int page_bounds(gdr_copy_fn load, char *why, size_t why_len)
{
	long page = sysconf(_SC_PAGESIZE);
	struct sigaction sa = { .sa_handler = on_fault }, old_segv, old_bus;
	uint8_t *map, *lo, *hi, host[512];
	volatile size_t n = 0, at_end = 0;
	int ret = 0;

	map = mmap(NULL, 3 * page, PROT_NONE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (map == MAP_FAILED || mprotect(map + page, page, PROT_READ | PROT_WRITE)) {
		snprintf(why, why_len, "mmap/mprotect: %s", strerror(errno));
		return 1;
	}
	lo = map + page;
	hi = map + 2 * page;
	memset(lo, 0x3c, page);
	sigemptyset(&sa.sa_mask);
	sigaction(SIGSEGV, &sa, &old_segv);
	sigaction(SIGBUS, &sa, &old_bus);
	if (sigsetjmp(fault_jmp, 1)) {
		snprintf(why, why_len, "n=%zu at the %s of a page: read outside the page", n,
			 at_end ? "end" : "start");
		ret = 1;
		goto out_restore;
	}
	for (n = 0; n <= sizeof(host); n++) {
		at_end = 0;
		load(host, lo, n);
		at_end = 1;
		load(host, hi - n, n);
	}
out_restore:
	sigaction(SIGSEGV, &old_segv, NULL);
	sigaction(SIGBUS, &old_bus, NULL);
	munmap(map, 3 * page);
	return ret;
}

static void test_impl(const struct gdr_copy_impl *impl, unsigned int cpu)
{
	unsigned int missing = gdr_copy_impl_missing(impl, cpu);
	char name[64], why[256];

	if (missing) {
		char lacks[64];

		gdr_cpu_describe(missing, lacks, sizeof(lacks));
		test_report("skip", impl->name, "CPU lacks %s", lacks);
		return;
	}
	if (impl->store) {
		snprintf(name, sizeof(name), "store_%s", impl->name);
		if (sweep(impl->store, why, sizeof(why)))
			test_report("fail", name, "%s", why);
		else
			test_report("pass", name, NULL);
	}
	if (impl->load) {
		snprintf(name, sizeof(name), "load_%s", impl->name);
		if (sweep(impl->load, why, sizeof(why)) ||
		    page_bounds(impl->load, why, sizeof(why)))
			test_report("fail", name, "%s", why);
		else
			test_report("pass", name, NULL);
	}
}

/* Sizes at every edge: the inline tiny store's, and those of each class of the table. */
static const size_t edge_sizes[] = {
	0, 1, 7, 8, 9, 15, 16, 17, 24, 31, 32, 33, 63, 64, 65, 127, 128, 129, 255, 256, 257,
	1023, 1024, 1025, 4095, 4096, 4097, 16383, 16384, 16385, BUF_MAX,
};

static gdr_mapping_type_t dispatch_type;
static int dispatch_mixed;

static void dispatch_to(void *dst, const void *src, size_t n)
{
	gdr_copy_to_mapping_type(dispatch_type, dispatch_mixed, dst, src, n);
}

static void dispatch_from(void *dst, const void *src, size_t n)
{
	gdr_copy_from_mapping_type(dispatch_type, dispatch_mixed, dst, src, n);
}

static int dispatch_case(size_t n, size_t doff, size_t soff, char *why, size_t why_len)
{
	return run_case(dispatch_to, n, doff, soff, why, why_len) ||
	       run_case(dispatch_from, n, doff, soff, why, why_len);
}

/* The edge sizes, and each class's edges, at offsets around every alignment. */
static int dispatch_sweep(const struct gdr_copy_table *t, char *why, size_t why_len)
{
	static const size_t offs[] = { 0, 1, 2, 4, 8, 13, 16, 32, 63 };

	for (size_t a = 0; a < sizeof(offs) / sizeof(offs[0]); a++) {
		for (size_t b = 0; b < sizeof(offs) / sizeof(offs[0]); b++) {
			for (size_t e = 0; e < sizeof(edge_sizes) / sizeof(edge_sizes[0]); e++)
				if (dispatch_case(edge_sizes[e], offs[a], offs[b], why, why_len))
					return 1;
			for (int dir = 0; dir < 2; dir++) {
				const struct gdr_copy_dir *d = dir ? &t->from : &t->to;

				for (int c = 0; c + 1 < d->nclasses; c++) {
					if (d->max[c] >= BUF_MAX)
						continue;
					if (dispatch_case(d->max[c], offs[a], offs[b], why, why_len) ||
					    dispatch_case(d->max[c] + 1, offs[a], offs[b], why, why_len))
						return 1;
				}
			}
		}
	}
	return 0;
}

static void test_dispatch(const char *name, gdr_mapping_type_t type, int mixed)
{
	struct gdr_copy_table t;
	char why[256];

	dispatch_type = type;
	dispatch_mixed = mixed;
	gdr_copy_table_current(&t);
	if (dispatch_sweep(&t, why, sizeof(why)))
		test_report("fail", name, "%s", why);
	else
		test_report("pass", name, NULL);
}

/*
 * Each routine forced through the dispatcher of a WC mapping (the inline tiny store for
 * generic), and the automatic table with no fence after reads, as the benchmark runs them.
 */
static void test_dispatch_forced(unsigned int cpu)
{
	const struct gdr_copy_impl *const *impls;
	struct gdr_copy_table saved, t;
	char note[512], why[256], name[64];
	size_t count;

	gdr_copy_table_current(&saved);
	dispatch_type = GDR_MAPPING_TYPE_WC;
	dispatch_mixed = 0;
	impls = gdr_copy_impls(&count);
	for (size_t i = 0; i < count; i++) {
		if (gdr_copy_impl_missing(impls[i], cpu))
			continue;
		snprintf(name, sizeof(name), "dispatch_forced_%s", impls[i]->name);
		if (gdr_copy_select(&t, cpu, impls[i]->name, note, sizeof(note))) {
			test_report("fail", name, "not honoured: %s", note);
			continue;
		}
		gdr_copy_table_install(&t);
		if (dispatch_sweep(&t, why, sizeof(why)))
			test_report("fail", name, "%s", why);
		else
			test_report("pass", name, NULL);
	}
	t = saved;
	t.from_wc_fence = GDR_COPY_FENCE_NONE;
	gdr_copy_table_install(&t);
	if (dispatch_sweep(&t, why, sizeof(why)))
		test_report("fail", "dispatch_no_read_fence", "%s", why);
	else
		test_report("pass", "dispatch_no_read_fence", NULL);
	gdr_copy_table_install(&saved);
}

int main(void)
{
	unsigned int cpu = gdr_cpu_features();
	const struct gdr_copy_impl *const *impls;
	uint64_t x = 0x9e3779b97f4a7c15ull;
	size_t count;

	src_buf = aligned_alloc(4096, BUF_ALLOC);
	src_ref = malloc(BUF_LEN);
	dst_buf = aligned_alloc(4096, BUF_ALLOC);
	guards = malloc(BUF_LEN);
	if (!src_buf || !src_ref || !dst_buf || !guards) {
		printf("out of memory\n");
		return 1;
	}
	for (size_t i = 0; i < BUF_LEN; i++) {
		x ^= x << 13;
		x ^= x >> 7;
		x ^= x << 17;
		src_buf[i] = (uint8_t)x == GUARD ? (uint8_t)~GUARD : (uint8_t)x;
	}
	memcpy(src_ref, src_buf, BUF_LEN);
	memset(guards, GUARD, BUF_LEN);

	impls = gdr_copy_impls(&count);
	for (size_t i = 0; i < count; i++)
		test_impl(impls[i], cpu);

	gdr_copy_init();
	test_dispatch("dispatch_wc", GDR_MAPPING_TYPE_WC, 0);
	test_dispatch("dispatch_wc_mixed", GDR_MAPPING_TYPE_WC, 1);
	test_dispatch("dispatch_caching", GDR_MAPPING_TYPE_CACHING, 0);
	test_dispatch("dispatch_device", GDR_MAPPING_TYPE_DEVICE, 0);
	test_dispatch_forced(cpu);

	free(guards);
	free(dst_buf);
	free(src_ref);
	free(src_buf);
	return test_status();
}
