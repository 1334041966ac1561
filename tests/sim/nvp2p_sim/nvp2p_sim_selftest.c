// SPDX-License-Identifier: GPL-2.0 OR MIT
/*
 * The sim's checks of its own nvidia_p2p semantics, run in the caller's context by the SELFTEST
 * ioctl: the paths a well-behaved consumer never takes (unaligned ranges, NULL callbacks,
 * wrong flags, double puts) are where the sim could silently differ from NVIDIA.
 */
#include <linux/highmem.h>
#include <linux/io.h>
#include <linux/mm.h>
#include <linux/sched.h>
#include <linux/sched/signal.h>

#include "nvp2p_sim.h"

#define ST_MARKER 0x5eed0f60d5eed0f6ULL

struct st_cb {
	int fired;
	int free_ret;
	int frees;		/* how many times the callback frees its table: 1, or a misuse */
	struct nvidia_p2p_page_table *table;
};

static void st_free_callback(void *data)
{
	struct st_cb *cb = data;
	int i;

	cb->fired++;
	for (i = 0; i < cb->frees; i++)
		cb->free_ret = nvidia_p2p_free_page_table(cb->table);
	cb->table = NULL;
}

/* A callback that frees its table once, as the contract asks. */
#define ST_CB_INIT { .frees = 1 }

#define ST_CHECK(cond, ...)						\
	do {								\
		if (!(cond)) {						\
			pr_err("nvp2p_sim: selftest: " __VA_ARGS__);	\
			failures++;					\
		}							\
	} while (0)

static u64 st_pins(void)
{
	u64 n;

	mutex_lock(&sim.lock);
	n = sim.counts.pins;
	mutex_unlock(&sim.lock);
	return n;
}

/* The selftest's deliberate misuses caught so far. */
static u64 st_misuses(void)
{
	return atomic64_read(&sim.selftest_misuses);
}

static void st_inject(u32 count, int error)
{
	mutex_lock(&sim.lock);
	sim.inject_count = count;
	sim.inject_error = error;
	mutex_unlock(&sim.lock);
}

/* The physical address of the chunk at va in the caller's allocation, 0 if none. */
static u64 st_phys(u64 va)
{
	struct sim_alloc *a;
	u64 phys = 0;

	mutex_lock(&sim.lock);
	a = sim_alloc_lookup_locked(va, 1);
	if (a)
		phys = page_to_phys(a->backing->chunks[(va - a->va) / SIM_CHUNK_SIZE]);
	mutex_unlock(&sim.lock);
	return phys;
}

static void st_poke(u64 phys, u64 val)
{
	u64 *p = kmap_local_page(pfn_to_page(PHYS_PFN(phys)));

	*p = val;
	kunmap_local(p);
}

static u64 st_peek(u64 phys)
{
	u64 *p = kmap_local_page(pfn_to_page(PHYS_PFN(phys)));
	u64 val = *p;

	kunmap_local(p);
	return val;
}

static int st_bad_arguments(u64 va, const struct nvp2p_sim_alloc *req)
{
	struct nvidia_p2p_page_table *pt = NULL;
	struct st_cb cb = ST_CB_INIT;
	int failures = 0;

	ST_CHECK(nvidia_p2p_get_pages(0, 0, va, SZ_64K, &pt, NULL, &cb) == -EINVAL,
		 "get_pages took a NULL callback\n");
	ST_CHECK(nvidia_p2p_get_pages(0, 0, va + SZ_4K, SZ_64K, &pt, st_free_callback, &cb) ==
		 -EINVAL, "get_pages took an unaligned address\n");
	ST_CHECK(nvidia_p2p_get_pages(0, 0, va, SZ_64K + SZ_4K, &pt, st_free_callback, &cb) ==
		 -EINVAL, "get_pages took an unaligned length\n");
	ST_CHECK(nvidia_p2p_get_pages(0, 0, va, 0, &pt, st_free_callback, &cb) == -EINVAL,
		 "get_pages took a zero length\n");
	ST_CHECK(nvidia_p2p_get_pages(0, 0, va, req->mapped_size + SZ_64K, &pt,
				      st_free_callback, &cb) == -EINVAL,
		 "get_pages took a range past the allocation\n");
	ST_CHECK(nvidia_p2p_get_pages(0, 0, va - SZ_64K, SZ_64K, &pt, st_free_callback, &cb) ==
		 -EINVAL, "get_pages took a range before the allocation\n");
	ST_CHECK(nvidia_p2p_get_pages(req->p2p_token + 2, req->va_space, va, SZ_64K, &pt,
				      st_free_callback, &cb) == -EINVAL,
		 "get_pages took a wrong P2P token\n");
	ST_CHECK(nvidia_p2p_get_pages_persistent(va, SZ_64K, &pt, 2) == -EINVAL,
		 "get_pages_persistent took an unknown flag\n");
	ST_CHECK(nvidia_p2p_get_pages_persistent(va, SZ_64K, &pt,
						 NVIDIA_P2P_FLAGS_FORCE_BAR1_MAPPING) == -ENOTSUPP,
		 "get_pages_persistent forced BAR1 on a non-coherent allocation\n");
	ST_CHECK(nvidia_p2p_put_pages(0, 0, va, NULL) == 0, "put_pages(NULL) is not 0\n");
	ST_CHECK(!cb.fired, "a refused pin's callback fired\n");
	return failures;
}

