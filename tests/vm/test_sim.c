/* SPDX-License-Identifier: MIT */
/*
 * nvp2p_sim on its own, before gdrdrv is loaded: its nvidia_p2p semantics (the in-kernel
 * selftest), its control device, and its ownership and lifetime rules. Every later case trusts
 * the sim to tell the truth about what gdrdrv wrote and pinned, so the sim is checked first.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <unistd.h>

#include "vmtest.h"

static int case_selftest(void)
{
	int fd = vm_sim_fd();

	CHECK(fd >= 0, "no control device");
	CHECK(ioctl(fd, NVP2P_SIM_IOC_SELFTEST) == 0,
	      "the sim's selftest failed (%s): see the kernel log for which check",
	      strerror(errno));
	return TEST_PASS;
}

static int check_alloc_rw(uint64_t size, uint32_t flags, uint32_t seed)
{
	struct nvp2p_sim_alloc a;
	uint64_t want = (size + GPU_PAGE - 1) & ~(GPU_PAGE - 1);
	unsigned char *buf, *back;
	static const uint64_t offs[] = { 0, 1, 4095, 4096, 65535, 65536, 65537 };
	unsigned int i;
	int ret;

	ret = vm_alloc(size, flags, &a);
	CHECK(ret == 0, "alloc of %llu bytes, flags %#x: %s", (unsigned long long)size, flags,
	      strerror(ret));
	CHECK(a.va % GPU_PAGE == 0 && a.va >= NVP2P_SIM_VA_BASE, "va %#llx",
	      (unsigned long long)a.va);
	CHECK(a.mapped_size == want, "mapped_size %llu for %llu",
	      (unsigned long long)a.mapped_size, (unsigned long long)size);
	CHECK(a.p2p_token && a.va_space, "zero P2P tokens");

	buf = malloc(want);
	back = malloc(want);
	CHECK(buf && back, "out of memory");
	memset(buf, 0xff, want);
	CHECK_OK(vm_sim_read(a.va, back, want));
	for (i = 0; i < want; i++)
		CHECK(back[i] == 0, "new memory is not zero at %u", i);

	vm_fill(buf, want, seed);
	CHECK_OK(vm_sim_write(a.va, buf, want));
	memset(back, 0, want);
	CHECK_OK(vm_sim_read(a.va, back, want));
	CHECK(vm_diff(buf, back, want) < 0, "read back differs at %ld", vm_diff(buf, back, want));

	/* Pieces across page and chunk boundaries. */
	for (i = 0; i < sizeof(offs) / sizeof(offs[0]); i++) {
		uint64_t off = offs[i], len = want - off < 8195 ? want - off : 8195;

		if (off >= want)
			continue;
		memset(back, 0, len);
		CHECK_OK(vm_sim_read(a.va + off, back, len));
		CHECK(vm_diff(buf + off, back, len) < 0, "read of %llu at %llu differs",
		      (unsigned long long)len, (unsigned long long)off);
	}
	free(buf);
	free(back);
	CHECK_OK(vm_free(a.va));
	return TEST_PASS;
}

static int case_alloc_rw(void)
{
	static const uint64_t sizes[] = { 1, 4096, GPU_PAGE, GPU_PAGE + 1, (1 << 20) + 5 };
	static const uint32_t flags[] = {
		0, NVP2P_SIM_ALLOC_CONTIGUOUS, NVP2P_SIM_ALLOC_SCATTERED,
		NVP2P_SIM_ALLOC_CPU_CACHEABLE,
	};
	struct nvp2p_sim_alloc a, b;
	unsigned int i, j;
	int ret;

	for (i = 0; i < sizeof(sizes) / sizeof(sizes[0]); i++) {
		for (j = 0; j < sizeof(flags) / sizeof(flags[0]); j++) {
			ret = check_alloc_rw(sizes[i], flags[j], i * 10 + j);
			if (ret)
				return ret;
		}
	}

	/* Two allocations are neither the same nor adjacent in va. */
	CHECK_OK(vm_alloc(GPU_PAGE, 0, &a));
	CHECK_OK(vm_alloc(GPU_PAGE, 0, &b));
	CHECK(b.va != a.va && b.va != a.va + a.mapped_size && a.va != b.va + b.mapped_size,
	      "allocations at %#llx and %#llx touch", (unsigned long long)a.va,
	      (unsigned long long)b.va);
	CHECK(a.p2p_token != b.p2p_token || a.va_space != b.va_space, "equal P2P tokens");
	return TEST_PASS;
}

