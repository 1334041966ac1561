/* SPDX-License-Identifier: MIT */
/*
 * cuMemGetHandleForAddressRange(CU_MEM_RANGE_HANDLE_TYPE_DMA_BUF_FD), for the dma-buf backend.
 *
 * A real dma-buf of [a, a + n) is a file whose offset 0 is a and whose pages are the device
 * memory. A memfd cannot alias part of another file, so an export moves the range onto a fresh
 * memfd: the bytes are copied into it and it is mapped MAP_SHARED|MAP_FIXED over the device
 * range, so from then on the device pointer and the fd share the same pages. The fd is that
 * memfd. cuMemFree puts the range back to reserved address space, as for any allocation; the
 * memfd lives on while the fd (or a mapping of it) does, as a real dma-buf keeps its memory.
 *
 * Limits of the simulation, all answered CUDA_ERROR_NOT_SUPPORTED:
 *   - only cuMemAlloc memory is exported (not VMM, host or managed memory);
 *   - an export that overlaps a different range whose fd is still open (the same range again
 *     gets another fd of the same file, as a second pin of one buffer needs).
 * The simulator tracks the descriptor it handed out: an export counts as open while that
 * descriptor still refers to its file. Once it is closed, a new export of the range moves it
 * again, and a mapping of the old fd that is still alive no longer sees the device memory (the
 * backend unmaps before it closes, so it never meets this).
 *
 * As the real driver: the range must be host-page aligned, inside one allocation, the device
 * must report CU_DEVICE_ATTRIBUTE_DMA_BUF_SUPPORTED, and CU_MEM_RANGE_FLAG_DMA_BUF_MAPPING_TYPE_PCIE
 * is refused unless the device is coherent (CU_DEVICE_ATTRIBUTE_PAGEABLE_MEMORY_ACCESS_USES_HOST_
 * PAGE_TABLES; GDRCOPY_SIM_CUDA_ATTR sets both).
 *
 * GDRCOPY_SIM_CUDA_DMABUF_NOMMAP=1 exports an eventfd instead, whose mmap fails (ENODEV), to
 * stand for R580, which exports but refuses the mmap (errno 524). GDRCOPY_SIM_CUDA_DMABUF_NOFD=1
 * answers a valid export with CUDA_SUCCESS and descriptor -1, as a broken driver would.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/eventfd.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include "internal.h"
#include "simcuda_dmabuf.h"

struct sim_export {
	LIST_ENTRY(sim_export) link;
	uintptr_t start;
	size_t size;
	unsigned long long buffer_id;	/* of the cuMemAlloc range it was made from */
	int fd;				/* the descriptor handed out */
	dev_t dev;			/* and the file it referred to */
	ino_t ino;
};

/* Under sim_lock, as everything of the simulator. */
static LIST_HEAD(, sim_export) exports = LIST_HEAD_INITIALIZER(exports);
static long exports_ever;

/* Whether e's descriptor is still open on its file. */
static bool export_open(const struct sim_export *e)
{
	struct stat st;

	return !fstat(e->fd, &st) && st.st_dev == e->dev && st.st_ino == e->ino;
}

/* Whether e's allocation still exists (a freed one's fd stays open, and keeps its memory). */
static bool export_current(const struct sim_export *e)
{
	struct sim_range *r = sim_range_find(e->start);

	return r && r->buffer_id == e->buffer_id;
}

/* Forget exports that are no longer open. Caller holds sim_lock. */
static void exports_prune(void)
{
	struct sim_export *e, *next;

	for (e = LIST_FIRST(&exports); e; e = next) {
		next = LIST_NEXT(e, link);
		if (!export_open(e)) {
			LIST_REMOVE(e, link);
			free(e);
		}
	}
}

/* Record fd as the export of [start, start + size) of r. Caller holds sim_lock. */
static CUresult export_add(struct sim_range *r, uintptr_t start, size_t size, int fd)
{
	struct sim_export *e = calloc(1, sizeof(*e));
	struct stat st;

	if (!e)
		return CUDA_ERROR_OUT_OF_MEMORY;
	if (fstat(fd, &st)) {
		free(e);
		return CUDA_ERROR_UNKNOWN;
	}
	e->start = start;
	e->size = size;
	e->buffer_id = r->buffer_id;
	e->fd = fd;
	e->dev = st.st_dev;
	e->ino = st.st_ino;
	LIST_INSERT_HEAD(&exports, e, link);
	exports_ever++;
	return CUDA_SUCCESS;
}

/* Descriptors running out is a generic error in the real driver too. */
static CUresult errno_result(int err)
{
	return err == ENOMEM ? CUDA_ERROR_OUT_OF_MEMORY : CUDA_ERROR_UNKNOWN;
}

/* A second fd of the file behind open, which covers exactly the range asked for. */
static CUresult export_again(const struct sim_export *open_export, int *fd)
{
	char path[64];

	snprintf(path, sizeof(path), "/proc/self/fd/%d", open_export->fd);
	*fd = open(path, O_RDWR | O_CLOEXEC);
	return *fd < 0 ? errno_result(errno) : CUDA_SUCCESS;
}

