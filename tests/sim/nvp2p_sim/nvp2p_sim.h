/* SPDX-License-Identifier: GPL-2.0 OR MIT */
/*
 * nvp2p_sim internals. The objects:
 *   sim_backing  the host memory behind an allocation, in 64 KiB physically contiguous chunks;
 *                refcounted, because persistent pins keep it alive after the allocation is freed
 *   sim_alloc    a fake GPU allocation: a va range owned by one process and one control file
 *   sim_pin      one nvidia_p2p page table handed out; a non-persistent pin also hangs off its
 *                allocation, whose free revokes it through the consumer's free callback
 */
#ifndef NVP2P_SIM_H
#define NVP2P_SIM_H

#include <linux/atomic.h>
#include <linux/kref.h>
#include <linux/list.h>
#include <linux/mutex.h>
#include <linux/sizes.h>
#include <linux/types.h>
#include <linux/wait.h>

#include "gdrdrv_process.h"
#include "nv-p2p.h"
#include "nvp2p_sim_ioctl.h"

struct module;

/*
 * The sim builds as either flavor of NVIDIA's driver (Kbuild's NVP2P_SIM_FLAVOR), for gdrdrv to
 * meet both: the open kernel modules declare "Dual MIT/GPL" and export nvidia_p2p_* GPL-only;
 * the proprietary nvidia.ko declares "NVIDIA", which taints the kernel and every module that uses
 * its symbols, and exports them to any module (NV_EXPORT_SYMBOL in nv-linux.h, R535 and R550).
 */
#ifdef NVP2P_SIM_PROPRIETARY
#define NVP2P_SIM_LICENSE "NVIDIA"
#define NVP2P_SIM_EXPORT(sym) EXPORT_SYMBOL(sym)
#else
#define NVP2P_SIM_LICENSE "Dual MIT/GPL"
#define NVP2P_SIM_EXPORT(sym) EXPORT_SYMBOL_GPL(sym)
#endif

#define SIM_CHUNK_SIZE SZ_64K
#define SIM_CHUNK_ORDER (16 - PAGE_SHIFT)
#define SIM_PAGES_PER_CHUNK (SIM_CHUNK_SIZE >> PAGE_SHIFT)
/* All the backing the sim hands out at once, so a runaway test cannot take the VM's memory. */
#define SIM_TOTAL_MAX (384ULL << 20)
/*
 * Written over backing when it is freed, so that a consumer still mapping it reads this instead
 * of the data it wrote, and so that the quarantine can tell whether anyone wrote it since.
 */
#define SIM_POISON 0x6b

struct sim_backing {
	struct kref ref;
	u64 va;				/* the allocation's, for the quarantine's reports */
	u64 size;
	unsigned long nchunks;
	struct page *block;		/* NVP2P_SIM_ALLOC_CONTIGUOUS: the one block; else NULL */
	unsigned int block_order;
	struct list_head quarantine_node; /* in sim.quarantine once freed, under sim.lock */
	struct page *chunks[];		/* first page of each 64 KiB chunk, in va order */
};

/* One open file of /dev/nvp2p_sim. */
struct sim_ctx {
	struct list_head allocs;	/* sim_alloc.ctx_node, under sim.lock */
};

struct sim_alloc {
	struct list_head node;		/* in sim.allocs */
	struct list_head ctx_node;	/* in the allocating file's sim_ctx.allocs */
	struct gdrdrv_process owner;	/* the allocating process */
	u64 va;
	u64 size;			/* multiple of 64 KiB */
	u64 p2p_token;
	u32 va_space;
	u32 flags;			/* NVP2P_SIM_ALLOC_* */
	struct sim_backing *backing;	/* a reference */
	struct list_head pins;		/* active non-persistent pins: sim_pin.alloc_node */
};

enum sim_pin_state {
	SIM_PIN_ACTIVE,
	SIM_PIN_REVOKING,		/* its allocation is gone; the callback runs or is due */
	SIM_PIN_REVOKED,		/* the callback returned; the table is released */
};