static int case_alloc_errors(void)
{
	struct nvp2p_sim_alloc a;
	char buf[16];
	int fd = vm_sim_fd();

	CHECK(fd >= 0, "no control device");
	CHECK_ERR(vm_alloc(0, 0, &a), EINVAL);
	CHECK_ERR(vm_alloc(NVP2P_SIM_ALLOC_MAX + 1, 0, &a), EINVAL);
	CHECK_ERR(vm_alloc(GPU_PAGE, 0x80, &a), EINVAL);
	CHECK_ERR(vm_alloc(GPU_PAGE, NVP2P_SIM_ALLOC_CONTIGUOUS | NVP2P_SIM_ALLOC_SCATTERED, &a),
		  EINVAL);
	CHECK_ERR(vm_alloc(NVP2P_SIM_CONTIGUOUS_MAX + GPU_PAGE, NVP2P_SIM_ALLOC_CONTIGUOUS, &a),
		  EINVAL);

	CHECK_OK(vm_alloc(2 * GPU_PAGE, 0, &a));
	CHECK_ERR(vm_sim_read(a.va, buf, 0), EINVAL);
	CHECK_ERR(vm_sim_read(a.va + 2 * GPU_PAGE - 8, buf, 16), EINVAL);
	CHECK_ERR(vm_sim_read(a.va - 8, buf, 16), EINVAL);
	CHECK_ERR(vm_sim_read(a.va + 3 * GPU_PAGE, buf, 8), EINVAL);
	CHECK_ERR(vm_sim_read(a.va, NULL, 16), EFAULT);
	CHECK_ERR(vm_sim_write(a.va, (void *)8, 16), EFAULT);
	CHECK_ERR(vm_free(a.va + GPU_PAGE), EINVAL);
	CHECK_ERR(vm_free(0), EINVAL);
	CHECK_OK(vm_free(a.va));
	CHECK_ERR(vm_free(a.va), EINVAL);
	CHECK_ERR(vm_sim_read(a.va, buf, 8), EINVAL);

	CHECK_ERR(vm_ioctl(fd, _IO(NVP2P_SIM_IOCTL, 99), NULL), ENOTTY);
	CHECK_ERR(vm_ioctl(fd, NVP2P_SIM_IOC_ALLOC, NULL), EFAULT);
	CHECK_ERR(vm_ioctl(fd, NVP2P_SIM_IOC_COUNTS, (void *)-4096L), EFAULT);
	return TEST_PASS;
}

static int case_ownership(void)
{
	struct nvp2p_sim_alloc mine, theirs;
	char buf[8] = "parent";
	int pipefd[2], st;
	pid_t pid;

	CHECK_OK(vm_alloc(GPU_PAGE, 0, &mine));
	CHECK_OK(vm_sim_write(mine.va, buf, sizeof(buf)));
	CHECK(pipe(pipefd) == 0, "pipe");

	pid = test_fork();
	CHECK(pid >= 0, "fork");
	if (pid == 0) {
		/* The same control file, another process: the parent's memory is not ours. */
		if (vm_sim_read(mine.va, buf, sizeof(buf)) != EINVAL ||
		    vm_sim_write(mine.va, buf, sizeof(buf)) != EINVAL ||
		    vm_free(mine.va) != EINVAL)
			_exit(1);
		if (vm_alloc(GPU_PAGE, 0, &theirs))
			_exit(2);
		if (write(pipefd[1], &theirs, sizeof(theirs)) != sizeof(theirs))
			_exit(3);
		_exit(0);
	}
	st = test_wait(pid);
	CHECK(st == 0, "the child could touch the parent's allocation (step %d)", st);
	CHECK(read(pipefd[0], &theirs, sizeof(theirs)) == sizeof(theirs), "pipe read");
	CHECK_ERR(vm_sim_read(theirs.va, buf, sizeof(buf)), EINVAL);
	CHECK_ERR(vm_free(theirs.va), EINVAL);
	CHECK_OK(vm_sim_read(mine.va, buf, sizeof(buf)));
	CHECK(strcmp(buf, "parent") == 0, "the parent's data changed");
	return TEST_PASS;
}

