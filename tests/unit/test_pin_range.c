/* SPDX-License-Identifier: MIT */
/*
 * The range a dmabuf or vulkan pin reports (gdr_backend_set_pin_range), as gdr_get_info(3)
 * describes it: from the GPU page holding the address to the GPU page boundary after the end,
 * clipped to the allocation rounded out to host pages. Where the allocation starts inside a GPU
 * page, va is its first host page and page_size the host page; where it ends inside one,
 * mapped_size is whole host pages, not whole GPU pages. The simulated CUDA driver's allocations
 * are all GPU-page aligned, so the cases call the helper directly.
 */
#include <stdint.h>
#include <unistd.h>

#include "backend.h"
#include "gdr.h"
#include "harness.h"

#define GPU_PAGE 65536ULL
/* A GPU-page-aligned device address with room around it. */
#define BASE 0x7f0000000000ULL

struct range_case {
	const char *what;
	uint64_t alloc_off, alloc_len;	/* the allocation, from BASE */
	uint64_t pin_off, pin_size;	/* the pin, from BASE */
	uint64_t va_off, mapped;	/* what the pin reports; mapped in host pages when hp */
	int host_page;			/* page_size is the host page (else GPU_PAGE) */
};

static void check_case(const struct range_case *c, uint64_t hp)
{
	struct gdr g = { .host_page_size = hp };
	struct gdr_memh mh = { 0 };
	uint64_t addr = BASE + c->pin_off;

	gdr_backend_set_pin_range(&g, &mh, addr, c->pin_size, BASE + c->alloc_off, c->alloc_len);
	EXPECT(mh.va == BASE + c->va_off, "%s: va is BASE + %#llx, expected BASE + %#llx", c->what,
	       (unsigned long long)(mh.va - BASE), (unsigned long long)c->va_off);
	EXPECT(mh.mapped_size == c->mapped, "%s: mapped_size %#llx, expected %#llx", c->what,
	       (unsigned long long)mh.mapped_size, (unsigned long long)c->mapped);
	EXPECT(mh.page_size == (c->host_page ? hp : GPU_PAGE), "%s: page_size %u", c->what,
	       mh.page_size);
	/* What gdr_get_info(3) promises in every case. */
	EXPECT(mh.va <= addr && addr + c->pin_size <= mh.va + mh.mapped_size,
	       "%s: the reported range does not hold the pin", c->what);
	EXPECT(mh.va % mh.page_size == 0 && mh.mapped_size % hp == 0,
	       "%s: va not on a page_size boundary, or mapped_size not whole host pages", c->what);
	EXPECT((mh.va % GPU_PAGE == 0) == (mh.page_size == GPU_PAGE),
	       "%s: page_size %u with va %s a GPU page", c->what, mh.page_size,
	       mh.va % GPU_PAGE ? "off" : "on");
}

static int case_ranges(void)
{
	uint64_t hp = (uint64_t)sysconf(_SC_PAGESIZE);
	const struct range_case cases[] = {
		{ "inside one GPU page", 0, 1 << 20, 100, 10, 0, GPU_PAGE, 0 },
		{ "across a GPU page boundary", 0, 1 << 20, GPU_PAGE - 10, 20, 0, 2 * GPU_PAGE, 0 },
		{ "allocation ending inside a GPU page", 0, 3 * hp + 5, 3 * hp + 1, 3, 0, 4 * hp,
		  0 },
		{ "allocation starting inside a GPU page", 2 * hp, 1 << 20, 2 * hp + 100, 10, 2 * hp,
		  GPU_PAGE - 2 * hp, 1 },
		{ "pin past the end of its allocation", 0, hp, 0, 2 * hp, 0, 2 * hp, 0 },
	};

	if (hp >= GPU_PAGE)
		return test_skip("host pages of %llu bytes: every pin is whole GPU pages",
				 (unsigned long long)hp);
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++)
		check_case(&cases[i], hp);
	return TEST_PASS;
}

/*
 * Whether a range a CUDA driver answered holds the pin's address (gdr_backend_range_holds): the
 * dmabuf and vulkan backends believe the range only then. [base, base + len) is half-open, and
 * no length, however absurd, takes in an address below base.
 */
static int case_range_holds(void)
{
	EXPECT(gdr_backend_range_holds(BASE, GPU_PAGE, BASE));
	EXPECT(gdr_backend_range_holds(BASE, GPU_PAGE, BASE + GPU_PAGE - 1));
	EXPECT(!gdr_backend_range_holds(BASE, GPU_PAGE, BASE + GPU_PAGE), "the end is outside");
	EXPECT(!gdr_backend_range_holds(BASE, GPU_PAGE, BASE - 1));
	EXPECT(!gdr_backend_range_holds(BASE, 0, BASE), "an empty range holds nothing");
	EXPECT(!gdr_backend_range_holds(BASE, UINT64_MAX, 4096),
	       "a range of length 2^64 - 1 holds an address below its base");
	EXPECT(gdr_backend_range_holds(BASE, UINT64_MAX, UINT64_MAX - 1));
	return TEST_PASS;
}

static const struct test_case cases[] = {
	{ "ranges", case_ranges },
	{ "range_holds", case_range_holds },
	{ NULL, NULL },
};

int main(int argc, char **argv)
{
	return test_run(cases, argc, argv);
}
