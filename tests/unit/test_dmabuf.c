/* SPDX-License-Identifier: MIT */
/*
 * The dma-buf backend against the simulated CUDA driver (13.3, GDRCOPY_BACKEND=dmabuf): pin, map,
 * copy and unpin at many sizes and offsets with the data checked through the device pointer and
 * cuMemcpyDtoH; unaligned pins mapped from info.va; the mapping-type table on a coherent and a
 * non-coherent device; the EINVAL, ENOTSUP and EMFILE paths; descriptor accounting after every
 * case and over 10k cycles; the mmap refusal of an R580-like driver; an export without a
 * descriptor; attributes, the driver version and the v1 gdr_get_info. Each group of cases runs in
 * a child with its own simulated device (the simulator reads its environment once per process).
 */
#include <dlfcn.h>
#include <stdio.h>

#include "dmabuf_cases.h"
#include "harness.h"

struct dmabuf_group_state t;

long sim_open_exports(void)
{
	struct simcuda_dmabuf_counters c;

	t.dmabuf_counters(&c);
	return c.open;
}

CUdeviceptr dev_alloc(size_t size)
{
	CUdeviceptr p = 0;

	return t.cu->cuMemAlloc(&p, size) == CUDA_SUCCESS ? p : 0;
}

void fill(uint8_t *p, size_t n, unsigned seed)
{
	for (size_t i = 0; i < n; i++)
		p[i] = (uint8_t)(seed + i * 131 + (i >> 8));
}

int pin_map(unsigned long addr, size_t size, uint32_t flags, gdr_mh_t *mh, gdr_info_t *info,
	    uint8_t **map)
{
	void *va;
	int ret = gdr_pin_buffer_v2(t.g, addr, size, flags, mh);

	if (ret)
		return ret;
	ret = gdr_get_info(t.g, *mh, info);
	if (!ret)
		ret = gdr_map(t.g, *mh, &va, info->mapped_size);
	if (ret) {
		gdr_unpin_buffer(t.g, *mh);
		return ret;
	}
	*map = va;
	return gdr_get_info(t.g, *mh, info);
}

void unmap_unpin(gdr_mh_t mh, uint8_t *map, const gdr_info_t *info)
{
	EXPECT_ERR(gdr_unmap(t.g, mh, map, info->mapped_size), 0);
	EXPECT_ERR(gdr_unpin_buffer(t.g, mh), 0);
}

static const struct test_case common_cases[] = {
	{ "attributes", dmabuf_case_attributes },
	{ "driver_version", dmabuf_case_driver_version },
	{ "info", dmabuf_case_info },
	{ "copy_sizes_offsets", dmabuf_case_copy_sizes_offsets },
	{ "unaligned_pins", dmabuf_case_unaligned_pins },
	{ "mapping_table", dmabuf_case_mapping_table },
	{ "sim_pcie_flag", dmabuf_case_sim_pcie_flag },
	{ "einval", dmabuf_case_einval },
	{ "enotsup", dmabuf_case_enotsup },
	{ "past_allocation", dmabuf_case_past_allocation },
	{ "two_pins_one_buffer", dmabuf_case_two_pins_one_buffer },
	{ "no_context", dmabuf_case_no_context },
	{ "close_releases", dmabuf_case_close_releases },
	{ "fork", dmabuf_case_fork },
	{ NULL, NULL },
};

static const struct test_case noncoherent_extra[] = {
	{ "emfile", dmabuf_case_emfile },
	{ "cycles_10k", dmabuf_case_cycles },
	{ NULL, NULL },
};

static const struct test_case nofd_cases[] = {
	{ "no_fd", dmabuf_case_no_fd },
	{ NULL, NULL },
};

static const struct test_case nommap_cases[] = {
	{ "mmap_refused", dmabuf_case_mmap_refused },
	{ "attributes", dmabuf_case_attributes },
	{ NULL, NULL },
};

/* The case counted_case runs, which must leave no descriptor and no export open. */
static const struct test_case *counted;

static int counted_case(void)
{
	int fds = test_fd_count(), status = counted->run();

	if (status != TEST_PASS || test_failures())
		return status;
	CHECK(test_fd_count() == fds && sim_open_exports() == 0,
	      "descriptors: %d before, %d after; %ld exports open", fds, test_fd_count(),
	      sim_open_exports());
	return TEST_PASS;
}

