/* SPDX-License-Identifier: MIT */
/*
 * The libc functions libgdrapi calls, defined in this program so that they come before libc's
 * for every object: each fails as the kernel would when it is the library's call to fail
 * (failing_calls.h), and otherwise goes on to libc, or to the driver the program plays.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include "failing_calls.h"

/* ASan brings its own calloc and free: the library's blocks are then LeakSanitizer's to count. */
#if defined(__SANITIZE_ADDRESS__)
#define LIBRARY_BLOCKS_UNCOUNTED 1
#elif defined(__has_feature)
#if __has_feature(address_sanitizer)
#define LIBRARY_BLOCKS_UNCOUNTED 1
#endif
#endif

static const struct failing_device *device;

void failing_set_device(const struct failing_device *d)
{
	device = d;
}

#ifndef LIBRARY_BLOCKS_UNCOUNTED
extern void *__libc_calloc(size_t n, size_t size);
extern void __libc_free(void *p);

/* The blocks the library calloc'd and has not freed. */
#define MAX_BLOCKS 4096
static void *blocks[MAX_BLOCKS];
static int nblocks;

int failing_library_blocks(void)
{
	return nblocks;
}

void *calloc(size_t n, size_t size)
{
	void *p;

	if (FAIL_HERE("calloc")) {
		errno = ENOMEM;
		failing_expect("out of memory", ENOMEM);
		return NULL;
	}
	p = __libc_calloc(n, size);
	if (p && failing_from_library(__builtin_return_address(0)) && nblocks < MAX_BLOCKS)
		blocks[nblocks++] = p;
	return p;
}

void free(void *p)
{
	if (p && failing_from_library(__builtin_return_address(0))) {
		for (int i = 0; i < nblocks; i++) {
			if (blocks[i] == p) {
				blocks[i] = blocks[--nblocks];
				break;
			}
		}
	}
	__libc_free(p);
}
#else
int failing_library_blocks(void)
{
	return 0;
}
#endif

/* What a lookup of a device node the caller may not search fails with. */
int access(const char *path, int mode)
{
	if (FAIL_HERE("access")) {
		errno = EACCES;
		return -1;
	}
	return REAL(access)(path, mode);
}

int open(const char *path, int flags, ...)
{
	mode_t mode = 0;
	va_list ap;

	if ((flags & O_CREAT) || (flags & O_TMPFILE) == O_TMPFILE) {
		va_start(ap, flags);
		mode = va_arg(ap, mode_t);
		va_end(ap);
	}
	if (FAIL_HERE("open")) {
		errno = EMFILE;
		return -1;
	}
	return REAL(open)(path, flags, mode);
}

int fcntl(int fd, int cmd, ...)
{
	va_list ap;
	long arg;

	va_start(ap, cmd);
	arg = va_arg(ap, long);
	va_end(ap);
	if (FAIL_HERE("fcntl")) {
		errno = cmd == F_DUPFD || cmd == F_DUPFD_CLOEXEC ? EMFILE : EBADF;
		return -1;
	}
	return REAL(fcntl)(fd, cmd, arg);
}

int fstat(int fd, struct stat *st)
{
	if (FAIL_HERE("fstat")) {
		errno = EIO;
		return -1;
	}
	return REAL(fstat)(fd, st);
}

/*
 * A driver's command fails as a driver would: out of memory, or with an error of its own that
 * the library must hand on. The reason must say which.
 */
int ioctl(int fd, unsigned long request, ...)
{
	static const int errors[] = { ENOMEM, EIO };
	va_list ap;
	void *arg;

	va_start(ap, request);
	arg = va_arg(ap, void *);
	va_end(ap);
	if (FAIL_HERE("ioctl")) {
		errno = errors[failing_way(sizeof(errors) / sizeof(errors[0]))];
		failing_expect(strerror(errno), errno);
		return -1;
	}
	if (device)
		return device->ioctl(fd, request, arg);
	return REAL(ioctl)(fd, request, arg);
}

void *mmap(void *addr, size_t len, int prot, int flags, int fd, off_t offset)
{
	if (FAIL_HERE("mmap")) {
		errno = ENOMEM;
		return MAP_FAILED;
	}
	if (device)
		return device->mmap(addr, len, prot, flags, fd, offset);
	return REAL(mmap)(addr, len, prot, flags, fd, offset);
}

int failing_munmap_unfailed(void *addr, size_t len)
{
	if (device)
		return device->munmap(addr, len);
	return REAL(munmap)(addr, len);
}

/* What munmap fails with when it would split a mapping past vm.max_map_count. */
int munmap(void *addr, size_t len)
{
	if (FAIL_HERE("munmap")) {
		errno = ENOMEM;
		return -1;
	}
	return failing_munmap_unfailed(addr, len);
}

int close(int fd)
{
	if (device)
		return device->close(fd);
	return REAL(close)(fd);
}

int madvise(void *addr, size_t len, int advice)
{
	if (FAIL_HERE("madvise")) {
		errno = ENOMEM;
		return -1;
	}
	return REAL(madvise)(addr, len, advice);
}
