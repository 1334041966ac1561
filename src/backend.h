/* SPDX-License-Identifier: MIT */
/*
 * How a backend turns a pin into a CPU mapping. The core (gdrapi.c) checks every argument, owns
 * the handle table and the locking, and calls a backend only with valid, locked state; it never
 * names a backend.
 *
 * A backend is two things: a descriptor (struct gdr_backend), which the registry lists and
 * gdr_open walks to find one that works here, and its operations (struct gdr_backend_ops), which
 * a gdr_t calls once the backend is open. A backend fills in the ops it has; gdr_backend_select
 * lays them over a stub table whose every op answers EOPNOTSUPP, so the core never tests for NULL.
 */
#ifndef GDR_BACKEND_H
#define GDR_BACKEND_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "gdrapi.h"
#include "gdrapi_ext.h"
#include "log.h"

struct gdr;
struct gdr_memh;
struct gdr_fork_fd;

struct gdr_pin_request {
	unsigned long addr;
	size_t size;
	uint64_t p2p_token;	/* gdr_pin_buffer only; 0 otherwise */
	uint32_t va_space;	/* gdr_pin_buffer only; 0 otherwise */
	uint32_t flags;		/* gdr_pin_flags_t bits, already checked */
	bool legacy;		/* called as gdr_pin_buffer (v1) */
};

/*
 * What a gdr_t does through its backend. Every op is called with g->lock held, returns 0 or a
 * positive errno and, on failure, leaves the backend's state as it was. Only function pointers:
 * backend.c's stub table and its merge rely on it (GDR_BACKEND_OP_COUNT).
 */
struct gdr_backend_ops {
	/*
	 * Release what the descriptor's open made; every pin is already gone. All of it is
	 * released even when this fails (close(2) frees the descriptor whatever it returns).
	 */
	int (*close)(struct gdr *g);
	/*
	 * In a fork child, for a gdr_t the parent opened: free the memory this process holds for
	 * the pin (forget_pin, for each pin) and then for g (forget), and nothing else. No driver
	 * call, munmap or close: the objects are the parent's, and addresses and descriptor
	 * numbers may be the child's own by now.
	 */
	void (*forget_pin)(struct gdr *g, struct gdr_memh *mh);
	void (*forget)(struct gdr *g);

	/* Pin; fill mh->va, mh->mapped_size, mh->page_size and mh->backend_priv. */
	int (*pin)(struct gdr *g, struct gdr_memh *mh, const struct gdr_pin_request *req);
	/*
	 * Unpin. When mh->map_va is set, the buffer is still mapped there (withdrawn from copies
	 * already): undo the mapping too, in the order that lets a failure leave both as they
	 * were, or where the driver needs the mapping gone first, unmap, clear map_va and then
	 * unpin (a failure then leaves the pin unmapped). In gdr_close after its unmap failed, the
	 * mapping stays and map_va is NULL.
	 */
	int (*unpin)(struct gdr *g, struct gdr_memh *mh);
	/*
	 * Map size bytes (<= mh->mapped_size) from mh->va; flags is a gdr_map_flags_t value. On
	 * success *va is the CPU address of mh->va and *type the mapping type obtained.
	 */
	int (*map)(struct gdr *g, struct gdr_memh *mh, size_t size, int flags, void **va,
		   gdr_mapping_type_t *type);
	/* Undo map; mh->map_va and mh->map_size say what was mapped. */
	int (*unmap)(struct gdr *g, struct gdr_memh *mh);
	/* Fill info; the core has zeroed it. gdr_backend_info_from_memh() serves most backends. */
	int (*get_info)(struct gdr *g, struct gdr_memh *mh, gdr_info_v2_t *info);
	int (*get_callback_flag)(struct gdr *g, struct gdr_memh *mh, int *flag);
	/* A GDRCopy attribute (not the GDR_ATTR_EXT_* ones, which the core answers). */
	int (*get_attribute)(struct gdr *g, int attr, int *value);
	int (*driver_get_version)(struct gdr *g, int *major, int *minor);
};

#define GDR_BACKEND_OP_COUNT 11

/* A backend as the registry lists it: what it is called, and how to find and open it. */
struct gdr_backend {
	const char *name;	/* as GDRCOPY_BACKEND names it */
	int id;			/* GDR_BACKEND_*, which GDR_ATTR_EXT_BACKEND reports */
	/*
	 * Whether the backend can be present here: its library loads, its driver is new enough,
	 * its device node exists. Cheap, makes no per-gdr_t state, and is called with no lock
	 * held; fills why when the answer is no.
	 */
	int (*probe)(struct gdr_why *why);
	/*
	 * Construct g->backend_priv, after probe said yes; fills why when it cannot. A backend
	 * whose probe never says yes (one left out of the build) needs none.
	 */
	int (*open)(struct gdr *g, struct gdr_why *why);
	const struct gdr_backend_ops *ops;	/* NULL: every op is a stub */
};

/* The backends, for the registry. */
extern const struct gdr_backend gdr_backend_gdrdrv;
extern const struct gdr_backend gdr_backend_dmabuf;
extern const struct gdr_backend gdr_backend_vulkan;