static int st_table(u64 va)
{
	struct nvidia_p2p_page_table *pt = NULL;
	struct st_cb cb = ST_CB_INIT;
	int failures = 0;
	u32 i;

	if (nvidia_p2p_get_pages(0, 0, va + SZ_64K, 2 * SZ_64K, &pt, st_free_callback, &cb)) {
		pr_err("nvp2p_sim: selftest: get_pages of an owned, aligned range failed\n");
		return 1;
	}
	ST_CHECK(NVIDIA_P2P_PAGE_TABLE_VERSION_COMPATIBLE(pt), "table version %#x\n", pt->version);
	ST_CHECK(pt->page_size == NVIDIA_P2P_PAGE_SIZE_64KB, "page_size %u\n", pt->page_size);
	ST_CHECK(pt->entries == 2, "%u entries for 128 KiB\n", pt->entries);
	ST_CHECK(pt->flags == 0, "flags %#x on a plain allocation\n", pt->flags);
	ST_CHECK(pt->gpu_uuid, "no gpu_uuid\n");
	for (i = 0; i < pt->entries && i < 2; i++)
		ST_CHECK(pt->pages[i]->physical_address == st_phys(va + (i + 1) * SZ_64K),
			 "entry %u is not its chunk's physical address\n", i);
	ST_CHECK(nvidia_p2p_put_pages_persistent(va + SZ_64K, pt, 0) == -EINVAL,
		 "put_pages_persistent released a non-persistent table\n");
	ST_CHECK(nvidia_p2p_put_pages(0, 0, va, pt) == -EINVAL,
		 "put_pages released a table with another va\n");
	ST_CHECK(nvidia_p2p_put_pages(0, 0, va + SZ_64K, pt) == 0, "put_pages failed\n");
	ST_CHECK(!cb.fired, "put_pages fired the callback\n");
	return failures;
}

static int st_tokens_and_injection(u64 va, const struct nvp2p_sim_alloc *req)
{
	struct nvidia_p2p_page_table *pt = NULL;
	struct st_cb cb = ST_CB_INIT;
	int failures = 0;

	if (nvidia_p2p_get_pages(req->p2p_token, req->va_space, va, SZ_64K, &pt,
				 st_free_callback, &cb) == 0) {
		ST_CHECK(nvidia_p2p_put_pages(0, 0, va, pt) == -EINVAL,
			 "put_pages released a token pin without its tokens\n");
		ST_CHECK(nvidia_p2p_put_pages(req->p2p_token, req->va_space, va, pt) == 0,
			 "put_pages of a token pin failed\n");
	} else {
		ST_CHECK(0, "get_pages with the allocation's tokens failed\n");
	}

	st_inject(1, -ENOMEM);
	ST_CHECK(nvidia_p2p_get_pages(0, 0, va, SZ_64K, &pt, st_free_callback, &cb) == -ENOMEM,
		 "an injected ENOMEM did not happen\n");
	if (nvidia_p2p_get_pages(0, 0, va, SZ_64K, &pt, st_free_callback, &cb) == 0)
		nvidia_p2p_put_pages(0, 0, va, pt);
	else
		ST_CHECK(0, "the pin after an injected failure failed too\n");
	st_inject(0, 0);
	return failures;
}

