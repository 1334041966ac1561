/* SPDX-License-Identifier: MIT */
/*
 * The vulkan backend: CPU mappings of CUDA VMM allocations with no kernel module. A pin exports
 * the allocation as a POSIX fd (cuMemExportToShareableHandle), imports it into the Vulkan device
 * with the same UUID as OPAQUE_FD memory of its DEVICE_LOCAL|HOST_VISIBLE type, and a map is
 * vkMapMemory of that import: on NVIDIA's driver a write-combined BAR1 mapping, coherent with
 * CUDA's mapping of the same memory. How pins, maps and attributes compare with gdrdrv's is in
 * gdrapi(7).
 *
 * A pin holds a reference on the allocation (cuMemRetainAllocationHandle) and the import, so
 * memory the application frees while pinned stays allocated until the unpin: the mapping never
 * reaches memory that is someone else's by then, and the pin is persistent, as gdrdrv's in its
 * default mode. The fd CUDA exports is consumed by the import.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "gdr.h"
#include "log.h"
#include "vulkan_priv.h"

#define KCMP_FILE 0

struct vk_pin {
	int ordinal;
	CUmemGenericAllocationHandle handle;	/* our reference on the allocation */
	VkDeviceMemory memory;			/* the import of the whole mapped allocation */
	VkBuffer buffer;			/* for dedicated imports, else VK_NULL_HANDLE */
	VkDeviceSize alloc_size;
	VkDeviceSize offset;			/* of mh->va in memory */
};

/* How to make memory this backend pins. */
#define VK_VMM_ALLOC "allocate with cuMemCreate and requestedHandleTypes = " \
	"CU_MEM_HANDLE_TYPE_POSIX_FILE_DESCRIPTOR"
/* For GPU memory that this backend cannot pin and gdrdrv can. */
static const char vk_vmm_hint[] = VK_VMM_ALLOC ", or use the gdrdrv backend";
/* For memory that is not GPU memory: no backend pins it. */
static const char vk_not_gpu_hint[] = "for GPU memory that the CPU can map, " VK_VMM_ALLOC;

static int vulkan_open(struct gdr *g, struct gdr_why *why)
{
	struct vk_state *s;
	int ret = gdr_vk_state_get(&s, why);

	if (!ret)
		g->backend_priv = s;
	return ret;
}

/* Close and forget (in a fork child) alike: the state is the process's, never a gdr_t's. */
static void vulkan_forget(struct gdr *g)
{
	g->backend_priv = NULL;
}

/* The primary contexts the gdr_t kept (gdr_cuda_ctx_hold) go; the state stays the process's. */
static int vulkan_close(struct gdr *g)
{
	struct vk_state *s = g->backend_priv;

	gdr_cuda_ctx_release_held(s->cuda, &g->cuda_held);
	vulkan_forget(g);
	return 0;
}

/*
 * After a failed import: is fd still the open file we handed in (a dup of which is ref)? The
 * spec leaves the fd with the caller on failure, but Mesa closes it anyway, and its number may
 * already name another thread's file; close only what is provably ours.
 *
 * Only kcmp proves it. Without kcmp (an old kernel, or a seccomp filter such as Docker's
 * default) nothing tells one open of a file from another: the inode is the same for every open
 * of /dev/nvidiactl, which NVIDIA's exports are. The fd is then left open: one descriptor
 * leaked, rather than another's closed.
 */
static bool fd_still_ours(int fd, int ref)
{
	long same = syscall(SYS_kcmp, (long)getpid(), (long)getpid(), KCMP_FILE, (long)fd,
			    (long)ref);
	int err = errno;

	if (same == 0)
		return true;
	if (same < 0 && (err == ENOSYS || err == EPERM))
		gdr_warn("vulkan: descriptor %d, given to the failed import, is left open: the "
			 "driver may have closed it and another file have its number, and without "
			 "kcmp (%s) nothing tells", fd, strerror(err));
	return false;
}

