/* SPDX-License-Identifier: MIT */
/*
 * A bounded fuzz of gdrdrv: every ioctl with random and boundary arguments and bad pointers,
 * and mmap, munmap, mprotect, mremap and touches of the mappings, while GPU memory is freed
 * and allocated underneath and the provider fails now and then. The seed is printed; set
 * VMTEST_SEED to repeat a run. Each call must give 0 or an errno the ABI allows; what decides
 * the case is the kernel log, the sim's counters and the misuse reports after it.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <unistd.h>

#include "vmtest.h"

#define NALLOCS 6
#define NHANDLES 24
#define NMAPS 8

struct fuzz {
	int fd;
	unsigned char *page;		/* one usable page between two PROT_NONE ones */
	uint64_t va[NALLOCS];
	uint64_t size[NALLOCS];
	uint64_t handles[NHANDLES];	/* live, stale or never valid */
	struct { void *p; size_t len; } maps[NMAPS];
	int ioctl_ok, pins, mmap_ok, revocations;	/* what the run reached, for the log */
};

static uint64_t rnd64(void)
{
	return (uint64_t)random() << 33 ^ (uint64_t)random() << 11 ^ (uint64_t)random();
}

static uint64_t pick_addr(struct fuzz *f)
{
	int i = random() % NALLOCS;

	switch (random() % 8) {
	case 0: return 0;
	case 1: return rnd64();
	case 2: return ~0ULL - random() % GPU_PAGE;
	case 3: return f->va[i] + random() % (f->size[i] + GPU_PAGE);
	case 4: return f->va[i] - GPU_PAGE;
	default: return f->va[i] + (random() % 4) * GPU_PAGE;
	}
}

static uint64_t pick_size(void)
{
	switch (random() % 7) {
	case 0: return 0;
	case 1: return 1 + random() % 64;
	case 2: return GPU_PAGE * (1 + random() % 4);
	case 3: return GPU_PAGE - 1 + random() % 3;
	case 4: return rnd64();
	case 5: return ~0ULL - random() % 4;
	default: return random() % (5 * GPU_PAGE);
	}
}

static uint64_t pick_handle(struct fuzz *f)
{
	switch (random() % 6) {
	case 0: return rnd64();
	case 1: return ~0ULL - random() % 2;
	case 2: return f->handles[random() % NHANDLES] + 1;
	default: return f->handles[random() % NHANDLES];
	}
}

static uint32_t pick_u32(void)
{
	switch (random() % 4) {
	case 0: return 0;
	case 1: return random() % 5;
	case 2: return ~0U;
	default: return (uint32_t)random();
	}
}

/* Where the argument lives: the good page mostly, else NULL, a kernel address, or a struct
 * that runs into the guard page. */
static void *pick_arg(struct fuzz *f, size_t len)
{
	switch (random() % 12) {
	case 0: return NULL;
	case 1: return (void *)0xffff888000000000ULL;
	case 2: return f->page + CPU_PAGE - len / 2;
	default: return f->page;
	}
}

static int errno_allowed(int err)
{
	switch (err) {
	case 0: case EINVAL: case EFAULT: case ENOTTY: case ENOMEM: case EBUSY: case EOPNOTSUPP:
	case EAGAIN: case EIO: case ENODEV: case 524 /* ENOTSUPP, from the provider */:
		return 1;
	}
	return 0;
}

