/* SPDX-License-Identifier: MIT */
/*
 * gdrcopy_demo: what gdrcopy is for, in a few lines, for "make run" (tools/demo.sh): pin GPU
 * memory, map it for the CPU, write it with CPU stores and check with cuMemcpyDtoH that the GPU
 * sees the data, then fill it from the GPU side and read it back through the mapping. Built in
 * the tree only, never installed: gdrcopy_sanity is the test, this is the tour.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common.h"

#define DEMO_SIZE (64 * 1024)

static void usage(FILE *f)
{
	fprintf(f, "usage: gdrcopy_demo [-h] [--no-times]\n"
		   "Pins 64 KiB of GPU memory, maps it, writes and reads it through the mapping,\n"
		   "checking each direction against cuMemcpy. --no-times leaves the copies' times\n"
		   "out (on the simulated GPU they time host memory).\n");
}

/* ", 12.3 us" for a copy that took us, or "" without times. */
static const char *took(double us, int times)
{
	static char buf[32];

	if (!times)
		return "";
	snprintf(buf, sizeof(buf), ", %.1f us", us);
	return buf;
}

int main(int argc, char **argv)
{
	struct tool_mapping m;
	struct tool_cuda cu;
	unsigned char *want, *got;
	double t0, t1;
	int times = 1;
	gdr_t g;

	if (argc == 2 && !strcmp(argv[1], "--no-times")) {
		times = 0;
	} else if (argc > 1) {
		int help = !strcmp(argv[1], "-h") || !strcmp(argv[1], "--help");

		usage(help ? stdout : stderr);
		return help ? 0 : 2;
	}
	want = malloc(DEMO_SIZE);
	got = malloc(DEMO_SIZE);
	if (!want || !got)
		tool_die("out of memory");
	tool_cuda_init(&cu, 0);
	g = tool_gdr_open();
	tool_map_gpu(&m, g, &cu, DEMO_SIZE, tool_alloc_resolve(TOOL_ALLOC_AUTO, g), 0, 1);
	printf("pinned %d KiB of GPU memory (%s) with the %s backend\n", DEMO_SIZE / 1024,
	       tool_alloc_name(m.buf.kind), tool_backend_name(tool_backend(g)));
	printf("mapped it for the CPU at %p (%s)\n", m.ptr,
	       tool_mapping_name((gdr_mapping_type_t)m.info.mapping_type));

	tool_fill_pattern(want, DEMO_SIZE, 1);
	t0 = tool_now_us();
	if (gdr_copy_to_mapping(m.mh, m.ptr, want, DEMO_SIZE))
		tool_die("gdr_copy_to_mapping failed");
	t1 = tool_now_us();
	CU_CHECK(cuMemcpyDtoH(got, m.buf.ptr, DEMO_SIZE));
	if (tool_compare(got, want, DEMO_SIZE))
		tool_die("the GPU does not see what the CPU wrote through the mapping");
	printf("wrote %d KiB with CPU stores (gdr_copy_to_mapping%s); cuMemcpyDtoH reads the same "
	       "bytes\n", DEMO_SIZE / 1024, took(t1 - t0, times));

	tool_fill_pattern(want, DEMO_SIZE, 2);
	CU_CHECK(cuMemcpyHtoD(m.buf.ptr, want, DEMO_SIZE));
	/* A copy from pageable memory may return before its DMA has landed in the GPU's memory. */
	CU_CHECK(cuCtxSynchronize());
	t0 = tool_now_us();
	if (gdr_copy_from_mapping(m.mh, got, m.ptr, DEMO_SIZE))
		tool_die("gdr_copy_from_mapping failed");
	t1 = tool_now_us();
	if (tool_compare(got, want, DEMO_SIZE))
		tool_die("the CPU does not read through the mapping what cuMemcpyHtoD wrote");
	printf("filled it with cuMemcpyHtoD; the CPU reads the same bytes back "
	       "(gdr_copy_from_mapping%s)\n", took(t1 - t0, times));

	tool_unmap_gpu(&m, 1);
	if (gdr_close(g))
		tool_die("gdr_close failed");
	tool_cuda_fini(&cu);
	free(want);
	free(got);
	return 0;
}
