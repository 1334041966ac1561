/* SPDX-License-Identifier: (GPL-2.0 WITH Linux-syscall-note) OR MIT */
/*
 * Control interface of nvp2p_sim, the test module that implements NVIDIA's nvidia_p2p API over
 * host pages: /dev/nvp2p_sim. Tests use it as a CUDA program uses the CUDA driver: allocate
 * "GPU" memory, read and write it the way cudaMemcpy would, free it (which fires the free
 * callbacks of non-persistent pins, as cudaFree does), and watch the pins a consumer such as
 * gdrdrv holds.
 *
 * Every command encodes its struct's size. Padding and reserved fields must be zero, unknown
 * flags are refused (EINVAL). An allocation belongs to the process that made it (its thread
 * group), and to the open file it was made through: closing that file's last reference frees
 * it, as a process's exit frees its CUDA memory.
 */
#ifndef _UAPI_NVP2P_SIM_IOCTL_H
#define _UAPI_NVP2P_SIM_IOCTL_H

#include <linux/types.h>
#include <linux/ioctl.h>

#define NVP2P_SIM_DEVICE "/dev/nvp2p_sim"

/* Not used by any in-tree driver's ioctls; gdrdrv is 0xDA. */
#define NVP2P_SIM_IOCTL 0xDB

/* Fake GPU virtual addresses start here: above the user address space with 4- and 5-level page
 * tables, so a test that dereferences one by mistake faults at once. */
#define NVP2P_SIM_VA_BASE 0x0100000000000000ULL

#define NVP2P_SIM_PAGE_SIZE 0x10000ULL	/* 64 KiB, the GPU page */

/* ALLOC flags. */
/* Page tables of this allocation carry NVIDIA_P2P_PAGE_TABLE_FLAGS_CPU_CACHEABLE, as memory of a
 * cache-coherent GPU does; persistent pins of it may also ask for FORCE_BAR1_MAPPING. */
#define NVP2P_SIM_ALLOC_CPU_CACHEABLE	0x1
/* Back it with one physically contiguous block (at most 4 MiB), so a pin is a single run. */
#define NVP2P_SIM_ALLOC_CONTIGUOUS	0x2
/* Order the 64 KiB chunks so that no two neighbours are physically adjacent. */
#define NVP2P_SIM_ALLOC_SCATTERED	0x4
/*
 * Place it at va (in: 64 KiB aligned, the whole range below NVP2P_SIM_VA_BASE, overlapping no
 * allocation of this process, else EINVAL or EEXIST), as CUDA maps a VMM allocation where its
 * caller reserved address space: the simulated CUDA driver passes the host address of its
 * reservation.
 */
#define NVP2P_SIM_ALLOC_AT_VA		0x8
#define NVP2P_SIM_ALLOC_FLAGS_ALL	0xf

/* The largest allocation; the sim also caps the total it backs. */
#define NVP2P_SIM_ALLOC_MAX		(256ULL << 20)
#define NVP2P_SIM_CONTIGUOUS_MAX	(4ULL << 20)

struct nvp2p_sim_alloc {
	__u64 size;		/* in: bytes, rounded up to 64 KiB */
	__u32 flags;		/* in: NVP2P_SIM_ALLOC_* */
	__u32 va_space;		/* out: the allocation's P2P va_space token (non-zero) */
	__u64 va;		/* out: 64 KiB-aligned fake GPU address (in with AT_VA) */
	__u64 p2p_token;	/* out: the allocation's P2P token (non-zero) */
	__u64 mapped_size;	/* out: size rounded up to 64 KiB */
};

struct nvp2p_sim_free {
	__u64 va;		/* in: exactly the va ALLOC returned */
};

/* READ and WRITE: [va, va + len) must lie inside one allocation of the calling process. */
struct nvp2p_sim_rw {
	__u64 va;		/* in */
	__u64 len;		/* in */
	__u64 buf;		/* in: user pointer */
};

/* What the sim holds now, system-wide, and what it has done since it was loaded. */
struct nvp2p_sim_counts {
	__u64 pins;		/* outstanding pins, persistent or not */
	__u64 persistent_pins;	/* of which persistent */
	__u64 allocations;	/* live allocations */
	__u64 backing_bytes;	/* host memory held, by allocations or by persistent pins */
	__u64 get_pages_calls;	/* both kinds, successful or not */
	__u64 put_pages_calls;	/* both kinds */
	__u64 callbacks;	/* free callbacks fired */
	__u64 misuses;		/* calls that broke the nvidia_p2p contract (logged as "misuse") */
	/*
	 * put_pages calls with tokens 0 from a process that does not own the pin's allocation:
	 * NVIDIA looks the pin up by the calling process, finds none, reports success and
	 * releases nothing (the pin, and its free callback, stay).
	 */
	__u64 foreign_puts;
};

/*
 * The next count get_pages calls of either kind that would succeed fail with -error instead:
 * ENOMEM as on BAR1 exhaustion, EINVAL as on a GeForce board; also EIO, EBUSY, ENODEV or
 * ENOTSUPP (524). count 0 cancels an injection still pending.
 */
struct nvp2p_sim_inject {
	__u32 count;		/* in */
	__u32 error;		/* in: a positive errno */
};

/*
 * INJECT_PUT: the next count put_pages calls of either kind that would release a live pin fail
 * with -error instead (EINVAL or EIO, what NVIDIA documents), and the pin stays: its pages stay
 * pinned and, if non-persistent, its free callback still runs when the allocation is freed.
 */

#define NVP2P_SIM_IOC_ALLOC	_IOWR(NVP2P_SIM_IOCTL, 1, struct nvp2p_sim_alloc)
#define NVP2P_SIM_IOC_FREE	_IOW(NVP2P_SIM_IOCTL, 2, struct nvp2p_sim_free)
#define NVP2P_SIM_IOC_WRITE	_IOW(NVP2P_SIM_IOCTL, 3, struct nvp2p_sim_rw)
#define NVP2P_SIM_IOC_READ	_IOW(NVP2P_SIM_IOCTL, 4, struct nvp2p_sim_rw)
#define NVP2P_SIM_IOC_COUNTS	_IOR(NVP2P_SIM_IOCTL, 5, struct nvp2p_sim_counts)
#define NVP2P_SIM_IOC_INJECT	_IOW(NVP2P_SIM_IOCTL, 6, struct nvp2p_sim_inject)
/* Run the module's own checks of its nvidia_p2p semantics in the caller's context; 0 or EIO
 * (details in the kernel log). */
#define NVP2P_SIM_IOC_SELFTEST	_IO(NVP2P_SIM_IOCTL, 7)
#define NVP2P_SIM_IOC_INJECT_PUT	_IOW(NVP2P_SIM_IOCTL, 8, struct nvp2p_sim_inject)
/*
 * INJECT_REVOKE (error 0): the next count non-persistent get_pages calls that succeed free the
 * pinned allocation (the pinning process's own) before they return, as a cudaFree racing the pin can once NVIDIA has
 * registered its callback: the free callback runs inside get_pages, in the pinning task, and
 * get_pages then returns 0 with a table that is already gone.
 */
#define NVP2P_SIM_IOC_INJECT_REVOKE	_IOW(NVP2P_SIM_IOCTL, 9, struct nvp2p_sim_inject)

#endif /* _UAPI_NVP2P_SIM_IOCTL_H */
