/* SPDX-License-Identifier: MIT */
/*
 * gdrcopy_copybw: bandwidth of gdr_copy_to_mapping (write) and gdr_copy_from_mapping (read), as
 * GDRCopy 2.6's copybw: one copy size, or with -l every power of two up to it. MB is 2^20 bytes.
 */
#include <stdlib.h>
#include <string.h>

#include "common.h"

struct bw_opts {
	size_t copy_size, offset, writes, reads;
	int sweep_sizes;
};

/* MB/s (2^20 bytes) of iters copies of size bytes; dir 1 writes to the GPU. */
static double bandwidth(struct tool_mapping *m, void *host, size_t size, size_t offset,
			size_t iters, int to_gpu)
{
	char *dev = (char *)m->ptr + offset;
	double t0, us;

	t0 = tool_now_us();
	for (size_t i = 0; i < iters; i++) {
		if (to_gpu)
			gdr_copy_to_mapping(m->mh, dev, host, size);
		else
			gdr_copy_from_mapping(m->mh, host, dev, size);
	}
	us = tool_now_us() - t0;
	return us > 0 ? (double)size * (double)iters / us * 1e6 / (double)(1 << 20) : 0;
}

static void report(const char *test, const char *dir, size_t size, size_t offset, size_t iters,
		   double mbps)
{
	if (tool_sweep_fd >= 0)
		tool_sweep_line("row %s %s %zu %.3f %zu", test, dir, size, mbps, offset);
	else if (tool_csv)
		printf("%s,%zu,%zu,%zu,%.3f\n", test, size, offset, iters, mbps);
	else
		printf("%s BW: %gMB/s\n", !strcmp(test, "write") ? "write" : "read", mbps);
}

/* host holds the pattern; each test is checked after it is timed (tool_copy_check_end). */
static void run_size(struct tool_mapping *m, void *host, size_t size, const struct bw_opts *o)
{
	double mbps;

	tool_say("writing test, size=%zu offset=%zu num_iters=%zu\n", size, o->offset, o->writes);
	tool_copy_check_begin(m, o->offset, host, size, 1);
	mbps = bandwidth(m, host, size, o->offset, o->writes, 1);
	tool_copy_check_end(m, o->offset, host, size, 1);
	report("write", "to", size, o->offset, o->writes, mbps);
	tool_say("reading test, size=%zu offset=%zu num_iters=%zu\n", size, o->offset, o->reads);
	tool_copy_check_begin(m, o->offset, host, size, 0);
	mbps = bandwidth(m, host, size, o->offset, o->reads, 0);
	tool_copy_check_end(m, o->offset, host, size, 0);
	report("read", "from", size, o->offset, o->reads, mbps);
}

/* The largest power of two not above x (x > 0). */
static size_t round_down_pow2(size_t x)
{
	size_t p = 1;

	while (p <= x / 2)
		p <<= 1;
	return p;
}

int main(int argc, char **argv)
{
	struct bw_opts o = { 0, 0, 10000, 100, 0 };
	enum tool_alloc_kind kind = TOOL_ALLOC_AUTO;
	int dev_id = 0, map_flags = GDR_MAP_FLAG_DEFAULT;
	size_t size = 131072;
	const struct tool_option options[] = {
		{ 's', NULL, TOOL_ARG_SIZE, &size, 0, 0, NULL,
		  "  -s SIZE   buffer size (default 131072)\n" },
		{ 'c', NULL, TOOL_ARG_SIZE, &o.copy_size, 0, 0, NULL,
		  "  -c SIZE   copy size (default: the buffer size); with -l the largest\n" },
		{ 'o', NULL, TOOL_ARG_SIZE, &o.offset, 0, 0, NULL,
		  "  -o OFF    copy offset in the buffer, a multiple of 4 (default 0)\n" },
		{ 'l', NULL, TOOL_ARG_FLAG, &o.sweep_sizes, 0, 0, NULL,
		  "  -l        sweep copy sizes 1, 2, 4 ... up to the copy size\n" },
		{ 'd', NULL, TOOL_ARG_INT, &dev_id, 0, 1024, NULL, TOOL_DEVICE_USAGE },
		{ 'w', NULL, TOOL_ARG_COUNT, &o.writes, 1, 1L << 40, NULL,
		  "  -w N      write iterations (default 10000)\n" },
		{ 'r', NULL, TOOL_ARG_COUNT, &o.reads, 1, 1L << 40, NULL,
		  "  -r N      read iterations (default 100)\n" },
		{ 'a', NULL, TOOL_ARG_ALLOC, &kind, 0, 0, NULL, TOOL_ALLOC_USAGE },
		{ 'M', NULL, TOOL_ARG_MAP, &map_flags, 0, 0, NULL, TOOL_MAP_USAGE },
		{ 0, NULL, TOOL_ARG_FLAG, NULL, 0, 0, NULL, NULL },
	};
	const struct tool_cli cli = { "gdrcopy_copybw", options, NULL };
	struct tool_common common;
	struct tool_mapping m;
	struct tool_cuda cu;
	void *host;
	gdr_t g;

	tool_options(&cli, argc, argv, &common);
	if (!o.copy_size)
		o.copy_size = size;
	if (size == 0)
		tool_usage_error("-s 0: the buffer must hold at least one byte");
	if (o.offset % 4)
		tool_usage_error("-o %zu: the offset must be a multiple of 4", o.offset);
	if (o.offset > size || o.copy_size > size - o.offset)
		tool_usage_error("-c %zu at -o %zu: the copy does not fit in the %zu-byte buffer (-s)",
				 o.copy_size, o.offset, size);
	if (tool_impl_is_all(&common))
		return tool_sweep(&common, "bandwidth (MB/s)", 1, "impl,test,size,mb_per_s,offset");

	g = tool_start(&cu, dev_id, &kind, NULL);
	tool_say("testing size: %zu\n", size);
	tool_map_gpu(&m, g, &cu, size, kind, map_flags, 0);
	tool_report_impl(g, common.impl);
	host = malloc(o.copy_size);
	if (!host)
		tool_die("cannot allocate %zu bytes of host memory", o.copy_size);
	tool_fill_pattern(host, o.copy_size, 0);
	if (tool_csv && tool_sweep_fd < 0)
		printf("test,size,offset,iters,mb_per_s\n");
	if (o.sweep_sizes) {
		size_t top = round_down_pow2(o.copy_size);

		for (size_t s = 1; s <= top; s <<= 1)
			run_size(&m, host, s, &o);
	} else {
		run_size(&m, host, o.copy_size, &o);
	}
	free(host);
	tool_unmap_gpu(&m, 0);
	tool_gdr_close(g);
	tool_cuda_fini(&cu);
	return 0;
}
