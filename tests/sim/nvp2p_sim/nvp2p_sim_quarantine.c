// SPDX-License-Identifier: GPL-2.0 OR MIT
/*
 * Freed backing waits here, poisoned, before its pages go back to the page allocator, and is
 * checked when it leaves. A consumer that still maps pages after their free callback or
 * put_pages, and writes through that mapping, is then reported by name (the allocation, the
 * offset, the bytes) in the case that wrote, as a misuse. Without the quarantine, page_poison
 * notices such a write only when a later allocation happens to get the page, in whatever case
 * runs then, and cannot say whose page it was. The guest reads the counters after every case,
 * which empties the quarantine (sim_ioctl_counts); what exceeds its size leaves oldest first.
 */
#include <linux/highmem.h>
#include <linux/list.h>
#include <linux/mm.h>
#include <linux/sched.h>
#include <linux/string.h>

#include "nvp2p_sim.h"

/* Bounds what the VM's 1 GiB holds back: 1/6 of what the sim may hand out at once. */
#define SIM_QUARANTINE_MAX (64ULL << 20)

/* Report the first byte of b that is not SIM_POISON any more, as a misuse: true if there is one. */
static bool sim_quarantine_check(const struct sim_backing *b)
{
	u64 off;

	for (off = 0; off < b->size; off += PAGE_SIZE) {
		u8 *kaddr = kmap_local_page(sim_backing_page(b, off));
		u8 *bad = memchr_inv(kaddr, SIM_POISON, PAGE_SIZE);

		if (bad) {
			size_t at = bad - kaddr;

			sim_misuse("memory of the freed allocation at va %#llx (%#llx bytes) was written after its free: at +%#llx: %*ph",
				   b->va, b->size, off + at, (int)min_t(size_t, 16, PAGE_SIZE - at),
				   bad);
			kunmap_local(kaddr);
			return true;
		}
		kunmap_local(kaddr);
	}
	return false;
}

/* Check and free what list holds: how many were written after their free. */
static unsigned int sim_quarantine_release(struct list_head *list)
{
	struct sim_backing *b, *tmp;
	unsigned int written = 0;

	list_for_each_entry_safe(b, tmp, list, quarantine_node) {
		list_del(&b->quarantine_node);
		written += sim_quarantine_check(b);
		sim_backing_free(b);
		cond_resched();
	}
	return written;
}

/* Take b, poisoned; the oldest leave once the quarantine holds more than its size. */
void sim_quarantine_add(struct sim_backing *b)
{
	struct sim_backing *old, *tmp;
	LIST_HEAD(leaving);

	mutex_lock(&sim.lock);
	list_add_tail(&b->quarantine_node, &sim.quarantine);
	sim.quarantine_bytes += b->size;
	list_for_each_entry_safe(old, tmp, &sim.quarantine, quarantine_node) {
		if (sim.quarantine_bytes <= SIM_QUARANTINE_MAX)
			break;
		list_move_tail(&old->quarantine_node, &leaving);
		sim.quarantine_bytes -= old->size;
	}
	mutex_unlock(&sim.lock);
	sim_quarantine_release(&leaving);
}

/* Check and free everything in the quarantine: how much of it was written after its free. */
unsigned int sim_quarantine_drain(void)
{
	LIST_HEAD(leaving);

	mutex_lock(&sim.lock);
	list_splice_init(&sim.quarantine, &leaving);
	sim.quarantine_bytes = 0;
	mutex_unlock(&sim.lock);
	return sim_quarantine_release(&leaving);
}