/* AT_VA: an allocation where its caller says, as CUDA maps VMM memory; addresses per process. */
static int case_alloc_at_va(void)
{
	const uint64_t va = 0x7e0000000000ULL;
	struct nvp2p_sim_alloc a, b;
	char buf[8] = "at va", got[8];
	pid_t pid;
	int st;

	CHECK_OK(vm_alloc_at(va, 3 * GPU_PAGE, &a));
	CHECK(a.va == va && a.mapped_size == 3 * GPU_PAGE, "AT_VA gave %#llx +%llu",
	      (unsigned long long)a.va, (unsigned long long)a.mapped_size);
	CHECK_OK(vm_sim_write(va + GPU_PAGE, buf, sizeof(buf)));
	CHECK_OK(vm_sim_read(va + GPU_PAGE, got, sizeof(got)));
	CHECK(memcmp(buf, got, sizeof(buf)) == 0, "read back \"%.8s\"", got);
	CHECK_ERR(vm_alloc_at(va + 2 * GPU_PAGE, GPU_PAGE, &b), EEXIST);
	CHECK_ERR(vm_alloc_at(va - GPU_PAGE, 2 * GPU_PAGE, &b), EEXIST);
	CHECK_ERR(vm_alloc_at(va + 3 * GPU_PAGE + 4096, GPU_PAGE, &b), EINVAL);
	CHECK_ERR(vm_alloc_at(0, GPU_PAGE, &b), EINVAL);
	CHECK_ERR(vm_alloc_at(NVP2P_SIM_VA_BASE - GPU_PAGE, 2 * GPU_PAGE, &b), EINVAL);
	CHECK_OK(vm_alloc_at(va + 3 * GPU_PAGE, GPU_PAGE, &b));
	CHECK_OK(vm_free(b.va));

	pid = test_fork();
	CHECK(pid >= 0, "fork");
	if (pid == 0) {
		/* Its own file and its own addresses: the parent's va is free here. */
		vm_sim_reopen();
		if (vm_alloc_at(va, GPU_PAGE, &b))
			_exit(1);
		if (vm_sim_read(va, got, sizeof(got)) || got[0] != 0)
			_exit(2);
		_exit(0);
	}
	st = test_wait(pid);
	CHECK(st == 0, "the child's allocation at the parent's va failed (step %d)", st);
	CHECK_OK(vm_sim_read(va + GPU_PAGE, got, sizeof(got)));
	CHECK(memcmp(buf, got, sizeof(buf)) == 0, "the parent's data changed");
	CHECK_OK(vm_free(va));
	return TEST_PASS;
}

static int case_release_frees(void)
{
	struct nvp2p_sim_counts before, after;
	struct nvp2p_sim_alloc a;
	int i;

	/* A fresh control file, so this count is only ours. */
	vm_sim_reopen();
	CHECK_OK(vm_counts(&before));
	for (i = 0; i < 3; i++)
		CHECK_OK(vm_alloc((i + 1) * GPU_PAGE, i == 1 ? NVP2P_SIM_ALLOC_SCATTERED : 0, &a));
	CHECK_OK(vm_counts(&after));
	CHECK(after.allocations == before.allocations + 3, "3 allocations counted as %llu",
	      (unsigned long long)(after.allocations - before.allocations));
	CHECK(after.backing_bytes == before.backing_bytes + 6 * GPU_PAGE, "backing %llu",
	      (unsigned long long)(after.backing_bytes - before.backing_bytes));
	vm_sim_reopen();
	CHECK_OK(vm_counts(&after));
	CHECK(after.allocations == before.allocations && after.backing_bytes == before.backing_bytes,
	      "closing the control file left %s", vm_counts_str(&after));
	return TEST_PASS;
}