static void run_cases(const struct test_case *cases)
{
	for (const struct test_case *c = cases; c->name; c++) {
		char name[128];

		snprintf(name, sizeof(name), "%s/%s", t.name, c->name);
		counted = c;
		test_run_case(&(const struct test_case){ .name = name, .run = counted_case });
	}
}

struct group {
	const char *name;
	const char *attrs;		/* GDRCOPY_SIM_CUDA_ATTR */
	const char *nommap;		/* GDRCOPY_SIM_CUDA_DMABUF_NOMMAP */
	const char *nofd;		/* GDRCOPY_SIM_CUDA_DMABUF_NOFD */
	bool coherent;
	const struct test_case *cases[3];
};

static const struct group groups[] = {
	{ "noncoherent", "124=1", NULL, NULL, false, { common_cases, noncoherent_extra } },
	{ "coherent", "124=1,100=1", NULL, NULL, true, { common_cases } },
	{ "nommap", "124=1", "1", NULL, false, { nommap_cases } },
	{ "nofd", "124=1", NULL, "1", false, { nofd_cases } },
};

/* Runs in the group's child: one result line per case, under the group's name. */
static int group_child(void *arg)
{
	const struct group *gr = arg;
	struct gdr_cuda_ctx_scope scope;
	struct gdr_why why = { "" };
	void *lib;

	t.name = gr->name;
	t.coherent = gr->coherent;
	t.cu = testcuda_acquire(&why);
	if (!t.cu)
		return test_fail("the simulated libcuda does not load: %s", why.msg);
	lib = dlopen("libcuda.so.1", RTLD_NOW | RTLD_NOLOAD);
	t.dmabuf_counters = lib ? dlsym(lib, "simcuda_dmabuf_get_counters") : NULL;
	t.counters = lib ? dlsym(lib, "simcuda_get_counters") : NULL;
	t.get_info_v1 = dlsym(RTLD_DEFAULT, "gdr_get_info");
	if (!t.dmabuf_counters || !t.counters || !t.get_info_v1)
		return test_fail("libcuda.so.1 is not the simulator, or no v1 gdr_get_info");
	if (gdr_cuda_ctx_enter(t.cu->lib, 0, &scope) != CUDA_SUCCESS)
		return test_fail("no context on simulated device 0");
	t.g = gdr_open();
	if (!t.g)
		return test_fail("gdr_open failed with GDRCOPY_BACKEND=dmabuf");
	for (int i = 0; gr->cases[i]; i++)
		run_cases(gr->cases[i]);
	CHECK_OK(gdr_close(t.g));
	gdr_cuda_ctx_leave(t.cu->lib, &scope);
	CHECK(!dlclose(lib), "dlclose(libcuda.so.1): %s", dlerror());
	return test_status();
}

int main(void)
{
	bool failed = false;

	test_use_sim_cuda(SIM_CUDA_DIR);
	for (size_t i = 0; i < sizeof(groups) / sizeof(groups[0]); i++) {
		const char *const env[] = {
			"GDRCOPY_BACKEND", "dmabuf",
			"GDRCOPY_USE_DMABUF_MMAP", NULL,
			"GDRCOPY_ENABLE_LOGGING", "1",
			"GDRCOPY_LOG_LEVEL", "4",
			"GDRCOPY_SIM_CUDA_VERSION", "13030",
			"GDRCOPY_SIM_CUDA_BACKING", "memfd",
			"GDRCOPY_SIM_CUDA_ATTR", groups[i].attrs,
			"GDRCOPY_SIM_CUDA_DMABUF_NOMMAP", groups[i].nommap,
			"GDRCOPY_SIM_CUDA_DMABUF_NOFD", groups[i].nofd,
			NULL,
		};
		const struct test_child child = { .env = env };

		/*
		 * The group's cases report themselves; a group that fails besides (its set-up, or
		 * a sanitizer at its exit) gets a line of its own.
		 */
		if (test_child_run(&child, group_child, (void *)&groups[i]) == TEST_PASS)
			continue;
		failed = true;
		if (test_reason()[0])
			test_report("fail", groups[i].name, "%s", test_reason());
	}
	return failed ? TEST_FAIL : test_status();
}
