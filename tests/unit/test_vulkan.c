/* SPDX-License-Identifier: MIT */
/*
 * The vulkan backend through the public API, against the simulated CUDA driver (linked) and
 * Mesa's lavapipe: pin, map, copies both ways checked against the device memory, info and
 * attributes, every refusal and its log line, leaks, threads.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cuda_vmm.h"
#include "harness.h"
#include "simcuda.h"
#include "vulkan_cases.h"

gdr_t vk_gdr;

void leak_mark_take(struct leak_mark *m)
{
	simcuda_get_counters(&m->c);
	m->fds = test_fd_count();
}

int check_no_leak(const struct leak_mark *m)
{
	struct leak_mark now;

	leak_mark_take(&now);
	CHECK_EQ(now.fds, m->fds);
	CHECK_EQ(now.c.allocations, m->c.allocations);
	CHECK_EQ(now.c.handle_refs, m->c.handle_refs);
	CHECK_EQ(now.c.mappings, m->c.mappings);
	CHECK_EQ(now.c.primary_ctx_refs, m->c.primary_ctx_refs);
	return 0;
}

void fill_pattern(uint8_t *p, size_t n, unsigned seed)
{
	for (size_t i = 0; i < n; i++)
		p[i] = (uint8_t)(seed * 131 + i * 7 + (i >> 8));
}

/* Pin and map [addr, addr + size); *map points at addr through the mapping. */
int pin_map(unsigned long addr, size_t size, gdr_mh_t *mh, void **base, uint8_t **map)
{
	gdr_info_t info;
	int ret = gdr_pin_buffer_v2(vk_gdr, addr, size, 0, mh);

	if (ret)
		return test_fail("gdr_pin_buffer_v2(0x%lx, %zu) = %d", addr, size, ret);
	ret = gdr_get_info(vk_gdr, *mh, &info);
	if (ret)
		return test_fail("gdr_get_info = %d", ret);
	ret = gdr_map(vk_gdr, *mh, base, info.mapped_size);
	if (ret)
		return test_fail("gdr_map(%llu) = %d", (unsigned long long)info.mapped_size, ret);
	*map = (uint8_t *)*base + (addr - info.va);
	return 0;
}

int unmap_unpin(gdr_mh_t mh, void *base)
{
	gdr_info_t info;

	CHECK_EQ(gdr_get_info(vk_gdr, mh, &info), 0);
	CHECK_EQ(gdr_unmap(vk_gdr, mh, base, info.mapped_size), 0);
	CHECK_EQ(gdr_unpin_buffer(vk_gdr, mh), 0);
	return 0;
}

static const struct test_case cases[] = {
	{ "open", vulkan_case_open },
	{ "attributes", vulkan_case_attributes },
	{ "pin_info", vulkan_case_pin_info },
	{ "copy_sizes_offsets", vulkan_case_copy_sizes_offsets },
	{ "coherent_direct", vulkan_case_coherent_direct },
	{ "many_buffers", vulkan_case_many_buffers },
	{ "free_while_pinned", vulkan_case_free_while_pinned },
	{ "segments", vulkan_case_segments },
	{ "refusals", vulkan_case_refusals },
	{ "no_fd", vulkan_case_no_fd },
	{ "emfile", vulkan_case_emfile },
	{ "not_device_memory", vulkan_case_not_device_memory },
	{ "map_errors", vulkan_case_map_errors },
	{ "unmatched_device", vulkan_case_unmatched_device },
	{ "cycles_no_leak", vulkan_case_cycles_no_leak },
	{ "context_restored", vulkan_case_context_restored },
	{ "threads", vulkan_case_threads },
	{ "fork", vulkan_case_fork },
	{ "open_close_cycles", vulkan_case_open_close_cycles },
	{ "close_live", vulkan_case_close_live },
	{ "close", vulkan_case_close },
	{ NULL, NULL },
};

int main(int argc, char **argv)
{
	const char *missing = test_lavapipe_missing();

	if (missing) {
		printf("%s\n", missing);
		return TEST_SKIP;
	}
	test_use_lavapipe();
	setenv("GDRCOPY_SIM_CUDA_DEVICES", "2", 1);
	if (test_cuda_init()) {
		printf("simulated CUDA driver failed to start\n");
		return 1;
	}
	if (strcmp(simcuda_backing(), "vulkan")) {
		printf("the simulated CUDA driver could not get memory from lavapipe\n");
		return 1;
	}
	return test_run(cases, argc, argv);
}
