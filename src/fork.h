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

/*
 * A descriptor a driver exports to the library (CUDA's export calls take no O_CLOEXEC) is open,
 * and perhaps not close-on-exec, from the moment the driver makes it until the library sets
 * FD_CLOEXEC. A fork() by another thread in between would hand it to the child for good: a
 * program the child executes would hold the GPU memory behind it as long as it runs. Likewise a
 * CPU mapping of GPU memory, from the mmap or vkMapMemory until its MADV_DONTFORK: the child
 * would keep the memory, and reach it. So fork() waits, in a prepare handler, while any thread
 * is between gdr_fork_hold_off and gdr_fork_allow, which enclose the driver call and the fcntl
 * or madvise and nothing else (gdr_backend_export_begin and gdr_backend_export_take,
 * gdr_backend_map_begin and gdr_backend_map_end); threads inside do not wait for each other.
 *
 * The handler is registered at the first hold-off, after CUDA is loaded and initialised, so that
 * it runs before any prepare handler CUDA registered by then (glibc runs them newest first): one
 * that took a driver lock would otherwise keep the call it waits for from finishing. The wait is
 * bounded (1 s) instead of deadlocking where the call cannot finish before fork() goes on: a
 * fork from a signal handler that interrupted this thread inside, a driver call that waits for a
 * lock another library's prepare handler took, or for glibc's fork-handler lock (it calls
 * pthread_atfork). Such a fork is delayed by the bound, logged, and the child may get the
 * descriptor or mapping, as before. A child forked from inside (the signal handler) does not
 * count its own thread as inside.
 *
 * posix_spawn, vfork and a raw clone(2) run no fork handlers: a program they start while an
 * export is under way on another thread may still inherit that one descriptor.
 */
void gdr_fork_hold_off(void);
void gdr_fork_allow(void);

extern _Atomic unsigned long gdr_fork_epoch_now;

/* This process's epoch: what gdr_open records in a gdr_t. */
static inline unsigned long gdr_fork_epoch(void)
{
	return atomic_load_explicit(&gdr_fork_epoch_now, memory_order_relaxed);
}

#endif
