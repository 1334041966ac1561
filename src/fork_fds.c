/* SPDX-License-Identifier: MIT */
#include <errno.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "fork_fds.h"
#include "log.h"

/* A slot's state: free, claimed by a thread filling it in, or holding descriptor state - 1. */
#define SLOT_FREE 0
#define SLOT_CLAIMED (-1)
#define SLOTS_PER_BLOCK 64

struct gdr_fork_fd {
	_Atomic int state;
	dev_t dev;		/* the file the descriptor names, written while claimed */
	ino_t ino;
};

struct fork_fd_block {
	struct gdr_fork_fd slots[SLOTS_PER_BLOCK];
	struct fork_fd_block *next;	/* set before the block is published, then fixed */
};

/*
 * Blocks are added at the head and never freed: as many as the most descriptors held at once
 * need, plus one for each thread that raced another to add one.
 */
static struct fork_fd_block *_Atomic fork_fd_blocks;

static struct gdr_fork_fd *claim_slot(void)
{
	struct fork_fd_block *b, *head;
	int i, expected;

	head = atomic_load_explicit(&fork_fd_blocks, memory_order_acquire);
	for (b = head; b; b = b->next) {
		for (i = 0; i < SLOTS_PER_BLOCK; i++) {
			/* A plain look first: a process with many pins passes many taken slots. */
			if (atomic_load_explicit(&b->slots[i].state, memory_order_relaxed) !=
			    SLOT_FREE)
				continue;
			expected = SLOT_FREE;
			if (atomic_compare_exchange_strong_explicit(&b->slots[i].state, &expected,
								    SLOT_CLAIMED,
								    memory_order_acquire,
								    memory_order_relaxed))
				return &b->slots[i];
		}
	}
	b = calloc(1, sizeof(*b));
	if (!b)
		return NULL;
	atomic_init(&b->slots[0].state, SLOT_CLAIMED);
	do
		b->next = head;
	while (!atomic_compare_exchange_weak_explicit(&fork_fd_blocks, &head, b,
						      memory_order_release, memory_order_acquire));
	return &b->slots[0];
}

struct gdr_fork_fd *gdr_fork_fd_hold(int fd)
{
	struct gdr_fork_fd *slot;
	struct stat st;

	if (fstat(fd, &st)) {
		gdr_warn("fstat of descriptor %d failed (%s): fork children will inherit it", fd,
			 strerror(errno));
		return NULL;
	}
	slot = claim_slot();
	if (!slot) {
		gdr_warn("out of memory: fork children will inherit descriptor %d", fd);
		return NULL;
	}
	slot->dev = st.st_dev;
	slot->ino = st.st_ino;
	atomic_store_explicit(&slot->state, fd + 1, memory_order_release);
	return slot;
}

void gdr_fork_fd_drop(struct gdr_fork_fd *slot)
{
	if (slot)
		atomic_store_explicit(&slot->state, SLOT_FREE, memory_order_release);
}

/*
 * The child runs alone here. fstat and close are async-signal-safe, as a multithreaded
 * process's fork child handler needs; nothing here allocates or logs. A slot left claimed by a
 * thread that is not in the child is freed with the others.
 */
void gdr_fork_fds_close_in_child(void)
{
	struct fork_fd_block *b = atomic_load_explicit(&fork_fd_blocks, memory_order_acquire);
	struct stat st;
	int i, state;

	for (; b; b = b->next) {
		for (i = 0; i < SLOTS_PER_BLOCK; i++) {
			struct gdr_fork_fd *slot = &b->slots[i];

			state = atomic_load_explicit(&slot->state, memory_order_acquire);
			if (state > 0 && !fstat(state - 1, &st) && st.st_dev == slot->dev &&
			    st.st_ino == slot->ino)
				close(state - 1);
			atomic_store_explicit(&slot->state, SLOT_FREE, memory_order_relaxed);
		}
	}
}