/* Free the allocation under a persistent and a non-persistent pin; va is freed on return. */
static int st_free_with_pins(u64 va)
{
	struct nvidia_p2p_page_table *ppt = NULL, *stale;
	struct st_cb cb = ST_CB_INIT;
	int failures = 0;
	u64 phys, misuses;

	if (nvidia_p2p_get_pages_persistent(va, SZ_64K, &ppt, 0)) {
		pr_err("nvp2p_sim: selftest: get_pages_persistent failed\n");
		sim_alloc_free(va);
		return 1;
	}
	phys = ppt->pages[0]->physical_address;
	st_poke(phys, ST_MARKER);
	if (nvidia_p2p_get_pages(0, 0, va + SZ_64K, SZ_64K, &cb.table, st_free_callback, &cb)) {
		ST_CHECK(0, "get_pages beside a persistent pin failed\n");
		cb.fired = 1;
	}
	stale = cb.table;

	misuses = st_misuses();
	ST_CHECK(sim_alloc_free(va) == 0, "free failed\n");
	ST_CHECK(cb.fired == 1, "the free callback fired %d times\n", cb.fired);
	ST_CHECK(cb.free_ret == 0, "free_page_table in the callback returned %d\n", cb.free_ret);
	ST_CHECK(st_misuses() == misuses, "a callback that freed its table once was a misuse\n");
	ST_CHECK(nvidia_p2p_put_pages(0, 0, va + SZ_64K, stale) == 0,
		 "put_pages after the callback is not 0\n");
	ST_CHECK(nvidia_p2p_get_pages(0, 0, va, SZ_64K, &stale, st_free_callback, &cb) == -EINVAL,
		 "get_pages of freed memory succeeded\n");

	ST_CHECK(st_peek(phys) == ST_MARKER, "a persistent pin lost its data at free\n");
	ST_CHECK(nvidia_p2p_put_pages_persistent(va, ppt, 1) == -EINVAL,
		 "put_pages_persistent took flags 1\n");
	ST_CHECK(nvidia_p2p_put_pages(0, 0, va, ppt) == -EINVAL,
		 "put_pages released a persistent table\n");
	ST_CHECK(nvidia_p2p_put_pages_persistent(va, ppt, 0) == 0,
		 "put_pages_persistent failed\n");
	ST_CHECK(nvidia_p2p_put_pages_persistent(va, ppt, 0) == -EINVAL,
		 "a second put_pages_persistent of one table succeeded\n");
	return failures;
}

static int st_cacheable(struct sim_ctx *ctx)
{
	struct nvp2p_sim_alloc req = {
		.size = SZ_64K,
		.flags = NVP2P_SIM_ALLOC_CPU_CACHEABLE,
	};
	struct nvidia_p2p_page_table *pt = NULL;
	struct st_cb cb = ST_CB_INIT;
	int failures = 0;

	if (sim_alloc_create(ctx, &req)) {
		pr_err("nvp2p_sim: selftest: cacheable allocation failed\n");
		return 1;
	}
	if (nvidia_p2p_get_pages(0, 0, req.va, SZ_64K, &pt, st_free_callback, &cb) == 0) {
		ST_CHECK(pt->flags == NVIDIA_P2P_PAGE_TABLE_FLAGS_CPU_CACHEABLE,
			 "a cacheable allocation's table has flags %#x\n", pt->flags);
		nvidia_p2p_put_pages(0, 0, req.va, pt);
	} else {
		ST_CHECK(0, "get_pages of a cacheable allocation failed\n");
	}
	if (nvidia_p2p_get_pages_persistent(req.va, SZ_64K, &pt,
					    NVIDIA_P2P_FLAGS_FORCE_BAR1_MAPPING) == 0) {
		ST_CHECK(pt->flags == 0, "a forced-BAR1 table is cacheable\n");
		nvidia_p2p_put_pages_persistent(req.va, pt, 0);
	} else {
		ST_CHECK(0, "forced BAR1 on a coherent allocation failed\n");
	}
	sim_alloc_free(req.va);
	return failures;
}

/* One pin of a fresh allocation whose callback frees its table frees times, then the free. */
static int st_callback_frees(struct sim_ctx *ctx, int frees, u64 want_misuses)
{
	struct nvp2p_sim_alloc req = { .size = SZ_64K };
	struct st_cb cb = { .frees = frees };
	int failures = 0;
	u64 before;

	if (sim_alloc_create(ctx, &req)) {
		pr_err("nvp2p_sim: selftest: allocation failed\n");
		return 1;
	}
	if (nvidia_p2p_get_pages(0, 0, req.va, SZ_64K, &cb.table, st_free_callback, &cb)) {
		ST_CHECK(0, "get_pages for a callback that frees %d times failed\n", frees);
		sim_alloc_free(req.va);
		return failures;
	}
	before = st_misuses();
	sim_alloc_free(req.va);
	ST_CHECK(cb.fired == 1, "the free callback fired %d times\n", cb.fired);
	ST_CHECK(st_misuses() - before == want_misuses,
		 "a callback that frees its table %d times: %llu misuses, not %llu\n", frees,
		 st_misuses() - before, want_misuses);
	return failures;
}

