/* SPDX-License-Identifier: MIT */
/*
 * Descriptors the library holds for the process that opened them (gdrdrv's device file, a
 * dma-buf per pin), closed in its fork children. A child inherits every descriptor, and while
 * any process holds one the file stays open: a child that lives on (a worker pool forked after
 * the pins) would keep the parent's pins, and with them GPU memory and BAR1 space, after the
 * parent unpinned and freed them. The child can use none of them (fork.h), so the fork child
 * handler closes them before fork() returns in the child.
 *
 * The handler runs where a lock another thread held at fork stays held, so the registry takes
 * none: slots that are claimed, filled and emptied with atomics, in blocks that are only ever
 * added. fork() copies the descriptor table before the memory, so a slot the child sees held
 * names a descriptor that was still the library's when the table was copied, provided the
 * library drops a slot before it closes the descriptor (the reverse order would let the child
 * close a number another thread had reused meanwhile). Each slot also keeps its file's device
 * and inode, and the child closes only a descriptor that still names that file.
 *
 * Only fork() runs the handler: programs started with posix_spawn, vfork or system() lose the
 * descriptors to close-on-exec, which the library sets on all of them (on one a driver exports,
 * not before the export returns: fork.h). A dma-buf descriptor is registered before fork() may
 * go on after its export (gdr_backend_export_take). A fork while another thread is between
 * opening gdrdrv's device file and registering it (gdr_open), or between dropping a descriptor
 * and closing it, hands that one descriptor to the child as before: the fork hold-off is kept
 * to CUDA's calls, so that its fork handler is registered after CUDA's (fork.h). Vulkan's
 * exported descriptor is never registered: its import closes it, and a child forked until then
 * keeps it (close-on-exec) until it exits.
 */
#ifndef GDR_FORK_FDS_H
#define GDR_FORK_FDS_H

struct gdr_fork_fd;

/*
 * Register fd, just opened by the library, to be closed in fork children. NULL where it cannot
 * (out of memory, fstat fails): logged, and children inherit fd then, as any descriptor.
 */
struct gdr_fork_fd *gdr_fork_fd_hold(int fd);

/* Before close(fd), never after (above): fd is about to stop being the library's. NULL: nothing. */
void gdr_fork_fd_drop(struct gdr_fork_fd *slot);

/* In a fork child, from the fork handler (fork.c): close every registered descriptor. */
void gdr_fork_fds_close_in_child(void);

#endif
