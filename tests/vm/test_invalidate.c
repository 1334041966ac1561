/* SPDX-License-Identifier: MIT */
/*
 * When a CPU mapping must stop working, and when it must not: the sanity catalogue's
 * invalidation_* cases within one process. After gdr_close or unpin every touch faults; after
 * the memory is freed a persistent pin keeps its pages (the mapping still reads the data) and a
 * non-persistent one is revoked (SIGBUS, callback flag 1). Across processes: test_sharing.c.
 */
#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/socket.h>
#include <sys/uio.h>
#include <unistd.h>

#include "vmtest.h"

static int case_access_after_gdr_close(void)
{
	struct vm_buf b;
	uint32_t v;
	gdr_t g = vm_gdr_open();
	int ret, sig;

	CHECK(g, "gdr_open");
	ret = vm_map_filled(g, 2 * GPU_PAGE, 64, VM_MAGIC_PARENT, &b);
	if (ret)
		return ret;
	CHECK(vm_try_read32(&b.map[1], &v) == 0 && v == VM_MAGIC_PARENT + 1, "read back");
	/* No gdr_unmap: gdr_close must leave nothing that still reaches the pages. */
	CHECK_OK(gdr_close(g));
	sig = vm_try_read32(&b.map[1], &v);
	CHECK(sig == SIGBUS || sig == SIGSEGV, "a read after gdr_close returned %#x, no fault", v);
	sig = vm_try_write32(&b.map[GPU_PAGE / 4 + 1], 1);
	CHECK(sig == SIGBUS || sig == SIGSEGV, "a store after gdr_close did not fault");
	return TEST_PASS;
}

static int access_after_free(uint32_t flags)
{
	struct nvp2p_sim_counts before, after;
	struct vm_buf b;
	uint32_t v;
	int flag, ret, sig;
	void *p;
	gdr_t g = vm_gdr_open();

	CHECK(g, "gdr_open");
	ret = vm_map_buf_flags(g, 2 * GPU_PAGE, flags, &b);
	if (!ret)
		ret = vm_fill_words(b.map, 32, VM_MAGIC_PARENT);
	if (ret)
		return ret;
	CHECK_OK(gdr_get_callback_flag(g, b.mh, &flag));
	CHECK(flag == 0, "callback flag %d before the free", flag);
	CHECK_OK(vm_counts(&before));
	CHECK_OK(vm_free(b.a.va));
	CHECK_OK(vm_counts(&after));
	CHECK_OK(gdr_get_callback_flag(g, b.mh, &flag));
	sig = vm_try_read32(&b.map[3], &v);

	if (vm_persistent()) {
		/* The CUDA va is gone, the physical memory is not (GDRCopy #336). */
		CHECK(sig == 0, "a persistent mapping faulted (signal %d) after the free", sig);
		CHECK(v == VM_MAGIC_PARENT + 3, "a persistent mapping reads %#x after the free", v);
		CHECK(vm_try_write32(&b.map[3], 5) == 0, "a store faulted after the free");
		CHECK(flag == 0, "callback flag %d in persistent mode", flag);
		CHECK(after.callbacks == before.callbacks, "a persistent pin got a callback");
		CHECK(after.pins == before.pins && after.backing_bytes == before.backing_bytes,
		      "the free took the pinned pages away: %s", vm_counts_str(&after));
		CHECK_OK(gdr_unmap(g, b.mh, b.map, 2 * GPU_PAGE));
		CHECK_OK(gdr_unpin_buffer(g, b.mh));
		CHECK_OK(vm_counts(&after));
		CHECK(after.pins == before.pins - 1 &&
		      after.backing_bytes == before.backing_bytes - 2 * GPU_PAGE,
		      "unpin after the free did not release the pages: %s", vm_counts_str(&after));
		return TEST_PASS;
	}
	CHECK(sig == SIGBUS || sig == SIGSEGV, "a revoked mapping did not fault: reads %#x", v);
	CHECK(flag == 1, "callback flag %d after the free", flag);
	CHECK(after.callbacks == before.callbacks + 1 && after.pins == before.pins - 1,
	      "the free did not revoke the pin: %s", vm_counts_str(&after));
	CHECK_OK(gdr_unmap(g, b.mh, b.map, 2 * GPU_PAGE));
	CHECK(gdr_map(g, b.mh, &p, 2 * GPU_PAGE) != 0, "a revoked pin mapped again");
	CHECK_OK(gdr_unpin_buffer(g, b.mh));
	return TEST_PASS;
}

static int case_access_after_free(void)
{
	return access_after_free(0);
}

/*
 * One physically contiguous run: gdrdrv remaps the whole VMA at once, which x86 PAT tracks
 * (VM_PAT). A revoked mapping of that kind must still munmap without a kernel warning.
 */
static int case_access_after_free_contiguous(void)
{
	return access_after_free(NVP2P_SIM_ALLOC_CONTIGUOUS);
}

