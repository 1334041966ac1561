/* SPDX-License-Identifier: MIT */
/*
 * Test-only "GPU memory" for the fake backend: memfd-backed allocations whose host mapping plays
 * the device pointer, so a second mapping (the fake BAR1 mapping) sees the same bytes.
 */
#ifndef GDR_TEST_FAKE_GPU_H
#define GDR_TEST_FAKE_GPU_H

#include <stddef.h>
#include <stdint.h>

/* A 64 KiB-aligned allocation of size bytes (rounded up to 64 KiB); NULL on failure. */
void *fake_gpu_alloc(size_t size);
void fake_gpu_free(void *ptr);

/* The allocation holding [addr, addr + size): its memfd and the offset of addr in it. */
int fake_gpu_find(uintptr_t addr, size_t size, int *fd, uint64_t *offset);

/* Make the fake backend's next unmap or unpin fail with this errno (0: no failure). */
extern int fake_backend_fail_unmap;
extern int fake_backend_fail_unpin;
/*
 * Make these ops fail with this errno after writing garbage into their outputs, to check that
 * the core hands its callers nothing of a failed call.
 */
extern int fake_backend_fail_outputs;
/* Free the pins whose unpin was made to fail (the core keeps or drops their handles). */
void fake_backend_release_stuck(void);
/* Pins the fake backend holds, across all gdr_t's. */
extern int fake_backend_pins;
/* When set, every pin calls it first with its memh, inside the call, its gdr_t's lock held. */
struct gdr_memh;
extern void (*fake_backend_in_pin)(struct gdr_memh *mh);

#endif
