// SPDX-License-Identifier: GPL-2.0 OR MIT
/*
 * NVIDIA's nvidia_p2p API (R580 semantics) over the sim's host pages.
 *
 * What a consumer sees as NVIDIA's behaviour: 64 KiB alignment of va and length, else -EINVAL;
 * a NULL callback refused; with tokens 0/0 the caller's process must own the allocation; one
 * 64 KiB entry per chunk at the chunk's physical address; the free callback runs, with no sim
 * lock held, when the allocation is freed before put_pages, and the table is released right
 * after it returns; put_pages of a table whose callback ran returns 0, and one racing with the
 * callback waits for it; persistent pins keep their pages past the allocation's free.
 *
 * What NVIDIA would not report but a test wants to know: a call that breaks the contract
 * (put_pages from inside the callback, a double put, a persistent table through the
 * non-persistent call, a consumer module unloaded while holding pins) is refused and logged
 * as "nvp2p_sim: misuse:", which the VM tier treats as a failure.
 */
#include <linux/io.h>
#include <linux/kernel.h>
#include <linux/mm.h>
#include <linux/module.h>
#include <linux/overflow.h>
#include <linux/sched.h>
#include <linux/sched/signal.h>
#include <linux/slab.h>
#include <linux/wait.h>

#include "nvp2p_sim.h"

static u8 sim_gpu_uuid[16] = "nvp2p_sim-gpu-0";

void sim_misuse(const char *fmt, ...)
{
	struct va_format vaf;
	va_list args;

	va_start(args, fmt);
	vaf.fmt = fmt;
	vaf.va = &args;
	if (current == READ_ONCE(sim.selftest_task)) {
		atomic64_inc(&sim.selftest_misuses);
		pr_debug("nvp2p_sim: selftest: expected misuse: %pV\n", &vaf);
	} else {
		atomic64_inc(&sim.misuses);
		pr_err("nvp2p_sim: misuse: %pV\n", &vaf);
	}
	va_end(args);
}

static struct sim_pin *sim_pin_alloc(u64 entries)
{
	struct sim_pin *pin;
	u64 i;

	pin = kvzalloc(struct_size(pin, page_ptrs, entries), GFP_KERNEL);
	if (!pin)
		return NULL;
	pin->entries = kvcalloc(entries, sizeof(*pin->entries), GFP_KERNEL);
	if (!pin->entries) {
		kvfree(pin);
		return NULL;
	}
	kref_init(&pin->ref);
	INIT_LIST_HEAD(&pin->node);
	INIT_LIST_HEAD(&pin->alloc_node);
	for (i = 0; i < entries; i++)
		pin->page_ptrs[i] = &pin->entries[i];
	return pin;
}

static void sim_pin_release(struct kref *ref)
{
	struct sim_pin *pin = container_of(ref, struct sim_pin, ref);

	if (pin->backing)
		sim_backing_put(pin->backing);
	/* A consumer that reads its table after releasing it reads nonsense, not stale truth. */
	memset(pin->entries, 0x6b, pin->length / SIM_CHUNK_SIZE * sizeof(*pin->entries));
	memset(&pin->table, 0x6b, sizeof(pin->table));
	kvfree(pin->entries);
	kvfree(pin);
}

/* Takes sim.lock when the pin holds the last backing reference: never with the lock held. */
static void sim_pin_put(struct sim_pin *pin)
{
	lockdep_assert_not_held(&sim.lock);
	kref_put(&pin->ref, sim_pin_release);
}

static struct sim_pin *sim_pin_lookup_locked(struct nvidia_p2p_page_table *table)
{
	struct sim_pin *pin;

	lockdep_assert_held(&sim.lock);
	list_for_each_entry(pin, &sim.pins, node) {
		if (&pin->table == table)
			return pin;
	}
	return NULL;
}

static struct sim_alloc *sim_alloc_lookup_token_locked(u64 p2p_token, u32 va_space, u64 va,
						       u64 len)
{
	struct sim_alloc *a;

	lockdep_assert_held(&sim.lock);
	list_for_each_entry(a, &sim.allocs, node) {
		if (a->p2p_token != p2p_token || a->va_space != va_space)
			continue;
		if (va >= a->va && len <= a->size && va - a->va <= a->size - len)
			return a;
	}
	return NULL;
}

