/* SPDX-License-Identifier: MIT */
/* What several backends do alike, written once (see backend.h). */
#include <errno.h>
#include <fcntl.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/resource.h>
#include <unistd.h>

#include "backend.h"
#include "fork.h"
#include "fork_fds.h"
#include "gdr.h"
#include "log.h"

int gdr_backend_info_from_memh(struct gdr *g, struct gdr_memh *mh, gdr_info_v2_t *info)
{
	(void)g;
	info->va = mh->va;
	info->mapped_size = mh->mapped_size;
	info->page_size = mh->page_size;
	info->mapping_type = mh->mapping_type;
	info->mapped = mh->mapping_type != GDR_MAPPING_TYPE_NONE;
	info->wc_mapping = mh->mapping_type == GDR_MAPPING_TYPE_WC;
	return 0;
}

int gdr_backend_persistent_callback_flag(struct gdr *g, struct gdr_memh *mh, int *flag)
{
	(void)g, (void)mh;
	*flag = 0;
	return 0;
}

int gdr_backend_no_module_version(struct gdr *g, int *major, int *minor)
{
	(void)g;
	*major = 2;
	*minor = 6;
	return 0;
}

void gdr_backend_forget_pin_priv(struct gdr *g, struct gdr_memh *mh)
{
	(void)g;
	free(mh->backend_priv);
	mh->backend_priv = NULL;
}

void gdr_backend_forget_priv(struct gdr *g)
{
	free(g->backend_priv);
	g->backend_priv = NULL;
}

static uint64_t align_down(uint64_t v, uint64_t to)
{
	return v & ~(to - 1);
}

static uint64_t align_up(uint64_t v, uint64_t to)
{
	return (v + to - 1) & ~(to - 1);
}

void gdr_backend_set_pin_range(const struct gdr *g, struct gdr_memh *mh, uint64_t addr,
			       uint64_t size, uint64_t base, uint64_t len)
{
	uint64_t hp = g->host_page_size;
	uint64_t gp = hp > GPU_PAGE_SIZE ? hp : GPU_PAGE_SIZE;
	uint64_t last = addr + size;
	uint64_t start = align_down(addr, gp), end = align_up(last, gp);
	uint64_t lo = align_down(base, hp), hi = align_up(base + len, hp);

	if (start < lo)
		start = lo;
	if (end > hi)
		end = hi > align_up(last, hp) ? hi : align_up(last, hp);
	mh->va = start;
	mh->mapped_size = end - start;
	mh->page_size = start % GPU_PAGE_SIZE ? (uint32_t)hp : GPU_PAGE_SIZE;
}

bool gdr_backend_range_holds(uint64_t base, uint64_t len, uint64_t addr)
{
	return addr >= base && addr - base < len;
}

size_t gdr_backend_map_length(const struct gdr *g, size_t size)
{
	return align_up(size, g->host_page_size);
}

int gdr_backend_munmap(const struct gdr *g, const struct gdr_memh *mh)
{
	size_t len = gdr_backend_map_length(g, mh->map_size);
	int err;

	if (!munmap(mh->map_va, len))
		return 0;
	err = errno;
	gdr_err("gdr_unmap: munmap(%p, %zu) failed: %s", mh->map_va, len, strerror(err));
	return err;
}

void gdr_backend_map_begin(void)
{
	gdr_fork_hold_off();
}

bool gdr_backend_map_end(const struct gdr *g, void *va, size_t len)
{
	/*
	 * A Vulkan driver's pointer need only be minMemoryMapAlignment-aligned (64 bytes): the
	 * pages it lies in are the driver's mapping all the same, and madvise takes whole pages.
	 */
	uint64_t start = align_down((uintptr_t)va, g->host_page_size);
	uint64_t end = align_up((uintptr_t)va + len, g->host_page_size);
	/* msync fails (ENOMEM) on a range with a hole: a driver's pointer is not taken on trust. */
	bool mapped = va && end > start && !msync((void *)(uintptr_t)start, end - start, MS_ASYNC);
	int err = mapped && madvise((void *)(uintptr_t)start, end - start, MADV_DONTFORK) ? errno :
		  0;

	gdr_fork_allow();
	if (err)
		gdr_warn("madvise(MADV_DONTFORK) of the mapping at %p failed (%s): fork children "
			 "will inherit it", va, strerror(err));
	return mapped;
}

void gdr_backend_export_begin(void)
{
	gdr_fork_hold_off();
}

int gdr_backend_export_take(bool exported, int fd, struct gdr_fork_fd **hold, const char *what,
			    ...)
{
	bool got = exported && fd >= 0;
	char call[256];
	va_list ap;
	int err;

	/* fork() waits from the export until here: nothing else before this but the registration. */
	err = got && fcntl(fd, F_SETFD, FD_CLOEXEC) ? errno : 0;
	/*
	 * A number that names no open file (F_GETFD agrees) is no descriptor either, and is not
	 * ours to close.
	 */
	if (err == EBADF && fcntl(fd, F_GETFD) == -1)
		got = false;
	if (hold)
		*hold = got ? gdr_fork_fd_hold(fd) : NULL;
	gdr_fork_allow();
	if (!exported)
		return 0;
	if (!got) {
		va_start(ap, what);
		vsnprintf(call, sizeof(call), what, ap);
		va_end(ap);
		gdr_err("%s succeeded but gave no file descriptor (%d%s): the CUDA driver is not "
			"answering sanely; reinstall or update the NVIDIA driver", call, fd,
			fd >= 0 ? ", which is not open" : "");
		return EIO;
	}
	if (err)
		gdr_warn("FD_CLOEXEC on exported descriptor %d failed (%s): programs started from "
			 "this process will inherit it", fd, strerror(err));
	return 0;
}

int gdr_backend_check_fds(const char *held)
{
	int fd = open("/", O_PATH | O_CLOEXEC);
	struct rlimit rl;
	int err;

	if (fd >= 0) {
		close(fd);
		return 0;
	}
	err = errno;
	if (err == EMFILE) {
		if (getrlimit(RLIMIT_NOFILE, &rl))
			rl.rlim_cur = RLIM_INFINITY;
		gdr_err("gdr_pin_buffer: out of file descriptors (RLIMIT_NOFILE %llu): %s; raise the "
			"limit (ulimit -n, setrlimit) or pin fewer buffers",
			(unsigned long long)rl.rlim_cur, held);
		return EMFILE;
	}
	if (err == ENFILE) {
		gdr_err("gdr_pin_buffer: the system's file table is full (ENFILE): %s; raise "
			"fs.file-max", held);
		return ENFILE;
	}
	return 0;
}
