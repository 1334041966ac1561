/* SPDX-License-Identifier: MIT */
/*
 * The process-wide handle table. A gdr_mh_t.h names a slot and the slot's generation, so a stale,
 * forged or foreign value is recognised without dereferencing anything the caller gave. Slots are
 * never freed, which lets copies read a handle's mapping without a lock. A fork child retires
 * every handle it inherited.
 */
#ifndef GDR_HANDLE_H
#define GDR_HANDLE_H

#include <stdatomic.h>
#include <stddef.h>
#include <stdint.h>

#include "gdr.h"

/* Give mh a fresh, non-zero handle value. 0 or ENOMEM (table full). */
int gdr_handle_register(struct gdr_memh *mh);

/* Retire mh's handle: every later lookup of it fails. */
void gdr_handle_unregister(struct gdr_memh *mh);

/* The live memh of g named by h, or NULL. Caller holds g->lock. */
struct gdr_memh *gdr_handle_lookup(struct gdr *g, unsigned long h);

/* Publish mh's mapping (type NONE: unmapped) for gdr_handle_mapping(). Caller holds g->lock. */
void gdr_handle_publish_mapping(struct gdr_memh *mh);

/*
 * The table's layout, for the lock-free lookup below, which the copies inline: every
 * instruction between two reads through a BAR delays the second (docs/performance.md).
 */
#define GDR_HANDLE_INDEX_BITS 20
#define GDR_HANDLE_SLOTS_PER_CHUNK 1024u
#define GDR_HANDLE_MAX_SLOTS ((1u << GDR_HANDLE_INDEX_BITS) - 1)
#define GDR_HANDLE_MAX_CHUNKS \
	((GDR_HANDLE_MAX_SLOTS + GDR_HANDLE_SLOTS_PER_CHUNK - 1) / GDR_HANDLE_SLOTS_PER_CHUNK)

struct gdr_handle_slot {
	_Atomic unsigned long tag;		/* the live handle value; 0 when free */
	_Atomic(struct gdr *) owner;
	_Atomic(struct gdr_memh *) mh;
	_Atomic uintptr_t map_base;
	_Atomic size_t map_size;
	_Atomic int map_type;			/* GDR_MAPPING_TYPE_NONE when unmapped */
	uint64_t generation;			/* of the last handle issued; under the table's lock */
	uint32_t next_free;			/* index + 1 of the next free slot; same */
};

/* Chunks of slots, allocated on demand and never freed (handle.c). */
extern _Atomic(struct gdr_handle_slot *) gdr_handle_chunks[GDR_HANDLE_MAX_CHUNKS];
/* Set while mappings of more than one type exist in the process (GDRCopy then fences fully). */
extern _Atomic int gdr_handle_mixed;

/* The slot h names, or NULL; touches only memory that stays valid, whatever h is. */
static inline struct gdr_handle_slot *gdr_handle_slot_of(unsigned long h)
{
	uint32_t low = (uint32_t)(h & ((1UL << GDR_HANDLE_INDEX_BITS) - 1));
	struct gdr_handle_slot *chunk;

	if (!low)
		return NULL;
	low--;
	chunk = atomic_load_explicit(&gdr_handle_chunks[low / GDR_HANDLE_SLOTS_PER_CHUNK],
				     memory_order_acquire);
	return chunk ? &chunk[low % GDR_HANDLE_SLOTS_PER_CHUNK] : NULL;
}

/*
 * Lock-free, for copies: the mapping type of h if [ptr, ptr + size) lies inside its mapping,
 * else GDR_MAPPING_TYPE_NONE. *mixed is set when mappings of more than one type exist in the
 * process (GDRCopy then uses a full fence).
 */
static inline __attribute__((always_inline)) gdr_mapping_type_t
gdr_handle_mapping(unsigned long h, const void *ptr, size_t size, int *mixed)
{
	struct gdr_handle_slot *s = gdr_handle_slot_of(h);
	uintptr_t base, p = (uintptr_t)ptr;
	size_t len;
	int type;

	if (!s || atomic_load_explicit(&s->tag, memory_order_acquire) != h)
		return GDR_MAPPING_TYPE_NONE;
	type = atomic_load_explicit(&s->map_type, memory_order_acquire);
	base = atomic_load_explicit(&s->map_base, memory_order_relaxed);
	len = atomic_load_explicit(&s->map_size, memory_order_relaxed);
	/* Seqlock-style re-check: the slot was not retired while we read it. */
	atomic_thread_fence(memory_order_acquire);
	if (atomic_load_explicit(&s->tag, memory_order_relaxed) != h)
		return GDR_MAPPING_TYPE_NONE;
	if (p < base || size > len || p - base > len - size)
		return GDR_MAPPING_TYPE_NONE;
	*mixed = atomic_load_explicit(&gdr_handle_mixed, memory_order_relaxed);
	return (gdr_mapping_type_t)type;
}

#ifdef GDR_WITH_TEST_HOOKS
/* Test builds only: each slot's generations continue from at least this value. */
extern uint64_t gdr_handle_test_generation_floor;
#endif

#endif
