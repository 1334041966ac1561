/* SPDX-License-Identifier: MIT */
/*
 * gdrcopy_sanity: GDRCopy 2.6's sanity catalogue (36 cases and 1 extended) for whichever backend
 * the library uses. Each case runs in a forked child that leads its own process group; it passes
 * by returning, fails with sanity_fail (exit 1) and is waived with sanity_waive (exit 2), both
 * leaving a one-line reason for the parent.
 */
#ifndef GDR_TOOLS_SANITY_H
#define GDR_TOOLS_SANITY_H

#include <stdint.h>
#include <string.h>
#include <sys/types.h>

#include "common.h"

#define SANITY_EXIT_WAIVED 2

/* What the probe process learned about this machine before any case ran. */
struct sanity_platform {
	int dev_id;
	int backend;		/* GDR_BACKEND_*; gdrdrv when the library does not say */
	int persistent;		/* GDR_ATTR_USE_PERSISTENT_MAPPING */
	int forcepci;		/* GDR_ATTR_SUPPORT_PIN_FLAG_FORCE_PCIE */
	int coherent;		/* CU_DEVICE_ATTRIBUTE_PAGEABLE_MEMORY_ACCESS_USES_HOST_PAGE_TABLES */
	int cc_major;
	int compute_mode;	/* CU_DEVICE_ATTRIBUTE_COMPUTE_MODE */
	int vmm_rdma;		/* CU_DEVICE_ATTRIBUTE_GPU_DIRECT_RDMA_WITH_CUDA_VMM_SUPPORTED */
	int verbose;
};

extern const struct sanity_platform *sanity_plat;

struct sanity_case {
	const char *name;
	void (*fn)(void);
	int extended;
};

/* The catalogue, in any order (the runner sorts by name, as GDRCopy's ordered map does). */
extern const struct sanity_case sanity_cases_basic[];
extern const struct sanity_case sanity_cases_invalidation[];

void sanity_fail(const char *fmt, ...) __attribute__((format(printf, 1, 2), noreturn));
void sanity_waive(const char *fmt, ...) __attribute__((format(printf, 1, 2), noreturn));
/* -v only. */
void sanity_log(const char *fmt, ...) __attribute__((format(printf, 1, 2)));

#define SANITY_CHECK(cond) \
	do { \
		if (!(cond)) \
			sanity_fail("%s:%d: %s", __FILE__, __LINE__, #cond); \
	} while (0)

/* expr (a gdrapi call) must return exactly want. */
#define SANITY_RET(expr, want) \
	do { \
		int sanity_ret_ = (expr); \
		if (sanity_ret_ != (want)) \
			sanity_fail("%s:%d: %s returned %d (%s), expected %d", __FILE__, __LINE__, \
				    #expr, sanity_ret_, strerror(sanity_ret_), (want)); \
	} while (0)

#define SANITY_NONZERO(expr) \
	do { \
		if ((expr) == 0) \
			sanity_fail("%s:%d: %s succeeded, expected an error", __FILE__, __LINE__, \
				    #expr); \
	} while (0)

#define SANITY_CU(call) \
	do { \
		CUresult sanity_cu_ = (call); \
		if (sanity_cu_ != CUDA_SUCCESS) \
			sanity_fail("%s:%d: %s failed: %s", __FILE__, __LINE__, #call, \
				    tool_cu_name(sanity_cu_)); \
	} while (0)

/* ---- Helpers for the cases (sanity_helpers.c) -------------------------------------------------- */

enum sanity_mem { MEM_CUMEMALLOC, MEM_VMM };

/* GDRCopy's sizes: 256 KiB + 16, rounded up to GPU pages (320 KiB). */
#define SANITY_SIZE TOOL_ROUND_UP((256 << 10) + 16, GPU_PAGE_SIZE)

struct sanity_ctx {
	struct tool_cuda cu;
	gdr_t g;
};

/* Waive unless the active backend can pin this kind of memory. */
void need_mem(enum sanity_mem mem);
/* Waive unless the backend is gdrdrv (a kernel fd with per-process checks); what says why. */
void need_gdrdrv(const char *what);
/* Waive unless FORCE_PCIE applies here (attribute set, coherent platform, Blackwell or later). */
void need_forcepci(void);
/* Waive unless the device is in the default compute mode (two processes use it at once). */
void need_shared_device(void);

/* cuInit + primary context + gdr_open, or fail. */
void ctx_init(struct sanity_ctx *c);
void ctx_fini(struct sanity_ctx *c);

/* A GPU buffer of size bytes at a GPU-page-aligned address, or fail. */
void buf_alloc(struct sanity_ctx *c, struct gpu_buf *b, size_t size, enum sanity_mem mem);
void buf_free(struct gpu_buf *b);

/* Pin (v2 when flags >= 0, else v1) and map all of b; fail on error. */
void pin_map(struct sanity_ctx *c, const struct gpu_buf *b, int flags, gdr_mh_t *mh,
	     void **ptr);
void unmap_unpin(struct sanity_ctx *c, gdr_mh_t mh, void *ptr, size_t size);

/* Write the pattern (seed) through ptr with plain 32-bit stores, and fence. */
void write_words(void *ptr, size_t bytes, unsigned seed);
/*
 * Read bytes from ptr into out with 32-bit loads; 1 if that raised SIGBUS or SIGSEGV (the
 * mapping is gone), 0 if the read completed.
 */
int read_faults(const void *ptr, void *out, size_t bytes);
/* Fail unless the GPU memory at d holds the pattern (read back with cuMemcpyDtoH). */
void check_device(CUdeviceptr d, size_t bytes, unsigned seed);

/* Processes: fork (flushing stdio), and wait for a child that must exit 0. */
pid_t sanity_fork(void);
void wait_child_ok(pid_t pid, const char *what);
/* One-byte messages over a pipe, to order two processes. */
void msg_send(int fd, char c);
char msg_recv(int fd);

/* The fd of /dev/gdrdrv that the library holds, or -1 (scans /proc/self/fd). */
int find_gdrdrv_fd(void);

#endif
