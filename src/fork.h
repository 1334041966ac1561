/* SPDX-License-Identifier: MIT */
/*
 * Which process a gdr_t belongs to. A fork child inherits the parent's gdr_t's, handles and
 * library state as copies of memory, but none of what they stand for: the mappings are kept out
 * of the child (MADV_DONTFORK, gdrdrv's VM_DONTCOPY), the driver objects belong to the parent,
 * and any address or descriptor number may be the child's own by the time it looks. The epoch
 * counts forks along the process's ancestry (pthread_atfork), so telling an inherited gdr_t
 * from the child's own costs one comparison. A raw clone(2) that bypasses fork() is not seen.
 */
#ifndef GDR_FORK_H
#define GDR_FORK_H

#include <stdatomic.h>

/* Register the child handler; once per process, thread-safe. gdr_open calls it. */
void gdr_fork_init(void);

extern _Atomic unsigned long gdr_fork_epoch_now;

/* This process's epoch: what gdr_open records in a gdr_t. */
static inline unsigned long gdr_fork_epoch(void)
{
	return atomic_load_explicit(&gdr_fork_epoch_now, memory_order_relaxed);
}

#endif
