/* SPDX-License-Identifier: MIT */
#include <errno.h>
#include <pthread.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdlib.h>

#include "handle.h"
#include "log.h"

/*
 * h = generation << INDEX_BITS | (slot index + 1), the slot's position (handle.h). Chunks of
 * slots are allocated on demand and never freed, so a lookup of any value touches only memory
 * that stays valid.
 *
 * A slot whose generation reaches GENERATION_MAX is retired for good instead of going back on the
 * free list, so a handle value is never issued twice: a stale handle can never name a later pin.
 * At one pin every 100 ns through one slot, retiring it would take 20 days; the table loses one
 * slot of its million each time.
 */
#define INDEX_BITS GDR_HANDLE_INDEX_BITS
#define SLOTS_PER_CHUNK GDR_HANDLE_SLOTS_PER_CHUNK
#define MAX_SLOTS GDR_HANDLE_MAX_SLOTS
#define GENERATION_MAX ((1ULL << (64 - INDEX_BITS)) - 1)

_Static_assert(sizeof(unsigned long) == 8, "gdr_mh_t.h must hold 64 bits");

#ifdef GDR_WITH_TEST_HOOKS
uint64_t gdr_handle_test_generation_floor;
uint32_t gdr_handle_test_max_slots;
bool gdr_handle_test_no_memory;
void (*gdr_handle_test_locked)(void);
void (*gdr_handle_test_published)(const struct gdr_memh *mh);

static uint64_t next_generation(uint64_t last)
{
	return (last < gdr_handle_test_generation_floor ? gdr_handle_test_generation_floor : last) + 1;
}

static uint32_t max_slots(void)
{
	return gdr_handle_test_max_slots ? gdr_handle_test_max_slots : MAX_SLOTS;
}
#else
static uint64_t next_generation(uint64_t last)
{
	return last + 1;
}

static uint32_t max_slots(void)
{
	return MAX_SLOTS;
}
#endif

/* Room for SLOTS_PER_CHUNK more slots, all free; NULL when out of memory. */
static struct gdr_handle_slot *chunk_alloc(void)
{
#ifdef GDR_WITH_TEST_HOOKS
	if (gdr_handle_test_no_memory)
		return NULL;
#endif
	return calloc(SLOTS_PER_CHUNK, sizeof(struct gdr_handle_slot));
}

/*
 * Protects next_unused, free_head, the slots' generation and next_free, chunk allocation and
 * mapped_count. Nests inside gdr->lock; nothing is taken inside it, so fork can take it too.
 * Held with every signal blocked (table_lock_take): fork's prepare handler takes it, and a
 * signal handler's fork on a thread that held it would wait for that thread for ever.
 */
static pthread_mutex_t table_lock = PTHREAD_MUTEX_INITIALIZER;
struct gdr_handle_slot gdr_handle_no_chunk[GDR_HANDLE_SLOTS_PER_CHUNK];
_Atomic(struct gdr_handle_slot *) gdr_handle_chunks[GDR_HANDLE_MAX_CHUNKS] = {
	[0 ... GDR_HANDLE_MAX_CHUNKS - 1] = gdr_handle_no_chunk
};
static uint32_t next_unused;
static uint32_t free_head;
static unsigned long mapped_count[GDR_MAPPING_TYPE_MAX];
_Atomic int gdr_handle_fast_type = GDR_MAPPING_TYPE_WC;
static pthread_once_t fork_once = PTHREAD_ONCE_INIT;

/* Take table_lock with this thread's signals blocked; *saved is their mask, for the give. */
static void table_lock_take(sigset_t *saved)
{
	sigset_t all;

	sigfillset(&all);
	pthread_sigmask(SIG_SETMASK, &all, saved);
	pthread_mutex_lock(&table_lock);
}

static void table_lock_give(const sigset_t *saved)
{
	pthread_mutex_unlock(&table_lock);
	pthread_sigmask(SIG_SETMASK, saved, NULL);
}

/* The slot of an index below next_unused. */
static struct gdr_handle_slot *slot_at(uint32_t index)
{
	return gdr_handle_slot_at(index + 1);
}