/*
 * The registry: the backends gdr_open may use, most preferred first, NULL-terminated. Defined
 * on its own (registry.c) so that test programs link one of their own.
 */
extern const struct gdr_backend *const gdr_backend_registry[];

/*
 * Choose and open a backend for g: GDRCOPY_BACKEND (unless setuid), else GDRCOPY_USE_DMABUF_MMAP,
 * else the registry order; set g->backend and g->ops. Logs one line per backend tried. 0 or
 * ENODEV.
 */
int gdr_backend_select(struct gdr *g);

/* ---- Helpers for backends (backend_helpers.c) ---- */

int gdr_backend_info_from_memh(struct gdr *g, struct gdr_memh *mh, gdr_info_v2_t *info);
/* get_callback_flag of backends whose pins are persistent: nothing ever revokes them. */
int gdr_backend_persistent_callback_flag(struct gdr *g, struct gdr_memh *mh, int *flag);
/* For backends with no kernel module: report the gdrdrv version whose behaviour they give. */
int gdr_backend_no_module_version(struct gdr *g, int *major, int *minor);
/*
 * forget_pin and forget for backends whose pin and gdr_t state are single malloc'd blocks that
 * hold nothing to release in a fork child (descriptors are left open; see forget).
 */
void gdr_backend_forget_pin_priv(struct gdr *g, struct gdr_memh *mh);
void gdr_backend_forget_priv(struct gdr *g);

/*
 * Set mh->va, mh->mapped_size and mh->page_size for a pin of [addr, addr + size) in the
 * allocation [base, base + len), as gdrdrv reports them: from the GPU page (64 KiB) holding addr
 * to the GPU page boundary after the end, so that clients adding (addr - info.va) to the mapping
 * keep working, but never outside the allocation rounded out to host pages; page_size is the GPU
 * page, or the host page where va is not on a GPU page. A pin that itself runs past its
 * allocation keeps its end (the driver judges it).
 */
void gdr_backend_set_pin_range(const struct gdr *g, struct gdr_memh *mh, uint64_t addr,
			       uint64_t size, uint64_t base, uint64_t len);
/*
 * Whether the allocation range a driver reported, [base, base + len), holds addr: false for a
 * range that ends before addr or starts after it, which a broken driver may report and which
 * would turn every offset computed from it into a wrapped one.
 */
bool gdr_backend_range_holds(uint64_t base, uint64_t len, uint64_t addr);
/* The length to map or unmap for size bytes of a pin: whole host pages. */
size_t gdr_backend_map_length(const struct gdr *g, size_t size);
/* munmap of mh's mapping (dmabuf, gdrdrv: an mmap of a descriptor); 0 or errno (logged). */
int gdr_backend_munmap(const struct gdr *g, const struct gdr_memh *mh);
/*
 * Around the call that maps GPU memory for the CPU (mmap, vkMapMemory): fork() in other threads
 * waits from gdr_backend_map_begin until gdr_backend_map_end has kept the mapping out of fork
 * children, as gdrdrv's VM_DONTCOPY does: a child touching it faults instead of reaching memory
 * it never pinned, and does not hold the memory up. va is the mapping (every host page that
 * [va, va + len) touches), or NULL where the call failed: the window just ends. Logs and goes
 * on if madvise fails. Only the mapping call may come between the two (fork.h). Whether every
 * page of [va, va + len) is mapped in the process: false for NULL, or for a pointer a driver
 * returned with no mapping of that length under it (nothing is done to it then).
 */
void gdr_backend_map_begin(void);
bool gdr_backend_map_end(const struct gdr *g, void *va, size_t len);
/*
 * Just before a CUDA call that exports a descriptor: fork() in other threads waits from here
 * until gdr_backend_export_take has made it close-on-exec (fork.h: why, and what it cannot
 * cover). Only the export call may come between the two.
 */
void gdr_backend_export_begin(void);
/*
 * Take the descriptor a CUDA export call handed back, and let fork() go on: exported is whether
 * the call succeeded, fd what it gave. 0 when it failed (nothing done: the caller reports the
 * error). When it succeeded: 0 with fd made close-on-exec, whatever flags the driver gave it, so
 * that programs this process starts (fork + exec, posix_spawn, system()) never inherit it, and,
 * where hold is not NULL (a descriptor the library keeps), registered in *hold to be closed in
 * fork children (fork_fds.h) before fork() goes on; or EIO when the driver gave no descriptor
 * (a negative one, or a number that names no open file: the caller must not close it), logged
 * as what (a format naming the call and its addresses) "succeeded but gave no file descriptor".
 */
int gdr_backend_export_take(bool exported, int fd, struct gdr_fork_fd **hold, const char *what,
			    ...) __attribute__((format(printf, 4, 5)));
/*
 * Before or after a pin that needs a file descriptor: whether one more can be opened, since
 * drivers report running out of them as a generic error. 0, or EMFILE or ENFILE after logging
 * which limit to raise; held says what this gdr_t holds ("this gdr_t holds 3 pins, one
 * descriptor each").
 */
int gdr_backend_check_fds(const char *held);

#endif