static int vk_errno(VkResult r)
{
	switch (r) {
	case VK_ERROR_OUT_OF_HOST_MEMORY:
	case VK_ERROR_OUT_OF_DEVICE_MEMORY:
	case VK_ERROR_TOO_MANY_OBJECTS:
		return ENOMEM;
	case VK_ERROR_INVALID_EXTERNAL_HANDLE:
		return ENOTSUP;
	default:
		return EIO;
	}
}

/* A buffer for a dedicated import of size bytes; 0 or an errno (logged). */
static int create_dedicated_buffer(struct vk_gpu *gpu, VkDeviceSize size, VkBuffer *buffer)
{
	VkExternalMemoryBufferCreateInfo ext = {
		.sType = VK_STRUCTURE_TYPE_EXTERNAL_MEMORY_BUFFER_CREATE_INFO,
		.handleTypes = VK_EXTERNAL_MEMORY_HANDLE_TYPE_OPAQUE_FD_BIT,
	};
	VkBufferCreateInfo info = {
		.sType = VK_STRUCTURE_TYPE_BUFFER_CREATE_INFO,
		.pNext = &ext,
		.size = size,
		.usage = VK_BUFFER_USAGE_TRANSFER_SRC_BIT | VK_BUFFER_USAGE_TRANSFER_DST_BIT,
		.sharingMode = VK_SHARING_MODE_EXCLUSIVE,
	};
	VkMemoryRequirements req = { 0 };
	VkResult r = gpu->vkCreateBuffer(gpu->device, &info, NULL, buffer);

	if (!gdr_vk_made(r, "vkCreateBuffer") || !*buffer) {
		gdr_err("vulkan: vkCreateBuffer(%llu bytes) for a dedicated import failed (%s%s)",
			(unsigned long long)size, GDR_VK_RESULT(r),
			r >= 0 ? ", but no buffer: the Vulkan driver is not answering sanely; update "
			"the NVIDIA driver, or use another backend (GDRCOPY_BACKEND=gdrdrv)" : "");
		*buffer = VK_NULL_HANDLE;
		return r >= 0 ? EIO : vk_errno(r);
	}
	gpu->vkGetBufferMemoryRequirements(gpu->device, *buffer, &req);
	if (!(req.memoryTypeBits & (1u << gpu->memory_type))) {
		gdr_err("vulkan: the driver does not allow memory type %u for imported buffers",
			gpu->memory_type);
		gpu->vkDestroyBuffer(gpu->device, *buffer, NULL);
		*buffer = VK_NULL_HANDLE;
		return ENOTSUP;
	}
	return 0;
}

/* Import fd (always consumed) as pin->alloc_size bytes of memory; 0 or an errno (logged). */
static int import_fd(struct vk_gpu *gpu, int fd, struct vk_pin *pin)
{
	VkMemoryDedicatedAllocateInfo dedicated = {
		.sType = VK_STRUCTURE_TYPE_MEMORY_DEDICATED_ALLOCATE_INFO,
	};
	VkImportMemoryFdInfoKHR import = {
		.sType = VK_STRUCTURE_TYPE_IMPORT_MEMORY_FD_INFO_KHR,
		.handleType = VK_EXTERNAL_MEMORY_HANDLE_TYPE_OPAQUE_FD_BIT,
		.fd = fd,
	};
	VkMemoryAllocateInfo info = {
		.sType = VK_STRUCTURE_TYPE_MEMORY_ALLOCATE_INFO,
		.pNext = &import,
		.allocationSize = pin->alloc_size,
		.memoryTypeIndex = gpu->memory_type,
	};
	int ref, ret;
	VkResult r;

	ref = fcntl(fd, F_DUPFD_CLOEXEC, 0);
	if (ref < 0) {
		ret = errno;
		close(fd);
		gdr_err("vulkan: out of file descriptors importing a CUDA allocation (%s); raise "
			"RLIMIT_NOFILE", strerror(ret));
		return ret;
	}
	if (gpu->dedicated_only) {
		ret = create_dedicated_buffer(gpu, pin->alloc_size, &pin->buffer);
		if (ret)
			goto err_close;
		dedicated.buffer = pin->buffer;
		import.pNext = &dedicated;
	}
	r = gpu->vkAllocateMemory(gpu->device, &info, NULL, &pin->memory);
	if (gdr_vk_made(r, "vkAllocateMemory") && !pin->memory) {
		/* Made, the descriptor taken over, and no handle to free the memory by. */
		gdr_err("vulkan: vkAllocateMemory importing the CUDA allocation's fd returned %s "
			"but no memory: the Vulkan driver is not answering sanely; update the NVIDIA "
			"driver, or use another backend (GDRCOPY_BACKEND=gdrdrv)",
			GDR_VK_RESULT(r));
		ret = EIO;
		fd = -1;
		goto err_destroy_buffer;
	}
	if (r < 0) {
		gdr_err("vulkan: vkAllocateMemory importing the CUDA allocation's fd (%llu bytes) "
			"failed (%s)%s", (unsigned long long)pin->alloc_size, GDR_VK_RESULT(r),
			r == VK_ERROR_INVALID_EXTERNAL_HANDLE ? ": the Vulkan driver cannot import "
			"this CUDA memory (are libcuda and the Vulkan ICD from the same NVIDIA "
			"driver?); use the gdrdrv backend" : "");
		ret = vk_errno(r);
		goto err_buffer;
	}
	close(ref);
	return 0;

err_buffer:
	if (!fd_still_ours(fd, ref))
		fd = -1;
err_destroy_buffer:
	if (pin->buffer)
		gpu->vkDestroyBuffer(gpu->device, pin->buffer, NULL);
	pin->buffer = VK_NULL_HANDLE;
err_close:
	if (fd >= 0)
		close(fd);
	close(ref);
	return ret;
}

