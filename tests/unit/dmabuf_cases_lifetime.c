/* SPDX-License-Identifier: MIT */
/* The dmabuf backend's cases about lifetimes: gdr_close with pins left, 10k cycles, fork. */
#include <malloc.h>
#include <string.h>

#include "dmabuf_cases.h"
#include "fork_check.h"
#include "harness.h"

/* gdr_close with pins and mappings left closes their fds (the harness counts them). */
int dmabuf_case_close_releases(void)
{
	CUdeviceptr buf = dev_alloc(4 * GPU_PAGE);
	gdr_t g2 = gdr_open();
	gdr_mh_t mh[3];
	void *map;

	CHECK(buf && g2);
	for (int i = 0; i < 3; i++)
		EXPECT_ERR(gdr_pin_buffer_v2(g2, buf + (unsigned long)i * GPU_PAGE, GPU_PAGE, 0,
					    &mh[i]), 0);
	EXPECT_ERR(gdr_map(g2, mh[0], &map, GPU_PAGE), 0);
	EXPECT_ERR(gdr_map(g2, mh[2], &map, GPU_PAGE), 0);
	EXPECT(sim_open_exports() == 3);
	EXPECT_ERR(gdr_close(g2), 0);
	t.cu->cuMemFree(buf);
	return TEST_PASS;
}

/*
 * Allowance for the heap's growth over the cycles: what the first cycles may keep for good (a
 * block of the fork registry's slots, the handle table's growth) and the allocator's own
 * bookkeeping; a cycle that kept 2 bytes would pass it.
 */
#define CYCLES_HEAP_SLACK (16 * 1024)

/* 10k pins, maps, copies, unmaps and unpins leave no descriptor, export or heap behind. */
int dmabuf_case_cycles(void)
{
	enum { CYCLES = 10000 };
	CUdeviceptr buf = dev_alloc(GPU_PAGE);
	struct simcuda_dmabuf_counters before, after;
	int fds = test_fd_count();
	size_t heap_before, heap_after;

	CHECK(buf);
	t.dmabuf_counters(&before);
	heap_before = mallinfo2().uordblks;
	for (int i = 0; i < CYCLES; i++) {
		uint64_t v = (uint64_t)i;
		gdr_mh_t mh;
		void *map;

		if (gdr_pin_buffer_v2(t.g, buf + (unsigned)i % 4096, 8, 0, &mh)) {
			EXPECT(!"pin");
			break;
		}
		if (gdr_map(t.g, mh, &map, 8192) ||
		    gdr_copy_to_mapping(mh, (uint8_t *)map + (unsigned)i % 4096, &v, sizeof(v)) ||
		    gdr_unmap(t.g, mh, map, 8192)) {
			EXPECT(!"map, copy or unmap");
			gdr_unpin_buffer(t.g, mh);
			break;
		}
		if (gdr_unpin_buffer(t.g, mh) || memcmp((void *)(buf + (unsigned)i % 4096), &v, 8)) {
			EXPECT(!"unpin or data");
			break;
		}
	}
	heap_after = mallinfo2().uordblks;
	t.dmabuf_counters(&after);
	EXPECT(after.exported - before.exported == CYCLES);
	EXPECT(after.open == 0);
	EXPECT(test_fd_count() == fds);
	/* ASan's allocator answers mallinfo2 with zeros: the check holds there, testing nothing. */
	EXPECT(heap_after <= heap_before + CYCLES_HEAP_SLACK,
	       "the heap grew by %zu bytes over %d cycles: each pin keeps something after its unpin",
	       heap_after - heap_before, CYCLES);
	t.cu->cuMemFree(buf);
	return TEST_PASS;
}

/* In the fork child: a gdr_t of its own pins, maps and copies. */
static int child_own_gdr(void)
{
	long held = sim_open_exports();
	CUdeviceptr buf;
	gdr_t own;
	gdr_info_t info;
	uint8_t *map;
	gdr_mh_t mh;

	/* Inherited, the parent's dma-bufs would keep its memory exported as long as we live. */
	CHECK(held == 0, "the child holds %ld of the parent's dma-buf descriptors", held);
	buf = dev_alloc(GPU_PAGE);
	own = gdr_open();
	CHECK(buf, "the child's cuMemAlloc failed");
	CHECK(own, "the child's gdr_open failed");
	t.g = own;
	CHECK(!pin_map(buf, GPU_PAGE, 0, &mh, &info, &map) &&
	      !gdr_copy_to_mapping(mh, map, "child", 5) && !memcmp((void *)buf, "child", 5) &&
	      !gdr_unmap(own, mh, map, info.mapped_size) && !gdr_unpin_buffer(own, mh) &&
	      !gdr_close(own), "the child's own gdr_t does not work");
	t.cu->cuMemFree(buf);
	return TEST_PASS;
}

/* A fork child can use nothing of the parent's gdr_t, touches nothing of it, and opens its own. */
int dmabuf_case_fork(void)
{
	CUdeviceptr buf = dev_alloc(GPU_PAGE);
	uint8_t fill[4096], *map;
	struct fork_check fc;
	gdr_info_t info;
	gdr_mh_t mh;

	CHECK_PASS(fork_check_possible());

	CHECK(buf);
	CHECK_OK(pin_map(buf, GPU_PAGE, 0, &mh, &info, &map));
	memset(fill, 0x11, sizeof(fill));
	EXPECT_ERR(gdr_copy_to_mapping(mh, map, fill, sizeof(fill)), 0);
	fc = (struct fork_check){ .g = t.g, .mh = mh, .map = map, .map_size = info.mapped_size,
				  .pin_addr = buf, .child_own = child_own_gdr };
	EXPECT(fork_check_run(&fc) == TEST_PASS, "fork child: %s", test_reason());
	EXPECT(!memcmp((void *)buf, fill, sizeof(fill)));
	EXPECT_ERR(gdr_copy_to_mapping(mh, map, "parent", 6), 0);
	EXPECT(!memcmp((void *)buf, "parent", 6));
	unmap_unpin(mh, map, &info);
	t.cu->cuMemFree(buf);
	return TEST_PASS;
}