static int case_inject_errors(void)
{
	CHECK_ERR(vm_inject(1, 1234), EINVAL);
	CHECK_ERR(vm_inject(1, 0), EINVAL);
	CHECK_ERR(vm_inject(1u << 21, ENOMEM), EINVAL);
	CHECK_OK(vm_inject(3, ENOMEM));
	CHECK_OK(vm_inject(1, EINVAL));
	CHECK_OK(vm_inject(1, 524));
	CHECK_OK(vm_inject(0, ENOMEM));
	return TEST_PASS;
}

/* Bounded random calls on the control device; what matters is what the kernel log says. */
static int case_fuzz_ioctl(void)
{
	static const unsigned long cmds[] = {
		NVP2P_SIM_IOC_ALLOC, NVP2P_SIM_IOC_FREE, NVP2P_SIM_IOC_WRITE, NVP2P_SIM_IOC_READ,
		NVP2P_SIM_IOC_COUNTS, NVP2P_SIM_IOC_INJECT,
	};
	const char *s = getenv("VMTEST_SEED");
	unsigned int seed = s ? (unsigned int)strtoul(s, NULL, 0) : 0x5eed;
	uint64_t vas[16] = { 0 };
	unsigned char *page;
	int fd = vm_sim_fd(), i;

	CHECK(fd >= 0, "no control device");
	vm_log("seed %#x (GDR_VM_SEED=N on the host changes it)", seed);
	srandom(seed);
	/* One usable page between two inaccessible ones: a READ of a random length into it
	 * must stop at EFAULT, not run over this process's other memory. */
	page = mmap(NULL, 3 * CPU_PAGE, PROT_NONE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	CHECK(page != MAP_FAILED, "mmap");
	page += CPU_PAGE;
	CHECK(mprotect(page, CPU_PAGE, PROT_READ | PROT_WRITE) == 0, "mprotect");

	for (i = 0; i < 3000; i++) {
		uint64_t words[8];
		unsigned long cmd;
		void *arg;
		int j, ret;

		for (j = 0; j < 8; j++) {
			switch (random() % 6) {
			case 0: words[j] = 0; break;
			case 1: words[j] = (uint64_t)random() << 32 | (uint64_t)random(); break;
			case 2: words[j] = vas[random() % 16] + (random() % 3) * GPU_PAGE; break;
			case 3: words[j] = random() % (3 * GPU_PAGE); break;
			case 4: words[j] = (uintptr_t)page + random() % 64; break;
			default: words[j] = ~0ULL - random() % 4; break;
			}
		}
		/* ALLOC's first word is a size: keep most of them small. */
		cmd = cmds[random() % 6];
		if (cmd == NVP2P_SIM_IOC_ALLOC && random() % 4)
			words[0] %= 4 * GPU_PAGE;
		if (cmd == NVP2P_SIM_IOC_INJECT && random() % 2)
			words[0] &= 0x3;
		if (random() % 50 == 0)
			cmd = _IOC(random() % 4, NVP2P_SIM_IOCTL, random() % 16, random() % 64);
		switch (random() % 10) {
		case 0: arg = NULL; break;
		case 1: arg = (void *)0xffff888000000000ULL; break;
		case 2: arg = page + CPU_PAGE - 8; break;
		default:
			memcpy(page, words, sizeof(words));
			arg = page;
		}
		ret = vm_ioctl(fd, cmd, arg);
		if (ret && ret != EINVAL && ret != EFAULT && ret != ENOTTY && ret != ENOMEM)
			return test_fail("call %d: ioctl %#lx returned %s", i, cmd, strerror(ret));
		if (!ret && cmd == NVP2P_SIM_IOC_ALLOC && arg == page)
			vas[random() % 16] = ((struct nvp2p_sim_alloc *)page)->va;
	}
	CHECK_OK(vm_inject(0, ENOMEM));
	return TEST_PASS;
}

const struct vm_case vm_cases[] = {
	{ "selftest", case_selftest, "s" },
	{ "alloc_rw", case_alloc_rw, "s" },
	{ "alloc_errors", case_alloc_errors, "s" },
	{ "ownership", case_ownership, "s" },
	{ "alloc_at_va", case_alloc_at_va, "s" },
	{ "release_frees", case_release_frees, "s" },
	{ "inject_errors", case_inject_errors, "s" },
	{ "fuzz_ioctl", case_fuzz_ioctl, "s" },
	{ NULL, NULL, NULL },
};