/*
 * Log why addr, which CUDA does not report as plain device memory, cannot be pinned: what
 * CUDA's pointer attributes say it is (its MEMORY_TYPE is type), and what to do instead.
 */
static void log_not_device_memory(unsigned long addr, bool managed, unsigned long long type)
{
	if (managed) {
		gdr_err("vulkan: pin 0x%lx: managed (unified) memory (cuMemAllocManaged), which CUDA "
			"migrates between host and GPU: it has no fixed GPU memory to pin, and the "
			"CPU can access it directly; %s", addr, vk_not_gpu_hint);
	} else if (type == CU_MEMORYTYPE_HOST) {
		gdr_err("vulkan: pin 0x%lx: page-locked host memory (cuMemAllocHost, "
			"cudaMallocHost or cuMemHostRegister), not GPU memory: the CPU reaches it "
			"directly, without a pin; %s", addr, vk_not_gpu_hint);
	} else {
		gdr_err("vulkan: pin 0x%lx: CUDA memory of type %llu (%s), not device memory; %s",
			addr, type, type == CU_MEMORYTYPE_ARRAY ? "a CUDA array" :
			type == CU_MEMORYTYPE_UNIFIED ? "unified memory" : "a type unknown here",
			vk_not_gpu_hint);
	}
}

/*
 * Device ordinal of addr if it is device memory that is not managed; else EINVAL (logged with
 * what the memory is), or the errno of the driver's failure to answer. Managed memory may report
 * either memory type, so IS_MANAGED is asked before the type is believed.
 */
static int classify(const struct gdr_cuda *cuda, unsigned long addr, int *ordinal)
{
	unsigned long long type = 0, managed = 0;
	char err[128];
	CUresult res;
	int dev = -1;

	res = cuda->cuPointerGetAttribute(&type, CU_POINTER_ATTRIBUTE_MEMORY_TYPE, addr);
	if (res == CUDA_ERROR_INVALID_VALUE) {
		gdr_err("vulkan: pin 0x%lx: not memory CUDA knows (%s): not allocated by or "
			"registered with CUDA in this process (malloc, mmap or stack memory), or "
			"freed already; %s", addr, gdr_cuda_strerror(cuda, res, err, sizeof(err)),
			vk_not_gpu_hint);
		return EINVAL;
	}
	/* Any other answer is the driver failing, not the memory being wrong: its errno. */
	if (res != CUDA_SUCCESS) {
		gdr_err("vulkan: pin 0x%lx: CUDA cannot say what memory this is "
			"(cuPointerGetAttribute(MEMORY_TYPE): %s)", addr,
			gdr_cuda_strerror(cuda, res, err, sizeof(err)));
		return gdr_cuda_errno(res);
	}
	res = cuda->cuPointerGetAttribute(&managed, CU_POINTER_ATTRIBUTE_IS_MANAGED, addr);
	if (res != CUDA_SUCCESS)
		managed = 0;	/* unanswered: the memory type decides */
	if (managed || type != CU_MEMORYTYPE_DEVICE) {
		log_not_device_memory(addr, managed, type);
		return EINVAL;
	}
	res = cuda->cuPointerGetAttribute(&dev, CU_POINTER_ATTRIBUTE_DEVICE_ORDINAL, addr);
	if (res != CUDA_SUCCESS) {
		gdr_err("vulkan: pin 0x%lx: its device is unknown (%s)", addr,
			gdr_cuda_strerror(cuda, res, err, sizeof(err)));
		return gdr_cuda_errno(res);
	}
	*ordinal = dev;
	return 0;
}