static int fuzz_ioctl_once(struct fuzz *f, int i)
{
	static const unsigned long cmds[] = {
		GDRDRV_IOC_PIN_BUFFER, GDRDRV_IOC_UNPIN_BUFFER, GDRDRV_IOC_GET_CB_FLAG,
		GDRDRV_IOC_GET_INFO, GDRDRV_IOC_GET_INFO_V2, GDRDRV_IOC_GET_ATTR,
		GDRDRV_IOC_PIN_BUFFER_V2, GDRDRV_IOC_REQ_MAPPING_TYPE, GDRDRV_IOC_GET_VERSION,
	};
	unsigned long cmd = cmds[random() % 9];
	union {
		struct gdrdrv_pin_buffer_params pin;
		struct gdrdrv_pin_buffer_v2_params pin2;
		struct gdrdrv_get_info_params info;
		struct gdrdrv_req_mapping_type_params req;
		struct gdrdrv_get_attr_params attr;
		uint64_t words[6];
	} u;
	unsigned int w;
	void *arg;
	int err;

	for (w = 0; w < 6; w++)
		u.words[w] = random() % 3 ? 0 : rnd64();
	if ((cmd == GDRDRV_IOC_PIN_BUFFER || cmd == GDRDRV_IOC_PIN_BUFFER_V2) && random() % 2) {
		/* Half the pins are well formed, so that mappings and revocations happen too. */
		int a = random() % NALLOCS;
		uint64_t pages = f->size[a] / GPU_PAGE, first = random() % pages;

		u.pin2 = (struct gdrdrv_pin_buffer_v2_params){
			.addr = f->va[a] + first * GPU_PAGE,
			.size = (1 + random() % (pages - first)) * GPU_PAGE - random() % 2,
		};
		if (cmd == GDRDRV_IOC_PIN_BUFFER)
			u.pin = (struct gdrdrv_pin_buffer_params){
				.addr = u.pin2.addr, .size = u.pin2.size,
			};
	} else if (cmd == GDRDRV_IOC_PIN_BUFFER) {
		u.pin.addr = pick_addr(f);
		u.pin.size = pick_size();
		u.pin.p2p_token = random() % 4 ? 0 : rnd64();
		u.pin.va_space = random() % 4 ? 0 : pick_u32();
	} else if (cmd == GDRDRV_IOC_PIN_BUFFER_V2) {
		u.pin2.addr = pick_addr(f);
		u.pin2.size = pick_size();
		u.pin2.flags = random() % 3 ? 0 : pick_u32();
		u.pin2.pad = random() % 8 ? 0 : pick_u32();
	} else if (cmd == GDRDRV_IOC_GET_ATTR) {
		u.attr.attr = pick_u32();
	} else {
		u.info.handle = pick_handle(f);
		if (cmd == GDRDRV_IOC_REQ_MAPPING_TYPE)
			u.req.mapping_type = pick_u32();
	}
	if (random() % 40 == 0)
		cmd = _IOC(random() % 4, random() % 2 ? GDRDRV_IOCTL : random() % 256,
			   random() % 256, random() % 64);

	arg = pick_arg(f, sizeof(u));
	if (arg == f->page)
		memcpy(f->page, &u, sizeof(u));
	else if (arg == f->page + CPU_PAGE - sizeof(u) / 2)
		memcpy(arg, &u, sizeof(u) / 2);
	err = vm_ioctl(f->fd, cmd, arg);
	f->ioctl_ok += !err;
	if (!errno_allowed(err))
		return test_fail("call %d: ioctl %#lx gave %s", i, cmd, test_strerror(err));
	if (!err && arg == f->page &&
	    (cmd == GDRDRV_IOC_PIN_BUFFER || cmd == GDRDRV_IOC_PIN_BUFFER_V2)) {
		uint64_t h = cmd == GDRDRV_IOC_PIN_BUFFER ?
			((struct gdrdrv_pin_buffer_params *)f->page)->handle :
			((struct gdrdrv_pin_buffer_v2_params *)f->page)->handle;
		int slot = random() % NHANDLES;

		f->pins++;
		/* Keep the pin count bounded: the handle it replaces is unpinned half the time. */
		if (random() % 2)
			vm_raw_unpin(f->fd, f->handles[slot]);
		f->handles[slot] = h;
	}
	return TEST_PASS;
}

static int fuzz_mmap_once(struct fuzz *f, int i)
{
	static const size_t lens[] = { 4096, 8192, GPU_PAGE, 2 * GPU_PAGE, 3 * GPU_PAGE + 4096 };
	int slot = random() % NMAPS, op = random() % 10;
	uint32_t v;

	if (f->maps[slot].p && op < 3) {
		/* Touch, maybe split, then unmap. */
		vm_try_read32(f->maps[slot].p, &v);
		vm_try_write32((char *)f->maps[slot].p + f->maps[slot].len - 4, 0x0f0f0f0f);
		if (f->maps[slot].len > CPU_PAGE && random() % 2) {
			munmap((char *)f->maps[slot].p + CPU_PAGE, CPU_PAGE);
			vm_try_read32(f->maps[slot].p, &v);
		}
		if (random() % 3 == 0)
			mprotect(f->maps[slot].p, CPU_PAGE, random() % 2 ? PROT_READ : PROT_NONE);
		if (random() % 4 == 0) {
			/* Move the first page elsewhere: the VMA splits, its piece keeps its offset. */
			void *to = mmap(NULL, CPU_PAGE, PROT_NONE, MAP_PRIVATE | MAP_ANONYMOUS, -1,
					0);
			void *q = to == MAP_FAILED ? MAP_FAILED :
				  mremap(f->maps[slot].p, CPU_PAGE, CPU_PAGE,
					 MREMAP_MAYMOVE | MREMAP_FIXED, to);

			if (q != MAP_FAILED)
				vm_try_read32(q, &v);
			if (to != MAP_FAILED)
				munmap(to, CPU_PAGE);
		}
		munmap(f->maps[slot].p, f->maps[slot].len);
		f->maps[slot].p = NULL;
	} else if (!f->maps[slot].p) {
		size_t len = random() % 8 ? lens[random() % 5] : (size_t)(random() % (4 * GPU_PAGE));
		uint64_t h = pick_handle(f);
		int prot = random() % 6 ? PROT_READ | PROT_WRITE : (int)(random() % 8);
		int flags = random() % 8 ? MAP_SHARED : MAP_PRIVATE;
		off_t off = (off_t)(h * CPU_PAGE);
		void *p;

		if (random() % 2) {
			/* A handle from a pin that worked, mapped from its start. */
			off = (off_t)(f->handles[random() % NHANDLES] * CPU_PAGE);
			len = random() % 2 ? 4096 : GPU_PAGE;
			prot = PROT_READ | PROT_WRITE;
			flags = MAP_SHARED;
		} else if (random() % 10 == 0) {
			off = (off_t)(rnd64() & 0x7fffffffffff000ULL);
		}
		p = mmap(NULL, len, prot, flags, f->fd, off);
		if (p == MAP_FAILED) {
			if (!errno_allowed(errno) && errno != EACCES && errno != EOVERFLOW &&
			    errno != ENXIO && errno != EPERM)
				return test_fail("call %d: mmap of %zu bytes at %#llx gave %s", i, len,
					       (unsigned long long)off, strerror(errno));
			return TEST_PASS;
		}
		f->maps[slot].p = p;
		f->maps[slot].len = len;
		f->mmap_ok++;
		/* Marked as the fuzz's, should the sim's quarantine find it stored after a free. */
		if (prot & PROT_WRITE)
			vm_try_write32(p, 0xf2000000u | (uint32_t)i);
	}
	return TEST_PASS;
}