static void sim_pin_fill(struct sim_pin *pin, struct sim_alloc *a, u32 flags)
{
	struct nvidia_p2p_page_table *t = &pin->table;
	u64 first = (pin->va - a->va) / SIM_CHUNK_SIZE;
	u64 i, n = pin->length / SIM_CHUNK_SIZE;

	for (i = 0; i < n; i++)
		pin->entries[i].physical_address = page_to_phys(a->backing->chunks[first + i]);
	t->version = NVIDIA_P2P_PAGE_TABLE_VERSION;
	t->page_size = NVIDIA_P2P_PAGE_SIZE_64KB;
	t->pages = pin->page_ptrs;
	t->entries = n;
	t->gpu_uuid = sim_gpu_uuid;
	/* A forced-BAR1 table of coherent memory is a PCIe BAR mapping: not cacheable. */
	if ((a->flags & NVP2P_SIM_ALLOC_CPU_CACHEABLE) &&
	    !(flags & NVIDIA_P2P_FLAGS_FORCE_BAR1_MAPPING))
		t->flags = NVIDIA_P2P_PAGE_TABLE_FLAGS_CPU_CACHEABLE;
	pin->backing = a->backing;
	sim_backing_get(a->backing);
}

static int sim_get_pages(u64 p2p_token, u32 va_space, u64 va, u64 length,
			 struct nvidia_p2p_page_table **page_table,
			 void (*free_callback)(void *data), void *data, bool persistent, u32 flags,
			 unsigned long caller)
{
	struct sim_alloc *a;
	struct sim_pin *pin;
	u64 end, alloc_va = 0;
	bool revoke;
	int ret;

	might_sleep();
	atomic64_inc(&sim.get_pages_calls);
	if (!page_table)
		return -EINVAL;
	if (!IS_ALIGNED(va, SIM_CHUNK_SIZE) || !IS_ALIGNED(length, SIM_CHUNK_SIZE) || !length) {
		pr_debug("nvp2p_sim: address or length are not aligned: %#llx +%#llx\n", va, length);
		return -EINVAL;
	}
	/* No allocation is larger, and the table is sized from length before the lookup. */
	if (length > NVP2P_SIM_ALLOC_MAX || check_add_overflow(va, length, &end))
		return -EINVAL;

	pin = sim_pin_alloc(length / SIM_CHUNK_SIZE);
	if (!pin)
		return -ENOMEM;
	pin->va = va;
	pin->length = length;
	pin->persistent = persistent;
	pin->p2p_token = p2p_token;
	pin->va_space = va_space;
	pin->free_callback = free_callback;
	pin->data = data;
	pin->caller = caller;

	mutex_lock(&sim.lock);
	if (p2p_token || va_space)
		a = sim_alloc_lookup_token_locked(p2p_token, va_space, va, length);
	else
		a = sim_alloc_lookup_locked(va, length);
	if (!a) {
		ret = -EINVAL;
		goto out_unlock;
	}
	/* FORCE_BAR1 needs a coherent GPU; the others refuse it as not supported. */
	if ((flags & NVIDIA_P2P_FLAGS_FORCE_BAR1_MAPPING) &&
	    !(a->flags & NVP2P_SIM_ALLOC_CPU_CACHEABLE)) {
		ret = -ENOTSUPP;
		goto out_unlock;
	}
	if (sim.inject_count) {
		sim.inject_count--;
		ret = sim.inject_error;
		goto out_unlock;
	}
	sim_pin_fill(pin, a, flags);
	pin->owner = a->owner;
	pin->state = SIM_PIN_ACTIVE;
	list_add_tail(&pin->node, &sim.pins);
	if (persistent)
		sim.counts.persistent_pins++;
	else
		list_add_tail(&pin->alloc_node, &a->pins);
	sim.counts.pins++;
	/* Before the pin can be revoked, as NVIDIA's does: a free callback may need it. */
	*page_table = &pin->table;
	revoke = !persistent && sim.inject_revoke_count;
	if (revoke) {
		sim.inject_revoke_count--;
		alloc_va = a->va;
	}
	mutex_unlock(&sim.lock);
	/* INJECT_REVOKE: the allocation goes, as by a cudaFree racing this pin. */
	if (revoke)
		sim_alloc_free(alloc_va);
	return 0;

out_unlock:
	mutex_unlock(&sim.lock);
	sim_pin_put(pin);
	return ret;
}

int nvidia_p2p_get_pages(u64 p2p_token, u32 va_space, u64 virtual_address, u64 length,
			 struct nvidia_p2p_page_table **page_table,
			 void (*free_callback)(void *data), void *data)
{
	if (!free_callback) {
		atomic64_inc(&sim.get_pages_calls);
		return -EINVAL;
	}
	return sim_get_pages(p2p_token, va_space, virtual_address, length, page_table,
			     free_callback, data, false, 0, _RET_IP_);
}
NVP2P_SIM_EXPORT(nvidia_p2p_get_pages);

