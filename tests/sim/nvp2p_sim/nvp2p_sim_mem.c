// SPDX-License-Identifier: GPL-2.0 OR MIT
/*
 * Fake GPU memory: allocations, their host backing, and the cudaMemcpy-like access tests use
 * to check what a consumer wrote through its own mapping of the pinned pages.
 */
#include <linux/gfp.h>
#include <linux/highmem.h>
#include <linux/mm.h>
#include <linux/overflow.h>
#include <linux/random.h>
#include <linux/sched.h>
#include <linux/sched/signal.h>
#include <linux/slab.h>
#include <linux/sort.h>
#include <linux/uaccess.h>

#include "nvp2p_sim.h"

static int sim_cmp_page_desc(const void *a, const void *b)
{
	unsigned long pa = page_to_pfn(*(struct page * const *)a);
	unsigned long pb = page_to_pfn(*(struct page * const *)b);

	return pa < pb ? 1 : pa > pb ? -1 : 0;
}

/*
 * Falling physical order: no chunk is followed by the one physically after it, so a consumer
 * that merges runs of contiguous entries finds none, and one that assumes contiguity reads the
 * wrong pages.
 */
static void sim_scatter(struct sim_backing *b)
{
	sort(b->chunks, b->nchunks, sizeof(b->chunks[0]), sim_cmp_page_desc, NULL);
}

static void sim_poison_page_range(struct page *first, unsigned long npages)
{
	unsigned long i;

	for (i = 0; i < npages; i++) {
		void *kaddr = kmap_local_page(first + i);

		memset(kaddr, SIM_POISON, PAGE_SIZE);
		kunmap_local(kaddr);
	}
}

struct sim_backing *sim_backing_create(u64 size, u32 flags)
{
	const gfp_t gfp = GFP_KERNEL | __GFP_ZERO | __GFP_NOWARN;
	unsigned long n = size / SIM_CHUNK_SIZE;
	struct sim_backing *b;
	unsigned long i;

	b = kvzalloc(struct_size(b, chunks, n), GFP_KERNEL);
	if (!b)
		return NULL;
	kref_init(&b->ref);
	b->size = size;
	b->nchunks = n;

	if (flags & NVP2P_SIM_ALLOC_CONTIGUOUS) {
		b->block_order = get_order(size);
		b->block = alloc_pages(gfp, b->block_order);
		if (!b->block)
			goto err_free_backing;
		for (i = 0; i < n; i++)
			b->chunks[i] = b->block + i * SIM_PAGES_PER_CHUNK;
		return b;
	}

	for (i = 0; i < n; i++) {
		b->chunks[i] = alloc_pages(gfp, SIM_CHUNK_ORDER);
		if (!b->chunks[i])
			goto err_free_chunks;
		cond_resched();
	}
	if (flags & NVP2P_SIM_ALLOC_SCATTERED)
		sim_scatter(b);
	return b;

err_free_chunks:
	while (i--)
		__free_pages(b->chunks[i], SIM_CHUNK_ORDER);
err_free_backing:
	kvfree(b);
	return NULL;
}

/* The page at byte off of b's memory. */
struct page *sim_backing_page(const struct sim_backing *b, u64 off)
{
	return b->chunks[off / SIM_CHUNK_SIZE] + (off % SIM_CHUNK_SIZE) / PAGE_SIZE;
}

/* Back to the page allocator, from the quarantine. */
void sim_backing_free(struct sim_backing *b)
{
	unsigned long i;

	if (b->block) {
		__free_pages(b->block, b->block_order);
	} else {
		for (i = 0; i < b->nchunks; i++)
			__free_pages(b->chunks[i], SIM_CHUNK_ORDER);
	}
	kvfree(b);
}

static void sim_backing_release(struct kref *ref)
{
	struct sim_backing *b = container_of(ref, struct sim_backing, ref);
	unsigned long i;

	if (b->block) {
		sim_poison_page_range(b->block, 1UL << b->block_order);
	} else {
		for (i = 0; i < b->nchunks; i++)
			sim_poison_page_range(b->chunks[i], SIM_PAGES_PER_CHUNK);
	}

	mutex_lock(&sim.lock);
	sim.total_bytes -= b->size;
	mutex_unlock(&sim.lock);
	sim_quarantine_add(b);
}

