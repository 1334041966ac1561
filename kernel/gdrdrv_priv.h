/* SPDX-License-Identifier: GPL-2.0 OR MIT */
/*
 * gdrdrv internals, shared by its four parts: main (device, open files, procfs), ioctl (copy-in
 * and validation), pin (memory regions and the nvidia_p2p calls) and mmap.
 *
 * Lock order, outermost first:
 *   NVIDIA's own locks (held around the free callback)
 *   mm->mmap_lock (held by the VM around ->mmap and the vm_ops, faults included)
 *     gdrdrv_file.lock  or  gdrdrv_mr.sem, never both: a lookup takes a reference on the MR under
 *                       file.lock and drops file.lock before it takes mr.sem
 *       mapping->i_mmap_rwsem (inside unmap_mapping_range, under mr.sem)
 * gdrdrv_refused_lock (gdrdrv_pin.c) is taken with no other lock held, and none is taken under it.
 * gdrdrv_p2p_lock (gdrdrv_pin.c) is outermost of gdrdrv's: held across non-persistent get_pages
 * and put_pages, and around the mr.sem those take, never taken by the free callback.
 * Neither file.lock nor mr.sem is held across a call into nvidia_p2p: the free callback takes
 * mr.sem with NVIDIA's locks held, and get_pages/put_pages take those locks (put_pages also
 * waits for a callback in flight).
 */
#ifndef GDRDRV_PRIV_H
#define GDRDRV_PRIV_H

#define pr_fmt(fmt) KBUILD_MODNAME ":%s: " fmt, __func__

#include <linux/fs.h>
#include <linux/kref.h>
#include <linux/mm.h>
#include <linux/mutex.h>
#include <linux/rwsem.h>
#include <linux/sched.h>
#include <linux/types.h>
#include <linux/xarray.h>

#include "gdrdrv_config.h"
#include "gdrdrv.h"
#include "gdrdrv_process.h"
#include "nv-p2p.h"

#define GDRDRV_GPU_PAGE_SHIFT 16
#define GDRDRV_GPU_PAGE_SIZE (1ULL << GDRDRV_GPU_PAGE_SHIFT)
#define GDRDRV_GPU_PAGE_OFFSET (GDRDRV_GPU_PAGE_SIZE - 1)

/*
 * Handles are mmap page offsets: a pin of N host pages takes handles [h, h + N), so the mmap
 * ranges of two MRs never overlap, and handle + N stays within what mmap accepts as an offset.
 */
#define GDRDRV_HANDLE_LIMIT ((u64)(MAX_LFS_FILESIZE >> PAGE_SHIFT))

/*
 * Page tables of major version 1 (R515-R575) and 2 (R580+) share their layout up to "flags",
 * which only versions 1.3+ and 2.0+ have. The header's own _COMPATIBLE macro accepts only its
 * major, so gdrdrv checks the version itself.
 */
#define GDRDRV_P2P_MAJOR(v) (((v) >> 16) & 0xffff)
#if GDRDRV_P2P_MAJOR(NVIDIA_P2P_PAGE_TABLE_VERSION) != 1 && \
	GDRDRV_P2P_MAJOR(NVIDIA_P2P_PAGE_TABLE_VERSION) != 2
#error "gdrdrv knows nvidia_p2p page tables of major version 1 and 2 only"
#endif
#define GDRDRV_P2P_TABLE_COMPATIBLE(v) \
	(GDRDRV_P2P_MAJOR(v) == 1 || GDRDRV_P2P_MAJOR(v) == 2)
/* 1.3+ and every 2.x: the flags field exists. */
#define GDRDRV_P2P_TABLE_HAS_FLAGS(v) ((v) >= 0x00010003)
#define GDRDRV_P2P_HEADER_HAS_FLAGS GDRDRV_P2P_TABLE_HAS_FLAGS(NVIDIA_P2P_PAGE_TABLE_VERSION)

/* Module parameters (gdrdrv_main.c). */
extern int gdrdrv_dbg_enabled;
extern int gdrdrv_info_enabled;
extern int gdrdrv_use_persistent_mapping;
extern unsigned int gdrdrv_max_pins_per_file;

/* Platform facts found at load (gdrdrv_main.c). */
extern bool gdrdrv_cpu_may_cache;	/* ARM64, POWER9: GPU memory may be mapped cached */
extern bool gdrdrv_need_device_mapping;	/* BlueField-3: CPU mappings must be Device */

/*
 * Whether the step that can fail for want of memory, named step, is to fail now: only in a test
 * build with fault injection (gdrdrv_fault.c), otherwise never.
 */
#ifdef GDRDRV_FAULT_INJECT
bool gdrdrv_should_fail(const char *step);
#else
static inline bool gdrdrv_should_fail(const char *step)
{
	return false;
}
#endif