/*
 * The mapping addr lies in: the physical allocation mapped there starts at *base (cuMemMap's
 * offset is always 0) and is imported whole. MAPPING_BASE_ADDR/SIZE name exactly that; drivers
 * without them answer cuMemGetAddressRange with the same range for VMM memory.
 */
static CUresult mapping_range(const struct gdr_cuda *cuda, unsigned long addr, CUdeviceptr *base,
			      size_t *size)
{
	unsigned long long b = 0, n = 0;

	if (cuda->cuPointerGetAttribute(&b, CU_POINTER_ATTRIBUTE_MAPPING_BASE_ADDR, addr) ==
	    CUDA_SUCCESS &&
	    cuda->cuPointerGetAttribute(&n, CU_POINTER_ATTRIBUTE_MAPPING_SIZE, addr) ==
	    CUDA_SUCCESS && b && n && gdr_backend_range_holds(b, n, addr)) {
		*base = b;
		*size = n;
		return CUDA_SUCCESS;
	}
	return cuda->cuMemGetAddressRange(base, size, addr);
}

/*
 * The driver's answer that this memory cannot be retained or exported (not a VMM allocation, or
 * one made without the POSIX fd handle type), as against the driver failing (out of memory, a
 * lost context), whose errno the caller returns.
 */
static bool cuda_refuses_memory(CUresult res)
{
	return res == CUDA_ERROR_INVALID_VALUE || res == CUDA_ERROR_NOT_SUPPORTED ||
	       res == CUDA_ERROR_INVALID_HANDLE;
}

/*
 * The CUDA side of a pin, with a context current: the allocation's range, our reference on it,
 * and an fd for it. 0 with *fd and pin->handle set, or an errno (logged, nothing held).
 */
static int export_allocation(const struct gdr *g, const struct gdr_cuda *cuda,
			     const struct gdr_pin_request *req, CUdeviceptr *base,
			     struct vk_pin *pin, int *fd)
{
	CUmemAllocationProp prop;
	size_t range_size = 0;
	char err[128];
	CUresult res;
	int ret;