/* GPU memory comes and goes under the pins (revocations in non-persistent mode). */
static void fuzz_gpu_once(struct fuzz *f)
{
	struct nvp2p_sim_alloc a;
	int i = random() % NALLOCS;

	if (random() % 3 == 0) {
		vm_inject(1 + random() % 2, random() % 2 ? ENOMEM : EINVAL);
		return;
	}
	f->revocations += vm_free(f->va[i]) == 0;
	if (vm_alloc(GPU_PAGE * (1 + random() % 4), random() % 2 ? NVP2P_SIM_ALLOC_SCATTERED : 0,
		     &a) == 0) {
		f->va[i] = a.va;
		f->size[i] = a.mapped_size;
	}
}

static int fuzz(int calls, int mmap_share)
{
	const char *s = getenv("VMTEST_SEED");
	unsigned int seed = s ? (unsigned int)strtoul(s, NULL, 0) : 0x6d72;
	struct fuzz f = { 0 };
	int i, ret;

	vm_log("seed %#x (GDR_VM_SEED=N on the host changes it)", seed);
	srandom(seed);
	f.fd = vm_gdrdrv_open();
	CHECK(f.fd >= 0, "open");
	f.page = mmap(NULL, 3 * CPU_PAGE, PROT_NONE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	CHECK(f.page != MAP_FAILED, "mmap");
	f.page += CPU_PAGE;
	CHECK(mprotect(f.page, CPU_PAGE, PROT_READ | PROT_WRITE) == 0, "mprotect");
	for (i = 0; i < NALLOCS; i++) {
		struct nvp2p_sim_alloc a;

		CHECK_OK(vm_alloc(GPU_PAGE * (1 + i % 4), 0, &a));
		f.va[i] = a.va;
		f.size[i] = a.mapped_size;
	}
	for (i = 0; i < NHANDLES; i++)
		f.handles[i] = random() % 4 ? (uint64_t)i * 16 : rnd64();

	for (i = 0; i < calls; i++) {
		int r = random() % 100;

		if (r < mmap_share)
			ret = fuzz_mmap_once(&f, i);
		else if (r < mmap_share + 3)
			ret = (fuzz_gpu_once(&f), TEST_PASS);
		else
			ret = fuzz_ioctl_once(&f, i);
		if (ret)
			return ret;
	}
	vm_inject(0, ENOMEM);
	for (i = 0; i < NMAPS; i++) {
		if (f.maps[i].p)
			munmap(f.maps[i].p, f.maps[i].len);
	}
	close(f.fd);
	vm_log("%d calls: %d ioctls succeeded, %d pins, %d mmaps, %d frees under the pins", calls,
	       f.ioctl_ok, f.pins, f.mmap_ok, f.revocations);
	return TEST_PASS;
}

static int case_fuzz_ioctl(void)
{
	return fuzz(4000, 5);
}

static int case_fuzz_mmap(void)
{
	return fuzz(2500, 50);
}

const struct vm_case vm_cases[] = {
	{ "fuzz_ioctl", case_fuzz_ioctl, "pn" },
	{ "fuzz_mmap", case_fuzz_mmap, "pn" },
	{ NULL, NULL, NULL },
};
