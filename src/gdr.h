/* SPDX-License-Identifier: MIT */
/* The library's state: a gdr_t and its pinned buffers. */
#ifndef GDR_GDR_H
#define GDR_GDR_H

#include <pthread.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/queue.h>

#include "backend.h"
#include "gdrapi.h"

struct gdr_memh {
	TAILQ_ENTRY(gdr_memh) link;	/* in g->memhs */
	struct gdr *g;
	unsigned long handle;		/* the gdr_mh_t.h value; see handle.h */

	/* What was asked for. */
	unsigned long addr;
	size_t size;

	/* Filled by the backend's pin. */
	uint64_t va;			/* start of the pinned range, aligned as the backend needs */
	uint64_t mapped_size;
	uint32_t page_size;
	void *backend_priv;

	/* Set by the core while mapped. */
	gdr_mapping_type_t mapping_type;	/* GDR_MAPPING_TYPE_NONE when not mapped */
	void *map_va;
	size_t map_size;		/* bytes mapped from map_va (= from va) */
	size_t map_asked;		/* the size gdr_map was given */
};

TAILQ_HEAD(gdr_memh_list, gdr_memh);

/*
 * The primary CUDA contexts a gdr_t of the dmabuf or vulkan backend keeps (gdr_cuda_ctx_hold,
 * released by the backend's close): bit n of ordinals for device ordinal n, whose CUdevice (an
 * int) is device[n], kept so that the release needs no call that can fail.
 */
struct gdr_cuda_held {
	uint64_t ordinals;
	int device[64];
};

struct gdr {
	/*
	 * Protects memhs and every memh's fields, and serialises all backend ops on this gdr_t.
	 * Outermost lock: backends may take their own locks inside it; the handle table's lock
	 * nests inside it. Copies never take it.
	 */
	pthread_mutex_t lock;
	struct gdr_memh_list memhs;

	const struct gdr_backend *backend;
	struct gdr_backend_ops ops;	/* the backend's, resolved: no NULL op */
	void *backend_priv;

	size_t host_page_size;
	unsigned long fork_epoch;	/* gdr_fork_epoch() of the process that opened it */
	struct gdr_cuda_held cuda_held;	/* under lock */
};

#endif