	res = mapping_range(cuda, req->addr, base, &range_size);
	if (res != CUDA_SUCCESS && !cuda_refuses_memory(res) && res != CUDA_ERROR_NOT_FOUND) {
		/* The driver failed (out of memory, a lost context): its errno, not the caller's. */
		gdr_err("vulkan: pin 0x%lx: cuMemGetAddressRange failed: %s", req->addr,
			gdr_cuda_strerror(cuda, res, err, sizeof(err)));
		return gdr_cuda_errno(res);
	}
	if (res != CUDA_SUCCESS) {
		gdr_err("vulkan: pin 0x%lx: not inside a CUDA allocation (cuMemGetAddressRange: %s)",
			req->addr, gdr_cuda_strerror(cuda, res, err, sizeof(err)));
		return EINVAL;
	}
	/*
	 * Imported whole, and mapped from host-page offsets into it: a range that does not hold
	 * addr, or is not in whole host pages (CUDA's granularity is larger), is a broken driver's.
	 */
	if (!gdr_backend_range_holds(*base, range_size, req->addr) ||
	    ((*base | range_size) & (g->host_page_size - 1))) {
		gdr_err("vulkan: pin 0x%lx: CUDA reported its allocation as 0x%llx+%zu, which does "
			"not hold it in whole host pages: the CUDA driver is not answering sanely; "
			"reinstall or update the NVIDIA driver, or use another backend "
			"(GDRCOPY_BACKEND=gdrdrv)", req->addr, (unsigned long long)*base, range_size);
		return EIO;
	}
	if (req->size > range_size - (req->addr - *base)) {
		gdr_err("vulkan: pin 0x%lx+%zu: runs past the end of its allocation (0x%llx+%zu)",
			req->addr, req->size, (unsigned long long)*base, range_size);
		return EINVAL;
	}
	res = cuda->cuMemRetainAllocationHandle(&pin->handle, (void *)req->addr);
	if (res != CUDA_SUCCESS && !cuda_refuses_memory(res)) {
		gdr_err("vulkan: pin 0x%lx: cuMemRetainAllocationHandle failed: %s", req->addr,
			gdr_cuda_strerror(cuda, res, err, sizeof(err)));
		return gdr_cuda_errno(res);
	}
	if (res != CUDA_SUCCESS) {
		gdr_err("vulkan: pin 0x%lx: not a CUDA VMM allocation (cudaMalloc/cuMemAlloc memory "
			"cannot be exported: %s); %s", req->addr,
			gdr_cuda_strerror(cuda, res, err, sizeof(err)), vk_vmm_hint);
		return ENOTSUP;
	}
	res = cuda->cuMemGetAllocationPropertiesFromHandle(&prop, pin->handle);
	if (res == CUDA_SUCCESS &&
	    !(prop.requestedHandleTypes & CU_MEM_HANDLE_TYPE_POSIX_FILE_DESCRIPTOR)) {
		gdr_err("vulkan: pin 0x%lx: this VMM allocation was created without "
			"CU_MEM_HANDLE_TYPE_POSIX_FILE_DESCRIPTOR; %s", req->addr, vk_vmm_hint);
		ret = ENOTSUP;
		goto err_release;
	}
	gdr_backend_export_begin();
	res = cuda->cuMemExportToShareableHandle(fd, pin->handle,
						 CU_MEM_HANDLE_TYPE_POSIX_FILE_DESCRIPTOR, 0);
	/* Even before the import, which takes the descriptor over. */
	ret = gdr_backend_export_take(res == CUDA_SUCCESS, *fd, NULL, "vulkan: pin 0x%lx: "
				      "cuMemExportToShareableHandle", req->addr);
	if (res != CUDA_SUCCESS) {
		ret = gdr_backend_check_fds("the vulkan backend needs one for each pin while it "
					    "imports it");
		if (!ret) {
			bool refused = cuda_refuses_memory(res);

			gdr_err("vulkan: pin 0x%lx: cuMemExportToShareableHandle(POSIX_FILE_DESCRIPTOR) "
				"failed (%s)%s%s", req->addr,
				gdr_cuda_strerror(cuda, res, err, sizeof(err)), refused ? "; " : "",
				refused ? vk_vmm_hint : "");
			ret = refused ? ENOTSUP : gdr_cuda_errno(res);
		}
		goto err_release;
	}
	if (ret)
		goto err_release;
	pin->alloc_size = range_size;
	return 0;

err_release:
	cuda->cuMemRelease(pin->handle);
	return ret;
}

