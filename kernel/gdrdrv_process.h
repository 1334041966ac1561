/* SPDX-License-Identifier: GPL-2.0 OR MIT */
/*
 * A process (thread group) as a value: its tgid and its group leader's start time. gdrdrv keeps
 * the opener of a file this way, tests/sim/nvp2p_sim the owner of an allocation.
 *
 * Why not a struct pid reference: dropping it takes put_pid(), a GPL-only export, and Linux
 * refuses a module that uses GPL-only exports together with symbols of a proprietary module
 * (NVIDIA's proprietary nvidia.ko). Why not the tgid alone: a later process may get the same
 * number; it cannot also get the same start time, which only grows (and which exec from a
 * non-leader thread hands on to the new leader, so it holds for the process's whole life).
 */
#ifndef GDRDRV_PROCESS_H
#define GDRDRV_PROCESS_H

#include <linux/sched.h>
#include <linux/types.h>

struct gdrdrv_process {
	pid_t tgid;			/* in the initial pid namespace */
	u64 start_time;
};

static inline struct gdrdrv_process gdrdrv_process_current(void)
{
	return (struct gdrdrv_process){
		.tgid = current->tgid,
		.start_time = current->group_leader->start_time,
	};
}

static inline bool gdrdrv_process_same(const struct gdrdrv_process *a,
				       const struct gdrdrv_process *b)
{
	return a->tgid == b->tgid && a->start_time == b->start_time;
}

static inline bool gdrdrv_process_is_current(const struct gdrdrv_process *p)
{
	struct gdrdrv_process cur = gdrdrv_process_current();

	return gdrdrv_process_same(p, &cur);
}

#endif /* GDRDRV_PROCESS_H */