int nvidia_p2p_get_pages_persistent(u64 virtual_address, u64 length,
				    struct nvidia_p2p_page_table **page_table, u32 flags)
{
	if (flags & ~NVIDIA_P2P_FLAGS_FORCE_BAR1_MAPPING) {
		atomic64_inc(&sim.get_pages_calls);
		return -EINVAL;
	}
	return sim_get_pages(0, 0, virtual_address, length, page_table, NULL, NULL, true, flags,
			     _RET_IP_);
}
NVP2P_SIM_EXPORT(nvidia_p2p_get_pages_persistent);

/* The error an injected failure (INJECT_PUT) refuses this put_pages of a live pin with, or 0. */
static int sim_put_refused_locked(void)
{
	lockdep_assert_held(&sim.lock);
	if (!sim.inject_put_count)
		return 0;
	sim.inject_put_count--;
	return sim.inject_put_error;
}

int nvidia_p2p_put_pages(u64 p2p_token, u32 va_space, u64 virtual_address,
			 struct nvidia_p2p_page_table *page_table)
{
	struct sim_pin *pin;
	int ret;

	might_sleep();
	atomic64_inc(&sim.put_pages_calls);
	if (!page_table)
		return 0;

	mutex_lock(&sim.lock);
	pin = sim_pin_lookup_locked(page_table);
	if (!pin) {
		/* Its callback ran and the table is gone: NVIDIA reports success. */
		mutex_unlock(&sim.lock);
		return 0;
	}
	if (pin->persistent) {
		mutex_unlock(&sim.lock);
		sim_misuse("put_pages on a persistent page table (va %#llx)", virtual_address);
		return -EINVAL;
	}
	if (pin->va != virtual_address || pin->p2p_token != p2p_token ||
	    pin->va_space != va_space) {
		mutex_unlock(&sim.lock);
		sim_misuse("put_pages of the table of va %#llx with va %#llx or other tokens",
			   pin->va, virtual_address);
		return -EINVAL;
	}
	if (pin->state == SIM_PIN_REVOKING) {
		if (pin->revoker == current) {
			/* Waiting would wait for ourselves. */
			mutex_unlock(&sim.lock);
			sim_misuse("put_pages from inside a free callback (va %#llx)",
				   virtual_address);
			return -EINVAL;
		}
		kref_get(&pin->ref);
		mutex_unlock(&sim.lock);
		wait_event(sim.revoke_wq, READ_ONCE(pin->state) == SIM_PIN_REVOKED);
		sim_pin_put(pin);
		return 0;
	}
	if (!p2p_token && !va_space && !gdrdrv_process_is_current(&pin->owner)) {
		/*
		 * RM looks the pin up by the calling process, finds none, and nv-p2p.c maps
		 * NV_ERR_OBJECT_NOT_FOUND to success for a non-persistent table, as if its
		 * callback had run: nothing is released, and the callback still comes.
		 */
		sim.counts.foreign_puts++;
		mutex_unlock(&sim.lock);
		return 0;
	}
	ret = sim_put_refused_locked();
	if (ret) {
		mutex_unlock(&sim.lock);
		return ret;
	}
	list_del(&pin->alloc_node);
	list_del(&pin->node);
	sim.counts.pins--;
	mutex_unlock(&sim.lock);
	sim_pin_put(pin);
	return 0;
}
NVP2P_SIM_EXPORT(nvidia_p2p_put_pages);

int nvidia_p2p_put_pages_persistent(u64 virtual_address,
				    struct nvidia_p2p_page_table *page_table, u32 flags)
{
	struct sim_pin *pin;
	int ret;

	might_sleep();
	atomic64_inc(&sim.put_pages_calls);
	if (flags || !page_table)
		return -EINVAL;

	mutex_lock(&sim.lock);
	pin = sim_pin_lookup_locked(page_table);
	if (!pin || !pin->persistent) {
		mutex_unlock(&sim.lock);
		sim_misuse("put_pages_persistent of a table that is not a live persistent pin (va %#llx)",
			   virtual_address);
		return -EINVAL;
	}
	if (pin->va != virtual_address) {
		mutex_unlock(&sim.lock);
		sim_misuse("put_pages_persistent of the table of va %#llx with va %#llx",
			   pin->va, virtual_address);
		return -EINVAL;
	}
	ret = sim_put_refused_locked();
	if (ret) {
		mutex_unlock(&sim.lock);
		return ret;
	}
	list_del(&pin->node);
	sim.counts.pins--;
	sim.counts.persistent_pins--;
	mutex_unlock(&sim.lock);
	sim_pin_put(pin);
	return 0;
}
NVP2P_SIM_EXPORT(nvidia_p2p_put_pages_persistent);

