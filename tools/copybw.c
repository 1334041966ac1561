/* SPDX-License-Identifier: MIT */
/*
 * gdrcopy_copybw: bandwidth of gdr_copy_to_mapping (write) and gdr_copy_from_mapping (read), as
 * GDRCopy 2.6's copybw: one copy size, or with -l every power of two up to it. MB is 2^20 bytes.
 */
#include <getopt.h>
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

static void run_size(struct tool_mapping *m, void *host, size_t size, const struct bw_opts *o)
{
	double mbps;

	tool_say("writing test, size=%zu offset=%zu num_iters=%zu\n", size, o->offset, o->writes);
	mbps = bandwidth(m, host, size, o->offset, o->writes, 1);
	report("write", "to", size, o->offset, o->writes, mbps);
	tool_say("reading test, size=%zu offset=%zu num_iters=%zu\n", size, o->offset, o->reads);
	mbps = bandwidth(m, host, size, o->offset, o->reads, 0);
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

static void usage(FILE *f)
{
	fprintf(f,
		"usage: gdrcopy_copybw [options]\n"
		"  -s SIZE   buffer size (default 131072)\n"
		"  -c SIZE   copy size (default: the buffer size); with -l the largest\n"
		"  -o OFF    copy offset in the buffer, a multiple of 4 (default 0)\n"
		"  -l        sweep copy sizes 1, 2, 4 ... up to the copy size\n"
		"  -d GPU    GPU id (default 0)\n"
		"  -w N      write iterations (default 10000)\n"
		"  -r N      read iterations (default 100)\n"
		"  -a FN     GPU allocator: cuMemAlloc or cuMemCreate (default: cuMemCreate under "
		"the vulkan backend, else cuMemAlloc)\n"
		"  -M TYPE   mapping type: default, wc, cache, device\n"
		TOOL_COMMON_USAGE
		"            --impl all runs every copy routine this CPU has, one process each\n");
}

int main(int argc, char **argv)
{
	static const struct option longopts[] = { TOOL_LONG_OPTIONS, { NULL, 0, NULL, 0 } };
	struct bw_opts o = { 0, 0, 10000, 100, 0 };
	enum tool_alloc_kind kind = TOOL_ALLOC_AUTO;
	struct tool_common common = { NULL, NULL };
	int dev_id = 0, map_flags = GDR_MAP_FLAG_DEFAULT, opt;
	char *saved_argv[argc + 1];	/* argv as given: getopt_long reorders argv */
	size_t size = 131072;
	struct tool_mapping m;
	struct tool_cuda cu;
	void *host;
	gdr_t g;

	memcpy(saved_argv, argv, (size_t)(argc + 1) * sizeof(char *));
	while ((opt = getopt_long(argc, argv, "s:d:o:c:w:r:a:M:hl", longopts, NULL)) != -1) {
		if (tool_common_option(opt, optarg, &common))
			continue;
		switch (opt) {
		case 's': size = tool_parse_size(optarg, "-s"); break;
		case 'c': o.copy_size = tool_parse_size(optarg, "-c"); break;
		case 'o': o.offset = tool_parse_size(optarg, "-o"); break;
		case 'l': o.sweep_sizes = 1; break;
		case 'd': dev_id = (int)tool_parse_long(optarg, "-d", 0, 1024); break;
		case 'w': o.writes = (size_t)tool_parse_long(optarg, "-w", 1, 1L << 40); break;
		case 'r': o.reads = (size_t)tool_parse_long(optarg, "-r", 1, 1L << 40); break;
		case 'a': tool_parse_alloc(optarg, &kind); break;
		case 'M': tool_parse_map_flags(optarg, &map_flags); break;
		case 'h': case TOOL_OPT_HELP: usage(stdout); return 0;
		default: usage(stderr); return 2;
		}
	}
	if (optind < argc)
		tool_die("unexpected argument %s (see -h)", argv[optind]);
	if (!o.copy_size)
		o.copy_size = size;
	if (size == 0)
		tool_die("-s 0: the buffer must hold at least one byte");
	if (o.offset % 4)
		tool_die("-o %zu: the offset must be a multiple of 4", o.offset);
	if (o.offset > size || o.copy_size > size - o.offset)
		tool_die("copy of %zu bytes at offset %zu does not fit in the %zu-byte buffer",
			 o.copy_size, o.offset, size);
	tool_set_env(common.backend, common.impl);
	if (tool_impl_is_all(&common)) {
		size_t n;
		struct sweep_run *runs = tool_sweep(argc, saved_argv, &n);

		tool_sweep_print(runs, n, "bandwidth (MB/s)", 1, "impl,test,size,mb_per_s,offset");
		tool_sweep_free(runs, n);
		return 0;
	}

	tool_cuda_init(&cu, dev_id);
	g = tool_gdr_open();
	tool_print_devices(&cu);
	kind = tool_alloc_resolve(kind, g);
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