static uint32_t index_of(unsigned long h)
{
	return (uint32_t)(h & ((1UL << INDEX_BITS) - 1)) - 1;
}

/* 0, ENOMEM (no memory for a chunk) or ENOSPC (every slot is in use or retired). */
static int slot_alloc(uint32_t *index)
{
	struct gdr_handle_slot *chunk;

	if (free_head) {
		*index = free_head - 1;
		free_head = slot_at(*index)->next_free;
		return 0;
	}
	if (next_unused >= max_slots())
		return ENOSPC;
	/* The slot's position is next_unused + 1: chunk 0 starts at position 1, the others at 0. */
	if (atomic_load_explicit(&gdr_handle_chunks[(next_unused + 1) / SLOTS_PER_CHUNK],
				 memory_order_relaxed) == gdr_handle_no_chunk) {
		chunk = chunk_alloc();
		if (!chunk)
			return ENOMEM;
		atomic_store_explicit(&gdr_handle_chunks[(next_unused + 1) / SLOTS_PER_CHUNK], chunk,
				      memory_order_release);
	}
	*index = next_unused++;
	return 0;
}

/* Whether mappings of more than one type exist (handle.h: gdr_handle_fast_type). */
static void set_mixed(int mixed)
{
	atomic_store_explicit(&gdr_handle_fast_type,
			      mixed ? GDR_MAPPING_TYPE_MAX : GDR_MAPPING_TYPE_WC,
			      memory_order_relaxed);
}

static void count_mapping(gdr_mapping_type_t type, int delta)
{
	int types_in_use = 0;

	if (type == GDR_MAPPING_TYPE_NONE)
		return;
	mapped_count[type] += delta;
	for (int t = GDR_MAPPING_TYPE_NONE + 1; t < GDR_MAPPING_TYPE_MAX; t++)
		types_in_use += mapped_count[t] != 0;
	set_mixed(types_in_use > 1);
}

/* Take the slot out of use; on the free list unless its generations are spent. Under table_lock. */
static void slot_free(struct gdr_handle_slot *s, uint32_t index)
{
	atomic_store_explicit(&s->tag, 0, memory_order_release);
	atomic_store_explicit(&s->map_type, GDR_MAPPING_TYPE_NONE, memory_order_relaxed);
	atomic_store_explicit(&s->map_size, 0, memory_order_relaxed);
	atomic_store_explicit(&s->map_base, 0, memory_order_relaxed);
	atomic_store_explicit(&s->mh, NULL, memory_order_relaxed);
	atomic_store_explicit(&s->owner, NULL, memory_order_relaxed);
	if (s->generation >= GENERATION_MAX)
		return;
	s->next_free = free_head;
	free_head = index + 1;
}

/*
 * The signal mask of the thread in fork() while it holds table_lock, from the prepare handler to
 * the parent's or the child's: under table_lock. Blocked there as by every holder, or a handler
 * that runs during the fork (after the prepare handlers that run after this one) and forks
 * again would wait for this very thread.
 */
static sigset_t fork_mask;

static void fork_prepare(void)
{
	sigset_t saved;

	table_lock_take(&saved);
	fork_mask = saved;
}

static void fork_parent(void)
{
	sigset_t saved = fork_mask;

	table_lock_give(&saved);
}

/*
 * Every live handle is the parent's: retire them all, so that lookups and copies in the child
 * refuse them, and their slots serve the child's own pins under new generations.
 */
static void fork_child(void)
{
	sigset_t saved;

	for (uint32_t i = 0; i < next_unused; i++) {
		struct gdr_handle_slot *s = slot_at(i);

		if (atomic_load_explicit(&s->tag, memory_order_relaxed))
			slot_free(s, i);
	}
	for (int t = 0; t < GDR_MAPPING_TYPE_MAX; t++)
		mapped_count[t] = 0;
	set_mixed(0);
	saved = fork_mask;
	table_lock_give(&saved);
}

static void fork_register(void)
{
	pthread_atfork(fork_prepare, fork_parent, fork_child);
}

