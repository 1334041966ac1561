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
 * added. A descriptor's number may name another file in the child, if it was closed and
 * reused while fork() copied the process; each slot keeps its file's device and inode, and
 * the child closes only a descriptor that still names that file.
 */
#ifndef GDR_FORK_FDS_H
#define GDR_FORK_FDS_H

struct gdr_fork_fd;

/*
 * Register fd, just opened by the library, to be closed in fork children. NULL where it cannot
 * (out of memory, fstat fails): logged, and children inherit fd then, as any descriptor.
 */
struct gdr_fork_fd *gdr_fork_fd_hold(int fd);

/* After close(fd): fd is no longer the library's. NULL does nothing. */
void gdr_fork_fd_drop(struct gdr_fork_fd *slot);

/* In a fork child, from the fork handler (fork.c): close every registered descriptor. */
void gdr_fork_fds_close_in_child(void);

#endif