/*
 * nvidia_p2p_free_page_table belongs in the free callback, once, on the callback's table: a
 * callback that leaves it out or calls it twice, and a call anywhere else, are each one misuse,
 * and return 0 as NVIDIA's no-op does.
 */
static int st_free_page_table(struct sim_ctx *ctx)
{
	struct nvp2p_sim_alloc req = { .size = SZ_64K };
	struct nvidia_p2p_page_table *pt = NULL;
	struct st_cb cb = ST_CB_INIT;
	int failures = 0;
	u64 before;

	failures += st_callback_frees(ctx, 1, 0);
	failures += st_callback_frees(ctx, 0, 1);
	failures += st_callback_frees(ctx, 2, 1);

	if (sim_alloc_create(ctx, &req)) {
		pr_err("nvp2p_sim: selftest: allocation failed\n");
		return failures + 1;
	}
	if (nvidia_p2p_get_pages(0, 0, req.va, SZ_64K, &pt, st_free_callback, &cb) == 0) {
		before = st_misuses();
		ST_CHECK(nvidia_p2p_free_page_table(pt) == 0,
			 "free_page_table outside the callback did not return 0\n");
		ST_CHECK(st_misuses() - before == 1,
			 "free_page_table outside the callback: %llu misuses, not 1\n",
			 st_misuses() - before);
		ST_CHECK(nvidia_p2p_put_pages(0, 0, req.va, pt) == 0,
			 "put_pages after a stray free_page_table failed\n");
	} else {
		ST_CHECK(0, "get_pages for a stray free_page_table failed\n");
	}
	sim_alloc_free(req.va);
	before = st_misuses();
	ST_CHECK(nvidia_p2p_free_page_table(pt) == 0 && st_misuses() - before == 1,
		 "free_page_table of a released table is not one misuse returning 0\n");
	return failures;
}

/*
 * The quarantine catches a write through a mapping that outlived the free: one written page,
 * and only that one, is reported when the quarantine is emptied, and an untouched one is not.
 */
static int st_quarantine(struct sim_ctx *ctx)
{
	struct nvp2p_sim_alloc touched = { .size = 2 * SZ_64K }, untouched = { .size = SZ_64K };
	unsigned int written;
	int failures = 0;
	u64 phys;

	if (sim_alloc_create(ctx, &touched)) {
		pr_err("nvp2p_sim: selftest: allocation for the quarantine failed\n");
		return 1;
	}
	if (sim_alloc_create(ctx, &untouched)) {
		pr_err("nvp2p_sim: selftest: allocation for the quarantine failed\n");
		sim_alloc_free(touched.va);
		return 1;
	}
	phys = st_phys(touched.va + SZ_64K);
	ST_CHECK(phys, "no page behind a live allocation\n");
	ST_CHECK(sim_alloc_free(touched.va) == 0, "free failed\n");
	ST_CHECK(sim_alloc_free(untouched.va) == 0, "free failed\n");
	/* What a consumer's stale mapping would do; the page is still the sim's. */
	if (phys)
		st_poke(phys, ST_MARKER);
	written = sim_quarantine_drain();
	ST_CHECK(written == 1, "the quarantine found %u allocations written after their free, not 1\n",
		 written);
	ST_CHECK(sim_quarantine_drain() == 0, "the quarantine was not empty after a drain\n");
	return failures;
}

int sim_selftest(struct sim_ctx *ctx)
{
	struct nvp2p_sim_alloc req = { .size = 4 * SZ_64K };
	int failures = 0;
	u64 pins;

	/* Checked before its reports are taken as the selftest's own (st_quarantine). */
	sim_quarantine_drain();
	mutex_lock(&sim.lock);
	if (sim.selftest_task) {
		mutex_unlock(&sim.lock);
		return -EBUSY;
	}
	WRITE_ONCE(sim.selftest_task, current);
	mutex_unlock(&sim.lock);

	pins = st_pins();
	if (sim_alloc_create(ctx, &req)) {
		pr_err("nvp2p_sim: selftest: allocation failed\n");
		failures++;
		goto out;
	}
	failures += st_bad_arguments(req.va, &req);
	failures += st_table(req.va);
	failures += st_tokens_and_injection(req.va, &req);
	failures += st_free_with_pins(req.va);
	failures += st_cacheable(ctx);
	failures += st_free_page_table(ctx);
	failures += st_quarantine(ctx);
	ST_CHECK(st_pins() == pins, "%llu pins before, %llu after\n", pins, st_pins());
out:
	WRITE_ONCE(sim.selftest_task, NULL);
	return failures ? -EIO : 0;
}
