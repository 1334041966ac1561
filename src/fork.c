/* SPDX-License-Identifier: MIT */
#include <errno.h>
#include <pthread.h>

#include "fork.h"
#include "fork_fds.h"

_Atomic unsigned long gdr_fork_epoch_now;

static pthread_once_t fork_once = PTHREAD_ONCE_INIT;

/* The child runs alone here, before fork() returns in it. */
static void fork_child(void)
{
	int saved = errno;	/* the child's fork() returns as if nothing ran */

	atomic_fetch_add_explicit(&gdr_fork_epoch_now, 1, memory_order_relaxed);
	gdr_fork_fds_close_in_child();
	errno = saved;
}

static void fork_register(void)
{
	pthread_atfork(NULL, NULL, fork_child);
}

void gdr_fork_init(void)
{
	pthread_once(&fork_once, fork_register);
}