/* User-triggered failures are logged only with dbg_enabled, so no caller can flood the log. */
#define gdrdrv_dbg(fmt, ...) \
	do { if (gdrdrv_dbg_enabled) pr_info(fmt, ##__VA_ARGS__); } while (0)
#define gdrdrv_info(fmt, ...) \
	do { if (gdrdrv_info_enabled || gdrdrv_dbg_enabled) pr_info(fmt, ##__VA_ARGS__); } while (0)

/* One open /dev/gdrdrv. */
struct gdrdrv_file {
	/* Protects mrs, nr_pins and next_handle. Never held together with an MR's sem (see the top). */
	struct mutex lock;
	struct xarray mrs;		/* handle -> gdrdrv_mr, once pinned */
	unsigned int nr_pins;		/* in mrs, or being pinned */
	/* The first mmap offset no pin has had: offsets are handed out once, to successful pins. */
	u64 next_handle;
	struct gdrdrv_process owner;	/* the opener; immutable */
	/* The file's f_mapping: only its VMAs, so a zap never touches another file's. */
	struct address_space mapping;
};

/* A pinned range of GPU memory. */
struct gdrdrv_mr {
	/*
	 * One reference for the table entry, one per VMA, one per lookup in flight, and one while
	 * put_pending or orphaned.
	 */
	struct kref ref;
	/*
	 * Outlives the pages: release unpins before it frees. A pin released outside its process
	 * keeps its table after the file is gone (gdrdrv_mr_orphan), with no VMA, so nothing
	 * reaches the file through it.
	 */
	struct gdrdrv_file *file;

	/* Set when the MR is published, then immutable; read only through the table or a VMA. */
	u64 handle;
	/* Set before get_pages, then immutable. */
	u64 va;				/* 64 KiB aligned start */
	u64 mapped_size;		/* 64 KiB multiple */
	u32 offset;			/* of the pinned address in its first GPU page */
	u64 p2p_token;
	u32 va_space;
	bool persistent;
	bool force_pcie;
	bool cpu_cacheable;		/* the provider says CPU caching is safe */
	u64 tm_cycles;			/* get_cycles() spent in get_pages */
	u32 tsc_khz;
	/*
	 * Written by NVIDIA's get_pages, which sets it before the pin can be revoked, then left:
	 * the table the free callback frees (the nvidia_p2p contract), even when an unpin, a failed
	 * pin or no one yet holds it as page_table below. Not immutable like the fields above, and
	 * dangling once the table is gone (a failed get_pages, a put_pages, the callback's return):
	 * only the callback and the pin, right after get_pages, may read it.
	 */
	struct nvidia_p2p_page_table *nv_table;

	/*
	 * Protects the fields below. The free callback takes it with NVIDIA's locks held, so it is
	 * never held across an nvidia_p2p call, and file.lock is never taken under it.
	 */
	struct rw_semaphore sem;
	/* NULL once unpinned or revoked; an orphaned MR's goes with the free callback. */
	struct nvidia_p2p_page_table *page_table;
	bool cb_flag;			/* NVIDIA's free callback revoked the pages */
	bool unpinned;			/* out of the table; only VMAs still hold it */
	/*
	 * Non-persistent: the detached table went back to NVIDIA, whose put_pages has not yet
	 * said it is released (it is running, or it failed), so NVIDIA may still call the free
	 * callback, which then finishes the release. Holds a reference on the MR and one on the
	 * module.
	 */
	bool put_pending;
	/*
	 * Non-persistent, released outside its process: the table stays for NVIDIA's free
	 * callback to free (gdrdrv_mr_orphan). Holds a reference on the MR and one on the module.
	 */
	bool orphaned;
	bool wc_reserved;		/* x86 PAT: WC recorded for the pages' physical ranges */
	unsigned int nr_vmas;		/* VMAs of the one mapping (a split makes two) */
	gdr_mr_type_t map_type;		/* of the mapping; GDR_MR_NONE when not mapped */
	gdr_mr_type_t req_type;		/* REQ_MAPPING_TYPE for the next mmap; NONE: pick */
};

/* What GET_INFO, GET_INFO_V2 and GET_CB_FLAG report. */
struct gdrdrv_mr_state {
	u64 va;
	u64 mapped_size;
	u32 page_size;
	u32 tsc_khz;
	u64 tm_cycles;
	gdr_mr_type_t map_type;
	bool cb_flag;
};

struct gdrdrv_pin_args {
	u64 addr;
	u64 size;
	u64 p2p_token;
	u32 va_space;
	u32 flags;			/* GDRDRV_PIN_BUFFER_FLAG_* */
};

static inline bool gdrdrv_caller_is_owner(const struct gdrdrv_file *fp)
{
	return gdrdrv_process_is_current(&fp->owner);
}

/* gdrdrv_pin.c */
bool gdrdrv_persistent_in_use(void);
bool gdrdrv_force_pcie_supported(void);
s64 gdrdrv_pinned_tables(void);
int gdrdrv_pin(struct gdrdrv_file *fp, const struct gdrdrv_pin_args *args, u64 *handle);
int gdrdrv_unpin(struct gdrdrv_file *fp, u64 handle);
void gdrdrv_unpin_all(struct gdrdrv_file *fp);
void gdrdrv_retry_refused_puts(bool unloading);
struct gdrdrv_mr *gdrdrv_mr_get(struct gdrdrv_file *fp, u64 handle);
void gdrdrv_mr_put(struct gdrdrv_mr *mr);
int gdrdrv_mr_query(struct gdrdrv_file *fp, u64 handle, struct gdrdrv_mr_state *state);

/* gdrdrv_mmap.c */
int gdrdrv_mmap(struct file *filp, struct vm_area_struct *vma);
int gdrdrv_mr_request_type(struct gdrdrv_file *fp, u64 handle, gdr_mr_type_t type);

/* gdrdrv_ioctl.c */
long gdrdrv_ioctl(struct file *filp, unsigned int cmd, unsigned long arg);

#endif /* GDRDRV_PRIV_H */