/*
 * A no-op returning 0 in every current NVIDIA driver: the table goes when the callback returns.
 * The contract still asks a free callback to call it on its table, and nothing else to: older
 * drivers freed the table here. So the sim checks who calls it, and returns 0 as NVIDIA does.
 */
int nvidia_p2p_free_page_table(struct nvidia_p2p_page_table *page_table)
{
	struct sim_pin *pin;
	u64 va;

	mutex_lock(&sim.lock);
	pin = sim_pin_lookup_locked(page_table);
	if (!pin) {
		mutex_unlock(&sim.lock);
		sim_misuse("free_page_table of a table that is not live");
		return 0;
	}
	va = pin->va;
	if (pin->state != SIM_PIN_REVOKING || pin->revoker != current || !pin->free_callback) {
		mutex_unlock(&sim.lock);
		sim_misuse("free_page_table of the table of va %#llx outside its free callback", va);
		return 0;
	}
	if (pin->table_freed) {
		mutex_unlock(&sim.lock);
		sim_misuse("free_page_table twice on the table of va %#llx", va);
		return 0;
	}
	pin->table_freed = true;
	mutex_unlock(&sim.lock);
	return 0;
}
NVP2P_SIM_EXPORT(nvidia_p2p_free_page_table);

/* Kept by NVIDIA for old consumers, and refused. */
int nvidia_p2p_init_mapping(u64 p2p_token, struct nvidia_p2p_params *params,
			    void (*destroy_callback)(void *data), void *data)
{
	return -ENOTSUPP;
}
EXPORT_SYMBOL_GPL(nvidia_p2p_init_mapping);

int nvidia_p2p_destroy_mapping(u64 p2p_token)
{
	return -ENOTSUPP;
}
EXPORT_SYMBOL_GPL(nvidia_p2p_destroy_mapping);

/*
 * Run the free callbacks of pins whose allocation is gone (sim_alloc_unlink_locked() made them
 * REVOKING and moved them to revoked), then release their tables. No sim lock is held while a
 * callback runs.
 */
void sim_revoke_pins(struct list_head *revoked)
{
	struct sim_pin *pin, *tmp;
	bool unfreed;

	lockdep_assert_not_held(&sim.lock);
	list_for_each_entry_safe(pin, tmp, revoked, alloc_node) {
		/* revoked is ours alone; put_pages never touches a revoking pin's alloc_node. */
		list_del_init(&pin->alloc_node);
		if (pin->free_callback) {
			pin->free_callback(pin->data);
			atomic64_inc(&sim.callbacks);
		}

		mutex_lock(&sim.lock);
		unfreed = pin->free_callback && !pin->table_freed;
		list_del_init(&pin->node);
		sim.counts.pins--;
		pin->revoker = NULL;
		WRITE_ONCE(pin->state, SIM_PIN_REVOKED);
		mutex_unlock(&sim.lock);
		if (unfreed)
			sim_misuse("the free callback of va %#llx returned without freeing its table",
				   pin->va);
		wake_up_all(&sim.revoke_wq);
		sim_pin_put(pin);
	}
}

/*
 * A module is going away: any pin it still holds is a leak in it. Report each, and release
 * them, so the pages come back and no callback ever jumps into the module's freed text.
 */
void sim_release_pins_of(struct module *mod)
{
	LIST_HEAD(orphans);
	struct sim_pin *pin, *tmp;

	mutex_lock(&sim.lock);
	list_for_each_entry_safe(pin, tmp, &sim.pins, node) {
		if (!within_module(pin->caller, mod) || pin->state != SIM_PIN_ACTIVE)
			continue;
		sim_misuse("module %s unloaded holding a %s pin of va %#llx +%#llx",
			   mod->name, pin->persistent ? "persistent" : "non-persistent",
			   pin->va, pin->length);
		list_del(&pin->node);
		if (pin->persistent)
			sim.counts.persistent_pins--;
		else
			list_del(&pin->alloc_node);
		sim.counts.pins--;
		list_add_tail(&pin->node, &orphans);
	}
	mutex_unlock(&sim.lock);

	list_for_each_entry_safe(pin, tmp, &orphans, node) {
		list_del(&pin->node);
		sim_pin_put(pin);
	}
}

/* Module exit: no consumer is loaded and no control file is open, so nothing may be left. */
void sim_release_leaked_pins(void)
{
	struct sim_pin *pin, *tmp;
	LIST_HEAD(leaked);

	mutex_lock(&sim.lock);
	list_splice_init(&sim.pins, &leaked);
	mutex_unlock(&sim.lock);
	WARN(!list_empty(&leaked), "nvp2p_sim: pins outstanding at unload\n");
	list_for_each_entry_safe(pin, tmp, &leaked, node) {
		list_del(&pin->node);
		sim_pin_put(pin);
	}
}
