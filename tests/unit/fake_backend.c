/* SPDX-License-Identifier: MIT */
/*
 * A backend for tier-1 tests of the core library: it follows gdrdrv's rules (64 KiB pins, map only
 * from a GPU-page-aligned pin, WC mappings, persistent semantics) over fake_gpu memory. Linked
 * into test programs only, through their registry (fake_registry.c); never part of the shipped
 * library.
 */
#include <errno.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "fake_gpu.h"
#include "gdr.h"

#define FAKE_PAGE (64u * 1024)
#define FAKE_MAX_ALLOCS 4096

struct fake_alloc {
	void *base;
	size_t size;
	int fd;
};

/* Protects allocs and nallocs; tests allocate from several threads. */
static pthread_mutex_t allocs_lock = PTHREAD_MUTEX_INITIALIZER;
static struct fake_alloc allocs[FAKE_MAX_ALLOCS];
static int nallocs;

int fake_backend_fail_unmap;
int fake_backend_fail_unpin;
int fake_backend_fail_outputs;
int fake_backend_pins;
void (*fake_backend_in_pin)(struct gdr_memh *mh);

void *fake_gpu_alloc(size_t size)
{
	size_t len = (size + FAKE_PAGE - 1) & ~(size_t)(FAKE_PAGE - 1);
	uintptr_t start;
	uint8_t *area;
	void *base;
	int fd;

	if (!len)
		return NULL;
	fd = memfd_create("fake-gpu", MFD_CLOEXEC);
	if (fd < 0)
		return NULL;
	if (ftruncate(fd, (off_t)len))
		goto err_close;
	/* Over-reserve so that the mapping can start on a 64 KiB boundary. */
	area = mmap(NULL, len + FAKE_PAGE, PROT_NONE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (area == MAP_FAILED)
		goto err_close;
	start = ((uintptr_t)area + FAKE_PAGE - 1) & ~(uintptr_t)(FAKE_PAGE - 1);
	base = mmap((void *)start, len, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_FIXED, fd, 0);
	if (base == MAP_FAILED)
		goto err_unmap;
	if (start > (uintptr_t)area)
		munmap(area, start - (uintptr_t)area);
	munmap((uint8_t *)base + len, (uintptr_t)area + FAKE_PAGE - start);
	pthread_mutex_lock(&allocs_lock);
	if (nallocs == FAKE_MAX_ALLOCS) {
		pthread_mutex_unlock(&allocs_lock);
		munmap(base, len);
		close(fd);
		return NULL;
	}
	allocs[nallocs++] = (struct fake_alloc){ .base = base, .size = len, .fd = fd };
	pthread_mutex_unlock(&allocs_lock);
	return base;

err_unmap:
	munmap(area, len + FAKE_PAGE);
err_close:
	close(fd);
	return NULL;
}

void fake_gpu_free(void *ptr)
{
	pthread_mutex_lock(&allocs_lock);
	for (int i = 0; i < nallocs; i++) {
		if (allocs[i].base != ptr)
			continue;
		munmap(allocs[i].base, allocs[i].size);
		close(allocs[i].fd);
		allocs[i] = allocs[--nallocs];
		break;
	}
	pthread_mutex_unlock(&allocs_lock);
}

int fake_gpu_find(uintptr_t addr, size_t size, int *fd, uint64_t *offset)
{
	int ret = EINVAL;

	pthread_mutex_lock(&allocs_lock);
	for (int i = 0; i < nallocs; i++) {
		uintptr_t base = (uintptr_t)allocs[i].base;

		if (addr >= base && addr - base < allocs[i].size &&
		    size <= allocs[i].size - (addr - base)) {
			/* The fake BAR1 mapping needs its own descriptor: the allocation may go first. */
			*fd = dup(allocs[i].fd);
			*offset = addr - base;
			ret = *fd < 0 ? errno : 0;
			break;
		}
	}
	pthread_mutex_unlock(&allocs_lock);
	return ret;
}

struct fake_pin {
	int fd;
	uint64_t offset;	/* of mh->va in the allocation */
};

static int fake_probe(struct gdr_why *why)
{
	(void)why;
	return 0;
}

static int fake_open(struct gdr *g, struct gdr_why *why)
{
	(void)why;
	g->backend_priv = NULL;
	return 0;
}

static int fake_pin(struct gdr *g, struct gdr_memh *mh, const struct gdr_pin_request *req)
{
	uint64_t va = req->addr & ~(uint64_t)(FAKE_PAGE - 1);
	uint64_t end = ((uint64_t)req->addr + req->size + FAKE_PAGE - 1) & ~(uint64_t)(FAKE_PAGE - 1);
	struct fake_pin *pin;
	int ret;

	(void)g;
	if (fake_backend_in_pin)
		fake_backend_in_pin(mh);
	if (req->p2p_token || req->va_space || req->flags)
		return EINVAL;
	pin = calloc(1, sizeof(*pin));
	if (!pin)
		return ENOMEM;
	ret = fake_gpu_find(va, end - va, &pin->fd, &pin->offset);
	if (ret) {
		free(pin);
		return ret;
	}
	mh->va = va;
	mh->mapped_size = end - va;
	mh->page_size = FAKE_PAGE;
	mh->backend_priv = pin;
	__atomic_add_fetch(&fake_backend_pins, 1, __ATOMIC_RELAXED);
	return 0;
}

/*
 * The descriptors of pins whose unpin was made to fail: what the "driver" still holds, until a
 * test releases it at the end. The pin's own block is the library's, freed by the library.
 */
static int stuck[64];
static int nstuck;

void fake_backend_release_stuck(void)
{
	while (nstuck > 0) {
		close(stuck[--nstuck]);
		__atomic_sub_fetch(&fake_backend_pins, 1, __ATOMIC_RELAXED);
	}
}

static int fake_unmap(struct gdr *g, struct gdr_memh *mh);

/* As a driver that may refuse the unpin, and revokes a mapping once it unpinned. */
static int fake_unpin(struct gdr *g, struct gdr_memh *mh)
{
	struct fake_pin *pin = mh->backend_priv;
	int i, ret;

	for (i = 0; i < nstuck && stuck[i] != pin->fd; i++)
		;
	if (fake_backend_fail_unpin) {
		if (i == nstuck && nstuck < 64)
			stuck[nstuck++] = pin->fd;
		return fake_backend_fail_unpin;
	}
	if (mh->map_va) {
		ret = fake_unmap(g, mh);
		if (ret)
			return ret;
	}
	if (i < nstuck)
		stuck[i] = stuck[--nstuck];
	close(pin->fd);
	free(pin);
	mh->backend_priv = NULL;
	__atomic_sub_fetch(&fake_backend_pins, 1, __ATOMIC_RELAXED);
	return 0;
}

static int fake_map(struct gdr *g, struct gdr_memh *mh, size_t size, int flags, void **va,
		    gdr_mapping_type_t *type)
{
	struct fake_pin *pin = mh->backend_priv;
	void *p;

	if (fake_backend_fail_outputs) {
		*va = (void *)0xbad;
		*type = GDR_MAPPING_TYPE_DEVICE;
		return fake_backend_fail_outputs;
	}
	/* gdrdrv refuses to map a pin that does not start on a GPU page. */
	if (mh->addr != mh->va)
		return EINVAL;
	switch (flags) {
	case GDR_MAP_FLAG_DEFAULT:
	case GDR_MAP_FLAG_REQ_WC_MAPPING:
		*type = GDR_MAPPING_TYPE_WC;
		break;
	case GDR_MAP_FLAG_REQ_CACHE_MAPPING:
		*type = GDR_MAPPING_TYPE_CACHING;
		break;
	default:
		return EOPNOTSUPP;
	}
	size = (size + g->host_page_size - 1) & ~(g->host_page_size - 1);
	p = mmap(NULL, size, PROT_READ | PROT_WRITE, MAP_SHARED, pin->fd, (off_t)pin->offset);
	if (p == MAP_FAILED)
		return errno;
	*va = p;
	return 0;
}

static int fake_unmap(struct gdr *g, struct gdr_memh *mh)
{
	size_t size = (mh->map_size + g->host_page_size - 1) & ~(g->host_page_size - 1);

	if (fake_backend_fail_unmap)
		return fake_backend_fail_unmap;
	return munmap(mh->map_va, size) ? errno : 0;
}

static int fake_get_info(struct gdr *g, struct gdr_memh *mh, gdr_info_v2_t *info)
{
	if (fake_backend_fail_outputs) {
		memset(info, 0xa5, sizeof(*info));
		return fake_backend_fail_outputs;
	}
	return gdr_backend_info_from_memh(g, mh, info);
}

static int fake_get_callback_flag(struct gdr *g, struct gdr_memh *mh, int *flag)
{
	(void)g, (void)mh;
	*flag = 0;
	return fake_backend_fail_outputs;
}

static int fake_get_attribute(struct gdr *g, int attr, int *value)
{
	(void)g;
	*value = attr == GDR_ATTR_USE_PERSISTENT_MAPPING;
	return fake_backend_fail_outputs;
}

static int fake_driver_get_version(struct gdr *g, int *major, int *minor)
{
	if (fake_backend_fail_outputs) {
		*major = *minor = 0;
		return fake_backend_fail_outputs;
	}
	return gdr_backend_no_module_version(g, major, minor);
}

/* No close or forget: the stubs stand in for them (fake_open makes nothing). */
static const struct gdr_backend_ops fake_ops = {
	.forget_pin = gdr_backend_forget_pin_priv,
	.pin = fake_pin,
	.unpin = fake_unpin,
	.map = fake_map,
	.unmap = fake_unmap,
	.get_info = fake_get_info,
	.get_callback_flag = fake_get_callback_flag,
	.get_attribute = fake_get_attribute,
	.driver_get_version = fake_driver_get_version,
};

const struct gdr_backend gdr_backend_test = {
	.name = "test",
	.id = 100,
	.probe = fake_probe,
	.open = fake_open,
	.ops = &fake_ops,
};
