/* SPDX-License-Identifier: MIT */
/*
 * Every failing path unwinds, and a failure changes nothing: the loop that test_failing_calls.c
 * (dmabuf and vulkan over the simulated CUDA driver) and test_gdrdrv_backend.c (gdrdrv over a
 * fake driver) run. For each public call, the Nth call the library makes into libc, a driver
 * library or a driver fails, for N = 1, 2, ... until the public call makes fewer than N; a call
 * that can fail in several ways fails in each in turn. After each failure: the call returned an
 * error and logged why (gdr_ext_take_errors; a driver's refusal by the driver's own error),
 * nothing leaked (descriptors, shared mappings, the library's calloc'd blocks, and what the
 * program counts of its drivers' objects) and nothing else changed; the same call then
 * succeeds, and data written through the mapping reaches the GPU memory and back.
 *
 * failing_calls.c defines the libc functions the library calls (they come before libc's for
 * every object) and fails only calls whose return address is in libgdrapi; the programs add
 * their drivers' calls through failing_call(). Calls that only release (close, cuMemRelease,
 * vkFreeMemory...) never fail: an unwind whose undo fails too has nothing left to undo with.
 */
#ifndef GDR_TEST_FAILING_CALLS_H
#define GDR_TEST_FAILING_CALLS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include "harness.h"

/* ---- which call fails ---- */

/* Whether the call returning to return_address is the library's. */
bool failing_from_library(const void *return_address);

/*
 * Count a call the library makes (its caller returns to return_address; NULL when the caller
 * knows already that it is the library's) and say whether it is the one to fail. If so, it is
 * named name, and the public call's failure is checked against what failing_expect says.
 */
bool failing_call(const char *name, const void *return_address);
#define FAIL_HERE(name) failing_call(name, __builtin_return_address(0))

/*
 * For the call being failed, which of its n ways to fail it this time (0 to n - 1): the loop
 * fails the same call again in each of the others.
 */
unsigned int failing_way(unsigned int n);

/*
 * For the call being failed: what the public call must log (reason, a substring; NULL for any
 * line) and return (err; 0 for any error), as the failed call's own error told on.
 */
void failing_expect(const char *reason, int err);

/* The next definition of a function after this program's (libc's), or abort. */
void *failing_next_symbol(const char *name);

/* The next definition of fn; fn is expanded first, as cuda.h renames calls. */
#define FAILING_STRINGIFY_(x) #x
#define FAILING_STRINGIFY(x) FAILING_STRINGIFY_(x)
#define REAL(fn) ({ \
	static __typeof__(&fn) real_; \
	if (!real_) \
		real_ = (__typeof__(&fn))failing_next_symbol(FAILING_STRINGIFY(fn)); \
	real_; \
})

/*
 * A driver the program plays behind the library's ioctl, mmap, munmap and close
 * (test_gdrdrv_backend's fake gdrdrv): the calls that are not failed go to it; it hands on what
 * is not its own.
 */
struct failing_device {
	int (*ioctl)(int fd, unsigned long request, void *arg);
	void *(*mmap)(void *addr, size_t len, int prot, int flags, int fd, off_t offset);
	int (*munmap)(void *addr, size_t len);
	int (*close)(int fd);		/* never failed: it only releases */
};
void failing_set_device(const struct failing_device *device);

/* munmap as if not failed (the device's, or libc's). */
int failing_munmap_unfailed(void *addr, size_t len);

/* How many blocks the library has calloc'd and not freed; 0 under ASan, which counts them. */
int failing_library_blocks(void);

/* ---- a backend under the loop ---- */

/* A count of a driver's objects that a failure must leave as it was. */
struct failing_counter {
	const char *name;
	long (*count)(void);
	/*
	 * Objects the process keeps once made (the Vulkan instance, a GPU's device): a process's
	 * first call that failed after making one failed after what the repeated calls cover.
	 */
	bool kept_by_process;
};

struct failing_backend {
	/* Its processes: environment, time limit, how they end. */
	struct test_child child;
	/* In a new process, before any gdr_open: the GPU memory to pin, its first byte at *dptr. */
	int (*setup)(uint64_t *dptr);
	void (*cleanup)(void);
	/* Where the pin's bytes at dptr are, for this process to read (mapped: the fake's). */
	uint8_t *(*gpu_bytes)(uint64_t dptr);
	const struct failing_counter *counters;		/* ends with { NULL } */
};

/*
 * Every public call with each of its calls failing in turn, on backend b, in child processes
 * of this one (those of a process's first gdr_open and pin, one per failing call); a TEST_*
 * status.
 */
int failing_calls_run(const struct failing_backend *b);

/* Find libgdrapi in this program; fails the program when it is not loaded. */
void failing_calls_init(void);

#endif