static int vulkan_pin(struct gdr *g, struct gdr_memh *mh, const struct gdr_pin_request *req)
{
	struct vk_state *s = g->backend_priv;
	const struct gdr_cuda *cuda = s->cuda;
	struct gdr_cuda_ctx_scope scope;
	struct vk_pin *pin;
	struct vk_gpu *gpu;
	CUdeviceptr base = 0;
	char err[128];
	CUresult res;
	int ordinal = -1, fd = -1, ret;

	if (req->legacy && (req->p2p_token || req->va_space)) {
		gdr_err("vulkan: pin 0x%lx: p2p tokens are deprecated and not supported (persistent "
			"mappings); pass 0, 0", req->addr);
		return EINVAL;
	}
	if (req->flags & GDR_PIN_FLAG_FORCE_PCIE) {
		gdr_err("vulkan: pin 0x%lx: GDR_PIN_FLAG_FORCE_PCIE is not supported by this "
			"backend (GDR_ATTR_SUPPORT_PIN_FLAG_FORCE_PCIE is 0)", req->addr);
		return EINVAL;
	}
	ret = classify(cuda, req->addr, &ordinal);
	if (ret)
		return ret;
	if (ordinal < 0 || ordinal >= s->gpu_count) {
		gdr_err("vulkan: pin 0x%lx: CUDA device %d is not one of the %d devices seen at "
			"gdr_open", req->addr, ordinal, s->gpu_count);
		return ENODEV;
	}
	gpu = &s->gpus[ordinal];
	if (!gpu->usable) {
		gdr_err("vulkan: pin 0x%lx: %s", req->addr, gpu->why.msg);
		return ENOTSUP;
	}
	ret = gdr_vk_gpu_open(s, gpu, ordinal);
	if (ret)
		return ret;
	pin = calloc(1, sizeof(*pin));
	if (!pin) {
		gdr_err("vulkan: pin 0x%lx: out of memory", req->addr);
		return ENOMEM;
	}
	pin->ordinal = ordinal;

	res = gdr_cuda_ctx_enter(cuda, ordinal, &scope);
	if (res != CUDA_SUCCESS) {
		gdr_err("vulkan: pin 0x%lx: no CUDA context for device %d (%s)", req->addr, ordinal,
			gdr_cuda_strerror(cuda, res, err, sizeof(err)));
		ret = gdr_cuda_errno(res);
		goto err_free;
	}
	ret = export_allocation(g, cuda, req, &base, pin, &fd);
	if (ret)
		goto err_leave;
	ret = import_fd(gpu, fd, pin);
	if (ret)
		goto err_release;
	/* Once pinned: a failed pin keeps nothing. */
	gdr_cuda_ctx_hold(cuda, &scope, ordinal, &g->cuda_held);
	gdr_cuda_ctx_leave(cuda, &scope);

	gdr_backend_set_pin_range(g, mh, req->addr, req->size, base, pin->alloc_size);
	pin->offset = mh->va - base;
	mh->backend_priv = pin;
	return 0;

err_release:
	cuda->cuMemRelease(pin->handle);
err_leave:
	gdr_cuda_ctx_leave(cuda, &scope);
err_free:
	free(pin);
	return ret;
}

static int vulkan_unpin(struct gdr *g, struct gdr_memh *mh)
{
	struct vk_state *s = g->backend_priv;
	struct vk_pin *pin = mh->backend_priv;
	struct vk_gpu *gpu = &s->gpus[pin->ordinal];
	struct gdr_cuda_ctx_scope scope;
	CUresult res;
	char err[128];

	if (mh->map_va)
		gpu->vkUnmapMemory(gpu->device, pin->memory);
	gpu->vkFreeMemory(gpu->device, pin->memory, NULL);
	if (pin->buffer)
		gpu->vkDestroyBuffer(gpu->device, pin->buffer, NULL);
	/* cuMemRelease needs no context, but a driver may want one: give it one if we can. */
	if (gdr_cuda_ctx_enter(s->cuda, pin->ordinal, &scope) != CUDA_SUCCESS)
		scope.retained = false;
	res = s->cuda->cuMemRelease(pin->handle);
	/* As a pin: a pin made with a context current kept none, and unpins would make it each. */
	gdr_cuda_ctx_hold(s->cuda, &scope, pin->ordinal, &g->cuda_held);
	gdr_cuda_ctx_leave(s->cuda, &scope);
	if (res != CUDA_SUCCESS)
		gdr_warn("vulkan: unpin 0x%lx: cuMemRelease failed (%s); the allocation may leak",
			 mh->addr, gdr_cuda_strerror(s->cuda, res, err, sizeof(err)));
	free(pin);
	mh->backend_priv = NULL;
	return 0;
}