struct sim_pin {
	struct nvidia_p2p_page_table table;	/* what the consumer gets a pointer to */
	/* Held by the sim while the table is live, and by a put_pages waiting for a callback. */
	struct kref ref;
	struct list_head node;		/* in sim.pins, until the table is released */
	struct list_head alloc_node;	/* in alloc->pins while active, in a revoke list after */
	struct sim_backing *backing;	/* a reference */
	bool persistent;
	enum sim_pin_state state;
	u64 va;
	u64 length;
	u64 p2p_token;			/* as given to get_pages, for put_pages to match */
	struct gdrdrv_process owner;	/* the allocation's: put_pages with tokens 0 looks it up */
	u32 va_space;
	void (*free_callback)(void *data);
	void *data;
	struct task_struct *revoker;	/* the task that runs the callback, while REVOKING */
	bool table_freed;		/* the callback called nvidia_p2p_free_page_table on it */
	unsigned long caller;		/* the consumer's code that pinned: whose leak it is */
	struct nvidia_p2p_page *entries;
	struct nvidia_p2p_page *page_ptrs[];	/* table.pages points here */
};

struct sim_state {
	/*
	 * Protects everything below and every sim_alloc's and sim_pin's list links, state and
	 * counters; the refcounts and atomics need it not. The sim's only lock, innermost: taken
	 * under whatever a consumer holds when it calls nvidia_p2p_*, and never held while a free
	 * callback runs or across copy_{to,from}_user, so a callback may take any lock of its own
	 * and call back into the sim (nvidia_p2p_free_page_table) without deadlock.
	 */
	struct mutex lock;
	struct list_head allocs;
	struct list_head pins;
	u64 next_va;
	u64 total_bytes;		/* backing held, for SIM_TOTAL_MAX */
	u32 inject_count;
	int inject_error;		/* negative */
	u32 inject_put_count;
	int inject_put_error;		/* negative */
	u32 inject_revoke_count;
	struct nvp2p_sim_counts counts;	/* pins, persistent_pins, allocations, foreign_puts */
	atomic64_t get_pages_calls;
	atomic64_t put_pages_calls;
	atomic64_t callbacks;
	atomic64_t misuses;
	/* The selftest's deliberate misuses, which it counts to see each one caught. */
	atomic64_t selftest_misuses;
	/* Woken when a revoked pin leaves sim.pins; put_pages of a revoking pin waits here. */
	wait_queue_head_t revoke_wq;
	/* The task inside the SELFTEST ioctl: its deliberate misuses are not reported. */
	struct task_struct *selftest_task;
	/* Freed backing not yet back in the page allocator (nvp2p_sim_quarantine.c), oldest first. */
	struct list_head quarantine;
	u64 quarantine_bytes;
};

extern struct sim_state sim;

/* nvp2p_sim_mem.c */
struct sim_backing *sim_backing_create(u64 size, u32 flags);
void sim_backing_get(struct sim_backing *b);
void sim_backing_put(struct sim_backing *b);
void sim_backing_free(struct sim_backing *b);
struct page *sim_backing_page(const struct sim_backing *b, u64 off);
int sim_alloc_create(struct sim_ctx *ctx, struct nvp2p_sim_alloc *req);
int sim_alloc_free(u64 va);
void sim_ctx_release(struct sim_ctx *ctx);
int sim_rw(u64 va, u64 len, void __user *buf, bool write);
struct sim_alloc *sim_alloc_lookup_locked(u64 va, u64 len);

/* nvp2p_sim_p2p.c */
void sim_revoke_pins(struct list_head *revoked);
void sim_release_pins_of(struct module *mod);
void sim_release_leaked_pins(void);
__printf(1, 2) void sim_misuse(const char *fmt, ...);

/* nvp2p_sim_quarantine.c */
void sim_quarantine_add(struct sim_backing *b);
unsigned int sim_quarantine_drain(void);

/* nvp2p_sim_selftest.c */
int sim_selftest(struct sim_ctx *ctx);

#endif /* NVP2P_SIM_H */
