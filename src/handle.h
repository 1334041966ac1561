/* SPDX-License-Identifier: MIT */
/*
 * The process-wide handle table. A gdr_mh_t.h names a slot and the slot's generation, so a stale,
 * forged or foreign value is recognised without dereferencing anything the caller gave. Slots are
 * never freed, which lets copies read a handle's mapping without a lock. A fork child retires
 * every handle it inherited.
 */
#ifndef GDR_HANDLE_H
#define GDR_HANDLE_H

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
 * Lock-free, for copies: the mapping type of h if [ptr, ptr + size) lies inside its mapping,
 * else GDR_MAPPING_TYPE_NONE. *mixed is set when mappings of more than one type exist in the
 * process (GDRCopy then uses a full fence).
 */
gdr_mapping_type_t gdr_handle_mapping(unsigned long h, const void *ptr, size_t size, int *mixed);

#ifdef GDR_WITH_TEST_HOOKS
/* Test builds only: each slot's generations continue from at least this value. */
extern uint64_t gdr_handle_test_generation_floor;
#endif

#endif