static int vulkan_map(struct gdr *g, struct gdr_memh *mh, size_t size, int flags, void **va,
		      gdr_mapping_type_t *type)
{
	struct vk_state *s = g->backend_priv;
	struct vk_pin *pin = mh->backend_priv;
	struct vk_gpu *gpu = &s->gpus[pin->ordinal];
	VkDeviceSize len = gdr_backend_map_length(g, size);
	void *p = NULL;
	bool mapped;
	VkResult r;

	if (flags != GDR_MAP_FLAG_DEFAULT && flags != GDR_MAP_FLAG_REQ_WC_MAPPING) {
		gdr_err("vulkan: map: only write-combined mappings exist in this backend "
			"(GDR_MAP_FLAG_DEFAULT or GDR_MAP_FLAG_REQ_WC_MAPPING), not flags %d", flags);
		return EINVAL;
	}
	if (len > pin->alloc_size - pin->offset)
		len = pin->alloc_size - pin->offset;
	gdr_backend_map_begin();
	r = gpu->vkMapMemory(gpu->device, pin->memory, pin->offset, len, 0, &p);
	mapped = gdr_backend_map_end(g, r >= 0 ? p : NULL, len);
	if (!gdr_vk_made(r, "vkMapMemory")) {
		gdr_err("vulkan: vkMapMemory(%llu bytes at %llu) failed (%s)",
			(unsigned long long)len, (unsigned long long)pin->offset,
			GDR_VK_RESULT(r));
		return r == VK_ERROR_MEMORY_MAP_FAILED ? ENOMEM : vk_errno(r);
	}
	if (!p) {
		gpu->vkUnmapMemory(gpu->device, pin->memory);
		gdr_err("vulkan: vkMapMemory(%llu bytes at %llu) returned VK_SUCCESS but no pointer: "
			"the Vulkan driver is not answering sanely; update the NVIDIA driver, or use "
			"another backend (GDRCOPY_BACKEND=gdrdrv)",
			(unsigned long long)len, (unsigned long long)pin->offset);
		return EIO;
	}
	if (!mapped) {
		gpu->vkUnmapMemory(gpu->device, pin->memory);
		gdr_err("vulkan: vkMapMemory(%llu bytes at %llu) returned VK_SUCCESS and %p, where "
			"this process has no mapping of that length: the Vulkan driver is not "
			"answering sanely; update the NVIDIA driver, or use another backend "
			"(GDRCOPY_BACKEND=gdrdrv)", (unsigned long long)len,
			(unsigned long long)pin->offset, p);
		return EIO;
	}
	*va = p;
	*type = GDR_MAPPING_TYPE_WC;
	return 0;
}

static int vulkan_unmap(struct gdr *g, struct gdr_memh *mh)
{
	struct vk_state *s = g->backend_priv;
	struct vk_pin *pin = mh->backend_priv;
	struct vk_gpu *gpu = &s->gpus[pin->ordinal];

	gpu->vkUnmapMemory(gpu->device, pin->memory);
	return 0;
}

static int vulkan_get_attribute(struct gdr *g, int attr, int *value)
{
	(void)g;
	switch (attr) {
	case GDR_ATTR_USE_PERSISTENT_MAPPING:
		*value = 1;
		return 0;
	case GDR_ATTR_SUPPORT_PIN_FLAG_FORCE_PCIE:
	case GDR_ATTR_USING_DMA_BUF_MMAP:
		*value = 0;
		return 0;
	default:
		return EINVAL;
	}
}

static const struct gdr_backend_ops vulkan_ops = {
	.close = vulkan_close,
	.forget_pin = gdr_backend_forget_pin_priv,
	.forget = vulkan_forget,
	.pin = vulkan_pin,
	.unpin = vulkan_unpin,
	.map = vulkan_map,
	.unmap = vulkan_unmap,
	.get_info = gdr_backend_info_from_memh,
	.get_callback_flag = gdr_backend_persistent_callback_flag,
	.get_attribute = vulkan_get_attribute,
	.driver_get_version = gdr_backend_no_module_version,
};

const struct gdr_backend gdr_backend_vulkan = {
	.name = "vulkan",
	.id = GDR_BACKEND_VULKAN,
	.probe = gdr_vk_probe,
	.open = vulkan_open,
	.ops = &vulkan_ops,
};
