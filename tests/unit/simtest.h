/* SPDX-License-Identifier: MIT */
/*
 * Helpers for tests that run libgdrapi against the simulated CUDA driver (tests/sim/cuda) and,
 * for the vulkan backend, Mesa's lavapipe: case reporting for the runner, stderr capture to
 * check log lines, fd counting, and CUDA allocations of each kind.
 */
#ifndef GDR_TESTS_SIMTEST_H
#define GDR_TESTS_SIMTEST_H

#include <stdbool.h>
#include <stddef.h>

#include <cuda.h>

/* Mesa's software Vulkan driver, as Debian's mesa-vulkan-drivers installs it. */
#define SIMTEST_LVP_ICD "/usr/share/vulkan/icd.d/lvp_icd.x86_64.json"

struct simtest_case {
	const char *name;
	/* 0 pass, 77 skip, else fail; fail and skip say why with simtest_why first. */
	int (*run)(void);
};

/* Record why the current case fails or skips (printf-style). Returns 1, for "return fail(...)". */
int simtest_why(const char *fmt, ...) __attribute__((format(printf, 1, 2)));

#define CHECK(cond) do { \
	if (!(cond)) \
		return simtest_why("%s:%d: %s", __FILE__, __LINE__, #cond); \
} while (0)
#define CHECK_EQ(a, b) do { \
	long long a_ = (long long)(a), b_ = (long long)(b); \
	if (a_ != b_) \
		return simtest_why("%s:%d: %s == %lld, expected %s == %lld", __FILE__, __LINE__, \
				   #a, a_, #b, b_); \
} while (0)
#define CHECK_CU(call) do { \
	CUresult r_ = (call); \
	if (r_ != CUDA_SUCCESS) \
		return simtest_why("%s:%d: %s = %d", __FILE__, __LINE__, #call, (int)r_); \
} while (0)

/* Run the cases (all, or those named in argv), report each, return the exit status. */
int simtest_run(const struct simtest_case *cases, int argc, char **argv);

/* Why the lavapipe set-up is missing, or NULL when the loader and the ICD are there. */
const char *simtest_lavapipe_missing(void);

/* Point Vulkan at lavapipe and the library at the vulkan backend, with warnings logged. */
void simtest_use_lavapipe(void);

/* Open file descriptors of this process. */
int simtest_fd_count(void);

/* Capture what is written to stderr between begin and end; end returns it (static buffer). */
void simtest_capture_begin(void);
const char *simtest_capture_end(void);

/* simtest_cuda.c: programs linked with libcuda (the simulator) only. */

/* cuInit, and the primary context of device 0 current in this thread. */
int simtest_cuda_init(void);

/* A VMM allocation of size bytes (a multiple of 2 MiB) on device, mapped read-write. */
struct simtest_vmm {
	CUdeviceptr ptr;
	size_t size;
	CUmemGenericAllocationHandle handle;
};

CUresult simtest_vmm_alloc(struct simtest_vmm *m, size_t size, int device,
			   CUmemAllocationHandleType types);
/* Unmap, release and free the reservation; safe on a zeroed struct. */
void simtest_vmm_free(struct simtest_vmm *m);

#endif