/*
 * The memory is freed while the pin is being made, after NVIDIA registered the free callback
 * and before get_pages returned (the sim's INJECT_REVOKE): the callback runs before gdrdrv has
 * adopted the table, and get_pages returns a table that is gone. The pin succeeds revoked, as if
 * the free came just after: callback flag 1, nothing to map, an unpin that gives nothing back.
 * The callback still frees the table (the sim counts a misuse otherwise). A persistent pin has
 * no callback: the injection waits for a non-persistent one.
 */
static int case_freed_before_pin_returns(void)
{
	struct nvp2p_sim_counts before, pinned, after;
	struct nvp2p_sim_alloc a;
	gdr_mh_t mh;
	int flag;
	void *p;
	gdr_t g = vm_gdr_open();

	CHECK(g, "gdr_open");
	CHECK_OK(vm_alloc(2 * GPU_PAGE, 0, &a));
	CHECK_OK(vm_counts(&before));
	CHECK_OK(vm_inject_revoke(1));
	CHECK_OK(gdr_pin_buffer(g, a.va, 2 * GPU_PAGE, 0, 0, &mh));
	CHECK_OK(vm_counts(&pinned));
	CHECK_OK(gdr_get_callback_flag(g, mh, &flag));
	if (vm_persistent()) {
		CHECK_OK(vm_inject_revoke(0));
		CHECK(flag == 0 && pinned.callbacks == before.callbacks &&
		      pinned.pins == before.pins + 1 && pinned.allocations == before.allocations,
		      "a persistent pin was revoked (flag %d, %llu callbacks): %s", flag,
		      (unsigned long long)(pinned.callbacks - before.callbacks),
		      vm_counts_str(&pinned));
		CHECK_OK(gdr_unpin_buffer(g, mh));
		CHECK_OK(gdr_close(g));
		return TEST_PASS;
	}
	CHECK(pinned.callbacks == before.callbacks + 1 && pinned.pins == before.pins &&
	      pinned.allocations == before.allocations - 1,
	      "the injected free did not revoke the pin inside get_pages (%llu callbacks): %s",
	      (unsigned long long)(pinned.callbacks - before.callbacks), vm_counts_str(&pinned));
	CHECK(flag == 1, "callback flag %d for a pin revoked before it returned", flag);
	CHECK(gdr_map(g, mh, &p, 2 * GPU_PAGE) != 0, "a pin revoked before it returned mapped");
	CHECK_OK(gdr_unpin_buffer(g, mh));
	CHECK_OK(vm_counts(&after));
	CHECK(after.put_pages_calls == pinned.put_pages_calls,
	      "the unpin of a revoked pin called put_pages %llu times",
	      (unsigned long long)(after.put_pages_calls - pinned.put_pages_calls));
	CHECK_OK(gdr_close(g));
	return TEST_PASS;
}

static int case_two_mappings(void)
{
	struct vm_buf one, two;
	uint32_t v, got[16];
	int ret, sig, i;
	gdr_t g = vm_gdr_open();

	CHECK(g, "gdr_open");
	if ((ret = vm_map_buf(g, GPU_PAGE, &one)) || (ret = vm_map_buf(g, 3 * GPU_PAGE, &two)) ||
	    (ret = vm_fill_words(one.map, 16, VM_MAGIC_PARENT)) ||
	    (ret = vm_fill_words(two.map, 16, VM_MAGIC_CHILD)))
		return ret;
	CHECK_OK(vm_free(one.a.va));
	sig = vm_try_read32(&one.map[0], &v);
	if (vm_persistent())
		CHECK(sig == 0 && v == VM_MAGIC_PARENT, "the freed persistent buffer reads wrong");
	else
		CHECK(sig != 0, "the freed buffer's mapping still reads %#x", v);
	/* The other buffer is untouched. */
	for (i = 0; i < 16; i++)
		CHECK(vm_try_read32(&two.map[i], &v) == 0 && v == VM_MAGIC_CHILD + (uint32_t)i,
		      "the other mapping broke at word %d", i);
	CHECK(vm_try_write32(&two.map[2 * GPU_PAGE / 4], 77) == 0, "the other mapping faulted");
	CHECK_OK(vm_sim_read(two.a.va, got, sizeof(got)));
	CHECK(got[5] == VM_MAGIC_CHILD + 5, "the other buffer's memory changed");
	CHECK_OK(vm_sim_read(two.a.va + 2 * GPU_PAGE, &v, sizeof(v)));
	CHECK(v == 77, "a store to the other buffer did not land");
	CHECK_OK(gdr_close(g));
	return TEST_PASS;
}

/* The child reports back in its exit status: 0 is the expected outcome. */

const struct vm_case vm_cases[] = {
	{ "invalidation_access_after_gdr_close", case_access_after_gdr_close, "pn" },
	{ "invalidation_access_after_free", case_access_after_free, "pn" },
	{ "invalidation_access_after_free_contiguous", case_access_after_free_contiguous, "pn" },
	{ "invalidation_two_mappings", case_two_mappings, "pn" },
	{ "invalidation_freed_before_pin_returns", case_freed_before_pin_returns, "pn" },
	{ NULL, NULL, NULL },
};