int gdr_handle_register(struct gdr_memh *mh)
{
	struct gdr_handle_slot *s;
	sigset_t saved;
	uint32_t index;
	int ret;

	pthread_once(&fork_once, fork_register);
	table_lock_take(&saved);
#ifdef GDR_WITH_TEST_HOOKS
	if (gdr_handle_test_locked)
		gdr_handle_test_locked();
#endif
	ret = slot_alloc(&index);
	if (ret)
		goto out_unlock;
	s = slot_at(index);
	s->generation = next_generation(s->generation);
	mh->handle = (unsigned long)s->generation << INDEX_BITS | (index + 1);
	atomic_store_explicit(&s->owner, mh->g, memory_order_relaxed);
	atomic_store_explicit(&s->mh, mh, memory_order_relaxed);
	atomic_store_explicit(&s->map_type, GDR_MAPPING_TYPE_NONE, memory_order_relaxed);
	atomic_store_explicit(&s->tag, mh->handle, memory_order_release);
out_unlock:
	table_lock_give(&saved);
	/* GDRCopy fails a pin it has no room for with ENOMEM; the log says which room ran out. */
	if (ret == ENOSPC) {
		gdr_err("gdr_pin_buffer: this process holds the most pins the library keeps track of "
			"(%u, across all gdr_t); unpin buffers no longer in use (gdr_unpin_buffer, "
			"or gdr_close)", max_slots());
		ret = ENOMEM;
	} else if (ret == ENOMEM) {
		gdr_err("gdr_pin_buffer: out of memory for the handle table's next %u slots",
			SLOTS_PER_CHUNK);
	}
	return ret;
}

void gdr_handle_publish_mapping(struct gdr_memh *mh)
{
	struct gdr_handle_slot *s = gdr_handle_slot_at(mh->handle);
	gdr_mapping_type_t old;
	sigset_t saved;

	table_lock_take(&saved);
	old = atomic_load_explicit(&s->map_type, memory_order_relaxed);
	count_mapping(old, -1);
	count_mapping(mh->mapping_type, +1);
	if (mh->mapping_type == GDR_MAPPING_TYPE_NONE) {
		/*
		 * The range stays: a copy that still reads the old type (it is in flight, and the
		 * unmap waits for it) must read the old range with it. On arm64 and POWER, zeroed
		 * base and size could reach it before the new type does, and a bad pointer near 0
		 * would pass the range check.
		 */
		atomic_store_explicit(&s->map_type, GDR_MAPPING_TYPE_NONE, memory_order_release);
	} else {
		atomic_store_explicit(&s->map_base, (uintptr_t)mh->map_va, memory_order_relaxed);
		atomic_store_explicit(&s->map_size, mh->map_size, memory_order_relaxed);
		atomic_store_explicit(&s->map_type, mh->mapping_type, memory_order_release);
	}
	table_lock_give(&saved);
#ifdef GDR_WITH_TEST_HOOKS
	if (gdr_handle_test_published)
		gdr_handle_test_published(mh);
#endif
}

void gdr_handle_unregister(struct gdr_memh *mh)
{
	struct gdr_handle_slot *s = gdr_handle_slot_at(mh->handle);
	sigset_t saved;

	table_lock_take(&saved);
	count_mapping(atomic_load_explicit(&s->map_type, memory_order_relaxed), -1);
	slot_free(s, index_of(mh->handle));
	table_lock_give(&saved);
	mh->handle = 0;
}

struct gdr_memh *gdr_handle_lookup(struct gdr *g, unsigned long h)
{
	struct gdr_handle_slot *s = gdr_handle_slot_of(h);
	struct gdr_memh *mh;

	if (!s || atomic_load_explicit(&s->tag, memory_order_acquire) != h)
		return NULL;
	/*
	 * A slot owned by g changes only under g->lock, which the caller holds; one owned by
	 * another gdr_t may be retired meanwhile, which the owner test catches.
	 */
	if (atomic_load_explicit(&s->owner, memory_order_acquire) != g)
		return NULL;
	mh = atomic_load_explicit(&s->mh, memory_order_acquire);
	if (atomic_load_explicit(&s->tag, memory_order_acquire) != h)
		return NULL;
	return mh;
}
