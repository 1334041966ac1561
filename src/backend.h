/* SPDX-License-Identifier: MIT */
/*
 * How a backend turns a pin into a CPU mapping. The core (gdrapi.c) checks every argument, owns
 * the handle table and the locking, and calls a backend only with valid, locked state; it never
 * names a backend. A backend fills in the ops it has; gdr_backend_resolve() lays them over a stub
 * table whose every op answers EOPNOTSUPP, so the core never tests for NULL.
 */
#ifndef GDR_BACKEND_H
#define GDR_BACKEND_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "gdrapi.h"

struct gdr;
struct gdr_memh;

/* Why a backend cannot be used here: one line, for the log and for gdrcopy_info. */
struct gdr_why {
	char msg[256];
};

void gdr_why_set(struct gdr_why *why, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

struct gdr_pin_request {
	unsigned long addr;
	size_t size;
	uint64_t p2p_token;	/* gdr_pin_buffer only; 0 otherwise */
	uint32_t va_space;	/* gdr_pin_buffer only; 0 otherwise */
	uint32_t flags;		/* gdr_pin_flags_t bits, already checked */
	bool legacy;		/* called as gdr_pin_buffer (v1) */
};

/*
 * Every op but probe is called with g->lock held. Ops return 0 or a positive errno and, on
 * failure, leave the backend's state as it was.
 */
struct gdr_backend_ops {
	const char *name;
	int id;			/* GDR_BACKEND_* */

	/* Cheap check that this backend can work in this process; fills why when not. */
	int (*probe)(struct gdr_why *why);
	/* Construct per-gdr_t state in g->backend_priv; fills why when it cannot. */
	int (*open)(struct gdr *g, struct gdr_why *why);
	/* Release what open made; every pin is already gone. */
	void (*close)(struct gdr *g);
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
	/* Unpin a buffer that is not mapped. */
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

#define GDR_BACKEND_OPS(X) \
	X(probe) X(open) X(close) X(forget_pin) X(forget) X(pin) X(unpin) X(map) X(unmap) \
	X(get_info) X(get_callback_flag) X(get_attribute) X(driver_get_version)

/* The registry, in order of preference. */
extern const struct gdr_backend_ops gdr_backend_gdrdrv;
extern const struct gdr_backend_ops gdr_backend_dmabuf;
extern const struct gdr_backend_ops gdr_backend_vulkan;

/* NULL-terminated list of the backends built in, most preferred first. */
const struct gdr_backend_ops *const *gdr_backend_registry(void);

/* Copy b into out, with every op b lacks taken from the stub table. */
void gdr_backend_resolve(const struct gdr_backend_ops *b, struct gdr_backend_ops *out);

/*
 * Choose and open a backend for g: GDRCOPY_BACKEND (unless setuid), else GDRCOPY_USE_DMABUF_MMAP,
 * else the registry order. Logs one line per backend tried. 0 or ENODEV.
 */
int gdr_backend_select(struct gdr *g);

/* Shared helpers for backends. */
int gdr_backend_info_from_memh(struct gdr *g, struct gdr_memh *mh, gdr_info_v2_t *info);
/*
 * Keep a CPU mapping of GPU memory out of fork children, as gdrdrv's VM_DONTCOPY does: a child
 * touching it faults instead of reaching memory it never pinned. Logs and goes on if it cannot.
 */
void gdr_backend_keep_from_fork(void *va, size_t len);
/*
 * forget_pin and forget for backends whose pin and gdr_t state are single malloc'd blocks that
 * hold nothing to release in a fork child (descriptors are left open; see forget).
 */
void gdr_backend_forget_pin_priv(struct gdr *g, struct gdr_memh *mh);
void gdr_backend_forget_priv(struct gdr *g);
/* For backends with no kernel module: report the gdrdrv version whose behaviour they give. */
int gdr_backend_no_module_version(struct gdr *g, int *major, int *minor);

#endif