void sim_backing_get(struct sim_backing *b)
{
	kref_get(&b->ref);
}

/* Takes sim.lock when it drops the last reference: never call it with the lock held. */
void sim_backing_put(struct sim_backing *b)
{
	lockdep_assert_not_held(&sim.lock);
	kref_put(&b->ref, sim_backing_release);
}

/* The calling process's allocation that holds all of [va, va + len), len > 0. */
struct sim_alloc *sim_alloc_lookup_locked(u64 va, u64 len)
{
	struct sim_alloc *a;

	lockdep_assert_held(&sim.lock);
	list_for_each_entry(a, &sim.allocs, node) {
		if (!gdrdrv_process_is_current(&a->owner))
			continue;
		if (va >= a->va && len <= a->size && va - a->va <= a->size - len)
			return a;
	}
	return NULL;
}

/* Place a at the va AT_VA asked for, if no allocation of its process is there. */
static int sim_alloc_place_locked(struct sim_alloc *a, u64 va)
{
	struct sim_alloc *other;

	lockdep_assert_held(&sim.lock);
	list_for_each_entry(other, &sim.allocs, node) {
		if (gdrdrv_process_same(&other->owner, &a->owner) && va < other->va + other->size &&
		    other->va < va + a->size)
			return -EEXIST;
	}
	a->va = va;
	return 0;
}

/* The next va of the sim's own range. */
static int sim_alloc_place_next_locked(struct sim_alloc *a)
{
	u64 next;

	lockdep_assert_held(&sim.lock);
	/* A 64 KiB hole after each allocation: two allocations are never adjacent in va. */
	if (check_add_overflow(sim.next_va, a->size + SIM_CHUNK_SIZE, &next) || next >= 1ULL << 63)
		return -ENOMEM;
	a->va = sim.next_va;
	sim.next_va = next;
	return 0;
}

int sim_alloc_create(struct sim_ctx *ctx, struct nvp2p_sim_alloc *req)
{
	bool at_va = req->flags & NVP2P_SIM_ALLOC_AT_VA;
	struct sim_alloc *a;
	u64 size;
	int ret;

	if (!req->size || req->size > NVP2P_SIM_ALLOC_MAX)
		return -EINVAL;
	if (req->flags & ~NVP2P_SIM_ALLOC_FLAGS_ALL)
		return -EINVAL;
	if ((req->flags & NVP2P_SIM_ALLOC_CONTIGUOUS) && (req->flags & NVP2P_SIM_ALLOC_SCATTERED))
		return -EINVAL;
	size = round_up(req->size, SIM_CHUNK_SIZE);
	if ((req->flags & NVP2P_SIM_ALLOC_CONTIGUOUS) && size > NVP2P_SIM_CONTIGUOUS_MAX)
		return -EINVAL;
	/* Below the sim's own range, so the two never meet. */
	if (at_va && (!req->va || !IS_ALIGNED(req->va, SIM_CHUNK_SIZE) ||
		      req->va > NVP2P_SIM_VA_BASE - size))
		return -EINVAL;

	a = kzalloc(sizeof(*a), GFP_KERNEL);
	if (!a)
		return -ENOMEM;
	INIT_LIST_HEAD(&a->pins);
	a->size = size;
	a->flags = req->flags;
	a->p2p_token = get_random_u64() | 1;
	a->va_space = get_random_u32() | 1;

	/* Reserve the budget first, so concurrent allocations cannot overshoot it together. */
	mutex_lock(&sim.lock);
	if (sim.total_bytes + size > SIM_TOTAL_MAX) {
		mutex_unlock(&sim.lock);
		ret = -ENOMEM;
		goto err_free_alloc;
	}
	sim.total_bytes += size;
	mutex_unlock(&sim.lock);

	a->backing = sim_backing_create(size, req->flags);
	if (!a->backing) {
		ret = -ENOMEM;
		goto err_unreserve;
	}
	a->owner = gdrdrv_process_current();

	mutex_lock(&sim.lock);
	ret = at_va ? sim_alloc_place_locked(a, req->va) : sim_alloc_place_next_locked(a);
	if (ret) {
		mutex_unlock(&sim.lock);
		goto err_put_backing;
	}
	a->backing->va = a->va;
	list_add_tail(&a->node, &sim.allocs);
	list_add_tail(&a->ctx_node, &ctx->allocs);
	sim.counts.allocations++;
	mutex_unlock(&sim.lock);

	req->va = a->va;
	req->mapped_size = size;
	req->p2p_token = a->p2p_token;
	req->va_space = a->va_space;
	return 0;

err_put_backing:
	/* The backing's release returns the reservation. */
	sim_backing_put(a->backing);
	kfree(a);
	return ret;
err_unreserve:
	mutex_lock(&sim.lock);
	sim.total_bytes -= size;
	mutex_unlock(&sim.lock);
err_free_alloc:
	kfree(a);
	return ret;
}

