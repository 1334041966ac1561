/* SPDX-License-Identifier: MIT */
/*
 * The kernel tier's helpers, over the test harness (tests/harness/harness.h). Each
 * tests/vm/test_*.c is a program of cases that guest-init.sh runs inside the VM, one case per
 * invocation:
 *   test_x --list    one line per case: "NAME MODES", MODES being the phases it runs in:
 *                    s (nvp2p_sim alone), p (gdrdrv, persistent pins), n (non-persistent),
 *                    f (after each gdrdrv phase, with gdrdrv unloaded: fault cases, which load
 *                    its fault-injection build themselves, test_faults.c)
 *   test_x NAME      runs case NAME in a child process group, kills what it leaves behind,
 *                    and exits 0 (pass), 1 (fail) or 77 (skip); its last line is the
 *                    harness's result line, with the reason
 * The phase is in GDR_VM_PHASE (sim, persistent, nonpersistent). A case returns a TEST_*
 * status; it may return early on failure without cleaning up, since its process exits right
 * after and the runner checks that the kernel cleaned up.
 */
#ifndef GDR_VMTEST_H
#define GDR_VMTEST_H

#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>
#include <unistd.h>

#include "gdrapi.h"
#include "gdrdrv.h"
#include "harness.h"
#include "nvp2p_sim_ioctl.h"

#define GPU_PAGE ((uint64_t)GPU_PAGE_SIZE)
/* The CPU's page, the unit of mmap, mprotect and of gdrdrv's mmap offsets: 4 KiB on x86 and
 * Debian's arm64, 64 KiB (one GPU page) on its ppc64el. */
#define CPU_PAGE ((size_t)sysconf(_SC_PAGESIZE))

struct vm_case {
	const char *name;
	int (*run)(void);
	const char *modes;		/* the phases that run it, as above */
};

/* Each program defines its cases, NULL-terminated. */
extern const struct vm_case vm_cases[];

/* A line of output, flushed at once. */
void vm_log(const char *fmt, ...) __attribute__((format(printf, 1, 2)));

/* The phase of this run. */
int vm_persistent(void);

/* --- the simulated GPU (nvp2p_sim) --- */
/* The control fd, opened on first use; a forked child shares it (and so its allocations'
 * lifetime) unless it calls vm_sim_reopen(). */
int vm_sim_fd(void);
void vm_sim_close(void);
void vm_sim_reopen(void);
int vm_alloc(uint64_t size, uint32_t flags, struct nvp2p_sim_alloc *out);
/* An allocation at va (NVP2P_SIM_ALLOC_AT_VA). */
int vm_alloc_at(uint64_t va, uint64_t size, struct nvp2p_sim_alloc *out);
int vm_free(uint64_t va);
int vm_sim_write(uint64_t va, const void *buf, size_t len);
int vm_sim_read(uint64_t va, void *buf, size_t len);
int vm_counts(struct nvp2p_sim_counts *c);
int vm_inject(uint32_t count, uint32_t error);
/* The next count put_pages calls of live pins fail with error; the pins stay. */
int vm_inject_put(uint32_t count, uint32_t error);
/* The next count non-persistent get_pages free their allocation before returning (revoked). */
int vm_inject_revoke(uint32_t count);

/* --- the kernel log --- */
/* Whether a record still in the kernel log contains needle (1), not (0), or -1 if unreadable. */
int vm_kmsg_contains(const char *needle);

/* --- numbers in files: module parameters, gdrdrv's procfs counters --- */
/* The decimal number path starts with, into *v: 0, the open's errno, or EIO if none is there. */
int vm_read_number(const char *path, long long *v);
/* Write v to path in decimal: 0, or the errno of the open or the write (EINVAL: refused). */
int vm_write_number(const char *path, long long v);

/* --- gdrdrv through the library --- */
/* gdr_open() with GDRCOPY_BACKEND=gdrdrv; NULL after saying why. */
gdr_t vm_gdr_open(void);

/* --- gdrdrv raw: 0 or an errno --- */
int vm_gdrdrv_open(void);
int vm_ioctl(int fd, unsigned long cmd, void *arg);
int vm_raw_pin(int fd, uint64_t addr, uint64_t size, uint32_t flags, uint64_t *handle);
int vm_raw_pin_v1(int fd, uint64_t addr, uint64_t size, uint64_t token, uint32_t va_space,
		  uint64_t *handle);
int vm_raw_unpin(int fd, uint64_t handle);
int vm_raw_info(int fd, uint64_t handle, struct gdrdrv_get_info_v2_params *info);
int vm_raw_cb_flag(int fd, uint64_t handle, uint32_t *flag);
/* mmap of a pinned handle; NULL with *err set on failure. */
void *vm_raw_map(int fd, uint64_t handle, size_t len, int *err);
/* The fd of /dev/gdrdrv this process has open (the library's), -1 if none. */
int vm_find_gdrdrv_fd(void);

/* --- touching memory that may be gone --- */
/* 0 when the access worked, else the signal it raised (SIGBUS or SIGSEGV). Thread-safe. */
int vm_try_read32(const volatile void *p, uint32_t *val);
int vm_try_write32(volatile void *p, uint32_t val);

/* --- data --- */
/* A pattern that differs with seed and offset, so a shifted or stale copy never matches. */
void vm_fill(void *buf, size_t len, uint32_t seed);
/* Index of the first differing byte, or -1. */
long vm_diff(const void *a, const void *b, size_t len);

/* Patterns a parent and its child write, to tell whose data a mapping shows. */
#define VM_MAGIC_PARENT 0xfa11babe
#define VM_MAGIC_CHILD 0xc41dc41d

/* An allocation of the simulated GPU, pinned and mapped through a gdr_t. */
struct vm_buf {
	struct nvp2p_sim_alloc a;
	gdr_mh_t mh;
	uint32_t *map;
};

/* Allocate size bytes of the simulated GPU (with flags), pin them with gdr_pin_buffer, map. */
int vm_map_buf_flags(gdr_t g, uint64_t size, uint32_t flags, struct vm_buf *b);
int vm_map_buf(gdr_t g, uint64_t size, struct vm_buf *b);
/* Store magic + i into word i of map, failing at the first store that faults. */
int vm_fill_words(uint32_t *map, size_t words, uint32_t magic);
/* vm_map_buf, then vm_fill_words of its first words: the first failure's result. */
int vm_map_filled(gdr_t g, uint64_t size, size_t words, uint32_t magic, struct vm_buf *b);
/* Pins nvp2p_sim holds now (~0 if it cannot say). */
uint64_t vm_pins(void);
/* Write a pattern through the mapping of [va, +size) and read it back through the sim. */
int vm_map_write_check(gdr_t g, gdr_mh_t mh, uint64_t va, size_t size, uint32_t seed);

/* A string of the counts, for messages. */
const char *vm_counts_str(const struct nvp2p_sim_counts *c);

#endif /* GDR_VMTEST_H */