/* Move [start, start + size) onto a fresh memfd and return that memfd. */
static CUresult export_move(uintptr_t start, size_t size, int *fd)
{
	int memfd = memfd_create("simcuda-dmabuf", MFD_CLOEXEC | MFD_ALLOW_SEALING);
	int err;

	if (memfd < 0)
		return errno_result(errno);
	if (ftruncate(memfd, (off_t)size) ||
	    fcntl(memfd, F_ADD_SEALS, F_SEAL_SHRINK | F_SEAL_GROW | F_SEAL_SEAL) ||
	    pwrite(memfd, (const void *)start, size, 0) != (ssize_t)size)
		goto err_close;
	if (mmap((void *)start, size, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_FIXED, memfd, 0) ==
	    MAP_FAILED)
		goto err_close;
	*fd = memfd;
	return CUDA_SUCCESS;

err_close:
	err = errno;
	close(memfd);
	return errno_result(err);
}

/*
 * A read-write descriptor whose mmap fails (ENODEV: an eventfd has no mmap), as the R580
 * driver's dma-bufs do.
 */
static CUresult export_unmappable(int *fd)
{
	*fd = eventfd(0, EFD_CLOEXEC);
	return *fd < 0 ? errno_result(errno) : CUDA_SUCCESS;
}

static bool env_set(const char *name)
{
	const char *v = getenv(name);

	return v && !strcmp(v, "1");
}

/* The device attribute attr of device, 0 when it cannot be read. */
static int device_attr(int device, CUdevice_attribute attr)
{
	int v = 0;

	return cuDeviceGetAttribute(&v, attr, device) == CUDA_SUCCESS ? v : 0;
}

CUresult CUDAAPI cuMemGetHandleForAddressRange(void *handle, CUdeviceptr dptr, size_t size,
					       CUmemRangeHandleType handleType,
					       unsigned long long flags)
{
	const unsigned long long known = CU_MEM_RANGE_FLAG_DMA_BUF_MAPPING_TYPE_PCIE;
	uintptr_t page = (uintptr_t)sysconf(_SC_PAGESIZE), end;
	CUresult res = sim_check_ctx();
	struct sim_export *e, *same = NULL;
	struct sim_mapping *m;
	struct sim_range *r;
	int device, fd = -1;

	if (res)
		return res;
	if (!handle || handleType != CU_MEM_RANGE_HANDLE_TYPE_DMA_BUF_FD || (flags & ~known) ||
	    !size || dptr % page || size % page || __builtin_add_overflow(dptr, size, &end))
		return CUDA_ERROR_INVALID_VALUE;
	res = cuPointerGetAttribute(&device, CU_POINTER_ATTRIBUTE_DEVICE_ORDINAL, dptr);
	if (res)
		return res;
	if (!device_attr(device, CU_DEVICE_ATTRIBUTE_DMA_BUF_SUPPORTED))
		return CUDA_ERROR_NOT_SUPPORTED;
	if ((flags & CU_MEM_RANGE_FLAG_DMA_BUF_MAPPING_TYPE_PCIE) &&
	    !device_attr(device, CU_DEVICE_ATTRIBUTE_PAGEABLE_MEMORY_ACCESS_USES_HOST_PAGE_TABLES))
		return CUDA_ERROR_NOT_SUPPORTED;

	pthread_mutex_lock(&sim_lock);
	r = sim_range_find(dptr);
	m = r ? sim_mapping_find(r, dptr) : NULL;
	res = CUDA_ERROR_INVALID_VALUE;
	if (!m)
		goto out_unlock;
	res = CUDA_ERROR_NOT_SUPPORTED;
	if (r->kind != SIM_RANGE_ALLOC || m->phys->kind != SIM_PHYS_DEVICE)
		goto out_unlock;
	res = CUDA_ERROR_INVALID_VALUE;
	if (end > m->va + m->size)
		goto out_unlock;
	exports_prune();
	LIST_FOREACH(e, &exports, link) {
		if (!export_current(e) || e->start >= end || dptr >= e->start + e->size)
			continue;
		if (e->start != dptr || e->size != size) {
			res = CUDA_ERROR_NOT_SUPPORTED;
			goto out_unlock;
		}
		same = e;
	}
	if (env_set("GDRCOPY_SIM_CUDA_DMABUF_NOFD")) {
		*(int *)handle = -1;
		res = CUDA_SUCCESS;
		goto out_unlock;
	}
	if (env_set("GDRCOPY_SIM_CUDA_DMABUF_NOMMAP"))
		res = export_unmappable(&fd);
	else if (same)
		res = export_again(same, &fd);
	else
		res = export_move(dptr, size, &fd);
	if (res)
		goto out_unlock;
	res = export_add(r, dptr, size, fd);
	if (res) {
		close(fd);
		goto out_unlock;
	}
out_unlock:
	pthread_mutex_unlock(&sim_lock);
	if (fd >= 0 && !res)
		*(int *)handle = sim_export_hook_run(fd);
	return res;
}

__attribute__((visibility("default"))) void
simcuda_dmabuf_get_counters(struct simcuda_dmabuf_counters *c)
{
	struct sim_export *e;

	pthread_mutex_lock(&sim_lock);
	exports_prune();
	c->exported = exports_ever;
	c->open = 0;
	LIST_FOREACH(e, &exports, link)
		c->open++;
	pthread_mutex_unlock(&sim_lock);
}