/* Take a off every list; its active pins move to revoked, to be revoked once the lock is off. */
static void sim_alloc_unlink_locked(struct sim_alloc *a, struct list_head *revoked)
{
	struct sim_pin *pin;

	lockdep_assert_held(&sim.lock);
	list_del(&a->node);
	list_del(&a->ctx_node);
	list_for_each_entry(pin, &a->pins, alloc_node) {
		pin->state = SIM_PIN_REVOKING;
		pin->revoker = current;
	}
	list_splice_tail_init(&a->pins, revoked);
	sim.counts.allocations--;
}

/* After sim_alloc_unlink_locked() and the revocation of its pins; no lock held. */
static void sim_alloc_destroy(struct sim_alloc *a)
{
	sim_backing_put(a->backing);
	kfree(a);
}

/* As cudaFree: the caller's allocation that starts at va. */
int sim_alloc_free(u64 va)
{
	LIST_HEAD(revoked);
	struct sim_alloc *a;

	mutex_lock(&sim.lock);
	a = sim_alloc_lookup_locked(va, 1);
	if (!a || a->va != va) {
		mutex_unlock(&sim.lock);
		return -EINVAL;
	}
	sim_alloc_unlink_locked(a, &revoked);
	mutex_unlock(&sim.lock);

	/* As NVIDIA does: the callbacks return before the memory goes. */
	sim_revoke_pins(&revoked);
	sim_alloc_destroy(a);
	return 0;
}

/* The control file's last reference is gone: free what was allocated through it. */
void sim_ctx_release(struct sim_ctx *ctx)
{
	LIST_HEAD(revoked);
	LIST_HEAD(dead);
	struct sim_alloc *a, *tmp;

	mutex_lock(&sim.lock);
	list_for_each_entry_safe(a, tmp, &ctx->allocs, ctx_node) {
		sim_alloc_unlink_locked(a, &revoked);
		/* node is free again once unlinked; reuse it to collect the dead. */
		list_add_tail(&a->node, &dead);
	}
	mutex_unlock(&sim.lock);

	sim_revoke_pins(&revoked);
	list_for_each_entry_safe(a, tmp, &dead, node) {
		list_del(&a->node);
		sim_alloc_destroy(a);
	}
}

static int sim_copy_backing(struct sim_backing *b, u64 off, u64 len, void __user *buf,
			    bool write)
{
	while (len) {
		struct page *page = sim_backing_page(b, off);
		size_t in_page = offset_in_page(off);
		size_t n = min_t(u64, len, PAGE_SIZE - in_page);
		void *kaddr = kmap_local_page(page);
		unsigned long left;

		if (write)
			left = copy_from_user(kaddr + in_page, buf, n);
		else
			left = copy_to_user(buf, kaddr + in_page, n);
		kunmap_local(kaddr);
		if (left)
			return -EFAULT;
		off += n;
		buf += n;
		len -= n;
		cond_resched();
	}
	return 0;
}

/* As cudaMemcpy, between the caller's allocation and its buffer. */
int sim_rw(u64 va, u64 len, void __user *buf, bool write)
{
	struct sim_backing *b;
	struct sim_alloc *a;
	u64 off;
	int ret;

	if (!len)
		return -EINVAL;
	mutex_lock(&sim.lock);
	a = sim_alloc_lookup_locked(va, len);
	if (!a) {
		mutex_unlock(&sim.lock);
		return -EINVAL;
	}
	b = a->backing;
	sim_backing_get(b);
	off = va - a->va;
	mutex_unlock(&sim.lock);

	/* Without the lock: the user buffer may fault, and the allocation may be freed meanwhile
	 * (the backing reference keeps the pages). */
	ret = sim_copy_backing(b, off, len, buf, write);
	sim_backing_put(b);
	return ret;
}
