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
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "gdr.h"

/* Give mh a fresh, non-zero handle value. 0 or ENOMEM (no memory, or the table is full: logged). */
int gdr_handle_register(struct gdr_memh *mh);

/*
 * Retire mh's handle: every later lookup of it fails. mh is registered (gdr_handle_register gave
 * it its handle), as for gdr_handle_publish_mapping: such a handle always names a slot.
 */
void gdr_handle_unregister(struct gdr_memh *mh);

/* The live memh of g named by h, or NULL. Caller holds g->lock. */
struct gdr_memh *gdr_handle_lookup(struct gdr *g, unsigned long h);

/* Publish mh's mapping (type NONE: unmapped) for gdr_handle_mapping(). Caller holds g->lock. */
void gdr_handle_publish_mapping(struct gdr_memh *mh);

/*
 * The table's layout, for the lock-free lookups below, which the copies inline: every
 * instruction between two reads through a BAR delays the second (docs/performance.md).
 *
 * A handle's low INDEX_BITS hold its slot's position, index + 1, so that no valid handle has
 * them 0. Position p lives at gdr_handle_chunks[p / SLOTS_PER_CHUNK][p % SLOTS_PER_CHUNK].
 * Position 0 is never used, and every chunk not yet allocated is gdr_handle_no_chunk, whose
 * slots are all free: a lookup of any value reads valid memory without a test, and finds a free
 * slot (tag 0, type NONE, an empty range) unless the value names a live handle.
 */
#define GDR_HANDLE_INDEX_BITS 20
#define GDR_HANDLE_SLOTS_PER_CHUNK 1024u
#define GDR_HANDLE_MAX_SLOTS ((1u << GDR_HANDLE_INDEX_BITS) - 1)
#define GDR_HANDLE_MAX_CHUNKS ((1u << GDR_HANDLE_INDEX_BITS) / GDR_HANDLE_SLOTS_PER_CHUNK)

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

/* Chunks of slots, allocated on demand and never freed; gdr_handle_no_chunk until then. */
extern _Atomic(struct gdr_handle_slot *) gdr_handle_chunks[GDR_HANDLE_MAX_CHUNKS];
extern struct gdr_handle_slot gdr_handle_no_chunk[GDR_HANDLE_SLOTS_PER_CHUNK];
/*
 * GDR_MAPPING_TYPE_WC while mappings of one type exist in the process; while there are more
 * (GDRCopy then fences fully), GDR_MAPPING_TYPE_MAX, a value no mapping has. So the public
 * calls' flat path tests the mixing and a mapping's type in one comparison.
 */
extern _Atomic int gdr_handle_fast_type;

/* The slot at h's position: always valid memory, whatever h is (position 0: a free slot). */
static inline __attribute__((always_inline)) struct gdr_handle_slot *
gdr_handle_slot_at(unsigned long h)
{
	uint32_t pos = (uint32_t)(h & ((1UL << GDR_HANDLE_INDEX_BITS) - 1));
	struct gdr_handle_slot *chunk =
		atomic_load_explicit(&gdr_handle_chunks[pos / GDR_HANDLE_SLOTS_PER_CHUNK],
				     memory_order_acquire);

	return &chunk[pos % GDR_HANDLE_SLOTS_PER_CHUNK];
}

/* The slot h names, or NULL when h cannot name one (its position is 0). */
static inline struct gdr_handle_slot *gdr_handle_slot_of(unsigned long h)
{
	return h & ((1UL << GDR_HANDLE_INDEX_BITS) - 1) ? gdr_handle_slot_at(h) : NULL;
}

/*
 * Lock-free, for copies: the range of h's mapping, read consistently (the slot was not retired
 * meanwhile), or false when h is not live. A free slot has an empty range and type NONE.
 */
static inline __attribute__((always_inline)) bool
gdr_handle_read_mapping(const struct gdr_handle_slot *s, unsigned long h, int *type,
			uintptr_t *base, size_t *len)
{
	if (atomic_load_explicit(&s->tag, memory_order_acquire) != h)
		return false;
	*type = atomic_load_explicit(&s->map_type, memory_order_acquire);
	*base = atomic_load_explicit(&s->map_base, memory_order_relaxed);
	*len = atomic_load_explicit(&s->map_size, memory_order_relaxed);
	/* Seqlock-style re-check: the slot was not retired while we read it. */
	atomic_thread_fence(memory_order_acquire);
	return atomic_load_explicit(&s->tag, memory_order_relaxed) == h;
}

/* [ptr, ptr + size) lies inside [base, base + len). */
static inline __attribute__((always_inline)) bool gdr_handle_range_ok(uintptr_t base, size_t len,
								      const void *ptr, size_t size)
{
	uintptr_t end;

	/* Below base, p - base wraps to more than any mapping, so the sum overflows or exceeds len. */
	return !__builtin_add_overflow((uintptr_t)ptr - base, size, &end) && end <= len;
}

/*
 * Lock-free, for copies: the mapping type of h if [ptr, ptr + size) lies inside its mapping (or
 * size is 0), else GDR_MAPPING_TYPE_NONE. *mixed is set when mappings of more than one type exist in the
 * process (GDRCopy then uses a full fence).
 */
static inline __attribute__((always_inline)) gdr_mapping_type_t
gdr_handle_mapping(unsigned long h, const void *ptr, size_t size, int *mixed)
{
	uintptr_t base;
	size_t len;
	int type;

	/* A copy of 0 bytes touches nothing: any pointer will do (GDRCopy returns 0 for it). */
	if (!gdr_handle_read_mapping(gdr_handle_slot_at(h), h, &type, &base, &len) ||
	    (size && !gdr_handle_range_ok(base, len, ptr, size)))
		return GDR_MAPPING_TYPE_NONE;
	*mixed = atomic_load_explicit(&gdr_handle_fast_type, memory_order_relaxed) ==
		 GDR_MAPPING_TYPE_MAX;
	return (gdr_mapping_type_t)type;
}

/*
 * The public copies' common case in one test: h is live, its mapping holds [ptr, ptr + size),
 * and is of gdr_handle_fast_type (write-combined, the process's only type). False says nothing
 * more: the caller then takes gdr_handle_mapping's general path.
 */
static inline __attribute__((always_inline)) bool
gdr_handle_maps_fast(unsigned long h, const void *ptr, size_t size)
{
	uintptr_t base;
	size_t len;
	int type;

	return gdr_handle_read_mapping(gdr_handle_slot_at(h), h, &type, &base, &len) &&
	       type == atomic_load_explicit(&gdr_handle_fast_type, memory_order_relaxed) &&
	       gdr_handle_range_ok(base, len, ptr, size);
}

#ifdef GDR_WITH_TEST_HOOKS
/* Test builds only: each slot's generations continue from at least this value. */
extern uint64_t gdr_handle_test_generation_floor;
/* Test builds only: when not 0, the table holds at most this many slots. */
extern uint32_t gdr_handle_test_max_slots;
/* Test builds only: when set, the table cannot grow (as if out of memory). */
extern bool gdr_handle_test_no_memory;
/* Test builds only: when set, gdr_handle_register calls it with the table's lock held. */
extern void (*gdr_handle_test_locked)(void);
/* Test builds only: when set, gdr_handle_publish_mapping calls it once mh's mapping is out. */
extern void (*gdr_handle_test_published)(const struct gdr_memh *mh);
#endif

#endif
